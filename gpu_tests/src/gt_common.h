/* gt_common.h — what every gpu_tests program shares: one MPI rank per GPU, the NCCL
 * unique id broadcast over MPI, checked CUDA/NCCL calls that name the rank, and a
 * monotonic clock (the same CLOCK_MONOTONIC the lockstep trace uses, so program
 * times and trace times can be compared directly).
 * Non-goal: a general harness; each program writes its own CSV. */
#ifndef GT_COMMON_H
#define GT_COMMON_H

#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <errno.h>
#include <mpi.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int gt_rank = -1, gt_nranks = 0;

/* A CUDA failure is a broken test machine, not a semantic result: stop all ranks
 * (MPI_Abort) so nothing hangs waiting for this one. */
#define GT_CUDA(call)                                                                   \
  do {                                                                                  \
    cudaError_t gt_e_ = (call);                                                         \
    if (gt_e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d: rank %d: %s failed: %s\n", __FILE__, __LINE__, gt_rank,   \
              #call, cudaGetErrorString(gt_e_));                                        \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                     \
    }                                                                                   \
  } while (0)

/* For NCCL calls whose failure is not the thing under test. */
#define GT_NCCL(call)                                                                   \
  do {                                                                                  \
    ncclResult_t gt_r_ = (call);                                                        \
    if (gt_r_ != ncclSuccess) {                                                         \
      fprintf(stderr, "%s:%d: rank %d: %s failed: %s (%d)\n", __FILE__, __LINE__,       \
              gt_rank, #call, ncclGetErrorString(gt_r_), (int)gt_r_);                   \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                     \
    }                                                                                   \
  } while (0)

static inline uint64_t gt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void gt_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* MPI up, rank -> GPU (local rank modulo visible devices: two NCCL ranks cannot
 * share one GPU, so the launcher must start at most one rank per GPU). */
static inline void gt_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gt_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &gt_nranks);
  int ndev = 0;
  GT_CUDA(cudaGetDeviceCount(&ndev));
  const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int local = lr ? atoi(lr) : gt_rank;
  if (ndev < 1) {
    fprintf(stderr, "rank %d: no CUDA device\n", gt_rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  GT_CUDA(cudaSetDevice(local % ndev));
}

/* A fresh unique id from rank 0, the same on every rank. */
static inline ncclUniqueId gt_unique_id(void) {
  ncclUniqueId id;
  if (gt_rank == 0) GT_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  return id;
}

static inline const char *gt_rc_name(int rc) {
  switch (rc) {
  case 0: return "ncclSuccess";
  case 1: return "ncclUnhandledCudaError";
  case 2: return "ncclSystemError";
  case 3: return "ncclInternalError";
  case 4: return "ncclInvalidArgument";
  case 5: return "ncclInvalidUsage";
  case 6: return "ncclRemoteError";
  case 7: return "ncclInProgress";
  default: return "ncclUnknown";
  }
}

/* Fill an int32 device buffer with `value` (host staging; test buffers are small
 * enough that this is not the bottleneck, and it avoids a kernel). */
static inline void gt_fill_i32(int32_t *dev, size_t count, int32_t value) {
  int32_t *h = (int32_t *)malloc(count * sizeof *h);
  if (!h) MPI_Abort(MPI_COMM_WORLD, 3);
  for (size_t i = 0; i < count; i++) h[i] = value;
  GT_CUDA(cudaMemcpy(dev, h, count * sizeof *h, cudaMemcpyHostToDevice));
  free(h);
}

/* Number of elements of `dev` that differ from `value` (full copy back). */
static inline size_t gt_count_bad_i32(const int32_t *dev, size_t count, int32_t value) {
  int32_t *h = (int32_t *)malloc(count * sizeof *h);
  if (!h) MPI_Abort(MPI_COMM_WORLD, 3);
  GT_CUDA(cudaMemcpy(h, dev, count * sizeof *h, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t i = 0; i < count; i++) bad += h[i] != value;
  free(h);
  return bad;
}

#endif
