/* emit_sarif.c — `lockstep lint --format=sarif`: SARIF 2.1.0 (OASIS, errata 01) for CI code
 * scanning. One run; tool.driver.rules from rules/docs/lint_rules.json; each finding a result
 * with its location and function, the notes (condition, rank source, each side's sequence)
 * and the other collective calls involved as related locations, and the stable fingerprint
 * as a partial fingerprint, so a scanner tracks a finding across edits that move lines. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integ.h"

/* RFC 3986: keep unreserved characters and '/', percent-encode the rest */
static char *uri_encode(const char *path) {
  size_t n = strlen(path);
  char *o = malloc(3 * n + 1), *q = o;
  if (!o)
    abort();
  for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
    if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("-._~/", *s))
      *q++ = (char)*s;
    else
      q += sprintf(q, "%%%02X", *s);
  }
  *q = 0;
  return o;
}

struct ctx {
  char cwd[PATH_MAX];
  size_t ncwd;
};

/* Files under the working directory are given relative to SRCROOT (what code scanning
 * expects: paths from the repository root); others as absolute file:// URIs. */
static cJSON *artifact(const struct ctx *c, const char *file) {
  cJSON *o = cJSON_CreateObject();
  char abs[PATH_MAX * 2];
  if (file[0] == '/')
    snprintf(abs, sizeof abs, "%s", file);
  else
    snprintf(abs, sizeof abs, "%s/%s", c->cwd, file);
  char *u;
  if (c->ncwd && !strncmp(abs, c->cwd, c->ncwd) && abs[c->ncwd] == '/') {
    const char *rel = abs + c->ncwd + 1;
    while (rel[0] == '.' && rel[1] == '/')
      rel += 2;
    u = uri_encode(rel);
    cJSON_AddStringToObject(o, "uri", u);
    cJSON_AddStringToObject(o, "uriBaseId", "SRCROOT");
  } else {
    char *e = uri_encode(abs);
    u = malloc(strlen(e) + 8);
    if (!u)
      abort();
    sprintf(u, "file://%s", e);
    free(e);
    cJSON_AddStringToObject(o, "uri", u);
  }
  free(u);
  return o;
}

static cJSON *location(const struct ctx *c, const char *file, unsigned line, unsigned col, const char *msg) {
  cJSON *loc = cJSON_CreateObject();
  cJSON *phys = cJSON_AddObjectToObject(loc, "physicalLocation");
  cJSON_AddItemToObject(phys, "artifactLocation", artifact(c, file));
  cJSON *region = cJSON_AddObjectToObject(phys, "region");
  cJSON_AddNumberToObject(region, "startLine", line ? line : 1);
  if (col)
    cJSON_AddNumberToObject(region, "startColumn", col);
  if (msg)
    cJSON_AddStringToObject(cJSON_AddObjectToObject(loc, "message"), "text", msg);
  return loc;
}

static void text(cJSON *parent, const char *key, const char *t) {
  cJSON_AddStringToObject(cJSON_AddObjectToObject(parent, key), "text", t);
}

static int rule_index(const ls_rule_docs *d, const char *id) {
  for (int i = 0; i < d->n; i++)
    if (!strcmp(d->v[i].id, id))
      return i;
  return -1;
}

static cJSON *driver_rules(const ls_rule_docs *d, const ls_policy *pol) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < d->n; i++) {
    const ls_rule_doc *r = &d->v[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "name", r->name);
    text(o, "shortDescription", r->shortd);
    text(o, "fullDescription", r->full);
    size_t n = strlen(r->help) + 2 * (strlen(r->bad) + strlen(r->good)) + 256;
    char *h = malloc(n), *m = malloc(n);
    if (!h || !m)
      abort();
    snprintf(h, n, "%s\n\nBad:\n%s\n\nGood:\n%s", r->help, r->bad, r->good);
    snprintf(m, n, "%s\n\nBad:\n```c\n%s\n```\n\nGood:\n```c\n%s\n```", r->help, r->bad, r->good);
    cJSON *help = cJSON_AddObjectToObject(o, "help");
    cJSON_AddStringToObject(help, "text", h);
    cJSON_AddStringToObject(help, "markdown", m);
    free(h);
    free(m);
    cJSON *cfg = cJSON_AddObjectToObject(o, "defaultConfiguration");
    cJSON_AddBoolToObject(cfg, "enabled", !((pol->enable && !ls_rule_in_list(pol->enable, r->id)) || ls_rule_in_list(pol->disable, r->id)));
    cJSON_AddStringToObject(cfg, "level", ls_rule_in_list(pol->werror, r->id) ? "error" : "warning");
    cJSON *props = cJSON_AddObjectToObject(o, "properties");
    cJSON *tags = cJSON_AddArrayToObject(props, "tags");
    cJSON_AddItemToArray(tags, cJSON_CreateString("correctness"));
    cJSON_AddItemToArray(tags, cJSON_CreateString("distributed"));
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

void ls_emit_sarif(FILE *out, ls_program *p, ls_vec *findings, const ls_rule_docs *d, const ls_policy *pol,
                   int rc) {
  struct ctx c = {0};
  if (getcwd(c.cwd, sizeof c.cwd))
    c.ncwd = strlen(c.cwd);
  if (c.ncwd == 1) /* "/": every absolute path is under it; absolute URIs read better */
    c.ncwd = 0;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json");
  cJSON_AddStringToObject(root, "version", "2.1.0");
  cJSON *run = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "runs"), run);
  cJSON *drv = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "tool"), "driver");
  cJSON_AddStringToObject(drv, "name", "lockstep");
  cJSON_AddStringToObject(drv, "version", LOCKSTEP_VERSION);
  cJSON_AddStringToObject(drv, "semanticVersion", LOCKSTEP_VERSION); /* the project's MAJOR.MINOR.PATCH */
  cJSON_AddItemToObject(drv, "rules", driver_rules(d, pol));
  cJSON *nd = cJSON_CreateObject(); /* what a TU's notification refers to */
  cJSON_AddStringToObject(nd, "id", "compile-error");
  text(nd, "shortDescription", "a translation unit has compile errors: lint analyzed only what clang could read of it");
  cJSON_AddItemToArray(cJSON_AddArrayToObject(drv, "notifications"), nd);
  if (c.ncwd) {
    char *e = uri_encode(c.cwd);
    char *u = malloc(strlen(e) + 16);
    if (!u)
      abort();
    sprintf(u, "file://%s/", e);
    cJSON *base = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "originalUriBaseIds"), "SRCROOT");
    cJSON_AddStringToObject(base, "uri", u);
    free(u);
    free(e);
  }
  cJSON *inv = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(run, "invocations"), inv);
  cJSON_AddBoolToObject(inv, "executionSuccessful", rc != 2);
  cJSON_AddNumberToObject(inv, "exitCode", rc);
  cJSON *notes = cJSON_CreateArray();
  for (size_t i = 0; p && i < p->tus.n; i++) {
    ls_tu_info *t = p->tus.v[i];
    if (t->ok)
      continue;
    cJSON *nt = cJSON_CreateObject();
    cJSON_AddStringToObject(nt, "level", t->fatal || !pol->allow_errors ? "error" : "warning");
    char msg[1024];
    if (t->nerrors)
      snprintf(msg, sizeof msg, "%s: %d compile error%s, the analysis of it is incomplete; %zu function%s not checked%s%s",
               t->file, t->nerrors, t->nerrors == 1 ? "" : "s", t->skipped.n, t->skipped.n == 1 ? "" : "s",
               t->errors.n ? "; first: " : "", t->errors.n ? (const char *)t->errors.v[0] : "");
    else
      snprintf(msg, sizeof msg, "%s: libclang could not parse it; not analyzed", t->file);
    text(nt, "message", msg);
    cJSON *ref = cJSON_AddObjectToObject(nt, "descriptor");
    cJSON_AddStringToObject(ref, "id", "compile-error");
    cJSON_AddNumberToObject(ref, "index", 0);
    cJSON *loc = cJSON_CreateObject();
    cJSON_AddItemToObject(cJSON_AddObjectToObject(loc, "physicalLocation"), "artifactLocation", artifact(&c, t->file));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(nt, "locations"), loc);
    cJSON_AddItemToArray(notes, nt);
  }
  if (cJSON_GetArraySize(notes))
    cJSON_AddItemToObject(inv, "toolExecutionNotifications", notes);
  else
    cJSON_Delete(notes);

  cJSON *results = cJSON_AddArrayToObject(run, "results");
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "ruleId", f->rule);
    int ri = rule_index(d, f->rule);
    if (ri >= 0)
      cJSON_AddNumberToObject(r, "ruleIndex", ri);
    /* an error-path finding is real but not the normal run's bug: a note, unless its rule
     * was made an error */
    cJSON_AddStringToObject(r, "level", f->error ? "error" : f->errpath ? "note" : "warning");
    text(r, "message", f->message);
    cJSON *loc = location(&c, f->file, f->line, f->col, NULL);
    if (f->function && *f->function) {
      cJSON *ll = cJSON_CreateObject();
      cJSON_AddStringToObject(ll, "name", f->function);
      cJSON_AddStringToObject(ll, "kind", "function");
      cJSON_AddItemToArray(cJSON_AddArrayToObject(loc, "logicalLocations"), ll);
    }
    cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "locations"), loc);
    cJSON *rel = cJSON_CreateArray();
    int id = 1;
    for (size_t j = 0; j < f->notes.n; j++) {
      ls_loc *n = f->notes.v[j];
      cJSON *l = location(&c, n->file, n->line, n->col, n->msg ? n->msg : "");
      cJSON_AddNumberToObject(l, "id", id++);
      cJSON_AddItemToArray(rel, l);
    }
    for (size_t j = 0; j < f->sites.n; j++) {
      ls_loc *s = f->sites.v[j];
      if (s->line == f->line && s->col == f->col && !strcmp(s->file, f->file))
        continue;
      char msg[256];
      snprintf(msg, sizeof msg, "collective call '%s' involved in this finding", s->msg ? s->msg : "?");
      cJSON *l = location(&c, s->file, s->line, s->col, msg);
      cJSON_AddNumberToObject(l, "id", id++);
      cJSON_AddItemToArray(rel, l);
    }
    if (cJSON_GetArraySize(rel))
      cJSON_AddItemToObject(r, "relatedLocations", rel);
    else
      cJSON_Delete(rel);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "partialFingerprints"), "lockstepFingerprint/v1", f->fingerprint);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "properties"), "path", f->errpath ? "error" : "normal");
    if (f->fix) {
      cJSON *fix = cJSON_CreateObject();
      text(fix, "description", f->fix->desc);
      cJSON *ch = cJSON_CreateObject();
      cJSON_AddItemToArray(cJSON_AddArrayToObject(fix, "artifactChanges"), ch);
      cJSON_AddItemToObject(ch, "artifactLocation", artifact(&c, f->fix->edits[0].file));
      cJSON *reps = cJSON_AddArrayToObject(ch, "replacements");
      for (int k = 0; k < f->fix->nedits; k++) {
        const ls_edit *e = &f->fix->edits[k];
        cJSON *rp = cJSON_CreateObject();
        cJSON *del = cJSON_AddObjectToObject(rp, "deletedRegion");
        cJSON_AddNumberToObject(del, "startLine", e->line);
        cJSON_AddNumberToObject(del, "startColumn", e->col);
        cJSON_AddNumberToObject(del, "endLine", e->eline);
        cJSON_AddNumberToObject(del, "endColumn", e->ecol);
        text(rp, "insertedContent", e->text);
        cJSON_AddItemToArray(reps, rp);
      }
      cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "fixes"), fix);
    }
    if (pol->baseline && !pol->wrote)
      cJSON_AddStringToObject(r, "baselineState", f->baselined ? "unchanged" : "new");
    if (f->baselined && !f->error) {
      cJSON *s = cJSON_CreateObject();
      cJSON_AddStringToObject(s, "kind", "external");
      cJSON_AddStringToObject(s, "status", "accepted");
      char just[PATH_MAX + 64];
      snprintf(just, sizeof just, "listed in the baseline %s", pol->baseline);
      cJSON_AddStringToObject(s, "justification", just);
      cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "suppressions"), s);
    }
    cJSON_AddItemToArray(results, r);
  }
  ls_json_print(out, root); /* a failed write fails the command (cli/main.c) */
  cJSON_Delete(root);
}
