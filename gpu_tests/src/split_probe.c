/* split_probe.c — when does a non-blocking ncclCommSplit hand out the child's handle, and
 * which communicator does a program poll to see it complete? The answer decides what
 * `nonblocking-not-ready` (lint) and compare's `not-ready` may assume about real NCCL.
 * One MPI rank per GPU; every rank prints one line per case:
 *   case,rank,split_rc,child_null_after_return,polled,polls,ms,state,child_null_after_poll
 * Cases: parent blocking or non-blocking, child config NULL or explicit blocking=0; after
 * the split returns, the program polls the parent (the communicator whose group ran the
 * split) until it leaves ncclInProgress, bounded at 20 s, then looks at the handle again.
 * Usage: mpirun -np 2 split_probe */
#include "gt_common.h"

static ncclResult_t poll_state(ncclComm_t comm, int *polls, double *ms) {
  uint64_t t0 = gt_now_ns();
  ncclResult_t state = ncclInProgress;
  *polls = 0;
  while (state == ncclInProgress && gt_now_ns() - t0 < 20000000000ull) {
    ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
    (*polls)++;
    if (rc != ncclSuccess)
      return rc;
    if (state == ncclInProgress)
      gt_sleep_ms(1);
  }
  *ms = (double)(gt_now_ns() - t0) / 1e6;
  return state;
}

static ncclComm_t make_parent(int blocking) {
  ncclComm_t comm = NULL;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = blocking;
  ncclUniqueId id = gt_unique_id();
  ncclResult_t rc = ncclCommInitRankConfig(&comm, gt_nranks, id, gt_rank, &cfg);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    fprintf(stderr, "rank %d: init: %s\n", gt_rank, ncclGetErrorString(rc));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  int polls;
  double ms;
  if (poll_state(comm, &polls, &ms) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 3);
  return comm;
}

static void probe(const char *name, int parent_blocking, int child_cfg) {
  ncclComm_t parent = make_parent(parent_blocking), child = NULL;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclResult_t rc = ncclCommSplit(parent, 0, gt_rank, &child, child_cfg ? &cfg : NULL);
  int null_after_return = child == NULL, polls = 0;
  double ms = 0;
  ncclResult_t state = poll_state(parent, &polls, &ms);
  int null_after_parent = child == NULL;
  /* then the child itself, once it has a handle */
  int cpolls = 0;
  double cms = 0;
  ncclResult_t cstate = child ? poll_state(child, &cpolls, &cms) : ncclInvalidArgument;
  printf("%s,%d,%s,%d,parent,%d,%.3f,%s,%d,child,%d,%.3f,%s\n", name, gt_rank,
         gt_rc_name(rc), null_after_return, polls, ms, gt_rc_name(state), null_after_parent,
         cpolls, cms, child ? gt_rc_name(cstate) : "no-handle");
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (child)
    ncclCommAbort(child);
  ncclCommAbort(parent);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  gt_init(&argc, &argv);
  if (gt_rank == 0)
    printf("case,rank,split_rc,child_null_after_return,polled,polls,ms,state,"
           "child_null_after_poll,then,child_polls,child_ms,child_state\n");
  probe("blocking-parent,child-cfg-nonblocking", 1, 1);
  probe("nonblocking-parent,child-cfg-null", 0, 0);
  probe("nonblocking-parent,child-cfg-nonblocking", 0, 1);
  MPI_Finalize();
  return 0;
}
