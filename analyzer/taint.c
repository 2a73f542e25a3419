/* taint.c — rank dependence. A whole-program, flow-insensitive fixpoint over every item of
 * every CFG: values from rank sources (rules: rank_sources, out_rank arguments) flow through
 * assignments, arithmetic and comparisons, struct fields (one fact per field), globals,
 * parameters (from any call site), return values and out-parameters. Receive buffers of
 * collectives and size queries stay uniform because nothing taints them. Each tainted entity
 * keeps the origin of its first rank value so notes can say where it came from. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"

static ls_node *unwrap(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr ||
               n->kind == CXCursor_CStyleCastExpr || n->kind == CXCursor_CXXStaticCastExpr ||
               n->kind == CXCursor_CXXFunctionalCastExpr) && n->nkids >= 1)
    n = n->kids[n->nkids - 1];
  return n;
}

static int lit_matches(ls_node *arg, const ls_rule_src *s) {
  arg = unwrap(arg);
  if (!arg || arg->kind != CXCursor_StringLiteral || !arg->text)
    return 0;
  const char *t = arg->text;
  size_t n = strlen(t);
  if (n < 2 || t[0] != '"' || t[n - 1] != '"')
    return 0;
  for (int i = 0; i < s->nvalues; i++)
    if (strlen(s->values[i]) == n - 2 && !strncmp(t + 1, s->values[i], n - 2))
      return 1;
  return 0;
}

static const ls_origin *origin_at(ls_program *p, ls_node *call, const char *what) {
  if (call->origin)
    return call->origin;
  ls_origin *o = ls_alloc(p->arena, sizeof *o);
  o->file = call->file;
  o->line = call->line;
  o->col = call->col;
  char buf[256];
  snprintf(buf, sizeof buf, "%s%s%s", what, call->text ? call->text : "?", "()");
  o->what = ls_strdup(p->arena, buf);
  call->origin = o;
  return o;
}

/* rank_sources/uniform_sources matched by a call's value (`returns` or `arg`+`values`) */
static const ls_rule_src *value_source(ls_program *p, ls_node *call) {
  if (!call->text || (call->ent && !(call->ent->src & LS_SRC_ANY)))
    return NULL;
  const ls_rules *r = p->rules;
  for (int i = 0; i < r->nsrcs; i++) {
    const ls_rule_src *s = &r->srcs[i];
    if (strcmp(s->call, call->text))
      continue;
    if (s->returns)
      return s;
    if (s->arg >= 0 && (unsigned)s->arg < call->nkids && lit_matches(call->kids[s->arg], s))
      return s;
  }
  return NULL;
}

static const ls_origin *content_taint(ls_program *p, ls_node *n);
/* What a pointer/array expression points to: its elements' facts, else its own value's. */
const ls_origin *ls_content_taint(ls_program *p, ls_node *n) { return content_taint(p, n); }

static const ls_origin *content_taint(ls_program *p, ls_node *n) {
  n = unwrap(n);
  if (n && n->kind == CXCursor_DeclRefExpr && n->ent && n->ent->kind != LS_ENT_FUNC)
    return n->ent->ptaint ? n->ent->ptaint : n->ent->taint;
  return ls_expr_taint(p, n);
}

static const uint64_t *fs_state;
void ls_taint_state(const uint64_t *state) { fs_state = state; }

const ls_origin *ls_expr_taint(ls_program *p, ls_node *n) {
  if (!n)
    return NULL;
  switch (n->kind) {
  case CXCursor_DeclRefExpr:
    if (n->ent && fs_state && n->ent->fsidx) {
      unsigned b = (unsigned)n->ent->fsidx - 1;
      return fs_state[b / 64] >> (b % 64) & 1 ? n->ent->taint : NULL;
    }
    return n->ent && n->ent->kind != LS_ENT_FUNC ? n->ent->taint : NULL;
  case CXCursor_MemberRefExpr:
    if (n->ent && n->ent->taint)
      return n->ent->taint;
    break;
  case CXCursor_UnaryOperator:
    if (n->op == CXUnaryOperator_AddrOf)
      return NULL; /* an address is not a rank value, whatever it points to */
    if (n->op == CXUnaryOperator_Deref && n->nkids == 1)
      return content_taint(p, n->kids[0]);
    break;
  case CXCursor_ArraySubscriptExpr:
    if (n->nkids == 2) {
      const ls_origin *o = content_taint(p, n->kids[0]);
      return o ? o : ls_expr_taint(p, n->kids[1]);
    }
    break;
  case CXCursor_UnaryExpr: /* sizeof/alignof: a type's size, never a rank value */
  case CXCursor_IntegerLiteral:
  case CXCursor_StringLiteral:
  case CXCursor_CharacterLiteral:
  case CXCursor_FloatingLiteral:
  case CXCursor_LambdaExpr:
  case CXCursor_CXXNullPtrLiteralExpr:
    return NULL;
  case CXCursor_CallExpr: {
    if (!n->ent)
      break;
    const ls_rule_src *s = value_source(p, n);
    if (s)
      return s->uniform ? NULL : origin_at(p, n, "rank-dependent value from ");
    if (n->ent->rule)
      return NULL; /* API results (error codes) are not rank values */
    if (n->ent->def)
      return n->ent->ret_taint;
    if (n->ptr_result)
      return NULL; /* malloc() & co.: an address, not a rank value */
    for (unsigned i = 0; i < n->nkids; i++) { /* unknown function: result follows its inputs */
      const ls_origin *o = ls_expr_taint(p, n->kids[i]);
      if (o)
        return o;
    }
    return NULL;
  }
  default:
    break;
  }
  for (unsigned i = 0; i < n->nkids; i++) {
    const ls_origin *o = ls_expr_taint(p, n->kids[i]);
    if (o)
      return o;
  }
  return NULL;
}

/* The entity an lvalue (or an out-argument) writes: x, s.f (the field), a[i] (a), *p (p).
 * *level counts dereferences on the way (> 0: the write lands in what the entity points to). */
ls_entity *ls_target_of(ls_node *n, int *level) {
  for (;;) {
    n = unwrap(n);
    if (!n)
      return NULL;
    switch (n->kind) {
    case CXCursor_DeclRefExpr:
      return n->ent && n->ent->kind != LS_ENT_FUNC ? n->ent : NULL;
    case CXCursor_MemberRefExpr: /* field-based: the field holds the fact */
      *level = 0;
      return n->ent && n->ent->kind != LS_ENT_FUNC ? n->ent : NULL;
    case CXCursor_ArraySubscriptExpr:
      ++*level;
      n = n->nkids ? n->kids[0] : NULL;
      continue;
    case CXCursor_UnaryOperator:
      if (n->op == CXUnaryOperator_Deref)
        ++*level;
      else if (n->op == CXUnaryOperator_AddrOf)
        --*level;
      else
        return NULL;
      n = n->nkids ? n->kids[0] : NULL;
      continue;
    default:
      return NULL;
    }
  }
}

struct run {
  ls_program *p;
  ls_func *f;
  int changed;
};

static void taint_ent(struct run *r, ls_entity *e, const ls_origin *o, int level) {
  if (!e || !o)
    return;
  int through_ptr = level > 0;
  if (through_ptr && !e->ptaint) {
    e->ptaint = o;
    r->changed = 1;
  } else if (!through_ptr && !e->taint) {
    e->taint = o;
    r->changed = 1;
  }
  if (e->kind == LS_ENT_PARAM && r->f->ent) { /* written through a parameter: an out-param */
    for (int i = 0; i < r->f->nparams && i < 64; i++)
      if (through_ptr && r->f->params[i] == e && !(r->f->ent->out_taint >> i & 1)) {
        r->f->ent->out_taint |= 1ull << i;
        if (!r->f->ent->out_origin)
          r->f->ent->out_origin = o;
        r->changed = 1;
      }
  }
}

static void out_arg(struct run *r, ls_node *arg, const ls_origin *o) {
  int level = 1; /* the callee writes through the pointer it got */
  ls_entity *t = ls_target_of(arg, &level);
  taint_ent(r, t, o, level);
}

static void apply(struct run *r, ls_node *n) {
  ls_program *p = r->p;
  int tp = 0;
  switch (n->kind) {
  case CXCursor_VarDecl:
    for (unsigned i = 0; i < n->nkids; i++)
      taint_ent(r, n->ent, ls_expr_taint(p, n->kids[i]), 0);
    return;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    if (n->nkids == 2) {
      ls_entity *t = ls_target_of(n->kids[0], &tp);
      taint_ent(r, t, ls_expr_taint(p, n->kids[1]), tp);
    }
    return;
  case CXCursor_ReturnStmt:
    if (n->nkids && r->f->ent) {
      const ls_origin *o = ls_expr_taint(p, n->kids[0]);
      if (o && !r->f->ent->ret_taint) {
        r->f->ent->ret_taint = o;
        r->changed = 1;
      }
    }
    return;
  case CXCursor_CallExpr: {
    ls_entity *e = n->ent;
    if (!e)
      return;
    if (e->rule) {
      for (int i = 0; i < e->rule->nargs && (unsigned)i < n->nkids; i++)
        if (e->rule->roles[i] == LS_ROLE_OUT_RANK)
          out_arg(r, n->kids[i], origin_at(p, n, "rank-dependent value from "));
    }
    for (int i = 0; (e->src & LS_SRC_OUT) && i < p->rules->nsrcs; i++) {
      const ls_rule_src *s = &p->rules->srcs[i];
      if (!s->uniform && s->out_arg >= 0 && (unsigned)s->out_arg < n->nkids && n->text && !strcmp(s->call, n->text))
        out_arg(r, n->kids[s->out_arg], origin_at(p, n, "rank-dependent value from "));
    }
    if (e->def) {
      ls_func *g = e->def;
      /* an overloaded call operator (a lambda) gets the closure object as argument 0 */
      unsigned off = n->nkids == (unsigned)g->nparams + 1 && !strncmp(e->key, "lambda:", 7);
      for (int i = 0; i < g->nparams && (unsigned)i + off < n->nkids; i++) {
        taint_ent(r, g->params[i], ls_expr_taint(p, n->kids[i + off]), 0);
        if (i < 64 && (e->out_taint >> i & 1))
          out_arg(r, n->kids[i + off], e->out_origin);
      }
    }
    return;
  }
  default:
    return;
  }
}

/* Implicit flow: blocks control-dependent on a rank-dependent branch get its origin, and
 * plain assignments there make their target rank-dependent (`if (rank) op = ncclMax;`). */
static void implicit_flow(struct run *r) {
  ls_func *f = r->f;
  for (int b = 0; b < f->nblocks; b++)
    f->blocks[b]->impl = NULL;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    if (!k->cond || k->nsucc < 2)
      continue;
    const ls_origin *o = ls_expr_taint(r->p, k->cond);
    if (!o)
      continue;
    for (int s = 0; s < k->nsucc; s++)
      for (ls_block *q = k->succ[s]; q && q != k->ipdom && q != f->vexit && !q->impl; q = q->ipdom)
        q->impl = o;
  }
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    if (!k->impl)
      continue;
    for (int j = 0; j < k->nitems; j++) {
      ls_node *n = k->items[j];
      if ((n->kind == CXCursor_BinaryOperator || n->kind == CXCursor_CompoundAssignOperator) && n->nkids == 2) {
        int level = 0;
        ls_entity *t = ls_target_of(n->kids[0], &level);
        taint_ent(r, t, k->impl, level);
      }
    }
  }
}

void ls_taint_run(ls_program *p) {
  struct run r = {.p = p};
  for (int iter = 0; iter < 64; iter++) {
    r.changed = 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
      r.f = p->funcs.v[i];
      for (int b = 0; b < r.f->nblocks; b++) {
        ls_block *k = r.f->blocks[b];
        for (int j = 0; j < k->nitems; j++)
          apply(&r, k->items[j]);
      }
      implicit_flow(&r);
    }
    if (!r.changed) {
      if (getenv("LOCKSTEP_LINT_STATS"))
        fprintf(stderr, "lockstep lint: taint fixpoint in %d passes\n", iter + 1);
      break;
    }
  }
}
