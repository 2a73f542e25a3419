/* group.c — group depth over a function's CFG, sparse's lock-context walk: bit LS_GZ+d of a
 * block's gin/gout mask means depth d is possible there, relative to the function's entry.
 * Path-sensitive where it matters, as ESP's property simulation: a condition that guards
 * more than one branch of the function (`if (n > 1) ncclGroupStart(); ... if (n > 1)
 * ncclGroupEnd();`) is a tracked fact, each possible depth carries the facts known on every
 * path that reaches it with that depth, and a branch that contradicts them is not taken.
 * Paths of equal depth merge and keep only the facts they agree on, so the cost stays that
 * of the plain walk times the (few) depths present.
 * Also what the rules read of it (checks/check.h: group ends below zero, the starts, send/recv
 * outside any group) and the summary its callers use: a function that only opens (+1) or
 * only closes (-1) a group is a begin/end helper, accounted for at each call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- tracked conditions (the facts of the property simulation) ---- */
#define ESP_MAXC 8 /* tracked conditions per function: one bit each in a fact word */

static ls_node *bare(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr) && n->nkids == 1)
    n = n->kids[0];
  return n;
}

static int same_expr(ls_node *a, ls_node *b) {
  a = bare(a), b = bare(b);
  if (!a || !b)
    return a == b;
  if (a->kind != b->kind || a->op != b->op || a->nkids != b->nkids || a->ent != b->ent || a->ilit != b->ilit ||
      (a->ilit && a->ival != b->ival))
    return 0;
  if (!a->ent && !a->ilit && (!a->text) != (!b->text))
    return 0;
  if (!a->ent && !a->ilit && a->text && strcmp(a->text, b->text))
    return 0;
  for (unsigned i = 0; i < a->nkids; i++)
    if (!same_expr(a->kids[i], b->kids[i]))
      return 0;
  return 1;
}

static size_t expr_hash(ls_node *n) {
  n = bare(n);
  if (!n)
    return 1;
  size_t h = (size_t)n->kind * 131u + (size_t)(unsigned char)n->op * 31u + (size_t)((uintptr_t)n->ent >> 4);
  if (n->ilit)
    h = h * 33u + (size_t)n->ival;
  else if (!n->ent && n->text)
    for (const char *c = n->text; *c; c++)
      h = h * 33u + (unsigned char)*c;
  for (unsigned i = 0; i < n->nkids; i++)
    h = h * 1000003u + expr_hash(n->kids[i]);
  return h;
}

/* A condition is a fact only when evaluating it changes nothing and every variable it reads
 * is named: no call, no assignment, no increment. */
static int pure_cond(const ls_node *n) {
  if (!n)
    return 1;
  if (n->kind == CXCursor_CallExpr || n->kind == CXCursor_CompoundAssignOperator ||
      (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
      (n->kind == CXCursor_UnaryOperator && ls_is_incdec(n->op)))
    return 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if (!pure_cond(n->kids[i]))
      return 0;
  return 1;
}

static int reads_ent(const ls_node *n, const ls_entity *e) {
  if (!n)
    return 0;
  if (n->ent == e && n->kind != CXCursor_CallExpr)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (reads_ent(n->kids[i], e))
      return 1;
  return 0;
}

/* Does n read something through e (e->f, e[i], *e): what a callee handed e can change? */
static int reads_through(const ls_node *n, const ls_entity *e) {
  if (!n)
    return 0;
  if ((n->kind == CXCursor_MemberRefExpr || n->kind == CXCursor_ArraySubscriptExpr ||
       (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_Deref)) && reads_ent(n, e))
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (reads_through(n->kids[i], e))
      return 1;
  return 0;
}

/* Writes the block items do not show (cfg.c records assignments, declarations and calls):
 * increments and taken addresses. A condition reading such a variable is not tracked. */
static int hidden_write(const ls_node *n, const ls_node *cond) {
  if (!n)
    return 0;
  if (ls_unary_may_write(n)) {
    ls_node *t = bare(n->kids[0]);
    if (t && t->ent && reads_ent(cond, t->ent))
      return 1;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    if (hidden_write(n->kids[i], cond))
      return 1;
  return 0;
}

/* The field an access path `s.f` / `p->f` (taint.c's per-object entity) stands for: what a
 * callee writing p->f through its own parameter writes too. */
static const ls_entity *field_of(const ls_entity *e) { return e && e->pfield ? e->pfield : e; }

/* Does function g (or what it calls, a few levels down) assign entity e (a global, or any
 * object's field e)? */
static int func_writes(ls_func *g, const ls_entity *e, int depth);

static int node_writes(const ls_node *n, const ls_entity *e, int depth) {
  if (!n)
    return 0;
  if (((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
       n->kind == CXCursor_CompoundAssignOperator) && n->nkids == 2) {
    ls_node *t = bare(n->kids[0]);
    if (t && t->ent && field_of(t->ent) == e)
      return 1;
  }
  if (n->kind == CXCursor_UnaryOperator && n->nkids == 1) {
    ls_node *t = bare(n->kids[0]);
    if (t && t->ent && field_of(t->ent) == e)
      return 1; /* ++, --, or its address taken: a write for all we know */
  }
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->def && func_writes(n->ent->def, e, depth + 1))
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (node_writes(n->kids[i], e, depth))
      return 1;
  return 0;
}

/* func_writes at the top, remembered: a long function calls the same helpers many times */
static int func_writes_memo(ls_func *g, const ls_entity *e) {
  static _Thread_local struct { ls_func *g; const ls_entity *e; int w; } memo[1024];
  size_t h = (((uintptr_t)g >> 4) * 31u + ((uintptr_t)e >> 4)) & 1023u;
  if (memo[h].g == g && memo[h].e == e)
    return memo[h].w;
  int w = func_writes(g, e, 0);
  memo[h].g = g, memo[h].e = e, memo[h].w = w;
  return w;
}

static int func_writes(ls_func *g, const ls_entity *e, int depth) {
  static _Thread_local ls_func *open[6]; /* the callees being scanned, outermost first (recursion) */
  if (depth > 4)
    return 1; /* too deep to tell: assume it does */
  for (int i = 0; i < depth; i++)
    if (open[i] == g)
      return 0;
  open[depth] = g;
  return node_writes(g->body, e, depth);
}

struct esp {
  int nc;
  ls_node *cond[ESP_MAXC];
  int16_t *cls;      /* block id -> tracked condition of its branch, -1 none */
  uint16_t *kill;    /* block id -> the facts its items may change (known and value bits) */
  uint16_t *facts;   /* block id * 32 + depth bit: known facts (high byte) and values (low byte) */
};

/* Does item n (a block item: an assignment, a declaration, a call) change condition j? */
static int kills(const ls_node *n, ls_node *cond) {
  if (n->kind == CXCursor_VarDecl)
    return n->ent && reads_ent(cond, n->ent);
  if (((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
       n->kind == CXCursor_CompoundAssignOperator) && n->nkids == 2) {
    ls_node *t = bare(n->kids[0]);
    if (!t || !t->ent)
      return 1; /* through a pointer or an element: could be anything the condition reads */
    return reads_ent(cond, t->ent);
  }
  if (n->kind == CXCursor_CallExpr) {
    /* a variable passed by address (hidden_write excluded those) cannot change; a defined
     * callee can change the globals and fields it assigns; an undefined one is assumed to
     * leave the program's own variables alone, but not an object it is handed */
    for (unsigned i = 0; i < n->nkids && !(n->ent && n->ent->def); i++) {
      ls_node *a = bare(n->kids[i]);
      if (a && a->kind == CXCursor_DeclRefExpr && a->ent && a->ent->kind != LS_ENT_FUNC && reads_through(cond, a->ent))
        return 1;
    }
    if (n->ent && n->ent->def) {
      ls_func *g = n->ent->def;
      /* every entity the condition reads that g could assign */
      ls_node *stack[64];
      int sp = 0;
      stack[sp++] = cond;
      while (sp) {
        ls_node *m = stack[--sp];
        if (!m)
          continue;
        if (m->ent && (m->ent->kind == LS_ENT_GLOBAL || m->ent->kind == LS_ENT_FIELD || m->ent->pfield) &&
            func_writes_memo(g, field_of(m->ent)))
          return 1;
        for (unsigned i = 0; i < m->nkids && sp < 64; i++)
          stack[sp++] = m->kids[i];
      }
    }
  }
  return 0;
}

static int esp_setup(ls_func *f, struct esp *e) {
  e->nc = 0;
  int any = 0;
  for (int b = 0; b < f->nblocks && !any; b++)
    for (int i = 0; i < f->blocks[b]->nitems && !any; i++)
      any = ls_group_delta(f->blocks[b]->items[i]) != 0;
  if (!any)
    return 0;
  /* conditions that come back: bucket the branch conditions by a structural hash (a long
   * function has tens of thousands of branches), compare within a bucket */
  size_t nb = 1;
  while (nb < 2 * (size_t)f->nblocks)
    nb <<= 1;
  int *head = malloc(nb * sizeof *head), *next = malloc((size_t)f->nblocks * sizeof *next);
  unsigned char *seen = calloc((size_t)f->nblocks, 1);
  if (!head || !next || !seen)
    abort();
  for (size_t i = 0; i < nb; i++)
    head[i] = -1;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    next[b] = -1;
    if (!k->cond || k->nsucc != 2)
      continue;
    size_t h = expr_hash(k->cond) & (nb - 1);
    next[b] = head[h];
    head[h] = b;
  }
  for (int b = 0; b < f->nblocks && e->nc < ESP_MAXC; b++) {
    ls_block *k = f->blocks[b];
    if (!k->cond || k->nsucc != 2 || seen[b])
      continue;
    int again = 0;
    for (int b2 = head[expr_hash(k->cond) & (nb - 1)]; b2 >= 0; b2 = next[b2])
      if (b2 != b && same_expr(k->cond, f->blocks[b2]->cond))
        seen[b2] = 1, again = 1;
    if (again && pure_cond(k->cond) && !hidden_write(f->body, k->cond))
      e->cond[e->nc++] = k->cond;
  }
  free(head);
  free(next);
  free(seen);
  if (!e->nc)
    return 0;
  e->cls = malloc((size_t)f->nblocks * sizeof *e->cls);
  e->kill = calloc((size_t)f->nblocks, sizeof *e->kill);
  e->facts = calloc((size_t)f->nblocks * 32, sizeof *e->facts);
  if (!e->cls || !e->kill || !e->facts)
    abort();
  /* facts are set only on edges, so what a block's items change applies once, at its end */
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b]->nitems; i++)
      for (int j = 0; j < e->nc; j++)
        if (!(e->kill[b] & (0x100u << j)) && kills(f->blocks[b]->items[i], e->cond[j]))
          e->kill[b] |= (uint16_t)(0x101u << j);
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    e->cls[b] = -1;
    for (int j = 0; j < e->nc && k->cond && k->nsucc == 2; j++)
      if (same_expr(e->cond[j], k->cond))
        e->cls[b] = (int16_t)j;
  }
  return 1;
}

/* ---- group depth counters ----
 * A program that counts the groups it opened (`groupStart() { ncclGroupStart(); ++n; }`,
 * `groupEnd() { ncclGroupEnd(); --n; }`) can close all of them with `for (i < n)
 * ncclGroupEnd()` and reopen them with `for (i < n) ncclGroupStart()`: between the two
 * loops the depth is the entry's less n, which the count keeps at zero or more, and after
 * them it is the entry's again. Such loops count as 0 in the walk (gskip, their group
 * calls) when every path from a closing loop reaches a reopening one over the unchanged
 * count before the function ends, and no reopening one runs without a closing one first. */
static _Thread_local struct { const ls_node *v[32]; int n; } gskip; /* at most 32 loops */

static int gdelta(const ls_node *n) {
  for (int i = 0; i < gskip.n; i++)
    if (gskip.v[i] == n)
      return 0;
  return ls_group_delta(n);
}

/* how often n (not the functions it calls) may write e */
static int local_writes(const ls_node *n, const ls_entity *e) {
  if (!n || n->kind == CXCursor_LambdaExpr)
    return 0;
  int w = 0;
  ls_node *t = n->nkids ? bare(n->kids[0]) : NULL;
  if (((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
       n->kind == CXCursor_CompoundAssignOperator || ls_unary_may_write(n)) && t && t->ent && field_of(t->ent) == e)
    w++;
  for (unsigned i = 0; i < n->nkids; i++)
    w += local_writes(n->kids[i], e);
  return w;
}

/* The API group calls under n, with those of the program's functions it calls (3 levels
 * down; a deeper one counts as several); *one: the last API call seen */
static int group_calls(const ls_node *n, ls_node **one, int depth) {
  if (!n)
    return 0;
  int c = 0;
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule &&
      (n->ent->rule->kind == LS_KIND_GROUP_START || n->ent->rule->kind == LS_KIND_GROUP_END))
    c++, *one = (ls_node *)n;
  else if (n->kind == CXCursor_CallExpr && n->ent && n->ent->def) {
    ls_node *x = NULL;
    c += depth >= 3 ? 2 : 2 * group_calls(n->ent->def->body, &x, depth + 1);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    c += group_calls(n->kids[i], one, depth);
  return c;
}

/* Is call x under s on every way through s (a condition, not a branch of it; the body of a
 * do { } while (0))? */
static int uncond_in(const ls_node *s, const ls_node *x) {
  if (!s || s->kind == CXCursor_LambdaExpr)
    return 0;
  if (s == x)
    return 1;
  unsigned nk = s->nkids;
  switch (s->kind) {
  case CXCursor_IfStmt: case CXCursor_WhileStmt: case CXCursor_ForStmt: case CXCursor_SwitchStmt:
  case CXCursor_CXXForRangeStmt: case CXCursor_ConditionalOperator:
    nk = nk ? 1 : 0;
    break;
  case CXCursor_DoStmt:
    if (!(nk == 2 && bare(s->kids[1]) && bare(s->kids[1])->ilit && !bare(s->kids[1])->ival))
      return 0;
    break;
  case CXCursor_BinaryOperator:
    if (s->op == CXBinaryOperator_LAnd || s->op == CXBinaryOperator_LOr)
      nk = nk ? 1 : 0;
    break;
  default:
    break;
  }
  for (unsigned i = 0; i < nk; i++)
    if (uncond_in(s->kids[i], x))
      return 1;
  return 0;
}

/* ++e / --e (either form) as a statement of its own: +1 / -1, else 0 */
static int incdec1(const ls_node *n, const ls_entity *e) {
  n = bare((ls_node *)n);
  if (!n || n->kind != CXCursor_UnaryOperator || n->nkids != 1 || !ls_is_incdec(n->op))
    return 0;
  ls_node *t = bare(n->kids[0]);
  if (!t || !t->ent || field_of(t->ent) != e)
    return 0;
  return n->op == CXUnaryOperator_PreInc || n->op == CXUnaryOperator_PostInc ? 1 : -1;
}

/* the statement list holding e's increment or decrement under n: *s, its index *at */
static int stmt_write(const ls_node *n, const ls_entity *e, const ls_node **s, unsigned *at, int *dir) {
  if (!n)
    return 0;
  for (unsigned i = 0; i < n->nkids; i++) {
    if (n->kind == CXCursor_CompoundStmt && (*dir = incdec1(n->kids[i], e))) {
      *s = n, *at = i;
      return 1;
    }
    if (stmt_write(n->kids[i], e, s, at, dir))
      return 1;
  }
  return 0;
}

/* Is e a group depth counter: written only by an increment next to the one group start of
 * its function, or a decrement next to its one group end, in some function of the program? */
static int is_counter(ls_program *p, const ls_entity *e) {
  static _Thread_local struct { const ls_program *p; const ls_entity *e; int v; } memo[64];
  size_t h = ((uintptr_t)e >> 4) & 63u;
  if (memo[h].p == p && memo[h].e == e)
    return memo[h].v;
  int v = e && (e->kind == LS_ENT_GLOBAL || e->kind == LS_ENT_FIELD), nw = 0;
  for (size_t j = 0; j < p->funcs.n && v; j++) {
    ls_func *g = p->funcs.v[j];
    int w = g->body ? local_writes(g->body, e) : 0;
    if (!w)
      continue;
    const ls_node *s = NULL;
    unsigned at = 0;
    int dir = 0;
    ls_node *call = NULL;
    v = w == 1 && stmt_write(g->body, e, &s, &at, &dir) && group_calls(g->body, &call, 0) == 1 &&
        call->ent->rule->kind == (dir > 0 ? LS_KIND_GROUP_START : LS_KIND_GROUP_END) &&
        ((at > 0 && uncond_in(s->kids[at - 1], call)) || (at + 1 < s->nkids && uncond_in(s->kids[at + 1], call)));
    nw++;
  }
  v = v && nw;
  memo[h].p = p, memo[h].e = e, memo[h].v = v;
  return v;
}

/* the counter bounding loop statement n from 0 (`for (i = 0; i < e; ++i)`, a range over
 * c10::irange(e)), its condition node in *cond; NULL: none */
static const ls_entity *loop_bound(const ls_node *n, const ls_node **cond) {
  if (n->kind == CXCursor_CXXForRangeStmt && n->nkids >= 2) {
    ls_node *r = bare(n->kids[n->nkids - 2]);
    *cond = n->kids[n->nkids - 2];
    if (!r || r->kind != CXCursor_CallExpr || !r->text || strcmp(r->text, "irange"))
      return NULL;
    const ls_entity *e = NULL;
    int nargs = 0;
    for (unsigned i = 0; i < r->nkids; i++) {
      ls_node *a = bare(r->kids[i]);
      if (!a || (a->ent && a->ent->kind == LS_ENT_FUNC) || a->kind == CXCursor_OverloadedDeclRef ||
          a->kind == CXCursor_NamespaceRef || a->kind == CXCursor_TemplateRef || a->kind == CXCursor_TypeRef)
        continue;
      nargs++;
      e = a->ent ? field_of(a->ent) : NULL;
    }
    return nargs == 1 ? e : NULL;
  }
  if (n->kind != CXCursor_ForStmt || n->nkids != 4)
    return NULL;
  ls_node *init = bare(n->kids[0]), *c = bare(n->kids[1]), *inc = bare(n->kids[2]);
  *cond = c;
  ls_entity *i = NULL;
  if (init && init->kind == CXCursor_DeclStmt && init->nkids == 1)
    init = init->kids[0];
  if (init && init->kind == CXCursor_VarDecl && init->nkids >= 1 && bare(init->kids[init->nkids - 1]) &&
      bare(init->kids[init->nkids - 1])->ilit && !bare(init->kids[init->nkids - 1])->ival)
    i = init->ent;
  if (!i || !c || c->kind != CXCursor_BinaryOperator || c->op != CXBinaryOperator_LT || c->nkids != 2 ||
      !bare(c->kids[0]) || bare(c->kids[0])->ent != i || !bare(c->kids[1]) || !bare(c->kids[1])->ent || !inc ||
      inc->kind != CXCursor_UnaryOperator || (inc->op != CXUnaryOperator_PreInc && inc->op != CXUnaryOperator_PostInc) ||
      inc->nkids != 1 || !bare(inc->kids[0]) || bare(inc->kids[0])->ent != i || local_writes(n->kids[3], i))
    return NULL;
  return field_of(bare(c->kids[1])->ent);
}

struct cloop { ls_block *head; int dir; ls_node *call; };

/* The net group delta of one trip of loop head's body, when every trip has it and issues
 * exactly one group call (*call), no way leaves the body but back to head or by an
 * exception; 0 otherwise. */
static int body_delta(ls_func *f, ls_block *head, int *dep, ls_block **stk, ls_node **call) {
  int sp = 0, back = 0, ncall = 0;
  for (int b = 0; b < f->nblocks; b++)
    dep[b] = INT32_MIN;
  ls_block *body = head->succ[0], *out = head->succ[1];
  dep[body->id] = 0;
  stk[sp++] = body;
  while (sp) {
    ls_block *k = stk[--sp];
    int d = dep[k->id];
    for (int i = 0; i < k->nitems; i++) {
      int g = ls_group_delta(k->items[i]);
      if (g)
        d += g, ncall++, *call = k->items[i];
    }
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      if (t == head) {
        if (back && back != d)
          return 0;
        back = d;
      } else if (t == f->abort_blk || t == f->killall) {
        continue;
      } else if (t == f->exit || t == out) {
        return 0;
      } else if (dep[t->id] == INT32_MIN) {
        dep[t->id] = d;
        stk[sp++] = t;
      } else if (dep[t->id] != d) {
        return 0;
      }
    }
  }
  return ncall == 1 && (back == 1 || back == -1) ? back : 0;
}

/* Does a walk from the blocks on stk reach a block of stop (n of them) before one of
 * avoid, or pass an item writing e? (marks: by block id, scratch) */
static int reaches(ls_func *f, ls_block **stk, int sp, struct cloop *stop, int nstop, struct cloop *avoid,
                   int navoid, const ls_entity *e, unsigned char *seen) {
  memset(seen, 0, (size_t)f->nblocks);
  for (int i = 0; i < sp; i++)
    seen[stk[i]->id] = 1;
  while (sp) {
    ls_block *k = stk[--sp];
    int hit = 0;
    for (int i = 0; i < nstop && !hit; i++)
      hit = stop[i].head == k;
    if (hit)
      return 1;
    for (int i = 0; i < navoid && !hit; i++)
      hit = avoid[i].head == k;
    if (hit)
      continue;
    for (int i = 0; e && i < k->nitems; i++)
      if (node_writes(k->items[i], e, 0))
        return 1;
    for (int s = 0; s < k->nsucc; s++)
      if (!seen[k->succ[s]->id])
        seen[k->succ[s]->id] = 1, stk[sp++] = k->succ[s];
  }
  return 0;
}

static void counter_loops_under(const ls_node *n, ls_node **v, int *nv, int cap) {
  if (!n || n->kind == CXCursor_LambdaExpr)
    return;
  if ((n->kind == CXCursor_ForStmt || n->kind == CXCursor_CXXForRangeStmt) && *nv < cap)
    v[(*nv)++] = (ls_node *)n;
  for (unsigned i = 0; i < n->nkids; i++)
    counter_loops_under(n->kids[i], v, nv, cap);
}

/* gskip for f: the group calls of its closing and reopening counter loops, when they are
 * balanced as the comment above says */
static void counter_loops(ls_check_ctx *c, ls_func *f) {
  gskip.n = 0;
  ls_node *fors[32];
  int nf = 0, any = 0;
  for (int b = 0; b < f->nblocks && !any; b++)
    for (int i = 0; i < f->blocks[b]->nitems && !any; i++)
      any = ls_group_delta(f->blocks[b]->items[i]) != 0;
  if (!any)
    return;
  counter_loops_under(f->body, fors, &nf, 32);
  struct cloop lp[32];
  int nl = 0;
  const ls_entity *ctr = NULL;
  int *dep = NULL;
  ls_block **stk = NULL;
  for (int j = 0; j < nf; j++) {
    const ls_node *cond = NULL;
    const ls_entity *e = loop_bound(fors[j], &cond);
    if (!e || (ctr && e != ctr) || !is_counter(c->p, e) || node_writes(fors[j], e, 0))
      continue;
    ls_block *head = NULL;
    for (int b = 0; b < f->nblocks && !head; b++)
      if (f->blocks[b]->is_loop && f->blocks[b]->nsucc == 2 && f->blocks[b]->cond &&
          bare(f->blocks[b]->cond) == bare((ls_node *)cond))
        head = f->blocks[b];
    if (!head)
      continue;
    if (!dep) {
      dep = malloc((size_t)f->nblocks * sizeof *dep);
      stk = malloc(((size_t)f->nblocks + 1) * sizeof *stk);
      if (!dep || !stk)
        abort();
    }
    ls_node *call = NULL;
    int d = body_delta(f, head, dep, stk, &call);
    if (!d)
      continue;
    ctr = e;
    lp[nl++] = (struct cloop){head, d, call};
  }
  if (!nl) {
    free(dep);
    free(stk);
    return;
  }
  /* closers first, then openers */
  struct cloop cl[32], op[32];
  int ncl = 0, nop = 0;
  for (int i = 0; i < nl; i++) {
    if (lp[i].dir < 0)
      cl[ncl++] = lp[i];
    else
      op[nop++] = lp[i];
  }
  unsigned char *seen = malloc((size_t)f->nblocks);
  if (!seen)
    abort();
  int ok = ncl && nop && !local_writes(f->body, ctr);
  /* from each closing loop's exit: every path meets a reopening loop, passes no other
   * closing one and nothing that writes the count */
  struct cloop endp = {f->exit, 0, NULL};
  for (int i = 0; i < ncl && ok; i++) {
    struct cloop stop[33];
    memcpy(stop, cl, (size_t)ncl * sizeof *cl);
    stop[ncl] = endp;
    stk[0] = cl[i].head->succ[1];
    ok = !reaches(f, stk, 1, stop, ncl + 1, op, nop, ctr, seen);
  }
  /* from the entry: no reopening loop before a closing one */
  if (ok) {
    stk[0] = f->entry;
    ok = !reaches(f, stk, 1, op, nop, cl, ncl, NULL, seen);
  }
  if (ok) {
    for (int i = 0; i < nl; i++)
      gskip.v[gskip.n++] = lp[i].call;
  }
  free(seen);
  free(dep);
  free(stk);
}

/* errp (errpath.c's bits by block id, NULL: none): the walk takes no failure side of a
 * failure test, so gout is the depth on the normal run alone */
static void group_flow(ls_func *f, const unsigned char *errp) {
  for (int i = 0; i < f->nblocks; i++)
    f->blocks[i]->gin = f->blocks[i]->gout = 0, f->blocks[i]->gdone = 0;
  struct esp e;
  int esp = esp_setup(f, &e);
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
    uint16_t fin[32];
    if (esp)
      memcpy(fin, e.facts + (size_t)k->id * 32, sizeof fin);
    uint32_t m0 = m;
    int net = 0;
    for (int i = 0; i < k->nitems; i++) {
      int d = gdelta(k->items[i]);
      net += d;
      if (d)
        m = shift(m, d);
    }
    if (esp) { /* each surviving depth b came from b - net, with the block's writes applied */
      uint16_t moved[32] = {0};
      for (int b = 0; b < 32; b++)
        if (m & (1u << b) && b - net >= 0 && b - net < 32 && (m0 & (1u << (b - net))))
          moved[b] = fin[b - net] & (uint16_t)~e.kill[k->id];
      memcpy(fin, moved, sizeof fin);
    }
    k->gout = m;
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      uint32_t em = m;
      int changed = 0;
      if (errp && (errp[k->id] & 2) && ((errp[k->id] >> 2) & 1) == s)
        continue;
      if (esp) {
        int j = e.cls[k->id];
        uint16_t *tf = e.facts + (size_t)t->id * 32;
        for (int b = 0; b < 32; b++) {
          if (!(em & (1u << b)))
            continue;
          uint16_t fb = fin[b];
          if (j >= 0) {
            unsigned want = s == 0; /* succ[0] is the true side */
            if ((fb >> 8 & 1u << j) && ((fb >> j & 1u) != want)) {
              em &= ~(1u << b); /* this depth's paths all decided the condition the other way */
              continue;
            }
            fb = (uint16_t)((fb & ~(0x101u << j)) | (0x100u << j) | (want << j));
          }
          if (!(t->gin & (1u << b))) {
            tf[b] = fb;
            changed = 1;
          } else {
            uint16_t agree = (uint16_t)((tf[b] >> 8) & (fb >> 8) & ~(tf[b] ^ fb) & 0xff);
            uint16_t met = (uint16_t)(agree << 8 | (tf[b] & agree));
            if (met != tf[b])
              tf[b] = met, changed = 1;
          }
        }
      }
      if ((t->gin | em) != t->gin)
        t->gin |= em, changed = 1;
      if (changed && !t->gdone) {
        t->gdone = 1;
        q[qt++ % n] = t;
        qt %= n;
      }
    }
  }
  free(q);
  if (esp) {
    free(e.cls);
    free(e.kill);
    free(e.facts);
  }
}

int ls_mask_depth(uint32_t m) {
  for (int d = -GZ; d < 32 - GZ; d++)
    if (m == 1u << (GZ + d))
      return d;
  return 99;
}

/* a C++ method: its USR names a struct, class or class template before the function */
static int is_method(const ls_entity *e) {
  const char *fn = e->key ? strstr(e->key, "@F@") : NULL;
  if (!fn)
    return 0;
  for (const char *s = e->key; (s = strstr(s, "@S")) && s < fn; s++)
    if (s[2] == '@' || s[2] == 'T')
      return 1;
  return 0;
}

void ls_group_analyze(ls_check_ctx *c) {
  ls_func *f = c->f;
  counter_loops(c, f);
  if (c->errany) { /* the depths of the normal run first, kept by block id */
    group_flow(f, c->errp);
    if ((size_t)f->nblocks > c->gnormcap) {
      free(c->gnorm);
      c->gnormcap = (size_t)f->nblocks * 2;
      c->gnorm = malloc(c->gnormcap * sizeof *c->gnorm);
      if (!c->gnorm)
        abort();
    }
    for (int b = 0; b < f->nblocks; b++)
      c->gnorm[b] = f->blocks[b]->gout;
  }
  group_flow(f, NULL);
  c->below.n = c->starts.n = c->p2p.n = 0;
  c->first_start = NULL;
  int nends = 0, nother = 0;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    uint32_t m = k->gin;
    if (!m)
      continue;
    for (int i = 0; i < k->nitems; i++) {
      ls_node *n = k->items[i];
      int d = gdelta(n);
      if (d < 0 && (m & (1u << GZ)))
        ls_vec_push(&c->below, n);
      if (d < 0)
        nends++;
      else if (!d && n->ent && n->ent->rule)
        nother++;
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
  /* a pure begin helper only opens, a pure end helper only closes (sparse's +1/-1). A method
   * that nothing here calls by name (an API class's virtual groupEnd(), as torchcomms' NcclApi)
   * is one too when it issues nothing else; a function or lambda that nobody calls (main, a
   * thread's body) opens or closes for itself, and that is the bug. */
  int helper = f->ent && (f->ent->ncalls > 0 || (!nother && is_method(f->ent)));
  if (helper && ((net == 1 && !nends) || (net == -1 && !c->starts.n))) {
    f->group_net = net; /* a begin/end helper: its callers account for it */
    f->group_helper = 1;
  }
}
