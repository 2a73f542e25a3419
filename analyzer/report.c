/* report.c — what lint prints: clang-style text with the source line and a caret, the JSON
 * format of README's "Output" (cJSON), stable fingerprints (rule, file basename, function,
 * normalized call sequence; never line numbers), `// lockstep: ignore(rule)` suppressions,
 * and `--verify` against `// expected-warning{{rule}}` annotations in the sources. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "checks/rule_ids.h"
#include "integ.h"
#include "lint.h"
#include "xalloc.h"

struct src {
  struct src *next;
  const char *path;
  char **lines;
  unsigned nlines;
};
static struct src *sources; /* per process; lint runs once */

static struct src *load_src(ls_arena *a, const char *path) {
  for (struct src *s = sources; s; s = s->next)
    if (!strcmp(s->path, path))
      return s;
  struct src *s = ls_alloc(a, sizeof *s);
  s->path = ls_strdup(a, path);
  s->next = sources;
  sources = s;
  FILE *f = fopen(path, "rb");
  if (!f)
    return s;
  /* the whole file at once, cut into lines in place (a getline and a copy per line cost
   * ~250 instructions a line, and the generated benchmark TU has 20,000); a file that
   * cannot be read shows no source lines */
  size_t len = 0;
  char *text = ls_read_all(f, &len);
  fclose(f);
  if (!text)
    len = 0;
  ls_vec lines = {0};
  char *buf = ls_alloc(a, len + 1);
  if (len)
    memcpy(buf, text, len);
  free(text);
  for (size_t i = 0; i < len;) { /* lines as getline splits them, then without \r / \n at the end */
    char *nl = memchr(buf + i, '\n', len - i);
    size_t e = nl ? (size_t)(nl - buf) + 1 : len, m = e;
    while (m > i && (buf[m - 1] == '\n' || buf[m - 1] == '\r'))
      m--;
    buf[m] = 0;
    ls_vec_push(&lines, buf + i);
    i = e;
  }
  s->lines = ls_alloc(a, (lines.n + 1) * sizeof *s->lines);
  if (lines.n)
    memcpy(s->lines, lines.v, lines.n * sizeof *s->lines);
  s->nlines = (unsigned)lines.n;
  free(lines.v);
  return s;
}

const char *ls_source_line(ls_arena *a, const char *file, unsigned line) {
  struct src *s = load_src(a, file);
  return line >= 1 && line <= s->nlines ? s->lines[line - 1] : NULL;
}

/* `lockstep: ignore(rule[, rule...])` in a comment on the line or the line above */
static int ignores(const char *l, const char *rule) {
  const char *m = l ? strstr(l, "lockstep: ignore(") : NULL;
  if (!m)
    return 0;
  m += strlen("lockstep: ignore(");
  const char *end = strchr(m, ')');
  if (!end)
    return 0;
  size_t rl = strlen(rule);
  for (const char *p = m; p < end;) {
    while (p < end && (*p == ' ' || *p == ','))
      p++;
    const char *q = p;
    while (q < end && *q != ',' && *q != ' ')
      q++;
    if ((size_t)(q - p) == rl && !strncmp(p, rule, rl))
      return 1;
    if (q - p == 1 && *p == '*')
      return 1;
    p = q;
  }
  return 0;
}

int ls_suppressed(ls_arena *a, const ls_finding *f) {
  return ignores(ls_source_line(a, f->file, f->line), f->rule) ||
         (f->line > 1 && ignores(ls_source_line(a, f->file, f->line - 1), f->rule));
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

void ls_fingerprints(ls_vec *findings) {
  /* identical keys (rule, basename, function, sequence) are numbered in source order; a
   * small hash table counts them so this stays linear */
  size_t cap = 16;
  while (cap < 2 * findings->n + 2)
    cap *= 2;
  struct slot { uint64_t h; unsigned n; } *tab = calloc(cap, sizeof *tab);
  if (!tab)
    abort();
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    uint64_t h = ls_hash_str(0, f->rule);
    h = ls_hash_str(h, "\x1f");
    h = ls_hash_str(h, base_name(f->file));
    h = ls_hash_str(h, "\x1f");
    h = ls_hash_str(h, f->function ? f->function : "");
    h = ls_hash_str(h, "\x1f");
    h = ls_hash_str(h, f->seqkey ? f->seqkey : "");
    h |= 1;
    size_t j = h & (cap - 1);
    while (tab[j].h && tab[j].h != h)
      j = (j + 1) & (cap - 1);
    tab[j].h = h;
    unsigned dup = tab[j].n++;
    if (dup) { /* "#<dup>" */
      char d[16], *t = d + sizeof d;
      *--t = 0;
      do
        *--t = (char)('0' + dup % 10);
      while (dup /= 10);
      *--t = '#';
      h = ls_hash_str(h, t);
    }
    for (int k = 15; k >= 0; k--, h >>= 4) /* "%016llx" */
      f->fingerprint[k] = "0123456789abcdef"[h & 15];
    f->fingerprint[16] = 0;
  }
  free(tab);
}

static void caret(FILE *out, ls_arena *a, const char *file, unsigned line, unsigned col) {
  const char *l = ls_source_line(a, file, line);
  if (!l)
    return;
  fputs(l, out);
  fputc('\n', out);
  size_t n = strlen(l);
  char pad[256];
  for (unsigned i = 0; i + 1 < col && i < n;) { /* spaces, tabs kept, in chunks */
    unsigned k = 0;
    for (; k < sizeof pad && i + 1 < col && i < n; k++, i++)
      pad[k] = l[i] == '\t' ? '\t' : ' ';
    fwrite(pad, 1, k, out);
  }
  fputs("^\n", out);
}

/* "FILE:LINE:COL: " as fprintf's "%s:%u:%u: " writes it (fprintf costs ~1,200 instructions
 * a line; a large TU has thousands of findings and notes) */
static void put_where(FILE *out, const char *file, unsigned line, unsigned col) {
  char b[32], *t = b + sizeof b;
  *--t = ' ';
  *--t = ':';
  do
    *--t = (char)('0' + col % 10);
  while (col /= 10);
  *--t = ':';
  do
    *--t = (char)('0' + line % 10);
  while (line /= 10);
  *--t = ':';
  fputs(file, out);
  fwrite(t, 1, (size_t)(b + sizeof b - t), out);
}

void ls_emit_text(FILE *out, ls_arena *a, ls_vec *findings) {
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    put_where(out, f->file, f->line, f->col); /* FILE:LINE:COL: warning: MESSAGE [RULE] */
    fputs(f->error ? "error: " : "warning: ", out);
    fputs(f->message, out);
    if (f->errpath)
      fputs(" (error path)", out);
    fputs(" [", out);
    fputs(f->rule, out);
    fputs("]\n", out);
    caret(out, a, f->file, f->line, f->col);
    for (size_t j = 0; j < f->notes.n; j++) {
      ls_loc *n = f->notes.v[j];
      put_where(out, n->file, n->line, n->col); /* FILE:LINE:COL: note: MESSAGE */
      fputs("note: ", out);
      fputs(n->msg, out);
      fputc('\n', out);
      caret(out, a, n->file, n->line, n->col);
    }
  }
}

static cJSON *loc_json(const ls_loc *l, const char *msgkey) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", l->file);
  cJSON_AddNumberToObject(o, "line", l->line);
  cJSON_AddNumberToObject(o, "column", l->col);
  cJSON_AddStringToObject(o, msgkey, l->msg ? l->msg : "");
  return o;
}

cJSON *ls_finding_json(const ls_finding *f) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "rule", f->rule);
  cJSON_AddStringToObject(o, "file", f->file);
  cJSON_AddNumberToObject(o, "line", f->line);
  cJSON_AddNumberToObject(o, "column", f->col);
  cJSON_AddStringToObject(o, "function", f->function ? f->function : "");
  cJSON_AddStringToObject(o, "message", f->message);
  cJSON_AddStringToObject(o, "path", f->errpath ? "error" : "normal");
  cJSON_AddStringToObject(o, "fingerprint", f->fingerprint);
  cJSON *notes = cJSON_AddArrayToObject(o, "notes");
  for (size_t j = 0; j < f->notes.n; j++)
    cJSON_AddItemToArray(notes, loc_json(f->notes.v[j], "message"));
  cJSON *sites = cJSON_AddArrayToObject(o, "sites");
  for (size_t j = 0; j < f->sites.n; j++)
    cJSON_AddItemToArray(sites, loc_json(f->sites.v[j], "callee"));
  return o;
}

void ls_emit_json(FILE *out, ls_program *p, ls_vec *findings) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "tool", "lockstep");
  cJSON *arr = cJSON_AddArrayToObject(root, "findings");
  for (size_t i = 0; i < findings->n; i++)
    cJSON_AddItemToArray(arr, ls_finding_json(findings->v[i]));
  cJSON *tus = cJSON_AddArrayToObject(root, "tus");
  for (size_t i = 0; p && i < p->tus.n; i++) {
    ls_tu_info *t = p->tus.v[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", t->file);
    cJSON_AddBoolToObject(o, "ok", t->ok);
    cJSON *errs = cJSON_AddArrayToObject(o, "errors");
    for (size_t j = 0; j < t->errors.n; j++)
      cJSON_AddItemToArray(errs, cJSON_CreateString(t->errors.v[j]));
    cJSON *sk = cJSON_AddArrayToObject(o, "skipped"); /* functions not checked: an error in the body */
    for (size_t j = 0; j < t->skipped.n; j++) {
      const ls_func *f = t->skipped.v[j];
      cJSON *so = cJSON_CreateObject();
      cJSON_AddStringToObject(so, "function", f->name);
      cJSON_AddStringToObject(so, "file", f->file);
      cJSON_AddNumberToObject(so, "line", f->line);
      cJSON_AddItemToArray(sk, so);
    }
    cJSON_AddItemToArray(tus, o);
  }
  ls_json_print(out, root); /* a failed write fails the command (cli/main.c) */
  cJSON_Delete(root);
}

/* ---- verify ---- */
struct expect { unsigned line; char rule[64]; int matched, errpath; };

static int same_file(const char *a, const char *b) {
  if (!strcmp(a, b))
    return 1;
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

int ls_verify(ls_arena *a, char **files, int nfiles, ls_vec *findings) {
  int bad = 0;
  for (int fi = 0; fi < nfiles; fi++) {
    const char *file = files[fi];
    struct src *s = load_src(a, file);
    struct expect *ex = NULL;
    size_t nex = 0, capex = 0;
    int fbad = 0;
    for (unsigned ln = 1; ln <= s->nlines; ln++) {
      const char *l = s->lines[ln - 1];
      for (const char *m = strstr(l, "expected-warning"); m; m = strstr(m + 1, "expected-warning")) {
        const char *q = m + strlen("expected-warning");
        long target = ln;
        if (*q == '@') {
          char *e;
          long v = strtol(q + 1, &e, 10);
          target = (q[1] == '+' || q[1] == '-') ? (long)ln + v : v;
          q = e;
        }
        while (*q == ' ')
          q++;
        if (strncmp(q, "{{", 2)) {
          fprintf(stderr, "%s:%u: error: malformed annotation (expected {{rule-id}})\n", file, ln);
          fbad = 1;
          continue;
        }
        const char *e = strstr(q + 2, "}}");
        if (!e || e - (q + 2) >= 63 || target < 1) {
          fprintf(stderr, "%s:%u: error: malformed annotation\n", file, ln);
          fbad = 1;
          continue;
        }
        if (nex == capex) {
          capex = capex ? 2 * capex : 8;
          ex = ls_xrealloc(ex, capex * sizeof *ex);
        }
        if (ls_rule_find(q + 2, (size_t)(e - (q + 2))) < 0) {
          fprintf(stderr, "%s:%u: error: unknown rule '%.*s' in annotation (see `lockstep rules`)\n", file, ln,
                  (int)(e - (q + 2)), q + 2);
          fbad = 1;
          continue;
        }
        ex[nex].line = (unsigned)target;
        memcpy(ex[nex].rule, q + 2, (size_t)(e - (q + 2)));
        ex[nex].rule[e - (q + 2)] = 0;
        ex[nex].matched = 0;
        /* `{{rule}}{{error-path}}`: the finding must be tagged as an error path; without
         * it, it must not be */
        ex[nex].errpath = !strncmp(e + 2, "{{error-path}}", 14);
        nex++;
      }
    }
    for (size_t i = 0; i < findings->n; i++) {
      ls_finding *f = findings->v[i];
      if (!same_file(f->file, file))
        continue;
      int ok = 0;
      size_t j;
      for (j = 0; j < nex && !ok; j++)
        if (!ex[j].matched && ex[j].line == f->line && !strcmp(ex[j].rule, f->rule))
          ex[j].matched = ok = 1;
      if (ok && ex[j - 1].errpath != (f->errpath != 0)) {
        fprintf(stderr, "%s:%u:%u: error: warning [%s] is on %s path, its annotation says %s: %s\n", file, f->line,
                f->col, f->rule, f->errpath ? "an error" : "the normal", ex[j - 1].errpath ? "error path ({{error-path}})"
                : "normal path (no {{error-path}})", f->message);
        fbad = 1;
      }
      if (!ok) {
        fprintf(stderr, "%s:%u:%u: error: unexpected warning [%s]: %s\n", file, f->line, f->col, f->rule, f->message);
        fbad = 1;
      }
    }
    for (size_t j = 0; j < nex; j++)
      if (!ex[j].matched) {
        fprintf(stderr, "%s:%u: error: expected warning [%s] was not produced\n", file, ex[j].line, ex[j].rule);
        fbad = 1;
      }
    free(ex);
    if (!fbad)
      fprintf(stderr, "%s: verified (%zu expected warning%s)\n", file, nex, nex == 1 ? "" : "s");
    bad |= fbad;
  }
  return bad;
}
