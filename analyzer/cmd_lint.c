/* cmd_lint.c — `lockstep lint`: command line, inputs (files + flags after `--`, or a
 * compilation database), rules loading, and the exit-code contract (0 clean, 1 findings,
 * 2 usage/input error). The analysis runs on a thread with a large stack because the node
 * conversion and the CFG builder recurse over the AST's depth. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <clang-c/CXCompilationDatabase.h>

#include "cdb_flags.h"
#include "commands.h"
#include "integ.h"
#include "lint.h"

#ifndef LOCKSTEP_CLANG_RESOURCE_DIR
#define LOCKSTEP_CLANG_RESOURCE_DIR ""
#endif
#ifndef LOCKSTEP_CUDA_INCLUDE_BUILD
#define LOCKSTEP_CUDA_INCLUDE_BUILD ""
#endif
#ifndef LOCKSTEP_CUDA_INCLUDE_INSTALL
#define LOCKSTEP_CUDA_INCLUDE_INSTALL ""
#endif

static const char usage_text[] =
    "usage: lockstep lint [options] FILE... [-- COMPILER-FLAGS...]\n"
    "       lockstep lint [options] -p BUILD-DIR [FILE...]\n"
    "\n"
    "Finds code paths on which ranks issue different collective sequences, unbalanced\n"
    "group scopes, rank-dependent collective arguments and ungrouped send/recv pairs in\n"
    "C, C++ and CUDA sources (.cu files are parsed host-side).\n"
    "\n"
    "options:\n"
    "  -p DIR            read DIR/compile_commands.json; analyze every entry, or only the\n"
    "                    FILEs named (summaries still cross all analyzed TUs)\n"
    "  --rules FILE      load this rules file instead of the default rules/*.json;\n"
    "                    repeat to load several; files that only declare `wrappers`\n"
    "                    add to the default rules (DIR/lockstep-wrappers.json is\n"
    "                    loaded with -p DIR)\n"
    "  --format=FORMAT   text (default, clang-style), json, or sarif (SARIF 2.1.0)\n"
    "  --verify          check the findings against the // expected-warning{{rule}}\n"
    "                    annotations in each FILE (an error-path finding's annotation\n"
    "                    ends in {{error-path}}); exit 1 on any mismatch\n"
    "  --cuda-path=DIR   CUDA toolkit used for .cu files (default /usr/local/cuda)\n"
    "  --extra-arg=FLAG  add a compiler flag (also to -p entries); for hooks that append\n"
    "                    the FILEs after the options, such as pre-commit\n"
    "  --enable=RULES    report only these rules (comma-separated ids)\n"
    "  --disable=RULES   do not report these rules\n"
    "  --warnings-as-errors=RULES\n"
    "                    report these rules (or 'all') as errors; their findings fail\n"
    "                    the run even when listed in the baseline\n"
    "  --baseline FILE   write FILE with the current findings if it does not exist;\n"
    "                    otherwise report only findings whose fingerprint it lacks\n"
    "  --baseline-write  (re)write the baseline FILE even if it exists\n"
    "  --error-paths=show|hide\n"
    "                    findings reached only after a call reported failure (a CHECK\n"
    "                    macro's return inside a group, an error goto) are real but\n"
    "                    not the normal run's bug: show (default) reports them tagged\n"
    "                    '(error path)', SARIF level note, counted apart in the summary;\n"
    "                    hide leaves them out and says how many. Show, because the\n"
    "                    error path of a group is where NCCL still needs ncclGroupEnd:\n"
    "                    a pre-commit hook should say so once per group scope\n"
    "  --allow-errors    a FILE with compile errors does not fail the run (by default\n"
    "                    it does, exit 2: its analysis is incomplete). Either way a\n"
    "                    function with an error inside its body (or an invalid\n"
    "                    declaration, e.g. an unknown type) is not checked: no\n"
    "                    findings from it; stderr, the summary and JSON (tus[].skipped)\n"
    "                    name each such function\n"
    "  -j N, --jobs=N    parse N translation units at once\n"
    "  --summary         print a summary (TUs, functions, findings by rule, time) on\n"
    "                    stderr; on by default with -p, -j or a terminal\n"
    "  -q, --quiet       no progress line and no summary\n"
    "  -h, --help        show this help\n"
    "  --version         print lockstep's version\n"
    "\n"
    "rules: `lockstep rules` lists every rule id, `lockstep explain RULE-ID` says\n"
    "what it flags and how to fix it. Suppress one finding with a comment on its\n"
    "line or the line above:\n"
    "  // lockstep: ignore(rule-id) reason\n"
    "\n"
    "Options that take one value may be given once; contradicting options (--enable\n"
    "and --disable of one rule, --baseline-write without --baseline, --verify with a\n"
    "filter, --format=sarif or --error-paths=hide, --quiet with --summary) are usage\n"
    "errors.\n"
    "\n"
    "exit status: 0 no findings (none beyond the baseline), 1 findings (or --verify\n"
    "mismatch), 2 usage or input error, a damaged compile_commands.json, or a FILE\n"
    "with compile errors (unless --allow-errors); findings are reported first\n";

struct input {
  const char *file;
  ls_vec args; /* char* */
  int cuda;
};

struct opts {
  int argc;
  char **argv;
  int rc;
};

static int exists_dir(const char *p) {
  struct stat st;
  return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* Compilation-database arguments to what libclang accepts: drop the compiler, -c/-o,
 * dependency-file flags and nvcc-only flags; keep includes, defines, language flags. */
static void translate(ls_arena *a, struct input *in, CXCompileCommand cmd, const char *file, const char *dir) {
  unsigned n = clang_CompileCommand_getNumArgs(cmd);
  static const char *skip1[] = {"-c", "-MD", "-MMD", "-MP", "-Werror", "--expt-relaxed-constexpr",
                                "--expt-extended-lambda", "--extended-lambda", "-lineinfo", "--use_fast_math",
                                "-use_fast_math", "-forward-unknown-to-host-compiler", "-G", "--keep",
                                "--resource-usage", "-Wno-deprecated-gpu-targets", "-pipe"};
  static const char *skip2[] = {"-o", "-MF", "-MT", "-MQ", "-gencode", "-arch", "-code", "-ccbin",
                                "--compiler-bindir", "-Xptxas", "-Xlinker", "-Xnvlink", "--threads",
                                "--options-file", "--default-stream", "-maxrregcount", "--generate-code",
                                "--gpu-architecture", "--gpu-code", "-Xfatbin", "-Xarchive"};
  static const char *skipeq[] = {"-arch=", "-code=", "-gencode=", "--generate-code=", "--gpu-architecture=",
                                 "--gpu-code=", "-rdc=", "--relocatable-device-code=", "-maxrregcount=",
                                 "--diag-suppress=", "--diag_suppress=", "-diag-suppress=", "--threads=",
                                 "--default-stream=", "-Werror=", "-o", "-MF", "-MT", "-MQ", "-ccbin=",
                                 "--compiler-bindir=", "--Werror="};
  char real_file[PATH_MAX * 2];
  if (!realpath(file, real_file))
    snprintf(real_file, sizeof real_file, "%s", file);
  for (unsigned i = 0; i < n; i++) {
    CXString s = clang_CompileCommand_getArg(cmd, i);
    const char *arg = clang_getCString(s);
    const char *keep = NULL;
    int eat = 0;
    if (i == 0) {
      if (strstr(arg, "nvcc"))
        in->cuda = 1;
      clang_disposeString(s);
      continue;
    }
    int done = 0;
    for (size_t k = 0; k < sizeof skip1 / sizeof *skip1 && !done; k++)
      done = !strcmp(arg, skip1[k]);
    for (size_t k = 0; k < sizeof skip2 / sizeof *skip2 && !done; k++)
      if (!strcmp(arg, skip2[k]))
        done = eat = 1;
    for (size_t k = 0; k < sizeof skipeq / sizeof *skipeq && !done; k++)
      done = starts(arg, skipeq[k]);
    if (!done && (!strcmp(arg, "-x") || !strcmp(arg, "--x")) && i + 1 < n) {
      CXString t = clang_CompileCommand_getArg(cmd, i + 1);
      const char *lang = clang_getCString(t);
      if (!strcmp(lang, "cu") || !strcmp(lang, "cuda")) {
        in->cuda = 1;
        done = eat = 1;
      }
      clang_disposeString(t);
    }
    if (!done && (!strcmp(arg, "-Xcompiler") || !strcmp(arg, "--compiler-options")) && i + 1 < n) {
      CXString t = clang_CompileCommand_getArg(cmd, ++i);
      char *copy = ls_strdup(a, clang_getCString(t));
      for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
        if (strcmp(tok, "-Werror") && !starts(tok, "-W"))
          ls_vec_push(&in->args, tok);
      clang_disposeString(t);
      done = 1;
    }
    if (!done && starts(arg, "--std="))
      keep = ls_strdup(a, arg + 1);
    if (!done && !keep) {
      char ra[PATH_MAX], rel[PATH_MAX * 2];
      snprintf(rel, sizeof rel, "%s/%s", dir && *dir && arg[0] != '/' ? dir : "", arg);
      const char *cand = dir && *dir && arg[0] != '/' ? rel : arg;
      /* All but the source file itself, which libclang adds. */
      if (strcmp(arg, file) && (arg[0] == '-' || !realpath(cand, ra) || strcmp(ra, real_file)))
        keep = ls_strdup(a, arg);
    }
    if (keep)
      ls_vec_push(&in->args, (void *)keep);
    if (eat)
      i++;
    clang_disposeString(s);
  }
}

static int load_cdb(ls_arena *a, const char *dir, char **named, int nnamed, ls_vec *inputs) {
  char dbname[PATH_MAX + 32];
  snprintf(dbname, sizeof dbname, "%s/compile_commands.json", dir);
  if (ls_cdb_validate(dbname))
    return -1;
  CXCompilationDatabase_Error err = CXCompilationDatabase_NoError;
  CXCompilationDatabase db = clang_CompilationDatabase_fromDirectory(dir, &err);
  if (err != CXCompilationDatabase_NoError || !db) {
    fprintf(stderr, "%s: error: cannot load the compilation database\n", dbname);
    if (db)
      clang_CompilationDatabase_dispose(db);
    return -1;
  }
  CXCompileCommands cmds = clang_CompilationDatabase_getAllCompileCommands(db);
  unsigned n = cmds ? clang_CompileCommands_getSize(cmds) : 0;
  int rc = 0;
  if (!n) {
    fprintf(stderr, "%s/compile_commands.json: error: the compilation database has no entries\n", dir);
    rc = -1;
    goto out;
  }
  char *seen = calloc((size_t)nnamed + 1, 1);
  for (unsigned i = 0; i < n; i++) {
    CXCompileCommand cmd = clang_CompileCommands_getCommand(cmds, i);
    CXString fs = clang_CompileCommand_getFilename(cmd), ds = clang_CompileCommand_getDirectory(cmd);
    const char *f = clang_getCString(fs), *d = clang_getCString(ds);
    char path[PATH_MAX * 2], real[PATH_MAX * 2];
    if (f[0] == '/' || !d || !*d)
      snprintf(path, sizeof path, "%s", f);
    else
      snprintf(path, sizeof path, "%s/%s", d, f);
    if (!realpath(path, real))
      snprintf(real, sizeof real, "%s", path);
    int want = nnamed == 0;
    for (int k = 0; k < nnamed; k++) {
      char rn[PATH_MAX];
      if (realpath(named[k], rn) && !strcmp(rn, real)) {
        seen[k] = 1;
        want = 1;
      }
    }
    if (want) {
      struct input *in = ls_alloc(a, sizeof *in);
      in->file = ls_strdup(a, nnamed ? real : path);
      if (d && *d) {
        char *wd = ls_alloc(a, strlen(d) + 32);
        sprintf(wd, "-working-directory=%s", d);
        ls_vec_push(&in->args, wd);
      }
      translate(a, in, cmd, path, d);
      CXString cs = clang_CompileCommand_getArg(cmd, 0);
      ls_cdb_adjust(a, dbname, clang_getCString(cs), &in->args); /* GCC-only flags, mpicc's -I */
      clang_disposeString(cs);
      in->cuda |= ls_is_cuda_file(in->file);
      ls_vec_push(inputs, in);
    }
    clang_disposeString(fs);
    clang_disposeString(ds);
  }
  for (int k = 0; k < nnamed; k++)
    if (!seen[k]) {
      fprintf(stderr, "%s: error: not in %s/compile_commands.json\n", named[k], dir);
      rc = -1;
    }
  free(seen);
  ls_cdb_done();
out:
  if (cmds)
    clang_CompileCommands_dispose(cmds);
  clang_CompilationDatabase_dispose(db);
  return rc;
}

static int cmp_finding(const void *x, const void *y) {
  const ls_finding *a = *(ls_finding *const *)x, *b = *(ls_finding *const *)y;
  int c = strcmp(a->file, b->file);
  if (c)
    return c;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return strcmp(a->rule, b->rule);
}

/* The verdict on TUs with compile errors, last on stderr, after what was found in them. */
/* Is finding f inside a function whose body clang could not read (ls_func.parse_err)? Its
 * calls may be gone, so what it found there is not what the code does. */
static int in_unparsed(const ls_program *p, const ls_finding *f) {
  for (size_t k = 0; k < p->tus.n; k++) {
    const ls_tu_info *t = p->tus.v[k];
    for (size_t j = 0; j < t->skipped.n; j++) {
      const ls_func *g = t->skipped.v[j];
      if (f->file && g->file && f->line >= g->line && f->line <= g->end_line && !strcmp(f->file, g->file))
        return 1;
    }
  }
  return 0;
}

static void say_incomplete(size_t n, size_t ntus) {
  if (n)
    fprintf(stderr, "lockstep lint: error: %zu of %zu TU%s did not compile; give the flags they need (-I, -D after "
                    "--, or -p with the build's compile_commands.json), or --allow-errors to accept an incomplete "
                    "analysis\n", n, ntus, ntus == 1 ? "" : "s");
}

static int lint_main(int argc, char **argv) {
  const char *cdb = NULL, *format = NULL, *cuda_path = NULL;
  ls_vec rules_files = {0}, files = {0}, flags = {0}, inputs = {0}, raw = {0};
  int verify = 0, rc = 2, i;
  ls_arena *a = ls_arena_new();
  ls_rules rules = {0};
  ls_program *prog = NULL;
  CXIndex idx = NULL;
  ls_vec findings = {0};
  ls_policy pol = {.jobs = 1, .t0 = ls_now()};
  ls_rule_docs docs = {0};
  int pr;
  for (i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--")) {
      for (i++; i < argc; i++)
        ls_vec_push(&flags, argv[i]);
      break;
    }
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      fputs(usage_text, stdout);
      rc = 0;
      goto out;
    } else if (!strcmp(s, "--version")) {
      printf("lockstep %s\n", LOCKSTEP_VERSION);
      rc = 0;
      goto out;
    } else if (!strcmp(s, "-p") || !strcmp(s, "--rules") || !strcmp(s, "--format") || !strcmp(s, "--cuda-path")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "lockstep lint: error: %s needs an argument\n", s);
        goto usage;
      }
      const char *v = argv[++i];
      if (!strcmp(s, "--rules"))
        ls_vec_push(&rules_files, (void *)v);
      else if (ls_option_twice(s, !strcmp(s, "-p") ? cdb : !strcmp(s, "--format") ? format : cuda_path, v, ""))
        goto usage;
      else if (!strcmp(s, "-p"))
        cdb = v;
      else if (!strcmp(s, "--format"))
        format = v;
      else
        cuda_path = v;
    } else if (starts(s, "--format=")) {
      if (ls_option_twice("--format", format, s + 9, ""))
        goto usage;
      format = s + 9;
    } else if (starts(s, "--rules=")) {
      ls_vec_push(&rules_files, (void *)(s + 8));
    } else if (starts(s, "--cuda-path=")) {
      if (ls_option_twice("--cuda-path", cuda_path, s + 12, ""))
        goto usage;
      cuda_path = s + 12;
    } else if (starts(s, "-p") && s[2]) {
      if (ls_option_twice("-p", cdb, s + 2, ""))
        goto usage;
      cdb = s + 2;
    } else if (!strcmp(s, "--verify")) {
      verify = 1;
    } else if (starts(s, "--extra-arg=")) { /* compiler flag before the FILEs (pre-commit appends them) */
      ls_vec_push(&flags, (void *)(s + 12));
    } else if ((pr = ls_policy_option(&pol, argc, argv, &i)) != 0) {
      if (pr < 0)
        goto usage;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "lockstep lint: error: unknown option '%s'\n", s);
      goto usage;
    } else {
      ls_vec_push(&files, (void *)s);
    }
  }
  format = format ? format : "text";
  cuda_path = cuda_path ? cuda_path : "/usr/local/cuda";
  if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "sarif")) {
    fprintf(stderr, "lockstep lint: error: unknown format '%s' (text, json or sarif)\n", format);
    goto usage;
  }
  if (!files.n && !cdb) {
    fprintf(stderr, "lockstep lint: error: no input files\n");
    goto usage;
  }
  if (verify && !files.n) {
    fprintf(stderr, "lockstep lint: error: --verify needs the FILEs to check\n");
    goto usage;
  }
  /* options that contradict each other or one that another makes meaningless */
  if (pol.baseline_write && !pol.baseline) {
    fprintf(stderr, "lockstep lint: error: --baseline-write needs --baseline FILE\n");
    goto usage;
  }
  if (pol.quiet && pol.summary) {
    fprintf(stderr, "lockstep lint: error: --quiet and --summary contradict each other\n");
    goto usage;
  }
  if (verify) { /* --verify checks every finding against the annotations; nothing filters them */
    const char *no = !strcmp(format, "sarif") ? "--format=sarif" : pol.baseline ? "--baseline"
                     : pol.enable ? "--enable" : pol.disable ? "--disable" : pol.werror ? "--warnings-as-errors"
                     : pol.hide_errpaths ? "--error-paths=hide" : NULL;
    if (no) {
      fprintf(stderr, "lockstep lint: error: --verify checks every finding against the FILEs' annotations; "
                      "%s does not apply to it\n", no);
      goto usage;
    }
  }
  /* the rule documentation: SARIF's rule metadata and the ids the rule lists may name */
  if ((!strcmp(format, "sarif") || pol.enable || pol.disable || pol.werror) &&
      (ls_rule_docs_load(&docs, a) || ls_policy_validate(&pol, &docs)))
    goto out;
  pol.summary |= cdb != NULL;
  /* rules: the --rules files, else the rules directory; a --rules file that only declares
   * `wrappers` (a project's own, below) adds to the directory's instead of replacing it */
  int only_wrappers = rules_files.n > 0;
  for (size_t k = 0; k < rules_files.n; k++) {
    int before = rules.nfns + rules.nsrcs + rules.nnoreturn + rules.nflows + rules.nregions + rules.nprimary;
    if (ls_rules_load(&rules, a, rules_files.v[k]))
      goto out;
    only_wrappers &= before == rules.nfns + rules.nsrcs + rules.nnoreturn + rules.nflows + rules.nregions + rules.nprimary;
  }
  if (!rules_files.n || only_wrappers) {
    const char *dir = ls_rules_dir_default();
    if (!exists_dir(dir)) {
      const char *built, *installed;
      ls_rules_dir_configured(&built, &installed);
      fprintf(stderr, "lockstep lint: error: no rules directory found (tried %s, %s); use --rules FILE\n",
              built, installed);
      goto out;
    }
    if (ls_rules_load_dir(&rules, a, dir)) {
      if (!rules.nfiles && !rules.nfns)
        fprintf(stderr, "%s: error: no rules files (*.json) in the rules directory\n", dir);
      goto out;
    }
  }
  /* the project's wrappers, beside its compilation database (README: Project wrappers) */
  if (cdb) {
    char wpath[PATH_MAX + 32];
    struct stat wst;
    snprintf(wpath, sizeof wpath, "%s/lockstep-wrappers.json", cdb);
    int given = 0; /* also named by --rules: loaded once */
    char rw[PATH_MAX], rg[PATH_MAX];
    for (size_t k = 0; k < rules_files.n && realpath(wpath, rw); k++)
      given |= realpath(rules_files.v[k], rg) && !strcmp(rw, rg);
    if (!given && stat(wpath, &wst) == 0 && ls_rules_load(&rules, a, ls_strdup(a, wpath)))
      goto out;
  }
  if (ls_rules_link(&rules, a))
    goto out;
  /* inputs */
  for (size_t k = 0; k < files.n; k++) {
    struct stat st;
    const char *f = files.v[k];
    if (stat(f, &st) != 0) {
      fprintf(stderr, "%s: error: %s\n", f, strerror(errno));
      goto out;
    }
    if (!S_ISREG(st.st_mode)) {
      fprintf(stderr, "%s: error: not a regular file\n", f);
      goto out;
    }
  }
  if (cdb) {
    if (load_cdb(a, cdb, (char **)files.v, (int)files.n, &inputs))
      goto out;
    for (size_t k = 0; k < inputs.n; k++)
      for (size_t j = 0; j < flags.n; j++)
        ls_vec_push(&((struct input *)inputs.v[k])->args, flags.v[j]);
  } else {
    for (size_t k = 0; k < files.n; k++) {
      struct input *in = ls_alloc(a, sizeof *in);
      in->file = files.v[k];
      in->cuda = ls_is_cuda_file(in->file);
      for (size_t j = 0; j < flags.n; j++)
        ls_vec_push(&in->args, flags.v[j]);
      ls_vec_push(&inputs, in);
    }
  }
  ls_parse_opts po = {.resource_dir = *LOCKSTEP_CLANG_RESOURCE_DIR ? LOCKSTEP_CLANG_RESOURCE_DIR : NULL,
                      .cuda_path = cuda_path};
  po.cuda_include = ls_data_dir("cuda_include", LOCKSTEP_CUDA_INCLUDE_BUILD, LOCKSTEP_CUDA_INCLUDE_INSTALL);
  prog = ls_program_new(&rules);
  ls_tu_job *jobs = calloc(inputs.n + 1, sizeof *jobs);
  if (!jobs)
    abort();
  for (size_t k = 0; k < inputs.n; k++) {
    struct input *in = inputs.v[k];
    jobs[k] = (ls_tu_job){in->file, (const char *const *)in->args.v, (int)in->args.n, in->cuda};
  }
  int input_error = ls_parse_all(prog, jobs, inputs.n, &po, pol.jobs, !pol.quiet && isatty(2));
  for (size_t k = 0; k < inputs.n; k++)
    free(((struct input *)inputs.v[k])->args.v);
  free(jobs);
  /* A TU with compile errors was analyzed only as far as clang could read it: the run fails
   * (2) unless --allow-errors accepts that; one that yielded nothing always fails. */
  size_t nincomplete = 0;
  for (size_t k = 0; k < prog->tus.n; k++) {
    ls_tu_info *t = prog->tus.v[k];
    if (!t->nerrors) /* ok, or libclang's failure, which ls_tu_parse reported */
      continue;
    if (t->fatal) {
      fprintf(stderr, "%s: error: cannot be parsed (%d error%s)\n", t->file, t->nerrors, t->nerrors == 1 ? "" : "s");
      input_error = 1;
    } else if (pol.allow_errors) {
      fprintf(stderr, "%s: %d error%s, analysis may be incomplete\n", t->file, t->nerrors, t->nerrors == 1 ? "" : "s");
    } else {
      fprintf(stderr, "%s: error: %d compile error%s, the analysis is incomplete\n", t->file, t->nerrors,
              t->nerrors == 1 ? "" : "s");
      nincomplete++;
    }
    for (size_t j = 0; j < t->errors.n && j < 3; j++)
      fprintf(stderr, "  %s\n", (const char *)t->errors.v[j]);
    if (t->skipped.n) { /* not a silent skip: which functions lint said nothing about */
      fprintf(stderr, "  %zu function%s not checked, an error is inside %s:", t->skipped.n,
              t->skipped.n == 1 ? "" : "s", t->skipped.n == 1 ? "it" : "each");
      for (size_t j = 0; j < t->skipped.n && j < 8; j++) {
        const ls_func *f = t->skipped.v[j];
        fprintf(stderr, "%s %s (%s:%u)", j ? "," : "", f->name, f->file, f->line);
      }
      fprintf(stderr, "%s\n", t->skipped.n > 8 ? ", ..." : "");
    }
  }
  input_error |= nincomplete > 0;
  double ta = ls_cpu_now();
  ls_checks_run(prog, &raw);
  prog->t_analyze = ls_cpu_now() - ta;
  if (getenv("LOCKSTEP_LINT_STATS"))
    fprintf(stderr, "lockstep lint: parse %.3fs, convert %.3fs, analyze %.3fs; %zu functions, %zu nodes; %.1f MB in the arena\n",
            prog->t_parse, prog->t_convert, prog->t_analyze, prog->funcs.n, prog->nnodes, (double)prog->arena->size / 1e6);
  for (size_t k = 0; k < raw.n; k++)
    if (!ls_suppressed(a, raw.v[k]) && !in_unparsed(prog, raw.v[k]))
      ls_vec_push(&findings, raw.v[k]);
  if (findings.n)
    qsort(findings.v, findings.n, sizeof *findings.v, cmp_finding);
  ls_fingerprints(&findings);
  if (verify) {
    if (!strcmp(format, "json"))
      ls_emit_json(stdout, prog, &findings);
    int bad = ls_verify(a, (char **)files.v, (int)files.n, &findings);
    rc = input_error ? 2 : bad ? 1 : 0;
    say_incomplete(nincomplete, prog->tus.n);
    goto out;
  }
  if (ls_policy_apply(&pol, a, &findings))
    goto out;
  rc = ls_report(&pol, a, prog, &findings, format, &docs, input_error);
  say_incomplete(nincomplete, prog->tus.n);
  goto out;
usage:
  fputs(usage_text, stderr);
  rc = 2;
out:
  if (idx)
    clang_disposeIndex(idx);
  /* Findings live in prog's arena, their note and site vectors on the heap: raw
   * holds every finding, including those suppressed or filtered out since. */
  for (size_t k = 0; k < raw.n; k++) {
    ls_finding *f = raw.v[k];
    free(f->notes.v);
    free(f->sites.v);
  }
  free(raw.v);
  ls_program_free(prog);
  free(findings.v);
  free(rules_files.v);
  free(files.v);
  free(flags.v);
  free(inputs.v);
  ls_rules_release(&rules);
  ls_arena_free(a);
  return rc;
}

static void *lint_thread(void *arg) {
  struct opts *o = arg;
  o->rc = lint_main(o->argc, o->argv);
  return NULL;
}

int ls_cmd_lint(int argc, char **argv) {
  struct opts o = {argc, argv, 2};
  if (!ls_policy_parallel(argc, argv)) {
    /* TUs one at a time (no -j N > 1): each is parsed, converted and analyzed on lint's
     * thread below, which has the 512 MiB stack the conversion's recursion wants, so all
     * of it on one CPU's caches. libclang would parse on a thread of its own (8 MiB of
     * stack), which starts on the other CPU: unless told not to, with this variable, read
     * at each parse; set before any thread exists. */
    setenv("LIBCLANG_NOTHREADS", "1", 0);
#ifdef M_ARENA_MAX
    /* One malloc arena, so that the analysis reuses what libclang frees when it disposes of
     * a TU (with an arena per thread: 21.2k page faults instead of 16.9k, 5 % more time on
     * the generated benchmark TU, bench/RESULTS.md), and fixed mmap and trim
     * thresholds: glibc moves both up to the largest mapped block freed so far, so whether
     * the analysis's 1 MiB arena chunks and its tables reused that memory or faulted in
     * fresh mappings depended on what libclang happened to free (2k faults
     * either way); with only the mmap threshold fixed, the trim threshold stays at 128 KiB
     * and scratch buffers (check_nested_exit's stack, 476 KiB a branch in a 16,500-line
     * function) went back to the kernel and faulted in again at every reuse. lint is a
     * short run: what it frees stays for reuse until it exits. */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  }
  pthread_attr_t at;
  pthread_t th;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, (size_t)512 << 20);
  if (pthread_create(&th, &at, lint_thread, &o) != 0) {
    pthread_attr_destroy(&at);
    return lint_main(argc, argv);
  }
  pthread_join(th, NULL);
  pthread_attr_destroy(&at);
  return o.rc;
}
