/* rank-divergent-collective — collectives control-dependent on a rank-dependent branch whose
 * alternatives issue different fingerprint sequences (compared by the driver's sequence
 * hashes, seq.c), a loop whose trip count depends on the rank around collectives, and the
 * ranks that leave early (abort, exit, return) before collectives the others still issue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "split_comm.h"

/* buf[*k...] = s, as much as fits before cap (NUL-terminated) */
static void app(char *buf, size_t cap, size_t *k, const char *s) {
  for (; *s && *k + 1 < cap; s++)
    buf[(*k)++] = *s;
  buf[*k] = 0;
}
static void app_u(char *buf, size_t cap, size_t *k, unsigned v) {
  char t[12], *d = t + sizeof t;
  *--d = 0;
  do
    *--d = (char)('0' + v % 10);
  while (v /= 10);
  app(buf, cap, k, d);
}

/* `outer`: the branch the report is about; a nested condition on its line is told apart
 * by its column (`rank == 0 && i % 2` is two conditions on one line). */
static void seq_text(char *buf, size_t cap, const struct ls_evlist *l, const ls_node *outer) {
  buf[0] = 0;
  size_t k = 0;
  if (!l->n)
    snprintf(buf, cap, "no collective");
  int run = 0; /* calls so far decided by the same nested branch or loop */
  for (int i = 0; i < l->n && k + 1 < cap; i++) { /* appends by hand: one snprintf per call cost ~1,000 */
    const char *part[3] = {i ? ", " : "", ls_callee(l->v[i]), ls_is_coll(l->v[i]) ? "" : "() (issues collectives)"};
    for (int j = 0; j < 3; j++)
      for (const char *t = part[j]; *t && k + 1 < cap; t++)
        buf[k++] = *t;
    buf[k] = 0;
    const ls_block *w = l->why[i];
    run = w && i && l->why[i - 1] == w ? run + 1 : 1;
    if (!w || (i + 1 < l->n && l->why[i + 1] == w))
      continue;
    /* " (these N depending on the condition at line L, column C)" and the like, appended
     * by hand like the calls (three snprintf per group cost ~3,000 instructions) */
    app(buf, cap, &k, " (");
    if (run > 1) {
      app(buf, cap, &k, "these ");
      app_u(buf, cap, &k, (unsigned)run);
      app(buf, cap, &k, " ");
    }
    if (!w->cond) {
      app(buf, cap, &k, "on some paths only)");
      continue;
    }
    app(buf, cap, &k, w->is_loop ? "repeated by the loop at line " : "depending on the condition at line ");
    app_u(buf, cap, &k, w->cond->line);
    if (outer && w->cond->line == outer->line && w->cond->file == outer->file) {
      app(buf, cap, &k, ", column ");
      app_u(buf, cap, &k, w->cond->col);
    }
    app(buf, cap, &k, ")");
  }
}

/* ---- a rank-dependent exit behind a nested uniform condition ----
 * `if (rank == 0) { if (!p) abort(); } MPI_Barrier(...)`: the inner branch is uniform, so the
 * sequence hashes skip its abort like any error exit, but only the ranks on one side of the
 * outer branch can take it. A block that ends in abort/exit/throw and is reachable from one
 * successor of the rank-dependent branch only (without passing the branch again) is such an
 * exit; the survivors' first collective after it is what the exiting ranks skip. Inside a
 * loop (cyc) a return counts too, and b's own successors. The two reachability walks are
 * bounded, so many branches in one long function stay linear. */
#define NX_BUDGET 512
/* A helper's exception passed on (a call that may throw): an error path inside the helper,
 * like its exit() would be, not an exit the branch chooses. */
static int thrown_by_callee(const ls_block *k) { return k->thrown && k->thrown->kind == CXCursor_CallExpr; }
static int check_nested_exit(ls_check_ctx *c, ls_block *b, int cyc) {
  ls_func *f = c->f;
  if (!f->abort_blk || (!f->abort_blk->npred && !cyc) || b->nsucc != 2)
    return 0;
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * 2 * sizeof *stk);
  if (!stk)
    abort();
  /* side 0 marks gen; side 1 marks gen+2, and blocks side 0 reached become gen+3 (both) */
  c->gen += 4;
  unsigned g0 = c->gen - 3, g1 = c->gen - 1;
  int budget = NX_BUDGET, ok = 1;
  ls_block *hit = NULL;
  {
    ls_block *s = b->succ[0];
    int sp = 0;
    if (s != b) {
      s->mark = g0;
      stk[sp++] = s;
    }
    while (sp && ok) {
      ls_block *k = stk[--sp];
      if (--budget < 0)
        ok = 0;
      if (k == f->exit || k == f->vexit || k == f->abort_blk || k == f->killall)
        continue;
      for (int i = 0; i < k->nsucc; i++)
        if (k->succ[i] != b && k->succ[i]->mark != g0) {
          k->succ[i]->mark = g0;
          stk[sp++] = k->succ[i];
        }
    }
    s = b->succ[1];
    sp = 0;
    if (s != b && ok) {
      s->mark = s->mark == g0 ? g1 + 1 : g1;
      stk[sp++] = s;
    }
    while (sp && ok) {
      ls_block *k = stk[--sp];
      if (--budget < 0)
        ok = 0;
      if (k == f->exit || k == f->vexit || k == f->abort_blk || k == f->killall)
        continue;
      for (int i = 0; i < k->nsucc; i++) {
        ls_block *t = k->succ[i];
        if (t == b || t->mark == g1 || t->mark == g1 + 1)
          continue;
        t->mark = t->mark == g0 ? g1 + 1 : g1;
        stk[sp++] = t;
      }
    }
  }
  /* inside a loop, a side that leaves at once is the exit (the other side alone reaches
   * everything after the loop, its later error returns included) */
  for (int i = 0; cyc && ok && i < 2 && !hit; i++)
    for (int j = 0; j < b->succ[i]->nsucc; j++)
      if ((b->succ[i]->succ[j] == f->abort_blk && !thrown_by_callee(b->succ[i])) || b->succ[i]->succ[j] == f->exit)
        hit = b->succ[i];
  /* one-sided blocks: marked g0 only (side 0) or g1 only (side 1) */
  for (int i = 0; i < f->nblocks && ok && !hit; i++) {
    ls_block *k = f->blocks[i];
    if ((k->mark != g0 && k->mark != g1) || (!cyc && (k == b->succ[0] || k == b->succ[1])))
      continue; /* b's own successors: check_branch's direct abort case */
    for (int j = 0; j < k->nsucc; j++)
      if ((k->succ[j] == f->abort_blk && !thrown_by_callee(k)) || (cyc && k->succ[j] == f->exit))
        hit = k;
  }
  free(stk);
  if (!hit)
    return 0;
  /* the survivors: from the branch that leads to the exit, the other way on */
  ls_block *from = NULL;
  for (int i = 0; i < f->nblocks && !from; i++) {
    ls_block *k = f->blocks[i];
    if (k->nsucc < 2 || (k->mark != g0 && k->mark != g1 && k != b))
      continue;
    int leads = 0;
    for (int j = 0; j < k->nsucc; j++)
      leads |= k->succ[j] == hit;
    for (int j = 0; j < k->nsucc && leads; j++)
      if (k->succ[j] != hit && (cyc || ls_seq_of(c, k->succ[j]).len > 0))
        from = k->succ[j];
  }
  if (!from)
    return 0;
  struct ls_evlist la = {.n = 0};
  ls_walk_fresh(c, from, f->vexit, &la, 0);
  if (!la.n || !ls_is_coll(la.v[0]))
    return 0;
  ls_node *at = la.v[0], *cn = b->cond, *ex = hit->nitems ? hit->items[hit->nitems - 1] : cn;
  char msg[1024];
  snprintf(msg, sizeof msg, "collective '%s' is skipped by ranks that leave early at line %u: the exit condition depends on the rank",
           ls_callee(at), ex->line);
  ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_RANK_DIVERGENT_COLLECTIVE), at->file, at->line, at->col, msg);
  if (!fd)
    return 1;
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
  ls_check_origin_notes(c, fd, b->cond_taint);
  ls_vec_push(&fd->notes, ls_check_loc(c->p, ex->file, ex->line, ex->col,
                                "only ranks on one side of that condition can leave here"));
  char sa[400], m1[512], key[1024];
  seq_text(sa, sizeof sa, &la, cn);
  ls_str2(m1, sizeof m1, "the ranks that go on issue: ", sa);
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, m1));
  size_t k = ls_key_cat(key, sizeof key, 0, "X", "");
  for (int j = 0; j < la.n; j++) {
    ls_vec_push(&fd->sites, ls_check_loc(c->p, la.v[j]->file, la.v[j]->line, la.v[j]->col, ls_callee(la.v[j])));
    if (k < sizeof key)
      k = ls_key_cat(key, sizeof key, k, ",", ls_callee(la.v[j]));
  }
  fd->seqkey = ls_strdup(c->p->arena, key);
  ls_errpath_tag(c, fd, ls_errpath_skip(c, b, at));
  return 1;
}

/* ---- a finalize of the whole API on one side of a rank-dependent branch ----
 * `if (rank == 3) MPI_Finalize(); MPI_Barrier(...)`: both sides reach the join alike, but the
 * ranks that finalized can issue no collective of that API after it, so the others wait in
 * the first one. A finalize that names no communicator (MPI_Finalize, not ncclCommFinalize)
 * on one side only, and a collective of its API after the join, is the finding; a finalize
 * on both sides (or after the join, on every path) is how programs end and stays silent. */
static const ls_rule_fn *job_finalize(const ls_node *n) {
  const ls_rule_fn *r = n->kind == CXCursor_CallExpr && n->ent ? n->ent->rule : NULL;
  if (!r || strcmp(r->kind_name, "comm_finalize"))
    return NULL;
  for (int i = 0; i < r->nargs; i++)
    if (r->roles[i] == LS_ROLE_COMM)
      return NULL;
  return r;
}

/* The first job-wide finalize between side s of b and b's join (bounded walk, not through b). */
static ls_node *side_finalize(ls_check_ctx *c, ls_block *b, ls_block *s, ls_block **stk) {
  ls_func *f = c->f;
  unsigned g = ++c->gen;
  int sp = 0, budget = NX_BUDGET;
  if (s == b || s == b->ipdom)
    return NULL;
  s->mark = g;
  stk[sp++] = s;
  while (sp && budget-- > 0) {
    ls_block *k = stk[--sp];
    if (k == f->exit || k == f->vexit || k == f->abort_blk || k == f->killall)
      continue;
    for (int i = 0; i < k->nitems; i++)
      if (job_finalize(k->items[i]))
        return k->items[i];
    for (int i = 0; i < k->nsucc; i++) {
      ls_block *t = k->succ[i];
      if (t != b && t != b->ipdom && t->mark != g) {
        t->mark = g;
        stk[sp++] = t;
      }
    }
  }
  return NULL;
}

static void check_finalize_side(ls_check_ctx *c, ls_block *b) {
  ls_func *f = c->f;
  ls_block *P = b->ipdom;
  if (b->is_loop || b->nsucc != 2 || !P || P == f->vexit || P == f->exit ||
      !ls_func_calls_kind(c->p, f, "comm_finalize"))
    return;
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
  if (!stk)
    abort();
  ls_node *fin[2];
  for (int i = 0; i < 2; i++)
    fin[i] = side_finalize(c, b, b->succ[i], stk);
  free(stk);
  if (!fin[0] == !fin[1])
    return;
  ls_node *fz = fin[0] ? fin[0] : fin[1];
  const char *api = fz->ent->rule->api;
  struct ls_evlist la = {.n = 0};
  ls_walk_fresh(c, P, f->vexit, &la, 0);
  ls_node *at = NULL;
  for (int j = 0; j < la.n && !at; j++)
    if (ls_is_coll(la.v[j]) && api && la.v[j]->ent->rule->api && !strcmp(la.v[j]->ent->rule->api, api))
      at = la.v[j];
  if (!at)
    return;
  ls_node *cn = b->cond;
  char msg[1024];
  snprintf(msg, sizeof msg, "collective '%s' cannot be issued by the ranks that called '%s' at line %u on one side of the rank-dependent branch at line %u: the others wait for them here",
           ls_callee(at), ls_callee(fz), fz->line, cn->line);
  ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_RANK_DIVERGENT_COLLECTIVE), at->file, at->line, at->col, msg);
  if (!fd)
    return;
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
  ls_check_origin_notes(c, fd, b->cond_taint);
  ls_vec_push(&fd->notes, ls_check_loc(c->p, fz->file, fz->line, fz->col,
                                "only ranks on one side of that condition shut the library down here, and their path goes on"));
  char key[1024];
  size_t k = ls_key_cat(key, sizeof key, 0, "F", ls_callee(fz));
  ls_vec_push(&fd->sites, ls_check_loc(c->p, fz->file, fz->line, fz->col, ls_callee(fz)));
  ls_vec_push(&fd->sites, ls_check_loc(c->p, at->file, at->line, at->col, ls_callee(at)));
  if (k < sizeof key)
    ls_key_cat(key, sizeof key, k, ",", ls_callee(at));
  fd->seqkey = ls_strdup(c->p->arena, key);
}

/* b lies on a cycle: reached again from one of its successors (bounded search) */
static int on_cycle(ls_check_ctx *c, ls_block *b) {
  ls_func *f = c->f;
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
  if (!stk)
    abort();
  unsigned g = ++c->gen;
  int sp = 0, budget = NX_BUDGET, cyc = 0;
  for (int i = 0; i < b->nsucc; i++)
    if (b->succ[i]->mark != g) {
      b->succ[i]->mark = g;
      stk[sp++] = b->succ[i];
    }
  while (sp && !cyc && budget-- > 0) {
    ls_block *k = stk[--sp];
    for (int i = 0; i < k->nsucc && !cyc; i++) {
      if (k->succ[i] == b)
        cyc = 1;
      else if (k->succ[i]->mark != g) {
        k->succ[i]->mark = g;
        stk[sp++] = k->succ[i];
      }
    }
  }
  free(stk);
  return cyc;
}

/* ---- two branches on one condition ----
 * `if (r % 2) A(); if (!(r % 2)) A();`: each branch alone has a side without A, but every
 * rank issues A once, at the first branch or at the second. b1's join is b2 (nothing issued
 * between), b2's condition is b1's or its negation, its variables unchanged on the way:
 * the ranks on each side of b1 take a known side of b2, and what the two groups issue from
 * b1 to b2's join is compared. */
static int sides_of_pair(ls_check_ctx *c, ls_block *b1, ls_block *b2) {
  ls_func *f = c->f;
  if (!b1 || !b2 || b1->nsucc != 2 || b2->nsucc != 2 || b1->is_loop || b2->is_loop || !b1->cond || !b2->cond ||
      b1->ipdom != b2 || !b2->ipdom)
    return 0;
  for (int i = 0; i < b2->nitems; i++) {
    uint64_t t;
    if (ls_event_token(c, b2->items[i], &t))
      return 0;
  }
  int rel = ls_cond_relation(f, b1->cond, b2->cond);
  if (rel < 0 || !ls_cond_kept(f, b1->cond, b1, b2))
    return 0;
  struct ls_seq j2 = ls_seq_of(c, b2->ipdom), j1 = ls_seq_of(c, b2), side[2];
  for (int s = 0; s < 2; s++) {
    struct ls_seq x1 = ls_seq_of(c, b1->succ[s]), x2 = ls_seq_of(c, b2->succ[rel ? s : 1 - s]);
    if (x1.ends || x2.ends)
      return 0;
    if (x1.stop != j1.stop || x1.len < j1.len || x1.ends != j1.ends || x2.stop != j2.stop || x2.len < j2.len ||
        x2.ends != j2.ends)
      return 0; /* not a region of its join (a loop around) */
    struct ls_seq r1 = ls_seq_region(x1, j1), r2 = ls_seq_region(x2, j2);
    side[s] = ls_seq_cat(r1, r2);
  }
  return side[0].h == side[1].h && side[0].len == side[1].len;
}

static int paired(ls_check_ctx *c, ls_block *b) {
  ls_func *f = c->f;
  if (sides_of_pair(c, b, b->ipdom))
    return 1;
  for (int i = 0; i < f->nblocks; i++)
    if (f->blocks[i]->ipdom == b && f->blocks[i]->cond_taint && sides_of_pair(c, f->blocks[i], b))
      return 1;
  return 0;
}

/* ---- an else-if chain over rank values with no final else ----
 * `if (r == 0) A(); else if (r == 1) A(); else if (r == 2) A();`: every arm issues the same,
 * and only the ranks the chain names do; the rest fall through with nothing. One finding at
 * the head names the values, not one per arm. */
#define CHAIN_MAX 16
static ls_node *eq_test(ls_node *cond, long long *v) {
  ls_node *n = cond;
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr) && n->nkids == 1)
    n = n->kids[0];
  if (!n || n->kind != CXCursor_BinaryOperator || n->op != CXBinaryOperator_EQ || n->nkids != 2)
    return NULL;
  for (int s = 0; s < 2; s++) {
    ls_node *k = n->kids[1 - s];
    while (k && (k->kind == CXCursor_ParenExpr || k->kind == CXCursor_UnexposedExpr) && k->nkids == 1)
      k = k->kids[0];
    if (k && k->ilit) {
      *v = k->ival;
      return n->kids[s];
    }
  }
  return NULL;
}

static int same_var(ls_func *f, ls_node *a, ls_node *b) {
  /* `a == 0` has the meaning of `b == 0` exactly when a and b are the same expression */
  ls_node x = {.kind = CXCursor_BinaryOperator, .op = CXBinaryOperator_EQ, .nkids = 2};
  ls_node y = x, zero = {.kind = CXCursor_IntegerLiteral, .ilit = 1};
  ls_node *kx[2] = {a, &zero}, *ky[2] = {b, &zero};
  x.kids = kx;
  y.kids = ky;
  return ls_cond_relation(f, &x, &y) == 1;
}

/* The chain that starts at head (its blocks in order), or 0 when it is not one that qualifies. */
static int chain_at(ls_check_ctx *c, ls_block *head, ls_block **v, long long *vals) {
  ls_func *f = c->f;
  ls_block *J = head->ipdom;
  long long val;
  ls_node *var = head->cond ? eq_test(head->cond, &val) : NULL;
  if (!var || !J || head->is_loop)
    return 0;
  struct ls_seq sj = ls_seq_of(c, J), arm = {0};
  int n = 0;
  for (ls_block *k = head; k && n < CHAIN_MAX; k = k->succ[1]) {
    long long kv;
    ls_node *kvar = k->nsucc == 2 && k->cond && k->cond_taint ? eq_test(k->cond, &kv) : NULL;
    if (!kvar || (k != head && (k->npred != 1 || k->pred[0] != v[n - 1])) || (n && !same_var(f, var, kvar)))
      break;
    for (int i = 0; i < k->nitems && k != head; i++) {
      uint64_t t;
      if (ls_event_token(c, k->items[i], &t))
        return 0;
    }
    for (int i = 0; i < n; i++)
      if (vals[i] == kv)
        return 0;
    struct ls_seq x = ls_seq_of(c, k->succ[0]);
    if (x.ends || x.stop != sj.stop || x.len < sj.len || x.ends != sj.ends)
      return 0;
    struct ls_seq r = ls_seq_region(x, sj);
    if (!r.len || (n && (r.h != arm.h || r.len != arm.len)))
      return 0;
    arm = r;
    vals[n] = kv;
    v[n++] = k;
  }
  if (n < 2)
    return 0;
  struct ls_seq fall = ls_seq_of(c, v[n - 1]->succ[1]); /* what the other ranks do */
  if (fall.ends || fall.stop != sj.stop || fall.len != sj.len || fall.h != sj.h)
    return 0;
  return n;
}

/* 1: b is part of a chain (reported at its head, here when b is the head) */
static int check_chain(ls_check_ctx *c, ls_block *b) {
  ls_block *head = b, *v[CHAIN_MAX];
  long long vals[CHAIN_MAX];
  for (int up = 0; up < CHAIN_MAX && head->npred == 1 && head->pred[0]->nsucc == 2 && head->pred[0]->succ[1] == head &&
                   head->pred[0]->cond_taint;
       up++)
    head = head->pred[0];
  int n = 0;
  while (head != b && !(n = chain_at(c, head, v, vals))) /* the longest chain above b that holds it */
    head = head->succ[1];
  if (head == b)
    n = chain_at(c, b, v, vals);
  int in = 0;
  for (int i = 0; i < n; i++)
    in |= v[i] == b;
  if (!n || !in)
    return 0;
  if (head != b)
    return 1;
  struct ls_evlist la = {.n = 0};
  ls_walk_fresh(c, head->succ[0], head->ipdom, &la, 0);
  if (!la.n)
    return 1;
  ls_node *at = la.v[0], *cn = head->cond;
  char ranks[256], msg[1024], sa[400], m1[512], key[1024];
  size_t k = 0;
  ranks[0] = 0;
  for (int i = 0; i < n; i++) {
    char t[32];
    snprintf(t, sizeof t, "%s%lld", i ? ", " : "", vals[i]);
    app(ranks, sizeof ranks, &k, t);
  }
  snprintf(msg, sizeof msg, "%s '%s' is issued only where the value the else-if chain at line %u tests is %s; with no final else the other ranks fall through without it",
           ls_is_coll(at) ? "collective" : "call to", ls_callee(at), cn->line, ranks);
  ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_RANK_DIVERGENT_COLLECTIVE), at->file, at->line, at->col, msg);
  if (!fd)
    return 1;
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
  ls_check_origin_notes(c, fd, head->cond_taint);
  seq_text(sa, sizeof sa, &la, cn);
  ls_str2(m1, sizeof m1, "each arm issues: ", sa);
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, m1));
  ls_node *last = v[n - 1]->cond;
  ls_vec_push(&fd->notes, ls_check_loc(c->p, last->file, last->line, last->col,
                                       "the ranks that fail this last test issue: no collective"));
  size_t kk = ls_key_cat(key, sizeof key, 0, "C", "");
  for (int j = 0; j < la.n; j++) {
    ls_vec_push(&fd->sites, ls_check_loc(c->p, la.v[j]->file, la.v[j]->line, la.v[j]->col, ls_callee(la.v[j])));
    if (kk < sizeof key)
      kk = ls_key_cat(key, sizeof key, kk, ",", ls_callee(la.v[j]));
  }
  fd->seqkey = ls_strdup(c->p->arena, key);
  return 1;
}

static void check_branch(ls_check_ctx *c, ls_block *b) {
  ls_func *f = c->f;
  ls_block *P = b->ipdom;
  if (b->cond && ls_rank_fact(f, b->cond) >= 0)
    return; /* `rank < size`: every rank takes the same side */
  /* A side that dies (exit, abort, throw) issues nothing more: compare whole sequences to
   * the function exit, so the survivors' collectives count as skipped by the others. */
  int aborts = 0;
  for (int i = 0; i < b->nsucc; i++)
    aborts |= ls_seq_of(c, b->succ[i]).ends == 1;
  if (aborts)
    P = f->vexit;
  struct ls_seq sp = ls_seq_of(c, P);
  struct ls_seq r0 = {0};
  int differ = 0, have = 0;
  for (int i = 0; i < b->nsucc; i++) {
    if (ls_seq_of(c, b->succ[i]).ends == 2)
      continue; /* a job-wide abort leaves nobody waiting */
    struct ls_seq r = ls_seq_region(ls_seq_of(c, b->succ[i]), sp);
    if (have && (r.h != r0.h || r.len != r0.len))
      differ = 1;
    if (!have)
      r0 = r;
    have = 1;
  }
  if (!differ) {
    /* inside a loop an exit's sides hash alike: the loop condition's post-dominator is the
     * function's exit, which skips what follows the loop */
    int cyc = !b->is_loop && on_cycle(c, b); /* a loop condition: a rank-dependent trip count is its own finding */
    if ((cyc || !aborts) && check_nested_exit(c, b, cyc))
      return;
    check_finalize_side(c, b);
    return;
  }
  if (!aborts && (paired(c, b) || check_chain(c, b) || (!b->is_loop && ls_sides_agree(c, b, P))))
    return;
  /* Two alternatives that differ: the first successor vs the first that differs from it. */
  struct ls_evlist la = {.n = 0}, lb = {.n = 0};
  int ia = 0, ib = b->nsucc;
  while (ia < b->nsucc && ls_seq_of(c, b->succ[ia]).ends == 2)
    ia++;
  for (int i = ia + 1; i < b->nsucc; i++) {
    if (ls_seq_of(c, b->succ[i]).ends == 2)
      continue;
    struct ls_seq r = ls_seq_region(ls_seq_of(c, b->succ[i]), sp);
    if (r.h != r0.h || r.len != r0.len) {
      ib = i;
      break;
    }
  }
  if (ia >= b->nsucc || ib >= b->nsucc)
    return;
  /* b itself is not marked: a path that loops back through b issues b's calls again */
  ls_walk_fresh(c, b->succ[ia], P, &la, 0);
  ls_walk_fresh(c, b->succ[ib], P, &lb, 0);
  int i = 0;
  while (i < la.n && i < lb.n && ls_events_match(c, la.v[i], lb.v[i]))
    i++;
  ls_node *at = i < la.n ? la.v[i] : i < lb.n ? lb.v[i] : NULL;
  ls_node *other = at == (i < la.n ? la.v[i] : NULL) ? (i < lb.n ? lb.v[i] : NULL) : (i < la.n ? la.v[i] : NULL);
  if (!at) { /* the flat lists hide the difference (a nested uniform choice): point at the first */
    at = la.n ? la.v[0] : lb.n ? lb.v[0] : NULL;
    other = NULL;
  }
  if (!at)
    return; /* the difference lies in paths that do not return; nothing to point at */
  { /* on communicators split by this very condition, or re-split so that the condition is
     * the same on each one's members: whole groups agree; or of one member each */
    ls_node *all[2 * LS_MAXEV];
    int na = 0;
    for (int j = 0; j < la.n; j++)
      all[na++] = la.v[j];
    for (int j = 0; j < lb.n; j++)
      all[na++] = lb.v[j];
    if (!b->is_loop && ls_split_guarded(c->p, c->f, b->cond, all, na))
      return;
    if (ls_split_uniform(c->p, c->f, b->cond, all, na))
      return;
    if (ls_split_singleton_calls(c->p, c->f, all, na))
      return; /* each on a communicator of one member: no rank waits for another */
  }
  ls_node *cn = b->cond;
  char msg[1024], sa[400], sb[400];
  const char *what = ls_is_coll(at) ? "collective" : "call to";
  if (b->is_loop)
    snprintf(msg, sizeof msg, "%s '%s' runs a rank-dependent number of times: the loop condition at line %u depends on the rank",
             what, ls_callee(at), cn->line);
  else if (P == f->vexit && (aborts || la.exited != lb.exited || !other))
    snprintf(msg, sizeof msg, "%s '%s' is skipped by ranks that leave early at line %u: the exit condition depends on the rank",
             what, ls_callee(at), cn->line);
  else if (!other)
    snprintf(msg, sizeof msg, "%s '%s' is issued only by ranks on one side of the rank-dependent branch at line %u",
             what, ls_callee(at), cn->line);
  else if (!strcmp(ls_callee(at), ls_callee(other)))
    snprintf(msg, sizeof msg, "ranks issue '%s' with different arguments here (count, datatype, root, reduction op or communicator differ between the sides of the rank-dependent branch at line %u)",
             ls_callee(at), cn->line);
  else
    snprintf(msg, sizeof msg, "ranks issue different collectives here: '%s' on one side of the rank-dependent branch at line %u, '%s' on the other",
             ls_callee(at), cn->line, ls_callee(other));
  ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_RANK_DIVERGENT_COLLECTIVE), at->file, at->line, at->col, msg);
  if (!fd)
    return;
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
  ls_check_origin_notes(c, fd, b->cond_taint);
  seq_text(sa, sizeof sa, &la, cn);
  seq_text(sb, sizeof sb, &lb, cn);
  char m1[512];
  ls_str2(m1, sizeof m1, "one side issues: ", sa);
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, m1));
  ls_str2(m1, sizeof m1, "the other side issues: ", sb);
  ls_vec_push(&fd->notes, ls_check_loc(c->p, cn->file, cn->line, cn->col, m1));
  char key[1024];
  size_t k = ls_key_cat(key, sizeof key, 0, "A", "");
  for (int j = 0; j < la.n; j++) {
    ls_vec_push(&fd->sites, ls_check_loc(c->p, la.v[j]->file, la.v[j]->line, la.v[j]->col, ls_callee(la.v[j])));
    if (k < sizeof key)
      k = ls_key_cat(key, sizeof key, k, ",", ls_callee(la.v[j]));
  }
  if (k < sizeof key)
    k = ls_key_cat(key, sizeof key, k, "|B", "");
  for (int j = 0; j < lb.n; j++) {
    ls_vec_push(&fd->sites, ls_check_loc(c->p, lb.v[j]->file, lb.v[j]->line, lb.v[j]->col, ls_callee(lb.v[j])));
    if (k < sizeof key)
      k = ls_key_cat(key, sizeof key, k, ",", ls_callee(lb.v[j]));
  }
  fd->seqkey = ls_strdup(c->p->arena, key);
  ls_errpath_tag(c, fd, ls_errpath_skip(c, b, at));
}

void ls_check_rank_divergent_collective(ls_check_ctx *c) {
  ls_func *f = c->f;
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    if (k->cond_taint)
      check_branch(c, k);
  }
}
