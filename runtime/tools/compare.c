/* compare.c — align the ranks' sequences per communicator and classify what
 * differs (see compare.h and runtime/tools/README.md for the exact rules).
 * Alignment is positional over each rank's seq-ordered calls; the first
 * structural divergence of a communicator ends its alignment, because after a
 * skip or a mismatch every later position is shifted and would only repeat it.
 * Per-call facts (return codes, async errors, timeouts, calls never completed)
 * are listed for every rank independently. */
#include "compare.h"
#include "fingerprint.h"
#include "trace_index.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(LS_FP_KIND_P2P == LS_KIND_P2P, "fingerprint.h's p2p kind");

/* Appends one formatted line to a list of lines (notes, missing data). */
static void add_line(char ***v, size_t *n, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static void add_line(char ***v, size_t *n, const char *fmt, va_list ap) {
  char buf[1024];
  vsnprintf(buf, sizeof buf, fmt, ap);
  *v = ls_xrealloc(*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = strdup(buf);
}

static void note(struct ls_compare *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct ls_compare *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add_line(&c->notes, &c->nnotes, fmt, ap);
  va_end(ap);
}

static void missing(struct ls_compare *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void missing(struct ls_compare *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add_line(&c->missing, &c->nmissing, fmt, ap);
  va_end(ap);
}

const char *ls_compare_status(const struct ls_compare *c) {
  return c->ndiv ? "divergent" : c->nmissing ? "incomplete" : "consistent";
}

void ls_bufprintf(char *buf, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, len, fmt, ap);
  va_end(ap);
}

void ls_format_comm(uint64_t id, unsigned incarnation, char *buf, size_t len) {
  if (incarnation)
    snprintf(buf, len, "0x%llx/%u", (unsigned long long)id, incarnation);
  else
    snprintf(buf, len, "0x%llx", (unsigned long long)id);
}

const char *ls_format_enum(const struct ls_apidb *db, const struct ls_trace *t, const struct ls_trace_record *r,
                           const char *which, int64_t value, char *buf, size_t len) {
  const char *name = ls_apidb_enum_name(db, t->apis[r->api].family, which, value);
  if (name)
    snprintf(buf, len, "%s", name);
  else
    snprintf(buf, len, "%lld", (long long)value);
  return buf;
}

void ls_format_call(const struct ls_apidb *db, struct ls_ref ref, char *buf, size_t len) {
  const struct ls_trace_record *r = ref.r;
  unsigned kind = ls_trace_api_kind(ref.t, r);
  int n = snprintf(buf, len, "%s(", ls_trace_api_name(ref.t, r));
  if (kind == LS_KIND_COLLECTIVE || kind == LS_KIND_P2P) {
    char v[64];
    n += snprintf(buf + n, len > (size_t)n ? len - n : 0, "count=%llu", (unsigned long long)r->count);
    if (r->dtype != LS_NO_VALUE)
      n += snprintf(buf + n, len > (size_t)n ? len - n : 0, ", dtype=%s",
                    ls_format_enum(db, ref.t, r, "dtype", r->dtype, v, sizeof v));
    if (r->redop != LS_NO_VALUE)
      n += snprintf(buf + n, len > (size_t)n ? len - n : 0, ", redop=%s",
                    ls_format_enum(db, ref.t, r, "redop", r->redop, v, sizeof v));
    if (r->root_or_peer != LS_NO_VALUE)
      n += snprintf(buf + n, len > (size_t)n ? len - n : 0, ", %s=%d", kind == LS_KIND_P2P ? "peer" : "root",
                    r->root_or_peer);
  }
  snprintf(buf + n, len > (size_t)n ? len - n : 0, ")");
}

int ls_ref_rank(const struct ls_trace_set *set, struct ls_ref ref) {
  if (ref.r && ref.r->comm_id && ref.r->comm_size > 0)
    return ref.r->comm_rank;
  if (ls_trace_rank(ref.t) >= 0)
    return ls_trace_rank(ref.t);
  return (int)(ref.t - set->traces);
}

static uint64_t when_of(struct ls_ref ref) { return ref.r ? ls_trace_realtime(ref.t, ref.r->t_enter_ns) : UINT64_MAX; }

static struct ls_divergence *add_div(struct ls_compare *c, const char *cls, int tier) {
  c->div = ls_xrealloc(c->div, (c->ndiv + 1) * sizeof *c->div);
  struct ls_divergence *d = &c->div[c->ndiv++];
  memset(d, 0, sizeof *d);
  d->cls = cls;
  d->tier = tier;
  d->when = UINT64_MAX;
  return d;
}

static void div_rank(struct ls_divergence *d, int rank, struct ls_ref ref) {
  if (d->nranks >= 2)
    return;
  d->ranks[d->nranks] = rank;
  d->site[d->nranks] = ref;
  d->nranks++;
  if (when_of(ref) < d->when)
    d->when = when_of(ref);
}

static void div_comm(struct ls_divergence *d, const struct ls_comm *cm, int has_seq, uint64_t seq) {
  d->has_comm = 1;
  d->comm = cm->id;
  d->incarnation = cm->incarnation;
  d->has_seq = has_seq;
  d->seq = seq;
}

/* ---- building communicators ---------------------------------------------- */

static struct ls_comm *comm_get(struct ls_compare *c, uint64_t id, unsigned inc, int size, int rank) {
  struct ls_comm *cm = NULL;
  for (size_t i = 0; i < c->ncomms && !cm; i++)
    if (c->comms[i].id == id && c->comms[i].incarnation == inc)
      cm = &c->comms[i];
  if (!cm) {
    c->comms = ls_xrealloc(c->comms, (c->ncomms + 1) * sizeof *c->comms);
    cm = &c->comms[c->ncomms++];
    memset(cm, 0, sizeof *cm);
    cm->id = id;
    cm->incarnation = inc;
  }
  if (size > cm->size)
    cm->size = size;
  if (rank >= cm->nslots) {
    int n = rank + 1 > 2 * cm->nslots ? rank + 1 : 2 * cm->nslots;
    cm->ranks = ls_xrealloc(cm->ranks, (size_t)n * sizeof *cm->ranks);
    memset(cm->ranks + cm->nslots, 0, (size_t)(n - cm->nslots) * sizeof *cm->ranks);
    cm->nslots = n;
  }
  return cm;
}

static int cmp_ref_seq(const void *a, const void *b) {
  uint64_t x = ((const struct ls_ref *)a)->r->seq, y = ((const struct ls_ref *)b)->r->seq;
  return x < y ? -1 : x > y;
}

static int cmp_comm(const void *a, const void *b) {
  const struct ls_comm *x = a, *y = b;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return (int)x->incarnation - (int)y->incarnation;
}

/* ---- one pass per trace, in parallel ------------------------------------- */

/* Calls per block: the unit of the digests, of the windows the aligner reads through
 * and of the block starts pass B remembers; the indexes' own unless
 * LOCKSTEP_COMPARE_BLOCK says otherwise (tests: a block of 2 makes every alignment
 * refill its windows). Set once per run, before any worker starts. */
static size_t g_block = LS_INDEX_BLOCK;
static uint64_t g_window_reads; /* records the aligner's refills scanned (single-threaded) */

/* A block of a rank's calls as the digests see it (trace_index.h): equal on two ranks
 * means the same calls, to within a collision of both digests at once. */
struct bsig {
  uint64_t chain, local;
  uint32_t n, flags; /* calls in it; LS_IDX_B_* */
};

/* What the passes over a trace's records keep of one (communicator, rank,
 * incarnation): how many calls, whether their seqs came in record order
 * (0, 1, 2, ...: then a window of them can be found again by scanning from a
 * block start), and where each block of g_block calls starts. */
struct ls_rsum {
  uint64_t comm;
  int rank, size;
  unsigned inc;
  uint64_t n;
  int ordered;
  uint64_t first, last;  /* ordinals (trace_read.h) of the first and last call */
  uint64_t *blk;         /* blk[b]: ordinal of seq b * g_block */
  size_t nblk;
  struct bsig *sig;      /* sig[b]: block b's digests (nblk of them, the last one possibly not full) */
  size_t nfull;          /* blocks the indexer completed (later ones: the open block) */
  struct ls_comm *cm;    /* after the merge: the communicator it belongs to (NULL when the rank is not compared) */
};

struct tinfo {
  const struct ls_trace *t;
  struct ls_rsum *s;
  size_t ns;
  int clean;       /* ended_cleanly */
  unsigned long unobserved;
  int indexed;     /* pass B took the trace's own index for records [0, idx_snap.covered) */
  uint64_t pc_from; /* the per-call pass starts at this record: every one before it is a plain call */
  int pc_skip;     /* ... or not at all: no record of the trace is one it could report */
  int lost_facts;  /* a ring overwrote calls among which its index saw one the per-call pass reports */
  uint64_t read;   /* records pass B read */
  struct ls_index_block *nb; /* the full blocks of the records pass B read, in order */
  size_t nnb, capnb;
  char err[512];   /* pass B found a damaged record (lazy validation): the message */
};

struct cmp_run {
  const struct ls_trace_set *set;
  const struct ls_apidb *db;
  struct tinfo *ti;
  size_t next; /* atomic: the next trace a worker takes */
  size_t done; /* atomic: traces done (progress) */
  int use_index;  /* LOCKSTEP_COMPARE_INDEX is not 0 */
  int plain_rc0;  /* the rules take return code 0 as success, not pending, in every family */
};

static struct tinfo *tinfo_of(const struct cmp_run *run, const struct ls_trace *t) {
  return &run->ti[t - run->set->traces];
}

/* Records build_comms counts: the reader rejects a sequenced record whose rank
 * is not within its size; never index by one here either. */
static int sequenced(const struct ls_trace_record *r) {
  return r->state != LS_REC_FREE && r->seq != LS_NO_SEQ && r->comm_id && r->comm_rank >= 0;
}

static int exit_unsure(const struct ls_trace *t);

static void nb_emit(void *arg, const struct ls_index_block *b) {
  struct tinfo *ti = arg;
  if (ti->nnb == ti->capnb) {
    ti->capnb = ti->capnb ? 2 * ti->capnb : 64;
    ti->nb = ls_xrealloc(ti->nb, ti->capnb * sizeof *ti->nb);
  }
  ti->nb[ti->nnb++] = *b;
}

static int slots_grow(struct ls_indexer *ix) {
  unsigned n = ix->cap ? 2 * ix->cap : 16;
  ix->st = ls_xrealloc(ix->st, n * sizeof *ix->st);
  ix->cap = n;
  return 0;
}

static struct ls_rsum *rsum_new(struct tinfo *ti, const struct ls_index_stream *st) {
  ti->s = ls_xrealloc(ti->s, (ti->ns + 1) * sizeof *ti->s);
  struct ls_rsum *x = &ti->s[ti->ns++];
  memset(x, 0, sizeof *x);
  x->comm = st->comm;
  x->rank = st->rank;
  x->inc = st->inc;
  x->size = st->size;
  x->n = st->n;
  x->first = st->first;
  x->last = st->last;
  x->ordered = !(st->flags & LS_IDX_B_UNORDERED);
  return x;
}

static void rsum_block(struct ls_rsum *x, uint64_t first, struct bsig sig) {
  if (x->nblk % 64 == 0) {
    x->blk = ls_xrealloc(x->blk, (x->nblk + 64) * sizeof *x->blk);
    x->sig = ls_xrealloc(x->sig, (x->nblk + 64) * sizeof *x->sig);
  }
  x->blk[x->nblk] = first;
  x->sig[x->nblk++] = sig;
}

/* The summaries from the indexer's streams (in the order their first calls came) and the
 * full blocks (the index's, then those of the records read); 0, or -1 when the blocks do
 * not line up with the streams (a damaged index). */
static int sums_from(struct tinfo *ti, const struct ls_indexer *ix, const struct ls_index_block *ib, size_t nib) {
  for (unsigned k = 0; k < ix->ns; k++)
    rsum_new(ti, &ix->st[k].s);
  size_t hint = 0;
  for (size_t pass = 0; pass < 2; pass++) {
    const struct ls_index_block *v = pass ? ti->nb : ib;
    size_t nv = pass ? ti->nnb : nib;
    for (size_t i = 0; i < nv; i++) {
      const struct ls_index_block *e = &v[i];
      struct ls_rsum *x = hint < ti->ns ? &ti->s[hint] : NULL;
      if (!x || x->comm != e->comm || x->rank != e->rank || x->inc != e->inc) {
        x = NULL;
        for (size_t k = 0; k < ti->ns && !x; k++)
          if (ti->s[k].comm == e->comm && ti->s[k].rank == e->rank && ti->s[k].inc == e->inc)
            x = &ti->s[hint = k];
      }
      if (!x || e->block != x->nblk || (e->block + 1) * g_block > x->n)
        return -1;
      rsum_block(x, e->first, (struct bsig){e->chain, e->local, (uint32_t)g_block, e->flags});
      x->nfull = x->nblk;
    }
  }
  for (unsigned k = 0; k < ix->ns; k++) {
    const struct ls_index_stream *st = &ix->st[k].s;
    struct ls_rsum *x = &ti->s[k];
    if (!x->ordered)
      continue;
    if (x->nblk != x->n / g_block)
      return -1;
    if (x->n % g_block)
      rsum_block(x, st->open_first, (struct bsig){st->chain, st->local, (uint32_t)(x->n % g_block), st->flags & LS_IDX_B_P2P});
  }
  return 0;
}

/* Pass B: per trace, the rsums with their blocks' digests (from the trace's index where it
 * has a sound one, computed over the records it does not cover), whether it ended
 * cleanly, and the calls whose completion it never saw. */
static void *pass_sums(void *arg) {
  struct cmp_run *run = arg;
  for (;;) {
    size_t i = __atomic_fetch_add(&run->next, 1, __ATOMIC_RELAXED);
    if (i >= run->set->n)
      return NULL;
    struct ls_trace *t = (struct ls_trace *)&run->set->traces[i]; /* lazy validation updates it */
    struct tinfo *ti = &run->ti[i];
    ti->t = t;
    uint32_t na = t->hdr->napis ? t->hdr->napis : 1;
    uint64_t *hash = ls_xrealloc(NULL, na * sizeof *hash);
    uint16_t *kind = ls_xrealloc(NULL, na * sizeof *kind);
    for (uint32_t a = 0; a < t->hdr->napis; a++) {
      hash[a] = ls_idx_name_hash(t->apis[a].name);
      kind[a] = t->apis[a].kind;
    }
    /* The index stands for its records only where they hold nothing the per-call pass
     * reports and every seq came in order; else the records are read as without one. On
     * a ring that came round the records are not all there to read: its index stands for
     * the digests anyway, and the per-call pass reads every record kept. */
    int use = run->use_index && t->has_index && t->idx_block == g_block &&
              !(t->idx_snap.features & LS_IDX_F_UNORDERED) &&
              (t->first || !(t->idx_snap.features & LS_IDX_F_REMARKABLE));
    struct ls_indexer ix;
  again:
    ls_idx_init(&ix, (uint32_t)g_block, NULL, 0, hash, kind, t->hdr->napis, nb_emit, ti);
    ix.grow = slots_grow;
    if (use && ls_idx_resume(&ix, &t->idx_snap, t->idx_streams) != 0)
      use = 0;
    /* Positions here are ordinals, as the index's: a ring that came round holds ordinal o
     * in records[o - base], and those below base were overwritten. */
    const uint64_t base = t->first, end = t->first + t->nrecords;
    uint64_t from = use ? t->idx_snap.covered : base;
    if (from - base < t->checked_from) { /* the index is not taken: validate what it covered */
      if (ls_trace_check_records(t, from - base, t->checked_from, ti->err, sizeof ti->err)) {
        free(ix.st);
        free(hash);
        free(kind);
        continue; /* build_comms reports it */
      }
      t->checked_from = from - base;
    }
    /* A process ended cleanly when it ran its exit handlers without the watchdog
     * having fired and without a call left hanging; an exit forced by the
     * watchdog's policy also runs the handlers, so the flag alone is not enough. */
    int entered = 0, unsure = exit_unsure(t);
    ti->unobserved = 0;
    for (uint64_t k = from; k < end; k++) {
      const struct ls_trace_record *r = &t->records[k - base];
      if ((k - base) % LS_TRACE_RELEASE_EVERY == 0 && k > from)
        ls_trace_release(t, k - base - LS_TRACE_RELEASE_EVERY, k - base);
      entered |= r->state == LS_REC_ENTERED;
      ti->unobserved += unsure && r->state == LS_REC_RETURNED && (r->flags & LS_REC_EVENT_RECORDED) &&
                        !(r->flags & (LS_REC_COMPLETED | LS_REC_TIMED_OUT));
      ls_idx_feed(&ix, k, r); /* validated records: it cannot stop (its slots grow) */
    }
    ti->read = end - from;
    ls_trace_release(t, from - base, t->nrecords);
    ti->clean = (t->hdr->flags & LS_TRACE_F_CLEAN_EXIT) && !(t->hdr->flags & LS_TRACE_F_WATCHDOG) && !entered;
    if (sums_from(ti, &ix, use ? t->idx_blocks : NULL, use ? (size_t)t->idx_snap.nentries : 0) != 0 && use) {
      /* blocks that do not add up: read the trace as if it had no index */
      for (size_t k = 0; k < ti->ns; k++) {
        free(ti->s[k].blk);
        free(ti->s[k].sig);
      }
      free(ti->s);
      ti->s = NULL;
      ti->ns = ti->nnb = 0;
      free(ix.st);
      use = 0;
      goto again;
    }
    ti->indexed = use;
    /* Only a remarkable record (ls_idx_remarkable) can give a per-call fact, and plain calls
     * leave the contract state as it was: the per-call pass reads from the records pass B
     * read where the index covers the rest, and not at all where none is remarkable. */
    ti->pc_from = use && (t->idx_snap.features & LS_IDX_F_REMARKABLE) ? 0 : from - base;
    ti->lost_facts = use && t->first && (t->idx_snap.features & LS_IDX_F_REMARKABLE);
    ti->pc_skip = run->plain_rc0 && !(ix.features & LS_IDX_F_REMARKABLE) && !(t->hdr->flags & LS_TRACE_F_WATCHDOG);
    /* a stream out of order is collected whole (collect_full): its records must be sound */
    for (size_t k = 0; k < ti->ns && t->checked_from; k++)
      if (!ti->s[k].ordered) {
        if (ls_trace_check_records(t, 0, t->checked_from, ti->err, sizeof ti->err) == 0)
          t->checked_from = 0;
        break;
      }
    free(ix.st);
    free(ti->nb);
    ti->nb = NULL;
    ti->nnb = ti->capnb = 0;
    free(hash);
    free(kind);
    ls_progress("compare: summaries of traces", __atomic_add_fetch(&run->done, 1, __ATOMIC_RELAXED), run->set->n);
  }
  return NULL;
}

/* A rank's calls whose seqs did not come in record order: all of them, sorted,
 * up to the first hole (the window then is the whole sequence). */
static void collect_full(struct ls_compare *c, struct tinfo *ti, struct ls_rsum *x, struct ls_comm_rank *cr,
                         const struct ls_comm *cm) {
  /* [first, last] holds no other incarnation's calls of this (communicator, rank):
   * a new one starts with seq 0, and every later call belongs to it */
  size_t cap = 64;
  cr->v = ls_xrealloc(NULL, cap * sizeof *cr->v);
  cr->len = 0;
  /* ordinals; those a ring overwrote are not there (the hole below says so) */
  for (uint64_t k = x->first > ti->t->first ? x->first : ti->t->first; k <= x->last; k++) {
    const struct ls_trace_record *r = &ti->t->records[k - ti->t->first];
    if (!sequenced(r) || r->comm_id != x->comm || r->comm_rank != x->rank)
      continue;
    if (cr->len == cap) {
      cap *= 2;
      cr->v = ls_xrealloc(cr->v, cap * sizeof *cr->v);
    }
    cr->v[cr->len++] = (struct ls_ref){ti->t, r};
  }
  cr->cap = cap;
  qsort(cr->v, cr->len, sizeof *cr->v, cmp_ref_seq);
  size_t k = 0;
  while (k < cr->len && cr->v[k].r->seq == k)
    k++;
  cr->n = cr->len;
  if (k < cr->len) {
    char id[40];
    ls_format_comm(cm->id, cm->incarnation, id, sizeof id);
    missing(c, "%s: rank %d's calls on communicator %s jump from seq %lld to seq %llu; %zu call%s after the "
               "hole %s not compared", cr->owner->path, x->rank, id, (long long)k - 1,
            (unsigned long long)cr->v[k].r->seq, cr->n - k, cr->n - k == 1 ? "" : "s",
            cr->n - k == 1 ? "was" : "were");
    cr->gap = 1;
    cr->n = k;
  }
  cr->full = 1;
  cr->base = 0;
}

static int build_comms(struct cmp_run *run, struct ls_compare *c) {
  const struct ls_trace_set *set = run->set;
  run->next = 0;
  ls_parallel(pass_sums, run);
  int bad = 0;
  for (size_t ti = 0; ti < set->n; ti++)
    if (run->ti[ti].err[0]) {
      fprintf(stderr, "lockstep: %s: %s\n", set->traces[ti].path, run->ti[ti].err);
      bad = 1;
    }
  if (bad)
    return -1;
  /* merged in trace order, each trace's rsums in the order their first calls came */
  for (size_t ti = 0; ti < set->n; ti++) {
    const struct ls_trace *t = &set->traces[ti];
    for (size_t si = 0; si < run->ti[ti].ns; si++) {
      struct ls_rsum *x = &run->ti[ti].s[si];
      struct ls_comm *cm = comm_get(c, x->comm, x->inc, x->size, x->rank);
      struct ls_comm_rank *cr = &cm->ranks[x->rank];
      // comm_get sized and zeroed ranks past comm_rank (the analyzer assumes its size
      // product can wrap to 0; the reader bounds comm_size):
      if (cr->owner && cr->owner != t) { // NOLINT(clang-analyzer-core.NullDereference,clang-analyzer-core.uninitialized.Branch)
        char id[40];
        ls_format_comm(cm->id, cm->incarnation, id, sizeof id);
        fprintf(stderr, "lockstep: %s: rank %d of communicator %s is also recorded by %s (traces of two runs in one "
                        "directory? give each run its own --trace-dir)\n", t->path, x->rank, id, cr->owner->path);
        bad = 1;
        break;
      }
      cr->owner = t;
      cr->present = 1;
      cr->n = x->n;
      cr->sum = x;
      cr->owner_clean = run->ti[ti].clean;
    }
  }
  if (bad)
    return -1;
  if (c->ncomms) /* qsort(NULL, 0) is undefined */
    qsort(c->comms, c->ncomms, sizeof *c->comms, cmp_comm);
  for (size_t i = 0; i < c->ncomms; i++) {
    struct ls_comm *cm = &c->comms[i];
    for (int rk = 0; rk < cm->nslots; rk++) {
      struct ls_comm_rank *cr = &cm->ranks[rk];
      if (!cr->present)
        continue;
      struct ls_rsum *x = cr->sum;
      x->cm = cm;
      if (!x->ordered)
        collect_full(c, tinfo_of(run, cr->owner), x, cr, cm);
      if (cr->n > cm->calls)
        cm->calls = cr->n;
    }
  }
  return 0;
}

/* Gives back a window: its pages (the records stay readable) and its refs. */
static void window_drop(struct ls_comm_rank *cr) {
  if (cr->len && !cr->full)
    ls_trace_release(cr->owner, cr->wfrom, (uint64_t)(cr->v[cr->len - 1].r - cr->owner->records) + 1);
  if (!cr->full) {
    free(cr->v);
    cr->v = NULL;
    cr->len = cr->cap = 0;
  }
}

/* Whether position i of a rank's sequence (i < cr->n) can no longer be read: its block
 * starts before the oldest record a ring trace kept (the window scans from there). */
static int pos_lost(const struct ls_comm_rank *cr, size_t i) {
  return !cr->full && cr->sum->blk[i / g_block] < cr->owner->first;
}

/* The call at position i of a rank's sequence (i < cr->n). The window is a
 * cache of g_block calls from a little before the last position asked for,
 * refilled by scanning the owner's records from the start of i's block, and the
 * pages of the window it replaces are given back: memory is ranks x window,
 * not ranks x calls. */
static struct ls_ref ref_at(const struct ls_comm_rank *ccr, size_t i) {
  struct ls_comm_rank *cr = (struct ls_comm_rank *)ccr; /* the window is a cache: refilling it is not a change */
  if (i >= cr->base && i < cr->base + cr->len)
    return cr->v[i - cr->base];
  const struct ls_rsum *x = cr->sum;
  if (cr->len) /* what the last refill scanned */
    ls_trace_release(cr->owner, cr->wfrom, (uint64_t)(cr->v[cr->len - 1].r - cr->owner->records) + 1);
  /* The aligner looks back a little, but not into the block before i's: the scan starts
   * at a block's first record, and a window reaching back one call would read that block
   * whole (at a thousand ranks, the largest part of compare's memory). */
  size_t back = g_block / 16, b0 = i / g_block * g_block, base = i > b0 + back ? i - back : b0;
  size_t len = cr->n - base < g_block ? cr->n - base : g_block;
  if (!cr->v) {
    cr->cap = g_block;
    cr->v = ls_xrealloc(NULL, cr->cap * sizeof *cr->v);
  }
  const struct ls_trace *t = cr->owner;
  cr->len = 0;
  cr->base = base;
  /* the block's start is an ordinal, and a kept one (callers ask pos_lost first) */
  cr->wfrom = x->blk[base / g_block] - t->first;
  for (uint64_t k = cr->wfrom; k <= x->last - t->first && cr->len < len; k++) {
    const struct ls_trace_record *r = &t->records[k];
    g_window_reads++;
    if (r->comm_id == x->comm && r->comm_rank == x->rank && sequenced(r) && r->seq == base + cr->len) {
      char err[512];
      if (k < t->checked_from && ls_trace_check_records((struct ls_trace *)t, k, k + 1, err, sizeof err)) {
        /* a record the index covered, read now for the first time (the load validated the rest) */
        fprintf(stderr, "lockstep: %s: %s\n", t->path, err);
        exit(LS_EXIT_BAD_INPUT);
      }
      cr->v[cr->len++] = (struct ls_ref){t, r};
    }
  }
  if (i - cr->base >= cr->len) { /* build_comms counted cr->n contiguous seqs in record order */
    fprintf(stderr, "lockstep: internal error: comm %016llx rank %d seq %zu not in its trace\n",
            (unsigned long long)x->comm, (int)x->rank, i);
    abort();
  }
  return cr->v[i - cr->base];
}

/* The seq of rank cr's oldest call on its communicator that a ring trace kept. */
static uint64_t oldest_kept(const struct ls_comm_rank *cr) {
  const struct ls_trace *t = cr->owner;
  const struct ls_rsum *x = cr->sum;
  for (uint64_t k = 0; k < t->nrecords && t->first + k <= x->last; k++) {
    const struct ls_trace_record *r = &t->records[k];
    if (sequenced(r) && r->comm_id == x->comm && r->comm_rank == x->rank && t->first + k >= x->first)
      return r->seq;
  }
  return x->n;
}

/* A communicator whose aligner would start in calls a ring trace overwrote: the digests
 * still say in which block the ranks first part, the records no longer say at which call
 * or how. That is the verdict (class overwritten, the block's seqs, the ranks that differ
 * first), not a hole: the index covered the lost calls, so nothing before the block is
 * unknown; what the ranks issued after it is not compared (it would be shifted). A block
 * holding a send/recv proves no difference (peers differ by rank): then it is a hole. */
static void lost_start(struct ls_compare *c, struct ls_comm *cm, int r0) {
  const struct ls_rsum *ref = cm->ranks[r0].sum;
  size_t b = cm->start / g_block;
  int l0 = -1, other = -1, p2p = 0, nlost = 0;
  uint64_t when = UINT64_MAX;
  for (int rk = r0; rk < cm->nslots; rk++) {
    const struct ls_comm_rank *cr = &cm->ranks[rk];
    if (!cr->present)
      continue;
    const struct ls_rsum *x = cr->sum;
    p2p |= b < x->nblk && (x->sig[b].flags & LS_IDX_B_P2P);
    if (other < 0 && rk != r0 &&
        (b >= x->nblk || b >= ref->nblk || x->sig[b].chain != ref->sig[b].chain ||
         x->sig[b].local != ref->sig[b].local || x->sig[b].n != ref->sig[b].n))
      other = rk;
    if (cm->start >= cr->n || !pos_lost(cr, cm->start))
      continue;
    nlost++;
    if (l0 < 0)
      l0 = rk;
    /* the lost calls came before the oldest kept one: its time orders the verdict */
    const struct ls_trace *t = cr->owner;
    if (t->nrecords && t->records[0].state != LS_REC_FREE && ls_trace_realtime(t, t->records[0].t_enter_ns) < when)
      when = ls_trace_realtime(t, t->records[0].t_enter_ns);
  }
  if (l0 < 0)
    return;
  cm->lost = 1;
  const struct ls_comm_rank *lc = &cm->ranks[l0];
  uint64_t lo = (uint64_t)b * g_block, hi = lo + g_block - 1;
  char id[40], kept[320];
  ls_format_comm(cm->id, cm->incarnation, id, sizeof id);
  ls_bufprintf(kept, sizeof kept, "rank %d's ring trace %s kept only its newest %llu calls (%llu overwritten; its "
               "oldest kept call on this communicator is seq %llu)%s", l0, lc->owner->path,
               (unsigned long long)lc->owner->nrecords, (unsigned long long)lc->owner->first,
               (unsigned long long)oldest_kept(lc), nlost > 1 ? ", and so did other ranks' traces" : "");
  if (p2p || other < 0) {
    missing(c, "communicator %s: seqs %llu-%llu hold send/recv calls, which the digests do not compare, and %s; "
               "they and the later calls were not compared", id, (unsigned long long)lo, (unsigned long long)hi, kept);
    return;
  }
  struct ls_divergence *d = add_div(c, ls_class_name(LS_CLASS_OVERWRITTEN), 0);
  div_comm(d, cm, 1, lo);
  div_rank(d, r0, (struct ls_ref){0});
  div_rank(d, other, (struct ls_ref){0});
  d->when = when;
  ls_bufprintf(d->detail, sizeof d->detail,
               "ranks %d and %d first differ in seqs %llu-%llu (the digest index's block %zu of %zu calls), but %s: "
               "which call differs and how is no longer recorded (a larger LOCKSTEP_TRACE_CAPACITY keeps it)",
               r0, other, (unsigned long long)lo, (unsigned long long)hi, b, g_block, kept);
}

/* Where the aligner starts on each communicator (cm->start), for those whose ranks'
 * calls all came in order: the first block whose digests differ between ranks (or that
 * holds a send/recv, whose peers differ by rank, or that some rank lacks). Before it
 * every rank issued what every other did, which is all the aligner would have found;
 * within it the aligner finds exactly where. A block whose digests collide (equal,
 * though its calls are not) would be skipped only if both its digests collide at once:
 * the chained one also differs from any earlier difference on, and the block's own
 * digest in that block, so one collision alone moves nothing. */
static void find_starts(struct cmp_run *run, struct ls_compare *c) {
  (void)run;
  for (size_t i = 0; i < c->ncomms; i++) {
    struct ls_comm *cm = &c->comms[i];
    int r0 = -1, ordered = 1;
    for (int rk = 0; rk < cm->nslots; rk++)
      if (cm->ranks[rk].present) {
        ordered &= !cm->ranks[rk].full;
        if (r0 < 0)
          r0 = rk;
      }
    if (r0 < 0 || !ordered)
      continue;
    const struct ls_rsum *ref = cm->ranks[r0].sum;
    size_t b = 0;
    for (;; b++) {
      int differ = b >= ref->nblk;
      for (int rk = r0 + 1; rk < cm->nslots && !differ; rk++) {
        const struct ls_rsum *x = cm->ranks[rk].present ? cm->ranks[rk].sum : NULL;
        if (!x)
          continue;
        differ = b >= x->nblk || x->sig[b].chain != ref->sig[b].chain || x->sig[b].local != ref->sig[b].local ||
                 x->sig[b].n != ref->sig[b].n || ((x->sig[b].flags | ref->sig[b].flags) & LS_IDX_B_P2P);
      }
      if (differ)
        break;
    }
    /* every rank ends where the reference does when all blocks agree (then past its end) */
    uint64_t start = (uint64_t)b * g_block;
    cm->start = start < cm->ranks[r0].n ? start : cm->ranks[r0].n;
    for (int rk = r0; rk < cm->nslots; rk++)
      if (cm->ranks[rk].present && cm->ranks[rk].n < cm->start)
        cm->start = cm->ranks[rk].n;
    lost_start(c, cm, r0);
  }
}

/* ---- alignment ------------------------------------------------------------- */

static int is_p2p(struct ls_ref ref) { return ls_trace_api_kind(ref.t, ref.r) == LS_KIND_P2P; }

/* Same protocol: by the rules' `op`; where the rules do not know an api, by
 * the writer's op_class (equal for apis that share an op in its table). */
static int same_op(const struct ls_apidb *db, struct ls_ref a, struct ls_ref b) {
  const char *na = ls_trace_api_name(a.t, a.r), *nb = ls_trace_api_name(b.t, b.r);
  const char *opa = ls_apidb_op(db, na), *opb = ls_apidb_op(db, nb);
  uint16_t ca = a.t->apis[a.r->api].op_class, cb = b.t->apis[b.r->api].op_class;
  if ((opa == na || opb == nb) && ca && cb)
    return ca == cb;
  return !strcmp(opa, opb);
}

static enum ls_class fingerprint_differs(const struct ls_apidb *db, struct ls_ref a, struct ls_ref b) {
  struct ls_fp_fields x = {a.r->count, a.r->dtype, a.r->redop, a.r->root_or_peer, ls_trace_api_kind(a.t, a.r)};
  struct ls_fp_fields y = {b.r->count, b.r->dtype, b.r->redop, b.r->root_or_peer, ls_trace_api_kind(b.t, b.r)};
  return ls_fp_diff(same_op(db, a, b), &x, &y);
}

static void mismatch(struct ls_compare *c, const struct ls_apidb *db, const struct ls_comm *cm, const char *cls,
                     int ra, struct ls_ref a, int rb, struct ls_ref b, const char *why) {
  char ca[256], cb[256];
  ls_format_call(db, a, ca, sizeof ca);
  ls_format_call(db, b, cb, sizeof cb);
  struct ls_divergence *d = add_div(c, cls, 0);
  div_comm(d, cm, 1, a.r->seq < b.r->seq ? a.r->seq : b.r->seq); /* differ only around p2p blocks */
  div_rank(d, ra, a);
  div_rank(d, rb, b);
  if (a.r->seq == b.r->seq)
    ls_bufprintf(d->detail, sizeof d->detail, "at seq %llu rank %d issued %s but rank %d issued %s%s",
             (unsigned long long)a.r->seq, ra, ca, rb, cb, why);
  else
    ls_bufprintf(d->detail, sizeof d->detail, "rank %d issued %s at seq %llu but rank %d issued %s at its seq %llu%s", ra,
             ca, (unsigned long long)a.r->seq, rb, cb, (unsigned long long)b.r->seq, why);
}

/* Whether a rank issued a call whose record is still there to name as its last. */
static int has_last(const struct ls_comm_rank *cr) { return cr->n && !pos_lost(cr, cr->n - 1); }

/* A rank's last call, or none: it issued none, or a ring trace overwrote it. */
static struct ls_ref last_ref(const struct ls_comm_rank *cr) {
  return has_last(cr) ? ref_at(cr, cr->n - 1) : (struct ls_ref){0};
}

/* Why a rank has no further call: its process ended cleanly, or not. */
static void ended_how(const struct ls_comm_rank *cr, const struct ls_apidb *db, char *buf, size_t len) {
  char call[256] = "";
  int have = has_last(cr);
  struct ls_ref last = last_ref(cr);
  if (have)
    ls_format_call(db, last, call, sizeof call);
  const char *how = cr->owner_clean ? "its process exited cleanly"
                                             : "its process did not exit cleanly (killed, hung, or stopped by the "
                                               "watchdog)";
  if (cr->n && !have) /* ordered (not collected whole): its seqs are 0 .. n - 1 */
    ls_bufprintf(buf, len, "%s after seq %llu (its record was overwritten)", how, (unsigned long long)cr->n - 1);
  else if (cr->n)
    // ref_at returns a slot its refill filled, or aborts (clang-analyzer does not follow the scan):
    ls_bufprintf(buf, len, "%s after seq %llu %s", how, (unsigned long long)last.r->seq, call); // NOLINT(clang-analyzer-core.NullDereference)
  else
    snprintf(buf, len, "%s without any call on it", how);
}

/* A block: the run of consecutive p2p calls starting at a rank's cursor. */
struct block {
  size_t from, to;
  unsigned char *used; /* per call in the block: matched */
};

/* Returns 1 when a structural divergence was recorded. */
static int align_p2p(struct ls_compare *c, const struct ls_apidb *db, const struct ls_comm *cm, size_t *cur) {
  int size = cm->nslots, found = 0; /* ranks past nslots have no trace */
  struct block *b = calloc((size_t)size, sizeof *b);
  for (int rk = 0; rk < size; rk++) {
    const struct ls_comm_rank *cr = &cm->ranks[rk];
    if (!cr->present || cur[rk] >= cr->n || !is_p2p(ref_at(cr, cur[rk])))
      continue;
    size_t e = cur[rk];
    while (e < cr->n && is_p2p(ref_at(cr, e)))
      e++;
    /* e > cur[rk]: v[cur[rk]] is p2p (checked above). */
    b[rk] = (struct block){cur[rk], e, calloc(e - cur[rk], 1)}; // NOLINT(clang-analyzer-optin.portability.UnixAPI)
  }
  /* A p2p call whose peer is busy with a collective at this point. */
  for (int rk = 0; rk < size && !found; rk++) {
    for (size_t i = b[rk].from; i < b[rk].to && !found; i++) {
      struct ls_ref x = ref_at(&cm->ranks[rk], i);
      int peer = x.r->root_or_peer;
      if (peer < 0 || peer >= size || !cm->ranks[peer].present || b[peer].used || cur[peer] >= cm->ranks[peer].n)
        continue;
      mismatch(c, db, cm, ls_class_name(LS_CLASS_OP_MISMATCH), rk, x, peer, ref_at(&cm->ranks[peer], cur[peer]),
               "; a point-to-point call must meet its peer's matching call, not a collective");
      found = 1;
    }
  }
  /* Pair rank a's sends to b with b's receives from a, in order. */
  for (int a = 0; a < size && !found; a++) {
    for (size_t i = b[a].from; i < b[a].to && !found; i++) {
      struct ls_ref s = ref_at(&cm->ranks[a], i);
      int peer = s.r->root_or_peer;
      const char *op = ls_apidb_op(db, ls_trace_api_name(s.t, s.r));
      if (b[a].used[i - b[a].from] || peer < 0 || peer >= size || !cm->ranks[peer].present)
        continue;
      if (!b[peer].used) {
        struct ls_divergence *d = add_div(c, ls_class_name(LS_CLASS_SKIP), 0);
        char how[512], call[256];
        ended_how(&cm->ranks[peer], db, how, sizeof how);
        ls_format_call(db, s, call, sizeof call);
        div_comm(d, cm, 1, s.r->seq);
        div_rank(d, peer, (struct ls_ref){0});
        div_rank(d, a, s);
        ls_bufprintf(d->detail, sizeof d->detail, "rank %d issued %s at seq %llu but rank %d issued no matching call; %s",
                 a, call, (unsigned long long)s.r->seq, peer, how);
        found = 1;
        break;
      }
      b[a].used[i - b[a].from] = 1;
      /* The peer's first unused call addressed to a with the complementary op. */
      size_t j;
      for (j = b[peer].from; j < b[peer].to; j++) {
        struct ls_ref y = ref_at(&cm->ranks[peer], j);
        if (!b[peer].used[j - b[peer].from] && y.r->root_or_peer == a &&
            (peer != a || j != i) && strcmp(ls_apidb_op(db, ls_trace_api_name(y.t, y.r)), op))
          break;
      }
      if (j == b[peer].to) {
        struct ls_ref other = ref_at(&cm->ranks[peer], b[peer].from);
        char call[256];
        ls_format_call(db, s, call, sizeof call);
        struct ls_divergence *d = add_div(c, ls_class_name(LS_CLASS_PEER_MISMATCH), 0);
        div_comm(d, cm, 1, s.r->seq);
        div_rank(d, a, s);
        if (peer != a)
          div_rank(d, peer, other);
        ls_bufprintf(d->detail, sizeof d->detail,
                     "rank %d issued %s at seq %llu, but %s no matching point-to-point call addressed to rank %d "
                     "in the same run of point-to-point calls",
                     a, call, (unsigned long long)s.r->seq, peer == a ? "it issued" : "its peer issued", a);
        found = 1;
        break;
      }
      b[peer].used[j - b[peer].from] = 1;
      struct ls_ref y = ref_at(&cm->ranks[peer], j);
      const char *cls = NULL;
      if (y.r->count != s.r->count)
        cls = ls_class_name(LS_CLASS_COUNT_MISMATCH);
      else if (y.r->dtype != s.r->dtype)
        cls = ls_class_name(LS_CLASS_DTYPE_MISMATCH);
      if (cls) {
        mismatch(c, db, cm, cls, a, s, peer, y, "");
        found = 1;
      }
    }
  }
  for (int rk = 0; rk < size; rk++) {
    if (b[rk].used)
      cur[rk] = b[rk].to;
    free(b[rk].used);
  }
  free(b);
  return found;
}

static void align_comm(struct ls_compare *c, const struct ls_apidb *db, const struct ls_comm *cm) {
  int size = cm->nslots;
  if (cm->lost)
    return; /* find_starts reported it: the records there were overwritten */
  size_t *cur = calloc((size_t)size, sizeof *cur);
  for (int rk = 0; rk < size; rk++)
    cur[rk] = cm->ranks[rk].present ? cm->start : 0;
  char id[40];
  ls_format_comm(cm->id, cm->incarnation, id, sizeof id);
  for (;;) {
    int nhave = 0, nlack = 0, h0 = -1, l0 = -1, anyp2p = 0, allp2p = 1, stop = 0;
    for (int rk = 0; rk < size; rk++) {
      const struct ls_comm_rank *cr = &cm->ranks[rk];
      if (!cr->present)
        continue;
      if (cur[rk] < cr->n) {
        nhave++;
        if (h0 < 0)
          h0 = rk;
        anyp2p |= is_p2p(ref_at(cr, cur[rk]));
        allp2p &= is_p2p(ref_at(cr, cur[rk]));
      } else {
        /* A rank whose trace lost records may have issued the call: not a skip. */
        if (cr->gap || cr->owner->partial || cr->owner->unwritten) {
          note(c, "communicator %s: rank %d's trace ends early (%s); later calls are not compared", id, rk,
               cr->gap ? "a hole in its sequence" : cr->owner->partial ? "records were dropped"
                                                  : "claimed records were never written");
          stop = 1;
        }
        nlack++;
        if (l0 < 0)
          l0 = rk;
      }
    }
    if (!nhave || stop)
      break;
    /* Ranks that take no part in a p2p exchange may have finished already:
     * align_p2p reports a skip only when a peer that ended was addressed. */
    if (nlack && !allp2p) {
      /* Some ranks issued the call at this position, others never did. The
       * minority is the odd one out; on a tie the ranks lacking it skipped it. */
      struct ls_ref hr = ref_at(&cm->ranks[h0], cur[h0]);
      const struct ls_comm_rank *lc = &cm->ranks[l0];
      struct ls_ref last = last_ref(lc);
      char how[512], call[256];
      ended_how(lc, db, how, sizeof how);
      ls_format_call(db, hr, call, sizeof call);
      /* On a tie (two ranks, one call apart) the trace cannot count heads, and a
       * rank stuck in an extra call looks exactly like its peer skipping it:
       * it is reported as a skip, as the fixtures' RUNTIME lines expect. */
      if (nhave < nlack) {
        struct ls_divergence *d = add_div(c, ls_class_name(LS_CLASS_EXTRA_CALL), 0);
        div_comm(d, cm, 1, hr.r->seq);
        div_rank(d, h0, hr);
        div_rank(d, l0, last);
        d->last[1] = 1;
        ls_bufprintf(d->detail, sizeof d->detail,
                 "rank %d issued %s at seq %llu, which %d other rank%s never issued (rank %d: %s)", h0, call,
                 (unsigned long long)hr.r->seq, nlack, nlack == 1 ? "" : "s", l0, how);
      } else {
        struct ls_divergence *d = add_div(c, ls_class_name(LS_CLASS_SKIP), 0);
        div_comm(d, cm, 1, hr.r->seq);
        div_rank(d, l0, last);
        d->last[0] = 1;
        div_rank(d, h0, hr);
        d->when = when_of(hr);
        ls_bufprintf(d->detail, sizeof d->detail, "rank %d never issued seq %llu, which rank %d issued as %s; %s%s", l0,
                     (unsigned long long)hr.r->seq, h0, call, how,
                     nhave == nlack ? " (with as many ranks on each side, a skip here and an extra call there look "
                                      "the same)"
                                    : "");
      }
      break;
    }
    if (anyp2p) {
      if (align_p2p(c, db, cm, cur))
        break;
      continue;
    }
    int diverged = 0;
    struct ls_ref ref = ref_at(&cm->ranks[h0], cur[h0]);
    for (int rk = h0 + 1; rk < size && !diverged; rk++) {
      if (!cm->ranks[rk].present)
        continue;
      enum ls_class cls = fingerprint_differs(db, ref, ref_at(&cm->ranks[rk], cur[rk]));
      if (cls != LS_CLASS_NONE) {
        mismatch(c, db, cm, ls_class_name(cls), h0, ref, rk, ref_at(&cm->ranks[rk], cur[rk]), "");
        diverged = 1;
      }
    }
    if (diverged)
      break;
    for (int rk = 0; rk < size; rk++)
      if (cm->ranks[rk].present)
        cur[rk]++;
  }
  free(cur);
}

/* ---- per-call facts -------------------------------------------------------- */

struct once {
  const struct ls_trace *t;
  uint64_t comm;
  const char *cls;
  size_t div;
  unsigned long more;
};

static int first_of(struct once **o, size_t *n, const struct ls_trace *t, uint64_t comm, const char *cls) {
  for (size_t i = 0; i < *n; i++)
    if ((*o)[i].t == t && (*o)[i].comm == comm && !strcmp((*o)[i].cls, cls)) {
      (*o)[i].more++;
      return 0;
    }
  return 1;
}

/* A process that exited cleanly may have finished its device work after the
 * recorder last looked (the exit-time poll can run after CUDA's teardown), so
 * "not observed complete" is evidence only for a process that did not exit,
 * or whose writer says its exit-time poll saw the device. */
static int exit_unsure(const struct ls_trace *t) {
#ifdef LS_TRACE_F_EXIT_POLLED
  if (t->hdr->flags & LS_TRACE_F_EXIT_POLLED)
    return 0;
#endif
  return (t->hdr->flags & LS_TRACE_F_CLEAN_EXIT) != 0;
}

static void unobserved_notes(struct ls_compare *c, const struct cmp_run *run) {
  for (size_t ti = 0; ti < run->set->n; ti++) {
    const struct ls_trace *t = &run->set->traces[ti];
    unsigned long n = run->ti[ti].unobserved; /* counted by pass B */
    if (n)
      note(c, "%s: %lu call%s not observed completing on the device before the process exited cleanly; not "
              "reported as incomplete (the exit-time check cannot always see the device)", t->path, n,
           n == 1 ? " was" : "s were");
  }
}

/* The seq a call without one stands for: the number the next call on its
 * communicator (else on its thread) gets, or one past the previous one; 0 on a
 * communicator that never got a sequenced call. */
static int seq_holder(const struct ls_trace_record *r, const struct ls_trace_record *x) {
  if (x->state == LS_REC_FREE || x->seq == LS_NO_SEQ || !x->comm_id)
    return 0;
  return r->comm_id ? x->comm_id == r->comm_id : x->tid == r->tid;
}

static int implied_seq(const struct ls_trace *t, uint64_t i, uint64_t *comm, uint64_t *seq) {
  const struct ls_trace_record *r = &t->records[i];
  for (uint64_t j = i + 1; j < t->nrecords; j++)
    if (seq_holder(r, &t->records[j])) {
      *comm = t->records[j].comm_id;
      *seq = t->records[j].seq;
      return 1;
    }
  for (uint64_t j = i; j-- > 0;)
    if (seq_holder(r, &t->records[j])) {
      *comm = t->records[j].comm_id;
      *seq = t->records[j].seq + 1;
      return 1;
    }
  if (r->comm_id) { /* a communicator that never got a sequenced call: the next would be 0 */
    *comm = r->comm_id;
    *seq = 0;
    return 1;
  }
  return 0;
}

/* The number the next sequenced call on `comm` after record i gets: one past the last
 * before i, else 0. */
static uint64_t next_seq_on(const struct ls_trace *t, uint64_t i, uint64_t comm) {
  for (uint64_t j = i; j-- > 0;) {
    const struct ls_trace_record *x = &t->records[j];
    if (x->state != LS_REC_FREE && x->seq != LS_NO_SEQ && x->comm_id == comm)
      return x->seq + 1;
  }
  return 0;
}

/* ---- communicator contracts: not-ready and after-abort --------------------- */

/* Per trace and communicator identity, walked in record order (claim order, which
 * is issue order on each thread): whether the communicator is waiting for a
 * non-blocking init/finalize to be seen complete, and whether it was aborted or
 * reported a terminal asynchronous state. */
enum { CT_READY = 0, CT_INIT = 1, CT_FINALIZE = 2 };

struct ctstate {
  uint64_t comm;
  int pending;                           /* CT_* */
  struct ls_ref pend;                    /* the call that returned "in progress" */
  int grouped;                           /* ... inside a group whose outer end did */
  const struct ls_trace_record *aborted; /* its ncclCommAbort */
  const struct ls_trace_record *errored; /* the query that reported an error state */
  int nb;                                /* created non-blocking */
};

/* NCCL 2.28.3 (gpu_tests/src/split_probe.c): ncclCommSplit of a non-blocking parent
 * returns ncclSuccess with the child still NULL (the record has no communicator) and
 * stores the child only when the parent's state leaves ncclInProgress. Until a query
 * on the parent says so, a call with a NULL communicator is one on that child. */
struct ctorphan {
  uint64_t parent;
  struct ls_ref ref; /* the split */
};

struct ctcand { /* a non-blocking create inside a group: pending if the outer end says so */
  uint32_t tid;
  uint64_t comm;
  struct ls_ref ref;
};

/* ls_apidb_rc_ok / ls_apidb_rc_is for the return codes calls carry, looked up
 * once per run instead of through the rules' JSON per call. */
enum { RC_OK, RC_SUCCESS, RC_PENDING, RC_NKIND };
#define RC_LO (-64)
#define RC_HI 192
#define RC_FAMILIES 4
struct rcache {
  unsigned char v[RC_FAMILIES][RC_HI - RC_LO][RC_NKIND];
};

static void rc_fill(struct rcache *c, const struct ls_apidb *db) {
  for (unsigned f = 0; f < RC_FAMILIES; f++)
    for (int64_t rc = RC_LO; rc < RC_HI; rc++) {
      c->v[f][rc - RC_LO][RC_OK] = (unsigned char)ls_apidb_rc_ok(db, f, rc);
      c->v[f][rc - RC_LO][RC_SUCCESS] = (unsigned char)ls_apidb_rc_is(db, f, "success", rc);
      c->v[f][rc - RC_LO][RC_PENDING] = (unsigned char)ls_apidb_rc_is(db, f, "pending", rc);
    }
}

static int rc_is(const struct rcache *c, const struct ls_apidb *db, unsigned family, int which, int64_t rc) {
  if (c && family < RC_FAMILIES && rc >= RC_LO && rc < RC_HI)
    return c->v[family][rc - RC_LO][which];
  if (which == RC_OK)
    return ls_apidb_rc_ok(db, family, rc);
  return ls_apidb_rc_is(db, family, which == RC_SUCCESS ? "success" : "pending", rc);
}

struct ctx {
  const struct rcache *rc;
  struct ctstate *v;
  size_t n;
  struct ctcand *cand;
  size_t ncand;
  int judge_ready;  /* the writer records the poll that ends "in progress" */
  int unjudged;     /* a pending init/finalize was seen while judge_ready is 0 */
  struct ctorphan *orph;
  size_t norph;
  uint64_t attr_comm; /* set by contract(): the call has no communicator; judged on this one */
};

static struct ctstate *ct_find(struct ctx *x, uint64_t comm) {
  for (size_t i = 0; i < x->n; i++)
    if (x->v[i].comm == comm)
      return &x->v[i];
  return NULL;
}

static struct ctstate *ct_get(struct ctx *x, uint64_t comm) {
  struct ctstate *s = ct_find(x, comm);
  if (s)
    return s;
  x->v = ls_xrealloc(x->v, (x->n + 1) * sizeof *x->v);
  s = &x->v[x->n++];
  memset(s, 0, sizeof *s);
  s->comm = comm;
  return s;
}

static void ct_free(struct ctx *x) {
  free(x->v);
  free(x->cand);
  free(x->orph);
  memset(x, 0, sizeof *x);
}

/* The parent's state left "in progress" (or it was aborted): its splits' children exist. */
static void ct_settle_children(struct ctx *x, uint64_t parent) {
  size_t k = 0;
  for (size_t i = 0; i < x->norph; i++)
    if (x->orph[i].parent != parent)
      x->orph[k++] = x->orph[i];
  x->norph = k;
}

/* ", it returned ncclInvalidArgument" / ", it never returned" / "" (success). */
static void rc_clause(const struct ls_apidb *db, struct ls_ref ref, unsigned family, char *buf, size_t len) {
  char v[64];
  if (ref.r->state == LS_REC_ENTERED)
    snprintf(buf, len, "; the call never returned");
  else if (!ls_apidb_rc_is(db, family, "success", ref.r->rc))
    snprintf(buf, len, "; it returned %s", ls_format_enum(db, ref.t, ref.r, "result", ref.r->rc, v, sizeof v));
  else
    buf[0] = 0;
}

static int uses_comm(unsigned kind) {
  return kind == LS_KIND_COLLECTIVE || kind == LS_KIND_P2P || kind == LS_KIND_COMM_FINALIZE ||
         kind == LS_KIND_COMM_DESTROY;
}

/* A call's text, formatted only when a message needs it: most calls need none,
 * and formatting was most of compare's time per call. */
struct lazy_call {
  const struct ls_apidb *db;
  struct ls_ref ref;
  unsigned family;
  int done;
  char call[256], rcs[96];
};

static struct lazy_call *lz(struct lazy_call *l) {
  if (!l->done) {
    ls_format_call(l->db, l->ref, l->call, sizeof l->call);
    rc_clause(l->db, l->ref, l->family, l->rcs, sizeof l->rcs);
    l->done = 1;
  }
  return l;
}

/* Updates the contract state with record `ref` and returns "not-ready" or
 * "after-abort" (with the detail in body) when the call breaks a contract. */
static const char *contract(struct ctx *x, const struct ls_apidb *db, struct ls_ref ref, unsigned kind,
                            unsigned family, char *body, size_t len) {
  const struct ls_trace_record *r = ref.r;
  int returned = r->state == LS_REC_RETURNED;
  int pending_rc = returned && rc_is(x->rc, db, family, RC_PENDING, r->rc);
  const char *cls = NULL;
  char v[64];
  struct lazy_call lc; /* its texts unset until lz(): no 350-byte clear per call */
  lc.db = db, lc.ref = ref, lc.family = family, lc.done = 0;
  x->attr_comm = 0;
  if (kind == LS_KIND_COMM_INIT || kind == LS_KIND_COMM_SPLIT) {
    struct ctstate *p = kind == LS_KIND_COMM_SPLIT && r->aux0 ? ct_find(x, r->aux0) : NULL;
    if (p && p->aborted) {
      cls = ls_class_name(LS_CLASS_AFTER_ABORT);
      ls_bufprintf(body, len, "%s splits a communicator after ncclCommAbort on it%s", lz(&lc)->call, lz(&lc)->rcs);
    }
    /* a split (not NCCL_SPLIT_NOCOLOR, not a shrink: an excluded rank gets NULL for good)
     * of a non-blocking parent that returned success without a child */
    if (!r->comm_id && p && p->nb && !cls && returned && rc_is(x->rc, db, family, RC_SUCCESS, r->rc) &&
        (int32_t)(uint32_t)r->aux1 != -1 && !strcmp(ls_trace_api_name(ref.t, r), "ncclCommSplit")) {
      x->orph = ls_xrealloc(x->orph, (x->norph + 1) * sizeof *x->orph);
      x->orph[x->norph++] = (struct ctorphan){r->aux0, ref};
    }
    if (!r->comm_id)
      return cls;
    /* a new communicator (or the same identity created again): a fresh state */
    struct ctstate *s = ct_get(x, r->comm_id);
    memset(s, 0, sizeof *s);
    s->comm = r->comm_id;
    s->nb = (r->flags & LS_REC_COMM_NONBLOCKING) != 0;
    if (pending_rc) {
      s->pending = CT_INIT;
      s->pend = ref;
      x->unjudged |= !x->judge_ready;
    } else if (returned && (r->flags & LS_REC_COMM_NONBLOCKING) && (r->flags & LS_REC_IN_GROUP)) {
      x->cand = ls_xrealloc(x->cand, (x->ncand + 1) * sizeof *x->cand);
      x->cand[x->ncand++] = (struct ctcand){r->tid, r->comm_id, ref};
    }
    return cls;
  }
  if (kind == LS_KIND_GROUP_END && (r->flags & LS_REC_OUTER_GROUP_END)) {
    size_t k = 0;
    for (size_t i = 0; i < x->ncand; i++) {
      if (x->cand[i].tid != r->tid) {
        x->cand[k++] = x->cand[i];
        continue;
      }
      if (pending_rc) {
        struct ctstate *s = ct_get(x, x->cand[i].comm);
        s->pending = CT_INIT;
        s->pend = x->cand[i].ref;
        s->grouped = 1;
        x->unjudged |= !x->judge_ready;
      }
    }
    x->ncand = k;
    return NULL;
  }
  /* a query on the NULL child too: the program polls what does not exist yet */
  if (!r->comm_id && x->judge_ready && x->norph && (uses_comm(kind) || kind == LS_KIND_ASYNC_ERROR_QUERY)) {
    const struct ctorphan *o = &x->orph[x->norph - 1];
    char pid[40];
    x->attr_comm = o->parent;
    ls_format_comm(o->parent, 0, pid, sizeof pid);
    ls_bufprintf(body, len,
                 "%s passes a NULL communicator: %s on the non-blocking communicator %s returned success with "
                 "the child still NULL, and NCCL hands the child out only after the parent's state leaves "
                 "ncclInProgress; no ncclCommGetAsyncError on the parent reported that before this call "
                 "(poll the parent, not the child)%s",
                 lz(&lc)->call, ls_trace_api_name(o->ref.t, o->ref.r), pid, lz(&lc)->rcs);
    return ls_class_name(LS_CLASS_NOT_READY);
  }
  if (!r->comm_id)
    return NULL;
  struct ctstate *s = ct_find(x, r->comm_id);
  if (s && s->aborted) {
    cls = ls_class_name(LS_CLASS_AFTER_ABORT);
    ls_bufprintf(body, len, "%s on a communicator after ncclCommAbort on it%s", lz(&lc)->call, lz(&lc)->rcs);
  } else if (s && s->errored && uses_comm(kind)) {
    cls = ls_class_name(LS_CLASS_AFTER_ABORT);
    ls_bufprintf(body, len,
                 "%s on a communicator after ncclCommGetAsyncError reported its asynchronous state %s (only "
                 "ncclCommAbort is safe then)%s",
                 lz(&lc)->call, ls_format_enum(db, ref.t, s->errored, "result", (int64_t)(int32_t)s->errored->aux0, v, sizeof v),
                 lz(&lc)->rcs);
  } else if (x->judge_ready && s && s->pending == CT_INIT && uses_comm(kind)) {
    cls = ls_class_name(LS_CLASS_NOT_READY);
    ls_bufprintf(body, len,
                 "%s on a non-blocking communicator before its creation was seen to complete: %s returned %s%s and "
                 "no ncclCommGetAsyncError on it reported success before this call%s",
                 lz(&lc)->call, ls_trace_api_name(s->pend.t, s->pend.r),
                 s->grouped ? "success inside a group whose outer ncclGroupEnd returned " : "",
                 s->grouped ? "ncclInProgress" : ls_format_enum(db, ref.t, s->pend.r, "result", s->pend.r->rc, v, sizeof v),
                 lz(&lc)->rcs);
  } else if (x->judge_ready && s && s->pending == CT_FINALIZE && kind == LS_KIND_COMM_DESTROY) {
    cls = ls_class_name(LS_CLASS_NOT_READY);
    ls_bufprintf(body, len,
                 "%s before the non-blocking ncclCommFinalize was seen to complete: it returned %s and no "
                 "ncclCommGetAsyncError on the communicator reported success before this call%s",
                 lz(&lc)->call, ls_format_enum(db, ref.t, s->pend.r, "result", s->pend.r->rc, v, sizeof v), lz(&lc)->rcs);
  }
  switch (kind) {
  case LS_KIND_COMM_ABORT:
    ct_settle_children(x, r->comm_id);
    s = ct_get(x, r->comm_id);
    if (!s->aborted)
      s->aborted = r;
    s->pending = CT_READY;
    break;
  case LS_KIND_ASYNC_ERROR_QUERY:
    if (s && returned && rc_is(x->rc, db, family, RC_SUCCESS, r->rc)) {
      int64_t st = (int64_t)(int32_t)r->aux0;
      if (!rc_is(x->rc, db, family, RC_PENDING, st))
        ct_settle_children(x, r->comm_id);
      if (rc_is(x->rc, db, family, RC_SUCCESS, st)) {
        s->pending = CT_READY;
      } else if (!rc_is(x->rc, db, family, RC_PENDING, st)) {
        if (!s->errored)
          s->errored = r;
        s->pending = CT_READY; /* terminal: what follows is after-abort's business */
      }
    }
    break;
  case LS_KIND_COMM_FINALIZE:
    if (pending_rc) {
      s = ct_get(x, r->comm_id);
      s->pending = CT_FINALIZE;
      s->pend = ref;
      x->unjudged |= !x->judge_ready;
    }
    break;
  default:
    break;
  }
  return cls;
}

static int is_contract(const char *cls) {
  return !strcmp(cls, ls_class_name(LS_CLASS_NOT_READY)) || !strcmp(cls, ls_class_name(LS_CLASS_AFTER_ABORT));
}

/* Whether d (a per-call fact) describes the same event as record r would. */
static int same_event(const struct ls_divergence *d, const char *cls, int has_comm, uint64_t comm, int has_seq,
                      uint64_t seq, struct ls_ref ref, int rank) {
  if (!d->percall || strcmp(d->cls, cls) || d->has_comm != has_comm || (has_comm && d->comm != comm) ||
      d->has_seq != has_seq || (has_seq && d->seq != seq))
    return 0;
  const struct ls_trace_record *x = d->site[0].r, *r = ref.r;
  if (strcmp(ls_trace_api_name(d->site[0].t, x), ls_trace_api_name(ref.t, r)))
    return 0;
  /* A broken contract is the program's doing: what the library answered to the
   * call (a race with the background init) may differ by rank. */
  if (!is_contract(cls) && (x->rc != r->rc || (uint32_t)x->aux0 != (uint32_t)r->aux0 || x->state != r->state))
    return 0;
  for (int k = 0; k < d->nlisted; k++)
    if (d->listed[k] == rank)
      return 0;
  return 1;
}

static void list_rank(struct ls_divergence *d, int rank) {
  if (d->nlisted < (int)(sizeof d->listed / sizeof *d->listed))
    d->listed[d->nlisted++] = rank;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void per_call(struct ls_compare *c, const struct cmp_run *run) {
  const struct ls_trace_set *set = run->set;
  const struct ls_apidb *db = run->db;
  struct rcache *rcc = ls_xrealloc(NULL, sizeof *rcc);
  rc_fill(rcc, db);
  unobserved_notes(c, run);
  struct once *o = NULL;
  size_t no = 0, first = c->ndiv;
  for (size_t ti = 0; ti < set->n; ti++) {
    const struct ls_trace *t = &set->traces[ti];
    struct ctx x = {.rc = rcc, .judge_ready = (t->hdr->flags & LS_TRACE_F_ASYNC_CHANGES) != 0};
    ls_progress("compare: per-call facts of traces", ti, set->n);
    if (run->ti[ti].pc_skip)
      continue; /* no record it could report (pass B looked) */
    for (uint64_t i = run->ti[ti].pc_from; i < t->nrecords; i++) {
      const struct ls_trace_record *r = &t->records[i];
      struct ls_ref ref = {t, r};
      if (i % LS_TRACE_RELEASE_EVERY == 0 && i > run->ti[ti].pc_from)
        ls_trace_release(t, i - LS_TRACE_RELEASE_EVERY, i);
      if (r->state == LS_REC_FREE) /* its api index is unchecked: never look it up */
        continue;
      unsigned kind = ls_trace_api_kind(t, r), family = t->apis[r->api].family;
      char v[64], v2[64];
      struct lazy_call lc; /* its texts unset until lz(): no 350-byte clear per call */
  lc.db = db, lc.ref = ref, lc.family = family, lc.done = 0;
      int rank = ls_ref_rank(set, ref);
      const char *cls = NULL;
      int tier = 0;
      char body[640];
      body[0] = 0;
      /* A broken contract names the cause; the error or hang NCCL answered it
       * with is a consequence and is not listed again for this call. */
      const char *ccls = contract(&x, db, ref, kind, family, body, sizeof body);
      if (ccls) {
        cls = ccls;
      } else if (r->flags & LS_REC_TIMED_OUT) {
        cls = ls_class_name(LS_CLASS_TIMEOUT);
        tier = 1;
        ls_bufprintf(body, sizeof body, "%s was not complete when the watchdog fired (timeout %u ms)", lz(&lc)->call,
                     t->hdr->timeout_ms);
      } else if (r->state == LS_REC_ENTERED && kind != LS_KIND_EVENT) {
        cls = ls_class_name(LS_CLASS_INCOMPLETE);
        tier = 1;
        ls_bufprintf(body, sizeof body, "%s never returned (the process was killed or hung inside it)", lz(&lc)->call);
      } else if (r->state == LS_REC_RETURNED && !rc_is(rcc, db, family, RC_OK, r->rc)) {
        cls = ls_class_name(LS_CLASS_API_ERROR);
        ls_bufprintf(body, sizeof body, "%s returned %s (group depth %d%s)", lz(&lc)->call,
                     ls_format_enum(db, t, r, "result", r->rc, v, sizeof v), r->group_depth,
                     (r->flags & LS_REC_IN_GROUP) ? ", inside a group" : "");
      } else if (kind == LS_KIND_ASYNC_ERROR_QUERY && !rc_is(rcc, db, family, RC_OK, (int64_t)(int32_t)r->aux0)) {
        cls = ls_class_name(LS_CLASS_ASYNC_ERROR);
        ls_bufprintf(body, sizeof body, "%s reported the communicator's asynchronous state %s", lz(&lc)->call,
                     ls_format_enum(db, t, r, "result", (int64_t)(int32_t)r->aux0, v2, sizeof v2));
      } else if ((r->flags & LS_REC_EVENT_RECORDED) && !(r->flags & LS_REC_COMPLETED) && !exit_unsure(t)) {
        cls = ls_class_name(LS_CLASS_INCOMPLETE);
        tier = 1;
        ls_bufprintf(body, sizeof body, "%s returned but never completed on the device", lz(&lc)->call);
      }
      if (!cls)
        continue;
      /* A hang leaves every later call incomplete too, and a program that goes on
       * after an abort breaks the contract at every call: name the first per rank
       * and communicator, and count the rest. */
      int once = tier == 1 || ccls;
      if (once && !first_of(&o, &no, t, r->comm_id, cls))
        continue;
      int has_comm = r->comm_id != 0, has_seq = r->seq != LS_NO_SEQ, implied = 0;
      uint64_t comm = r->comm_id, seq = r->seq;
      if (ccls && x.attr_comm) {
        /* no communicator of its own: judged on the parent whose poll would have handed
         * the child out, at the number the parent's next sequenced call gets */
        comm = x.attr_comm;
        seq = next_seq_on(t, i, comm);
        has_comm = has_seq = 1;
        size_t bl = strlen(body);
        snprintf(body + bl, sizeof body - bl, "; reported on the parent at seq %llu, the number its next call gets",
                 (unsigned long long)seq);
      } else if (!has_seq && implied_seq(t, i, &comm, &seq))
        has_comm = has_seq = implied = 1;
      /* The same event on several ranks (every rank's GroupEnd failed, every
       * rank timed out at seq k) is one divergence naming the ranks. */
      size_t k;
      for (k = first; k < c->ndiv; k++)
        if (same_event(&c->div[k], cls, has_comm, comm, has_seq, seq, ref, rank))
          break;
      if (once) {
        o = ls_xrealloc(o, (no + 1) * sizeof *o);
        o[no++] = (struct once){t, r->comm_id, cls, k < c->ndiv ? SIZE_MAX : c->ndiv, 0};
      }
      if (k < c->ndiv) {
        struct ls_divergence *e = &c->div[k];
        e->nall++;
        div_rank(e, rank, ref);
        list_rank(e, rank);
        continue;
      }
      struct ls_divergence *d = add_div(c, cls, tier);
      d->percall = 1;
      d->nall = 1;
      d->has_comm = has_comm;
      d->comm = comm;
      d->has_seq = has_seq;
      d->seq = seq;
      d->implied_seq = implied;
      div_rank(d, rank, ref);
      list_rank(d, rank);
      ls_bufprintf(d->detail, sizeof d->detail, "%s", body);
    }
    if (x.unjudged)
      note(c, "%s: a non-blocking call returned in progress, but this trace's writer did not record the poll "
              "that ends it (an older liblockstep): not-ready is not judged for it", t->path);
    ct_free(&x);
    ls_trace_release(t, 0, t->nrecords);
  }
  free(rcc);
  for (size_t i = 0; i < no; i++)
    if (o[i].div != SIZE_MAX)
      c->div[o[i].div].more = o[i].more;
  free(o);
  /* Compose the details now that the ranks are known. */
  for (size_t i = first; i < c->ndiv; i++) {
    struct ls_divergence *d = &c->div[i];
    char who[160], tail[160] = "", body[sizeof d->detail];
    snprintf(body, sizeof body, "%s", d->detail);
    if (d->nall == 1)
      snprintf(who, sizeof who, "rank %d", d->ranks[0]);
    else if (d->nall == 2)
      snprintf(who, sizeof who, "ranks %d and %d", d->ranks[0], d->ranks[1]);
    else {
      /* every rank that showed it, in order (the first 16; the count says how many more) */
      qsort(d->listed, (size_t)d->nlisted, sizeof *d->listed, cmp_int);
      int n = snprintf(who, sizeof who, "%d ranks (", d->nall);
      for (int k = 0; k < d->nlisted && n > 0 && (size_t)n < sizeof who; k++)
        n += snprintf(who + n, sizeof who - (size_t)n, "%s%d", k ? ", " : "", d->listed[k]);
      if (n > 0 && (size_t)n < sizeof who)
        snprintf(who + n, sizeof who - (size_t)n, d->nall > d->nlisted ? " and %d more)" : ")",
                 d->nall - d->nlisted);
    }
    if (d->implied_seq)
      snprintf(tail, sizeof tail, "; the call has no sequence number of its own: seq %llu is the next call's",
               (unsigned long long)d->seq);
    if (d->more) {
      size_t len = strlen(tail);
      snprintf(tail + len, sizeof tail - len, "; %lu later call%s on rank %d too", d->more, d->more == 1 ? "" : "s",
               d->ranks[0]);
    }
    ls_bufprintf(d->detail, sizeof d->detail, "%s: %s%s", who, body, tail);
  }
}

static int cmp_div(const void *a, const void *b) {
  const struct ls_divergence *x = a, *y = b;
  if (x->tier != y->tier)
    return x->tier - y->tier;
  if (x->when != y->when)
    return x->when < y->when ? -1 : 1;
  return 0;
}

/* The directory the traces came from, for what concerns no single file. */
static void set_where(const struct ls_trace_set *set, char *buf, size_t len) {
  snprintf(buf, len, "the traces given");
  for (size_t i = 0; i < set->n; i++) {
    const char *p = set->traces[i].path, *slash = strrchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : 1;
    if (!slash)
      p = ".";
    if (i == 0)
      ls_bufprintf(buf, len, "%.*s", (int)n, p);
    else if (strlen(buf) != n || strncmp(buf, p, n)) {
      snprintf(buf, len, "the traces given");
      return;
    }
  }
}

/* The launcher said how many processes the job has (RANK/WORLD_SIZE, ...): a
 * process of it without a trace is missing even when no communicator names it
 * (it may have died before creating one). Judged only when every trace agrees. */
static void launcher_missing(struct ls_compare *out, const struct ls_trace_set *set, const char *where) {
  int size = set->n ? set->traces[0].hdr->launcher_size : -1;
  for (size_t i = 0; i < set->n; i++)
    if (set->traces[i].hdr->launcher_size != size || set->traces[i].hdr->launcher_rank < 0)
      return;
  if (size <= 0 || size > (1 << 22))
    return;
  unsigned char *seen = calloc((size_t)size, 1);
  for (size_t i = 0; i < set->n; i++)
    if (set->traces[i].hdr->launcher_rank < size)
      seen[set->traces[i].hdr->launcher_rank] = 1;
  int nmiss = 0, listed = 0;
  char lst[256] = "";
  for (int r = 0; r < size; r++)
    if (!seen[r]) {
      nmiss++;
      if (listed < 16) {
        size_t len = strlen(lst);
        snprintf(lst + len, sizeof lst - len, "%s%d", listed++ ? "," : "", r);
      }
    }
  free(seen);
  if (nmiss)
    missing(out, "%s: no trace from launcher rank%s %s%s of %d (the launcher started %d processes)", where,
            nmiss > 1 ? "s" : "", lst, listed < nmiss ? ",..." : "", size, size);
}

/* Two traces of one launcher rank: usually two runs written into one directory, which
 * compare would take for one job (a process that forked a recording child has two too). */
static void two_runs_note(struct ls_compare *out, const struct ls_trace_set *set, const char *where) {
  for (size_t i = 0; i < set->n; i++) {
    const struct ls_trace_header *a = set->traces[i].hdr;
    for (size_t j = i + 1; a->launcher_rank >= 0 && j < set->n; j++) {
      const struct ls_trace_header *b = set->traces[j].hdr;
      if (b->launcher_rank != a->launcher_rank || b->launcher_size != a->launcher_size)
        continue;
      double apart = (double)(a->t0_realtime_ns > b->t0_realtime_ns ? a->t0_realtime_ns - b->t0_realtime_ns
                                                                     : b->t0_realtime_ns - a->t0_realtime_ns) / 1e9;
      note(out, "%s: launcher rank %d has two traces, %s and %s, started %.1f s apart: traces of two runs in one "
                "directory? compare takes them for one job; give each run its own --trace-dir (a process that "
                "forked a recording child also has two)", where, a->launcher_rank, set->traces[i].path,
           set->traces[j].path, apart);
      return;
    }
  }
}

static void run_free(struct cmp_run *run, struct ls_compare *c) {
  for (size_t i = 0; i < c->ncomms; i++)
    for (int rk = 0; rk < c->comms[i].nslots; rk++)
      c->comms[i].ranks[rk].sum = NULL;
  for (size_t i = 0; i < run->set->n; i++) {
    for (size_t k = 0; k < run->ti[i].ns; k++) {
      free(run->ti[i].s[k].blk);
      free(run->ti[i].s[k].sig);
    }
    free(run->ti[i].s);
  }
  free(run->ti);
}

/* Passes over the records (each over every trace in parallel, giving pages back
 * behind it), each only over what a trace's digest index does not stand for: the
 * reader's validation; B, each rank's calls per communicator with their blocks'
 * digests (build_comms); where aligning must start, from the digests alone
 * (find_starts); the aligner from there, through windows; the per-call facts, one
 * trace at a time, only where a record could give one. */
int ls_compare_run(const struct ls_trace_set *set, const struct ls_apidb *db, struct ls_compare *out) {
  memset(out, 0, sizeof *out);
  g_window_reads = 0;
  /* The block is the indexes' (the first indexed trace's), so they can be taken as they
   * are; LOCKSTEP_COMPARE_BLOCK sets another (tests: 2 makes the aligner refill its
   * windows at every other call), and then each trace's digests are computed. */
  const char *blk = getenv("LOCKSTEP_COMPARE_BLOCK"), *ui = getenv("LOCKSTEP_COMPARE_INDEX");
  long b = blk ? strtol(blk, NULL, 10) : 0;
  g_block = LS_INDEX_BLOCK;
  for (size_t i = 0; i < set->n; i++)
    if (set->traces[i].has_index) {
      g_block = set->traces[i].idx_block;
      break;
    }
  if (b >= 2)
    g_block = (size_t)b;
  struct cmp_run run = {set, db, ls_xrealloc(NULL, (set->n ? set->n : 1) * sizeof *run.ti), 0, 0, 1, 1};
  run.use_index = !(ui && !strcmp(ui, "0"));
  for (unsigned f = LS_FAMILY_NCCL; f <= LS_FAMILY_MPI; f++) /* lockstep's own events are remarkable anyway */
    run.plain_rc0 &= ls_apidb_rc_ok(db, f, 0) && !ls_apidb_rc_is(db, f, "pending", 0);
  memset(run.ti, 0, (set->n ? set->n : 1) * sizeof *run.ti);
  if (build_comms(&run, out)) {
    run_free(&run, out);
    ls_compare_free(out); /* callers get nothing to free on failure (export goes on without it) */
    return -1;
  }
  find_starts(&run, out);
  for (size_t ti = 0; ti < set->n; ti++)
    if (set->traces[ti].idx_why[0])
      note(out, "%s%s: not used (%s); the trace's records were read instead", set->traces[ti].path, LS_INDEX_SUFFIX,
           set->traces[ti].idx_why);
  for (size_t ti = 0; ti < set->n; ti++) {
    const struct ls_trace *t = &set->traces[ti];
    uint64_t unwritten = t->unwritten;
    if (t->partial)
      missing(out, "%s: the trace is partial: %llu call%s not recorded (capacity %llu%s)", t->path,
              (unsigned long long)t->dropped, t->dropped == 1 ? " was" : "s were",
              (unsigned long long)t->hdr->capacity, t->dropped ? "" : ", or the disk was full");
    if (run.ti[ti].lost_facts)
      missing(out, "%s: the ring overwrote its %llu oldest calls, and its index marks a call it covers as one "
                   "the per-call facts could name (an error, a hang, a contract, lockstep's own event): those of "
                   "the overwritten calls are not known", t->path, (unsigned long long)t->first);
    if (unwritten)
      missing(out, "%s: %llu of its %llu claimed record slots were never written (the process was killed while "
                   "recording, or the disk was full)", t->path, (unsigned long long)unwritten,
              (unsigned long long)t->nrecords);
  }
  char where[600];
  set_where(set, where, sizeof where);
  launcher_missing(out, set, where);
  two_runs_note(out, set, where);
  if (!out->ncomms)
    missing(out, "%s: no communicator was recorded in %zu trace%s: there is nothing to compare", where, set->n,
            set->n == 1 ? "" : "s");
  for (size_t i = 0; i < out->ncomms; i++) {
    const struct ls_comm *cm = &out->comms[i];
    char id[40], lst[256] = "";
    ls_format_comm(cm->id, cm->incarnation, id, sizeof id);
    int nmiss = cm->size, listed = 0;
    for (int rk = 0; rk < cm->nslots; rk++)
      nmiss -= cm->ranks[rk].present;
    /* The size comes from the file: list a few, never walk all of them. */
    for (int rk = 0; rk < cm->size && listed < 16; rk++)
      if (rk >= cm->nslots || !cm->ranks[rk].present) {
        size_t len = strlen(lst);
        snprintf(lst + len, sizeof lst - len, "%s%d", listed ? "," : "", rk);
        listed++;
      }
    if (listed < nmiss) {
      size_t len = strlen(lst);
      snprintf(lst + len, sizeof lst - len, ",...");
    }
    if (nmiss > 0)
      missing(out, "%s: communicator %s: no trace for rank%s %s of %d; the others were compared without %s", where,
              id, nmiss > 1 ? "s" : "", lst, cm->size, nmiss > 1 ? "them" : "it");
  }
  for (size_t i = 0; i < out->ncomms; i++) {
    ls_progress("compare: aligning communicators", i, out->ncomms);
    align_comm(out, db, &out->comms[i]);
    for (int rk = 0; rk < out->comms[i].nslots; rk++)
      window_drop(&out->comms[i].ranks[rk]);
  }
  per_call(out, &run);
  ls_progress_end();
  const char *stats = getenv("LOCKSTEP_COMPARE_STATS");
  if (stats && *stats && strcmp(stats, "0")) {
    /* what was read, for tests and benchmarks (never part of the verdict) */
    size_t nidx = 0;
    uint64_t all = 0, passb = 0, pc = 0;
    for (size_t i = 0; i < set->n; i++) {
      nidx += run.ti[i].indexed;
      all += set->traces[i].nrecords;
      passb += run.ti[i].read;
      pc += run.ti[i].pc_skip ? 0 : set->traces[i].nrecords - run.ti[i].pc_from;
    }
    fprintf(stderr, "lockstep: compare stats: %zu of %zu traces by their index (block %zu); of %llu records, "
                    "summaries read %llu, the aligner %llu, the per-call pass %llu\n", nidx, set->n, g_block,
            (unsigned long long)all, (unsigned long long)passb, (unsigned long long)g_window_reads,
            (unsigned long long)pc);
  }
  run_free(&run, out);
  /* Stable order: tier, then time; insertion order breaks ties. */
  for (size_t i = 1; i < out->ndiv; i++) {
    struct ls_divergence d = out->div[i];
    size_t j = i;
    while (j > 0 && cmp_div(&out->div[j - 1], &d) > 0) {
      out->div[j] = out->div[j - 1];
      j--;
    }
    out->div[j] = d;
  }
  /* Two ranks are named lower first (the fixtures' RUNTIME lines do the same);
   * which one skipped is in the detail and in `last`. */
  for (size_t i = 0; i < out->ndiv; i++) {
    struct ls_divergence *d = &out->div[i];
    if (d->nranks == 2 && d->ranks[0] > d->ranks[1]) {
      int r = d->ranks[0], l = d->last[0];
      struct ls_ref s = d->site[0];
      d->ranks[0] = d->ranks[1];
      d->site[0] = d->site[1];
      d->last[0] = d->last[1];
      d->ranks[1] = r;
      d->site[1] = s;
      d->last[1] = l;
    }
  }
  return 0;
}

void ls_compare_free(struct ls_compare *c) {
  for (size_t i = 0; i < c->ncomms; i++) {
    for (int rk = 0; rk < c->comms[i].nslots; rk++)
      free(c->comms[i].ranks[rk].v);
    free(c->comms[i].ranks);
  }
  free(c->comms);
  free(c->div);
  for (size_t i = 0; i < c->nnotes; i++)
    free(c->notes[i]);
  free(c->notes);
  for (size_t i = 0; i < c->nmissing; i++)
    free(c->missing[i]);
  free(c->missing);
  memset(c, 0, sizeof *c);
}
