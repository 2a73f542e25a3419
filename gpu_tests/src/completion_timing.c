/* completion_timing.c — "GroupEnd is not completion":
 * in-place ncclAllReduce SUM/int32 of MIB MiB per rank inside an explicit group,
 * WARMUP + CYCLES cycles. Per rank-cycle: the host interval around
 * GroupStart/API/GroupEnd, the CUDA-event interval around the collective on the stream,
 * and whether the post-collective event was already complete right after GroupEnd
 * returned. Host times are CLOCK_MONOTONIC ns so the lockstep trace's enter/exit and
 * completion times of the same calls can be set beside them.
 * Usage: completion_timing OUT.csv [CYCLES=10] [WARMUP=3] [MIB=256]
 * Rank 0 gathers every rank's rows and writes the CSV; statistics are the caller's. */
#include "gt_common.h"

struct cycle_row {
  int32_t rank, cycle, warmup, ready_now;
  double host_us, cuda_us;
  uint64_t t_start_ns, t_end_ns, t_done_ns;
};

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  if (argc < 2) {
    if (gt_rank == 0) fprintf(stderr, "usage: completion_timing OUT.csv [CYCLES] [WARMUP] [MIB]\n");
    MPI_Finalize();
    return 2;
  }
  int cycles = argc > 2 ? atoi(argv[2]) : 10;
  int warmup = argc > 3 ? atoi(argv[3]) : 3;
  size_t mib = argc > 4 ? (size_t)atol(argv[4]) : 256;
  if (cycles < 1 || warmup < 0 || mib < 1) {
    if (gt_rank == 0) fprintf(stderr, "completion_timing: bad CYCLES/WARMUP/MIB\n");
    MPI_Finalize();
    return 2;
  }
  size_t count = mib * (1u << 20) / sizeof(int32_t);
  int32_t *buf;
  GT_CUDA(cudaMalloc((void **)&buf, count * sizeof *buf));
  cudaStream_t s;
  GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  GT_CUDA(cudaEventCreate(&start));
  GT_CUDA(cudaEventCreate(&stop));
  ncclUniqueId id = gt_unique_id();
  ncclComm_t comm;
  GT_NCCL(ncclCommInitRank(&comm, gt_nranks, id, gt_rank));

  int total = warmup + cycles;
  struct cycle_row *rows = calloc((size_t)total, sizeof *rows);
  size_t bad_total = 0;
  /* Every byte 0x01 -> every int32 0x01010101; the sum over N ranks fits for N < 128.
   * The memset sits before the start event, outside both intervals. */
  const int32_t expect = gt_nranks * 0x01010101;
  for (int i = 0; i < total; i++) {
    GT_CUDA(cudaMemsetAsync(buf, 1, count * sizeof *buf, s));
    GT_CUDA(cudaStreamSynchronize(s));
    MPI_Barrier(MPI_COMM_WORLD);
    GT_CUDA(cudaEventRecord(start, s));
    uint64_t t0 = gt_now_ns();
    GT_NCCL(ncclGroupStart());
    GT_NCCL(ncclAllReduce(buf, buf, count, ncclInt32, ncclSum, comm, s));
    GT_NCCL(ncclGroupEnd());
    uint64_t t1 = gt_now_ns();
    GT_CUDA(cudaEventRecord(stop, s));
    int ready = cudaEventQuery(stop) == cudaSuccess;
    GT_CUDA(cudaEventSynchronize(stop));
    uint64_t t2 = gt_now_ns();
    float ms = 0;
    GT_CUDA(cudaEventElapsedTime(&ms, start, stop));
    rows[i] = (struct cycle_row){gt_rank, i - warmup, i < warmup, ready,
                                 (double)(t1 - t0) / 1e3, (double)ms * 1e3, t0, t1, t2};
    if (i == total - 1) bad_total = gt_count_bad_i32(buf, count, expect);
  }

  struct cycle_row *all = NULL;
  if (gt_rank == 0) all = calloc((size_t)total * (size_t)gt_nranks, sizeof *all);
  MPI_Gather(rows, total * (int)sizeof *rows, MPI_BYTE, all, total * (int)sizeof *rows, MPI_BYTE,
             0, MPI_COMM_WORLD);
  unsigned long long bad = bad_total, bad_sum = 0;
  MPI_Reduce(&bad, &bad_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int rc = 0;
  if (gt_rank == 0) {
    FILE *f = fopen(argv[1], "w");
    if (!f) {
      fprintf(stderr, "%s: cannot write: %s\n", argv[1], strerror(errno));
      rc = 2;
    } else {
      fprintf(f, "rank,cycle,warmup,host_us,cuda_us,ready_after_group_end,t_start_ns,t_end_ns,"
                 "t_done_ns,nranks,mib,bad_elements_last_cycle_all_ranks\n");
      for (int r = 0; r < gt_nranks; r++)
        for (int i = 0; i < total; i++) {
          struct cycle_row *x = &all[r * total + i];
          fprintf(f, "%d,%d,%d,%.3f,%.3f,%d,%llu,%llu,%llu,%d,%zu,%llu\n", x->rank, x->cycle,
                  x->warmup, x->host_us, x->cuda_us, x->ready_now,
                  (unsigned long long)x->t_start_ns, (unsigned long long)x->t_end_ns,
                  (unsigned long long)x->t_done_ns, gt_nranks, mib, bad_sum);
        }
      fclose(f);
      printf("completion_timing: %d ranks x %d cycles (+%d warm-up), %zu MiB, bad elements %llu\n",
             gt_nranks, cycles, warmup, mib, bad_sum);
    }
  }
  GT_NCCL(ncclCommDestroy(comm));
  cudaFree(buf);
  MPI_Finalize();
  return rc ? rc : (bad_sum ? 1 : 0);
}
