// errpath.c — two CHECK returns inside one group (an error path: one finding, tagged), and a
// return inside a group on the normal path (not tagged). Its annotation of the error-path
// finding lacks {{error-path}} on purpose: --verify must say so.
#include <nccl.h>
#define CHECK(cmd) do { ncclResult_t r_ = (cmd); if (r_ != ncclSuccess) return r_; } while (0)
ncclResult_t pair(ncclComm_t comm, float *b, int peer, cudaStream_t s) {
  ncclGroupStart();
  CHECK(ncclSend(b, 1, ncclFloat, peer, comm, s)); // expected-warning{{unbalanced-group}}
  CHECK(ncclRecv(b, 1, ncclFloat, peer, comm, s));
  return ncclGroupEnd();
}
ncclResult_t maybe(ncclComm_t comm, float *b, int n, cudaStream_t s) {
  ncclGroupStart();
  if (n == 0)
    return ncclSuccess; // expected-warning{{unbalanced-group}}
  ncclAllReduce(b, b, n, ncclFloat, ncclSum, comm, s);
  return ncclGroupEnd();
}
