/* gpu_driver_cost.c — what each CUDA driver call the recorder makes costs on the real
 * driver, and what it adds to a launch-bound loop (no perf on the GPU machine,
 * so the recorder's time is taken apart here, one driver call at a time).
 * One process, one GPU, NCCL with one rank (ncclCommInitAll), no lockstep involved.
 *   gpu_driver_cost OUT.csv [ITERS=20000]
 * Part 1: each call alone, batches of 100 (per call = batch / 100), median/p95 over 400
 * batches. Part 2: ncclAllReduce 8 B + cudaStreamSynchronize per iteration, the variants
 * alternating per iteration in a rotating order (drift falls on all alike), with the
 * recorder's driver calls after the collective as each variant says. Part 3: the plain
 * loop while a second thread queries events the way the watchdog does (N events every
 * P ms), against the same loop with that thread asleep, alternating in blocks. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                               \
  do {                                                                                      \
    int e_ = (int)(x);                                                                      \
    if (e_) {                                                                               \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, e_);                \
      exit(3);                                                                              \
    }                                                                                       \
  } while (0)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static FILE *g_out;
static void row(const char *part, const char *name, double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += v[i];
  double med = v[n / 2], p95 = v[(int)(0.95 * (n - 1))];
  fprintf(g_out, "%s,%s,%d,%.1f,%.1f,%.1f\n", part, name, n, med, p95, sum / n);
  printf("%-6s %-44s median %8.1f ns  p95 %8.1f ns\n", part, name, med, p95);
}

enum { NEV = 4096 };
static CUevent g_ev[NEV];
static CUstream g_s;
static CUcontext g_ctx;
static CUdeviceptr g_flag_dev;
static int g_memops;
static unsigned g_rot;

/* ---- part 1: one call, alone ---- */
enum { ONE_CTXGET, ONE_STREAMCTX, ONE_CAPTURING, ONE_STREAMID, ONE_QUERY_DONE, ONE_RECORD_SAME,
       ONE_RECORD_ROT, ONE_WRITEVALUE, ONE_CREATE_DESTROY, ONE_CTXSET, ONE_STREAMQUERY, NONE_KINDS };
static const char *const one_name[NONE_KINDS] = {
    "cuCtxGetCurrent", "cuStreamGetCtx", "cuStreamIsCapturing", "cuStreamGetId",
    "cuEventQuery (completed)", "cuEventRecord (one event)", "cuEventRecord (4096 events)",
    "cuStreamWriteValue32 (mapped host)", "cuEventCreate+cuEventDestroy", "cuCtxSetCurrent (same)",
    "cuStreamQuery (idle)"};

static void one(int k) {
  CUcontext c;
  int cap;
  unsigned long long id;
  CUevent e;
  switch (k) {
  case ONE_CTXGET: CK(cuCtxGetCurrent(&c)); break;
  case ONE_STREAMCTX: CK(cuStreamGetCtx(g_s, &c)); break;
  case ONE_CAPTURING: CK(cuStreamIsCapturing(g_s, (CUstreamCaptureStatus *)&cap)); break;
  case ONE_STREAMID: CK(cuStreamGetId(g_s, &id)); break;
  case ONE_QUERY_DONE: CK(cuEventQuery(g_ev[0])); break;
  case ONE_RECORD_SAME: CK(cuEventRecord(g_ev[1], g_s)); break;
  case ONE_RECORD_ROT: CK(cuEventRecord(g_ev[2 + g_rot++ % (NEV - 2)], g_s)); break;
  case ONE_WRITEVALUE: CK(cuStreamWriteValue32(g_s, g_flag_dev, g_rot++, 0)); break;
  case ONE_CREATE_DESTROY:
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CK(cuEventDestroy(e));
    break;
  case ONE_CTXSET: CK(cuCtxSetCurrent(g_ctx)); break;
  case ONE_STREAMQUERY: CK(cuStreamQuery(g_s)); break;
  }
}

/* ---- part 2: the launch-bound loop ---- */
enum { V_PLAIN, V_RECORD_SAME, V_TODAY, V_QUERY_RECORD, V_WRITEVALUE, V_CAPTURING_RECORD, NV };
static const char *const v_name[NV] = {
    "allreduce+sync", "allreduce+record(one event)+sync",
    "allreduce+ctx+streamctx+capturing+record(rot)+sync", "allreduce+query+record(one event)+sync",
    "allreduce+writevalue32+sync", "allreduce+capturing+record(one event)+sync"};

static float *g_buf;
static ncclComm_t g_comm;

static void variant(int v) {
  CUcontext c;
  int cap;
  CK(ncclAllReduce(g_buf, g_buf, 2, ncclFloat, ncclSum, g_comm, (cudaStream_t)g_s));
  switch (v) {
  case V_PLAIN: break;
  case V_RECORD_SAME: CK(cuEventRecord(g_ev[1], g_s)); break;
  case V_TODAY:
    CK(cuCtxGetCurrent(&c));
    CK(cuStreamGetCtx(g_s, &c));
    CK(cuStreamIsCapturing(g_s, (CUstreamCaptureStatus *)&cap));
    CK(cuEventRecord(g_ev[2 + g_rot++ % (NEV - 2)], g_s));
    break;
  case V_QUERY_RECORD:
    (void)cuEventQuery(g_ev[1]);
    CK(cuEventRecord(g_ev[1], g_s));
    break;
  case V_WRITEVALUE:
    if (g_memops)
      CK(cuStreamWriteValue32(g_s, g_flag_dev, g_rot++, 0));
    break;
  case V_CAPTURING_RECORD:
    CK(cuStreamIsCapturing(g_s, (CUstreamCaptureStatus *)&cap));
    CK(cuEventRecord(g_ev[1], g_s));
    break;
  }
  CK(cudaStreamSynchronize((cudaStream_t)g_s));
}

/* ---- part 3: a querying thread beside the loop ---- */
static volatile int g_q_on, g_q_stop;
static int g_q_n, g_q_ms;
static void *querier(void *arg) {
  (void)arg;
  CK(cuCtxSetCurrent(g_ctx));
  while (!g_q_stop) {
    struct timespec ts = {0, (long)g_q_ms * 1000000L};
    nanosleep(&ts, NULL);
    if (!g_q_on)
      continue;
    for (int i = 0; i < g_q_n; i++)
      (void)cuEventQuery(g_ev[2 + i % (NEV - 2)]);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gpu_driver_cost OUT.csv [ITERS]\n");
    return 2;
  }
  int iters = argc > 2 ? atoi(argv[2]) : 20000;
  g_out = fopen(argv[1], "w");
  if (!g_out)
    return 2;
  fprintf(g_out, "part,name,n,median_ns,p95_ns,mean_ns\n");
  CK(cudaSetDevice(0));
  CK(cudaFree(0));
  CK(cuCtxGetCurrent(&g_ctx));
  CK(cudaMalloc((void **)&g_buf, 64));
  CK(cudaMemset(g_buf, 0, 64));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  g_s = (CUstream)s;
  int dev0 = 0;
  CK(ncclCommInitAll(&g_comm, 1, &dev0));
  for (int i = 0; i < NEV; i++)
    CK(cuEventCreate(&g_ev[i], CU_EVENT_DISABLE_TIMING));
  CK(cuEventRecord(g_ev[0], g_s));
  CK(cuStreamSynchronize(g_s));
  CUdevice d;
  CK(cuCtxGetDevice(&d));
  int memops = 0;
  (void)cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, d);
  void *host = NULL;
  if (cuMemHostAlloc(&host, 4096, CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS &&
      cuMemHostGetDevicePointer(&g_flag_dev, host, 0) == CUDA_SUCCESS) {
    g_memops = cuStreamWriteValue32(g_s, g_flag_dev, 1, 0) == CUDA_SUCCESS;
    CK(cuStreamSynchronize(g_s));
  }
  printf("stream memops: %d (wait-value-nor attr %d)\n", g_memops, memops);

  enum { NB = 400, B = 100 };
  double *v = malloc(sizeof(double) * (size_t)(iters > NB ? iters : NB));
  for (int k = 0; k < NONE_KINDS; k++) {
    if (k == ONE_WRITEVALUE && !g_memops)
      continue;
    for (int i = 0; i < B; i++)
      one(k);
    CK(cuStreamSynchronize(g_s));
    for (int b = 0; b < NB; b++) {
      uint64_t t0 = now_ns();
      for (int i = 0; i < B; i++)
        one(k);
      v[b] = (double)(now_ns() - t0) / B;
      if (k == ONE_RECORD_SAME || k == ONE_RECORD_ROT || k == ONE_WRITEVALUE)
        CK(cuStreamSynchronize(g_s)); /* untimed: keep the stream's queue short */
    }
    row("one", one_name[k], v, NB);
  }

  /* part 2 */
  double *lat[NV];
  for (int k = 0; k < NV; k++)
    lat[k] = malloc(sizeof(double) * (size_t)iters);
  for (int i = 0; i < 2000; i++)
    variant(i % NV);
  for (int i = 0; i < iters; i++)
    for (int k = 0; k < NV; k++) {
      int vv = (k + i) % NV;
      uint64_t t0 = now_ns();
      variant(vv);
      lat[vv][i] = (double)(now_ns() - t0);
    }
  for (int k = 0; k < NV; k++)
    if (k != V_WRITEVALUE || g_memops)
      row("loop", v_name[k], lat[k], iters);

  /* part 3: blocks of 2000 plain iterations, querier on/off alternating */
  static const int cfg[][2] = {{4096, 10}, {4096, 1}, {64, 1}, {1, 1}};
  for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    g_q_n = cfg[c][0];
    g_q_ms = cfg[c][1];
    g_q_stop = 0;
    g_q_on = 0;
    pthread_t t;
    pthread_create(&t, NULL, querier, NULL);
    int blk = 2000, nblk = iters / blk > 2 ? iters / blk : 2;
    double *on = malloc(sizeof(double) * (size_t)(blk * nblk)), *off = malloc(sizeof(double) * (size_t)(blk * nblk));
    int non = 0, noff = 0;
    for (int b = 0; b < 2 * nblk; b++) {
      g_q_on = b & 1;
      struct timespec ts = {0, 20000000L};
      nanosleep(&ts, NULL);
      for (int i = 0; i < blk; i++) {
        uint64_t t0 = now_ns();
        variant(V_PLAIN);
        double x = (double)(now_ns() - t0);
        if (b & 1)
          on[non++] = x;
        else
          off[noff++] = x;
      }
    }
    g_q_stop = 1;
    pthread_join(t, NULL);
    char name[96];
    snprintf(name, sizeof name, "allreduce+sync beside an asleep querier (%d ev / %d ms blocks)", g_q_n, g_q_ms);
    row("beside", name, off, noff);
    snprintf(name, sizeof name, "allreduce+sync beside a querier of %d events every %d ms", g_q_n, g_q_ms);
    row("beside", name, on, non);
    free(on);
    free(off);
  }

  /* GroupStart/AllReduce/GroupEnd host interval, plain */
  for (int i = 0; i < iters; i++) {
    uint64_t t0 = now_ns();
    CK(ncclGroupStart());
    CK(ncclAllReduce(g_buf, g_buf, 2, ncclFloat, ncclSum, g_comm, (cudaStream_t)g_s));
    CK(ncclGroupEnd());
    v[i] = (double)(now_ns() - t0);
    CK(cudaStreamSynchronize((cudaStream_t)g_s));
  }
  row("group", "GroupStart/AllReduce/GroupEnd host", v, iters);
  fclose(g_out);
  ncclCommDestroy(g_comm);
  return 0;
}
