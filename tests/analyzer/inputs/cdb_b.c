/* cdb_b.c — the other half: branches on my_rank() from cdb_a.c, so its finding (line 9)
 * needs the summary of another TU. */
#include <nccl.h>
int my_rank(ncclComm_t comm);
void step(ncclComm_t comm, float *buf, cudaStream_t s) {
  int r = my_rank(comm);
  if (r != 0)
    return;
  ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s);
}
