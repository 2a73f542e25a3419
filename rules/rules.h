/* rules.h — the rules library: loads and validates the rules files (rules/NAME.json, see
 * rules/SCHEMA.md) into typed tables, the one reader of them for lint, the trace tools
 * (runtime/tools/apidb.c) and the wrapper generator (runtime/gen/ls_gen.c). The vocabulary
 * is here too: the roles (roles.def), the kinds with the values traces store (the trace
 * format's enum ls_api_kind), the recorder's refinements (`variant`). No libclang; the
 * preloaded library does not link it. Strings and tables live in the caller's arena. */
#ifndef LOCKSTEP_RULES_H
#define LOCKSTEP_RULES_H

#include <stdio.h>

#include "arena.h"
#include "trace_format.h"

/* The roles of rules/roles.def; NONE: an argument without one, OTHER: a role not in the table. */
enum ls_role {
  LS_ROLE_NONE,
#define LS_ROLE_DEF(id, name, field, before, after) LS_ROLE_##id,
#include "roles.def"
  LS_ROLE_OTHER
};
/* One role's line of roles.def; NULL for NONE and OTHER. */
typedef struct ls_role_info {
  const char *name;          /* as the rules files spell it */
  const char *field;         /* its field of struct ls_args, NULL when none */
  const char *before, *after; /* the wrapper's conversion of the argument into it */
} ls_role_info;
const ls_role_info *ls_role_info_of(enum ls_role role);

/* A function's kind is the trace format's enum ls_api_kind (its values are stored in trace
 * files, so they never change); rules kinds the trace has no value for (host calls,
 * `comm_revoke`) are LS_KIND_OTHER, and kind_name keeps the string. */
/* "LS_KIND_COLLECTIVE" for LS_KIND_COLLECTIVE: its name in generated code. */
const char *ls_kind_symbol(enum ls_api_kind kind);

typedef struct ls_rule_arg {
  const char *name, *type;  /* NULL when the file does not say */
  const char *role_name;    /* NULL: no role */
} ls_rule_arg;

typedef struct ls_rule_fn {
  const char *name, *op, *kind_name, *api;
  enum ls_api_kind kind;
  /* the recorder's refinement of kind (LS_SUB_<upper case> in recorder.h and the hooks
   * headers): from the kind (`comm_init_all`: "init_all"), the function's `variant`, or
   * "create_group" for a `comm_create` that is not `collective`; NULL: none */
  const char *variant;
  const char *op_given;     /* `op` as the file gives it, NULL when absent (op is then name) */
  const char *returns;      /* C return type, NULL when absent */
  ls_rule_arg *args;        /* nargs of them */
  int seq_member;           /* kind collective, or `"collective": true` (communicator creation) */
  /* `received`: what the call leaves in its recvbuf arguments is the same on every rank of
   * its communicator ("uniform": an allreduce, a broadcast); 0: it may differ by rank
   * ("per_rank", and when absent: a prefix, a scatter's part, a rooted reduction's result) */
  int received_uniform;
  int nargs;
  enum ls_role *roles;
  /* `in_place`: when argument in_place_buf is spelled in_place_value (MPI_IN_PLACE), the
   * fingerprint takes count/dtype from these arguments instead (-1: none) */
  int in_place_buf, in_place_count, in_place_dtype;
  const char *in_place_value;
  /* top-level `derived_dtypes` of its file: an argument with role dtype may name a datatype
   * the program built, so lint compares counts and datatypes of two calls only where each
   * datatype is spelled as one of these predefined names (enums.dtype less `untyped`);
   * NULL: every datatype is one of the API's own (NCCL), compared as written */
  const char *const *basic_dtypes;
  int nbasic_dtypes;
  /* A wrapper (a `wrappers` entry, or a thin wrapper lint found): the API function it
   * forwards to, whose kind, op, api and seq_member it has; its args and roles are at the
   * wrapper's own parameters. NULL: an entry point of the API. */
  const struct ls_rule_fn *as;
  const int *as_arg;        /* by argument of `as`: the wrapper's parameter that carries it, -1: none */
  /* lint's own wrappers, by argument of `as`: the normalized text of a fingerprint argument
   * the body passes as a fixed value (`MPI_INT`, a member `comm_`), else NULL; NULL: none */
  const char *const *as_fixed;
} ls_rule_fn;
/* A `wrappers` entry as its file gives it, resolved by ls_rules_link once all files are in. */
typedef struct ls_rule_wrap {
  const char *path, *name, *as_name;
  const char **arg_names; int *arg_idx; int nmap; /* `args`: target argument -> parameter */
  int has_args;             /* 0: the wrapper's parameters are the target's, in order */
} ls_rule_wrap;
typedef struct ls_rule_src { /* rank_sources / uniform_sources entry */
  const char *call;
  int arg;               /* -1 if absent */
  const char **values;   /* for `arg`: string literal values that make it a source */
  int nvalues;
  int out_arg;           /* -1 if absent */
  int returns;
  int uniform;
} ls_rule_src;
typedef struct ls_rule_enum { const char *name; long long value; } ls_rule_enum;
typedef struct ls_rule_enums { /* one object of `enums`: C name -> value */
  const char *name;         /* "result", "dtype", "redop" */
  ls_rule_enum *v; int n;
} ls_rule_enums;
typedef struct ls_rules_file { /* what a file says of its library as a whole */
  const char *path;
  const char *api;          /* "" when absent */
  const char *success, *pending; /* result names, NULL when absent */
  ls_rule_enums *enums; int nenums;
} ls_rules_file;
typedef struct ls_rule_flow { /* value_flows entry (rules/host.json): a library call's data flow */
  const char *call;
  unsigned long long from, into; /* bit i: argument i (its value and what it points to) */
  int from_rest, into_rest;      /* this argument and all after it too (variadic); -1: none */
  int returns;                   /* the return value carries what flows in */
} ls_rule_flow;
typedef struct ls_rules {
  FILE *errs;               /* where load errors go; NULL: stderr */
  ls_rules_file *files;     /* nfiles of them, in load order */
  ls_rule_fn *fns; int nfns;
  /* `wrappers` entries (SCHEMA.md), nwraps of them; wrappers[i] is wraps[i] resolved (as is
   * NULL until ls_rules_link) */
  ls_rule_wrap *wraps; ls_rule_fn *wrappers; int nwraps;
  ls_rule_flow *flows; int nflows;
  ls_rule_src *srcs; int nsrcs;
  const char **noreturn; int nnoreturn;
  const char **pending; int npending; /* top-level `pending` of each file (ncclInProgress) */
  /* top-level `root_designators` (MPI_ROOT, MPI_PROC_NULL): the root values a side of an
   * intercommunicator passes instead of a rank; a choice among them carries no rank value */
  const char **root_designators; int nroot_designators;
  /* rules/host.json: pragmas that run their statement on other threads ("omp parallel"),
   * the stream-creation flag bit that makes a stream non-blocking, and the stream handle
   * values that name the legacy / per-thread default stream (-1: not given) */
  const char **regions; int nregions;
  const char **primary_regions; int nprimary; /* run by the team's primary thread only ("omp master") */
  long long nonblocking_flag;
  long long *legacy_streams; int nlegacy;
  long long *per_thread_streams; int nper_thread;
  const char **success; int nsuccess; /* top-level `success` of each file (ncclSuccess) */
  const char **allocators; int nallocators; /* `allocators`: a NULL result is a failure (malloc) */
  const char **assert_handlers; int nassert_handlers; /* what a failed assert() calls (__assert_fail) */
  const char **status_prefixes; int nstatus_prefixes; /* an API's status-returning calls (MPI_) */
  const char **fork_like; int nfork_like; /* calls whose 0 result is a new child process (fork) */
  /* top-level `nonblocking` (lint's checks/nonblocking.c): a config whose field `nb_field` holds
   * `nb_value` makes a non-blocking communicator; a null config inherits from `comm` */
  const char *nb_field; long long nb_value; int nb_null_inherits;
  /* a creation from a non-blocking `comm` (split, shrink) sets `*out_comm` only once the
   * parent's state leaves pending: polling the parent settles the child */
  int nb_parent_settles;
  const char *nb_success, *nb_pending; /* `success` and `pending` of that file, for messages */
  int nfiles;
} ls_rules;
/* Loads and validates `path` into r (allocated in a, but for heap arrays that
 * ls_rules_release frees). On error prints `path:line:col: error: ...` or `path: error: KEY: ...`
 * to r->errs and returns -1, r then holds part of the file; never crashes on bad input. */
int ls_rules_load(ls_rules *r, ls_arena *a, const char *path);
/* Resolves the `wrappers` of every file loaded so far against the functions of all of them:
 * each gets its target's kind, op and roles. On error prints `path: error: wrappers.NAME: ...`
 * to r->errs and returns -1. Call once, after the last ls_rules_load. */
int ls_rules_link(ls_rules *r, ls_arena *a);
/* w: a wrapper named name (kept, not copied) of target whose argument i the wrapper's
 * parameter param[i] carries (-1: a value the wrapper fixes); roles and names in a. */
void ls_rule_wrapper_init(ls_rule_fn *w, ls_arena *a, const char *name, const ls_rule_fn *target, const int *param,
                          int nparams);
/* Frees r's heap arrays (its strings live in the arena) and zeroes their counts. */
void ls_rules_release(ls_rules *r);
/* Loads every *.json of dir (sorted). -1 on error or when dir has no rules. */
int ls_rules_load_dir(ls_rules *r, ls_arena *a, const char *dir);
/* The function or resolved wrapper named name (exactly as the file spells it), or NULL. */
const ls_rule_fn *ls_rules_fn(const ls_rules *r, const char *name);
int ls_rules_noreturn(const ls_rules *r, const char *name);
/* The file whose top-level `api` is api, or NULL. */
const ls_rules_file *ls_rules_file_of(const ls_rules *r, const char *api);
/* The value of `enums.GROUP.NAME` in f (0: none, *v unchanged); f may be NULL. */
int ls_rules_enum_value(const ls_rules_file *f, const char *group, const char *name, long long *v);
/* The first name of `enums.GROUP` whose value is v, or NULL; f may be NULL. */
const char *ls_rules_enum_name(const ls_rules_file *f, const char *group, long long v);

/* The rules directory: $LOCKSTEP_RULES_DIR when it is a directory, else the installed
 * <dir of this binary>/../share/lockstep/rules, else the source tree's of this build, else
 * the configured install's. Never NULL; may not exist. */
const char *ls_rules_dir_default(void);
/* The configured source-tree and install rules directories ("" where unset), for messages. */
void ls_rules_dir_configured(const char **build, const char **install);
const ls_rule_flow *ls_rules_flow(const ls_rules *r, const char *name);

#endif
