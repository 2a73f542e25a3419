/* dl_user.c — a library that uses NCCL and is itself dlopen'ed RTLD_LOCAL, the way
 * Python loads PyTorch's extension (whose dependency is libnccl.so.2): libnccl is then
 * out of reach of dlsym(RTLD_NEXT), and the recorder must still find it. */
#include <stdint.h>

#include "nccl_abi.h"

ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);

__attribute__((visibility("default"))) int dl_user_run(void);
__attribute__((visibility("default"))) int dl_user_run(void) {
  ncclUniqueId id = {{0}};
  ncclComm_t c;
  static float b[4];
  if (ncclCommInitRank(&c, 1, id, 0) != ncclSuccess)
    return 1;
  if (ncclGroupEnd() != ncclInvalidUsage)
    return 2;
  if (ncclAllReduce(b, b, 4, (ncclDataType_t)7, (ncclRedOp_t)0, c, (cudaStream_t)0) != ncclSuccess)
    return 3;
  return 0;
}
