/* watchdog.c — lockstep's one thread: it polls device completion events and keeps a
 * low-water mark on the oldest sequenced call (collective or send/recv) that has not
 * completed on the device (or not returned). Past LOCKSTEP_TIMEOUT it syncs the trace,
 * prints one line to stderr (once per hang: the oldest stuck call of a communicator)
 * and applies LOCKSTEP_POLICY:
 *   report (default)  keep running, the trace and the message are the result
 *   abort             ncclCommAbort on that communicator, through the real function
 *   exit              _exit(86) (LS_EXIT_CODE), distinct from any NCCL or MPI code
 *   end               report, until the side channel has also reported a divergence
 *                     (either first): then _exit(87) (LS_END_CODE); `lockstep run`'s default
 * The thread never takes a lock an application thread holds across a call. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static int g_started;
static int pending(const struct ls_trace_record *r);
static uint64_t g_lowwater;
static uint64_t g_faulted; /* records [0, g_faulted) have their pages mapped writable */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define LS_PREFAULT_AHEAD 32768u /* records (4 MiB) kept mapped ahead of the writers */

/* Take the page faults of the next records here, not in the application's calls:
 * the first write to a page of a fresh sparse file costs microseconds. */
static void prefault(void) {
  uint64_t n = __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_RELAXED);
  uint64_t want = n + LS_PREFAULT_AHEAD;
  if (want > ls_g.capacity)
    want = ls_g.capacity;
  if (g_faulted < n)
    g_faulted = n; /* the writers got there first */
  /* Disk blocks first (further ahead, in chunks), so the pages below cannot SIGBUS. */
  if (ls_reserve_target(n) > __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE) ||
      __atomic_load_n(&ls_g.reserve_failed, __ATOMIC_ACQUIRE))
    ls_trace_reserve(ls_reserve_target(n));
  uint64_t backed = __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE);
  if (want > backed)
    want = backed;
  if (want <= g_faulted)
    return;
  uintptr_t lo = (uintptr_t)&ls_g.recs[g_faulted] & ~(uintptr_t)4095;
  uintptr_t hi = (uintptr_t)&ls_g.recs[want];
  if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0) {
    /* Older kernels: an atomic no-op write per page is safe against a writer that
     * claims the record meanwhile. */
    for (uintptr_t p = lo; p < hi; p += 4096)
      __atomic_fetch_or((uint32_t *)p, 0u, __ATOMIC_RELAXED);
  }
  g_faulted = want;
}

int ls_rec_pending(const struct ls_trace_record *r) {
  return pending(r);
}

static int pending(const struct ls_trace_record *r) {
  uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
  if (st == LS_REC_FREE)
    return -1; /* claimed, not yet written: its writer is about to publish it */
  if (r->seq == LS_NO_SEQ)
    return 0;
  if (st == LS_REC_ENTERED)
    return 1; /* not returned yet */
  if (r->rc != 0)
    return 0;
  uint16_t f = ls_rec_flags(r);
  if (f & LS_REC_COMPLETED)
    return 0;
  if (f & LS_REC_NONBLOCKING)
    return 1;
  uint32_t tag = __atomic_load_n(&r->wtag, __ATOMIC_ACQUIRE);
  return tag != LS_WTAG_NONE; /* pending: awaiting an outer group end or an event */
}

#define LS_SCAN_WINDOW 65536u /* records looked at per tick past the low-water mark */
#define LS_MAX_BLOCKED 64u

/* Communicators with a reported call still pending, and that call's index. */
static struct blocked_call {
  uint64_t comm, index;
} g_blocked[LS_MAX_BLOCKED];
static unsigned g_nblocked;

/* 1 if `comm` has an earlier reported call still pending (so the call at `index`
 * waits behind it). Entries whose call has completed since are dropped. */
static int blocked(uint64_t comm, uint64_t index) {
  for (unsigned k = 0; k < g_nblocked; k++) {
    if (g_blocked[k].comm != comm)
      continue;
    if (g_blocked[k].index == index || pending(&ls_g.recs[g_blocked[k].index]) > 0)
      return 1;
    g_blocked[k] = g_blocked[--g_nblocked];
    return 0;
  }
  return 0;
}

static void block(uint64_t comm, uint64_t index) {
  if (g_nblocked < LS_MAX_BLOCKED)
    g_blocked[g_nblocked++] = (struct blocked_call){comm, index};
}

/* A slot claimed but never written: normally its writer publishes it within
 * microseconds; one dropped for lack of disk space stays empty for good. After a
 * second it no longer holds the low-water mark back. */
static uint64_t g_free_index = UINT64_MAX, g_free_since;
static int skip_dropped(uint64_t index) {
  uint64_t now = ls_now_ns();
  if (g_free_index != index) {
    g_free_index = index;
    g_free_since = now;
    return 0;
  }
  return now - g_free_since > 1000000000ull;
}

static const char *api_name(uint16_t api) {
  const struct ls_api_desc *d = ls_api_desc_of(api);
  return d ? d->name : "?";
}

/* Highest seq on `comm` whose completion was observed (returned, for families that
 * complete on return); -1 if none. A scan, but only when the watchdog fires. */
static int64_t last_completed(uint64_t comm) {
  int64_t best = -1;
  uint64_t lim = ls_rec_limit();
  for (uint64_t i = 0; i < lim; i++) {
    const struct ls_trace_record *r = &ls_g.recs[i];
    /* Returned records only: an application thread may be writing the others (a new
     * communicator's id is patched in after the call). */
    if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != LS_REC_RETURNED)
      continue;
    if (r->comm_id == comm && r->seq != LS_NO_SEQ && (ls_rec_flags(r) & LS_REC_COMPLETED) &&
        (int64_t)r->seq > best)
      best = (int64_t)r->seq;
  }
  return best;
}

static void fire(uint64_t index, struct ls_trace_record *r, uint64_t now) {
  ls_rec_set_flags(r, LS_REC_TIMED_OUT);
  __atomic_fetch_or(&ls_g.hdr->flags, LS_TRACE_F_WATCHDOG, __ATOMIC_RELEASE);
  uint64_t ei;
  struct ls_trace_record *e = ls_rec_claim(&ei);
  if (e) { /* the report itself, in the trace */
    e->api = ls_g.watchdog_api;
    e->comm_id = r->comm_id;
    e->seq = LS_NO_SEQ;
    e->dtype = e->redop = e->root_or_peer = LS_NO_VALUE;
    e->comm_rank = r->comm_rank;
    e->comm_size = r->comm_size;
    e->t_enter_ns = e->t_exit_ns = now;
    e->aux0 = index;
    e->aux1 = (uint64_t)ls_cfg.policy;
    e->wtag = LS_WTAG_NONE;
    __atomic_store_n(&e->state, LS_REC_RETURNED, __ATOMIC_RELEASE);
  }
  ls_trace_sync();
  int64_t last = last_completed(r->comm_id);
  char lastbuf[32];
  if (last >= 0)
    snprintf(lastbuf, sizeof lastbuf, "%lld", (long long)last);
  else
    snprintf(lastbuf, sizeof lastbuf, "none");
  char msg[512];
  int n = snprintf(msg, sizeof msg,
                   "lockstep: rank %d: seq %llu %s on comm %016llx not complete after %.1f s; "
                   "last completed seq %s\n",
                   r->comm_rank, (unsigned long long)r->seq, api_name(r->api),
                   (unsigned long long)r->comm_id, (double)(now - r->t_enter_ns) / 1e9, lastbuf);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
  ls_apply_policy(r->comm_id, 1);
}

static int g_hung, g_diverged; /* policy end: what was seen so far (atomic) */

/* LOCKSTEP_POLICY on communicator `comm` (a hang here, a mismatch in online/check.c). */
void ls_apply_policy(uint64_t comm, int hang) {
  if (ls_cfg.policy == LS_POLICY_END) {
    __atomic_store_n(hang ? &g_hung : &g_diverged, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&g_hung, __ATOMIC_SEQ_CST) || !__atomic_load_n(&g_diverged, __ATOMIC_SEQ_CST))
      return;
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "lockstep: rank %d: ending this process with exit code %d: the side channel reported a "
                     "divergence and a call has not completed after the watchdog's timeout (%.1f s); the ranks "
                     "cannot meet again (policy end, the default of `lockstep run`; --policy report keeps the "
                     "job running)\n",
                     ls_g.hdr ? ls_g.hdr->launcher_rank : -1, LS_END_CODE, (double)ls_cfg.timeout_ns / 1e9);
    if (n > 0)
      (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    ls_trace_sync();
    _exit(LS_END_CODE);
  }
  if (ls_cfg.policy == LS_POLICY_EXIT) {
    ls_trace_sync();
    _exit(LS_EXIT_CODE);
  }
  if (ls_cfg.policy == LS_POLICY_ABORT) {
    uint16_t fam = 0;
    const void *h = ls_comm_handle_by_id(comm, &fam);
    ls_abort_fn fn = ls_abort_hook_for(fam);
    if (h && fn)
      fn(h);
    if (h)
      ls_comm_mark_dead(ls_comm_lookup(h));
  }
}

static void *watchdog_main(void *arg) {
  (void)arg;
  ls_guard_thread();
  struct timespec ts = {(time_t)(ls_cfg.poll_ms / 1000), (long)(ls_cfg.poll_ms % 1000) * 1000000L};
  for (;;) {
    nanosleep(&ts, NULL);
    if (!ls_g.hdr)
      return NULL;
    prefault();
    ls_dev_poll();
    uint64_t lim = ls_rec_limit();
    uint64_t i = g_lowwater;
    while (i < lim) {
      int p = pending(&ls_g.recs[i]);
      if (p == -1 && skip_dropped(i))
        p = 0;
      if (p != 0)
        break;
      i++;
    }
    g_lowwater = i;
    ls_index_tick(i);
    ls_online_tick(i == lim); /* nothing pending: this rank is idle */
    if (!ls_cfg.timeout_ns)
      continue;
    /* The oldest pending call of each communicator (later ones on a communicator
     * already reported wait behind that call: one line per hang, not one per call).
     * A claimed-but-unwritten slot (-1) is looked at next tick. */
    uint64_t now = ls_now_ns();
    uint64_t end = lim - i > LS_SCAN_WINDOW ? i + LS_SCAN_WINDOW : lim;
    for (; i < end; i++) {
      struct ls_trace_record *r = &ls_g.recs[i];
      if (pending(r) <= 0)
        continue;
      if (blocked(r->comm_id, i))
        continue;
      if (now - r->t_enter_ns <= ls_cfg.timeout_ns)
        break; /* younger calls follow */
      fire(i, r, now);
      block(r->comm_id, i);
    }
  }
  return NULL;
}

void ls_watchdog_start(void) {
  if (__atomic_exchange_n(&g_started, 1, __ATOMIC_ACQ_REL))
    return;
  g_lowwater = 0;
  g_faulted = 0;
  prefault(); /* before the thread exists: the first calls find their pages ready */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  /* Signals belong to the application's threads, not to ours. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  if (pthread_create(&t, &attr, watchdog_main, NULL) != 0)
    __atomic_store_n(&g_started, 0, __ATOMIC_RELEASE);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

void ls_watchdog_reset_after_fork(void) {
  g_started = 0;
  g_lowwater = 0;
  g_faulted = 0;
  g_nblocked = 0;
  g_hung = g_diverged = 0; /* the child's own calls decide its fate */
}
