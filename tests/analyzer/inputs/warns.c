/* warns.c — correct NCCL code that draws compiler warnings (-Wall -Wextra): with the
 * project's -Werror they are errors to a compiler, but not to lint, which reports no
 * compiler warnings: it must stay silent (exit 0), not call the TU incomplete. */
#include <nccl.h>
#include <stdio.h>
void ok(ncclComm_t comm, float *buf, cudaStream_t s, int unused_param) {
  int unused;
  int r;
  ncclCommUserRank(comm, &r);
  printf("%d\n", "rank"); /* -Wformat */
  if (r == 0)
    ncclBroadcast(buf, buf, 4, ncclFloat, 0, comm, s);
  else
    ncclBcast(buf, 4, ncclFloat, 0, comm, s);
}
