/* core.c — what the recorder runs besides the calls: the table of subsystems (device
 * tracking, the watchdog, the online check, the MPI hooks: each registers its
 * init/tick/at_exit/after_fork from a constructor), lockstep's one thread that ticks
 * them, the progress every tick shares (the low-water mark of pending calls), the
 * trace's upkeep ahead of the writers, and the policy: subsystems report a hang or a
 * divergence here, and the core applies LOCKSTEP_POLICY.
 * Non-goal: the per-call path. Wrappers never go through the table; the recorder calls
 * device tracking's cover/arm directly (recorder.c). The thread never takes a lock an
 * application thread holds across a call. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- the table ------------------------------------------------------------------- */

#define LS_MAX_SUBSYSTEMS 8u
static const struct ls_subsystem *g_subs[LS_MAX_SUBSYSTEMS];
static unsigned g_nsubs; /* written by constructors only, before any call */

void ls_subsystem_register(const struct ls_subsystem *s) {
  if (g_nsubs == LS_MAX_SUBSYSTEMS)
    return;
  unsigned i = g_nsubs++;
  for (; i > 0 && g_subs[i - 1]->order > s->order; i--)
    g_subs[i] = g_subs[i - 1];
  g_subs[i] = s;
}

void ls_core_init(void) {
  for (unsigned i = 0; i < g_nsubs; i++)
    if (g_subs[i]->init)
      g_subs[i]->init();
}

void ls_core_at_exit(void) {
  for (unsigned i = 0; i < g_nsubs; i++)
    if (g_subs[i]->at_exit)
      g_subs[i]->at_exit();
}

/* ---- trace upkeep: disk blocks and pages ahead of the writers ---------------------- */

static uint64_t g_faulted; /* records [0, g_faulted) have their pages mapped writable */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define LS_PREFAULT_AHEAD 32768u /* records (4 MiB) kept mapped ahead of the writers */

/* Take the page faults of the next records here, not in the application's calls:
 * the first write to a page of a fresh sparse file costs microseconds. */
static void prefault(void) {
  uint64_t n = __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_RELAXED);
  if (ls_g.ring) /* reserved whole: fault the slots in once, as the first lap reaches them */
    n = n < ls_g.capacity ? n : ls_g.capacity;
  uint64_t want = n + LS_PREFAULT_AHEAD;
  if (want > ls_g.capacity)
    want = ls_g.capacity;
  if (g_faulted < n)
    g_faulted = n; /* the writers got there first */
  /* Disk blocks first (further ahead, in chunks), so the pages below cannot SIGBUS. */
  if (ls_reserve_target(n) > __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE) ||
      __atomic_load_n(&ls_g.reserve_failed, __ATOMIC_ACQUIRE))
    ls_trace_reserve(ls_reserve_target(n));
  uint64_t backed = ls_g.ring ? ls_g.capacity : __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE);
  if (want > backed)
    want = backed;
  if (want <= g_faulted)
    return;
  uintptr_t lo = (uintptr_t)(ls_g.recs + g_faulted) & ~(uintptr_t)4095;
  uintptr_t hi = (uintptr_t)(ls_g.recs + want); /* file layout, not records */
  if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0) {
    /* Older kernels: an atomic no-op write per page is safe against a writer that
     * claims the record meanwhile. */
    for (uintptr_t p = lo; p < hi; p += 4096)
      __atomic_fetch_or((uint32_t *)p, 0u, __ATOMIC_RELAXED);
  }
  g_faulted = want;
}

/* ---- progress ---------------------------------------------------------------------- */

static uint64_t g_lowwater;

int ls_rec_pending(const struct ls_trace_record *r) {
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

/* Computed on first use in a tick: after the subsystems that mark completions (device
 * tracking ticks first) and before those that judge what is pending. */
static void progress(struct ls_tick *t) {
  if (t->have_progress)
    return;
  t->have_progress = 1;
  t->limit = ls_rec_limit();
  uint64_t i = g_lowwater;
  while (i < t->limit) {
    const struct ls_trace_record *r = ls_rec_live(i);
    int p = r ? ls_rec_pending(r) : -1;
    if (p == -1 && !ls_g.ring && skip_dropped(i)) /* a ring drops no claimed ordinal */
      p = 0;
    if (p != 0)
      break;
    i++;
  }
  g_lowwater = t->lowwater = i;
}

uint64_t ls_tick_lowwater(struct ls_tick *t) {
  progress(t);
  return t->lowwater;
}
uint64_t ls_tick_limit(struct ls_tick *t) {
  progress(t);
  return t->limit;
}
int ls_tick_idle(struct ls_tick *t) {
  progress(t);
  return t->lowwater == t->limit;
}

/* A ring's floor: the lowest ordinal any of the recorder's readers on this thread may
 * still read (the low-water mark, which bounds the watchdog's and the device poll's
 * reads, the index and the side channel). Released after their reads of this tick, so
 * a writer that sees it may reuse every slot below. */
static void ring_floor(struct ls_tick *t) {
  uint64_t f = ls_tick_lowwater(t), x = ls_index_floor(), y = ls_on_floor();
  f = x < f ? x : f;
  f = y < f ? y : f;
  if (f > __atomic_load_n(&ls_g.floor, __ATOMIC_RELAXED))
    __atomic_store_n(&ls_g.floor, f, __ATOMIC_RELEASE);
}

/* ---- the thread -------------------------------------------------------------------- */

static int g_started;

/* Back-off: after a tick every ticking subsystem called quiet (it loses nothing if the
 * next tick comes later), the next sleep doubles, up to LS_BACKOFF_MAX, LOCKSTEP_TIMEOUT / 4
 * and 128 intervals; any other tick returns to LOCKSTEP_POLL_MS. While backed off, device
 * tracking wakes the thread early when a stream's ring of events fills half way, so the
 * calls of a burst after an idle spell stay watched. */
#define LS_BACKOFF_MAX 1000000000ull
int ls_core_backed_off;
uint64_t ls_core_ticks;
static int g_wake; /* futex word: bumped by ls_core_wake */

void ls_core_wake(void) {
  if (!__atomic_exchange_n(&ls_core_backed_off, 0, __ATOMIC_ACQ_REL))
    return; /* not asleep long, or already woken */
  __atomic_fetch_add(&g_wake, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, &g_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void core_sleep(uint64_t ns, int backed_off) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  if (!backed_off) {
    nanosleep(&ts, NULL);
    return;
  }
  int w = __atomic_load_n(&g_wake, __ATOMIC_ACQUIRE);
  __atomic_store_n(&ls_core_backed_off, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, &g_wake, FUTEX_WAIT_PRIVATE, w, &ts, NULL, 0); /* a wake, the time, or a signal */
  __atomic_store_n(&ls_core_backed_off, 0, __ATOMIC_RELEASE);
}

static void *core_main(void *arg) {
  (void)arg;
  ls_guard_thread();
  uint64_t base = (uint64_t)ls_cfg.poll_ms * 1000000ull, cap = 128 * base;
  if (cap > LS_BACKOFF_MAX)
    cap = LS_BACKOFF_MAX;
  if (ls_cfg.timeout_ns && cap > ls_cfg.timeout_ns / 4)
    cap = ls_cfg.timeout_ns / 4;
  if (cap < base)
    cap = base;
  uint64_t next = base;
  for (;;) {
    core_sleep(next, next > base);
    if (!ls_g.hdr)
      return NULL;
    prefault();
    struct ls_tick t = {0};
    for (unsigned i = 0; i < g_nsubs; i++)
      if (g_subs[i]->tick)
        g_subs[i]->tick(&t);
    int quiet = 1;
    for (unsigned i = 0; i < g_nsubs && quiet; i++)
      if (g_subs[i]->tick && !(g_subs[i]->quiet && g_subs[i]->quiet(&t)))
        quiet = 0;
    next = quiet ? (next * 2 < cap ? next * 2 : cap) : base;
    if (ls_g.ring)
      ring_floor(&t);
    __atomic_add_fetch(&ls_core_ticks, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

void ls_core_start(void) {
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
  if (pthread_create(&t, &attr, core_main, NULL) != 0)
    __atomic_store_n(&g_started, 0, __ATOMIC_RELEASE);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

/* ---- the policy -------------------------------------------------------------------- */

static int g_hung, g_diverged; /* policy end: what was seen so far (atomic) */

static void policy(int hang, uint16_t family, const void *handle) {
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
    ls_abort_fn fn = ls_abort_hook_for(family);
    if (handle && fn)
      fn(handle);
    if (handle)
      ls_comm_mark_dead(ls_comm_lookup(handle));
  }
}

static void policy_on_comm(int hang, uint64_t comm) {
  uint16_t fam = 0;
  const void *h = ls_comm_handle_by_id(comm, &fam);
  policy(hang, fam, h);
}

void ls_core_hang(uint64_t comm) { policy_on_comm(1, comm); }
void ls_core_divergence(uint64_t comm) { policy_on_comm(0, comm); }
void ls_core_hang_on(uint16_t family, const void *handle) { policy(1, family, handle); }

/* ---- fork -------------------------------------------------------------------------- */

void ls_core_after_fork(void) {
  g_started = 0;
  ls_core_backed_off = 0;
  g_lowwater = 0;
  g_faulted = 0;
  g_hung = g_diverged = 0; /* the child's own calls decide its fate */
  for (unsigned i = 0; i < g_nsubs; i++)
    if (g_subs[i]->after_fork)
      g_subs[i]->after_fork();
}
