// pytorch_group_counter.cpp — reduced from pytorch 1.13.1
// torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1195-1305, 2565-2580: groupStart() and
// groupEnd() keep a thread_local count of the groups they opened, and getNCCLComm closes all
// of them (`for (i : c10::irange(counter)) ncclGroupEnd()`) before creating communicators in
// a group of its own, then reopens them with a loop of ncclGroupStart over the same, unchanged
// count. The depth on exit is the caller's: lint must stay quiet there. The twins below break
// the shape and stay reported: a return between the loops, a counter something else assigns,
// a bound that is no group counter, a reopening loop over another bound.
#include <nccl.h>
#include <cstdint>

[[noreturn]] void torchCheckFail(const char *func, const char *file, unsigned line, const char *msg);
#define C10D_NCCL_CHECK(cmd)                                                                                 \
  do {                                                                                                       \
    ncclResult_t result = cmd;                                                                               \
    if (result != ncclSuccess)                                                                               \
      torchCheckFail(__func__, __FILE__, __LINE__, ncclGetErrorString(result));                              \
  } while (0)

namespace c10 {
template <typename T> struct integer_range {
  struct iterator {
    T v;
    T operator*() const { return v; }
    iterator &operator++() { ++v; return *this; }
    bool operator!=(const iterator &o) const { return v != o.v; }
  };
  T n;
  iterator begin() const { return {0}; }
  iterator end() const { return {n}; }
};
template <typename T> integer_range<T> irange(T end) { return {end}; }
} // namespace c10

void createComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);

struct ProcessGroupNCCL {
  static void groupStart();
  static void groupEnd();
  void getNCCLComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
  static thread_local uint64_t ncclActiveGroupCounter_;
};

thread_local uint64_t ProcessGroupNCCL::ncclActiveGroupCounter_ = 0;

void ProcessGroupNCCL::getNCCLComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  for (const auto i : c10::irange(ncclActiveGroupCounter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupEnd());
  }
  C10D_NCCL_CHECK(ncclGroupStart());
  createComm(comm, nranks, id, rank);
  C10D_NCCL_CHECK(ncclGroupEnd());
  for (const auto i : c10::irange(ncclActiveGroupCounter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupStart());
  }
}

void ProcessGroupNCCL::groupStart() {
  C10D_NCCL_CHECK(ncclGroupStart());
  ++ncclActiveGroupCounter_;
}

void ProcessGroupNCCL::groupEnd() {
  C10D_NCCL_CHECK(ncclGroupEnd());
  --ncclActiveGroupCounter_;
}

// the reopening loop is skipped on one path: that return leaves the caller's groups closed
struct EarlyReturn {
  static void groupStart();
  static void groupEnd();
  void getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, bool cached);
  static thread_local uint64_t counter_;
};

thread_local uint64_t EarlyReturn::counter_ = 0;

void EarlyReturn::getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, bool cached) {
  for (const auto i : c10::irange(counter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  }
  if (cached)
    return; // expected-warning{{unbalanced-group}}
  C10D_NCCL_CHECK(ncclGroupStart());
  createComm(comm, nranks, id, rank);
  C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  for (const auto i : c10::irange(counter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupStart());
  }
} // expected-warning{{unbalanced-group}}

void EarlyReturn::groupStart() {
  C10D_NCCL_CHECK(ncclGroupStart());
  ++counter_;
}

void EarlyReturn::groupEnd() {
  C10D_NCCL_CHECK(ncclGroupEnd());
  --counter_;
}

// the count is also assigned where no group closes: it need not count the open groups
struct Reset {
  static void groupStart();
  static void groupEnd();
  static void reset();
  void getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
  static thread_local uint64_t counter_;
};

thread_local uint64_t Reset::counter_ = 0;

void Reset::getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  for (const auto i : c10::irange(counter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  }
  C10D_NCCL_CHECK(ncclGroupStart());
  createComm(comm, nranks, id, rank);
  C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  for (const auto i : c10::irange(counter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupStart());
  }
} // expected-warning{{unbalanced-group}}

void Reset::groupStart() {
  C10D_NCCL_CHECK(ncclGroupStart());
  ++counter_;
}

void Reset::groupEnd() {
  C10D_NCCL_CHECK(ncclGroupEnd());
  --counter_;
}

void Reset::reset() { counter_ = 0; }

// the bound counts something else (no group start next to its increment)
struct Unrelated {
  void getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
  void addPending() { ++pending_; }
  static thread_local uint64_t pending_;
};

thread_local uint64_t Unrelated::pending_ = 0;

void Unrelated::getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  for (const auto i : c10::irange(pending_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  }
  C10D_NCCL_CHECK(ncclGroupStart());
  createComm(comm, nranks, id, rank);
  C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  for (const auto i : c10::irange(pending_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupStart());
  }
} // expected-warning{{unbalanced-group}}

// closes the counted groups, reopens as many as another bound says
struct OtherBound {
  static void groupStart();
  static void groupEnd();
  void getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, uint64_t n);
  static thread_local uint64_t counter_;
};

thread_local uint64_t OtherBound::counter_ = 0;

void OtherBound::getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, uint64_t n) {
  for (const auto i : c10::irange(counter_)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  }
  C10D_NCCL_CHECK(ncclGroupStart());
  createComm(comm, nranks, id, rank);
  C10D_NCCL_CHECK(ncclGroupEnd()); // expected-warning{{unbalanced-group}}
  for (const auto i : c10::irange(n)) {
    (void)i;
    C10D_NCCL_CHECK(ncclGroupStart());
  }
} // expected-warning{{unbalanced-group}}

void OtherBound::groupStart() {
  C10D_NCCL_CHECK(ncclGroupStart());
  ++counter_;
}

void OtherBound::groupEnd() {
  C10D_NCCL_CHECK(ncclGroupEnd());
  --counter_;
}

// the same with counted for loops over the count
struct CountedFor {
  static void groupStart();
  static void groupEnd();
  void getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
  static thread_local uint64_t counter_;
};

thread_local uint64_t CountedFor::counter_ = 0;

void CountedFor::getComm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  for (uint64_t i = 0; i < counter_; ++i)
    C10D_NCCL_CHECK(ncclGroupEnd());
  C10D_NCCL_CHECK(ncclGroupStart());
  createComm(comm, nranks, id, rank);
  C10D_NCCL_CHECK(ncclGroupEnd());
  for (uint64_t i = 0; i < counter_; i++)
    C10D_NCCL_CHECK(ncclGroupStart());
}

void CountedFor::groupStart() {
  C10D_NCCL_CHECK(ncclGroupStart());
  counter_++;
}

void CountedFor::groupEnd() {
  C10D_NCCL_CHECK(ncclGroupEnd());
  counter_--;
}
