/* online_latency.c — the online check's detection latency: every rank issues 5 consistent
 * all-reduces, then the last rank diverges at seq 5 (op: a broadcast; count: 9 floats
 * instead of 8; skip: no call) and prints the CLOCK_MONOTONIC time of its divergent
 * call (or of the call it skipped), so the suite can subtract it from lockstep's
 * report line ([t=...], LOCKSTEP_ONLINE_TIMESTAMPS=1, same host, same clock).
 *   online_latency op|count|skip WAIT_S
 * Every rank then waits at most WAIT_S for its stream, aborts its communicator and
 * exits 0: the run ends by itself, with or without lockstep. */
#include "gt_common.h"

#include <unistd.h>

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  const char *how = argc > 1 ? argv[1] : "op";
  int wait_s = argc > 2 ? atoi(argv[2]) : 8;
  ncclUniqueId id = gt_unique_id();
  ncclComm_t comm;
  GT_NCCL(ncclCommInitRank(&comm, gt_nranks, id, gt_rank));
  cudaStream_t s;
  GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *buf;
  GT_CUDA(cudaMalloc((void **)&buf, 64 * sizeof(float)));
  for (int i = 0; i < 5; i++)
    GT_NCCL(ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s));
  GT_CUDA(cudaStreamSynchronize(s));
  MPI_Barrier(MPI_COMM_WORLD); /* everyone is idle and in step before the divergence */
  int odd = gt_rank == gt_nranks - 1;
  if (odd) /* the others first: the divergent call is the second side to arrive */
    gt_sleep_ms(200);
  uint64_t t = gt_now_ns();
  if (odd && !strcmp(how, "op"))
    ncclBroadcast(buf, buf, 8, ncclFloat, 0, comm, s);
  else if (odd && !strcmp(how, "count"))
    ncclAllReduce(buf, buf, 9, ncclFloat, ncclSum, comm, s);
  else if (!(odd && !strcmp(how, "skip")))
    ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
  if (odd) {
    printf("DIVERGE rank=%d how=%s t=%llu.%09llu\n", gt_rank, how,
           (unsigned long long)(t / 1000000000ull), (unsigned long long)(t % 1000000000ull));
    fflush(stdout);
  }
  if (odd && !strcmp(how, "skip"))
    gt_sleep_ms(wait_s * 500); /* idle, alive: "returned from everything" */
  uint64_t end = gt_now_ns() + (uint64_t)wait_s * 1000000000ull;
  while (cudaStreamQuery(s) == cudaErrorNotReady && gt_now_ns() < end)
    gt_sleep_ms(5);
  ncclCommAbort(comm); /* a diverged communicator cannot be destroyed cleanly */
  fflush(NULL);
  _exit(0); /* MPI_Finalize would wait for ranks still stuck */
}
