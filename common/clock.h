/* clock.h — the clocks of lockstep's commands. */
#ifndef LOCKSTEP_CLOCK_H
#define LOCKSTEP_CLOCK_H

double ls_now(void);     /* monotonic seconds */
double ls_cpu_now(void); /* this thread's CPU seconds (phase statistics: stable on a busy machine) */

#endif
