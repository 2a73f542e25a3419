/* flow.c — rank dependence through control flow, checked with --verify:
 * an assignment under a rank-dependent branch makes its target rank-dependent (implicit
 * flow), and a collective that delivers into a variable makes it uniform again from there
 * on (flow-sensitive), so the loop on `steps` is silent. Not meant to run: NCCL buffers
 * are device memory; the analysis only needs the data flow. */
#include <nccl.h>

void implicit(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank;
  ncclRedOp_t op = ncclSum;
  ncclCommUserRank(comm, &rank);
  if (rank % 2 == 1)
    op = ncclMax;
  ncclAllReduce(buf, buf, 4, ncclFloat, op, comm, s); // expected-warning{{rank-dependent-argument}}
}

void agreed(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, steps = 0;
  ncclCommUserRank(comm, &rank);
  if (rank == 0)
    steps = 3;
  for (int i = 0; i < steps; i++) // steps still depends on the rank here
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
  ncclBroadcast(&steps, &steps, 1, ncclInt, 0, comm, s);
  for (int i = 0; i < steps; i++) // ... and no longer after the broadcast
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
}
