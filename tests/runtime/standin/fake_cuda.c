/* fake_cuda.c — a TEST DOUBLE of libcuda.so.1: just the driver calls liblockstep
 * uses for device completion. An event completes LS_FAKE_CUDA_DELAY_MS after it was
 * recorded, or never when LS_FAKE_CUDA_NEVER=1 (a collective another rank never
 * joins); LS_FAKE_CUDA_CAPTURING=1: every stream reports graph capture;
 * LS_FAKE_CUDA_COMPLETE_FIRST=N: only the first N recorded events ever
 * complete (a later collective hangs). LS_FAKE_CUDA_LOG=FILE appends "record <stream> <monotonic ns>" per record,
 * so tests can check events are recorded after the outermost ncclGroupEnd.
 * LS_FAKE_CUDA_COUNT=FILE: at exit, one line "<function> <calls>" per entry point
 * called, so the overhead benchmark and its test count driver calls per wrapper. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nccl_abi.h"

#define EXPORT __attribute__((visibility("default")))

struct CUevent_st {
  unsigned long long t;
  int recorded;
  int never;
};
static int nrecorded;

enum { C_CREATE, C_RECORD, C_QUERY, C_DESTROY, C_CTXGET, C_CTXSET, C_STREAMCTX, C_CAPTURING, C_N };
static const char *const count_name[C_N] = {"cuEventCreate", "cuEventRecord", "cuEventQuery",
                                            "cuEventDestroy_v2", "cuCtxGetCurrent", "cuCtxSetCurrent",
                                            "cuStreamGetCtx", "cuStreamIsCapturing"};
static unsigned long long counts[C_N];
#define COUNT(k) __atomic_fetch_add(&counts[k], 1, __ATOMIC_RELAXED)

__attribute__((destructor)) static void write_counts(void) {
  const char *path = getenv("LS_FAKE_CUDA_COUNT");
  FILE *f = path && *path ? fopen(path, "w") : NULL;
  if (!f)
    return;
  for (int k = 0; k < C_N; k++)
    fprintf(f, "%s %llu\n", count_name[k], counts[k]);
  fclose(f);
}

/* The LS_FAKE_CUDA_* settings, read once at load: a getenv per driver call cost ~290
 * instructions each (three per interposed call), which the overhead benchmark then
 * counted as the recorder's device bookkeeping. */
static const char *env_log;
static int env_first = -1, env_never, env_capturing;
static unsigned long long env_delay_ns;
__attribute__((constructor)) static void read_env(void) {
  const char *first = getenv("LS_FAKE_CUDA_COMPLETE_FIRST");
  env_first = first ? atoi(first) : -1;
  env_log = getenv("LS_FAKE_CUDA_LOG");
  const char *never = getenv("LS_FAKE_CUDA_NEVER");
  env_never = never && *never == '1';
  const char *d = getenv("LS_FAKE_CUDA_DELAY_MS");
  env_delay_ns = d ? strtoull(d, NULL, 10) * 1000000ull : 0;
  const char *cap = getenv("LS_FAKE_CUDA_CAPTURING");
  env_capturing = cap && *cap == '1';
}

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags);
EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags) {
  COUNT(C_CREATE);
  *e = calloc(1, sizeof **e);
  return *e ? LS_CUDA_SUCCESS : 2;
}
EXPORT CUresult cuEventRecord(CUevent e, CUstream s);
EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
  COUNT(C_RECORD);
  e->t = now_ns();
  e->recorded = 1;
  e->never = env_first >= 0 && __atomic_fetch_add(&nrecorded, 1, __ATOMIC_RELAXED) >= env_first;
  if (env_log) {
    FILE *f = fopen(env_log, "a");
    if (f) {
      fprintf(f, "record %llu %llu\n", (unsigned long long)(uintptr_t)s, e->t);
      fclose(f);
    }
  }
  return LS_CUDA_SUCCESS;
}
EXPORT CUresult cuEventQuery(CUevent e);
EXPORT CUresult cuEventQuery(CUevent e) {
  COUNT(C_QUERY);
  if (env_never || e->never)
    return LS_CUDA_ERROR_NOT_READY;
  if (!e->recorded || now_ns() >= e->t + env_delay_ns)
    return LS_CUDA_SUCCESS;
  return LS_CUDA_ERROR_NOT_READY;
}
EXPORT CUresult cuEventDestroy_v2(CUevent e);
EXPORT CUresult cuEventDestroy_v2(CUevent e) {
  COUNT(C_DESTROY);
  free(e);
  return LS_CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *c);
EXPORT CUresult cuCtxGetCurrent(CUcontext *c) {
  COUNT(C_CTXGET);
  *c = (CUcontext)(uintptr_t)0x1000;
  return LS_CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext c);
EXPORT CUresult cuCtxSetCurrent(CUcontext c) {
  COUNT(C_CTXSET);
  return LS_CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *c);
EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *c) {
  COUNT(C_STREAMCTX);
  *c = (CUcontext)(uintptr_t)0x1000;
  return LS_CUDA_SUCCESS;
}
EXPORT CUresult cuStreamIsCapturing(CUstream s, int *status);
EXPORT CUresult cuStreamIsCapturing(CUstream s, int *status) {
  COUNT(C_CAPTURING);
  *status = env_capturing; /* CU_STREAM_CAPTURE_STATUS_ACTIVE = 1 */
  return LS_CUDA_SUCCESS;
}
