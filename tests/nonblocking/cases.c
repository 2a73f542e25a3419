/* tests/nonblocking/cases.c — lint's non-blocking checks on small functions, sparse-style:
 * good_* must stay silent, warn_* carry their expectations. Not a program (no main): checked
 * with `lockstep lint --verify` only. */
#include <stdio.h>
#include <stdlib.h>

#include <nccl.h>

static void poll_until_done(ncclComm_t comm, ncclResult_t *out) {
  ncclResult_t st = ncclInProgress;
  while (st == ncclInProgress)
    if (ncclCommGetAsyncError(comm, &st) != ncclSuccess)
      break;
  *out = st; /* handed on: the caller checks */
}

/* Elements at a moving index are not tracked: one slot for all of them would mix them. */
void good_array_of_comms(ncclComm_t *comms, int n, ncclUniqueId id, float *b, cudaStream_t s) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  ncclResult_t st;
  cfg.blocking = 0;
  for (int i = 0; i < n; i++)
    ncclCommInitRankConfig(&comms[i], n, id, i, &cfg);
  for (int i = 0; i < n; i++) {
    poll_until_done(comms[i], &st);
    if (st != ncclSuccess)
      abort();
  }
  for (int i = 0; i < n; i++)
    ncclAllReduce(b, b, 1, ncclFloat, ncclSum, comms[i], s);
}

/* The mode is non-blocking on one path only: the check needs it on every path. */
void good_conditional_mode(int nb, ncclComm_t parent, int rank, float *b, cudaStream_t s) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  ncclResult_t st = ncclInProgress;
  if (nb)
    cfg.blocking = 0;
  ncclCommSplit(parent, 0, rank, &c, &cfg);
  if (nb) {
    while (st == ncclInProgress)
      ncclCommGetAsyncError(c, &st);
    if (st != ncclSuccess)
      abort();
  }
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* A non-blocking creation may end at once. */
void good_success_at_once(ncclComm_t parent, int rank, float *b, cudaStream_t s) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclResult_t r = ncclCommSplit(parent, 0, rank, &c, &cfg);
  if (r == ncclSuccess)
    ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
  ncclCommAbort(c); /* abort needs no polling */
}

/* Blocking communicators need no polling, for creation or finalize. */
void good_blocking(int n, ncclUniqueId id, int rank, float *b, cudaStream_t s) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 1;
  ncclCommInitRank(&c, n, id, rank);
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
  ncclCommFinalize(c);
  ncclCommDestroy(c);
  ncclCommInitRankConfig(&c, n, id, rank, &cfg);
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* A switch, a return, a break out of `for (;;)` then a check: each looks at the state. */
int good_state_examined(ncclComm_t c, float *b, cudaStream_t s) {
  ncclResult_t st;
  do {
    ncclCommGetAsyncError(c, &st);
  } while (st == ncclInProgress);
  switch (st) {
  case ncclSuccess:
    break;
  default:
    ncclCommAbort(c);
    return 1;
  }
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
  for (;;) {
    ncclCommGetAsyncError(c, &st);
    if (st != ncclInProgress)
      break;
  }
  if (st != ncclSuccess) {
    ncclCommAbort(c);
    return 1;
  }
  ncclBroadcast(b, b, 1, ncclFloat, 0, c, s);
  do {
    ncclCommGetAsyncError(c, &st);
  } while (st == ncclInProgress);
  return st;
}

/* After an error the communicator is replaced: the new one may be used. */
void good_replaced_after_error(ncclComm_t c, int n, ncclUniqueId id, int rank, float *b, cudaStream_t s) {
  ncclResult_t st;
  ncclCommGetAsyncError(c, &st);
  if (st != ncclSuccess && st != ncclInProgress) {
    ncclCommAbort(c);
    ncclCommInitRank(&c, n, id, rank);
  }
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* In progress is not an error. */
void good_in_progress_is_no_error(ncclComm_t c, float *b, cudaStream_t s) {
  ncclResult_t st;
  ncclCommGetAsyncError(c, &st);
  if (st == ncclInProgress)
    fprintf(stderr, "still busy\n");
  else if (st != ncclSuccess)
    abort();
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* Used inside the loop before the poll that follows it. */
void warn_use_before_poll(ncclComm_t parent, int rank, float *b, cudaStream_t s) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  ncclResult_t st = ncclInProgress;
  cfg.blocking = 0;
  ncclCommSplit(parent, 0, rank, &c, &cfg);
  ncclCommSplit(c, 1, rank, &c, NULL); // expected-warning{{nonblocking-not-ready}}
  while (st == ncclInProgress)
    ncclCommGetAsyncError(c, &st);
  if (st != ncclSuccess)
    abort();
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* Polling on the query's return value never waits: the communicator is still not ready. */
void warn_polled_on_return(ncclComm_t parent, int rank, float *b, cudaStream_t s) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  ncclResult_t st;
  cfg.blocking = 0;
  ncclCommSplit(parent, 0, rank, &c, &cfg);
  while (ncclCommGetAsyncError(c, &st) == ncclInProgress) // expected-warning{{async-return-as-state}}
    ;
  if (st != ncclSuccess && st != ncclInProgress)
    abort();
  ncclSend(b, 1, ncclFloat, 0, c, s); // expected-warning{{nonblocking-not-ready}}
}

/* The error is logged, then send/recv go on. */
void warn_error_logged(ncclComm_t c, float *b, cudaStream_t s) {
  ncclResult_t st;
  ncclCommGetAsyncError(c, &st);
  if (st != ncclSuccess && st != ncclInProgress)
    fprintf(stderr, "error %d\n", (int)st);
  ncclGroupStart();
  ncclSend(b, 1, ncclFloat, 0, c, s); // expected-warning{{continue-after-abort}}
  ncclRecv(b, 1, ncclFloat, 0, c, s);
  ncclGroupEnd();
}

/* One check of in-progress, no loop: the rest of the values go on just the same. */
int warn_single_check(ncclComm_t c, float *b, cudaStream_t s) {
  ncclResult_t st;
  ncclCommGetAsyncError(c, &st); // expected-warning{{poll-without-error-check}}
  if (st == ncclInProgress)
    return 1;
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
  return 0;
}

/* A finalize whose result is compared with in-progress only, then the destroy. */
void warn_finalize_then_destroy(ncclComm_t parent, int rank) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  ncclResult_t st;
  cfg.blocking = 0;
  if (ncclCommSplit(parent, 0, rank, &c, &cfg) != ncclSuccess) {
    do {
      ncclCommGetAsyncError(c, &st);
    } while (st == ncclInProgress);
    if (st != ncclSuccess)
      return;
  }
  ncclCommFinalize(c);
  ncclCommDestroy(c); // expected-warning{{nonblocking-not-ready}}
}

/* ncclCommShrink and ncclCommInitRankScalable create communicators the same way. */
void warn_shrink_and_scalable(ncclComm_t parent, int n, ncclUniqueId *ids, int rank, float *b, cudaStream_t s) {
  ncclComm_t small, big;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  int excluded = n - 1;
  cfg.blocking = 0;
  ncclCommShrink(parent, &excluded, 1, &small, &cfg, NCCL_SHRINK_DEFAULT);
  ncclBroadcast(b, b, 1, ncclFloat, 0, small, s); // expected-warning{{nonblocking-not-ready}}
  ncclCommInitRankScalable(&big, n, rank, 1, ids, &cfg);
  ncclReduce(b, b, 1, ncclFloat, ncclSum, 0, big, s); // expected-warning{{nonblocking-not-ready}}
}

/* A config passed to another function may have been changed there: not known non-blocking. */
void set_up(ncclConfig_t *cfg);
void good_config_escapes(ncclComm_t parent, int rank, float *b, cudaStream_t s) {
  ncclComm_t c;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  set_up(&cfg);
  ncclCommSplit(parent, 0, rank, &c, &cfg);
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
}

/* NCCL's documentation pattern: a timeout or an error is recorded in a flag that every rank
 * agrees on before aborting; lint does not follow the flag, and stays silent. */
int timed_out(void);
int agree_any(int flag);
void restart(ncclComm_t *comm);
void good_docs_abort_flag(ncclComm_t comm, int n, ncclUniqueId id, int rank, float *b, cudaStream_t s) {
  ncclResult_t ret, state;
  int abort_flag = 0;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclCommInitRankConfig(&comm, n, id, rank, &config);
  do {
    ret = ncclCommGetAsyncError(comm, &state);
  } while (state == ncclInProgress && !timed_out());
  if (timed_out() || state != ncclSuccess)
    abort_flag = 1;
  if (agree_any(abort_flag)) {
    ncclCommAbort(comm);
    restart(&comm);
  }
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, comm, s);
  (void)ret;
}
