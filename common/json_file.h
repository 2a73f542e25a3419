/* json_file.h — reading whole files and JSON files with a file:line:col error. */
#ifndef LOCKSTEP_JSON_FILE_H
#define LOCKSTEP_JSON_FILE_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* The rest of f in one malloc'd, NUL-terminated buffer (*len: its length without the NUL);
 * NULL when reading failed. Exits on OOM (xalloc.h). */
char *ls_read_all(FILE *f, size_t *len);
/* Reads and parses a JSON file; NULL after printing `path[:line:col]: error: ...`.
 * The caller owns the result (cJSON_Delete). `what` names the file's role in messages. */
cJSON *ls_json_read_file(const char *path, const char *what);
/* ls_json_read_file with its messages to errs. */
cJSON *ls_json_load(const char *path, const char *what, FILE *errs);
/* The whole file at path, as ls_read_all; NULL with errno set when it cannot be opened or read. */
char *ls_read_file(const char *path, size_t *len);
/* Parses text (len bytes, NUL-terminated); strict: text after the value is an error. On a
 * syntax error returns NULL with *line and *col (from 1) where cJSON stopped. The caller
 * owns the result (cJSON_Delete). */
cJSON *ls_json_parse(const char *text, size_t len, int strict, unsigned *line, unsigned *col);
/* The one JSON printer: doc as cJSON_Print formats it, a newline, a flush. -1 when the
 * output failed (a full disk); out of memory exits 2 (xalloc.h). */
int ls_json_print(FILE *out, const cJSON *doc);

#endif
