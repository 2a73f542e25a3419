/* cfg.c — control-flow graph per function, built from the ls_node tree in one pass:
 * if/else, loops, break/continue, switch with fall-through, return, goto/labels,
 * short-circuit && || ?:, noreturn calls (edges to the abort sink), C++ throw/try/catch
 * (a throw, or a call of a program function that may throw, goes to the enclosing try's
 * handlers, else to the abort sink marked `thrown`), and C++ scope-exit destructors
 * (synthetic calls at every exit of the scope, an exception's way out included). Post-dominators
 * use Cooper-Harvey-Kennedy over the reverse graph rooted at a virtual exit.
 * Conventions: a branch block has `cond` and succ[0] = true side, succ[1] = false side. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "xalloc.h"

struct jump { ls_block *brk, *cont; size_t scope; };
/* an enclosing try: where its body's exceptions go */
struct try_ctx {
  ls_block **handlers; unsigned nh;
  int catch_all;  /* a catch (...): nothing thrown in the body goes further out */
  size_t scope;   /* b->dtors.n at the try: what the body declares is destroyed on the way */
  int in_handler; /* building its handlers: what they throw goes further out */
  int used;       /* a throw or a call that may throw reached the handlers */
};
struct label { const char *name; ls_block *b; };
struct dtor { ls_entity *dtor; };

static void forward_order(ls_program *p, ls_func *f);

struct builder {
  ls_program *p;
  ls_func *f;
  ls_block *cur;
  ls_vec blocks;
  struct jump *jumps; size_t njumps, capjumps;
  struct label *labels; size_t nlabels, caplabels;
  ls_vec dtors;   /* ls_entity* of live RAII objects, innermost last */
  struct try_ctx *tries; size_t ntries, captries; /* enclosing trys, innermost last */
  ls_block *sw;   /* dispatch block of the innermost switch */
  int sw_default;
  /* locals written in the body: forkv[i] whether every write stores a fork_like result
   * (found at the first test of a value against 0; nforkv -1: not yet) */
  const ls_entity **forkk; unsigned char *forkv; int nforkv, capforkv;
};

static ls_block *new_block(struct builder *b) {
  ls_block *k = ls_alloc_lines(b->p->lines, sizeof *k);
  k->id = (int)b->blocks.n;
  ls_vec_push(&b->blocks, k);
  return k;
}

static void grow_arr(ls_arena *a, void *arrp, int n, int *cap, size_t size) {
  void **arr = arrp;
  if (n < *cap)
    return;
  int nc = *cap ? *cap * 2 : 2;
  void *na = ls_alloc(a, (size_t)nc * size);
  if (n)
    memcpy(na, *arr, (size_t)n * size);
  *arr = na;
  *cap = nc;
}

static void edge(struct builder *b, ls_block *from, ls_block *to) {
  if (!from || !to)
    return;
  grow_arr(b->p->arena, &from->succ, from->nsucc, &from->capsucc, sizeof *from->succ);
  from->succ[from->nsucc++] = to;
  grow_arr(b->p->arena, &to->pred, to->npred, &to->cappred, sizeof *to->pred);
  to->pred[to->npred++] = from;
}

static ls_block *cur(struct builder *b) {
  if (!b->cur)
    b->cur = new_block(b); /* unreachable code still gets analyzed for its own sake */
  return b->cur;
}

static void item(struct builder *b, ls_node *n) {
  ls_block *k = cur(b);
  grow_arr(b->p->arena, &k->items, k->nitems, &k->capitems, sizeof *k->items);
  k->items[k->nitems++] = n;
}

static void emit_dtors(struct builder *b, size_t down_to, const char *file, unsigned line, unsigned col) {
  for (size_t i = b->dtors.n; i > down_to; i--) {
    ls_entity *d = b->dtors.v[i - 1];
    ls_node *n = ls_alloc_lines(b->p->lines, sizeof *n);
    n->kind = CXCursor_CallExpr;
    n->ent = d;
    n->text = d->name;
    n->file = file;
    n->line = line;
    n->col = col;
    item(b, n);
  }
}

/* An exception raised at the end of the current block (by `what`: a throw, or a call whose
 * callee may throw): it goes to the handlers of the innermost enclosing try (any of them
 * may match), on outwards unless one is a catch (...), and else out of the function to the
 * abort sink, running the destructors of the scopes it leaves on the way. The current
 * block is left as it was (a call's normal path continues from it). */
static void throw_edges(struct builder *b, ls_node *what) {
  ls_block *k = cur(b), *keep = b->cur;
  size_t at = b->dtors.n;
  for (size_t t = b->ntries; t > 0; t--) {
    struct try_ctx *tc = &b->tries[t - 1];
    if (tc->in_handler)
      continue;
    if (at > tc->scope) {
      b->cur = new_block(b);
      edge(b, k, b->cur);
      emit_dtors(b, tc->scope, what->file, what->line, what->col);
      k = b->cur;
      at = tc->scope;
    }
    for (unsigned h = 0; h < tc->nh; h++)
      edge(b, k, tc->handlers[h]);
    tc->used = 1;
    if (tc->catch_all) {
      b->cur = keep;
      return;
    }
  }
  if (at > 0) {
    b->cur = new_block(b);
    edge(b, k, b->cur);
    emit_dtors(b, 0, what->file, what->line, what->col);
    k = b->cur;
  }
  k->thrown = what;
  if (!b->f->throws)
    b->f->throws = what;
  edge(b, k, b->f->abort_blk);
  b->cur = keep;
}

static int is_noreturn_call(const ls_node *n) {
  if (!n->ent)
    return 0;
  return n->ent->rule_noreturn || (n->ent->def && n->ent->def->noreturn);
}

static void stmt(struct builder *b, ls_node *n);
static void cond(struct builder *b, ls_node *c, ls_block *t, ls_block *f);


/* clang_isStatement / clang_isExpression as libclang defines them, without a library call
 * per node */
static int is_stmt(enum CXCursorKind k) { return k >= CXCursor_FirstStmt && k <= CXCursor_LastStmt; }
static int is_expr(enum CXCursorKind k) { return k >= CXCursor_FirstExpr && k <= CXCursor_LastExpr; }

static ls_node *unwrap(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr) && n->nkids == 1 &&
         n->kids[0] && !is_stmt(n->kids[0]->kind))
    n = n->kids[0];
  return n;
}

/* ---- the child side of fork(): no rank runs it ----
 * A fork_like call (rules/host.json: fork, vfork) returns 0 in a new process that is not
 * one of the job's ranks: its exit does not leave the collective sequence, and what it runs
 * (usually an exec) is no rank's. A branch that tests such a result against 0 therefore
 * keeps only its parent side. The value is the call itself, an assignment of it, or a local
 * every write of which (its initializer included) stores a fork_like call's result and whose
 * address is never taken: a local that may hold something else may be 0 for another reason. */
static int is_fork_call(const ls_node *n) {
  n = ls_strip_casts((ls_node *)n);
  return n && n->kind == CXCursor_CallExpr && n->ent && n->ent->rule_fork;
}

static void fork_note(struct builder *b, const ls_entity *e, int ok) {
  if (!e || e->kind != LS_ENT_VAR)
    return;
  for (int i = 0; i < b->nforkv; i++)
    if (b->forkk[i] == e) {
      b->forkv[i] &= (unsigned char)ok;
      return;
    }
  if (b->nforkv == b->capforkv) {
    b->capforkv = b->capforkv ? 2 * b->capforkv : 8;
    b->forkk = ls_xrealloc(b->forkk, (size_t)b->capforkv * sizeof *b->forkk);
    b->forkv = ls_xrealloc(b->forkv, (size_t)b->capforkv);
  }
  b->forkk[b->nforkv] = e;
  b->forkv[b->nforkv++] = (unsigned char)ok;
}

static void fork_scan(struct builder *b, ls_node *n, int *any) {
  if (!n)
    return;
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule_fork)
    *any = 1;
  if (n->kind == CXCursor_VarDecl && n->nkids && is_expr(n->kids[n->nkids - 1]->kind))
    fork_note(b, n->ent, is_fork_call(n->kids[n->nkids - 1]));
  else if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2) {
    ls_node *l = ls_strip_casts(n->kids[0]);
    if (l && l->kind == CXCursor_DeclRefExpr)
      fork_note(b, l->ent, is_fork_call(n->kids[1]));
  } else if ((n->kind == CXCursor_CompoundAssignOperator && n->nkids == 2) || ls_unary_may_write(n)) {
    ls_node *l = ls_strip_casts(n->kids[0]);
    if (l && l->kind == CXCursor_DeclRefExpr)
      fork_note(b, l->ent, 0);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    fork_scan(b, n->kids[i], any);
}

static int fork_value(struct builder *b, ls_node *x) {
  x = ls_strip_casts(x);
  if (!x)
    return 0;
  if (x->kind == CXCursor_BinaryOperator && x->op == CXBinaryOperator_Assign && x->nkids == 2)
    return is_fork_call(x->kids[1]); /* (pid = fork()) */
  if (x->kind == CXCursor_CallExpr)
    return is_fork_call(x);
  if (x->kind != CXCursor_DeclRefExpr || !x->ent || x->ent->kind != LS_ENT_VAR)
    return 0;
  if (b->nforkv < 0) {
    int any = 0;
    b->nforkv = 0;
    fork_scan(b, b->f->body, &any);
    if (!any)
      b->nforkv = 0; /* no fork_like call: no local holds one's result */
  }
  for (int i = 0; i < b->nforkv; i++)
    if (b->forkk[i] == x->ent)
      return b->forkv[i];
  return 0;
}

static int is_zero(const ls_node *n) {
  n = ls_strip_casts((ls_node *)n);
  return n && n->ilit && n->ival == 0;
}

/* Which side of condition c runs in a fork_like call's child: 0 the true side (pid == 0),
 * 1 the false side (pid != 0, pid), -1 neither */
static int fork_child_side(struct builder *b, ls_node *c) {
  c = ls_strip_casts(c);
  if (!c)
    return -1;
  if (c->kind == CXCursor_BinaryOperator && c->nkids == 2 &&
      (c->op == CXBinaryOperator_EQ || c->op == CXBinaryOperator_NE)) {
    ls_node *x = is_zero(c->kids[1]) ? c->kids[0] : is_zero(c->kids[0]) ? c->kids[1] : NULL;
    if (!x || !fork_value(b, x))
      return -1;
    return c->op == CXBinaryOperator_EQ ? 0 : 1;
  }
  return fork_value(b, c) ? 1 : -1;
}

static void expr(struct builder *b, ls_node *n) {
  if (!n)
    return;
  if (is_stmt(n->kind)) {
    stmt(b, n);
    return;
  }
  switch (n->kind) {
  case CXCursor_LambdaExpr:
    return;
  case CXCursor_BinaryOperator:
    if ((n->op == CXBinaryOperator_LAnd || n->op == CXBinaryOperator_LOr) && n->nkids == 2) {
      expr(b, n->kids[0]);
      ls_block *from = cur(b), *rhs = new_block(b), *join = new_block(b);
      from->cond = n->kids[0];
      if (n->op == CXBinaryOperator_LAnd) {
        edge(b, from, rhs);
        edge(b, from, join);
      } else {
        edge(b, from, join);
        edge(b, from, rhs);
      }
      b->cur = rhs;
      expr(b, n->kids[1]);
      edge(b, cur(b), join);
      b->cur = join;
      return;
    }
    break;
  case CXCursor_ConditionalOperator:
    if (n->nkids >= 2) {
      ls_block *t = new_block(b), *e = new_block(b), *join = new_block(b);
      cond(b, n->kids[0], t, e);
      b->cur = t;
      if (n->nkids == 3)
        expr(b, n->kids[1]);
      edge(b, cur(b), join);
      b->cur = e;
      expr(b, n->kids[n->nkids - 1]);
      edge(b, cur(b), join);
      b->cur = join;
      return;
    }
    break;
  default:
    break;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    expr(b, n->kids[i]);
  switch (n->kind) {
  case CXCursor_CallExpr:
    item(b, n);
    if (ls_nx(n)->dtor) { /* a temporary with a user destructor: destroyed at once */
      size_t mark = b->dtors.n;
      ls_vec_push(&b->dtors, n->x->dtor);
      emit_dtors(b, mark, n->file, n->line, n->col);
      b->dtors.n = mark;
    }
    if (n->ent && n->ent->def && n->ent->def->throws && n->ent->def != b->f) {
      /* a callee of the program that may throw: its exception takes the throw's way out,
       * the normal path goes on in a block of its own (noreturn: there is none) */
      ls_block *k = cur(b);
      throw_edges(b, n);
      if (n->ent->def->noreturn) {
        b->cur = NULL;
      } else {
        b->cur = new_block(b);
        edge(b, k, b->cur);
      }
    } else if (n->ent && is_noreturn_call(n)) {
      /* a job-wide abort takes every rank down: no rank is left waiting in a collective */
      int all = (n->ent->rule && !strcmp(n->ent->rule->kind_name, "comm_abort")) ||
                (n->ent->def && n->ent->def->kills_all);
      edge(b, cur(b), all ? b->f->killall : b->f->abort_blk);
      b->cur = NULL;
    }
    break;
  case CXCursor_CXXThrowExpr:
    item(b, n);
    throw_edges(b, n);
    b->cur = NULL;
    break;
  case CXCursor_BinaryOperator:
    if (n->op == CXBinaryOperator_Assign)
      item(b, n);
    break;
  case CXCursor_CompoundAssignOperator:
  case CXCursor_VarDecl:
    item(b, n);
    break;
  default:
    break;
  }
}

static void cond(struct builder *b, ls_node *c, ls_block *t, ls_block *f) {
  c = unwrap(c);
  if (c && c->kind == CXCursor_BinaryOperator && c->nkids == 2 &&
      (c->op == CXBinaryOperator_LAnd || c->op == CXBinaryOperator_LOr)) {
    ls_block *mid = new_block(b);
    if (c->op == CXBinaryOperator_LAnd)
      cond(b, c->kids[0], mid, f);
    else
      cond(b, c->kids[0], t, mid);
    b->cur = mid;
    cond(b, c->kids[1], t, f);
    return;
  }
  if (c && c->kind == CXCursor_UnaryOperator && c->op == CXUnaryOperator_LNot && c->nkids == 1) {
    cond(b, c->kids[0], f, t);
    return;
  }
  if (!c || c->ilit) { /* constant: while (1), do { } while (0), for (;;) */
    edge(b, cur(b), !c || c->ival ? t : f);
    b->cur = NULL;
    return;
  }
  int child = fork_child_side(b, c);
  if (child >= 0) { /* the ranks go on in the parent */
    expr(b, c);
    edge(b, cur(b), child ? t : f);
    b->cur = NULL;
    return;
  }
  expr(b, c);
  ls_block *k = cur(b);
  k->cond = c;
  edge(b, k, t);
  edge(b, k, f);
  b->cur = NULL;
}

static void push_jump(struct builder *b, ls_block *brk, ls_block *cont) {
  if (b->njumps == b->capjumps) {
    b->capjumps = b->capjumps ? 2 * b->capjumps : 8;
    b->jumps = ls_xrealloc(b->jumps, b->capjumps * sizeof *b->jumps);
  }
  b->jumps[b->njumps++] = (struct jump){brk, cont, b->dtors.n};
}

static ls_block *label_block(struct builder *b, const char *name) {
  for (size_t i = 0; i < b->nlabels; i++)
    if (!strcmp(b->labels[i].name, name))
      return b->labels[i].b;
  if (b->nlabels == b->caplabels) {
    b->caplabels = b->caplabels ? 2 * b->caplabels : 4;
    b->labels = ls_xrealloc(b->labels, b->caplabels * sizeof *b->labels);
  }
  ls_block *k = new_block(b);
  b->labels[b->nlabels++] = (struct label){name, k};
  return k;
}

static void loop(struct builder *b, ls_node *c, ls_node *body, ls_node *inc, int do_while) {
  ls_block *head = new_block(b), *bodyb = new_block(b), *exit = new_block(b);
  ls_block *contb = inc || do_while ? new_block(b) : head;
  edge(b, cur(b), do_while ? bodyb : head);
  b->cur = head;
  head->is_loop = 1;
  if (!do_while)
    cond(b, c, bodyb, exit);
  else
    edge(b, head, bodyb); /* head unused for do-while: keeps the shape uniform */
  push_jump(b, exit, contb);
  b->cur = bodyb;
  stmt(b, body);
  b->njumps--;
  edge(b, b->cur, contb);
  if (contb != head) {
    b->cur = contb;
    if (do_while) {
      contb->is_loop = 1;
      cond(b, c, bodyb, exit);
    } else {
      expr(b, inc);
      edge(b, cur(b), head);
    }
  }
  b->cur = exit;
}

static void stmt(struct builder *b, ls_node *n) {
  if (!n)
    return;
  switch (n->kind) {
  case CXCursor_CompoundStmt: {
    size_t mark = b->dtors.n;
    for (unsigned i = 0; i < n->nkids; i++)
      stmt(b, n->kids[i]);
    if (b->cur)
      emit_dtors(b, mark, n->file, ls_nx(n)->eline, ls_nx(n)->ecol);
    b->dtors.n = mark;
    return;
  }
  case CXCursor_DeclStmt:
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *v = n->kids[i];
      if (!v)
        continue;
      expr(b, v);
      if (v->kind == CXCursor_VarDecl && ls_nx(v)->dtor)
        ls_vec_push(&b->dtors, v->x->dtor);
    }
    return;
  case CXCursor_IfStmt: {
    if (n->nkids < 2)
      break;
    ls_block *t = new_block(b), *join = new_block(b);
    ls_block *e = n->nkids > 2 ? new_block(b) : join;
    cond(b, n->kids[0], t, e);
    b->cur = t;
    stmt(b, n->kids[1]);
    edge(b, b->cur, join);
    if (n->nkids > 2) {
      b->cur = e;
      stmt(b, n->kids[2]);
      edge(b, b->cur, join);
    }
    b->cur = join;
    return;
  }
  case CXCursor_WhileStmt:
    if (n->nkids >= 2) {
      loop(b, n->kids[n->nkids - 2], n->kids[n->nkids - 1], NULL, 0);
      return;
    }
    break;
  case CXCursor_DoStmt:
    if (n->nkids == 2) {
      loop(b, n->kids[1], n->kids[0], NULL, 1);
      return;
    }
    break;
  case CXCursor_ForStmt:
    if (n->nkids == 4) {
      stmt(b, n->kids[0]);
      loop(b, n->kids[1], n->kids[3], n->kids[2], 0);
      return;
    }
    break;
  case CXCursor_CXXForRangeStmt:
    if (n->nkids >= 2) {
      for (unsigned i = 0; i + 1 < n->nkids; i++)
        expr(b, n->kids[i]);
      ls_block *head = new_block(b), *bodyb = new_block(b), *exit = new_block(b);
      edge(b, cur(b), head);
      head->cond = n->kids[n->nkids - 2];
      head->is_loop = 1;
      edge(b, head, bodyb);
      edge(b, head, exit);
      push_jump(b, exit, head);
      b->cur = bodyb;
      stmt(b, n->kids[n->nkids - 1]);
      b->njumps--;
      edge(b, b->cur, head);
      b->cur = exit;
      return;
    }
    break;
  case CXCursor_SwitchStmt: {
    if (n->nkids < 2)
      break;
    expr(b, n->kids[0]);
    ls_block *disp = cur(b), *exit = new_block(b);
    disp->cond = n->kids[0];
    ls_block *osw = b->sw;
    int odef = b->sw_default;
    b->sw = disp;
    b->sw_default = 0;
    push_jump(b, exit, b->njumps ? b->jumps[b->njumps - 1].cont : NULL);
    b->cur = NULL;
    stmt(b, n->kids[n->nkids - 1]);
    b->njumps--;
    edge(b, b->cur, exit);
    if (!b->sw_default)
      edge(b, disp, exit);
    b->sw = osw;
    b->sw_default = odef;
    b->cur = exit;
    return;
  }
  case CXCursor_CaseStmt:
  case CXCursor_DefaultStmt: {
    ls_block *k = new_block(b);
    edge(b, b->cur, k); /* fall-through from the previous case */
    /* case 0 of a fork_like result: the child's, no rank jumps there */
    if (!(n->kind == CXCursor_CaseStmt && n->nkids >= 2 && is_zero(n->kids[0]) && b->sw->cond &&
          fork_value(b, b->sw->cond)))
      edge(b, b->sw, k);
    if (n->kind == CXCursor_DefaultStmt)
      b->sw_default = 1;
    b->cur = k;
    if (n->nkids)
      stmt(b, n->kids[n->nkids - 1]);
    return;
  }
  case CXCursor_BreakStmt:
  case CXCursor_ContinueStmt:
    if (b->njumps) {
      struct jump *j = &b->jumps[b->njumps - 1];
      ls_block *to = n->kind == CXCursor_BreakStmt ? j->brk : j->cont;
      emit_dtors(b, j->scope, n->file, n->line, n->col);
      edge(b, cur(b), to);
    }
    b->cur = NULL;
    return;
  case CXCursor_ReturnStmt: {
    for (unsigned i = 0; i < n->nkids; i++)
      expr(b, n->kids[i]);
    item(b, n);
    emit_dtors(b, 0, n->file, n->line, n->col);
    ls_block *k = cur(b);
    k->term = n;
    edge(b, k, b->f->exit);
    b->cur = NULL;
    return;
  }
  case CXCursor_GotoStmt:
    if (n->text)
      edge(b, cur(b), label_block(b, n->text));
    b->cur = NULL;
    return;
  case CXCursor_LabelStmt: {
    ls_block *k = label_block(b, n->text ? n->text : "");
    edge(b, b->cur, k);
    b->cur = k;
    if (n->nkids)
      stmt(b, n->kids[n->nkids - 1]);
    return;
  }
  case CXCursor_CXXTryStmt: {
    ls_block *pre = cur(b), *join = new_block(b);
    unsigned nh = n->nkids ? n->nkids - 1 : 0;
    if (b->ntries == b->captries) {
      b->captries = b->captries ? 2 * b->captries : 4;
      b->tries = ls_xrealloc(b->tries, b->captries * sizeof *b->tries);
    }
    struct try_ctx tc = {.handlers = ls_alloc(b->p->arena, (nh + 1) * sizeof(ls_block *)), .nh = nh,
                         .scope = b->dtors.n};
    for (unsigned i = 0; i < nh; i++) {
      ls_node *h = n->kids[i + 1];
      tc.handlers[i] = new_block(b);
      tc.catch_all |= h && h->nkids == 1; /* catch (...) declares no exception variable */
    }
    size_t t = b->ntries;
    b->tries[b->ntries++] = tc;
    if (n->nkids)
      stmt(b, n->kids[0]);
    edge(b, b->cur, join);
    /* nothing seen to throw (a library call may): the handlers hang off the body's start */
    if (!b->tries[t].used)
      for (unsigned i = 0; i < nh; i++)
        edge(b, pre, b->tries[t].handlers[i]);
    b->tries[t].in_handler = 1; /* a rethrow goes to the enclosing try */
    for (unsigned i = 0; i < nh; i++) {
      ls_node *h = n->kids[i + 1];
      b->cur = b->tries[t].handlers[i];
      if (h && h->nkids)
        stmt(b, h->kids[h->nkids - 1]);
      edge(b, b->cur, join);
    }
    b->ntries = t;
    b->cur = join;
    return;
  }
  case CXCursor_NullStmt:
    return;
  default:
    break;
  }
  if (is_stmt(n->kind) && n->kind != CXCursor_CompoundStmt && !is_expr(n->kind) &&
      n->kind != CXCursor_DeclStmt) {
    for (unsigned i = 0; i < n->nkids; i++)
      stmt(b, n->kids[i]);
    return;
  }
  expr(b, n);
}

void ls_cfg_build(ls_program *p, ls_func *f) {
  struct builder b = {.p = p, .f = f, .nforkv = -1};
  f->throws = NULL;
  f->entry = new_block(&b);
  f->exit = new_block(&b);
  f->abort_blk = new_block(&b);
  f->vexit = new_block(&b);
  f->killall = new_block(&b);
  b.cur = f->entry;
  stmt(&b, f->body);
  if (b.cur)
    edge(&b, b.cur, f->exit); /* falls off the closing brace */
  /* The abort sink is not joined to the virtual exit: post-dominance is about the ranks
   * that survive, so an error exit (exit(), throw) does not move a branch's join point. */
  edge(&b, f->exit, f->vexit);
  f->blocks = ls_alloc(p->arena, b.blocks.n * sizeof *f->blocks);
  memcpy(f->blocks, b.blocks.v, b.blocks.n * sizeof *f->blocks);
  f->nblocks = (int)b.blocks.n;
  free(b.blocks.v);
  free(b.jumps);
  free(b.labels);
  free(b.dtors.v);
  free(b.tries);
  free(b.forkk);
  free(b.forkv);
  forward_order(p, f);
}

/* A work list in f->fwd's order (always the earliest pending block): a block comes after
 * all its predecessors but those on back edges, and a loop's blocks before what follows
 * it, so each block is stepped once and a loop again only while its state grows. (First
 * in, first out took 1.4-1.7 steps per block on bench's 30k-block function.) */
void ls_cfg_forward(const ls_func *f, int W, uint64_t *in, uint64_t *st, ls_cfg_step *step, void *ctx) {
  int n = f->nfwd, nw = (n + 63) / 64;
  /* pending blocks by position: at first all, so that each is stepped once in order */
  uint64_t *pend = calloc((size_t)nw + 1, sizeof *pend);
  if (!pend)
    abort();
  for (int w = 0; w < nw; w++)
    pend[w] = w < n / 64 ? ~0ull : (1ull << (n % 64)) - 1;
  int lo = 0; /* no pending block before this position */
  for (;;) {
    int w = lo / 64;
    uint64_t bits = w < nw ? pend[w] & (~0ull << (lo % 64)) : 0;
    while (!bits && ++w < nw)
      bits = pend[w];
    if (!bits)
      break;
    int i = w * 64 + __builtin_ctzll(bits);
    pend[w] &= ~(1ull << (i % 64));
    lo = i + 1;
    ls_block *k = f->fwd[i];
    memcpy(st, &in[(size_t)k->id * (size_t)W], (size_t)W * sizeof *st);
    step(ctx, k, st);
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      uint64_t *ti = &in[(size_t)t->id * (size_t)W];
      int changed = 0;
      for (int j = 0; j < W; j++)
        if ((ti[j] | st[j]) != ti[j]) {
          ti[j] |= st[j];
          changed = 1;
        }
      if (changed) {
        int p = f->fpos[t->id];
        pend[p / 64] |= 1ull << (p % 64);
        if (p < lo)
          lo = p;
      }
    }
  }
  free(pend);
}

/* The order a forward dataflow visits blocks in (ls_cfg_forward), and noreturn (the
 * normal exit is not among what the entry reaches). Reverse postorder alone may put what
 * follows a loop before the loop's body (both are the loop condition's successors), and a
 * dataflow in that order goes over the rest of the function again each time the loop's
 * state grows: so each strongly connected component (a loop with what is nested in it) is
 * made one run, the components in topological order, each in reverse postorder inside.
 * One iterative depth-first walk (Tarjan's, for 30k-block functions) gives both. */
static void forward_order(ls_program *p, ls_func *f) {
  int B = f->nblocks;
  struct fr { ls_block *b; int i; };
  /* idx, low, comp per block id, stk and cnt per block reached; the walk; the postorder */
  int *idx = malloc((5 * (size_t)B + 1) * sizeof *idx);
  struct fr *call = malloc((size_t)B * sizeof *call);
  ls_block **order = malloc((size_t)B * sizeof *order);
  if (!idx || !call || !order)
    abort();
  int *low = idx + B, *comp = low + B, *stk = comp + B, *cnt = stk + B;
  for (int i = 0; i < B; i++)
    idx[i] = -1;
  int next = 0, sp = 0, cp = 0, ncomp = 0, npost = 0;
  idx[f->entry->id] = low[f->entry->id] = next++;
  stk[sp++] = f->entry->id;
  comp[f->entry->id] = -1; /* -1: on Tarjan's stack */
  call[cp++] = (struct fr){f->entry, 0};
  while (cp) {
    struct fr *t = &call[cp - 1];
    if (t->i < t->b->nsucc) {
      ls_block *s = t->b->succ[t->i++];
      if (idx[s->id] < 0) {
        idx[s->id] = low[s->id] = next++;
        stk[sp++] = s->id;
        comp[s->id] = -1;
        call[cp++] = (struct fr){s, 0};
      } else if (comp[s->id] == -1 && idx[s->id] < low[t->b->id]) {
        low[t->b->id] = idx[s->id];
      }
      continue;
    }
    ls_block *k = t->b;
    cp--;
    order[npost++] = k; /* postorder */
    if (low[k->id] == idx[k->id]) { /* a component, after every component it reaches */
      int w;
      do {
        w = stk[--sp];
        comp[w] = ncomp;
      } while (w != k->id);
      ncomp++;
    }
    if (cp && low[k->id] < low[call[cp - 1].b->id])
      low[call[cp - 1].b->id] = low[k->id];
  }
  /* components by topological rank (ncomp-1-comp), a stable counting sort of the reverse
   * postorder */
  memset(cnt, 0, ((size_t)ncomp + 1) * sizeof *cnt);
  for (int i = 0; i < npost; i++)
    cnt[ncomp - comp[order[i]->id]]++;
  for (int r = 1; r <= ncomp; r++)
    cnt[r] += cnt[r - 1];
  f->fwd = ls_alloc(p->arena, ((size_t)npost + 1) * sizeof *f->fwd);
  f->fpos = ls_alloc(p->arena, ((size_t)B + 1) * sizeof *f->fpos);
  f->nfwd = npost;
  for (int i = npost - 1; i >= 0; i--) {
    int at = cnt[ncomp - 1 - comp[order[i]->id]]++;
    f->fwd[at] = order[i];
    f->fpos[order[i]->id] = at;
  }
  f->noreturn = idx[f->exit->id] < 0;
  f->kills_all = f->noreturn && idx[f->abort_blk->id] < 0 && idx[f->killall->id] >= 0;
  free(idx);
  free(call);
  free(order);
}

/* ---- post-dominators ---- */
static ls_block *intersect(ls_block *a, ls_block *b) {
  while (a != b) {
    while (a->po < b->po)
      a = a->ipdom;
    while (b->po < a->po)
      b = b->ipdom;
  }
  return a;
}

void ls_cfg_postdom(ls_func *f) {
  int n = f->nblocks;
  ls_block **order = malloc((size_t)n * sizeof *order);
  struct fr { ls_block *b; int i; } *st = malloc((size_t)n * sizeof *st);
  if (!order || !st)
    abort();
  for (int i = 0; i < n; i++) {
    f->blocks[i]->po = -1;
    f->blocks[i]->ipdom = NULL;
    f->blocks[i]->mark = 0;
  }
  /* postorder of the reverse graph from vexit (iterative DFS over preds) */
  int no = 0, sp = 0;
  st[sp++] = (struct fr){f->vexit, 0};
  f->vexit->mark = 1;
  while (sp) {
    struct fr *t = &st[sp - 1];
    if (t->i < t->b->npred) {
      ls_block *q = t->b->pred[t->i++];
      if (!q->mark) {
        q->mark = 1;
        st[sp++] = (struct fr){q, 0};
      }
    } else {
      t->b->po = no;
      order[no++] = t->b;
      sp--;
    }
  }
  f->vexit->ipdom = f->vexit;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = no - 2; i >= 0; i--) { /* reverse postorder, root excluded */
      ls_block *k = order[i], *nd = NULL;
      for (int s = 0; s < k->nsucc; s++) {
        ls_block *q = k->succ[s];
        if (q->po < 0 || !q->ipdom)
          continue;
        nd = nd ? intersect(q, nd) : q;
      }
      if (nd && k->ipdom != nd) {
        k->ipdom = nd;
        changed = 1;
      }
    }
  }
  /* blocks that never reach an exit (infinite loops): post-dominated only by vexit */
  for (int i = 0; i < n; i++)
    if (!f->blocks[i]->ipdom)
      f->blocks[i]->ipdom = f->vexit;
  f->vexit->ipdom = NULL;
  free(order);
  free(st);
}

/* ---- dump for tests: blocks renumbered in preorder from the entry ---- */
/* The dumps' block numbers: preorder from the entry, successors in order, the sinks
 * (EXIT, VEXIT, ABORT) unnumbered. num: by block id (-1: none); order: the numbered blocks. */
static int dump_numbers(const ls_func *f, int *num, ls_block **order) {
  int n = f->nblocks, cnt = 0, sp = 0, ne = 1;
  for (int i = 0; i < n; i++)
    ne += f->blocks[i]->nsucc;
  ls_block **st = malloc((size_t)ne * sizeof *st);
  if (!st)
    abort();
  for (int i = 0; i < n; i++)
    num[i] = -1;
  st[sp++] = f->entry;
  while (sp) {
    ls_block *k = st[--sp];
    if (num[k->id] >= 0 || k == f->exit || k == f->abort_blk || k == f->vexit || k == f->killall)
      continue;
    num[k->id] = cnt;
    order[cnt++] = k;
    for (int i = k->nsucc - 1; i >= 0; i--)
      st[sp++] = k->succ[i];
  }
  free(st);
  return cnt;
}

static void dump_name(const ls_func *f, const int *num, const ls_block *q, FILE *out) {
  if (q == f->exit)
    fprintf(out, "EXIT");
  else if (q == f->vexit)
    fprintf(out, "VEXIT");
  else if (q == f->abort_blk || q == f->killall)
    fprintf(out, "ABORT");
  else
    fprintf(out, "B%d", num[q->id]);
}

void ls_cfg_dump(const ls_func *f, FILE *out) {
  int *num = malloc((size_t)f->nblocks * sizeof *num);
  ls_block **order = malloc((size_t)f->nblocks * sizeof *order);
  if (!num || !order)
    abort();
  int cnt = dump_numbers(f, num, order);
  for (int i = 0; i < cnt; i++) {
    ls_block *k = order[i];
    fprintf(out, "B%d", i);
    for (int j = 0; j < k->nitems; j++)
      if (k->items[j]->kind == CXCursor_CallExpr && k->items[j]->text)
        fprintf(out, " %s()", k->items[j]->text);
    if (k->cond)
      fprintf(out, " ?");
    fprintf(out, " ->");
    for (int s = 0; s < k->nsucc; s++) {
      fputc(' ', out);
      dump_name(f, num, k->succ[s], out);
    }
    fputc('\n', out);
  }
  free(num);
  free(order);
}

void ls_cfg_dump_order(const ls_func *f, FILE *out) {
  int *num = malloc((size_t)f->nblocks * sizeof *num);
  ls_block **order = malloc((size_t)f->nblocks * sizeof *order);
  if (!num || !order)
    abort();
  dump_numbers(f, num, order);
  for (int i = 0; i < f->nfwd; i++) {
    if (i)
      fputc(' ', out);
    dump_name(f, num, f->fwd[i], out);
  }
  fputc('\n', out);
  free(num);
  free(order);
}

/* Is x n or inside n? */
int ls_node_contains(const ls_node *n, const ls_node *x) {
  if (n == x)
    return 1;
  for (unsigned i = 0; n && i < n->nkids; i++)
    if (ls_node_contains(n->kids[i], x))
      return 1;
  return 0;
}
