/* p2p-collective-order — a blocking point-to-point call on one side of a rank-dependent
 * branch whose matching call the other side issues only after a collective that the first
 * side issues after its own call: `if (rank == 0) { Recv(from 1); Bcast(); } else { Bcast();
 * if (rank == 1) Send(to 0); }`. The collective sequences agree, yet rank 0 waits in the
 * receive for a send that rank 1 makes only once the broadcast is done, which needs rank 0.
 * Blocking calls only (rules kind blocking_p2p); a match is the opposite direction on the
 * same communicator (by its text), peers and tags are not compared, and both calls must lie
 * on their own side (the report walks follow one path, so past the join they cannot tell
 * which ranks take a call). */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static int is_send(const ls_node *n) { return !strcmp(n->ent->rule->op, "send"); }

static int listed(const struct ls_evlist *l, const ls_node *n) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == n)
      return 1;
  return 0;
}

/* The normalized text of call n's communicator argument ("" when it has none). */
static const char *comm_text(ls_check_ctx *c, const ls_node *n) {
  const ls_rule_fn *r = n->ent->rule;
  for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++)
    if (r->roles[i] == LS_ROLE_COMM)
      return ls_norm_text(c, n->kids[i]);
  return "";
}

/* Side a blocks in a p2p call before its k-th collective; side b issues the match only after
 * its own k-th collective, the same operation: report at a's call. */
static int cross(ls_check_ctx *c, ls_block *br, const struct ls_evlist *a, const struct ls_evlist *b) {
  int ka = 0;
  for (int i = 0; i < a->n; i++) {
    ls_node *p = a->v[i];
    if (ls_is_coll(p)) {
      ka++;
      continue;
    }
    if (listed(b, p))
      continue; /* after the join: both sides issue it */
    /* a's next collective after p: the one b must reach before its match */
    ls_node *ca = NULL;
    for (int j = i + 1; j < a->n && !ca; j++)
      if (ls_is_coll(a->v[j]))
        ca = a->v[j];
    if (!ca)
      continue;
    const char *cm = comm_text(c, p);
    int kb = 0;
    ls_node *cb = NULL, *q = NULL;
    for (int j = 0; j < b->n && !q; j++) {
      ls_node *m = b->v[j];
      if (ls_is_coll(m)) {
        if (kb++ == ka)
          cb = m;
        continue;
      }
      /* a call both walks reach lies past the join, where lint cannot tell which ranks
       * take it: only a match on b's side alone counts */
      if (is_send(m) != is_send(p) && !strcmp(comm_text(c, m), cm) && !listed(a, m))
        q = m;
    }
    if (!q || !cb || cb->ent != ca->ent)
      continue; /* no match, or it comes before the collective (or the sequences differ) */
    ls_node *cn = br->cond;
    char msg[768];
    snprintf(msg, sizeof msg, "'%s' waits for '%s' at line %u, which the ranks on the other side of the rank-dependent branch at line %u issue only after '%s' at line %u, a collective this side reaches only after this call: the ranks deadlock%s",
             ls_callee(p), ls_callee(q), q->line, cn->line, ls_callee(cb), cb->line,
             is_send(p) && strcmp(ls_callee(p), "MPI_Ssend") ? " (unless MPI buffers the message)" : "");
    ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_P2P_COLLECTIVE_ORDER), p->file, p->line, p->col, msg);
    if (!fd)
      return 1;
    ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
    ls_check_origin_notes(c, fd, br->cond_taint);
    ls_vec_push(&fd->notes, ls_check_loc(c->p, ca->file, ca->line, ca->col, "this side's collective, after the blocking call"));
    ls_vec_push(&fd->notes, ls_check_loc(c->p, cb->file, cb->line, cb->col, "the other side's collective, where it waits"));
    ls_vec_push(&fd->notes, ls_check_loc(c->p, q->file, q->line, q->col, "the matching call, after the collective"));
    ls_vec_push(&fd->sites, ls_check_loc(c->p, p->file, p->line, p->col, ls_callee(p)));
    ls_vec_push(&fd->sites, ls_check_loc(c->p, cb->file, cb->line, cb->col, ls_callee(cb)));
    ls_vec_push(&fd->sites, ls_check_loc(c->p, q->file, q->line, q->col, ls_callee(q)));
    char key[256];
    size_t k = ls_key_cat(key, sizeof key, 0, ls_callee(p), ",");
    k = ls_key_cat(key, sizeof key, k, ls_callee(cb), ",");
    ls_key_cat(key, sizeof key, k, ls_callee(q), "");
    fd->seqkey = ls_strdup(c->p->arena, key);
    return 1;
  }
  return 0;
}

void ls_check_p2p_collective_order(ls_check_ctx *c) {
  ls_func *f = c->f;
  if (!ls_func_calls_kind(c->p, f, "blocking_p2p"))
    return;
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *b = f->blocks[i];
    if (!b->cond_taint || b->is_loop || b->nsucc != 2)
      continue;
    struct ls_evlist s[2];
    for (int j = 0; j < 2; j++) {
      s[j].n = s[j].exited = 0;
      ls_walk_fresh(c, b->succ[j], f->vexit, &s[j], 2);
    }
    if (!cross(c, b, &s[0], &s[1]))
      cross(c, b, &s[1], &s[0]);
  }
}
