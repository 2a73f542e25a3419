/* unknown_rule.c — an annotation naming a rule that does not exist (a typo): --verify must
 * say so, not report the expectation as merely unmet. */
#include <nccl.h>
void f(ncclComm_t comm, float *buf, cudaStream_t s) {
  int r;
  ncclCommUserRank(comm, &r);
  if (r == 0)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-colective}}
}
