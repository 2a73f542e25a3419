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
      int d = ls_group_delta(k->items[i]);
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
      int d = ls_group_delta(n);
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
