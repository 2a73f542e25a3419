/* e2e_prog.c — a two-rank NCCL program for the trace tools' end-to-end test:
 * run under `lockstep run` against the stand-in libnccl.so.2 (a test double
 * that mimics return codes only; the real evidence is gpu_tests/), then
 * compare / export / confirm its traces. RANK comes from the environment.
 *   e2e_prog ok | opmismatch | skip | helper
 * helper: rank 0 broadcasts inside share_config(), rank 1 all-reduces: the
 * divergence's site is in the helper, a finding at its call must still join.
 * The E2E: markers name lines the test script looks up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin_prog.h"



static float buf[16];

static __attribute__((noinline)) void share_config(ncclComm_t comm) {
  ncclBroadcast(buf, buf, 4, F32, 0, comm, STREAM); /* E2E:helper-bcast */
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  int rank, world;
  standin_rank_world(&rank, &world);
  ncclUniqueId id = standin_uid("e2e", mode);
  ncclComm_t comm = NULL;
  if (ncclCommInitRank(&comm, 2, id, rank) != ncclSuccess)
    return 3;
  ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM); /* E2E:first */
  if (!strcmp(mode, "helper")) {
    if (rank == 0)
      share_config(comm); /* E2E:helper-call */
    else
      ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM);
    ncclCommDestroy(comm);
    return 0;
  }
  if (!strcmp(mode, "opmismatch") && rank == 1)
    ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM); /* E2E:opmismatch-b */
  else
    ncclBroadcast(buf, buf, 4, F32, 0, comm, STREAM); /* E2E:opmismatch-a */
  if (!strcmp(mode, "skip") && rank == 1) {
    ncclCommDestroy(comm);
    return 0;
  }
  ncclAllReduce(buf, buf, 8, F32, SUM, comm, STREAM); /* E2E:skip */
  ncclCommDestroy(comm);
  return 0;
}
