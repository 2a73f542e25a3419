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

#endif
