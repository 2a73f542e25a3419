/* stress_gpu.c — the recorder under stress on real NCCL: T threads per rank on
 * four communicators (two threads per communicator, each with its own stream), issuing
 * N collectives each, now and then an invalid root (ncclInvalidArgument, returned
 * before anything is launched); `abort` also has thread 0 abort communicator 0 at the
 * middle of the run while the others go on with the rest. Every result is checked.
 *   stress_gpu threads|abort T N
 * The threads take one global turn order, the same on every rank, and each waits for
 * its collective before passing the turn: communicators used concurrently by threads
 * in different orders on different ranks can deadlock in NCCL itself, which is not
 * what this tests. Prints "stress rank R calls C errors E aborted A" and exits 0 when
 * every result was the expected one, 1 otherwise. */
#include "gt_common.h"

#include <pthread.h>

#define NCOMMS 4

static int g_T;
static long g_N;
static int g_abort;
static ncclComm_t g_comm[NCOMMS];
static int g_dead[NCOMMS]; /* under g_lock */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static long g_turn;
static long g_calls, g_errors, g_bad, g_aborted; /* under g_lock */
static int g_dev;

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg, c = t % NCOMMS;
  GT_CUDA(cudaSetDevice(g_dev));
  cudaStream_t s;
  GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *buf, *out; /* in place, or from buf to out (64 floats per rank each) */
  GT_CUDA(cudaMalloc((void **)&buf, 2 * 64 * (size_t)gt_nranks * sizeof(float)));
  out = buf + 64 * (size_t)gt_nranks;
  for (long i = 0; i < g_N; i++) {
    pthread_mutex_lock(&g_lock);
    while (g_turn != i * g_T + t)
      pthread_cond_wait(&g_cv, &g_lock);
    if (g_abort && t == 0 && i == g_N / 2 && !g_dead[0]) {
      /* from this thread, in the middle of the others' work on communicator 0 */
      ncclResult_t r = ncclCommAbort(g_comm[0]);
      g_dead[0] = 1;
      g_aborted++;
      if (r != ncclSuccess) {
        fprintf(stderr, "rank %d: ncclCommAbort returned %d\n", gt_rank, (int)r);
        g_bad++;
      }
    }
    if (!g_dead[c]) {
      size_t n = 1 + (size_t)(i % 64);
      ncclResult_t r, want = ncclSuccess;
      switch ((i + t) % 5) {
      case 0:
        r = ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, g_comm[c], s);
        break;
      case 1:
        r = ncclBroadcast(buf, buf, n, ncclFloat, 0, g_comm[c], s);
        break;
      case 2:
        r = ncclAllGather(buf, out, n / 2 + 1, ncclFloat, g_comm[c], s);
        break;
      case 3:
        r = ncclReduceScatter(buf, out, 1, ncclFloat, ncclSum, g_comm[c], s);
        break;
      default:
        if (i % 10 == 4) { /* invalid root: an argument error, nothing launched */
          r = ncclBroadcast(buf, buf, n, ncclFloat, gt_nranks, g_comm[c], s);
          want = ncclInvalidArgument;
        } else {
          r = ncclAllReduce(buf, buf, n, ncclFloat, ncclMax, g_comm[c], s);
        }
      }
      g_calls++;
      g_errors += r != ncclSuccess;
      if (r != want) {
        fprintf(stderr, "rank %d thread %d call %ld: result %d, expected %d\n", gt_rank, t, i,
                (int)r, (int)want);
        g_bad++;
      }
      GT_CUDA(cudaStreamSynchronize(s));
    }
    g_turn++;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
  }
  GT_CUDA(cudaFree(buf));
  GT_CUDA(cudaStreamDestroy(s));
  return NULL;
}

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  GT_CUDA(cudaGetDevice(&g_dev));
  g_abort = argc > 1 && !strcmp(argv[1], "abort");
  g_T = argc > 2 ? atoi(argv[2]) : 8;
  g_N = argc > 3 ? atol(argv[3]) : 500;
  if (g_T < NCOMMS || g_T > 64) {
    fprintf(stderr, "stress_gpu: T must be %d..64\n", NCOMMS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int c = 0; c < NCOMMS; c++) {
    ncclUniqueId id = gt_unique_id();
    GT_NCCL(ncclCommInitRank(&g_comm[c], gt_nranks, id, gt_rank));
  }
  pthread_t th[64];
  for (int t = 0; t < g_T; t++)
    pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
  for (int t = 0; t < g_T; t++)
    pthread_join(th[t], NULL);
  for (int c = 0; c < NCOMMS; c++)
    if (!g_dead[c])
      GT_NCCL(ncclCommDestroy(g_comm[c]));
  printf("stress rank %d calls %ld errors %ld aborted %ld\n", gt_rank, g_calls, g_errors, g_aborted);
  fflush(stdout);
  int bad = g_bad > 0, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
