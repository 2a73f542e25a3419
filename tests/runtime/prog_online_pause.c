/* prog_online_pause.c — a rank of the online-pause test (tests/online_pause.cmake),
 * linked against the stand-in libnccl.so.2: 8-float all-reduces on one communicator,
 * with lockstep_online_set_enabled() (looked up at run time, so the program also runs
 * without lockstep) pausing the side channel around some of them. Scenarios:
 *   paused   3 calls; pause; 5 calls of which rank 1's differ in count; 150 ms
 *            (ticks pass while paused); resume; 3 calls            -> nothing reported
 *   resume   2 calls; pause; 4 calls; resume; rank 1's next differs in count
 *            (trace seq 6)                                         -> reported, seq 6
 *   apart    rank 0 pauses calls 2-3, rank 1 calls 3-4; all alike -> a note, no report
 *   api      the return values of the toggle (prints them)
 * RANK, WORLD_SIZE from the environment; exits 1 on a surprise, prints
 * "toggle: absent" when lockstep is not loaded. */
#include <dlfcn.h>
#include <unistd.h>

#include "standin_prog.h"

static float buf[16];
static ncclComm_t comm;
static int (*toggle)(int);

static void ar(size_t count) {
  if (ncclAllReduce(buf, buf, count, F32, SUM, comm, STREAM) != ncclSuccess) {
    fprintf(stderr, "prog_online_pause: ncclAllReduce failed\n");
    exit(1);
  }
}

static void set(int on, int want_prev) {
  int prev = toggle(on);
  if (prev != want_prev) {
    fprintf(stderr, "prog_online_pause: lockstep_online_set_enabled(%d) returned %d, expected %d\n",
            on, prev, want_prev);
    exit(1);
  }
}

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "paused";
  int rank, world;
  standin_rank_world(&rank, &world);
  if (ncclCommInitRank(&comm, world, standin_uid("prog_online_pause", how), rank) != ncclSuccess)
    return 1;
  toggle = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "lockstep_online_set_enabled");
  if (!toggle) {
    printf("toggle: absent\n");
    return 0;
  }
  if (!strcmp(how, "api")) {
    /* prints what a disabled channel answers too (LOCKSTEP_ONLINE=0: -1 each time) */
    int a = toggle(0), b = toggle(0), c = toggle(1), d = toggle(1);
    printf("toggle: %d %d %d %d\n", a, b, c, d);
    return 0;
  }
  if (!strcmp(how, "paused")) {
    for (int i = 0; i < 3; i++)
      ar(8);
    set(0, 1);
    for (int i = 0; i < 5; i++)
      ar(rank == 1 ? 9 : 8);
    usleep(150000);
    set(1, 0);
    for (int i = 0; i < 3; i++)
      ar(8);
  } else if (!strcmp(how, "resume")) {
    for (int i = 0; i < 2; i++)
      ar(8);
    set(0, 1);
    for (int i = 0; i < 4; i++)
      ar(8);
    set(1, 0);
    ar(rank == 1 ? 9 : 8);
    ar(8);
  } else if (!strcmp(how, "apart")) {
    for (int i = 0; i < 8; i++) {
      if (i == 2 + rank)
        set(0, 1);
      if (i == 4 + rank)
        set(1, 0);
      ar(8);
    }
  } else {
    fprintf(stderr, "prog_online_pause: unknown scenario %s\n", how);
    return 2;
  }
  usleep(800000); /* the watchdogs compare what both published */
  ncclCommDestroy(comm);
  return 0;
}
