/* sample_nccl.h — the few NCCL declarations the sample needs, so it compiles (for bear) and
 * parses without a CUDA toolkit; lint recognizes the calls by name from rules/nccl.json. */
#ifndef SAMPLE_NCCL_H
#define SAMPLE_NCCL_H
#include <stddef.h>
typedef enum { ncclSuccess = 0 } ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef struct CUstream_st *cudaStream_t;
typedef enum { ncclFloat32 = 7, ncclFloat = 7 } ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
int sample_rank(ncclComm_t comm);
#endif
