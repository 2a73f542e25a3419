/* errpath.c — which blocks of a function run only after a call has reported failure, so
 * that a finding there is tagged an error path ("path": "error") instead of a bug of the
 * normal run. A branch is a failure test when its condition compares a call's result with
 * the API's success value (rules: `success` of each file; a project's own zero-valued
 * `...Success` enumerator), tests an API status for non-zero (`if (ret)`, `ret != 0`; an API
 * status: a rules function's, or a call named with a `status_prefixes` entry, MPI_File_open),
 * tests a call's result for a negative value (`if (f() < 0)`: POSIX's and HDF5's failure
 * convention; not a comparison function's order), tests an allocation (rules: `allocators`,
 * or a function whose name ends with one: H5MM_malloc) for NULL, compares a call's result
 * with POSIX's -1, or is a failed assertion (a side that calls an `assert_handlers` entry:
 * the asserted invariant does not hold); its failure side is an error edge. A test of a
 * failure flag or error counter is one too: a local or global that only failure sides clear
 * or increase (fail_flags, ls_errpath_globals), found again as each flag's tests add error
 * blocks. The normal blocks are those the entry reaches without taking
 * an error edge; an error label reached only by the gotos of failure sides is an error block
 * by the same walk. Not a path-sensitive proof: a pending value (ncclInProgress) tested after
 * success counts with the failure side, and a user function's status is known only through a
 * success name or a negative value. */
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

enum { R_NONE, R_STATUS, R_ALLOC, R_MIXED };
enum { WHY_CALL, WHY_ASSERT, WHY_FLAG }; /* what a failure test tests (errp bits 3, 4) */
#define ERR_BUDGET 4096 /* blocks one finding's walk may visit (a long function has many findings) */

static ls_node *bare(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr || n->kind == CXCursor_CStyleCastExpr ||
               n->kind == CXCursor_CXXStaticCastExpr || n->kind == CXCursor_CXXFunctionalCastExpr) && n->nkids)
    n = n->kids[n->nkids - 1];
  return n;
}

static int is_null(ls_node *n) {
  n = bare(n);
  if (!n)
    return 0;
  if (n->kind == CXCursor_CXXNullPtrLiteralExpr || n->kind == CXCursor_GNUNullExpr)
    return 1;
  return n->kind == CXCursor_IntegerLiteral && n->ilit && n->ival == 0;
}

static int is_minus_one(ls_node *n) {
  n = bare(n);
  if (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_Minus && n->nkids == 1) {
    ls_node *k = bare(n->kids[0]);
    return k && k->kind == CXCursor_IntegerLiteral && k->ilit && k->ival == 1;
  }
  return n && n->ilit && n->ival == -1;
}

static int in_list(const char **v, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v[i], s))
      return 1;
  return 0;
}

static int ends_with(const char *s, const char *t) {
  size_t a = strlen(s), b = strlen(t);
  return a >= b && !strcmp(s + a - b, t);
}

/* The success value of an API (ncclSuccess, MPI_SUCCESS, cudaSuccess) or of the project
 * (nccl-tests' testSuccess: an enumerator of value 0 named ...Success) */
static int success_const(const ls_program *p, ls_node *n) {
  n = bare(n);
  if (!n || n->kind != CXCursor_DeclRefExpr || !n->text)
    return 0;
  if (in_list(p->rules->success, p->rules->nsuccess, n->text))
    return 1;
  return n->ilit && n->ival == 0 && (ends_with(n->text, "Success") || ends_with(n->text, "SUCCESS"));
}

static int any_suffix(const char **v, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (ends_with(s, v[i]))
      return 1;
  return 0;
}

static int any_prefix(const char **v, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (!strncmp(s, v[i], strlen(v[i])))
      return 1;
  return 0;
}

/* What a call's result is: an API status (a rules function returning a value that is not a
 * pointer, or a call named as the API's status-returning calls are), an allocation (an
 * allocator or a function named after one), or neither */
static int call_class(const ls_program *p, ls_node *n) {
  n = bare(n);
  if (!n || n->kind != CXCursor_CallExpr || !n->ent)
    return R_NONE;
  const ls_rule_fn *r = n->ent->rule;
  const ls_rules *rl = p->rules;
  if (r && r->returns && strcmp(r->returns, "void") && !strchr(r->returns, '*'))
    return R_STATUS;
  if (r || !n->ent->name)
    return R_NONE;
  if (any_suffix(rl->allocators, rl->nallocators, n->ent->name))
    return R_ALLOC;
  if (!n->ptr_result && any_prefix(rl->status_prefixes, rl->nstatus_prefixes, n->ent->name))
    return R_STATUS;
  return R_NONE;
}

/* A call whose negative result is its failure: any call but an allocation's, a pointer's, and
 * a comparison function's (strcmp, H5F_addr_cmp: a negative order is no failure) */
static int negative_fails(const ls_program *p, ls_node *x) {
  x = bare(x);
  while (x && x->kind == CXCursor_BinaryOperator && x->op == CXBinaryOperator_Assign && x->nkids == 2)
    x = bare(x->kids[1]); /* if ((fid = H5Fcreate(...)) < 0) */
  if (!x || x->kind != CXCursor_CallExpr || !x->ent || !x->ent->name || x->ptr_result || call_class(p, x) == R_ALLOC)
    return 0;
  const char *nm = x->ent->name;
  return !strstr(nm, "cmp") && !strstr(nm, "Cmp") && !strstr(nm, "compare") && !strstr(nm, "Compare");
}

/* Is block t (through empty blocks on the way) a failed assertion: a call of an assert
 * handler, which does not return? */
static int assert_fails(const ls_program *p, const ls_block *t) {
  for (int hop = 0; t && hop < 4; hop++) {
    for (int i = 0; i < t->nitems; i++) {
      const ls_node *n = t->items[i];
      if (n->kind == CXCursor_CallExpr && n->ent && n->ent->name &&
          in_list(p->rules->assert_handlers, p->rules->nassert_handlers, n->ent->name))
        return 1;
    }
    if (t->nitems || t->nsucc != 1)
      return 0;
    t = t->succ[0];
  }
  return 0;
}

struct vars { /* locals by what every assignment to them stores (open addressing) */
  const ls_entity **k;
  unsigned char *cls;
  size_t cap;
};

static unsigned char *var_slot(struct vars *v, const ls_entity *e, int add) {
  size_t j = ((uintptr_t)e >> 4) * 2654435761u & (v->cap - 1);
  while (v->k[j] && v->k[j] != e)
    j = (j + 1) & (v->cap - 1);
  if (!v->k[j] && !add)
    return NULL;
  v->k[j] = e;
  return &v->cls[j];
}

static void note_def(const ls_program *p, struct vars *v, const ls_entity *e, ls_node *rhs) {
  if (!e || (e->kind != LS_ENT_VAR && e->kind != LS_ENT_PARAM))
    return;
  rhs = bare(rhs);
  while (rhs && rhs->kind == CXCursor_BinaryOperator && rhs->op == CXBinaryOperator_Assign && rhs->nkids == 2)
    rhs = bare(rhs->kids[1]); /* a = b = call() */
  int c = call_class(p, rhs);
  unsigned char *s = var_slot(v, e, 1);
  *s = *s == 0 ? (unsigned char)(c + 1) : *s == c + 1 ? *s : R_MIXED + 1;
}

static void scan_defs(const ls_program *p, struct vars *v, ls_node *n) {
  if (!n)
    return;
  if (n->kind == CXCursor_VarDecl && n->nkids && n->ent)
    note_def(p, v, n->ent, n->kids[n->nkids - 1]);
  else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2) {
    ls_node *t = bare(n->kids[0]);
    if (t && t->kind == CXCursor_DeclRefExpr)
      note_def(p, v, t->ent, n->kids[1]);
  } else if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf && n->nkids == 1) {
    ls_node *t = bare(n->kids[0]); /* &x handed away: anything may be stored in it */
    if (t && t->ent && (t->ent->kind == LS_ENT_VAR || t->ent->kind == LS_ENT_PARAM))
      *var_slot(v, t->ent, 1) = R_MIXED + 1;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan_defs(p, v, n->kids[i]);
}

/* What x holds: a call's result directly, an assignment's, or a local that only ever holds
 * one kind of call result */
static int value_class(ls_check_ctx *c, struct vars *v, ls_node *x) {
  x = bare(x);
  while (x && x->kind == CXCursor_BinaryOperator && x->op == CXBinaryOperator_Assign && x->nkids == 2)
    x = bare(x->kids[1]);
  if (!x)
    return R_NONE;
  if (x->kind == CXCursor_CallExpr)
    return call_class(c->p, x);
  if (x->kind != CXCursor_DeclRefExpr || !x->ent || (x->ent->kind != LS_ENT_VAR && x->ent->kind != LS_ENT_PARAM))
    return R_NONE;
  if (!v->cap) { /* the function's assignments, once, when a condition first needs them */
    size_t n = 0;
    for (int b = 0; b < c->f->nblocks; b++)
      n += (size_t)c->f->blocks[b]->nitems + 1;
    v->cap = 16;
    while (v->cap < 2 * n)
      v->cap <<= 1;
    v->k = calloc(v->cap, sizeof *v->k);
    v->cls = calloc(v->cap, 1);
    if (!v->k || !v->cls)
      abort();
    for (int b = 0; b < c->f->nblocks; b++) {
      ls_block *k = c->f->blocks[b];
      for (int i = 0; i < k->nitems; i++)
        scan_defs(c->p, v, k->items[i]);
      if (k->cond)
        scan_defs(c->p, v, k->cond);
    }
  }
  unsigned char *s = var_slot(v, x->ent, 0);
  return s && *s ? *s - 1 : R_NONE;
}

/* The successor of branch k that is taken when a call failed or an assertion does not hold:
 * 0 (the true side), 1, or -1 when k is no failure test; *why: what it tests (WHY_*). */
static int fail_side(ls_check_ctx *c, struct vars *v, ls_block *k, int *why) {
  *why = WHY_CALL;
  if (!k->cond || k->nsucc != 2)
    return -1;
  for (int s = 0; s < 2; s++)
    if (assert_fails(c->p, k->succ[s]) && !assert_fails(c->p, k->succ[!s])) {
      *why = WHY_ASSERT;
      return s;
    }
  ls_node *n = bare(k->cond);
  int flip = 0;
  while (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_LNot && n->nkids == 1) {
    flip ^= 1;
    n = bare(n->kids[0]);
  }
  if (!n)
    return -1;
  int side = -1; /* before flip: 0 when the condition being true means failure */
  if (n->kind == CXCursor_BinaryOperator && n->nkids == 2 &&
      (n->op == CXBinaryOperator_EQ || n->op == CXBinaryOperator_NE) && !is_minus_one(n->kids[0]) &&
      !is_minus_one(n->kids[1])) {
    ls_node *a = n->kids[0], *b = n->kids[1];
    int ne = n->op == CXBinaryOperator_NE;
    if (success_const(c->p, b) || success_const(c->p, a)) {
      side = ne ? 0 : 1; /* unequal to success: failed */
    } else if (is_null(b) || is_null(a)) {
      ls_node *x = is_null(b) ? a : b;
      int cl = value_class(c, v, x);
      if (cl == R_STATUS)
        side = ne ? 0 : 1; /* a status other than 0 */
      else if (cl == R_ALLOC)
        side = ne ? 1 : 0; /* NULL: the allocation failed */
    }
  } else if (n->kind == CXCursor_BinaryOperator && n->nkids == 2 &&
             (n->op == CXBinaryOperator_EQ || n->op == CXBinaryOperator_NE) &&
             ((is_minus_one(n->kids[1]) && negative_fails(c->p, n->kids[0])) ||
              (is_minus_one(n->kids[0]) && negative_fails(c->p, n->kids[1])))) {
    side = n->op == CXBinaryOperator_EQ ? 0 : 1; /* waitpid() == -1: POSIX's failure */
  } else if (n->kind == CXCursor_BinaryOperator && n->nkids == 2 &&
             (n->op == CXBinaryOperator_LT || n->op == CXBinaryOperator_GE || n->op == CXBinaryOperator_GT ||
              n->op == CXBinaryOperator_LE)) {
    /* f() < 0, f() >= 0 and their mirrors 0 > f(), 0 <= f() */
    int lt = n->op == CXBinaryOperator_LT || n->op == CXBinaryOperator_GE;
    ls_node *x = lt ? n->kids[0] : n->kids[1], *z = lt ? n->kids[1] : n->kids[0];
    if (is_null(z) && negative_fails(c->p, x))
      side = n->op == CXBinaryOperator_LT || n->op == CXBinaryOperator_GT ? 0 : 1;
  } else {
    int cl = value_class(c, v, n); /* if (ret), if (p) */
    if (cl == R_STATUS)
      side = 0;
    else if (cl == R_ALLOC)
      side = 1;
  }
  return side < 0 ? -1 : side ^ flip;
}

/* c->errp by block: 1 reached only through failure sides (an error block), 2 reached on the
 * normal run, 0 not reached from the entry */
static void err_walk(ls_check_ctx *c, const signed char *fs, ls_block **stk) {
  ls_func *f = c->f;
  memset(c->errp, 0, (size_t)f->nblocks);
  for (int pass = 1; pass <= 2; pass++) {
    int sp = 0;
    if (c->errp[f->entry->id] < pass) {
      c->errp[f->entry->id] = (unsigned char)pass;
      stk[sp++] = f->entry;
    }
    while (sp) {
      ls_block *k = stk[--sp];
      for (int s = 0; s < k->nsucc; s++) {
        ls_block *t = k->succ[s];
        if ((pass == 2 && fs[k->id] == s) || t->id >= f->nblocks || c->errp[t->id] >= pass)
          continue;
        c->errp[t->id] = (unsigned char)pass;
        stk[sp++] = t;
      }
    }
  }
}

/* Failure flags and error counters: a local whose initializer is a constant and whose every
 * other write is its "failed" value in an error block — a pass flag initialized nonzero and
 * only cleared there (pass = FALSE), or a counter initialized to 0 and only set or increased
 * there (nerrs++). A write anywhere else (the flag cleared on the normal run, reset, handed
 * away by address, stored a computed value) makes it no such flag. */
enum { FL_UNSEEN, FL_FLAG, FL_COUNT, FL_NOT };
struct flag { const ls_entity *e; int st, bad; };

static int lit_of(ls_node *n, long long *v) {
  n = bare(n);
  if (n && n->kind == CXCursor_CXXBoolLiteralExpr && n->text) {
    *v = !strcmp(n->text, "true");
    return 1;
  }
  if (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_Minus && n->nkids == 1 && bare(n->kids[0]) &&
      bare(n->kids[0])->ilit) {
    *v = -bare(n->kids[0])->ival;
    return 1;
  }
  if (n && n->ilit && (n->kind == CXCursor_IntegerLiteral || n->kind == CXCursor_DeclRefExpr)) {
    *v = n->ival;
    return 1;
  }
  return 0;
}

static struct flag *flag_of(ls_vec *fl, const ls_entity *e) {
  for (size_t i = 0; i < fl->n; i++)
    if (((struct flag *)fl->v[i])->e == e)
      return fl->v[i];
  struct flag *g = calloc(1, sizeof *g);
  if (!g)
    abort();
  g->e = e;
  ls_vec_push(fl, g);
  return g;
}

static const ls_entity *var_of(ls_node *n, enum ls_ent_kind kind) {
  n = bare(n);
  return n && n->kind == CXCursor_DeclRefExpr && n->ent && n->ent->kind == kind ? n->ent : NULL;
}
static const ls_entity *local_of(ls_node *n) { return var_of(n, LS_ENT_VAR); }

static void flag_scan(ls_vec *fl, ls_node *n, int err) {
  if (!n)
    return;
  const ls_entity *e;
  long long v;
  if (n->kind == CXCursor_VarDecl && n->ent && n->ent->kind == LS_ENT_VAR) {
    struct flag *g = flag_of(fl, n->ent);
    if (g->st == FL_UNSEEN)
      g->st = n->nkids && lit_of(n->kids[n->nkids - 1], &v) ? (v ? FL_FLAG : FL_COUNT) : FL_NOT;
    else
      g->st = FL_NOT;
  } else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 &&
             (e = local_of(n->kids[0]))) {
    struct flag *g = flag_of(fl, e);
    int ok = lit_of(n->kids[1], &v) && err;
    if (g->st == FL_FLAG && ok && v == 0)
      g->bad = 1;
    else if (g->st == FL_COUNT && ok && v != 0)
      g->bad = 1;
    else
      g->st = FL_NOT; /* also a write before the declaration was seen (a loop back edge) */
  } else if (n->kind == CXCursor_CompoundAssignOperator && n->nkids == 2 && (e = local_of(n->kids[0]))) {
    struct flag *g = flag_of(fl, e);
    if (g->st == FL_COUNT && err && n->op == CXBinaryOperator_AddAssign)
      g->bad = 1;
    else
      g->st = FL_NOT;
  } else if (ls_unary_may_write(n) && (e = local_of(n->kids[0]))) {
    struct flag *g = flag_of(fl, e);
    if (g->st == FL_COUNT && err && (n->op == CXUnaryOperator_PostInc || n->op == CXUnaryOperator_PreInc))
      g->bad = 1;
    else
      g->st = FL_NOT;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    flag_scan(fl, n->kids[i], err);
}

/* The failure side of a test of a failure flag or counter: if (pass), if (!nerrs),
 * nerrs > 0, nerrs != 0, pass == 0; -1 when k tests none */
static int flag_side(const ls_check_ctx *c, ls_vec *fl, ls_block *k) {
  ls_node *n = bare(k->cond);
  int flip = 0;
  while (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_LNot && n->nkids == 1) {
    flip ^= 1;
    n = bare(n->kids[0]);
  }
  const ls_entity *e = n && n->kind == CXCursor_DeclRefExpr ? n->ent : NULL;
  int truth = 1; /* 1: the condition is true when the variable is nonzero */
  if (!e && n && n->kind == CXCursor_BinaryOperator && n->nkids == 2 && is_null(n->kids[1])) {
    ls_node *x = bare(n->kids[0]);
    e = x && x->kind == CXCursor_DeclRefExpr ? x->ent : NULL;
    if (n->op == CXBinaryOperator_EQ)
      truth = 0;
    else if (n->op != CXBinaryOperator_NE && n->op != CXBinaryOperator_GT)
      e = NULL;
  }
  for (size_t i = 0; e && i < fl->n; i++) {
    struct flag *g = fl->v[i];
    if (g->e == e && g->bad && (g->st == FL_FLAG || g->st == FL_COUNT))
      /* a flag fails when zero, a counter when not */
      return (g->st == FL_FLAG ? truth : !truth) ^ flip;
  }
  for (size_t i = 0; e && e->kind == LS_ENT_GLOBAL && i < c->errflags.n; i++) {
    struct flag *g = c->errflags.v[i];
    if (g->e == e)
      return (g->st == FL_FLAG ? truth : !truth) ^ flip;
  }
  return -1;
}

/* Adds the tests of failure flags to fs; did any come? */
static int fail_flags(ls_check_ctx *c, signed char *fs, unsigned char *wy) {
  ls_func *f = c->f;
  ls_vec fl = {0};
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    for (int i = 0; i < k->nitems; i++)
      flag_scan(&fl, k->items[i], c->errp[b] == 1);
    if (k->cond)
      flag_scan(&fl, k->cond, c->errp[b] == 1);
  }
  int more = 0;
  for (int b = 0; b < f->nblocks && (fl.n || c->errflags.n); b++) {
    ls_block *k = f->blocks[b];
    if (fs[b] >= 0 || !k->cond || k->nsucc != 2)
      continue;
    int s = flag_side(c, &fl, k);
    if (s >= 0) {
      fs[b] = (signed char)s;
      wy[b] = WHY_FLAG;
      more = 1;
    }
  }
  for (size_t i = 0; i < fl.n; i++)
    free(fl.v[i]);
  free(fl.v);
  return more;
}

/* A global's writes, over the program: a failed value (0 for a flag; set or increased for a
 * counter) in an error block, a reset (the flag's nonzero, the counter's 0) where every path
 * through the function passes (a test's set-up: pass = TRUE), or anything else (GB_ANY) */
enum { GB_FLAG_BAD = 1, GB_COUNT_BAD = 2, GB_FLAG_SET = 4, GB_COUNT_SET = 8, GB_ANY = 16 };

static void global_scan(ls_vec *gl, ls_node *n, int err, int always) {
  if (!n)
    return;
  const ls_entity *e = NULL;
  int bit = GB_ANY;
  long long v;
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 &&
      (e = var_of(n->kids[0], LS_ENT_GLOBAL))) {
    if (lit_of(n->kids[1], &v) && err)
      bit = v ? GB_COUNT_BAD : GB_FLAG_BAD;
    else if (lit_of(n->kids[1], &v) && always)
      bit = v ? GB_FLAG_SET : GB_COUNT_SET;
  } else if (n->kind == CXCursor_CompoundAssignOperator && n->nkids == 2 && (e = var_of(n->kids[0], LS_ENT_GLOBAL))) {
    if (err && n->op == CXBinaryOperator_AddAssign)
      bit = GB_COUNT_BAD;
  } else if (ls_unary_may_write(n) && (e = var_of(n->kids[0], LS_ENT_GLOBAL))) {
    if (err && (n->op == CXUnaryOperator_PostInc || n->op == CXUnaryOperator_PreInc))
      bit = GB_COUNT_BAD;
  }
  if (e)
    flag_of(gl, e)->bad |= bit;
  for (unsigned i = 0; i < n->nkids; i++)
    global_scan(gl, n->kids[i], err, always);
}

/* does a branch condition test a global (if (pass), if (nerrors > 0))? */
static int tests_global(ls_node *n) {
  n = bare(n);
  while (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_LNot && n->nkids == 1)
    n = bare(n->kids[0]);
  if (n && n->kind == CXCursor_BinaryOperator && n->nkids == 2)
    n = bare(n->kids[0]);
  return var_of(n, LS_ENT_GLOBAL) != NULL;
}

void ls_errpath_globals(ls_check_ctx *c, const ls_vec *funcs) {
  int any = 0;
  for (size_t i = 0; i < funcs->n && !any; i++) {
    ls_func *f = funcs->v[i];
    for (int b = 0; b < f->nblocks && !any; b++)
      any = f->blocks[b]->cond && tests_global(f->blocks[b]->cond);
  }
  if (!any)
    return; /* no function tests one: no walk of the error blocks twice */
  ls_vec gl = {0};
  unsigned char *always = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < funcs->n; i++) {
    ls_func *f = funcs->v[i];
    if (!f->entry || !f->nblocks)
      continue;
    c->f = f;
    ls_errpath_analyze(c);
    if (!always || (size_t)f->nblocks > cap) {
      free(always);
      cap = (size_t)f->nblocks;
      always = malloc(cap);
      if (!always)
        abort();
    }
    memset(always, 0, (size_t)f->nblocks);
    for (ls_block *k = f->entry; k && k->id >= 0 && k->id < f->nblocks && !always[k->id]; k = k->ipdom)
      always[k->id] = 1; /* every path from the entry to the exit passes k */
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      int err = ls_errpath_block(c, k);
      for (int j = 0; j < k->nitems; j++)
        global_scan(&gl, k->items[j], err, always[b]);
      if (k->cond)
        global_scan(&gl, k->cond, err, always[b]);
    }
  }
  free(always);
  c->f = NULL;
  for (size_t i = 0; i < gl.n; i++) {
    struct flag *g = gl.v[i];
    int m = g->bad;
    g->st = (m & GB_ANY)                                                      ? FL_NOT
            : (m & GB_FLAG_BAD) && !(m & (GB_COUNT_BAD | GB_COUNT_SET))      ? FL_FLAG
            : (m & GB_COUNT_BAD) && !(m & (GB_FLAG_BAD | GB_FLAG_SET))       ? FL_COUNT
                                                                              : FL_NOT;
    if (g->st == FL_NOT)
      free(g);
    else
      ls_vec_push(&c->errflags, g);
  }
  free(gl.v);
}

void ls_errpath_analyze(ls_check_ctx *c) {
  ls_func *f = c->f;
  if ((size_t)f->nblocks + 1 > c->errcap) {
    free(c->errp);
    free(c->errseen);
    free(c->errstk);
    c->errcap = (size_t)f->nblocks * 2 + 1;
    c->errp = malloc(c->errcap);
    c->errseen = calloc(c->errcap, sizeof *c->errseen);
    c->errstk = malloc(c->errcap * sizeof *c->errstk);
    c->errgen = 0;
    if (!c->errp || !c->errseen || !c->errstk)
      abort();
  }
  c->errnbuilt = 0;
  memset(c->errp, 0, (size_t)f->nblocks);
  c->errany = 0;
  struct vars v = {0};
  signed char *fs = malloc((size_t)f->nblocks + 1);
  unsigned char *wy = malloc((size_t)f->nblocks + 1);
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
  if (!fs || !wy || !stk)
    abort();
  int any = 0;
  for (int b = 0; b < f->nblocks; b++) {
    int why;
    fs[b] = (signed char)fail_side(c, &v, f->blocks[b], &why);
    wy[b] = (unsigned char)why;
    any |= fs[b] >= 0;
  }
  free(v.k);
  free(v.cls);
  if (any || c->errflags.n) { /* a global failure flag may be tested here */
    err_walk(c, fs, stk);
    /* a flag or counter that only failure sides change is a failure test where it is
     * tested; each such test can make more blocks error blocks, and so more flags */
    for (int round = 0; round < 4 && fail_flags(c, fs, wy); round++)
      err_walk(c, fs, stk);
    /* errp: error blocks end at 1, then bit 0 error block, bit 1 failure test, bit 2 its
     * failure side, bit 3 an assertion, bit 4 a failure flag's test */
    for (int b = 0; b < f->nblocks; b++) {
      c->errp[b] = (unsigned char)((c->errp[b] == 1) | (fs[b] >= 0) << 1 | (fs[b] == 1) << 2 | (fs[b] >= 0 && wy[b] == WHY_ASSERT) << 3 |
                                  (fs[b] >= 0 && wy[b] == WHY_FLAG) << 4);
      c->errany |= c->errp[b];
    }
  }
  free(fs);
  free(wy);
  free(stk);
}

int ls_errpath_block(const ls_check_ctx *c, const ls_block *k) {
  return c->errany && k && k->id >= 0 && k->id < c->f->nblocks && (c->errp[k->id] & 1);
}

/* A fresh generation of c->errseen (cleared when the counter wraps) */
static unsigned fresh(ls_check_ctx *c) {
  if (++c->errgen == 0) {
    memset(c->errseen, 0, c->errcap * sizeof *c->errseen);
    c->errgen = 1;
  }
  return c->errgen;
}

/* The block of c->f whose items hold n, or NULL: a hash of the items, built once per function */
static ls_block *block_of(ls_check_ctx *c, const ls_node *n) {
  ls_func *f = c->f;
  if (!n)
    return NULL;
  if (!c->errnbuilt) {
    size_t items = 0;
    for (int b = 0; b < f->nblocks; b++)
      items += (size_t)f->blocks[b]->nitems;
    size_t cap = 16;
    while (cap < 2 * items + 2)
      cap <<= 1;
    if (cap > c->errncap) {
      free(c->errnk);
      free(c->errnb);
      c->errncap = cap;
      c->errnk = malloc(cap * sizeof *c->errnk);
      c->errnb = malloc(cap * sizeof *c->errnb);
      if (!c->errnk || !c->errnb)
        abort();
    }
    memset(c->errnk, 0, c->errncap * sizeof *c->errnk);
    for (int b = 0; b < f->nblocks; b++)
      for (int i = 0; i < f->blocks[b]->nitems; i++) {
        const ls_node *m = f->blocks[b]->items[i];
        size_t j = ((uintptr_t)m >> 4) * 2654435761u & (c->errncap - 1);
        while (c->errnk[j] && c->errnk[j] != m)
          j = (j + 1) & (c->errncap - 1);
        if (!c->errnk[j])
          c->errnk[j] = m, c->errnb[j] = f->blocks[b];
      }
    c->errnbuilt = 1;
  }
  size_t j = ((uintptr_t)n >> 4) * 2654435761u & (c->errncap - 1);
  while (c->errnk[j] && c->errnk[j] != n)
    j = (j + 1) & (c->errncap - 1);
  return c->errnk[j] ? c->errnb[j] : NULL;
}

void ls_errpath_free(ls_check_ctx *c) {
  for (size_t i = 0; i < c->errflags.n; i++)
    free(c->errflags.v[i]);
  free(c->errflags.v);
  free(c->errp);
  free(c->errseen);
  free(c->errstk);
  free(c->errnk);
  free(c->errnb);
  free(c->gnorm);
}

static ls_block *fail_succ(const ls_check_ctx *c, const ls_block *t) {
  return (c->errp[t->id] & 2) ? t->succ[(c->errp[t->id] >> 2) & 1] : NULL;
}

ls_block *ls_errpath_why(ls_check_ctx *c, ls_block *k) {
  if (!ls_errpath_block(c, k))
    return NULL;
  /* back through error blocks to a failure test whose failure side leads here */
  unsigned g = fresh(c);
  ls_block **q = c->errstk, *why = NULL;
  int qh = 0, qt = 0;
  c->errseen[k->id] = g;
  q[qt++] = k;
  while (qh < qt && !why) {
    ls_block *x = q[qh++];
    for (int i = 0; i < x->npred && !why; i++) {
      ls_block *t = x->pred[i];
      if (fail_succ(c, t) == x)
        why = t;
      else if ((c->errp[t->id] & 1) && c->errseen[t->id] != g) {
        c->errseen[t->id] = g;
        q[qt++] = t;
      }
    }
  }
  return why;
}

ls_block *ls_errpath_into(ls_check_ctx *c, ls_block *k) {
  if (!c->errany || !k)
    return NULL;
  for (int i = 0; i < k->npred; i++) {
    ls_block *p = k->pred[i], *w;
    if (fail_succ(c, p) == k)
      return p;
    if ((w = ls_errpath_why(c, p)))
      return w;
  }
  return NULL;
}

ls_block *ls_errpath_at(ls_check_ctx *c, const ls_node *n) {
  return c->errany && n ? ls_errpath_why(c, block_of(c, n)) : NULL;
}

ls_block *ls_errpath_skip(ls_check_ctx *c, ls_block *b, const ls_node *at) {
  if (!c->errany)
    return NULL;
  ls_func *f = c->f;
  ls_block *ab = block_of(c, at), *why;
  /* b on an error path, b a failure test (its sides: failed or not), at only after one */
  if ((why = ls_errpath_why(c, b)) || (!b->is_loop && (c->errp[b->id] & 2)) || (why = ls_errpath_why(c, ab)))
    return why ? why : b;
  /* a loop's finding is its trip count, which no failure side decides: every normal path
   * from a loop condition passes what follows the loop */
  if (!ab || b->is_loop)
    return NULL;
  /* does a normal path from b leave the function without passing at? (back at b: the same
   * choice again, whose other ways out the walk takes anyway) Else what skips at is the
   * failure side of a test on the way: the first one met names the finding's error path. */
  unsigned g = fresh(c);
  ls_block **stk = c->errstk;
  int sp = 0, escapes = 0, budget = ERR_BUDGET;
  c->errseen[b->id] = g;
  c->errseen[ab->id] = g;
  stk[sp++] = b;
  while (sp && !escapes) {
    ls_block *k = stk[--sp];
    if (--budget < 0)
      return NULL; /* too far to tell: the finding stays on the normal path */
    if (k == f->exit || k == f->vexit || k == f->abort_blk || k == f->killall) {
      escapes = 1;
      break;
    }
    if (!why && k != b && fail_succ(c, k))
      why = k;
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      if ((c->errp[t->id] & 1) || c->errseen[t->id] == g)
        continue;
      c->errseen[t->id] = g;
      stk[sp++] = t;
    }
  }
  return escapes ? NULL : why;
}

void ls_errpath_tag(ls_check_ctx *c, ls_finding *fd, const ls_block *why) {
  if (!fd || !why || !why->cond)
    return;
  fd->errpath = 1;
  int bits = why->id >= 0 && why->id < c->f->nblocks ? c->errp[why->id] : 0;
  ls_vec_push(&fd->notes, ls_check_loc(c->p, why->cond->file, why->cond->line, why->cond->col,
                                       bits & 8    ? "error path: taken only when the assertion here fails"
                                       : bits & 16 ? "error path: taken only when the flag tested here records a failure "
                                                     "(only failure sides clear or count it)"
                                                   : "error path: taken only when the call checked here has reported failure"));
}
