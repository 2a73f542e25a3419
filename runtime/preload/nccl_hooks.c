/* nccl_hooks.c — what the NCCL wrappers do besides the generic record: derive each
 * communicator's identity (equal on every rank), register new communicators, note
 * async states, and give the watchdog a way to abort a communicator.
 *
 * Identities: init from the ncclUniqueId bytes (all ids for InitRankScalable);
 * ncclCommSplit from (parent id, color, ordinal of the split on the parent) — the key
 * differs per rank so it is recorded but kept out of the identity; ncclCommShrink from
 * (parent id, ordinal, excluded ranks); ncclCommInitAll from (pid, ordinal of the call)
 * since all its communicators live in this one process.
 *
 * Non-blocking communicators: the init/split record carries LS_REC_COMM_NONBLOCKING,
 * and a call that returns ncclInProgress makes the communicator's next queried state
 * news, so the poll that sees it end is recorded (compare's `not-ready` needs it). */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_abi.h"
#include "nccl_hooks.h"

#define NCCL_SONAME "libnccl.so.2"

static void *volatile real_rank, *volatile real_count, *volatile real_abort, *volatile real_async;

static void nccl_rank_query(const void *handle, int *rank, int *size) {
  /* A non-blocking split learns its rank and size in its background job: until the
   * state leaves ncclInProgress the fields read 0 (or half-written), never trust them. */
  ncclResult_t (*ae)(ncclComm_t, ncclResult_t *) = (ncclResult_t(*)(ncclComm_t, ncclResult_t *))ls_real_lookup(
      &real_async, "ncclCommGetAsyncError", NCCL_SONAME);
  ncclResult_t st = ncclSuccess;
  if (ae && ae((ncclComm_t)handle, &st) == ncclSuccess && st == ncclInProgress)
    return;
  ncclResult_t (*ur)(ncclComm_t, int *) =
      (ncclResult_t(*)(ncclComm_t, int *))ls_real_lookup(&real_rank, "ncclCommUserRank", NCCL_SONAME);
  ncclResult_t (*cnt)(ncclComm_t, int *) =
      (ncclResult_t(*)(ncclComm_t, int *))ls_real_lookup(&real_count, "ncclCommCount", NCCL_SONAME);
  int r = -1, s = -1;
  if (ur && cnt && ur((ncclComm_t)handle, &r) == ncclSuccess &&
      cnt((ncclComm_t)handle, &s) == ncclSuccess && r >= 0 && s > 0) {
    *rank = r;
    *size = s;
  }
}

static int nccl_abort(const void *handle) {
  ncclResult_t (*ab)(ncclComm_t) =
      (ncclResult_t(*)(ncclComm_t))ls_real_lookup(&real_abort, "ncclCommAbort", NCCL_SONAME);
  return ab ? (int)ab((ncclComm_t)handle) : -1;
}

__attribute__((constructor)) static void ls_nccl_hooks_init(void) {
  ls_set_abort_hook(LS_FAMILY_NCCL, nccl_abort);
  ls_set_rank_query_hook(LS_FAMILY_NCCL, nccl_rank_query);
}

static uint64_t g_initall_ordinal; /* atomic */

/* Splits of a non-blocking parent that returned ncclSuccess with the child still NULL (NCCL
 * 2.28.3, gpu_tests/src/split_probe.c): NCCL stores the child in the caller's out-parameter
 * when the parent's job ends, which the program sees by polling the parent. The poll that
 * sees the parent leave ncclInProgress registers the child under the identity the split
 * would have given it, so its calls align across ranks. A program that lets the
 * out-parameter go out of scope before polling reads back whatever is there: a wrong
 * handle is only ever looked up, never used. */
struct late_child {
  struct ls_comm *parent;
  void *out;
  uint64_t id;
  int nb;
};
enum { LATE_MAX = 16 };
static struct late_child g_late[LATE_MAX];
static int g_nlate; /* atomic: read without the lock on every query */
static pthread_mutex_t g_late_lock = PTHREAD_MUTEX_INITIALIZER;

static void late_add(struct ls_comm *parent, void *out, uint64_t id, int nb) {
  pthread_mutex_lock(&g_late_lock);
  int n = __atomic_load_n(&g_nlate, __ATOMIC_RELAXED);
  if (n < LATE_MAX) { /* beyond: the child is adopted at its first call, as before */
    g_late[n] = (struct late_child){parent, out, id, nb};
    __atomic_store_n(&g_nlate, n + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_late_lock);
}

/* The parent's state left ncclInProgress: its splits' children exist now (or never will). */
static void late_hand_out(struct ls_comm *parent) {
  if (!parent || !__atomic_load_n(&g_nlate, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock(&g_late_lock);
  int n = __atomic_load_n(&g_nlate, __ATOMIC_RELAXED), k = 0;
  for (int i = 0; i < n; i++) {
    struct late_child *e = &g_late[i];
    if (e->parent != parent) {
      g_late[k++] = *e;
      continue;
    }
    ncclComm_t h = *(ncclComm_t *)e->out;
    if (h && !ls_comm_lookup(h)) {
      struct ls_comm *cm = ls_comm_register(LS_FAMILY_NCCL, h, e->id, -1, -1);
      ls_comm_set_nonblocking(cm, e->nb);
    }
  }
  __atomic_store_n(&g_nlate, k, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_late_lock);
}

/* Queries (async error, rank, size) are polled in loops by frameworks (PyTorch's
 * watchdog calls ncclCommGetAsyncError continuously): recording every one would fill
 * the trace with nothing. They never hang, so they are recorded after the fact and
 * only when they say something: an error, or an async state other than success.
 * LOCKSTEP_RECORD_QUERIES=1 records them all. */
static int is_query(const struct ls_call *c) {
  return c->kind == LS_KIND_ASYNC_ERROR_QUERY || c->kind == LS_KIND_RANK_QUERY ||
         c->kind == LS_KIND_SIZE_QUERY;
}

/* Collectives, p2p calls and group brackets: nothing but the generic record (the
 * calls a training loop makes, kept to a tail call). */
static int is_plain(const struct ls_call *c) {
  return c->kind == LS_KIND_COLLECTIVE || c->kind == LS_KIND_P2P || c->kind == LS_KIND_GROUP_START ||
         c->kind == LS_KIND_GROUP_END;
}

/* Every other kind, out of line: the plain calls' path then saves no registers. */
static __attribute__((noinline)) void pre_other(struct ls_call *c) {
  if (is_query(c) && !ls_record_queries()) {
    c->h0 = 1; /* deferred: see ls_nccl_post */
    return;
  }
  switch (c->kind) {
  case LS_KIND_COMM_SPLIT: {
    struct ls_comm *parent = ls_comm_lookup(c->args.comm);
    /* ls_call_enter would adopt an unknown parent; do it here to number the split. */
    c->comm = parent;
    c->aux0 = ls_comm_id(parent);
    if (c->sub == LS_SUB_SHRINK)
      c->aux1 = (uint64_t)c->args.exclude_count;
    else
      c->aux1 = (uint64_t)(uint32_t)c->args.color | ((uint64_t)(uint32_t)c->args.key << 32);
    c->h0 = ls_comm_next_split(parent);
    break;
  }
  default:
    break;
  }
  ls_call_enter(c);
  if (c->kind == LS_KIND_COMM_SPLIT && c->rec) {
    /* The record describes the new communicator (filled in post); the parent is aux0. */
    c->rec->comm_id = 0;
    c->rec->comm_rank = c->rec->comm_size = -1;
  }
}

/* NCCL's default when a config leaves blocking undefined: NCCL_COMM_BLOCKING, else 1. */
static int env_nonblocking(void) {
  const char *v = getenv("NCCL_COMM_BLOCKING");
  return v && !strcmp(v, "0");
}

/* Whether a config makes the new communicator non-blocking; `dflt` when the config
 * is absent or leaves the field undefined (NCCL_CONFIG_UNDEF_INT). Only the leading,
 * ABI-stable fields are read, and only when the caller's struct is large enough. */
static int config_nonblocking(const void *config, int dflt) {
  const ncclConfig_t *cfg = config;
  if (!cfg || cfg->size < offsetof(ncclConfig_t, blocking) + sizeof(int) || cfg->blocking == INT_MIN)
    return dflt;
  return cfg->blocking == 0;
}

static void note_nonblocking(struct ls_call *c, struct ls_comm *cm, int nb) {
  ls_comm_set_nonblocking(cm, nb);
  if (nb && c->rec)
    __atomic_fetch_or(&c->rec->flags, (uint16_t)LS_REC_COMM_NONBLOCKING, __ATOMIC_RELEASE);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static void note_new(struct ls_call *c, struct ls_comm *cm) {
  if (c->rec && cm)
    c->rec->comm_id = ls_comm_id(cm);
}

static __attribute__((noinline)) void post_other(struct ls_call *c, int64_t rc) {
  if (c->kind == LS_KIND_ASYNC_ERROR_QUERY && rc == ncclSuccess && c->args.out_async_state &&
      *(ncclResult_t *)c->args.out_async_state != ncclInProgress)
    late_hand_out(c->comm ? c->comm : c->args.comm ? ls_comm_lookup(c->args.comm) : NULL);
  if (is_query(c) && c->h0 == 1) {
    int say = rc != ncclSuccess;
    if (!say && c->kind == LS_KIND_ASYNC_ERROR_QUERY && c->args.out_async_state) {
      ncclResult_t st = *(ncclResult_t *)c->args.out_async_state;
      /* news first: it must see every successful query to stay current */
      int news = ls_comm_async_news(ls_comm_lookup(c->args.comm), (int32_t)st);
      say = news || (st != ncclSuccess && st != ncclInProgress);
    }
    if (!say) {
      ls_call_exit(c, rc); /* no record: only releases the guard */
      return;
    }
    ls_call_enter(c);
  }
  int created = rc == ncclSuccess || rc == ncclInProgress;
  switch (c->kind) {
  case LS_KIND_COMM_INIT: {
    ncclComm_t h = created && c->args.out_comm ? *(ncclComm_t *)c->args.out_comm : NULL;
    if (!h)
      break;
    if (c->sub == LS_SUB_INIT_ALL) {
      uint64_t ord = __atomic_fetch_add(&g_initall_ordinal, 1, __ATOMIC_RELAXED);
      uint64_t id = ls_hash_u64(ls_hash_u64((uint64_t)getpid(), ord), 0x696e6974616c6cull);
      int n = (int)c->args.nranks;
      ncclComm_t *arr = (ncclComm_t *)c->args.out_comm;
      for (int i = 0; i < n; i++)
        ls_comm_register(LS_FAMILY_NCCL, arr[i], id, i, n);
      if (c->rec) {
        c->rec->comm_id = id;
        c->rec->comm_size = n;
      }
    } else {
      uint64_t id;
      if (c->sub == LS_SUB_SCALABLE)
        id = ls_hash_bytes(0x5343414cull, c->args.unique_id,
                           (uint64_t)(c->args.nid > 0 ? c->args.nid : 1) * NCCL_UNIQUE_ID_BYTES);
      else
        id = ls_hash_bytes(0x494e4954ull, c->args.unique_id, NCCL_UNIQUE_ID_BYTES);
      struct ls_comm *cm =
          ls_comm_register(LS_FAMILY_NCCL, h, id, (int)c->args.rank, (int)c->args.nranks);
      note_nonblocking(c, cm, config_nonblocking(c->args.config, env_nonblocking()));
      if (rc == ncclInProgress)
        ls_comm_async_pending(cm);
      if (c->rec && cm) {
        c->rec->comm_id = id;
        c->rec->comm_rank = (int32_t)c->args.rank;
        c->rec->comm_size = (int32_t)c->args.nranks;
      }
    }
    ls_modules_refresh();
    break;
  }
  case LS_KIND_COMM_SPLIT: {
    ncclComm_t h = created && c->args.out_comm ? *(ncclComm_t *)c->args.out_comm : NULL;
    /* NCCL 2.28.3: a split of a non-blocking parent returns ncclSuccess with the child
     * still NULL and the parent in progress until its job ends (split_probe.c): the
     * parent's next queried state is news, so the poll that hands the child out is
     * recorded (compare's `not-ready` for a call on the NULL child needs it). */
    int late = !h && rc == ncclSuccess && ls_comm_nonblocking(c->comm) && c->args.out_comm &&
               (c->sub == LS_SUB_SHRINK || c->args.color != NCCL_SPLIT_NOCOLOR);
    if (!h && !late)
      break; /* NCCL_SPLIT_NOCOLOR, or an error */
    uint64_t parent = c->aux0, id;
    if (c->sub == LS_SUB_SHRINK) {
      int n = (int)c->args.exclude_count, buf[256];
      id = ls_hash_u64(ls_hash_u64(parent, c->h0), 0x5348524bull);
      if (n > 0 && c->args.exclude_ranks) {
        if (n <= 256) { /* every rank passes the same set, maybe not in the same order */
          memcpy(buf, c->args.exclude_ranks, (size_t)n * sizeof(int));
          qsort(buf, (size_t)n, sizeof(int), cmp_int);
          id = ls_hash_bytes(id, buf, (uint64_t)n * sizeof(int));
        } else {
          id = ls_hash_bytes(id, c->args.exclude_ranks, (uint64_t)n * sizeof(int));
        }
      }
    } else {
      id = ls_hash_u64(ls_hash_u64(ls_hash_u64(parent, (uint64_t)(uint32_t)c->args.color), c->h0),
                       0x53504c54ull);
    }
    /* NCCL: a split without a config inherits the parent's */
    int nb = config_nonblocking(c->args.config,
                                c->args.config ? env_nonblocking() : ls_comm_nonblocking(c->comm));
    if (late) {
      late_add(c->comm, c->args.out_comm, id, nb);
      ls_comm_async_pending(c->comm);
      break;
    }
    int r = -1, s = -1;
    if (rc == ncclSuccess)
      nccl_rank_query(h, &r, &s);
    struct ls_comm *cm = ls_comm_register(LS_FAMILY_NCCL, h, id, r, s);
    note_new(c, cm);
    note_nonblocking(c, cm, nb);
    if (rc == ncclInProgress)
      ls_comm_async_pending(cm);
    if (c->rec) {
      c->rec->comm_rank = r;
      c->rec->comm_size = s;
    }
    ls_modules_refresh();
    break;
  }
  case LS_KIND_COMM_DESTROY:
  case LS_KIND_COMM_ABORT:
    if (rc == ncclSuccess || c->kind == LS_KIND_COMM_ABORT)
      ls_comm_mark_dead(c->comm);
    break;
  case LS_KIND_ASYNC_ERROR_QUERY:
    if (rc == ncclSuccess && c->args.out_async_state) {
      ncclResult_t st = *(ncclResult_t *)c->args.out_async_state;
      if (c->rec)
        c->rec->aux0 = (uint64_t)(int64_t)st;
      if (c->h0 != 1) /* recorded unfiltered: keep the filter's state current anyway */
        ls_comm_async_news(c->comm, (int32_t)st);
    }
    break;
  default:
    /* A finalize, a collective or a group end on a non-blocking communicator that
     * returned "in progress": the next queried state is news. */
    if (rc == ncclInProgress)
      ls_comm_async_pending(c->comm);
    break;
  }
  ls_call_exit(c, rc);
}

void ls_nccl_pre(struct ls_call *c) {
  if (is_plain(c))
    ls_call_enter(c);
  else
    pre_other(c);
}

void ls_nccl_post(struct ls_call *c, int64_t rc) {
  if (!is_plain(c)) {
    post_other(c, rc);
    return;
  }
  /* on a non-blocking communicator, "in progress": the next queried state is news */
  if (rc == ncclInProgress)
    ls_comm_async_pending(c->comm);
  ls_call_exit(c, rc);
}
