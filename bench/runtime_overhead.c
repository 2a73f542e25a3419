/* runtime_overhead.c — host cost of one interposed NCCL call: the same binary runs
 * unwrapped (stand-in libnccl.so.2 only) and with liblockstep.so preloaded
 * (bench/runtime_overhead.sh drives both). It times batches of BATCH calls so the
 * clock's own cost (~20 ns) is amortized, and prints the median, p90 and mean per
 * call over all batches. Linked against the stand-in, so only host work is measured:
 * the device side (a real cuEventRecord) is measured on GPUs by gpu_tests/.
 *   ls_runtime_overhead [CALLS] [BURST]
 * BURST > 0 pauses 30 ms (untimed) after every BURST calls, so the watchdog can
 * recycle event slots: without pauses 10^7 calls/s exhaust the 4096-event pool and
 * the rest would measure the pool-full path instead of the event bookkeeping.
 *   ls_runtime_overhead group [ITERATIONS=10000] [BURST]
 * ITERATIONS of ncclGroupStart / ncclAllReduce / ncclGroupEnd, untimed and without a
 * warm-up (BURST > 0: a 30 ms pause after every BURST iterations, as above): the program bench/recorder_instr.sh counts the recorder's instructions per
 * interposed call with (bench/RESULTS.md), under
 *   valgrind --tool=callgrind --toggle-collect=ncclGroupStart --toggle-collect=ncclAllReduce
 *     --toggle-collect=ncclGroupEnd build/bench/ls_runtime_overhead group 10000
 * (LD_PRELOAD=liblockstep.so). Each toggle matches the stand-in's symbol of the same name
 * too, so what is collected is the wrapper's own work, without NCCL's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_abi.h"

ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

#define BATCH 100

static uint64_t now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The group interval, n times: 0, or 1 at the first call that fails. */
static int group_iterations(long n, long burst, ncclComm_t c, float *buf, cudaStream_t s) {
  for (long i = 0; i < n; i++) {
    if (burst > 0 && i > 0 && i % burst == 0) {
      struct timespec pause = {0, 30000000};
      nanosleep(&pause, NULL);
    }
    if (ncclGroupStart() != ncclSuccess ||
        ncclAllReduce(buf, buf, 2, (ncclDataType_t)7, (ncclRedOp_t)0, c, s) != ncclSuccess ||
        ncclGroupEnd() != ncclSuccess)
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int group = argc > 1 && !strcmp(argv[1], "group");
  if (group) {
    argc--;
    argv++;
  }
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  ncclComm_t c;
  if (ncclCommInitRank(&c, 1, id, 0) != ncclSuccess)
    return 1;
  static float buf[8];
  cudaStream_t s = (cudaStream_t)(uintptr_t)0x5000;
  if (group)
    return group_iterations(argc > 1 ? atol(argv[1]) : 10000, argc > 2 ? atol(argv[2]) : 0, c, buf, s);

  long calls = argc > 1 ? atol(argv[1]) : 1000000;
  long burst = argc > 2 ? atol(argv[2]) : 0;
  long nb = calls / BATCH;
  if (nb < 1)
    nb = 1;
  for (int i = 0; i < 10000; i++) /* warm up: lazy lookups, page faults of the first records */
    ncclAllReduce(buf, buf, 2, (ncclDataType_t)7, (ncclRedOp_t)0, c, s);
  double *per = malloc((size_t)nb * sizeof *per);
  double total = 0;
  for (long b = 0; b < nb; b++) {
    if (burst > 0 && b > 0 && (b * BATCH) % burst == 0) {
      struct timespec pause = {0, 30000000};
      nanosleep(&pause, NULL);
    }
    uint64_t t0 = now();
    for (int i = 0; i < BATCH; i++)
      ncclAllReduce(buf, buf, 2, (ncclDataType_t)7, (ncclRedOp_t)0, c, s);
    per[b] = (double)(now() - t0) / BATCH;
    total += per[b];
  }
  qsort(per, (size_t)nb, sizeof *per, cmp);
  printf("calls=%ld median_ns=%.1f p90_ns=%.1f mean_ns=%.1f\n", nb * BATCH, per[nb / 2],
         per[nb * 9 / 10], total / (double)nb);
  free(per);
  return 0;
}
