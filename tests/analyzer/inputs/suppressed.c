/* suppressed.c — a real finding, silenced by the comment on the line above it. */
#include <nccl.h>
void f(ncclComm_t comm, float *buf, cudaStream_t s) {
  int r;
  ncclCommUserRank(comm, &r);
  if (r == 0)
    // lockstep: ignore(rank-divergent-collective) only rank 0 owns the buffer here
    ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s);
}
