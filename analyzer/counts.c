/* counts.c — when a counts array (MPI's recvcounts, sendcounts) is uniform at one collective
 * although the program-wide fact of its variable is rank-dependent: filled alike for every
 * member right before the call, or filled under a rank-dependent branch that a uniform guard
 * of the call decides. Both answer for one call, read by checks/rank_dependent_argument.c. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "xalloc.h"

static int is_base(const ls_entity *t) { return t && t->kind != LS_ENT_FUNC; }

/* ---- counts arrays filled before the collective ----
 * A member's or global's fact is one for the whole program, and a local array's is where any
 * write put it: lammps' Irregular sets `work2[i] = 1` for every rank i right before
 * MPI_Reduce_scatter(work1, &n, work2, ...) and uses work2 for per-rank offsets after it, so
 * the field is rank-dependent although what the call reads is not. The call reads one count
 * per member of its communicator; a loop `for (i = 0; i < n; i++) a[i] = v;` with v uniform and
 * n that communicator's size, through which every path to the call goes, and after which
 * nothing on the way writes a, has overwritten all of them alike. The size is a local or
 * member the program writes nowhere but in size queries of the call's communicator (which
 * is written at most once); other names of the array's memory (another pointer to it) are
 * not followed, as elsewhere in this pass. */

/* the entity a communicator expression names (`world`, `c`, `&ompi_mpi_comm_world`) */
static ls_entity *comm_ent(ls_node *n) {
  n = ls_strip_casts(n);
  if (n && n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf && n->nkids)
    n = ls_strip_casts(n->kids[0]);
  if (!n || (n->kind != CXCursor_DeclRefExpr && n->kind != CXCursor_MemberRefExpr))
    return NULL;
  int level = 0;
  ls_entity *e = ls_target_of(n, &level);
  return level == 0 && is_base(e) ? e : NULL;
}

static int arg_of_role(const ls_node *call, int role) {
  const ls_rule_fn *r = call->ent && call->ent->rule ? call->ent->rule : NULL;
  for (int i = 0; r && i < r->nargs && (unsigned)i < call->nkids; i++)
    if ((int)r->roles[i] == role)
      return i;
  return -1;
}

static int names(const ls_entity *t, const ls_entity *e) { return t && (t == e || t->pfield == e); }

struct size_scan { const ls_entity *v, *comm; int bad; int queries; };

/* every write of s->v under n is a size query of s->comm (s->bad otherwise) */
static void size_writes(struct size_scan *s, ls_node *n) {
  if (!n || s->bad)
    return;
  const ls_rule_fn *r = n->kind == CXCursor_CallExpr && n->ent ? n->ent->rule : NULL;
  int oi = r && r->kind_name && !strcmp(r->kind_name, "size_query") ? arg_of_role(n, LS_ROLE_OUT_SIZE) : -1;
  int level = 0;
  if (oi >= 0) {
    ls_node *o = ls_strip_casts(n->kids[oi]);
    ls_entity *t = o && o->kind == CXCursor_UnaryOperator && o->op == CXUnaryOperator_AddrOf && o->nkids
                       ? ls_target_of(o->kids[0], &level) : NULL;
    int ci = arg_of_role(n, LS_ROLE_COMM);
    if (names(t, s->v)) {
      if (level != 0 || ci < 0 || comm_ent(n->kids[ci]) != s->comm)
        s->bad = 1;
      s->queries++;
      for (unsigned i = 0; i < n->nkids; i++)
        if ((int)i != oi)
          size_writes(s, n->kids[i]);
      return;
    }
  }
  if (ls_unary_may_write(n) && names(ls_target_of(n->kids[0], &level), s->v))
    s->bad = 1;
  else if ((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) || n->kind == CXCursor_CompoundAssignOperator) {
    if (n->nkids == 2 && names(ls_target_of(n->kids[0], &level), s->v))
      s->bad = 1;
  } else if (n->kind == CXCursor_VarDecl && n->ent == s->v && n->nkids)
    s->bad = 1;
  for (unsigned i = 0; i < n->nkids && !s->bad; i++)
    size_writes(s, n->kids[i]);
}

/* b (a loop bound) is the size of the communicator comm: see above */
static int is_comm_size(ls_program *p, ls_func *f, ls_node *b, ls_entity *comm) {
  b = ls_strip_casts(b);
  if (!comm || !b || (b->kind != CXCursor_DeclRefExpr && b->kind != CXCursor_MemberRefExpr))
    return 0;
  int level = 0;
  ls_entity *v = ls_target_of(b, &level);
  if (!v || level != 0 || (v->kind != LS_ENT_VAR && v->kind != LS_ENT_FIELD))
    return 0;
  if (v->pfield)
    v = v->pfield;
  int local = v->kind == LS_ENT_VAR;
  struct size_scan s = {v, comm, 0, 0};
  for (size_t i = 0; i < p->funcs.n && !s.bad; i++) {
    ls_func *g = p->funcs.v[i];
    if (!local || g == f)
      size_writes(&s, g->body);
  }
  if (s.bad || !s.queries)
    return 0;
  /* the communicator itself: written at most once (where it is made) */
  int writes = 0;
  for (size_t i = 0; i < p->funcs.n && writes < 2; i++) {
    ls_func *g = p->funcs.v[i];
    if (comm->kind != LS_ENT_VAR || g == f)
      writes += ls_writes_of(g->body, comm, LS_WR_ASSIGN | LS_WR_DECL, 2 - writes);
  }
  return writes < 2;
}

static int has_jump(const ls_node *n) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_BreakStmt || n->kind == CXCursor_ContinueStmt || n->kind == CXCursor_GotoStmt ||
      n->kind == CXCursor_ReturnStmt || n->kind == CXCursor_CXXThrowExpr || n->kind == CXCursor_IndirectGotoStmt ||
      n->kind == CXCursor_LabelStmt || n->kind == CXCursor_CaseStmt || n->kind == CXCursor_DefaultStmt)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (has_jump(n->kids[i]))
      return 1;
  return 0;
}

/* for statement fs is `for (i = 0; i < n; i++)` with n the size of comm, its body leaving
 * only through the condition and writing t[i] with a uniform value in one of its own
 * statements: that write (NULL: not such a loop) */
static ls_node *fill_write(ls_program *p, ls_func *f, ls_node *fs, const ls_entity *t, ls_entity *comm) {
  if (fs->nkids != 4 || !fs->kids[0] || !fs->kids[1] || !fs->kids[2] || !fs->kids[3])
    return NULL;
  ls_node *init = ls_strip_casts(fs->kids[0]), *cond = ls_strip_casts(fs->kids[1]), *inc = ls_strip_casts(fs->kids[2]);
  ls_entity *i = NULL;
  if (init->kind == CXCursor_DeclStmt && init->nkids == 1)
    init = init->kids[0];
  ls_node *z = NULL;
  if (init->kind == CXCursor_VarDecl && init->nkids >= 1) {
    i = init->ent;
    z = ls_strip_casts(init->kids[init->nkids - 1]);
  } else if (init->kind == CXCursor_BinaryOperator && init->op == CXBinaryOperator_Assign && init->nkids == 2 &&
             ls_strip_casts(init->kids[0]) && ls_strip_casts(init->kids[0])->kind == CXCursor_DeclRefExpr) {
    i = ls_strip_casts(init->kids[0])->ent;
    z = ls_strip_casts(init->kids[1]);
  }
  if (!i || i->kind != LS_ENT_VAR || !z || !z->ilit || z->ival != 0)
    return NULL;
  if (cond->kind != CXCursor_BinaryOperator || cond->nkids != 2 || cond->op != CXBinaryOperator_LT ||
      !ls_strip_casts(cond->kids[0]) || ls_strip_casts(cond->kids[0])->ent != i)
    return NULL;
  if (inc->kind != CXCursor_UnaryOperator || inc->nkids != 1 || !ls_strip_casts(inc->kids[0]) ||
      ls_strip_casts(inc->kids[0])->ent != i ||
      (inc->op != CXUnaryOperator_PostInc && inc->op != CXUnaryOperator_PreInc))
    return NULL;
  ls_node *body = fs->kids[3];
  if (has_jump(body) || ls_writes_of(body, i, LS_WR_ASSIGN | LS_WR_DECL, 1))
    return NULL;
  ls_node *w = NULL;
  unsigned ns = body->kind == CXCursor_CompoundStmt ? body->nkids : 1;
  for (unsigned s = 0; s < ns && !w; s++) {
    ls_node *a = ls_strip_casts(body->kind == CXCursor_CompoundStmt ? body->kids[s] : body);
    if (!a || a->kind != CXCursor_BinaryOperator || a->op != CXBinaryOperator_Assign || a->nkids != 2)
      continue;
    ls_node *l = ls_strip_casts(a->kids[0]);
    if (!l || l->kind != CXCursor_ArraySubscriptExpr || l->nkids != 2 || !ls_strip_casts(l->kids[1]) ||
        ls_strip_casts(l->kids[1])->kind != CXCursor_DeclRefExpr || ls_strip_casts(l->kids[1])->ent != i)
      continue;
    int level = 0;
    ls_node *base = ls_strip_casts(l->kids[0]);
    if (base && (base->kind == CXCursor_DeclRefExpr || base->kind == CXCursor_MemberRefExpr) &&
        names(ls_target_of(base, &level), t) && level == 0 && !ls_expr_taint(p, NULL, a->kids[1]))
      w = a;
  }
  return w && is_comm_size(p, f, cond->kids[1], comm) ? w : NULL;
}

static void fors_of(ls_node *n, ls_vec *out) {
  if (!n)
    return;
  if (n->kind == CXCursor_ForStmt)
    ls_vec_push(out, n);
  for (unsigned i = 0; i < n->nkids; i++)
    fors_of(n->kids[i], out);
}

/* a writes t (its value or what it points to), or hands t or its address to a call, or
 * (t a member or global) calls a function of the program, which may write it */
static int item_writes(ls_node *n, const ls_entity *t, int shared, const ls_node *skip, const ls_node *skip2) {
  if (!n || n == skip || n == skip2)
    return 0;
  int level = 0;
  if (ls_unary_may_write(n) && names(ls_target_of(n->kids[0], &level), t))
    return 1;
  if (((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) || n->kind == CXCursor_CompoundAssignOperator) &&
      n->nkids == 2 && names(ls_target_of(n->kids[0], &level), t))
    return 1;
  if (n->kind == CXCursor_VarDecl && n->ent == t)
    return 1;
  if (n->kind == CXCursor_CallExpr) {
    if (shared && n->ent && n->ent->def)
      return 1;
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *a = ls_strip_casts(n->kids[i]);
      level = 0;
      if (a && (a->kind == CXCursor_DeclRefExpr || a->kind == CXCursor_MemberRefExpr) && names(ls_target_of(a, &level), t))
        return 1;
    }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    if (item_writes(n->kids[i], t, shared, skip, skip2))
      return 1;
  return 0;
}

/* a handler could go on to the call from the middle of the loop */
static int has_try(const ls_node *n) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_CXXTryStmt)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (has_try(n->kids[i]))
      return 1;
  return 0;
}

int ls_counts_filled(ls_program *p, ls_func *f, const ls_block *at, ls_node *call, ls_node *arg) {
  ls_node *a = ls_strip_casts(arg);
  int level = 0;
  ls_entity *t = a && (a->kind == CXCursor_DeclRefExpr || a->kind == CXCursor_MemberRefExpr) ? ls_target_of(a, &level) : NULL;
  int ci = arg_of_role(call, LS_ROLE_COMM);
  ls_entity *comm = ci >= 0 ? comm_ent(call->kids[ci]) : NULL;
  if (!t || level != 0 || !comm || !f->body || !at || has_try(f->body))
    return 0;
  if (t->pfield) /* one object's member: writes through element accesses name the field */
    t = t->pfield;
  int shared = t->kind != LS_ENT_VAR && t->kind != LS_ENT_PARAM;
  ls_vec fors = {0};
  fors_of(f->body, &fors);
  int ok = 0;
  size_t n = (size_t)f->nblocks;
  unsigned char *seen = calloc(n + 1, 1), *back = calloc(n + 1, 1);
  ls_block **todo = malloc((n + 1) * sizeof *todo);
  if (!seen || !back || !todo)
    abort();
  for (size_t l = 0; l < fors.n && !ok; l++) {
    ls_node *fs = fors.v[l], *w = fill_write(p, f, fs, t, comm);
    ls_block *h = NULL;
    for (int b = 0; w && b < f->nblocks && !h; b++)
      if (f->blocks[b]->is_loop && f->blocks[b]->cond && ls_strip_casts(f->blocks[b]->cond) == ls_strip_casts(fs->kids[1]))
        h = f->blocks[b];
    if (!h || h == at)
      continue;
    /* every path from the entry to the call goes through h */
    memset(seen, 0, n + 1);
    int nt = 0, reached = 0;
    seen[f->entry->id] = 1;
    if (f->entry != h)
      todo[nt++] = f->entry;
    while (nt && !reached) {
      ls_block *q = todo[--nt];
      if (q == at) {
        reached = 1;
        break;
      }
      for (int s = 0; s < q->nsucc; s++)
        if (q->succ[s] != h && !seen[q->succ[s]->id]) {
          seen[q->succ[s]->id] = 1;
          todo[nt++] = q->succ[s];
        }
    }
    if (reached)
      continue;
    /* what runs after the loop's last test and before the call: the blocks on a way from h
     * to the call that does not come back to h (the part of the call's own block before it,
     * all of it where the way can pass the call's block before), and the loop's body, whose
     * earlier rounds run before; nothing there but the fill writes t */
    memset(seen, 0, n + 1);
    memset(back, 0, n + 1);
    nt = 0;
    for (int s = 0; s < h->nsucc; s++)
      if (h->succ[s] != h && !seen[h->succ[s]->id]) {
        seen[h->succ[s]->id] = 1;
        todo[nt++] = h->succ[s];
      }
    int again = 0; /* the call's block is on a way from itself */
    while (nt) {
      ls_block *q = todo[--nt];
      for (int s = 0; s < q->nsucc; s++)
        if (q->succ[s] != h && !seen[q->succ[s]->id]) {
          seen[q->succ[s]->id] = 1;
          todo[nt++] = q->succ[s];
        }
    }
    back[at->id] = 1;
    todo[nt++] = (ls_block *)at;
    while (nt) {
      ls_block *q = todo[--nt];
      for (int e = 0; e < q->npred; e++) {
        ls_block *u = q->pred[e];
        again |= u == at;
        if (u != h && !back[u->id]) {
          back[u->id] = 1;
          todo[nt++] = u;
        }
      }
    }
    int clean = !item_writes(fs->kids[3], t, shared, w, NULL) && !item_writes(w->kids[1], t, shared, NULL, NULL);
    for (int j = 0; j < h->nitems && clean; j++)
      clean = !item_writes(h->items[j], t, shared, NULL, NULL);
    for (int b = 0; b < f->nblocks && clean; b++) {
      ls_block *q = f->blocks[b];
      if (q == h || !seen[q->id] || !back[q->id])
        continue;
      int upto = q->nitems;
      if (q == at && !again)
        for (upto = 0; upto < q->nitems && !ls_node_contains(q->items[upto], call); upto++)
          ;
      for (int j = 0; j < upto && clean; j++)
        clean = !item_writes(q->items[j], t, shared, call, NULL);
      if (clean && q->cond && (q != at || again))
        clean = !item_writes(q->cond, t, shared, NULL, NULL);
    }
    ok = clean;
  }
  free(seen);
  free(back);
  free(todo);
  free(fors.v);
  return ok;
}

/* ---- counts arrays filled alike under a uniform guard ----
 * hdf5's H5D__mpio_array_gatherv: `if (allgather || rank == root) { c = malloc(...); }`,
 * `if (allgather) MPI_Allgather(..., c, ...)`, `if (allgather || rank == root) c[i] *= size;`,
 * then `if (allgather) MPI_Allgatherv(..., c, ...)`. The writes under the rank-dependent
 * condition make c's elements rank-dependent by implicit flow, but the call runs only where
 * the parameter allgather is true, and there the condition was true on every rank: each rank
 * did the same writes. So the function is looked at as it runs with a parameter v that it
 * never writes, uniform, held at the value the call needs (branches testing v itself take the
 * one side; the CFG splits && and || into such tests): in that restricted CFG, up to the
 * call, a branch is rank-dependent when its condition reads a rank value or lies in the region
 * of one, and a local (one whose address is not taken) holds a rank value when a write in
 * such a region or of a rank value reaches it. The array's elements are uniform when every
 * write to them there is alike (a uniform value at a uniform index, or a collective delivering
 * alike), its pointer is only set to fresh memory (malloc) or null, and it is passed to no
 * other function. Control dependence is the whole function's, taken in the restricted CFG. */
#define GUARD_MAX 64
struct guard {
  ls_program *p;
  ls_func *f;
  ls_entity *v; int pol;
  ls_entity *t;                  /* the counts array */
  ls_entity *loc[GUARD_MAX]; int nloc; /* tracked locals (t first) */
  uint64_t rank;                 /* bit i: loc[i] holds a rank value */
  int content;                   /* t's elements hold rank values */
  unsigned char *in, *split;     /* by block id: in the restricted CFG up to the call; rank-split */
  int changed;
};

/* the side of branch k that v = pol takes: 0 or 1, -1 when k does not test v */
static int guard_side(const struct guard *g, const ls_block *k) {
  ls_node *c = k->cond ? ls_strip_casts(k->cond) : NULL;
  while (c && c->kind == CXCursor_ParenExpr && c->nkids == 1)
    c = ls_strip_casts(c->kids[0]);
  if (!c || c->kind != CXCursor_DeclRefExpr || c->ent != g->v || k->nsucc != 2)
    return -1;
  return g->pol ? 0 : 1;
}

/* the blocks reachable from f's entry with v = pol */
static void guard_reach(const struct guard *g, unsigned char *seen, ls_block **todo) {
  int nt = 0;
  memset(seen, 0, (size_t)g->f->nblocks + 1);
  seen[g->f->entry->id] = 1;
  todo[nt++] = g->f->entry;
  while (nt) {
    ls_block *q = todo[--nt];
    int side = guard_side(g, q);
    for (int s = 0; s < q->nsucc; s++)
      if ((side < 0 || s == side) && !seen[q->succ[s]->id]) {
        seen[q->succ[s]->id] = 1;
        todo[nt++] = q->succ[s];
      }
  }
}

static int guard_loc(const struct guard *g, const ls_entity *e) {
  for (int i = 0; i < g->nloc; i++)
    if (g->loc[i] == e)
      return i;
  return -1;
}

static int names_loc(const struct guard *g, const ls_node *n) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_DeclRefExpr && guard_loc(g, n->ent) >= 0)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (names_loc(g, n->kids[i]))
      return 1;
  return 0;
}

static int ptr_in(const ls_node *n, const ls_entity *t) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_DeclRefExpr && n->ent == t)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (ptr_in(n->kids[i], t))
      return 1;
  return 0;
}

/* t used as a pointer (not the base of an element read): passed on, copied, offset */
static int ptr_use(const ls_node *n, const ls_entity *t) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_DeclRefExpr)
    return n->ent == t;
  if (n->kind == CXCursor_CallExpr) /* its arguments are guard_writes' own */
    return 0;
  if (n->kind == CXCursor_ArraySubscriptExpr && n->nkids == 2) {
    ls_node *b = ls_strip_casts(n->kids[0]);
    return (!b || b->kind != CXCursor_DeclRefExpr || b->ent != t ? ptr_use(n->kids[0], t) : 0) || ptr_use(n->kids[1], t);
  }
  if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf) /* &t[i]: a way into t */
    return n->nkids && ptr_in(n->kids[0], t);
  if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_Deref && n->nkids == 1) {
    ls_node *b = ls_strip_casts(n->kids[0]);
    if (b && b->kind == CXCursor_DeclRefExpr && b->ent == t)
      return 0;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    if (ptr_use(n->kids[i], t))
      return 1;
  return 0;
}

/* n's value holds a rank value in the restricted run: ls_expr_taint, with the tracked locals'
 * and t's elements' facts those found so far */
static int guard_eval(struct guard *g, ls_node *n) {
  if (!n)
    return 0;
  if (!names_loc(g, n))
    return ls_expr_taint(g->p, NULL, n) != NULL;
  switch (n->kind) {
  case CXCursor_DeclRefExpr: {
    int i = guard_loc(g, n->ent);
    return i >= 0 && (g->rank >> i & 1);
  }
  case CXCursor_ArraySubscriptExpr:
  case CXCursor_UnaryOperator: {
    if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf)
      return 0;
    ls_node *b = n->nkids ? ls_strip_casts(n->kids[0]) : NULL;
    if (b && b->kind == CXCursor_DeclRefExpr && b->ent == g->t &&
        (n->kind == CXCursor_ArraySubscriptExpr ? n->nkids == 2 : n->op == CXUnaryOperator_Deref))
      return g->content || (g->rank & 1) || (n->nkids == 2 && guard_eval(g, n->kids[1]));
    break;
  }
  case CXCursor_CallExpr:
    /* an API call's result is no rank value (ls_expr_taint); any other call reading a tracked
     * local is taken as rank-dependent */
    return !(n->ent && n->ent->rule && !ls_value_source(g->p, n));
  case CXCursor_MemberRefExpr:
    if (n->ent && n->ent->taint)
      return 1;
    break;
  case CXCursor_UnaryExpr:
    return 0;
  default:
    break;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    if (guard_eval(g, n->kids[i]))
      return 1;
  return 0;
}

static void guard_set(struct guard *g, int i, int v) {
  if (v && i >= 0 && !(g->rank >> i & 1)) {
    g->rank |= 1ull << i;
    g->changed = 1;
  }
}

static void guard_content(struct guard *g, int v) {
  if (v && !g->content) {
    g->content = 1;
    g->changed = 1;
  }
}

/* what a pointer set to it points to holds nothing yet: malloc's result, or null */
static int fresh(const struct guard *g, ls_node *v) {
  ls_node *r = ls_strip_casts(v);
  return r && ((r->kind == CXCursor_CallExpr && r->ptr_result && !names_loc(g, r)) || (r->ilit && !r->ival) ||
               r->kind == CXCursor_CXXNullPtrLiteralExpr || r->kind == CXCursor_GNUNullExpr);
}

/* the writes of n (block split: reached by some ranks only) */
static void guard_writes(struct guard *g, ls_node *n, int split) {
  if (!n || n->kind == CXCursor_LambdaExpr)
    return;
  int level = 0;
  ls_entity *e;
  switch (n->kind) {
  case CXCursor_VarDecl:
    if (n->nkids) {
      ls_node *init = n->kids[n->nkids - 1];
      guard_set(g, guard_loc(g, n->ent), split || guard_eval(g, init));
      if (n->ent != g->t)
        guard_content(g, ptr_use(init, g->t));
      else if (ls_strip_casts(init) && ls_strip_casts(init)->kind == CXCursor_InitListExpr)
        guard_content(g, split || guard_eval(g, init));
      else
        guard_content(g, !fresh(g, init));
    }
    break;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    if (n->nkids != 2 || (n->kind == CXCursor_BinaryOperator && n->op != CXBinaryOperator_Assign))
      break;
    e = ls_target_of(n->kids[0], &level);
    if (e == g->t && level > 0) /* an element: its value and where it lands */
      guard_content(g, split || guard_eval(g, n->kids[1]) || guard_eval(g, n->kids[0]));
    else if (e == g->t) { /* the pointer: fresh memory or null only */
      guard_content(g, !fresh(g, n->kids[1]) || n->kind != CXCursor_BinaryOperator);
      guard_set(g, 0, split);
    } else {
      if (level <= 0)
        guard_set(g, guard_loc(g, e), split || guard_eval(g, n->kids[1]));
      guard_content(g, ptr_use(n->kids[1], g->t)); /* another name for t's memory */
    }
    break;
  case CXCursor_UnaryOperator:
    if (n->nkids == 1 && (n->op == CXUnaryOperator_PostInc || n->op == CXUnaryOperator_PreInc ||
                          n->op == CXUnaryOperator_PostDec || n->op == CXUnaryOperator_PreDec)) {
      e = ls_target_of(n->kids[0], &level);
      if (e == g->t && level > 0)
        guard_content(g, split || guard_eval(g, n->kids[0]));
      else if (e == g->t)
        guard_content(g, 1);
      else if (level <= 0)
        guard_set(g, guard_loc(g, e), split);
    }
    break;
  case CXCursor_CallExpr:
    for (unsigned i = 0; i < n->nkids; i++) {
      if (!ptr_use(n->kids[i], g->t))
        continue;
      const ls_rule_fn *r = n->ent ? n->ent->rule : NULL;
      ls_node *a = ls_strip_casts(n->kids[i]);
      if (!r || (int)i >= r->nargs) /* another function may write it, or keep it */
        guard_content(g, 1);
      else if (r->roles[i] == LS_ROLE_RECVBUF)
        guard_content(g, split || !ls_delivers_alike(r) || !a || a->kind != CXCursor_DeclRefExpr);
    }
    break;
  default:
    break;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    guard_writes(g, n->kids[i], split);
}

static int guard_visit(ls_block *q, void *ctx) {
  struct guard *g = ctx;
  if (g->split[q->id])
    return 0;
  g->split[q->id] = 1;
  g->changed = 1;
  return 1;
}

/* the restricted run with v = pol: is t's content uniform at block at? */
static int guard_run(struct guard *g, const ls_block *at, ls_block **todo) {
  ls_func *f = g->f;
  size_t n = (size_t)f->nblocks + 1;
  unsigned char *other = calloc(n, 1), *fwd = calloc(n, 1);
  if (!other || !fwd)
    abort();
  g->pol = !g->pol;
  guard_reach(g, other, todo);
  g->pol = !g->pol;
  int ok = !other[at->id];
  if (ok) { /* the blocks of the restricted run from which it reaches at */
    guard_reach(g, fwd, todo);
    memset(g->in, 0, n);
    int nt = 0;
    g->in[at->id] = 1;
    todo[nt++] = (ls_block *)at;
    while (nt) {
      ls_block *q = todo[--nt];
      for (int e = 0; e < q->npred; e++) {
        ls_block *u = q->pred[e];
        int side = guard_side(g, u);
        if (!fwd[u->id] || g->in[u->id] || (side >= 0 && u->succ[side] != q))
          continue;
        g->in[u->id] = 1;
        todo[nt++] = u;
      }
    }
    memset(g->split, 0, n);
    g->rank = 0;
    g->content = 0;
    do {
      g->changed = 0;
      for (int b = 0; b < f->nblocks; b++) {
        ls_block *k = f->blocks[b];
        if (!g->in[k->id])
          continue;
        for (int j = 0; j < k->nitems; j++)
          guard_writes(g, k->items[j], g->split[k->id]);
        if (k->cond)
          guard_writes(g, k->cond, g->split[k->id]);
        /* a test of v reached by some ranks only still splits them: the restricted CFG's
         * regions are not the whole function's */
        if (k->cond && k->nsucc >= 2 && (g->split[k->id] || (guard_side(g, k) < 0 && guard_eval(g, k->cond))))
          ls_ctl_region(f, k, guard_visit, g);
      }
    } while (g->changed && !g->content);
    ok = !g->content && !(g->rank & 1);
  }
  free(other);
  free(fwd);
  return ok;
}

int ls_counts_guarded(ls_program *p, ls_func *f, const ls_block *at, ls_node *arg) {
  ls_node *a = ls_strip_casts(arg);
  ls_entity *t = a && a->kind == CXCursor_DeclRefExpr ? a->ent : NULL;
  if (!t || t->kind != LS_ENT_VAR || !f->body || !at || !f->entry || ls_addr_taken(f->body, t))
    return 0;
  struct guard g = {.p = p, .f = f, .t = t};
  g.loc[g.nloc++] = t;
  for (int i = 0; i < f->nrefs; i++) { /* the locals to follow: rank-dependent somewhere */
    ls_entity *e = f->refs[i]->ent;
    if (e && e->kind == LS_ENT_VAR && e->taint && guard_loc(&g, e) < 0) {
      if (g.nloc == GUARD_MAX)
        return 0;
      if (!ls_addr_taken(f->body, e))
        g.loc[g.nloc++] = e;
    }
  }
  size_t n = (size_t)f->nblocks + 1;
  g.in = calloc(n, 1);
  g.split = calloc(n, 1);
  ls_block **todo = malloc(n * sizeof *todo);
  if (!g.in || !g.split || !todo)
    abort();
  int ok = 0;
  for (int i = 0; i < f->nparams && !ok; i++) {
    ls_entity *v = f->params[i];
    if (!v || v->taint || ls_addr_taken(f->body, v) || ls_writes_of(f->body, v, LS_WR_ASSIGN, 1))
      continue;
    g.v = v;
    for (g.pol = 0; g.pol < 2 && !ok; g.pol++)
      ok = guard_run(&g, at, todo);
  }
  free(g.in);
  free(g.split);
  free(todo);
  return ok;
}
