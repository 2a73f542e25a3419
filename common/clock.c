/* clock.c — the clocks of clock.h. */
#include <time.h>

#include "clock.h"

double ls_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double ls_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: stable on a busy machine */
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
