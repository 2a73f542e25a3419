/* exchange.c — a ring exchange outside a group; the fix-it wraps the pair in a group. */
#include <nccl.h>
void ring(float *a, float *b, int n, ncclComm_t comm, cudaStream_t s) {
  int rank, size;
  ncclCommUserRank(comm, &rank);
  ncclCommCount(comm, &size);
  if (n > 0) {
    ncclSend(a, n, ncclFloat, (rank + 1) % size, comm, s); // expected-warning{{ungrouped-p2p}}
    ncclRecv(b, n, ncclFloat, (rank + size - 1) % size, comm, s);
  }
}
