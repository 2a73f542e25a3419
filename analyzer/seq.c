/* seq.c — collective sequences of a function, compared by hash: H(x) is the hash of the
 * canonical collective sequence from block x to the function exit along the post-dominator
 * chain (a helper call counts as its own sequence's hash), memoized in the blocks; the
 * alternatives of a branch are equal when their regions are equal. Also the bounded walks
 * that list the first calls of a branch's sides for a report. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "xalloc.h"

#define HB 0x100000001b3ull /* base of the sequence hash (odd) */

static uint64_t powb(long e) {
  uint64_t r = 1, b = HB;
  for (; e > 0; e >>= 1, b *= b)
    if (e & 1)
      r *= b;
  return r;
}

/* ---- normalized argument text (fingerprint expressions) ---- */
static void sb_add(struct ls_sbuf *b, const char *t) {
  size_t k = strlen(t);
  if (b->n + k + 1 > b->cap) {
    b->cap = (b->n + k + 1) * 2;
    b->s = ls_xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, t, k + 1);
  b->n += k;
}

static const char *binop_text(int op) {
  static const char *t[] = {"?", ".*", "->*", "*", "/", "%", "+", "-", "<<", ">>", "<=>", "<", ">", "<=", ">=",
                            "==", "!=", "&", "^", "|", "&&", "||", "=", "*=", "/=", "%=", "+=", "-=", "<<=",
                            ">>=", "&=", "^=", "|=", ","};
  return op >= 0 && (size_t)op < sizeof t / sizeof t[0] ? t[op] : "?";
}

/* "#<value>" without snprintf (~700 instructions a call, and every argument has one) */
static void sb_int(struct ls_sbuf *b, long long v) {
  char tmp[32], *t = tmp + sizeof tmp;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  *--t = 0;
  do
    *--t = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0)
    *--t = '-';
  *--t = '#';
  sb_add(b, t);
}

/* a helper's parameter i stands for argument i of the call that reached it (seq.c's
 * expanded comparison); `up`: the call's own substitution */
struct ls_sub { const ls_func *f; const ls_node *call; const struct ls_sub *up; };

static void norm_rec(struct ls_sbuf *b, const ls_node *n, const struct ls_sub *sub) {
  if (!n)
    return;
  /* a cached text was made without a substitution: only a folded constant holds for any */
  if (ls_nx(n)->norm && (!sub || n->x->norm[0] == '#')) {
    sb_add(b, n->x->norm);
    return;
  }
  char tmp[32];
  switch (n->kind) {
  case CXCursor_IntegerLiteral:
    sb_int(b, n->ival);
    return;
  case CXCursor_DeclRefExpr:
    for (const struct ls_sub *q = sub; q && !n->ilit && n->ent && n->ent->kind == LS_ENT_PARAM; q = NULL)
      for (int i = 0; i < q->f->nparams; i++)
        if (q->f->params[i] == n->ent && (unsigned)i < q->call->nkids && !ls_writes_of(q->f->body, n->ent, LS_WR_ASSIGN, 1) /* else not the argument */) {
          norm_rec(b, q->call->kids[i], q->up);
          return;
        }
    if (n->ilit) {
      sb_int(b, n->ival);
    } else {
      sb_add(b, n->text ? n->text : "?");
    }
    return;
  case CXCursor_MemberRefExpr:
    for (unsigned i = 0; i < n->nkids; i++)
      norm_rec(b, n->kids[i], sub);
    sb_add(b, ".");
    sb_add(b, n->text ? n->text : "?");
    return;
  case CXCursor_BinaryOperator:
    sb_add(b, "(");
    if (n->nkids == 2) {
      norm_rec(b, n->kids[0], sub);
      sb_add(b, binop_text(n->op));
      norm_rec(b, n->kids[1], sub);
    }
    sb_add(b, ")");
    return;
  case CXCursor_CallExpr:
    sb_add(b, n->text ? n->text : "?");
    sb_add(b, "(");
    for (unsigned i = 0; i < n->nkids; i++) {
      if (i)
        sb_add(b, ",");
      norm_rec(b, n->kids[i], sub);
    }
    sb_add(b, ")");
    return;
  case CXCursor_UnaryOperator:
    snprintf(tmp, sizeof tmp, "u%d(", n->op);
    sb_add(b, tmp);
    break;
  case CXCursor_ArraySubscriptExpr:
    sb_add(b, "[");
    break;
  default:
    if (n->text && n->nkids == 0)
      sb_add(b, n->text);
    for (unsigned i = 0; i < n->nkids; i++)
      norm_rec(b, n->kids[i], sub);
    return;
  }
  for (unsigned i = 0; i < n->nkids; i++) {
    if (i)
      sb_add(b, ",");
    norm_rec(b, n->kids[i], sub);
  }
  sb_add(b, n->kind == CXCursor_ArraySubscriptExpr ? "]" : ")");
}

/* b: one buffer for all (the run's, freed with it): a malloc and a free per argument cost
 * more than the text */
static const char *norm(ls_program *p, struct ls_sbuf *b, ls_node *n) {
  if (!n)
    return "";
  if (!ls_nx(n)->norm) {
    b->n = 0;
    sb_add(b, "");
    norm_rec(b, n, NULL);
    ls_node_ext(p->arena, n)->norm = ls_strndup(p->arena, b->s, b->n);
  }
  return n->x->norm;
}

const char *ls_arg_norm(ls_program *p, struct ls_sbuf *b, ls_node *n) { return norm(p, b, n); }
const char *ls_norm_text(ls_check_ctx *c, ls_node *n) { return norm(c->p, &c->nbuf, n); }

/* ---- events ---- */
/* the text of n under sub, in b (valid until b's next use) */
static const char *norm_sub(ls_program *p, struct ls_sbuf *b, ls_node *n, const struct ls_sub *sub) {
  if (!sub)
    return norm(p, b, n);
  b->n = 0;
  sb_add(b, "");
  norm_rec(b, n, sub);
  return b->s;
}

/* ---- tokens ----
 * A collective's token hashes its op and the texts of the arguments that must match across
 * ranks. Root, reduction op and communicator always count; the count and datatype count
 * only where their type signature is known. In an API with derived datatypes (MPI) that is
 * where the datatype is spelled as a predefined one: a vector of n doubles and n doubles
 * have one signature, and a datatype the program built or picked from an array is not
 * compared (the call is `open`, matched by its core alone, seq.c's expanded comparison).
 * There the arrays of one count per rank (`counts`) are not compared either: their text
 * says nothing of what they hold. */
struct tokacc { uint64_t h, core; int open; };

static void tok_arg(struct tokacc *a, enum ls_role ro, const char *txt, uint64_t *comm) {
  char tag[4] = {'|', (char)('a' + ro), '=', 0};
  int sig = ro == LS_ROLE_COUNT || ro == LS_ROLE_DTYPE || ro == LS_ROLE_COUNTS;
  if (!sig) {
    a->core = ls_hash_str(ls_hash_str(a->core, tag), txt);
    if (ro == LS_ROLE_COMM && comm)
      *comm = ls_hash_str(1, txt);
  }
  a->h = ls_hash_str(ls_hash_str(a->h, tag), txt);
}

/* the argument node that n stands for under sub (a helper's parameter: the call's argument) */
static const ls_node *subst(const ls_node *n, const struct ls_sub *sub) {
  const ls_node *k = n;
  while (k && (k->kind == CXCursor_ParenExpr || k->kind == CXCursor_UnexposedExpr) && k->nkids == 1)
    k = k->kids[0];
  if (!sub || !k || k->kind != CXCursor_DeclRefExpr || k->ilit || !k->ent || k->ent->kind != LS_ENT_PARAM)
    return n;
  for (int i = 0; i < sub->f->nparams; i++)
    if (sub->f->params[i] == k->ent && (unsigned)i < sub->call->nkids &&
        !ls_writes_of(sub->f->body, k->ent, LS_WR_ASSIGN, 1))
      return subst(sub->call->kids[i], sub->up);
  return n;
}

/* the datatype argument d leaves the call's signature open: its API has derived datatypes
 * and d is spelled as no predefined one (a node whose spelling was not looked at, such as a
 * helper's argument, is compared as written) */
static int open_dtype(const ls_rule_fn *t, const ls_node *d, const struct ls_sub *sub) {
  d = d ? subst(d, sub) : NULL;
  return t->basic_dtypes && d && d->dtype_seen && !d->dtype_basic;
}

static uint64_t tok_end(struct tokacc *a, uint64_t *core, int *open) {
  if (core)
    *core = a->core | 1;
  if (open)
    *open = a->open;
  return (a->open ? ls_hash_str(a->core, "|open") : a->h) | 1;
}

/* a wrapper's call (wrappers.c): each fingerprint argument of the target it forwards to, taken
 * from the call's argument for it or from the value the wrapper fixes (compared as written) */
static uint64_t wrapper_token(ls_check_ctx *c, ls_node *n, const struct ls_sub *sub, uint64_t *comm, uint64_t h,
                              uint64_t *core, int *open) {
  const ls_rule_fn *r = n->ent->rule, *t = r->as;
  struct tokacc a = {h, h, 0};
  for (int i = 0; i < t->nargs; i++) {
    int j = r->as_arg[i];
    if (t->roles[i] == LS_ROLE_DTYPE && j >= 0 && (unsigned)j < n->nkids && open_dtype(t, n->kids[j], sub))
      a.open = 1;
  }
  for (int i = 0; i < t->nargs; i++) {
    enum ls_role ro = t->roles[i];
    if (!(ro == LS_ROLE_COUNT || ro == LS_ROLE_DTYPE || ro == LS_ROLE_ROOT || ro == LS_ROLE_REDOP || ro == LS_ROLE_COMM ||
          ro == LS_ROLE_COUNTS) ||
        (ro == LS_ROLE_COUNTS && t->basic_dtypes))
      continue;
    int j = r->as_arg[i];
    const char *txt = j >= 0 && (unsigned)j < n->nkids ? norm_sub(c->p, &c->nbuf, n->kids[j], sub)
                      : r->as_fixed ? r->as_fixed[i] : NULL;
    if (!txt)
      continue;
    tok_arg(&a, ro, txt, comm);
  }
  return tok_end(&a, core, open);
}

/* a collective's token (op and fingerprint argument texts); *comm: its communicator's text
 * hash; *core: the token without count and datatype; *open: its signature is not compared */
static uint64_t coll_token(ls_check_ctx *c, ls_node *n, const struct ls_sub *sub, uint64_t *comm, uint64_t *core,
                           int *open) {
  const ls_rule_fn *r = n->ent->rule;
  uint64_t h = ls_hash_str(0, r->op);
  if (comm)
    *comm = 0;
  if (r->as) /* a wrapper: the target's arguments in its order, as a direct call hashes them */
    return wrapper_token(c, n, sub, comm, h, core, open);
  int inplace = r->in_place_buf >= 0 && r->in_place_value && (unsigned)r->in_place_buf < n->nkids &&
                n->kids[r->in_place_buf] && ls_nx(n->kids[r->in_place_buf])->spell &&
                !strcmp(ls_nx(n->kids[r->in_place_buf])->spell, r->in_place_value);
  struct tokacc a = {h, h, 0};
  for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++)
    if ((inplace ? i == r->in_place_dtype : r->roles[i] == LS_ROLE_DTYPE) && open_dtype(r, n->kids[i], sub))
      a.open = 1;
  for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++) {
    enum ls_role ro = r->roles[i];
    if (inplace) { /* the library ignores count/dtype here and reads these instead */
      if (ro == LS_ROLE_COUNT || ro == LS_ROLE_DTYPE)
        continue;
      if (i == r->in_place_count)
        ro = LS_ROLE_COUNT;
      else if (i == r->in_place_dtype)
        ro = LS_ROLE_DTYPE;
    }
    if (ro == LS_ROLE_COUNTS && r->basic_dtypes)
      continue;
    if (ro == LS_ROLE_COUNT || ro == LS_ROLE_DTYPE || ro == LS_ROLE_ROOT || ro == LS_ROLE_REDOP || ro == LS_ROLE_COMM ||
        ro == LS_ROLE_COUNTS)
      tok_arg(&a, ro, norm_sub(c->p, &c->nbuf, n->kids[i], sub), comm);
  }
  return tok_end(&a, core, open);
}

int ls_event_token(ls_check_ctx *c, ls_node *n, uint64_t *tok) {
  if (ls_is_coll(n)) {
    *tok = coll_token(c, n, NULL, NULL, NULL, NULL);
    return 1;
  }
  if (ls_is_helper_call(n)) {
    *tok = (n->ent->def->entry->h * 31 + 7) | 1;
    return 1;
  }
  return 0;
}

int ls_events_match(ls_check_ctx *c, ls_node *a, ls_node *b) {
  uint64_t ta = 0, tb = 0, ca, cb;
  int oa, ob;
  if (ls_is_coll(a) && ls_is_coll(b)) {
    ta = coll_token(c, a, NULL, NULL, &ca, &oa);
    tb = coll_token(c, b, NULL, NULL, &cb, &ob);
    return ta == tb || (ca == cb && (oa || ob));
  }
  ls_event_token(c, a, &ta);
  ls_event_token(c, b, &tb);
  return ta == tb;
}

/* ---- alternatives compared by what they issue ----
 * The hashes compare a helper call by the helper (not by what it issues with these
 * arguments) and every collective in one sequence. When they differ, the sides are compared
 * again, expanded: each side's collectives in order, a helper's inlined with its parameters
 * read as the call's arguments, and per communicator (a side's calls on one communicator
 * against the other side's on it). Only sides that issue the same on every one of their own
 * paths are expanded: a nested branch whose alternatives expand alike, no loop that issues
 * collectives, no exit; bounded in calls, depth and blocks. */
#define XMAX 32
/* per call: its token, communicator, core (the token without count and datatype) and
 * whether its signature is open (matched by the core alone) */
struct xlist { uint64_t tok[XMAX], comm[XMAX], core[XMAX]; unsigned char open[XMAX]; int n; };

static void x_push(struct xlist *out, const struct xlist *from, int i) {
  out->tok[out->n] = from->tok[i];
  out->comm[out->n] = from->comm[i];
  out->core[out->n] = from->core[i];
  out->open[out->n++] = from->open[i];
}

static int expand(ls_check_ctx *c, ls_block *k, ls_block *stop, const struct ls_sub *sub, struct xlist *out, int depth);

static int x_items(ls_check_ctx *c, ls_block *k, const struct ls_sub *sub, struct xlist *out, int depth) {
  for (int i = 0; i < k->nitems; i++) {
    ls_node *n = k->items[i];
    if (ls_is_coll(n)) {
      if (out->n >= XMAX)
        return 0;
      int open;
      out->tok[out->n] = coll_token(c, n, sub, &out->comm[out->n], &out->core[out->n], &open);
      out->open[out->n++] = (unsigned char)open;
    } else if (ls_is_helper_call(n)) {
      ls_func *g = n->ent->def, *save = c->f;
      if (depth >= 4 || g == save) /* recursion ends at the depth bound */
        return 0;
      struct ls_sub s2 = {g, n, sub};
      c->f = g;
      int ok = expand(c, g->entry, NULL, &s2, out, depth + 1);
      c->f = save;
      if (!ok)
        return 0;
    }
  }
  return 1;
}

/* ---- counted loops: `for (i = A; i < B; i++)` with A, B constant (3*10 and 5*6 alike) ---- */
static ls_node *bare(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr || n->kind == CXCursor_CStyleCastExpr) &&
         n->nkids >= 1)
    n = n->kids[n->nkids - 1];
  return n;
}

static int fold(ls_node *n, long long *v) {
  n = bare(n);
  if (!n)
    return 0;
  if (n->ilit) {
    *v = n->ival;
    return 1;
  }
  long long a, b;
  if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_Minus && n->nkids == 1 && fold(n->kids[0], &a)) {
    *v = -a;
    return 1;
  }
  if (n->kind != CXCursor_BinaryOperator || n->nkids != 2 || !fold(n->kids[0], &a) || !fold(n->kids[1], &b) ||
      a > 1000000 || a < -1000000 || b > 1000000 || b < -1000000)
    return 0;
  switch (n->op) {
  case CXBinaryOperator_Add: *v = a + b; return 1;
  case CXBinaryOperator_Sub: *v = a - b; return 1;
  case CXBinaryOperator_Mul: *v = a * b; return 1;
  case CXBinaryOperator_Div: if (!b) return 0; *v = a / b; return 1;
  default: return 0;
  }
}

/* every for statement under n whose condition is a loop block's (by: the loop blocks of the
 * function, by condition node), its trip count into that block */
static long long trips_of(ls_node *fs);
static void fors_under(ls_node *n, ls_block **by, size_t cap) {
  if (!n)
    return;
  if (n->kind == CXCursor_ForStmt && n->nkids == 4 && n->kids[1]) {
    const ls_node *c = bare(n->kids[1]);
    for (size_t j = ((uintptr_t)c >> 4) & (cap - 1); by[j]; j = (j + 1) & (cap - 1))
      if (by[j]->cond == c) {
        long long t = trips_of(n);
        by[j]->trips1 = t < 0 || t > INT_MAX - 2 ? 1 : (int)t + 2;
        break;
      }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    fors_under(n->kids[i], by, cap);
}

/* the trip count of the counted for loop fs, or -1 */
static long long trips_of(ls_node *fs) {
  ls_node *init = bare(fs->kids[0]), *cond = bare(fs->kids[1]), *inc = bare(fs->kids[2]);
  ls_entity *i = NULL;
  long long a, b;
  if (init && init->kind == CXCursor_DeclStmt && init->nkids == 1)
    init = init->kids[0];
  if (init && init->kind == CXCursor_VarDecl && init->nkids >= 1 && fold(init->kids[init->nkids - 1], &a))
    i = init->ent;
  else if (init && init->kind == CXCursor_BinaryOperator && init->op == CXBinaryOperator_Assign && init->nkids == 2 &&
           bare(init->kids[0]) && bare(init->kids[0])->kind == CXCursor_DeclRefExpr && fold(init->kids[1], &a))
    i = bare(init->kids[0])->ent;
  if (!i || !cond || cond->kind != CXCursor_BinaryOperator || cond->nkids != 2 || !bare(cond->kids[0]) ||
      bare(cond->kids[0])->ent != i || !fold(cond->kids[1], &b) || !inc || inc->kind != CXCursor_UnaryOperator ||
      inc->nkids != 1 || !bare(inc->kids[0]) || bare(inc->kids[0])->ent != i || ls_writes_of(fs->kids[3], i, LS_WR_ASSIGN, 1))
    return -1;
  int up = inc->op == CXUnaryOperator_PostInc || inc->op == CXUnaryOperator_PreInc;
  int down = inc->op == CXUnaryOperator_PostDec || inc->op == CXUnaryOperator_PreDec;
  long long t = -1;
  if (up && cond->op == CXBinaryOperator_LT)
    t = b - a;
  else if (up && cond->op == CXBinaryOperator_LE)
    t = b - a + 1;
  else if (up && cond->op == CXBinaryOperator_NE && b >= a)
    t = b - a;
  else if (down && cond->op == CXBinaryOperator_GT)
    t = a - b;
  else if (down && cond->op == CXBinaryOperator_GE)
    t = a - b + 1;
  else
    return -1;
  return t < 0 ? 0 : t;
}

/* the trip count of the for loop whose condition block is k, or -1. Computed for all of f's
 * loops in one walk of its body at the first question: a search of the body per loop was
 * quadratic in a long function, and the report walks ask about the same loops again. */
static long long trips(ls_func *f, ls_block *k) {
  if (!f->trips_done) {
    f->trips_done = 1;
    size_t cap = 16;
    while (cap < 2 * (size_t)f->nblocks)
      cap <<= 1;
    ls_block **by = calloc(cap, sizeof *by);
    if (!by)
      abort();
    int any = 0;
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *l = f->blocks[b];
      l->trips1 = 1;
      if (l->is_loop && l->cond) {
        size_t j = ((uintptr_t)l->cond >> 4) & (cap - 1);
        while (by[j])
          j = (j + 1) & (cap - 1);
        by[j] = l;
        any = 1;
      }
    }
    if (any)
      fors_under(f->body, by, cap);
    free(by);
  }
  return k->trips1 <= 1 ? -1 : k->trips1 - 2;
}

/* The loop at k issues nothing on its way around: no block its body reaches before k or
 * the loop's exit J holds a collective or a helper call, or returns (an error exit may). The
 * hashes cannot tell inside an outer loop that issues collectives: there the body's sequence
 * stops at k and the exit's goes on around the outer loop. Bounded like the other walks. */
static int loop_quiet(ls_check_ctx *c, ls_block *k, ls_block *J) {
  ls_func *f = c->f;
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
  if (!stk)
    abort();
  unsigned g = ++c->gen;
  int sp = 0, ok = 1, budget = 512;
  k->mark = J->mark = g;
  for (int i = 0; i < k->nsucc; i++)
    if (k->succ[i]->mark != g) {
      k->succ[i]->mark = g;
      stk[sp++] = k->succ[i];
    }
  while (sp && ok) {
    ls_block *b = stk[--sp];
    if (--budget < 0 || b == f->exit || b == f->vexit)
      ok = 0;
    if (b == f->abort_blk || b == f->killall)
      continue;
    for (int i = 0; i < b->nitems && ok; i++)
      ok = !ls_is_coll(b->items[i]) && !ls_is_helper_call(b->items[i]);
    for (int i = 0; i < b->nsucc && ok; i++)
      if (b->succ[i]->mark != g) {
        b->succ[i]->mark = g;
        stk[sp++] = b->succ[i];
      }
  }
  free(stk);
  return ok;
}

static int expand(ls_check_ctx *c, ls_block *k, ls_block *stop, const struct ls_sub *sub, struct xlist *out, int depth) {
  ls_func *f = c->f;
  while (k && k != stop) {
    if (c->budget-- <= 0)
      return 0;
    if (k == f->exit || k == f->vexit)
      return !stop || stop == f->exit || stop == f->vexit; /* a helper ends; a side must reach its join */
    if (k == f->abort_blk || k == f->killall || !x_items(c, k, sub, out, depth))
      return 0;
    if (k->nsucc == 0)
      return 0;
    if (k->nsucc == 1) {
      k = k->succ[0];
      continue;
    }
    ls_block *J = k->ipdom;
    if (!J)
      return 0;
    long long t = k->is_loop && k->nsucc == 2 ? trips(f, k) : -1;
    if (t >= 0 && t <= XMAX) { /* a counted loop: its body that many times */
      struct xlist body = {.n = 0};
      if (!expand(c, k->succ[0], k, sub, &body, depth) || (body.n && t * body.n > XMAX - out->n))
        return 0;
      for (long long r = 0; r < t; r++)
        for (int i = 0; i < body.n; i++)
          x_push(out, &body, i);
      k = k->succ[1];
      continue;
    }
    if (k->is_loop) { /* another loop: only one that issues nothing */
      struct ls_seq sj = ls_seq_of(c, J);
      for (int i = 0; i < k->nsucc && !loop_quiet(c, k, J); i++) {
        struct ls_seq x = ls_seq_of(c, k->succ[i]);
        if (x.len != sj.len || x.h != sj.h || x.ends != sj.ends)
          return 0;
      }
      k = J;
      continue;
    }
    /* a nested branch: its alternatives (error exits aside) must expand alike */
    struct xlist first = {.n = 0};
    int have = 0;
    for (int i = 0; i < k->nsucc; i++) {
      ls_block *s = k->succ[i];
      if (s == f->abort_blk || s == f->killall || (s->hstate == 2 && s->ends))
        continue;
      struct xlist alt = {.n = 0};
      if (!expand(c, s, J, sub, &alt, depth))
        return 0;
      if (have && (alt.n != first.n || memcmp(alt.tok, first.tok, (size_t)alt.n * sizeof alt.tok[0])))
        return 0;
      if (!have)
        first = alt;
      have = 1;
    }
    for (int i = 0; i < first.n; i++) {
      if (out->n >= XMAX)
        return 0;
      x_push(out, &first, i);
    }
    k = J;
  }
  return 1;
}

/* a's calls on communicator m, in order, equal b's (a call whose signature is open: by its core) */
static int same_on(const struct xlist *a, const struct xlist *b, uint64_t m) {
  int i = 0, j = 0;
  for (;;) {
    while (i < a->n && a->comm[i] != m)
      i++;
    while (j < b->n && b->comm[j] != m)
      j++;
    if (i >= a->n || j >= b->n)
      return i >= a->n && j >= b->n;
    if (a->tok[i] != b->tok[j] && (a->core[i] != b->core[j] || !(a->open[i] || b->open[j])))
      return 0;
    i++, j++;
  }
}

int ls_sides_agree(ls_check_ctx *c, ls_block *b, ls_block *P) {
  struct xlist first = {.n = 0};
  int have = 0;
  c->budget = 2048;
  for (int i = 0; i < b->nsucc; i++) {
    ls_block *s = b->succ[i];
    if (ls_seq_of(c, s).ends)
      return 0; /* an exit: the hashes' report stands */
    struct xlist alt = {.n = 0};
    if (!expand(c, s, P, NULL, &alt, 0))
      return 0;
    if (have) {
      for (int k = 0; k < alt.n; k++)
        if (!same_on(&alt, &first, alt.comm[k]))
          return 0;
      for (int k = 0; k < first.n; k++)
        if (!same_on(&alt, &first, first.comm[k]))
          return 0;
    } else {
      first = alt;
    }
    have = 1;
  }
  return have;
}

/* ---- sequence hash per block, memoized along the post-dominator chain ---- */
static struct ls_seq cat(struct ls_seq a, struct ls_seq b) {
  struct ls_seq r = {a.h + powb(a.len) * b.h, a.len + b.len, b.stop, b.ends};
  return r;
}

struct ls_seq ls_seq_cat(struct ls_seq a, struct ls_seq b) { return cat(a, b); }

struct ls_seq ls_seq_region(struct ls_seq s, struct ls_seq P) {
  if (s.stop == P.stop && s.len >= P.len && s.ends == P.ends) {
    struct ls_seq r = {s.h - powb(s.len - P.len) * P.h, s.len - P.len, -1, 0};
    return r;
  }
  s.stop = -1;
  return s;
}

struct ls_seq ls_seq_of(ls_check_ctx *c, ls_block *k) {
  ls_func *f = c->f;
  struct ls_seq none = {0, 0, -1, 0};
  if (!k || k == f->vexit || k == f->exit)
    return none;
  if (k == f->abort_blk || k == f->killall) {
    none.ends = k == f->abort_blk ? 1 : 2;
    return none;
  }
  if (k->hstate == 2) {
    struct ls_seq r = {k->h, k->len, k->stop, k->ends};
    return r;
  }
  if (k->hstate == 1) { /* back to a block being computed: a loop goes around again, and
                          * that matters only when the loop issues collectives */
    struct ls_seq r = {k->cyc_ev ? ((uint64_t)k->id * 0x9e3779b97f4a7c15ull) | 1 : 0, k->cyc_ev, k->id, 0};
    return r;
  }
  k->hstate = 1;
  struct ls_seq ev = {0, 0, -1, 0};
  for (int i = 0; i < k->nitems; i++) {
    uint64_t t;
    if (ls_event_token(c, k->items[i], &t)) {
      struct ls_seq one = {t, 1, -1, 0};
      ev = cat(ev, one);
    }
  }
  struct ls_seq rest = none;
  if (k->nsucc == 1) {
    rest = ls_seq_of(c, k->succ[0]);
  } else if (k->nsucc > 1) {
    ls_block *P = k->ipdom;
    struct ls_seq sp = ls_seq_of(c, P);
    struct ls_seq alt[2] = {{0}};
    int nalt = 0, differ = 0;
    uint64_t mix = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < k->nsucc; i++) {
      struct ls_seq s = ls_seq_of(c, k->succ[i]);
      if (s.ends && !sp.ends)
        continue; /* an error exit (abort) does not change what surviving ranks issue */
      struct ls_seq r = ls_seq_region(s, sp);
      if (nalt && (r.h != alt[0].h || r.len != alt[0].len))
        differ = 1;
      if (!nalt)
        alt[0] = r;
      nalt++;
      mix = (mix ^ r.h) * HB + (uint64_t)r.len;
    }
    struct ls_seq mid = none;
    if (nalt && !differ) {
      mid = alt[0];
    } else if (nalt) {
      mid.h = mix | 1;
      mid.len = 1;
    }
    rest = cat(mid, sp);
  }
  struct ls_seq r = cat(ev, rest);
  k->h = r.h;
  k->len = r.len;
  k->stop = r.stop;
  k->ends = r.ends;
  k->hstate = 2;
  return r;
}

/* ---- report walks ---- */
/* Whether two alternatives issue the same calls (by callee, as the report names them). */
static int same_calls(const struct ls_evlist *a, const struct ls_evlist *b) {
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (a->v[i]->ent != b->v[i]->ent)
      return 0;
  return 1;
}

/* The walk stops at the join (immediate post-dominator) of every branch it is inside of:
 * each such block's nstop counts how many of the open walks stop there (`depth` of them
 * are open). */
static void walk_in(ls_check_ctx *c, ls_block *k, int depth, struct ls_evlist *out, int p2p) {
  ls_func *f = c->f;
  /* a report needs the first few collectives of each side: the walk is bounded so that
   * many rank-dependent exits in one long function stay linear */
  while (k && !k->nstop && k->mark != c->gen && out->n < LS_MAXEV && c->budget-- > 0) {
    if (k == f->exit || k == f->abort_blk || k == f->vexit || k == f->killall) {
      out->exited = 1;
      return;
    }
    k->mark = c->gen;
    for (int i = 0; i < k->nitems && out->n < LS_MAXEV; i++) {
      ls_node *n = k->items[i];
      if (p2p == 2 ? ls_is_coll(n) || ls_is_blocking_p2p(n) : p2p ? ls_is_p2p(n) : (ls_is_coll(n) || ls_is_helper_call(n))) {
        out->why[out->n] = NULL;
        out->v[out->n++] = n;
      }
    }
    if (k->nsucc == 0)
      return;
    if (k->nsucc > 1) {
      /* a nested branch: follow the alternative that issues the most (error exits issue
       * nothing more and are skipped) */
      /* two lists, the best so far and the one being filled, swapped instead of copied
       * (and not zeroed: only their first n entries are read) */
      struct ls_evlist buf[2], *best = NULL, *sub = &buf[0];
      int alts = 0, varies = 0;
      for (int i = 0; i < k->nsucc && depth < 64; i++) {
        ls_block *s = k->succ[i];
        if (s == f->abort_blk || s == f->killall || (s->hstate == 2 && s->ends))
          continue;
        sub->n = 0;
        sub->exited = 0;
        if (k->ipdom)
          k->ipdom->nstop++;
        walk_in(c, s, depth + 1, sub, p2p);
        if (k->ipdom)
          k->ipdom->nstop--;
        if (alts++ && !same_calls(sub, best))
          varies = 1;
        if (!best || sub->n > best->n) {
          best = sub;
          sub = sub == &buf[0] ? &buf[1] : &buf[0];
        }
      }
      for (int i = 0; best && i < best->n && out->n < LS_MAXEV; i++) {
        out->why[out->n] = best->why[i] ? best->why[i] : varies || k->is_loop ? k : NULL;
        out->v[out->n++] = best->v[i];
      }
      k = k->ipdom;
      continue;
    }
    k = k->succ[0];
  }
}

void ls_walk(ls_check_ctx *c, ls_block *k, ls_block *stop, struct ls_evlist *out, int p2p) {
  if (stop)
    stop->nstop++;
  walk_in(c, k, 1, out, p2p);
  if (stop)
    stop->nstop--;
}

