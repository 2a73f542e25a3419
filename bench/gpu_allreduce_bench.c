/* gpu_allreduce_bench.c — latency of an 8-byte and a large ncclAllReduce with and
 * without lockstep, one MPI rank per GPU.
 * Two comparisons come out of it:
 *  - in process: iterations alternate between ncclAllReduce as the program sees it
 *    (interposed when liblockstep.so is preloaded) and NCCL's own ncclAllReduce looked
 *    up in libnccl.so.2 directly (never interposed). Under `lockstep run` the ratio of
 *    the two medians is the recorder's per-call cost with everything else equal; in a
 *    plain process both are the same function, so the ratio is the noise floor.
 *  - across processes: the caller runs this plain and under lockstep in alternating
 *    rounds and compares the "wrapped" medians.
 * One latency = host time from the call to the end of cudaStreamSynchronize.
 * Usage: gpu_allreduce_bench OUT.csv LABEL [SMALL_ITERS=4000] [LARGE_ITERS=100] [LARGE_MIB=256]
 *                            [LARGE_BUFS=1]
 * LARGE_BUFS > 1 rotates the large all-reduce over that many buffers, so one process's
 * median does not rest on where a single allocation happened to land (one process
 * against another differs by ~1 % at 256 MiB, more than the effects measured).
 * Writes one row per rank x size x variant (median/p5/p95/mean in us).
 *
 * Online mode: the cost of the side channel inside one process,
 *   gpu_allreduce_bench --online OUT.csv LABEL [SMALL_BLOCK=4000] [SMALL_BLOCKS=36]
 *                       [LARGE_BLOCK=60] [LARGE_BLOCKS=18] [LARGE_MIB=256] [LARGE_BUFS=4]
 * Three arms: "none" (NCCL's own symbol), "off" and "on" (the interposed symbol with
 * the side channel paused / publishing, through lockstep_online_set_enabled, looked
 * up at run time: without lockstep all three arms are NCCL's function, and the ratios
 * are the method's noise floor). Per size, blocks of BLOCK iterations, the three arms
 * in an order rotating through the six permutations. The channel publishes from the
 * watchdog thread every LOCKSTEP_POLL_MS (10 ms), after the calls: so a block is long
 * against that tick (the "on" block carries its own publishing, not the previous
 * block's), and before each block every rank sleeps 2.5 ticks (what an "on" block left
 * gets published then), then re-warms with 20 direct calls. Every rank pauses at the
 * same calls, as the toggle requires. Writes one row per rank x size x block x arm
 * (median/mean/p95 in us). */
#include "../gpu_tests/src/gt_common.h"

#include <dlfcn.h>

typedef ncclResult_t (*allreduce_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                     ncclComm_t, cudaStream_t);

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(double *v, int n, double p) {
  int i = (int)(p * (n - 1) + 0.5);
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

struct stat_row {
  int32_t rank, n;
  int64_t bytes;
  int32_t variant; /* 0 wrapped, 1 direct */
  double median, p5, p95, mean;
};

static int online_mode(int argc, char **argv);

/* What both modes measure with: ncclAllReduce as the program sees it and NCCL's own, the
 * buffers (LARGE bytes each), one non-blocking stream and one communicator of all ranks. */
struct setup {
  allreduce_fn direct, wrapped;
  int interposed; /* wrapped is liblockstep's, not NCCL's */
  size_t bytes[2]; /* the two sizes: 8 bytes and LARGE_MIB */
  float *bufs[16];
  int nbufs;
  cudaStream_t s;
  ncclComm_t comm;
};

/* Both modes' common part: NCCL's own symbol next to the one the program sees, nbufs
 * buffers of large_mib MiB (1 if nbufs is not in 1..16), a stream, a communicator. */
static void setup(struct setup *b, size_t large_mib, int nbufs) {
  if (nbufs < 1 || nbufs > 16)
    nbufs = 1;
  size_t large = large_mib << 20;
  b->bytes[0] = 8;
  b->bytes[1] = large;
  void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  b->direct = h ? (allreduce_fn)dlsym(h, "ncclAllReduce") : NULL;
  if (!b->direct) {
    fprintf(stderr, "rank %d: cannot look up ncclAllReduce in libnccl.so.2: %s\n", gt_rank, dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  b->wrapped = ncclAllReduce; /* the preloaded wrapper if there is one */
  /* GT_BENCH_DIRECT_ONLY=1: both variants are NCCL's own symbol, so a lockstep process
   * makes no interposed collective at all (what the recorder costs calls it never sees) */
  const char *only = getenv("GT_BENCH_DIRECT_ONLY");
  if (only && !strcmp(only, "1"))
    b->wrapped = b->direct;
  b->interposed = b->wrapped != b->direct;
  b->nbufs = nbufs;
  for (int i = 0; i < nbufs; i++) {
    GT_CUDA(cudaMalloc((void **)&b->bufs[i], large));
    GT_CUDA(cudaMemset(b->bufs[i], 0, large));
  }
  GT_CUDA(cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking));
  ncclUniqueId id = gt_unique_id();
  GT_NCCL(ncclCommInitRank(&b->comm, gt_nranks, id, gt_rank));
}

/* Warm-up before measuring size z: 200 small calls, or 5 per large buffer, alternating
 * the two symbols. */
static void warm_up(const struct setup *b, int z) {
  size_t count = b->bytes[z] / sizeof(float);
  for (int i = 0; i < (z ? 5 * b->nbufs : 200); i++) {
    float *buf = b->bufs[z ? (i / 2) % b->nbufs : 0];
    GT_NCCL((i & 1 ? b->direct : b->wrapped)(buf, buf, count, ncclFloat, ncclSum, b->comm, b->s));
    GT_CUDA(cudaStreamSynchronize(b->s));
  }
}

/* OUT.csv opened for appending, the header written if it is new; NULL (said) if it cannot be */
static FILE *open_csv(const char *path, const char *header) {
  FILE *f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
    return NULL;
  }
  if (ftell(f) == 0)
    fprintf(f, "%s\n", header);
  return f;
}

static void teardown(struct setup *b) {
  GT_NCCL(ncclCommDestroy(b->comm));
  for (int i = 0; i < b->nbufs; i++)
    cudaFree(b->bufs[i]);
}

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  if (argc > 1 && !strcmp(argv[1], "--online"))
    return online_mode(argc - 1, argv + 1);
  if (argc < 3) {
    if (gt_rank == 0)
      fprintf(stderr, "usage: gpu_allreduce_bench OUT.csv LABEL [SMALL_ITERS] [LARGE_ITERS] "
                      "[LARGE_MIB] [LARGE_BUFS]\n");
    MPI_Finalize();
    return 2;
  }
  const char *label = argv[2];
  int iters[2] = {argc > 3 ? atoi(argv[3]) : 4000, argc > 4 ? atoi(argv[4]) : 100};
  struct setup su;
  setup(&su, argc > 5 ? (size_t)atol(argv[5]) : 256, argc > 6 ? atoi(argv[6]) : 1);

  struct stat_row mine[4];
  int nrow = 0;
  for (int z = 0; z < 2; z++) {
    size_t count = su.bytes[z] / sizeof(float);
    double *lat[2];
    lat[0] = malloc(sizeof(double) * (size_t)iters[z]);
    lat[1] = malloc(sizeof(double) * (size_t)iters[z]);
    warm_up(&su, z);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Alternate per iteration, and swap which goes first every other pair, so slow
     * drift (clocks, other tenants) falls equally on both variants. */
    for (int i = 0; i < iters[z]; i++)
      for (int k = 0; k < 2; k++) {
        int v = ((i & 1) ? 1 - k : k);
        float *buf = su.bufs[z ? (i / 2) % su.nbufs : 0]; /* both variants of a pair: one buffer */
        allreduce_fn fn = v ? su.direct : su.wrapped;
        uint64_t t0 = gt_now_ns();
        GT_NCCL(fn(buf, buf, count, ncclFloat, ncclSum, su.comm, su.s));
        GT_CUDA(cudaStreamSynchronize(su.s));
        lat[v][i] = (double)(gt_now_ns() - t0) / 1e3;
      }
    for (int v = 0; v < 2; v++) {
      double sum = 0;
      for (int i = 0; i < iters[z]; i++) sum += lat[v][i];
      qsort(lat[v], (size_t)iters[z], sizeof(double), cmp_double);
      mine[nrow++] = (struct stat_row){gt_rank, iters[z], (int64_t)su.bytes[z], v,
                                       pct(lat[v], iters[z], 0.5), pct(lat[v], iters[z], 0.05),
                                       pct(lat[v], iters[z], 0.95), sum / iters[z]};
      free(lat[v]);
    }
  }

  struct stat_row *all = NULL;
  if (gt_rank == 0) all = calloc((size_t)gt_nranks * 4, sizeof *all);
  MPI_Gather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
  int rc = 0;
  if (gt_rank == 0) {
    FILE *f = open_csv(argv[1],
                       "label,interposed,nranks,rank,bytes,variant,n,median_us,p5_us,p95_us,mean_us");
    if (!f) {
      rc = 2;
    } else {
      for (int i = 0; i < gt_nranks * 4; i++) {
        struct stat_row *x = &all[i];
        fprintf(f, "%s,%d,%d,%d,%lld,%s,%d,%.3f,%.3f,%.3f,%.3f\n", label, su.interposed, gt_nranks,
                x->rank, (long long)x->bytes, x->variant ? "direct" : "wrapped", x->n, x->median,
                x->p5, x->p95, x->mean);
        if (x->rank == 0)
          printf("%s rank0 %lld B %s: median %.2f us (p5 %.2f p95 %.2f)\n", label,
                 (long long)x->bytes, x->variant ? "direct " : "wrapped", x->median, x->p5, x->p95);
      }
      fclose(f);
    }
  }
  teardown(&su);
  MPI_Finalize();
  return rc;
}

/* ---- online mode -------------------------------------------------------------------- */

enum { ARM_NONE, ARM_OFF, ARM_ON, NARMS };
static const char *const arm_name[NARMS] = {"none", "off", "on"};

struct block_row {
  int32_t rank, block, arm, n;
  int64_t bytes;
  double median, mean, p95;
};

static int online_mode(int argc, char **argv) {
  if (argc < 3) {
    if (gt_rank == 0)
      fprintf(stderr, "usage: gpu_allreduce_bench --online OUT.csv LABEL [SMALL_BLOCK] "
                      "[SMALL_BLOCKS] [LARGE_BLOCK] [LARGE_BLOCKS] [LARGE_MIB] [LARGE_BUFS]\n");
    MPI_Finalize();
    return 2;
  }
  const char *label = argv[2];
  int block[2] = {argc > 3 ? atoi(argv[3]) : 4000, argc > 5 ? atoi(argv[5]) : 60};
  int nblocks[2] = {argc > 4 ? atoi(argv[4]) : 36, argc > 6 ? atoi(argv[6]) : 18};
  const char *pm = getenv("LOCKSTEP_POLL_MS");
  int gap_ms = (int)((pm && *pm ? atoi(pm) : 10) * 5 / 2);
  if (gap_ms < 25)
    gap_ms = 25;

  int (*toggle)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "lockstep_online_set_enabled");
  struct setup su;
  setup(&su, argc > 7 ? (size_t)atol(argv[7]) : 256, argc > 8 ? atoi(argv[8]) : 4);
  /* after the first recorded call: the toggle answers -1 before it (nothing recorded) */
  int toggle_rc = toggle ? toggle(1) : -2;

  static const int perms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  int nrows = NARMS * (nblocks[0] + nblocks[1]);
  struct block_row *mine = calloc((size_t)nrows, sizeof *mine);
  int maxn = block[0] > block[1] ? block[0] : block[1];
  double *lat = malloc(sizeof(double) * (size_t)maxn);
  int nrow = 0;
  for (int z = 0; z < 2; z++) {
    size_t count = su.bytes[z] / sizeof(float);
    warm_up(&su, z);
    for (int b = 0; b < nblocks[z]; b++)
      for (int k = 0; k < NARMS; k++) {
        int arm = perms[b % 6][k];
        if (toggle && toggle(arm == ARM_ON) < 0)
          toggle_rc = -1;
        allreduce_fn fn = arm == ARM_NONE ? su.direct : su.wrapped;
        gt_sleep_ms(gap_ms); /* what an "on" block left is published now */
        for (int i = 0; i < 20; i++) {
          float *buf = su.bufs[z ? i % su.nbufs : 0];
          GT_NCCL(su.direct(buf, buf, count, ncclFloat, ncclSum, su.comm, su.s));
          GT_CUDA(cudaStreamSynchronize(su.s));
        }
        double sum = 0;
        for (int i = 0; i < block[z]; i++) {
          float *buf = su.bufs[z ? i % su.nbufs : 0];
          uint64_t t0 = gt_now_ns();
          GT_NCCL(fn(buf, buf, count, ncclFloat, ncclSum, su.comm, su.s));
          GT_CUDA(cudaStreamSynchronize(su.s));
          lat[i] = (double)(gt_now_ns() - t0) / 1e3;
          sum += lat[i];
        }
        qsort(lat, (size_t)block[z], sizeof(double), cmp_double);
        mine[nrow++] = (struct block_row){gt_rank, b, arm, block[z], (int64_t)su.bytes[z],
                                          pct(lat, block[z], 0.5), sum / block[z],
                                          pct(lat, block[z], 0.95)};
      }
  }
  if (toggle)
    toggle(1);

  int all_ok = 0, ok = toggle_rc != -1;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  struct block_row *all = NULL;
  if (gt_rank == 0)
    all = calloc((size_t)gt_nranks * (size_t)nrows, sizeof *all);
  MPI_Gather(mine, nrows * (int)sizeof *mine, MPI_BYTE, all, nrows * (int)sizeof *mine, MPI_BYTE, 0,
             MPI_COMM_WORLD);
  int rc = 0;
  if (gt_rank == 0) {
    FILE *f = open_csv(argv[1],
                       "label,interposed,toggle,nranks,rank,bytes,block,arm,n,median_us,mean_us,p95_us");
    if (!f) {
      rc = 2;
    } else {
      /* toggle: 1 present and every call took, 0 absent, -1 some call answered -1 */
      int tcol = !toggle ? 0 : all_ok ? 1 : -1;
      for (int i = 0; i < gt_nranks * nrows; i++) {
        struct block_row *x = &all[i];
        fprintf(f, "%s,%d,%d,%d,%d,%lld,%d,%s,%d,%.3f,%.3f,%.3f\n", label, su.interposed, tcol,
                gt_nranks, x->rank, (long long)x->bytes, x->block, arm_name[x->arm], x->n,
                x->median, x->mean, x->p95);
      }
      fclose(f);
      printf("%s: %d blocks x %d arms written (interposed %d, toggle %d)\n", label,
             nblocks[0] + nblocks[1], NARMS, su.interposed, tcol);
    }
  }
  free(lat);
  free(mine);
  free(all);
  teardown(&su);
  MPI_Finalize();
  return rc;
}
