/* rank-dependent-argument — a collective's count, datatype, root, reduction op or counts
 * array that depends on the rank, read with the flow-sensitive state at the call (taint.c's
 * view of the function's locals: `MPI_Bcast(&n, ...)` makes n uniform from there on; a counts
 * array the function has just filled alike for every member is uniform, ls_counts_filled, as is
 * one filled alike under a rank-dependent condition that a uniform guard of the call implies,
 * ls_counts_guarded), and
 * a communicator chosen by the rank. */
#include <stdio.h>

#include "checks/check.h"
#include "split_comm.h"

/* A communicator handle differs on every rank whatever it is (split results, per-device
 * tables `comms[dev]`), so its value's rank dependence says nothing. What matters is a rank
 * *choosing between* communicators: a conditional on the rank, unless both sides are
 * communicators split by the color that condition tests (each rank then picks its own
 * group's, as a split does). The rank-dependent condition's origin, else NULL. */
static const ls_origin *comm_choice(ls_check_ctx *c, const uint64_t *st, ls_node *e) {
  e = ls_strip_casts(e);
  if (!e)
    return NULL;
  if (e->kind == CXCursor_ConditionalOperator && e->nkids == 3) {
    const ls_origin *o = ls_expr_taint(c->p, st, e->kids[0]);
    if (o && !(ls_split_guarded_comm(c->p, c->f, e->kids[0], e->kids[1]) && ls_split_guarded_comm(c->p, c->f, e->kids[0], e->kids[2])))
      return o;
    o = comm_choice(c, st, e->kids[1]);
    return o ? o : comm_choice(c, st, e->kids[2]);
  }
  return NULL;
}

/* A local communicator some write chooses by the rank: a conditional (above) as its value, or
 * an assignment under a rank-dependent branch (`if (rank % 2) c = world;`). */
static const ls_origin *comm_taint(ls_check_ctx *c, const uint64_t *st, ls_node *arg) {
  const ls_origin *o = comm_choice(c, st, arg);
  ls_node *a = ls_strip_casts(arg);
  if (o || !a || a->kind != CXCursor_DeclRefExpr || !a->ent || a->ent->kind != LS_ENT_VAR || !ls_expr_taint(c->p, st, a))
    return o; /* only locals: a parameter's or a field's writes lie elsewhere */
  ls_func *f = c->f;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    for (int i = 0; i < k->nitems; i++) {
      ls_node *n = k->items[i], *rhs = NULL;
      int level = 0;
      if (n->kind == CXCursor_VarDecl && n->ent == a->ent && n->nkids)
        rhs = n->kids[n->nkids - 1];
      else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 &&
               ls_target_of(n->kids[0], &level) == a->ent && level == 0)
        rhs = n->kids[1];
      if (!rhs)
        continue;
      if (k->impl && !ls_split_resplit(c->p, a->ent, rhs))
        return k->impl;
      if ((o = comm_choice(c, NULL, rhs)))
        return o;
    }
  }
  return NULL;
}

static void check_args(ls_check_ctx *c, const ls_block *k, const uint64_t *st, ls_node *n) {
  const ls_rule_fn *r = n->ent->rule;
  static const char *rn[] = {[LS_ROLE_COUNT] = "count", [LS_ROLE_DTYPE] = "datatype", [LS_ROLE_ROOT] = "root",
                             [LS_ROLE_REDOP] = "reduction op", [LS_ROLE_COUNTS] = "counts", [LS_ROLE_COMM] = "communicator"};
  for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++) {
    enum ls_role ro = r->roles[i];
    if (ro != LS_ROLE_COUNT && ro != LS_ROLE_DTYPE && ro != LS_ROLE_ROOT && ro != LS_ROLE_REDOP && ro != LS_ROLE_COUNTS &&
        ro != LS_ROLE_COMM)
      continue;
    /* a counts array must hold the same numbers on every rank: look at its elements */
    const ls_origin *o = ro == LS_ROLE_COUNTS ? ls_content_taint(c->p, st, n->kids[i])
                         : ro == LS_ROLE_COMM ? comm_taint(c, st, n->kids[i])
                                              : ls_expr_taint(c->p, st, n->kids[i]);
    if (o && ro == LS_ROLE_COUNTS &&
        (ls_counts_filled(c->p, c->f, k, n, n->kids[i]) || ls_counts_guarded(c->p, c->f, k, n->kids[i])))
      o = NULL;
    int ci = -1; /* a value the same on every rank of the call's communicator */
    for (int j = 0; o && ro != LS_ROLE_COMM && ro != LS_ROLE_COUNTS && j < r->nargs && (unsigned)j < n->nkids; j++)
      if (r->roles[j] == LS_ROLE_COMM)
        ci = j;
    if (ci >= 0 && ls_split_uniform_on(c->p, c->f, n->kids[i], n->kids[ci]))
      o = NULL;
    if (!o)
      continue;
    char msg[512];
    if (ro == LS_ROLE_COMM)
      snprintf(msg, sizeof msg, "the communicator of '%s' is chosen by the rank; ranks that pick different communicators do not meet in this call",
               ls_callee(n));
    else
      snprintf(msg, sizeof msg, "%s argument of '%s' depends on the rank; every rank must pass the same value",
               rn[ro], ls_callee(n));
    ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_RANK_DEPENDENT_ARGUMENT), n->file, n->line, n->col, msg);
    if (!fd)
      return;
    ls_errpath_tag(c, fd, ls_errpath_at(c, n));
    ls_check_origin_notes(c, fd, o);
    ls_vec_push(&fd->sites, ls_check_loc(c->p, n->file, n->line, n->col, ls_callee(n)));
    fd->seqkey = ls_strdup(c->p->arena, rn[ro]);
    return;
  }
}

void ls_check_rank_dependent_argument(ls_check_ctx *c) {
  ls_func *f = c->f;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    int last = k->nitems - 1; /* the state matters up to the block's last collective */
    while (last >= 0 && !ls_is_coll(k->items[last]))
      last--;
    if (last < 0)
      continue;
    uint64_t *st = ls_fs_enter(&c->fs, k);
    for (int i = 0; i <= last; i++) {
      if (ls_is_coll(k->items[i]))
        check_args(c, k, st, k->items[i]);
      ls_fs_step(c->p, &c->fs, k->items[i], st, k->impl);
    }
  }
}
