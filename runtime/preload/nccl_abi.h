/* nccl_abi.h — the few NCCL and CUDA driver types liblockstep needs, written from
 * the ABI (NCCL 2.28's nccl.h, CUDA's cuda.h) so the recorder builds without nccl.h
 * or the CUDA toolkit. Only sizes and layouts that cross the interposed calls are
 * here; values the recorder interprets are named. Non-goal: a usable NCCL header. */
#ifndef LOCKSTEP_NCCL_ABI_H
#define LOCKSTEP_NCCL_ABI_H

#include <stddef.h>

typedef struct ncclComm *ncclComm_t;
typedef struct CUstream_st *cudaStream_t;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

/* Values are the library's own; the recorder stores them as they are. */
typedef enum { ncclNumTypes_abi = 12, ncclDataType_dummy = 0x7fffffff } ncclDataType_t;
typedef enum { ncclNumOps_abi = 5, ncclRedOp_dummy = 0x7fffffff } ncclRedOp_t;
typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

#define NCCL_SPLIT_NOCOLOR (-1)

/* Leading fields of ncclConfig_t (stable since 2.14); the rest is opaque here. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
} ncclConfig_t;

typedef struct ncclSimInfo_opaque ncclSimInfo_t;

/* CUDA driver API, the subset used for device completion (cuda.h values). */
typedef int CUresult;
typedef struct CUctx_st *CUcontext;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
#define LS_CUDA_SUCCESS 0
#define LS_CUDA_ERROR_NOT_READY 600
#define LS_CU_EVENT_DISABLE_TIMING 0x2

#endif
