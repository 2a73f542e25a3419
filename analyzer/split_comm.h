/* split_comm.h — communicators split by a rank-dependent color, and branches on that same
 * color: all ranks of each new communicator take the same side (split_comm.c). */
#ifndef LOCKSTEP_SPLIT_COMM_H
#define LOCKSTEP_SPLIT_COMM_H

#include "lint.h"

/* Records, once per program, which communicator each split call creates and its color. */
void ls_split_scan(ls_program *p);
/* 1 when every call of calls[0..n) is a collective on a communicator that was split with a
 * color this branch condition (in function f) is a function of, or a helper call whose
 * collectives all run on such communicators passed to it (and n > 0). */
int ls_split_guarded(ls_program *p, ls_func *f, ls_node *cond, ls_node *const *calls, int n);

/* 1 when comm (an expression naming a communicator) was split with a color cond is a function of. */
int ls_split_guarded_comm(ls_program *p, ls_func *f, ls_node *cond, ls_node *comm);

/* What the rank facts say of cond in f (a rank r of a communicator is in [0, n) for its size
 * n, n >= 1): 1 always true, 0 always false, -1 not decided. */
int ls_rank_fact(ls_func *f, ls_node *cond);

/* Conditions a and b in f compared by meaning (the rank facts included): 1 the same, 0 one
 * the negation of the other, -1 not known. */
int ls_cond_relation(ls_func *f, ls_node *a, ls_node *b);
/* 1 when nothing on the way from branch `from` to block `to` (its items included) writes a
 * variable cond reads, cond reads only locals and parameters, and none of them has its
 * address handed to a function. */
int ls_cond_kept(ls_func *f, ls_node *cond, ls_block *from, ls_block *to);

/* 1 when rhs names a communicator made only by splits of lhs (`MPI_Comm_split(comm, ...,
 * &half); comm = half;`, recursive bisection): each rank keeps its own group's part of the
 * communicator it held, which is no choice between communicators. */
int ls_split_resplit(ls_program *p, const ls_entity *lhs, ls_node *rhs);

/* 1 when the branch or loop condition cond (in f) is uniform per communicator E and every call
 * of calls[0..n) is a collective on E, where f re-splits E by a color a branch decides
 * (`MPI_Comm_split(E, color, ..., &h); E = h;`): cond's values are computed only from values the
 * same on all of E's members, under branches that are too, so whole communicators agree. */
int ls_split_uniform(ls_program *p, ls_func *f, ls_node *cond, ls_node *const *calls, int n);

/* 1 when val, an argument of a collective on comm in f, is the same on every rank of comm:
 * comm (a local, global or field) is only ever split by its parent's own rank, one member
 * each; or val is a field written only with values uniform on the parent, or with per-rank
 * ones beside the split that makes field comm such a singleton, and every creation of comm
 * writes val beside it (f writing neither). */
int ls_split_uniform_on(ls_program *p, ls_func *f, ls_node *val, ls_node *comm);

/* 1 when every call of calls[0..n) is a collective on a communicator of one member (above):
 * a rank that issues it waits for nobody, so which ranks do cannot diverge (and n > 0). */
int ls_split_singleton_calls(ls_program *p, ls_func *f, ls_node *const *calls, int n);

#endif
