/* taint.c — rank dependence. A whole-program fixpoint over every item of
 * every CFG: values from rank sources (rules: rank_sources, out_rank arguments) flow through
 * assignments, arithmetic and comparisons, struct fields (one fact per field), globals,
 * parameters (from any call site), return values and out-parameters. Receive buffers of
 * collectives and size queries stay uniform because nothing taints them. Each tainted entity
 * keeps the origin of its first rank value so notes can say where it came from. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "xalloc.h"

static int lit_matches(ls_node *arg, const ls_rule_src *s) {
  arg = ls_strip_casts(arg);
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
  if (ls_nx(call)->origin)
    return call->x->origin;
  ls_origin *o = ls_alloc(p->arena, sizeof *o);
  o->file = call->file;
  o->line = call->line;
  o->col = call->col;
  o->from = NULL;
  char buf[256];
  snprintf(buf, sizeof buf, "%s%s%s", what, call->text ? call->text : "?", "()");
  o->what = ls_strdup(p->arena, buf);
  ls_node_ext(p->arena, call)->origin = o;
  return o;
}

/* One step of a rank value's way from one function into another, so that a note can
 * retrace it (a finding in a library function whose parameter some caller, possibly in
 * another TU, fed with a rank: the source alone would point into that caller's file). */
static const ls_origin *hop(ls_program *p, const ls_node *at, const ls_origin *from, const char *what) {
  ls_origin *o = ls_alloc(p->arena, sizeof *o);
  o->file = at->file;
  o->line = at->line;
  o->col = at->col;
  o->what = ls_strdup(p->arena, what);
  o->from = from;
  return o;
}

/* rank_sources/uniform_sources matched by a call's value (`returns` or `arg`+`values`) */
const ls_rule_src *ls_value_source(ls_program *p, ls_node *call) {
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

static const ls_origin *content_taint(ls_program *p, const uint64_t *st, ls_node *n);
/* What a pointer/array expression points to: its elements' facts, else its own value's. */
const ls_origin *ls_content_taint(ls_program *p, const uint64_t *st, ls_node *n) { return content_taint(p, st, n); }

static const ls_origin *content_taint(ls_program *p, const uint64_t *st, ls_node *n) {
  n = ls_strip_casts(n);
  if (n && n->kind == CXCursor_DeclRefExpr && n->ent && n->ent->kind != LS_ENT_FUNC)
    return n->ent->ptaint ? n->ent->ptaint : n->ent->taint;
  return ls_expr_taint(p, st, n);
}

/* ---- access paths: `s.x` / `p->x` of a local or parameter ----
 * Field facts are one per field, for every object. Where the base is a local or parameter,
 * the member expression also names a path entity (pbase, pfield) that the flow-sensitive
 * pass tracks like a local: `MPI_Allreduce(&pairme, &pairall, ..., MPI_MINLOC)` makes
 * pairall.proc uniform although pairme.proc = me made the field `proc` rank-dependent, and
 * `MPI_Bcast(&o->steps, ...)` makes o->steps uniform from there on. What the last pass saw
 * at each read is kept, so the checks (which refine only plain locals) read the same. */
struct pathref { ls_node *n; ls_entity *path; signed char seen; /* 1 uniform, 2 rank, 0 unknown */ };
static struct pathref *ptab;
static size_t pcap;
static int taint_done;

static struct pathref *path_ref(const ls_node *n) {
  if (!pcap)
    return NULL;
  for (size_t j = ((uintptr_t)n >> 4) * 0x9e3779b97f4a7c15ull & (pcap - 1); ptab[j].n; j = (j + 1) & (pcap - 1))
    if (ptab[j].n == n)
      return &ptab[j];
  return NULL;
}

static ls_entity *path_base(ls_node *m) {
  ls_node *b = m->nkids ? ls_strip_casts(m->kids[0]) : NULL;
  if (b && b->kind == CXCursor_DeclRefExpr && b->ent && (b->ent->kind == LS_ENT_VAR || b->ent->kind == LS_ENT_PARAM))
    return b->ent;
  if (b && b->kind == CXCursor_MemberRefExpr && b->ent && b->ent->kind == LS_ENT_FIELD) {
    /* a member object of `this` (C++: `pairall.proc` in a method): the member is the base */
    ls_node *t = b->nkids ? ls_strip_casts(b->kids[0]) : NULL;
    if (!t || t->kind == CXCursor_CXXThisExpr)
      return b->ent;
  }
  return NULL;
}

static void reads_add(ls_program *p, ls_func *f, int mark, ls_entity *e);

/* One pass over a body's nodes that name an entity (f->refs, in preorder): its path
 * references, and the entities it reads (see reads_build) */
static void path_scan(ls_program *p, ls_func *f, int mark, ls_vec *out) {
  for (int i = 0; i < f->nrefs; i++) {
    ls_node *n = f->refs[i];
    reads_add(p, f, mark, n->ent);
    if (n->kind == CXCursor_MemberRefExpr && n->ent->kind == LS_ENT_FIELD && path_base(n))
      ls_vec_push(out, n);
  }
}

/* fpaths[i]: the path references of function i */
static void path_build(ls_program *p, ls_vec *fpaths) {
  ls_vec refs = {0};
  for (size_t i = 0; i < p->funcs.n; i++) {
    path_scan(p, p->funcs.v[i], (int)i + 1, &fpaths[i]);
    for (size_t k = 0; k < fpaths[i].n; k++)
      ls_vec_push(&refs, fpaths[i].v[k]);
  }
  pcap = 16;
  while (3 * pcap < 4 * (refs.n + 1)) /* at most 3/4 full */
    pcap *= 2;
  ptab = ls_alloc(p->arena, pcap * sizeof *ptab);
  /* (base, field) -> path entity: most paths are referenced many times, and the key string
   * and its hash cost ~350 instructions a reference */
  struct pslot { const ls_entity *b, *fld; ls_entity *e; } *pairs = calloc(pcap, sizeof *pairs);
  if (!pairs)
    abort();
  char key[1024];
  for (size_t i = 0; i < refs.n; i++) {
    ls_node *n = refs.v[i];
    ls_entity *b = path_base(n);
    size_t h = (((uintptr_t)b >> 4) * 0x9e3779b97f4a7c15ull ^ ((uintptr_t)n->ent >> 4)) * 0xff51afd7ed558ccdull >> 7 & (pcap - 1);
    while (pairs[h].e && (pairs[h].b != b || pairs[h].fld != n->ent))
      h = (h + 1) & (pcap - 1);
    if (pairs[h].e) {
      size_t j = ((uintptr_t)n >> 4) * 0x9e3779b97f4a7c15ull & (pcap - 1);
      while (ptab[j].n)
        j = (j + 1) & (pcap - 1);
      ptab[j] = (struct pathref){n, pairs[h].e, 0};
      continue;
    }
    /* "path|BASE|FIELD", cut at sizeof key - 1 as snprintf would: built by hand because
     * snprintf's formatting cost ~900 instructions a reference (17 M on 18k references) */
    size_t kl = 0;
    const char *parts[4] = {"path|", b->key, "|", n->ent->key};
    for (int q = 0; q < 4; q++) {
      size_t len = strlen(parts[q]);
      if (len > sizeof key - 1 - kl)
        len = sizeof key - 1 - kl;
      memcpy(key + kl, parts[q], len);
      kl += len;
    }
    key[kl] = 0;
    ls_entity *e = ls_entity_get(p, key, n->ent->name, LS_ENT_FIELD);
    e->pbase = b;
    e->pfield = n->ent;
    pairs[h] = (struct pslot){b, n->ent, e};
    size_t j = ((uintptr_t)n >> 4) * 0x9e3779b97f4a7c15ull & (pcap - 1);
    while (ptab[j].n)
      j = (j + 1) & (pcap - 1);
    ptab[j] = (struct pathref){n, e, 0};
  }
  free(pairs);
  free(refs.v);
}

/* a path's value under the flow-sensitive state, or -1 when the state does not track it */
static int path_bit(const uint64_t *st, const ls_entity *e) {
  if (!st || !e->fsidx)
    return -1;
  unsigned b = (unsigned)e->fsidx - 1;
  return st[b / 64] >> (b % 64) & 1;
}

static int flow_arg(unsigned long long set, int rest, unsigned i) {
  return (i < 64 && (set >> i & 1)) || (rest >= 0 && i >= (unsigned)rest);
}

/* What flows into a value_flows call (rules/host.json): the value or the pointee of each of
 * its `from` arguments (`snprintf(path, n, "data.%d", rank)`, `memcpy(&x, &rank, ...)`,
 * `fscanf(f, ...)` of a FILE* opened on a per-rank path). */
static const ls_origin *flow_in(ls_program *p, const uint64_t *st, ls_node *n) {
  const ls_rule_flow *fl = n->ent->flow;
  for (unsigned i = 0; i < n->nkids; i++) {
    if (!flow_arg(fl->from, fl->from_rest, i))
      continue;
    ls_node *a = ls_strip_casts(n->kids[i]);
    const ls_origin *o = a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids
                             ? ls_expr_taint(p, st, a->kids[0])
                             : ls_expr_taint(p, st, a);
    if (!o && a && a->kind == CXCursor_DeclRefExpr) /* a buffer: what it holds (its value was read above) */
      o = a->ent && a->ent->kind != LS_ENT_FUNC ? a->ent->ptaint : NULL;
    else if (!o)
      o = content_taint(p, st, a);
    if (o)
      return o;
  }
  return NULL;
}

/* ---- return values by call site ----
 * The summaries are context-insensitive: a parameter is rank-dependent when any call passes a
 * rank value, and so is a return value computed from it. For a function whose return value
 * is computed from its parameters alone — arithmetic on them, on locals assigned so outside
 * any branch, on calls of such functions — each call's result is what that call passes:
 * `prn(7)` is uniform, `prn(seed + rank)` is not. Small functions only (a PRNG, a size
 * helper); the rest keep the summary. */
static int ret_by_params(ls_func *g);
static int mark_visit(ls_block *q, void *ctx);

int ls_addr_taken(const ls_node *n, const ls_entity *v) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf && n->nkids) {
    int level = 0;
    if (ls_target_of(n->kids[0], &level) == v)
      return 1;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    if (ls_addr_taken(n->kids[i], v))
      return 1;
  return 0;
}

/* what ret_by_params has found of g's locals: each looked at once (a local read many times
 * would otherwise be walked again at every read) */
struct pure_ctx {
  ls_func *g;
  int n;
  struct { const ls_entity *v; int res; uint64_t mask; } memo[64];
};

static int pure_expr(struct pure_ctx *c, ls_node *n, uint64_t *mask, int depth);

/* every write of local v in g is outside any branch (g's blocks marked: control dependent)
 * and assigns a value computed from the parameters; nothing takes its address */
static int pure_local(struct pure_ctx *c, ls_entity *v, uint64_t *mask, int depth) {
  for (int i = 0; i < c->n; i++)
    if (c->memo[i].v == v) { /* done, or being looked at (a write reading v itself) */
      *mask |= c->memo[i].mask;
      return c->memo[i].res;
    }
  if (c->n == 64 || depth > 16)
    return 0;
  int at = c->n++, res = 1;
  c->memo[at].v = v;
  c->memo[at].res = 1;
  c->memo[at].mask = 0;
  uint64_t m = 0;
  ls_func *g = c->g;
  for (int b = 0; b < g->nblocks && res; b++) {
    ls_block *k = g->blocks[b];
    if (ls_addr_taken(k->cond, v))
      res = 0;
    for (int j = 0; j < k->nitems && res; j++) {
      ls_node *n = k->items[j], *rhs = NULL;
      int level = 0, writes = 0;
      if (ls_addr_taken(n, v))
        res = 0;
      else if (n->kind == CXCursor_VarDecl && n->ent == v) {
        writes = 1;
        rhs = n->nkids ? n->kids[n->nkids - 1] : NULL;
      } else if ((n->kind == CXCursor_BinaryOperator || n->kind == CXCursor_CompoundAssignOperator) && n->nkids == 2 &&
                 ls_target_of(n->kids[0], &level) == v) {
        writes = 1;
        rhs = n->kids[1];
      }
      if (writes && (k->mark || level != 0 || (rhs && !pure_expr(c, rhs, &m, depth + 1))))
        res = 0;
    }
  }
  for (int i = 0; i < g->nparams && i < 64; i++)
    if (g->params[i] == v)
      m |= 1ull << i;
  c->memo[at].res = res;
  c->memo[at].mask = m;
  *mask |= m;
  return res;
}

static int pure_expr(struct pure_ctx *c, ls_node *n, uint64_t *mask, int depth) {
  if (!n || depth > 32)
    return 0;
  switch (n->kind) {
  case CXCursor_IntegerLiteral:
  case CXCursor_FloatingLiteral:
  case CXCursor_CharacterLiteral:
  case CXCursor_UnaryExpr:
    return 1;
  case CXCursor_DeclRefExpr:
    if (!n->ent)
      return n->ilit; /* an enum constant */
    if (n->ent->kind == LS_ENT_PARAM) {
      for (int i = 0; i < c->g->nparams && i < 64; i++)
        if (c->g->params[i] == n->ent)
          return pure_local(c, n->ent, mask, depth); /* not written in g but as such */
      return 0;
    }
    return n->ent->kind == LS_ENT_VAR && pure_local(c, n->ent, mask, depth);
  case CXCursor_UnaryOperator:
    if (n->op == CXUnaryOperator_Deref || n->op == CXUnaryOperator_AddrOf)
      return 0;
    break;
  case CXCursor_BinaryOperator:
  case CXCursor_ParenExpr:
  case CXCursor_UnexposedExpr:
  case CXCursor_CStyleCastExpr:
  case CXCursor_CXXStaticCastExpr:
  case CXCursor_CXXFunctionalCastExpr:
  case CXCursor_ConditionalOperator:
    break;
  case CXCursor_CallExpr: { /* a call of such a function on such arguments */
    ls_func *h = n->ent && !n->ent->rule ? n->ent->def : NULL;
    if (!h || n->nkids != (unsigned)h->nparams || !ret_by_params(h))
      return 0;
    for (int i = 0; i < h->nparams && i < 64; i++)
      if ((h->ret_params >> i & 1) && !pure_expr(c, n->kids[i], mask, depth + 1))
        return 0;
    return 1;
  }
  default:
    return 0;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    if (!pure_expr(c, n->kids[i], mask, depth + 1))
      return 0;
  return 1;
}

static int ret_by_params(ls_func *g) {
  if (g->ret_pure)
    return g->ret_pure == 1;
  g->ret_pure = -1;
  if (g->nblocks > 64 || g->nparams > 64 || !g->ent || !strncmp(g->ent->key, "lambda:", 7))
    return 0;
  g->ret_pure = 2; /* a recursive call: not followed */
  for (int b = 0; b < g->nblocks; b++)
    g->blocks[b]->mark = 0;
  for (int b = 0; b < g->nblocks; b++)
    if (g->blocks[b]->cond && g->blocks[b]->nsucc >= 2)
      ls_ctl_region(g, g->blocks[b], mark_visit, NULL);
  struct pure_ctx *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->g = g;
  uint64_t mask = 0;
  int pure = 1, any = 0;
  for (int b = 0; b < g->nblocks && pure; b++)
    for (int j = 0; j < g->blocks[b]->nitems && pure; j++) {
      ls_node *n = g->blocks[b]->items[j];
      if (n->kind == CXCursor_ReturnStmt && n->nkids) {
        any = 1;
        pure = pure_expr(c, n->kids[0], &mask, 0);
      }
    }
  free(c);
  for (int b = 0; b < g->nblocks; b++)
    g->blocks[b]->mark = 0;
  g->ret_pure = pure && any ? 1 : -1;
  g->ret_params = mask;
  return g->ret_pure == 1;
}

const ls_origin *ls_expr_taint(ls_program *p, const uint64_t *st, ls_node *n) {
  if (!n)
    return NULL;
  switch (n->kind) {
  case CXCursor_DeclRefExpr:
    if (n->ent && st && n->ent->fsidx) {
      unsigned b = (unsigned)n->ent->fsidx - 1;
      return st[b / 64] >> (b % 64) & 1 ? n->ent->taint : NULL;
    }
    return n->ent && n->ent->kind != LS_ENT_FUNC ? n->ent->taint : NULL;
  case CXCursor_MemberRefExpr:
    if (n->ent && n->ent->taint) {
      struct pathref *r = path_ref(n);
      int bit = r ? path_bit(st, r->path) : -1;
      if (bit == 0 || (bit < 0 && r && taint_done && r->seen == 1))
        break; /* this object's field is uniform here; the base may still be rank-dependent */
      return bit == 1 && r->path->taint ? r->path->taint : n->ent->taint;
    }
    break;
  case CXCursor_UnaryOperator:
    if (n->op == CXUnaryOperator_AddrOf)
      return NULL; /* an address is not a rank value, whatever it points to */
    if (n->op == CXUnaryOperator_Deref && n->nkids == 1)
      return content_taint(p, st, n->kids[0]);
    break;
  case CXCursor_ArraySubscriptExpr:
    if (n->nkids == 2) {
      const ls_origin *o = content_taint(p, st, n->kids[0]);
      return o ? o : ls_expr_taint(p, st, n->kids[1]);
    }
    break;
  case CXCursor_ConditionalOperator:
    /* `rank == 0 ? MPI_ROOT : MPI_PROC_NULL` (`left ? that : 0`): the root a side of an
     * intercommunicator names, different on the root's own process by design (rules'
     * root_designators); only the alternatives' values count */
    if (n->root_choice && n->nkids == 3) {
      const ls_origin *o = ls_expr_taint(p, st, n->kids[1]);
      return o ? o : ls_expr_taint(p, st, n->kids[2]);
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
    const ls_rule_src *s = ls_value_source(p, n);
    if (s)
      return s->uniform ? NULL : origin_at(p, n, "rank-dependent value from ");
    if (n->ent->rule)
      return NULL; /* API results (error codes) are not rank values */
    if (n->ent->def) {
      ls_func *g = n->ent->def;
      if (g->ret_pure != 1 || n->nkids != (unsigned)g->nparams)
        return n->ent->ret_taint;
      for (int i = 0; i < g->nparams && i < 64; i++) { /* what this call passes */
        const ls_origin *o = g->ret_params >> i & 1 ? ls_expr_taint(p, st, n->kids[i]) : NULL;
        if (o) /* this call passes a rank value, so the fixpoint gives g a summary through
                * this parameter: its origin retraces the way through g */
          return n->ent->ret_taint;
      }
      return NULL;
    }
    if (n->ent->flow) /* the rules say where the call's inputs go */
      return n->ent->flow->returns ? flow_in(p, st, n) : NULL;
    if (n->ptr_result)
      return NULL; /* malloc() & co.: an address, not a rank value */
    for (unsigned i = 0; i < n->nkids; i++) { /* unknown function: result follows its inputs */
      const ls_origin *o = ls_expr_taint(p, st, n->kids[i]);
      if (o)
        return o;
    }
    return NULL;
  }
  default:
    break;
  }
  for (unsigned i = 0; i < n->nkids; i++) {
    const ls_origin *o = ls_expr_taint(p, st, n->kids[i]);
    if (o)
      return o;
  }
  return NULL;
}

/* The entity an lvalue (or an out-argument) writes: x, s.f (the field), a[i] (a), *p (p).
 * *level counts dereferences on the way (> 0: the write lands in what the entity points to). */
ls_entity *ls_target_of(ls_node *n, int *level) {
  for (;;) {
    n = ls_strip_casts(n);
    if (!n)
      return NULL;
    switch (n->kind) {
    case CXCursor_DeclRefExpr:
      return n->ent && n->ent->kind != LS_ENT_FUNC ? n->ent : NULL;
    case CXCursor_MemberRefExpr: { /* field-based: the field holds the fact */
      struct pathref *r = *level == 0 ? path_ref(n) : NULL;
      *level = 0;
      if (r) /* the whole field of a local's or parameter's object: its path */
        return r->path;
      return n->ent && n->ent->kind != LS_ENT_FUNC ? n->ent : NULL;
    }
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

int ls_writes_of(ls_node *n, const ls_entity *e, unsigned how, int limit) {
  if (!n || limit <= 0)
    return 0;
  const char *kn = n->kind == CXCursor_CallExpr && n->ent && n->ent->rule ? n->ent->rule->kind_name : NULL;
  if ((how & LS_WR_NO_QUERY) && kn && (!strcmp(kn, "rank_query") || !strcmp(kn, "size_query")))
    return 0;
  int w = 0, level = 0;
  if (ls_unary_may_write(n) && ls_target_of(n->kids[0], &level) == e)
    w++;
  else if ((how & LS_WR_ASSIGN) && ((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
                                    n->kind == CXCursor_CompoundAssignOperator) &&
           n->nkids == 2 && ls_target_of(n->kids[0], &level) == e)
    w++;
  else if ((how & LS_WR_DECL) && n->kind == CXCursor_VarDecl && n->ent == e && n->nkids)
    w++;
  for (unsigned i = 0; i < n->nkids && w < limit; i++)
    w += ls_writes_of(n->kids[i], e, how, limit - w);
  return w;
}

/* ---- which functions must run again ----
 * A function's passes read the facts of the entities its body names (and their access
 * paths) and its blocks' implicit-flow origins, and every write is "set if not yet set".
 * So a function whose inputs did not change since its last run started would write nothing
 * new: the outer fixpoint skips it. Each entity lists the functions that read it; a write
 * marks them dirty. Which functions run, and in which order, is otherwise unchanged, so the
 * first origin each fact keeps (what the notes say) is the same as running them all. */
struct ls_reader { ls_func *f; struct ls_reader *next; };

static void reads_add(ls_program *p, ls_func *f, int mark, ls_entity *e) {
  if (!e || e->rmark == mark)
    return;
  e->rmark = mark;
  struct ls_reader *r = ls_alloc(p->arena, sizeof *r);
  r->f = f;
  r->next = e->readers;
  e->readers = r;
}

/* f's readers: the entities of its body (noted by path_scan's walk) and their access paths
 * (`paths`: the body's path references), and those of the synthetic items of the CFG
 * (scope-exit destructor calls, no operands). Its own entity's facts matter only where it
 * calls itself. */
static void reads_build(ls_program *p, ls_func *f, int mark, const ls_vec *paths) {
  for (size_t i = 0; i < paths->n; i++)
    reads_add(p, f, mark, path_ref(paths->v[i])->path);
  for (int b = 0; b < f->nblocks; b++)
    for (int j = 0; j < f->blocks[b]->nitems; j++)
      reads_add(p, f, mark, f->blocks[b]->items[j]->ent);
}

static void ent_changed(const ls_entity *e) {
  for (struct ls_reader *r = e->readers; r; r = r->next)
    r->f->tdirty = 1;
}

struct run {
  ls_program *p;
  ls_func *f;
  int changed;
  int local_only;  /* settling the function's own locals first: no effect leaves it */
  int local_changed; /* the pass changed one of f's own facts (a local's, a parameter's, the implicit flow) */
  ls_block *k; int j;  /* the item apply() is at */
  struct bcast_into *into; int ninto; /* f's collectives that deliver alike into a field or global */
};

static int own_local(const ls_func *f, const ls_entity *e) {
  if (e->kind == LS_ENT_VAR)
    return 1;
  if (e->kind == LS_ENT_PARAM)
    for (int i = 0; i < f->nparams; i++)
      if (f->params[i] == e)
        return 1;
  return 0;
}

/* ---- a field or global the function broadcasts ----
 * `if (me == 0) fgets(line, ...); MPI_Bcast(line, n, ...);` with `line` a member or global:
 * the root's writes prepare what the broadcast gives every rank, and what other functions
 * read (parse() after the loop's broadcast) is that. A field's fact is one for the whole
 * program, so a rank-dependent write into an object that a broadcast, allreduce or allgather
 * of the same function receives into later on some path does not make it rank-dependent
 * (README, Limits: a read between the write and the broadcast, or after a path that skips
 * it, is taken as the broadcast value). Locals are followed flow-sensitively instead. */
struct bcast_into {
  ls_entity *t; int level;
  ls_node *call;
  unsigned char *reach; /* by block id: a delivery into t is reachable from the block's entry */
  int owns;             /* deliveries bcast_later cannot tell apart share one reach */
};

int ls_delivers_alike(const ls_rule_fn *rule) {
  return rule && rule->kind == LS_KIND_COLLECTIVE && rule->received_uniform;
}

static void bcast_build(struct run *r) {
  ls_func *f = r->f;
  r->into = NULL;
  r->ninto = 0;
  int cap = 0;
  for (int b = 0; b < f->nblocks; b++)
    for (int j = 0; j < f->blocks[b]->nitems; j++) {
      ls_node *n = f->blocks[b]->items[j];
      if (n->kind != CXCursor_CallExpr || !n->ent || !ls_delivers_alike(n->ent->rule))
        continue;
      for (int i = 0; i < n->ent->rule->nargs && (unsigned)i < n->nkids; i++) {
        if (n->ent->rule->roles[i] != LS_ROLE_RECVBUF)
          continue;
        int level = 1;
        ls_entity *t = ls_target_of(n->kids[i], &level);
        if (!t || own_local(f, t) || t->pbase || (t->kind != LS_ENT_FIELD && t->kind != LS_ENT_GLOBAL))
          continue;
        if (r->ninto == cap) {
          cap = cap ? 2 * cap : 4;
          r->into = ls_xrealloc(r->into, (size_t)cap * sizeof *r->into);
        }
        struct bcast_into *d = &r->into[r->ninto++];
        *d = (struct bcast_into){t, level, n, NULL, 0};
        for (int o = 0; o < r->ninto - 1 && !d->reach; o++)
          if (r->into[o].t == t && (t->kind == LS_ENT_FIELD || r->into[o].level == level))
            d->reach = r->into[o].reach;
        if (!d->reach) {
          d->reach = calloc((size_t)f->nblocks + 1, 1);
          d->owns = 1;
          if (!d->reach)
            abort();
        }
        if (d->reach[b])
          continue; /* already in the shared set, with everything that reaches it */
        /* backwards from the call's block: every block from which it can be reached */
        ls_block **todo = malloc(((size_t)f->nblocks + 1) * sizeof *todo);
        if (!todo)
          abort();
        int nt = 0;
        todo[nt++] = f->blocks[b];
        d->reach[b] = 1;
        while (nt) {
          ls_block *q = todo[--nt];
          for (int e = 0; e < q->npred; e++)
            if (!d->reach[q->pred[e]->id]) {
              d->reach[q->pred[e]->id] = 1;
              todo[nt++] = q->pred[e];
            }
        }
        free(todo);
      }
    }
}

static void bcast_free(struct run *r) {
  for (int i = 0; i < r->ninto; i++)
    if (r->into[i].owns)
      free(r->into[i].reach);
  free(r->into);
  r->into = NULL;
  r->ninto = 0;
}

/* a write of t (at level) by item j of block k is what a later delivery of f overwrites */
static int bcast_later(const struct run *r, const ls_block *k, int j, const ls_entity *t, int level) {
  for (int i = 0; i < r->ninto && k; i++) {
    const struct bcast_into *d = &r->into[i];
    if (d->t != t || (t->kind != LS_ENT_FIELD && d->level != level))
      continue;
    for (int m = j + 1; m < k->nitems; m++)
      if (k->items[m] == d->call)
        return 1;
    for (int s = 0; s < k->nsucc; s++)
      if (d->reach[k->succ[s]->id])
        return 1;
  }
  return 0;
}

static void taint_ent(struct run *r, ls_entity *e, const ls_origin *o, int level) {
  if (!e || !o)
    return;
  int through_ptr = level > 0;
  if (r->local_only) {
    if (!through_ptr && !e->taint && own_local(r->f, e)) {
      e->taint = o;
      ent_changed(e);
      r->changed = r->local_changed = 1;
    }
    return;
  }
  if (e->pfield) /* one object's field: the field of every object may hold it */
    taint_ent(r, e->pfield, o, level);
  if (through_ptr && !e->ptaint) {
    e->ptaint = o;
    ent_changed(e);
    r->changed = 1;
    r->local_changed |= own_local(r->f, e);
  } else if (!through_ptr && !e->taint) {
    e->taint = o;
    ent_changed(e);
    r->changed = 1;
    r->local_changed |= own_local(r->f, e);
  }
  if (e->kind == LS_ENT_PARAM && r->f->ent) { /* written through a parameter: an out-param */
    for (int i = 0; i < r->f->nparams && i < 64; i++)
      if (through_ptr && r->f->params[i] == e && !(r->f->ent->out_taint >> i & 1)) {
        r->f->ent->out_taint |= 1ull << i;
        if (!r->f->ent->out_origin)
          r->f->ent->out_origin = o;
        ent_changed(r->f->ent);
        r->changed = 1;
      }
  }
}

/* A rank value written into a global: a step a note should show, since the global is
 * read in other functions (and, with a compilation database, other TUs). */
static const ls_origin *into_global(struct run *r, ls_node *at, const ls_entity *t, int level,
                                    const ls_origin *o, const char *how) {
  if (!o || !t || t->kind != LS_ENT_GLOBAL || level > 0 || t->taint || r->local_only)
    return o;
  char w[256];
  snprintf(w, sizeof w, "global '%s' is set %s", t->name ? t->name : "?", how);
  return hop(r->p, at, o, w);
}

/* The object a local pointer aliases (`int *p = &r;`), when it is never set to anything else. */
static ls_entity *alias_of(const ls_entity *t) { return t && t->alias && !t->alias_many ? t->alias : NULL; }

/* `p = &x` / `int *p = &x` for a local pointer p: x is what a write through p lands in */
static void note_alias(ls_entity *t, int level, ls_node *rhs) {
  if (!t || level != 0 || t->kind != LS_ENT_VAR)
    return;
  ls_node *a = ls_strip_casts(rhs);
  int l2 = 0;
  ls_entity *x = a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids
                     ? ls_target_of(a->kids[0], &l2)
                     : NULL;
  if (!x || l2 != 0 || x->pfield)
    t->alias_many |= t->alias != NULL || a; /* set to something else: no single object */
  else if (t->alias && t->alias != x)
    t->alias_many = 1;
  else
    t->alias = x;
}

static void out_arg(struct run *r, ls_node *arg, const ls_origin *o) {
  int level = 1; /* the callee writes through the pointer it got */
  ls_entity *t = ls_target_of(arg, &level);
  if (!bcast_later(r, r->k, r->j, t, level))
    taint_ent(r, t, o, level);
  if (level == 1 && alias_of(t))
    taint_ent(r, alias_of(t), o, 0);
}

/* a value_flows call writes what flowed in through its `into` arguments */
static void flow_out(struct run *r, const uint64_t *st, ls_node *n) {
  const ls_rule_flow *fl = n->ent->flow;
  const ls_origin *o = NULL;
  for (unsigned i = 0; i < n->nkids; i++) {
    if (!flow_arg(fl->into, fl->into_rest, i))
      continue;
    if (!o && !(o = flow_in(r->p, st, n)))
      return;
    out_arg(r, n->kids[i], o);
  }
}

static void apply(struct run *r, const uint64_t *st, ls_node *n) {
  ls_program *p = r->p;
  int tp = 0;
  switch (n->kind) {
  case CXCursor_VarDecl:
    for (unsigned i = 0; i < n->nkids; i++)
      taint_ent(r, n->ent, ls_expr_taint(p, st, n->kids[i]), 0);
    if (n->nkids)
      note_alias(n->ent, 0, n->kids[n->nkids - 1]);
    return;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    if (n->nkids == 2) {
      ls_entity *t = ls_target_of(n->kids[0], &tp);
      if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign)
        note_alias(t, tp, n->kids[1]);
      if (!bcast_later(r, r->k, r->j, t, tp))
        taint_ent(r, t, into_global(r, n, t, tp, ls_expr_taint(p, st, n->kids[1]), "to a rank-dependent value"), tp);
    }
    return;
  case CXCursor_ReturnStmt:
    if (n->nkids && r->f->ent && !r->local_only) {
      const ls_origin *o = ls_expr_taint(p, st, n->kids[0]);
      if (o && !r->f->ent->ret_taint) {
        char w[256];
        snprintf(w, sizeof w, "%s() returns a rank-dependent value", r->f->name ? r->f->name : "?");
        r->f->ent->ret_taint = hop(p, n, o, w);
        ent_changed(r->f->ent);
        r->changed = 1;
      }
    }
    return;
  case CXCursor_CallExpr: {
    ls_entity *e = n->ent;
    if (!e)
      return;
    if (e->rule) {
      /* a receive buffer holds this rank's own part unless the rules say every rank gets the
       * same (a prefix, a scatter, a rooted result, a receive from a peer) */
      for (int i = 0; i < e->rule->nargs && (unsigned)i < n->nkids; i++)
        if (e->rule->roles[i] == LS_ROLE_OUT_RANK || (e->rule->roles[i] == LS_ROLE_RECVBUF && !e->rule->received_uniform))
          out_arg(r, n->kids[i], origin_at(p, n, "rank-dependent value from "));
    }
    for (int i = 0; (e->src & LS_SRC_OUT) && i < p->rules->nsrcs; i++) {
      const ls_rule_src *s = &p->rules->srcs[i];
      if (!s->uniform && s->out_arg >= 0 && (unsigned)s->out_arg < n->nkids && n->text && !strcmp(s->call, n->text))
        out_arg(r, n->kids[s->out_arg], origin_at(p, n, "rank-dependent value from "));
    }
    if (e->flow && !e->def)
      flow_out(r, st, n);
    if (e->def && !(e->rule && e->rule->as)) { /* a wrapper is its API call (wrappers.c): checked at the call */
      ls_func *g = e->def;
      /* an overloaded call operator (a lambda) gets the closure object as argument 0 */
      unsigned off = n->nkids == (unsigned)g->nparams + 1 && !strncmp(e->key, "lambda:", 7);
      for (int i = 0; i < g->nparams && (unsigned)i + off < n->nkids; i++) {
        const ls_origin *o = ls_expr_taint(p, st, n->kids[i + off]);
        ls_entity *pe = g->params[i];
        if (o && pe && !pe->taint && !r->local_only) {
          char w[256];
          snprintf(w, sizeof w, "parameter '%s' of %s() receives a rank-dependent argument",
                   pe->name ? pe->name : "?", g->name ? g->name : "?");
          o = hop(p, n, o, w);
        }
        taint_ent(r, pe, o, 0);
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

/* ---- flow-sensitive evaluation of each function ----
 * The entity facts are "may be rank-dependent somewhere". For the locals that carry such a
 * fact and are written somewhere, a bitset data-flow over the function's CFG says where they
 * hold a rank value: a later uniform write, or a collective that receives into the variable
 * (`MPI_Bcast(&v, ...)`), makes them uniform again. Everything that leaves the function —
 * the return value, writes to fields, globals and out-parameters, the arguments of calls —
 * and the branch conditions of the implicit flow are then evaluated with the state at that
 * point: `int read_int() { if (me == 0) v = -1; MPI_Bcast(&v, ...); return v; }` returns a
 * uniform value. Only candidates get bits, so the pass stays linear in the function size.
 * The same pass, narrower (x->full == 0), is the checks' view of a function: see ls_fs. */

static void fs_cand(ls_fs *x, ls_entity *e) {
  if (e && !e->fsidx && x->cands.n < x->maxc &&
      ((e->taint && (e->kind == LS_ENT_VAR || e->kind == LS_ENT_PARAM)) || (x->full && e->pfield))) {
    ls_vec_push(&x->cands, e);
    e->fsidx = (int)x->cands.n;
  }
}

/* the local an lvalue or out-argument writes as a whole (not through a pointer) */
static ls_entity *fs_target(ls_node *arg, int start) {
  int level = start;
  ls_entity *t = ls_target_of(arg, &level);
  return t && t->fsidx && level <= 0 ? t : NULL;
}

/* Locals that carry a rank fact and can lose it: a collective receives into them, or a write
 * gives them a value that is uniform as read in state st (the taint pass selects with all
 * zeros: the candidates found so far read as uniform). Every other local keeps its
 * whole-program fact, so the bitsets stay small however long the function is. */
static void fs_items(ls_program *p, ls_fs *x, const uint64_t *st, ls_node *n) {
  int level = 0;
  switch (n->kind) {
  case CXCursor_VarDecl:
    if (n->nkids && n->ent && n->ent->taint && !n->ent->fsidx) {
      int uniform = 1;
      for (unsigned i = 0; i < n->nkids && uniform; i++)
        uniform = !ls_expr_taint(p, st, n->kids[i]);
      if (uniform)
        fs_cand(x, n->ent);
    }
    return;
  case CXCursor_BinaryOperator:
    if (n->op == CXBinaryOperator_Assign && n->nkids == 2) {
      ls_entity *t = ls_target_of(n->kids[0], &level);
      if (level <= 0 && t && ((t->taint && !t->fsidx && !ls_expr_taint(p, st, n->kids[1])) || t->pfield))
        fs_cand(x, t); /* a path: whatever it is written, it may be read before the field's fact grows */
    }
    return;
  case CXCursor_CallExpr:
    if (n->ent && n->ent->rule && ls_delivers_alike(n->ent->rule))
      for (int i = 0; i < n->ent->rule->nargs && (unsigned)i < n->nkids; i++) {
        if (n->ent->rule->roles[i] != LS_ROLE_RECVBUF)
          continue;
        level = 1;
        ls_entity *t = ls_target_of(n->kids[i], &level);
        if (level <= 0)
          fs_cand(x, t);
      }
    else if (x->full && n->text && n->ent && n->ent->rule)
      for (int i = 0; (n->ent->src & LS_SRC_OUT) && i < p->rules->nsrcs; i++) {
        const ls_rule_src *r = &p->rules->srcs[i];
        if (r->uniform && r->out_arg >= 0 && (unsigned)r->out_arg < n->nkids && !strcmp(r->call, n->text)) {
          level = 1;
          ls_entity *t = ls_target_of(n->kids[r->out_arg], &level);
          if (level <= 0)
            fs_cand(x, t);
        }
      }
    return;
  default:
    return;
  }
}

static int is_base(const ls_entity *t) { return t && t->kind != LS_ENT_FUNC; }

/* The object a receive buffer `&x` / `&s.m` delivers into as a whole, else NULL (an element,
 * `buf`, `c->buf[2]`: only part of it). */
static ls_entity *whole_object(ls_node *arg) {
  arg = ls_strip_casts(arg);
  if (!arg || arg->kind != CXCursor_UnaryOperator || arg->op != CXUnaryOperator_AddrOf || !arg->nkids)
    return NULL;
  ls_node *o = ls_strip_casts(arg->kids[0]);
  if (!o || (o->kind != CXCursor_DeclRefExpr && o->kind != CXCursor_MemberRefExpr))
    return NULL;
  int level = 0;
  ls_entity *t = ls_target_of(o, &level);
  return level == 0 && is_base(t) && !t->pfield ? t : NULL;
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* paths whose whole object a collective receives into (`MPI_Allreduce(..., &pairall, ...)`) */
static void path_cands(ls_vec *writes, ls_vec *paths, ls_fs *x) {
  ls_vec kill = {0};
  for (size_t i = 0; i < writes->n; i++) {
    ls_node *n = writes->v[i];
    if (!n || n->kind != CXCursor_CallExpr || !ls_delivers_alike(n->ent->rule))
      continue;
    for (int k = 0; k < n->ent->rule->nargs && (unsigned)k < n->nkids; k++) {
      ls_entity *t = n->ent->rule->roles[k] == LS_ROLE_RECVBUF ? whole_object(n->kids[k]) : NULL;
      if (t)
        ls_vec_push(&kill, t);
    }
  }
  if (kill.n)
    qsort(kill.v, kill.n, sizeof *kill.v, cmp_ptr);
  for (size_t i = 0; i < paths->n && kill.n; i++) {
    struct pathref *r = path_ref(paths->v[i]);
    void *key = r ? r->path->pbase : NULL;
    if (key && bsearch(&key, kill.v, kill.n, sizeof *kill.v, cmp_ptr))
      fs_cand(x, r->path);
  }
  free(kill.v);
}

static void fs_select(ls_program *p, ls_func *f, ls_fs *x, ls_vec *writes, ls_vec *paths) {
  static const uint64_t zero[4096 / 64];
  for (size_t i = 0; i < x->cands.n; i++)
    ((ls_entity *)x->cands.v[i])->fsidx = 0;
  x->cands.n = 0;
  if (!writes->n) { /* once per function: the items that can make a local uniform */
    for (int b = 0; b < f->nblocks; b++)
      for (int j = 0; j < f->blocks[b]->nitems; j++) {
        ls_node *n = f->blocks[b]->items[j];
        if ((n->kind == CXCursor_VarDecl && n->nkids) ||
            (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
            (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule))
          ls_vec_push(writes, n);
      }
    if (!writes->n)
      ls_vec_push(writes, NULL); /* none: built all the same */
  }
  /* the states take nblocks x words: past about a million words (very long functions),
   * fewer locals are refined and the rest keep their whole-program facts */
  size_t words = ((size_t)1 << 20) / ((size_t)f->nblocks + 1);
  x->maxc = words >= 8 ? 512 : words ? 64 * words : 64;
  for (int round = 0; round < 4; round++) { /* a chain of copies: one more link per round */
    size_t before = x->cands.n;
    for (size_t i = 0; i < writes->n; i++)
      if (writes->v[i])
        fs_items(p, x, zero, writes->v[i]);
    if (x->cands.n == before)
      break;
  }
  if (paths->n)
    path_cands(writes, paths, x);
  x->pcands.n = 0;
  for (size_t i = 0; i < x->cands.n; i++)
    if (((ls_entity *)x->cands.v[i])->pfield)
      ls_vec_push(&x->pcands, x->cands.v[i]);
}

/* Paths of the object `base` take value v (a collective delivered it, or the object was
 * assigned as a whole); field != NULL: a rank value written to one object's `field` may be
 * any object's (aliases), so every tracked path of that field becomes rank-dependent. */
static void paths_set(ls_fs *x, uint64_t *st, const ls_entity *base, const ls_entity *field, int v) {
  for (size_t i = 0; i < x->pcands.n; i++) {
    ls_entity *e = x->pcands.v[i];
    if ((base && e->pbase == base) || (field && e->pfield == field) || (!base && !field && e->pfield->taint))
      ls_fs_set(st, e, v);
  }
}

/* one item's effect on the state st (which its values are also read in) */
/* the local an out-argument writes: `&x`, or a pointer only ever set to &x */
static ls_entity *fs_out_target(ls_node *arg) {
  ls_entity *t = fs_target(arg, 1);
  if (t)
    return t;
  int level = 1;
  t = alias_of(ls_target_of(arg, &level));
  return level == 1 && t && t->fsidx ? t : NULL;
}

static void fs_step(ls_program *p, ls_fs *x, ls_node *n, uint64_t *st, const ls_origin *impl) {
  ls_entity *t;
  int level;
  switch (n->kind) {
  case CXCursor_VarDecl:
    if (n->ent && (n->ent->fsidx || x->pcands.n)) {
      int v = impl != NULL;
      for (unsigned i = 0; i < n->nkids && !v; i++)
        v = ls_expr_taint(p, st, n->kids[i]) != NULL;
      if (n->ent->fsidx)
        ls_fs_set(st, n->ent, v);
      if (x->pcands.n && n->nkids)
        paths_set(x, st, n->ent, NULL, v);
    }
    return;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    if (n->nkids == 2 && (t = fs_target(n->kids[0], 0))) {
      int v = impl != NULL || ls_expr_taint(p, st, n->kids[1]) != NULL;
      if (n->kind == CXCursor_CompoundAssignOperator)
        v |= ls_fs_get(st, t);
      ls_fs_set(st, t, v);
    }
    if (n->nkids == 2 && x->pcands.n) {
      level = 0;
      t = ls_target_of(n->kids[0], &level);
      int v = impl != NULL || ls_expr_taint(p, st, n->kids[1]) != NULL;
      if (t && t->pfield && v)
        paths_set(x, st, NULL, t->pfield, 1);
      else if (level <= 0 && is_base(t) && n->kind == CXCursor_BinaryOperator)
        paths_set(x, st, t, NULL, v);
    }
    return;
  case CXCursor_CallExpr: {
    ls_entity *e = n->ent;
    if (!e)
      return;
    if (e->rule)
      for (int i = 0; i < e->rule->nargs && (unsigned)i < n->nkids; i++) {
        enum ls_role ro = e->rule->roles[i];
        if (ro == LS_ROLE_OUT_RANK && (t = fs_out_target(n->kids[i])))
          ls_fs_set(st, t, 1);
        if (ro != LS_ROLE_RECVBUF)
          continue;
        /* what an allreduce or a broadcast delivers is the same on every rank; a prefix's,
         * a scatter's or a rooted reduction's is this rank's own */
        int own = !ls_delivers_alike(e->rule);
        if ((t = fs_target(n->kids[i], 1)))
          ls_fs_set(st, t, own);
        if (x->pcands.n && (t = whole_object(n->kids[i])))
          paths_set(x, st, t, NULL, own);
      }
    for (int i = 0; (e->src & LS_SRC_OUT) && i < p->rules->nsrcs; i++) {
      const ls_rule_src *r = &p->rules->srcs[i];
      if ((x->full || !r->uniform) && r->out_arg >= 0 && (unsigned)r->out_arg < n->nkids && n->text &&
          !strcmp(r->call, n->text) && (t = fs_target(n->kids[r->out_arg], 1)))
        ls_fs_set(st, t, !r->uniform); /* MPI_Comm_size(c, &n): uniform from here on */
    }
    if (e->flow && !e->def && flow_in(p, st, n)) /* only ever adds: a partial write (strcat) keeps what was there */
      for (unsigned i = 0; i < n->nkids; i++)
        if (flow_arg(e->flow->into, e->flow->into_rest, i) && (t = fs_out_target(n->kids[i])))
          ls_fs_set(st, t, 1);
    if (e->def && e->out_taint)
      for (unsigned i = 0; i < n->nkids && i < 64; i++)
        if (e->out_taint >> i & 1 && (t = fs_target(n->kids[i], 1)))
          ls_fs_set(st, t, 1);
    if (e->def && !e->rule && x->pcands.n)
      paths_set(x, st, NULL, NULL, 1); /* a callee may write any object's rank-dependent field */
    return;
  }
  default:
    return;
  }
}

static int nsolve, npass;
struct solve_ctx { ls_program *p; ls_fs *x; };
static void solve_step(void *ctx, ls_block *k, uint64_t *st) {
  struct solve_ctx *s = ctx;
  for (int i = 0; i < k->nitems; i++)
    fs_step(s->p, s->x, k->items[i], st, k->impl);
}

/* x->in: the state at each block's entry, to the fixpoint (x->st is the scratch) */
static void fs_solve(ls_program *p, ls_func *f, ls_fs *x) {
  nsolve++;
  int W = x->words;
  memset(x->in, 0, (size_t)f->nblocks * (size_t)W * sizeof *x->in);
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i]->fsidx)
      ls_fs_set(&x->in[f->entry->id * W], f->params[i], 1);
  for (size_t i = 0; i < x->pcands.n; i++) /* what a parameter or member holds: as any object's */
    if (((ls_entity *)x->pcands.v[i])->pbase->kind != LS_ENT_VAR)
      ls_fs_set(&x->in[f->entry->id * W], x->pcands.v[i], 1);
  struct solve_ctx s = {p, x};
  ls_cfg_forward(f, W, x->in, x->st, solve_step, &s);
}

/* ---- where the ranks that go on meet again ----
 * An exit under a rank-dependent condition (`if (rank == 0 && err) return 1;`) leaves the
 * branch post-dominated by the function's end only, so its post-dominator chain would put
 * everything after it under the condition: loop bounds, type counts, thread indices written
 * later would all be rank-dependent. But the ranks that leave issue nothing more (that is one
 * finding, at the exit), and the ranks that go on compute the same values. A block leaves when
 * no collective, send/recv or helper issuing one is reachable from it; cip are the
 * post-dominators of the graph of the other blocks, without the edges into leaving ones: the
 * sides of a branch that go on meet at its cip. A branch with no collective after it keeps
 * the plain post-dominators: what it decides shows only in the values the function leaves
 * behind (its return value, globals), which is how callers learn of it. */
static int issues_here(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent &&
         (n->ent->rule ? n->ent->rule->seq_member || n->ent->rule->kind == LS_KIND_P2P
                       : n->ent->def && n->ent->def->issues);
}

static void issues_build(ls_program *p) {
  for (int changed = 1, round = 0; changed && round < 64; round++) {
    changed = 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
      ls_func *f = p->funcs.v[i];
      for (int b = 0; b < f->nblocks && !f->issues; b++)
        for (int j = 0; j < f->blocks[b]->nitems && !f->issues; j++)
          if (issues_here(f->blocks[b]->items[j]))
            f->issues = changed = 1;
    }
  }
}

static int cip_meet(const int *po, const int *ip, int a, int b) {
  while (a != b) {
    while (po[a] < po[b])
      a = ip[a];
    while (po[b] < po[a])
      b = ip[b];
  }
  return a;
}

/* f->cip (see above): Cooper-Harvey-Kennedy over the going-on blocks and X = n, the end.
 * An edge into a leaving block is dropped, except where the graph would then never reach X:
 * a block whose successors all leave leads to X, and so does, for the last loop (in
 * topological order) that cannot reach X otherwise, its edges out — where the function's work
 * ends, not an early exit. */
static void continuing_postdom(ls_program *p, ls_func *f) {
  int n = f->nblocks, X = n, sp = 0, nl = 0, no = 0, any = 0;
  f->cip = NULL;
  unsigned char *goes = calloc((size_t)n + 1, 1), *vis = calloc((size_t)n + 1, 1), *tox = calloc((size_t)n + 1, 1);
  int *stk = malloc(((size_t)n + 1) * sizeof *stk), *lv = malloc(((size_t)n + 1) * sizeof *lv);
  int *po = malloc(((size_t)n + 1) * sizeof *po), *ip = malloc(((size_t)n + 1) * sizeof *ip);
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  struct fr { int b, i; } *st = malloc(((size_t)n + 2) * sizeof *st);
  if (!goes || !vis || !tox || !stk || !lv || !po || !ip || !order || !st)
    abort();
  for (int b = 0; b < n; b++)
    for (int j = 0; j < f->blocks[b]->nitems && !goes[b]; j++)
      if (issues_here(f->blocks[b]->items[j])) {
        goes[b] = any = 1;
        stk[sp++] = b;
      }
  if (!any)
    goto done; /* no collective in f */
  while (sp) { /* what reaches an issuing block goes on */
    ls_block *k = f->blocks[stk[--sp]];
    for (int i = 0; i < k->npred; i++)
      if (!goes[k->pred[i]->id]) {
        goes[k->pred[i]->id] = 1;
        stk[sp++] = k->pred[i]->id;
      }
  }
  for (int b = 0; b < n; b++) {
    int on = 0;
    for (int s = 0; s < f->blocks[b]->nsucc && !on; s++)
      on = goes[f->blocks[b]->succ[s]->id];
    tox[b] = goes[b] && !on;
  }
  for (int round = 0;; round++) { /* until every going-on block reaches X */
    memset(vis, 0, (size_t)n + 1);
    for (int b = 0; b < n; b++)
      if (tox[b]) {
        vis[b] = 1;
        stk[sp++] = b;
      }
    while (sp) {
      ls_block *k = f->blocks[stk[--sp]];
      for (int i = 0; i < k->npred; i++)
        if (goes[k->pred[i]->id] && !vis[k->pred[i]->id]) {
          vis[k->pred[i]->id] = 1;
          stk[sp++] = k->pred[i]->id;
        }
    }
    int pick = -1, left = 0;
    for (int i = f->nfwd - 1; i >= 0 && pick < 0; i--) {
      ls_block *k = f->fwd[i];
      for (int s = 0; s < k->nsucc && pick < 0 && goes[k->id] && !vis[k->id]; s++)
        if (!goes[k->succ[s]->id])
          pick = k->id;
    }
    for (int b = 0; b < n; b++)
      left |= goes[b] && !vis[b];
    if (!left)
      break;
    if (pick >= 0 && round < 64)
      tox[pick] = 1;
    else { /* give up: every edge into a leaving block leads to X (the plain post-dominators) */
      for (int b = 0; b < n; b++)
        for (int s = 0; s < f->blocks[b]->nsucc; s++)
          tox[b] |= goes[b] && !goes[f->blocks[b]->succ[s]->id];
      break;
    }
  }
  for (int b = 0; b < n; b++)
    if (tox[b])
      lv[nl++] = b;
  memset(vis, 0, (size_t)n + 1);
  for (int i = 0; i <= n; i++)
    po[i] = ip[i] = -1;
  st[sp++] = (struct fr){X, 0};
  vis[X] = 1;
  while (sp) { /* postorder of the reversed graph from X */
    struct fr *t = &st[sp - 1];
    int q = -1;
    if (t->b == X)
      q = t->i < nl ? lv[t->i++] : -1;
    else
      while (t->i < f->blocks[t->b]->npred && q < 0) {
        int c = f->blocks[t->b]->pred[t->i++]->id;
        q = goes[c] ? c : -1;
      }
    if (q >= 0) {
      if (!vis[q]) {
        vis[q] = 1;
        st[sp++] = (struct fr){q, 0};
      }
      continue;
    }
    po[t->b] = no;
    order[no++] = t->b;
    sp--;
  }
  ip[X] = X;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = no - 2; i >= 0; i--) {
      ls_block *k = f->blocks[order[i]];
      int nd = tox[k->id] ? X : -1;
      for (int s = 0; s < k->nsucc; s++) {
        int q = k->succ[s]->id;
        if (goes[q] && po[q] >= 0 && ip[q] >= 0)
          nd = nd < 0 ? q : cip_meet(po, ip, q, nd);
      }
      if (nd >= 0 && ip[k->id] != nd) {
        ip[k->id] = nd;
        changed = 1;
      }
    }
  }
  f->cip = ls_alloc(p->arena, (size_t)n * sizeof *f->cip);
  for (int b = 0; b < n; b++)
    if (goes[b])
      f->cip[b] = ip[b] < 0 || ip[b] == X ? f->vexit : f->blocks[ip[b]];
done:
  free(goes);
  free(vis);
  free(tox);
  free(stk);
  free(lv);
  free(po);
  free(ip);
  free(order);
  free(st);
}

/* The blocks whose execution, for the ranks that get there, depends on which way k went:
 * from each side, the post-dominator chain up to where the sides meet — the plain one, or
 * cip for a side that goes on from a branch that does. visit() returns 0 at a block it saw. */
void ls_ctl_region(const ls_func *f, ls_block *k, int (*visit)(ls_block *, void *), void *ctx) {
  ls_block *meet = f->cip ? f->cip[k->id] : NULL;
  for (int s = 0; s < k->nsucc; s++) {
    ls_block *q = k->succ[s];
    if (meet && f->cip[q->id])
      for (; q && q != meet && q != f->vexit && visit(q, ctx); q = f->cip[q->id])
        ;
    else
      for (; q && q != k->ipdom && q != f->vexit && visit(q, ctx); q = q->ipdom)
        ;
  }
}

struct impl_visit { const ls_origin *o; int again; };
static int impl_visit(ls_block *q, void *ctx) {
  struct impl_visit *v = ctx;
  if (q->impl)
    return 0;
  q->impl = v->o;
  v->again = 1;
  return 1;
}

static int mark_visit(ls_block *q, void *ctx) {
  (void)ctx;
  if (q->mark)
    return 0;
  q->mark = 1;
  return 1;
}

/* Implicit flow: blocks control-dependent on a rank-dependent branch get its origin, and
 * plain assignments there make their target rank-dependent (`if (rank) op = ncclMax;`).
 * Control dependence is taken transitively: a branch inside a rank-dependent region is
 * reached by some ranks only, so what it controls is rank-dependent as well
 * (`if (me == 0 && fread(...) < 1) v = -1;`). condo[b]: block b's condition value. */
static void implicit_flow(struct run *r, const ls_origin **condo) {
  ls_func *f = r->f;
  int changed = 0;
  const ls_origin **old = malloc((size_t)f->nblocks * sizeof *old + 1);
  if (!old)
    abort();
  for (int b = 0; b < f->nblocks; b++) {
    old[b] = f->blocks[b]->impl;
    f->blocks[b]->impl = NULL;
  }
  for (struct impl_visit v = {.again = 1}; v.again;) {
    v.again = 0;
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      if (!k->cond || k->nsucc < 2)
        continue;
      v.o = condo[b] ? condo[b] : k->impl;
      if (v.o)
        ls_ctl_region(f, k, impl_visit, &v);
    }
  }
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    if (!!k->impl != !!old[b])
      changed = 1;
    if (!k->impl)
      continue;
    for (int j = 0; j < k->nitems; j++) {
      ls_node *n = k->items[j];
      if ((n->kind == CXCursor_BinaryOperator || n->kind == CXCursor_CompoundAssignOperator) && n->nkids == 2) {
        int level = 0;
        ls_entity *t = ls_target_of(n->kids[0], &level);
        if (!bcast_later(r, k, j, t, level))
          taint_ent(r, t, into_global(r, n, t, level, k->impl, "under a rank-dependent condition"), level);
      }
    }
  }
  free(old);
  if (changed)
    r->local_changed = 1;
  if (changed && !r->local_only)
    r->changed = 1;
}

/* One pass over f: with candidates, solve the state and replay every item with the state at
 * its point; without, the facts as they are. Fills condo, then the implicit flow. */
/* What each access path read sees in the last pass (kept for the checks). */
static void path_seen(const uint64_t *st, ls_node *n) {
  if (!n || n->kind == CXCursor_LambdaExpr)
    return;
  if (n->kind == CXCursor_MemberRefExpr) {
    struct pathref *r = path_ref(n);
    if (r) {
      int bit = path_bit(st, r->path);
      r->seen = (signed char)(bit < 0 ? 0 : bit ? 2 : 1);
    }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    path_seen(st, n->kids[i]);
}

static void pass_func(struct run *r, ls_fs *x, const ls_origin **condo, int solve, ls_vec *writes,
                      ls_vec *paths) {
  npass++;
  ls_func *f = r->f;
  ls_program *p = r->p;
  if (solve)
    fs_select(p, f, x, writes, paths);
  if (!x->cands.n) {
    for (size_t i = 0; i < paths->n && !r->local_only; i++)
      path_ref(paths->v[i])->seen = 0;
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      for (int j = 0; j < k->nitems; j++) {
        r->k = k;
        r->j = j;
        apply(r, NULL, k->items[j]);
      }
      condo[b] = k->cond && k->nsucc >= 2 ? ls_expr_taint(p, NULL, k->cond) : NULL;
    }
  } else {
    int W = (int)(x->cands.n + 63) / 64;
    if (solve) {
      if (W > x->cap) {
        free(x->st);
        x->st = malloc((size_t)W * sizeof *x->st);
        if (!x->st)
          abort();
        x->cap = W;
      }
      x->words = W;
      free(x->in);
      x->in = malloc((size_t)f->nblocks * (size_t)W * sizeof *x->in); /* fs_solve clears it */
      if (!x->in)
        abort();
      fs_solve(p, f, x);
    }
    uint64_t *st = x->st;
    for (int b = 0; b < f->nblocks; b++) { /* replay: every effect with the state at its point */
      ls_block *k = f->blocks[b];
      memcpy(st, &x->in[k->id * W], (size_t)W * sizeof *st);
      for (int j = 0; j < k->nitems; j++) {
        if (!r->local_only && x->pcands.n)
          path_seen(st, k->items[j]);
        r->k = k;
        r->j = j;
        apply(r, st, k->items[j]);
        fs_step(p, x, k->items[j], st, k->impl);
      }
      if (!r->local_only && x->pcands.n && k->cond)
        path_seen(st, k->cond);
      condo[b] = k->cond && k->nsucc >= 2 ? ls_expr_taint(p, st, k->cond) : NULL;
    }
  }
  implicit_flow(r, condo);
}

/* Settles f's locals: a first pass that writes nothing outside f, then passes that apply
 * every effect until one changes none of f's own facts (its locals' and parameters' values,
 * the implicit flow). The last pass is then one with the settled state, as a separate final
 * pass would be: effects outside f are monotone, so what the earlier passes wrote outside is
 * part of what the last one writes (one pass less over f than settling locally first). */
static void run_func(struct run *r, ls_fs *x, ls_vec *writes, ls_vec *paths) {
  ls_func *f = r->f;
  const ls_origin **condo = calloc((size_t)f->nblocks + 1, sizeof *condo);
  const ls_origin **impl0 = calloc((size_t)f->nblocks + 1, sizeof *impl0);
  if (!condo || !impl0)
    abort();
  int settled = 0;
  bcast_build(r);
  for (int pass = 0; pass < 6 && !settled; pass++) {
    /* A run that ends settled repeats its last pass when it runs again (after a local
     * one): nothing new unless what f reads changed since that last pass began (its own
     * writes included), or the implicit-flow origins it began with did. */
    f->tdirty = 0;
    for (int b = 0; b < f->nblocks; b++)
      impl0[b] = f->blocks[b]->impl;
    r->local_only = pass == 0;
    r->local_changed = 0;
    pass_func(r, x, condo, 1, writes, paths);
    settled = !r->local_only && !r->local_changed;
  }
  r->local_only = 0;
  if (!settled)
    r->changed = 1; /* not settled in a few passes: the outer fixpoint comes back to f */
  for (int b = 0; b < f->nblocks && !f->tdirty; b++)
    if (f->blocks[b]->impl != impl0[b])
      f->tdirty = 1;
  if (!settled)
    f->tdirty = 1;
  free(impl0);
  bcast_free(r);
  r->k = NULL;
  for (size_t i = 0; i < x->cands.n; i++)
    ((ls_entity *)x->cands.v[i])->fsidx = 0;
  x->cands.n = 0;
  free(x->in);
  x->in = NULL;
  free(condo);
}

void ls_taint_run(ls_program *p) {
  struct run r = {.p = p};
  ls_fs x = {.full = 1};
  ls_vec *writes = calloc(p->funcs.n + 1, sizeof *writes), *paths = calloc(p->funcs.n + 1, sizeof *paths);
  if (!writes || !paths)
    abort();
  taint_done = 0;
  issues_build(p);
  for (size_t i = 0; i < p->funcs.n; i++)
    continuing_postdom(p, p->funcs.v[i]);
  for (size_t i = 0; i < p->funcs.n; i++)
    ret_by_params(p->funcs.v[i]);
  path_build(p, paths);
  for (size_t i = 0; i < p->funcs.n; i++) {
    ls_func *f = p->funcs.v[i];
    reads_build(p, f, (int)i + 1, &paths[i]);
    f->tdirty = 1;
  }
  int nskip = 0;
  for (int iter = 0; iter < 64; iter++) {
    r.changed = 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
      r.f = p->funcs.v[i];
      if (!r.f->tdirty) {
        nskip++;
        continue;
      }
      run_func(&r, &x, &writes[i], &paths[i]);
    }
    if (!r.changed) {
      if (getenv("LOCKSTEP_LINT_STATS"))
        fprintf(stderr, "lockstep lint: taint fixpoint in %d passes (%d function passes, %d solves, %d runs skipped)\n",
                iter + 1, npass, nsolve, nskip);
      break;
    }
  }
  for (size_t i = 0; i < p->funcs.n; i++) {
    free(writes[i].v);
    free(paths[i].v);
  }
  free(writes);
  free(paths);
  free(x.pcands.v);
  taint_done = 1;
  free(x.cands.v);
  free(x.st);
}

/* ---- the checks' view of one function ---- */
void ls_fs_refine(ls_program *p, ls_func *f, ls_fs *x) {
  *x = (ls_fs){.f = f, .maxc = 4096};
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b]->nitems; i++)
      fs_items(p, x, NULL, f->blocks[b]->items[i]);
  x->words = (int)(x->cands.n + 63) / 64;
  if (!x->words)
    x->words = 1;
  /* Without candidates the state is empty and ls_expr_taint reads the same with or without
   * it (only entities with a bit consult it), and fs_step only sets bits: no solve, no steps. */
  int track = x->cands.n > 0;
  /* the block states only where there is a solve (it clears them) */
  x->in = track ? malloc((size_t)f->nblocks * (size_t)x->words * sizeof *x->in) : NULL;
  x->st = calloc((size_t)x->words, sizeof *x->st);
  x->cap = x->words;
  if ((track && !x->in) || !x->st)
    abort();
  uint64_t *st = track ? x->st : NULL;
  /* implicit flow depends on which branches are rank-dependent, which depends on the
   * state: iterate a few rounds from the flow-insensitive guess */
  for (int round = 0; round < 3; round++) {
    if (track)
      fs_solve(p, f, x);
    int changed = 0;
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      if (!k->cond || k->nsucc < 2) { /* the state at its end serves a branch only */
        k->cond_taint = NULL;
        continue;
      }
      if (track) {
        memcpy(st, &x->in[k->id * x->words], (size_t)x->words * sizeof *st);
        for (int i = 0; i < k->nitems; i++)
          fs_step(p, x, k->items[i], st, k->impl);
      }
      k->cond_taint = ls_expr_taint(p, st, k->cond);
    }
    for (int b = 0; b < f->nblocks; b++)
      f->blocks[b]->mark = 0;
    for (int b = 0; b < f->nblocks; b++) /* recompute control dependence on these branches */
      if (f->blocks[b]->cond_taint)
        ls_ctl_region(f, f->blocks[b], mark_visit, NULL);
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      if (!k->mark && k->impl) {
        k->impl = NULL;
        changed = 1;
      }
      k->mark = 0;
    }
    if (!changed)
      break;
  }
}

uint64_t *ls_fs_enter(ls_fs *x, const ls_block *k) {
  if (!x->cands.n)
    return NULL;
  memcpy(x->st, &x->in[k->id * x->words], (size_t)x->words * sizeof *x->st);
  return x->st;
}

void ls_fs_step(ls_program *p, ls_fs *x, ls_node *n, uint64_t *st, const ls_origin *impl) {
  if (st)
    fs_step(p, x, n, st, impl);
}

void ls_fs_free(ls_fs *x) {
  for (size_t i = 0; i < x->cands.n; i++)
    ((ls_entity *)x->cands.v[i])->fsidx = 0;
  free(x->cands.v);
  free(x->pcands.v);
  free(x->in);
  free(x->st);
  *x = (ls_fs){0};
}
