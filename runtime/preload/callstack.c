/* callstack.c — the few return addresses above a call's site, for `confirm` to join a
 * finding at the call of a helper with the collective the helper issued. Follows the
 * frame-pointer chain: a handful of loads per call, no unwinder, no lock, no malloc
 * after a thread's first call. The library is preloaded into programs built without
 * frame pointers, where rbp may hold anything: a frame is followed only while it lies
 * inside the calling thread's own stack, above the current one and 16-aligned, so a
 * load never leaves mapped memory and the walk always ends.
 * Non-goal: exact stacks (code without frame pointers skips frames or ends the chain). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define LS_TLS __thread __attribute__((tls_model("initial-exec")))

/* This thread's stack [lo, hi); hi == 1: unknown (no walk). */
LS_TLS uintptr_t ls_tl_stack_lo, ls_tl_stack_hi;
#define tl_lo ls_tl_stack_lo
#define tl_hi ls_tl_stack_hi

static void stack_bounds(void) {
  pthread_attr_t a;
  void *addr = NULL;
  size_t size = 0;
  tl_hi = 1;
  if (pthread_getattr_np(pthread_self(), &a) != 0)
    return;
  if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size) {
    tl_lo = (uintptr_t)addr;
    tl_hi = (uintptr_t)addr + size;
  }
  pthread_attr_destroy(&a);
}

/* Without the wrapper's frame, our own frames (this one, the hooks', the wrapper's)
 * come first: the walk looks for the frame whose return address is `site` and keeps
 * what lies above it. */
#define OWN_FRAMES 6

__attribute__((noinline)) void ls_stack_callers(const void *site, const void *frame,
                                                uint64_t out[LS_TRACE_CALLERS]) {
  uint64_t v[LS_TRACE_CALLERS] = {0};
  if (__builtin_expect(!tl_hi, 0))
    stack_bounds();
  uintptr_t fp = (uintptr_t)__builtin_frame_address(0), top = tl_hi - 2 * sizeof(uintptr_t);
  /* The wrapper's frame, when it gave one that holds the site: the walk starts there
   * instead of climbing through our frames to find it (two hops and a compare each). */
  uintptr_t wf = (uintptr_t)frame;
  int found = 0;
  if (wf && tl_hi > 1 && wf >= fp && wf <= top && !(wf & 15u) && ((const uintptr_t *)wf)[1] == (uintptr_t)site) {
    fp = wf;
    found = 1;
  }
  /* on an alternate signal stack or a user-made one (coroutines): not the stack we know */
  if (found && fp >= tl_lo) {
    /* fp is the site's frame (in (its stack, top], aligned): keep what lies above */
    unsigned k = 0;
    uintptr_t next = ((const uintptr_t *)fp)[0];
    /* the chain must climb (it ends at 0, the outermost frame, or at garbage) and
     * stay below the top: next in (fp, top], 16-aligned */
    while (!(next & 15u) && next - fp - 1 < top - fp) {
      fp = next;
      v[k++] = ((const uintptr_t *)fp)[1];
      next = ((const uintptr_t *)fp)[0];
      if (k == LS_TRACE_CALLERS)
        break;
    }
  } else if (!found && tl_hi > 1 && fp >= tl_lo && fp <= top && !(fp & 15u)) {
    unsigned k = 0, own = 0;
    for (;;) {
      const uintptr_t *f = (const uintptr_t *)fp; /* fp is in [its stack, top], aligned */
      uintptr_t ret = f[1], next = f[0];
      if (found > 1) {
        v[k++] = ret;
        if (k == LS_TRACE_CALLERS)
          break;
      } else if (found || ret == (uintptr_t)site) {
        found = 2; /* the site's frame: what lies above it is kept */
      } else if (++own > OWN_FRAMES) {
        break; /* the site's frame was not among ours: nothing trustworthy above */
      }
      /* the chain must climb (it ends at 0, the outermost frame, or at garbage) and
       * stay below the top: next in (fp, top], 16-aligned */
      if ((next & 15u) || next - fp - 1 >= top - fp)
        break;
      fp = next;
    }
  }
  memcpy(out, v, sizeof v); /* a constant size: two vector stores, no call */
}
