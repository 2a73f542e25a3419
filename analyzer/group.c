/* group.c — group depth over a function's CFG, sparse's lock-context walk: bit LS_GZ+d of a
 * block's gin/gout mask means depth d is possible there, relative to the function's entry.
 * Also what the rules read of it (checks/check.h: group ends below zero, the starts, send/recv
 * outside any group) and the summary its callers use: a function that only opens (+1) or
 * only closes (-1) a group is a begin/end helper, accounted for at each call. */
#include <stdlib.h>

#include "checks/check.h"

#define GZ LS_GZ /* bit GZ+d of a mask: depth d is possible */
static uint32_t shift(uint32_t m, int d) { return d >= 0 ? m << d : m >> -d; }


int ls_group_delta(const ls_node *n) {
  if (n->kind != CXCursor_CallExpr || !n->ent)
    return 0;
  if (n->ent->rule)
    return n->ent->rule->kind == LS_KIND_GROUP_START ? 1 : n->ent->rule->kind == LS_KIND_GROUP_END ? -1 : 0;
  if (n->ent->def && n->ent->def->group_helper)
    return n->ent->def->group_net;
  return 0;
}

static void group_flow(ls_func *f) {
  for (int i = 0; i < f->nblocks; i++)
    f->blocks[i]->gin = f->blocks[i]->gout = 0, f->blocks[i]->gdone = 0;
  ls_block **q = malloc(((size_t)f->nblocks + 1) * sizeof *q);
  if (!q)
    abort();
  int qh = 0, qt = 0, n = f->nblocks + 1;
  f->entry->gin = 1u << GZ;
  q[qt++ % n] = f->entry;
  f->entry->gdone = 1;
  while (qh != qt) {
    ls_block *k = q[qh++ % n];
    qh %= n;
    qt %= n;
    k->gdone = 0;
    uint32_t m = k->gin;
    for (int i = 0; i < k->nitems; i++) {
      int d = ls_group_delta(k->items[i]);
      if (d)
        m = shift(m, d);
    }
    k->gout = m;
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      if ((t->gin | m) != t->gin) {
        t->gin |= m;
        if (!t->gdone) {
          t->gdone = 1;
          q[qt++ % n] = t;
          qt %= n;
        }
      }
    }
  }
  free(q);
}

int ls_mask_depth(uint32_t m) {
  for (int d = -GZ; d < 32 - GZ; d++)
    if (m == 1u << (GZ + d))
      return d;
  return 99;
}

void ls_group_analyze(ls_check_ctx *c) {
  ls_func *f = c->f;
  group_flow(f);
  c->below.n = c->starts.n = c->p2p.n = 0;
  c->first_start = NULL;
  int nends = 0;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    uint32_t m = k->gin;
    if (!m)
      continue;
    for (int i = 0; i < k->nitems; i++) {
      ls_node *n = k->items[i];
      int d = ls_group_delta(n);
      if (d < 0 && (m & (1u << GZ)))
        ls_vec_push(&c->below, n);
      if (d < 0)
        nends++;
      if (d > 0 && n->ent->rule && !c->first_start)
        c->first_start = n;
      if (d > 0)
        ls_vec_push(&c->starts, n);
      if (d)
        m = shift(m, d);
      if (ls_is_p2p(n) && (m & (1u << GZ))) {
        int req = 0;
        for (int a = 0; a < n->ent->rule->nargs; a++)
          req |= n->ent->rule->roles[a] == LS_ROLE_REQUEST;
        if (!req) {
          ls_vec_push(&c->p2p, n);
          ls_vec_push(&c->p2p, k); /* pairs: call, its block */
        }
      }
    }
  }
  uint32_t all = 0;
  for (int i = 0; i < f->exit->npred; i++)
    all |= f->exit->pred[i]->gout;
  int net = ls_mask_depth(all);
  /* a pure begin helper only opens, a pure end helper only closes (sparse's +1/-1) */
  if (f->ent && f->ent->ncalls > 0 && ((net == 1 && !nends) || (net == -1 && !c->starts.n))) {
    f->group_net = net; /* a begin/end helper: its callers account for it */
    f->group_helper = 1;
  }
}
