/* contracts.h — helpers shared by the API-contract checks (checks/contracts.c, threads.c,
 * nonblocking.c): the shapes of rule calls and comparable expressions, and one
 * way to report a finding. Internal to analyzer/; nothing here names an API function. */
#ifndef LOCKSTEP_CONTRACTS_H
#define LOCKSTEP_CONTRACTS_H

#include "check.h" /* lint.h, rule_ids.h and the rules' runs */

/* n without the parentheses and implicit casts around it. */
ls_node *ls_ct_unwrap(ls_node *n);
/* n is a call of a rules function whose kind is `kind`. */
int ls_ct_call_kind(const ls_node *n, const char *kind);
/* Index of the first argument of rules call `call` with role ro, or -1. */
int ls_ct_arg_of(const ls_node *call, enum ls_role ro);
/* a and b are the same expression (same entities, operators and literals), each node
 * first passed through unwrap (what may differ: parentheses, casts, ...). */
int ls_ct_same_expr_by(const ls_node *a, const ls_node *b, ls_node *(*unwrap)(ls_node *));
/* ls_ct_same_expr_by with ls_ct_unwrap (parentheses and implicit conversions). */
int ls_ct_same_expr(const ls_node *a, const ls_node *b);
/* A note/site location at n, its message copied into the arena. */
ls_loc *ls_ct_loc(ls_program *p, const ls_node *n, const char *msg);
/* Adds a finding at `at` unless `out` already has one of `rule` at that place (NULL then,
 * and when `at` has no location). The message is copied; key feeds the fingerprint. */
ls_finding *ls_ct_report(ls_program *p, const ls_func *f, ls_vec *out, const char *rule, const ls_node *at,
                         const char *msg, const char *key);

#endif
