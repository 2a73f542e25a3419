/* apidb.h — what the trace tools need from the rules files (rules/NAME.json): an api's protocol
 * `op` (ncclBcast and ncclBroadcast are both "broadcast") and the names of
 * return codes, data types and reduction ops. Traces store only api names and
 * numbers; this keeps API knowledge out of C. Non-goal: the analyzer's view of
 * the rules (argument roles, rank sources) — analyzer/ has its own. */
#ifndef LOCKSTEP_APIDB_H
#define LOCKSTEP_APIDB_H

#include <stdint.h>

struct cJSON;

struct ls_apidb {
  struct cJSON **docs; /* one parsed rules file each; owned */
  int ndocs;
  char dir[4096];      /* where they were found, "" when none */
};

/* Loads every *.json of the rules directory: $LOCKSTEP_RULES_DIR, else the
 * build's or install's rules folder. Never fails hard: without rules, ops are
 * the api names and values print as numbers (a note says so once). */
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
