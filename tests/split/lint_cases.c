// lint_cases.c — nonblocking-not-ready on a split of a non-blocking parent (NCCL 2.28.3:
// ncclSuccess with the child still NULL until ncclCommGetAsyncError(parent) leaves
// ncclInProgress). Checked with `lockstep lint --verify`; check_split_lint.py runs the same
// functions with rules whose nonblocking.parent_settles_child is false.
#include <nccl.h>
#include <stddef.h>

static ncclResult_t settle(ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress)
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
      return ncclInternalError;
  return state;
}

/* the split's ncclSuccess taken for done */
void used_at_once(ncclComm_t world, float *b, cudaStream_t s, int rank) {
  ncclComm_t p = NULL, c = NULL;
  ncclConfig_t k = NCCL_CONFIG_INITIALIZER;
  k.blocking = 0;
  ncclCommSplit(world, 0, rank, &p, &k);
  if (settle(p) != ncclSuccess)
    return;
  if (ncclCommSplit(p, 0, rank, &c, NULL) != ncclSuccess)
    return;
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s); // expected-warning{{nonblocking-not-ready}}
}

/* polling the child (NULL until the parent's job ends) settles nothing */
void child_polled(ncclComm_t world, float *b, cudaStream_t s, int rank) {
  ncclComm_t p = NULL, c = NULL;
  ncclConfig_t k = NCCL_CONFIG_INITIALIZER;
  k.blocking = 0;
  ncclCommSplit(world, 0, rank, &p, &k);
  if (settle(p) != ncclSuccess)
    return;
  ncclCommSplit(p, 0, rank, &c, NULL);
  if (settle(c) != ncclSuccess)
    return;
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s); // expected-warning{{nonblocking-not-ready}}
}

/* a blocking child config does not help: the parent's job still hands the child out */
void blocking_child(ncclComm_t world, float *b, cudaStream_t s, int rank) {
  ncclComm_t p = NULL, c = NULL;
  ncclConfig_t k = NCCL_CONFIG_INITIALIZER, kc = NCCL_CONFIG_INITIALIZER;
  k.blocking = 0;
  kc.blocking = 1;
  ncclCommSplit(world, 0, rank, &p, &k);
  if (settle(p) != ncclSuccess)
    return;
  ncclCommSplit(p, 0, rank, &c, &kc);
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s); // expected-warning{{nonblocking-not-ready}}
}

/* clean: the parent polled, inline loop */
void parent_polled(ncclComm_t world, float *b, cudaStream_t s, int rank) {
  ncclComm_t p = NULL, c = NULL;
  ncclConfig_t k = NCCL_CONFIG_INITIALIZER;
  ncclResult_t st = ncclInProgress;
  k.blocking = 0;
  ncclCommSplit(world, 0, rank, &p, &k);
  if (settle(p) != ncclSuccess)
    return;
  ncclCommSplit(p, 0, rank, &c, NULL);
  while (st == ncclInProgress)
    if (ncclCommGetAsyncError(p, &st) != ncclSuccess)
      return;
  if (st != ncclSuccess)
    return;
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* clean: the parent polled through a helper (settle's summary) */
void parent_settled(ncclComm_t world, float *b, cudaStream_t s, int rank) {
  ncclComm_t p = NULL, c = NULL;
  ncclConfig_t k = NCCL_CONFIG_INITIALIZER;
  k.blocking = 0;
  ncclCommSplit(world, 0, rank, &p, &k);
  if (settle(p) != ncclSuccess)
    return;
  ncclCommSplit(p, 0, rank, &c, NULL);
  if (settle(p) != ncclSuccess)
    return;
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* clean: a blocking parent hands out a ready child (split_probe: at once) */
void blocking_parent(ncclComm_t world, float *b, cudaStream_t s, int rank) {
  ncclComm_t c = NULL;
  ncclConfig_t k = NCCL_CONFIG_INITIALIZER;
  k.blocking = 0;
  ncclCommSplit(world, 0, rank, &c, &k);
  if (settle(c) != ncclSuccess)
    return;
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}
