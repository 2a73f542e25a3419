/* cdb_check.c — reads compile_commands.json with cJSON and checks its shape before libclang
 * sees it. libclang's reader is a lenient YAML parser: a database cut after its first entry
 * gave one entry and no error, other damage only raw "LIBCLANG TOOLING ERROR" text, and a
 * number where a path belongs became a file named "5". Here every problem is named as
 * `FILE:line:col: error: ...` at the value concerned. Non-goal: reading the commands (libclang
 * does that, from the same file, once this has accepted it). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdb_flags.h"
#include "json_file.h"

enum { MAX_PROBLEMS = 10 };

struct db {
  const char *path, *text;
  int problems;
};

/* ---- where a value is: cJSON keeps no positions, so the (already parsed, hence valid)
 * text is walked again to the k-th element; only on the error paths. Each step moves on
 * by at least a byte and stops at the NUL, whatever the text. ---- */
static const char *ws(const char *s) { /* what cJSON skips: every byte from 1 to 32 */
  while (*s && (unsigned char)*s <= 32)
    s++;
  return s;
}

static const char *skip_string(const char *s) { /* s at the opening quote */
  if (!*s)
    return s;
  for (s++; *s && *s != '"'; s++)
    if (*s == '\\' && s[1])
      s++;
  return *s ? s + 1 : s;
}

static const char *skip_value(const char *s);

/* past the next member (key: value) of an object or element of an array, and its comma */
static const char *skip_item(const char *s, int obj) {
  const char *from = s;
  if (obj) {
    s = ws(skip_string(s));
    if (*s == ':')
      s = ws(s + 1);
  }
  s = ws(skip_value(s));
  if (*s == ',')
    s = ws(s + 1);
  return s > from || !*s ? s : s + 1;
}

static const char *skip_value(const char *s) {
  s = ws(s);
  if (*s == '"')
    return skip_string(s);
  if (*s == '{' || *s == '[') {
    char close = *s == '{' ? '}' : ']';
    for (s = ws(s + 1); *s && *s != close;)
      s = skip_item(s, close == '}');
    return *s ? s + 1 : s;
  }
  while ((unsigned char)*s > 32 && !strchr(",]}", *s)) /* number, true, false, null */
    s++;
  return s;
}

/* The start of the k-th element of the array at s, or of the k-th member's value (key:
 * the member's key) of the object at s. */
static const char *nth(const char *s, int k, const char **key) {
  s = ws(s);
  int obj = *s == '{';
  if (*s)
    s = ws(s + 1);
  for (int i = 0; *s; i++) {
    if (i == k) {
      if (!obj)
        return s;
      if (key)
        *key = s;
      s = ws(skip_string(s));
      return *s == ':' ? ws(s + 1) : s;
    }
    s = skip_item(s, obj);
  }
  return s;
}

static void line_col(const char *text, const char *at, unsigned *line, unsigned *col) {
  *line = *col = 1;
  for (const char *s = text; s < at && *s; s++) {
    if (*s == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

static const char *at_line_col(const char *text, unsigned line, unsigned col) { /* line_col's inverse */
  const char *s = text;
  for (; *s && line > 1; s++)
    line -= *s == '\n';
  for (; *s && *s != '\n' && col > 1; s++)
    col--;
  return s;
}

__attribute__((format(printf, 3, 4))) static void problem(struct db *d, const char *at, const char *fmt, ...) {
  if (++d->problems > MAX_PROBLEMS)
    return;
  unsigned line, col;
  line_col(d->text, at, &line, &col);
  fprintf(stderr, "%s:%u:%u: error: ", d->path, line, col);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* s as a message shows it on one line: control bytes escaped, at most 60 bytes of it */
static const char *shown(const char *s, char buf[static 128]) {
  size_t n = 0, k = 0;
  for (; s[k] && n < 60; k++) {
    unsigned char c = (unsigned char)s[k];
    if (c < 0x20 || c == 0x7f)
      n += (size_t)snprintf(buf + n, 8, "\\x%02x", c);
    else
      buf[n++] = (char)c;
  }
  snprintf(buf + n, 128 - n, "%s", s[k] ? "..." : "");
  return buf;
}

static const char *type_name(const cJSON *v) {
  return cJSON_IsString(v) ? "a string" : cJSON_IsNumber(v) ? "a number" : cJSON_IsBool(v) ? "a boolean"
         : cJSON_IsNull(v)  ? "null"     : cJSON_IsArray(v)  ? "an array" : "an object";
}

/* the first member of object e called name (NULL when none), and its index */
static const cJSON *member(const cJSON *e, const char *name, int *index) {
  *index = 0;
  for (const cJSON *m = e->child; m; m = m->next, ++*index)
    if (!strcmp(m->string, name))
      return m;
  return NULL;
}

/* a string member that must be there (or may be absent: !required) and not be empty */
static void want_string(struct db *d, const cJSON *e, const char *estart, int ei, const char *name, int required) {
  int j;
  const cJSON *v = member(e, name, &j);
  if (!v) {
    if (required)
      problem(d, estart, "entry %d: no \"%s\"", ei + 1, name);
    return;
  }
  if (!cJSON_IsString(v) || !*v->valuestring)
    problem(d, nth(estart, j, NULL), "entry %d: \"%s\" must be a non-empty string, not %s", ei + 1, name,
            cJSON_IsString(v) ? "\"\"" : type_name(v));
}

static void check_entry(struct db *d, const cJSON *e, const char *estart, int ei) {
  static const char *const keys[] = {"directory", "file", "command", "arguments", "output"};
  if (!cJSON_IsObject(e)) {
    problem(d, estart, "entry %d: must be an object with \"directory\", \"file\" and \"command\" or "
                       "\"arguments\", not %s", ei + 1, type_name(e));
    return;
  }
  int j = 0;
  for (const cJSON *m = e->child; m; m = m->next, j++) {
    const char *key = estart;
    nth(estart, j, &key);
    size_t k = 0;
    while (k < sizeof keys / sizeof *keys && strcmp(m->string, keys[k]))
      k++;
    char buf[128];
    if (k == sizeof keys / sizeof *keys) /* libclang refuses the whole database then */
      problem(d, key, "entry %d: unknown key \"%s\" (an entry has directory, file, command or arguments, "
                      "and output)", ei + 1, shown(m->string, buf));
    for (const cJSON *o = e->child; o != m; o = o->next)
      if (!strcmp(o->string, m->string)) {
        problem(d, key, "entry %d: \"%s\" given twice", ei + 1, shown(m->string, buf));
        break;
      }
  }
  want_string(d, e, estart, ei, "directory", 1);
  want_string(d, e, estart, ei, "file", 1);
  want_string(d, e, estart, ei, "output", 0);
  const cJSON *cmd = member(e, "command", &j), *args = member(e, "arguments", &j);
  if (!cmd && !args) {
    problem(d, estart, "entry %d: no \"command\" (a string) or \"arguments\" (an array of strings)", ei + 1);
    return;
  }
  if (cmd)
    want_string(d, e, estart, ei, "command", 1);
  if (!args)
    return;
  const char *astart = nth(estart, j, NULL);
  if (!cJSON_IsArray(args) || !args->child) {
    problem(d, astart, "entry %d: \"arguments\" must be a non-empty array of strings, not %s", ei + 1,
            cJSON_IsArray(args) ? "[]" : type_name(args));
    return;
  }
  int k = 0;
  for (const cJSON *a = args->child; a; a = a->next, k++)
    if (!cJSON_IsString(a))
      problem(d, nth(astart, k, NULL), "entry %d: \"arguments\"[%d] must be a string, not %s", ei + 1, k,
              type_name(a));
}

int ls_cdb_validate(const char *path) {
  size_t len;
  char *text = ls_read_file(path, &len);
  if (!text) {
    fprintf(stderr, "%s: error: cannot load the compilation database: %s\n", path, strerror(errno));
    return -1;
  }
  struct db d = {.path = path, .text = text};
  const char *body = text;
  if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark, which libclang skips too */
    body += 3;
  unsigned line, col;
  cJSON *root = NULL;
  if (strlen(text) != len) {
    problem(&d, text + strlen(text), "a NUL byte in the compilation database");
  } else if (!*ws(body)) {
    problem(&d, body, "the compilation database is empty");
  } else if (!(root = ls_json_parse(body, len - (size_t)(body - text), 1, &line, &col))) {
    const char *stop = at_line_col(body, line, col);
    /* cJSON stops at the end of a text that ends too soon, or at the start of a string that
     * never closes: the file was cut there, and where it ends is what to show */
    if (!*ws(stop) || (stop > body && stop[-1] == '"' && !*skip_string(stop - 1)))
      problem(&d, text + len, "the compilation database ends inside its JSON (a truncated file?)");
    else
      problem(&d, stop, "invalid JSON in the compilation database");
  } else if (!cJSON_IsArray(root)) {
    problem(&d, ws(body), "the compilation database must be a JSON array of entries, not %s", type_name(root));
  } else if (!root->child) {
    problem(&d, ws(body), "the compilation database has no entries");
  } else {
    int i = 0;
    for (const cJSON *e = root->child; e; e = e->next, i++)
      check_entry(&d, e, nth(body, i, NULL), i);
  }
  if (d.problems > MAX_PROBLEMS)
    fprintf(stderr, "%s: error: %d more problems\n", path, d.problems - MAX_PROBLEMS);
  cJSON_Delete(root);
  free(text);
  return d.problems ? -1 : 0;
}
