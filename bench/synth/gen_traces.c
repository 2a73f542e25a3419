/* gen_traces.c — writes the traces of a synthetic job (bench/synth/pattern.h) in the
 * recorder's format (runtime/trace_format.h) without running it: N ranks x M steps on
 * C communicators, one rank optionally diverging at one (communicator, seq) in one way.
 * For measuring compare at sizes no test machine can run; tests/scale checks that
 * compare reads these files exactly as it reads the recorder's traces of the same job.
 * usage: gen_traces -o DIR -n RANKS -m STEPS [-c COMMS] [-d RANK:COMM:SEQ:KIND]
 * (KIND: op count dtype redop root skip). Writes DIR/synth.RRRRR.lstrace; exit 2 on
 * bad usage or a write error. */
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
};

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
  struct writer w = {fd, path, buf, 0, cap, 0, T0_MONO + (uint64_t)rank * 7};
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
}

int main(int argc, char **argv) {
  const char *dir = NULL, *div = NULL;
  long ranks = 0, ncomms = 1;
  unsigned long long calls = 0;
  int o;
  while ((o = getopt(argc, argv, "o:n:m:c:d:")) != -1) {
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
    else
      die("usage: gen_traces -o DIR -n RANKS -m STEPS [-c COMMS] [-d RANK:COMM:SEQ:KIND]", NULL);
  }
  if (!dir || ranks < 2 || ranks > 1 << 20 || !calls || ncomms < 1 || ncomms > 64)
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
