/* clean.c — no collectives depend on the rank: lint must stay silent (exit 0). */
#include <nccl.h>
void ok(ncclComm_t comm, float *buf, cudaStream_t s) {
  int r;
  ncclCommUserRank(comm, &r);
  if (r == 0)
    ncclBroadcast(buf, buf, 4, ncclFloat, 0, comm, s);
  else
    ncclBcast(buf, 4, ncclFloat, 0, comm, s);
}
