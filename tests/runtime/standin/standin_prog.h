/* standin_prog.h — what the CPU test programs that run against the stand-in
 * libnccl.so.2 share: the NCCL entry points they call (prototyped here, since they
 * build without NCCL's header), the stand-in's own test hooks, the dtype/op/stream
 * values they pass, and how a process learns its rank and the unique id that lets
 * ranks started separately meet (RANK / WORLD_SIZE or Open MPI's OMPI_COMM_WORLD_*,
 * and LS_TEST_UID). */
#ifndef LS_STANDIN_PROG_H
#define LS_STANDIN_PROG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_abi.h"

ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclBroadcast(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclBcast(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclAllGather(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclReduceScatter(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclAlltoAll(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclGather(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclScatter(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclSend(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclRecv(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *);
ncclResult_t ncclGetUniqueId(ncclUniqueId *);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
ncclResult_t ncclCommInitAll(ncclComm_t *, int, const int *);
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *);
ncclResult_t ncclCommShrink(ncclComm_t, int *, int, ncclComm_t *, ncclConfig_t *, int);
ncclResult_t ncclCommFinalize(ncclComm_t);
ncclResult_t ncclCommDestroy(ncclComm_t);
ncclResult_t ncclCommAbort(ncclComm_t);
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *);
ncclResult_t ncclCommCount(const ncclComm_t, int *);
ncclResult_t ncclCommUserRank(const ncclComm_t, int *);
ncclResult_t ncclCommCuDevice(const ncclComm_t, int *);

/* The stand-in's test hooks (standin_nccl.c). */
int lsStandinAbortCount(void);
unsigned long long lsStandinRcHash(void);

#define F32 ((ncclDataType_t)7)
#define SUM ((ncclRedOp_t)0)
/* The stand-in moves no data: any stream value will do, one that is not NULL. */
#define STREAM ((cudaStream_t)(uintptr_t)0x5000)

/* This process's rank and the job's size: RANK / WORLD_SIZE, else Open MPI's (a program
 * started by mpirun); 0 and 1 when neither is set. */
static inline void standin_rank_world(int *rank, int *world) {
  const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
  if (!r)
    r = getenv("OMPI_COMM_WORLD_RANK"), w = getenv("OMPI_COMM_WORLD_SIZE");
  *rank = r ? atoi(r) : 0;
  *world = w ? atoi(w) : 1;
}

/* The unique id of communicator `name`: "<LS_TEST_UID or base>/<name>", the same in
 * every rank that the test started with the same LS_TEST_UID. */
static inline ncclUniqueId standin_uid(const char *base, const char *name) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  const char *env = getenv("LS_TEST_UID");
  snprintf(id.internal, sizeof id.internal, "%s/%s", env ? env : base, name);
  return id;
}

#endif
