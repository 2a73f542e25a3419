/* cfg_cases.c — inputs for test_analyzer: one function per CFG construct. The calls are
 * plain externs so the dump shows where each lands. Not meant to run. */
#include <stdlib.h>
void a(void);
void b(void);
void c(void);
int p(void);
int rank_of(void);

void if_else(int x) {
  if (x) a(); else b();
  c();
}
void short_circuit(void) {
  if (p() && p()) a();
}
void while_break(void) {
  while (p()) {
    if (p()) break;
    a();
  }
  c();
}
void switch_fall(int x) {
  switch (x) {
  case 1: a();
  case 2: b(); break;
  default: c();
  }
}
void goto_label(void) {
  a();
  goto out;
out:
  c();
}
void noreturn_call(void) {
  if (p()) exit(1);
  a();
}
_Noreturn void die(void);
__attribute__((noreturn)) void die2(const char *why);
void declared_noreturn(void) {
  if (p()) die();
  if (p()) die2("x");
  a();
}
/* A declaration that starts with a macro: the tokens before its name are `API void`, not
 * everything from the macro's #define on (which holds a _Noreturn). */
#define API extern
_Noreturn void die3(void);
API void returns(void);
void macro_declared(void) {
  if (p()) returns();
  a();
}
void ternary(void) {
  int v = p() ? p() : 0;
  (void)v;
}
void do_while0(void) {
  do { a(); } while (0);
  c();
}
void for_loop(void) {
  for (int i = 0; i < 3; i++) a();
}
/* the dataflow's block order (ls_cfg_forward): nested loops, then more branches after them */
void loops_order(int n) {
  while (p()) {
    for (int i = 0; i < n; i++) {
      if (p())
        continue;
      a();
    }
    do b(); while (p());
  }
  if (p())
    c();
  for (;;)
    if (p()) break;
}

/* taint */
struct ctx { int rank; int size; };
static int g_rank;
static int twice(int v) { return 2 * v; }
static int plus_g(int v) { return v + g_rank; }
static void store(int *out) { *out = atoi(getenv("RANK")); }
void taint_cases(void) {
  int r = atoi(getenv("RANK"));
  int w = atoi(getenv("WORLD_SIZE"));
  int d = twice(r);
  int e = twice(w);
  int e2 = plus_g(w);
  struct ctx cx;
  cx.rank = r;
  int f = cx.rank;
  g_rank = r;
  int h = g_rank + 1;
  int o;
  store(&o);
  int s = (int)sizeof r;
  int *q = malloc(sizeof(int) * (size_t)r);
  int qq = q != 0;
  (void)d; (void)e; (void)e2; (void)f; (void)h; (void)s; (void)qq;
}
