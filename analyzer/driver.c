/* driver.c — drives the analysis of a whole program: orders the functions callees first
 * (so a call uses its callee's summary: collective sequence, net group effect, noreturn),
 * builds each CFG, runs the rank-dependence fixpoint (taint.c), then analyzes each function
 * — its flow-sensitive view, loops that issue collectives, sequence hashes (seq.c), control
 * dependence on rank-dependent branches, the group walk (group.c) — and runs the rules of
 * checks/ on it; the API-contract and host-thread checks follow once all are analyzed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

/* checks.def's runs by stage, in its order */
#define LS_CHECK(NAME, id, stage, run) stage##_RUN(run)
#define LS_AFTER_RUN(run)
#define LS_PROGRAM_RUN(run)
#define LS_ALSO_RUN(run)
#define LS_FUNC_RUN(run) run,
static void (*const func_rules[])(ls_check_ctx *) = {
#include "checks/checks.def"
};
#undef LS_FUNC_RUN
#define LS_FUNC_RUN(run)
#undef LS_AFTER_RUN
#define LS_AFTER_RUN(run) run,
static void (*const after_rules[])(ls_program *, ls_func *, ls_vec *) = {
#include "checks/checks.def"
};
#undef LS_AFTER_RUN
#define LS_AFTER_RUN(run)
#undef LS_PROGRAM_RUN
#define LS_PROGRAM_RUN(run) run,
static void (*const program_rules[])(ls_program *, ls_vec *) = {
#include "checks/checks.def"
};
#undef LS_PROGRAM_RUN
#undef LS_CHECK

/* The distinct rules kinds and each rules function's index among them (63: the 64th and
 * later share a bit), so the call-graph walk can note which kinds a body calls. */
static void kinds_build(ls_program *p) {
  const ls_rules *r = p->rules;
  p->kind_names = ls_alloc(p->arena, ((size_t)r->nfns + 1) * sizeof *p->kind_names);
  p->fn_kind = ls_alloc(p->arena, (size_t)r->nfns + 1);
  p->nkind_names = 0;
  for (int i = 0; i < r->nfns; i++) {
    int k = 0;
    while (k < p->nkind_names && strcmp(p->kind_names[k], r->fns[i].kind_name))
      k++;
    if (k == p->nkind_names)
      p->kind_names[p->nkind_names++] = r->fns[i].kind_name;
    p->fn_kind[i] = (unsigned char)(k < 63 ? k : 63);
  }
}

uint64_t ls_kind_mask(const ls_program *p, const char *kind) {
  if (!p->kind_names)
    return ~0ull; /* the bodies were not walked: anything may be there */
  for (int k = 0; k < p->nkind_names; k++)
    if (!strcmp(p->kind_names[k], kind))
      return 1ull << (k < 63 ? k : 63);
  return 0; /* no rules function has that kind */
}

int ls_func_calls_kind(const ls_program *p, const ls_func *f, const char *kind) {
  return !p->kind_names || (f->calls_kinds & ls_kind_mask(p, kind)) != 0;
}

static void scan_calls(ls_program *p, ls_func *f, ls_node *n, ls_vec *out, ls_vec *refs) {
  if (!n)
    return;
  if (n->ent)
    ls_vec_push(refs, n);
  if (n->kind == CXCursor_UnexposedStmt && n->text)
    f->has_pragma = 1;
  if (n->kind == CXCursor_CallExpr && n->ent) {
    if (n->ent->rule) {
      const ls_rule_fn *rf = n->ent->rule->as ? n->ent->rule->as : n->ent->rule; /* a wrapper: its target's kind */
      size_t i = rf >= p->rules->fns && rf < p->rules->fns + p->rules->nfns ? (size_t)(rf - p->rules->fns) : (size_t)p->rules->nfns;
      f->calls_kinds |= 1ull << (i < (size_t)p->rules->nfns ? p->fn_kind[i] : 63);
    }
    n->ent->ncalls++;
    if (n->ent->def)
      ls_vec_push(out, n->ent->def);
    if (ls_nx(n)->dtor) {
      n->x->dtor->ncalls++;
      if (n->x->dtor->def)
        ls_vec_push(out, n->x->dtor->def);
    }
  }
  if (n->kind == CXCursor_VarDecl && ls_nx(n)->dtor) { /* the implicit call at scope exit */
    n->x->dtor->ncalls++;
    if (n->x->dtor->def)
      ls_vec_push(out, n->x->dtor->def);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan_calls(p, f, n->kids[i], out, refs);
}

/* refs: scratch, copied into f->refs before the callees reuse it */
static void order_visit(ls_program *p, ls_func *f, ls_vec *order, ls_vec *refs) {
  f->visiting = 1;
  ls_vec callees = {0};
  refs->n = 0;
  scan_calls(p, f, f->body, &callees, refs);
  f->nrefs = (int)refs->n;
  f->refs = ls_alloc(p->arena, (refs->n + 1) * sizeof *f->refs);
  if (refs->n)
    memcpy(f->refs, refs->v, refs->n * sizeof *f->refs);
  for (size_t i = 0; i < callees.n; i++) {
    ls_func *g = callees.v[i];
    if (!g->visiting)
      order_visit(p, g, order, refs);
  }
  free(callees.v);
  ls_vec_push(order, f);
}

/* Tarjan's SCCs: cyc_ev marks blocks on a cycle that contains a collective event. */
struct scc { int *idx, *low, *stk, sp, next; char *on; ls_func *f; ls_check_ctx *c; };

static int block_has_event(ls_check_ctx *c, ls_block *k) {
  for (int i = 0; i < k->nitems; i++)
    if (ls_is_coll(k->items[i]) || ls_is_helper_call(k->items[i]))
      return 1;
  (void)c;
  return 0;
}

static void scc_visit(struct scc *t, ls_block *v) {
  t->idx[v->id] = t->low[v->id] = t->next++;
  t->stk[t->sp++] = v->id;
  t->on[v->id] = 1;
  for (int i = 0; i < v->nsucc; i++) {
    ls_block *w = v->succ[i];
    if (t->idx[w->id] < 0) {
      scc_visit(t, w);
      if (t->low[w->id] < t->low[v->id])
        t->low[v->id] = t->low[w->id];
    } else if (t->on[w->id] && t->idx[w->id] < t->low[v->id]) {
      t->low[v->id] = t->idx[w->id];
    }
  }
  if (t->low[v->id] != t->idx[v->id])
    return;
  int start = t->sp, ev = 0, size = 0;
  do {
    start--;
    size++;
    ev |= block_has_event(t->c, t->f->blocks[t->stk[start]]);
  } while (t->stk[start] != v->id);
  int self = 0;
  for (int i = 0; i < v->nsucc; i++)
    self |= v->succ[i] == v;
  for (int i = start; i < t->sp; i++) {
    t->on[t->stk[i]] = 0;
    t->f->blocks[t->stk[i]]->cyc_ev = ev && (size > 1 || self);
  }
  t->sp = start;
}

static void mark_cycles(ls_check_ctx *c, ls_func *f) {
  int n = f->nblocks;
  struct scc t = {.f = f, .c = c};
  t.idx = malloc((size_t)n * sizeof *t.idx);
  t.low = malloc((size_t)n * sizeof *t.low);
  t.stk = malloc((size_t)n * sizeof *t.stk);
  t.on = calloc((size_t)n, 1);
  if (!t.idx || !t.low || !t.stk || !t.on)
    abort();
  for (int i = 0; i < n; i++)
    t.idx[i] = -1;
  for (int i = 0; i < n; i++)
    if (t.idx[i] < 0)
      scc_visit(&t, f->blocks[i]);
  free(t.idx);
  free(t.low);
  free(t.stk);
  free(t.on);
}

static void analyze(ls_check_ctx *c, ls_func *f) {
  c->f = f;
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    k->hstate = 0;
    k->cdep = NULL;
    k->mark = 0;
  }
  ls_fs_refine(c->p, f, &c->fs); /* cond_taint of every branch, with the flow-sensitive state */
  mark_cycles(c, f);
  ls_seq_of(c, f->entry);
  for (int i = 0; i < f->nblocks; i++) /* unreachable blocks still get checked */
    ls_seq_of(c, f->blocks[i]);
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    if (!k->cond_taint)
      continue;
    for (int s = 0; s < k->nsucc; s++)
      for (ls_block *r = k->succ[s]; r && r != k->ipdom && r != f->vexit && !r->cdep; r = r->ipdom)
        r->cdep = k;
  }
  ls_errpath_analyze(c);
  ls_group_analyze(c);
  /* the rules of one function write only their findings: the order they run in is free */
  for (size_t i = 0; i < sizeof func_rules / sizeof *func_rules; i++)
    func_rules[i](c);
  ls_fs_free(&c->fs);
  f->analyzed = 1;
}

void ls_checks_run(ls_program *p, ls_vec *findings) {
  ls_vec order = {0};
  size_t nf = p->funcs.n; /* lambdas were added during parsing; all functions are known */
  int nwrap = ls_wrappers_find(p); /* before the call graph: a wrapper's callers call the API */
  kinds_build(p);
  ls_vec refs = {0};
  for (size_t i = 0; i < nf; i++) {
    ls_func *f = p->funcs.v[i];
    if (!f->visiting)
      order_visit(p, f, &order, &refs);
  }
  free(refs.v);
  double t0 = ls_cpu_now();
  for (size_t i = 0; i < order.n; i++) {
    ls_func *f = order.v[i];
    ls_cfg_build(p, f);
    ls_cfg_postdom(f);
  }
  double t1 = ls_cpu_now();
  ls_taint_run(p);
  double t2 = ls_cpu_now();
  ls_check_ctx c = {.p = p, .findings = findings};
  ls_errpath_globals(&c, &order);
  for (size_t i = 0; i < order.n; i++)
    analyze(&c, order.v[i]);
  /* A file that defines an entry point of the API (NCCL itself, a shim library) implements
   * it: it compares its own results with ncclInProgress and reads the state it keeps, so
   * the users' contracts do not apply to anything defined in it. */
  ls_vec impl = {0};
  for (size_t i = 0; i < order.n; i++) {
    ls_func *f = order.v[i];
    if (f->body && f->ent && f->ent->rule && !f->ent->rule->as && f->file)
      ls_vec_push(&impl, (void *)f->file);
  }
  for (size_t i = 0; i < order.n; i++) {
    ls_func *f = order.v[i];
    int in_impl = 0;
    for (size_t j = 0; j < impl.n && !in_impl && f->file; j++)
      in_impl = !strcmp(impl.v[j], f->file);
    for (size_t r = 0; r < sizeof after_rules / sizeof *after_rules && !in_impl; r++)
      after_rules[r](p, f, findings);
  }
  free(impl.v);
  for (size_t r = 0; r < sizeof program_rules / sizeof *program_rules; r++)
    program_rules[r](p, findings);
  if (getenv("LOCKSTEP_LINT_STATS"))
    fprintf(stderr, "lockstep lint: cfg %.3fs, taint %.3fs, checks %.3fs, %d thin wrappers\n", t1 - t0, t2 - t1,
            ls_cpu_now() - t2, nwrap);
  free(order.v);
  free(c.seen);
  free(c.nbuf.s);
  free(c.below.v);
  free(c.starts.v);
  free(c.p2p.v);
  ls_errpath_free(&c);
}
