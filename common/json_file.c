/* json_file.c — the one reader of lint's JSON inputs (rules tables, rule docs,
 * baselines): reads the whole file and parses it, reporting `file:line:col: error`
 * on a syntax error (cJSON's error position is global state, so it is taken from
 * return_parse_end). No dependency beyond cJSON, so the fuzz harnesses link it. */
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
  /* cJSON's error position is global state: take it from return_parse_end instead */
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    unsigned line = 1, col = 1;
    const char *stop = end && end >= text && end <= text + len ? end : text + len;
    for (const char *s = text; s < stop; s++) {
      if (*s == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    fprintf(errs, "%s:%u:%u: error: invalid JSON in %s\n", path, line, col, what);
  }
  free(text);
  return root;
}

