/* runtime_group.c — N iterations of ncclGroupStart / ncclAllReduce / ncclGroupEnd against
 * the stand-in libnccl.so.2, untimed: the program to count the recorder's instructions
 * per interposed call with (bench/RESULTS.md):
 *   valgrind --tool=callgrind --toggle-collect=ncclGroupStart --toggle-collect=ncclAllReduce
 *     --toggle-collect=ncclGroupEnd build/bench/ls_runtime_group 10000   (LD_PRELOAD=liblockstep.so)
 * Each toggle matches the stand-in's symbol of the same name too, so what is collected is
 * the wrapper's own work, without NCCL's.
 *   ls_runtime_group [ITERATIONS=10000] */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_abi.h"

ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000;
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  ncclComm_t c;
  if (ncclCommInitRank(&c, 1, id, 0) != ncclSuccess)
    return 1;
  static float buf[8];
  cudaStream_t s = (cudaStream_t)(uintptr_t)0x5000;
  for (long i = 0; i < n; i++) {
    if (ncclGroupStart() != ncclSuccess ||
        ncclAllReduce(buf, buf, 2, (ncclDataType_t)7, (ncclRedOp_t)0, c, s) != ncclSuccess ||
        ncclGroupEnd() != ncclSuccess)
      return 1;
  }
  return 0;
}
