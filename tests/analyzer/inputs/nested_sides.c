/* nested_sides.c — a side that issues its collective only sometimes (under a nested
 * condition, in a loop, behind a second operand of `&&`) must say so in the report's
 * notes: "one side issues: X" next to "the other side issues: X" would contradict the
 * finding. Line numbers are part of the expectations in tests/analyzer.cmake. */
#include <nccl.h>
void nested_if(ncclComm_t comm, float *buf, cudaStream_t s, int x) {
  int r;
  ncclCommUserRank(comm, &r);
  if (r == 0) {
    if (x)
      ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
  } else {
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
  }
}
void in_loop(ncclComm_t comm, float *buf, cudaStream_t s, int n) {
  int r;
  ncclCommUserRank(comm, &r);
  if (r == 0) {
    for (int i = 0; i < n; i++) {
      ncclBroadcast(buf, buf, 4, ncclFloat, 0, comm, s);
      ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
    }
  } else {
    ncclBroadcast(buf, buf, 4, ncclFloat, 0, comm, s);
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
  }
}
void same_line(ncclComm_t comm, float *buf, cudaStream_t s, int x) {
  int r;
  ncclCommUserRank(comm, &r);
  if (r == 0 && x)
    return;
  ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
}
