/* native_semantics.c — NCCL's native group/async semantics, variant by variant,
 * one MPI rank per GPU. Every variant is checked on every rank and written as one CSV
 * row; every NCCL call the program makes is also logged (api, group depth at entry as
 * the program tracks it, return code, host times) so a script can check that the
 * lockstep trace of the same run saw exactly these return codes and depths.
 * Usage: native_semantics OUTPREFIX   -> OUTPREFIX.rank<r>.csv, OUTPREFIX.calls.rank<r>.csv
 * Non-goal: performance; buffers are sized only to make "launched or not" visible. */
#include "gt_common.h"

#include <stdbool.h>

static FILE *rows_f, *calls_f;
static int depth;          /* this thread's NCCL group depth, as NCCL defines it */
static int call_idx;
static const char *variant = "setup";

/* Log one NCCL call. Depth bookkeeping mirrors group.cc: GroupStart increments,
 * GroupEnd at depth 0 fails without changing it, otherwise it always decrements
 * (also when it returns a stored error: the scope is closed and cleaned up). */
static ncclResult_t logged(const char *api, int depth_in, uint64_t t0, ncclResult_t rc,
                           long aux) {
  uint64_t t1 = gt_now_ns();
  if (strcmp(api, "ncclGroupStart") == 0 && rc == ncclSuccess) depth++;
  if (strcmp(api, "ncclGroupEnd") == 0 && depth > 0) depth--;
  fprintf(calls_f, "%s,%d,%d,%s,%d,%d,%s,%ld,%llu,%llu\n", variant, gt_rank, call_idx++, api,
          depth_in, (int)rc, gt_rc_name(rc), aux, (unsigned long long)t0,
          (unsigned long long)t1);
  fflush(calls_f);
  return rc;
}

#define LOG(api, expr)                                                                  \
  ({                                                                                    \
    int d_ = depth;                                                                     \
    uint64_t t_ = gt_now_ns();                                                          \
    ncclResult_t r_ = (expr);                                                           \
    logged(api, d_, t_, r_, -1);                                                        \
  })

/* The async-state query: its return value is the query's own result, its
 * out-parameter the communicator's state; both are logged (aux = state). */
static ncclResult_t query(ncclComm_t comm, ncclResult_t *state) {
  int d = depth;
  uint64_t t = gt_now_ns();
  ncclResult_t rc = ncclCommGetAsyncError(comm, state);
  return logged("ncclCommGetAsyncError", d, t, rc, (long)*state);
}

/* Poll a non-blocking communicator to a terminal state (1 ms apart;
 * bounded so a stuck communicator fails the variant instead of hanging). */
static ncclResult_t poll_terminal(ncclComm_t comm, int *polls, double *ms) {
  uint64_t t0 = gt_now_ns();
  ncclResult_t state = ncclInProgress;
  *polls = 0;
  while (state == ncclInProgress) {
    ncclResult_t rc = query(comm, &state);
    (*polls)++;
    if (rc != ncclSuccess) { state = rc; break; }
    if (state == ncclInProgress) {
      if (gt_now_ns() - t0 > 20000000000ull) break;
      gt_sleep_ms(1);
    }
  }
  *ms = (double)(gt_now_ns() - t0) / 1e6;
  return state;
}

static void row(const char *expected, const char *observed, int max_depth,
                const char *data, bool pass, const char *detail) {
  fprintf(rows_f, "%s,%d,%d,%s,%s,%d,%s,%s,\"%s\"\n", variant, gt_rank, gt_nranks, expected,
          observed, max_depth, data, pass ? "PASS" : "FAIL", detail);
  fflush(rows_f);
  printf("rank %d %-28s %s  expected=%s observed=%s depth=%d data=%s  %s\n", gt_rank, variant,
         pass ? "PASS" : "FAIL", expected, observed, max_depth, data, detail);
  fflush(stdout);
}

static void begin(const char *name) {
  variant = name;
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  if (argc != 2) {
    if (gt_rank == 0) fprintf(stderr, "usage: native_semantics OUTPREFIX\n");
    MPI_Finalize();
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.rank%d.csv", argv[1], gt_rank);
  rows_f = fopen(path, "w");
  snprintf(path, sizeof path, "%s.calls.rank%d.csv", argv[1], gt_rank);
  calls_f = fopen(path, "w");
  if (!rows_f || !calls_f) {
    fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fprintf(rows_f, "variant,rank,nranks,expected_rc,observed_rc,group_depth,data_check,result,detail\n");
  fprintf(calls_f, "variant,rank,idx,api,depth_at_entry,rc,rc_name,aux,t_enter_ns,t_exit_ns\n");

  const int32_t sum = gt_nranks * (gt_nranks + 1) / 2; /* rank r contributes r+1 */
  const size_t count = (size_t)16 << 20;               /* 64 MiB of int32 */
  int32_t *a, *b, *c;
  GT_CUDA(cudaMalloc((void **)&a, count * 4));
  GT_CUDA(cudaMalloc((void **)&b, count * 4));
  GT_CUDA(cudaMalloc((void **)&c, count * 4));
  cudaStream_t s, s2;
  GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  ncclUniqueId id = gt_unique_id();
  ncclComm_t comm;
  LOG("ncclCommInitRank", ncclCommInitRank(&comm, gt_nranks, id, gt_rank));
  char obs[256], det[512];

  /* 1. GroupEnd at depth 0 is a usage error, deterministically. */
  begin("group-end-without-start");
  {
    ncclResult_t rc = LOG("ncclGroupEnd", ncclGroupEnd());
    row("ncclInvalidUsage", gt_rc_name(rc), 0, "n/a", rc == ncclInvalidUsage && depth == 0,
        "GroupEnd entered at depth 0");
  }

  /* 2. Nested depth two: the inner End must not launch. Evidence: an event recorded
   * after the inner End (still inside the outer scope) is reached on the stream before
   * any collective runs, so e0->e1 is ~0 while e1->e2 holds all three all-reduces. */
  begin("nested-depth-two");
  {
    gt_fill_i32(a, count, gt_rank + 1);
    gt_fill_i32(b, count, gt_rank + 1);
    gt_fill_i32(c, count, gt_rank + 1);
    cudaEvent_t e0, e1, e2;
    GT_CUDA(cudaEventCreate(&e0));
    GT_CUDA(cudaEventCreate(&e1));
    GT_CUDA(cudaEventCreate(&e2));
    ncclResult_t r[7];
    int maxd = 0;
    GT_CUDA(cudaEventRecord(e0, s));
    r[0] = LOG("ncclGroupStart", ncclGroupStart());
    r[1] = LOG("ncclAllReduce", ncclAllReduce(a, a, count, ncclInt32, ncclSum, comm, s));
    r[2] = LOG("ncclGroupStart", ncclGroupStart());
    maxd = depth;
    r[3] = LOG("ncclAllReduce", ncclAllReduce(b, b, count, ncclInt32, ncclSum, comm, s));
    r[4] = LOG("ncclGroupEnd", ncclGroupEnd());
    GT_CUDA(cudaEventRecord(e1, s));
    r[5] = LOG("ncclAllReduce", ncclAllReduce(c, c, count, ncclInt32, ncclSum, comm, s));
    r[6] = LOG("ncclGroupEnd", ncclGroupEnd());
    GT_CUDA(cudaEventRecord(e2, s));
    GT_CUDA(cudaStreamSynchronize(s));
    float t01 = 0, t12 = 0;
    GT_CUDA(cudaEventElapsedTime(&t01, e0, e1));
    GT_CUDA(cudaEventElapsedTime(&t12, e1, e2));
    size_t bad = gt_count_bad_i32(a, count, sum) + gt_count_bad_i32(b, count, sum) +
                 gt_count_bad_i32(c, count, sum);
    bool rcs_ok = true;
    for (int i = 0; i < 7; i++) rcs_ok &= r[i] == ncclSuccess;
    bool outer_only = t01 * 10.0f < t12;
    snprintf(obs, sizeof obs, "%s", rcs_ok ? "ncclSuccess" : "error");
    snprintf(det, sizeof det,
             "7 calls; e0->e1 (through inner End) %.3f ms; e1->e2 (outer End) %.3f ms; "
             "launch only at outer End: %s; bad elements %zu",
             t01, t12, outer_only ? "yes" : "NO", bad);
    row("ncclSuccess", obs, maxd, bad == 0 ? "PASS" : "FAIL",
        rcs_ok && outer_only && bad == 0 && depth == 0, det);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
  }

  /* 3. Two user streams in one group: both tasks run and are correct. */
  begin("two-user-streams");
  {
    gt_fill_i32(a, count, gt_rank + 1);
    gt_fill_i32(b, count, gt_rank + 1);
    ncclResult_t r0 = LOG("ncclGroupStart", ncclGroupStart());
    ncclResult_t r1 = LOG("ncclAllReduce", ncclAllReduce(a, a, count, ncclInt32, ncclSum, comm, s));
    ncclResult_t r2 = LOG("ncclAllReduce", ncclAllReduce(b, b, count, ncclInt32, ncclSum, comm, s2));
    ncclResult_t r3 = LOG("ncclGroupEnd", ncclGroupEnd());
    GT_CUDA(cudaStreamSynchronize(s));
    GT_CUDA(cudaStreamSynchronize(s2));
    size_t bad_a = gt_count_bad_i32(a, count, sum), bad_b = gt_count_bad_i32(b, count, sum);
    bool ok = !r0 && !r1 && !r2 && !r3;
    snprintf(det, sizeof det, "stream1 bad %zu, stream2 bad %zu", bad_a, bad_b);
    row("ncclSuccess", ok ? "ncclSuccess" : "error", 1, bad_a + bad_b == 0 ? "PASS" : "FAIL",
        ok && bad_a + bad_b == 0, det);
  }

  /* 4. The async query after a success: query ok, state ok. */
  begin("async-error-after-success");
  {
    ncclResult_t state = ncclInProgress;
    ncclResult_t rc = query(comm, &state);
    snprintf(obs, sizeof obs, "%s/%s", gt_rc_name(rc), gt_rc_name(state));
    row("ncclSuccess/ncclSuccess", obs, 0, "n/a", rc == ncclSuccess && state == ncclSuccess,
        "return value / async state of ncclCommGetAsyncError");
  }

  /* 5. Invalid root inside a group: the API returns the error, the outer End is still
   * called, cleans up and returns the stored error. */
  begin("invalid-root-group-cleanup");
  {
    ncclResult_t r0 = LOG("ncclGroupStart", ncclGroupStart());
    ncclResult_t r1 =
        LOG("ncclBroadcast", ncclBroadcast(a, a, count, ncclInt32, gt_nranks, comm, s));
    ncclResult_t r2 = LOG("ncclGroupEnd", ncclGroupEnd());
    snprintf(obs, sizeof obs, "%s/%s", gt_rc_name(r1), gt_rc_name(r2));
    snprintf(det, sizeof det, "root=%d (= nranks); depth after End %d", gt_nranks, depth);
    row("ncclInvalidArgument/ncclInvalidArgument", obs, 1, "n/a",
        r0 == ncclSuccess && r1 == ncclInvalidArgument && r2 == ncclInvalidArgument && depth == 0,
        det);
  }

  /* 6. The blocking communicator still works after that balanced cleanup. */
  begin("valid-op-after-group-error");
  {
    gt_fill_i32(a, count, gt_rank + 1);
    ncclResult_t rc = LOG("ncclAllReduce", ncclAllReduce(a, a, count, ncclInt32, ncclSum, comm, s));
    GT_CUDA(cudaStreamSynchronize(s));
    size_t bad = gt_count_bad_i32(a, count, sum);
    snprintf(det, sizeof det, "bad elements %zu", bad);
    row("ncclSuccess", gt_rc_name(rc), 0, bad == 0 ? "PASS" : "FAIL", rc == ncclSuccess && bad == 0,
        det);
  }

  /* 7-9. A non-blocking communicator: init, one grouped collective, finalize; each
   * may return ncclInProgress and is polled to its terminal state. */
  ncclComm_t nb = NULL;
  begin("nonblocking-init-poll");
  {
    ncclUniqueId id2 = gt_unique_id();
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r0 =
        LOG("ncclCommInitRankConfig", ncclCommInitRankConfig(&nb, gt_nranks, id2, gt_rank, &cfg));
    int polls = 0;
    double ms = 0;
    ncclResult_t term = (r0 == ncclSuccess || r0 == ncclInProgress) ? poll_terminal(nb, &polls, &ms) : r0;
    snprintf(obs, sizeof obs, "%s->%s", gt_rc_name(r0), gt_rc_name(term));
    snprintf(det, sizeof det, "initial %s; %d polls; %.3f ms to terminal", gt_rc_name(r0), polls, ms);
    row("ncclInProgress->ncclSuccess", obs, 0, "n/a",
        (r0 == ncclInProgress || r0 == ncclSuccess) && term == ncclSuccess, det);
  }
  begin("nonblocking-group-poll");
  {
    gt_fill_i32(a, count, gt_rank + 1);
    ncclResult_t r0 = LOG("ncclGroupStart", ncclGroupStart());
    ncclResult_t r1 = LOG("ncclAllReduce", ncclAllReduce(a, a, count, ncclInt32, ncclSum, nb, s));
    ncclResult_t r2 = LOG("ncclGroupEnd", ncclGroupEnd());
    int polls = 0;
    double ms = 0;
    ncclResult_t term = poll_terminal(nb, &polls, &ms);
    GT_CUDA(cudaStreamSynchronize(s));
    size_t bad = gt_count_bad_i32(a, count, sum);
    snprintf(obs, sizeof obs, "%s->%s", gt_rc_name(r2), gt_rc_name(term));
    snprintf(det, sizeof det, "AllReduce %s; GroupEnd %s; %d polls; %.3f ms; bad elements %zu",
             gt_rc_name(r1), gt_rc_name(r2), polls, ms, bad);
    row("ncclSuccess|ncclInProgress->ncclSuccess", obs, 1, bad == 0 ? "PASS" : "FAIL",
        r0 == ncclSuccess && (r1 == ncclSuccess || r1 == ncclInProgress) &&
            (r2 == ncclSuccess || r2 == ncclInProgress) && term == ncclSuccess && bad == 0,
        det);
  }
  begin("nonblocking-finalize-poll");
  {
    ncclResult_t r0 = LOG("ncclCommFinalize", ncclCommFinalize(nb));
    int polls = 0;
    double ms = 0;
    ncclResult_t term = (r0 == ncclSuccess || r0 == ncclInProgress) ? poll_terminal(nb, &polls, &ms) : r0;
    ncclResult_t r1 = LOG("ncclCommDestroy", ncclCommDestroy(nb));
    snprintf(obs, sizeof obs, "%s->%s", gt_rc_name(r0), gt_rc_name(term));
    snprintf(det, sizeof det, "initial %s; %d polls; %.3f ms to terminal; destroy %s",
             gt_rc_name(r0), polls, ms, gt_rc_name(r1));
    row("ncclInProgress->ncclSuccess", obs, 0, "n/a",
        (r0 == ncclInProgress || r0 == ncclSuccess) && term == ncclSuccess && r1 == ncclSuccess, det);
  }

  variant = "teardown";
  MPI_Barrier(MPI_COMM_WORLD);
  LOG("ncclCommDestroy", ncclCommDestroy(comm));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  fclose(rows_f);
  fclose(calls_f);
  MPI_Finalize();
  return 0;
}
