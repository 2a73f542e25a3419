/* device.c — device completion through the CUDA driver API, loaded with
 * dlopen("libcuda.so.1") because programs often link cudart statically (its symbols
 * are then invisible to us) and because liblockstep must not need CUDA to build.
 *
 * A fixed pool of events (no malloc on the hot path): an app thread claims a slot,
 * records the slot's event on a stream right after the work was enqueued and arms
 * it; the watchdog thread queries armed slots and marks the covered records
 * complete. Without a driver everything is flagged LS_REC_NO_DEVICE instead. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "nccl_abi.h"

#define LS_EVENT_SLOTS 4096u
#define LS_SLOT_BITS 13u /* LS_EVENT_SLOTS + 1 fits */

enum { SLOT_FREE = 0, SLOT_CLAIMED = 1, SLOT_ARMED = 2 };

struct ev_slot {
  int state; /* atomic */
  uint32_t gen;
  CUevent ev;
  CUcontext ctx;
  uint64_t lo, hi; /* record index range the members lie in */
};

static struct ev_slot g_slots[LS_EVENT_SLOTS];
static unsigned g_cursor; /* atomic */
static int g_dev;         /* 1: driver usable */
/* Pollers are the watchdog and the exit handler; app threads never take it. */
static pthread_mutex_t g_poll_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventQuery)(CUevent);
static CUresult (*p_cuEventDestroy)(CUevent);
static CUresult (*p_cuCtxGetCurrent)(CUcontext *);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuStreamGetCtx)(CUstream, CUcontext *);
static CUresult (*p_cuStreamIsCapturing)(CUstream, int *);

int ls_dev_init(void) {
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
  *(void **)&p_cuStreamGetCtx = dlsym(h, "cuStreamGetCtx");             /* optional */
  *(void **)&p_cuStreamIsCapturing = dlsym(h, "cuStreamIsCapturing");   /* optional */
  g_dev = p_cuEventCreate && p_cuEventRecord && p_cuEventQuery && p_cuEventDestroy &&
          p_cuCtxGetCurrent && p_cuCtxSetCurrent;
  return g_dev;
}

/* Atomic: the exit handler turns it off while application threads are in calls. */
int ls_dev_available(void) { return __atomic_load_n(&g_dev, __ATOMIC_ACQUIRE); }

static uint32_t make_tag(unsigned slot, uint32_t gen) {
  return ((gen & ((1u << (32 - LS_SLOT_BITS)) - 1)) << LS_SLOT_BITS) | (slot + 1);
}

uint32_t ls_dev_cover(uint64_t stream, uint64_t lo, uint64_t hi) {
  if (!ls_dev_available())
    return 0;
  /* The stream's context (multi-device processes: ncclCommInitAll); the legacy and
   * per-thread default streams (0, 1, 2) belong to the current one. */
  CUcontext cur = NULL, ctx = NULL;
  if (p_cuCtxGetCurrent(&cur) != LS_CUDA_SUCCESS)
    cur = NULL;
  if (stream > 2 && p_cuStreamGetCtx && p_cuStreamGetCtx((CUstream)(uintptr_t)stream, &ctx) != LS_CUDA_SUCCESS)
    ctx = NULL;
  if (!ctx)
    ctx = cur;
  if (!ctx)
    return 0;
  /* A stream being captured into a CUDA graph runs nothing now: an event recorded
   * there would become part of the graph and never complete here. Leave it unwatched. */
  int capturing = 0;
  if (p_cuStreamIsCapturing &&
      p_cuStreamIsCapturing((CUstream)(uintptr_t)stream, &capturing) == LS_CUDA_SUCCESS && capturing)
    return 0;
  unsigned start = __atomic_fetch_add(&g_cursor, 1, __ATOMIC_RELAXED);
  for (unsigned t = 0; t < 8; t++) { /* bounded: a full pool must stay cheap */
    unsigned s = (start + t) % LS_EVENT_SLOTS;
    struct ev_slot *e = &g_slots[s];
    int expect = SLOT_FREE;
    if (!__atomic_compare_exchange_n(&e->state, &expect, SLOT_CLAIMED, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
      continue;
    if (e->ev && e->ctx != ctx) {
      p_cuEventDestroy(e->ev);
      e->ev = NULL;
    }
    if (!e->ev) {
      if (ctx != cur)
        p_cuCtxSetCurrent(ctx);
      CUresult r = p_cuEventCreate(&e->ev, LS_CU_EVENT_DISABLE_TIMING);
      if (ctx != cur)
        p_cuCtxSetCurrent(cur);
      if (r != LS_CUDA_SUCCESS) {
        e->ev = NULL;
        __atomic_store_n(&e->state, SLOT_FREE, __ATOMIC_RELEASE);
        return 0;
      }
      e->ctx = ctx;
    }
    if (p_cuEventRecord(e->ev, (CUstream)(uintptr_t)stream) != LS_CUDA_SUCCESS) {
      /* e.g. the context was reset under us: start this slot afresh next time */
      p_cuEventDestroy(e->ev);
      e->ev = NULL;
      __atomic_store_n(&e->state, SLOT_FREE, __ATOMIC_RELEASE);
      return 0;
    }
    e->gen++;
    e->lo = lo;
    e->hi = hi;
    return make_tag(s, e->gen);
  }
  return 0; /* pool exhausted: the call stays unwatched rather than blocking */
}

void ls_dev_arm(uint32_t tag) {
  unsigned s = (tag & ((1u << LS_SLOT_BITS) - 1)) - 1;
  if (s < LS_EVENT_SLOTS)
    __atomic_store_n(&g_slots[s].state, SLOT_ARMED, __ATOMIC_RELEASE);
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
  for (unsigned s = 0; s < LS_EVENT_SLOTS; s++) {
    struct ev_slot *e = &g_slots[s];
    if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != SLOT_ARMED)
      continue;
    if (e->ctx != cur) {
      p_cuCtxSetCurrent(e->ctx);
      cur = e->ctx;
    }
    CUresult r = p_cuEventQuery(e->ev);
    if (r == LS_CUDA_ERROR_NOT_READY)
      continue;
    uint64_t now = ls_now_ns();
    uint32_t tag = make_tag(s, e->gen);
    uint64_t lim = ls_rec_limit();
    for (uint64_t i = e->lo; i <= e->hi && i < lim; i++) {
      struct ls_trace_record *rec = &ls_g.recs[i];
      if (__atomic_load_n(&rec->wtag, __ATOMIC_ACQUIRE) != tag)
        continue;
      if (r == LS_CUDA_SUCCESS) {
        rec->t_complete_ns = now;
        ls_rec_set_flags(rec, LS_REC_COMPLETED);
        __atomic_store_n(&rec->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
      } else { /* context gone or event invalid: completion is unknowable */
        __atomic_store_n(&rec->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
      }
    }
    __atomic_store_n(&e->state, SLOT_FREE, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_poll_lock);
}

/* Exit: a last poll, then no more driver calls from the watchdog, which keeps running
 * while exit() tears libcuda down. */
void ls_dev_shutdown(void) {
  ls_dev_poll();
  pthread_mutex_lock(&g_poll_lock);
  __atomic_store_n(&g_dev, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_poll_lock);
}

void ls_dev_reset_after_fork(void) {
  pthread_mutex_init(&g_poll_lock, NULL);
  /* CUDA does not survive fork; the child starts without device tracking. */
  memset(g_slots, 0, sizeof g_slots);
  g_dev = 0;
}
