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

/* name's CFG as one of cfg.c's dumps writes it, against want */
static void expect_dump(ls_program *p, const char *what, void (*dump)(const ls_func *, FILE *), const char *name,
                        const char *want) {
  ls_func *f = find(p, name);
  if (!f) {
    fprintf(stderr, "FAIL %s: function not found\n", name);
    failures++;
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  dump(f, m);
  fclose(m);
  if (strcmp(buf, want)) {
    fprintf(stderr, "FAIL %s %s:\n--- want\n%s--- got\n%s", what, name, want, buf);
    failures++;
  } else {
    printf("ok %s %s\n", what, name);
  }
  free(buf);
}
static void expect_cfg(ls_program *p, const char *name, const char *want) {
  expect_dump(p, "cfg", ls_cfg_dump, name, want);
}

/* f->fwd, the dataflow's order: every block the entry reaches once, the entry first, and
 * every edge forward except back edges of a loop, whose blocks are one run: for an edge
 * k -> t with t not after k, each block from t to k in the order lies on a cycle through t. */
static int reaches(const ls_func *f, const ls_block *from, const ls_block *to, unsigned char *seen) {
  ls_block **st = malloc(((size_t)f->nblocks + 1) * sizeof *st);
  int sp = 0, hit = 0;
  memset(seen, 0, (size_t)f->nblocks);
  st[sp++] = (ls_block *)from;
  seen[from->id] = 1;
  while (sp && !hit) {
    ls_block *k = st[--sp];
    for (int i = 0; i < k->nsucc; i++) {
      hit |= k->succ[i] == to;
      if (!seen[k->succ[i]->id]) {
        seen[k->succ[i]->id] = 1;
        st[sp++] = k->succ[i];
      }
    }
  }
  free(st);
  return hit;
}

static void check_order(ls_func *f) {
  unsigned char *seen = calloc((size_t)f->nblocks, 1), *scratch = malloc((size_t)f->nblocks);
  int bad = 0, reached = 0;
  for (int i = 0; i < f->nfwd; i++) {
    ls_block *k = f->fwd[i];
    bad |= seen[k->id]++ || f->fpos[k->id] != i;
  }
  for (int b = 0; b < f->nblocks; b++) /* the entry reaches exactly what fwd holds */
    reached += f->blocks[b] == f->entry || reaches(f, f->entry, f->blocks[b], scratch);
  bad |= reached != f->nfwd || !f->nfwd || f->fwd[0] != f->entry;
  for (int i = 0; i < f->nfwd && !bad; i++) {
    ls_block *k = f->fwd[i];
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      for (int j = f->fpos[t->id]; j <= i && !bad; j++) /* a back edge: t .. k is one loop */
        bad |= !(reaches(f, t, f->fwd[j], scratch) && reaches(f, f->fwd[j], t, scratch));
    }
  }
  if (bad) {
    fprintf(stderr, "FAIL order %s: not a topological order with each loop in one run\n", f->name);
    failures++;
  } else {
    printf("ok order %s\n", f->name);
  }
  free(seen);
  free(scratch);
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
  /* the loop's body before what follows the loop (reverse postorder alone puts B4 first) */
  expect_dump(p, "order", ls_cfg_dump_order, "for_loop", "B0 B1 B2 B3 B4 EXIT VEXIT\n");
  for (size_t i = 0; i < p->funcs.n; i++)
    check_order(p->funcs.v[i]);

  expect_taint(p, "taint_cases", "r", 1); /* getenv("RANK") is a rank source */
  expect_taint(p, "taint_cases", "w", 0); /* getenv("WORLD_SIZE") is uniform */
  expect_taint(p, "taint_cases", "d", 1); /* through a parameter and the return value */
  /* a return computed from the parameter alone follows each call's argument: the call
   * with a rank value does not make this one's result rank-dependent */
  expect_taint(p, "taint_cases", "e", 0);
  /* one that also reads a global keeps the context-insensitive summary */
  expect_taint(p, "taint_cases", "e2", 1);
  expect_taint(p, "taint_cases", "f", 1); /* through a struct field */
  expect_taint(p, "taint_cases", "h", 1); /* through a global */
  expect_taint(p, "taint_cases", "o", 1); /* through an out-parameter */
  expect_taint(p, "taint_cases", "s", 0); /* sizeof is never a rank value */
  expect_taint(p, "taint_cases", "qq", 0); /* malloc's pointer is an address */

  clang_disposeIndex(idx);
  ls_program_free(p);
  free(findings.v);
  ls_rules_release(&rules);
  ls_arena_free(a);
  printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
