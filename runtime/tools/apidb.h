/* apidb.h — what the trace tools need from the rules files (rules/NAME.json, read by the
 * rules library, rules/rules.h): an api's protocol `op` (ncclBcast and ncclBroadcast are
 * both "broadcast") and the names of return codes, data types and reduction ops. Traces
 * store only api names and numbers; this keeps API knowledge out of C. */
#ifndef LOCKSTEP_APIDB_H
#define LOCKSTEP_APIDB_H

#include <stdint.h>

#include "rules.h"

struct ls_apidb {
  ls_arena *arena;     /* owns what the rules hold */
  ls_rules *files;     /* one loaded rules file each */
  int nfiles;
  char dir[4096];      /* where they were found, "" when none */
};

/* Loads every *.json of the rules directory (ls_rules_dir_default). Never fails hard: a
 * file the rules library rejects is left out with a note naming it and what is wrong;
 * without rules, ops are the api names and values print as numbers (a note says so once). */
void ls_apidb_load(struct ls_apidb *db);
void ls_apidb_free(struct ls_apidb *db);

/* Protocol name of API (its rules "op"), or API itself when unknown. */
const char *ls_apidb_op(const struct ls_apidb *db, const char *api);
/* Name of VALUE in enum `which` ("result", "dtype", "redop") of the library
 * `family` (enum ls_api_family), or NULL when the rules do not say. */
const char *ls_apidb_enum_name(const struct ls_apidb *db, unsigned family, const char *which, int64_t value);
/* Whether rc is success / "still in progress" for that library. */
int ls_apidb_rc_ok(const struct ls_apidb *db, unsigned family, int64_t rc);
/* Whether rc is the library's result named by the rules' top-level key `which`
 * ("success" or "pending"); 0 when the rules do not name one. */
int ls_apidb_rc_is(const struct ls_apidb *db, unsigned family, const char *which, int64_t rc);

#endif
