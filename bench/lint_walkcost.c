/* lint_walkcost.c — what does copying a TU's function bodies out of libclang cost,
 * depending on how the walk asks? A stand-alone model of analyzer/convert.c's walk (it
 * does not build nodes): one libclang query mix per AST node, chosen by env:
 *   LOC=all|stmt     expansion location of every node, or of statements/calls/decls only
 *   USR=every|cached USR of the referenced declaration at every reference, or once per Decl
 *   VISIT=pernode|recursive  one clang_visitChildren per node (collect kids), or one
 *                    CXChildVisit_Recurse walk per function
 *   WALK=no          parse only (the baseline to subtract)
 * Count instructions with valgrind, which is deterministic on a noisy machine:
 *   cc -O2 -I/usr/lib/llvm-19/include bench/lint_walkcost.c -L/usr/lib/llvm-19/lib -lclang-19 \
 *      -Wl,-rpath,/usr/lib/llvm-19/lib -o walkcost
 *   LOC=all USR=every VISIT=pernode valgrind --tool=cachegrind --cache-sim=no \
 *      --cachegrind-out-file=/dev/null ./walkcost TU.c -I/usr/local/cuda/include
 * A measuring instrument for the benchmark (bench/RESULTS.md), not part of lockstep. */
#include <clang-c/Index.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kids {
  CXCursor *v;
  unsigned n, cap;
};

static int loc_all, loc_stmt, usr_cached, recursive;
static unsigned long nodes, locs, usrs, sink;
static const void **seen_set;
static const size_t seen_cap = 1u << 20;

static enum CXChildVisitResult collect(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  struct kids *k = d;
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 8;
    k->v = realloc(k->v, k->cap * sizeof *k->v);
    if (!k->v)
      abort();
  }
  k->v[k->n++] = c;
  return CXChildVisit_Continue;
}

/* Open addressing on the Decl pointer a cursor carries in data[0]: stable for
 * the life of the TU, so it identifies a declaration without building a USR. */
static int seen(const void *p) {
  size_t h = (((size_t)p >> 4) * 11400714819323198485ull) & (seen_cap - 1);
  while (seen_set[h]) {
    if (seen_set[h] == p)
      return 1;
    h = (h + 1) & (seen_cap - 1);
  }
  seen_set[h] = p;
  return 0;
}

static void node(CXCursor c) {
  nodes++;
  enum CXCursorKind k = clang_getCursorKind(c);
  int want = loc_all || (loc_stmt && (k == CXCursor_CallExpr || k == CXCursor_VarDecl ||
                                      (clang_isStatement(k) && k != CXCursor_CompoundStmt)));
  if (want) {
    CXFile f;
    unsigned line, col;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &line, &col, NULL);
    sink += line + col;
    locs++;
  }
  if (k == CXCursor_DeclRefExpr || k == CXCursor_CallExpr || k == CXCursor_MemberRefExpr) {
    CXCursor r = clang_getCursorReferenced(c);
    if (!clang_Cursor_isNull(r) && (!usr_cached || !seen(r.data[0]))) {
      CXString u = clang_getCursorUSR(r);
      sink += strlen(clang_getCString(u));
      clang_disposeString(u);
      usrs++;
    }
  }
}

static void per_node(CXCursor c) {
  node(c);
  struct kids k = {0};
  clang_visitChildren(c, collect, &k);
  for (unsigned i = 0; i < k.n; i++)
    per_node(k.v[i]);
  free(k.v);
}

static enum CXChildVisitResult flat(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  (void)d;
  node(c);
  return CXChildVisit_Recurse;
}

static enum CXChildVisitResult top(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  (void)d;
  if (clang_getCursorKind(c) == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
    if (recursive) {
      node(c);
      clang_visitChildren(c, flat, NULL);
    } else {
      per_node(c);
    }
  }
  return CXChildVisit_Continue;
}

static int env_is(const char *name, const char *value) {
  const char *e = getenv(name);
  return e && !strcmp(e, value);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE [clang flags...]\n", argv[0]);
    return 2;
  }
  loc_all = !env_is("LOC", "stmt");
  loc_stmt = env_is("LOC", "stmt");
  usr_cached = env_is("USR", "cached");
  recursive = env_is("VISIT", "recursive");
  CXIndex idx = clang_createIndex(0, 0);
  CXTranslationUnit tu;
  if (clang_parseTranslationUnit2(idx, argv[1], (const char *const *)argv + 2, argc - 2, NULL, 0,
                                  CXTranslationUnit_KeepGoing, &tu) != CXError_Success) {
    fprintf(stderr, "%s: cannot parse\n", argv[1]);
    return 2;
  }
  seen_set = calloc(seen_cap, sizeof *seen_set);
  if (!seen_set)
    abort();
  if (!env_is("WALK", "no"))
    clang_visitChildren(clang_getTranslationUnitCursor(tu), top, NULL);
  fprintf(stderr, "nodes=%lu locations=%lu usrs=%lu (%lu)\n", nodes, locs, usrs, sink & 1);
  free(seen_set);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(idx);
  return 0;
}
