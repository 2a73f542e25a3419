/* lint_realworld.c — a real-world-style TU for the lint benchmark: a small
 * data-parallel + pipeline-parallel trainer in the shape of nccl-tests and
 * PyTorch's ProcessGroupNCCL users (MPI bootstrap, ncclUniqueId broadcast,
 * CommSplit, bucketed gradient all-reduce, grouped P2P, checkpointing, async
 * error polling). Two bugs of the kinds gpu_tests/ runs are left in on purpose
 * (a rank-0-only metric reduction, a CHECK return inside a group). Benchmark
 * input only: it builds with mpicc -I/usr/local/cuda/include but is not run. */
#include <mpi.h>
#include <nccl.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MPICHECK(cmd)                                                         \
  do {                                                                        \
    int e_ = (cmd);                                                           \
    if (e_ != MPI_SUCCESS) {                                                  \
      fprintf(stderr, "%s:%d: MPI error %d\n", __FILE__, __LINE__, e_);       \
      exit(EXIT_FAILURE);                                                     \
    }                                                                         \
  } while (0)

#define CUDACHECK(cmd)                                                        \
  do {                                                                        \
    cudaError_t e_ = (cmd);                                                   \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: CUDA error '%s'\n", __FILE__, __LINE__,         \
              cudaGetErrorString(e_));                                        \
      exit(EXIT_FAILURE);                                                     \
    }                                                                         \
  } while (0)

#define NCCLCHECK(cmd)                                                        \
  do {                                                                        \
    ncclResult_t r_ = (cmd);                                                  \
    if (r_ != ncclSuccess) {                                                  \
      fprintf(stderr, "%s:%d: NCCL error '%s'\n", __FILE__, __LINE__,         \
              ncclGetErrorString(r_));                                        \
      return r_;                                                              \
    }                                                                         \
  } while (0)

enum { MAX_BUCKETS = 32, MAX_STAGES = 8 };

struct bucket {
  float *grad;
  size_t count;
  int ready;
};

struct trainer {
  int world_rank, world_size, local_rank;
  int tp_size, pp_size, dp_size;
  int stage, tp_rank, dp_rank;
  ncclComm_t world, tp, dp;
  cudaStream_t stream;
  struct bucket buckets[MAX_BUCKETS];
  int nbuckets;
  float *act_in, *act_out;
  size_t act_count;
  float *loss_dev;
  float loss_host;
  int step, max_steps, ckpt_every, log_every;
  const char *ckpt_dir;
};

static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  if (!v || !*v)
    return dflt;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end) {
    fprintf(stderr, "bad %s='%s'\n", name, v);
    exit(EXIT_FAILURE);
  }
  return (int)x;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Blocking communicators return errors synchronously; nonblocking ones need
 * polling until the state leaves ncclInProgress. */
static ncclResult_t wait_comm(ncclComm_t comm) {
  ncclResult_t state;
  do {
    NCCLCHECK(ncclCommGetAsyncError(comm, &state));
  } while (state == ncclInProgress);
  return state;
}

static ncclResult_t bootstrap(struct trainer *t) {
  ncclUniqueId id;
  MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &t->world_rank));
  MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &t->world_size));
  t->local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
  t->tp_size = env_int("TP_SIZE", 1);
  t->pp_size = env_int("PP_SIZE", 1);
  if (t->world_size % (t->tp_size * t->pp_size) != 0) {
    if (t->world_rank == 0)
      fprintf(stderr, "world size %d not divisible by tp*pp=%d\n", t->world_size,
              t->tp_size * t->pp_size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  t->dp_size = t->world_size / (t->tp_size * t->pp_size);
  t->tp_rank = t->world_rank % t->tp_size;
  t->stage = (t->world_rank / t->tp_size) % t->pp_size;
  t->dp_rank = t->world_rank / (t->tp_size * t->pp_size);

  CUDACHECK(cudaSetDevice(t->local_rank));
  CUDACHECK(cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking));
  if (t->world_rank == 0)
    NCCLCHECK(ncclGetUniqueId(&id));
  MPICHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
  NCCLCHECK(ncclCommInitRank(&t->world, t->world_size, id, t->world_rank));
  NCCLCHECK(wait_comm(t->world));

  /* Tensor-parallel groups: same stage and data-parallel index. Data-parallel
   * groups: same stage and tensor-parallel index. Every rank calls both splits
   * in the same order, so the colors may differ but the sequence does not. */
  int tp_color = t->dp_rank * t->pp_size + t->stage;
  int dp_color = t->stage * t->tp_size + t->tp_rank;
  NCCLCHECK(ncclCommSplit(t->world, tp_color, t->tp_rank, &t->tp, NULL));
  NCCLCHECK(ncclCommSplit(t->world, dp_color, t->dp_rank, &t->dp, NULL));
  return ncclSuccess;
}

static ncclResult_t alloc_model(struct trainer *t) {
  static const size_t layer_params[] = {4096 * 1024, 4096 * 4096, 4096 * 4096,
                                        4096 * 11008, 11008 * 4096, 4096 * 32000};
  const size_t bucket_cap = 25u << 20; /* 25M floats, as DDP's default bucket */
  size_t filled = 0;
  t->nbuckets = 0;
  for (size_t i = 0; i < sizeof layer_params / sizeof layer_params[0]; i++) {
    if (t->nbuckets == 0 || filled + layer_params[i] > bucket_cap) {
      if (t->nbuckets == MAX_BUCKETS)
        return ncclInvalidUsage;
      t->buckets[t->nbuckets].count = 0;
      t->buckets[t->nbuckets].ready = 0;
      t->nbuckets++;
      filled = 0;
    }
    t->buckets[t->nbuckets - 1].count += layer_params[i] / (size_t)t->tp_size;
    filled += layer_params[i];
  }
  for (int b = 0; b < t->nbuckets; b++)
    CUDACHECK(cudaMalloc((void **)&t->buckets[b].grad, t->buckets[b].count * sizeof(float)));
  t->act_count = (size_t)8 * 2048 * 4096 / (size_t)t->tp_size;
  CUDACHECK(cudaMalloc((void **)&t->act_in, t->act_count * sizeof(float)));
  CUDACHECK(cudaMalloc((void **)&t->act_out, t->act_count * sizeof(float)));
  CUDACHECK(cudaMalloc((void **)&t->loss_dev, sizeof(float)));
  return ncclSuccess;
}

/* Pipeline: receive activations from the previous stage, send to the next.
 * Send and receive are grouped so that neighbours cannot deadlock on each
 * other's blocking calls. */
static ncclResult_t pipeline_forward(struct trainer *t) {
  int prev = t->world_rank - t->tp_size;
  int next = t->world_rank + t->tp_size;
  ncclResult_t res = ncclSuccess, end;
  NCCLCHECK(ncclGroupStart());
  if (t->stage > 0)
    res = ncclRecv(t->act_in, t->act_count, ncclFloat, prev, t->world, t->stream);
  if (res == ncclSuccess && t->stage < t->pp_size - 1)
    res = ncclSend(t->act_out, t->act_count, ncclFloat, next, t->world, t->stream);
  end = ncclGroupEnd();
  return res != ncclSuccess ? res : end;
}

static ncclResult_t pipeline_backward(struct trainer *t) {
  int prev = t->world_rank - t->tp_size;
  int next = t->world_rank + t->tp_size;
  NCCLCHECK(ncclGroupStart());
  if (t->stage < t->pp_size - 1)
    NCCLCHECK(ncclRecv(t->act_out, t->act_count, ncclFloat, next, t->world, t->stream));
  if (t->stage > 0)
    NCCLCHECK(ncclSend(t->act_in, t->act_count, ncclFloat, prev, t->world, t->stream));
  NCCLCHECK(ncclGroupEnd());
  return ncclSuccess;
}

static ncclResult_t tensor_parallel_matmul(struct trainer *t, int layer) {
  /* Row-parallel linear layer: partial sums reduced across the TP group.
   * Column-parallel layers gather instead. Which one depends on the layer
   * index, which every rank of the group shares. */
  if (t->tp_size == 1)
    return ncclSuccess;
  if (layer % 2 == 0)
    return ncclAllReduce(t->act_out, t->act_out, t->act_count, ncclBfloat16, ncclSum, t->tp,
                         t->stream);
  return ncclAllGather(t->act_out, t->act_in, t->act_count / (size_t)t->tp_size, ncclBfloat16,
                       t->tp, t->stream);
}

static ncclResult_t reduce_gradients(struct trainer *t) {
  /* Buckets become ready in reverse layer order during backward; all ranks
   * see the same order because it is a property of the model. */
  NCCLCHECK(ncclGroupStart());
  for (int b = t->nbuckets - 1; b >= 0; b--) {
    ncclResult_t r = ncclAllReduce(t->buckets[b].grad, t->buckets[b].grad, t->buckets[b].count,
                                   ncclFloat, ncclAvg, t->dp, t->stream);
    if (r != ncclSuccess) {
      ncclGroupEnd();
      return r;
    }
    t->buckets[b].ready = 0;
  }
  NCCLCHECK(ncclGroupEnd());
  return ncclSuccess;
}

static ncclResult_t clip_gradients(struct trainer *t, float max_norm) {
  float *norm_dev = t->loss_dev;
  float norm = 0.0f;
  NCCLCHECK(ncclAllReduce(norm_dev, norm_dev, 1, ncclFloat, ncclSum, t->world, t->stream));
  CUDACHECK(cudaMemcpyAsync(&norm, norm_dev, sizeof norm, cudaMemcpyDeviceToHost, t->stream));
  CUDACHECK(cudaStreamSynchronize(t->stream));
  /* norm came out of an all-reduce: every rank holds the same value, so this
   * branch is taken by all ranks or by none. */
  if (norm > max_norm * max_norm) {
    NCCLCHECK(ncclBroadcast(norm_dev, norm_dev, 1, ncclFloat, 0, t->world, t->stream));
  }
  return ncclSuccess;
}

static ncclResult_t log_metrics(struct trainer *t) {
  if (t->step % t->log_every != 0)
    return ncclSuccess;
  /* Bug of the "rank skip" kind (gpu_tests/ case skip): only rank 0 reduces the loss, the
   * other ranks go on to the next collective. */
  if (t->world_rank == 0) {
    NCCLCHECK(ncclReduce(t->loss_dev, t->loss_dev, 1, ncclFloat, ncclSum, 0, t->dp, t->stream));
    CUDACHECK(cudaMemcpyAsync(&t->loss_host, t->loss_dev, sizeof(float), cudaMemcpyDeviceToHost,
                              t->stream));
    CUDACHECK(cudaStreamSynchronize(t->stream));
    printf("step %d loss %.4f\n", t->step, t->loss_host / (float)t->dp_size);
  }
  return ncclSuccess;
}

static ncclResult_t save_checkpoint(struct trainer *t) {
  char path[512];
  int ok = 1;
  if (t->ckpt_every <= 0 || t->step % t->ckpt_every != 0)
    return ncclSuccess;
  /* Rank 0 of each DP group writes; the others wait for its status via a
   * broadcast that every rank issues (root is the same everywhere). */
  if (t->dp_rank == 0) {
    snprintf(path, sizeof path, "%s/stage%d_tp%d_step%d.bin", t->ckpt_dir, t->stage, t->tp_rank,
             t->step);
    FILE *f = fopen(path, "wb");
    ok = f != NULL;
    for (int b = 0; ok && b < t->nbuckets; b++) {
      size_t bytes = t->buckets[b].count * sizeof(float);
      void *host = malloc(bytes);
      if (!host) {
        ok = 0;
        break;
      }
      CUDACHECK(cudaMemcpy(host, t->buckets[b].grad, bytes, cudaMemcpyDeviceToHost));
      ok = fwrite(host, 1, bytes, f) == bytes;
      free(host);
    }
    if (f && fclose(f) != 0)
      ok = 0;
  }
  int *ok_dev = (int *)t->loss_dev;
  CUDACHECK(cudaMemcpyAsync(ok_dev, &ok, sizeof ok, cudaMemcpyHostToDevice, t->stream));
  NCCLCHECK(ncclBroadcast(ok_dev, ok_dev, 1, ncclInt32, 0, t->dp, t->stream));
  CUDACHECK(cudaMemcpyAsync(&ok, ok_dev, sizeof ok, cudaMemcpyDeviceToHost, t->stream));
  CUDACHECK(cudaStreamSynchronize(t->stream));
  if (!ok) {
    fprintf(stderr, "rank %d: checkpoint at step %d failed\n", t->world_rank, t->step);
    return ncclSystemError;
  }
  return ncclSuccess;
}

static ncclResult_t evaluate(struct trainer *t) {
  /* Every rank computes a shard of the eval set; the root gathers. The loop
   * bound is the eval-set size, agreed by configuration. */
  int shards = env_int("EVAL_SHARDS", 4);
  for (int s = 0; s < shards; s++) {
    NCCLCHECK(ncclGather(t->loss_dev, t->act_in, 1, ncclFloat, 0, t->dp, t->stream));
  }
  switch (env_int("EVAL_MODE", 0)) {
  case 2:
    NCCLCHECK(ncclAllReduce(t->loss_dev, t->loss_dev, 1, ncclFloat, ncclMax, t->dp, t->stream));
    /* fall through */
  case 1:
    NCCLCHECK(ncclAllReduce(t->loss_dev, t->loss_dev, 1, ncclFloat, ncclSum, t->dp, t->stream));
    break;
  default:
    break;
  }
  return ncclSuccess;
}

static ncclResult_t train_step(struct trainer *t) {
  for (int micro = 0; micro < 4; micro++) {
    NCCLCHECK(pipeline_forward(t));
    for (int layer = 0; layer < 8; layer++)
      NCCLCHECK(tensor_parallel_matmul(t, layer));
  }
  for (int micro = 0; micro < 4; micro++)
    NCCLCHECK(pipeline_backward(t));
  NCCLCHECK(reduce_gradients(t));
  NCCLCHECK(clip_gradients(t, 1.0f));
  NCCLCHECK(log_metrics(t));
  return save_checkpoint(t);
}

static void teardown(struct trainer *t) {
  for (int b = 0; b < t->nbuckets; b++)
    cudaFree(t->buckets[b].grad);
  cudaFree(t->act_in);
  cudaFree(t->act_out);
  cudaFree(t->loss_dev);
  ncclCommDestroy(t->dp);
  ncclCommDestroy(t->tp);
  ncclCommDestroy(t->world);
  cudaStreamDestroy(t->stream);
}

int main(int argc, char **argv) {
  struct trainer t;
  ncclResult_t res;
  double t0;
  memset(&t, 0, sizeof t);
  MPICHECK(MPI_Init(&argc, &argv));
  t.max_steps = env_int("STEPS", 100);
  t.ckpt_every = env_int("CKPT_EVERY", 50);
  t.log_every = env_int("LOG_EVERY", 10);
  t.ckpt_dir = getenv("CKPT_DIR") ? getenv("CKPT_DIR") : "/tmp";
  if ((res = bootstrap(&t)) != ncclSuccess)
    goto fail;
  if ((res = alloc_model(&t)) != ncclSuccess)
    goto fail;
  t0 = now_s();
  for (t.step = 1; t.step <= t.max_steps; t.step++) {
    if ((res = train_step(&t)) != ncclSuccess)
      goto fail;
    if (t.step % 25 == 0 && (res = evaluate(&t)) != ncclSuccess)
      goto fail;
  }
  if (t.world_rank == 0)
    printf("%d steps in %.1f s\n", t.max_steps, now_s() - t0);
  teardown(&t);
  MPICHECK(MPI_Finalize());
  return 0;
fail:
  fprintf(stderr, "rank %d: %s\n", t.world_rank, ncclGetErrorString(res));
  if (t.world)
    ncclCommAbort(t.world);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}
