/* rule_docs.c — the documentation of the lint rules, read from rules/docs/lint_rules.json
 * (data, so the text output, SARIF, `lockstep rules` and `lockstep explain` cannot drift
 * apart), and the `rules` / `explain` subcommands. Needs no libclang; lives with lint
 * because only lint's rules are documented here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

#include "checks/rule_ids.h"
#include "commands.h"
#include "integ.h"

int ls_rule_docs_load(ls_rule_docs *d, ls_arena *a) {
  const char *dir = ls_rules_dir_default();
  char *path = ls_alloc(a, strlen(dir) + 32);
  sprintf(path, "%s/docs/lint_rules.json", dir);
  d->path = path;
  cJSON *root = ls_json_read_file(path, "the rule documentation");
  if (!root)
    return -1;
  int rc = -1;
  cJSON *rules = cJSON_GetObjectItemCaseSensitive(root, "rules");
  if (!cJSON_IsArray(rules) || !cJSON_GetArraySize(rules)) {
    fprintf(stderr, "%s: error: \"rules\" must be a non-empty array\n", path);
    goto out;
  }
  d->n = cJSON_GetArraySize(rules);
  d->v = ls_alloc(a, (size_t)d->n * sizeof *d->v);
  static const char *keys[] = {"id", "name", "short", "full", "help", "bad", "good"};
  int i = 0;
  for (cJSON *r = rules->child; r; r = r->next, i++) {
    const char *val[7];
    for (int k = 0; k < 7; k++) {
      cJSON *s = cJSON_GetObjectItemCaseSensitive(r, keys[k]);
      if (!cJSON_IsString(s) || !*s->valuestring) {
        fprintf(stderr, "%s: error: rules[%d]: \"%s\" must be a non-empty string\n", path, i, keys[k]);
        goto out;
      }
      val[k] = ls_strdup(a, s->valuestring);
    }
    d->v[i] = (ls_rule_doc){val[0], val[1], val[2], val[3], val[4], val[5], val[6]};
  }
  /* which rules exist, and their order, is checks.def's; the file documents each once */
  ls_rule_doc *v = ls_alloc(a, LS_NRULES * sizeof *v);
  for (i = 0; i < d->n; i++) {
    int r = ls_rule_find(d->v[i].id, strlen(d->v[i].id));
    if (r < 0 || v[r].id) {
      fprintf(stderr, "%s: error: rules[%d]: \"id\" '%s' is %s\n", path, i, d->v[i].id,
              r < 0 ? "not a rule of this lockstep" : "documented twice");
      goto out;
    }
    v[r] = d->v[i];
  }
  for (int r = 0; r < LS_NRULES; r++)
    if (!v[r].id) {
      fprintf(stderr, "%s: error: rule '%s' is not documented\n", path, ls_rule_id((enum ls_rule)r));
      goto out;
    }
  d->v = v;
  d->n = LS_NRULES;
  rc = 0;
out:
  cJSON_Delete(root);
  return rc;
}

const ls_rule_doc *ls_rule_doc_find(const ls_rule_docs *d, const char *id) {
  for (int i = 0; id && i < d->n; i++)
    if (!strcmp(d->v[i].id, id))
      return &d->v[i];
  return NULL;
}

static void indent(FILE *out, const char *text, const char *pad) {
  fputs(pad, out);
  for (const char *s = text; *s; s++) {
    fputc(*s, out);
    if (*s == '\n' && s[1])
      fputs(pad, out);
  }
  fputc('\n', out);
}

/* Wraps prose at 80 columns for the terminal; the data keeps one paragraph per string. */
static void wrap(FILE *out, const char *text, const char *pad) {
  size_t col = 0, padn = strlen(pad);
  const char *s = text;
  while (*s) {
    while (*s == ' ')
      s++;
    size_t w = strcspn(s, " ");
    if (!w)
      break;
    if (col && col + 1 + w > 80) {
      fputc('\n', out);
      col = 0;
    }
    if (!col) {
      fputs(pad, out);
      col = padn;
    } else {
      fputc(' ', out);
      col++;
    }
    fwrite(s, 1, w, out);
    col += w;
    s += w;
  }
  fputc('\n', out);
}

int ls_cmd_rules(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    puts("usage: lockstep rules\n\nLists the lint rules, one line each. `lockstep explain RULE-ID` shows one in full.");
    return 0;
  }
  if (argc > 1) {
    fprintf(stderr, "lockstep rules: error: unexpected argument '%s'\n", argv[1]);
    return 2;
  }
  ls_arena *a = ls_arena_new();
  ls_rule_docs d = {0};
  int rc = 2;
  if (ls_rule_docs_load(&d, a) == 0) {
    int w = 0; /* one column for the descriptions, however long the ids grow */
    for (int i = 0; i < d.n; i++)
      if ((int)strlen(d.v[i].id) > w)
        w = (int)strlen(d.v[i].id);
    for (int i = 0; i < d.n; i++)
      printf("%-*s  %s\n", w, d.v[i].id, d.v[i].shortd);
    rc = 0;
  }
  ls_arena_free(a);
  return rc;
}

int ls_cmd_explain(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    puts("usage: lockstep explain RULE-ID\n\nShows what a lint rule finds, why it matters, how to fix it, and a\n"
         "short bad/good example. `lockstep rules` lists the rule ids.");
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: lockstep explain RULE-ID (see `lockstep rules`)\n");
    return 2;
  }
  ls_arena *a = ls_arena_new();
  ls_rule_docs d = {0};
  int rc = 2;
  if (ls_rule_docs_load(&d, a) == 0) {
    const ls_rule_doc *r = ls_rule_doc_find(&d, argv[1]);
    if (!r) {
      fprintf(stderr, "lockstep explain: error: unknown rule '%s'; known rules:", argv[1]);
      for (int i = 0; i < d.n; i++)
        fprintf(stderr, " %s", d.v[i].id);
      fputc('\n', stderr);
    } else {
      printf("%s: %s\n\n", r->id, r->shortd);
      wrap(stdout, r->full, "");
      printf("\nHow to fix:\n");
      wrap(stdout, r->help, "  ");
      printf("\nBad:\n");
      indent(stdout, r->bad, "    ");
      printf("\nGood:\n");
      indent(stdout, r->good, "    ");
      printf("\nSuppress one finding with `// lockstep: ignore(%s) reason` on its line or the line above.\n", r->id);
      rc = 0;
    }
  }
  ls_arena_free(a);
  return rc;
}
