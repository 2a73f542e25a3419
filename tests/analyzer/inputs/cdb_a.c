/* cdb_a.c — half of the cross-TU test: the rank comes from here. */
#include <nccl.h>
int my_rank(ncclComm_t comm) {
  int r = 0;
  ncclCommUserRank(comm, &r);
  return r;
}
