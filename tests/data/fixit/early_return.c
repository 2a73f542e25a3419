/* early_return.c — a plain `return` on an error path inside a group, in the unbraced body
 * of an if: the fix-it must brace it (tests/integ/fixit_test.sh applies it and re-lints). */
#include <nccl.h>
ncclResult_t publish(float *buf, int n, ncclComm_t comm, cudaStream_t s) {
  ncclResult_t rc;
  ncclGroupStart();
  rc = ncclBroadcast(buf, buf, n, ncclFloat, 0, comm, s);
  if (rc != ncclSuccess)
    return rc; // expected-warning{{unbalanced-group}}
  rc = ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  ncclGroupEnd();
  return rc;
}
