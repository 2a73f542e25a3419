// pytorch_coalescing_helpers.cpp — reduced from pytorch 1.13.1
// torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1492-1518, 2567-2579, 2120-2150: two levels
// of group helpers (startCoalescing -> groupStart -> ncclGroupStart, endCoalescing -> groupEnd
// -> ncclGroupEnd), out-of-line static members defined after their callers, NCCL errors
// thrown through a [[noreturn]] function. Balanced on every path: lint must stay quiet.
// (In the real TU, which lacks generated ATen headers, lint does report it: see the
// parse-error class in bench/RESULTS.md "## real code".)
#include <nccl.h>
#include <vector>

[[noreturn]] void torchCheckFail(const char *func, const char *file, unsigned line, const char *msg);
#define C10D_NCCL_CHECK(cmd)                                                                                 \
  do {                                                                                                       \
    ncclResult_t result = cmd;                                                                               \
    if (result != ncclSuccess)                                                                               \
      torchCheckFail(__func__, __FILE__, __LINE__, ncclGetErrorString(result));                              \
  } while (0)

struct ProcessGroupNCCL {
  void startCoalescing();
  void endCoalescing(std::vector<int> &reqs);
  void allgather(ncclComm_t comm, cudaStream_t s, float *buf, int n);
  static void groupStart();
  static void groupEnd();
  bool coalescing_active_ = false;
  std::vector<int> coalescedDevices_;
  static int ncclActiveGroupCounter_;
};

void ProcessGroupNCCL::startCoalescing() {
  coalescedDevices_.clear();
  coalescing_active_ = true;
  groupStart();
}

void ProcessGroupNCCL::endCoalescing(std::vector<int> &reqs) {
  groupEnd();
  if (reqs.size() != coalescedDevices_.size())
    torchCheckFail(__func__, __FILE__, __LINE__, "Number of requests do not match number of collectives");
  coalescing_active_ = false;
}

void ProcessGroupNCCL::allgather(ncclComm_t comm, cudaStream_t s, float *buf, int n) {
  std::vector<int> works;
  startCoalescing();
  for (int i = 0; i < n; i++) {
    ncclBroadcast(buf, buf, 1, ncclFloat, i, comm, s);
    works.push_back(i);
  }
  endCoalescing(works);
}

void ProcessGroupNCCL::groupStart() {
  C10D_NCCL_CHECK(ncclGroupStart());
  ++ncclActiveGroupCounter_;
}

void ProcessGroupNCCL::groupEnd() {
  C10D_NCCL_CHECK(ncclGroupEnd());
  --ncclActiveGroupCounter_;
}
