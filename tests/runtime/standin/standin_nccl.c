/* standin_nccl.c — a TEST DOUBLE of libnccl.so.2 for CPU-only tests (same SONAME).
 * It mimics only what the recorder must pass through untouched: return codes,
 * NCCL's thread-local group depth (depth 0 GroupEnd -> ncclInvalidUsage; an argument
 * error inside a group is stored and returned again by the outermost GroupEnd),
 * non-blocking communicators (ncclInProgress, then ncclSuccess via
 * ncclCommGetAsyncError after LS_STANDIN_POLLS polls; LS_STANDIN_ASYNC_END=N makes
 * that terminal state N instead, e.g. 6 = ncclRemoteError; a collective issued while
 * its communicator is still in progress is dropped with ncclInvalidArgument, as
 * NCCL's ncclCommEnsureReady answers it; a split's rank and size read 0 until its
 * background job ended, as in NCCL; inside a group the creation returns ncclSuccess
 * and the outermost ncclGroupEnd ncclInProgress). It moves no data and knows
 * nothing about other ranks: a split keeps the parent's rank and size. The real
 * evidence for NCCL comes from gpu_tests/ on real GPUs.
 * Knobs for the stress tests (tests/runtime/stress_nccl.c), all off by default:
 *   LS_STANDIN_FAIL_MOD=M, LS_STANDIN_FAIL_RC=R  a collective or send/recv whose count
 *       is M-1 modulo M fails with R (stored in a group like any error)
 *   LS_STANDIN_DELAY_US=U  each collective or send/recv spends U us "in NCCL"
 *   LS_STANDIN_SPLIT_IN_PROGRESS=1  a split of a non-blocking parent (outside a group)
 *       returns ncclInProgress with the child in *newcomm, in progress itself (what
 *       nccl.h allows any non-blocking call to do). Without it the split behaves as
 *       NCCL 2.28.3's (gpu_tests/src/split_probe.c): ncclSuccess with *newcomm NULL,
 *       the parent in progress, the ready child stored in *newcomm by the poll of the
 *       parent that ends it
 *   LS_STANDIN_ABORT_ERRORS=1  a call on an aborted communicator returns
 *       ncclInvalidArgument (NCCL's check of a freed handle), ncclRemoteError when
 *       the abort came while the call was in flight
 * and lsStandinRcHash(): a per-thread hash of every result the collectives, send/recv
 * and group calls returned, so a program can prove it saw exactly those. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_abi.h"

#define EXPORT __attribute__((visibility("default")))

struct ncclComm {
  int rank, nranks, blocking;
  ncclResult_t async;
  int polls_left;
  int aborted;
  int split;   /* made by a split: NCCL learns rank and size in the background job */
  struct ncclComm *child, **child_out; /* a split of this non-blocking comm, handed out later */
};

static __thread int depth;
static __thread ncclResult_t group_error;
static __thread unsigned long long rc_hash;
static int abort_count;

static long env_long(const char *name) {
  const char *v = getenv(name);
  return v ? atol(v) : 0;
}

/* Results as returned, hashed in order (lsStandinRcHash). */
static ncclResult_t ret(ncclResult_t r) {
  rc_hash = rc_hash * 1000003ull + (unsigned long long)r + 1u;
  return r;
}

static int polls(void) {
  const char *p = getenv("LS_STANDIN_POLLS");
  return p ? atoi(p) : 3;
}

/* The state a non-blocking init/finalize ends in (LS_STANDIN_ASYNC_END, default success). */
static ncclResult_t async_end(void) {
  const char *p = getenv("LS_STANDIN_ASYNC_END");
  return p && *p ? (ncclResult_t)atoi(p) : ncclSuccess;
}

/* NCCL's ncclGroupStartInternal / ncclGroupErrCheck / ncclGroupEndInternal. */
static void start_internal(void) { depth++; }
static ncclResult_t err_check(ncclResult_t r) {
  if (depth > 0 && r != ncclSuccess && r != ncclInProgress)
    group_error = r;
  return r;
}
/* Non-blocking communicators created inside the thread's group: NCCL starts their
 * creation at the outermost end, which then returns ncclInProgress. */
static __thread struct ncclComm *group_created[16];
static __thread int ngroup_created;

static ncclResult_t end_internal(void) {
  if (depth == 0)
    return ncclInvalidUsage;
  if (--depth > 0)
    return ncclSuccess;
  ncclResult_t r = group_error;
  group_error = ncclSuccess; /* cleanup of the whole group */
  if (r == ncclSuccess && ngroup_created) {
    for (int i = 0; i < ngroup_created; i++) {
      group_created[i]->async = ncclInProgress;
      group_created[i]->polls_left = polls();
    }
    r = ncclInProgress;
  }
  ngroup_created = 0;
  return r;
}

static int aborted(ncclComm_t comm) {
  return env_long("LS_STANDIN_ABORT_ERRORS") == 1 && __atomic_load_n(&comm->aborted, __ATOMIC_ACQUIRE);
}

static ncclResult_t enqueue(ncclComm_t comm, size_t count, long dtype, long redop, long root,
                            long nr_check) {
  ncclResult_t res = ncclSuccess, r;
  start_internal();
  long mod = env_long("LS_STANDIN_FAIL_MOD"), delay = env_long("LS_STANDIN_DELAY_US");
  if (!comm)
    res = ncclInvalidArgument;
  else if (aborted(comm))
    res = ncclInvalidArgument;
  else if (dtype < 0 || dtype >= 12)
    res = ncclInvalidArgument;
  else if (redop != -1 && (redop < 0 || redop >= 5))
    res = ncclInvalidArgument;
  else if (nr_check && (root < 0 || root >= comm->nranks))
    res = ncclInvalidArgument;
  else if (!comm->blocking && comm->async == ncclInProgress)
    res = ncclInvalidArgument; /* ncclCommEnsureReady: not enqueued */
  else if (mod > 0 && count % (size_t)mod == (size_t)mod - 1)
    res = (ncclResult_t)env_long("LS_STANDIN_FAIL_RC");
  if (res == ncclSuccess && delay > 0) {
    usleep((useconds_t)delay);
    if (aborted(comm))
      res = ncclRemoteError;
  }
  err_check(res);
  if ((r = end_internal()) != ncclSuccess)
    return ret(r);
  /* NCCL: a non-blocking communicator answers with its async state */
  if (res == ncclSuccess && !comm->blocking)
    return ret(comm->async);
  return ret(res);
}

EXPORT int lsStandinAbortCount(void);
EXPORT int lsStandinAbortCount(void) { return __atomic_load_n(&abort_count, __ATOMIC_ACQUIRE); }
EXPORT unsigned long long lsStandinRcHash(void);
EXPORT unsigned long long lsStandinRcHash(void) { return rc_hash; }

#define COLL(name, params, check)                                                                  \
  EXPORT ncclResult_t name params;                                                                 \
  EXPORT ncclResult_t name params { return check; }

COLL(ncclAllReduce, (const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, op, 0, 0))
COLL(ncclBroadcast, (const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, root, 1))
COLL(ncclBcast, (void *b, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, root, 1))
COLL(ncclReduce, (const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, int root, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, op, root, 1))
COLL(ncclAllGather, (const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, 0, 0))
COLL(ncclReduceScatter, (const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, op, 0, 0))
COLL(ncclAlltoAll, (const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, 0, 0))
COLL(ncclGather, (const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, root, 1))
COLL(ncclScatter, (const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, root, 1))
COLL(ncclSend, (const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, peer, 1))
COLL(ncclRecv, (void *r, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st),
     enqueue(c, n, t, -1, peer, 1))

EXPORT ncclResult_t ncclGroupStart(void);
EXPORT ncclResult_t ncclGroupStart(void) {
  start_internal();
  return ret(ncclSuccess);
}
EXPORT ncclResult_t ncclGroupEnd(void);
EXPORT ncclResult_t ncclGroupEnd(void) { return ret(end_internal()); }
EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *sim);
EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *sim) { return end_internal(); }

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id)
    return ncclInvalidArgument;
  memset(id, 0, sizeof *id);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long v[3] = {(long)getpid(), (long)ts.tv_sec, ts.tv_nsec};
  memcpy(id->internal, v, sizeof v);
  return ncclSuccess;
}

static ncclResult_t make_comm(ncclComm_t *out, int nranks, int rank, const ncclConfig_t *cfg) {
  if (!out)
    return ncclInvalidArgument;
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  struct ncclComm *c = calloc(1, sizeof *c); /* never freed: handles stay valid in tests */
  c->rank = rank;
  c->nranks = nranks;
  c->blocking = !(cfg && cfg->blocking == 0);
  *out = c;
  if (!c->blocking && depth > 0 && ngroup_created < 16) {
    group_created[ngroup_created++] = c; /* in progress once the group ends */
    return ncclSuccess;
  }
  if (!c->blocking) {
    c->async = ncclInProgress;
    c->polls_left = polls();
    return ncclInProgress;
  }
  return ncclSuccess;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  return make_comm(comm, nranks, rank, NULL);
}
EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t *config);
EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t *config) {
  return make_comm(comm, nranks, rank, config);
}
EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int myrank, int nId,
                                             ncclUniqueId *ids, ncclConfig_t *config);
EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int myrank, int nId,
                                             ncclUniqueId *ids, ncclConfig_t *config) {
  if (nId < 1 || !ids)
    return ncclInvalidArgument;
  return make_comm(comm, nranks, myrank, config);
}
EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  if (!comms || ndev < 1)
    return ncclInvalidArgument;
  for (int i = 0; i < ndev; i++)
    make_comm(&comms[i], ndev, i, NULL);
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                  ncclConfig_t *config);
EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                  ncclConfig_t *config) {
  if (!comm || !newcomm)
    return ncclInvalidArgument;
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = NULL;
    return ncclSuccess;
  }
  ncclConfig_t nb = {sizeof(ncclConfig_t), 0xcafebeef, 0, 0};
  if (!comm->blocking && depth == 0 && env_long("LS_STANDIN_SPLIT_IN_PROGRESS") != 1) {
    /* NCCL 2.28.3 (gpu_tests/src/split_probe.c): a split of a non-blocking parent returns
     * ncclSuccess with *newcomm still NULL; the parent is in progress, and the child,
     * already ready, appears when a poll of the parent sees the job end. */
    ncclComm_t child = NULL;
    make_comm(&child, comm->nranks, comm->rank, !config ? &nb : config);
    child->split = 1;
    child->async = ncclSuccess;
    comm->child = child;
    comm->child_out = newcomm;
    *newcomm = NULL;
    comm->async = ncclInProgress;
    comm->polls_left = polls();
    return ncclSuccess;
  }
  /* nccl.h: a NULL config inherits the parent's */
  ncclResult_t r = make_comm(newcomm, comm->nranks, comm->rank, !config && !comm->blocking ? &nb : config);
  if (*newcomm)
    (*newcomm)->split = 1;
  return r;
}
EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excl, int nexcl, ncclComm_t *newcomm,
                                   ncclConfig_t *config, int flags);
EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excl, int nexcl, ncclComm_t *newcomm,
                                   ncclConfig_t *config, int flags) {
  if (!comm || !newcomm || nexcl < 0 || nexcl >= comm->nranks)
    return ncclInvalidArgument;
  int rank = comm->rank, below = 0;
  for (int i = 0; i < nexcl; i++) {
    if (excl[i] == rank) {
      *newcomm = NULL;
      return ncclSuccess;
    }
    below += excl[i] < rank;
  }
  return make_comm(newcomm, comm->nranks - nexcl, rank - below, config);
}
EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm);
EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (!comm)
    return ncclInvalidArgument;
  if (!comm->blocking) {
    comm->async = ncclInProgress;
    comm->polls_left = polls();
    return ncclInProgress;
  }
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm);
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }
EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm);
EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm)
    return ncclInvalidArgument;
  __atomic_store_n(&comm->aborted, 1, __ATOMIC_RELEASE); /* from the watchdog thread too */
  __atomic_fetch_add(&abort_count, 1, __ATOMIC_ACQ_REL);
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags);
EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags) {
  return comm && flags == 0 ? ncclSuccess : ncclInvalidArgument;
}
EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state);
EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state) {
  if (!comm || !state)
    return ncclInvalidArgument;
  if (comm->async == ncclInProgress && --comm->polls_left <= 0) {
    comm->async = comm->child_out ? ncclSuccess : async_end();
    if (comm->child_out) { /* the split's job ended: NCCL stores the child now */
      *comm->child_out = comm->child;
      comm->child_out = NULL;
    }
  }
  *state = __atomic_load_n(&comm->aborted, __ATOMIC_ACQUIRE) ? ncclRemoteError : comm->async;
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!comm || !count)
    return ncclInvalidArgument;
  *count = comm->split && comm->async == ncclInProgress ? 0 : comm->nranks; /* not known yet */
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm || !rank)
    return ncclInvalidArgument;
  *rank = comm->split && comm->async == ncclInProgress ? 0 : comm->rank;
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *dev);
EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *dev) {
  if (!comm || !dev)
    return ncclInvalidArgument;
  *dev = 0;
  return ncclSuccess;
}
