/* apidb.c — the rules files as the trace tools see them (apidb.h), through the rules library.
 * The rules folder is looked up at run time (ls_rules_dir_default) so one binary works from
 * the build tree, from an install, and on a GPU node with only a checkout. */
#include "apidb.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_format.h"
#include "xalloc.h"

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* One file into its own tables: a file the library rejects leaves the others usable. */
static void load_one(struct ls_apidb *db, const char *path) {
  ls_rules r;
  memset(&r, 0, sizeof r);
  char *msg = NULL;
  size_t len = 0;
  r.errs = open_memstream(&msg, &len);
  if (!r.errs) {
    fputs("lockstep: out of memory\n", stderr);
    exit(2);
  }
  int rc = ls_rules_load(&r, db->arena, path);
  fclose(r.errs);
  r.errs = NULL;
  if (rc) {
    /* A broken rules file is the project's bug, not the user's input: note it and go on. */
    while (len && msg[len - 1] == '\n')
      msg[--len] = 0;
    fprintf(stderr, "lockstep: note: %s; ignored\n", msg);
    ls_rules_release(&r);
  } else {
    db->files = ls_xrealloc(db->files, (size_t)(db->nfiles + 1) * sizeof *db->files);
    db->files[db->nfiles++] = r;
  }
  free(msg);
}

void ls_apidb_load(struct ls_apidb *db) {
  memset(db, 0, sizeof *db);
  db->arena = ls_arena_new();
  snprintf(db->dir, sizeof db->dir, "%s", ls_rules_dir_default());
  DIR *d = opendir(db->dir);
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
      continue;
    names = ls_xrealloc(names, (n + 1) * sizeof *names);
    names[n] = ls_xrealloc(NULL, strlen(db->dir) + len + 2);
    sprintf(names[n++], "%s/%s", db->dir, e->d_name);
  }
  if (d)
    closedir(d);
  if (!n) {
    db->dir[0] = 0;
    fprintf(stderr, "lockstep: note: rules/*.json not found (set LOCKSTEP_RULES_DIR); api names are compared "
                    "as written and codes print as numbers\n");
  }
  if (n)
    qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++) {
    load_one(db, names[i]);
    free(names[i]);
  }
  free(names);
}

void ls_apidb_free(struct ls_apidb *db) {
  for (int i = 0; i < db->nfiles; i++)
    ls_rules_release(&db->files[i]);
  free(db->files);
  ls_arena_free(db->arena);
  memset(db, 0, sizeof *db);
}

const char *ls_apidb_op(const struct ls_apidb *db, const char *api) {
  for (int i = 0; i < db->nfiles; i++)
    for (int k = 0; k < db->files[i].nfns; k++) {
      const ls_rule_fn *fn = &db->files[i].fns[k];
      if (fn->op_given && !strcmp(fn->name, api))
        return fn->op_given;
    }
  return api;
}

static const ls_rules_file *file_of(const struct ls_apidb *db, unsigned family) {
  const char *lib = family == LS_FAMILY_NCCL ? "nccl" : family == LS_FAMILY_MPI ? "mpi" : NULL;
  for (int i = 0; lib && i < db->nfiles; i++) {
    const ls_rules_file *f = ls_rules_file_of(&db->files[i], lib);
    if (f)
      return f;
  }
  return NULL;
}

const char *ls_apidb_enum_name(const struct ls_apidb *db, unsigned family, const char *which, int64_t value) {
  return ls_rules_enum_name(file_of(db, family), which, value);
}

/* Numeric value of the result named by key ("success", "pending"), or def. */
static int64_t result_value(const ls_rules_file *f, const char *key, int64_t def) {
  const char *name = !f ? NULL : !strcmp(key, "success") ? f->success : !strcmp(key, "pending") ? f->pending : NULL;
  long long v;
  return ls_rules_enum_value(f, "result", name, &v) ? v : def;
}

int ls_apidb_rc_ok(const struct ls_apidb *db, unsigned family, int64_t rc) {
  const ls_rules_file *f = file_of(db, family);
  return rc == result_value(f, "success", 0) || rc == result_value(f, "pending", INT64_MIN);
}

int ls_apidb_rc_is(const struct ls_apidb *db, unsigned family, const char *which, int64_t rc) {
  const ls_rules_file *f = file_of(db, family);
  if (!strcmp(which, "success") && !f)
    return rc == 0; /* the default ls_apidb_rc_ok assumes too */
  return f && rc != INT64_MIN && rc == result_value(f, which, INT64_MIN);
}
