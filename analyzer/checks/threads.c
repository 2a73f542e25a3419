/* threads.c — host-side contracts around NCCL (group state is thread-local; the end of a
 * group is not the completion of its work on the device):
 *   group-across-threads            a group opened on one thread and closed on another (thread
 *                                   entries of rules kind `thread_spawn`, and statements under a
 *                                   `thread_regions` pragma): group state is thread-local, so
 *                                   both threads are left unbalanced;
 *   completion-assumed-at-group-end the host reads a collective's receive buffer (a copy not
 *                                   ordered after the collective's stream, or a dereference of
 *                                   host-accessible memory) with no synchronization in between:
 *                                   ncclGroupEnd and the collective return once enqueued.
 * Runs once after every function is analyzed: it reuses the group-depth masks (gin) and the
 * begin/end helper summaries of group.c (ls_group_delta). Every API name comes from the rules
 * (rules/host.json kinds memcpy, memcpy_async, *_sync, event_record, stream_create, ...). */
#include <stdlib.h>
#include <string.h>

#include "contracts.h"
#include "lint.h"
#include "xalloc.h"

/* ---- small helpers (node shapes as contracts.c sees them) ---- */

static ls_node *unwrap(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr || n->kind == CXCursor_CStyleCastExpr ||
               n->kind == CXCursor_CXXStaticCastExpr || n->kind == CXCursor_CXXReinterpretCastExpr ||
               n->kind == CXCursor_CXXFunctionalCastExpr) &&
         n->nkids >= 1)
    n = n->kids[n->nkids - 1];
  return n;
}

static const char *kind_of(const ls_node *n) {
  return n && n->kind == CXCursor_CallExpr && n->ent && n->ent->rule ? n->ent->rule->kind_name : NULL;
}

static ls_node *arg_role(const ls_node *call, enum ls_role ro) {
  int i = ls_ct_arg_of(call, ro);
  return i < 0 ? NULL : call->kids[i];
}

/* the same expression up to parentheses and casts (`(void *)buf` is buf) */
static int same_expr(const ls_node *a, const ls_node *b) { return ls_ct_same_expr_by(a, b, unwrap); }

enum { NAMECAP = 256 };

/* The name a message uses for n; a member access is spelled into buf (the caller's, so two names
   can be live in one message). */
static const char *name_of(ls_node *n, char buf[static NAMECAP]) {
  n = unwrap(n);
  if (!n)
    return "?";
  if (n->kind == CXCursor_MemberRefExpr && n->nkids == 1) {
    ls_node *b = unwrap(n->kids[0]);
    snprintf(buf, NAMECAP, "%s.%s", b && b->text ? b->text : "?", n->text ? n->text : "?");
    return buf;
  }
  return n->text ? n->text : "?";
}

static uint32_t shift(uint32_t m, int d) { return d >= 0 ? m << d : m >> -d; }

/* Group depth mask just before item i of block k (group.c left gin on every block). */
static uint32_t mask_before(const ls_block *k, int i) {
  uint32_t m = k->gin;
  for (int j = 0; j < i; j++) {
    int d = ls_group_delta(k->items[j]);
    if (d)
      m = shift(m, d);
  }
  return m;
}

#define OPEN_BITS(m) ((m) >> (LS_GZ + 1)) /* some depth >= 1 is possible */
#define ZERO_BIT(m) ((m) & (1u << LS_GZ))  /* depth 0 is possible */

/* ---- group-across-threads ---- */

/* Does the qualified rule name ("std::thread": a constructor) name this entity? Every part,
 * the last one too, is a scope of its USR ("c:@N@std@S@thread@F@thread<...>").
 * last: ls_qualified_last(qname), found once per rule */
static int qualified_match(const char *qname, const char *last, const ls_entity *e) {
  return last && e->name && !strcmp(e->name, last) && ls_usr_has_scopes(e->key, qname, strlen(qname));
}

/* `qual`: the thread_spawn rules with a qualified name (C++ constructors), found once;
 * `lasts`: the last part of each one's name */
static const ls_rule_fn *spawn_rule(const ls_vec *qual, const char *const *lasts, const ls_node *n) {
  if (n->kind != CXCursor_CallExpr || !n->ent)
    return NULL;
  if (n->ent->rule)
    return strcmp(n->ent->rule->kind_name, "thread_spawn") ? NULL : n->ent->rule;
  for (size_t i = 0; i < qual->n; i++)
    if (qualified_match(((const ls_rule_fn *)qual->v[i])->name, lasts[i], n->ent))
      return qual->v[i];
  return NULL;
}

/* The function a spawn runs: a function name, &name, or a lambda. */
static ls_func *entry_of(const ls_rule_fn *r, const ls_node *call) {
  for (int i = 0; i < r->nargs && (unsigned)i < call->nkids; i++) {
    if (r->roles[i] != LS_ROLE_ENTRY)
      continue;
    ls_node *a = unwrap(call->kids[i]);
    if (a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids == 1)
      a = unwrap(a->kids[0]);
    if (a && (a->kind == CXCursor_DeclRefExpr || a->kind == CXCursor_LambdaExpr) && a->ent &&
        a->ent->kind == LS_ENT_FUNC && a->ent->def && a->ent->def->nblocks)
      return a->ent->def;
  }
  return NULL;
}

/* The group start of f that opens the group seen at (k, i): the last one in source order
 * before that point, or the first one of f. */
static ls_node *start_before(const ls_func *f, const ls_node *at) {
  ls_node *best = NULL, *first = NULL;
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b]->nitems; i++) {
      ls_node *n = f->blocks[b]->items[i];
      if (ls_group_delta(n) <= 0 || !n->line)
        continue;
      if (!first || n->line < first->line)
        first = n;
      if (at && (n->line < at->line || (n->line == at->line && n->col < at->col)) && (!best || n->line > best->line))
        best = n;
    }
  return best ? best : first;
}

static int in_sorted(ls_node **v, size_t n, const ls_node *x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if ((uintptr_t)v[mid] == (uintptr_t)x)
      return 1;
    if ((uintptr_t)v[mid] < (uintptr_t)x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

/* The first group end on some path from item i0 of block k0 (excluded) that closes a group
 * opened before that point (an end after a start on the same path closes that start),
 * ignoring the nodes in `skip` (sorted: a region's own items); with need_zero, only one that
 * can take the function's depth below zero. */
static ls_node *first_end_below(const ls_func *f, ls_block *k0, int i0, int need_zero, ls_node **skip, size_t nskip) {
  char *seen = calloc((size_t)f->nblocks, 1);
  struct fitem { ls_block *k; int from, opened; } *stack = malloc(((size_t)f->nblocks + 1) * sizeof *stack);
  if (!seen || !stack)
    abort();
  ls_node *found = NULL;
  int sp = 0;
  stack[sp++] = (struct fitem){k0, i0 + 1, 0};
  while (sp && !found) {
    struct fitem cur = stack[--sp];
    ls_block *k = cur.k;
    int stop = 0, opened = cur.opened;
    uint32_t m = mask_before(k, cur.from);
    for (int i = cur.from; i < k->nitems && !stop; i++) {
      ls_node *n = k->items[i];
      int d = ls_group_delta(n);
      if (d && !in_sorted(skip, nskip, n)) {
        if (d > 0) {
          opened += d;
        } else if (opened > 0) {
          opened += d < -opened ? -opened : d;
        } else {
          if (!need_zero || ZERO_BIT(m))
            found = n;
          stop = 1; /* this end closes the group in question, or a deeper one of this function */
        }
      }
      if (d)
        m = shift(m, d);
    }
    if (stop)
      continue;
    for (int s = 0; s < k->nsucc; s++)
      if (!seen[k->succ[s]->id]) {
        seen[k->succ[s]->id] = 1;
        stack[sp++] = (struct fitem){k->succ[s], 0, opened > 7 ? 7 : opened};
      }
  }
  free(seen);
  free(stack);
  return found;
}

/* A group-across-threads finding at `at` (the end that closes the other thread's group) in f:
 * notes at the opening start (when known) and at the spawning call, both as sites. */
static void report_across(ls_program *p, const ls_func *f, ls_vec *out, ls_node *at, const char *msg,
                          const char *subkind, const ls_node *opened, const char *opened_note,
                          const ls_node *call, const char *call_note) {
  ls_finding *fd = ls_ct_report(p, f, out, ls_rule_id(LS_RULE_GROUP_ACROSS_THREADS), at, msg, subkind);
  if (!fd)
    return;
  if (opened)
    ls_vec_push(&fd->notes, ls_ct_loc(p, opened, opened_note));
  ls_vec_push(&fd->notes, ls_ct_loc(p, call, call_note));
  ls_vec_push(&fd->sites, ls_ct_loc(p, at, at->text));
  if (opened)
    ls_vec_push(&fd->sites, ls_ct_loc(p, opened, opened->text));
}

static void spawn_site(ls_program *p, ls_func *s, ls_block *k, int i, ls_node *call, const ls_rule_fn *r,
                       ls_vec *out) {
  ls_func *t = entry_of(r, call);
  if (!t || t == s)
    return;
  uint32_t m = mask_before(k, i);
  char msg[768], note[512];
  const char *spawner = call->text ? call->text : r->name;
  /* (a) the spawner has a group open; the thread closes one it never opened */
  if (OPEN_BITS(m)) {
    ls_node *opened = start_before(s, call);
    for (int b = 0; b < t->nblocks; b++) {
      ls_block *tb = t->blocks[b];
      if (!tb->gin)
        continue;
      uint32_t tm = tb->gin;
      for (int j = 0; j < tb->nitems; j++) {
        ls_node *n = tb->items[j];
        int d = ls_group_delta(n);
        if (d < 0 && ZERO_BIT(tm)) {
          snprintf(msg, sizeof msg,
                   "'%s' runs on the thread that '%s' starts at line %u, but the group it means to close is open on "
                   "the spawning thread, not on this one: group state is thread-local, so here the depth goes below "
                   "zero (the call fails) and this thread's collectives were never part of that group",
                   n->text ? n->text : "?", spawner, call->line);
          snprintf(note, sizeof note, "'%s' runs '%s' on a new thread here, with the group open", spawner, t->name);
          report_across(p, t, out, n, msg, "closes-other-thread", opened,
                        "the group is opened here, on the spawning thread", call, note);
        }
        if (d)
          tm = shift(tm, d);
      }
    }
  }
  /* (b) the thread leaves a group open; the spawner closes one it never opened */
  int leaves_open = 0;
  for (int e = 0; e < t->exit->npred; e++)
    leaves_open |= OPEN_BITS(t->exit->pred[e]->gout) != 0;
  if (!leaves_open)
    return;
  ls_node *end = first_end_below(s, k, i, 1, NULL, 0);
  if (!end)
    return;
  ls_node *opened = start_before(t, NULL);
  snprintf(msg, sizeof msg,
           "'%s' closes a group that '%s' opened on the thread started at line %u: group state is thread-local, so "
           "here the depth goes below zero (the call fails) and that thread's group, with whatever it queued, "
           "is never launched",
           end->text ? end->text : "?", t->name, call->line);
  snprintf(note, sizeof note, "'%s' runs '%s' on a new thread here", spawner, t->name);
  report_across(p, s, out, end, msg, "closes-thread-group", opened,
                "the group is opened here, on the other thread, and left open", call, note);
}

/* ---- thread regions (#pragma omp parallel ...): wrapped statements, see pragma.c ---- */

static void collect_nodes(ls_node *n, ls_vec *v);

static int pragma_in(const char **list, int n, const ls_node *w) {
  if (w->kind != CXCursor_UnexposedStmt || !w->text || w->nkids != 1)
    return 0;
  for (int i = 0; i < n; i++) {
    size_t k = strlen(list[i]);
    if (!strncmp(w->text, list[i], k) && (!w->text[k] || w->text[k] == ' ' || w->text[k] == '('))
      return 1;
  }
  return 0;
}

static int is_region(const ls_program *p, const ls_node *n) {
  return pragma_in(p->rules->regions, p->rules->nregions, n);
}

/* The statements under `omp master`-like pragmas inside n: run by the primary thread, the
 * one that reached the region, so their group calls pair with that thread's own. */
static void collect_primary(const ls_program *p, ls_node *n, ls_vec *v) {
  if (!n)
    return;
  if (pragma_in(p->rules->primary_regions, p->rules->nprimary, n)) {
    collect_nodes(n, v);
    return;
  }
  if (is_region(p, n))
    return; /* a nested team has primary threads of its own */
  for (unsigned i = 0; i < n->nkids; i++)
    collect_primary(p, n->kids[i], v);
}

static void collect_nodes(ls_node *n, ls_vec *v) {
  if (!n)
    return;
  ls_vec_push(v, n);
  for (unsigned i = 0; i < n->nkids; i++)
    collect_nodes(n->kids[i], v);
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

struct ritem { ls_block *k; int i; ls_node *n; };
static int cmp_ritem(const void *a, const void *b) {
  const struct ritem *x = a, *y = b;
  if (x->n->line != y->n->line)
    return x->n->line < y->n->line ? -1 : 1;
  if (x->n->col != y->n->col)
    return x->n->col < y->n->col ? -1 : 1;
  return x->i - y->i;
}

/* A group-across-threads finding about a pragma region: where the group is opened (when
 * known), the region, and the call as a site. */
static ls_finding *report_region(ls_program *p, const ls_func *f, ls_vec *out, ls_node *at, const char *msg,
                                 const char *key, ls_node *opener, const char *opener_note, ls_node *reg) {
  ls_finding *fd = ls_ct_report(p, f, out, ls_rule_id(LS_RULE_GROUP_ACROSS_THREADS), at, msg, key);
  if (fd) {
    if (opener)
      ls_vec_push(&fd->notes, ls_ct_loc(p, opener, opener_note));
    ls_vec_push(&fd->notes, ls_ct_loc(p, reg, "the statement under this pragma runs on a team of threads"));
    ls_vec_push(&fd->sites, ls_ct_loc(p, at, at->text));
  }
  return fd;
}

static void region(ls_program *p, ls_func *f, ls_node *reg, ls_vec *out) {
  ls_vec nodes = {0}, primary = {0};
  collect_nodes(reg->kids[0], &nodes);
  if (!nodes.n)
    return;
  qsort(nodes.v, nodes.n, sizeof *nodes.v, cmp_ptr);
  collect_primary(p, reg->kids[0], &primary);
  if (primary.n)
    qsort(primary.v, primary.n, sizeof *primary.v, cmp_ptr);
  struct ritem *it = NULL;
  size_t nit = 0, cap = 0;
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b]->nitems; i++) {
      ls_node *n = f->blocks[b]->items[i];
      if (!n->line || !in_sorted((ls_node **)nodes.v, nodes.n, n) ||
          (primary.n && in_sorted((ls_node **)primary.v, primary.n, n)))
        continue;
      if (nit == cap) {
        cap = cap ? 2 * cap : 16;
        it = ls_xrealloc(it, cap * sizeof *it);
      }
      it[nit++] = (struct ritem){f->blocks[b], i, n};
    }
  if (!nit) {
    free(nodes.v);
    free(primary.v);
    free(it);
    return;
  }
  qsort(it, nit, sizeof *it, cmp_ritem);
  uint32_t m0 = mask_before(it[0].k, it[0].i); /* on entry to the region */
  int rel = 0;
  ls_node *closes_outer = NULL, *opens = NULL;
  for (size_t j = 0; j < nit; j++) {
    int d = ls_group_delta(it[j].n);
    if (d < 0 && rel <= 0 && !closes_outer)
      closes_outer = it[j].n;
    if (d > 0 && !opens)
      opens = it[j].n;
    rel += d;
  }
  char msg[768];
  if (closes_outer && OPEN_BITS(m0) && m0 && f->entry->gin) {
    ls_node *opened = start_before(f, it[0].n);
    snprintf(msg, sizeof msg,
             "'%s' in '#pragma %s' (line %u) runs on threads of the team other than the one that opened the "
             "group before the region: group state is thread-local, so there the depth goes below zero (the call "
             "fails) and the opening thread's group is not closed by them",
             closes_outer->text ? closes_outer->text : "?", reg->text, reg->line);
    report_region(p, f, out, closes_outer, msg, "region-closes-outer", opened,
                  "the group is opened here, by the thread that reaches the region", reg);
  }
  if (rel > 0 && opens) {
    /* the region leaves a group open on every thread: the first end after it closes only
     * the encountering thread's */
    ls_node **skip = (ls_node **)nodes.v;
    ls_node *end = NULL;
    for (size_t j = nit; j-- > 0 && !end;)
      end = first_end_below(f, it[j].k, it[j].i, 0, skip, nodes.n);
    if (end) {
      snprintf(msg, sizeof msg,
               "'%s' closes the group that every thread of the team opened in '#pragma %s' (line %u), but only on "
               "this thread: group state is thread-local, so the other threads' groups stay open, with whatever they "
               "queued",
               end->text ? end->text : "?", reg->text, reg->line);
      ls_finding *fd = report_region(p, f, out, end, msg, "closes-region-group", opens,
                                     "the group is opened here, once per thread of the team", reg);
      if (fd)
        ls_vec_push(&fd->sites, ls_ct_loc(p, opens, opens->text));
    }
  }
  free(nodes.v);
  free(primary.v);
  free(it);
}

static void find_regions(ls_program *p, ls_func *f, ls_node *n, ls_vec *out) {
  if (!n)
    return;
  if (is_region(p, n))
    region(p, f, n, out);
  for (unsigned i = 0; i < n->nkids; i++)
    find_regions(p, f, n->kids[i], out);
}

/* ---- completion-assumed-at-group-end ---- */

/* What the program does with stream handles and host-accessible buffers, program-wide. */
struct fact {
  ls_entity *e;
  int created, nonblocking, blocking, other; /* stream creations by flag; other writes */
  int hostmem;                                /* passed as a host_alloc out_ptr */
  ls_node *where;                             /* the creating / allocating call */
};
struct facts { struct fact *v; size_t n, cap; };

static struct fact *fact_get(struct facts *F, ls_entity *e, int add) {
  for (size_t i = 0; i < F->n; i++)
    if (F->v[i].e == e)
      return &F->v[i];
  if (!add)
    return NULL;
  if (F->n == F->cap) {
    F->cap = F->cap ? 2 * F->cap : 16;
    F->v = ls_xrealloc(F->v, F->cap * sizeof *F->v);
  }
  memset(&F->v[F->n], 0, sizeof F->v[0]);
  F->v[F->n].e = e;
  return &F->v[F->n++];
}

/* The variable or field whose address an out-argument passes: &s, (void **)&fx->buf. */
static ls_entity *out_target(ls_node *arg) {
  ls_node *a = unwrap(arg);
  if (!a || a->kind != CXCursor_UnaryOperator || a->op != CXUnaryOperator_AddrOf || a->nkids != 1)
    return NULL;
  a = unwrap(a->kids[0]);
  return a && (a->kind == CXCursor_DeclRefExpr || a->kind == CXCursor_MemberRefExpr) && a->ent &&
                 a->ent->kind != LS_ENT_FUNC
             ? a->ent
             : NULL;
}

static void scan_facts(ls_program *p, ls_node *n, struct facts *F, int pass) {
  if (!n)
    return;
  if (pass == 0 && ls_ct_call_kind(n, "stream_create")) {
    ls_node *a = arg_role(n, LS_ROLE_OUT_STREAM), *fl = arg_role(n, LS_ROLE_STREAM_FLAGS);
    ls_entity *t = a ? out_target(a) : NULL;
    if (t) {
      struct fact *x = fact_get(F, t, 1);
      x->created++;
      if (!x->where)
        x->where = n;
      ls_node *v = unwrap(fl);
      if (!fl || (v && v->ilit && !(p->rules->nonblocking_flag && (v->ival & p->rules->nonblocking_flag))))
        x->blocking++;
      else if (v && v->ilit)
        x->nonblocking++;
      else
        x->other++; /* flags not known here */
    }
  }
  if (pass == 0 && ls_ct_call_kind(n, "host_alloc")) {
    ls_node *a = arg_role(n, LS_ROLE_OUT_PTR);
    ls_entity *t = a ? out_target(a) : NULL;
    if (t) {
      struct fact *x = fact_get(F, t, 1);
      x->hostmem++;
      if (!x->where)
        x->where = n;
    }
  }
  if (pass == 1) { /* any other write makes a stream handle unknown */
    ls_entity *t = NULL;
    if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2) {
      int level = 0;
      t = ls_target_of(n->kids[0], &level);
      if (level != 0)
        t = NULL;
    } else if (n->kind == CXCursor_VarDecl && n->nkids) {
      ls_node *v = unwrap(n->kids[n->nkids - 1]); /* `cudaStream_t s = NULL;` before its creation */
      if (!(v && ((v->kind == CXCursor_IntegerLiteral && v->ilit && v->ival == 0) ||
                  v->kind == CXCursor_GNUNullExpr || v->kind == CXCursor_CXXNullPtrLiteralExpr)))
        t = n->ent;
    } else if (n->kind == CXCursor_CallExpr && !ls_ct_call_kind(n, "stream_create")) {
      for (unsigned i = 0; i < n->nkids; i++) {
        ls_node *a = unwrap(n->kids[i]);
        if (a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && !ls_ct_call_kind(n, "host_alloc")) {
          ls_entity *e = out_target(n->kids[i]);
          struct fact *x = e ? fact_get(F, e, 0) : NULL;
          if (x)
            x->other++;
        }
      }
    }
    struct fact *x = t ? fact_get(F, t, 0) : NULL;
    if (x)
      x->other++;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan_facts(p, n->kids[i], F, pass);
}

enum skind { S_UNKNOWN, S_LEGACY, S_PER_THREAD, S_CREATED };
struct sval { enum skind k; ls_entity *e; int nonblocking; };

static int in_list(const long long *v, int n, long long x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x)
      return 1;
  return 0;
}

static struct sval classify(const ls_program *p, struct facts *F, ls_node *s) {
  struct sval r = {S_UNKNOWN, NULL, 0};
  ls_node *u = unwrap(s);
  if (!u)
    return r;
  if (u->kind == CXCursor_GNUNullExpr || u->kind == CXCursor_CXXNullPtrLiteralExpr) {
    r.k = in_list(p->rules->legacy_streams, p->rules->nlegacy, 0) ? S_LEGACY : S_UNKNOWN;
    return r;
  }
  if (u->kind == CXCursor_IntegerLiteral && u->ilit) {
    if (in_list(p->rules->legacy_streams, p->rules->nlegacy, u->ival))
      r.k = S_LEGACY;
    else if (in_list(p->rules->per_thread_streams, p->rules->nper_thread, u->ival))
      r.k = S_PER_THREAD;
    return r;
  }
  if ((u->kind == CXCursor_DeclRefExpr || u->kind == CXCursor_MemberRefExpr) && u->ent) {
    struct fact *x = fact_get(F, u->ent, 0);
    if (x && x->created && !x->other) {
      r.k = S_CREATED;
      r.e = u->ent;
      r.nonblocking = x->nonblocking && !x->blocking;
    }
  }
  return r;
}

/* Work on stream a is not ordered after work on stream b, for certain. */
static int known_unordered(struct sval a, struct sval b) {
  if (a.k == S_CREATED && b.k == S_CREATED)
    return a.e != b.e; /* two streams the program created */
  if ((a.k == S_LEGACY && b.k == S_CREATED) || (b.k == S_LEGACY && a.k == S_CREATED))
    return (a.k == S_CREATED ? a : b).nonblocking; /* the legacy stream waits for blocking streams only */
  if ((a.k == S_PER_THREAD && b.k == S_CREATED) || (b.k == S_PER_THREAD && a.k == S_CREATED))
    return 1; /* the per-thread default stream synchronizes with the legacy stream only */
  return 0;
}

/* Could a call of user function f wait for the device (a sync or query anywhere below)? */
struct msync { ls_func *f; int v; };
struct msyncs { struct msync *v; size_t n, cap; };

static int node_syncs(const ls_node *n, struct msyncs *M);

static int may_sync(ls_func *f, struct msyncs *M) {
  for (size_t i = 0; i < M->n; i++)
    if (M->v[i].f == f)
      return M->v[i].v; /* -1 while being computed: a cycle adds nothing */
  if (M->n == M->cap) {
    M->cap = M->cap ? 2 * M->cap : 32;
    M->v = ls_xrealloc(M->v, M->cap * sizeof *M->v);
  }
  size_t at = M->n++;
  M->v[at] = (struct msync){f, 0};
  int r = node_syncs(f->body, M);
  M->v[at].v = r;
  return r;
}

static int node_syncs(const ls_node *n, struct msyncs *M) {
  if (!n)
    return 0;
  const char *k = kind_of(n);
  if (k && (!strcmp(k, "device_sync") || !strcmp(k, "stream_sync") || !strcmp(k, "stream_query") ||
            !strcmp(k, "event_sync") || !strcmp(k, "event_query")))
    return 1;
  if (n->kind == CXCursor_CallExpr && n->ent && !n->ent->rule && n->ent->def && may_sync(n->ent->def, M) > 0)
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (node_syncs(n->kids[i], M))
      return 1;
  return 0;
}

/* The variable or field a pointer expression points into: buf, fx.buf, buf + k, &buf[k]. */
static ls_node *base_of(ls_node *n) {
  n = unwrap(n);
  for (int guard = 0; n && guard < 8; guard++) {
    if (n->kind == CXCursor_BinaryOperator && (n->op == CXBinaryOperator_Add || n->op == CXBinaryOperator_Sub) &&
        n->nkids == 2)
      n = unwrap(n->kids[0]);
    else if (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_AddrOf && n->nkids == 1 &&
             unwrap(n->kids[0]) && unwrap(n->kids[0])->kind == CXCursor_ArraySubscriptExpr)
      n = unwrap(unwrap(n->kids[0])->kids[0]);
    else
      break;
  }
  return n && (n->kind == CXCursor_DeclRefExpr || n->kind == CXCursor_MemberRefExpr) && n->ent ? n : NULL;
}

/* A host read through buf in n: buf[i] or *buf (not as the target of a plain assignment). */
static int host_reads(ls_node *n, const ls_node *buf) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_LambdaExpr)
    return 0;
  if ((n->kind == CXCursor_ArraySubscriptExpr && n->nkids == 2) ||
      (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_Deref && n->nkids == 1)) {
    ls_node *b = base_of(n->kids[0]);
    if (b && same_expr(b, buf))
      return 1;
  }
  for (unsigned i = 0; i < n->nkids; i++) {
    if (i == 0 && n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) {
      ls_node *l = unwrap(n->kids[0]); /* buf[i] = v writes; its index may still read */
      if (l && l->kind == CXCursor_ArraySubscriptExpr && l->nkids == 2) {
        if (host_reads(l->kids[1], buf))
          return 1;
        continue;
      }
      if (l && l->kind == CXCursor_UnaryOperator && l->op == CXUnaryOperator_Deref)
        continue;
    }
    if (host_reads(n->kids[i], buf))
      return 1;
  }
  return 0;
}

static int rebinds(ls_node *n, const ls_node *buf) {
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2)
    return same_expr(n->kids[0], buf);
  if (n->kind == CXCursor_VarDecl)
    return unwrap((ls_node *)buf)->kind == CXCursor_DeclRefExpr && unwrap((ls_node *)buf)->ent == n->ent;
  if (n->kind == CXCursor_CallExpr && !ls_ct_call_kind(n, "memcpy") && !ls_ct_call_kind(n, "memcpy_async"))
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *a = unwrap(n->kids[i]);
      if (a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids == 1 &&
          same_expr(a->kids[0], buf))
        return 1;
    }
  return 0;
}

#define MAXT 32
struct wstate { int pending; uint32_t cover, noncover, ordered; };
struct walk {
  ls_program *p;
  ls_func *f;
  ls_vec *out;
  struct facts *F;
  struct msyncs *M;
  ls_node *coll, *buf, *stream;
  struct sval cs;
  struct fact *host;         /* buf is host-accessible memory */
  ls_node *events[MAXT]; int nev;
  ls_node *streams[MAXT]; int nst;
  ls_node *closer;           /* the group end that enqueued the collective (for a note) */
  ls_node *early;            /* a synchronization inside the group (waits for nothing of it) */
  ls_node *elsewhere;        /* a synchronization of another stream, or of an event that misses it */
};

static int slot(ls_node **v, int *n, ls_node *x) {
  for (int i = 0; i < *n; i++)
    if (same_expr(v[i], x))
      return i;
  if (*n == MAXT)
    return -1;
  v[*n] = x;
  return (*n)++;
}

static void flag(struct walk *w, ls_node *at, const char *how, int pending, ls_node *read_call) {
  char msg[1024], note[1024];
  const char *cn = w->coll->text ? w->coll->text : "?";
  char bbuf[NAMECAP], sbuf[NAMECAP];
  const char *bname = name_of(w->buf, bbuf), *sname = name_of(w->stream, sbuf);
  if (pending)
    snprintf(msg, sizeof msg,
             "%s '%s', the receive buffer of '%s' (line %u), before the group that holds the collective is closed: "
             "nothing is enqueued until the outermost ncclGroupEnd, so this reads the old contents",
             how, bname, cn, w->coll->line);
  else
    snprintf(msg, sizeof msg,
             "%s '%s', the receive buffer of '%s' (line %u), with no synchronization on its stream '%s' in between: "
             "ncclGroupEnd (and the collective itself) return once the work is enqueued, not when the device has "
             "written the buffer; wait with cudaStreamSynchronize or an event recorded after the collective",
             how, bname, cn, w->coll->line, sname);
  ls_finding *fd = ls_ct_report(w->p, w->f, w->out, ls_rule_id(LS_RULE_COMPLETION_ASSUMED_AT_GROUP_END), at, msg, w->coll->ent->rule->op);
  if (!fd)
    return;
  snprintf(note, sizeof note, "'%s' writes '%s' on stream '%s' here", cn, bname, sname);
  ls_vec_push(&fd->notes, ls_ct_loc(w->p, w->coll, note));
  if (w->early)
    ls_vec_push(&fd->notes, ls_ct_loc(w->p, w->early, "this synchronization runs before the group is closed: the "
                                                    "stream does not hold the collective yet"));
  if (w->closer && !pending)
    ls_vec_push(&fd->notes, ls_ct_loc(w->p, w->closer, "the group ends here: the collective is enqueued, not complete"));
  if (w->elsewhere)
    ls_vec_push(&fd->notes, ls_ct_loc(w->p, w->elsewhere, "this waits for another stream, or for an event recorded "
                                                        "without the collective: not for the collective"));
  if (w->host && w->host->where && !read_call) {
    snprintf(note, sizeof note, "'%s' is host-accessible memory, allocated here", bname);
    ls_vec_push(&fd->notes, ls_ct_loc(w->p, w->host->where, note));
  } else if (w->cs.k == S_CREATED && w->cs.nonblocking && read_call && ls_ct_call_kind(read_call, "memcpy")) {
    struct fact *x = fact_get(w->F, w->cs.e, 0);
    if (x && x->where)
      ls_vec_push(&fd->notes, ls_ct_loc(w->p, x->where, "the collective's stream is created non-blocking here: the "
                                                      "legacy default stream does not wait for it"));
  }
  ls_vec_push(&fd->sites, ls_ct_loc(w->p, w->coll, cn));
  if (read_call)
    ls_vec_push(&fd->sites, ls_ct_loc(w->p, read_call, read_call->text));
}

/* One item on a path after the collective. Returns 1 when the path ends here. */
static int step(struct walk *w, ls_node *n, struct wstate *st) {
  if (n == w->coll)
    return 1; /* issued again: that walk is the same as this one */
  int d = ls_group_delta(n);
  if (d > 0)
    st->pending = st->pending + d > 7 ? 7 : st->pending + d;
  else if (d < 0 && st->pending > 0) {
    st->pending = st->pending + d < 0 ? 0 : st->pending + d;
    if (!st->pending && !w->closer)
      w->closer = n;
  }
  const char *k = kind_of(n);
  if (k) {
    int sync = 0;
    /* finalize flushes the communicator's work, destroy finalizes, abort and revoke stop it:
     * past them the collective is no longer in flight as issued */
    if (!strcmp(k, "device_sync") || !strcmp(k, "comm_finalize") || !strcmp(k, "comm_destroy") ||
        !strcmp(k, "comm_abort") || !strcmp(k, "comm_revoke"))
      sync = 1;
    else if (!strcmp(k, "stream_sync") || !strcmp(k, "stream_query")) {
      ls_node *s = arg_role(n, LS_ROLE_STREAM);
      sync = !s || !known_unordered(classify(w->p, w->F, s), w->cs);
      if (!sync && !w->elsewhere)
        w->elsewhere = n;
    } else if (!strcmp(k, "event_record")) {
      ls_node *e = arg_role(n, LS_ROLE_EVENT), *s = arg_role(n, LS_ROLE_STREAM);
      int i = e ? slot(w->events, &w->nev, e) : -1;
      if (i >= 0) {
        int covers = !st->pending && (!s || same_expr(s, w->stream) || !known_unordered(classify(w->p, w->F, s), w->cs));
        if (covers) {
          st->cover |= 1u << i;
          st->noncover &= ~(1u << i);
        } else {
          st->noncover |= 1u << i;
          st->cover &= ~(1u << i);
        }
      }
    } else if (!strcmp(k, "event_sync") || !strcmp(k, "event_query")) {
      ls_node *e = arg_role(n, LS_ROLE_EVENT);
      int i = -1;
      for (int j = 0; e && j < w->nev; j++)
        if (same_expr(w->events[j], e))
          i = j;
      sync = i < 0 || !(st->noncover >> i & 1); /* an event recorded elsewhere may cover it */
      if (!sync && !w->elsewhere)
        w->elsewhere = n;
    } else if (!strcmp(k, "stream_wait_event")) {
      ls_node *e = arg_role(n, LS_ROLE_EVENT), *s = arg_role(n, LS_ROLE_STREAM);
      for (int j = 0; e && s && j < w->nev; j++)
        if (same_expr(w->events[j], e) && (st->cover >> j & 1)) {
          int i = slot(w->streams, &w->nst, s);
          if (i >= 0)
            st->ordered |= 1u << i;
        }
    } else if (!strcmp(k, "memcpy") || !strcmp(k, "memcpy_async")) {
      ls_node *src = base_of(arg_role(n, LS_ROLE_SRC));
      if (src && same_expr(src, w->buf)) {
        int async = !strcmp(k, "memcpy_async");
        ls_node *s = async ? arg_role(n, LS_ROLE_STREAM) : NULL;
        struct sval sv = {S_LEGACY, NULL, 0};
        if (async)
          sv = classify(w->p, w->F, s);
        int ordered = 0;
        for (int j = 0; s && j < w->nst; j++)
          ordered |= (st->ordered >> j & 1) && same_expr(w->streams[j], s);
        char how[512], sbuf[NAMECAP];
        if (st->pending) {
          snprintf(how, sizeof how, "'%s' reads", n->text ? n->text : "?");
          flag(w, n, how, 1, n);
          return 1;
        }
        if (!ordered && !(s && same_expr(s, w->stream)) && known_unordered(sv, w->cs)) {
          if (async)
            snprintf(how, sizeof how, "'%s' on stream '%s', which is not ordered after the collective's, reads",
                     n->text ? n->text : "?", name_of(s, sbuf));
          else
            snprintf(how, sizeof how, "'%s' on the legacy default stream, which does not wait for the non-blocking "
                                      "stream of the collective, reads", n->text ? n->text : "?");
          flag(w, n, how, 0, n);
          return 1;
        }
      }
    }
    if (sync && !st->pending)
      return 1;
    if (sync && !w->early)
      w->early = n;
  } else if (n->kind == CXCursor_CallExpr && n->ent && n->ent->def && may_sync(n->ent->def, w->M) > 0) {
    if (!st->pending)
      return 1; /* a helper that may wait for the device: assume it does */
    if (!w->early)
      w->early = n;
  }
  if (rebinds(n, w->buf))
    return 1;
  if (w->host && host_reads(n, w->buf)) {
    flag(w, n, "the host reads", st->pending, NULL);
    return 1;
  }
  return 0;
}

#define MAXS 8 /* states kept per block; past that a path is dropped (bounded work) */
/* Per-function scratch of the walks, reset through `touched` so a function with many
 * collectives costs the blocks each walk visits, not the whole function each time. */
struct wmem {
  struct wstate *seen;   /* nblocks x MAXS */
  unsigned char *nseen;
  int *touched; int ntouched;
  struct witem { ls_block *k; int from; struct wstate st; } *stack;
  size_t cap;
};

static void completion_walk(struct walk *w, struct wmem *wm, ls_block *k0, int i0, struct wstate s0) {
  size_t sp = 0;
  wm->stack[sp++] = (struct witem){k0, i0 + 1, s0};
  int budget = 20000;
  while (sp && budget-- > 0) {
    struct witem cur = wm->stack[--sp];
    ls_block *k = cur.k;
    struct wstate st = cur.st;
    int stop = 0;
    for (int i = cur.from; i < k->nitems && !stop; i++)
      stop = step(w, k->items[i], &st);
    if (!stop && k->cond && w->host && host_reads(k->cond, w->buf)) {
      flag(w, k->cond, "the host reads", st.pending, NULL);
      stop = 1;
    }
    if (stop)
      continue;
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      int dup = 0;
      for (int j = 0; j < wm->nseen[t->id] && !dup; j++) {
        struct wstate *v = &wm->seen[(size_t)t->id * MAXS + (size_t)j];
        /* a state seen with no more protection than this one already covers it */
        dup = v->pending == st.pending && (v->cover & ~st.cover) == 0 && (v->ordered & ~st.ordered) == 0 &&
              (st.noncover & ~v->noncover) == 0;
      }
      if (dup || wm->nseen[t->id] >= MAXS)
        continue;
      if (!wm->nseen[t->id])
        wm->touched[wm->ntouched++] = t->id;
      wm->seen[(size_t)t->id * MAXS + wm->nseen[t->id]++] = st;
      if (sp == wm->cap) {
        wm->cap *= 2;
        wm->stack = ls_xrealloc(wm->stack, wm->cap * sizeof *wm->stack);
      }
      wm->stack[sp++] = (struct witem){t, 0, st};
    }
  }
  for (int i = 0; i < wm->ntouched; i++)
    wm->nseen[wm->touched[i]] = 0;
  wm->ntouched = 0;
}

static void completion(ls_program *p, ls_func *f, struct facts *F, struct msyncs *M, ls_vec *out) {
  struct wmem wm = {0};
  /* The walk reports only a copy out of the buffer (a memcpy of this function whose source
   * is it) or, for host-accessible memory, a host read: a buffer that is neither needs no
   * walk. Found once per function, so a function of many collectives and no such copy costs
   * one scan instead of a walk of the rest of the function per collective. */
  ls_vec srcs = {0};
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b]->nitems; i++) {
      ls_node *n = f->blocks[b]->items[i];
      if (ls_ct_call_kind(n, "memcpy") || ls_ct_call_kind(n, "memcpy_async")) {
        ls_node *src = base_of(arg_role(n, LS_ROLE_SRC));
        if (src)
          ls_vec_push(&srcs, src);
      }
    }
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    for (int i = 0; i < k->nitems; i++) {
      ls_node *n = k->items[i];
      if (n->kind != CXCursor_CallExpr || !n->ent || !n->ent->rule ||
          (n->ent->rule->kind != LS_KIND_COLLECTIVE && n->ent->rule->kind != LS_KIND_P2P))
        continue;
      ls_node *rb = arg_role(n, LS_ROLE_RECVBUF), *s = arg_role(n, LS_ROLE_STREAM);
      ls_node *buf = rb ? base_of(rb) : NULL;
      if (!buf || !s)
        continue;
      if (!wm.seen) {
        wm.seen = calloc((size_t)f->nblocks * MAXS, sizeof *wm.seen);
        wm.nseen = calloc((size_t)f->nblocks, 1);
        wm.touched = malloc((size_t)f->nblocks * sizeof *wm.touched);
        wm.cap = 64;
        wm.stack = malloc(wm.cap * sizeof *wm.stack);
        if (!wm.seen || !wm.nseen || !wm.touched || !wm.stack)
          abort();
      }
      struct fact *h = fact_get(F, buf->ent, 0);
      if (!(h && h->hostmem)) {
        size_t j = 0;
        while (j < srcs.n && !same_expr(srcs.v[j], buf))
          j++;
        if (j == srcs.n)
          continue;
      }
      struct walk w = {.p = p, .f = f, .out = out, .F = F, .M = M, .coll = n, .buf = buf, .stream = s};
      w.cs = classify(p, F, s);
      w.host = h && h->hostmem ? h : NULL;
      struct wstate s0 = {0, 0, 0, 0};
      /* events recorded just before the collective (straight-line code above it) capture
       * the stream without it: waiting for them waits for nothing of the collective */
      ls_block *bk = k;
      int bi = i;
      for (int hops = 0; hops < 64; hops++) {
        for (int j = bi - 1; j >= 0; j--) {
          ls_node *x = bk->items[j];
          if (x == n)
            break;
          if (ls_ct_call_kind(x, "event_record")) {
            ls_node *e = arg_role(x, LS_ROLE_EVENT);
            int ei = e ? slot(w.events, &w.nev, e) : -1;
            if (ei >= 0 && !(s0.cover >> ei & 1))
              s0.noncover |= 1u << ei;
          }
        }
        if (bk->npred != 1 || bk == f->entry)
          break;
        bk = bk->pred[0];
        bi = bk->nitems;
      }
      uint32_t m = mask_before(k, i);
      for (int d = 7; d >= 1 && m; d--) /* the deepest possible depth: the group is still open */
        if (m & (1u << (LS_GZ + d))) {
          s0.pending = d;
          break;
        }
      completion_walk(&w, &wm, k, i, s0);
    }
  }
  free(wm.seen);
  free(wm.nseen);
  free(wm.touched);
  free(wm.stack);
  free(srcs.v);
}

void ls_check_threads(ls_program *p, ls_vec *findings) {
  struct facts F = {0};
  struct msyncs M = {0};
  ls_vec qual = {0};
  for (int i = 0; i < p->rules->nfns; i++)
    if (!strcmp(p->rules->fns[i].kind_name, "thread_spawn") && strstr(p->rules->fns[i].name, "::"))
      ls_vec_push(&qual, &p->rules->fns[i]);
  const char **lasts = ls_xrealloc(NULL, (qual.n + 1) * sizeof *lasts);
  for (size_t i = 0; i < qual.n; i++)
    lasts[i] = ls_qualified_last(((const ls_rule_fn *)qual.v[i])->name);
  int host_rules = 0;
  for (int i = 0; i < p->rules->nfns && !host_rules; i++)
    host_rules = !strcmp(p->rules->fns[i].kind_name, "memcpy") || !strcmp(p->rules->fns[i].kind_name, "host_alloc");
  for (size_t i = 0; host_rules && i < p->funcs.n; i++) { /* pass 0 looks at these calls only */
    ls_func *f = p->funcs.v[i];
    if (ls_func_calls_kind(p, f, "stream_create") || ls_func_calls_kind(p, f, "host_alloc"))
      scan_facts(p, f->body, &F, 0);
  }
  for (size_t i = 0; F.n && i < p->funcs.n; i++)
    scan_facts(p, ((ls_func *)p->funcs.v[i])->body, &F, 1);
  int hostmem = 0; /* without host-accessible memory, only a copy out of a buffer reports */
  for (size_t i = 0; i < F.n; i++)
    hostmem |= F.v[i].hostmem != 0;
  for (size_t fi = 0; fi < p->funcs.n; fi++) {
    ls_func *f = p->funcs.v[fi];
    if (!f->body || !f->nblocks)
      continue;
    for (int b = 0; b < f->nblocks && (qual.n || ls_func_calls_kind(p, f, "thread_spawn")); b++) {
      ls_block *k = f->blocks[b];
      for (int i = 0; i < k->nitems; i++) {
        const ls_rule_fn *r = spawn_rule(&qual, lasts, k->items[i]);
        if (r)
          spawn_site(p, f, k, i, k->items[i], r, findings);
      }
    }
    if (p->rules->nregions && f->has_pragma)
      find_regions(p, f, f->body, findings);
    if (host_rules &&
        (hostmem || ls_func_calls_kind(p, f, "memcpy") || ls_func_calls_kind(p, f, "memcpy_async")))
      completion(p, f, &F, &M, findings);
  }
  free(F.v);
  free(M.v);
  free(qual.v);
  free(lasts);
}
