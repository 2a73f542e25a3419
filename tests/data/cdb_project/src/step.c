/* step.c — only rank 0 joins the AllReduce: a finding that needs rank.c's summary, and
 * flags (an include directory and a define) that only the compilation database carries. */
#include "sample_nccl.h"
#ifndef SAMPLE_BUILD
#error "compile through the build system (it defines SAMPLE_BUILD)"
#endif
void sample_step(ncclComm_t comm, float *buf, cudaStream_t s) {
  if (sample_rank(comm) == 0)
    ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
}
