/* check.h — what a rule of analyzer/checks/ is given: the function being analyzed with the
 * driver's facts about it (driver.c: collective sequences, group depth, the flow-sensitive
 * view of its locals), the report walks over its CFG (seq.c), and one way to add a finding.
 * Internal to analyzer/; nothing here names an API function. */
#ifndef LOCKSTEP_CHECK_H
#define LOCKSTEP_CHECK_H

#include <string.h>

#include "lint.h"
#include "rule_ids.h"

struct ls_sbuf { char *s; size_t n, cap; };

typedef struct ls_check_ctx {
  ls_program *p;
  ls_vec *findings;
  ls_func *f;
  unsigned gen;
  ls_finding **seen; /* open-addressing set of findings by (rule, file, line, col) */
  size_t seencap;
  int budget;        /* blocks a report walk may still visit */
  struct ls_sbuf nbuf; /* ls_event_token's buffer for normalized argument text */
  /* f's facts, for its rules (driver.c) */
  ls_fs fs;          /* the flow-sensitive view of f's locals */
  ls_vec below;      /* group ends reached with depth 0 possible */
  ls_vec starts;     /* group starts (and begin helpers) */
  ls_node *first_start; /* the first group start of a rules function */
  ls_vec p2p;        /* pairs (call, its block): send/recv without a request, outside any group */
  /* errpath.c: by block id, bit 0: reached only after a call reported failure, bit 1: the
   * block's branch is a failure test; errany: some bit set in f */
  unsigned char *errp;
  size_t errcap;
  int errany;
  uint32_t *gnorm;   /* group.c, when errany: each block's gout on the normal run alone */
  size_t gnormcap;
  /* errpath.c's scratch, sized by errcap: walk marks (by block id, generation errgen), a
   * stack, and the blocks of f's items (hash, built at the first question about a call) */
  unsigned *errseen, errgen;
  ls_block **errstk;
  const ls_node **errnk;
  ls_block **errnb;
  size_t errncap;
  int errnbuilt;
  ls_vec errflags;   /* the program's globals that only failure sides change (ls_errpath_globals) */
} ls_check_ctx;

/* ---- events: what a collective sequence is made of ---- */
static inline int ls_is_coll(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->seq_member;
}
static inline int ls_is_p2p(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->kind == LS_KIND_P2P;
}
/* a call of an analyzed function that issues collectives */
static inline int ls_is_helper_call(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && !n->ent->rule && n->ent->def && n->ent->def->analyzed &&
         n->ent->def->entry->len > 0;
}
static inline const char *ls_callee(const ls_node *n) { return n && n->text ? n->text : "?"; }
/* The token of a collective event (op + comm + count/dtype/root/redop expressions) or of a
 * helper call (its sequence hash) in *tok; 0 when n is neither. */
int ls_event_token(ls_check_ctx *c, ls_node *n, uint64_t *tok);
/* Whether events a and b match as the sides of a branch compare them: equal tokens, or one
 * collective whose type signature is open (seq.c) against another with its core. */
int ls_events_match(ls_check_ctx *c, ls_node *a, ls_node *b);
/* n's normalized text as the fingerprint compares it (cached in n; b: scratch) */
const char *ls_arg_norm(ls_program *p, struct ls_sbuf *b, ls_node *n);

/* ---- collective sequences (seq.c) ----
 * H(x): the hash of the canonical collective sequence from block x to the function exit
 * along the post-dominator chain, memoized in the blocks (h, len, stop, ends). */
struct ls_seq { uint64_t h; long len; int stop; int ends; };
struct ls_seq ls_seq_of(ls_check_ctx *c, ls_block *k);
/* a followed by b */
struct ls_seq ls_seq_cat(struct ls_seq a, struct ls_seq b);
/* The region of alternative s of a branch whose join is P. */
struct ls_seq ls_seq_region(struct ls_seq s, struct ls_seq P);

/* 1 when every alternative of branch b issues, up to its join P, the same collectives on
 * each communicator, with helpers expanded by what they issue for these arguments (see
 * seq.c); 0 when they differ or cannot be told. */
int ls_sides_agree(ls_check_ctx *c, ls_block *b, ls_block *P);

/* ---- report walks: the first calls of one side of a branch ---- */
#define LS_MAXEV 16
/* why[i]: the innermost nested branch or loop that decides whether v[i] is issued at
 * all (NULL: issued on every path of this side), so that a report never shows two
 * sides as issuing the same calls when one of them issues them only sometimes. */
struct ls_evlist { ls_node *v[LS_MAXEV]; const ls_block *why[LS_MAXEV]; int n; int exited; };
/* The collectives and helper calls (p2p: the send/recv calls) on the way from k until
 * `stop` (or the function's exit), within c->budget blocks; blocks marked c->gen are not
 * entered again (bump c->gen before a walk). */
void ls_walk(ls_check_ctx *c, ls_block *k, ls_block *stop, struct ls_evlist *out, int p2p);
/* ls_walk on a fresh generation with a report walk's budget. */
static inline void ls_walk_fresh(ls_check_ctx *c, ls_block *k, ls_block *stop, struct ls_evlist *out, int p2p) {
  c->gen++;
  c->budget = 256;
  ls_walk(c, k, stop, out, p2p);
}
/* The normalized text of expression n, as fingerprints compare it (kept with n). */
const char *ls_norm_text(ls_check_ctx *c, ls_node *n);
/* A blocking point-to-point call (rules kind blocking_p2p); ls_walk with p2p == 2 lists these
 * and the collectives. */
static inline int ls_is_blocking_p2p(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && !strcmp(n->ent->rule->kind_name, "blocking_p2p");
}

/* ---- group depth (group.c) ---- */
/* f's depth masks (gin/gout), c's below/starts/first_start/p2p, and whether f is a begin/end
 * helper (f->group_net, f->group_helper: its callers account for it); after
 * ls_errpath_analyze, c->gnorm. */
void ls_group_analyze(ls_check_ctx *c);
/* The single depth in mask m, or 99. */
int ls_mask_depth(uint32_t m);

/* ---- error paths (errpath.c) ---- */
/* c->errp for c->f: which blocks run only after a call reported failure (a result unequal
 * to the API's success, a NULL allocation), found by the walk from the entry that takes no
 * failure side of a failure test. */
void ls_errpath_analyze(ls_check_ctx *c);
/* Before the functions are analyzed: which globals are failure flags or error counters,
 * from every write to them in the program's functions (funcs: ls_func*). */
void ls_errpath_globals(ls_check_ctx *c, const ls_vec *funcs);
/* k is reached only after a call reported failure. */
int ls_errpath_block(const ls_check_ctx *c, const ls_block *k);
/* The failure test (a branch block) on whose failure side error block k lies; NULL when k
 * is on the normal path. */
ls_block *ls_errpath_why(ls_check_ctx *c, ls_block *k);
/* A failure test whose failure side leads into k (directly or through error blocks), for
 * a block also reached normally (a shared cleanup label); NULL: none. */
ls_block *ls_errpath_into(ls_check_ctx *c, ls_block *k);
/* ls_errpath_why of the block holding item n. */
ls_block *ls_errpath_at(ls_check_ctx *c, const ls_node *n);
/* A divergence at branch b about call at (NULL: none) happens only after a failure when b
 * or at's block is an error block, b is a failure test, or every normal path from b passes
 * at (what skips at is a failure side): that failure test, else NULL. */
ls_block *ls_errpath_skip(ls_check_ctx *c, ls_block *b, const ls_node *at);
/* Frees c's error-path state and scratch (the driver, after the last function). */
void ls_errpath_free(ls_check_ctx *c);
/* Tags fd as an error-path finding with a note at why's condition; nothing for why NULL. */
void ls_errpath_tag(ls_check_ctx *c, ls_finding *fd, const ls_block *why);

/* ---- findings (check.c) ---- */
/* A note/site location, its message copied into the arena. */
ls_loc *ls_check_loc(ls_program *p, const char *file, unsigned line, unsigned col, const char *msg);
/* Adds a finding of `rule` in c->f (message copied) unless one of that rule is at that
 * place already (NULL then). */
ls_finding *ls_check_add(ls_check_ctx *c, const char *rule, const char *file, unsigned line, unsigned col,
                         const char *msg);
/* Notes retracing a rank value's way back to its source o (a few steps at most). */
void ls_check_origin_notes(ls_check_ctx *c, ls_finding *fd, const ls_origin *o);
/* snprintf(key + k, cap - k, "%s%s", a, b) for k < cap, without the formatting (~700
 * instructions a call, several per finding): the length it would have written is returned */
size_t ls_key_cat(char *key, size_t cap, size_t k, const char *a, const char *b);
/* snprintf(buf, cap, "%s%s", a, b) without the formatting (notes are thousands) */
static inline void ls_str2(char *buf, size_t cap, const char *a, const char *b) { (void)ls_key_cat(buf, cap, 0, a, b); }

/* ---- every rule's run, declared from checks.def: its stage says how the driver calls it ---- */
#define LS_FUNC_DECL(run) void run(ls_check_ctx *c);
#define LS_AFTER_DECL(run) void run(ls_program *p, ls_func *f, ls_vec *findings);
#define LS_PROGRAM_DECL(run) void run(ls_program *p, ls_vec *findings);
#define LS_ALSO_DECL(run)
#define LS_CHECK(NAME, id, stage, run) stage##_DECL(run)
#include "checks.def"
#undef LS_CHECK
#undef LS_FUNC_DECL
#undef LS_AFTER_DECL
#undef LS_PROGRAM_DECL
#undef LS_ALSO_DECL

#endif
