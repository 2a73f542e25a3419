/* test_analyzer.c — unit tests of the CFG builder and the rank-dependence analysis.
 * Parses cfg_cases.c with the real front end, runs the analysis, and compares each
 * function's CFG dump (blocks numbered in depth-first preorder from the entry, true side
 * first; calls per block; "?" for a branch) with the shape worked out by hand, then
 * checks which variables are rank-dependent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint.h"

static int failures;

static ls_func *find(ls_program *p, const char *name) {
  for (size_t i = 0; i < p->funcs.n; i++)
    if (!strcmp(((ls_func *)p->funcs.v[i])->name, name))
      return p->funcs.v[i];
  return NULL;
}

static void expect_cfg(ls_program *p, const char *name, const char *want) {
  ls_func *f = find(p, name);
  if (!f) {
    fprintf(stderr, "FAIL %s: function not found\n", name);
    failures++;
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  ls_cfg_dump(f, m);
  fclose(m);
  if (strcmp(buf, want)) {
    fprintf(stderr, "FAIL cfg %s:\n--- want\n%s--- got\n%s", name, want, buf);
    failures++;
  } else {
    printf("ok cfg %s\n", name);
  }
  free(buf);
}

static ls_entity *var_in(ls_node *n, const char *name) {
  if (!n)
    return NULL;
  if (n->kind == CXCursor_VarDecl && n->ent && !strcmp(n->ent->name, name))
    return n->ent;
  for (unsigned i = 0; i < n->nkids; i++) {
    ls_entity *e = var_in(n->kids[i], name);
    if (e)
      return e;
  }
  return NULL;
}

static void expect_taint(ls_program *p, const char *fn, const char *var, int want) {
  ls_func *f = find(p, fn);
  ls_entity *e = f ? var_in(f->body, var) : NULL;
  int got = e && e->taint;
  if (!e || got != want) {
    fprintf(stderr, "FAIL taint %s.%s: want %s, got %s\n", fn, var, want ? "rank-dependent" : "uniform",
            !e ? "(not found)" : got ? "rank-dependent" : "uniform");
    failures++;
  } else {
    printf("ok taint %s.%s\n", fn, var);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_analyzer RULES_DIR RESOURCE_DIR cfg_cases.c\n");
    return 2;
  }
  ls_arena *a = ls_arena_new();
  ls_rules rules = {0};
  if (ls_rules_load_dir(&rules, a, argv[1]))
    return 2;
  ls_program *p = ls_program_new(&rules);
  CXIndex idx = clang_createIndex(0, 0);
  ls_parse_opts po = {.resource_dir = argv[2]};
  if (ls_parse_file(p, idx, argv[3], NULL, 0, &po))
    return 2;
  ls_vec findings = {0};
  ls_checks_run(p, &findings);

  expect_cfg(p, "if_else", "B0 ? -> B1 B3\nB1 a() -> B2\nB2 c() -> EXIT\nB3 b() -> B2\n");
  /* && : the second test only runs when the first holds; both false edges go to the join */
  expect_cfg(p, "short_circuit", "B0 p() ? -> B1 B3\nB1 p() ? -> B2 B3\nB2 a() -> B3\nB3 -> EXIT\n");
  /* while: head tests, body's break leaves to the exit block, the rest loops back */
  expect_cfg(p, "while_break", "B0 -> B1\nB1 p() ? -> B2 B4\nB2 p() ? -> B3 B5\nB3 -> B4\nB4 c() -> EXIT\n"
                               "B5 a() -> B1\n");
  /* switch: dispatch to the three labels; case 1 falls through into case 2 */
  expect_cfg(p, "switch_fall", "B0 ? -> B1 B2 B4\nB1 a() -> B2\nB2 b() -> B3\nB3 -> EXIT\nB4 c() -> B3\n");
  expect_cfg(p, "goto_label", "B0 a() -> B1\nB1 c() -> EXIT\n");
  /* exit() ends its path in the abort sink, not at the normal exit */
  expect_cfg(p, "noreturn_call", "B0 p() ? -> B1 B2\nB1 exit() -> ABORT\nB2 a() -> EXIT\n");
  /* declared _Noreturn / __attribute__((noreturn)) without a body: no path continues */
  expect_cfg(p, "declared_noreturn", "B0 p() ? -> B1 B2\nB1 die() -> ABORT\nB2 p() ? -> B3 B4\nB3 die2() -> ABORT\n"
                                     "B4 a() -> EXIT\n");
  /* ... and a function declared after a macro that spells `extern` returns */
  expect_cfg(p, "macro_declared", "B0 p() ? -> B1 B2\nB1 returns() -> B2\nB2 a() -> EXIT\n");
  expect_cfg(p, "ternary", "B0 p() ? -> B1 B3\nB1 p() -> B2\nB2 -> EXIT\nB3 -> B2\n");
  /* do { } while (0): the constant condition leaves no back edge */
  expect_cfg(p, "do_while0", "B0 -> B1\nB1 a() -> B2\nB2 -> B3\nB3 c() -> EXIT\n");
  expect_cfg(p, "for_loop", "B0 -> B1\nB1 ? -> B2 B4\nB2 a() -> B3\nB3 -> B1\nB4 -> EXIT\n");

  expect_taint(p, "taint_cases", "r", 1); /* getenv("RANK") is a rank source */
  expect_taint(p, "taint_cases", "w", 0); /* getenv("WORLD_SIZE") is uniform */
  expect_taint(p, "taint_cases", "d", 1); /* through a parameter and the return value */
  /* summaries are context-insensitive: one rank-dependent call site taints the return */
  expect_taint(p, "taint_cases", "e", 1);
  expect_taint(p, "taint_cases", "f", 1); /* through a struct field */
  expect_taint(p, "taint_cases", "h", 1); /* through a global */
  expect_taint(p, "taint_cases", "o", 1); /* through an out-parameter */
  expect_taint(p, "taint_cases", "s", 0); /* sizeof is never a rank value */
  expect_taint(p, "taint_cases", "qq", 0); /* malloc's pointer is an address */

  clang_disposeIndex(idx);
  ls_program_free(p);
  free(findings.v);
  free(rules.fns);
  free(rules.srcs);
  free(rules.noreturn);
  ls_arena_free(a);
  printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
