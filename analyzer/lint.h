/* lint.h — internal interfaces of `lockstep lint` (analyzer/).
 * One translation unit is parsed with libclang, converted once into a compact node tree
 * (ls_node) held in a per-run arena, then the libclang TU is dropped; the CFG, taint and
 * checks work on the node trees of all TUs together, so summaries cross TU boundaries.
 * Nothing here names an API function: everything API-specific comes from the rules (rules/ directory). */
#ifndef LOCKSTEP_LINT_H
#define LOCKSTEP_LINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <clang-c/Index.h>

#include "arena.h"
#include "clock.h"
#include "rules.h"

/* ---- entities: variables, params, fields, functions, keyed by USR across TUs ---- */
enum ls_ent_kind { LS_ENT_VAR, LS_ENT_PARAM, LS_ENT_GLOBAL, LS_ENT_FIELD, LS_ENT_FUNC };
typedef struct ls_origin { /* where a rank-dependent value came from (for notes) */
  const char *file; unsigned line, col;
  const char *what;
  /* a step between functions (a parameter that received it, a function that returns it):
   * where the value was before; NULL at the rank source itself */
  const struct ls_origin *from;
} ls_origin;
struct ls_func;
typedef struct ls_entity {
  const char *key, *name;
  enum ls_ent_kind kind;
  const ls_origin *taint;   /* non-NULL: rank-dependent, with its origin */
  const ls_origin *ptaint;  /* what it points to / its elements are rank-dependent */
  /* functions */
  struct ls_func *def;
  const ls_rule_fn *rule;
  int rule_noreturn;
  int rule_fork;            /* rules `fork_like`: returns 0 in a new child process */
  unsigned src;             /* rules sources naming this function (LS_SRC_*), found once */
  const ls_rule_flow *flow; /* value_flows entry: how a library call moves data (snprintf) */
  const ls_origin *ret_taint;
  uint64_t out_taint;       /* bit i: callee writes a rank value through param i */
  const ls_origin *out_origin;
  int ncalls;               /* calls seen from analyzed code */
  struct ls_entity *dtor;   /* for record-typed variables: their class's user destructor */
  int fsidx;                /* 1-based bit of the flow-sensitive pass in its function, 0: none */
  /* an access path base.field of a local or parameter (taint.c): the field as one object holds it */
  struct ls_entity *pbase, *pfield;
  /* a local pointer only ever set to &x (taint.c): a write through it is a write to x */
  struct ls_entity *alias;
  int alias_many;
  /* taint.c's fixpoint: the functions that read this entity's facts (re-run when it changes) */
  struct ls_reader *readers;
  int rmark;
} ls_entity;

enum {
  LS_SRC_ANY = 1, /* named by a rank_sources/uniform_sources entry */
  LS_SRC_OUT = 2, /* a source (rank or uniform) through an out-argument */
  LS_SRC_STR = 4  /* a source matched by a string literal argument (getenv's name) */
};

/* ---- nodes: a compact copy of the statements/expressions of function bodies ---- */
typedef struct ls_node_x { /* the fields few nodes have, apart (ls_nx, ls_node_ext) */
  unsigned eline, ecol;     /* CompoundStmt: closing brace */
  ls_entity *dtor;          /* VarDecl of a class with a user destructor; a temporary's (CallExpr) */
  const char *norm;         /* normalized expression text (collective arguments only) */
  const char *spell;        /* source tokens of an in-place-capable buffer argument */
  const ls_origin *origin;  /* rank source calls: their origin, made once */
} ls_node_x;
/* 64 bytes: a large TU has 185k nodes, written once while libclang's tree is alive, so
 * every byte is a fresh page the kernel faults in (112 bytes before: bench/RESULTS.md) */
typedef struct ls_node {
  uint16_t kind;            /* enum CXCursorKind */
  int8_t op;                /* CXBinaryOperatorKind / CXUnaryOperatorKind, 0 otherwise */
  uint8_t ilit : 1;         /* IntegerLiteral (or enum constant): value known, in ival */
  uint8_t ptr_result : 1;   /* CallExpr whose result is a pointer (an address, not a rank value) */
  uint8_t root_choice : 1;  /* ConditionalOperator with a rules root_designator (MPI_ROOT) as an alternative */
  /* a datatype argument of a call whose API has derived datatypes (rules `derived_dtypes`):
   * dtype_seen, its spelling was looked at; dtype_basic, it is one token naming a predefined
   * datatype, whose type signature is known */
  uint8_t dtype_seen : 1;
  uint8_t dtype_basic : 1;
  unsigned nkids;
  struct ls_node **kids;
  const char *file; unsigned line, col; /* expansion location (what the user wrote) */
  const char *text;         /* callee/var/field/label name, literal text, or normalized value */
  ls_entity *ent;           /* referenced entity (var/param/global/field/callee) */
  long long ival;
  ls_node_x *x;             /* NULL: all of ls_node_x's fields are 0 */
} ls_node;
_Static_assert(sizeof(ls_node) == 64, "ls_node: keep it at 64 bytes");
static inline const ls_node_x *ls_nx(const ls_node *n) { /* n's rare fields, for reading */
  static const ls_node_x none;
  return n->x ? n->x : &none;
}
static inline ls_node_x *ls_node_ext(ls_arena *a, ls_node *n) { /* n's rare fields, for writing (made at need) */
  if (!n->x)
    n->x = ls_alloc(a, sizeof *n->x);
  return n->x;
}

/* ++ or -- on its operand */
static inline int ls_is_incdec(int op) {
  return op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec || op == CXUnaryOperator_PreInc ||
         op == CXUnaryOperator_PreDec;
}
/* a unary operator through which its operand may be written: ++, --, or & (handed on) */
static inline int ls_unary_may_write(const ls_node *n) {
  return n->kind == CXCursor_UnaryOperator && n->nkids == 1 && (ls_is_incdec(n->op) || n->op == CXUnaryOperator_AddrOf);
}

/* The expression under parentheses, implicit conversions and value-preserving casts (C,
 * static_cast, functional): what a value is, for the rules that compare or classify it. */
static inline ls_node *ls_strip_casts(ls_node *n) {
  while (n && (n->kind == CXCursor_ParenExpr || n->kind == CXCursor_UnexposedExpr ||
               n->kind == CXCursor_CStyleCastExpr || n->kind == CXCursor_CXXStaticCastExpr ||
               n->kind == CXCursor_CXXFunctionalCastExpr) && n->nkids >= 1)
    n = n->kids[n->nkids - 1];
  return n;
}

/* ---- CFG ---- */
/* 192 bytes, each block on a 64-byte boundary (ls_program.lines): the analysis passes over
 * all blocks of a function several times, and a function of 30k blocks does not stay in
 * the cache between passes, so the fields most passes read share the first cache line. */
typedef struct ls_block {
  /* first line: what the taint passes, the implicit flow and the walks read */
  int id;
  int nitems;
  ls_node **items;          /* side-effecting nodes in evaluation order */
  struct ls_block **succ;
  int nsucc;
  unsigned mark;
  ls_node *cond;            /* branch condition (NULL: unconditional) */
  struct ls_block *ipdom;
  const ls_origin *impl;            /* control-dependent on a rank-dependent branch */
  const ls_origin *cond_taint;
  /* second line: sequence memo and loop facts (seq.c, driver.c) */
  uint64_t h; long len; int hstate; /* collective-sequence hash to exit (suffix) */
  int stop, ends;           /* sequence memo: truncated at block `stop` (-1: none); ends in abort */
  int cyc_ev;               /* on a cycle (strongly connected component) that issues collectives */
  int is_loop;              /* loop condition block */
  int nstop;                /* seq.c's report walks: how many of the open ones stop here */
  ls_node *term;            /* return statement ending this block, if any */
  struct ls_block **pred; int npred;
  /* the rest */
  int rpo, po;              /* postorder number in the reverse CFG */
  uint32_t gin, gout; int gdone;    /* group depth masks */
  const struct ls_block *cdep;      /* a rank-dependent branch this block depends on */
  ls_node *thrown;          /* the throw (or a call that may throw) whose exception leaves the
                             * function from this block (its edge goes to the abort sink) */
  int capitems, capsucc, cappred;
  int trips1;               /* seq.c: a counted loop's trip count + 2, 1: not one, 0: not asked yet */
} ls_block;
_Static_assert(sizeof(ls_block) <= 192, "ls_block: three cache lines at most");

typedef struct ls_func {
  const char *name, *file;
  unsigned line, col, end_line, end_col;
  ls_entity *ent;
  ls_entity **params; int nparams;
  ls_node *body;
  ls_block **blocks; int nblocks;
  ls_block *entry, *exit, *abort_blk, *vexit;
  ls_block *killall;        /* sink of job-wide aborts (rules kind comm_abort, e.g. MPI_Abort) */
  int kills_all;            /* every path ends in a job-wide abort */
  int group_net, group_helper, analyzed, visiting;
  int tdirty;               /* taint.c: an input of the function's passes changed since its last run */
  /* what the body (lambdas nested in it included) holds, found by driver.c's call-graph walk:
   * bit i of calls_kinds: a call of an API function whose rules kind is kind_names[i] of the
   * program (ls_func_calls_kind); has_pragma: a statement wrapped by a pragma */
  uint64_t calls_kinds;
  int has_pragma;
  ls_node **refs; int nrefs; /* the body's nodes that name an entity, in preorder (same walk) */
  int noreturn;             /* no path reaches the normal exit */
  ls_node *throws;          /* an exception can leave the function: the throw (or the call) it
                             * comes from, found when its CFG is built (callees first) */
  ls_block **fwd; int nfwd; /* the blocks the entry reaches, in topological order, loops together (ls_cfg_forward) */
  int *fpos;                /* by block id: its index in fwd (blocks the entry reaches only) */
  uint64_t nb_settles;      /* bit i: every normal return has polled param i's communicator ready */
  /* taint.c: `issues`, the body or a helper it calls issues a collective or send/recv; cip[b],
   * where the ranks that go on from block b meet again (see continuing_postdom), NULL where
   * no collective follows */
  int issues;
  struct ls_block **cip;
  /* taint.c: 1 the return value is computed from the parameters in ret_params alone (see
   * ret_by_params), -1 not, 0 not looked at yet, 2 being looked at */
  int ret_pure;
  uint64_t ret_params;
  /* a virtual method: the methods of base classes it overrides, transitively (wrappers.c) */
  ls_entity **overrides; int noverrides;
  int wr_issues;            /* wrappers.c: 0 not asked, 1 its body calls no API or defined function, 2 it may */
  int trips_done;           /* seq.c: every loop block's trips1 is set */
  /* convert.c: clang reported an error inside the body, or a declaration in it (or the
   * function's own) is invalid: what it calls may be lost, so nothing is reported in it */
  int parse_err;
} ls_func;

typedef struct ls_tu_info {
  const char *file;
  int nerrors, ok, fatal;
  ls_vec errors;            /* char* formatted diagnostics (arena) */
  ls_vec skipped;           /* ls_func* defined here with parse_err: not checked */
} ls_tu_info;

typedef struct ls_program {
  ls_arena *arena;
  ls_arena *lines;          /* nodes and blocks only, each on cache lines of its own (ls_alloc_lines) */
  const ls_rules *rules;
  ls_vec funcs;             /* ls_func* */
  ls_vec tus;               /* ls_tu_info* */
  struct ls_enthash *ents;
  /* the distinct rules kinds ("memcpy", ...) and each rules function's index among them */
  const char **kind_names; int nkind_names;
  unsigned char *fn_kind;
  int nb_need;              /* checks/nonblocking.c: 0 not known yet, 1 no function needs it, 2 some may */
  /* pairs (call node, entity): calls through a function-pointer field the rules did not name,
   * converted as unknown calls (callee expression first); wrappers.c binds those whose field
   * it finds assigned an API function */
  ls_vec fpcalls;
  double t_parse, t_convert, t_analyze; /* seconds, for LOCKSTEP_LINT_STATS */
  size_t nnodes;
} ls_program;

ls_program *ls_program_new(const ls_rules *rules);
void ls_program_free(ls_program *p);
ls_entity *ls_entity_get(ls_program *p, const char *key, const char *name, enum ls_ent_kind kind);
/* Qualified rule names ("ns::Comm::bcast") against USRs, which spell the scopes in order
 * ("c:@N@ns@S@Comm@F@bcast#..."), inline namespaces in between: the part after the last
 * "::" (NULL: none), and whether usr holds "@a@", "@b@"... for the parts of qname's first
 * len characters, in that order. */
const char *ls_qualified_last(const char *qname);
int ls_usr_has_scopes(const char *usr, const char *qname, size_t len);

/* Parse options for one translation unit. */
typedef struct ls_parse_opts {
  const char *resource_dir, *cuda_path, *cuda_include;
  int cuda;                 /* parse as CUDA (host side) */
} ls_parse_opts;
/* Parses `file` with `args` and converts its function bodies into p. Returns 0 when a
 * TU was produced (possibly with errors, recorded in p->tus), -1 when libclang could not
 * parse it at all (message printed). */
int ls_parse_file(ls_program *p, CXIndex idx, const char *file, const char *const *args,
                  int nargs, const ls_parse_opts *o);
/* The two halves of ls_parse_file, for -j: parsing needs only its own CXIndex (one per
 * thread); converting writes p, so one TU at a time. ls_tu_convert disposes tu. */
CXTranslationUnit ls_tu_parse(CXIndex idx, const char *file, const char *const *args, int nargs,
                              const ls_parse_opts *o);
void ls_tu_convert(ls_program *p, CXTranslationUnit tu, const char *file, const char *const *args, int nargs,
                   const ls_parse_opts *o);
/* Adds the CUDA host-side flags for `o` to args (heap vec of char*). */
void ls_cuda_flags(ls_vec *args, const ls_parse_opts *o);
int ls_is_cuda_file(const char *file);

/* CFG */
void ls_cfg_build(ls_program *p, ls_func *f);
void ls_cfg_postdom(ls_func *f);
/* A forward "may" dataflow to its fixpoint over the blocks f's entry reaches: in (W words
 * per block, by block id) is the union of the predecessors' out-states, and step turns a
 * block's in-state (a copy in st) into its out-state. The caller clears in and sets the
 * entry's state; monotone steps give the same fixpoint in any order. */
typedef void ls_cfg_step(void *ctx, ls_block *k, uint64_t *st);
void ls_cfg_forward(const ls_func *f, int W, uint64_t *in, uint64_t *st, ls_cfg_step *step, void *ctx);
/* Writes the CFG shape ("B0 -> B1 B2" per line, entry first) for tests/debugging. */
void ls_cfg_dump(const ls_func *f, FILE *out);
/* Writes f->fwd, the order ls_cfg_forward visits blocks in, by ls_cfg_dump's names
 * ("B0 B1 B2 EXIT VEXIT"), for tests. */
void ls_cfg_dump_order(const ls_func *f, FILE *out);

/* 1 when x is n or one of its descendants (cfg.c) */
int ls_node_contains(const ls_node *n, const ls_node *x);

/* ---- taint (taint.c): rank dependence, a whole-program fixpoint over all functions ---- */
void ls_taint_run(ls_program *p);
/* The origin of n's rank dependence, NULL when n is uniform. st: a state of the flow-sensitive
 * pass (ls_fs), in which a local with fsidx reads as rank-dependent only when its bit is set;
 * NULL: the flow-insensitive facts. */
const ls_origin *ls_expr_taint(ls_program *p, const uint64_t *st, ls_node *n);
/* What an array/pointer argument points to (MPI's `counts` arrays), read in state st. */
const ls_origin *ls_content_taint(ls_program *p, const uint64_t *st, ls_node *n);
/* 1 when the counts array arg of collective call (in block at of f) holds the same numbers on
 * every rank whatever its fact says: f has just filled one per member of the call's
 * communicator with a uniform value, on every way to the call (counts.c says when). */
int ls_counts_filled(ls_program *p, ls_func *f, const ls_block *at, ls_node *call, ls_node *arg);
/* 1 when the counts array arg (a local) read in block at of f holds the same numbers on every
 * rank although writes under a rank-dependent condition filled it: at runs only where a
 * parameter f never writes has one value, and with it the condition holds on every rank
 * (`if (all || rank == root)` ... `if (all) MPI_Allgatherv(...)`; counts.c says when). */
int ls_counts_guarded(ls_program *p, ls_func *f, const ls_block *at, ls_node *arg);
/* taint.c's pieces that counts.c reads too: the rules source a call's value matches; the
 * blocks whose running depends on k's way (visit returns 0 at a block it saw); whether n
 * takes v's address; whether a rules function's receive buffer is alike on every rank. */
const ls_rule_src *ls_value_source(ls_program *p, ls_node *call);
void ls_ctl_region(const ls_func *f, ls_block *k, int (*visit)(ls_block *, void *), void *ctx);
int ls_addr_taken(const ls_node *n, const ls_entity *v);
int ls_delivers_alike(const ls_rule_fn *rule);
/* The flow-sensitive pass over one function's locals: bit fsidx-1 of a state says whether
 * a candidate local holds a rank value there. ls_taint_run runs it (full) inside its fixpoint.
 * The checks' view of a function (after ls_taint_run) is the same pass, narrower as it always
 * was: no access paths, at most 4096 locals, candidates picked by their flow-insensitive facts
 * in one round, and a uniform out-argument source (MPI_Comm_size) does not make a local uniform.
 * Fields are the pass's own. */
typedef struct ls_fs {
  ls_func *f;
  ls_vec cands;             /* ls_entity* with fsidx */
  int words;
  uint64_t *in;             /* nblocks x words: state at block entry */
  uint64_t *st;             /* one state (cap words) */
  int cap;
  size_t maxc;              /* most candidates for this function (memory and time bound) */
  ls_vec pcands;            /* the candidates that are access paths */
  int full;                 /* 1: the taint fixpoint's pass */
} ls_fs;
/* The checks' view of f: selects its candidates, solves, and sets each branch's cond_taint
 * with the state at the branch, dropping the implicit flow (impl) of blocks no longer
 * control-dependent on a rank-dependent branch (a few rounds). Free x with ls_fs_free. */
void ls_fs_refine(ls_program *p, ls_func *f, ls_fs *x);
/* The state at k's entry (x's scratch: valid until the next call), or NULL when nothing is
 * tracked (the flow-insensitive facts hold). */
uint64_t *ls_fs_enter(ls_fs *x, const ls_block *k);
/* Advances st over item n of a block whose implicit flow is impl; nothing for st NULL. */
void ls_fs_step(ls_program *p, ls_fs *x, ls_node *n, uint64_t *st, const ls_origin *impl);
/* Clears the candidates' fsidx and frees x's memory. */
void ls_fs_free(ls_fs *x);
/* An entity's bit (fsidx) in a flow-sensitive state. */
static inline void ls_fs_set(uint64_t *st, const ls_entity *e, int on) {
  unsigned b = (unsigned)e->fsidx - 1;
  if (on)
    st[b / 64] |= 1ull << (b % 64);
  else
    st[b / 64] &= ~(1ull << (b % 64));
}
static inline int ls_fs_get(const uint64_t *st, const ls_entity *e) {
  unsigned b = (unsigned)e->fsidx - 1;
  return st[b / 64] >> (b % 64) & 1;
}
/* The entity an lvalue writes; *level counts dereferences (> 0: through a pointer). */
ls_entity *ls_target_of(ls_node *n, int *level);
/* How many places under n write e, counted up to `limit`: ++, -- and & (its address handed
 * on) always; with LS_WR_ASSIGN assignments, with LS_WR_DECL an initialized declaration;
 * LS_WR_NO_QUERY skips the rank and size queries (the call that sets a rank variable). */
enum { LS_WR_ASSIGN = 1, LS_WR_DECL = 2, LS_WR_NO_QUERY = 4 };
int ls_writes_of(ls_node *n, const ls_entity *e, unsigned how, int limit);

/* findings */
typedef struct ls_loc { const char *file; unsigned line, col; const char *msg; } ls_loc;
typedef struct ls_finding {
  const char *rule, *file, *function, *message;
  unsigned line, col;
  ls_vec notes;             /* ls_loc* */
  ls_vec sites;             /* ls_loc* (msg = callee) */
  const char *seqkey;       /* normalized call sequence for the fingerprint */
  char fingerprint[17];
  int error, baselined;     /* set by the adoption options (policy.c) */
  int errpath;              /* reached only after a call reported failure (errpath.c): "path": "error" */
  struct ls_fix *fix;       /* a mechanical fix (fixit.c), or NULL */
} ls_finding;
void ls_checks_run(ls_program *p, ls_vec *findings);
/* Thin wrappers (wrappers.c): a function or method whose body only forwards to one API call
 * (a collective, send/recv, group start or end), with error checking, becomes that call for
 * its callers: its entity gets a rules entry of the target's kind with the roles mapped to
 * its parameters; so do the base methods it overrides and the function-pointer fields
 * assigned an API function. Entities the rules name already keep theirs. Before the checks;
 * LOCKSTEP_LINT_STATS lists the wrappers it finds. */
int ls_wrappers_find(ls_program *p); /* how many entities it gave a rule */
/* Can f's body call an API function of rules kind `kind`? (Once ls_checks_run has walked the
 * bodies: the contract checks skip walks that could find nothing.) */
int ls_func_calls_kind(const ls_program *p, const ls_func *f, const char *kind);
/* The bit of calls_kinds that stands for `kind` (0: no rules function has it; all bits
 * before the bodies are walked). */
uint64_t ls_kind_mask(const ls_program *p, const char *kind);
/* Group depth (group.c): bit LS_GZ+d of a block's gin/gout mask means depth d is possible
 * there (relative to the function's entry); ls_group_delta is a call's effect on the depth
 * (+1 group start, -1 group end, a begin/end helper's summarized net effect, else 0). */
#define LS_GZ 8
int ls_group_delta(const ls_node *n);
/* Non-blocking communicator contracts (checks/nonblocking.c), called by ls_check_contracts. */
void ls_check_nonblocking(ls_program *p, ls_func *f, ls_vec *findings);

/* output / suppression / verify (report.c) */
const char *ls_source_line(ls_arena *a, const char *file, unsigned line); /* NULL if none */
int ls_suppressed(ls_arena *a, const ls_finding *f);
void ls_fingerprints(ls_vec *findings);
void ls_emit_text(FILE *out, ls_arena *a, ls_vec *findings);
void ls_emit_json(FILE *out, ls_program *p, ls_vec *findings);
/* One finding as --format=json writes it (also the baseline's entries); caller owns it. */
struct cJSON *ls_finding_json(const ls_finding *f);
/* Checks findings against the annotations of `files`; prints mismatches; 0 if all match. */
int ls_verify(ls_arena *a, char **files, int nfiles, ls_vec *findings);

#endif
