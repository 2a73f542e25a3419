/* pattern_prog.c — issues the synthetic job of bench/synth/pattern.h through the stand-in
 * libnccl.so.2, so the recorder writes the traces that bench/synth/gen_traces writes
 * without running anything (tests/scale/synth_check.sh compares the two).
 * usage: pattern_prog STEPS COMMS [RANK:COMM:SEQ:KIND]; rank and size from RANK/WORLD_SIZE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pattern.h"
#include "standin_prog.h"

static float buf[1024];

static ncclResult_t issue(const struct synth_call *k, ncclComm_t c) {
  switch (k->op) {
  case SY_ALLREDUCE:
    return ncclAllReduce(buf, buf, k->count, (ncclDataType_t)k->dtype, (ncclRedOp_t)k->redop, c, STREAM);
  case SY_BROADCAST:
    return ncclBroadcast(buf, buf, k->count, (ncclDataType_t)k->dtype, k->root, c, STREAM);
  case SY_ALLGATHER:
    return ncclAllGather(buf, buf, k->count, (ncclDataType_t)k->dtype, c, STREAM);
  default:
    return ncclReduce(buf, buf, k->count, (ncclDataType_t)k->dtype, (ncclRedOp_t)k->redop, k->root, c, STREAM);
  }
}

int main(int argc, char **argv) {
  int rank, world;
  standin_rank_world(&rank, &world);
  if (argc < 3) {
    fprintf(stderr, "usage: pattern_prog STEPS COMMS [RANK:COMM:SEQ:KIND]\n");
    return 2;
  }
  struct synth_job j = {.ncomms = atoi(argv[2]), .ncalls = strtoull(argv[1], NULL, 10), .div_rank = -1};
  char kind[16];
  unsigned long long seq;
  if (argc > 3 && (sscanf(argv[3], "%d:%d:%llu:%15s", &j.div_rank, &j.div_comm, &seq, kind) != 4 ||
                   (j.kind = synth_kind_of(kind)) <= 0)) {
    fprintf(stderr, "pattern_prog: bad divergence %s\n", argv[3]);
    return 2;
  }
  j.div_seq = argc > 3 ? seq : 0;
  if (j.ncomms < 1 || j.ncomms > 64)
    return 2;
  ncclComm_t comms[64];
  uint64_t seqs[64] = {0};
  for (int c = 0; c < j.ncomms; c++) {
    char name[32];
    snprintf(name, sizeof name, "synth%d", c);
    if (ncclCommInitRank(&comms[c], world, standin_uid("lockstep-scale", name), rank) != ncclSuccess)
      return 1;
  }
  int stop = 0;
  for (uint64_t i = 0; i < j.ncalls && !stop; i++) {
    int cs[2], nc = synth_step_comms(&j, i, cs);
    for (int k = 0; k < nc && !stop; k++) {
      struct synth_call call;
      if (!synth_call_at(&j, rank, cs[k], seqs[cs[k]], &call))
        stop = 1;
      else if (issue(&call, comms[cs[k]]) != ncclSuccess)
        return 1;
      else
        seqs[cs[k]]++;
    }
  }
  for (int c = 0; c < j.ncomms; c++)
    ncclCommDestroy(comms[c]);
  return 0;
}
