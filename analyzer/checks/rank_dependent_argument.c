/* rank-dependent-argument — a collective's count, datatype, root, reduction op or counts
 * array that depends on the rank, read with the flow-sensitive state at the call (taint.c's
 * view of the function's locals: `MPI_Bcast(&n, ...)` makes n uniform from there on). */
#include <stdio.h>

#include "checks/check.h"

static void check_args(ls_check_ctx *c, const uint64_t *st, ls_node *n) {
  const ls_rule_fn *r = n->ent->rule;
  static const char *rn[] = {[LS_ROLE_COUNT] = "count", [LS_ROLE_DTYPE] = "datatype", [LS_ROLE_ROOT] = "root",
                             [LS_ROLE_REDOP] = "reduction op", [LS_ROLE_COUNTS] = "counts"};
  for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++) {
    enum ls_role ro = r->roles[i];
    if (ro != LS_ROLE_COUNT && ro != LS_ROLE_DTYPE && ro != LS_ROLE_ROOT && ro != LS_ROLE_REDOP && ro != LS_ROLE_COUNTS)
      continue;
    /* a counts array must hold the same numbers on every rank: look at its elements */
    const ls_origin *o =
        ro == LS_ROLE_COUNTS ? ls_content_taint(c->p, st, n->kids[i]) : ls_expr_taint(c->p, st, n->kids[i]);
    if (!o)
      continue;
    char msg[512];
    snprintf(msg, sizeof msg, "%s argument of '%s' depends on the rank; every rank must pass the same value",
             rn[ro], ls_callee(n));
    ls_finding *fd = ls_check_add(c, "rank-dependent-argument", n->file, n->line, n->col, msg);
    if (!fd)
      return;
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
        check_args(c, st, k->items[i]);
      ls_fs_step(c->p, &c->fs, k->items[i], st, k->impl);
    }
  }
}
