// user.cpp — calls NCCL only through comm_lib.h. Line numbers matter to wrappers_test.sh.
#include "comm_lib.h"

int step(NcclApi *api, struct ncclFuncs *nf, float *buf, ncclComm_t comm, cudaStream_t s) {
  int rank;
  ncclCommUserRank(comm, &rank);
  api->broadcast(buf, 16, rank); /* line 7: rank-dependent root */
  if (rank == 0)
    api->allReduce(buf, 16, ncclSum); /* line 9: only rank 0 */
  api->groupStart();
  if (api->allReduce(buf, 16, ncclMax) != ncclSuccess)
    return 1; /* line 12: returns with the group open */
  api->groupEnd();
  nf->allReduce(buf, buf, (size_t)rank, ncclFloat, ncclSum, comm, s); /* line 14: rank-dependent count */
  nf->groupStart();
  nf->groupEnd();
  return 0;
}

int step_ok(NcclApi *api, struct ncclFuncs *nf, float *buf, ncclComm_t comm, cudaStream_t s, int nranks) {
  api->broadcast(buf, 16, 0);
  api->groupStart();
  api->allReduce(buf, 16, ncclSum);
  api->groupEnd();
  nf->groupStart();
  nf->allReduce(buf, buf, (size_t)nranks, ncclFloat, ncclSum, comm, s);
  nf->groupEnd();
  return 0;
}
