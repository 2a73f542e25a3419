/* lint_phase.c — LD_PRELOAD shim that splits a `lockstep lint` run into the
 * libclang parse and everything else (rules, CFG, taint, checks, output), so
 * the benchmark can report analysis time without instrumenting analyzer/.
 * It times the libclang entry points that build or free a translation unit
 * and, at process exit, appends one line to $LOCKSTEP_BENCH_PHASE_OUT:
 *   parse_ns=<n> dispose_ns=<n> visit_ns=<n> process_ns=<n> tus=<n>
 * visit_ns is the time inside outermost clang_visitChildren calls: the AST walk
 * (lint copies the AST into its own nodes there), including its callbacks.
 * With $LOCKSTEP_BENCH_ARGS_OUT set it also appends, per parse, the file and the
 * exact arguments lint gave libclang (fields separated by 0x1f, one parse a line),
 * so the benchmark runs `clang -fsyntax-only` with the same flags by construction.
 * Non-goal: per-function or per-check timing (use perf for that). */
#define _GNU_SOURCE
#include <clang-c/Index.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t t_start, parse_ns, dispose_ns, visit_ns;
static unsigned tus, visit_depth;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void log_args(const char *file, const char *const *argv, int argc, int skip0) {
  const char *path = getenv("LOCKSTEP_BENCH_ARGS_OUT");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f)
    return;
  fputs(file ? file : "", f);
  for (int i = skip0; i < argc; i++)
    fprintf(f, "\x1f%s", argv[i]);
  fputc('\n', f);
  fclose(f);
}

/* Looked up on each call rather than cached: the handful of calls per run
 * makes the dlsym cost irrelevant and keeps the shim free of state races. */
#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

__attribute__((constructor)) static void phase_begin(void) { t_start = now_ns(); }

__attribute__((destructor)) static void phase_end(void) {
  const char *path = getenv("LOCKSTEP_BENCH_PHASE_OUT");
  if (!path)
    return;
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  fprintf(f, "parse_ns=%llu dispose_ns=%llu visit_ns=%llu process_ns=%llu tus=%u\n",
          (unsigned long long)parse_ns, (unsigned long long)dispose_ns,
          (unsigned long long)visit_ns,
          (unsigned long long)(now_ns() - t_start), tus);
  fclose(f);
}

enum CXErrorCode clang_parseTranslationUnit2FullArgv(
    CXIndex idx, const char *file, const char *const *argv, int argc,
    struct CXUnsavedFile *unsaved, unsigned nunsaved, unsigned options,
    CXTranslationUnit *out) {
  log_args(file, argv, argc, 1); /* argv[0] is the program name here */
  uint64_t t0 = now_ns();
  enum CXErrorCode rc = REAL(clang_parseTranslationUnit2FullArgv)(
      idx, file, argv, argc, unsaved, nunsaved, options, out);
  parse_ns += now_ns() - t0;
  tus++;
  return rc;
}

/* libclang implements the two older entry points on top of FullArgv inside
 * the library, where the call does not go through the PLT, so each is timed
 * here on its own without double counting. */
enum CXErrorCode clang_parseTranslationUnit2(
    CXIndex idx, const char *file, const char *const *argv, int argc,
    struct CXUnsavedFile *unsaved, unsigned nunsaved, unsigned options,
    CXTranslationUnit *out) {
  log_args(file, argv, argc, 0);
  uint64_t t0 = now_ns();
  enum CXErrorCode rc = REAL(clang_parseTranslationUnit2)(
      idx, file, argv, argc, unsaved, nunsaved, options, out);
  parse_ns += now_ns() - t0;
  tus++;
  return rc;
}

CXTranslationUnit clang_parseTranslationUnit(CXIndex idx, const char *file,
                                             const char *const *argv, int argc,
                                             struct CXUnsavedFile *unsaved,
                                             unsigned nunsaved, unsigned options) {
  log_args(file, argv, argc, 0);
  uint64_t t0 = now_ns();
  CXTranslationUnit tu = REAL(clang_parseTranslationUnit)(idx, file, argv, argc,
                                                          unsaved, nunsaved, options);
  parse_ns += now_ns() - t0;
  tus++;
  return tu;
}

int clang_reparseTranslationUnit(CXTranslationUnit tu, unsigned nunsaved,
                                 struct CXUnsavedFile *unsaved, unsigned options) {
  uint64_t t0 = now_ns();
  int rc = REAL(clang_reparseTranslationUnit)(tu, nunsaved, unsaved, options);
  parse_ns += now_ns() - t0;
  return rc;
}

void clang_disposeTranslationUnit(CXTranslationUnit tu) {
  uint64_t t0 = now_ns();
  REAL(clang_disposeTranslationUnit)(tu);
  dispose_ns += now_ns() - t0;
}

/* Nested calls (from inside a visitor callback) are part of the outer one. */
unsigned clang_visitChildren(CXCursor parent, CXCursorVisitor visitor, CXClientData data) {
  uint64_t t0 = visit_depth++ ? 0 : now_ns();
  unsigned rc = REAL(clang_visitChildren)(parent, visitor, data);
  if (--visit_depth == 0)
    visit_ns += now_ns() - t0;
  return rc;
}
