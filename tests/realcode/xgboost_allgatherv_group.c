// xgboost_allgatherv_group.c — reduced from xgboost 1.7.4
// src/collective/nccl_device_communicator.cuh:95-117 (AllGatherV): each rank writes its own
// length into its slot, the lengths are all-reduced, then a group of broadcasts (one per
// root) uses the reduced lengths as counts. The counts and roots are uniform (collective
// result, loop index) and the group is balanced: lint must stay quiet.
#include <nccl.h>
#include <stddef.h>
#include <stdint.h>

void allgatherv(ncclComm_t comm, cudaStream_t stream, const char *send, char *recv, uint64_t *segments,
                uint64_t length_bytes) {
  int world, rank;
  ncclCommCount(comm, &world);
  ncclCommUserRank(comm, &rank);
  for (int i = 0; i < world; i++)
    segments[i] = 0;
  segments[rank] = length_bytes;
  ncclAllReduce(segments, segments, (size_t)world, ncclUint64, ncclMax, comm, stream);

  size_t offset = 0;
  ncclGroupStart();
  for (int i = 0; i < world; i++) {
    size_t as_bytes = segments[i];
    ncclBroadcast(send, recv + offset, as_bytes, ncclChar, i, comm, stream);
    offset += as_bytes;
  }
  ncclGroupEnd();
}
