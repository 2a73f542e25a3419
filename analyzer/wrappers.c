/* wrappers.c — thin wrappers become the API call they forward to. A function or method whose
 * body does nothing but one collective, send/recv, group start or group end (plus checking
 * and returning its result) gets a rules entry of that call's kind for its callers, with the
 * target's argument roles at the wrapper's own parameters; the base methods it overrides (a
 * call through the API class) and the function-pointer fields assigned an API function (a
 * stub table) get one too. One pass over the converted bodies, before the checks.
 * Non-goals: wrappers that compute an argument from their parameters (`n * 2`), loop, or
 * call the API conditionally stay ordinary functions (their summaries still count). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static int forward_kind(const ls_rule_fn *r) {
  return r->seq_member || r->kind == LS_KIND_P2P || r->kind == LS_KIND_GROUP_START || r->kind == LS_KIND_GROUP_END;
}

static int fp_role(enum ls_role r) { /* what the fingerprint or the argument check reads */
  return r == LS_ROLE_COUNT || r == LS_ROLE_DTYPE || r == LS_ROLE_ROOT || r == LS_ROLE_REDOP || r == LS_ROLE_PEER ||
         r == LS_ROLE_COMM || r == LS_ROLE_COUNTS;
}

static ls_node *strip(ls_node *n) {
  while (n && n->nkids == 1 &&
         (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr || n->kind == CXCursor_CStyleCastExpr ||
          n->kind == CXCursor_CXXStaticCastExpr || n->kind == CXCursor_CXXFunctionalCastExpr ||
          n->kind == CXCursor_CXXConstCastExpr || n->kind == CXCursor_CXXReinterpretCastExpr))
    n = n->kids[0];
  return n;
}

/* An error exit's abort (MPI_Abort, ncclCommAbort) or a call that does not return. */
static int is_abort(const ls_entity *e) {
  return e->rule_noreturn || (e->rule && e->rule->kind == LS_KIND_COMM_ABORT);
}

/* A callee defined in the program that may issue something of its own: one that calls an
 * API function other than an abort, or another defined function (one level deep: the
 * helpers of error checks, a message and MPI_Abort, call neither). */
static int may_issue(const ls_node *n, const ls_func *self) {
  if (!n)
    return 0;
  if (n->kind == CXCursor_CallExpr && n->ent &&
      ((n->ent->rule && !is_abort(n->ent)) || (n->ent->def && n->ent->def != self)))
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (may_issue(n->kids[i], self))
      return 1;
  return 0;
}

static int writes_param(ls_node *lhs) {
  lhs = strip(lhs);
  return lhs && lhs->kind == CXCursor_DeclRefExpr && lhs->ent && lhs->ent->kind == LS_ENT_PARAM;
}

struct scan {
  ls_func *f;
  ls_node *api; /* the one forwarded call */
  int bad;
};

/* Walks the body in evaluation order; cond: inside a part that runs only sometimes. Before
 * the API call nothing may leave or branch; after it, error handling may do anything but
 * issue more. */
static void visit(struct scan *s, ls_node *n, int cond) {
  if (!n || s->bad)
    return;
  switch (n->kind) {
  case CXCursor_CallExpr:
    for (unsigned i = 0; i < n->nkids; i++)
      visit(s, n->kids[i], cond);
    if (!n->ent) {
      s->bad = 1; /* a call through an unknown pointer */
    } else if (n->ent->rule && is_abort(n->ent) && s->api && cond) {
      /* the error path after the call may abort */
    } else if (n->ent->rule) {
      if (!forward_kind(n->ent->rule) || s->api || cond)
        s->bad = 1;
      else
        s->api = n;
    } else if (n->ent->def) {
      ls_func *g = n->ent->def;
      if (!g->wr_issues)
        g->wr_issues = may_issue(g->body, g) ? 2 : 1;
      if (g == s->f || g->wr_issues == 2)
        s->bad = 1;
    } else if (n->ent->rule_noreturn && !s->api) {
      s->bad = 1;
    }
    return;
  case CXCursor_IfStmt:
  case CXCursor_SwitchStmt:
  case CXCursor_ConditionalOperator:
    if (n->nkids)
      visit(s, n->kids[0], cond);
    if (!s->api)
      s->bad = 1;
    for (unsigned i = 1; i < n->nkids; i++)
      visit(s, n->kids[i], 1);
    return;
  case CXCursor_DoStmt:
    if (n->nkids == 2 && n->kids[1] && n->kids[1]->ilit && n->kids[1]->ival == 0) { /* a macro's do { } while (0) */
      visit(s, n->kids[0], cond);
      return;
    }
    /* fall through */
  case CXCursor_WhileStmt:
  case CXCursor_ForStmt:
  case CXCursor_CXXForRangeStmt:
  case CXCursor_LabelStmt:
  case CXCursor_CXXCatchStmt:
    if (!s->api)
      s->bad = 1;
    for (unsigned i = 0; i < n->nkids; i++)
      visit(s, n->kids[i], 1);
    return;
  case CXCursor_ReturnStmt:
  case CXCursor_CXXThrowExpr:
    for (unsigned i = 0; i < n->nkids; i++)
      visit(s, n->kids[i], cond);
    if (!s->api)
      s->bad = 1;
    return;
  case CXCursor_GotoStmt:
  case CXCursor_BreakStmt:
  case CXCursor_ContinueStmt:
  case CXCursor_IndirectGotoStmt:
    if (!s->api)
      s->bad = 1;
    return;
  case CXCursor_BinaryOperator:
    if (n->nkids == 2 && n->op == CXBinaryOperator_Assign && writes_param(n->kids[0]))
      s->bad = 1;
    if (n->nkids == 2 && (n->op == CXBinaryOperator_LAnd || n->op == CXBinaryOperator_LOr)) {
      visit(s, n->kids[0], cond);
      visit(s, n->kids[1], 1);
      return;
    }
    break;
  case CXCursor_UnaryOperator: /* n++ or &n of a parameter: it may no longer be what the caller passed */
    if (ls_unary_may_write(n) && writes_param(n->kids[0]))
      s->bad = 1;
    break;
  case CXCursor_CompoundAssignOperator:
    if (n->nkids == 2 && writes_param(n->kids[0]))
      s->bad = 1;
    break;
  case CXCursor_LambdaExpr:
    return; /* a function of its own: creating it issues nothing */
  default:
    break;
  }
  for (unsigned i = 0; i < n->nkids; i++)
    visit(s, n->kids[i], cond);
}

/* Does n read a parameter or a local of the function (whose value a call site cannot see)? */
static int reads_local(const ls_node *n) {
  if (!n)
    return 0;
  if (n->ent && (n->ent->kind == LS_ENT_PARAM || n->ent->kind == LS_ENT_VAR) &&
      (n->kind == CXCursor_DeclRefExpr || n->kind == CXCursor_MemberRefExpr))
    return 1;
  for (unsigned i = 0; i < n->nkids; i++)
    if (reads_local(n->kids[i]))
      return 1;
  return 0;
}

static int same_wrapper(const ls_rule_fn *a, const ls_rule_fn *b) {
  if (a->as != b->as || a->nargs != b->nargs)
    return 0;
  for (int i = 0; i < a->nargs; i++)
    if (a->roles[i] != b->roles[i])
      return 0;
  for (int i = 0; i < a->as->nargs; i++) {
    const char *x = a->as_fixed ? a->as_fixed[i] : NULL, *y = b->as_fixed ? b->as_fixed[i] : NULL;
    if (a->as_arg[i] != b->as_arg[i] || !x != !y || (x && strcmp(x, y)))
      return 0;
  }
  return 1;
}

/* f's wrapper entry, or NULL when f is not a thin wrapper. */
static ls_rule_fn *thin_wrapper(ls_program *p, ls_func *f, struct ls_sbuf *nb) {
  struct scan s = {.f = f};
  visit(&s, f->body, 0);
  if (s.bad || !s.api)
    return NULL;
  const ls_rule_fn *t = s.api->ent->rule;
  /* a wrapper of a wrapper is a wrapper of what that one forwards to */
  const ls_rule_fn *root = t->as ? t->as : t;
  int *param = ls_alloc(p->arena, (size_t)(root->nargs + 1) * sizeof *param);
  const char **fixed = ls_alloc(p->arena, (size_t)(root->nargs + 1) * sizeof *fixed);
  int nfixed = 0;
  for (int r = 0; r < root->nargs; r++) {
    param[r] = -1;
    if (t->as && t->as_fixed && t->as_fixed[r])
      fixed[r] = t->as_fixed[r], nfixed++;
  }
  for (int i = 0; i < t->nargs; i++) {
    ls_node *a = (unsigned)i < s.api->nkids ? strip(s.api->kids[i]) : NULL;
    int j = -1;
    for (int k = 0; a && a->kind == CXCursor_DeclRefExpr && a->ent && k < f->nparams; k++)
      if (f->params[k] == a->ent)
        j = k;
    const char *txt = NULL;
    if (j < 0 && fp_role(t->roles[i])) {
      if (!a || reads_local(a)) /* computed from what the caller passed: not a plain forward */
        return NULL;
      txt = ls_arg_norm(p, nb, a);
    }
    for (int r = 0; r < root->nargs; r++)
      if (t->as ? t->as_arg[r] == i : r == i) {
        param[r] = j;
        if (txt)
          fixed[r] = txt, nfixed++;
      }
  }
  ls_rule_fn *w = ls_alloc(p->arena, sizeof *w);
  ls_rule_wrapper_init(w, p->arena, f->name, root, param, f->nparams);
  w->in_place_buf = w->in_place_count = w->in_place_dtype = -1; /* call sites did not keep the spelling */
  w->as_fixed = nfixed ? fixed : NULL;
  return w;
}

/* entities that several definitions give a rule: the first one's, unless they disagree */
struct claim { ls_entity *e; const ls_rule_fn *r; int conflict; };
static void claim(ls_vec *v, ls_entity *e, const ls_rule_fn *r) {
  for (size_t i = 0; i < v->n; i++) {
    struct claim *c = v->v[i];
    if (c->e == e) {
      c->conflict |= !(c->r == r || (r && c->r && same_wrapper(c->r, r)));
      return;
    }
  }
  struct claim *c = malloc(sizeof *c);
  if (!c)
    abort();
  *c = (struct claim){e, r, 0};
  ls_vec_push(v, c);
}

/* `tab.fn = ncclAllReduce` (or `&ncclAllReduce`, cast or not): a call through the field is a
 * call of that function; any other function assigned to it is a conflict. */
static void scan_fields(ls_program *p, ls_node *n, ls_vec *fields) {
  if (!n)
    return;
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 && n->kids[0] &&
      n->kids[0]->kind == CXCursor_MemberRefExpr && n->kids[0]->ent && n->kids[0]->ent->kind == LS_ENT_FIELD) {
    ls_node *v = strip(n->kids[1]);
    if (v && v->kind == CXCursor_UnaryOperator && v->op == CXUnaryOperator_AddrOf && v->nkids == 1)
      v = strip(v->kids[0]);
    if (v && v->kind == CXCursor_DeclRefExpr && v->ent && v->ent->kind == LS_ENT_FUNC) {
      char key[1024];
      snprintf(key, sizeof key, "fp:%s", n->kids[0]->ent->key);
      ls_entity *fe = ls_entity_get(p, key, n->kids[0]->ent->name, LS_ENT_FUNC);
      claim(fields, fe, v->ent->rule && forward_kind(v->ent->rule) ? v->ent->rule : NULL);
    }
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan_fields(p, n->kids[i], fields);
}

int ls_wrappers_find(ls_program *p) {
  int found = 0;
  struct ls_sbuf nb = {0};
  ls_vec bases = {0}, fields = {0};
  /* a few rounds: a wrapper of a wrapper is found once the inner one is */
  for (int round = 0, more = 1; round < 3 && more; round++) {
    more = 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
      ls_func *f = p->funcs.v[i];
      if (!f->body || !f->ent || f->ent->rule || !strncmp(f->ent->key, "lambda:", 7))
        continue;
      ls_rule_fn *w = thin_wrapper(p, f, &nb);
      if (!w)
        continue;
      f->ent->rule = w;
      more = 1;
      found++;
      if (getenv("LOCKSTEP_LINT_STATS"))
        fprintf(stderr, "lockstep lint: %s:%u: %s is a thin wrapper of %s\n", f->file ? f->file : "?", f->line,
                f->name ? f->name : "?", w->as->name);
      for (int k = 0; k < f->noverrides; k++)
        claim(&bases, f->overrides[k], w);
    }
  }
  for (size_t i = 0; p->fpcalls.n && i < p->funcs.n; i++)
    scan_fields(p, ((ls_func *)p->funcs.v[i])->body, &fields);
  ls_vec *lists[2] = {&bases, &fields};
  for (int l = 0; l < 2; l++) {
    for (size_t i = 0; i < lists[l]->n; i++) {
      struct claim *c = lists[l]->v[i];
      /* a base method with a body of its own (a default) runs that body for some objects */
      if (!c->conflict && c->r && !c->e->rule && !c->e->def) {
        c->e->rule = c->r;
        found++;
      }
      free(c);
    }
    free(lists[l]->v);
  }
  /* the calls through a field that now has a rule: its arguments after the callee */
  for (size_t i = 0; i + 1 < p->fpcalls.n; i += 2) {
    ls_node *n = p->fpcalls.v[i];
    ls_entity *fe = p->fpcalls.v[i + 1];
    if (!fe->rule || !n->nkids)
      continue;
    n->ent = fe;
    n->text = fe->name;
    n->kids++;
    n->nkids--;
  }
  /* a call through the base reaches the override: it is a called begin/end helper (group.c) */
  for (size_t i = 0; i < p->funcs.n; i++) {
    ls_func *f = p->funcs.v[i];
    for (int k = 0; k < f->noverrides && f->ent && f->ent->rule; k++)
      if (f->overrides[k]->rule && f->overrides[k]->rule->as && same_wrapper(f->overrides[k]->rule, f->ent->rule))
        f->ent->ncalls++;
  }
  free(nb.s);
  return found;
}
