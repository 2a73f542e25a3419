/* split_comm.c — `MPI_Comm_split(world, rank < k, rank, &sub)` then `if (rank < k)
 * MPI_Bcast(..., sub)`: the branch depends on the rank, but every rank of `sub` has the same
 * color, so all of them take the same side; the branch selects whole communicators, not ranks
 * within one (bench/RESULTS.md class F3). A branch is let through when each collective on its
 * sides runs on a communicator split (rules kind comm_split, roles color / out_comm) with a
 * color the condition is a function of: the color expression itself, its negation, or a
 * comparison of it with a value that does not depend on the rank. Expressions are compared
 * by structure (variables by identity). A local communicator is judged by each of its writes
 * that reach the branch (guarded_by_writes), with the condition's variables read as what
 * reaches it along that write's ways and the color's checked unchanged since the split; other
 * communicators by their split alone, the color's variables assumed unchanged. A color
 * `p ? 0 : 1` stands for p. A helper call counts when every
 * collective it issues (helpers it calls included) runs on communicators its parameters
 * receive, and the arguments there are such split communicators.
 * Rank facts (ls_rank_fact, also used to match a condition with a color): a rank r of a
 * communicator is in [0, n) for its size n, and n >= 1, so `r < n` is always true and
 * `r < n - 1` means `r != n - 1`. A variable is taken as the rank (size) of a communicator
 * only when the function writes it nowhere but in the one query (rules kinds rank_query /
 * size_query) and it is a local. A split by the parent's own rank makes communicators of one
 * member, on which every argument is uniform (ls_split_uniform_on, at the end). */
#include "split_comm.h"
#include "xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct split {
  ls_entity *comm;
  ls_node *color;
  int ambiguous; /* split more than once with different colors */
  ls_func *f;    /* the function of the split call, and the call */
  ls_node *call;
  ls_entity *parent; /* the communicator split (a variable), or NULL */
};
static struct split *splits;
static size_t nsplits;
static const ls_program *scanned;
/* helpers' communicator parameters (helper_comms), found at need */
struct hsum {
  const ls_func *f;
  uint64_t params; /* bit i: a collective runs on what parameter i receives */
  int other;       /* a collective on anything else (a global, a local, a field) */
  int state;       /* 1 being computed, 2 done */
};
static struct hsum *hsums;
static size_t nhsums;

/* Values that stand for variables while a condition is compared (ls_split_guarded_comm):
 * the write of each that reaches the branch along one way to it. */
#define SUB_MAX 8
static struct {
  int n;
  const ls_entity *var[SUB_MAX];
  ls_node *val[SUB_MAX];
} sub;

/* ls_strip_casts, and a variable that has a value in `sub` read as that value */
static ls_node *sub_strip(ls_node *n) {
  n = ls_strip_casts(n);
  for (int hop = 0; n && n->kind == CXCursor_DeclRefExpr && n->ent && hop < SUB_MAX; hop++) {
    int i = 0;
    while (i < sub.n && sub.var[i] != n->ent)
      i++;
    if (i == sub.n)
      break;
    n = ls_strip_casts(sub.val[i]);
  }
  return n;
}

static void append(char *b, size_t cap, const char *s) {
  size_t k = strlen(b);
  snprintf(b + k, cap - k, "%s", s);
}

/* A structural key of a side-effect-free expression; 0 when it has parts not compared here. */
static int key(ls_node *n, char *b, size_t cap) {
  n = sub_strip(n);
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
    if (n->nkids != 1 || ls_is_incdec(n->op))
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

static int arg_role(const ls_node *call, enum ls_role role);

static void record(ls_entity *comm, ls_node *color, ls_func *f, ls_node *call) {
  for (size_t i = 0; i < nsplits; i++)
    if (splits[i].comm == comm) {
      char a[512], b[512];
      if (!key(splits[i].color, a, sizeof a) || !key(color, b, sizeof b) || strcmp(a, b))
        splits[i].ambiguous = 1;
    }
  int amb = 0;
  for (size_t i = 0; i < nsplits; i++)
    amb |= splits[i].comm == comm && splits[i].ambiguous;
  splits = ls_xrealloc(splits, (nsplits + 1) * sizeof *splits);
  int ci = arg_role(call, LS_ROLE_COMM), level = 0;
  ls_entity *par = ci >= 0 ? ls_target_of(call->kids[ci], &level) : NULL;
  splits[nsplits++] = (struct split){comm, color, amb, f, call, level == 0 ? par : NULL};
}

static int arg_role(const ls_node *call, enum ls_role role) {
  const ls_rule_fn *r = call->ent && call->ent->rule ? call->ent->rule : NULL;
  for (int i = 0; r && i < r->nargs && (unsigned)i < call->nkids; i++)
    if (r->roles[i] == role)
      return i;
  return -1;
}

static void scan(ls_func *f, ls_node *n) {
  if (!n)
    return;
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->kind_name &&
      !strcmp(n->ent->rule->kind_name, "comm_split")) {
    int ci = arg_role(n, LS_ROLE_COLOR), oi = arg_role(n, LS_ROLE_OUT_COMM);
    int level = 1;
    ls_entity *t = ci >= 0 && oi >= 0 ? ls_target_of(n->kids[oi], &level) : NULL;
    if (t && level <= 0)
      record(t, n->kids[ci], f, n);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan(f, n->kids[i]);
}

void ls_split_scan(ls_program *p) {
  nsplits = 0;
  nhsums = 0;
  for (size_t i = 0; i < p->funcs.n; i++) /* records only at a split call */
    if (ls_func_calls_kind(p, p->funcs.v[i], "comm_split"))
      scan(p->funcs.v[i], ((ls_func *)p->funcs.v[i])->body);
  scanned = p;
}

static int is_cmp(int op) {
  return op == CXBinaryOperator_LT || op == CXBinaryOperator_GT || op == CXBinaryOperator_LE ||
         op == CXBinaryOperator_GE || op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE;
}

/* ---- rank facts ---- */
#define RF_MAX 8
static struct {
  const ls_func *f;
  int nr, nn;
  ls_entity *rank[RF_MAX], *size[RF_MAX];
  char rcomm[RF_MAX][128], ncomm[RF_MAX][128]; /* keys of the queried communicators */
} rf;

static void rf_scan(ls_node *n) {
  if (!n)
    return;
  const char *kn = n->kind == CXCursor_CallExpr && n->ent && n->ent->rule ? n->ent->rule->kind_name : NULL;
  int q = kn && !strcmp(kn, "rank_query") ? 1 : kn && !strcmp(kn, "size_query") ? 2 : 0;
  if (q) {
    int ci = arg_role(n, LS_ROLE_COMM), oi = arg_role(n, q == 1 ? LS_ROLE_OUT_RANK : LS_ROLE_OUT_SIZE), level = 0;
    ls_node *o = oi >= 0 ? ls_strip_casts(n->kids[oi]) : NULL;
    ls_entity *t = o && o->kind == CXCursor_UnaryOperator && o->op == CXUnaryOperator_AddrOf && o->nkids
                       ? ls_target_of(o->kids[0], &level) : NULL;
    int *cnt = q == 1 ? &rf.nr : &rf.nn;
    if (t && level == 0 && t->kind == LS_ENT_VAR && ci >= 0 && *cnt < RF_MAX &&
        key(n->kids[ci], q == 1 ? rf.rcomm[*cnt] : rf.ncomm[*cnt], sizeof rf.rcomm[0])) {
      (q == 1 ? rf.rank : rf.size)[*cnt] = t;
      ++*cnt;
    }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    rf_scan(n->kids[i]);
}

static void rf_load(ls_func *f) {
  if (rf.f == f)
    return;
  rf.f = f;
  rf.nr = rf.nn = 0;
  if (!f || !f->body)
    return;
  rf_scan(f->body);
  /* one write each (the query itself), else the value is not known to be the query's */
  for (int l = 0; l < 2; l++) {
    int *cnt = l ? &rf.nn : &rf.nr, k = 0;
    for (int i = 0; i < *cnt; i++) {
      ls_entity *e = (l ? rf.size : rf.rank)[i];
      if (ls_writes_of(f->body, e, LS_WR_ASSIGN | LS_WR_DECL, 2) != 1)
        continue;
      (l ? rf.size : rf.rank)[k] = e;
      memcpy(l ? rf.ncomm[k] : rf.rcomm[k], l ? rf.ncomm[i] : rf.rcomm[i], sizeof rf.rcomm[0]);
      k++;
    }
    *cnt = k;
  }
}

/* index of e among the known ranks (sizes), -1 if none */
static int rf_find(ls_node *n, int size) {
  n = sub_strip(n);
  if (!n || n->kind != CXCursor_DeclRefExpr || !n->ent)
    return -1;
  for (int i = 0; i < (size ? rf.nn : rf.nr); i++)
    if ((size ? rf.size : rf.rank)[i] == n->ent)
      return i;
  return -1;
}

/* n is the size of the communicator rank i belongs to (minus `minus`, a literal) */
static int rf_size_of(ls_node *n, int i, int *minus) {
  n = sub_strip(n);
  *minus = 0;
  if (n && n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Sub && n->nkids == 2) {
    ls_node *k = sub_strip(n->kids[1]);
    if (!k || !k->ilit || k->ival != 1)
      return 0;
    *minus = 1;
    n = n->kids[0];
  }
  int j = rf_find(n, 1);
  return j >= 0 && !strcmp(rf.ncomm[j], rf.rcomm[i]);
}

static int mirror(int op) {
  switch (op) {
  case CXBinaryOperator_LT: return CXBinaryOperator_GT;
  case CXBinaryOperator_GT: return CXBinaryOperator_LT;
  case CXBinaryOperator_LE: return CXBinaryOperator_GE;
  case CXBinaryOperator_GE: return CXBinaryOperator_LE;
  default: return op;
  }
}

/* A condition in canonical form: decided (1 true, 0 false), or an equality "E(a,b)" /
 * inequality "N(a,b)" of two keys, or another key; -2 when it has no key. With rank facts
 * a comparison at the edge of [0, n) becomes the equality it means. */
static int canon(ls_func *f, ls_node *cond, char *out, size_t cap) {
  ls_node *c = sub_strip(cond);
  int neg = 0;
  while (c && c->kind == CXCursor_UnaryOperator && c->op == CXUnaryOperator_LNot && c->nkids == 1) {
    neg ^= 1;
    c = sub_strip(c->kids[0]);
  }
  if (!c)
    return -2;
  rf_load(f);
  int res = -1, eq = -1; /* eq: 1 "a == b", 0 "a != b" */
  ls_node *a = NULL, *b = NULL;
  if (c->kind == CXCursor_BinaryOperator && c->nkids == 2 && is_cmp(c->op)) {
    int op = (uint8_t)c->op; /* operator kinds are small and non-negative */
    a = c->kids[0];
    b = c->kids[1];
    if (rf_find(a, 0) < 0 && rf_find(a, 1) < 0 && (rf_find(b, 0) >= 0 || rf_find(b, 1) >= 0)) {
      ls_node *t = a;
      a = b;
      b = t;
      op = mirror(op);
    }
    int ri = rf_find(a, 0), ni = rf_find(a, 1), minus = 0;
    ls_node *lb = sub_strip(b);
    long long v = lb && lb->ilit ? lb->ival : 0;
    int lit = lb && lb->ilit;
    if (op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE)
      eq = op == CXBinaryOperator_EQ;
    if (ri >= 0 && lit && (v == 0 || v == 1)) {
      /* r in [0, n): r < 0 never, r >= 0 always, r > 0 is r != 0, r < 1 is r == 0 */
      long long lo = op == CXBinaryOperator_LT ? v - 1 : op == CXBinaryOperator_LE ? v : op == CXBinaryOperator_GT ? v + 1 : v;
      if ((op == CXBinaryOperator_LT || op == CXBinaryOperator_LE) && lo < 0)
        res = 0;
      else if ((op == CXBinaryOperator_GE || op == CXBinaryOperator_GT) && lo <= 0)
        res = 1;
      else if ((op == CXBinaryOperator_LT || op == CXBinaryOperator_LE) && lo == 0)
        eq = 1, b = NULL;
      else if ((op == CXBinaryOperator_GE || op == CXBinaryOperator_GT) && lo == 1)
        eq = 0, b = NULL;
      else if (eq < 0)
        return -2;
      else if (v == 0)
        b = NULL;
    } else if (ri >= 0 && rf_size_of(b, ri, &minus)) {
      /* against n: r < n always; against n - 1: r < n - 1 is r != n - 1 */
      if (!minus)
        res = op == CXBinaryOperator_LT || op == CXBinaryOperator_LE || op == CXBinaryOperator_NE;
      else if (op == CXBinaryOperator_LE)
        res = 1;
      else if (op == CXBinaryOperator_GT)
        res = 0;
      else if (op == CXBinaryOperator_LT)
        eq = 0;
      else if (op == CXBinaryOperator_GE)
        eq = 1;
    } else if (ni >= 0 && lit && (v == 0 || v == 1)) {
      /* n >= 1 */
      if ((op == CXBinaryOperator_GT && v == 0) || (op == CXBinaryOperator_GE) || (op == CXBinaryOperator_NE && v == 0))
        res = 1;
      else if ((op == CXBinaryOperator_LT) || (op == CXBinaryOperator_LE && v == 0) || (op == CXBinaryOperator_EQ && v == 0))
        res = 0;
    }
  }
  if (res >= 0)
    return res ^ neg;
  if (eq >= 0) {
    char ka[200], kb[200];
    if (!key(a, ka, sizeof ka))
      return -2;
    if (b ? !key(b, kb, sizeof kb) : (snprintf(kb, sizeof kb, "#0"), 0))
      return -2;
    return snprintf(out, cap, "%c(%s,%s)", (eq ^ neg) ? 'E' : 'N', ka, kb) < (int)cap ? -1 : -2;
  }
  char k[400];
  if (!key(c, k, sizeof k))
    return -2;
  return snprintf(out, cap, "%s%s", neg ? "!" : "", k) < (int)cap ? -1 : -2;
}

/* the canonical form of the negation of a canonical key */
static void negate(const char *k, char *out, size_t cap) {
  size_t n = strlen(k);
  if (!cap)
    return;
  if ((k[0] == 'E' || k[0] == 'N') && k[1] == '(') {
    if (n + 1 > cap)
      n = cap - 1;
    memcpy(out, k, n);
    out[0] = k[0] == 'E' ? 'N' : 'E';
    out[n] = 0;
  } else if (k[0] == '!') {
    if (n > cap)
      n = cap;
    memcpy(out, k + 1, n - 1);
    out[n - 1] = 0;
  } else {
    if (n + 2 > cap)
      n = cap - 2;
    out[0] = '!';
    memcpy(out + 1, k, n);
    out[n + 1] = 0;
  }
}

int ls_rank_fact(ls_func *f, ls_node *cond) {
  char k[512];
  int r = canon(f, cond, k, sizeof k);
  return r >= 0 ? r : -1;
}

/* the branch condition is the color, its negation, or the color compared with a uniform
 * value; for a color `p ? K1 : K2` (two different literals), p or its negation (under the
 * rank facts) */
static int of_color(ls_program *p, ls_func *f, ls_node *cond, ls_node *color) {
  char kc[512], kk[512];
  ls_node *c = sub_strip(cond);
  while (c && c->kind == CXCursor_UnaryOperator && c->op == CXUnaryOperator_LNot && c->nkids == 1)
    c = sub_strip(c->kids[0]);
  if (key(color, kk, sizeof kk)) {
    if (key(c, kc, sizeof kc) && !strcmp(kc, kk))
      return 1;
    if (c && c->kind == CXCursor_BinaryOperator && is_cmp(c->op) && c->nkids == 2)
      for (int s = 0; s < 2; s++)
        if (key(c->kids[s], kc, sizeof kc) && !strcmp(kc, kk) && !ls_expr_taint(p, NULL, c->kids[1 - s]))
          return 1;
  }
  ls_node *pr = ls_strip_casts(color);
  if (pr && pr->kind == CXCursor_ConditionalOperator && pr->nkids == 3) {
    ls_node *k1 = ls_strip_casts(pr->kids[1]), *k2 = ls_strip_casts(pr->kids[2]);
    if (!k1 || !k2 || !k1->ilit || !k2->ilit || k1->ival == k2->ival)
      return 0;
    pr = pr->kids[0];
  }
  char kp[512], kn[512];
  if (canon(f, cond, kc, sizeof kc) != -1 || canon(f, pr, kp, sizeof kp) != -1)
    return 0;
  negate(kp, kn, sizeof kn);
  return !strcmp(kc, kp) || !strcmp(kc, kn);
}

static ls_block *block_of(ls_func *f, const ls_node *x, int cond) {
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    if (cond ? k->cond == x : 0)
      return k;
    for (int i = 0; !cond && i < k->nitems; i++)
      if (ls_node_contains(k->items[i], x))
        return k;
  }
  return NULL;
}

/* whether `to` is reachable from `from` without passing `avoid` */
static int reach(ls_func *f, ls_block *from, ls_block *to, ls_block *avoid) {
  int maxid = 0;
  for (int i = 0; i < f->nblocks; i++)
    if (f->blocks[i]->id > maxid)
      maxid = f->blocks[i]->id;
  char *seen = calloc((size_t)maxid + 1, 1);
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
  if (!seen || !stk)
    abort();
  int sp = 0, hit = 0;
  if (from != avoid && from->id <= maxid) {
    seen[from->id] = 1;
    stk[sp++] = from;
  }
  while (sp && !hit) {
    ls_block *k = stk[--sp];
    if (k == to) {
      hit = 1;
      break;
    }
    for (int i = 0; i < k->nsucc; i++) {
      ls_block *t = k->succ[i];
      if (t != avoid && t->id >= 0 && t->id <= maxid && !seen[t->id] && sp < f->nblocks) {
        seen[t->id] = 1;
        stk[sp++] = t;
      }
    }
  }
  free(stk);
  free(seen);
  return hit;
}

/* The split that made comm as the branch on cond (in f) sees it: the only color comm is ever
 * split with, or, for a local split more than once, the split in f that every path to the
 * branch passes and after which no other split of it comes before the branch. */
static const struct split *split_of(ls_func *f, ls_node *cond, ls_node *comm) {
  int level = 0;
  ls_entity *e = comm ? ls_target_of(comm, &level) : NULL;
  const struct split *one = NULL;
  for (size_t k = 0; e && level == 0 && k < nsplits; k++)
    if (splits[k].comm == e) {
      if (!splits[k].ambiguous)
        return &splits[k];
      one = &splits[k];
    }
  if (!one || !f || e->kind != LS_ENT_VAR || !cond)
    return NULL;
  ls_block *bb = block_of(f, cond, 1);
  if (!bb)
    return NULL;
  const struct split *got = NULL;
  for (size_t k = 0; k < nsplits; k++) {
    if (splits[k].comm != e)
      continue;
    ls_block *gb = splits[k].f == f ? block_of(f, splits[k].call, 0) : NULL;
    if (!gb)
      return NULL; /* a split of this local we cannot place */
    if (reach(f, f->entry, bb, gb))
      continue; /* a path to the branch avoids it */
    int later = 0; /* another split of it on a way from this one to the branch */
    for (size_t m = 0; m < nsplits && !later; m++) {
      if (splits[m].comm != e || m == k)
        continue;
      ls_block *sb = block_of(f, splits[m].call, 0);
      later = !sb || sb == gb || (reach(f, gb, sb, NULL) && reach(f, sb, bb, NULL));
    }
    if (later)
      continue;
    if (got)
      return NULL;
    got = &splits[k];
  }
  return got;
}

/* ---- the writes that reach a branch along the ways through one write ----
 * A local communicator is judged by each write of it that reaches the branch (a split, a
 * dup, an assignment), and the condition by the writes of its variables that reach the
 * branch along the ways through that one: `if (n > MAX) { parts = MAX; split(world, rank <
 * MAX, &c); } else { parts = n; dup(world, &c); } if (rank < parts)` is the color along the
 * split and `rank < n`, true on every rank, along the dup. */
enum { W_NONE, W_VALUE, W_OTHER };
#define RW_MAX 8
struct rw {
  ls_node *val[RW_MAX];
  int n;
  int self;    /* a way on which no write comes: the value the function began with */
  int other;   /* a write not followed (++, its address handed on), or too many */
  int between; /* a write after the one the ways pass */
};

static int is_creator(const ls_node *n) {
  const char *kn = n->kind == CXCursor_CallExpr && n->ent && n->ent->rule ? n->ent->rule->kind_name : NULL;
  return kn && (!strcmp(kn, "comm_split") || !strcmp(kn, "comm_dup") || !strcmp(kn, "comm_create"));
}

/* the call under n that makes a communicator into &v (rules role out_comm) */
static ls_node *creator_of(ls_node *n, const ls_entity *v) {
  if (!n)
    return NULL;
  if (is_creator(n)) {
    int oi = arg_role(n, LS_ROLE_OUT_COMM), level = 1;
    if (oi >= 0 && ls_target_of(n->kids[oi], &level) == v && level <= 0)
      return n;
  }
  for (unsigned i = 0; i < n->nkids; i++) {
    ls_node *c = creator_of(n->kids[i], v);
    if (c)
      return c;
  }
  return NULL;
}

/* what item `it` does to v: W_VALUE `v = e` or `T v = e` (*val = e), or a communicator made
 * into &v (*val = the call); W_OTHER any other write */
static int item_write(ls_node *it, const ls_entity *v, ls_node **val) {
  unsigned how = LS_WR_ASSIGN | LS_WR_DECL;
  if (!ls_writes_of(it, v, how, 1))
    return W_NONE;
  int level = 0;
  ls_node *c = creator_of(it, v);
  if (c) {
    *val = c;
    return ls_writes_of(it, v, how, 2) == 1 ? W_VALUE : W_OTHER;
  }
  if (it->kind == CXCursor_VarDecl && it->ent == v && it->nkids)
    *val = it->kids[it->nkids - 1];
  else if (it->kind == CXCursor_BinaryOperator && it->op == CXBinaryOperator_Assign && it->nkids == 2 &&
           ls_target_of(it->kids[0], &level) == v && level == 0)
    *val = it->kids[1];
  else
    return W_OTHER;
  return ls_writes_of(*val, v, how, 1) ? W_OTHER : W_VALUE;
}

static void rw_add(struct rw *r, ls_node *val) {
  for (int i = 0; i < r->n; i++)
    if (r->val[i] == val)
      return;
  if (r->n == RW_MAX)
    r->other = 1;
  else
    r->val[r->n++] = val;
}

struct rw_at {
  ls_block *k;
  int after; /* the way has passed `via` (going back from bb, `via` is behind) */
  int top;   /* the items of k still to read: [0, top) */
};

/* The writes of v that reach the end of bb's items along the ways that pass item `at` of
 * block `via` (NULL: all ways): the last one before bb on each way, after `at` or before it. */
static void reaching(ls_func *f, const ls_entity *v, ls_block *bb, ls_block *via, int at, struct rw *r) {
  int maxid = 0;
  for (int i = 0; i < f->nblocks; i++)
    if (f->blocks[i]->id > maxid)
      maxid = f->blocks[i]->id;
  size_t m = (size_t)maxid + 1;
  char *fwd = calloc(m, 1), *seen = calloc(2 * m, 1); /* seen[phase * m + id] */
  struct rw_at *stk = malloc((2 * (size_t)f->nblocks + 2) * sizeof *stk);
  if (!fwd || !seen || !stk)
    abort();
  int sp = 0;
  if (via) { /* the blocks a way from `via` passes */
    ls_block **q = malloc(((size_t)f->nblocks + 1) * sizeof *q);
    if (!q)
      abort();
    int qn = 0;
    if (via->id >= 0 && via->id <= maxid) {
      fwd[via->id] = 1;
      q[qn++] = via;
    }
    while (qn) {
      ls_block *k = q[--qn];
      for (int i = 0; i < k->nsucc; i++) {
        ls_block *t = k->succ[i];
        if (t->id >= 0 && t->id <= maxid && !fwd[t->id] && qn < f->nblocks) {
          fwd[t->id] = 1;
          q[qn++] = t;
        }
      }
    }
    free(q);
  }
  if (bb->id >= 0 && bb->id <= maxid && (!via || fwd[bb->id])) {
    seen[(via ? m : 0) + (size_t)bb->id] = 1;
    stk[sp++] = (struct rw_at){bb, via ? 1 : 0, bb->nitems};
  } else
    r->other = 1;
  while (sp && !r->other) {
    struct rw_at s = stk[--sp];
    int lo = 0, found = 0;
    ls_node *val = NULL;
    if (s.after && s.k == via)
      lo = at + 1;
    for (int j = s.top - 1; j >= lo && !found; j--) {
      int w = item_write(s.k->items[j], v, &val);
      if (w == W_OTHER)
        r->other = 1;
      found = w != W_NONE;
    }
    if (found) {
      rw_add(r, val);
      r->between |= s.after;
      continue;
    }
    if (s.after && s.k == via) { /* on before the one the ways pass */
      s.after = 0;
      for (int j = at - 1; j >= 0 && !found; j--) {
        int w = item_write(s.k->items[j], v, &val);
        if (w == W_OTHER)
          r->other = 1;
        found = w != W_NONE;
      }
      if (found) {
        rw_add(r, val);
        continue;
      }
    }
    if (!s.k->npred && !s.after)
      r->self = 1;
    for (int i = 0; i < s.k->npred; i++) {
      ls_block *t = s.k->pred[i];
      size_t at_id = (s.after ? m : 0) + (size_t)t->id;
      if (t->id < 0 || t->id > maxid || seen[at_id] || (s.after && !fwd[t->id]))
        continue;
      seen[at_id] = 1;
      stk[sp++] = (struct rw_at){t, s.after, t->nitems};
    }
  }
  free(fwd);
  free(seen);
  free(stk);
}

/* the variables n reads (locals and parameters), up to cap */
static void read_vars(ls_node *n, const ls_entity **v, int *nv, int cap) {
  if (!n)
    return;
  if (n->kind == CXCursor_DeclRefExpr && n->ent && (n->ent->kind == LS_ENT_VAR || n->ent->kind == LS_ENT_PARAM)) {
    for (int i = 0; i < *nv; i++)
      if (v[i] == n->ent)
        return;
    if (*nv < cap)
      v[(*nv)++] = n->ent;
    return;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    read_vars(n->kids[i], v, nv, cap);
}

/* e is a rank or size the rank facts know (written only by its query) */
static int rf_is(ls_func *f, const ls_entity *e) {
  rf_load(f);
  for (int i = 0; i < rf.nr; i++)
    if (rf.rank[i] == e)
      return 1;
  for (int i = 0; i < rf.nn; i++)
    if (rf.size[i] == e)
      return 1;
  return 0;
}

/* a value that means the same wherever it is read in f: literals, rank facts, and locals or
 * parameters f never writes after their declaration */
static int stable(ls_func *f, ls_node *n) {
  n = ls_strip_casts(n);
  if (!n)
    return 0;
  if (n->kind == CXCursor_IntegerLiteral || (n->kind == CXCursor_DeclRefExpr && n->ilit))
    return 1;
  if (n->kind == CXCursor_DeclRefExpr)
    return n->ent && (n->ent->kind == LS_ENT_VAR || n->ent->kind == LS_ENT_PARAM) &&
           (rf_is(f, n->ent) || !ls_writes_of(f->body, n->ent, LS_WR_ASSIGN, 1));
  if (n->kind != CXCursor_BinaryOperator && n->kind != CXCursor_UnaryOperator && n->kind != CXCursor_ConditionalOperator)
    return 0;
  if (n->kind == CXCursor_UnaryOperator && ls_unary_may_write(n))
    return 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if (!stable(f, n->kids[i]))
      return 0;
  return 1;
}

static int item_of(const ls_block *k, const ls_node *x) {
  for (int i = 0; i < k->nitems; i++)
    if (ls_node_contains(k->items[i], x))
      return i;
  return -1;
}

/* Through the writes of a local communicator that reach the branch on cond: 1 on each way the
 * condition is a function of that write's split color (or, for a dup, an assignment, a
 * create, decided by the rank facts) and the same function on every member's way; 0 not;
 * -1 not judged here (not a local, the branch or a write not placed). A variable of the
 * color must keep its value from the split to the branch; any other variable of the
 * condition is read as each write of it that reaches the branch along the ways through the
 * communicator's write, where that write's value is stable (else as itself: compared only
 * where the color test's uniform side allows). */
static int guarded_by_writes(ls_program *p, ls_func *f, ls_node *cond, ls_node *comm) {
  int level = 0;
  ls_entity *e = comm ? ls_target_of(comm, &level) : NULL;
  ls_block *bb = f && e && level == 0 && e->kind == LS_ENT_VAR ? block_of(f, cond, 1) : NULL;
  if (!bb)
    return -1;
  struct rw d = {{0}, 0, 0, 0, 0};
  reaching(f, e, bb, NULL, 0, &d);
  if (d.other || d.self || !d.n)
    return -1;
  enum { NV = 8, COMBOS = 16 };
  const ls_entity *cv[NV];
  int ncv = 0;
  read_vars(cond, cv, &ncv, NV);
  for (int i = 0; i < d.n; i++) {
    ls_node *w = d.val[i], *color = NULL;
    if (w->kind == CXCursor_CallExpr && is_creator(w) && !strcmp(w->ent->rule->kind_name, "comm_split")) {
      for (size_t k = 0; k < nsplits && !color; k++)
        if (splits[k].call == w)
          color = splits[k].color;
      if (!color)
        return 0;
    }
    ls_block *gb = block_of(f, w, 0);
    int at = gb ? item_of(gb, w) : -1;
    if (at < 0)
      return -1;
    const ls_entity *kv[NV];
    int nkv = 0;
    read_vars(color, kv, &nkv, NV);
    for (int j = 0; j < nkv; j++) {
      struct rw r = {{0}, 0, 0, 0, 0};
      if (rf_is(f, kv[j]))
        continue;
      reaching(f, kv[j], bb, gb, at, &r);
      if (r.between || r.other)
        return 0;
    }
    /* the values each other variable of cond may hold at the branch */
    ls_node *opt[NV][RW_MAX + 1];
    int nopt[NV], nsv = 0, combos = 1;
    const ls_entity *sv[NV];
    for (int j = 0; j < ncv; j++) {
      int inK = 0;
      for (int t = 0; t < nkv; t++)
        inK |= kv[t] == cv[j];
      if (inK || rf_is(f, cv[j]))
        continue;
      struct rw r = {{0}, 0, 0, 0, 0};
      reaching(f, cv[j], bb, gb, at, &r);
      int ok = !r.other && r.n;
      for (int t = 0; ok && t < r.n; t++)
        ok = stable(f, r.val[t]);
      if (!ok || combos * (r.n + r.self) > COMBOS)
        continue;
      sv[nsv] = cv[j];
      nopt[nsv] = 0;
      for (int t = 0; t < r.n; t++)
        opt[nsv][nopt[nsv]++] = r.val[t];
      if (r.self)
        opt[nsv][nopt[nsv]++] = NULL;
      combos *= nopt[nsv++];
    }
    char first[512] = "", k[512];
    int res = 1;
    for (int c = 0; c < combos && res; c++) {
      sub.n = 0;
      int q = c; /* combination c: digit j (base nopt[j]) picks variable j's value */
      for (int j = 0; j < nsv; j++) {
        ls_node *val = opt[j][q % nopt[j]];
        q /= nopt[j];
        if (val && sub.n < SUB_MAX) {
          sub.var[sub.n] = sv[j];
          sub.val[sub.n++] = val;
        }
      }
      int r = canon(f, cond, k, sizeof k);
      if (r >= 0)
        snprintf(k, sizeof k, "#%d", r);
      else if (r == -2)
        snprintf(k, sizeof k, "?%d", c); /* no key: equal to no other way's */
      if (color)
        res = of_color(p, f, cond, color);
      else
        res = r >= 0;
      if (c == 0)
        snprintf(first, sizeof first, "%s", k);
      else if (strcmp(first, k))
        res = 0; /* members on different ways would test different things */
    }
    sub.n = 0;
    if (!res)
      return 0;
  }
  return 1;
}

int ls_split_guarded_comm(ls_program *p, ls_func *f, ls_node *cond, ls_node *comm) {
  if (scanned != p)
    ls_split_scan(p);
  int r = guarded_by_writes(p, f, cond, comm);
  if (r >= 0)
    return r;
  const struct split *s = split_of(f, cond, comm);
  return s && of_color(p, f, cond, s->color);
}

static int param_index(const ls_func *g, ls_node *a) {
  a = ls_strip_casts(a);
  for (int i = 0; a && a->kind == CXCursor_DeclRefExpr && a->ent && i < g->nparams && i < 64; i++)
    if (g->params[i] == a->ent)
      return i;
  return -1;
}

/* Which parameters of g carry the communicators of the collectives g issues, its helpers'
 * included (a recursive cycle counts as anything). */
static const struct hsum *helper_comms(const ls_func *g) {
  for (size_t i = 0; i < nhsums; i++)
    if (hsums[i].f == g) {
      if (hsums[i].state == 1)
        hsums[i].other = 1;
      return &hsums[i];
    }
  hsums = ls_xrealloc(hsums, (nhsums + 1) * sizeof *hsums);
  size_t me = nhsums++;
  hsums[me] = (struct hsum){g, 0, 0, 1};
  uint64_t params = 0;
  int other = 0;
  for (int b = 0; b < g->nblocks && !other; b++) {
    ls_block *k = g->blocks[b];
    for (int i = 0; i < k->nitems && !other; i++) {
      ls_node *n = k->items[i];
      if (n->kind != CXCursor_CallExpr || !n->ent)
        continue;
      if (n->ent->rule && n->ent->rule->seq_member) {
        int ci = arg_role(n, LS_ROLE_COMM), pi = ci >= 0 ? param_index(g, n->kids[ci]) : -1;
        if (pi < 0)
          other = 1;
        else
          params |= 1ull << pi;
      } else if (!n->ent->rule && n->ent->def && n->ent->def->analyzed && n->ent->def->entry->len > 0) {
        const struct hsum h = *helper_comms(n->ent->def); /* copied: hsums may move */
        if (h.other)
          other = 1;
        for (unsigned j = 0; j < 64 && !other; j++)
          if (h.params >> j & 1) {
            int pi = j < n->nkids ? param_index(g, n->kids[j]) : -1;
            if (pi < 0)
              other = 1;
            else
              params |= 1ull << pi;
          }
      }
    }
  }
  hsums[me].params = params;
  hsums[me].other |= other;
  hsums[me].state = 2;
  return &hsums[me];
}

int ls_split_guarded(ls_program *p, ls_func *f, ls_node *cond, ls_node *const *calls, int n) {
  if (scanned != p)
    ls_split_scan(p);
  if (!cond || n <= 0 || !nsplits)
    return 0;
  for (int i = 0; i < n; i++) {
    ls_node *c = calls[i];
    if (!c->ent)
      return 0;
    if (c->ent->rule && c->ent->rule->seq_member) {
      int ci = arg_role(c, LS_ROLE_COMM);
      if (ci < 0 || !ls_split_guarded_comm(p, f, cond, c->kids[ci]))
        return 0;
      continue;
    }
    if (c->ent->rule || !c->ent->def || !c->ent->def->analyzed)
      return 0;
    /* a helper: each communicator it issues collectives on comes in through a parameter */
    const struct hsum h = *helper_comms(c->ent->def);
    if (h.other || !h.params)
      return 0;
    for (unsigned j = 0; j < 64; j++)
      if (h.params >> j & 1 && (j >= c->nkids || !ls_split_guarded_comm(p, f, cond, c->kids[j])))
        return 0;
  }
  return 1;
}

int ls_cond_relation(ls_func *f, ls_node *a, ls_node *b) {
  char ka[512], kb[512], kn[512];
  if (canon(f, a, ka, sizeof ka) != -1 || canon(f, b, kb, sizeof kb) != -1)
    return -1;
  if (!strcmp(ka, kb))
    return 1;
  negate(ka, kn, sizeof kn);
  return strcmp(kn, kb) ? -1 : 0;
}

/* the variables cond reads */
static int cond_vars(ls_node *n, ls_entity **v, int *nv, int cap) {
  n = ls_strip_casts(n);
  if (!n)
    return 1;
  if (n->kind == CXCursor_DeclRefExpr) {
    if (!n->ent)
      return n->ilit;
    if (n->ent->kind != LS_ENT_VAR && n->ent->kind != LS_ENT_PARAM)
      return 0; /* a global or a function: a call on the way may change it */
    if (*nv >= cap)
      return 0;
    v[(*nv)++] = n->ent;
    return 1;
  }
  if (n->kind == CXCursor_IntegerLiteral)
    return 1;
  if (n->kind != CXCursor_BinaryOperator && n->kind != CXCursor_UnaryOperator)
    return 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if (!cond_vars(n->kids[i], v, nv, cap))
      return 0;
  return 1;
}

int ls_cond_kept(ls_func *f, ls_node *cond, ls_block *from, ls_block *to) {
  ls_entity *v[8];
  int nv = 0;
  if (!cond_vars(cond, v, &nv, 8))
    return 0;
  /* incremented or its address taken anywhere in f (blocks do not list `r++` as an item) */
  for (int i = 0; i < nv; i++)
    if (ls_writes_of(f->body, v[i], LS_WR_NO_QUERY, 1)) /* the query between the branches is an item, seen below */
      return 0;
  /* the blocks from `from` up to `to` (to's own items included) write none of them */
  int maxid = 0;
  for (int i = 0; i < f->nblocks; i++)
    if (f->blocks[i]->id > maxid)
      maxid = f->blocks[i]->id;
  char *seen = calloc((size_t)maxid + 1, 1);
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
  if (!seen || !stk)
    abort();
  int sp = 0, ok = 1;
  for (int i = 0; i < from->nsucc; i++)
    if (from->succ[i]->id >= 0 && from->succ[i]->id <= maxid && !seen[from->succ[i]->id]) {
      seen[from->succ[i]->id] = 1;
      stk[sp++] = from->succ[i];
    }
  while (sp && ok) {
    ls_block *k = stk[--sp];
    for (int j = 0; j < k->nitems && ok; j++)
      for (int i = 0; i < nv && ok; i++)
        ok = !ls_writes_of(k->items[j], v[i], LS_WR_ASSIGN | LS_WR_DECL, 1);
    if (k == to || k == from)
      continue;
    for (int i = 0; i < k->nsucc; i++) {
      ls_block *t = k->succ[i];
      if (t->id >= 0 && t->id <= maxid && !seen[t->id] && sp < f->nblocks) {
        seen[t->id] = 1;
        stk[sp++] = t;
      }
    }
  }
  free(stk);
  free(seen);
  return ok;
}

int ls_split_resplit(ls_program *p, const ls_entity *lhs, ls_node *rhs) {
  if (scanned != p)
    ls_split_scan(p);
  int level = 0, n = 0;
  ls_entity *e = rhs ? ls_target_of(rhs, &level) : NULL;
  for (size_t k = 0; e && level == 0 && k < nsplits; k++)
    if (splits[k].comm == e) {
      if (splits[k].parent != lhs)
        return 0;
      n++;
    }
  return n > 0;
}

static int assigns(ls_node *n, const ls_entity *lhs, const ls_entity *rhs) {
  if (!n)
    return 0;
  int level = 0;
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 &&
      ls_target_of(n->kids[0], &level) == lhs && level == 0 && ls_target_of(n->kids[1], &level) == rhs && level == 0)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (assigns(n->kids[i], lhs, rhs))
      return 1;
  return 0;
}

/* f assigns h to e, and h is made only by splits of e */
static int resplit_in(ls_func *f, const ls_entity *e, const ls_entity *h) {
  for (size_t k = 0; k < nsplits; k++)
    if (splits[k].comm == h && splits[k].parent != e)
      return 0;
  return assigns(f->body, e, h);
}

/* Uniformity per communicator. A loop that re-splits its communicator E (`MPI_Comm_split(E,
 * color, ..., &H); E = H;`) by a color that a branch P decides leaves P's outcome the same on
 * every member of the new E, so a value computed only from values uniform per E, under
 * branches whose conditions are uniform per E (P included), is the same on all of E's members
 * even where it differs across the world (recursive bisection's bounds). A branch or loop on
 * such values whose collectives all go to E does not divide E. What a collective delivers the
 * same to every rank (rules: "received": "uniform", MPI_Allreduce, MPI_Bcast) on E is
 * uniform per E too (the members of a later E are members of the earlier one); a prefix
 * (MPI_Scan) or a result on another communicator is not. Greatest fixed point over the writes
 * of the locals: a write stays uniform per E until it reads a rank value that is not, is under
 * a branch that is not, or is a collective's delivery that is not; a read sees the writes
 * that reach it (`for (dim = 0; ...)` after `dim = dim_select;`). A local whose address is
 * handed to a call other than as a collective's send buffer, or that is written through a
 * pointer or inside a lambda, is not uniform anywhere. */
struct uwrite {
  ls_block *k;
  int item;           /* k->items index; k->nitems: k's condition */
  int var;            /* index in uctx.u */
  ls_node *rhs;       /* the value written; NULL: none to read (a delivery, ++) */
  unsigned self : 1;  /* reads the local's own value too (`+=`, `++`) */
  unsigned coll : 1;  /* a collective delivers it: uniform per E */
  unsigned ok : 1;
};
struct uctx {
  ls_program *p;
  ls_func *f;
  ls_block *pbranch;  /* the branch whose arms set the color (NULL: the color is the predicate) */
  ls_node *color;
  ls_entity *comm;    /* E */
  ls_entity **u;      /* the rank-dependent locals of f, judged per E */
  char *bad;          /* by local: not uniform anywhere */
  int nu, maxid;
  struct uwrite *w;
  int nw, capw;
  int *first;         /* by block id: its first write (writes are in block, then item order) */
  int W;              /* words of a reaching-writes set */
  uint64_t *in, *st;  /* the writes that reach each block's entry; scratch */
  char *cd;           /* cd[k * (maxid + 1) + b]: block k is directly control dependent on b */
  char *seen;
};

static int u_index(const struct uctx *x, const ls_entity *e) {
  for (int i = 0; e && i < x->nu; i++)
    if (x->u[i] == e)
      return i;
  return -1;
}

/* what item j of block k (j == nitems: its condition) does to the reaching writes st */
static void u_item(const struct uctx *x, const ls_block *k, int j, uint64_t *st, int kill) {
  for (int a = x->first[k->id]; a < x->nw && x->w[a].k == k; a++) {
    if (x->w[a].item != j)
      continue;
    for (int b = 0; kill && b < x->nw; b++)
      if (x->w[b].var == x->w[a].var && b != a)
        st[b / 64] &= ~(1ull << (b % 64));
  }
  for (int a = x->first[k->id]; a < x->nw && x->w[a].k == k; a++)
    if (x->w[a].item == j)
      st[a / 64] |= 1ull << (a % 64);
}

static void u_step(void *ctx, ls_block *k, uint64_t *st) {
  const struct uctx *x = ctx;
  for (int j = 0; j <= k->nitems; j++)
    u_item(x, k, j, st, 1);
}

/* local i as read in item j of block k: every write that may reach it there is uniform per E
 * (those of item j itself included: `b = (a = me, a)`) */
static int u_reach(struct uctx *x, int i, const ls_block *k, int j) {
  if (x->bad[i])
    return 0;
  memcpy(x->st, &x->in[(size_t)k->id * (size_t)x->W], (size_t)x->W * sizeof *x->st);
  for (int t = 0; t < j; t++)
    u_item(x, k, t, x->st, 1);
  u_item(x, k, j, x->st, 0);
  for (int a = 0; a < x->nw; a++)
    if (x->w[a].var == i && (x->st[a / 64] >> (a % 64) & 1) && !x->w[a].ok)
      return 0;
  return 1;
}

static int u_expr(struct uctx *x, ls_node *n, const ls_block *k, int j) {
  n = ls_strip_casts(n);
  if (!n)
    return 1;
  if (n->kind == CXCursor_DeclRefExpr && n->ent && n->ent->kind == LS_ENT_VAR && n->ent->taint) {
    int i = u_index(x, n->ent);
    return i >= 0 && u_reach(x, i, k, j);
  }
  if (!ls_expr_taint(x->p, NULL, n))
    return 1;
  /* a field's fact is every object's: `medme.prochi = me` makes any `.prochi` rank-dependent */
  if (n->kind == CXCursor_CallExpr || n->kind == CXCursor_DeclRefExpr || n->kind == CXCursor_MemberRefExpr)
    return 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if (!u_expr(x, n->kids[i], k, j))
      return 0;
  return 1;
}

static int u_branch(struct uctx *x, ls_block *b) {
  if (b == x->pbranch || (!x->pbranch && of_color(x->p, x->f, b->cond, x->color)))
    return 1;
  return !b->cond_taint || u_expr(x, b->cond, b, b->nitems);
}

/* block k runs on all of E's members or on none: every branch it depends on is uniform per E */
static int u_block(struct uctx *x, ls_block *k) {
  if (k->id < 0 || k->id > x->maxid || x->seen[k->id])
    return 1;
  x->seen[k->id] = 1;
  for (int i = 0; i < x->f->nblocks; i++) {
    ls_block *b = x->f->blocks[i];
    if (b->id >= 0 && b->id <= x->maxid && x->cd[(size_t)k->id * (x->maxid + 1) + b->id] &&
        (!u_branch(x, b) || !u_block(x, b)))
      return 0;
  }
  return 1;
}

static void u_add(struct uctx *x, ls_block *k, int j, int var, ls_node *rhs, int self, int coll) {
  if (x->nw == x->capw) {
    x->capw = x->capw ? 2 * x->capw : 64;
    x->w = ls_xrealloc(x->w, (size_t)x->capw * sizeof *x->w);
  }
  x->w[x->nw++] = (struct uwrite){k, j, var, rhs, (unsigned)self, (unsigned)coll, 1};
}

static ls_entity *coll_comm(ls_node *c);

/* receive buffer i of collective c gets the same value on every rank of its communicator */
static int delivers_uniform(const ls_node *c, int i) {
  const ls_rule_fn *r = c->ent ? c->ent->rule : NULL;
  return r && r->received_uniform && i < r->nargs && r->roles[i] == LS_ROLE_RECVBUF;
}

/* the writes of the judged locals under n (item j of block k) */
static void u_collect(struct uctx *x, ls_block *k, int j, ls_node *n, int in_lambda) {
  if (!n)
    return;
  int level = 0, i;
  switch (n->kind) {
  case CXCursor_LambdaExpr: /* runs where it is called, not here */
    in_lambda = 1;
    break;
  case CXCursor_VarDecl: /* one without an initializer keeps what reaches it */
    if (n->nkids && (i = u_index(x, n->ent)) >= 0)
      u_add(x, k, j, i, n->kids[n->nkids - 1], 0, 0);
    break;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    if ((n->kind == CXCursor_CompoundAssignOperator || n->op == CXBinaryOperator_Assign) && n->nkids == 2 &&
        (i = u_index(x, ls_target_of(n->kids[0], &level))) >= 0) {
      if (level != 0 || in_lambda)
        x->bad[i] = 1;
      else
        u_add(x, k, j, i, n->kids[1], n->kind == CXCursor_CompoundAssignOperator, 0);
    }
    break;
  case CXCursor_UnaryOperator:
    if (n->nkids == 1 && (ls_is_incdec(n->op) || n->op == CXUnaryOperator_AddrOf) &&
        (i = u_index(x, ls_target_of(n->kids[0], &level))) >= 0) {
      if (n->op == CXUnaryOperator_AddrOf || level != 0 || in_lambda)
        x->bad[i] = 1; /* handed on: written where we do not follow */
      else
        u_add(x, k, j, i, NULL, 1, 0);
    }
    break;
  case CXCursor_CallExpr: {
    const ls_rule_fn *r = n->ent && n->ent->rule && n->ent->rule->kind == LS_KIND_COLLECTIVE ? n->ent->rule : NULL;
    for (unsigned a = 0; a < n->nkids; a++) {
      ls_node *arg = ls_strip_casts(n->kids[a]);
      enum ls_role ro = r && (int)a < r->nargs ? r->roles[a] : LS_ROLE_OTHER;
      level = 0;
      if (!in_lambda && (ro == LS_ROLE_SENDBUF || ro == LS_ROLE_RECVBUF) && arg &&
          arg->kind == CXCursor_UnaryOperator && arg->op == CXUnaryOperator_AddrOf && arg->nkids == 1 &&
          ls_strip_casts(arg->kids[0]) && ls_strip_casts(arg->kids[0])->kind == CXCursor_DeclRefExpr &&
          (i = u_index(x, ls_target_of(arg->kids[0], &level))) >= 0) {
        if (ro == LS_ROLE_SENDBUF)
          continue; /* only read */
        if (delivers_uniform(n, (int)a) && coll_comm(n) == x->comm) {
          u_add(x, k, j, i, NULL, 0, 1);
          continue;
        }
      }
      u_collect(x, k, j, n->kids[a], in_lambda);
    }
    return;
  }
  default:
    break;
  }
  for (unsigned c = 0; c < n->nkids; c++)
    u_collect(x, k, j, n->kids[c], in_lambda);
}

static void u_locals(struct uctx *x, ls_node *n, int cap) {
  if (!n)
    return;
  if (n->kind == CXCursor_VarDecl && n->ent && n->ent->kind == LS_ENT_VAR && n->ent->taint && x->nu < cap &&
      u_index(x, n->ent) < 0)
    x->u[x->nu++] = n->ent;
  for (unsigned j = 0; j < n->nkids; j++)
    u_locals(x, n->kids[j], cap);
}

/* the communicator a collective runs on, when it is a local variable */
static ls_entity *coll_comm(ls_node *c) {
  if (!c->ent || !c->ent->rule || !c->ent->rule->seq_member)
    return NULL;
  int ci = arg_role(c, LS_ROLE_COMM), level = 0;
  ls_entity *e = ci >= 0 ? ls_target_of(c->kids[ci], &level) : NULL;
  return e && e->kind == LS_ENT_VAR && level <= 0 ? e : NULL;
}

/* the branch of f both of whose arms set the local color var to literals, and nothing else writes it */
static ls_block *color_branch(ls_func *f, ls_entity *v) {
  ls_block *got = NULL;
  int n = 0;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    for (int j = 0; j < k->nitems; j++) {
      ls_node *it = k->items[j];
      int level = 0;
      if (!((it->kind == CXCursor_BinaryOperator && it->op == CXBinaryOperator_Assign && it->nkids == 2 &&
             ls_target_of(it->kids[0], &level) == v) || (it->kind == CXCursor_VarDecl && it->ent == v)))
        continue;
      if (it->kind == CXCursor_VarDecl && !it->nkids)
        continue;
      ls_node *r = ls_strip_casts(it->kids[it->nkids - 1]);
      if (!r || !r->ilit || level != 0 || k->npred != 1 || k->pred[0]->nsucc != 2 || (got && got != k->pred[0]))
        return NULL;
      got = k->pred[0];
      n++;
    }
  }
  return n == 2 ? got : NULL;
}

int ls_split_uniform(ls_program *p, ls_func *f, ls_node *cond, ls_node *const *calls, int n) {
  if (scanned != p)
    ls_split_scan(p);
  if (!cond || n <= 0 || !nsplits)
    return 0;
  ls_entity *e = coll_comm(calls[0]);
  for (int i = 0; i < n; i++)
    if (!e || coll_comm(calls[i]) != e)
      return 0; /* a collective on another communicator (the parent, the world) stays a finding */
  const struct split *s = NULL; /* the re-split of e: split into h, and e = h in f */
  for (size_t k = 0; k < nsplits && !s; k++)
    if (splits[k].f == f && splits[k].parent == e && !splits[k].ambiguous)
      s = &splits[k];
  if (!s || !resplit_in(f, e, s->comm))
    return 0;
  struct uctx x = {.p = p, .f = f, .color = s->color, .comm = e};
  ls_node *col = ls_strip_casts(s->color);
  if (col && col->kind == CXCursor_DeclRefExpr && col->ent && col->ent->kind == LS_ENT_VAR &&
      !(x.pbranch = color_branch(f, col->ent)))
    return 0;
  for (int i = 0; i < f->nblocks; i++)
    if (f->blocks[i]->id > x.maxid)
      x.maxid = f->blocks[i]->id;
  size_t m = (size_t)x.maxid + 1;
  enum { CAP = 512, MAXW = 4096 };
  x.u = malloc(CAP * sizeof *x.u);
  x.bad = calloc(CAP, 1);
  x.cd = calloc(m * m, 1);
  x.seen = calloc(m, 1);
  x.first = malloc(m * sizeof *x.first);
  if (!x.u || !x.bad || !x.cd || !x.seen || !x.first)
    abort();
  for (int i = 0; i < f->nblocks; i++) { /* edge b->s: s and its post-dominators up to b's */
    ls_block *b = f->blocks[i];
    if (b->nsucc < 2 || b->id < 0)
      continue;
    for (int j = 0; j < b->nsucc; j++)
      for (ls_block *t = b->succ[j]; t && t != b->ipdom && t->id >= 0 && t->id <= x.maxid; t = t->ipdom) {
        x.cd[(size_t)t->id * m + b->id] = 1;
        if (t == t->ipdom)
          break;
      }
  }
  u_locals(&x, f->body, CAP);
  for (size_t i = 0; i < m; i++)
    x.first[i] = INT_MAX;
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    if (k->id < 0 || k->id > x.maxid)
      continue;
    x.first[k->id] = x.nw;
    for (int j = 0; j < k->nitems; j++)
      u_collect(&x, k, j, k->items[j], 0);
    u_collect(&x, k, k->nitems, k->cond, 0);
  }
  int ok = 0;
  ls_block *cb = block_of(f, cond, 1);
  if (cb && x.nw <= MAXW && f->fwd && f->nfwd > 0) { /* more writes than that: no claim (the sets grow) */
    x.W = (x.nw + 63) / 64 + 1;
    x.in = calloc(m * (size_t)x.W, sizeof *x.in);
    x.st = malloc((size_t)x.W * sizeof *x.st);
    uint64_t *scratch = malloc((size_t)x.W * sizeof *scratch);
    if (!x.in || !x.st || !scratch)
      abort();
    ls_cfg_forward(f, x.W, x.in, scratch, u_step, &x);
    free(scratch);
    for (int changed = 1; changed;) {
      changed = 0;
      for (int a = 0; a < x.nw; a++) {
        struct uwrite *w = &x.w[a];
        if (!w->ok)
          continue;
        memset(x.seen, 0, m);
        if (x.bad[w->var] || (w->rhs && !u_expr(&x, w->rhs, w->k, w->item)) ||
            (w->self && !u_reach(&x, w->var, w->k, w->item)) || !u_block(&x, w->k)) {
          w->ok = 0;
          changed = 1;
        }
      }
    }
    memset(x.seen, 0, m);
    ok = u_expr(&x, cond, cb, cb->nitems) && u_block(&x, cb);
  }
  free(x.u);
  free(x.bad);
  free(x.cd);
  free(x.seen);
  free(x.first);
  free(x.w);
  free(x.in);
  free(x.st);
  return ok;
}

/* ---- communicators of one member, and members uniform per communicator ----
 * `MPI_Comm_split(world, me, 0, &c)` with `me` world's own rank gives every rank a
 * communicator of its own: whatever a collective on c is passed is the same on all of c.
 * And a field F read on a field communicator C in another function is uniform per C when
 * every write of F is uniform on its parent or sits in the block that makes C such a
 * singleton, and every creation of C writes F beside it (lammps ReadDump::setup_reader:
 * `nreader = lastfile - firstfile; MPI_Comm_split(world, me, 0, &clustercomm);`). The
 * writes are found by the entity named (a variable or a field, any object's), so a write
 * the walk cannot classify (++, +=, an address handed on) makes the answer no. */
enum { S_ASSIGN, S_CREATE, S_FREE, S_QUERY, S_OTHER };
#define WS_MAX 8
struct wsite {
  int how;
  ls_node *val; /* S_ASSIGN: the value; S_CREATE, S_QUERY: the call */
};
struct wsites {
  struct wsite s[WS_MAX];
  int n, over;
};

static int names(ls_node *n, const ls_entity *e) {
  n = ls_strip_casts(n);
  return n && (n->kind == CXCursor_DeclRefExpr || n->kind == CXCursor_MemberRefExpr) && n->ent == e;
}

static void ws_add(struct wsites *w, int how, ls_node *val) {
  if (w->n == WS_MAX) {
    w->over = 1;
    return;
  }
  w->s[w->n++] = (struct wsite){how, val};
}

static void ws_walk(ls_node *n, const ls_entity *e, struct wsites *w) {
  if (!n)
    return;
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule) {
    const ls_rule_fn *r = n->ent->rule;
    const char *kn = r->kind_name ? r->kind_name : "";
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *a = ls_strip_casts(n->kids[i]);
      if (!a || a->kind != CXCursor_UnaryOperator || a->op != CXUnaryOperator_AddrOf || !a->nkids || !names(a->kids[0], e))
        continue;
      enum ls_role ro = (int)i < r->nargs ? r->roles[i] : LS_ROLE_NONE;
      if (ro == LS_ROLE_OUT_COMM && is_creator(n))
        ws_add(w, S_CREATE, n);
      else if (!strcmp(kn, "comm_destroy"))
        ws_add(w, S_FREE, n);
      else if (ro == LS_ROLE_OUT_RANK && !strcmp(kn, "rank_query"))
        ws_add(w, S_QUERY, n);
      else
        ws_add(w, S_OTHER, n);
    }
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *a = ls_strip_casts(n->kids[i]);
      if (!(a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids && names(a->kids[0], e)))
        ws_walk(n->kids[i], e, w);
    }
    return;
  }
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 && names(n->kids[0], e))
    ws_add(w, S_ASSIGN, n->kids[1]);
  else if (n->kind == CXCursor_VarDecl && n->ent == e && n->nkids)
    ws_add(w, S_ASSIGN, n->kids[n->nkids - 1]);
  else if ((n->kind == CXCursor_CompoundAssignOperator && n->nkids == 2 && names(n->kids[0], e)) ||
           (ls_unary_may_write(n) && n->nkids && names(n->kids[0], e)))
    ws_add(w, S_OTHER, n);
  for (unsigned i = 0; i < n->nkids; i++)
    ws_walk(n->kids[i], e, w);
}

/* the functions whose writes of e count: f alone for its locals, else the whole program */
static int ws_scope(const ls_entity *e) { return e->kind == LS_ENT_VAR || e->kind == LS_ENT_PARAM; }

/* a constructor (USR `...@S@X@F@X#...`): where a member gets its initial value */
static int is_ctor(const ls_func *g) {
  const char *k = g->ent && g->ent->key ? g->ent->key : NULL, *m = k ? strstr(k, "@F@") : NULL;
  if (!m)
    return 0;
  size_t len = strcspn(m + 3, "#@");
  return len && (size_t)(m - k) >= len + 3 && !strncmp(m - len - 3, "@S@", 3) && !strncmp(m - len, m + 3, len) &&
         m[3 + len] == '#';
}

/* n reads no variable, parameter or field (an initial value: a literal, MPI_COMM_NULL) */
static int reads_nothing(const ls_node *n) {
  if (!n)
    return 1;
  if ((n->kind == CXCursor_DeclRefExpr || n->kind == CXCursor_MemberRefExpr) && n->ent && !n->ilit &&
      (n->ent->kind == LS_ENT_VAR || n->ent->kind == LS_ENT_PARAM || n->ent->kind == LS_ENT_FIELD))
    return 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if (!reads_nothing(n->kids[i]))
      return 0;
  return 1;
}

/* the variable, field or predefined handle an expression names: its entity, or for a
 * literal handle (an integer constant) NULL with *lit set; *addr: it was written &global */
static const ls_entity *handle_of(ls_node *n, long long *lit, int *addr) {
  n = ls_strip_casts(n);
  *addr = 0;
  if (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf && n->nkids) {
    *addr = 1;
    n = ls_strip_casts(n->kids[0]);
  }
  if (!n)
    return NULL;
  if (n->ilit) {
    *lit = n->ival;
    return NULL;
  }
  return (n->kind == CXCursor_DeclRefExpr || n->kind == CXCursor_MemberRefExpr) ? n->ent : NULL;
}

/* two communicator expressions name the same handle; 0 when either is not one */
static int same_handle(ls_node *a, ls_node *b) {
  long long la = 0, lb = 0;
  int aa, ab;
  const ls_entity *ea = handle_of(a, &la, &aa), *eb = handle_of(b, &lb, &ab);
  if (ea || eb)
    return ea == eb && aa == ab;
  ls_node *sa = ls_strip_casts(a), *sb = ls_strip_casts(b);
  return sa && sb && sa->ilit && sb->ilit && la == lb;
}

/* every write of e in its scope (f, or all of p's functions), 0 when one cannot be placed */
static int ws_all(ls_program *p, ls_func *f, const ls_entity *e, struct wsites *w) {
  memset(w, 0, sizeof *w);
  if (ws_scope(e))
    ws_walk(f->body, e, w);
  else
    for (size_t i = 0; i < p->funcs.n && !w->over; i++)
      ws_walk(((ls_func *)p->funcs.v[i])->body, e, w);
  return !w->over;
}

/* the split call s makes a communicator of one member: its color is the calling rank of the
 * communicator it splits, a value written nowhere but by that rank query (and the parent,
 * unless a predefined handle, written nowhere) */
static int singleton_split(ls_program *p, ls_func *f, ls_node *s) {
  const char *kn = s->ent && s->ent->rule ? s->ent->rule->kind_name : NULL;
  int ci = arg_role(s, LS_ROLE_COLOR), pi = arg_role(s, LS_ROLE_COMM);
  if (!kn || strcmp(kn, "comm_split") || ci < 0 || pi < 0)
    return 0;
  ls_node *c = ls_strip_casts(s->kids[ci]);
  if (!c || (c->kind != CXCursor_DeclRefExpr && c->kind != CXCursor_MemberRefExpr) || !c->ent || c->ilit)
    return 0;
  struct wsites w;
  if (!ws_all(p, f, c->ent, &w) || !w.n)
    return 0;
  for (int i = 0; i < w.n; i++) {
    int qi = w.s[i].how == S_QUERY ? arg_role(w.s[i].val, LS_ROLE_COMM) : -1;
    if (qi < 0 || !same_handle(w.s[i].val->kids[qi], s->kids[pi]))
      return 0;
  }
  long long lit;
  int addr;
  const ls_entity *par = handle_of(s->kids[pi], &lit, &addr);
  if (par && !addr && (!ws_all(p, f, par, &w) || w.n))
    return 0;
  return 1;
}

/* the field or local communicator comm has one member on every rank: each write of it is a
 * split by the parent's own rank, a free, or a constructor's initial value */
static int singleton_comm(ls_program *p, ls_func *f, const ls_entity *c) {
  struct wsites w;
  if (!ws_all(p, f, c, &w))
    return 0;
  int made = 0;
  for (size_t g = 0; g < (ws_scope(c) ? 1 : p->funcs.n); g++) {
    ls_func *h = ws_scope(c) ? f : p->funcs.v[g];
    struct wsites v = {0};
    ws_walk(h->body, c, &v);
    for (int i = 0; i < v.n; i++) {
      if (v.s[i].how == S_CREATE && singleton_split(p, h, v.s[i].val))
        made = 1;
      else if (v.s[i].how != S_FREE && !(v.s[i].how == S_ASSIGN && is_ctor(h) && reads_nothing(v.s[i].val)))
        return 0;
    }
  }
  return made;
}

/* block k of g makes field communicator c a singleton: exactly one write of c in it, a
 * split by the parent's own rank */
static int block_singleton(ls_program *p, ls_func *g, const ls_block *k, const ls_entity *c) {
  struct wsites w = {0};
  for (int i = 0; i < k->nitems; i++)
    ws_walk(k->items[i], c, &w);
  return !w.over && w.n == 1 && w.s[0].how == S_CREATE && singleton_split(p, g, w.s[0].val);
}

static int block_writes(const ls_block *k, const ls_entity *e) {
  struct wsites w = {0};
  for (int i = 0; i < k->nitems; i++)
    ws_walk(k->items[i], e, &w);
  return w.n || w.over;
}

/* field fl, read in f on field communicator c, is the same on all of c (see above) */
static int field_uniform(ls_program *p, ls_func *f, const ls_entity *fl, const ls_entity *c) {
  struct wsites w;
  if (!ws_all(p, f, fl, &w) || !ws_all(p, f, c, &w))
    return 0;
  struct wsites mine = {0};
  ws_walk(f->body, fl, &mine);
  ws_walk(f->body, c, &mine);
  if (mine.n)
    return 0; /* written where it is read: the order there is not followed */
  int made = 0;
  for (size_t g = 0; g < p->funcs.n; g++) {
    ls_func *h = p->funcs.v[g];
    for (int b = 0; b < h->nblocks; b++) {
      ls_block *k = h->blocks[b];
      for (int i = 0; i < k->nitems; i++) {
        struct wsites v = {0};
        ws_walk(k->items[i], fl, &v);
        for (int j = 0; j < v.n; j++) {
          if (v.s[j].how != S_ASSIGN)
            return 0;
          if (ls_expr_taint(p, NULL, v.s[j].val) && !block_singleton(p, h, k, c))
            return 0;
        }
        memset(&v, 0, sizeof v);
        ws_walk(k->items[i], c, &v);
        for (int j = 0; j < v.n; j++) {
          if (v.s[j].how == S_CREATE && block_writes(k, fl))
            made = 1;
          else if (v.s[j].how != S_FREE && !(v.s[j].how == S_ASSIGN && is_ctor(h) && reads_nothing(v.s[j].val)))
            return 0;
        }
        if (v.over)
          return 0;
      }
    }
  }
  return made;
}

int ls_split_uniform_on(ls_program *p, ls_func *f, ls_node *val, ls_node *comm) {
  ls_node *c = ls_strip_casts(comm), *v = ls_strip_casts(val);
  if (!c || (c->kind != CXCursor_DeclRefExpr && c->kind != CXCursor_MemberRefExpr) || !c->ent ||
      (c->ent->kind != LS_ENT_VAR && c->ent->kind != LS_ENT_FIELD && c->ent->kind != LS_ENT_GLOBAL))
    return 0;
  if (singleton_comm(p, f, c->ent))
    return 1;
  return v && v->kind == CXCursor_MemberRefExpr && v->ent && v->ent->kind == LS_ENT_FIELD &&
         c->ent->kind == LS_ENT_FIELD && field_uniform(p, f, v->ent, c->ent);
}

int ls_split_singleton_calls(ls_program *p, ls_func *f, ls_node *const *calls, int n) {
  for (int i = 0; i < n; i++) {
    const ls_node *k = calls[i];
    int ci = k->kind == CXCursor_CallExpr && k->ent && k->ent->rule && k->ent->rule->kind == LS_KIND_COLLECTIVE
                 ? arg_role(k, LS_ROLE_COMM) : -1;
    ls_node *c = ci >= 0 ? ls_strip_casts(calls[i]->kids[ci]) : NULL;
    if (!c || (c->kind != CXCursor_DeclRefExpr && c->kind != CXCursor_MemberRefExpr) || !c->ent ||
        (c->ent->kind != LS_ENT_VAR && c->ent->kind != LS_ENT_FIELD && c->ent->kind != LS_ENT_GLOBAL) ||
        !singleton_comm(p, f, c->ent))
      return 0;
  }
  return n > 0;
}
