/* policy.c — adopting lint on an existing codebase: which rules run (--enable/--disable),
 * which are errors (--warnings-as-errors), a baseline of accepted findings keyed by their
 * stable fingerprints (--baseline: written when absent, compared otherwise) so only new
 * findings fail CI, and the report step that prints in the chosen format and picks the exit
 * code. Findings of an error rule always count, even when in the baseline. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks/rule_ids.h"
#include "integ.h"

int ls_rule_in_list(const char *list, const char *rule) {
  if (!list)
    return 0;
  size_t n = strlen(rule);
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ",");
    if ((w == n && !strncmp(p, rule, n)) || (w == 3 && !strncmp(p, "all", 3)))
      return 1;
    p += w;
    if (*p)
      p++;
  }
  return 0;
}

/* `--name=value` or `--name value`; NULL when argv[*i] is not this option */
static const char *value_of(int argc, char **argv, int *i, const char *name, int *missing) {
  const char *s = argv[*i];
  size_t n = strlen(name);
  if (strncmp(s, name, n))
    return NULL;
  if (s[n] == '=')
    return s + n + 1;
  if (s[n])
    return NULL;
  if (*i + 1 >= argc) {
    fprintf(stderr, "lockstep lint: error: %s needs an argument\n", name);
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

/* The value of -jN, -j N, --jobs=N or --jobs N at argv[*i], advancing *i over a separate
 * value; NULL when argv[*i] is none of these, or (*missing = 1) when its value is missing. */
static const char *jobs_value(int argc, char **argv, int *i, int *missing) {
  const char *s = argv[*i];
  if (!strncmp(s, "--jobs=", 7))
    return s + 7;
  if (!strncmp(s, "-j", 2) && s[2])
    return s + 2;
  if (strcmp(s, "--jobs") && strcmp(s, "-j"))
    return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

int ls_policy_parallel(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
    int missing = 0;
    const char *v = jobs_value(argc, argv, &i, &missing);
    if (v && strcmp(v, "1"))
      return 1;
  }
  return 0;
}

int ls_option_twice(const char *opt, const char *prev, const char *v, const char *hint) {
  if (!prev)
    return 0;
  fprintf(stderr, "lockstep lint: error: %s given twice ('%s', then '%s')%s\n", opt, prev, v, hint);
  return 1;
}

int ls_policy_option(ls_policy *pol, int argc, char **argv, int *i) {
  const char *s = argv[*i], *v;
  int missing = 0;
  if (!strcmp(s, "--baseline-write")) {
    pol->baseline_write = 1;
    return 1;
  }
  if (!strcmp(s, "--allow-errors")) {
    pol->allow_errors = 1;
    return 1;
  }
  if (!strcmp(s, "--summary")) {
    pol->summary = 1;
    return 1;
  }
  if (!strcmp(s, "-q") || !strcmp(s, "--quiet")) {
    pol->quiet = 1;
    return 1;
  }
  if ((v = value_of(argc, argv, i, "--baseline", &missing))) {
    if (ls_option_twice("--baseline", pol->baseline, v, ""))
      return -1;
    pol->baseline = v;
    return 1;
  }
  if ((v = value_of(argc, argv, i, "--error-paths", &missing))) {
    if (ls_option_twice("--error-paths", pol->error_paths, v, ""))
      return -1;
    if (strcmp(v, "show") && strcmp(v, "hide")) {
      fprintf(stderr, "lockstep lint: error: --error-paths wants 'show' or 'hide', not '%s'\n", v);
      return -1;
    }
    pol->error_paths = v;
    pol->hide_errpaths = !strcmp(v, "hide");
    return 1;
  }
  if ((v = value_of(argc, argv, i, "--enable", &missing))) {
    if (ls_option_twice("--enable", pol->enable, v, "; give one comma-separated list"))
      return -1;
    pol->enable = v;
    return 1;
  }
  if ((v = value_of(argc, argv, i, "--disable", &missing))) {
    if (ls_option_twice("--disable", pol->disable, v, "; give one comma-separated list"))
      return -1;
    pol->disable = v;
    return 1;
  }
  if ((v = value_of(argc, argv, i, "--warnings-as-errors", &missing))) {
    if (ls_option_twice("--warnings-as-errors", pol->werror, v, "; give one comma-separated list"))
      return -1;
    pol->werror = v;
    return 1;
  }
  if (!missing && (v = jobs_value(argc, argv, i, &missing)) == NULL && missing) {
    fprintf(stderr, "lockstep lint: error: %s needs an argument\n", s);
    return -1;
  }
  if (v) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > 256) {
      fprintf(stderr, "lockstep lint: error: -j wants a number of threads from 1 to 256, not '%s'\n", v);
      return -1;
    }
    if (ls_option_twice("-j", pol->jobs_arg, v, ""))
      return -1;
    pol->jobs_arg = v;
    pol->jobs = (int)n;
    return 1;
  }
  return missing ? -1 : 0;
}

static int check_list(const char *opt, const char *list) {
  if (!list)
    return 0;
  if (!*list) {
    fprintf(stderr, "lockstep lint: error: %s needs a comma-separated list of rule ids\n", opt);
    return -1;
  }
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ",");
    int ok = (w == 3 && !strncmp(p, "all", 3)) || ls_rule_find(p, w) >= 0;
    if (!ok) {
      fprintf(stderr, "lockstep lint: error: %s: unknown rule '%.*s' (see `lockstep rules`)\n", opt, (int)w, p);
      return -1;
    }
    p += w;
    if (*p)
      p++;
  }
  return 0;
}

/* `id` itself in the comma-separated list ("all" does not count) */
static int names(const char *list, const char *id) {
  size_t n = strlen(id);
  for (const char *p = list; p && *p;) {
    size_t w = strcspn(p, ",");
    if (w == n && !strncmp(p, id, n))
      return 1;
    p += w;
    if (*p)
      p++;
  }
  return 0;
}

int ls_policy_validate(const ls_policy *pol, const ls_rule_docs *d) {
  (void)d; /* loaded, so checked against checks.def: the rules are the table's */
  if (check_list("--enable", pol->enable) || check_list("--disable", pol->disable) ||
      check_list("--warnings-as-errors", pol->werror))
    return -1;
  /* lists that contradict each other: which one wins would be a guess */
  if (pol->enable && ls_rule_in_list(pol->disable, "all")) {
    fprintf(stderr, "lockstep lint: error: --disable=all turns off every rule --enable=%s names\n", pol->enable);
    return -1;
  }
  for (int k = 0; k < LS_NRULES; k++) {
    const char *id = ls_rule_id((enum ls_rule)k);
    if (names(pol->enable, id) && names(pol->disable, id)) {
      fprintf(stderr, "lockstep lint: error: --enable and --disable both name '%s'\n", id);
      return -1;
    }
    if (names(pol->werror, id) &&
        ((pol->enable && !ls_rule_in_list(pol->enable, id)) || ls_rule_in_list(pol->disable, id))) {
      fprintf(stderr, "lockstep lint: error: --warnings-as-errors names '%s', which %s turns off\n", id,
              ls_rule_in_list(pol->disable, id) ? "--disable" : "--enable (by not naming it)");
      return -1;
    }
  }
  return 0;
}

static int write_baseline(ls_policy *pol, ls_vec *findings) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "tool", "lockstep");
  cJSON *arr = cJSON_AddArrayToObject(root, "findings");
  for (size_t i = 0; i < findings->n; i++) {
    /* the same object as --format=json writes, so either file serves as a baseline */
    ls_finding *f = findings->v[i];
    cJSON_AddItemToArray(arr, ls_finding_json(f));
    f->baselined = 1;
  }
  /* write beside and rename, so an interrupted run never leaves half a baseline */
  char *tmp = malloc(strlen(pol->baseline) + 16);
  if (!tmp)
    abort();
  sprintf(tmp, "%s.tmp", pol->baseline);
  FILE *f = fopen(tmp, "w");
  int ok = f && ls_json_print(f, root) == 0;
  cJSON_Delete(root);
  if (f && fclose(f))
    ok = 0;
  if (ok && rename(tmp, pol->baseline))
    ok = 0;
  if (!ok) {
    fprintf(stderr, "%s: error: cannot write the baseline\n", pol->baseline);
    unlink(tmp);
  }
  free(tmp);
  pol->wrote = findings->n + 1; /* nonzero even for an empty baseline */
  return ok ? 0 : -1;
}

static int read_baseline(ls_policy *pol, ls_vec *findings) {
  cJSON *root = ls_json_read_file(pol->baseline, "the baseline");
  if (!root)
    return -1;
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "findings");
  if (!cJSON_IsObject(root) || !cJSON_IsArray(arr)) {
    fprintf(stderr, "%s: error: not a lockstep baseline (no \"findings\" array)\n", pol->baseline);
    cJSON_Delete(root);
    return -1;
  }
  int i = 0;
  for (cJSON *e = arr->child; e; e = e->next, i++) {
    cJSON *fp = cJSON_GetObjectItemCaseSensitive(e, "fingerprint");
    if (!cJSON_IsString(fp)) {
      fprintf(stderr, "%s: error: findings[%d]: \"fingerprint\" must be a string\n", pol->baseline, i);
      cJSON_Delete(root);
      return -1;
    }
    int found = 0;
    for (size_t k = 0; k < findings->n; k++) {
      ls_finding *f = findings->v[k];
      if (!strcmp(f->fingerprint, fp->valuestring)) {
        f->baselined = found = 1;
      }
    }
    if (!found)
      pol->absent++;
  }
  cJSON_Delete(root);
  return 0;
}

int ls_policy_apply(ls_policy *pol, ls_arena *a, ls_vec *findings) {
  (void)a;
  size_t n = 0;
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    if ((pol->enable && !ls_rule_in_list(pol->enable, f->rule)) || ls_rule_in_list(pol->disable, f->rule))
      continue;
    if (f->errpath && pol->hide_errpaths) { /* counted, and said so at the end: never a silent loss */
      pol->hidden++;
      continue;
    }
    f->error = ls_rule_in_list(pol->werror, f->rule);
    findings->v[n++] = f;
  }
  findings->n = n;
  if (pol->baseline) {
    if (pol->baseline_write || access(pol->baseline, F_OK) != 0) {
      if (write_baseline(pol, findings))
        return -1;
    } else if (read_baseline(pol, findings)) {
      return -1;
    }
  }
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    if (f->baselined && !f->error)
      pol->baselined++;
    else
      pol->counted++;
  }
  return 0;
}

static void summary(const ls_policy *pol, ls_program *p, ls_vec *shown) {
  size_t nf = 0;
  for (size_t i = 0; p && i < p->funcs.n; i++)
    nf += ((ls_func *)p->funcs.v[i])->body != NULL;
  size_t ne = 0;
  for (size_t i = 0; i < shown->n; i++)
    ne += ((ls_finding *)shown->v[i])->errpath != 0;
  fprintf(stderr, "lockstep lint: %zu TU%s, %zu function%s, %zu finding%s", p ? p->tus.n : 0,
          p && p->tus.n == 1 ? "" : "s", nf, nf == 1 ? "" : "s", shown->n, shown->n == 1 ? "" : "s");

  /* by rule, in first-seen order */
  const char *sep = " (";
  for (size_t i = 0; i < shown->n; i++) {
    ls_finding *f = shown->v[i];
    size_t j, c = 0;
    for (j = 0; j < i && strcmp(((ls_finding *)shown->v[j])->rule, f->rule); j++)
      ;
    if (j < i)
      continue;
    for (size_t k = i; k < shown->n; k++)
      c += !strcmp(((ls_finding *)shown->v[k])->rule, f->rule);
    fprintf(stderr, "%s%s: %zu", sep, f->rule, c);
    sep = ", ";
  }
  if (*sep == ',')
    fputc(')', stderr);
  if (ne) /* counted apart: real, but only after a call reported failure */
    fprintf(stderr, ", %zu on error paths", ne);
  size_t ns = 0;
  for (size_t i = 0; p && i < p->tus.n; i++)
    ns += ((ls_tu_info *)p->tus.v[i])->skipped.n;
  if (ns)
    fprintf(stderr, ", %zu function%s not checked (parse errors)", ns, ns == 1 ? "" : "s");
  fprintf(stderr, ", %.2f s\n", ls_now() - pol->t0);
}

int ls_report(ls_policy *pol, ls_arena *a, ls_program *p, ls_vec *findings, const char *format,
              const ls_rule_docs *d, int input_error) {
  ls_vec shown = {0};
  size_t nerr = 0, nnew = 0;
  ls_fixits(a, findings);
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    if (!f->baselined || f->error) {
      ls_vec_push(&shown, f);
      nerr += f->error != 0;
    }
    nnew += !f->baselined;
  }
  int rc = input_error ? 2 : shown.n ? 1 : 0;
  if (!strcmp(format, "sarif")) {
    ls_emit_sarif(stdout, p, findings, d, pol, rc);
  } else if (!strcmp(format, "json")) {
    ls_emit_json(stdout, p, &shown);
  } else {
    ls_emit_text(stdout, a, &shown);
    size_t nw = shown.n - nerr, ne = 0;
    char also[64] = "";
    for (size_t i = 0; i < shown.n; i++)
      ne += ((ls_finding *)shown.v[i])->errpath != 0;
    if (ne)
      snprintf(also, sizeof also, " (%zu on %s)", ne, ne == 1 ? "an error path" : "error paths");
    if (nw && nerr)
      fprintf(stderr, "%zu warning%s and %zu error%s generated%s.\n", nw, nw == 1 ? "" : "s", nerr, nerr == 1 ? "" : "s",
              also);
    else if (shown.n)
      fprintf(stderr, "%zu %s%s generated%s.\n", shown.n, nerr ? "error" : "warning", shown.n == 1 ? "" : "s", also);
  }
  fflush(stdout);
  if (pol->wrote)
    fprintf(stderr, "lockstep lint: wrote %zu finding%s to the baseline %s\n", pol->wrote - 1,
            pol->wrote == 2 ? "" : "s", pol->baseline);
  else if (pol->baseline)
    fprintf(stderr, "lockstep lint: %zu finding%s suppressed by the baseline %s; %zu new; %zu baseline entr%s no longer found\n",
            pol->baselined, pol->baselined == 1 ? "" : "s", pol->baseline, nnew, pol->absent,
            pol->absent == 1 ? "y" : "ies");
  if (!pol->quiet && (pol->summary || pol->jobs > 1 || isatty(2)))
    summary(pol, p, &shown);
  if (pol->hidden) /* even with --quiet: what was left out is said */
    fprintf(stderr, "lockstep lint: %zu error-path finding%s hidden (--error-paths=show lists %s)\n", pol->hidden,
            pol->hidden == 1 ? "" : "s", pol->hidden == 1 ? "it" : "them");
  free(shown.v);
  return rc;
}
