/* convert.c — copies every function body of a parsed translation unit that the user wrote
 * (not system headers) into ls_node trees, visiting each cursor once, and names the entities
 * they reference (keyed by USR, program.c, so TUs share them).
 * Non-goal: templates are analyzed as written (no instantiation), like the rest of lint; a
 * call left unresolved there (dependent arguments) calls the first of the overloads its
 * name finds. */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "xalloc.h"

/* ---- conversion ---- */

/* libclang's kind predicates are range checks on the CXCursorKind enum (see Index.h's
 * First/Last markers); asked a few times per cursor, the calls into the library cost
 * more than the checks, so they are spelled out here. */
static inline int k_ref(enum CXCursorKind k) { return k >= CXCursor_FirstRef && k <= CXCursor_LastRef; }
static inline int k_attr(enum CXCursorKind k) { return k >= CXCursor_FirstAttr && k <= CXCursor_LastAttr; }
static inline int k_expr(enum CXCursorKind k) { return k >= CXCursor_FirstExpr && k <= CXCursor_LastExpr; }
static inline int k_stmt(enum CXCursorKind k) { return k >= CXCursor_FirstStmt && k <= CXCursor_LastStmt; }
static inline int k_decl(enum CXCursorKind k) {
  return (k >= CXCursor_FirstDecl && k <= CXCursor_LastDecl) ||
         (k >= CXCursor_FirstExtraDecl && k <= CXCursor_LastExtraDecl);
}
/* clang_Cursor_isNull: equal to clang_getNullCursor() */
static inline int cur_null(CXCursor c) {
  return c.kind == CXCursor_InvalidFile && !c.data[0] && !c.data[1] && !c.data[2];
}

struct conv {
  ls_program *p;
  CXTranslationUnit tu;
  int cplusplus;
  ls_func *fn; /* function being converted (for lambdas' names) */
  ls_vec refs;    /* nodes of this TU that reference a function (calls, destructors) */
  ls_vec renames; /* pairs (shared entity, this TU's own definition of that name) */
  const char *lib_prefix; /* the CUDA toolkit: its headers are library code */
  int want_loc;           /* the next converted node may be a branch condition */
  /* referenced declaration -> entity, so a name used many times costs one USR */
  /* a declaration as ref_slot compares it: 24 bytes, not a CXCursor's 32 and more (the table's
   * fresh pages are faulted in while the conversion runs: 1.4k of lint's 14.6k faults on the
   * generated benchmark TU with 48-byte slots at most half full) */
  struct refslot { const void *decl; ls_entity *e; int ckind; } *refs_tab;
  size_t refs_cap, refs_n;
  /* enumerator declaration -> its name and value (ncclFloat, ncclSum: used everywhere) */
  struct enumslot { const void *decl; const char *text; long long v; } *enum_tab;
  size_t enum_cap, enum_n;
  int keep_str;           /* converting arguments of a rules call: string literals keep their text */
  int fn_body;            /* the next CompoundStmt is a function body (its closing brace is needed) */
  unsigned serial;        /* this TU's number in the run: keys of its locals */
  ls_locache lc;
  /* thread-region pragmas (rules' thread_regions, e.g. `#pragma omp parallel`) of the files
   * seen so far; `npend`: unclaimed ones in the current function's file */
  ls_pragmas prag;
  int npend;
  ls_pragfile *cur_pf;
  /* the cursor tree of the top-level function being converted and of its lambdas (see expand) */
  struct tnode *tab;
  unsigned tab_n, tab_cap;
  /* the recording's open ancestors, outermost first: entry, its last child so far, what
   * identifies it as a parent */
  struct topen { unsigned idx, last; enum CXCursorKind kind; const void *key; } *open, *top;
  unsigned open_cap;
  /* where the TU's errors are (expansion file and offset), and the TU: a function whose
   * extent holds one is marked parse_err and listed as not checked */
  struct diag_at { CXFile f; unsigned off; } *diags;
  size_t ndiags;
  ls_tu_info *ti;
};

/* A declaration cursor is identified by its Decl* (data[0]) and kind, which is what
 * clang_equalCursors compares for declarations; hashing it here saves two library calls
 * per reference. */
static size_t ptr_hash(const void *p) {
  uint64_t x = (uintptr_t)p;
  x = (x ^ (x >> 17)) * 0x9E3779B97F4A7C15ull;
  return (size_t)(x ^ (x >> 29));
}
static size_t decl_hash(const void *decl, int kind) { return ptr_hash(decl) ^ (unsigned)kind; }

/* ref's slot in the declaration table: its own, or the empty one where it belongs */
static struct refslot *ref_slot(struct conv *c, CXCursor ref) {
  size_t j = decl_hash(ref.data[0], (int)ref.kind) & (c->refs_cap - 1);
  while (c->refs_tab[j].e && !(c->refs_tab[j].ckind == (int)ref.kind && c->refs_tab[j].decl == ref.data[0]))
    j = (j + 1) & (c->refs_cap - 1);
  return &c->refs_tab[j];
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
  /* The tokens the user wrote before the name: from where the declaration starts to its
   * name, as expanded (a declaration that starts with a macro, `API int f(void)`, would
   * otherwise be tokenized from the macro's #define on: thousands of tokens of mpi.h for
   * OMPI_DECLSPEC, and a `_Noreturn` anywhere in between counted). */
  CXSourceLocation at[2] = {clang_getRangeStart(clang_getCursorExtent(decl)), clang_getCursorLocation(decl)};
  CXFile f[2];
  unsigned line[2], col[2], off[2];
  for (int i = 0; i < 2; i++) {
    clang_getExpansionLocation(at[i], &f[i], &line[i], &col[i], &off[i]);
    if (at[i].int_data & 0x80000000u) /* a macro location: the file position it expands at */
      at[i] = clang_getLocation(c->tu, f[i], line[i], col[i]);
  }
  if (!f[0] || !clang_File_isEqual(f[0], f[1]) || off[1] < off[0])
    return 0;
  CXToken *toks = NULL;
  unsigned nt = 0;
  clang_tokenize(c->tu, clang_getRange(at[0], at[1]), &toks, &nt);
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
  if (4 * (c->refs_n + 1) > 3 * c->refs_cap) { /* at most 3/4 full */
    size_t nc = c->refs_cap ? 2 * c->refs_cap : 1024;
    struct refslot *nt = calloc(nc, sizeof *nt);
    if (!nt)
      abort();
    for (size_t i = 0; i < c->refs_cap; i++)
      if (c->refs_tab[i].e) {
        size_t j = decl_hash(c->refs_tab[i].decl, c->refs_tab[i].ckind) & (nc - 1);
        while (nt[j].e)
          j = (j + 1) & (nc - 1);
        nt[j] = c->refs_tab[i];
      }
    free(c->refs_tab);
    c->refs_tab = nt;
    c->refs_cap = nc;
  }
  struct refslot *slot = ref_slot(c, ref);
  if (slot->e)
    return slot->e;
  ls_entity *e = entity_of_usr(c, ref, kind);
  if (kind == LS_ENT_FUNC && !e->rule_noreturn && !e->def && declared_noreturn(c, ref))
    e->rule_noreturn = 1;
  *slot = (struct refslot){ref.data[0], e, (int)ref.kind};
  c->refs_n++;
  return e;
}

static ls_entity *entity_of_usr(struct conv *c, CXCursor ref, enum ls_ent_kind kind) {
  if (kind == LS_ENT_VAR || kind == LS_ENT_PARAM) {
    /* locals and parameters are never shared between TUs, and a USR costs ~2,600
     * instructions: the declaration's address and this TU's number identify them */
    char key[48], *k = key + sizeof key;
    *--k = 0; /* "l<serial>:<address in hex>", written by hand: snprintf costs ~1,500 */
    for (uintptr_t a = (uintptr_t)ref.data[0]; a; a >>= 4)
      *--k = "0123456789abcdef"[a & 15];
    *--k = ':';
    for (unsigned t = c->serial;; t /= 10) {
      *--k = (char)('0' + t % 10);
      if (t < 10)
        break;
    }
    *--k = 'l';
    CXString sp = clang_getCursorSpelling(ref);
    ls_entity *e = ls_entity_get(c->p, k, clang_getCString(sp), kind);
    clang_disposeString(sp);
    return e;
  }
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

/* The callee of a call in a template whose arguments depend on a template parameter: clang
 * leaves it unresolved (the call references nothing), its callee an overload set looked up by
 * name. What is called is one of that set, whatever the arguments' types turn out to be, and
 * the rules name functions, not overloads: the set's first declaration is the callee. */
struct callee_walk { CXCursor call, found; int nkids; };
static enum CXChildVisitResult callee_visit(CXCursor k, CXCursor parent, CXClientData d) {
  struct callee_walk *w = d;
  if (clang_equalCursors(parent, w->call) && w->nkids++)
    return CXChildVisit_Break; /* past the callee, among the arguments */
  if (clang_getCursorKind(k) == CXCursor_OverloadedDeclRef) {
    w->found = k;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}
static CXCursor dependent_callee(CXCursor call) {
  struct callee_walk w = {call, clang_getNullCursor(), 0};
  clang_visitChildren(call, callee_visit, &w);
  if (cur_null(w.found) || clang_getNumOverloadedDecls(w.found) == 0)
    return clang_getNullCursor();
  CXCursor d = clang_getOverloadedDecl(w.found, 0);
  if (clang_getCursorKind(d) == CXCursor_UsingDeclaration)
    return clang_getNullCursor();
  return d;
}

static ls_entity *var_entity(struct conv *c, CXCursor ref) {
  enum CXCursorKind k = clang_getCursorKind(ref);
  if (k == CXCursor_ParmDecl)
    return entity_of(c, ref, LS_ENT_PARAM);
  if (k == CXCursor_FieldDecl)
    return entity_of(c, ref, LS_ENT_FIELD);
  if (k == CXCursor_VarDecl) {
    if (c->refs_cap) { /* seen before: skip the parent/storage queries */
      struct refslot *seen = ref_slot(c, ref);
      if (seen->e)
        return seen->e;
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

static int filtered(enum CXCursorKind kind) {
  return k_ref(kind) || k_attr(kind) || kind == CXCursor_ParmDecl ||
         kind == CXCursor_StructDecl || kind == CXCursor_UnionDecl || kind == CXCursor_ClassDecl ||
         kind == CXCursor_EnumDecl || kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl ||
         kind == CXCursor_CXXBaseSpecifier;
}

/* ---- the cursor tree of a function ----
 * Each clang_visitChildren call costs ~350 instructions beyond its cursors (libclang builds
 * and frees a visitor and its work list), and asking it once per converted node did that
 * 85k times on bench's 16,500-line function. Instead one recursive visit per function records
 * the cursors lint keeps (`filtered` ones and what lies below them are skipped, as nothing
 * there is converted), each with its children in visit order, and the conversion reads them
 * from that table. A recursive visit names each cursor's parent, not its depth: the parent is
 * found among the open ancestors. Entries whose children are not read as a rule (kids_unread,
 * a C call's callee) are not entered and are visited on demand, like any cursor that comes
 * from elsewhere (clang_Cursor_getArgument). */
#define T_NONE 0xffffffffu /* no child, no sibling */
#define T_LAZY 0xfffffffeu /* first: children not recorded yet */
/* A long function's table would outgrow the caches (and, at 250k entries, fault in 8 MB of
 * fresh pages: its conversion measured 28 % slower than with a visit per node). Past this
 * many entries, the statements of the function's body are recorded unentered, each
 * expanded when it is converted and dropped from the table after (conv_node). */
#define T_BIG 8192u

/* A cursor of a function body is its kind and data[0..1]: libclang sets xdata to 0 and
 * data[2] to the TU for every declaration and statement cursor (tcur rebuilds it), which
 * keeps an entry at 32 bytes, not 40 (bench's 16,500-line function has 250k of them). */
struct tnode {
  const void *d0, *d1;
  enum CXCursorKind kind;
  unsigned first, next;
};
static inline CXCursor tcur(const struct conv *c, unsigned i) {
  const struct tnode *t = &c->tab[i];
  return (CXCursor){t->kind, 0, {t->d0, t->d1, c->tu}};
}

/* What libclang's visitor passes as the parent is the cursor it recursed into for declarations,
 * and for statements and expressions a cursor rebuilt from the same Stmt (whose data[0], the
 * enclosing declaration, may differ): compare what identifies each. */
static int same_cursor(CXCursor a, CXCursor b) {
  return a.kind == b.kind && (k_decl(a.kind) ? a.data[0] == b.data[0] : a.data[1] == b.data[1]);
}

/* Growth, out of the recording's way: inlined into `record`, it costs two more saved
 * registers on every call (1.4 M instructions on bench's K = 16 function). */
static __attribute__((noinline)) void tab_grow(struct conv *c) {
  c->tab_cap = c->tab_cap ? 2 * c->tab_cap : 4096;
  c->tab = ls_xrealloc(c->tab, c->tab_cap * sizeof *c->tab);
}
static __attribute__((noinline)) struct topen *open_grow(struct conv *c) {
  size_t n = c->open_cap ? (size_t)(c->top - c->open) + 1 : 0;
  c->open_cap = c->open_cap ? 2 * c->open_cap : 64;
  c->open = ls_xrealloc(c->open, c->open_cap * sizeof *c->open);
  return c->open + n;
}

static unsigned tab_add(struct conv *c, CXCursor cur) {
  if (c->tab_n == c->tab_cap)
    tab_grow(c);
  c->tab[c->tab_n] = (struct tnode){cur.data[0], cur.data[1], cur.kind, T_LAZY, T_NONE};
  return c->tab_n++;
}

/* Kinds that conv_inner converts without their children: a name (its children are
 * references), a lambda (converted as a function of its own), literals, a goto (its label
 * is a reference). Recording does not enter them. */
static inline int kids_unread(enum CXCursorKind k) {
  return k == CXCursor_DeclRefExpr || k == CXCursor_IntegerLiteral || k == CXCursor_StringLiteral ||
         k == CXCursor_LambdaExpr || k == CXCursor_FloatingLiteral || k == CXCursor_CharacterLiteral ||
         k == CXCursor_GotoStmt;
}

/* what identifies a cursor as a parent (see same_cursor) */
static inline const void *cur_key(CXCursor cur) { return k_decl(cur.kind) ? cur.data[0] : cur.data[1]; }

static enum CXChildVisitResult record(CXCursor cur, CXCursor parent, CXClientData d) {
  struct conv *c = d;
  enum CXCursorKind k = cur.kind;
  if (filtered(k))
    return CXChildVisit_Continue;
  const void *key = cur_key(parent);
  struct topen *p = c->top;
  while (p->key != key || p->kind != parent.kind) {
    if (p == c->open)
      return CXChildVisit_Break; /* a parent that is no open ancestor: see expand */
    p--;
  }
  if (c->tab_n == c->tab_cap)
    tab_grow(c);
  unsigned i = c->tab_n++;
  struct tnode *t = c->tab + i;
  t->d0 = cur.data[0];
  t->d1 = cur.data[1];
  t->kind = k;
  t->next = T_NONE;
  int first = p->last == T_NONE;
  if (first)
    c->tab[p->idx].first = i;
  else
    c->tab[p->last].next = i;
  p->last = i;
  if (kids_unread(k) || (first && p->kind == CXCursor_CallExpr && !c->cplusplus) ||
      (i >= T_BIG && p == c->open + 1 && p->kind == CXCursor_CompoundStmt &&
       (k_decl(c->open->kind) || c->open->kind == CXCursor_LambdaExpr))) {
    t->first = T_LAZY;
    c->top = p;
    return CXChildVisit_Continue;
  }
  t->first = T_NONE;
  if (++p == c->open + c->open_cap)
    p = open_grow(c);
  *p = (struct topen){i, T_NONE, k, cur_key(cur)};
  c->top = p;
  return CXChildVisit_Recurse;
}

/* the fallback: children only, each left to be expanded in turn */
static enum CXChildVisitResult record_level(CXCursor cur, CXCursor parent, CXClientData d) {
  (void)parent;
  struct conv *c = d;
  if (!filtered(cur.kind)) {
    unsigned i = tab_add(c, cur);
    if (c->open->last == T_NONE)
      c->tab[c->open->idx].first = i;
    else
      c->tab[c->open->last].next = i;
    c->open->last = i;
  }
  return CXChildVisit_Continue;
}

/* Records the children of entry i, and theirs, if not done yet. Should libclang name a parent
 * that matches no open ancestor, what was recorded is dropped and i's children are taken one
 * level at a time, which needs no matching. */
static void expand_now(struct conv *c, unsigned i) {
  unsigned n0 = c->tab_n;
  for (int level = 0;; level = 1) {
    c->tab[i].first = T_NONE;
    c->top = c->open_cap ? c->open : open_grow(c);
    *c->top = (struct topen){i, T_NONE, c->tab[i].kind, cur_key(tcur(c, i))};
    if (!clang_visitChildren(tcur(c, i), level ? record_level : record, c) || level)
      return;
    c->tab_n = n0;
  }
}
static inline void expand(struct conv *c, unsigned i) {
  if (c->tab[i].first == T_LAZY)
    expand_now(c, i);
}

static int is_wrapper(enum CXCursorKind k) { return k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr; }

/* Implicit casts and parentheses (a third of all cursors) whose only child is an expression
 * give way to it: the child i stands for, or i itself. */
static unsigned wrapped(struct conv *c, unsigned i) {
  expand(c, i);
  unsigned k = c->tab[i].first;
  return k != T_NONE && c->tab[k].next == T_NONE && k_expr(c->tab[k].kind) ? k : i;
}
static unsigned unwrap(struct conv *c, unsigned i) {
  for (unsigned w; is_wrapper(c->tab[i].kind) && (w = wrapped(c, i)) != i;)
    i = w;
  return i;
}

struct kids {
  unsigned *v; /* table entries */
  unsigned n, cap;
  unsigned inl[8]; /* most nodes have few children: no malloc for them */
};
/* `struct kids k = {0}` would zero the inline buffer on every node: only the header is set. */
static void kids_init(struct kids *k) {
  k->v = NULL;
  k->n = k->cap = 0;
}
static void kids_free(struct kids *k) {
  if (k->v != k->inl)
    free(k->v);
}

static void kids_push(struct kids *k, unsigned i) {
  if (k->n == k->cap) {
    if (!k->cap) {
      k->v = k->inl;
      k->cap = sizeof k->inl / sizeof k->inl[0];
    } else {
      unsigned *nv = malloc(2 * k->cap * sizeof *nv);
      if (!nv)
        abort();
      memcpy(nv, k->v, k->n * sizeof *nv);
      kids_free(k);
      k->v = nv;
      k->cap *= 2;
    }
  }
  k->v[k->n++] = i;
}

/* entry i's children, unwrapped */
static void collect_unwrapped(struct conv *c, unsigned i, struct kids *k) {
  expand(c, i);
  for (unsigned j = c->tab[i].first; j != T_NONE; j = c->tab[j].next)
    kids_push(k, unwrap(c, j));
}

/* A C call's arguments: its children after the first (the callee), unwrapped in k and as the
 * call has them (wrapper and all) in orig. */
static void collect_call_args(struct conv *c, unsigned call, struct kids *k, struct kids *orig) {
  expand(c, call);
  unsigned j = c->tab[call].first;
  for (j = j == T_NONE ? j : c->tab[j].next; j != T_NONE; j = c->tab[j].next) {
    kids_push(orig, j);
    kids_push(k, unwrap(c, j));
  }
}

/* The entry of a cursor that clang_Cursor_getArgument returned: the call's child of that
 * Stmt, or, not found among them, an entry of its own. */
static unsigned arg_entry(struct conv *c, unsigned call, CXCursor arg) {
  expand(c, call);
  for (unsigned j = c->tab[call].first; j != T_NONE; j = c->tab[j].next)
    if (same_cursor(arg, tcur(c, j)))
      return j;
  return tab_add(c, arg);
}

/* The last child of a given kind, for the few lookups outside function bodies (a class's
 * destructor) and of what the table leaves out (a goto's label). */
struct find_kid {
  enum CXCursorKind kind;
  CXCursor found;
  int any;
};
static enum CXChildVisitResult find_kid(CXCursor cur, CXCursor parent, CXClientData d) {
  (void)parent;
  struct find_kid *f = d;
  if (cur.kind == f->kind) {
    f->found = cur;
    f->any = 1;
  }
  return CXChildVisit_Continue;
}
static int last_kid(CXCursor parent, enum CXCursorKind kind, CXCursor *found) {
  struct find_kid f = {.kind = kind};
  clang_visitChildren(parent, find_kid, &f);
  *found = f.found;
  return f.any;
}

static ls_node *conv_node(struct conv *c, unsigned i);
static void conv_function(struct conv *c, unsigned i, ls_entity *ent, const char *name);

/* Whether the expression at entry i is spelled as one of the rules' root designators (its
 * first token as written: `MPI_ROOT` stays visible at its expansion location). */
static int designator(struct conv *c, unsigned i) {
  CXFile tf;
  unsigned tl, tc;
  clang_getExpansionLocation(clang_getCursorLocation(tcur(c, i)), &tf, &tl, &tc, NULL);
  CXToken *tok = tf ? clang_getToken(c->tu, clang_getLocation(c->tu, tf, tl, tc)) : NULL;
  if (!tok)
    return 0;
  CXString ts = clang_getTokenSpelling(c->tu, *tok);
  const char *t = clang_getCString(ts);
  int hit = 0;
  for (int j = 0; t && j < c->p->rules->nroot_designators && !hit; j++)
    hit = !strcmp(t, c->p->rules->root_designators[j]);
  clang_disposeString(ts);
  clang_disposeTokens(c->tu, tok, 1);
  return hit;
}

/* Locations cost a macro-expansion lookup each, so only nodes a finding or a note can
 * point at get one: statements, calls, and the expressions that can be a branch condition
 * (children of statements and of && || ! ?:). */
static ls_node *new_node(struct conv *c, CXCursor cur, int loc) {
  ls_node *n = ls_alloc_lines(c->p->lines, sizeof *n);
  c->p->nnodes++;
  n->kind = cur.kind;
  if (loc || k_stmt(n->kind) || n->kind == CXCursor_CallExpr || n->kind == CXCursor_LambdaExpr ||
      n->kind == CXCursor_CXXThrowExpr)
    ls_loc_get(&c->lc, clang_getCursorLocation(cur), &n->file, &n->line, &n->col);
  /* a declaration clang could not type (an unknown type from a missing header): its uses
   * and the calls that take it are gone from the tree, whatever the error limit showed */
  if (c->fn && k_decl(n->kind) && clang_isInvalidDeclaration(cur))
    c->fn->parse_err = 1;
  return n;
}

static void set_kids(struct conv *c, ls_node *n, const unsigned *v, unsigned cnt) {
  n->nkids = cnt;
  n->kids = cnt ? ls_alloc(c->p->arena, cnt * sizeof *n->kids) : NULL;
  int loc = k_stmt(n->kind) || n->kind == CXCursor_ConditionalOperator ||
            (n->kind == CXCursor_BinaryOperator && (n->op == CXBinaryOperator_LAnd || n->op == CXBinaryOperator_LOr)) ||
            (n->kind == CXCursor_UnaryOperator && n->op == CXUnaryOperator_LNot);
  for (unsigned i = 0; i < cnt; i++) {
    c->want_loc = loc;
    n->kids[i] = v[i] == T_NONE ? NULL : conv_node(c, v[i]);
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
  unsigned slot[4] = {T_NONE, T_NONE, T_NONE, k->v[k->n - 1]};
  if (k->n == 4) {
    memcpy(slot, k->v, 4 * sizeof *slot);
  } else if (k->n > 1) {
    CXSourceRange hdr = clang_getRange(clang_getRangeStart(clang_getCursorExtent(cur)),
                                       clang_getRangeStart(clang_getCursorExtent(tcur(c, slot[3]))));
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
      unsigned off = spell_off(clang_getRangeStart(clang_getCursorExtent(tcur(c, k->v[i]))));
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
  CXCursor dtor;
  return last_kid(clang_getTypeDeclaration(t), CXCursor_Destructor, &dtor) ? entity_of(c, dtor, LS_ENT_FUNC) : NULL;
}

/* A lambda and calls of it (`operator()` of the closure, declared at the lambda's own
 * location) meet on one entity keyed by that location. */
static ls_entity *lambda_entity(struct conv *c, CXCursor at, const char *name) {
  CXFile f;
  unsigned line, col;
  clang_getExpansionLocation(clang_getCursorLocation(at), &f, &line, &col, NULL);
  char key[1200];
  snprintf(key, sizeof key, "lambda:%s:%u:%u", ls_loc_file_name(&c->lc, f), line, col);
  return ls_entity_get(c->p, key, name, LS_ENT_FUNC);
}

/* A call through a function-pointer field (`api.allReduce(...)`, a stub table filled by
 * dlsym): a function entity of its own, keyed apart from the field's data entity and named
 * "Record.field", which a project's wrappers can name and lint's thin-wrapper pass
 * (wrappers.c) gives the API function assigned to the field. NULL: not a pointer to a
 * function. */
static ls_entity *fnptr_field_entity(struct conv *c, CXCursor field) {
  CXType t = clang_getCanonicalType(clang_getCursorType(field));
  if (t.kind != CXType_Pointer)
    return NULL;
  enum CXTypeKind pk = clang_getCanonicalType(clang_getPointeeType(t)).kind;
  if (pk != CXType_FunctionProto && pk != CXType_FunctionNoProto)
    return NULL;
  CXString usr = clang_getCursorUSR(field), fs = clang_getCursorSpelling(field);
  CXCursor rec = clang_getCursorSemanticParent(field);
  CXString rs = clang_getTypeSpelling(clang_getCursorType(rec)); /* a typedef's name for `typedef struct {...} T` */
  const char *rn = clang_getCString(rs);
  if (!strncmp(rn, "struct ", 7))
    rn += 7;
  char key[1024], name[512];
  snprintf(key, sizeof key, "fp:%s", clang_getCString(usr));
  snprintf(name, sizeof name, "%s.%s", rn, clang_getCString(fs));
  ls_entity *e = ls_entity_get(c->p, key, name, LS_ENT_FUNC);
  clang_disposeString(usr);
  clang_disposeString(fs);
  clang_disposeString(rs);
  return e;
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

/* An enumerator's name and value, asked of libclang once per enumerator and TU. */
static void enum_value(struct conv *c, CXCursor ref, ls_node *n) {
  if (2 * (c->enum_n + 1) > c->enum_cap) {
    size_t nc = c->enum_cap ? 2 * c->enum_cap : 256;
    struct enumslot *nt = calloc(nc, sizeof *nt);
    if (!nt)
      abort();
    for (size_t i = 0; i < c->enum_cap; i++)
      if (c->enum_tab[i].decl) {
        size_t j = ptr_hash(c->enum_tab[i].decl) & (nc - 1);
        while (nt[j].decl)
          j = (j + 1) & (nc - 1);
        nt[j] = c->enum_tab[i];
      }
    free(c->enum_tab);
    c->enum_tab = nt;
    c->enum_cap = nc;
  }
  size_t j = ptr_hash(ref.data[0]) & (c->enum_cap - 1);
  for (; c->enum_tab[j].decl; j = (j + 1) & (c->enum_cap - 1))
    if (c->enum_tab[j].decl == ref.data[0])
      break;
  struct enumslot *e = &c->enum_tab[j];
  if (!e->decl) {
    e->decl = ref.data[0];
    e->text = spelling(c, ref);
    e->v = clang_getEnumConstantDeclValue(ref);
    c->enum_n++;
  }
  n->text = e->text;
  n->ilit = 1;
  n->ival = e->v;
}

/* Whether clang's evaluator can never fold n to a constant: it reads a parameter through
 * operators that evaluate all their operands (so not && || ?: , sizeof). */
/* Whether the datatype argument at cursor index at is written as one token that names one of
 * rf's predefined datatypes (MPI_DOUBLE, not `vec` or `types[0]`): only then is the type
 * signature of its count known (seq.c). */
static void basic_dtype(struct conv *c, const ls_rule_fn *rf, unsigned at, ls_node *n) {
  /* the extent as the user wrote it: a macro's expansion location, not its definition */
  CXSourceRange r = clang_getCursorExtent(tcur(c, at));
  CXFile f0, f1;
  unsigned l0, c0, l1, c1;
  clang_getExpansionLocation(clang_getRangeStart(r), &f0, &l0, &c0, NULL);
  clang_getExpansionLocation(clang_getRangeEnd(r), &f1, &l1, &c1, NULL);
  n->dtype_seen = 1;
  if (!f0 || !clang_File_isEqual(f0, f1))
    return;
  CXToken *toks = NULL;
  unsigned nt = 0;
  clang_tokenize(c->tu, clang_getRange(clang_getLocation(c->tu, f0, l0, c0), clang_getLocation(c->tu, f1, l1, c1)),
                 &toks, &nt);
  if (nt == 1) {
    CXString ts = clang_getTokenSpelling(c->tu, toks[0]);
    const char *sp = clang_getCString(ts);
    for (int k = 0; sp && k < rf->nbasic_dtypes && !n->dtype_basic; k++)
      n->dtype_basic = !strcmp(sp, rf->basic_dtypes[k]);
    clang_disposeString(ts);
  }
  if (toks)
    clang_disposeTokens(c->tu, toks, nt);
}

static int never_constant(const ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr ||
               n->kind == CXCursor_CStyleCastExpr) && n->nkids == 1)
    n = n->kids[0];
  if (!n)
    return 0;
  if (n->kind == CXCursor_DeclRefExpr)
    return n->ent && n->ent->kind == LS_ENT_PARAM;
  if (n->kind == CXCursor_MemberRefExpr)
    return n->nkids == 1 && never_constant(n->kids[0]);
  if (n->kind == CXCursor_BinaryOperator && n->nkids == 2 && n->op != CXBinaryOperator_LAnd &&
      n->op != CXBinaryOperator_LOr && n->op != CXBinaryOperator_Comma)
    return never_constant(n->kids[0]) || never_constant(n->kids[1]);
  return 0;
}

/* An integer literal's value read from the main file's text (clang_Cursor_Evaluate costs
 * ~1,000 instructions): plain decimal, hex and octal with the usual suffixes; anything else,
 * and literals spelled inside macros, are left to libclang. Checked like the locations. */
static int literal_value(struct conv *c, CXCursor cur, ls_node *n) {
  ls_locache *lc = &c->lc;
  if (lc->fast <= 0)
    return 0;
  CXSourceLocation loc = clang_getCursorLocation(cur);
  unsigned off = loc.int_data - lc->base;
  if ((loc.int_data & 0x80000000u) || off >= lc->size)
    return 0;
  const char *s = lc->buf + off, *e = lc->buf + lc->size;
  unsigned long long v = 0;
  unsigned base = 10;
  if (s + 1 < e && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    base = 16, s += 2;
  else if (s[0] == '0')
    base = 8;
  const char *d0 = s;
  for (; s < e; s++) {
    unsigned dv;
    if (*s >= '0' && *s <= '9')
      dv = (unsigned)(*s - '0');
    else if (base == 16 && *s >= 'a' && *s <= 'f')
      dv = (unsigned)(*s - 'a' + 10);
    else if (base == 16 && *s >= 'A' && *s <= 'F')
      dv = (unsigned)(*s - 'A' + 10);
    else
      break;
    if (dv >= base || v > (~0ull - dv) / base)
      return 0;
    v = v * base + dv;
  }
  if (s == d0 && base != 8)
    return 0;
  while (s < e && (*s == 'u' || *s == 'U' || *s == 'l' || *s == 'L'))
    s++;
  if (s < e && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                *s == '_' || *s == '\'' || *s == '.'))
    return 0; /* a suffix or form not handled here (digit separators, 0b, z, wb) */
  n->ilit = 1;
  n->ival = (long long)v;
  if ((lc->nchecks++ & 63) == 0 || lc->nchecks < 16) {
    CXEvalResult ev = clang_Cursor_Evaluate(cur);
    int same = ev && clang_EvalResult_getKind(ev) == CXEval_Int && clang_EvalResult_getAsLongLong(ev) == n->ival;
    if (ev)
      clang_EvalResult_dispose(ev);
    if (!same) {
      lc->fast = 0; /* the main-file shortcut is wrong for this TU: stop using it */
      n->ilit = 0;
      return 0;
    }
  }
  return 1;
}

static ls_node *conv_inner(struct conv *c, unsigned ci) {
  int loc = c->want_loc;
  c->want_loc = 0;
  CXCursor cur = tcur(c, ci);
  if (is_wrapper(cur.kind)) {
    unsigned inner = wrapped(c, ci);
    if (inner != ci) {
      c->want_loc = loc;
      return conv_node(c, inner);
    }
  }
  ls_node *n = new_node(c, cur, loc);
  struct kids k;
  kids_init(&k);
  switch (n->kind) {
  case CXCursor_LambdaExpr: {
    char name[256];
    snprintf(name, sizeof name, "%s::lambda@%u", c->fn ? c->fn->name : "", n->line);
    ls_func *outer = c->fn;
    ls_entity *le = lambda_entity(c, cur, name);
    if (!le->def)
      conv_function(c, ci, le, ls_strdup(c->p->arena, name));
    c->fn = outer;
    n->ent = le; /* the function it is, for calls that take it (std::thread) */
    return n; /* a lambda is its own function; creating it issues nothing */
  }
  case CXCursor_CallExpr: {
    ls_vec_push(&c->refs, n);
    CXCursor ref = clang_getCursorReferenced(cur);
    if (cur_null(ref) && c->cplusplus)
      ref = dependent_callee(cur);
    if (!cur_null(ref) && ref.kind == CXCursor_FieldDecl) {
      /* a call through a function pointer stays an unknown call (callee expression and all)
       * unless the rules name the field; wrappers.c binds the others it can */
      ls_entity *fe = fnptr_field_entity(c, ref);
      if (fe && fe->rule) {
        n->ent = fe;
        n->text = fe->name;
      } else if (fe) {
        ls_vec_push(&c->p->fpcalls, n);
        ls_vec_push(&c->p->fpcalls, fe);
      }
    } else if (!cur_null(ref) && is_function_kind(ref.kind)) {
      n->ent = c->cplusplus && is_lambda_call_op(ref) ? lambda_entity(c, ref, "lambda") : entity_of(c, ref, LS_ENT_FUNC);
      n->text = n->ent->name;
      if (c->cplusplus && clang_getCursorKind(ref) == CXCursor_Constructor) {
        /* a constructed object: if nothing owns it (see VarDecl), it is a temporary whose
         * destructor runs at the end of the full expression */
        CXCursor dtor;
        if (last_kid(clang_getCursorSemanticParent(ref), CXCursor_Destructor, &dtor))
          ls_node_ext(c->p->arena, n)->dtor = entity_of(c, dtor, LS_ENT_FUNC);
      }
    }
    if (n->ent && !n->ent->rule) { /* taint asks only of calls of non-API functions */
      enum CXTypeKind rt = clang_getCanonicalType(clang_getCursorType(cur)).kind;
      n->ptr_result = rt == CXType_Pointer || rt == CXType_BlockPointer || rt == CXType_NullPtr;
    }
    int na = clang_Cursor_getNumArguments(cur);
    if (na >= 0 && n->ent) {
      /* args: what set_kids converts; orig: the arguments as written (locations, evaluation).
       * In C a call's children are its callee and then its arguments; in C++ (member and
       * operator calls, constructors) and with pragmas pending, argument by argument. */
      struct kids ka, ko;
      kids_init(&ka);
      kids_init(&ko);
      unsigned *args = NULL, *orig = NULL;
      if (!c->cplusplus && !c->npend && na > 0) {
        collect_call_args(c, ci, &ka, &ko);
        if (ka.n == (unsigned)na) {
          args = ka.v;
          orig = ko.v;
        }
      }
      if (!args) {
        kids_free(&ka);
        kids_free(&ko);
        kids_init(&ka);
        kids_init(&ko);
        for (int i = 0; i < na; i++)
          kids_push(&ka, arg_entry(c, ci, clang_Cursor_getArgument(cur, (unsigned)i)));
        args = orig = ka.v;
      }
      int keep = c->keep_str;
      c->keep_str = (n->ent->src & LS_SRC_STR) != 0;
      set_kids(c, n, args, (unsigned)na);
      c->keep_str = keep;
      const ls_rule_fn *rf = n->ent->rule;
      if (rf && rf->in_place_buf >= 0 && rf->in_place_buf < na && n->kids[rf->in_place_buf]) {
        /* the first token the user wrote for this argument (a macro name like MPI_IN_PLACE
         * stays visible at its expansion location) */
        CXFile tf;
        unsigned tl, tc;
        clang_getExpansionLocation(clang_getCursorLocation(tcur(c, orig[rf->in_place_buf])), &tf, &tl, &tc, NULL);
        CXToken *tok = tf ? clang_getToken(c->tu, clang_getLocation(c->tu, tf, tl, tc)) : NULL;
        if (tok) {
          CXString ts = clang_getTokenSpelling(c->tu, *tok);
          ls_node_ext(c->p->arena, n->kids[rf->in_place_buf])->spell = ls_strdup(c->p->arena, clang_getCString(ts));
          clang_disposeString(ts);
          clang_disposeTokens(c->tu, tok, 1);
        }
      }
      if (rf && rf->basic_dtypes && rf->kind == LS_KIND_COLLECTIVE)
        for (int i = 0; i < na && i < rf->nargs; i++)
          if (n->kids[i] && (rf->roles[i] == LS_ROLE_DTYPE || i == rf->in_place_dtype))
            basic_dtype(c, rf, orig[i], n->kids[i]);
      if (n->ent->rule && (n->ent->rule->kind == LS_KIND_COLLECTIVE || n->ent->rule->kind == LS_KIND_P2P)) {
        for (int i = 0; i < na && i < n->ent->rule->nargs; i++) {
          enum ls_role r = n->ent->rule->roles[i];
          if (n->kids[i] && (r == LS_ROLE_COUNT || r == LS_ROLE_DTYPE || r == LS_ROLE_ROOT ||
                             r == LS_ROLE_REDOP || r == LS_ROLE_PEER || r == LS_ROLE_COMM)) {
            if (n->kids[i]->ilit || never_constant(n->kids[i]))
              continue; /* a literal normalizes to its value anyway; a parameter never folds */
            CXEvalResult ev = clang_Cursor_Evaluate(tcur(c, orig[i]));
            if (ev) {
              if (clang_EvalResult_getKind(ev) == CXEval_Int) {
                char b[32];
                snprintf(b, sizeof b, "#%lld", clang_EvalResult_getAsLongLong(ev));
                ls_node_ext(c->p->arena, n->kids[i])->norm = ls_strdup(c->p->arena, b);
              }
              clang_EvalResult_dispose(ev);
            }
          }
        }
      }
      kids_free(&ka);
      kids_free(&ko);
      return n;
    }
    break;
  }
  case CXCursor_DeclRefExpr:
  case CXCursor_MemberRefExpr: {
    CXCursor ref = clang_getCursorReferenced(cur);
    if (!cur_null(ref)) {
      enum CXCursorKind rk = clang_getCursorKind(ref);
      if (rk == CXCursor_EnumConstantDecl) {
        enum_value(c, ref, n);
      } else {
        n->ent = var_entity(c, ref);
        n->text = n->ent ? n->ent->name : spelling(c, ref);
      }
    } else {
      n->text = spelling(c, cur);
    }
    if (n->kind == CXCursor_DeclRefExpr)
      return n; /* its children are references (qualifiers, template arguments): skipped */
    break;
  }
  case CXCursor_VarDecl:
    ls_vec_push(&c->refs, n);
    n->ent = var_entity(c, cur);
    n->text = n->ent ? n->ent->name : "";
    if (c->cplusplus) {
      ls_entity *d = dtor_of(c, cur);
      if (d)
        ls_node_ext(c->p->arena, n)->dtor = d;
    }
    break;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    n->op = clang_getCursorBinaryOperatorKind(cur);
    break;
  case CXCursor_UnaryOperator:
    n->op = clang_getCursorUnaryOperatorKind(cur);
    break;
  case CXCursor_IntegerLiteral: {
    if (literal_value(c, cur, n))
      return n;
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
    /* only rank sources read a literal's text (getenv("RANK")); spelling costs ~1,300
     * instructions and every error message in a CHECK macro is a literal */
    if (c->keep_str)
      n->text = spelling(c, cur);
    return n;
  case CXCursor_CharacterLiteral:
  case CXCursor_FloatingLiteral:
    n->text = spelling(c, cur);
    return n;
  case CXCursor_LabelStmt:
    n->text = spelling(c, cur);
    break;
  case CXCursor_GotoStmt: {
    CXCursor label;
    if (last_kid(cur, CXCursor_LabelRef, &label))
      n->text = spelling(c, label);
    return n;
  }
  case CXCursor_CompoundStmt:
    /* the closing brace: where a function ends, and in C++ where a scope's destructors run */
    if (c->fn_body || c->cplusplus) {
      const char *ef;
      ls_node_x *x = ls_node_ext(c->p->arena, n);
      ls_loc_get(&c->lc, clang_getRangeEnd(clang_getCursorExtent(cur)), &ef, &x->eline, &x->ecol);
      if (x->ecol > 1)
        x->ecol--; /* the range ends just past the brace */
    }
    c->fn_body = 0;
    break;
  default:
    break;
  }
  collect_unwrapped(c, ci, &k);
  if (n->kind == CXCursor_ForStmt && k.n)
    conv_for(c, n, cur, &k);
  else
    set_kids(c, n, k.v, k.n);
  if (n->kind == CXCursor_ConditionalOperator && k.n == 3 && k.v[1] != T_NONE && k.v[2] != T_NONE &&
      c->p->rules->nroot_designators)
    for (int a = 1; a <= 2 && n->nkids == 3; a++) { /* an alternative is a designator or such a choice */
      const ls_node *q = n->kids[a];
      while (q && q->kind == CXCursor_ParenExpr && q->nkids == 1)
        q = q->kids[0];
      n->root_choice |= designator(c, k.v[a]) || (q && q->root_choice);
    }
  kids_free(&k);
  if (n->kind == CXCursor_VarDecl) /* the variable owns the object its constructor builds */
    for (unsigned i = 0; i < n->nkids; i++) {
      ls_node *q = n->kids[i];
      while (q && q->kind != CXCursor_CallExpr && q->nkids == 1)
        q = q->kids[0];
      if (q && q->kind == CXCursor_CallExpr && q->x)
        q->x->dtor = NULL;
    }
  return n;
}


static ls_node *conv_node_at(struct conv *c, unsigned i);
/* An entry whose subtree is recorded only now (T_LAZY: see T_BIG) needs it only while it is
 * converted: the table goes back to where it was, and nothing kept refers past that (the
 * parent's list of children holds entries from before). */
static ls_node *conv_node(struct conv *c, unsigned i) {
  if (c->tab[i].first != T_LAZY)
    return conv_node_at(c, i);
  unsigned mark = c->tab_n;
  ls_node *n = conv_node_at(c, i);
  c->tab_n = mark;
  c->tab[i].first = T_LAZY;
  return n;
}

static ls_node *conv_node_at(struct conv *c, unsigned i) {
  if (!c->npend)
    return conv_inner(c, i);
  CXFile f;
  unsigned line;
  clang_getExpansionLocation(clang_getCursorLocation(tcur(c, i)), &f, &line, NULL, NULL);
  struct ls_prag *pr = NULL;
  if (c->cur_pf && f == c->cur_pf->file)
    for (int j = 0; j < c->cur_pf->n && !pr; j++)
      if (!c->cur_pf->v[j].used && c->cur_pf->v[j].body == line) {
        pr = &c->cur_pf->v[j];
        pr->used = 1; /* the outermost node on that line: nodes are converted parents first */
        c->npend--;
      }
  ls_node *n = conv_inner(c, i);
  if (!pr || !n)
    return n;
  ls_node *w = ls_alloc_lines(c->p->lines, sizeof *w);
  c->p->nnodes++;
  w->kind = CXCursor_UnexposedStmt;
  w->text = pr->text;
  w->file = n->file ? n->file : ls_loc_file_name(&c->lc, f);
  w->line = pr->line;
  w->col = 1;
  w->nkids = 1;
  w->kids = ls_alloc(c->p->arena, sizeof *w->kids);
  w->kids[0] = n;
  return w;
}

/* a lambda's parameters, in order (the table leaves ParmDecls out) */
struct lambda_params {
  struct conv *c;
  ls_vec v;
};
static enum CXChildVisitResult lambda_param(CXCursor cur, CXCursor parent, CXClientData d) {
  (void)parent;
  struct lambda_params *lp = d;
  if (cur.kind == CXCursor_ParmDecl)
    ls_vec_push(&lp->v, entity_of(lp->c, cur, LS_ENT_PARAM));
  return CXChildVisit_Continue;
}

/* The base methods m overrides, and theirs (a few), for wrappers.c: a call through the base
 * class names the base's declaration. */
static void note_overrides(struct conv *c, ls_func *f, CXCursor m) {
  CXCursor *ov = NULL;
  unsigned n = 0;
  clang_getOverriddenCursors(m, &ov, &n);
  for (unsigned i = 0; i < n && f->noverrides < 16; i++) {
    ls_entity *e = entity_of(c, ov[i], LS_ENT_FUNC);
    int seen = 0;
    for (int k = 0; k < f->noverrides; k++)
      seen |= f->overrides[k] == e;
    if (seen)
      continue;
    ls_entity **nv = ls_alloc(c->p->arena, (size_t)(f->noverrides + 1) * sizeof *nv);
    if (f->noverrides)
      memcpy(nv, f->overrides, (size_t)f->noverrides * sizeof *nv);
    nv[f->noverrides++] = e;
    f->overrides = nv;
    note_overrides(c, f, ov[i]);
  }
  if (ov)
    clang_disposeOverriddenCursors(ov);
}

/* ci: the function's table entry (a lambda's, in its enclosing function's table) */
static void conv_function(struct conv *c, unsigned ci, ls_entity *ent, const char *name) {
  CXCursor cur = tcur(c, ci);
  expand(c, ci);
  unsigned body = T_NONE;
  for (unsigned j = c->tab[ci].first; j != T_NONE; j = c->tab[j].next)
    if (c->tab[j].kind == CXCursor_CompoundStmt)
      body = j;
  if (body == T_NONE)
    return;
  ls_func *f = ls_alloc(c->p->arena, sizeof *f);
  f->name = name;
  f->ent = ent;
  if (ent)
    ent->def = f;
  ls_loc_get(&c->lc, clang_getCursorLocation(cur), &f->file, &f->line, &f->col);
  /* parameters, in order, so call sites can bind arguments to them */
  int np = clang_Cursor_getNumArguments(cur);
  if (np > 0) {
    f->params = ls_alloc(c->p->arena, (size_t)np * sizeof *f->params);
    for (int i = 0; i < np; i++)
      f->params[i] = entity_of(c, clang_Cursor_getArgument(cur, (unsigned)i), LS_ENT_PARAM);
    f->nparams = np;
  } else if (clang_getCursorKind(cur) == CXCursor_LambdaExpr) {
    struct lambda_params lp = {.c = c};
    clang_visitChildren(cur, lambda_param, &lp);
    f->params = ls_alloc(c->p->arena, (lp.v.n + 1) * sizeof *f->params);
    for (size_t i = 0; i < lp.v.n; i++)
      f->params[f->nparams++] = lp.v.v[i];
    free(lp.v.v);
  }
  if (cur.kind == CXCursor_CXXMethod && clang_CXXMethod_isVirtual(cur))
    note_overrides(c, f, cur);
  ls_vec_push(&c->p->funcs, f);
  ls_func *outer = c->fn;
  if ((c->p->rules->nregions || c->p->rules->nprimary) && !outer) { /* a lambda keeps its enclosing function's file */
    CXFile ff;
    clang_getExpansionLocation(clang_getCursorLocation(cur), &ff, NULL, NULL, NULL);
    c->cur_pf = ff ? ls_pragmas_of(&c->prag, c->p, c->tu, ff) : NULL;
    c->npend = 0;
    for (int i = 0; c->cur_pf && i < c->cur_pf->n; i++)
      c->npend += !c->cur_pf->v[i].used;
  }
  c->fn = f;
  c->fn_body = 1;
  f->body = conv_node(c, body);
  c->fn = outer;
  f->end_line = ls_nx(f->body)->eline;
  f->end_col = ls_nx(f->body)->ecol;
  if (clang_isInvalidDeclaration(cur))
    f->parse_err = 1;
  if (!f->parse_err && c->ndiags) {
    CXSourceRange r = clang_getCursorExtent(cur);
    CXFile a, b;
    unsigned lo, hi;
    clang_getExpansionLocation(clang_getRangeStart(r), &a, NULL, NULL, &lo);
    clang_getExpansionLocation(clang_getRangeEnd(r), &b, NULL, NULL, &hi);
    for (size_t i = 0; i < c->ndiags && !f->parse_err && a && clang_File_isEqual(a, b); i++)
      f->parse_err = c->diags[i].off >= lo && c->diags[i].off <= hi && clang_File_isEqual(c->diags[i].f, a);
  }
  if (f->parse_err)
    ls_vec_push(&c->ti->skipped, f);
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
      const char *fn = ls_loc_file_name(&c->lc, df);
      if (!strncmp(fn, "/usr/", 5) || (c->lib_prefix && *c->lib_prefix && !strncmp(fn, c->lib_prefix, strlen(c->lib_prefix))))
        return CXChildVisit_Continue;
    }
    ls_entity *e = entity_of(c, cur, LS_ENT_FUNC);
    if (e->def) {
      const char *file;
      unsigned line, col;
      ls_loc_get(&c->lc, clang_getCursorLocation(cur), &file, &line, &col);
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
    c->tab_n = 0; /* a table per top-level function: the previous one is converted */
    conv_function(c, tab_add(c, cur), e, name);
  }
  return CXChildVisit_Continue;
}

void ls_tu_convert(ls_program *p, CXTranslationUnit tu, const char *file, const char *const *args, int nargs,
                   const ls_parse_opts *o) {
  double t0 = ls_cpu_now() - ls_parse_cost;
  ls_tu_info *ti = ls_alloc(p->arena, sizeof *ti);
  ti->file = ls_strdup(p->arena, file);
  unsigned nd = clang_getNumDiagnostics(tu);
  struct diag_at *diags = nd ? malloc(nd * sizeof *diags) : NULL;
  size_t ndiags = 0;
  if (nd && !diags)
    abort();
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXFile df;
      unsigned off;
      clang_getExpansionLocation(clang_getDiagnosticLocation(d), &df, NULL, NULL, &off);
      if (df)
        diags[ndiags++] = (struct diag_at){df, off};
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
  struct conv c = {.p = p, .tu = tu, .lib_prefix = o->cuda_path ? o->cuda_path : "/usr/local/cuda",
                   .serial = (unsigned)p->tus.n, .lc = {.arena = p->arena, .tu = tu, .fast = -1},
                   .diags = diags, .ndiags = ndiags, .ti = ti};
  for (int i = 0; i < nargs; i++)
    if (!strncmp(args[i], "-working-directory=", 19) && args[i][19] == '/')
      c.lc.wd = args[i] + 19;
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
      if (n->x && n->x->dtor == c.renames.v[j])
        n->x->dtor = c.renames.v[j + 1];
    }
  }
  free(c.refs.v);
  free(diags);
  free(c.renames.v);
  free(c.refs_tab);
  free(c.enum_tab);
  free(c.tab);
  free(c.open);
  free(c.lc.line_at);
  ls_pragmas_free(&c.prag);
  if (ti->nerrors && p->funcs.n == before)
    ti->fatal = 1; /* errors and nothing we could read: not a usable source file */
  p->t_convert += ls_cpu_now() - t1; /* includes disposing the TU */
  clang_disposeTranslationUnit(tu);
}

