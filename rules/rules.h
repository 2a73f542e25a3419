/* rules.h — the rules library: loads and validates the rules files (rules/NAME.json, see
 * rules/SCHEMA.md) into typed tables. Strings and tables live in the caller's arena. */
#ifndef LOCKSTEP_RULES_H
#define LOCKSTEP_RULES_H

#include "arena.h"

enum ls_role {
  LS_ROLE_NONE, LS_ROLE_SENDBUF, LS_ROLE_RECVBUF, LS_ROLE_COUNT, LS_ROLE_DTYPE, LS_ROLE_REDOP,
  LS_ROLE_ROOT, LS_ROLE_PEER, LS_ROLE_COMM, LS_ROLE_STREAM, LS_ROLE_OUT_RANK, LS_ROLE_OUT_SIZE,
  LS_ROLE_REQUEST, LS_ROLE_COUNTS, LS_ROLE_OUT_ASYNC_STATE,
  /* host-side calls around the API (rules/host.json): copies, streams, events, threads */
  LS_ROLE_SRC, LS_ROLE_DST, LS_ROLE_EVENT, LS_ROLE_OUT_STREAM, LS_ROLE_STREAM_FLAGS, LS_ROLE_OUT_PTR,
  LS_ROLE_ENTRY, LS_ROLE_OUT_COMM, LS_ROLE_CONFIG, LS_ROLE_COLOR, LS_ROLE_OTHER
};
enum ls_kind {
  LS_KIND_OTHER, LS_KIND_COLLECTIVE, LS_KIND_P2P, LS_KIND_GROUP_START, LS_KIND_GROUP_END,
  LS_KIND_RANK_QUERY, LS_KIND_SIZE_QUERY
};
typedef struct ls_rule_fn {
  const char *name, *op, *kind_name, *api;
  enum ls_kind kind;
  int seq_member;           /* kind collective, or `"collective": true` (communicator creation) */
  int nargs;
  enum ls_role *roles;
  /* `in_place`: when argument in_place_buf is spelled in_place_value (MPI_IN_PLACE), the
   * fingerprint takes count/dtype from these arguments instead (-1: none) */
  int in_place_buf, in_place_count, in_place_dtype;
  const char *in_place_value;
} ls_rule_fn;
typedef struct ls_rule_src { /* rank_sources / uniform_sources entry */
  const char *call;
  int arg;               /* -1 if absent */
  const char **values;   /* for `arg`: string literal values that make it a source */
  int nvalues;
  int out_arg;           /* -1 if absent */
  int returns;
  int uniform;
} ls_rule_src;
typedef struct ls_rules {
  ls_rule_fn *fns; int nfns;
  ls_rule_src *srcs; int nsrcs;
  const char **noreturn; int nnoreturn;
  const char **pending; int npending; /* top-level `pending` of each file (ncclInProgress) */
  /* rules/host.json: pragmas that run their statement on other threads ("omp parallel"),
   * the stream-creation flag bit that makes a stream non-blocking, and the stream handle
   * values that name the legacy / per-thread default stream (-1: not given) */
  const char **regions; int nregions;
  const char **primary_regions; int nprimary; /* run by the team's primary thread only ("omp master") */
  long long nonblocking_flag;
  long long *legacy_streams; int nlegacy;
  long long *per_thread_streams; int nper_thread;
  const char **success; int nsuccess; /* top-level `success` of each file (ncclSuccess) */
  /* top-level `nonblocking` (check_nonblocking.c): a config whose field `nb_field` holds
   * `nb_value` makes a non-blocking communicator; a null config inherits from `comm` */
  const char *nb_field; long long nb_value; int nb_null_inherits;
  /* a creation from a non-blocking `comm` (split, shrink) sets `*out_comm` only once the
   * parent's state leaves pending: polling the parent settles the child */
  int nb_parent_settles;
  const char *nb_success, *nb_pending; /* `success` and `pending` of that file, for messages */
  int nfiles;
} ls_rules;
/* Loads and validates `path` into r (allocated in a). On error prints
 * `path:line:col: error: ...` to stderr and returns -1; never crashes on bad input. */
int ls_rules_load(ls_rules *r, ls_arena *a, const char *path);
/* Loads every *.json of dir (sorted). -1 on error or when dir has no rules. */
int ls_rules_load_dir(ls_rules *r, ls_arena *a, const char *dir);
const ls_rule_fn *ls_rules_fn(const ls_rules *r, const char *name);
int ls_rules_noreturn(const ls_rules *r, const char *name);

#endif
