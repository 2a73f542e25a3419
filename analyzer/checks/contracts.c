/* contracts.c — checks of NCCL's usage contracts beyond collective ordering: the
 * asynchronous state read wrong, and collectives on a communicator
 * after it was aborted. Everything API-specific comes from the rules: kinds
 * `async_error_query` / `comm_abort`, the role `out_async_state` and the top-level `pending`.
 *   async-state-unread     the out-parameter of an async-error query is never read;
 *   async-return-as-state  the query's return value (did the query work) is compared to the
 *                          pending value as if it were the communicator's state;
 *   continue-after-abort   a collective or send/recv on a communicator on a path after it was
 *                          aborted (the communicator is freed: the call hangs or crashes).
 * The non-blocking contracts (a data-flow over the CFG) are in nonblocking.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contracts.h"
#include "lint.h"
#include "xalloc.h"

ls_node *ls_ct_unwrap(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr) && n->nkids == 1)
    n = n->kids[0];
  return n;
}

int ls_ct_call_kind(const ls_node *n, const char *kind) {
  return n && n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->kind_name &&
         !strcmp(n->ent->rule->kind_name, kind);
}

int ls_ct_arg_of(const ls_node *call, enum ls_role ro) {
  const ls_rule_fn *r = call->ent->rule;
  for (int i = 0; i < r->nargs && (unsigned)i < call->nkids; i++)
    if (r->roles[i] == ro)
      return i;
  return -1;
}

static int is_pending(const ls_program *p, ls_node *n) {
  n = ls_ct_unwrap(n);
  if (!n || n->kind != CXCursor_DeclRefExpr || !n->ilit || !n->text)
    return 0;
  for (int i = 0; i < p->rules->npending; i++)
    if (!strcmp(p->rules->pending[i], n->text))
      return 1;
  return 0;
}

ls_loc *ls_ct_loc(ls_program *p, const ls_node *n, const char *msg) {
  ls_loc *l = ls_alloc(p->arena, sizeof *l);
  l->file = n->file;
  l->line = n->line;
  l->col = n->col;
  l->msg = msg ? ls_strdup(p->arena, msg) : NULL;
  return l;
}

ls_finding *ls_ct_report(ls_program *p, const ls_func *f, ls_vec *out, const char *rule, const ls_node *at,
                          const char *msg, const char *key) {
  if (!at || !at->file || !at->line)
    return NULL;
  for (size_t i = 0; i < out->n; i++) {
    ls_finding *o = out->v[i];
    if (o->line == at->line && o->col == at->col && !strcmp(o->rule, rule) && !strcmp(o->file, at->file))
      return NULL;
  }
  ls_finding *fd = ls_alloc(p->arena, sizeof *fd);
  fd->rule = rule;
  fd->file = at->file;
  fd->line = at->line;
  fd->col = at->col;
  fd->function = f->name;
  fd->message = ls_strdup(p->arena, msg);
  fd->seqkey = key;
  ls_vec_push(out, fd);
  return fd;
}

/* ---- async-state-unread ---- */

/* Counts the reads of local e in n: every reference except the out-argument of an
 * async-error query and the left side of a plain assignment. */
static int reads_of(ls_node *n, const ls_entity *e) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_DeclRefExpr)
    return n->ent == e;
  int skip = -1; /* a kid that writes e without reading it */
  if (ls_ct_call_kind(n, "async_error_query"))
    skip = ls_ct_arg_of(n, LS_ROLE_OUT_ASYNC_STATE);
  else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2) {
    ls_node *l = ls_ct_unwrap(n->kids[0]);
    if (l && l->kind == CXCursor_DeclRefExpr && l->ent == e)
      skip = 0;
  }
  int k = 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if ((int)i != skip)
      k += reads_of(n->kids[i], e);
  if (skip >= 0 && (unsigned)skip < n->nkids && n->kind == CXCursor_CallExpr) {
    /* `&state` is a write; anything else in that position (`*pp`, `&s[i]`) reads */
    ls_node *a = ls_ct_unwrap(n->kids[skip]);
    if (!(a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf))
      k += reads_of(n->kids[skip], e);
  }
  return k;
}

/* ---- async-return-as-state ---- */

/* Locals that only ever hold an async-error query's return value (flow-insensitive: one
 * other assignment and the variable is no longer known to hold it). */
struct held { ls_entity *e; ls_node *call; int other; };
/* v in insertion order; tab: open-addressing index of v by entity pointer (a function of
 * thousands of locals would otherwise pay a linear search per store) */
struct helds { struct held *v; int n, cap; int *tab; size_t tcap; };

static size_t held_hash(const ls_entity *e, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)e;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & mask;
}

static struct held *held_find(const struct helds *h, const ls_entity *e) {
  if (!h->tcap)
    return NULL;
  for (size_t i = held_hash(e, h->tcap - 1);; i = (i + 1) & (h->tcap - 1)) {
    int j = h->tab[i];
    if (j < 0)
      return NULL;
    if (h->v[j].e == e)
      return &h->v[j];
  }
}

static struct held *held_get(struct helds *h, ls_entity *e) {
  struct held *x = held_find(h, e);
  if (x)
    return x;
  if ((size_t)(h->n + 1) * 2 > h->tcap) {
    size_t nc = h->tcap ? 2 * h->tcap : 16;
    free(h->tab);
    h->tab = ls_xrealloc(NULL, nc * sizeof *h->tab);
    for (size_t i = 0; i < nc; i++)
      h->tab[i] = -1;
    h->tcap = nc;
    for (int j = 0; j < h->n; j++) {
      size_t i = held_hash(h->v[j].e, nc - 1);
      while (h->tab[i] >= 0)
        i = (i + 1) & (nc - 1);
      h->tab[i] = j;
    }
  }
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 8;
    h->v = ls_xrealloc(h->v, (size_t)h->cap * sizeof *h->v);
  }
  size_t i = held_hash(e, h->tcap - 1);
  while (h->tab[i] >= 0)
    i = (i + 1) & (h->tcap - 1);
  h->tab[i] = h->n;
  h->v[h->n] = (struct held){e, NULL, 0};
  return &h->v[h->n++];
}

static void note_store(struct helds *h, ls_entity *e, ls_node *val) {
  if (!e || (e->kind != LS_ENT_VAR && e->kind != LS_ENT_PARAM))
    return;
  struct held *x = held_get(h, e);
  val = ls_ct_unwrap(val);
  if (ls_ct_call_kind(val, "async_error_query")) {
    if (!x->call)
      x->call = val;
  } else {
    x->other = 1;
  }
}

static void collect_stores(ls_node *n, struct helds *h) {
  if (!n)
    return;
  if (n->kind == CXCursor_VarDecl && n->nkids)
    note_store(h, n->ent, n->kids[n->nkids - 1]);
  if ((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
      n->kind == CXCursor_CompoundAssignOperator) {
    ls_node *l = n->nkids == 2 ? ls_ct_unwrap(n->kids[0]) : NULL;
    if (l && l->kind == CXCursor_DeclRefExpr)
      note_store(h, l->ent, n->kind == CXCursor_BinaryOperator ? n->kids[1] : NULL);
  }
  if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf && n->nkids == 1) {
    ls_node *l = ls_ct_unwrap(n->kids[0]); /* its address escapes: anything may be stored */
    if (l && l->kind == CXCursor_DeclRefExpr)
      note_store(h, l->ent, NULL);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    collect_stores(n->kids[i], h);
}

static void find_compares(ls_program *p, ls_func *f, ls_vec *out, ls_node *n, struct helds *h, const ls_node *loc) {
  if (!n)
    return;
  if (n->line)
    loc = n;
  if (n->kind == CXCursor_BinaryOperator && (n->op == CXBinaryOperator_EQ || n->op == CXBinaryOperator_NE) &&
      n->nkids == 2) {
    for (int s = 0; s < 2; s++) {
      if (!is_pending(p, n->kids[1 - s]))
        continue;
      ls_node *v = ls_ct_unwrap(n->kids[s]), *call = NULL;
      const ls_node *at = NULL;
      if (ls_ct_call_kind(v, "async_error_query")) {
        call = v;
        at = v;
      } else if (v && v->kind == CXCursor_DeclRefExpr && v->ent) {
        const struct held *x = held_find(h, v->ent);
        if (x && x->call && !x->other)
          call = x->call;
        at = loc && loc->line ? loc : call;
      }
      if (!call)
        continue;
      int oi = ls_ct_arg_of(call, LS_ROLE_OUT_ASYNC_STATE);
      char m[512];
      snprintf(m, sizeof m,
               "the return value of '%s' says whether the query itself worked, not the communicator's state: "
               "compare what it stores through its %s argument with '%s' instead",
               call->text ? call->text : "?", oi == 0 ? "first" : oi == 1 ? "second" : oi == 2 ? "third" : "out",
               ls_ct_unwrap(n->kids[1 - s])->text);
      ls_finding *fd = ls_ct_report(p, f, out, ls_rule_id(LS_RULE_ASYNC_RETURN_AS_STATE), at, m, call->text);
      if (fd) {
        if (at != call)
          ls_vec_push(&fd->notes, ls_ct_loc(p, call, "the value compared is this query's return value"));
        ls_vec_push(&fd->sites, ls_ct_loc(p, call, call->text));
      }
    }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    find_compares(p, f, out, n->kids[i], h, loc);
}

static void find_queries(ls_program *p, ls_func *f, ls_vec *out, ls_node *n) {
  if (!n)
    return;
  if (ls_ct_call_kind(n, "async_error_query")) {
    int oi = ls_ct_arg_of(n, LS_ROLE_OUT_ASYNC_STATE);
    if (oi >= 0) {
      int level = 1;
      ls_entity *t = ls_target_of(n->kids[oi], &level);
      ls_node *a = ls_ct_unwrap(n->kids[oi]);
      if (t && level == 0 && t->kind == LS_ENT_VAR && a && a->kind == CXCursor_UnaryOperator &&
          reads_of(f->body, t) == 0) {
        char m[512];
        snprintf(m, sizeof m,
                 "'%s' stores the communicator's asynchronous state in '%s', which is never read: "
                 "an asynchronous error (or a pending operation) goes unnoticed",
                 n->text ? n->text : "?", t->name ? t->name : "?");
        ls_finding *fd = ls_ct_report(p, f, out, ls_rule_id(LS_RULE_ASYNC_STATE_UNREAD), n, m, n->text);
        if (fd)
          ls_vec_push(&fd->sites, ls_ct_loc(p, n, n->text));
      }
    }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    find_queries(p, f, out, n->kids[i]);
}

/* ---- continue-after-abort ---- */

int ls_ct_same_expr_by(const ls_node *a, const ls_node *b, ls_node *(*unwrap)(ls_node *)) {
  a = unwrap((ls_node *)a);
  b = unwrap((ls_node *)b);
  if (!a || !b)
    return a == b;
  if (a->kind != b->kind || a->op != b->op || a->nkids != b->nkids || a->ent != b->ent)
    return 0;
  if ((a->text == NULL) != (b->text == NULL) || (a->text && strcmp(a->text, b->text)))
    return 0;
  if (a->ilit != b->ilit || (a->ilit && a->ival != b->ival))
    return 0;
  for (unsigned i = 0; i < a->nkids; i++)
    if (!ls_ct_same_expr_by(a->kids[i], b->kids[i], unwrap))
      return 0;
  return 1;
}

int ls_ct_same_expr(const ls_node *a, const ls_node *b) { return ls_ct_same_expr_by(a, b, ls_ct_unwrap); }

/* Does item n give `comm` a new value (assignment, or its address passed to a call)? */
static int rebinds(ls_node *n, const ls_node *comm) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2)
    return ls_ct_same_expr(n->kids[0], comm);
  if (n->kind == CXCursor_VarDecl) {
    const ls_node *c = ls_ct_unwrap((ls_node *)comm);
    return c && c->kind == CXCursor_DeclRefExpr && c->ent == n->ent;
  }
  if (n->kind == CXCursor_CallExpr)
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *a = ls_ct_unwrap(n->kids[i]);
      if (a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids == 1 &&
          ls_ct_same_expr(a->kids[0], comm))
        return 1;
    }
  return 0;
}

static int uses_comm(const ls_node *n, const ls_node *comm) {
  if (n->kind != CXCursor_CallExpr || !n->ent || !n->ent->rule ||
      !(n->ent->rule->seq_member || n->ent->rule->kind == LS_KIND_P2P))
    return 0;
  int ci = ls_ct_arg_of(n, LS_ROLE_COMM);
  return ci >= 0 && ls_ct_same_expr(n->kids[ci], comm);
}

static void after_abort(ls_program *p, ls_func *f, ls_vec *out, ls_block *b0, int i0, ls_node *abort_call) {
  int ci = ls_ct_arg_of(abort_call, LS_ROLE_COMM);
  if (ci < 0)
    return;
  ls_node *comm = abort_call->kids[ci];
  char *seen = calloc((size_t)f->nblocks, 1);
  ls_block **stack = malloc(((size_t)f->nblocks + 1) * sizeof *stack);
  if (!seen || !stack)
    abort();
  int sp = 0;
  /* the rest of the abort's own block, then its successors (b0 again only through a cycle) */
  ls_block *k = b0;
  int from = i0 + 1;
  for (;;) {
    int stop = 0;
    for (int i = from; i < k->nitems && !stop; i++) {
      ls_node *n = k->items[i];
      if (uses_comm(n, comm)) {
        char m[512];
        snprintf(m, sizeof m,
                 "'%s' on a communicator that '%s' aborted on this path: the communicator is freed, so the call "
                 "fails or hangs while the other ranks' collectives never match",
                 n->text ? n->text : "?", abort_call->text ? abort_call->text : "?");
        ls_finding *fd = ls_ct_report(p, f, out, ls_rule_id(LS_RULE_CONTINUE_AFTER_ABORT), n, m, n->ent->rule->op);
        if (fd) {
          ls_vec_push(&fd->notes, ls_ct_loc(p, abort_call, "the communicator is aborted here"));
          ls_vec_push(&fd->sites, ls_ct_loc(p, n, n->text));
        }
        stop = 1; /* one finding per path: the first use */
      } else if (rebinds(n, comm)) {
        stop = 1;
      }
    }
    if (!stop)
      for (int s = 0; s < k->nsucc; s++)
        if (!seen[k->succ[s]->id]) {
          seen[k->succ[s]->id] = 1;
          stack[sp++] = k->succ[s];
        }
    if (!sp)
      break;
    k = stack[--sp];
    from = 0;
  }
  free(seen);
  free(stack);
}

void ls_check_contracts(ls_program *p, ls_func *f, ls_vec *findings) {
  if (!f->body)
    return;
  /* both async rules report only at (or about) an async-error query of this body */
  if (ls_func_calls_kind(p, f, "async_error_query")) {
    find_queries(p, f, findings, f->body);
    if (p->rules->npending) {
      struct helds h = {0};
      collect_stores(f->body, &h);
      find_compares(p, f, findings, f->body, &h, NULL);
      free(h.v);
      free(h.tab);
    }
  }
  for (int b = 0; b < f->nblocks && ls_func_calls_kind(p, f, "comm_abort"); b++) {
    ls_block *k = f->blocks[b];
    for (int i = 0; i < k->nitems; i++)
      if (ls_ct_call_kind(k->items[i], "comm_abort") && k->items[i]->nkids)
        after_abort(p, f, findings, k, i, k->items[i]);
  }
  ls_check_nonblocking(p, f, findings);
}
