/* json_file.c — the one reader of the commands' files and JSON inputs (rules tables, rule
 * docs, baselines, lint findings) and their one JSON printer: reads a whole file, parses it
 * and reports a syntax error as line:col (cJSON's error position is global state, so it is
 * taken from return_parse_end). No dependency beyond cJSON, so the fuzz harnesses link it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_file.h"
#include "xalloc.h"

char *ls_read_all(FILE *f, size_t *len) {
  char *text = NULL, chunk[65536];
  size_t cap = 0, n;
  *len = 0;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (*len + n + 1 > cap) {
      cap = (*len + n + 1) * 2;
      text = ls_xrealloc(text, cap);
    }
    memcpy(text + *len, chunk, n);
    *len += n;
  }
  if (ferror(f)) {
    free(text);
    return NULL;
  }
  if (!text && !(text = calloc(1, 1))) /* an empty file: "" */
    abort();
  text[*len] = 0;
  return text;
}

cJSON *ls_json_parse(const char *text, size_t len, int strict, unsigned *line, unsigned *col) {
  /* cJSON's error position is global state: take it from return_parse_end instead */
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, strict);
  if (!root) {
    *line = 1;
    *col = 1;
    const char *stop = end && end >= text && end <= text + len ? end : text + len;
    for (const char *s = text; s < stop; s++) {
      if (*s == '\n') {
        ++*line;
        *col = 1;
      } else {
        ++*col;
      }
    }
  }
  return root;
}

char *ls_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *text = ls_read_all(f, len);
  int err = errno;
  fclose(f);
  errno = err;
  return text;
}

int ls_json_print(FILE *out, const cJSON *doc) {
  char *s = cJSON_Print(doc);
  if (!s) { /* cJSON_Print fails only for lack of memory: xalloc.h's policy */
    fputs("lockstep: out of memory (printing JSON)\n", stderr);
    exit(2);
  }
  int bad = fprintf(out, "%s\n", s) < 0;
  free(s);
  return bad || fflush(out) != 0 || ferror(out) ? -1 : 0; /* e.g. a full disk */
}

cJSON *ls_json_read_file(const char *path, const char *what) { return ls_json_load(path, what, stderr); }

cJSON *ls_json_load(const char *path, const char *what, FILE *errs) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(errs, "%s: error: cannot read %s: %s\n", path, what, strerror(errno));
    return NULL;
  }
  size_t len;
  char *text = ls_read_all(f, &len);
  fclose(f);
  if (!text) {
    fprintf(errs, "%s: error: cannot read %s\n", path, what);
    return NULL;
  }
  unsigned line, col;
  cJSON *root = ls_json_parse(text, len, 1, &line, &col);
  if (!root)
    fprintf(errs, "%s:%u:%u: error: invalid JSON in %s\n", path, line, col, what);
  free(text);
  return root;
}

