/* online.c — the side channel: ranks of a communicator that share a host publish the
 * fingerprints of their sequenced calls into one shared file, and each rank's watchdog
 * compares its calls with the others' as soon as both have issued seq k — long before
 * a timeout, and without any barrier: the application threads are not involved, the
 * watchdog publishes from the trace on its own thread.
 *
 * File: $LOCKSTEP_ONLINE_DIR (default: the trace directory)/online-<host>-<job key>-
 * <comm id>.fp, 0600,
 * sparse: a header and one row of LS_FP_SLOTS fingerprints per communicator rank,
 * slot = collective index % LS_FP_SLOTS, each published seqlock-style (tag 0, fields, tag seq+1).
 * Ranks on other hosts are simply absent; `lockstep compare` still sees everything.
 * Only collectives are compared, numbered among themselves (send/recv counts may
 * legitimately differ per rank). Every process unlinks the files it used at exit (those still running keep their
 * mapping). Non-goal: cross-host exchange. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define LS_FP_SLOTS 1024u
#define LS_FP_MAGIC 0x31504650534cull /* "LSPFP1" */
#define LS_ONLINE_COMMS 64u
#define LS_ONLINE_PEERS 16u

struct ls_fp {
  uint64_t tag; /* collective index + 1 once published; 0 while written or empty */
  uint64_t seq; /* the call's seq in the trace (collectives and send/recv numbered) */
  uint64_t count;
  int32_t dtype, redop, root_or_peer;
  uint16_t op_class, kind;
  uint64_t api; /* the api id (same library build on every rank of a job) */
};

struct ls_fp_header {
  uint64_t magic;
  uint64_t comm_id;
  int32_t size;
  int32_t pad;
  uint64_t apis; /* g_apis of the creator; a file of another build is not used */
};

struct ls_online_comm {
  uint64_t id;
  int rank, size;
  struct ls_fp_header *map;
  size_t map_size;
  char path[512];
  uint64_t ncoll;                    /* collectives published so far */
  uint64_t checked[LS_ONLINE_PEERS]; /* per peer: next collective index to compare */
  int reported;
};

static struct ls_online_comm g_comms[LS_ONLINE_COMMS];
static unsigned g_ncomms;
static uint64_t g_published; /* trace records [0, g_published) looked at */
static int g_state;          /* 0 unknown, 1 on, -1 off */
/* Between the watchdog's tick and the exit handler only; no application thread. */
static pthread_mutex_t g_online_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_free_index = UINT64_MAX;
static unsigned g_free_ticks;

static uint64_t g_job; /* key shared by the ranks of one job run, see job_key() */
static uint64_t g_apis; /* hash of the api table: ranks must number apis alike */

/* Communicator ids of MPI_COMM_WORLD & co. are the same in every job, and files of
 * a killed run stay behind: the file name also carries what the ranks of one run
 * share and other runs do not — the trace directory and the launcher's job ids. */
static uint64_t job_key(void) {
  const char *dir = getenv("LOCKSTEP_TRACE_DIR");
  char real[4096];
  if (!dir || !*dir)
    dir = "lockstep-traces";
  if (realpath(dir, real))
    dir = real;
  uint64_t h = ls_hash_bytes(0x6a6f62, dir, strlen(dir));
  static const char *const ids[] = {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
                                    "OMPI_MCA_orte_ess_jobid", "SLURM_JOB_ID", "SLURM_STEP_ID",
                                    "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", NULL};
  for (const char *const *e = ids; *e; e++) {
    const char *v = getenv(*e);
    if (v)
      h = ls_hash_bytes(h, v, strlen(v) + 1);
  }
  return h;
}

static int online_on(void) {
  if (!g_state) {
    const char *v = getenv("LOCKSTEP_ONLINE");
    g_state = v && !strcmp(v, "0") ? -1 : 1;
    g_job = job_key();
    for (uint16_t a = 0; ls_api_desc_of(a); a++)
      g_apis = ls_hash_bytes(g_apis, ls_api_desc_of(a)->name, strlen(ls_api_desc_of(a)->name) + 1);
  }
  return g_state > 0;
}

static struct ls_fp *row(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp *)((char *)oc->map + 4096) + (size_t)rank * LS_FP_SLOTS;
}

static struct ls_online_comm *comm_for(uint64_t id, int rank, int size) {
  for (unsigned i = 0; i < g_ncomms; i++)
    if (g_comms[i].id == id)
      return g_comms[i].map ? &g_comms[i] : NULL;
  if (g_ncomms == LS_ONLINE_COMMS || rank < 0 || size <= 1 || rank >= size)
    return NULL;
  struct ls_online_comm *oc = &g_comms[g_ncomms++];
  memset(oc, 0, sizeof *oc);
  oc->id = id; /* remembered even if mapping fails, so it is tried once */
  oc->rank = rank;
  oc->size = size;
  /* Default: the trace directory, so what a killed run leaves behind goes away with its
   * traces. The host is in the name: ranks elsewhere sharing that directory over a
   * network filesystem must not share the mapping (it is not coherent across hosts). */
  const char *dir = getenv("LOCKSTEP_ONLINE_DIR");
  if (!dir || !*dir)
    dir = getenv("LOCKSTEP_TRACE_DIR");
  if (!dir || !*dir)
    dir = "lockstep-traces";
  snprintf(oc->path, sizeof oc->path, "%s/online-%s-%016llx-%016llx.fp", dir, ls_g.hdr->hostname,
           (unsigned long long)g_job, (unsigned long long)id);
  size_t sz = 4096 + (size_t)size * LS_FP_SLOTS * sizeof(struct ls_fp);
  int fd = open(oc->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return NULL;
  off_t end = lseek(fd, 0, SEEK_END);
  if (end < (off_t)sz && ftruncate(fd, (off_t)sz) != 0) {
    close(fd);
    return NULL;
  }
  /* Reserve this rank's row (and the header) so publishing cannot SIGBUS on a full
   * disk; other rows are only read where their owners wrote them. */
  if (fallocate(fd, 0, 0, 4096) != 0 && errno == ENOSPC) {
    close(fd);
    return NULL;
  }
  if (fallocate(fd, 0, (off_t)(4096 + (size_t)rank * LS_FP_SLOTS * sizeof(struct ls_fp)),
                (off_t)(LS_FP_SLOTS * sizeof(struct ls_fp))) != 0 &&
      errno == ENOSPC) {
    close(fd);
    return NULL;
  }
  void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED)
    return NULL;
  oc->map = m;
  oc->map_size = sz;
  struct ls_fp_header *h = m;
  uint64_t zero = 0;
  if (__atomic_compare_exchange_n(&h->magic, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    h->comm_id = id;
    h->size = size;
    h->apis = g_apis;
    __atomic_store_n(&h->magic, LS_FP_MAGIC, __ATOMIC_RELEASE);
  }
  for (int spin = 0; __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == 1 && spin < 1000; spin++)
    usleep(100); /* another rank is writing the header */
  if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != LS_FP_MAGIC || h->comm_id != id ||
      h->size != size || h->apis != g_apis) {
    munmap(m, sz); /* not ours to share: stay silent rather than compare apples and pears */
    oc->map = NULL;
    return NULL;
  }
  return oc;
}

static void publish(struct ls_online_comm *oc, const struct ls_trace_record *r) {
  const struct ls_api_desc *d = ls_api_desc_of(r->api);
  uint64_t k = oc->ncoll++;
  struct ls_fp *s = &row(oc, oc->rank)[k % LS_FP_SLOTS];
  __atomic_store_n(&s->tag, 0, __ATOMIC_RELEASE);
  s->count = r->count;
  s->dtype = r->dtype;
  s->redop = r->redop;
  s->root_or_peer = r->root_or_peer;
  s->kind = d ? d->kind : 0;
  s->op_class = ls_api_op_class(r->api);
  s->api = r->api;
  s->seq = r->seq;
  __atomic_store_n(&s->tag, k + 1, __ATOMIC_RELEASE);
}

static const char *name_of(uint64_t api) {
  const struct ls_api_desc *d = ls_api_desc_of((uint16_t)api);
  return d ? d->name : "?";
}

static int describe(char *buf, size_t cap, const struct ls_fp *f) {
  int n = snprintf(buf, cap, "%s(count=%llu, dtype=%d", name_of(f->api),
                   (unsigned long long)f->count, f->dtype);
  if (f->redop != LS_NO_VALUE)
    n += snprintf(buf + n, cap - (size_t)n, ", redop=%d", f->redop);
  if (f->root_or_peer != LS_NO_VALUE)
    n += snprintf(buf + n, cap - (size_t)n, ", %s=%d", f->kind == LS_KIND_P2P ? "peer" : "root",
                  f->root_or_peer);
  return n + snprintf(buf + n, cap - (size_t)n, ")");
}

/* 1 if the two collectives cannot be the same protocol instance. */
static int differ(const struct ls_fp *a, const struct ls_fp *b) {
  if (a->op_class != b->op_class)
    return 1;
  return a->count != b->count || a->dtype != b->dtype || a->redop != b->redop ||
         a->root_or_peer != b->root_or_peer;
}

static void report(struct ls_online_comm *oc, const struct ls_fp *mine, int peer,
                   const struct ls_fp *theirs) {
  uint64_t seq = mine->seq;
  oc->reported = 1;
  char a[160], b[160], msg[512];
  describe(a, sizeof a, mine);
  describe(b, sizeof b, theirs);
  /* Shaped like the watchdog's line ("seq K <api> on comm X ...") so one pattern
   * reads both. */
  int n = snprintf(msg, sizeof msg,
                   "lockstep: rank %d: seq %llu %s on comm %016llx differs from rank %d: %s here, "
                   "%s on rank %d\n",
                   oc->rank, (unsigned long long)seq, name_of(mine->api), (unsigned long long)oc->id,
                   peer, a, b, peer);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
  uint64_t ei;
  struct ls_trace_record *e = ls_rec_claim(&ei);
  if (e) {
    e->api = ls_g.mismatch_api;
    e->comm_id = oc->id;
    e->seq = LS_NO_SEQ;
    e->dtype = e->redop = e->root_or_peer = LS_NO_VALUE;
    e->comm_rank = oc->rank;
    e->comm_size = oc->size;
    e->t_enter_ns = e->t_exit_ns = ls_now_ns();
    e->aux0 = seq;
    e->aux1 = (uint64_t)peer;
    e->wtag = LS_WTAG_NONE;
    __atomic_store_n(&e->state, LS_REC_RETURNED, __ATOMIC_RELEASE);
  }
}

static void tick_locked(void);

/* Compares every seq both this rank and a peer have published, oldest first. */
static void check(struct ls_online_comm *oc) {
  if (oc->reported)
    return; /* one line per communicator: after the first difference all follow */
  struct ls_fp *mine = row(oc, oc->rank);
  /* The next ranks up, cyclically: ranks sharing a host are usually contiguous. */
  int npeers = oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
  for (int k = 1; k <= npeers; k++) {
    int p = (oc->rank + k) % oc->size;
    struct ls_fp *theirs = row(oc, p);
    uint64_t *next = &oc->checked[k - 1];
    for (;;) {
      struct ls_fp *x = &mine[*next % LS_FP_SLOTS], *y = &theirs[*next % LS_FP_SLOTS];
      uint64_t want = *next + 1;
      uint64_t tx = __atomic_load_n(&x->tag, __ATOMIC_ACQUIRE);
      if (tx > want) { /* we lapped our own ring before comparing that seq */
        (*next)++;
        continue;
      }
      if (tx != want)
        break;
      uint64_t ty = __atomic_load_n(&y->tag, __ATOMIC_ACQUIRE);
      if (ty > want) { /* the peer lapped the ring: that seq can no longer be compared */
        (*next)++;
        continue;
      }
      if (ty != want)
        break;
      struct ls_fp a = *x, b = *y;
      if (__atomic_load_n(&y->tag, __ATOMIC_ACQUIRE) != want)
        break; /* rewritten while copied: look again next tick */
      if (differ(&a, &b)) {
        report(oc, &a, p, &b);
        return;
      }
      (*next)++;
    }
  }
}

void ls_online_tick(void) {
  pthread_mutex_lock(&g_online_lock);
  if (online_on() && ls_g.hdr)
    tick_locked();
  pthread_mutex_unlock(&g_online_lock);
}

static void tick_locked(void) {
  uint64_t lim = ls_rec_limit();
  while (g_published < lim) {
    const struct ls_trace_record *r = &ls_g.recs[g_published];
    uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
    if (st == LS_REC_FREE) {
      /* being written: next tick; dropped for lack of disk space: skip it after ~1 s */
      if (g_free_index != g_published) {
        g_free_index = g_published;
        g_free_ticks = 0;
      }
      if (++g_free_ticks < 100)
        break;
    }
    g_published++;
    if (r->seq == LS_NO_SEQ || !r->comm_id)
      continue;
    /* Collectives only, numbered among themselves: send/recv counts may differ per
     * rank (rank 0 sends to two peers, each receives once) without any error, and
     * would shift the numbering of everything after them. */
    const struct ls_api_desc *d = ls_api_desc_of(r->api);
    if (!d || d->kind != LS_KIND_COLLECTIVE)
      continue;
    struct ls_online_comm *oc = comm_for(r->comm_id, r->comm_rank, r->comm_size);
    if (oc && r->comm_rank == oc->rank)
      publish(oc, r);
  }
  for (unsigned i = 0; i < g_ncomms; i++)
    if (g_comms[i].map)
      check(&g_comms[i]);
}

void ls_online_shutdown(void) {
  pthread_mutex_lock(&g_online_lock);
  for (unsigned i = 0; i < g_ncomms; i++)
    if (g_comms[i].map)
      unlink(g_comms[i].path);
  g_state = -1; /* the watchdog outlives the exit handler: no more ticks */
  pthread_mutex_unlock(&g_online_lock);
}

void ls_online_reset_after_fork(void) {
  pthread_mutex_init(&g_online_lock, NULL);
  g_ncomms = 0; /* the parent's mappings stay mapped but unused */
  g_published = 0;
}
