/* fuzz_rules.c — libFuzzer harness for the rules library (rules/rules.c) as lint reads a file
 * (`lockstep lint --rules FILE`) and as the trace tools' apidb does
 * (runtime/tools/apidb.c, which reads every *.json of $LOCKSTEP_RULES_DIR). The input
 * is the file's text. A rejected file must be named, with line:col for bad JSON or
 * the key path for a bad value; apidb never fails, but its note names the file (and line:col). */
#include "fuzz_common.h"

#include <sys/stat.h>

#include "apidb.h"
#include "lint.h"

/* enum ls_api_family of trace_format.h (not included: its kind enum clashes with lint.h's). */
#define FZ_FAMILY_LAST 3

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char rules_dir[64];
static char rules_file[96];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fz_init_io();
  /* apidb finds rules by directory: a private one whose nccl.json is the input. */
  snprintf(rules_dir, sizeof rules_dir, "/tmp/lockstep-fuzz-rules.%d", (int)getpid());
  mkdir(rules_dir, 0700);
  snprintf(rules_file, sizeof rules_file, "%s/nccl.json", rules_dir);
  setenv("LOCKSTEP_RULES_DIR", rules_dir, 1);
  return 0;
}

static void check_lint_loader(const uint8_t *data, size_t size) {
  struct fz_file f;
  fz_file_open(&f, data, size);
  ls_arena *a = ls_arena_new();
  ls_rules r;
  memset(&r, 0, sizeof r);
  fz_capture_begin();
  int rc = ls_rules_load(&r, a, f.path);
  const char *msg = fz_capture_end();
  if (rc != 0) {
    size_t n = strlen(f.path);
    if (strncmp(msg, f.path, n) != 0 || (msg[n] != ':'))
      fz_contract("a rejected rules file is not named at the start of the error", msg);
    if (!strstr(msg, "error: "))
      fz_contract("a rejected rules file's message is not an error", msg);
  } else {
    /* Use what was loaded the way lint does. */
    for (int i = 0; i < r.nfns; i++) {
      const ls_rule_fn *fn = ls_rules_fn(&r, r.fns[i].name);
      if (!fn || !fn->op || !fn->kind_name)
        fz_contract("a loaded function cannot be looked up", r.fns[i].name);
      for (int k = 0; k < fn->nargs; k++)
        if (fn->roles[k] > LS_ROLE_OTHER)
          fz_contract("role out of range", fn->name);
      if (fn->in_place_buf >= fn->nargs || fn->in_place_count >= fn->nargs || fn->in_place_dtype >= fn->nargs)
        fz_contract("in_place index past the arguments", fn->name);
    }
    for (int i = 0; i < r.nsrcs; i++)
      for (int k = 0; k < r.srcs[i].nvalues; k++)
        (void)strlen(r.srcs[i].values[k]);
    for (int i = 0; i < r.nnoreturn; i++)
      (void)ls_rules_noreturn(&r, r.noreturn[i]);
    /* wrappers resolve against the file's own functions (lint links after its last file) */
    fz_capture_begin();
    rc = ls_rules_link(&r, a);
    msg = fz_capture_end();
    if (rc != 0 && (strncmp(msg, f.path, strlen(f.path)) != 0 || !strstr(msg, "error: wrappers.")))
      fz_contract("a wrapper that does not resolve is not named with its file and key", msg);
    for (int i = 0; rc == 0 && i < r.nwraps; i++) {
      const ls_rule_fn *w = &r.wrappers[i];
      if (!w->as || ls_rules_fn(&r, w->name) == NULL)
        fz_contract("a resolved wrapper cannot be looked up", w->name);
      for (int k = 0; k < w->nargs; k++)
        if (w->roles[k] > LS_ROLE_OTHER)
          fz_contract("wrapper role out of range", w->name);
      if (w->in_place_buf >= w->nargs || w->in_place_count >= w->nargs || w->in_place_dtype >= w->nargs)
        fz_contract("wrapper in_place index past its parameters", w->name);
    }
  }
  ls_rules_release(&r);
  ls_arena_free(a);
  fz_file_close(&f);
}

static void check_apidb(const uint8_t *data, size_t size) {
  FILE *f = fopen(rules_file, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    abort();
  struct ls_apidb db;
  fz_capture_begin();
  ls_apidb_load(&db);
  const char *msg = fz_capture_end();
  size_t pl = strlen(rules_file);
  if (*msg && (strncmp(msg, "lockstep: note: ", 16) || strncmp(msg + 16, rules_file, pl) ||
               (msg[16 + pl] != ':') || !strstr(msg, "; ignored\n")))
    fz_contract("apidb's note on a rejected rules file does not start with the file's name", msg);
  static const char *const apis[] = {"ncclAllReduce", "ncclBcast", "MPI_Send", "x"};
  static const char *const which[] = {"result", "dtype", "redop", "nope"};
  static const int64_t values[] = {0, 1, 7, -1, INT64_MAX, INT64_MIN};
  for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++)
    (void)strlen(ls_apidb_op(&db, apis[i]));
  for (unsigned fam = 0; fam <= FZ_FAMILY_LAST; fam++)
    for (size_t w = 0; w < sizeof which / sizeof which[0]; w++)
      for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        const char *name = ls_apidb_enum_name(&db, fam, which[w], values[v]);
        if (name)
          (void)strlen(name);
        (void)ls_apidb_rc_ok(&db, fam, values[v]);
      }
  ls_apidb_free(&db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_lint_loader(data, size);
  check_apidb(data, size);
  return 0;
}
