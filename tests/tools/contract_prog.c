/* contract_prog.c — a two-rank NCCL program for compare's contract classes
 * (`not-ready`, `after-abort`): run under `lockstep run` against the
 * stand-in libnccl.so.2 (a test double: a non-blocking init is in progress for
 * LS_STANDIN_POLLS polls, then ends in LS_STANDIN_ASYNC_END or success). RANK comes
 * from the environment; both ranks run the same calls.
 *   contract_prog ready | notready | fin | inherit | grouped | grouped_ok | abort | abort_ok
 *                 | asyncerr | asyncerr_ok
 * The CT: markers name lines the test script looks up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin_prog.h"



static float buf[16];

/* Polls until the state leaves ncclInProgress; returns the terminal state. */
static ncclResult_t poll(ncclComm_t comm) {
  ncclResult_t st = ncclInProgress;
  for (int i = 0; st == ncclInProgress && i < 1000; i++)
    if (ncclCommGetAsyncError(comm, &st) != ncclSuccess) /* CT:query */
      return ncclInternalError;
  return st;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ready";
  int rank, world;
  standin_rank_world(&rank, &world);
  ncclUniqueId id = standin_uid("contract", mode);
  ncclComm_t comm = NULL;
  ncclConfig_t cfg = {sizeof(ncclConfig_t), 0xcafebeef, 0, 0}; /* blocking = 0 */

  if (!strncmp(mode, "abort", 5)) {
    if (ncclCommInitRank(&comm, 2, id, rank) != ncclSuccess)
      return 3;
    ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM);
    ncclCommAbort(comm); /* CT:abort */
    if (!strcmp(mode, "abort")) {
      ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM); /* CT:after-abort */
      ncclAllReduce(buf, buf, 8, F32, SUM, comm, STREAM);
    }
    return 0;
  }

  if (!strncmp(mode, "grouped", 7)) {
    /* inside a group the creation returns success; the group end says in progress */
    ncclGroupStart();
    if (ncclCommInitRankConfig(&comm, 2, id, rank, &cfg) != ncclSuccess)
      return 3;
    if (ncclGroupEnd() != ncclInProgress)
      return 3;
    if (!strcmp(mode, "grouped"))
      ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM); /* CT:grouped */
  } else if (ncclCommInitRankConfig(&comm, 2, id, rank, &cfg) != ncclInProgress) {
    return 3;
  }
  if (!strcmp(mode, "notready")) {
    ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM); /* CT:notready */
    ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM);
  }
  ncclResult_t st = poll(comm);
  if (!strncmp(mode, "asyncerr", 8)) {
    if (st == ncclSuccess)
      return 4; /* the test sets LS_STANDIN_ASYNC_END */
    if (!strcmp(mode, "asyncerr_ok")) {
      ncclCommAbort(comm);
      return 0;
    }
    ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM); /* CT:after-error */
    return 0;
  }
  if (st != ncclSuccess)
    return 4;
  if (!strcmp(mode, "inherit")) {
    /* a split with a NULL config is non-blocking like its parent: used unpolled (the
     * test runs this mode with LS_STANDIN_SPLIT_IN_PROGRESS=1: in progress, child set) */
    ncclComm_t child = NULL;
    if (ncclCommSplit(comm, 0, rank, &child, NULL) != ncclInProgress)
      return 6;
    ncclAllReduce(buf, buf, 4, F32, SUM, child, STREAM); /* CT:inherit */
    poll(child);
    ncclCommAbort(child);
  }
  ncclAllReduce(buf, buf, 4, F32, SUM, comm, STREAM);
  if (ncclCommFinalize(comm) != ncclInProgress)
    return 5;
  if (strcmp(mode, "fin")) /* fin: destroy without polling the finalize */
    poll(comm);
  ncclCommDestroy(comm); /* CT:destroy */
  return 0;
}
