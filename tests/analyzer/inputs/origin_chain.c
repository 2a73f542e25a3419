/* origin_chain.c — a rank value that reaches a branch through a return value and two
 * parameters: the notes retrace its way (each step where it happened), not only the
 * source, so a finding far from MPI_Comm_rank says how the rank got there. Line numbers
 * are part of the expectations in tests/analyzer.cmake. */
#include <nccl.h>
static int my_rank(ncclComm_t comm) {
  int r;
  ncclCommUserRank(comm, &r);
  return r;
}
static void leaf(ncclComm_t comm, float *buf, cudaStream_t s, int who) {
  if (who == 0)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
}
static void mid(ncclComm_t comm, float *buf, cudaStream_t s, int me) { leaf(comm, buf, s, me); }
void top(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank = my_rank(comm);
  mid(comm, buf, s, rank);
}
