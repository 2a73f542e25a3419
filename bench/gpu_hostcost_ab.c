/* gpu_hostcost_ab.c — the recorder's host cost per call, measured inside one process, so
 * that the speed level a process happens to run at (one H200 shows several, ~0.5 to
 * ~1.2 us per 8-byte call, fixed for the process's life) cancels out of the ratios.
 * One rank, no MPI (liblockstep's MPI_Init wrapper would start the recorder).
 * Two measurements per phase: an 8-byte ncclAllReduce + stream synchronize, and the
 * host interval GroupStart / AllReduce / GroupEnd (synchronized after, untimed).
 *   gpu_hostcost_ab OUT.csv LABEL MODE [ROUNDS=8] [ITERS=2000]
 * MODE ab: phase A0 (NCCL's own symbols, looked up in libnccl.so.2, before anything
 *   interposed is called: a preloaded recorder has not started), ROUNDS rounds; then
 *   ROUNDS rounds alternating A (own symbols, recorder running) and B (the symbols the
 *   program links: liblockstep's when preloaded; the first B call starts the recorder).
 * MODE thread | map | pin: no lockstep involved; ROUNDS rounds alternating A (own
 *   symbols) and B (own symbols with an idle thread sleeping 10 ms at a time, as the
 *   recorder's / a 192 MiB shared file mapping written once, as the trace / the process
 *   pinned to the CPU it runs on): what an idle recorder's presence alone costs.
 * Communicator creation always goes through the own symbols. Appends one row per phase
 * x measurement (all rounds pooled) and one per round: label,mode,phase,metric,round,n,
 * median_ns,p95_ns (round -1 = pooled); prints one line per pooled row and the thread
 * count before and after A0 (equal: the recorder did not start early).
 * The CUDA driver API is taken from libcuda.so.1 at run time; without cuInit there
 * (the CPU tests' fake driver) a made-up stream handle stands in and nothing syncs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nccl_abi.h"

ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

typedef ncclResult_t (*allreduce_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                     cudaStream_t);
typedef ncclResult_t (*group_fn)(void);
struct syms {
  allreduce_fn allreduce;
  group_fn start, end;
};

static struct {
  CUresult (*sync)(CUstream);
  CUstream s;
  void *buf;
} g_dev;
static ncclComm_t g_comm;

static void die(const char *what, int rc) {
  fprintf(stderr, "gpu_hostcost_ab: %s failed (%d)\n", what, rc);
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sync_stream(void) {
  if (g_dev.sync) {
    CUresult r = g_dev.sync(g_dev.s);
    if (r != LS_CUDA_SUCCESS)
      die("cuStreamSynchronize", r);
  }
}

/* The driver: a context (the device's primary one, which NCCL's runtime then uses), a
 * non-blocking stream and an 8-byte buffer; stand-ins when libcuda has no cuInit. */
static void dev_setup(void) {
  static float host_buf[2];
  g_dev.s = (CUstream)(uintptr_t)0x5000;
  g_dev.buf = host_buf;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  CUresult (*init)(unsigned) = h ? (CUresult(*)(unsigned))dlsym(h, "cuInit") : NULL;
  if (!init) {
    printf("device: none (no cuInit in libcuda.so.1): stand-in stream, no synchronize\n");
    return;
  }
  CUresult (*get)(int *, int) = (CUresult(*)(int *, int))dlsym(h, "cuDeviceGet");
  CUresult (*retain)(CUcontext *, int) = (CUresult(*)(CUcontext *, int))dlsym(h, "cuDevicePrimaryCtxRetain");
  CUresult (*setcur)(CUcontext) = (CUresult(*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
  CUresult (*screate)(CUstream *, unsigned) = (CUresult(*)(CUstream *, unsigned))dlsym(h, "cuStreamCreate");
  CUresult (*alloc)(unsigned long long *, size_t) =
      (CUresult(*)(unsigned long long *, size_t))dlsym(h, "cuMemAlloc_v2");
  g_dev.sync = (CUresult(*)(CUstream))dlsym(h, "cuStreamSynchronize");
  if (!get || !retain || !setcur || !screate || !alloc || !g_dev.sync)
    die("looking up the CUDA driver API", -1);
  int dev = 0;
  CUcontext ctx = NULL;
  unsigned long long ptr = 0;
  CUresult r;
  if ((r = init(0)) || (r = get(&dev, 0)) || (r = retain(&ctx, dev)) || (r = setcur(ctx)) ||
      (r = screate(&g_dev.s, 1 /* CU_STREAM_NON_BLOCKING */)) || (r = alloc(&ptr, 64)))
    die("CUDA driver setup", r);
  g_dev.buf = (void *)(uintptr_t)ptr;
  printf("device: CUDA device 0, primary context, non-blocking stream\n");
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* One round of a phase: ITERS samples of each measurement appended to ar[] and grp[]. */
static void round_of(const struct syms *f, int iters, uint64_t *ar, uint64_t *grp) {
  for (int i = 0; i < iters; i++) {
    uint64_t t0 = now_ns();
    ncclResult_t rc = f->allreduce(g_dev.buf, g_dev.buf, 2, (ncclDataType_t)7 /* float */,
                                   (ncclRedOp_t)0 /* sum */, g_comm, (cudaStream_t)g_dev.s);
    sync_stream();
    ar[i] = now_ns() - t0;
    if (rc != ncclSuccess)
      die("ncclAllReduce", rc);
  }
  for (int i = 0; i < iters; i++) {
    uint64_t t0 = now_ns();
    ncclResult_t a = f->start();
    ncclResult_t b = f->allreduce(g_dev.buf, g_dev.buf, 2, (ncclDataType_t)7, (ncclRedOp_t)0, g_comm,
                                  (cudaStream_t)g_dev.s);
    ncclResult_t c = f->end();
    grp[i] = now_ns() - t0;
    sync_stream();
    if (a != ncclSuccess || b != ncclSuccess || c != ncclSuccess)
      die("GroupStart/AllReduce/GroupEnd", a ? a : b ? b : c);
  }
}

/* ---- the B conditions of modes thread, map, pin ---------------------------------------- */

static int g_idle_stop;
static void *idle_main(void *arg) {
  (void)arg;
  struct timespec ts = {0, 10000000L};
  while (!__atomic_load_n(&g_idle_stop, __ATOMIC_ACQUIRE))
    nanosleep(&ts, NULL);
  return NULL;
}

#define MAP_BYTES (192ul << 20)
static pthread_t g_idle;
static void *g_map;
static cpu_set_t g_mask;

static void condition(const char *mode, int on) {
  if (!strcmp(mode, "thread")) {
    if (on) {
      __atomic_store_n(&g_idle_stop, 0, __ATOMIC_RELEASE);
      if (pthread_create(&g_idle, NULL, idle_main, NULL))
        die("pthread_create", errno);
    } else {
      __atomic_store_n(&g_idle_stop, 1, __ATOMIC_RELEASE);
      pthread_join(g_idle, NULL);
    }
  } else if (!strcmp(mode, "map")) {
    if (on) {
      char path[] = "/dev/shm/gpu_hostcost_ab.XXXXXX";
      int fd = mkstemp(path);
      if (fd < 0 || ftruncate(fd, (off_t)MAP_BYTES))
        die("creating the 192 MiB file in /dev/shm", errno);
      unlink(path);
      g_map = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
      if (g_map == MAP_FAILED)
        die("mmap", errno);
      for (size_t o = 0; o < MAP_BYTES; o += 4096)
        ((volatile char *)g_map)[o] = 1;
    } else {
      munmap(g_map, MAP_BYTES);
    }
  } else if (!strcmp(mode, "pin")) {
    if (on) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(sched_getcpu(), &one);
      sched_setaffinity(0, sizeof one, &one);
    } else {
      sched_setaffinity(0, sizeof g_mask, &g_mask);
    }
  }
}

static int threads_now(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "Threads:", 8))
      n = atoi(line + 8);
  if (f)
    fclose(f);
  return n;
}

/* ---- statistics and output --------------------------------------------------------- */

static void stat_of(uint64_t *v, long n, double *med, double *p95) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  *med = (double)v[n / 2];
  long i = (long)(0.95 * (double)(n - 1) + 0.5);
  *p95 = (double)v[i];
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gpu_hostcost_ab OUT.csv LABEL ab|thread|map|pin [ROUNDS] [ITERS]\n");
    return 2;
  }
  const char *csvp = argv[1], *label = argv[2], *mode = argv[3];
  int rounds = argc > 4 ? atoi(argv[4]) : 8, iters = argc > 5 ? atoi(argv[5]) : 2000;
  int ab = !strcmp(mode, "ab");
  if (!ab && strcmp(mode, "thread") && strcmp(mode, "map") && strcmp(mode, "pin")) {
    fprintf(stderr, "gpu_hostcost_ab: unknown mode '%s' (ab, thread, map, pin)\n", mode);
    return 2;
  }
  if (rounds < 1 || iters < 10) {
    fprintf(stderr, "gpu_hostcost_ab: ROUNDS must be >= 1 and ITERS >= 10\n");
    return 2;
  }
  sched_getaffinity(0, sizeof g_mask, &g_mask);
  void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  struct syms own = {0}, linked = {ncclAllReduce, ncclGroupStart, ncclGroupEnd};
  ncclResult_t (*uid)(ncclUniqueId *) = h ? (ncclResult_t(*)(ncclUniqueId *))dlsym(h, "ncclGetUniqueId") : NULL;
  ncclResult_t (*init)(ncclComm_t *, int, ncclUniqueId, int) =
      h ? (ncclResult_t(*)(ncclComm_t *, int, ncclUniqueId, int))dlsym(h, "ncclCommInitRank") : NULL;
  if (h) {
    own.allreduce = (allreduce_fn)dlsym(h, "ncclAllReduce");
    own.start = (group_fn)dlsym(h, "ncclGroupStart");
    own.end = (group_fn)dlsym(h, "ncclGroupEnd");
  }
  if (!uid || !init || !own.allreduce || !own.start || !own.end) {
    fprintf(stderr, "gpu_hostcost_ab: cannot look up NCCL's own symbols in libnccl.so.2\n");
    return 1;
  }
  int threads0 = threads_now();
  dev_setup();
  ncclUniqueId id;
  ncclResult_t rc = uid(&id);
  if (rc != ncclSuccess || (rc = init(&g_comm, 1, id, 0)) != ncclSuccess)
    die("ncclGetUniqueId/ncclCommInitRank (NCCL's own)", rc);
  printf("interposed: %s\n", own.allreduce != linked.allreduce ? "yes" : "no");

  /* phases: A0 (ab only), A, B; samples per phase pooled over its rounds */
  const char *names[3] = {"A0", "A", "B"};
  long cap = (long)rounds * iters;
  uint64_t *ar[3], *grp[3];
  long n[3] = {0, 0, 0};
  for (int p = 0; p < 3; p++) {
    ar[p] = malloc((size_t)cap * sizeof(uint64_t));
    grp[p] = malloc((size_t)cap * sizeof(uint64_t));
    if (!ar[p] || !grp[p])
      die("malloc", errno);
  }
  uint64_t *tmp = malloc((size_t)iters * sizeof(uint64_t));
  FILE *csv = fopen(csvp, "a");
  if (!csv || !tmp) {
    fprintf(stderr, "gpu_hostcost_ab: %s: cannot write: %s\n", csvp, strerror(errno));
    return 1;
  }
  if (ftell(csv) == 0)
    fprintf(csv, "label,mode,phase,metric,round,n,median_ns,p95_ns\n");
  /* warm-up: the own symbols only (nothing interposed yet) */
  round_of(&own, iters < 200 ? iters : 200, ar[0], grp[0]);

  int total = ab ? 3 * rounds : 2 * rounds;
  for (int k = 0; k < total; k++) {
    int p = ab ? (k < rounds ? 0 : 1 + (k - rounds) % 2) : 1 + k % 2;
    if (ab && k == rounds)
      printf("threads: %d before A0, %d after\n", threads0, threads_now());
    const struct syms *f = ab && p == 2 ? &linked : &own;
    if (!ab && p == 2)
      condition(mode, 1);
    round_of(f, iters, ar[p] + n[p], grp[p] + n[p]);
    if (!ab && p == 2)
      condition(mode, 0);
    int r = ab ? (k < rounds ? k : (k - rounds) / 2) : k / 2;
    for (int m = 0; m < 2; m++) {
      double med, p95;
      memcpy(tmp, (m ? grp[p] : ar[p]) + n[p], (size_t)iters * sizeof *tmp);
      stat_of(tmp, iters, &med, &p95);
      fprintf(csv, "%s,%s,%s,%s,%d,%d,%.0f,%.0f\n", label, mode, names[p], m ? "group_host" : "allreduce_sync", r,
              iters, med, p95);
    }
    n[p] += iters;
  }
  for (int p = ab ? 0 : 1; p < 3; p++)
    for (int m = 0; m < 2; m++) {
      double med, p95;
      stat_of(m ? grp[p] : ar[p], n[p], &med, &p95);
      const char *metric = m ? "group_host" : "allreduce_sync";
      fprintf(csv, "%s,%s,%s,%s,-1,%ld,%.0f,%.0f\n", label, mode, names[p], metric, n[p], med, p95);
      printf("phase=%s metric=%s n=%ld median_ns=%.0f p95_ns=%.0f\n", names[p], metric, n[p], med, p95);
    }
  fclose(csv);
  free(tmp);
  for (int p = 0; p < 3; p++) {
    free(ar[p]);
    free(grp[p]);
  }
  return 0;
}
