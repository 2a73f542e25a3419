/* gen_traces.c — writes the traces of a synthetic job (bench/synth/pattern.h) in the
 * recorder's format (runtime/trace_format.h) without running it: N ranks x M steps on
 * C communicators, one rank optionally diverging at one (communicator, seq) in one way.
 * For measuring compare at sizes no test machine can run; tests/scale checks that
 * compare reads these files exactly as it reads the recorder's traces of the same job.
 * usage: gen_traces -o DIR -n RANKS -m STEPS [-c COMMS] [-d RANK:COMM:SEQ:KIND]
 *        [-k BLOCK] [-x local:SEQ|chain:SEQ] [-I]
 * (KIND: op count dtype redop root skip). Writes DIR/synth.RRRRR.lstrace and, as the
 * recorder does, its digest index DIR/synth.RRRRR.lstrace.idx (-I: none; -k: its block;
 * -x: the recorder's collision test hook, LOCKSTEP_TEST_INDEX_COLLIDE); exit 2 on bad
 * usage or a write error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pattern.h"
#include "trace_format.h"
#include "trace_index.h"

/* The api table the files carry: the synthetic job's collectives and its communicator calls. */
enum { API_INIT = SY_NOPS, API_DESTROY, NAPIS };

#define T0_MONO 1000000000000ull
#define T0_REAL 1796000000000000000ull
#define STEP_NS 2000u

static void die(const char *what, const char *arg) __attribute__((noreturn));
static void die(const char *what, const char *arg) {
  fprintf(stderr, "gen_traces: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
  exit(2);
}

static uint64_t comm_id(int c) { return 0x5ca1e00000000000ull | (uint64_t)(c + 1) * 0x9e3779b1ull; }

struct writer {
  int fd;
  const char *path;
  struct ls_trace_record *buf;
  size_t n, cap;
  uint64_t written, t;
  struct ls_indexer *ix; /* NULL: no index */
};

/* The index options (-k, -x, -I) and the full blocks of the rank being written. */
static uint32_t g_kblock = LS_INDEX_BLOCK;
static int g_noindex, g_collide;
static uint64_t g_collide_seq;
static struct ls_index_block *g_blocks;
static size_t g_nblocks, g_capblocks;

static void emit(void *arg, const struct ls_index_block *b) {
  (void)arg;
  if (g_nblocks == g_capblocks) {
    g_capblocks = g_capblocks ? 2 * g_capblocks : 256;
    g_blocks = realloc(g_blocks, g_capblocks * sizeof *g_blocks);
    if (!g_blocks)
      die("out of memory", NULL);
  }
  g_blocks[g_nblocks++] = *b;
}

static void flush(struct writer *w) {
  const char *p = (const char *)w->buf;
  size_t left = w->n * sizeof *w->buf;
  while (left) {
    ssize_t got = write(w->fd, p, left);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      die("write failed", w->path);
    p += got;
    left -= (size_t)got;
  }
  for (size_t i = 0; w->ix && i < w->n; i++)
    ls_idx_feed(w->ix, w->written + i, &w->buf[i]);
  w->written += w->n;
  w->n = 0;
}

static struct ls_trace_record *next(struct writer *w) {
  if (w->n == w->cap)
    flush(w);
  struct ls_trace_record *r = &w->buf[w->n++];
  memset(r, 0, sizeof *r);
  w->t += STEP_NS;
  return r;
}

static void comm_call(struct writer *w, int api, int c, int rank, int size, int pid) {
  struct ls_trace_record *r = next(w);
  r->state = LS_REC_RETURNED;
  r->api = (uint16_t)api;
  r->comm_id = comm_id(c);
  r->seq = LS_NO_SEQ;
  r->dtype = r->redop = r->root_or_peer = LS_NO_VALUE;
  r->comm_rank = rank;
  r->comm_size = size;
  r->tid = (uint32_t)pid;
  r->t_enter_ns = w->t;
  r->t_exit_ns = w->t + 500;
}

static void collective(struct writer *w, const struct synth_call *k, int c, uint64_t seq, int rank, int size,
                       int pid) {
  struct ls_trace_record *r = next(w);
  r->state = LS_REC_RETURNED;
  r->api = (uint16_t)k->op;
  r->flags = LS_REC_EVENT_RECORDED | LS_REC_COMPLETED;
  r->comm_id = comm_id(c);
  r->seq = seq;
  r->count = k->count;
  r->dtype = k->dtype;
  r->redop = k->redop;
  r->root_or_peer = k->root;
  r->comm_rank = rank;
  r->comm_size = size;
  r->tid = (uint32_t)pid;
  r->t_enter_ns = w->t;
  r->t_exit_ns = w->t + 300;
  r->t_complete_ns = w->t + 900;
  r->stream = 0x5000;
}

/* Records of one rank, in issue order; returns how many. With out NULL only counts. */
static uint64_t rank_records(const struct synth_job *j, int rank, int size, struct writer *w) {
  uint64_t n = 0, seq[64] = {0};
  int pid = 100000 + rank;
  for (int c = 0; c < j->ncomms; c++, n++)
    if (w)
      comm_call(w, API_INIT, c, rank, size, pid);
  for (uint64_t i = 0; i < j->ncalls; i++) {
    int cs[2], nc = synth_step_comms(j, i, cs), stop = 0;
    for (int k = 0; k < nc && !stop; k++) {
      struct synth_call call;
      if (!synth_call_at(j, rank, cs[k], seq[cs[k]], &call)) {
        stop = 1;
        break;
      }
      if (w)
        collective(w, &call, cs[k], seq[cs[k]], rank, size, pid);
      seq[cs[k]]++;
      n++;
    }
    if (stop)
      break;
  }
  for (int c = 0; c < j->ncomms; c++, n++)
    if (w)
      comm_call(w, API_DESTROY, c, rank, size, pid);
  return n;
}

static void write_all(int fd, const void *p, size_t n, const char *path) {
  const char *c = p;
  while (n) {
    ssize_t got = write(fd, c, n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      die("write failed", path);
    c += got;
    n -= (size_t)got;
  }
}

/* The index the recorder would have left at exit: one snapshot covering every record. */
static void write_index(const char *trace, const struct ls_trace_header *th, const struct ls_indexer *ix) {
  char path[4200];
  snprintf(path, sizeof path, "%s%s", trace, LS_INDEX_SUFFIX);
  static struct ls_index_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, LS_INDEX_MAGIC, 8);
  h.version = LS_INDEX_VERSION;
  h.header_size = LS_INDEX_HEADER_SIZE;
  h.block = ix->block;
  h.max_streams = 64;
  h.entry_size = sizeof(struct ls_index_block);
  h.current = 1;
  h.pid = th->pid;
  h.t0_realtime_ns = th->t0_realtime_ns;
  uint64_t snap_bytes = sizeof(struct ls_index_snap) + ix->ns * sizeof(struct ls_index_stream);
  h.snap_offset[0] = LS_INDEX_HEADER_SIZE;
  h.snap_offset[1] = LS_INDEX_HEADER_SIZE + snap_bytes;
  h.entries_offset = LS_INDEX_HEADER_SIZE + 2 * snap_bytes;
  h.entries_cap = g_nblocks;
  struct ls_index_stream st[64];
  for (unsigned i = 0; i < ix->ns; i++)
    st[i] = ix->st[i].s;
  struct ls_index_snap sn = {ix->covered, g_nblocks, ix->features, ix->ns, 0};
  sn.check = ls_idx_check(&sn, sizeof sn) ^ ls_idx_check(st, ix->ns * sizeof *st);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    die("cannot create", path);
  write_all(fd, &h, sizeof h, path);
  for (int k = 0; k < 2; k++) { /* both slots: the second is never in force */
    write_all(fd, &sn, sizeof sn, path);
    write_all(fd, st, ix->ns * sizeof *st, path);
  }
  write_all(fd, g_blocks, g_nblocks * sizeof *g_blocks, path);
  if (close(fd) != 0)
    die("write failed", path);
}

static void write_rank(const char *dir, const struct synth_job *j, int rank, int size, struct ls_trace_record *buf,
                       size_t cap) {
  char path[4096];
  snprintf(path, sizeof path, "%s/synth.%05d%s", dir, rank, LS_TRACE_FILE_SUFFIX);
  uint64_t nrec = rank_records(j, rank, size, NULL);
  static unsigned char head[LS_TRACE_HEADER_SIZE + NAPIS * sizeof(struct ls_trace_api) +
                            LS_TRACE_MAX_MODULES * sizeof(struct ls_trace_module) + 4096];
  memset(head, 0, sizeof head);
  struct ls_trace_header *h = (struct ls_trace_header *)head;
  memcpy(h->magic, LS_TRACE_MAGIC, 8);
  h->version = LS_TRACE_VERSION;
  h->header_size = LS_TRACE_HEADER_SIZE;
  h->record_size = LS_TRACE_RECORD_SIZE;
  h->flags = LS_TRACE_F_CLEAN_EXIT | LS_TRACE_F_ASYNC_CHANGES;
  h->capacity = h->nrecords = nrec;
  h->api_offset = LS_TRACE_HEADER_SIZE;
  h->napis = NAPIS;
  h->modules_offset = h->api_offset + NAPIS * sizeof(struct ls_trace_api);
  uint64_t end = h->modules_offset + LS_TRACE_MAX_MODULES * sizeof(struct ls_trace_module);
  h->records_offset = (end + 4095) / 4096 * 4096;
  h->pid = 100000 + rank;
  h->launcher_rank = rank;
  h->launcher_size = size;
  h->timeout_ms = 60000;
  h->t0_realtime_ns = T0_REAL;
  h->t0_monotonic_ns = T0_MONO;
  snprintf(h->hostname, sizeof h->hostname, "synth");
  snprintf(h->exe, sizeof h->exe, "gen_traces");
  struct ls_trace_api *a = (struct ls_trace_api *)(head + h->api_offset);
  for (int i = 0; i < NAPIS; i++) {
    const char *name = i < SY_NOPS ? synth_op_names[i] : i == API_INIT ? "ncclCommInitRank" : "ncclCommDestroy";
    snprintf(a[i].name, sizeof a[i].name, "%s", name);
    a[i].kind = i < SY_NOPS ? LS_KIND_COLLECTIVE : i == API_INIT ? LS_KIND_COMM_INIT : LS_KIND_COMM_DESTROY;
    a[i].family = LS_FAMILY_NCCL;
    a[i].op_class = i < SY_NOPS ? (uint16_t)(i + 1) : 0;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    die("cannot create", path);
  static struct ls_idx_live slots[64];
  static struct ls_indexer ix;
  uint64_t hash[NAPIS];
  uint16_t kind[NAPIS];
  for (int i = 0; i < NAPIS; i++) {
    hash[i] = ls_idx_name_hash(a[i].name);
    kind[i] = a[i].kind;
  }
  ls_idx_init(&ix, g_kblock, slots, 64, hash, kind, NAPIS, emit, NULL);
  ix.collide = g_collide;
  ix.collide_seq = g_collide_seq;
  g_nblocks = 0;
  struct writer w = {fd, path, buf, 0, cap, 0, T0_MONO + (uint64_t)rank * 7, g_noindex ? NULL : &ix};
  for (size_t off = 0; off < h->records_offset;) {
    ssize_t got = write(fd, head + off, h->records_offset - off);
    if (got <= 0)
      die("write failed", path);
    off += (size_t)got;
  }
  rank_records(j, rank, size, &w);
  flush(&w);
  if (close(fd) != 0 || w.written != nrec)
    die("write failed", path);
  if (!g_noindex)
    write_index(path, h, &ix);
}

int main(int argc, char **argv) {
  const char *dir = NULL, *div = NULL;
  long ranks = 0, ncomms = 1;
  unsigned long long calls = 0;
  int o;
  while ((o = getopt(argc, argv, "o:n:m:c:d:k:x:I")) != -1) {
    if (o == 'o')
      dir = optarg;
    else if (o == 'n')
      ranks = atol(optarg);
    else if (o == 'm')
      calls = strtoull(optarg, NULL, 10);
    else if (o == 'c')
      ncomms = atol(optarg);
    else if (o == 'd')
      div = optarg;
    else if (o == 'k')
      g_kblock = (uint32_t)atol(optarg);
    else if (o == 'I')
      g_noindex = 1;
    else if (o == 'x' && (!strncmp(optarg, "local:", 6) || !strncmp(optarg, "chain:", 6))) {
      g_collide = optarg[0] == 'l' ? 1 : 2;
      g_collide_seq = strtoull(optarg + 6, NULL, 10);
    }
    else
      die("usage: gen_traces -o DIR -n RANKS -m STEPS [-c COMMS] [-d RANK:COMM:SEQ:KIND]", NULL);
  }
  if (!dir || ranks < 2 || ranks > 1 << 20 || !calls || ncomms < 1 || ncomms > 64 || g_kblock < 2)
    die("usage: gen_traces -o DIR -n RANKS(>=2) -m STEPS(>0) [-c COMMS(1..64)] [-d RANK:COMM:SEQ:KIND]", NULL);
  struct synth_job j = {.ncomms = (int)ncomms, .ncalls = calls, .div_rank = -1};
  if (div) {
    char kind[16];
    unsigned long long seq;
    if (sscanf(div, "%d:%d:%llu:%15s", &j.div_rank, &j.div_comm, &seq, kind) != 4 ||
        (j.kind = synth_kind_of(kind)) <= 0 || j.div_rank < 0 || j.div_rank >= ranks || j.div_comm < 0 ||
        j.div_comm >= ncomms)
      die("bad -d (RANK:COMM:SEQ:KIND, KIND one of op count dtype redop root skip)", div);
    j.div_seq = seq;
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    die("cannot create", dir);
  size_t cap = 1 << 15;
  struct ls_trace_record *buf = malloc(cap * sizeof *buf);
  if (!buf)
    die("out of memory", NULL);
  for (int r = 0; r < ranks; r++)
    write_rank(dir, &j, r, (int)ranks, buf, cap);
  free(buf);
  return 0;
}
