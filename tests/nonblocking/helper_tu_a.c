/* tests/nonblocking/helper_tu_a.c — a polling helper in its own translation unit; linted with
 * helper_tu_b.c in one run, its summary (polls its parameter ready) reaches the caller there. */
#include <nccl.h>

ncclResult_t wait_ready(ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress)
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
      return ncclInternalError;
  return state;
}

/* Waits, but drops a terminal error: callers are not told. */
void wait_quietly(ncclComm_t comm) {
  ncclResult_t state;
  do {
    ncclCommGetAsyncError(comm, &state); // expected-warning{{poll-without-error-check}}
  } while (state == ncclInProgress);
}
