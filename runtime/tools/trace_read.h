/* trace_read.h — loading and validating lockstep trace files (trace_format.h).
 * A trace is untrusted input: every size, offset, index and string is checked
 * before use, and damage is reported as "FILE: offset N: what is wrong" instead
 * of crashing. Non-goal: reading a trace while its writer is still appending
 * (a reader sees a consistent prefix at best). */
#ifndef LOCKSTEP_TRACE_READ_H
#define LOCKSTEP_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"
#include "trace_index.h"

/* One loaded trace. `data` owns the file's bytes; `hdr`, `apis`, `modules`
 * and `records` point into it. Free with ls_trace_free. */
struct ls_trace {
  char *path;
  unsigned char *data; /* the header and tables (and the records, unless rec_base is set) */
  size_t data_mapped;  /* data is a mapping of this many bytes (0: a malloc'ed copy) */
  void *rec_map;       /* the records' own read-only mapping, rec_mapped bytes, or NULL */
  size_t rec_mapped;
  const unsigned char *rec_base; /* where the records start in rec_map */
  size_t size;         /* the file's size (bounds and truncation checks) */
  const struct ls_trace_header *hdr;
  const struct ls_trace_api *apis; /* hdr->napis entries */
  const struct ls_trace_module *modules; /* nmodules valid entries */
  uint32_t nmodules;
  const struct ls_trace_record *records; /* nrecords valid slots (today's layout) */
  struct ls_trace_record *converted;     /* owns records when the file's version is older */
  uint64_t nrecords;  /* min(hdr->nrecords, hdr->capacity) */
  /* A ring trace (version 3): records[i] is ordinal first + i; the ordinals below first
   * were overwritten (0 when none was, and for every other trace). */
  uint64_t first;
  int partial;        /* records were dropped (flag set, or more claimed than stored) */
  uint64_t dropped;   /* hdr->nrecords - capacity when positive */
  uint64_t unwritten; /* claimed slots (below nrecords) still LS_REC_FREE: never written */
  uint64_t declared_size; /* records_offset + capacity * record size */
  /* The digest index beside the file (PATH.idx, trace_index.h), loaded only by
   * ls_trace_set_load_indexed and only when sound: then records [0, checked_from) were
   * NOT validated (ls_trace_check_records does it for what a reader touches). Its
   * positions (covered, a stream's or block's first and last) are ordinals: on a ring
   * that came round, ordinal o is records[o - first], and those below first are gone. */
  int has_index;
  uint32_t idx_block;
  struct ls_index_snap idx_snap;
  struct ls_index_stream *idx_streams; /* idx_snap.nstreams */
  struct ls_index_block *idx_blocks;   /* idx_snap.nentries */
  uint64_t checked_from;               /* records [checked_from, nrecords) were validated (an
                                        * index, not an ordinal: covered - first with an index) */
  char idx_why[200];                   /* an index file there but not used: why ("" if none) */
};

/* Reads and validates PATH. Returns 0 and fills *t, or returns -1 with a
 * message "offset N: problem" (without the file name) in err. */
int ls_trace_load(const char *path, struct ls_trace *t, char *err, size_t errlen);
/* Validates records [from, to) as ls_trace_load does (to <= nrecords), counting the
 * unwritten ones; returns 0, or -1 with "offset N: problem" in err. */
int ls_trace_check_records(struct ls_trace *t, uint64_t from, uint64_t to, char *err, size_t errlen);
void ls_trace_free(struct ls_trace *t);

/* Gives back the memory of records [from, to) of a mapped trace: a pass over
 * many ranks' records calls it behind itself, so what stays resident is what
 * is being looked at. The records stay readable (the kernel pages them in
 * again from the file). Every LS_TRACE_RELEASE_EVERY records is its pace. */
#define LS_TRACE_RELEASE_EVERY 8192u
void ls_trace_release(const struct ls_trace *t, uint64_t from, uint64_t to);

/* Worker threads: LOCKSTEP_THREADS, else one per online core (1..64). */
int ls_ncpus(void);
/* Runs fn(arg) on ls_ncpus() threads (the caller's among them) and waits for all;
 * fn takes its work items from arg itself (an atomic counter). */
void ls_parallel(void *(*fn)(void *), void *arg);

/* Progress of a long run on a terminal: "lockstep: PHASE DONE/TOTAL" on stderr, at most
 * five times a second and only when stderr is a terminal (never in a pipe, a file or a
 * test's output; LOCKSTEP_PROGRESS=0 turns it off). Thread-safe. ls_progress_end clears
 * the line before the verdict is printed. */
void ls_progress(const char *phase, size_t done, size_t total);
void ls_progress_end(void);

/* A set of traces: every *.lstrace file of the given directories, or the
 * files named. Sorted by path so output is stable. */
struct ls_trace_set {
  struct ls_trace *traces;
  size_t n;
};

/* Loads each of paths[0..npaths) (a directory contributes its *.lstrace files).
 * On any damaged or missing input prints "lockstep: FILE: ..." to stderr and
 * returns -1 (the caller exits 2); a directory with no traces is also an error. */
int ls_trace_set_load(struct ls_trace_set *set, char *const *paths, size_t npaths);
/* The same, also loading each trace's digest index where there is a sound one (and
 * then validating only the records it does not cover). For compare. */
int ls_trace_set_load_indexed(struct ls_trace_set *set, char *const *paths, size_t npaths);
void ls_trace_set_free(struct ls_trace_set *set);

/* Record helpers. */
const char *ls_trace_api_name(const struct ls_trace *t, const struct ls_trace_record *r);
unsigned ls_trace_api_kind(const struct ls_trace *t, const struct ls_trace_record *r);
const char *ls_kind_name(unsigned kind);
/* Module containing pc (start <= pc < end), or NULL. */
const struct ls_trace_module *ls_trace_module_of(const struct ls_trace *t, uint64_t pc);
/* Monotonic record time converted to CLOCK_REALTIME nanoseconds, so ranks
 * line up (as well as the hosts' clocks agree). */
uint64_t ls_trace_realtime(const struct ls_trace *t, uint64_t mono_ns);
/* Rank label for messages: the launcher rank if known, else -1. */
int ls_trace_rank(const struct ls_trace *t);

#endif
