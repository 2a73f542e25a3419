/* nonblocking.c — the contracts of non-blocking communicators (a call that returns
 * ncclInProgress has not finished; nccl.h), as one forward data-flow
 * per function over its CFG, edge-sensitive on comparisons of the asynchronous state:
 *   nonblocking-not-ready     a call on a communicator created non-blocking, or destroyed after a
 *                             non-blocking finalize, on a path where its state was not polled out
 *                             of `pending` (NCCL rejects the call on that rank);
 *   poll-without-error-check  the state compared with `pending` alone, after which the path goes
 *                             on (a call on the communicator, a return) without looking at it;
 *   continue-after-abort      (its asynchronous half) a collective on a path after the state was
 *                             seen to be an error, neither `success` nor `pending`.
 * Intra-procedural, plus one summary: a function that polls a communicator parameter ready on
 * every return that is not an error constant settles the argument at its calls. API facts come
 * from the rules only: kinds, the roles comm/out_comm/config/out_async_state, and the top-level
 * `success`, `pending` and `nonblocking`. A decision on the state whose branch assigns a flag
 * hands the problem to that flag (silence). Non-goals: aliases (a second variable holding the
 * same communicator), communicators in containers indexed by a changing subscript, flags. */
#include <stdlib.h>
#include <string.h>

#include "contracts.h"
#include "lint.h"
#include "xalloc.h"

/* Tracked per function: communicator expressions, state variables, config variables. A
 * function with more is analyzed for the first ones only (silence beyond, never noise). */
enum { NB_MAXC = 24, NB_MAXV = 24, NB_MAXK = 8, NB_ROUNDS = 64 };

/* Facts about a state variable's value that hold on every path (a must-analysis). */
enum { F_PEND = 1, F_NOTPEND = 2, F_SUCC = 4, F_NOTSUCC = 8 };
/* What a state variable holds: an async query's state, a creation's, a finalize's or the
 * query's own result. */
enum { VK_NONE, VK_QUERY, VK_CREATE, VK_FINAL, VK_QRET };
enum { LINK_NONE = -1, LINK_MANY = -2 };

/* Pointer fields are may-facts ("on some path"): non-NULL names the cause for the notes. */
struct comm_st {
  ls_node *pinit;   /* created non-blocking by this call, not polled ready since */
  ls_node *pfin;    /* non-blocking finalize by this call, not polled since */
  ls_node *err;     /* the query whose state was seen to be an error ... */
  ls_node *errat;   /* ... at this comparison */
  unsigned char nb; /* must: created non-blocking */
  signed char par;  /* may: 1 + the slot of the non-blocking parent whose poll hands this
                       communicator out (rules: nonblocking.parent_settles_child); 0: none */
};
struct var_st {
  short link;        /* communicator slot the value is about; LINK_NONE, LINK_MANY */
  unsigned char vk, facts;
  ls_node *src;      /* the call that produced the value */
  ls_node *unex;     /* may: produced by this query and not looked at since */
  ls_node *tu;       /* may: that query's state compared with pending alone ... */
  ls_node *tuat;     /* ... by this comparison, which let the path go on */
};
struct st {
  int reached;
  unsigned char cfg[NB_MAXK]; /* must: the config's blocking field holds the non-blocking value */
  struct comm_st c[NB_MAXC];
  struct var_st v[NB_MAXV];
};

struct nb {
  ls_program *p;
  ls_func *f;
  ls_vec *out;
  int report, summary;
  unsigned char *rec; /* records_error's answers per (block, edge): 0 unknown, 1 no, 2 yes */
  ls_node **leaf, **root; /* each operand of a && / || condition, and the whole condition */
  int nroots, caproots;
  ls_node *comm[NB_MAXC];
  int ncomm;
  ls_entity *var[NB_MAXV];
  int nvar;
  ls_entity *cfg[NB_MAXK];
  int ncfg;
};

/* ---- shapes ---- */

static const ls_rule_fn *rule_of(const ls_node *n) {
  return n && n->kind == CXCursor_CallExpr && n->ent ? n->ent->rule : NULL;
}

static int kind_is(const ls_rule_fn *r, const char *k) {
  return r && r->kind_name && !strcmp(r->kind_name, k);
}

static int in_list(const char *const *l, int n, const char *s) {
  for (int i = 0; s && i < n; i++)
    if (!strcmp(l[i], s))
      return 1;
  return 0;
}

/* x of `&x`, or NULL */
static ls_node *addr_target(ls_node *a) {
  a = ls_ct_unwrap(a);
  if (a && a->kind == CXCursor_UnaryOperator && a->op == CXUnaryOperator_AddrOf && a->nkids == 1)
    return ls_ct_unwrap(a->kids[0]);
  return NULL;
}

/* A null pointer constant: 0, NULL ((void *)0), nullptr. */
static int is_null(ls_node *n) {
  for (;;) {
    n = ls_ct_unwrap(n);
    if (n && n->kind == CXCursor_CStyleCastExpr && n->nkids)
      n = n->kids[n->nkids - 1];
    else
      break;
  }
  if (!n)
    return 0;
  if (n->kind == CXCursor_CXXNullPtrLiteralExpr || n->kind == CXCursor_GNUNullExpr)
    return 1;
  return n->kind == CXCursor_IntegerLiteral && n->ilit && n->ival == 0;
}

/* 1: the pending constant, 2: the success constant, 3: another enumerator, 0: not a constant */
static int cclass(const struct nb *x, ls_node *e) {
  e = ls_ct_unwrap(e);
  if (!e || e->kind != CXCursor_DeclRefExpr || !e->ilit || !e->text)
    return 0;
  const ls_rules *r = x->p->rules;
  if (in_list(r->pending, r->npending, e->text))
    return 1;
  if (in_list(r->success, r->nsuccess, e->text))
    return 2;
  return 3;
}

/* An expression that names the same communicator wherever it is written: a variable, a
 * field of one, an element at a constant index. `comms[i]` is not: i moves between the loop
 * that creates and the loop that polls, and one slot for all elements would mix them. */
static int stable(ls_node *e) {
  e = ls_ct_unwrap(e);
  if (!e || e->ilit)
    return 0;
  switch (e->kind) {
  case CXCursor_DeclRefExpr:
    return e->ent != NULL;
  case CXCursor_MemberRefExpr:
    return e->nkids == 1 && stable(e->kids[0]);
  case CXCursor_ArraySubscriptExpr: {
    ls_node *i = e->nkids == 2 ? ls_ct_unwrap(e->kids[1]) : NULL;
    return i && i->kind == CXCursor_IntegerLiteral && i->ilit && stable(e->kids[0]);
  }
  default:
    return 0;
  }
}

static int comm_slot(struct nb *x, ls_node *e, int add) {
  e = ls_ct_unwrap(e);
  if (!e)
    return -1;
  for (int i = 0; i < x->ncomm; i++)
    if (ls_ct_same_expr(x->comm[i], e))
      return i;
  if (!add || x->ncomm == NB_MAXC || !stable(e))
    return -1;
  x->comm[x->ncomm] = e;
  return x->ncomm++;
}

static int ent_idx(ls_entity *const *v, int n, const ls_entity *e) {
  for (int i = 0; e && i < n; i++)
    if (v[i] == e)
      return i;
  return -1;
}

/* index of a tracked state variable referenced by e, or -1 */
static int var_ref(const struct nb *x, ls_node *e) {
  e = ls_ct_unwrap(e);
  return e && e->kind == CXCursor_DeclRefExpr ? ent_idx(x->var, x->nvar, e->ent) : -1;
}

static int cfg_ref(const struct nb *x, ls_node *e) {
  e = ls_ct_unwrap(e);
  return e && e->kind == CXCursor_DeclRefExpr ? ent_idx(x->cfg, x->ncfg, e->ent) : -1;
}

static void add_ent(ls_entity **v, int *n, int max, ls_entity *e) {
  if (e && e->kind == LS_ENT_VAR && ent_idx(v, *n, e) < 0 && *n < max)
    v[(*n)++] = e;
}

/* The kind of result a variable assigned call n holds: a creation's (n has an out_comm
 * argument), a finalize's or an async query's own; VK_NONE for any other call. */
static int result_call(const ls_node *n) {
  const ls_rule_fn *r = rule_of(n);
  if (!r)
    return VK_NONE;
  if (ls_ct_arg_of(n, LS_ROLE_OUT_COMM) >= 0)
    return VK_CREATE;
  if (kind_is(r, "comm_finalize"))
    return VK_FINAL;
  return kind_is(r, "async_error_query") ? VK_QRET : VK_NONE;
}

/* Facts that `value == constant of class k` (eq) or `!=` (!eq) adds. */
static unsigned char facts_of(int k, int eq) {
  if (k == 1)
    return eq ? F_PEND | F_NOTSUCC : F_NOTPEND;
  if (k == 2)
    return eq ? F_SUCC | F_NOTPEND : F_NOTSUCC;
  return eq ? F_NOTPEND | F_NOTSUCC : 0;
}

/* The communicator in slot c was polled out of pending: it is ready, and so is every
 * child a split of it was waiting to hand out (NCCL sets the child's handle then). */
static void settle_comm(struct st *s, int c) {
  s->c[c].pinit = s->c[c].pfin = NULL;
  for (int i = 0; i < NB_MAXC; i++)
    if (s->c[i].par == c + 1) {
      s->c[i].pinit = NULL;
      s->c[i].par = 0;
    }
}

/* What a result of kind vk with these facts says about its communicator. A child of a
 * non-blocking parent is settled by nothing but a poll of the parent: the split's own
 * ncclSuccess comes before the child exists, and a query on the (NULL) child fails. */
static void settle_by(int vk, unsigned char facts, struct comm_st *cs) {
  if (cs->par && vk != VK_FINAL)
    return;
  if (vk == VK_CREATE && facts & F_NOTPEND)
    cs->pinit = NULL; /* a non-blocking creation may end at once (or fail: another bug) */
  else if (vk == VK_FINAL && facts & F_NOTPEND)
    cs->pfin = NULL;
  else if (vk == VK_QRET && facts & F_NOTSUCC)
    cs->pinit = cs->pfin = NULL; /* the query itself failed: nothing left to wait for */
}

/* The communicator a result call is about. */
static int result_comm(struct nb *x, ls_node *r, int vk) {
  int a = ls_ct_arg_of(r, vk == VK_CREATE ? LS_ROLE_OUT_COMM : LS_ROLE_COMM);
  if (a < 0)
    return -1;
  return comm_slot(x, vk == VK_CREATE ? addr_target(r->kids[a]) : r->kids[a], 0);
}

/* ---- pre-scan: what to track; 0 when the function has nothing for these checks ---- */

static int prescan(struct nb *x) {
  int interesting = 0;
  for (int b = 0; b < x->f->nblocks; b++) {
    ls_block *k = x->f->blocks[b];
    for (int i = 0; i < k->nitems; i++) {
      ls_node *n = k->items[i];
      const ls_rule_fn *r = rule_of(n);
      if (r) {
        int ci = ls_ct_arg_of(n, LS_ROLE_COMM), oc = ls_ct_arg_of(n, LS_ROLE_OUT_COMM);
        int cf = ls_ct_arg_of(n, LS_ROLE_CONFIG);
        if (ci >= 0)
          comm_slot(x, n->kids[ci], 1);
        if (oc >= 0 && addr_target(n->kids[oc]))
          comm_slot(x, addr_target(n->kids[oc]), 1);
        if (cf >= 0) {
          ls_node *t = addr_target(n->kids[cf]);
          if (t && t->kind == CXCursor_DeclRefExpr)
            add_ent(x->cfg, &x->ncfg, NB_MAXK, t->ent);
          interesting |= oc >= 0;
        }
        if (kind_is(r, "async_error_query")) {
          int oi = ls_ct_arg_of(n, LS_ROLE_OUT_ASYNC_STATE);
          ls_node *t = oi >= 0 ? addr_target(n->kids[oi]) : NULL;
          if (t && t->kind == CXCursor_DeclRefExpr)
            add_ent(x->var, &x->nvar, NB_MAXV, t->ent);
          interesting = 1;
        }
        if (kind_is(r, "comm_finalize"))
          interesting = 1;
      } else if (n->kind == CXCursor_CallExpr && n->ent && n->ent->def && n->ent->def->nb_settles) {
        for (unsigned a = 0; a < n->nkids && a < 64; a++)
          if (n->ent->def->nb_settles >> a & 1)
            comm_slot(x, n->kids[a], 1);
        interesting = 1;
      } else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2) {
        ls_node *l = ls_ct_unwrap(n->kids[0]);
        if (l && l->kind == CXCursor_DeclRefExpr && result_call(ls_ct_unwrap(n->kids[1])))
          add_ent(x->var, &x->nvar, NB_MAXV, l->ent);
      } else if (n->kind == CXCursor_VarDecl && n->nkids && result_call(ls_ct_unwrap(n->kids[n->nkids - 1]))) {
        add_ent(x->var, &x->nvar, NB_MAXV, n->ent);
      }
    }
  }
  return interesting && x->p->rules->npending && x->p->rules->nsuccess;
}

/* ---- the lattice ---- */

static void st_init(struct st *s) {
  memset(s, 0, sizeof *s);
  s->reached = 1;
  for (int i = 0; i < NB_MAXV; i++)
    s->v[i].link = LINK_NONE;
}

/* a = a ? a : b, noting a change */
static void join_ptr(ls_node **a, ls_node *b, int *ch) {
  if (!*a && b) {
    *a = b;
    *ch = 1;
  }
}

static void join_and(unsigned char *a, unsigned char b, int *ch) {
  if ((*a & b) != *a) {
    *a &= b;
    *ch = 1;
  }
}

/* Joins b into a; returns whether a changed. Must-facts intersect, may-facts keep the first
 * cause seen, links climb NONE -> slot -> MANY: the lattice is finite, so rounds terminate. */
static int st_join(struct st *a, const struct st *b) {
  if (!b->reached)
    return 0;
  if (!a->reached) {
    *a = *b;
    return 1;
  }
  int ch = 0;
  for (int i = 0; i < NB_MAXK; i++)
    join_and(&a->cfg[i], b->cfg[i], &ch);
  for (int i = 0; i < NB_MAXC; i++) {
    struct comm_st *x = &a->c[i];
    const struct comm_st *y = &b->c[i];
    join_and(&x->nb, y->nb, &ch);
    if (!x->par && y->par) {
      x->par = y->par;
      ch = 1;
    }
    join_ptr(&x->pinit, y->pinit, &ch);
    join_ptr(&x->pfin, y->pfin, &ch);
    if (!x->err && y->err) {
      x->err = y->err;
      x->errat = y->errat;
      ch = 1;
    }
  }
  for (int i = 0; i < NB_MAXV; i++) {
    struct var_st *x = &a->v[i];
    const struct var_st *y = &b->v[i];
    if (x->link == LINK_NONE) {
      if (y->link != LINK_NONE) {
        x->link = y->link;
        x->vk = y->vk;
        ch = 1;
      }
    } else if (x->link != LINK_MANY && y->link != LINK_NONE && (y->link != x->link || y->vk != x->vk)) {
      x->link = LINK_MANY;
      ch = 1;
    }
    join_and(&x->facts, y->facts, &ch);
    join_ptr(&x->src, y->src, &ch);
    join_ptr(&x->unex, y->unex, &ch);
    if (!x->tu && y->tu) {
      x->tu = y->tu;
      x->tuat = y->tuat;
      ch = 1;
    }
  }
  return ch;
}

static void reset_var(struct var_st *v) {
  memset(v, 0, sizeof *v);
  v->link = LINK_NONE;
}

/* The communicator in slot c gets a new value (or is freed): what was known about it ends. */
static void reset_comm(struct st *s, int c) {
  memset(&s->c[c], 0, sizeof s->c[c]);
  for (int i = 0; i < NB_MAXV; i++)
    if (s->v[i].link == c) {
      s->v[i].link = LINK_NONE;
      s->v[i].vk = VK_NONE;
      s->v[i].facts = 0;
    }
}

/* ---- reads: anything but a comparison with pending looks at the state ---- */

/* The tracked state variables that n reads (a bit each). */
static uint32_t read_mask(const struct nb *x, ls_node *n) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_DeclRefExpr) {
    int v = ent_idx(x->var, x->nvar, n->ent);
    return v >= 0 ? (uint32_t)1 << v : 0;
  }
  int skip = -1;
  if (ls_ct_call_kind(n, "async_error_query")) {
    int oi = ls_ct_arg_of(n, LS_ROLE_OUT_ASYNC_STATE);
    if (oi >= 0 && addr_target(n->kids[oi]))
      skip = oi; /* `&state`: written, not read */
  } else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2) {
    ls_node *l = ls_ct_unwrap(n->kids[0]);
    if (l && l->kind == CXCursor_DeclRefExpr)
      skip = 0;
  } else if (n->kind == CXCursor_BinaryOperator && n->nkids == 2 &&
             (n->op == CXBinaryOperator_EQ || n->op == CXBinaryOperator_NE)) {
    for (int side = 0; side < 2; side++)
      if (cclass(x, n->kids[1 - side]) == 1 && var_ref(x, n->kids[side]) >= 0)
        return 0; /* "still pending?" says nothing about an error */
  }
  uint32_t m = 0;
  for (unsigned i = 0; i < n->nkids; i++)
    if ((int)i != skip)
      m |= read_mask(x, n->kids[i]);
  return m;
}

static void reads(const struct nb *x, ls_node *n, struct st *s) {
  uint32_t m = x->nvar ? read_mask(x, n) : 0;
  for (int v = 0; m && v < x->nvar; v++)
    if (m >> v & 1)
      s->v[v].unex = s->v[v].tu = s->v[v].tuat = NULL;
}

/* ---- findings ---- */

/* How the user wrote expression n (`comm`, `fx.comm`, `comms[i]`), for messages. */
static const char *name_of(const ls_node *n, char *b, size_t size) {
  n = ls_ct_unwrap((ls_node *)n);
  if (!n)
    return "?";
  if (n->kind == CXCursor_MemberRefExpr && n->text && n->nkids == 1) {
    const ls_node *base = ls_ct_unwrap(n->kids[0]);
    snprintf(b, size, "%s.%s", base && base->text ? base->text : "?", n->text);
    return b;
  }
  if (n->kind == CXCursor_ArraySubscriptExpr && n->nkids == 2) {
    const ls_node *base = ls_ct_unwrap(n->kids[0]), *i = ls_ct_unwrap(n->kids[1]);
    snprintf(b, size, "%s[%s]", base && base->text ? base->text : "?", i && i->text ? i->text : "...");
    return b;
  }
  return n->text ? n->text : "?";
}

/* The constants for messages: those of the rules file that describes non-blocking mode. */
static const char *pending_name(const struct nb *x) {
  return x->p->rules->nb_pending ? x->p->rules->nb_pending : x->p->rules->pending[0];
}
static const char *success_name(const struct nb *x) {
  return x->p->rules->nb_success ? x->p->rules->nb_success : x->p->rules->success[0];
}

static void not_ready(struct nb *x, ls_node *use, int c, struct st *s) {
  struct comm_st *cs = &s->c[c];
  if (!x->report)
    return;
  char m[768], nt[512], cb[256];
  const char *comm = name_of(x->comm[c], cb, sizeof cb);
  ls_node *at; /* the pending creation or finalize: the note's place and the second site */
  if (cs->pinit && cs->par) {
    at = cs->pinit;
    char pb[256];
    const char *parent = name_of(x->comm[cs->par - 1], pb, sizeof pb);
    snprintf(m, sizeof m,
             "'%s' on '%s' before its non-blocking parent '%s' was polled out of %s: '%s' on a non-blocking "
             "communicator returns %s before the child exists, and NCCL sets '%s' only when "
             "ncclCommGetAsyncError('%s') leaves %s, so this call passes NULL and fails (ncclInvalidArgument) "
             "while the other ranks may wait in it",
             use->text ? use->text : "?", comm, parent, pending_name(x), at->text ? at->text : "?",
             success_name(x), comm, parent, pending_name(x));
    snprintf(nt, sizeof nt,
             "'%s' is created here from the non-blocking '%s'; poll ncclCommGetAsyncError('%s') until the "
             "state leaves %s (polling '%s' does not help: it is NULL until then)",
             comm, parent, parent, pending_name(x), comm);
  } else if (cs->pinit) {
    at = cs->pinit;
    int cf = ls_ct_arg_of(at, LS_ROLE_CONFIG);
    snprintf(m, sizeof m,
             "'%s' on '%s' before its non-blocking creation by '%s' was polled to completion: NCCL "
             "rejects calls on a communicator whose state is still %s (ncclInvalidArgument), so this "
             "rank's call fails while ranks that finished creating it wait in the matching call",
             use->text ? use->text : "?", comm, at->text ? at->text : "?", pending_name(x));
    if (cf >= 0 && is_null(at->kids[cf]))
      snprintf(nt, sizeof nt,
               "'%s' is created here with a null config, so it inherits its parent's non-blocking mode; "
               "poll ncclCommGetAsyncError until the state leaves %s before using it",
               comm, pending_name(x));
    else
      snprintf(nt, sizeof nt,
               "'%s' is created here with a config whose '%s' is %lld (non-blocking); poll "
               "ncclCommGetAsyncError until the state leaves %s before using it",
               comm, x->p->rules->nb_field, x->p->rules->nb_value, pending_name(x));
  } else if (cs->pfin) {
    at = cs->pfin;
    snprintf(m, sizeof m,
             "'%s' on '%s' while its non-blocking '%s' may still be running: its state stays %s until "
             "the finalize is done, NCCL rejects the call (ncclInvalidArgument) and the communicator "
             "is not freed",
             use->text ? use->text : "?", comm, at->text ? at->text : "?", pending_name(x));
    snprintf(nt, sizeof nt,
             "'%s' is finalized here; poll ncclCommGetAsyncError until the state leaves %s before "
             "the next call on it",
             comm, pending_name(x));
  } else {
    return;
  }
  ls_finding *fd = ls_ct_report(x->p, x->f, x->out, ls_rule_id(LS_RULE_NONBLOCKING_NOT_READY), use, m, use->ent->rule->op);
  if (!fd)
    return;
  ls_vec_push(&fd->notes, ls_ct_loc(x->p, at, nt));
  ls_vec_push(&fd->sites, ls_ct_loc(x->p, use, use->text));
  ls_vec_push(&fd->sites, ls_ct_loc(x->p, at, at->text));
}

/* `at` is where the path goes on without looking at the state (a call, a return, or NULL:
 * the function's closing brace). */
static void unchecked(struct nb *x, struct var_st *v, ls_node *at, const char *what) {
  if (!x->report || !v->tu)
    return;
  ls_node *q = v->tu;
  int oi = ls_ct_arg_of(q, LS_ROLE_OUT_ASYNC_STATE);
  char m[768], sb[256];
  const char *state = oi >= 0 ? name_of(addr_target(q->kids[oi]), sb, sizeof sb) : "?";
  snprintf(m, sizeof m,
           "the state '%s' that '%s' writes is compared with %s alone: when the communicator ends in an "
           "error instead (a failed creation, a peer that died), the program goes on with a broken "
           "communicator; compare it with %s and abort the communicator on an error",
           state, q->text ? q->text : "?", pending_name(x), success_name(x));
  ls_finding *fd = ls_ct_report(x->p, x->f, x->out, ls_rule_id(LS_RULE_POLL_WITHOUT_ERROR_CHECK), q, m, q->text);
  if (!fd)
    return;
  char nt[512];
  if (v->tuat) {
    snprintf(nt, sizeof nt, "'%s' is compared only with %s here: any other value, an error too, lets the path go on",
             state, pending_name(x));
    ls_vec_push(&fd->notes, ls_ct_loc(x->p, v->tuat, nt));
  }
  snprintf(nt, sizeof nt, "%s without looking at '%s'", what, state);
  if (at) {
    ls_vec_push(&fd->notes, ls_ct_loc(x->p, at, nt));
  } else {
    ls_loc *l = ls_alloc(x->p->arena, sizeof *l);
    l->file = x->f->file;
    l->line = x->f->end_line;
    l->col = x->f->end_col;
    l->msg = ls_strdup(x->p->arena, nt);
    ls_vec_push(&fd->notes, l);
  }
  ls_vec_push(&fd->sites, ls_ct_loc(x->p, q, q->text));
}

static void after_error(struct nb *x, ls_node *use, struct comm_st *cs, int c) {
  if (!x->report)
    return;
  char m[768], cb[256];
  snprintf(m, sizeof m,
           "'%s' on '%s' after its asynchronous state was seen to be an error (neither %s nor %s) on "
           "this path: the communicator is broken and must be aborted, so the call fails or hangs while "
           "the other ranks' collectives never match",
           use->text ? use->text : "?", name_of(x->comm[c], cb, sizeof cb), success_name(x), pending_name(x));
  ls_finding *fd = ls_ct_report(x->p, x->f, x->out, ls_rule_id(LS_RULE_CONTINUE_AFTER_ABORT), use, m, use->ent->rule->op);
  if (!fd)
    return;
  if (cs->errat)
    ls_vec_push(&fd->notes, ls_ct_loc(x->p, cs->errat, "the error is seen here, and this path goes on"));
  ls_vec_push(&fd->sites, ls_ct_loc(x->p, use, use->text));
}

/* ---- transfer ---- */

/* Non-blocking mode of the communicator created by `call`: its config argument is `&cfg`
 * with the blocking field set to the non-blocking value on every path, or null and the
 * rules say a null config inherits from the `comm` argument. */
static int creates_nb(const struct nb *x, ls_node *call, const struct st *s) {
  int cf = ls_ct_arg_of(call, LS_ROLE_CONFIG);
  if (cf < 0 || !x->p->rules->nb_field)
    return 0;
  ls_node *a = call->kids[cf];
  int k = cfg_ref(x, addr_target(a));
  if (addr_target(a))
    return k >= 0 && s->cfg[k];
  if (is_null(a) && x->p->rules->nb_null_inherits) {
    int ci = ls_ct_arg_of(call, LS_ROLE_COMM);
    int c = ci >= 0 ? comm_slot((struct nb *)x, call->kids[ci], 0) : -1;
    return c >= 0 && s->c[c].nb;
  }
  return 0;
}

/* The state variable v gets rhs (NULL: an unknown value). */
static void store_var(struct nb *x, int v, ls_node *rhs, struct st *s) {
  struct var_st *vs = &s->v[v];
  reset_var(vs);
  ls_node *r = ls_ct_unwrap(rhs);
  if (!r)
    return;
  int vk = result_call(r);
  if (vk != VK_NONE) {
    int c = result_comm(x, r, vk);
    if (c >= 0) {
      vs->link = (short)c;
      vs->vk = (unsigned char)vk;
      vs->src = r;
    }
    return;
  }
  switch (cclass(x, r)) {
  case 1: vs->facts = F_PEND | F_NOTSUCC; break;
  case 2: vs->facts = F_SUCC | F_NOTPEND; break;
  case 3: vs->facts = F_NOTPEND | F_NOTSUCC; break;
  default: break;
  }
}

static void store(struct nb *x, ls_node *lhs, ls_node *rhs, int plain, struct st *s) {
  ls_node *l = ls_ct_unwrap(lhs);
  if (!l)
    return;
  int c = comm_slot(x, l, 0);
  if (c >= 0)
    reset_comm(s, c);
  int v = var_ref(x, l);
  if (v >= 0)
    store_var(x, v, plain ? rhs : NULL, s);
  int k = cfg_ref(x, l);
  if (k >= 0)
    s->cfg[k] = 0;
  /* cfg.blocking = <value> */
  const char *field = x->p->rules->nb_field;
  if (field && l->kind == CXCursor_MemberRefExpr && l->text && !strcmp(l->text, field) && l->nkids == 1 &&
      (k = cfg_ref(x, l->kids[0])) >= 0) {
    ls_node *r = ls_ct_unwrap(rhs);
    s->cfg[k] = plain && r && r->kind == CXCursor_IntegerLiteral && r->ilit && r->ival == x->p->rules->nb_value;
  }
}

static void rule_call(struct nb *x, ls_node *n, const ls_rule_fn *r, struct st *s) {
  int ci = ls_ct_arg_of(n, LS_ROLE_COMM), oc = ls_ct_arg_of(n, LS_ROLE_OUT_COMM);
  int c = ci >= 0 ? comm_slot(x, n->kids[ci], 0) : -1;
  int coll = r->seq_member || r->kind == LS_KIND_P2P;
  int needs_ready = coll || kind_is(r, "comm_finalize") || kind_is(r, "comm_destroy") || kind_is(r, "comm_split");
  if (c >= 0 && needs_ready) {
    struct comm_st *cs = &s->c[c];
    if (cs->pinit || cs->pfin)
      not_ready(x, n, c, s);
    if (!x->summary) { /* one finding per path: the first call (a summary needs a real poll) */
      cs->pinit = cs->pfin = NULL;
      cs->par = 0;
    }
    if (coll && cs->err) {
      after_error(x, n, cs, c);
      cs->err = cs->errat = NULL;
    }
    for (int v = 0; v < x->nvar; v++)
      if (s->v[v].tu && s->v[v].link == c) {
        unchecked(x, &s->v[v], n, "the communicator is used here");
        s->v[v].tu = s->v[v].tuat = NULL;
      }
  }
  if (oc >= 0) {
    int nc = comm_slot(x, addr_target(n->kids[oc]), 0);
    if (nc >= 0) {
      int nbm = creates_nb(x, n, s);
      /* a split of a non-blocking parent: the child comes with the parent's poll */
      int via = x->p->rules->nb_parent_settles && c >= 0 && c != nc && s->c[c].nb;
      reset_comm(s, nc);
      s->c[nc].nb = (unsigned char)nbm;
      s->c[nc].pinit = nbm || via ? n : NULL;
      s->c[nc].par = (signed char)(via ? c + 1 : 0);
    }
  }
  if (c >= 0 && kind_is(r, "comm_finalize") && s->c[c].nb)
    s->c[c].pfin = n;
  if (c >= 0 && (kind_is(r, "comm_destroy") || kind_is(r, "comm_abort")) && !x->summary)
    reset_comm(s, c);
  if (kind_is(r, "async_error_query")) {
    int oi = ls_ct_arg_of(n, LS_ROLE_OUT_ASYNC_STATE);
    int v = oi >= 0 ? var_ref(x, addr_target(n->kids[oi])) : -1;
    if (v >= 0) {
      reset_var(&s->v[v]);
      s->v[v].link = (short)(c >= 0 ? c : LINK_MANY);
      s->v[v].vk = VK_QUERY;
      s->v[v].src = s->v[v].unex = n;
    }
  }
}

/* A call lockstep has no rule for: a polling helper's summary; anything whose address it
 * receives may change. */
static void other_call(struct nb *x, ls_node *n, struct st *s) {
  ls_func *g = n->ent ? n->ent->def : NULL;
  for (unsigned a = 0; a < n->nkids; a++) {
    if (g && a < 64 && (g->nb_settles >> a & 1)) {
      int c = comm_slot(x, n->kids[a], 0);
      if (c >= 0 && !s->c[c].par)
        settle_comm(s, c);
    }
    ls_node *t = addr_target(n->kids[a]);
    if (t)
      store(x, t, NULL, 0, s);
  }
}

/* A return of an error constant (an enumerator other than success, or a negative literal). */
static int error_return(const struct nb *x, ls_node *ret) {
  ls_node *e = ret->nkids ? ls_ct_unwrap(ret->kids[0]) : NULL;
  if (!e)
    return 0;
  if (e->kind == CXCursor_UnaryOperator && e->op == CXUnaryOperator_Minus && e->nkids == 1) {
    ls_node *l = ls_ct_unwrap(e->kids[0]);
    return l && l->kind == CXCursor_IntegerLiteral && l->ilit && l->ival > 0;
  }
  int k = cclass(x, e);
  return k == 1 || k == 3;
}

static void item(struct nb *x, ls_node *n, struct st *s) {
  reads(x, n, s);
  const ls_rule_fn *r = rule_of(n);
  if (r) {
    rule_call(x, n, r, s);
    return;
  }
  switch (n->kind) {
  case CXCursor_CallExpr:
    other_call(x, n, s);
    break;
  case CXCursor_BinaryOperator:
    if (n->op == CXBinaryOperator_Assign && n->nkids == 2)
      store(x, n->kids[0], n->kids[1], 1, s);
    break;
  case CXCursor_CompoundAssignOperator:
    if (n->nkids == 2)
      store(x, n->kids[0], NULL, 0, s);
    break;
  case CXCursor_VarDecl: {
    int v = ent_idx(x->var, x->nvar, n->ent), k = ent_idx(x->cfg, x->ncfg, n->ent);
    if (v >= 0)
      store_var(x, v, n->nkids ? n->kids[n->nkids - 1] : NULL, s);
    if (k >= 0)
      s->cfg[k] = 0;
    for (int c = 0; c < x->ncomm; c++) {
      ls_node *e = x->comm[c];
      if (e->kind == CXCursor_DeclRefExpr && e->ent == n->ent)
        reset_comm(s, c);
    }
    break;
  }
  case CXCursor_ReturnStmt:
    if (x->summary && error_return(x, n)) {
      s->reached = 0; /* the caller handles the error: not a return that must have polled */
      break;
    }
    for (int v = 0; v < x->nvar; v++)
      if (s->v[v].tu) {
        unchecked(x, &s->v[v], n, "the function returns here");
        s->v[v].tu = s->v[v].tuat = NULL;
      }
    break;
  default:
    break;
  }
}

/* Does the branch that edge j of block k enters assign a variable (not a state variable)
 * before it joins the other side again? A program that records the error it
 * saw (`failed = 1`, then `if (agreed_failure) abort...` further down) decides later, through a
 * flag lint does not follow: the error then counts as handled. Logging alone stores nothing. */
static int records_error(struct nb *x, ls_block *k, int j) {
  ls_func *f = x->f;
  if (!x->rec && !(x->rec = calloc((size_t)f->nblocks * 2, 1)))
    abort();
  unsigned char *memo = &x->rec[k->id * 2 + (j ? 1 : 0)];
  if (*memo)
    return *memo == 2;
  char *seen = calloc((size_t)f->nblocks, 1);
  ls_block **stack = malloc((size_t)f->nblocks * sizeof *stack);
  if (!seen || !stack)
    abort();
  int sp = 0, found = 0;
  stack[sp++] = k->succ[j];
  seen[k->succ[j]->id] = 1;
  while (sp && !found) {
    ls_block *b = stack[--sp];
    if (b == k->ipdom || b == f->exit || b == f->abort_blk || b == f->killall || b == f->vexit)
      continue;
    for (int i = 0; i < b->nitems && !found; i++) {
      ls_node *n = b->items[i];
      if ((n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign) ||
          n->kind == CXCursor_CompoundAssignOperator)
        found = n->nkids == 2 && var_ref(x, n->kids[0]) < 0;
    }
    for (int t = 0; t < b->nsucc; t++)
      if (!seen[b->succ[t]->id]) {
        seen[b->succ[t]->id] = 1;
        stack[sp++] = b->succ[t];
      }
  }
  free(seen);
  free(stack);
  *memo = found ? 2 : 1;
  return found;
}

/* What block blk's comparison says on its edge j (j == 0: the comparison is true). */
static void refine(struct nb *x, ls_block *blk, int j, struct st *s) {
  ls_node *c = ls_ct_unwrap(blk->cond);
  int taken = j == 0;
  if (!c || c->kind != CXCursor_BinaryOperator || c->nkids != 2 ||
      (c->op != CXBinaryOperator_EQ && c->op != CXBinaryOperator_NE))
    return;
  int eq = (c->op == CXBinaryOperator_EQ) == taken;
  /* a call's result compared directly: `if (ncclCommSplit(...) != ncclSuccess)` */
  for (int side = 0; side < 2; side++) {
    ls_node *q = ls_ct_unwrap(c->kids[side]);
    int vk = result_call(q), k = cclass(x, c->kids[1 - side]);
    if (vk == VK_NONE || !k)
      continue;
    int cs = result_comm(x, q, vk);
    if (cs >= 0)
      settle_by(vk, facts_of(k, eq), &s->c[cs]);
    return;
  }
  int v = -1, k = 0;
  for (int side = 0; side < 2 && v < 0; side++)
    if ((v = var_ref(x, c->kids[side])) >= 0)
      k = cclass(x, c->kids[1 - side]);
  if (v < 0 || !k)
    return;
  struct var_st *vs = &s->v[v];
  vs->facts |= facts_of(k, eq);
  if ((vs->facts & F_PEND && vs->facts & F_NOTPEND) || (vs->facts & F_SUCC && vs->facts & F_NOTSUCC)) {
    s->reached = 0; /* `state = pending; while (state == pending)` never skips the loop */
    return;
  }
  if (vs->link < 0)
    return;
  struct comm_st *cs = &s->c[vs->link];
  if (vs->vk == VK_QUERY) {
    if (vs->facts & F_NOTPEND) {
      if (!cs->par) /* a query on a child still waiting for its parent: on NULL, settles nothing */
        settle_comm(s, vs->link);
      if (k == 1 && vs->unex && !vs->tu) {
        vs->tu = vs->unex;
        vs->tuat = c;
      }
    }
    if ((vs->facts & (F_NOTPEND | F_NOTSUCC)) == (F_NOTPEND | F_NOTSUCC) && !cs->err) {
      cs->err = vs->src;
      cs->errat = c;
    }
  } else {
    settle_by(vs->vk, vs->facts, cs);
  }
}

/* ---- whole conditions: `a || b` is two CFG blocks, one decision ---- */

static int is_logic(const ls_node *n) {
  return n && n->kind == CXCursor_BinaryOperator && n->nkids == 2 &&
         (n->op == CXBinaryOperator_LAnd || n->op == CXBinaryOperator_LOr);
}

/* Maps every operand of a && / || expression, at every level of parentheses and `!`, to the
 * outermost such expression. */
static void cond_roots(struct nb *x, ls_node *n, ls_node *root) {
  if (!n)
    return;
  if (root) {
    if (x->nroots == x->caproots) {
      x->caproots = x->caproots ? 2 * x->caproots : 16;
      x->leaf = ls_xrealloc(x->leaf, (size_t)x->caproots * sizeof *x->leaf);
      x->root = ls_xrealloc(x->root, (size_t)x->caproots * sizeof *x->root);
    }
    x->leaf[x->nroots] = n;
    x->root[x->nroots++] = root;
  }
  int through = is_logic(n) || (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_LNot) ||
                ((n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr) && n->nkids == 1);
  ls_node *r = root && through ? root : !root && is_logic(n) ? n : NULL;
  for (unsigned i = 0; i < n->nkids; i++)
    cond_roots(x, n->kids[i], r);
}

static ls_node *whole_cond(const struct nb *x, ls_node *c) {
  for (int i = 0; i < x->nroots; i++)
    if (x->leaf[i] == c)
      return x->root[i];
  return c;
}

/* An edge of a decision about a communicator's state into a branch that records something
 * (records_error): the program hands what it saw to a flag lint does not follow (the NCCL
 * docs' `if (timeout() || state != ncclSuccess) abortFlag = 1;`, agreed and acted on later),
 * so what lint knew against that communicator ends on this edge. */
static void handoff(struct nb *x, ls_block *k, int j, uint32_t looked_at, struct st *s) {
  if (!looked_at || !s->reached || !records_error(x, k, j))
    return;
  for (int v = 0; v < x->nvar; v++)
    if (looked_at >> v & 1 && s->v[v].link >= 0) {
      struct comm_st *cs = &s->c[s->v[v].link];
      settle_comm(s, s->v[v].link);
      cs->err = cs->errat = NULL;
      s->v[v].unex = s->v[v].tu = s->v[v].tuat = NULL;
    }
}

/* Runs block k from `in`; on return, out[s] holds the state on the edge to succ[s]. */
static void block(struct nb *x, ls_block *k, const struct st *in, struct st *out) {
  struct st s = *in;
  for (int i = 0; i < k->nitems && s.reached; i++)
    item(x, k->items[i], &s);
  ls_node *whole = k->cond ? whole_cond(x, k->cond) : NULL;
  uint32_t looked_at = s.reached && whole && x->nvar ? read_mask(x, whole) : 0;
  reads(x, whole, &s); /* the state read in any part of the decision counts on all its paths */
  for (int j = 0; j < k->nsucc; j++) {
    out[j] = s;
    if (s.reached && k->cond && k->nsucc == 2) {
      refine(x, k, j, &out[j]);
      handoff(x, k, j, looked_at, &out[j]);
    }
  }
}

/* Fixpoint over the CFG from `entry`; then, with reporting on, one pass over the reached
 * blocks (the exit last: what reaches it fell off the closing brace). 0: no fixpoint. */
/* Room for the states on the out-edges of any block of f. */
static struct st *edge_states(const ls_func *f) {
  int maxs = 2;
  for (int b = 0; b < f->nblocks; b++)
    if (f->blocks[b]->nsucc > maxs)
      maxs = f->blocks[b]->nsucc;
  struct st *out = malloc((size_t)maxs * sizeof *out);
  if (!out)
    abort();
  return out;
}

static int run(struct nb *x, const struct st *entry, struct st *in) {
  ls_func *f = x->f;
  struct st *out = edge_states(f);
  for (int b = 0; b < f->nblocks; b++)
    in[b].reached = 0;
  in[f->entry->id] = *entry;
  int changed = 1, round = 0;
  for (; changed && round < NB_ROUNDS; round++) {
    changed = 0;
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      if (!in[b].reached)
        continue;
      block(x, k, &in[b], out);
      for (int j = 0; j < k->nsucc; j++)
        changed |= st_join(&in[k->succ[j]->id], &out[j]);
    }
  }
  free(out);
  return !changed;
}

static void report_pass(struct nb *x, struct st *in) {
  ls_func *f = x->f;
  struct st *out = edge_states(f);
  x->report = 1;
  for (int b = 0; b < f->nblocks; b++)
    if (in[b].reached && f->blocks[b] != f->exit)
      block(x, f->blocks[b], &in[b], out);
  struct st *e = &in[f->exit->id];
  if (e->reached)
    for (int v = 0; v < x->nvar; v++)
      unchecked(x, &e->v[v], NULL, "the function ends here");
  x->report = 0;
  free(out);
}

/* Which communicator parameters every normal return has polled ready. */
static uint64_t summarize(struct nb *x, struct st *in) {
  ls_func *f = x->f;
  struct st entry;
  st_init(&entry);
  uint64_t params = 0;
  int pslot[64];
  for (int c = 0; c < x->ncomm; c++) {
    ls_node *e = x->comm[c];
    if (e->kind != CXCursor_DeclRefExpr || !e->ent || e->ent->kind != LS_ENT_PARAM)
      continue;
    for (int i = 0; i < f->nparams && i < 64; i++)
      if (f->params[i] == e->ent) {
        params |= (uint64_t)1 << i;
        pslot[i] = c;
        entry.c[c].pinit = f->body; /* "not ready" on entry; any node will do as the cause */
        entry.c[c].nb = 1;
      }
  }
  if (!params)
    return 0;
  x->summary = 1;
  int ok = run(x, &entry, in);
  x->summary = 0;
  const struct st *e = &in[f->exit->id];
  if (!ok || !e->reached)
    return 0;
  uint64_t settles = 0;
  for (int i = 0; i < 64; i++)
    if (params >> i & 1 && !e->c[pslot[i]].pinit)
      settles |= (uint64_t)1 << i;
  return settles;
}

/* Does any function need the pass? prescan finds one interesting only through an async-error
 * query, a finalize, a creation that takes a config (a rules function with roles config and
 * out_comm), or a call of a function that settles its argument, and a function settles only
 * when it is interesting itself: without any of those calls in the program, none is. */
static int program_needs(ls_program *p) {
  if (!p->nb_need) {
    uint64_t mask = ls_kind_mask(p, "async_error_query") | ls_kind_mask(p, "comm_finalize");
    for (int i = 0; i < p->rules->nfns; i++) {
      const ls_rule_fn *r = &p->rules->fns[i];
      int cf = 0, oc = 0;
      for (int a = 0; a < r->nargs; a++) {
        cf |= r->roles[a] == LS_ROLE_CONFIG;
        oc |= r->roles[a] == LS_ROLE_OUT_COMM;
      }
      if (cf && oc)
        mask |= ls_kind_mask(p, r->kind_name);
    }
    uint64_t called = 0;
    for (size_t i = 0; i < p->funcs.n; i++)
      called |= ((const ls_func *)p->funcs.v[i])->calls_kinds;
    p->nb_need = (called & mask) || !p->kind_names ? 2 : 1;
  }
  return p->nb_need == 2;
}

void ls_check_nonblocking(ls_program *p, ls_func *f, ls_vec *findings) {
  if (!f->body || !f->nblocks || !program_needs(p))
    return;
  struct nb *x = calloc(1, sizeof *x);
  if (!x)
    abort();
  x->p = p;
  x->f = f;
  x->out = findings;
  if (prescan(x)) {
    cond_roots(x, f->body, NULL);
    struct st *in = malloc((size_t)f->nblocks * sizeof *in);
    if (!in)
      abort();
    f->nb_settles = summarize(x, in);
    struct st entry;
    st_init(&entry);
    if (run(x, &entry, in))
      report_pass(x, in);
    free(in);
  }
  free(x->rec);
  free(x->leaf);
  free(x->root);
  free(x);
}
