/* comm_lib.h — the header of a communication library whose bodies lint does not see (they are
 * compiled elsewhere): a class that wraps NCCL and a table of entry points loaded by dlsym.
 * Only the project's lockstep-wrappers.json tells lint what they are. */
#ifndef COMM_LIB_H
#define COMM_LIB_H
#include <cuda_runtime.h>
#include <nccl.h>

class NcclApi {
 public:
  virtual ~NcclApi() {}
  virtual ncclResult_t groupStart();
  virtual ncclResult_t groupEnd();
  /* in place, on the object's communicator and stream */
  virtual ncclResult_t allReduce(float *buf, size_t count, ncclRedOp_t op);
  virtual ncclResult_t broadcast(float *buf, size_t count, int root);
};

struct ncclFuncs {
  ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*groupStart)(void);
  ncclResult_t (*groupEnd)(void);
};
/* fills f with dlsym(handle, "ncclAllReduce") & co. */
int load_nccl(struct ncclFuncs *f, const char *path);
#endif
