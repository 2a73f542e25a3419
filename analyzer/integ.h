/* integ.h — the parts of `lockstep lint` that fit it into other people's workflows: rule
 * documentation (rules/docs/lint_rules.json, the one description of each rule that the
 * text output, SARIF, `lockstep rules` and `lockstep explain` all read), SARIF 2.1.0 output,
 * baselines and per-rule selection, parallel parsing of a compilation database, and the
 * progress line / run summary. Non-goal: any analysis; the rules live in checks/ (checks.def). */
#ifndef LOCKSTEP_INTEG_H
#define LOCKSTEP_INTEG_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "data_dir.h"
#include "json_file.h"
#include "lint.h"

/* ---- rule documentation ---- */
typedef struct ls_rule_doc {
  const char *id, *name, *shortd, *full, *help, *bad, *good;
} ls_rule_doc;
typedef struct ls_rule_docs {
  ls_rule_doc *v; /* arena */
  int n;
  const char *path;
} ls_rule_docs;
/* Loads <rules dir>/docs/lint_rules.json into d (strings in a). On error prints
 * `file[:line:col]: error: ...` and returns -1. */
int ls_rule_docs_load(ls_rule_docs *d, ls_arena *a);
const ls_rule_doc *ls_rule_doc_find(const ls_rule_docs *d, const char *id);

/* ---- policy: rule selection, warnings-as-errors, baseline, jobs, summary ---- */
typedef struct ls_policy {
  const char *enable, *disable, *werror; /* comma-separated rule ids (or "all") */
  const char *baseline;
  int baseline_write, jobs, summary, quiet;
  int allow_errors;  /* --allow-errors: a TU with compile errors does not fail the run */
  const char *jobs_arg; /* -j's value as given (NULL: not given) */
  const char *error_paths; /* --error-paths's value as given (NULL: not given, "show") */
  int hide_errpaths;       /* --error-paths=hide: error-path findings are counted, not reported */
  /* results */
  size_t baselined, absent, counted, wrote;
  size_t hidden;           /* error-path findings left out by --error-paths=hide */
  double t0;
} ls_policy;
/* Parses one option at argv[*i] (advancing *i over a separate value). Returns 1 when it was
 * ours, 0 when not, -1 on a bad value (message printed). */
int ls_policy_option(ls_policy *pol, int argc, char **argv, int *i);
/* An option that takes one value given a second time (prev: the first value, NULL when this
 * is the first): prints `opt given twice ('prev', then 'v')` + hint and returns 1; else 0.
 * Which of the two was meant would be a guess. */
int ls_option_twice(const char *opt, const char *prev, const char *v, const char *hint);
/* 1 when the command line (before `--`) asks for -j/--jobs other than 1: parallel parses. */
int ls_policy_parallel(int argc, char **argv);
/* 1 when `rule` is in the comma-separated `list` (or the list says "all"); 0 for NULL. */
int ls_rule_in_list(const char *list, const char *rule);
/* Checks the rule lists against the documented rules and against each other; -1 (message
 * printed) on an unknown id or on lists that contradict (a rule both enabled and disabled,
 * promoted to an error but turned off, --enable with --disable=all). */
int ls_policy_validate(const ls_policy *pol, const ls_rule_docs *d);
/* Drops disabled findings (in place), marks errors, applies the baseline (reading or
 * writing it). -1 on a baseline file error (message printed). */
int ls_policy_apply(ls_policy *pol, ls_arena *a, ls_vec *findings);

/* ---- fix-its: edits that fix a finding mechanically ---- */
typedef struct ls_edit {
  const char *file;
  unsigned line, col, eline, ecol; /* replaced range [line:col, eline:ecol); empty: insertion */
  const char *text;
} ls_edit;
typedef struct ls_fix {
  const char *desc;
  int nedits;
  ls_edit edits[2];
} ls_fix;
/* Attaches a fix (and a "fix-it:" note for the text output) to the findings whose fix is
 * mechanical: a plain `return` inside a group, an ungrouped send/recv pair written as two
 * adjacent statements. Anything less certain gets no fix. */
void ls_fixits(ls_arena *a, ls_vec *findings);

/* ---- output ---- */
/* SARIF 2.1.0: one run, the documented rules, results with related locations, partial
 * fingerprints; baselined findings appear as suppressed results; each TU that did not
 * compile a tool execution notification (level error unless pol->allow_errors accepts it);
 * the invocation's executionSuccessful is rc != 2, its exitCode rc. */
void ls_emit_sarif(FILE *out, ls_program *p, ls_vec *findings, const ls_rule_docs *d, const ls_policy *pol,
                   int rc);
/* Emits findings in `format` (text, json, sarif), the summary, and returns the exit code:
 * 2 when input_error, else 1 with findings to show, else 0. */
int ls_report(ls_policy *pol, ls_arena *a, ls_program *p, ls_vec *findings, const char *format,
              const ls_rule_docs *d, int input_error);

/* ---- parallel parsing ---- */
typedef struct ls_tu_job {
  const char *file;
  const char *const *args;
  int nargs, cuda;
} ls_tu_job;
/* Parses every job into p with up to `jobs` threads (each with its own CXIndex); TUs are
 * converted into p in job order, so results do not depend on scheduling. Shows a progress
 * line on stderr when it is a terminal. Returns 1 if any TU could not be parsed at all. */
int ls_parse_all(ls_program *p, const ls_tu_job *jobs, size_t njobs, const ls_parse_opts *o, int nthreads,
                 int progress);

#endif
