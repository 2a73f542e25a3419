/* parse.c — one translation unit through libclang: the flags lint adds (CUDA host side, the
 * clang resource directory, -w; OpenMP parsed as serial code), the parse itself, and its
 * failure named. The conversion of what it parsed is convert.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend.h"

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

_Thread_local double ls_parse_cost;

CXTranslationUnit ls_tu_parse(CXIndex idx, const char *file, const char *const *args, int nargs,
                              const ls_parse_opts *o) {
  struct stat st; /* a database entry for a source not generated yet: say so, not "cannot parse" */
  if (stat(file, &st) != 0) {
    fprintf(stderr, "%s: error: cannot read: %s\n", file, strerror(errno));
    return NULL;
  }
  ls_vec all = {0};
  if (o->cuda)
    ls_cuda_flags(&all, o);
  int omp = 0;
  for (int i = 0; i < nargs; i++) {
    /* with -fopenmp, libclang hides the statements of OpenMP directives (CapturedStmt):
     * parse as serial code with the same macros; pragma.c finds the pragmas in the text */
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
  /* Compiler warnings are not lint's output (only errors are: "analysis may be incomplete"),
   * and they cost: with them clang's parse of bench/lint_gen.py's TU takes 10 % more
   * instructions (format-string and conversion checks run for every call even when nothing
   * is printed), and a database's -Werror turns them into errors that make lint call a
   * correct TU incomplete. -w keeps errors, including warnings that are errors by default
   * (an implicit declaration in C99). Last, and always: bench/lint_measure.py drops exactly
   * this final -w to give clang the TU's own flags. */
  /* every error, not clang's first 20: a function is not checked when one lies in its body,
   * and in a TU missing a generated header the first 20 are all in that header's users */
  ls_vec_push(&all, "-ferror-limit=0");
  ls_vec_push(&all, "-w");
  CXTranslationUnit tu = NULL;
  double t0 = ls_cpu_now();
  enum CXErrorCode ec = clang_parseTranslationUnit2(idx, file, (const char *const *)all.v, (int)all.n, NULL, 0,
                                                   CXTranslationUnit_KeepGoing, &tu);
  free(all.v);
  ls_parse_cost = ls_cpu_now() - t0;
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
