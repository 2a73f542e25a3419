/* apidb.c — find and read the rules files (rules/NAME.json) for the trace tools (see apidb.h).
 * The rules folder is looked up at run time so one binary works from the
 * build tree, from an install, and on a GPU node with only a checkout. */
#include "apidb.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_format.h"
#include "xalloc.h"

static int is_rules_dir(const char *dir) {
  char p[4200];
  snprintf(p, sizeof p, "%s/nccl.json", dir);
  return access(p, R_OK) == 0;
}

/* The source tree of the build the binary lives in, from its CMakeCache.txt. */
static int from_cmake_cache(const char *bindir, char *out, size_t outlen) {
  char p[4200], line[4096];
  snprintf(p, sizeof p, "%s/CMakeCache.txt", bindir);
  FILE *f = fopen(p, "r");
  if (!f)
    return 0;
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    const char *key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    if (!strncmp(line, key, strlen(key))) {
      line[strcspn(line, "\n")] = 0;
      snprintf(out, outlen, "%s/rules", line + strlen(key));
      found = is_rules_dir(out);
    }
  }
  fclose(f);
  return found;
}

static int find_rules_dir(char *out, size_t outlen) {
  const char *env = getenv("LOCKSTEP_RULES_DIR");
  if (env && *env) {
    snprintf(out, outlen, "%s", env);
    return is_rules_dir(out);
  }
#ifdef LOCKSTEP_RULES_DIR
  snprintf(out, outlen, "%s", LOCKSTEP_RULES_DIR);
  if (is_rules_dir(out))
    return 1;
#endif
  char exe[2048];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return 0;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash)
    return 0;
  *slash = 0;
  snprintf(out, outlen, "%s/../share/lockstep/rules", exe);
  if (is_rules_dir(out))
    return 1;
  /* Build tree: the cache names the source tree; else walk up to a checkout. */
  for (char *d = exe; *d;) {
    if (from_cmake_cache(d, out, outlen))
      return 1;
    snprintf(out, outlen, "%s/rules", d);
    if (is_rules_dir(out))
      return 1;
    char *s = strrchr(d, '/');
    if (!s)
      break;
    *s = 0;
  }
  return 0;
}

void ls_apidb_load(struct ls_apidb *db) {
  memset(db, 0, sizeof *db);
  if (!find_rules_dir(db->dir, sizeof db->dir)) {
    db->dir[0] = 0;
    fprintf(stderr, "lockstep: note: rules/*.json not found (set LOCKSTEP_RULES_DIR); api names are compared "
                    "as written and codes print as numbers\n");
    return;
  }
  DIR *d = opendir(db->dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
      continue;
    char p[8400];
    snprintf(p, sizeof p, "%s/%s", db->dir, e->d_name);
    FILE *f = fopen(p, "rb");
    if (!f)
      continue;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(size > 0 ? (size_t)size + 1 : 1);
    size_t got = size > 0 ? fread(buf, 1, (size_t)size, f) : 0;
    buf[got] = 0;
    fclose(f);
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithOpts(buf, &end, 0);
    if (!doc) {
      /* A broken rules file is the project's bug, not the user's input: note it and go on. */
      fprintf(stderr, "lockstep: note: %s: invalid JSON at byte %ld; ignored\n", p, end ? (long)(end - buf) : 0L);
    } else {
      db->docs = ls_xrealloc(db->docs, (size_t)(db->ndocs + 1) * sizeof *db->docs);
      db->docs[db->ndocs++] = doc;
    }
    free(buf);
  }
  if (d)
    closedir(d);
}

void ls_apidb_free(struct ls_apidb *db) {
  for (int i = 0; i < db->ndocs; i++)
    cJSON_Delete(db->docs[i]);
  free(db->docs);
  memset(db, 0, sizeof *db);
}

const char *ls_apidb_op(const struct ls_apidb *db, const char *api) {
  for (int i = 0; i < db->ndocs; i++) {
    const cJSON *fn;
    cJSON_ArrayForEach(fn, cJSON_GetObjectItemCaseSensitive(db->docs[i], "functions")) {
      const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "name"));
      const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "op"));
      if (name && op && !strcmp(name, api))
        return op;
    }
  }
  return api;
}

static const cJSON *doc_of(const struct ls_apidb *db, unsigned family) {
  const char *lib = family == LS_FAMILY_NCCL ? "nccl" : family == LS_FAMILY_MPI ? "mpi" : NULL;
  for (int i = 0; lib && i < db->ndocs; i++) {
    const char *api = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(db->docs[i], "api"));
    if (api && !strcmp(api, lib))
      return db->docs[i];
  }
  return NULL;
}

const char *ls_apidb_enum_name(const struct ls_apidb *db, unsigned family, const char *which, int64_t value) {
  const cJSON *doc = doc_of(db, family), *e;
  const cJSON *tab = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "enums"), which);
  cJSON_ArrayForEach(e, tab) {
    if (cJSON_IsNumber(e) && e->valuedouble == (double)value) /* no cast of a double that may not fit */
      return e->string;
  }
  return NULL;
}

/* Numeric value of the result named by key ("success", "pending"), or def. */
static int64_t result_value(const cJSON *doc, const char *key, int64_t def) {
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, key));
  const cJSON *tab = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "enums"), "result");
  const cJSON *v = name ? cJSON_GetObjectItemCaseSensitive(tab, name) : NULL;
  /* In range before the cast: converting 1e30 or NaN to int64_t is undefined. */
  return v && cJSON_IsNumber(v) && v->valuedouble >= -9e18 && v->valuedouble <= 9e18 ? (int64_t)v->valuedouble : def;
}

int ls_apidb_rc_ok(const struct ls_apidb *db, unsigned family, int64_t rc) {
  const cJSON *doc = doc_of(db, family);
  return rc == result_value(doc, "success", 0) || rc == result_value(doc, "pending", INT64_MIN);
}

int ls_apidb_rc_is(const struct ls_apidb *db, unsigned family, const char *which, int64_t rc) {
  const cJSON *doc = doc_of(db, family);
  if (!strcmp(which, "success") && !doc)
    return rc == 0; /* the default ls_apidb_rc_ok assumes too */
  return doc && rc != INT64_MIN && rc == result_value(doc, which, INT64_MIN);
}
