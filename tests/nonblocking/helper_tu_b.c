/* tests/nonblocking/helper_tu_b.c — calls the helpers of helper_tu_a.c (see there). */
#include <stdlib.h>

#include <nccl.h>

ncclResult_t wait_ready(ncclComm_t comm);
void wait_quietly(ncclComm_t comm);
void not_a_poll(ncclComm_t comm);

void user(ncclComm_t parent, int rank, float *b, cudaStream_t s) {
  ncclComm_t c, d, e;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclCommSplit(parent, 0, rank, &c, &cfg);
  if (wait_ready(c) != ncclSuccess)
    abort();
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
  ncclCommSplit(parent, 1, rank, &d, &cfg);
  wait_quietly(d); /* polls (its own finding is in helper_tu_a.c) */
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, d, s);
  ncclCommSplit(parent, 2, rank, &e, &cfg);
  not_a_poll(e); /* unknown body: not a poll */
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, e, s); // expected-warning{{nonblocking-not-ready}}
}
