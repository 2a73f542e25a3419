/* compare.h — cross-rank comparison of loaded traces: per communicator, align
 * the ranks' call sequences and name divergences with the shared class names
 * (op-mismatch ... timeout). Used by `compare`, by `trace export` (to mark the
 * first divergence) and by `confirm` (to decide what a run confirmed).
 * Non-goal: online detection (that is the recorder's side channel). */
#ifndef LOCKSTEP_COMPARE_H
#define LOCKSTEP_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "apidb.h"
#include "trace_read.h"

/* A record and the trace it came from. */
struct ls_ref {
  const struct ls_trace *t;
  const struct ls_trace_record *r;
};

struct ls_rsum; /* compare.c's summary of one rank's calls on one communicator */

struct ls_comm_rank {
  struct ls_ref *v; /* a window of this rank's sequenced calls: seqs [base, base + len) */
  size_t base, len, cap;
  uint64_t wfrom;   /* the owner's record index where the window's scan began */
  size_t n;         /* calls in the usable prefix (stops at a gap in seq) */
  const struct ls_trace *owner; /* the trace that holds this rank */
  int present;
  int gap;          /* seq numbering had a hole after call n-1 */
  int full;         /* v holds every call (its seqs were not in record order: sorted) */
  int owner_clean;  /* the owner's process ended cleanly */
  struct ls_rsum *sum; /* where its calls are in owner's records (during ls_compare_run) */
};

struct ls_comm {
  uint64_t id;
  unsigned incarnation; /* >0 when the same identity was reused after seq restarted */
  int size;                   /* the communicator size its records report */
  int nslots;                 /* entries in ranks[]: highest rank seen + 1 (not size: untrusted) */
  struct ls_comm_rank *ranks;
  size_t calls;               /* most calls issued by one rank */
  uint64_t start;             /* the aligner's first position: every rank agrees before it */
  int lost;                   /* a ring trace overwrote some rank's calls at start: reported as
                               * overwritten, not aligned */
};

#define LS_DIV_MAX_SITES 2

struct ls_divergence {
  const char *cls; /* "op-mismatch", ..., "timeout" */
  int has_comm;
  uint64_t comm;
  unsigned incarnation;
  int has_seq;
  uint64_t seq;
  int nranks;
  int ranks[2];
  struct ls_ref site[LS_DIV_MAX_SITES]; /* per ranks[i]; .r NULL when that rank issued nothing */
  int last[LS_DIV_MAX_SITES];           /* site[i] is rank i's last call, not the diverging one (skip) */
  char detail[768];
  int tier;      /* 0 causes (mismatch, skip, extra-call, api/async error), 1 symptoms (timeout, incomplete) */
  int percall;   /* a fact about single calls (api-error ... timeout), merged across ranks */
  int nall;      /* percall: how many ranks showed it (ranks[] lists the first two) */
  int listed[16]; /* percall: the first 16 of those ranks, each once */
  int nlisted;
  int implied_seq; /* the call has no seq of its own: seq is the next call's on that communicator */
  unsigned long more; /* percall: later calls of ranks[0] with the same symptom */
  uint64_t when; /* CLOCK_REALTIME ns of the earliest record involved: orders the list */
};

struct ls_compare {
  struct ls_comm *comms;
  size_t ncomms;
  struct ls_divergence *div; /* ordered: the first divergence first */
  size_t ndiv;
  char **notes; /* things the reader should know */
  size_t nnotes;
  /* What compare could not see: a rank without a trace, a hole in a rank's
   * sequence, dropped or unwritten records, a run without any communicator. Each
   * names the file (or directory) and what is missing. With no divergence, a
   * non-empty list makes the verdict `incomplete` (LS_EXIT_INCOMPLETE), never
   * `consistent`. */
  char **missing;
  size_t nmissing;
};

/* Exit codes of compare and confirm. */
#define LS_EXIT_DIVERGENT 1
#define LS_EXIT_BAD_INPUT 2
#define LS_EXIT_INCOMPLETE 3
/* "divergent", "incomplete" or "consistent". */
const char *ls_compare_status(const struct ls_compare *c);

/* Compares the traces of set. Returns 0, or -1 (message printed, exit 2) when
 * the input is inconsistent in a way that makes comparison meaningless. */
int ls_compare_run(const struct ls_trace_set *set, const struct ls_apidb *db, struct ls_compare *out);
void ls_compare_free(struct ls_compare *c);

/* The rank a record speaks for: its communicator rank, else the launcher rank,
 * else the trace's position in the set. */
int ls_ref_rank(const struct ls_trace_set *set, struct ls_ref ref);

/* "ncclAllReduce(count=4, dtype=ncclFloat32, redop=ncclSum)" into buf. */
void ls_format_call(const struct ls_apidb *db, struct ls_ref ref, char *buf, size_t len);
/* Name of a return code / dtype / redop value, or its number, into buf. */
const char *ls_format_enum(const struct ls_apidb *db, const struct ls_trace *t, const struct ls_trace_record *r,
                           const char *which, int64_t value, char *buf, size_t len);
/* snprintf that may truncate on purpose (long paths, long calls): a function
 * so the compiler does not flag each bounded message as a possible truncation. */
void ls_bufprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "0x1a2b" or "0x1a2b/1" for a reused identity. */
void ls_format_comm(uint64_t id, unsigned incarnation, char *buf, size_t len);

#endif
