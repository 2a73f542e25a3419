/* rank.c — the helper whose result depends on the rank (summarized across TUs). */
#include "sample_nccl.h"
int sample_rank(ncclComm_t comm) {
  int r = 0;
  ncclCommUserRank(comm, &r);
  return r;
}
