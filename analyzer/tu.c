/* tu.c — parses one translation unit with libclang and copies every function body that
 * the user wrote (not system headers) into ls_node trees, visiting each cursor once.
 * Entities (variables, fields, functions) are keyed by USR so TUs share them.
 * Non-goal: templates are analyzed as written (no instantiation), like the rest of lint. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "xalloc.h"

/* ---- entity table (open addressing on USR strings) ---- */
struct ls_enthash {
  ls_entity **slot;
  size_t cap, n;
};

ls_program *ls_program_new(const ls_rules *rules) {
  ls_program *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  p->arena = ls_arena_new();
  p->rules = rules;
  p->ents = calloc(1, sizeof *p->ents);
  if (!p->ents)
    abort();
  p->ents->cap = 4096;
  p->ents->slot = calloc(p->ents->cap, sizeof *p->ents->slot);
  if (!p->ents->slot)
    abort();
  return p;
}

void ls_program_free(ls_program *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->tus.n; i++)
    free(((ls_tu_info *)p->tus.v[i])->errors.v);
  free(p->funcs.v);
  free(p->tus.v);
  free(p->ents->slot);
  free(p->ents);
  ls_arena_free(p->arena);
  free(p);
}

ls_entity *ls_entity_get(ls_program *p, const char *key, const char *name, enum ls_ent_kind kind) {
  struct ls_enthash *h = p->ents;
  if (2 * (h->n + 1) > h->cap) {
    size_t ncap = h->cap * 2;
    ls_entity **ns = calloc(ncap, sizeof *ns);
    if (!ns)
      abort();
    for (size_t i = 0; i < h->cap; i++)
      if (h->slot[i]) {
        size_t j = ls_hash_str(0, h->slot[i]->key) & (ncap - 1);
        while (ns[j])
          j = (j + 1) & (ncap - 1);
        ns[j] = h->slot[i];
      }
    free(h->slot);
    h->slot = ns;
    h->cap = ncap;
  }
  size_t j = ls_hash_str(0, key) & (h->cap - 1);
  while (h->slot[j]) {
    if (!strcmp(h->slot[j]->key, key))
      return h->slot[j];
    j = (j + 1) & (h->cap - 1);
  }
  ls_entity *e = ls_alloc(p->arena, sizeof *e);
  e->key = ls_strdup(p->arena, key);
  e->name = ls_strdup(p->arena, name ? name : key);
  e->kind = kind;
  if (kind == LS_ENT_FUNC) {
    e->rule = ls_rules_fn(p->rules, e->name);
    e->rule_noreturn = ls_rules_noreturn(p->rules, e->name);
  }
  h->slot[j] = e;
  h->n++;
  return e;
}

/* ---- conversion ---- */
struct conv {
  ls_program *p;
  CXTranslationUnit tu;
  int cplusplus;
  CXFile last_file;
  const char *last_name;
  ls_func *fn; /* function being converted (for lambdas' names) */
  ls_vec refs;    /* nodes of this TU that reference a function (calls, destructors) */
  ls_vec renames; /* pairs (shared entity, this TU's own definition of that name) */
  const char *lib_prefix; /* the CUDA toolkit: its headers are library code */
  int want_loc;           /* the next converted node may be a branch condition */
  /* referenced declaration -> entity, so a name used many times costs one USR */
  struct refslot { CXCursor decl; ls_entity *e; enum ls_ent_kind kind; } *refs_tab;
  size_t refs_cap, refs_n;
  /* thread-region pragmas (rules' thread_regions, e.g. `#pragma omp parallel`) of the files
   * seen so far; `npend`: unclaimed ones in the current function's file */
  struct pragfile { CXFile file; struct prag { unsigned line, body; const char *text; int used; } *v; int n; } *pf;
  int npf, npend;
  struct pragfile *cur_pf;
};

static const char *file_name(struct conv *c, CXFile f) {
  if (!f)
    return "<unknown>";
  if (f == c->last_file)
    return c->last_name;
  CXString s = clang_getFileName(f);
  c->last_name = ls_strdup(c->p->arena, clang_getCString(s) ? clang_getCString(s) : "<unknown>");
  clang_disposeString(s);
  c->last_file = f;
  return c->last_name;
}

static void set_loc(struct conv *c, CXSourceLocation loc, const char **file, unsigned *line, unsigned *col) {
  CXFile f;
  clang_getExpansionLocation(loc, &f, line, col, NULL);
  *file = file_name(c, f);
}

static const char *spelling(struct conv *c, CXCursor cur) {
  CXString s = clang_getCursorSpelling(cur);
  const char *r = ls_strdup(c->p->arena, clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

static ls_entity *entity_of_usr(struct conv *c, CXCursor ref, enum ls_ent_kind kind);

/* Declared not to return: __attribute__((noreturn)) shows in the function's type; C11
 * _Noreturn and [[noreturn]] are specifiers, found among the tokens before the name.
 * Asked once per declaration and TU (the entity cache), so tokenizing stays cheap. */
static int declared_noreturn(struct conv *c, CXCursor decl) {
  CXString ts = clang_getTypeSpelling(clang_getCursorType(decl));
  int nr = strstr(clang_getCString(ts), "noreturn") != NULL;
  clang_disposeString(ts);
  if (nr)
    return 1;
  CXSourceRange r = clang_getRange(clang_getRangeStart(clang_getCursorExtent(decl)), clang_getCursorLocation(decl));
  CXToken *toks = NULL;
  unsigned nt = 0;
  clang_tokenize(c->tu, r, &toks, &nt);
  for (unsigned i = 0; i < nt && !nr; i++) {
    CXString sp = clang_getTokenSpelling(c->tu, toks[i]);
    const char *t = clang_getCString(sp);
    nr = !strcmp(t, "_Noreturn") || !strcmp(t, "noreturn") || !strcmp(t, "__noreturn__");
    clang_disposeString(sp);
  }
  clang_disposeTokens(c->tu, toks, nt);
  return nr;
}

static ls_entity *entity_of(struct conv *c, CXCursor ref, enum ls_ent_kind kind) {
  if (2 * (c->refs_n + 1) > c->refs_cap) {
    size_t nc = c->refs_cap ? 2 * c->refs_cap : 1024;
    struct refslot *nt = calloc(nc, sizeof *nt);
    if (!nt)
      abort();
    for (size_t i = 0; i < c->refs_cap; i++)
      if (c->refs_tab[i].e) {
        size_t j = clang_hashCursor(c->refs_tab[i].decl) & (nc - 1);
        while (nt[j].e)
          j = (j + 1) & (nc - 1);
        nt[j] = c->refs_tab[i];
      }
    free(c->refs_tab);
    c->refs_tab = nt;
    c->refs_cap = nc;
  }
  size_t j = clang_hashCursor(ref) & (c->refs_cap - 1);
  while (c->refs_tab[j].e) {
    if (clang_equalCursors(c->refs_tab[j].decl, ref))
      return c->refs_tab[j].e;
    j = (j + 1) & (c->refs_cap - 1);
  }
  ls_entity *e = entity_of_usr(c, ref, kind);
  if (kind == LS_ENT_FUNC && !e->rule_noreturn && !e->def && declared_noreturn(c, ref))
    e->rule_noreturn = 1;
  c->refs_tab[j].decl = ref;
  c->refs_tab[j].e = e;
  c->refs_tab[j].kind = kind;
  c->refs_n++;
  return e;
}

static ls_entity *entity_of_usr(struct conv *c, CXCursor ref, enum ls_ent_kind kind) {
  CXString usr = clang_getCursorUSR(ref);
  const char *u = clang_getCString(usr);
  char buf[64];
  if (!u || !*u) { /* no USR (rare): the declaration's location identifies it */
    CXFile f;
    unsigned off;
    clang_getSpellingLocation(clang_getCursorLocation(ref), &f, NULL, NULL, &off);
    snprintf(buf, sizeof buf, "loc:%p:%u", (void *)f, off);
    u = buf;
  }
  CXString sp = clang_getCursorSpelling(ref);
  ls_entity *e = ls_entity_get(c->p, u, clang_getCString(sp), kind);
  clang_disposeString(sp);
  clang_disposeString(usr);
  return e;
}

static int is_function_kind(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
         k == CXCursor_Destructor || k == CXCursor_ConversionFunction || k == CXCursor_FunctionTemplate;
}

static ls_entity *var_entity(struct conv *c, CXCursor ref) {
  enum CXCursorKind k = clang_getCursorKind(ref);
  if (k == CXCursor_ParmDecl)
    return entity_of(c, ref, LS_ENT_PARAM);
  if (k == CXCursor_FieldDecl)
    return entity_of(c, ref, LS_ENT_FIELD);
  if (k == CXCursor_VarDecl) {
    if (c->refs_cap) { /* seen before: skip the parent/storage queries */
      for (size_t j = clang_hashCursor(ref) & (c->refs_cap - 1); c->refs_tab[j].e; j = (j + 1) & (c->refs_cap - 1))
        if (clang_equalCursors(c->refs_tab[j].decl, ref))
          return c->refs_tab[j].e;
    }
    enum CXCursorKind pk = clang_getCursorKind(clang_getCursorSemanticParent(ref));
    int global = !is_function_kind(pk) && pk != CXCursor_LambdaExpr;
    if (!global && clang_Cursor_getStorageClass(ref) == CX_SC_Static)
      global = 1; /* a function-local static keeps its value across calls */
    return entity_of(c, ref, global ? LS_ENT_GLOBAL : LS_ENT_VAR);
  }
  if (is_function_kind(k))
    return entity_of(c, ref, LS_ENT_FUNC);
  return NULL;
}

struct kids {
  CXCursor *v;
  unsigned n, cap;
  int all; /* keep references too (goto's label) */
};

static enum CXChildVisitResult collect(CXCursor cur, CXCursor parent, CXClientData d) {
  (void)parent;
  struct kids *k = d;
  enum CXCursorKind kind = clang_getCursorKind(cur);
  if (!k->all && (clang_isReference(kind) || clang_isAttribute(kind) || kind == CXCursor_ParmDecl ||
                  kind == CXCursor_StructDecl || kind == CXCursor_UnionDecl || kind == CXCursor_ClassDecl ||
                  kind == CXCursor_EnumDecl || kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl ||
                  kind == CXCursor_CXXBaseSpecifier))
    return CXChildVisit_Continue;
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 8;
    k->v = ls_xrealloc(k->v, k->cap * sizeof *k->v);
  }
  k->v[k->n++] = cur;
  return CXChildVisit_Continue;
}

static ls_node *conv_node(struct conv *c, CXCursor cur);
static void conv_function(struct conv *c, CXCursor cur, ls_entity *ent, const char *name);

/* Locations cost a macro-expansion lookup each, so only nodes a finding or a note can
 * point at get one: statements, calls, and the expressions that can be a branch condition
 * (children of statements and of && || ! ?:). */
static ls_node *new_node(struct conv *c, CXCursor cur, int loc) {
  ls_node *n = ls_alloc(c->p->arena, sizeof *n);
  c->p->nnodes++;
  n->kind = clang_getCursorKind(cur);
  if (loc || clang_isStatement(n->kind) || n->kind == CXCursor_CallExpr || n->kind == CXCursor_LambdaExpr ||
      n->kind == CXCursor_CXXThrowExpr)
    set_loc(c, clang_getCursorLocation(cur), &n->file, &n->line, &n->col);
  return n;
}

static void set_kids(struct conv *c, ls_node *n, CXCursor *v, unsigned cnt) {
  n->nkids = cnt;
  n->kids = cnt ? ls_alloc(c->p->arena, cnt * sizeof *n->kids) : NULL;
  int loc = clang_isStatement(n->kind) || n->kind == CXCursor_ConditionalOperator ||
            (n->kind == CXCursor_BinaryOperator && (n->op == CXBinaryOperator_LAnd || n->op == CXBinaryOperator_LOr)) ||
            (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_LNot);
  for (unsigned i = 0; i < cnt; i++) {
    c->want_loc = loc;
    n->kids[i] = clang_Cursor_isNull(v[i]) ? NULL : conv_node(c, v[i]);
  }
  c->want_loc = 0;
}

static unsigned spell_off(CXSourceLocation l) {
  unsigned off;
  clang_getSpellingLocation(l, NULL, NULL, NULL, &off);
  return off;
}

/* libclang omits absent parts of a for header; find which of init/cond/inc the children
 * are from the positions of the two top-level semicolons. */
static void conv_for(struct conv *c, ls_node *n, CXCursor cur, struct kids *k) {
  CXCursor slot[4];
  for (int i = 0; i < 4; i++)
    slot[i] = clang_getNullCursor();
  slot[3] = k->v[k->n - 1];
  if (k->n == 4) {
    memcpy(slot, k->v, 4 * sizeof *slot);
  } else if (k->n > 1) {
    CXSourceRange hdr = clang_getRange(clang_getRangeStart(clang_getCursorExtent(cur)),
                                       clang_getRangeStart(clang_getCursorExtent(slot[3])));
    CXToken *toks = NULL;
    unsigned nt = 0;
    clang_tokenize(c->tu, hdr, &toks, &nt);
    unsigned semi[2] = {~0u, ~0u}, ns = 0;
    int depth = 0;
    for (unsigned i = 0; i < nt && ns < 2; i++) {
      if (clang_getTokenKind(toks[i]) != CXToken_Punctuation)
        continue;
      CXString s = clang_getTokenSpelling(c->tu, toks[i]);
      const char *t = clang_getCString(s);
      if (!strcmp(t, "("))
        depth++;
      else if (!strcmp(t, ")"))
        depth--;
      else if (!strcmp(t, ";") && depth == 1)
        semi[ns++] = spell_off(clang_getTokenLocation(c->tu, toks[i]));
      clang_disposeString(s);
    }
    clang_disposeTokens(c->tu, toks, nt);
    for (unsigned i = 0; i + 1 < k->n; i++) {
      unsigned off = spell_off(clang_getRangeStart(clang_getCursorExtent(k->v[i])));
      int s = ns < 2 ? (int)i + (k->n == 2 ? 1 : 0) : off < semi[0] ? 0 : off < semi[1] ? 1 : 2;
      if (s > 2)
        s = 2;
      slot[s] = k->v[i];
    }
  }
  set_kids(c, n, slot, 4);
}

static ls_entity *dtor_of(struct conv *c, CXCursor vardecl) {
  CXType t = clang_getCanonicalType(clang_getCursorType(vardecl));
  if (t.kind != CXType_Record)
    return NULL;
  CXCursor cls = clang_getTypeDeclaration(t);
  struct kids k = {0};
  clang_visitChildren(cls, collect, &k);
  ls_entity *e = NULL;
  for (unsigned i = 0; i < k.n; i++)
    if (clang_getCursorKind(k.v[i]) == CXCursor_Destructor)
      e = entity_of(c, k.v[i], LS_ENT_FUNC);
  free(k.v);
  return e;
}

/* A lambda and calls of it (`operator()` of the closure, declared at the lambda's own
 * location) meet on one entity keyed by that location. */
static ls_entity *lambda_entity(struct conv *c, CXCursor at, const char *name) {
  CXFile f;
  unsigned line, col;
  clang_getExpansionLocation(clang_getCursorLocation(at), &f, &line, &col, NULL);
  char key[1200];
  snprintf(key, sizeof key, "lambda:%s:%u:%u", file_name(c, f), line, col);
  return ls_entity_get(c->p, key, name, LS_ENT_FUNC);
}

static int is_lambda_call_op(CXCursor ref) {
  if (clang_getCursorKind(ref) != CXCursor_CXXMethod)
    return 0;
  CXCursor cls = clang_getCursorSemanticParent(ref);
  CXString s = clang_getCursorSpelling(ref);
  int op = !strcmp(clang_getCString(s), "operator()");
  clang_disposeString(s);
  if (!op)
    return 0;
  CXString cs = clang_getCursorSpelling(cls);
  int lam = strstr(clang_getCString(cs), "lambda") != NULL || !*clang_getCString(cs);
  clang_disposeString(cs);
  return lam;
}

static ls_node *conv_inner(struct conv *c, CXCursor cur) {
  int loc = c->want_loc;
  c->want_loc = 0;
  enum CXCursorKind wk = clang_getCursorKind(cur);
  if (wk == CXCursor_UnexposedExpr || wk == CXCursor_ParenExpr) {
    /* implicit casts and parentheses: keep only what they wrap (a third of all nodes) */
    struct kids w = {0};
    clang_visitChildren(cur, collect, &w);
    if (w.n == 1 && clang_isExpression(clang_getCursorKind(w.v[0]))) {
      CXCursor inner = w.v[0];
      free(w.v);
      c->want_loc = loc;
      return conv_node(c, inner);
    }
    free(w.v);
  }
  ls_node *n = new_node(c, cur, loc);
  struct kids k = {0};
  switch (n->kind) {
  case CXCursor_LambdaExpr: {
    char name[256];
    snprintf(name, sizeof name, "%s::lambda@%u", c->fn ? c->fn->name : "", n->line);
    ls_func *outer = c->fn;
    ls_entity *le = lambda_entity(c, cur, name);
    if (!le->def)
      conv_function(c, cur, le, ls_strdup(c->p->arena, name));
    c->fn = outer;
    n->ent = le; /* the function it is, for calls that take it (std::thread) */
    return n; /* a lambda is its own function; creating it issues nothing */
  }
  case CXCursor_CallExpr: {
    ls_vec_push(&c->refs, n);
    CXCursor ref = clang_getCursorReferenced(cur);
    if (!clang_Cursor_isNull(ref) && is_function_kind(clang_getCursorKind(ref))) {
      n->ent = c->cplusplus && is_lambda_call_op(ref) ? lambda_entity(c, ref, "lambda") : entity_of(c, ref, LS_ENT_FUNC);
      n->text = n->ent->name;
      if (c->cplusplus && clang_getCursorKind(ref) == CXCursor_Constructor) {
        /* a constructed object: if nothing owns it (see VarDecl), it is a temporary whose
         * destructor runs at the end of the full expression */
        CXCursor cls = clang_getCursorSemanticParent(ref);
        struct kids ck = {0};
        clang_visitChildren(cls, collect, &ck);
        for (unsigned i = 0; i < ck.n; i++)
          if (clang_getCursorKind(ck.v[i]) == CXCursor_Destructor)
            n->dtor = entity_of(c, ck.v[i], LS_ENT_FUNC);
        free(ck.v);
      }
    }
    enum CXTypeKind rt = clang_getCanonicalType(clang_getCursorType(cur)).kind;
    n->ptr_result = rt == CXType_Pointer || rt == CXType_BlockPointer || rt == CXType_NullPtr;
    int na = clang_Cursor_getNumArguments(cur);
    if (na >= 0 && n->ent) {
      CXCursor *args = malloc(((size_t)na + 1) * sizeof *args);
      if (!args)
        abort();
      for (int i = 0; i < na; i++)
        args[i] = clang_Cursor_getArgument(cur, (unsigned)i);
      set_kids(c, n, args, (unsigned)na);
      const ls_rule_fn *rf = n->ent->rule;
      if (rf && rf->in_place_buf >= 0 && rf->in_place_buf < na && n->kids[rf->in_place_buf]) {
        /* the first token the user wrote for this argument (a macro name like MPI_IN_PLACE
         * stays visible at its expansion location) */
        CXFile tf;
        unsigned tl, tc;
        clang_getExpansionLocation(clang_getCursorLocation(args[rf->in_place_buf]), &tf, &tl, &tc, NULL);
        CXToken *tok = tf ? clang_getToken(c->tu, clang_getLocation(c->tu, tf, tl, tc)) : NULL;
        if (tok) {
          CXString ts = clang_getTokenSpelling(c->tu, *tok);
          n->kids[rf->in_place_buf]->spell = ls_strdup(c->p->arena, clang_getCString(ts));
          clang_disposeString(ts);
          clang_disposeTokens(c->tu, tok, 1);
        }
      }
      if (n->ent->rule && (n->ent->rule->kind == LS_KIND_COLLECTIVE || n->ent->rule->kind == LS_KIND_P2P)) {
        for (int i = 0; i < na && i < n->ent->rule->nargs; i++) {
          enum ls_role r = n->ent->rule->roles[i];
          if (n->kids[i] && (r == LS_ROLE_COUNT || r == LS_ROLE_DTYPE || r == LS_ROLE_ROOT ||
                             r == LS_ROLE_REDOP || r == LS_ROLE_PEER || r == LS_ROLE_COMM)) {
            CXEvalResult ev = clang_Cursor_Evaluate(args[i]);
            if (ev) {
              if (clang_EvalResult_getKind(ev) == CXEval_Int) {
                char b[32];
                snprintf(b, sizeof b, "#%lld", clang_EvalResult_getAsLongLong(ev));
                n->kids[i]->norm = ls_strdup(c->p->arena, b);
              }
              clang_EvalResult_dispose(ev);
            }
          }
        }
      }
      free(args);
      return n;
    }
    break;
  }
  case CXCursor_DeclRefExpr:
  case CXCursor_MemberRefExpr: {
    CXCursor ref = clang_getCursorReferenced(cur);
    if (!clang_Cursor_isNull(ref)) {
      enum CXCursorKind rk = clang_getCursorKind(ref);
      if (rk == CXCursor_EnumConstantDecl) {
        n->text = spelling(c, ref);
        n->ilit = 1;
        n->ival = clang_getEnumConstantDeclValue(ref);
      } else {
        n->ent = var_entity(c, ref);
        n->text = n->ent ? n->ent->name : spelling(c, ref);
      }
    } else {
      n->text = spelling(c, cur);
    }
    break;
  }
  case CXCursor_VarDecl:
    ls_vec_push(&c->refs, n);
    n->ent = var_entity(c, cur);
    n->text = n->ent ? n->ent->name : "";
    if (c->cplusplus)
      n->dtor = dtor_of(c, cur);
    break;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    n->op = clang_getCursorBinaryOperatorKind(cur);
    break;
  case CXCursor_UnaryOperator:
    n->op = clang_getCursorUnaryOperatorKind(cur);
    break;
  case CXCursor_IntegerLiteral: {
    CXEvalResult ev = clang_Cursor_Evaluate(cur);
    if (ev) {
      if (clang_EvalResult_getKind(ev) == CXEval_Int) {
        n->ilit = 1;
        n->ival = clang_EvalResult_getAsLongLong(ev);
      }
      clang_EvalResult_dispose(ev);
    }
    return n;
  }
  case CXCursor_StringLiteral:
  case CXCursor_CharacterLiteral:
  case CXCursor_FloatingLiteral:
    n->text = spelling(c, cur);
    return n;
  case CXCursor_LabelStmt:
    n->text = spelling(c, cur);
    break;
  case CXCursor_GotoStmt:
    k.all = 1;
    clang_visitChildren(cur, collect, &k);
    for (unsigned i = 0; i < k.n; i++)
      if (clang_getCursorKind(k.v[i]) == CXCursor_LabelRef)
        n->text = spelling(c, k.v[i]);
    free(k.v);
    return n;
  case CXCursor_CompoundStmt: {
    CXFile f;
    clang_getExpansionLocation(clang_getRangeEnd(clang_getCursorExtent(cur)), &f, &n->eline, &n->ecol, NULL);
    if (n->ecol > 1)
      n->ecol--; /* the range ends just past the brace */
    break;
  }
  default:
    break;
  }
  clang_visitChildren(cur, collect, &k);
  if (n->kind == CXCursor_ForStmt && k.n)
    conv_for(c, n, cur, &k);
  else
    set_kids(c, n, k.v, k.n);
  free(k.v);
  if (n->kind == CXCursor_VarDecl) /* the variable owns the object its constructor builds */
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *q = n->kids[i];
      while (q && q->kind != CXCursor_CallExpr && q->nkids == 1)
        q = q->kids[0];
      if (q && q->kind == CXCursor_CallExpr)
        q->dtor = NULL;
    }
  return n;
}


/* Pragmas are gone from libclang's tree, and with -fopenmp the statement of an OpenMP
 * directive hides inside a CapturedStmt that libclang does not visit. So lint parses without
 * -fopenmp (ls_tu_parse) and finds the thread-region pragmas in the file's text: the first
 * node that starts on the line after such a pragma is its statement, wrapped in an
 * UnexposedStmt node whose text is the pragma ("omp parallel num_threads(2)"). */
static int region_pragma(const ls_rules *r, const char *t) {
  for (int i = 0; i < r->nregions + r->nprimary; i++) {
    const char *g = i < r->nregions ? r->regions[i] : r->primary_regions[i - r->nregions];
    size_t k = strlen(g);
    if (!strncmp(t, g, k) && (!t[k] || t[k] == ' ' || t[k] == '('))
      return 1;
  }
  return 0;
}

static struct pragfile *scan_pragmas(struct conv *c, CXFile file) {
  for (int i = 0; i < c->npf; i++)
    if (c->pf[i].file == file)
      return &c->pf[i];
  c->pf = ls_xrealloc(c->pf, (size_t)(c->npf + 1) * sizeof *c->pf);
  struct pragfile *pf = &c->pf[c->npf++];
  memset(pf, 0, sizeof *pf);
  pf->file = file;
  size_t size = 0;
  const char *buf = clang_getFileContents(c->tu, file, &size);
  int any = 0; /* most files have no pragma at all: one cheap look first */
  for (size_t i = 0; buf && i + 6 <= size && !any; i++)
    any = buf[i] == 'p' && !memcmp(buf + i, "pragma", 6);
  if (!any)
    return pf;
  const char *e = buf + size, *q = buf;
  unsigned line = 1;
  struct prag *open = NULL; /* a pragma waiting for its statement's line */
  while (q < e) {
    const char *eol = memchr(q, '\n', (size_t)(e - q));
    if (!eol)
      eol = e;
    const char *t = q;
    while (t < eol && (*t == ' ' || *t == '\t'))
      t++;
    unsigned here = line;
    if (t < eol && *t == '#') {
      /* the directive with its continuation lines, whitespace collapsed */
      char text[512] = {0};
      size_t n = 0;
      int cont;
      const char *l = t + 1;
      do {
        const char *le = eol;
        cont = le > l && le[-1] == '\\';
        for (const char *x = l; x < le - cont && n + 1 < sizeof text; x++) {
          char ch = *x == '\t' || *x == '\r' ? ' ' : *x;
          if (ch == ' ' && (n == 0 || text[n - 1] == ' '))
            continue;
          text[n++] = ch;
        }
        if (n && text[n - 1] != ' ' && n + 1 < sizeof text)
          text[n++] = ' ';
        if (cont && eol < e) {
          q = eol + 1;
          line++;
          eol = memchr(q, '\n', (size_t)(e - q));
          if (!eol)
            eol = e;
          l = q;
        } else {
          cont = 0;
        }
      } while (cont);
      while (n && text[n - 1] == ' ')
        n--;
      text[n] = 0;
      if (!strncmp(text, "pragma ", 7) && region_pragma(c->p->rules, text + 7)) {
        pf->v = ls_xrealloc(pf->v, (size_t)(pf->n + 1) * sizeof *pf->v);
        open = &pf->v[pf->n++];
        *open = (struct prag){here, 0, ls_strdup(c->p->arena, text + 7), 0};
      }
    } else if (open && t < eol && eol - t >= 2 && t[0] == '/' && t[1] == '*') {
      /* a block comment between the pragma and its statement: skip to its end */
      const char *x = t + 2;
      while (x < e) {
        const char *star = memchr(x, '*', (size_t)(e - x));
        if (!star || star + 1 >= e) {
          x = e;
          break;
        }
        if (star[1] == '/') {
          x = star + 2;
          break;
        }
        x = star + 1;
      }
      for (const char *y = eol; y < x && y < e; y++) /* the lines it spans */
        if (*y == '\n') {
          line++;
          eol = memchr(y + 1, '\n', (size_t)(e - y - 1));
          if (!eol)
            eol = e;
          y = eol - 1;
        }
      const char *rest = x; /* code after the comment on its last line */
      while (rest < eol && (*rest == ' ' || *rest == '\t'))
        rest++;
      if (rest < eol && !(eol - rest >= 2 && rest[0] == '/' && rest[1] == '/')) {
        open->body = line;
        open = NULL;
      }
    } else if (open && t < eol && !(eol - t >= 2 && t[0] == '/' && t[1] == '/')) {
      open->body = here; /* the first line of code after the pragma */
      open = NULL;
    }
    q = eol + 1;
    line++;
  }
  return pf;
}

static ls_node *conv_node(struct conv *c, CXCursor cur) {
  if (!c->npend)
    return conv_inner(c, cur);
  CXFile f;
  unsigned line;
  clang_getExpansionLocation(clang_getCursorLocation(cur), &f, &line, NULL, NULL);
  struct prag *pr = NULL;
  if (c->cur_pf && f == c->cur_pf->file)
    for (int i = 0; i < c->cur_pf->n && !pr; i++)
      if (!c->cur_pf->v[i].used && c->cur_pf->v[i].body == line) {
        pr = &c->cur_pf->v[i];
        pr->used = 1; /* the outermost node on that line: nodes are converted parents first */
        c->npend--;
      }
  ls_node *n = conv_inner(c, cur);
  if (!pr || !n)
    return n;
  ls_node *w = ls_alloc(c->p->arena, sizeof *w);
  c->p->nnodes++;
  w->kind = CXCursor_UnexposedStmt;
  w->text = pr->text;
  w->file = n->file ? n->file : file_name(c, f);
  w->line = pr->line;
  w->col = 1;
  w->nkids = 1;
  w->kids = ls_alloc(c->p->arena, sizeof *w->kids);
  w->kids[0] = n;
  return w;
}

static void conv_function(struct conv *c, CXCursor cur, ls_entity *ent, const char *name) {
  struct kids k = {0};
  clang_visitChildren(cur, collect, &k);
  CXCursor body = clang_getNullCursor();
  for (unsigned i = 0; i < k.n; i++)
    if (clang_getCursorKind(k.v[i]) == CXCursor_CompoundStmt)
      body = k.v[i];
  free(k.v);
  if (clang_Cursor_isNull(body))
    return;
  ls_func *f = ls_alloc(c->p->arena, sizeof *f);
  f->name = name;
  f->ent = ent;
  if (ent)
    ent->def = f;
  set_loc(c, clang_getCursorLocation(cur), &f->file, &f->line, &f->col);
  /* parameters, in order, so call sites can bind arguments to them */
  struct kids pk = {0};
  clang_visitChildren(cur, collect, &pk); /* ParmDecls are filtered out by collect */
  free(pk.v);
  int np = clang_Cursor_getNumArguments(cur);
  if (np > 0) {
    f->params = ls_alloc(c->p->arena, (size_t)np * sizeof *f->params);
    for (int i = 0; i < np; i++)
      f->params[i] = entity_of(c, clang_Cursor_getArgument(cur, (unsigned)i), LS_ENT_PARAM);
    f->nparams = np;
  } else if (clang_getCursorKind(cur) == CXCursor_LambdaExpr) {
    struct kids lk = {.all = 1};
    clang_visitChildren(cur, collect, &lk);
    unsigned cnt = 0;
    for (unsigned i = 0; i < lk.n; i++)
      cnt += clang_getCursorKind(lk.v[i]) == CXCursor_ParmDecl;
    f->params = ls_alloc(c->p->arena, (cnt + 1) * sizeof *f->params);
    for (unsigned i = 0; i < lk.n; i++)
      if (clang_getCursorKind(lk.v[i]) == CXCursor_ParmDecl)
        f->params[f->nparams++] = entity_of(c, lk.v[i], LS_ENT_PARAM);
    free(lk.v);
  }
  ls_vec_push(&c->p->funcs, f);
  ls_func *outer = c->fn;
  if ((c->p->rules->nregions || c->p->rules->nprimary) && !outer) { /* a lambda keeps its enclosing function's file */
    CXFile ff;
    clang_getExpansionLocation(clang_getCursorLocation(cur), &ff, NULL, NULL, NULL);
    c->cur_pf = ff ? scan_pragmas(c, ff) : NULL;
    c->npend = 0;
    for (int i = 0; c->cur_pf && i < c->cur_pf->n; i++)
      c->npend += !c->cur_pf->v[i].used;
  }
  c->fn = f;
  f->body = conv_node(c, body);
  c->fn = outer;
  f->end_line = f->body->eline;
  f->end_col = f->body->ecol;
}

static enum CXChildVisitResult top_visit(CXCursor cur, CXCursor parent, CXClientData d) {
  (void)parent;
  struct conv *c = d;
  enum CXCursorKind k = clang_getCursorKind(cur);
  if (clang_Location_isInSystemHeader(clang_getCursorLocation(cur)))
    return CXChildVisit_Continue;
  if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_ClassDecl ||
      k == CXCursor_StructDecl || k == CXCursor_ClassTemplate || k == CXCursor_UnexposedDecl)
    return CXChildVisit_Recurse;
  if (is_function_kind(k) && clang_isCursorDefinition(cur)) {
    /* Library headers reached through -I (CUDA's, MPI's under /usr) are not the user's
     * code: their inline functions are skipped like system headers' (and cost nothing). */
    CXFile df;
    clang_getExpansionLocation(clang_getCursorLocation(cur), &df, NULL, NULL, NULL);
    if (df && !clang_Location_isFromMainFile(clang_getCursorLocation(cur))) {
      const char *fn = file_name(c, df);
      if (!strncmp(fn, "/usr/", 5) || (c->lib_prefix && *c->lib_prefix && !strncmp(fn, c->lib_prefix, strlen(c->lib_prefix))))
        return CXChildVisit_Continue;
    }
    ls_entity *e = entity_of(c, cur, LS_ENT_FUNC);
    if (e->def) {
      const char *file;
      unsigned line, col;
      set_loc(c, clang_getCursorLocation(cur), &file, &line, &col);
      if (!strcmp(e->def->file, file) && e->def->line == line)
        return CXChildVisit_Continue; /* same definition seen from another TU (a header) */
      /* another program's function of the same name (each fixture's main): its own entity */
      char key[2048];
      snprintf(key, sizeof key, "%s@%s:%u", e->key, file, line);
      ls_entity *own = ls_entity_get(c->p, key, e->name, LS_ENT_FUNC);
      if (own->def)
        return CXChildVisit_Continue;
      ls_vec_push(&c->renames, e);
      ls_vec_push(&c->renames, own);
      e = own;
    }
    const char *name = e->name;
    if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate) {
      CXCursor cls = clang_getCursorSemanticParent(cur);
      CXString cs = clang_getCursorSpelling(cls);
      char buf[512];
      snprintf(buf, sizeof buf, "%s::%s", clang_getCString(cs), e->name);
      clang_disposeString(cs);
      name = ls_strdup(c->p->arena, buf);
    }
    conv_function(c, cur, e, name);
  }
  return CXChildVisit_Continue;
}

int ls_is_cuda_file(const char *file) {
  size_t n = strlen(file);
  return (n > 3 && !strcmp(file + n - 3, ".cu")) || (n > 4 && !strcmp(file + n - 4, ".cuh"));
}

void ls_cuda_flags(ls_vec *args, const ls_parse_opts *o) {
  static _Thread_local char buf[4][4096]; /* -j parses on several threads */
  const char *cuda = o->cuda_path ? o->cuda_path : "/usr/local/cuda";
  snprintf(buf[0], sizeof buf[0], "--cuda-path=%s", cuda);
  snprintf(buf[1], sizeof buf[1], "-I%s/include", cuda);
  snprintf(buf[2], sizeof buf[2], "-I%s/include/cccl", cuda);
  ls_vec_push(args, "-x");
  ls_vec_push(args, "cuda");
  ls_vec_push(args, "--cuda-host-only");
  /* clang's CUDA wrapper headers parse real code (nccl-tests, xgboost) once our folder
   * supplies what CUDA 13 removed; without that folder, -nocudainc is the fallback that
   * still parses simple files. */
  if (!o->cuda_include)
    ls_vec_push(args, "-nocudainc");
  ls_vec_push(args, "-Wno-unknown-cuda-version");
  ls_vec_push(args, buf[0]);
  if (o->cuda_include) {
    snprintf(buf[3], sizeof buf[3], "-I%s", o->cuda_include);
    ls_vec_push(args, buf[3]);
    ls_vec_push(args, "-include");
    ls_vec_push(args, "lockstep_cuda_prelude.h");
  }
  ls_vec_push(args, buf[1]);
  ls_vec_push(args, buf[2]);
}

static const char *cx_error(enum CXErrorCode e) {
  switch (e) {
  case CXError_Success: return "success";
  case CXError_Failure: return "libclang could not parse it";
  case CXError_Crashed: return "libclang crashed while parsing it";
  case CXError_InvalidArguments: return "invalid arguments";
  case CXError_ASTReadError: return "AST read error";
  }
  return "unknown error";
}

/* the parse's cost, handed from ls_tu_parse to ls_tu_convert (same thread) for the stats */
static _Thread_local double parse_cost;

CXTranslationUnit ls_tu_parse(CXIndex idx, const char *file, const char *const *args, int nargs,
                              const ls_parse_opts *o) {
  ls_vec all = {0};
  if (o->cuda)
    ls_cuda_flags(&all, o);
  int omp = 0;
  for (int i = 0; i < nargs; i++) {
    /* with -fopenmp, libclang hides the statements of OpenMP directives (CapturedStmt):
     * parse as serial code with the same macros; tu.c finds the pragmas in the text */
    if (!strncmp(args[i], "-fopenmp", 8) || !strcmp(args[i], "-qopenmp")) {
      omp = 1;
      continue;
    }
    ls_vec_push(&all, (void *)args[i]);
  }
  if (omp)
    ls_vec_push(&all, "-D_OPENMP=201811");
  if (o->resource_dir) {
    ls_vec_push(&all, "-resource-dir");
    ls_vec_push(&all, (void *)o->resource_dir);
  }
  CXTranslationUnit tu = NULL;
  double t0 = ls_cpu_now();
  enum CXErrorCode ec = clang_parseTranslationUnit2(idx, file, (const char *const *)all.v, (int)all.n, NULL, 0,
                                                   CXTranslationUnit_KeepGoing, &tu);
  free(all.v);
  parse_cost = ls_cpu_now() - t0;
  if (ec != CXError_Success || !tu) {
    fprintf(stderr, "%s: error: cannot parse: %s\n", file, cx_error(ec));
    return NULL;
  }
  return tu;
}

int ls_parse_file(ls_program *p, CXIndex idx, const char *file, const char *const *args, int nargs,
                  const ls_parse_opts *o) {
  CXTranslationUnit tu = ls_tu_parse(idx, file, args, nargs, o);
  if (!tu)
    return -1;
  ls_tu_convert(p, tu, file, args, nargs, o);
  return 0;
}

void ls_tu_convert(ls_program *p, CXTranslationUnit tu, const char *file, const char *const *args, int nargs,
                   const ls_parse_opts *o) {
  double t0 = ls_cpu_now() - parse_cost;
  ls_tu_info *ti = ls_alloc(p->arena, sizeof *ti);
  ti->file = ls_strdup(p->arena, file);
  unsigned nd = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      ti->nerrors++;
      if (ti->errors.n < 20) {
        CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn);
        ls_vec_push(&ti->errors, ls_strdup(p->arena, clang_getCString(s)));
        clang_disposeString(s);
      }
    }
    clang_disposeDiagnostic(d);
  }
  ti->ok = ti->nerrors == 0;
  ls_vec_push(&p->tus, ti);
  double t1 = ls_cpu_now();
  p->t_parse += t1 - t0;
  struct conv c = {.p = p, .tu = tu, .lib_prefix = o->cuda_path ? o->cuda_path : "/usr/local/cuda"};
  CXCursor root = clang_getTranslationUnitCursor(tu);
  c.cplusplus = o->cuda; /* CUDA is C++ */
  if (!c.cplusplus) {
    size_t n = strlen(file);
    for (const char *const *a = args; a < args + nargs; a++)
      if (!strcmp(*a, "c++") || !strcmp(*a, "-xc++") || !strncmp(*a, "-std=c++", 8) || !strncmp(*a, "-std=gnu++", 10))
        c.cplusplus = 1;
    static const char *cxx[] = {".cc", ".cpp", ".cxx", ".C", ".hpp", ".hh", ".c++"};
    for (size_t i = 0; i < sizeof cxx / sizeof cxx[0]; i++) {
      size_t m = strlen(cxx[i]);
      if (n > m && !strcmp(file + n - m, cxx[i]))
        c.cplusplus = 1;
    }
  }
  size_t before = p->funcs.n;
  clang_visitChildren(root, top_visit, &c);
  /* calls in this TU mean this TU's definition when it has its own of a shared name */
  for (size_t i = 0; c.renames.n && i < c.refs.n; i++) {
    ls_node *n = c.refs.v[i];
    for (size_t j = 0; j + 1 < c.renames.n; j += 2) {
      if (n->ent == c.renames.v[j]) {
        n->ent = c.renames.v[j + 1];
        n->text = n->ent->name;
      }
      if (n->dtor == c.renames.v[j])
        n->dtor = c.renames.v[j + 1];
    }
  }
  free(c.refs.v);
  free(c.renames.v);
  free(c.refs_tab);
  for (int i = 0; i < c.npf; i++)
    free(c.pf[i].v);
  free(c.pf);
  if (ti->nerrors && p->funcs.n == before)
    ti->fatal = 1; /* errors and nothing we could read: not a usable source file */
  p->t_convert += ls_cpu_now() - t1; /* includes disposing the TU */
  clang_disposeTranslationUnit(tu);
}
