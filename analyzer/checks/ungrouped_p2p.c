/* ungrouped-p2p — send/recv outside any group where every rank issues the same operation
 * first: unconditionally in the same order, or first on every side of a rank-dependent
 * branch. Blocking sends that wait for each other deadlock; NCCL needs the pair grouped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static void report_p2p(ls_check_ctx *c, ls_node *n, ls_node *other, const char *why) {
  char msg[512];
  snprintf(msg, sizeof msg, "'%s' outside a group and %s: without ncclGroupStart/End around the pair the ranks can deadlock",
           ls_callee(n), why);
  ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_UNGROUPED_P2P), n->file, n->line, n->col, msg);
  if (!fd)
    return;
  ls_errpath_tag(c, fd, ls_errpath_at(c, n));
  ls_vec_push(&fd->sites, ls_check_loc(c->p, n->file, n->line, n->col, ls_callee(n)));
  if (other) {
    ls_vec_push(&fd->notes, ls_check_loc(c->p, other->file, other->line, other->col, "the matching operation, also ungrouped"));
    ls_vec_push(&fd->sites, ls_check_loc(c->p, other->file, other->line, other->col, ls_callee(other)));
  }
  fd->seqkey = n->ent->rule->op;
}

void ls_check_ungrouped_p2p(ls_check_ctx *c) {
  ls_func *f = c->f;
  ls_vec *cands = &c->p2p;
  if (cands->n < 1)
    return;
  /* unconditional ones: every rank runs the same order */
  ls_node *first = NULL, *other = NULL;
  for (size_t i = 0; i + 1 < cands->n; i += 2) {
    ls_node *n = cands->v[i];
    ls_block *k = cands->v[i + 1];
    if (k->cdep)
      continue;
    if (!first)
      first = n;
    else if (!other && strcmp(n->ent->rule->op, first->ent->rule->op))
      other = n;
  }
  if (first && other)
    report_p2p(c, first, other, "issued in the same order by every rank");
  /* under rank-dependent branches: every side starting with the same operation */
  char *dep = calloc((size_t)f->nblocks, 1); /* branches some candidate depends on */
  if (!dep)
    abort();
  for (size_t i = 1; i < cands->n; i += 2)
    if (((ls_block *)cands->v[i])->cdep)
      dep[((ls_block *)cands->v[i])->cdep->id] = 1;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    if (!k->cond_taint || k->nsucc < 2 || !dep[k->id])
      continue;
    const char *op0 = NULL;
    int same = 1, mixed = 0, sides = 0;
    ls_node *at = NULL, *oth = NULL;
    for (int s = 0; s < k->nsucc; s++) {
      struct ls_evlist l = {.n = 0};
      k->mark = c->gen + 1; /* the walk's generation: it does not come back through k */
      ls_walk_fresh(c, k->succ[s], k->ipdom, &l, 1);
      ls_node *fst = NULL;
      for (int i = 0; i < l.n; i++) {
        int cand = 0;
        for (size_t j = 0; j + 1 < cands->n && !cand; j += 2)
          cand = cands->v[j] == l.v[i];
        if (!cand)
          continue;
        if (!fst)
          fst = l.v[i];
        else if (strcmp(l.v[i]->ent->rule->op, fst->ent->rule->op)) {
          mixed = 1;
          if (!oth)
            oth = l.v[i];
        }
      }
      if (!fst)
        continue;
      sides++;
      if (!op0) {
        op0 = fst->ent->rule->op;
        at = fst;
      } else if (strcmp(op0, fst->ent->rule->op)) {
        same = 0;
      }
    }
    if (sides >= 2 && same && mixed && at)
      report_p2p(c, at, oth, "every side of the rank-dependent branch starts with it");
  }
  free(dep);
}

