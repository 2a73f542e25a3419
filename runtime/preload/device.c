/* device.c — device completion through the CUDA driver API, loaded with
 * dlopen("libcuda.so.1") because programs often link cudart statically (its symbols
 * are then invisible to us) and because liblockstep must not need CUDA to build.
 *
 * Work on one stream completes in order, so one event covers every earlier call on
 * it. Each stream gets a slot (found by its handle, never freed) holding its context
 * and a ring of events in flight, whose events are reused once they fired: a call costs a capture query and a record
 * (~0.03 + ~0.25 us on an H200; creating an event ~0.3 us, querying one ~0.3 us:
 * bench/RESULTS.md), and the watchdog queries only the events in flight, oldest first,
 * stopping at the first not yet done (the old shared pool had it query up to 4096 per
 * poll, ~1.3 ms of driver time). With every event of a stream in flight the call
 * goes unwatched, as with a full pool before, and makes no driver call at all.
 *
 * LOCKSTEP_DEFER_US=N (opt-in): a call on a stream whose newest event is in flight,
 * recorded under N us ago with fewer than LS_DEFER_CALLS calls waiting, records
 * nothing: it takes the tag of the stream's next event, recorded by the first later
 * call past those bounds. It stays pending meanwhile, so a hang after it is still
 * reported; but the last call of a burst has no event behind it until its stream is
 * used again (nothing else may record on a stream the program may have destroyed or
 * begun capturing): an idle program then looks busy, to the watchdog after
 * LOCKSTEP_TIMEOUT and to the online skip check. Hence not the default.
 *
 * App threads take only their stream slot's spin lock, from the decision to the arm;
 * the watchdog takes none of those. Without a driver everything is flagged
 * LS_REC_NO_DEVICE instead. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "mix.h"
#include "nccl_abi.h"

#define LS_STREAM_SLOTS 256u /* distinct streams watched; beyond, calls go unwatched */
#define LS_SLOT_BITS 13u     /* LS_STREAM_SLOTS + 1 fits */
#define LS_RING 1024u        /* events in flight per stream (the old shared pool: 4096) */
#define LS_DEFER_CALLS 1024u /* calls one event may be left to cover */
static uint64_t g_defer_ns; /* LOCKSTEP_DEFER_US; 0: every call records its own event */

enum { EV_FREE = 0, EV_ARMED = 1 };

struct ev_entry {
  int state; /* atomic: EV_ARMED from the record's arm until the watchdog saw it fire */
  uint32_t gen;
  uint64_t lo, hi; /* record index range its members lie in */
  uint32_t epoch;   /* the slot's epoch at the record: one stream object */
  CUevent ev;
  CUcontext ctx;   /* the event's */
};

struct stream_slot {
  uint64_t key;       /* atomic: stream handle + 1; 0 = unused */
  uint64_t ctx_key;   /* default streams: the context (and thread) they belong to */
  int lock;           /* app threads only */
  int ready;          /* atomic: ctx known, events usable */
  CUcontext ctx;
  uint64_t sid;       /* cuStreamGetId when available: a reused handle is another stream */
  uint32_t epoch;     /* bumped whenever the handle may name another stream object */
  uint32_t gen;       /* the tag generation of the stream's next event */
  unsigned head;      /* ring entry the next event uses (app threads, locked) */
  unsigned tail;      /* oldest entry possibly in flight (the poller's) */
  unsigned arming;    /* entry to publish at ls_dev_arm, or LS_RING */
  uint32_t ndef;      /* calls waiting for the next event */
  uint64_t def_lo;    /* lowest record index among them */
  uint64_t t_rec;     /* when the newest event was recorded */
  struct ev_entry ring[LS_RING];
  /* Events of fired entries, for the next records: the poller pushes, app threads (under
   * the lock) pop, so a stream needs only as many events as it has in flight at once. */
  struct {
    CUevent ev;
    CUcontext ctx;
  } spare[LS_RING];
  unsigned spare_w; /* atomic: the poller's */
  unsigned spare_r;
  /* LOCKSTEP_DEVICE_STATS: counted under the lock (no atomics on the hot path) */
  uint64_t n_rec, n_create, n_wait, n_full;
  uint64_t seen_full; /* n_full at the poller's last look */
};

static struct stream_slot g_streams[LS_STREAM_SLOTS];
static int g_dev; /* 1: driver usable */
/* Pollers are the watchdog and the exit handler; app threads never take it. */
static pthread_mutex_t g_poll_lock = PTHREAD_MUTEX_INITIALIZER;
/* The last poll found an event still in flight, or a stream with more than LS_RING / 8
 * events recorded since the poll before (the poller's; core.c's back-off asks). */
static int g_busy;

static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventQuery)(CUevent);
static CUresult (*p_cuEventDestroy)(CUevent);
static CUresult (*p_cuCtxGetCurrent)(CUcontext *);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuStreamGetCtx)(CUstream, CUcontext *);
static CUresult (*p_cuStreamIsCapturing)(CUstream, int *);
static CUresult (*p_cuStreamGetId)(CUstream, unsigned long long *);

int ls_dev_init(void) {
  /* LOCKSTEP_DEVICE=0: no driver calls at all (calls are flagged LS_REC_NO_DEVICE), to
   * tell the recorder's device bookkeeping apart from the rest of its cost. */
  if (ls_cfg.device_off)
    return g_dev = 0;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return g_dev = 0;
  *(void **)&p_cuEventCreate = dlsym(h, "cuEventCreate");
  *(void **)&p_cuEventRecord = dlsym(h, "cuEventRecord");
  *(void **)&p_cuEventQuery = dlsym(h, "cuEventQuery");
  *(void **)&p_cuEventDestroy = dlsym(h, "cuEventDestroy_v2");
  if (!p_cuEventDestroy)
    *(void **)&p_cuEventDestroy = dlsym(h, "cuEventDestroy");
  *(void **)&p_cuCtxGetCurrent = dlsym(h, "cuCtxGetCurrent");
  *(void **)&p_cuCtxSetCurrent = dlsym(h, "cuCtxSetCurrent");
  *(void **)&p_cuStreamGetCtx = dlsym(h, "cuStreamGetCtx");           /* optional */
  *(void **)&p_cuStreamIsCapturing = dlsym(h, "cuStreamIsCapturing"); /* optional */
  *(void **)&p_cuStreamGetId = dlsym(h, "cuStreamGetId");             /* optional (CUDA 12) */
  g_defer_ns = ls_cfg.defer_ns;
  g_dev = p_cuEventCreate && p_cuEventRecord && p_cuEventQuery && p_cuEventDestroy &&
          p_cuCtxGetCurrent && p_cuCtxSetCurrent;
  return g_dev;
}

/* Atomic: the exit handler turns it off while application threads are in calls. */
int ls_dev_available(void) { return __atomic_load_n(&g_dev, __ATOMIC_ACQUIRE); }

static uint32_t make_tag(unsigned slot, uint32_t gen) {
  return ((gen & ((1u << (32 - LS_SLOT_BITS)) - 1)) << LS_SLOT_BITS) | (slot + 1);
}
static unsigned tag_slot(uint32_t tag) { return (tag & ((1u << LS_SLOT_BITS) - 1)) - 1; }

static void slot_lock(struct stream_slot *s) {
  while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED))
      __builtin_ia32_pause();
}
static void slot_unlock(struct stream_slot *s) { __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE); }

/* The slot of (stream, ctx_key), claimed on first use; NULL when the table is full. */
static struct stream_slot *slot_of(uint64_t stream, uint64_t ctx_key, unsigned *index) {
  uint64_t key = stream + 1;
  unsigned i = (unsigned)(ls_mix64(key ^ ctx_key) & (LS_STREAM_SLOTS - 1));
  for (unsigned probe = 0; probe < LS_STREAM_SLOTS; probe++, i = (i + 1) & (LS_STREAM_SLOTS - 1)) {
    struct stream_slot *s = &g_streams[i];
    uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
    if (!k) {
      /* Claim: the key is published last, after ctx_key, under the slot's lock. */
      slot_lock(s);
      k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
      if (!k) {
        s->ctx_key = ctx_key;
        s->def_lo = UINT64_MAX;
        s->arming = LS_RING;
        s->gen = 1;
        __atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
        k = key;
      }
      slot_unlock(s);
    }
    if (k == key && s->ctx_key == ctx_key) {
      *index = i;
      return s;
    }
  }
  return NULL;
}

/* Members waiting on `tag` in [lo, hi] get nothing to wait for: completion unknowable. */
static void drop_members(uint32_t tag, uint64_t lo, uint64_t hi) {
  uint64_t lim = ls_rec_limit();
  for (uint64_t i = lo; i <= hi && i < lim; i++) {
    struct ls_trace_record *r = ls_rec_live(i);
    if (r && __atomic_load_n(&r->wtag, __ATOMIC_ACQUIRE) == tag)
      __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
  }
}

/* Context and identity of the slot's stream; 0 on failure. Locked. */
static int slot_setup(struct stream_slot *s, uint64_t stream, CUcontext cur) {
  CUcontext ctx = NULL;
  if (!cur && p_cuCtxGetCurrent(&cur) != LS_CUDA_SUCCESS)
    cur = NULL;
  if (stream > 2 && p_cuStreamGetCtx &&
      p_cuStreamGetCtx((CUstream)(uintptr_t)stream, &ctx) != LS_CUDA_SUCCESS)
    ctx = NULL;
  if (!ctx)
    ctx = cur;
  if (!ctx)
    return 0;
  unsigned long long sid = 0;
  if (stream > 2 && p_cuStreamGetId && p_cuStreamGetId((CUstream)(uintptr_t)stream, &sid) != LS_CUDA_SUCCESS)
    sid = 0;
  __atomic_store_n(&s->ctx, ctx, __ATOMIC_RELEASE);
  s->sid = sid;
  s->epoch++;
  __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
  return 1;
}

/* Records the free entry's event on the stream, made in the stream's context once. */
static int record(struct stream_slot *s, struct ev_entry *e, uint64_t stream, CUcontext cur) {
  if (!e->ev && s->spare_r != __atomic_load_n(&s->spare_w, __ATOMIC_ACQUIRE)) {
    unsigned k = s->spare_r++ % LS_RING;
    e->ev = s->spare[k].ev;
    e->ctx = s->spare[k].ctx;
  }
  if (e->ev && e->ctx != s->ctx) {
    p_cuEventDestroy(e->ev);
    e->ev = NULL;
  }
  if (!e->ev) {
    if (!cur && p_cuCtxGetCurrent(&cur) != LS_CUDA_SUCCESS)
      cur = NULL;
    if (s->ctx != cur)
      p_cuCtxSetCurrent(s->ctx);
    CUresult r = p_cuEventCreate(&e->ev, LS_CU_EVENT_DISABLE_TIMING);
    s->n_create++;
    if (s->ctx != cur)
      p_cuCtxSetCurrent(cur);
    if (r != LS_CUDA_SUCCESS) {
      e->ev = NULL;
      return 0;
    }
    e->ctx = s->ctx;
  }
  return p_cuEventRecord(e->ev, (CUstream)(uintptr_t)stream) == LS_CUDA_SUCCESS;
}

static void forget_waiting(struct stream_slot *s, uint32_t tag, uint64_t hi) {
  if (s->ndef)
    drop_members(tag, s->def_lo, hi);
  s->ndef = 0;
  s->def_lo = UINT64_MAX;
}

/* The calling thread's last stream and its slot: a program issues most calls on one or
 * two streams, so this spares the hash and the probe (slots never change keys). */
static __thread __attribute__((tls_model("initial-exec"))) uint64_t tl_slot_key;
static __thread __attribute__((tls_model("initial-exec"))) unsigned tl_slot;
/* The thread's id for its per-thread default stream's key: a syscall, so made once
 * (a forked child runs without device tracking, so a stale one is never used). */
static __thread __attribute__((tls_model("initial-exec"))) uint64_t tl_tid;

uint32_t ls_dev_cover(uint64_t stream, uint64_t lo, uint64_t hi, uint64_t now) {
  if (!ls_dev_available())
    return 0;
  /* The legacy and per-thread default streams (0, 1, 2) are one per context (per
   * thread for 2): their slot is keyed by the current context too. */
  CUcontext cur = NULL;
  uint64_t ctx_key = 0;
  if (stream <= 2) {
    if (p_cuCtxGetCurrent(&cur) != LS_CUDA_SUCCESS || !cur)
      return 0;
    if (stream == 2 && !tl_tid)
      tl_tid = (uint64_t)syscall(SYS_gettid);
    ctx_key = (uint64_t)(uintptr_t)cur ^ (stream == 2 ? tl_tid << 40 : 0);
  }
  unsigned si = tl_slot;
  struct stream_slot *s = &g_streams[si % LS_STREAM_SLOTS];
  if (stream <= 2 || tl_slot_key != stream + 1 || __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) != stream + 1 ||
      s->ctx_key) {
    s = slot_of(stream, ctx_key, &si);
    if (!s)
      return 0;
    if (stream > 2) {
      tl_slot_key = stream + 1;
      tl_slot = si;
    }
  }
  slot_lock(s);
  struct ev_entry *e = &s->ring[s->head];
  int full = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == EV_ARMED;
  if (full && !g_defer_ns) {
    __atomic_store_n(&s->n_full, s->n_full + 1, __ATOMIC_RELAXED); /* the poller reads it */
    slot_unlock(s); /* every event in flight: this call goes unwatched (no capture query needed) */
    ls_core_wake();
    return 0;
  }
  /* A stream being captured into a CUDA graph runs nothing now: an event recorded
   * there would become part of the graph and never complete here. Leave it unwatched. */
  int capturing = 0;
  if (p_cuStreamIsCapturing &&
      p_cuStreamIsCapturing((CUstream)(uintptr_t)stream, &capturing) == LS_CUDA_SUCCESS && capturing) {
    slot_unlock(s);
    return 0;
  }
  uint32_t tag = make_tag(si, s->gen);
  if (g_defer_ns && __atomic_load_n(&s->ready, __ATOMIC_RELAXED)) {
    /* Wait for the stream's next event while its newest one is in flight and young. */
    struct ev_entry *newest = &s->ring[(s->head + LS_RING - 1) % LS_RING];
    if (full || (__atomic_load_n(&newest->state, __ATOMIC_ACQUIRE) == EV_ARMED &&
                 s->ndef < LS_DEFER_CALLS && now - s->t_rec < g_defer_ns)) {
      s->ndef += (uint32_t)(hi - lo + 1);
      if (lo < s->def_lo)
        s->def_lo = lo;
      s->n_wait++;
      return tag; /* the slot stays locked until ls_dev_arm */
    }
  } else if (full) {
    __atomic_store_n(&s->n_full, s->n_full + 1, __ATOMIC_RELAXED);
    slot_unlock(s); /* deferring, but the stream is not set up yet: unwatched */
    return 0;
  }
  /* The current context is needed only to make an event or to learn the stream's. */
  if (stream > 2 && (!s->ready || (!e->ev && s->spare_r == __atomic_load_n(&s->spare_w, __ATOMIC_ACQUIRE))) &&
      p_cuCtxGetCurrent(&cur) != LS_CUDA_SUCCESS)
    cur = NULL;
  int ok = 1;
  if (!s->ready) {
    ok = slot_setup(s, stream, cur);
  } else if (stream > 2 && p_cuStreamGetId) {
    /* The handle may name a new stream since the last record (destroyed and reused):
     * what waited was on the old one and is left unobserved. */
    unsigned long long sid = 0;
    if (p_cuStreamGetId((CUstream)(uintptr_t)stream, &sid) == LS_CUDA_SUCCESS && sid != s->sid) {
      forget_waiting(s, tag, hi);
      ok = slot_setup(s, stream, cur);
    }
  }
  if (ok && !record(s, e, stream, cur)) /* e.g. the handle was reused in another context */
    ok = slot_setup(s, stream, cur) && record(s, e, stream, cur);
  if (!ok) {
    forget_waiting(s, tag, hi);
    slot_unlock(s);
    return 0;
  }
  e->gen = s->gen;
  e->epoch = s->epoch;
  e->lo = s->ndef ? s->def_lo : lo;
  e->hi = hi;
  s->arming = s->head;
  s->head = (s->head + 1) % LS_RING;
  s->t_rec = now;
  s->n_rec++;
  s->ndef = 0;
  s->def_lo = UINT64_MAX;
  s->gen = s->gen + 1 ? s->gen + 1 : 1;
  /* The poller sleeps long (nothing was due) and half the ring is in flight: wake it
   * before the ring fills and later calls go unwatched. */
  if (__atomic_load_n(&ls_core_backed_off, __ATOMIC_RELAXED) &&
      __atomic_load_n(&s->ring[(s->head + LS_RING / 2) % LS_RING].state, __ATOMIC_ACQUIRE) == EV_ARMED)
    ls_core_wake();
  return tag; /* the slot stays locked until ls_dev_arm */
}

void ls_dev_arm(uint32_t tag) {
  unsigned si = tag_slot(tag);
  if (si >= LS_STREAM_SLOTS)
    return;
  struct stream_slot *s = &g_streams[si];
  if (s->arming < LS_RING) {
    __atomic_store_n(&s->ring[s->arming].state, EV_ARMED, __ATOMIC_RELEASE);
    s->arming = LS_RING;
  }
  slot_unlock(s);
}

static void resolve(struct ev_entry *e, uint32_t tag, CUresult r) {
  uint64_t now = ls_now_ns(), lim = ls_rec_limit();
  for (uint64_t i = e->lo; i <= e->hi && i < lim; i++) {
    struct ls_trace_record *rec = ls_rec_live(i);
    if (!rec || __atomic_load_n(&rec->wtag, __ATOMIC_ACQUIRE) != tag)
      continue;
    if (r == LS_CUDA_SUCCESS) {
      rec->t_complete_ns = now;
      ls_rec_set_flags(rec, LS_REC_COMPLETED);
    } /* else: context gone or event invalid: completion is unknowable */
    __atomic_store_n(&rec->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
  }
}

void ls_dev_poll(void) {
  if (!__atomic_load_n(&g_dev, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock(&g_poll_lock);
  if (!g_dev) { /* shut down meanwhile */
    pthread_mutex_unlock(&g_poll_lock);
    return;
  }
  CUcontext cur = NULL;
  int busy = 0;
  for (unsigned si = 0; si < LS_STREAM_SLOTS; si++) {
    struct stream_slot *s = &g_streams[si];
    if (!__atomic_load_n(&s->key, __ATOMIC_ACQUIRE))
      continue;
    /* On one stream a later event cannot fire before an earlier one, so the events
     * that fired are a prefix of those in flight: found with log2(n) queries on one
     * stream object (one query when the program keeps synchronizing it), then the
     * rest one by one, a few per poll, until one is not done. */
    unsigned run = 0;
    while (run < LS_RING &&
           __atomic_load_n(&s->ring[(s->tail + run) % LS_RING].state, __ATOMIC_ACQUIRE) == EV_ARMED)
      run++;
    if (!run)
      continue;
    if (run > LS_RING / 8)
      busy = 1;
    struct ev_entry *newest = &s->ring[(s->tail + run - 1) % LS_RING];
    int one = newest->epoch == s->ring[s->tail].epoch; /* (epochs only grow along the ring) */
    /* done: entries [0, done) of the run have fired, by a binary search over the run
     * when it is one stream object (done ... done, not done ...), else one by one */
    unsigned done = 0;
    if (one) {
      unsigned lo = 0, hi = run; /* [0, lo) done, [hi, run) not done */
      while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        struct ev_entry *e = &s->ring[(s->tail + mid) % LS_RING];
        if (e->ctx != cur) {
          p_cuCtxSetCurrent(e->ctx);
          cur = e->ctx;
        }
        CUresult r = p_cuEventQuery(e->ev);
        if (r == LS_CUDA_SUCCESS)
          lo = mid + 1;
        else /* not done, or an error: the one-by-one pass below sorts it out */
          hi = mid;
      }
      done = lo;
    }
    for (unsigned n = 0, queried = 0; n < run; n++) {
      struct ev_entry *e = &s->ring[s->tail];
      CUresult r = LS_CUDA_SUCCESS;
      if (n >= done) {
        if (queried++ == 8)
          break;
        if (e->ctx != cur) {
          p_cuCtxSetCurrent(e->ctx);
          cur = e->ctx;
        }
        r = p_cuEventQuery(e->ev);
        if (r == LS_CUDA_ERROR_NOT_READY) {
          busy = 1;
          break;
        }
      }
      resolve(e, make_tag(si, e->gen), r);
      unsigned w = s->spare_w;
      s->spare[w % LS_RING].ev = e->ev;
      s->spare[w % LS_RING].ctx = e->ctx;
      __atomic_store_n(&s->spare_w, w + 1, __ATOMIC_RELEASE);
      e->ev = NULL;
      __atomic_store_n(&e->state, EV_FREE, __ATOMIC_RELEASE);
      s->tail = (s->tail + 1) % LS_RING;
    }
    if (__atomic_load_n(&s->ring[s->tail].state, __ATOMIC_ACQUIRE) == EV_ARMED)
      busy = 1; /* left in flight (the 8-query limit) */
  }
  __atomic_store_n(&g_busy, busy, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_poll_lock);
}

/* Exit: a last poll, then no more driver calls from the watchdog, which keeps running
 * while exit() tears libcuda down. */
void ls_dev_shutdown(void) {
  ls_dev_poll();
  if (ls_cfg.device_stats) {
    uint64_t n[6] = {0};
    for (unsigned si = 0; si < LS_STREAM_SLOTS; si++)
      if (__atomic_load_n(&g_streams[si].key, __ATOMIC_ACQUIRE)) {
        n[0]++;
        n[1] += g_streams[si].n_rec;
        n[2] += g_streams[si].n_create;
        n[3] += g_streams[si].n_wait;
        n[4] += g_streams[si].n_full;
      }
    char msg[256];
    int k = snprintf(msg, sizeof msg,
                     "lockstep: device: %llu streams, %llu events recorded, %llu created, %llu calls "
                     "waited for a later event, %llu unwatched (ring full), %llu ticks\n",
                     (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2],
                     (unsigned long long)n[3], (unsigned long long)n[4],
                     (unsigned long long)__atomic_load_n(&ls_core_ticks, __ATOMIC_RELAXED));
    if (k > 0)
      (void)!write(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
  }
  pthread_mutex_lock(&g_poll_lock);
  __atomic_store_n(&g_dev, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_poll_lock);
}

void ls_dev_reset_after_fork(void) {
  pthread_mutex_init(&g_poll_lock, NULL);
  /* CUDA does not survive fork; the child starts without device tracking. */
  memset(g_streams, 0, sizeof g_streams);
  g_dev = 0;
}

static void dev_init(void) { (void)ls_dev_init(); }
static void dev_tick(struct ls_tick *t) {
  (void)t;
  ls_dev_poll();
}
/* Quiet when no event is in flight (a longer sleep delays no completion time), no call
 * went unwatched since the last tick, and no stream recorded so many events since the
 * last poll that twice as many (the next, doubled, sleep) would fill half its ring. */
static int dev_quiet(struct ls_tick *t) {
  (void)t;
  int quiet = !__atomic_load_n(&g_busy, __ATOMIC_RELAXED);
  for (unsigned si = 0; si < LS_STREAM_SLOTS; si++) {
    struct stream_slot *s = &g_streams[si];
    if (!__atomic_load_n(&s->key, __ATOMIC_ACQUIRE))
      continue;
    uint64_t nf = __atomic_load_n(&s->n_full, __ATOMIC_RELAXED);
    if (nf != s->seen_full)
      quiet = 0;
    s->seen_full = nf;
  }
  return quiet;
}
static const struct ls_subsystem g_device = {
    .name = "device", .order = LS_ORDER_DEVICE, .init = dev_init, .tick = dev_tick, .quiet = dev_quiet,
    .at_exit = ls_dev_shutdown, .after_fork = ls_dev_reset_after_fork};
__attribute__((constructor)) static void dev_register(void) { ls_subsystem_register(&g_device); }
