/* online/pause.c — lockstep_online_set_enabled, the one exported call of the channel:
 * pause points (the trace index from which the check is paused or resumed), queued by
 * the application's thread and consumed by the publisher when its walk of the trace
 * reaches that index, both under ls_on.lock. Paused collectives are not numbered, and
 * every fingerprint says how many were, so ranks that paused at different calls are
 * told apart from a divergence. It owns the queue and the application's wish. */
#include <time.h>

#include "online.h"

#define LS_TOGGLES 1024u /* pause/resume points not yet reached by the publisher */

static struct {
  uint64_t at;
  int on;
} g_tog[LS_TOGGLES];
static uint64_t g_tog_head, g_tog_tail;
static int g_want_on = 1; /* as the application last set it */
static int g_paused;      /* at the publisher's position in the trace */

int ls_on_paused_at(uint64_t index) {
  while (g_tog_tail < g_tog_head && g_tog[g_tog_tail % LS_TOGGLES].at <= index)
    g_paused = !g_tog[g_tog_tail++ % LS_TOGGLES].on;
  return g_paused;
}

/* The child's trace starts as the parent left the wish. */
void ls_on_pause_after_fork(void) {
  g_tog_head = g_tog_tail = 0;
  g_paused = !g_want_on;
}

/* Exported (user-visible, see runtime/README.md): pauses (0) or resumes (1) the
 * publishing of this process's collectives from the next call it records on; the
 * recorder keeps recording. Every rank of a communicator must pause at the same calls
 * (a pair that does not is no longer compared online, and says so). Returns the
 * previous setting, or -1 when there is no online check to pause (LOCKSTEP_ONLINE=0,
 * nothing recorded yet, or the publisher more than LS_TOGGLES pause points behind for
 * two seconds). Not a hot-path call: it takes the publisher's lock. */
LS_EXPORT int lockstep_online_set_enabled(int on);
LS_EXPORT int lockstep_online_set_enabled(int on) {
  on = on != 0;
  for (int waited_ms = 0;; waited_ms++) {
    pthread_mutex_lock(&ls_on.lock);
    if (!ls_g.hdr || !ls_on_enabled()) {
      pthread_mutex_unlock(&ls_on.lock);
      return -1;
    }
    int was = g_want_on;
    if (on == was) {
      pthread_mutex_unlock(&ls_on.lock);
      return was;
    }
    if (g_tog_head - g_tog_tail < LS_TOGGLES) {
      /* Records claimed from here on are this thread's later calls (and whatever
       * other threads issue concurrently, whose side of the point is theirs to fix). */
      g_tog[g_tog_head % LS_TOGGLES].at = __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_ACQUIRE);
      g_tog[g_tog_head % LS_TOGGLES].on = on;
      g_tog_head++;
      g_want_on = on;
      pthread_mutex_unlock(&ls_on.lock);
      return was;
    }
    pthread_mutex_unlock(&ls_on.lock);
    if (waited_ms >= 2000)
      return -1;
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, NULL);
  }
}
