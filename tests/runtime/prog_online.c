/* prog_online.c — a rank of the online policy tests, linked against the stand-in
 * libnccl.so.2: every rank all-reduces 8 floats (seq 0), then rank 1 deviates at seq 1
 * (op: a broadcast; count: 9 floats), and every rank then watches its communicator the
 * way a program with error handling does — ncclCommGetAsyncError every 20 ms for up
 * to SECS seconds. It prints and exits 3 when the communicator reports an error (the
 * stand-in reports ncclRemoteError once it was aborted), 0 otherwise.
 *   prog_online op|count SECS          (RANK, WORLD_SIZE from the environment) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_abi.h"

ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                           cudaStream_t);
ncclResult_t ncclBroadcast(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                           cudaStream_t);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *);

static float buf[16];

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "op";
  int secs = argc > 2 ? atoi(argv[2]) : 5;
  const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
  int rank = r ? atoi(r) : 0, world = w ? atoi(w) : 1;
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  snprintf(id.internal, sizeof id.internal, "prog_online/%s", how);
  ncclComm_t c = NULL;
  if (ncclCommInitRank(&c, world, id, rank) != ncclSuccess)
    return 1;
  cudaStream_t s = (cudaStream_t)(uintptr_t)0x5000;
  ncclAllReduce(buf, buf, 8, (ncclDataType_t)7, (ncclRedOp_t)0, c, s);
  if (rank == 1 && !strcmp(how, "op"))
    ncclBroadcast(buf, buf, 8, (ncclDataType_t)7, 0, c, s);
  else
    ncclAllReduce(buf, buf, rank == 1 && !strcmp(how, "count") ? 9 : 8, (ncclDataType_t)7,
                  (ncclRedOp_t)0, c, s);
  for (int i = 0; i < secs * 50; i++) {
    ncclResult_t st = ncclSuccess;
    if (ncclCommGetAsyncError(c, &st) != ncclSuccess || (st != ncclSuccess && st != ncclInProgress)) {
      printf("prog_online: rank %d: communicator error %d\n", rank, (int)st);
      fflush(stdout);
      return 3;
    }
    usleep(20000);
  }
  printf("prog_online: rank %d: no error\n", rank);
  return 0;
}
