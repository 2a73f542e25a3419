// group_opener.c — a return inside the second of two groups: the note names that group's start
#include <nccl.h>
ncclResult_t two_groups(ncclComm_t comm, float *b, cudaStream_t s) {
  ncclGroupStart();
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, comm, s);
  ncclGroupEnd();
  ncclGroupStart();
  if (ncclAllReduce(b, b, 1, ncclFloat, ncclSum, comm, s) != ncclSuccess)
    return ncclInternalError;
  ncclGroupEnd();
  return ncclSuccess;
}
