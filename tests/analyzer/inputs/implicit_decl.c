/* implicit_decl.c — a call of an undeclared function: in C99 and later a warning that is an
 * error by default, so still an error to lint (which parses without warnings). */
#include <nccl.h>
void f(ncclComm_t comm, float *buf, cudaStream_t s) {
  ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
  undeclared_helper(buf);
}
