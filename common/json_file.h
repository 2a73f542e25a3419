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

#endif
