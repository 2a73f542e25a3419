/* online.c — the side channel: ranks of a communicator that share a host (or a
 * directory, see below) publish the fingerprints of their collectives into one shared
 * file, and each rank's watchdog compares its calls with the others' as soon as both
 * have issued seq k, and calls a skip early from the published progress plus device
 * completion — long before a timeout and without any barrier: application threads
 * are not involved, the watchdog publishes from the trace on its own thread.
 *
 * Channel: $LOCKSTEP_ONLINE_DIR, default <trace dir>/online, a 0700 directory of this
 * user; files online-<host>-<job key>-<comm id>.fp, 0600: a header page, then one row
 * per communicator rank: a status block (progress, idle, exited, pid) and a ring of
 * LS_FP_SLOTS fingerprints (slot = collective index % LS_FP_SLOTS), each published
 * seqlock-style and carrying a keyed hash (SipHash-2-4) over the per-job secret
 * LOCKSTEP_JOB_SECRET (set by `lockstep run`), the communicator and the rank. A message
 * that fails validation is rejected, reported once, and its rank no longer compared.
 * A channel that cannot be set up says so once; traces are written as always.
 * Only collectives are compared, numbered among themselves (send/recv counts may
 * legitimately differ per rank). Every process unlinks the files it used at exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define LS_FP_SLOTS 1024u
#define LS_FP_MAGIC 0x32504650534cull /* "LSPFP2" */
#define LS_FP_VERSION 2u
#define LS_ONLINE_COMMS 64u
#define LS_ONLINE_PEERS 16u
#define LS_HDR_PAGE 4096u

struct ls_fp { /* 96 bytes */
  uint64_t tag; /* collective index + 1 once published; 0 while written or empty */
  uint64_t seq; /* the call's seq in the trace (collectives and send/recv numbered) */
  uint64_t count;
  uint64_t index;    /* the publisher's trace record index */
  uint64_t site_off; /* call site: offset in `module` */
  uint64_t api;      /* the api id (same library build on every rank of a job) */
  int32_t dtype, redop, root_or_peer;
  uint16_t op_class, kind;
  char module[24]; /* basename of the call site's module */
  uint64_t mac;
};

#define ST_IDLE 1u       /* nothing pending in the publisher */
#define ST_EXITED 2u     /* the publisher has exited (or finalized) */
#define ST_OTHER_AFTER 4u /* it issued sequenced calls elsewhere after its last one here */
struct ls_fp_status { /* 64 bytes */
  uint64_t gen;   /* odd while written */
  uint64_t ncoll; /* collectives issued on this communicator */
  uint64_t t_update;
  int32_t pid;
  uint32_t flags;
  uint64_t pad[3];
  uint64_t mac;
};

struct ls_fp_header {
  uint64_t magic;
  uint32_t version;
  int32_t size;
  uint64_t comm_id;
  uint64_t apis; /* hash of the creator's api table: a file of another build is not used */
  uint64_t mac;
};

_Static_assert(sizeof(struct ls_fp) == 96, "fp size");
_Static_assert(sizeof(struct ls_fp_status) == 64, "status size");

#define ROW_SIZE (sizeof(struct ls_fp_status) + LS_FP_SLOTS * sizeof(struct ls_fp))

struct ls_online_comm {
  uint64_t id;
  int rank, size;
  void *map;
  size_t map_size;
  char path[640];
  uint64_t ncoll;                    /* collectives published so far */
  uint64_t last_index;               /* trace index of the last one */
  uint32_t st_flags;                 /* last status published */
  uint64_t checked[LS_ONLINE_PEERS]; /* per peer: next collective index to compare */
  uint64_t bad_peers;                /* peers whose messages were rejected (bit per peer slot) */
  int reported;                      /* a mismatch or skip was reported */
  int slow_noted;
};

static struct ls_online_comm g_comms[LS_ONLINE_COMMS];
static unsigned g_ncomms;
static uint64_t g_published; /* trace records [0, g_published) looked at */
static uint64_t g_last_seq_index; /* trace index of the latest sequenced call, +1 */
static int g_state;          /* 0 unknown, 1 on, -1 off */
/* Between the watchdog's tick and the exit handler only; no application thread. */
static pthread_mutex_t g_online_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_free_index = UINT64_MAX;
static unsigned g_free_ticks;
static uint64_t g_skip_ns = 500000000ull;
static int g_stamp; /* LOCKSTEP_ONLINE_TIMESTAMPS=1: monotonic time on report lines */
static int g_noticed;

static uint64_t g_job;  /* key shared by the ranks of one job run, see job_key() */
static uint64_t g_apis; /* hash of the api table: ranks must number apis alike */
static uint64_t g_key[2];
static char g_dir[480];
static int g_dir_ours; /* the default <trace dir>/online: removed by the last one out */

/* ---- SipHash-2-4 (keyed; the per-job secret is the key) ----------------------------- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                           \
  do {                                                                                     \
    v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                              \
    v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                 \
    v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                 \
    v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                              \
  } while (0)

static uint64_t siphash(const uint64_t k[2], const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
  uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
  uint64_t b = (uint64_t)len << 56;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t m;
    memcpy(&m, p + i, 8);
    v3 ^= m;
    SIPROUND;
    SIPROUND;
    v0 ^= m;
  }
  for (size_t j = 0; i + j < len; j++)
    b |= (uint64_t)p[i + j] << (8 * j);
  v3 ^= b;
  SIPROUND;
  SIPROUND;
  v0 ^= b;
  v2 ^= 0xff;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  return v0 ^ v1 ^ v2 ^ v3;
}

/* MAC of a message (all but its trailing mac field), bound to communicator and rank so
 * a valid row cannot be replayed as another rank's or another communicator's. */
static uint64_t mac_of(const void *msg, size_t size, uint64_t comm, int rank) {
  unsigned char buf[128];
  size_t n = size - sizeof(uint64_t);
  memcpy(buf, &comm, 8);
  int64_t r = rank;
  memcpy(buf + 8, &r, 8);
  memcpy(buf + 16, msg, n);
  return siphash(g_key, buf, n + 16);
}

/* ---- setup -------------------------------------------------------------------------- */

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

static void notice_off(const char *why, const char *what) {
  if (g_noticed++)
    return;
  char msg[768];
  int n = snprintf(msg, sizeof msg,
                   "lockstep: online check off: %s %s; the trace is still written (compare "
                   "traces with `lockstep compare`)\n",
                   why, what);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The key: LOCKSTEP_JOB_SECRET (32 hex digits, set by `lockstep run`); without it a
 * key derived from the job key, which only detects corruption (the directory mode is
 * then the only protection). */
static void load_key(void) {
  const char *s = getenv("LOCKSTEP_JOB_SECRET");
  g_key[0] = ls_hash_u64(0x6b6579, g_job);
  g_key[1] = ls_hash_u64(0x6b657932, g_job);
  if (!s || strlen(s) != 32)
    return;
  uint64_t k[2] = {0, 0};
  for (int i = 0; i < 32; i++) {
    int v = hexval((unsigned char)s[i]);
    if (v < 0)
      return;
    k[i / 16] = k[i / 16] << 4 | (uint64_t)v;
  }
  g_key[0] = k[0];
  g_key[1] = k[1];
}

/* The channel directory: created 0700 if missing; an existing one must be this
 * user's and closed to others, or nobody else's messages could be ruled out. */
static int setup_dir(void) {
  const char *d = getenv("LOCKSTEP_ONLINE_DIR");
  if (d && *d)
    snprintf(g_dir, sizeof g_dir, "%s", d);
  else {
    const char *t = getenv("LOCKSTEP_TRACE_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/online", t && *t ? t : "lockstep-traces");
    g_dir_ours = 1;
  }
  if (mkdir(g_dir, 0700) != 0 && errno != EEXIST) {
    char why[600];
    snprintf(why, sizeof why, "cannot create the side-channel directory %s:", g_dir);
    notice_off(why, strerror(errno));
    return -1;
  }
  struct stat st;
  if (lstat(g_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 077)) {
    char why[600];
    snprintf(why, sizeof why, "side-channel directory %s", g_dir);
    notice_off(why, "is not a directory of this user closed to others (mode 0700)");
    return -1;
  }
  return 0;
}

static int online_on(void) {
  if (!g_state) {
    const char *v = getenv("LOCKSTEP_ONLINE");
    g_state = v && !strcmp(v, "0") ? -1 : 1;
    g_job = job_key();
    load_key();
    for (uint16_t a = 0; ls_api_desc_of(a); a++)
      g_apis = ls_hash_bytes(g_apis, ls_api_desc_of(a)->name, strlen(ls_api_desc_of(a)->name) + 1);
    const char *sk = getenv("LOCKSTEP_SKIP_MS");
    if (sk && *sk)
      g_skip_ns = (uint64_t)strtoull(sk, NULL, 10) * 1000000ull;
    const char *ts = getenv("LOCKSTEP_ONLINE_TIMESTAMPS");
    g_stamp = ts && !strcmp(ts, "1");
  }
  return g_state > 0;
}

static struct ls_fp_status *status_of(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp_status *)((char *)oc->map + LS_HDR_PAGE + (size_t)rank * ROW_SIZE);
}

static struct ls_fp *row(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp *)(status_of(oc, rank) + 1);
}

static void reject(struct ls_online_comm *oc, int from, const char *what) {
  char msg[768];
  int n = from >= 0
              ? snprintf(msg, sizeof msg,
                         "lockstep: rank %d: side channel %s: rejected %s from rank %d (foreign "
                         "or corrupted); rank %d is no longer checked online\n",
                         oc->rank, oc->path, what, from, from)
              : snprintf(msg, sizeof msg,
                         "lockstep: rank %d: side channel %s: rejected %s (foreign or "
                         "corrupted); online check off for comm %016llx\n",
                         oc->rank, oc->path, what, (unsigned long long)oc->id);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static struct ls_online_comm *comm_for(uint64_t id, int rank, int size) {
  for (unsigned i = 0; i < g_ncomms; i++)
    if (g_comms[i].id == id)
      return g_comms[i].map ? &g_comms[i] : NULL;
  if (g_ncomms == LS_ONLINE_COMMS || rank < 0 || size <= 1 || rank >= size)
    return NULL;
  static int dir_state; /* made when a first communicator needs it: 1 ok, -1 not usable */
  if (!dir_state)
    dir_state = setup_dir() == 0 ? 1 : -1;
  if (dir_state < 0) {
    g_state = -1;
    return NULL;
  }
  struct ls_online_comm *oc = &g_comms[g_ncomms++];
  memset(oc, 0, sizeof *oc);
  oc->id = id; /* remembered even if mapping fails, so it is tried once */
  oc->rank = rank;
  oc->size = size;
  /* The host is in the name: ranks elsewhere sharing that directory over a network
   * filesystem must not share the mapping (it is not coherent across hosts). */
  snprintf(oc->path, sizeof oc->path, "%s/online-%s-%016llx-%016llx.fp", g_dir,
           ls_g.hdr->hostname, (unsigned long long)g_job, (unsigned long long)id);
  size_t sz = LS_HDR_PAGE + (size_t)size * ROW_SIZE;
  int fd = open(oc->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    notice_off("cannot open", oc->path);
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) ||
      !S_ISREG(st.st_mode)) {
    close(fd);
    reject(oc, -1, "a file not private to this user");
    return NULL;
  }
  if (st.st_size < (off_t)sz && ftruncate(fd, (off_t)sz) != 0) {
    close(fd);
    notice_off("cannot size", oc->path);
    return NULL;
  }
  /* Reserve this rank's row (and the header) so publishing cannot SIGBUS on a full
   * disk; other rows are only read where their owners wrote them. */
  if ((fallocate(fd, 0, 0, LS_HDR_PAGE) != 0 && errno == ENOSPC) ||
      (fallocate(fd, 0, (off_t)(LS_HDR_PAGE + (size_t)rank * ROW_SIZE), (off_t)ROW_SIZE) != 0 &&
       errno == ENOSPC)) {
    close(fd);
    notice_off("no space for", oc->path);
    return NULL;
  }
  void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    notice_off("cannot map", oc->path);
    return NULL;
  }
  oc->map = m;
  oc->map_size = sz;
  struct ls_fp_header *h = m;
  uint64_t zero = 0;
  if (__atomic_compare_exchange_n(&h->magic, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    h->version = LS_FP_VERSION;
    h->comm_id = id;
    h->size = size;
    h->apis = g_apis;
    struct ls_fp_header v = *h;
    v.magic = LS_FP_MAGIC; /* as readers will see it */
    h->mac = mac_of(&v, sizeof v, id, -1);
    __atomic_store_n(&h->magic, LS_FP_MAGIC, __ATOMIC_RELEASE);
  }
  for (int spin = 0; __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == 1 && spin < 1000; spin++)
    usleep(100); /* another rank is writing the header */
  struct ls_fp_header c = *h;
  uint64_t want = c.mac;
  c.magic = LS_FP_MAGIC;
  if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != LS_FP_MAGIC || c.version != LS_FP_VERSION ||
      c.comm_id != id || c.size != size || mac_of(&c, sizeof c, id, -1) != want) {
    reject(oc, -1, "its header");
    munmap(m, sz);
    oc->map = NULL;
    return NULL;
  }
  if (c.apis != g_apis) { /* another lockstep build: not comparable, not hostile */
    munmap(m, sz);
    oc->map = NULL;
    return NULL;
  }
  return oc;
}

/* ---- publishing (watchdog thread) --------------------------------------------------- */

static struct {
  uint64_t pc, base;
  char name[24];
} g_sites[32];

static void site_of(uint64_t pc, struct ls_fp *s) {
  unsigned h = (unsigned)((pc >> 4) % 32);
  if (g_sites[h].pc != pc || !pc) {
    Dl_info di;
    g_sites[h].pc = pc;
    g_sites[h].base = 0;
    snprintf(g_sites[h].name, sizeof g_sites[h].name, "?");
    if (pc && dladdr((void *)(uintptr_t)pc, &di) && di.dli_fname) {
      const char *b = strrchr(di.dli_fname, '/');
      snprintf(g_sites[h].name, sizeof g_sites[h].name, "%s", b ? b + 1 : di.dli_fname);
      g_sites[h].base = (uint64_t)(uintptr_t)di.dli_fbase;
    }
  }
  memcpy(s->module, g_sites[h].name, sizeof s->module);
  s->site_off = pc - g_sites[h].base;
}

static void publish(struct ls_online_comm *oc, const struct ls_trace_record *r, uint64_t index) {
  const struct ls_api_desc *d = ls_api_desc_of(r->api);
  uint64_t k = oc->ncoll++;
  oc->last_index = index;
  struct ls_fp f;
  memset(&f, 0, sizeof f);
  f.tag = k + 1;
  f.count = r->count;
  f.dtype = r->dtype;
  f.redop = r->redop;
  f.root_or_peer = r->root_or_peer;
  f.kind = d ? d->kind : 0;
  f.op_class = ls_api_op_class(r->api);
  f.api = r->api;
  f.seq = r->seq;
  f.index = index;
  site_of(r->site_pc, &f);
  f.mac = mac_of(&f, sizeof f, oc->id, oc->rank);
  struct ls_fp *s = &row(oc, oc->rank)[k % LS_FP_SLOTS];
  __atomic_store_n(&s->tag, 0, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy((char *)s + 8, (char *)&f + 8, sizeof f - 8);
  __atomic_store_n(&s->tag, k + 1, __ATOMIC_RELEASE);
}

static void publish_status(struct ls_online_comm *oc, uint32_t flags) {
  struct ls_fp_status *s = status_of(oc, oc->rank);
  if (s->ncoll == oc->ncoll && oc->st_flags == flags && s->gen)
    return;
  oc->st_flags = flags;
  struct ls_fp_status v;
  memset(&v, 0, sizeof v);
  v.gen = (s->gen | 1) + 1; /* even: complete */
  v.ncoll = oc->ncoll;
  v.t_update = ls_now_ns();
  v.pid = (int32_t)getpid();
  v.flags = flags;
  v.mac = mac_of(&v, sizeof v, oc->id, oc->rank);
  __atomic_store_n(&s->gen, v.gen - 1, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy((char *)s + 8, (char *)&v + 8, sizeof v - 8);
  __atomic_store_n(&s->gen, v.gen, __ATOMIC_RELEASE);
}

/* ---- checking ----------------------------------------------------------------------- */

static const char *name_of(uint64_t api) {
  const struct ls_api_desc *d = api < LS_MAX_APIS ? ls_api_desc_of((uint16_t)api) : NULL;
  return d ? d->name : "?";
}

static int describe(char *buf, size_t cap, const struct ls_fp *f) {
  char mod[sizeof f->module + 1];
  memcpy(mod, f->module, sizeof f->module);
  mod[sizeof f->module] = 0;
  int n = snprintf(buf, cap, "%s(count=%llu, dtype=%d", name_of(f->api),
                   (unsigned long long)f->count, f->dtype);
  if (f->redop != LS_NO_VALUE)
    n += snprintf(buf + n, cap - (size_t)n, ", redop=%d", f->redop);
  if (f->root_or_peer != LS_NO_VALUE)
    n += snprintf(buf + n, cap - (size_t)n, ", %s=%d", f->kind == LS_KIND_P2P ? "peer" : "root",
                  f->root_or_peer);
  return n + snprintf(buf + n, cap - (size_t)n, ") at %s+0x%llx", mod,
                      (unsigned long long)f->site_off);
}

/* 1 if the two collectives cannot be the same protocol instance. */
static int differ(const struct ls_fp *a, const struct ls_fp *b) {
  if (a->op_class != b->op_class)
    return 1;
  return a->count != b->count || a->dtype != b->dtype || a->redop != b->redop ||
         a->root_or_peer != b->root_or_peer;
}

static const char *class_of(const struct ls_fp *a, const struct ls_fp *b) {
  if (a->op_class != b->op_class)
    return "op-mismatch";
  if (a->count != b->count)
    return "count-mismatch";
  if (a->dtype != b->dtype)
    return "dtype-mismatch";
  if (a->redop != b->redop)
    return "redop-mismatch";
  return a->kind == LS_KIND_P2P ? "peer-mismatch" : "root-mismatch";
}

static void say(char *msg, int n, size_t cap) {
  if (g_stamp && n > 0 && (size_t)n < cap) {
    uint64_t t = ls_now_ns();
    n--; /* before the newline */
    n += snprintf(msg + n, cap - (size_t)n, " [t=%llu.%09llu]\n",
                  (unsigned long long)(t / 1000000000ull), (unsigned long long)(t % 1000000000ull));
  }
  if (n > 0)
    (void)!write(2, msg, (size_t)n < cap ? (size_t)n : cap - 1);
}

static void event(struct ls_online_comm *oc, uint64_t seq, int peer, int32_t what) {
  uint64_t ei;
  struct ls_trace_record *e = ls_rec_claim(&ei);
  if (!e)
    return;
  e->api = ls_g.mismatch_api;
  e->comm_id = oc->id;
  e->seq = LS_NO_SEQ;
  e->dtype = e->redop = e->root_or_peer = LS_NO_VALUE;
  e->comm_rank = oc->rank;
  e->comm_size = oc->size;
  e->t_enter_ns = e->t_exit_ns = ls_now_ns();
  e->aux0 = seq;
  e->aux1 = (uint64_t)(uint32_t)peer | (uint64_t)what << 32; /* what: 0 mismatch, 1 skip */
  e->wtag = LS_WTAG_NONE;
  __atomic_store_n(&e->state, LS_REC_RETURNED, __ATOMIC_RELEASE);
}

static void report(struct ls_online_comm *oc, const struct ls_fp *mine, int peer,
                   const struct ls_fp *theirs) {
  uint64_t seq = mine->seq;
  oc->reported = 1;
  char a[200], b[200], msg[768];
  describe(a, sizeof a, mine);
  describe(b, sizeof b, theirs);
  /* Shaped like the watchdog's line ("seq K <api> on comm X ...") so one pattern
   * reads both. */
  int n = snprintf(msg, sizeof msg,
                   "lockstep: rank %d: seq %llu %s on comm %016llx differs from rank %d "
                   "(%s): %s here, %s on rank %d\n",
                   oc->rank, (unsigned long long)seq, name_of(mine->api), (unsigned long long)oc->id,
                   peer, class_of(mine, theirs), a, b, peer);
  say(msg, n, sizeof msg);
  event(oc, seq, peer, 0);
  ls_trace_sync();
  ls_apply_policy(oc->id);
}

/* A stable, authentic copy of a peer's slot: 1 ok, 0 not there (yet), -1 rejected. */
static int read_fp(struct ls_online_comm *oc, int p, uint64_t idx, struct ls_fp *out) {
  struct ls_fp *y = &row(oc, p)[idx % LS_FP_SLOTS];
  uint64_t want = idx + 1;
  uint64_t ty = __atomic_load_n(&y->tag, __ATOMIC_ACQUIRE);
  if (ty != want)
    return ty > want ? 2 : 0;
  memcpy(out, y, sizeof *out);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (__atomic_load_n(&y->tag, __ATOMIC_ACQUIRE) != want)
    return 0; /* rewritten while copied: look again next tick */
  out->tag = want;
  if (mac_of(out, sizeof *out, oc->id, p) != out->mac || !ls_api_desc_of((uint16_t)out->api) ||
      out->api >= LS_MAX_APIS)
    return -1;
  return 1;
}

static int read_status(struct ls_online_comm *oc, int p, struct ls_fp_status *out) {
  struct ls_fp_status *s = status_of(oc, p);
  for (int tries = 0; tries < 4; tries++) {
    uint64_t g = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
    if (!g)
      return 0; /* not published yet */
    if (g & 1)
      continue;
    memcpy(out, s, sizeof *out);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != g)
      continue;
    out->gen = g;
    return mac_of(out, sizeof *out, oc->id, p) == out->mac ? 1 : -1;
  }
  return 0;
}

/* The call this rank published as collective `k` (a copy of its own slot). */
static int my_fp(struct ls_online_comm *oc, uint64_t k, struct ls_fp *out) {
  struct ls_fp *x = &row(oc, oc->rank)[k % LS_FP_SLOTS];
  if (__atomic_load_n(&x->tag, __ATOMIC_ACQUIRE) != k + 1)
    return 0;
  *out = *x;
  return 1;
}

/* A peer that has not issued collective k while this rank's k is stuck on the device:
 * skipped when it has moved on (exited, idle, calls elsewhere), slow otherwise. */
static void check_skip(struct ls_online_comm *oc, int p, unsigned slot, uint64_t now) {
  struct ls_fp_status st;
  int rs = read_status(oc, p, &st);
  if (rs < 0) {
    oc->bad_peers |= 1ull << slot;
    reject(oc, p, "a status message");
    return;
  }
  if (rs == 0 || st.ncoll >= oc->ncoll)
    return;
  struct ls_fp mine;
  if (!my_fp(oc, st.ncoll, &mine) || mine.index >= ls_rec_limit())
    return;
  const struct ls_trace_record *r = &ls_g.recs[mine.index];
  if (ls_rec_pending(r) <= 0 || now - r->t_enter_ns <= g_skip_ns)
    return; /* done, or not waiting long enough to ask */
  int exited = (st.flags & ST_EXITED) || (st.pid > 0 && kill(st.pid, 0) != 0 && errno == ESRCH);
  int moved = exited || (st.flags & (ST_IDLE | ST_OTHER_AFTER));
  char msg[768];
  int n;
  if (!moved) {
    if (oc->slow_noted)
      return;
    oc->slow_noted = 1;
    n = snprintf(msg, sizeof msg,
                 "lockstep: rank %d: seq %llu %s on comm %016llx waiting %.1f s for rank %d, "
                 "which is slow (has issued %llu collectives here, still busy); not an error "
                 "yet\n",
                 oc->rank, (unsigned long long)mine.seq, name_of(mine.api),
                 (unsigned long long)oc->id, (double)(now - r->t_enter_ns) / 1e9, p,
                 (unsigned long long)st.ncoll);
    say(msg, n, sizeof msg);
    return;
  }
  oc->reported = 1;
  char a[200];
  describe(a, sizeof a, &mine);
  n = snprintf(msg, sizeof msg,
               "lockstep: rank %d: seq %llu %s on comm %016llx: rank %d skipped seq %llu (skip): "
               "%s here, not complete after %.1f s; rank %d %s after %llu collectives here\n",
               oc->rank, (unsigned long long)mine.seq, name_of(mine.api), (unsigned long long)oc->id,
               p, (unsigned long long)mine.seq, a, (double)(now - r->t_enter_ns) / 1e9, p,
               exited                          ? "exited"
               : (st.flags & ST_OTHER_AFTER) ? "went on to calls on other communicators"
                                               : "returned from everything",
               (unsigned long long)st.ncoll);
  say(msg, n, sizeof msg);
  event(oc, mine.seq, p, 1);
  ls_trace_sync();
  ls_apply_policy(oc->id);
}

/* Compares every seq both this rank and a peer have published, oldest first. */
static void check(struct ls_online_comm *oc, uint64_t now) {
  if (oc->reported)
    return; /* one line per communicator: after the first difference all follow */
  struct ls_fp *mine = row(oc, oc->rank);
  /* The next ranks up, cyclically: ranks sharing a host are usually contiguous. */
  int npeers = oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
  for (int k = 1; k <= npeers; k++) {
    int p = (oc->rank + k) % oc->size;
    if (oc->bad_peers & (1ull << (k - 1)))
      continue;
    uint64_t *next = &oc->checked[k - 1];
    for (;;) {
      struct ls_fp *x = &mine[*next % LS_FP_SLOTS];
      uint64_t want = *next + 1;
      uint64_t tx = __atomic_load_n(&x->tag, __ATOMIC_ACQUIRE);
      if (tx > want) { /* we lapped our own ring before comparing that seq */
        (*next)++;
        continue;
      }
      if (tx != want)
        break;
      struct ls_fp a = *x, b;
      int rc = read_fp(oc, p, *next, &b);
      if (rc == 2) { /* the peer lapped the ring: that seq can no longer be compared */
        (*next)++;
        continue;
      }
      if (rc < 0) {
        oc->bad_peers |= 1ull << (k - 1);
        reject(oc, p, "a fingerprint");
        break;
      }
      if (rc == 0)
        break;
      if (differ(&a, &b)) {
        report(oc, &a, p, &b);
        return;
      }
      (*next)++;
    }
    if (!(oc->bad_peers & (1ull << (k - 1))))
      check_skip(oc, p, (unsigned)(k - 1), now);
    if (oc->reported)
      return;
  }
}

static void tick_locked(int idle);

void ls_online_tick(int idle) {
  pthread_mutex_lock(&g_online_lock);
  if (online_on() && ls_g.hdr)
    tick_locked(idle);
  pthread_mutex_unlock(&g_online_lock);
}

static void tick_locked(int idle) {
  {
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
        uint64_t index = g_published++;
        if (r->seq == LS_NO_SEQ || !r->comm_id)
          continue;
        g_last_seq_index = index + 1;
        /* Collectives only, numbered among themselves: send/recv counts may differ per
         * rank (rank 0 sends to two peers, each receives once) without any error, and
         * would shift the numbering of everything after them. */
        const struct ls_api_desc *d = ls_api_desc_of(r->api);
        if (!d || d->kind != LS_KIND_COLLECTIVE)
          continue;
        struct ls_online_comm *oc = comm_for(r->comm_id, r->comm_rank, r->comm_size);
        if (oc && r->comm_rank == oc->rank)
          publish(oc, r, index);
      }
      uint64_t now = ls_now_ns();
      for (unsigned i = 0; i < g_ncomms; i++) {
        struct ls_online_comm *oc = &g_comms[i];
        if (!oc->map)
          continue;
        uint32_t flags = (idle && g_published == lim ? ST_IDLE : 0) |
                         (g_last_seq_index > oc->last_index + 1 ? ST_OTHER_AFTER : 0);
        publish_status(oc, flags);
        check(oc, now);
      }
  }
}

void ls_online_shutdown(void) {
  pthread_mutex_lock(&g_online_lock);
  if (online_on() && ls_g.hdr) {
    tick_locked(0); /* what was issued since the last tick, then exited */
    /* The last one out unlinks: a rank that exits early (the skip case) must stay
     * visible, exited, to a rank that maps the file later. */
    for (unsigned i = 0; i < g_ncomms; i++) {
      struct ls_online_comm *oc = &g_comms[i];
      if (!oc->map)
        continue;
      publish_status(oc, oc->st_flags | ST_EXITED);
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      int others = 0;
      for (int p = 0; p < oc->size; p++) {
        struct ls_fp_status st;
        if (p != oc->rank && (read_status(oc, p, &st) <= 0 || (!(st.flags & ST_EXITED) &&
            !(st.pid > 0 && kill(st.pid, 0) != 0 && errno == ESRCH))))
          others++; /* running, or not arrived yet: it still needs the file */
      }
      if (!others)
        unlink(oc->path);
    }
    if (g_ncomms && g_dir_ours)
      rmdir(g_dir); /* the last one out removes it (fails while others remain) */
  }
  g_state = -1; /* the watchdog outlives the exit handler: no more ticks */
  pthread_mutex_unlock(&g_online_lock);
}

void ls_online_reset_after_fork(void) {
  pthread_mutex_init(&g_online_lock, NULL);
  g_ncomms = 0; /* the parent's mappings stay mapped but unused */
  g_published = 0;
  g_last_seq_index = 0;
}
