// spawn_variants.cpp — group-across-threads with std::thread, pthread_create(&fn), a named
// thread function on both sides, an end helper, and a user class named `thread` (not a spawn).
// Checked by `lockstep lint --verify` (tests/threads.cmake); not a runnable program.
#include <pthread.h>
#include <thread>

#include <nccl.h>

struct ctx { ncclComm_t comm; cudaStream_t stream; float *buf; };

static void end_group() { ncclGroupEnd(); }

static void closes(ctx *c) {
  ncclAllReduce(c->buf, c->buf, 8, ncclFloat, ncclSum, c->comm, c->stream);
  end_group(); // expected-warning{{group-across-threads}} expected-warning{{unbalanced-group}}
}

static void opens(ctx *c) {
  ncclGroupStart();
  ncclAllReduce(c->buf, c->buf, 8, ncclFloat, ncclSum, c->comm, c->stream);
} // expected-warning{{unbalanced-group}}

static void *p_closes(void *a) {
  ncclGroupEnd(); // expected-warning{{group-across-threads}} expected-warning{{unbalanced-group}}
  return a;
}

static void balanced(ctx *c) {
  ncclGroupStart();
  ncclAllReduce(c->buf, c->buf, 8, ncclFloat, ncclSum, c->comm, c->stream);
  ncclGroupEnd();
}

namespace mine {
struct thread { // not std::thread: runs f on this thread
  template <class F, class A> thread(F f, A a) { f(a); }
};
}

void named_function_closes(ctx *c) {
  ncclGroupStart();
  std::thread t(closes, c);
  t.join();
  end_group();
}

void named_function_opens(ctx *c) {
  std::thread t(opens, c);
  t.join();
  ncclGroupEnd(); // expected-warning{{group-across-threads}} expected-warning{{unbalanced-group}}
}

void pthread_address_of(ctx *c) {
  pthread_t t;
  ncclGroupStart();
  pthread_create(&t, nullptr, &p_closes, c);
  pthread_join(t, nullptr);
  ncclGroupEnd();
}

void each_thread_balanced(ctx *c) {
  ncclGroupStart();
  std::thread t(balanced, c); // the thread's own group: fine whatever this one holds
  t.join();
  ncclGroupEnd();
}

void not_a_thread(ctx *c) {
  ncclGroupStart();
  mine::thread t(balanced, c);
  ncclGroupEnd();
}
