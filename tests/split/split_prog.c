/* split_prog.c — a two-rank program for compare's `not-ready` on the child of a split of a
 * non-blocking parent (NCCL 2.28.3: ncclSuccess with the child NULL until the parent's state
 * leaves ncclInProgress; gpu_tests/src/split_probe.c), run under `lockstep run` against the
 * stand-in libnccl.so.2 (NCCL 2.28.3's split by default). RANK comes from the environment.
 *   split_prog early | polled | childpoll
 * early: the AllReduce on the child right after the split (NULL); polled: after polling the
 * parent (the clean twin); childpoll: after polling the child, which is NULL (fails). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin_prog.h"



static float buf[16];

static ncclResult_t poll(ncclComm_t comm) {
  ncclResult_t st = ncclInProgress;
  for (int i = 0; st == ncclInProgress && i < 1000; i++)
    if (ncclCommGetAsyncError(comm, &st) != ncclSuccess) /* SP:query */
      return ncclInvalidArgument;
  return st;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "polled";
  int rank, world;
  standin_rank_world(&rank, &world);
  ncclUniqueId id = standin_uid("split", mode);
  ncclComm_t parent = NULL, child = NULL;
  ncclConfig_t cfg = {sizeof(ncclConfig_t), 0xcafebeef, 0, 0}; /* blocking = 0 */
  if (ncclCommInitRankConfig(&parent, 2, id, rank, &cfg) != ncclInProgress || poll(parent) != ncclSuccess)
    return 3;
  ncclAllReduce(buf, buf, 4, F32, SUM, parent, STREAM); /* seq 0 on the parent */
  if (ncclCommSplit(parent, 0, rank, &child, NULL) != ncclSuccess || child)
    return 4; /* the stand-in must answer like NCCL 2.28.3 */
  if (!strcmp(mode, "polled") && (poll(parent) != ncclSuccess || !child))
    return 5;
  if (!strcmp(mode, "childpoll") && poll(child) != ncclInvalidArgument)
    return 6;
  ncclAllReduce(buf, buf, 4, F32, SUM, child, STREAM); /* SP:use */
  if (strcmp(mode, "polled"))
    poll(parent); /* the cleanup: the parent hands the child out */
  if (child)
    ncclCommAbort(child);
  ncclCommAbort(parent);
  return 0;
}
