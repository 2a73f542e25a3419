/* rule_ids.h — the lint rules of checks.def as C names: LS_RULE_<NAME> and its id string.
 * Dependency-free, so the tools (confirm) name rules the way lint does, also in builds
 * without the analyzer. */
#ifndef LOCKSTEP_RULE_IDS_H
#define LOCKSTEP_RULE_IDS_H

#include <string.h>

enum ls_rule {
#define LS_CHECK(NAME, id, stage, run) LS_RULE_##NAME,
#include "checks.def"
#undef LS_CHECK
  LS_NRULES
};

/* The rule's id ("unbalanced-group"); a static string. */
static inline const char *ls_rule_id(enum ls_rule r) {
  static const char *const ids[LS_NRULES] = {
#define LS_CHECK(NAME, id, stage, run) id,
#include "checks.def"
#undef LS_CHECK
  };
  return ids[r];
}

/* The rule whose id is the n bytes at s, or -1. */
static inline int ls_rule_find(const char *s, size_t n) {
  for (int r = 0; r < LS_NRULES; r++)
    if (strlen(ls_rule_id((enum ls_rule)r)) == n && !strncmp(s, ls_rule_id((enum ls_rule)r), n))
      return r;
  return -1;
}

#endif
