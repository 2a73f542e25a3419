/* pattern.h — the call sequence of the synthetic job, shared by the trace generator
 * (bench/synth/gen_traces.c, which writes it without running anything) and the
 * stand-in program the recorder records (tests/scale/pattern_prog.c, which issues it),
 * so the two traces must compare alike.
 *
 * Every rank runs ncalls steps. Step i issues one collective on communicator 0 (the
 * world), and every 16th step one more on communicator 1 + (i/16) % (ncomms-1). The
 * collective is chosen by its seq on its communicator. One rank may diverge at one
 * (communicator, seq): see enum synth_kind. Header-only, no dependencies. */
#ifndef LS_SYNTH_PATTERN_H
#define LS_SYNTH_PATTERN_H

#include <stdint.h>
#include <string.h>

enum synth_op { SY_ALLREDUCE, SY_BROADCAST, SY_ALLGATHER, SY_REDUCE, SY_NOPS };
static const char *const synth_op_names[SY_NOPS] = {"ncclAllReduce", "ncclBroadcast", "ncclAllGather", "ncclReduce"};

enum synth_kind { SK_NONE, SK_OP, SK_COUNT, SK_DTYPE, SK_REDOP, SK_ROOT, SK_SKIP };
static const char *const synth_kind_names[] = {"none", "op", "count", "dtype", "redop", "root", "skip"};

#define SY_F32 7    /* ncclFloat32 */
#define SY_INT32 2  /* ncclInt32 */
#define SY_SUM 0    /* ncclSum */
#define SY_MAX 2    /* ncclMax */
#define SY_NOVAL (-1)

struct synth_call {
  int op;           /* enum synth_op */
  uint64_t count;
  int dtype, redop, root;
};

struct synth_job {
  int ncomms;       /* >= 1 */
  uint64_t ncalls;  /* steps per rank */
  int div_rank;     /* -1: no divergence */
  int div_comm;
  uint64_t div_seq;
  int kind;         /* enum synth_kind */
};

/* "op", ... -> enum synth_kind, or -1. */
static inline int synth_kind_of(const char *s) {
  for (int k = 0; k < (int)(sizeof synth_kind_names / sizeof *synth_kind_names); k++)
    if (!strcmp(s, synth_kind_names[k]))
      return k;
  return -1;
}

/* The communicators step i issues on: out[0] = 0, out[1] = another one every 16th step. */
static inline int synth_step_comms(const struct synth_job *j, uint64_t i, int out[2]) {
  out[0] = 0;
  if (j->ncomms > 1 && i % 16 == 15) {
    out[1] = 1 + (int)((i / 16) % (uint64_t)(j->ncomms - 1));
    return 2;
  }
  return 1;
}

/* The call a rank issues at seq on comm; 0 when it issues nothing there (a skip: the
 * rank stops issuing altogether from that call on). At a root or redop divergence every
 * rank issues an op that has the field, so the class is the field's, not op-mismatch. */
static inline int synth_call_at(const struct synth_job *j, int rank, int comm, uint64_t seq, struct synth_call *c) {
  c->op = (int)(seq % SY_NOPS);
  int at = j->kind != SK_NONE && comm == j->div_comm && seq == j->div_seq;
  if (at && j->kind == SK_REDOP)
    c->op = SY_ALLREDUCE;
  if (at && j->kind == SK_ROOT)
    c->op = SY_BROADCAST;
  int odd = at && rank == j->div_rank;
  if (odd && j->kind == SK_SKIP)
    return 0;
  if (odd && j->kind == SK_OP)
    c->op = c->op == SY_ALLGATHER ? SY_BROADCAST : SY_ALLGATHER;
  c->count = seq % 1000 + 1 + (odd && j->kind == SK_COUNT);
  c->dtype = odd && j->kind == SK_DTYPE ? SY_INT32 : SY_F32;
  c->redop = c->op == SY_ALLREDUCE || c->op == SY_REDUCE ? (odd && j->kind == SK_REDOP ? SY_MAX : SY_SUM) : SY_NOVAL;
  c->root = c->op == SY_BROADCAST || c->op == SY_REDUCE ? (odd && j->kind == SK_ROOT ? 1 : 0) : SY_NOVAL;
  return 1;
}

#endif
