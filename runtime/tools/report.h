/* report.h — output pieces shared by compare, trace export and confirm: call
 * sites as text and JSON, divergences as text lines and JSON objects, and
 * 64-bit integers written exactly (cJSON numbers are doubles). */
#ifndef LOCKSTEP_REPORT_H
#define LOCKSTEP_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "compare.h"
#include "json_file.h" /* ls_json_print */
#include "symbolize.h"

struct cJSON;

/* "dir/a.c:40" (relative to the working directory when below it), else
 * "module+0x1f2", else "pc 0x...". */
void ls_site_text(struct ls_site s, char *buf, size_t len);
/* {"rank","module","offset","file","line","function"}; null for unknowns. */
struct cJSON *ls_site_json(struct ls_site s, int rank);
/* A JSON string of s with bytes that are not valid UTF-8 replaced by '?':
 * paths and host names come from the file and may be anything. */
struct cJSON *ls_json_text(const char *s);
/* Adds an array of ls_json_text(s[0..n-1]) to obj under name; returns the array. */
struct cJSON *ls_json_add_texts(struct cJSON *obj, const char *name, char *const *s, size_t n);
/* Adds an exact unsigned 64-bit number to obj under name. */
void ls_json_add_u64(struct cJSON *obj, const char *name, uint64_t v);

/* Queues the sites of every divergence with the symbolizer. */
void ls_divergences_want(struct ls_symbolizer *sym, const struct ls_compare *cmp);
/* One compiler-shaped line (plus nothing else) for d, e.g.
 * "divergence: op-mismatch on comm 0x12 at seq 1: rank 0 ... at a.c:40 vs rank 1 ... at a.c:44". */
void ls_divergence_print(FILE *out, const struct ls_apidb *db, struct ls_symbolizer *sym,
                         const struct ls_divergence *d);
/* The compare JSON object of one divergence (COMMON vocabulary). */
struct cJSON *ls_divergence_json(struct ls_symbolizer *sym, const struct ls_divergence *d);

#endif
