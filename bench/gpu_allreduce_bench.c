/* gpu_allreduce_bench.c — latency of an 8-byte and a large ncclAllReduce with and
 * without lockstep (issue 3, "Performance"), one MPI rank per GPU.
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
 * Writes one row per rank x size x variant (median/p5/p95/mean in us). */
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

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  if (argc < 3) {
    if (gt_rank == 0)
      fprintf(stderr, "usage: gpu_allreduce_bench OUT.csv LABEL [SMALL_ITERS] [LARGE_ITERS] "
                      "[LARGE_MIB] [LARGE_BUFS]\n");
    MPI_Finalize();
    return 2;
  }
  const char *label = argv[2];
  int iters[2] = {argc > 3 ? atoi(argv[3]) : 4000, argc > 4 ? atoi(argv[4]) : 100};
  size_t large_mib = argc > 5 ? (size_t)atol(argv[5]) : 256;
  int nbufs = argc > 6 ? atoi(argv[6]) : 1;
  if (nbufs < 1 || nbufs > 16)
    nbufs = 1;
  size_t bytes[2] = {8, large_mib << 20};
  int warm[2] = {200, 5};

  void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  allreduce_fn direct = h ? (allreduce_fn)dlsym(h, "ncclAllReduce") : NULL;
  if (!direct) {
    fprintf(stderr, "rank %d: cannot look up ncclAllReduce in libnccl.so.2: %s\n", gt_rank, dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  allreduce_fn wrapped = ncclAllReduce; /* the preloaded wrapper if there is one */
  int interposed = wrapped != direct;

  float *bufs[16];
  for (int b = 0; b < nbufs; b++) {
    GT_CUDA(cudaMalloc((void **)&bufs[b], bytes[1]));
    GT_CUDA(cudaMemset(bufs[b], 0, bytes[1]));
  }
  cudaStream_t s;
  GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ncclUniqueId id = gt_unique_id();
  ncclComm_t comm;
  GT_NCCL(ncclCommInitRank(&comm, gt_nranks, id, gt_rank));

  struct stat_row mine[4];
  int nrow = 0;
  for (int z = 0; z < 2; z++) {
    size_t count = bytes[z] / sizeof(float);
    double *lat[2];
    lat[0] = malloc(sizeof(double) * (size_t)iters[z]);
    lat[1] = malloc(sizeof(double) * (size_t)iters[z]);
    for (int i = 0; i < warm[z] * (z ? nbufs : 1); i++) {
      float *buf = bufs[z ? (i / 2) % nbufs : 0];
      GT_NCCL((i & 1 ? direct : wrapped)(buf, buf, count, ncclFloat, ncclSum, comm, s));
      GT_CUDA(cudaStreamSynchronize(s));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Alternate per iteration, and swap which goes first every other pair, so slow
     * drift (clocks, other tenants) falls equally on both variants. */
    for (int i = 0; i < iters[z]; i++)
      for (int k = 0; k < 2; k++) {
        int v = ((i & 1) ? 1 - k : k);
        float *buf = bufs[z ? (i / 2) % nbufs : 0]; /* both variants of a pair: one buffer */
        allreduce_fn fn = v ? direct : wrapped;
        uint64_t t0 = gt_now_ns();
        GT_NCCL(fn(buf, buf, count, ncclFloat, ncclSum, comm, s));
        GT_CUDA(cudaStreamSynchronize(s));
        lat[v][i] = (double)(gt_now_ns() - t0) / 1e3;
      }
    for (int v = 0; v < 2; v++) {
      double sum = 0;
      for (int i = 0; i < iters[z]; i++) sum += lat[v][i];
      qsort(lat[v], (size_t)iters[z], sizeof(double), cmp_double);
      mine[nrow++] = (struct stat_row){gt_rank, iters[z], (int64_t)bytes[z], v,
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
    FILE *f = fopen(argv[1], "a");
    if (!f) {
      fprintf(stderr, "%s: cannot write: %s\n", argv[1], strerror(errno));
      rc = 2;
    } else {
      if (ftell(f) == 0)
        fprintf(f, "label,interposed,nranks,rank,bytes,variant,n,median_us,p5_us,p95_us,mean_us\n");
      for (int i = 0; i < gt_nranks * 4; i++) {
        struct stat_row *x = &all[i];
        fprintf(f, "%s,%d,%d,%d,%lld,%s,%d,%.3f,%.3f,%.3f,%.3f\n", label, interposed, gt_nranks,
                x->rank, (long long)x->bytes, x->variant ? "direct" : "wrapped", x->n, x->median,
                x->p5, x->p95, x->mean);
        if (x->rank == 0)
          printf("%s rank0 %lld B %s: median %.2f us (p5 %.2f p95 %.2f)\n", label,
                 (long long)x->bytes, x->variant ? "direct " : "wrapped", x->median, x->p5, x->p95);
      }
      fclose(f);
    }
  }
  GT_NCCL(ncclCommDestroy(comm));
  for (int b = 0; b < nbufs; b++)
    cudaFree(bufs[b]);
  MPI_Finalize();
  return rc;
}
