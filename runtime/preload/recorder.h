/* recorder.h — the internal API of liblockstep's recorder, shared by the generated
 * wrappers (NCCL and PMPI), the family hooks (nccl_hooks.c, mpi_hooks.c) and the
 * subsystems (core.c runs them).
 * Everything here has hidden visibility: only interposed entry points leave the .so.
 *
 * A wrapper does, in this order (never a lock across the real call):
 *   ls_call_begin()     guard + off-switch check, enter timestamp   (no record yet)
 *   fill c.args         argument values by role (generated)
 *   <family>_pre(&c)    ls_call_enter(): claims a record slot, fills the fingerprint,
 *                       publishes it as LS_REC_ENTERED so a hang is visible
 *   rc = real(...)      arguments and result untouched
 *   <family>_post(&c,rc) ls_call_exit(): exit timestamp, rc, LS_REC_RETURNED, then
 *                       comm registration / group bookkeeping / completion events
 * NCCL's collectives, p2p calls and group brackets do the first three in one,
 * ls_call_plain(), which writes their values into the record without staging them.
 * Non-goals: symbolizing, formatting, comparing — those live in the tools. */
#ifndef LOCKSTEP_RECORDER_H
#define LOCKSTEP_RECORDER_H

#include <stdint.h>
#include <time.h>

#include "trace_format.h"

#define LS_HIDDEN __attribute__((visibility("hidden")))
#define LS_EXPORT __attribute__((visibility("default")))

/* Any argument (integer, enum or pointer; MPI handles may be either) as int64. */
#define LS_I64(x) ((int64_t)(intptr_t)(x))

/* An entry of a family's api table, generated from rules/<family>.json. */
struct ls_api_desc {
  const char *name; /* C symbol, e.g. "ncclAllReduce" */
  const char *op;   /* protocol name ("allreduce"), or NULL */
  uint16_t kind;    /* enum ls_api_kind */
  uint16_t sub;     /* family-specific refinement of kind (LS_SUB_*) */
};
#define LS_SUB_NONE 0
#define LS_SUB_INIT_ALL 1  /* comm_init_all */
#define LS_SUB_SHRINK 2    /* comm_split that excludes ranks (ncclCommShrink) */
#define LS_SUB_SCALABLE 3  /* comm_init with an array of unique ids */
#define LS_SUB_SIMULATE 4  /* group_end that only simulates (ncclGroupSimulateEnd) */
#define LS_SUB_REVOKE 5    /* comm_revoke */

/* Registers a family's table (called from a generated constructor); returns the api id
 * of its first entry. Ids are indices into the trace's api table. The table must be
 * static (it is referenced, not copied). */
LS_HIDDEN uint16_t ls_api_register(const struct ls_api_desc *apis, unsigned n, uint16_t family);

/* A family's names of dtype and redop values (from the rules' "enums", generated), so
 * the side channel's reports read as compare's do; looked up only when reporting. */
struct ls_enum_name {
  const char *name;
  long long value;
};
LS_HIDDEN void ls_enum_names_register(uint16_t family, const struct ls_enum_name *dtype, unsigned ndtype,
                                      const struct ls_enum_name *redop, unsigned nredop);
/* The name of a value ("dtype" if !redop, else "redop") of the family, or NULL. */
LS_HIDDEN const char *ls_enum_name(uint16_t family, int redop, long long value);
#define LS_API_UNREGISTERED 0xffffu

/* Argument values by role (rules/SCHEMA.md); a wrapper fills the roles it has. */
struct ls_args {
  int64_t count, dtype, redop, root, peer;
  int64_t nranks, rank, color, key, exclude_count, nid;
  const void *comm;          /* role comm: the handle value */
  void *out_comm;            /* role out_comm / out_comm_array: pointer to handle(s) */
  const void *unique_id;     /* role unique_id / unique_id_array: pointer to the id bytes */
  const void *exclude_ranks; /* role exclude_ranks: const int* */
  void *out_async_state;     /* role out_async_state: ncclResult_t* */
  const void *config;        /* role config */
  uint64_t stream;           /* role stream */
  int64_t request;           /* role request (MPI), handle or pointer */
};

struct ls_comm; /* a communicator the recorder knows (recorder.c) */

/* One interposed call in flight; lives on the wrapper's stack. */
struct ls_call {
  uint16_t api;       /* trace api id */
  uint16_t kind, sub; /* copied from the desc */
  uint16_t family;    /* the api's family (LS_FAMILY_*) */
  int depth;          /* thread's group depth at entry */
  uint64_t t_enter;
  uint64_t t_exit;    /* set by the wrapper right after the real call returns */
  const void *site;   /* return address into the caller */
  const void *frame;  /* the wrapper's frame address (its saved return address is site), or NULL */
  struct ls_trace_record *rec; /* NULL when the trace is full */
  uint64_t index;     /* record index (valid when rec != NULL) */
  struct ls_comm *comm; /* set by ls_call_enter from args.comm unless a hook set it */
  uint64_t aux0, aux1;  /* copied into the record by ls_call_enter (kind-specific) */
  uint64_t h0;          /* scratch for the family hook between pre and post */
  struct ls_args args;
};

/* Returns 0 when this call must pass straight through (LOCKSTEP_DISABLE, recursion
 * from inside a wrapper on this thread, or initialization failed); then nothing else
 * may be called for it. Otherwise the per-thread guard is held until ls_call_exit. */
LS_HIDDEN int ls_call_begin(struct ls_call *c, uint16_t api, const void *site);
/* ls_call_begin and ls_call_enter in one, for the generated wrappers of NCCL's
 * collectives, p2p calls and group brackets: the record's values come as arguments and
 * go straight into it (of c->args only comm and stream are set, for the exit). The
 * caller's family hook is not called: these kinds need none before the call. Returns
 * what ls_call_begin returns; on 1 the record is published (LS_REC_ENTERED). */
LS_HIDDEN int ls_call_plain(struct ls_call *c, uint16_t api, const void *site, const void *frame,
                            const void *comm, uint64_t stream, int64_t count, int64_t dtype,
                            int64_t redop, int64_t root_or_peer);
/* Claims and publishes the record (LS_REC_ENTERED). c->comm, when set, gives
 * comm_id/rank/size and, for collective/p2p kinds, the next sequence number. */
LS_HIDDEN void ls_call_enter(struct ls_call *c);
/* rc, c->t_exit, LS_REC_RETURNED; group depth bookkeeping for group kinds
 * (mirrors NCCL: start increments, an end decrements unless the depth was 0); device
 * completion events after an outermost group end or an ungrouped collective; then
 * releases the guard. */
LS_HIDDEN void ls_call_exit(struct ls_call *c, int64_t rc);

/* Communicators. Identity `id` must be equal on every rank of the communicator and
 * must not depend on anything that differs per rank (an ncclCommSplit key does). */
LS_HIDDEN uint64_t ls_hash_bytes(uint64_t seed, const void *p, uint64_t n);
LS_HIDDEN uint64_t ls_hash_u64(uint64_t seed, uint64_t v);
/* Registers (or re-registers, when a handle value is reused) a handle; rank/size -1
 * when not known yet (ls_comm_set_rank fills them later). Returns NULL when full. */
LS_HIDDEN struct ls_comm *ls_comm_register(uint16_t family, const void *handle, uint64_t id,
                                           int rank, int size);
LS_HIDDEN struct ls_comm *ls_comm_lookup(const void *handle); /* lock-free; NULL if unknown */
LS_HIDDEN void ls_comm_set_rank(struct ls_comm *cm, int rank, int size);
LS_HIDDEN int ls_comm_rank_known(const struct ls_comm *cm);
LS_HIDDEN uint64_t ls_comm_id(const struct ls_comm *cm);
LS_HIDDEN uint64_t ls_comm_next_split(struct ls_comm *cm); /* ordinal of a split on cm */
LS_HIDDEN void ls_comm_mark_dead(struct ls_comm *cm);       /* destroyed or aborted */
/* Created non-blocking (a split without a config inherits it). */
LS_HIDDEN void ls_comm_set_nonblocking(struct ls_comm *cm, int nb);
LS_HIDDEN int ls_comm_nonblocking(const struct ls_comm *cm);
/* Async-state bookkeeping for the query filter: returns 1 when `state` (a successful
 * query's out-parameter) is news for cm — it differs from the last state the trace
 * holds for it, or a call returned "in progress" since — and takes it as held.
 * cm NULL (a comm we never saw): news unless it is 0 (success). */
LS_HIDDEN int ls_comm_async_news(struct ls_comm *cm, int32_t state);
/* A call returned "in progress": on cm, whose next queried state is then news; with
 * cm NULL (a group end), every communicator's next queried state is news. */
LS_HIDDEN void ls_comm_async_pending(struct ls_comm *cm);

/* Completion hook for families that complete calls without CUDA events (MPI_Wait):
 * marks record `index` complete now. */
LS_HIDDEN void ls_rec_complete(uint64_t index);
/* Appends the process's loaded modules to the trace's module table (not hot path). */
LS_HIDDEN void ls_modules_refresh(void);
/* The trace record for an index (NULL if out of range); for hooks that patch fields
 * after the call (e.g. the identity of a communicator created by the call). */
LS_HIDDEN struct ls_trace_record *ls_rec_at(uint64_t index);

/* Real-function lookup: dlsym(RTLD_NEXT), then the named library if it was loaded
 * RTLD_LOCAL (PyTorch's libnccl.so.2). Cached by the caller in `*slot`. */
LS_HIDDEN void *ls_real_lookup(void *volatile *slot, const char *name, const char *soname);

/* Family hooks the watchdog uses to abort a communicator (policy abort). */
typedef int (*ls_abort_fn)(const void *handle);
LS_HIDDEN void ls_set_abort_hook(uint16_t family, ls_abort_fn fn);
/* For a comm without a known rank/size: family query, called lazily off the fast path. */
typedef void (*ls_rank_query_fn)(const void *handle, int *rank, int *size);
LS_HIDDEN void ls_set_rank_query_hook(uint16_t family, ls_rank_query_fn fn);

/* Subsystems: what runs besides the calls (device tracking, the watchdog, the online
 * check, a family's hooks). Each registers one from a constructor; the core calls them
 * in `order`: init at the recorder's initialization (under its lock, before the first
 * record), tick on lockstep's thread every LOCKSTEP_POLL_MS, at_exit in the exit
 * handler, after_fork in a forked child. Any hook may be NULL. The table is static: the
 * struct is referenced, not copied. Wrappers never go through it. */
struct ls_tick; /* one tick of lockstep's thread (internal.h) */
struct ls_subsystem {
  const char *name;
  int order;
  void (*init)(void);
  void (*tick)(struct ls_tick *t);
  /* After a tick: 1 if the next may come later without losing anything (core.c's
   * back-off); NULL counts as 0 for a subsystem that ticks. */
  int (*quiet)(struct ls_tick *t);
  void (*at_exit)(void);
  void (*after_fork)(void);
};
enum {
  LS_ORDER_DEVICE = 10, /* first: marks completions the others read */
  LS_ORDER_MPI = 15,
  LS_ORDER_ONLINE = 20,
  LS_ORDER_INDEX = 25,  /* after online at exit: its events are indexed */
  LS_ORDER_WATCHDOG = 30
};
LS_HIDDEN void ls_subsystem_register(const struct ls_subsystem *s);

/* Asks the watchdog to watch a blocking call that has no sequence number (it waits for
 * other ranks all the same: MPI_Finalize, communicator creation) until ls_watch_end:
 * past LOCKSTEP_TIMEOUT it prints "lockstep: rank <rank>: <what> not returned after T
 * s: ..." and applies the policy, aborting `abort_handle` under policy abort. Returns
 * the slot for ls_watch_end, or -1 (no record, no timeout, no free slot). */
LS_HIDDEN int ls_watch_begin(struct ls_call *c, const char *what, int rank, const void *abort_handle);
LS_HIDDEN void ls_watch_end(int slot);

/* LOCKSTEP_RECORD_QUERIES=1: record every query call, not only informative ones. */
LS_HIDDEN int ls_record_queries(void);

/* Monotonic nanoseconds; inline: a call costs as much as the vDSO's own work. */
static inline uint64_t ls_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
