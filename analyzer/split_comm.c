/* split_comm.c — `MPI_Comm_split(world, rank < k, rank, &sub)` then `if (rank < k)
 * MPI_Bcast(..., sub)`: the branch depends on the rank, but every rank of `sub` has the same
 * color, so all of them take the same side; the branch selects whole communicators, not ranks
 * within one (bench/RESULTS.md class F3). A branch is let through when each collective on its
 * sides runs on a communicator split (rules kind comm_split, roles color / out_comm) with a
 * color the condition is a function of: the color expression itself, its negation, or a
 * comparison of it with a value that does not depend on the rank. Expressions are compared
 * by structure (variables by identity); the color's variables are assumed unchanged between
 * the split and the branch. */
#include "split_comm.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

struct split {
  ls_entity *comm;
  ls_node *color;
  int ambiguous; /* split more than once with different colors */
};
static struct split *splits;
static size_t nsplits;
static const ls_program *scanned;

static ls_node *strip(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr ||
               n->kind == CXCursor_CStyleCastExpr || n->kind == CXCursor_CXXStaticCastExpr ||
               n->kind == CXCursor_CXXFunctionalCastExpr) && n->nkids >= 1)
    n = n->kids[n->nkids - 1];
  return n;
}

static void append(char *b, size_t cap, const char *s) {
  size_t k = strlen(b);
  snprintf(b + k, cap - k, "%s", s);
}

/* A structural key of a side-effect-free expression; 0 when it has parts not compared here. */
static int key(ls_node *n, char *b, size_t cap) {
  n = strip(n);
  if (!n || cap < 32)
    return 0;
  switch (n->kind) {
  case CXCursor_IntegerLiteral:
  case CXCursor_DeclRefExpr:
    if (n->ilit)
      return snprintf(b, cap, "#%lld", n->ival) < (int)cap;
    if (n->kind == CXCursor_DeclRefExpr && n->ent)
      return snprintf(b, cap, "v:%s", n->ent->key) < (int)cap;
    return 0;
  case CXCursor_MemberRefExpr: {
    if (!n->ent)
      return 0;
    size_t k = 0;
    if (n->nkids) {
      if (!key(n->kids[0], b, cap))
        return 0;
      k = strlen(b);
    }
    return snprintf(b + k, cap - k, ".%s", n->ent->key) < (int)(cap - k);
  }
  case CXCursor_UnaryOperator:
    if (n->nkids != 1 || n->op == CXUnaryOperator_PostInc || n->op == CXUnaryOperator_PostDec ||
        n->op == CXUnaryOperator_PreInc || n->op == CXUnaryOperator_PreDec)
      return 0;
    snprintf(b, cap, "u%d(", n->op);
    {
      size_t k = strlen(b);
      if (!key(n->kids[0], b + k, cap - k - 1))
        return 0;
      append(b, cap, ")");
    }
    return 1;
  case CXCursor_BinaryOperator: {
    if (n->nkids != 2 || n->op == CXBinaryOperator_Assign || n->op == CXBinaryOperator_Comma)
      return 0;
    snprintf(b, cap, "b%d(", n->op);
    size_t k = strlen(b);
    if (!key(n->kids[0], b + k, cap - k - 2))
      return 0;
    append(b, cap, ",");
    k = strlen(b);
    if (!key(n->kids[1], b + k, cap - k - 1))
      return 0;
    append(b, cap, ")");
    return 1;
  }
  default:
    return 0;
  }
}

static void record(ls_entity *comm, ls_node *color) {
  for (size_t i = 0; i < nsplits; i++)
    if (splits[i].comm == comm) {
      char a[512], b[512];
      if (!key(splits[i].color, a, sizeof a) || !key(color, b, sizeof b) || strcmp(a, b))
        splits[i].ambiguous = 1;
      return;
    }
  splits = ls_xrealloc(splits, (nsplits + 1) * sizeof *splits);
  splits[nsplits++] = (struct split){comm, color, 0};
}

static int arg_role(const ls_node *call, enum ls_role role) {
  const ls_rule_fn *r = call->ent && call->ent->rule ? call->ent->rule : NULL;
  for (int i = 0; r && i < r->nargs && (unsigned)i < call->nkids; i++)
    if (r->roles[i] == role)
      return i;
  return -1;
}

static void scan(ls_node *n) {
  if (!n)
    return;
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->kind_name &&
      !strcmp(n->ent->rule->kind_name, "comm_split")) {
    int ci = arg_role(n, LS_ROLE_COLOR), oi = arg_role(n, LS_ROLE_OUT_COMM);
    int level = 1;
    ls_entity *t = ci >= 0 && oi >= 0 ? ls_target_of(n->kids[oi], &level) : NULL;
    if (t && level <= 0)
      record(t, n->kids[ci]);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan(n->kids[i]);
}

void ls_split_scan(ls_program *p) {
  nsplits = 0;
  for (size_t i = 0; i < p->funcs.n; i++) /* records only at a split call */
    if (ls_func_calls_kind(p, p->funcs.v[i], "comm_split"))
      scan(((ls_func *)p->funcs.v[i])->body);
  scanned = p;
}

static int is_cmp(int op) {
  return op == CXBinaryOperator_LT || op == CXBinaryOperator_GT || op == CXBinaryOperator_LE ||
         op == CXBinaryOperator_GE || op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE;
}

/* the branch condition is the color, its negation, or the color compared with a uniform value */
static int of_color(ls_program *p, ls_node *cond, ls_node *color) {
  char kc[512], kk[512];
  if (!key(color, kk, sizeof kk))
    return 0;
  ls_node *c = strip(cond);
  while (c && c->kind == CXCursor_UnaryOperator && c->op == CXUnaryOperator_LNot && c->nkids == 1)
    c = strip(c->kids[0]);
  if (key(c, kc, sizeof kc) && !strcmp(kc, kk))
    return 1;
  if (c && c->kind == CXCursor_BinaryOperator && is_cmp(c->op) && c->nkids == 2)
    for (int s = 0; s < 2; s++)
      if (key(c->kids[s], kc, sizeof kc) && !strcmp(kc, kk) && !ls_expr_taint(p, NULL, c->kids[1 - s]))
        return 1;
  return 0;
}

int ls_split_guarded_comm(ls_program *p, ls_node *cond, ls_node *comm) {
  if (scanned != p)
    ls_split_scan(p);
  int level = 0;
  ls_entity *e = comm ? ls_target_of(comm, &level) : NULL;
  for (size_t k = 0; e && level == 0 && k < nsplits; k++)
    if (splits[k].comm == e)
      return !splits[k].ambiguous && of_color(p, cond, splits[k].color);
  return 0;
}

int ls_split_guarded(ls_program *p, ls_node *cond, ls_node *const *calls, int n) {
  if (scanned != p)
    ls_split_scan(p);
  if (!cond || n <= 0 || !nsplits)
    return 0;
  for (int i = 0; i < n; i++) {
    ls_node *c = calls[i];
    if (!c->ent || !c->ent->rule || !c->ent->rule->seq_member)
      return 0; /* a helper call: what it issues, and on which communicator, is not looked at */
    int ci = arg_role(c, LS_ROLE_COMM), level = 0;
    ls_entity *comm = ci >= 0 ? ls_target_of(c->kids[ci], &level) : NULL;
    const struct split *s = NULL;
    for (size_t k = 0; comm && level == 0 && k < nsplits && !s; k++)
      if (splits[k].comm == comm && !splits[k].ambiguous)
        s = &splits[k];
    if (!s || !of_color(p, cond, s->color))
      return 0;
  }
  return 1;
}
