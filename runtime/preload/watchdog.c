/* watchdog.c — the watchdog subsystem, ticked by the core's thread: past LOCKSTEP_TIMEOUT
 * it reports the oldest sequenced call (collective or send/recv) of a communicator that
 * has not completed on the device (or not returned) — syncs the trace, records a
 * lockstep_watchdog event, prints one line to stderr (once per hang) — and the blocking
 * calls without a sequence number that a family asks it to watch (MPI_Finalize,
 * communicator creation: ls_watch_begin); then hands the hang to the core's policy
 * (core.c): report, abort, exit (86) or end (87). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

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
    const struct ls_trace_record *b = ls_rec_live(g_blocked[k].index);
    if (g_blocked[k].index == index || (b && ls_rec_pending(b) > 0))
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

static const char *api_name(uint16_t api) {
  const struct ls_api_desc *d = ls_api_desc_of(api);
  return d ? d->name : "?";
}

/* Highest seq on `comm` whose completion was observed (returned, for families that
 * complete on return); -1 if none. A scan, but only when the watchdog fires. */
static int64_t last_completed(uint64_t comm) {
  int64_t best = -1;
  uint64_t lim = ls_rec_limit();
  /* a ring: from its floor (lockstep's thread sets it, and this is that thread), as
   * the slots below may be in reuse */
  for (uint64_t i = ls_g.ring ? __atomic_load_n(&ls_g.floor, __ATOMIC_ACQUIRE) : 0; i < lim; i++) {
    const struct ls_trace_record *r = ls_rec_live(i);
    if (!r)
      continue;
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

void ls_rec_report(uint16_t api, uint64_t comm_id, int32_t rank, int32_t size, uint64_t t_ns, uint64_t aux0,
                   uint64_t aux1) {
  uint64_t ei;
  struct ls_trace_record *e = ls_rec_claim(&ei);
  if (!e)
    return;
  e->api = api;
  e->comm_id = comm_id;
  e->seq = LS_NO_SEQ;
  e->dtype = e->redop = e->root_or_peer = LS_NO_VALUE;
  e->comm_rank = rank;
  e->comm_size = size;
  e->t_enter_ns = e->t_exit_ns = t_ns;
  e->aux0 = aux0;
  e->aux1 = aux1;
  e->wtag = LS_WTAG_NONE;
  __atomic_store_n(&e->state, LS_REC_RETURNED, __ATOMIC_RELEASE);
}

static void fire(uint64_t index, struct ls_trace_record *r, uint64_t now) {
  ls_rec_set_flags(r, LS_REC_TIMED_OUT);
  __atomic_fetch_or(&ls_g.hdr->flags, LS_TRACE_F_WATCHDOG, __ATOMIC_RELEASE);
  /* the report itself, in the trace */
  ls_rec_report(ls_g.watchdog_api, r->comm_id, r->comm_rank, r->comm_size, now, index, (uint64_t)ls_cfg.policy);
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
  ls_core_hang(r->comm_id);
}

/* ---- watched calls without a sequence number ------------------------------------------ */

/* MPI_Finalize and the creation calls wait for other ranks like a collective, but carry
 * no sequence number, so the scan below does not see them. A rank left in MPI_Finalize
 * while the others are stopped by the watchdog would keep the job alive: Open MPI 4.1's
 * mpirun can even deadlock when ranks _exit while another is inside MPI_Finalize. */
#define WATCH_SLOTS 64
static struct {
  struct ls_trace_record *rec; /* atomic: NULL = free */
  uint64_t t0;                 /* atomic: 0 while the slot is being filled or emptied */
  const char *what;
  int rank;
  uint16_t family;
  const void *abort_handle;
} g_watch[WATCH_SLOTS];

int ls_watch_begin(struct ls_call *c, const char *what, int rank, const void *abort_handle) {
  if (!c->rec || !ls_cfg.timeout_ns)
    return -1;
  for (int i = 0; i < WATCH_SLOTS; i++) {
    struct ls_trace_record *expect = NULL;
    if (__atomic_compare_exchange_n(&g_watch[i].rec, &expect, c->rec, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      g_watch[i].what = what;
      g_watch[i].rank = rank;
      g_watch[i].family = ls_api_family(c->api);
      g_watch[i].abort_handle = abort_handle;
      __atomic_store_n(&g_watch[i].t0, c->t_enter, __ATOMIC_RELEASE);
      return i;
    }
  }
  return -1;
}

void ls_watch_end(int slot) {
  if (slot < 0 || slot >= WATCH_SLOTS)
    return;
  __atomic_store_n(&g_watch[slot].t0, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&g_watch[slot].rec, NULL, __ATOMIC_RELEASE);
}

static void watched_tick(uint64_t now) {
  for (int i = 0; i < WATCH_SLOTS; i++) {
    struct ls_trace_record *r = __atomic_load_n(&g_watch[i].rec, __ATOMIC_ACQUIRE);
    uint64_t t0 = __atomic_load_n(&g_watch[i].t0, __ATOMIC_ACQUIRE);
    if (!r || !t0 || now - t0 <= ls_cfg.timeout_ns || (ls_rec_flags(r) & LS_REC_TIMED_OUT))
      continue;
    ls_rec_set_flags(r, LS_REC_TIMED_OUT);
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "lockstep: rank %d: %s not returned after %.1f s: it waits for ranks "
                     "that never reach it\n",
                     g_watch[i].rank, g_watch[i].what, (double)(now - t0) / 1e9);
    if (n > 0)
      (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    ls_core_hang_on(g_watch[i].family, g_watch[i].abort_handle);
  }
}

/* ---- the subsystem ----------------------------------------------------------------------- */

static void watchdog_tick(struct ls_tick *t) {
  if (!ls_cfg.timeout_ns)
    return;
  /* The oldest pending call of each communicator (later ones on a communicator
   * already reported wait behind that call: one line per hang, not one per call).
   * A claimed-but-unwritten slot (-1) is looked at next tick. */
  uint64_t now = ls_now_ns();
  uint64_t i = ls_tick_lowwater(t), lim = ls_tick_limit(t);
  uint64_t end = lim - i > LS_SCAN_WINDOW ? i + LS_SCAN_WINDOW : lim;
  int polled = 0;
  for (; i < end; i++) {
    struct ls_trace_record *r = ls_rec_live(i);
    if (!r || ls_rec_pending(r) <= 0)
      continue;
    if (blocked(r->comm_id, i))
      continue;
    if (now - r->t_enter_ns <= ls_cfg.timeout_ns)
      break; /* younger calls follow */
    if (!polled) { /* completion as of now, not as of the device tick: never report a call done meanwhile */
      polled = 1;
      ls_dev_poll();
      if (ls_rec_pending(r) <= 0)
        continue;
    }
    fire(i, r, now);
    block(r->comm_id, i);
  }
  watched_tick(now);
}

/* Quiet while nothing sequenced is pending and no blocking call is watched: a later
 * tick can then miss no timeout (anything issued meanwhile is younger than the sleep). */
static int watchdog_quiet(struct ls_tick *t) {
  if (!ls_tick_idle(t))
    return 0;
  for (int i = 0; i < WATCH_SLOTS; i++)
    if (__atomic_load_n(&g_watch[i].rec, __ATOMIC_ACQUIRE))
      return 0;
  return 1;
}

static void watchdog_after_fork(void) {
  g_nblocked = 0;
  memset(g_watch, 0, sizeof g_watch);
}

static const struct ls_subsystem g_watchdog = {
    .name = "watchdog", .order = LS_ORDER_WATCHDOG, .tick = watchdog_tick, .quiet = watchdog_quiet,
    .after_fork = watchdog_after_fork};
__attribute__((constructor)) static void watchdog_register(void) { ls_subsystem_register(&g_watchdog); }
