/* missing_header.c — a real finding in a TU that does not compile as lint was asked to parse
 * it: the project's own header is not on the include path (its -I was not passed), so what
 * lint says about the rest is incomplete and the run must not pass unless told so. */
#include <nccl.h>
#include "project_config.h"
static float scale(void) { return PROJECT_SCALE; } /* the error: not checked, step still is */
void step(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank;
  ncclCommUserRank(comm, &rank);
  buf[0] *= scale();
  if (rank == 0)
    ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
}
