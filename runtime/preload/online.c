/* online.c — the side channel: ranks of a communicator publish the fingerprints of
 * their collectives, and each rank's watchdog compares its calls with the others' as
 * soon as both have issued seq k, and calls a skip early from the published progress
 * plus device completion — long before a timeout and without any barrier: application
 * threads are not involved, the watchdog publishes from the trace on its own thread.
 *
 * Two transports in one directory, $LOCKSTEP_ONLINE_DIR (default <trace dir>/online),
 * 0700, this user's:
 *  - same host: one shared file per communicator, online-<host key>-<job key>-<comm>.fp,
 *    0600, mapped: a header page, then per rank a status block (progress, idle, exited,
 *    pid) and a ring of LS_FP_SLOTS fingerprints (slot = collective index % LS_FP_SLOTS),
 *    each published seqlock-style;
 *  - across hosts (the directory on a shared filesystem): one append-only log per rank,
 *    x-<job key>-<comm>-r<rank>.log, written in batches by open/append/close and read
 *    by open/pread/close at most every LOCKSTEP_ONLINE_DIR_POLL_MS — NFS guarantees
 *    close-to-open consistency, not a coherent mapping. A rank logs while one of the
 *    ranks that compare with it is not on its host's file; it reads the log of a peer
 *    that is not on its host's file, at most LS_DIR_PEERS of them (equality is
 *    transitive: rank r always checking r+1 covers every pair).
 * Every message carries a keyed hash (SipHash-2-4) over the per-job secret
 * LOCKSTEP_JOB_SECRET (set by `lockstep run`), the communicator and the rank. A message
 * that fails validation is rejected, reported once, and its rank no longer compared.
 * A channel that cannot be set up says so once; traces are written as always.
 * Only collectives are compared, numbered among themselves (send/recv counts may
 * legitimately differ per rank). The last process out unlinks the files.
 * lockstep_online_set_enabled() pauses publishing at a point of the trace (the
 * recorder keeps recording): paused collectives are not numbered, and every
 * fingerprint says how many were, so ranks that paused at different calls are told
 * apart from a divergence. */
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
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "fingerprint.h"

_Static_assert(LS_FP_KIND_P2P == LS_KIND_P2P, "fingerprint.h's p2p kind");

#define LS_FP_SLOTS 1024u
#define LS_FP_MAGIC 0x32504650534cull /* "LSPFP2" */
#define LS_FP_VERSION 3u /* 3: api is 32 bits, followed by `paused` */
#define LS_ONLINE_COMMS 64u
#define LS_ONLINE_PEERS 16u
#define LS_HDR_PAGE 4096u
#define LS_DIR_PEERS 2u        /* remote peers read per communicator (r+1 always one) */
#define LS_DIR_BATCH 512u      /* log records buffered between two appends */
#define LS_DIR_READ 2048u      /* log records read per peer per poll */
#define LS_DIR_MAGIC 0x5244534cu /* "LSDR" */
#define LS_DIR_NOTSEEN_NS 10000000000ull
#define LS_TOGGLES 1024u       /* pause/resume points not yet reached by the publisher */

struct ls_fp { /* 96 bytes */
  uint64_t tag; /* collective index + 1 once published; 0 while written or empty */
  uint64_t seq; /* the call's seq in the trace (collectives and send/recv numbered) */
  uint64_t count;
  uint64_t index;    /* the publisher's trace record index */
  uint64_t site_off; /* call site: offset in `module` */
  uint32_t api;      /* the api id (same library build on every rank of a job) */
  /* Collectives of the publisher on this communicator issued before this one while
   * its check was paused (not numbered): two ranks' k-th fingerprints are the same
   * call only when this is equal too. */
  uint32_t paused;
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

/* One record of a rank's log (the cross-host transport). */
enum { DR_HELLO = 1, DR_FP = 2, DR_STATUS = 3 };
struct ls_dir_hello {
  uint64_t host; /* the writer's host key */
  uint64_t comm;
  uint64_t apis;
  int32_t size, rank;
  char name[64]; /* its host name, for messages */
};
struct ls_dir_rec { /* 128 bytes */
  uint32_t magic;
  uint16_t type, version;
  uint64_t n; /* record number in the log, from 0: a record cannot be moved or replayed */
  union {
    struct ls_fp fp;         /* its own mac unused: the record's covers it */
    struct ls_fp_status st;
    struct ls_dir_hello hello;
  } u;
  uint64_t pad;
  uint64_t mac;
};
_Static_assert(sizeof(struct ls_dir_rec) == 128, "dir record size");

/* A peer whose fingerprints come from its log. */
struct ls_remote {
  /* 0 not seen yet, 1 remote (read), 2 same host, 3 remote (not read), -1 rejected */
  int state;
  uint64_t off;     /* bytes of its log consumed */
  uint64_t nrec;    /* records consumed */
  uint64_t nfp;     /* fingerprints received */
  uint64_t t_probe; /* last look at its log */
  uint64_t t_bad;   /* since when the next record fails validation (0: it does not) */
  int have_st;
  struct ls_fp_status st;
  char host[64];
  struct ls_fp *ring; /* LS_FP_SLOTS, by fingerprint index (state 1) */
};

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
  uint64_t apart;                    /* peers that paused at other calls (bit per peer slot) */
  uint64_t paused;                   /* collectives not published: the check was paused */
  int reported;                      /* a mismatch or skip was reported */
  int slow_noted;
  /* across hosts */
  int dir_pub;                          /* our log: 1 written, 0 not needed, -1 failed */
  int dir_decided;
  struct ls_dir_rec *dbuf;              /* LS_DIR_BATCH records waiting for the next append */
  unsigned dn;
  uint64_t dseq;                        /* records appended to our log */
  uint64_t d_ncoll;                     /* progress and flags of the last status logged */
  uint32_t d_flags;
  int d_logged;
  uint64_t t_dir, t_first;              /* last log I/O; first publish */
  struct ls_remote *rem[LS_ONLINE_PEERS]; /* per peer slot, once it is not on our file */
  unsigned nread;                       /* remote peers read (state 1) */
  char log[640];
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
static int g_stats; /* LOCKSTEP_ONLINE_STATS=1: published/paused counts at exit */

/* Pause points (lockstep_online_set_enabled): the trace index from which the check is
 * paused or resumed, queued by the application's thread, consumed by the publisher
 * when its walk of the trace reaches that index (both under g_online_lock). */
static struct {
  uint64_t at;
  int on;
} g_tog[LS_TOGGLES];
static uint64_t g_tog_head, g_tog_tail;
static int g_want_on = 1; /* as the application last set it */
static int g_paused;      /* at the publisher's position in the trace */

static uint64_t g_job;  /* key shared by the ranks of one job run, see job_key() */
static uint64_t g_apis; /* hash of the api table: ranks must number apis alike */
static uint64_t g_key[2];
static char g_dir[480];
static int g_dir_ours; /* the default <trace dir>/online: removed by the last one out */
static uint64_t g_host;      /* host key: ranks with the same key share the mapped file */
static int g_xhost = 1;      /* LOCKSTEP_ONLINE_CROSSHOST=0: no logs */
static uint64_t g_dir_period_ns = 50000000ull;
static int g_xnoticed;       /* one notice per process about the cross-host transport */

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
  unsigned char buf[160];
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

/* Processes with the same host key map one file (coherent only within a kernel): the
 * host name plus the kernel's boot id, so two machines that share a name and a
 * network directory do not; LOCKSTEP_ONLINE_HOST replaces both (tests simulate
 * hosts with it; containers of one machine can share a key with it). */
static uint64_t host_key(void) {
  const char *o = getenv("LOCKSTEP_ONLINE_HOST");
  if (o && *o)
    return ls_hash_bytes(0x686f7374, o, strlen(o));
  uint64_t h = ls_hash_bytes(0x686f7374, ls_g.hdr->hostname,
                             strnlen(ls_g.hdr->hostname, sizeof ls_g.hdr->hostname));
  char boot[64] = "";
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    /* once, at setup (under the online lock): a /proc read does not block on anything */
    ssize_t n = read(fd, boot, sizeof boot - 1); // NOLINT(clang-analyzer-unix.BlockInCriticalSection)
    close(fd);
    if (n > 0)
      h = ls_hash_bytes(h, boot, (uint64_t)n);
  }
  return h;
}

static void host_name(char *out, size_t cap) {
  const char *o = getenv("LOCKSTEP_ONLINE_HOST");
  snprintf(out, cap, "%s", o && *o ? o : ls_g.hdr->hostname);
}

/* File names carry an id of the key (a MAC of a constant no message has the length
 * of): a file left by an earlier run (killed, same trace directory and launcher ids)
 * or written by a job with another secret is never opened, rather than rejected as
 * foreign — which would turn the check off — or, with the same secret, trusted. */
static uint64_t key_id(void) {
  static const char what[] = "lockstep file name";
  return siphash(g_key, what, sizeof what - 1);
}

/* Rank q's log in communicator `comm`. */
static void log_path(char *out, size_t cap, uint64_t comm, int q) {
  snprintf(out, cap, "%s/x-%016llx-%016llx-%016llx-r%d.log", g_dir, (unsigned long long)g_job,
           (unsigned long long)key_id(), (unsigned long long)comm, q);
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
    const char *sv = getenv("LOCKSTEP_ONLINE_STATS");
    g_stats = sv && !strcmp(sv, "1");
    const char *x = getenv("LOCKSTEP_ONLINE_CROSSHOST");
    g_xhost = !(x && !strcmp(x, "0"));
    const char *dp = getenv("LOCKSTEP_ONLINE_DIR_POLL_MS");
    if (dp && *dp) {
      unsigned long ms = strtoul(dp, NULL, 10);
      g_dir_period_ns = (ms < 10 ? 10 : ms > 10000 ? 10000 : ms) * 1000000ull;
    }
    if (ls_g.hdr)
      g_host = host_key();
  }
  return g_state > 0;
}

static struct ls_fp_status *status_of(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp_status *)((char *)oc->map + LS_HDR_PAGE + (size_t)rank * ROW_SIZE);
}

static struct ls_fp *row(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp *)(status_of(oc, rank) + 1);
}

static void reject_in(struct ls_online_comm *oc, const char *path, int from, const char *what) {
  char msg[768];
  int n = from >= 0
              ? snprintf(msg, sizeof msg,
                         "lockstep: rank %d: side channel %s: rejected %s from rank %d (foreign "
                         "or corrupted); rank %d is no longer checked online\n",
                         oc->rank, path, what, from, from)
              : snprintf(msg, sizeof msg,
                         "lockstep: rank %d: side channel %s: rejected %s (foreign or "
                         "corrupted); online check off for comm %016llx\n",
                         oc->rank, path, what, (unsigned long long)oc->id);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static void reject(struct ls_online_comm *oc, int from, const char *what) {
  reject_in(oc, oc->path, from, what);
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
  snprintf(oc->path, sizeof oc->path, "%s/online-%016llx-%016llx-%016llx-%016llx.fp", g_dir,
           (unsigned long long)g_host, (unsigned long long)g_job, (unsigned long long)key_id(),
           (unsigned long long)id);
  log_path(oc->log, sizeof oc->log, id, rank);
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

static void dir_queue_fp(struct ls_online_comm *oc, const struct ls_fp *f);
static void dir_status(struct ls_online_comm *oc, const struct ls_fp_status *v);

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
  f.paused = (uint32_t)oc->paused;
  f.seq = r->seq;
  f.index = index;
  site_of(r->site_pc, &f);
  f.mac = mac_of(&f, sizeof f, oc->id, oc->rank);
  struct ls_fp *s = &row(oc, oc->rank)[k % LS_FP_SLOTS];
  __atomic_store_n(&s->tag, 0, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy((char *)s + 8, (char *)&f + 8, sizeof f - 8);
  __atomic_store_n(&s->tag, k + 1, __ATOMIC_RELEASE);
  if (!oc->t_first)
    oc->t_first = ls_now_ns();
  dir_queue_fp(oc, &f);
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
  dir_status(oc, &v);
  __atomic_store_n(&s->gen, v.gen - 1, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy((char *)s + 8, (char *)&v + 8, sizeof v - 8);
  __atomic_store_n(&s->gen, v.gen, __ATOMIC_RELEASE);
}

/* ---- across hosts: the logs (watchdog thread) ---------------------------------- */

static void x_notice(const char *msg, int n) {
  if (g_xnoticed++ || n <= 0)
    return;
  (void)!write(2, msg, (size_t)n < 900 ? (size_t)n : 899);
}

/* The log is needed while a rank this one compares with, either way (its next
 * LS_ONLINE_PEERS ranks, or a rank whose next ones include it), is not on this host's
 * file: they read it, and it tells them when this rank has exited. Decided when the
 * first collective is published; it can only turn off afterwards (a rank present on
 * the file stays there; one on another host never appears), so a log, when written,
 * holds every fingerprint from the first. */
static int window_absent(struct ls_online_comm *oc) {
  int npeers = oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
  for (int k = 1; k <= npeers; k++) {
    int q = ((oc->rank - k) % oc->size + oc->size) % oc->size;
    if (!__atomic_load_n(&status_of(oc, q)->gen, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&status_of(oc, (oc->rank + k) % oc->size)->gen, __ATOMIC_ACQUIRE))
      return 1;
  }
  return 0;
}

static struct ls_dir_rec *dir_slot(struct ls_online_comm *oc);

static void dir_queue(struct ls_online_comm *oc, uint16_t type, const void *body, size_t len) {
  struct ls_dir_rec *d = dir_slot(oc);
  if (!d)
    return;
  memset(d, 0, sizeof *d);
  d->magic = LS_DIR_MAGIC;
  d->type = type;
  d->version = LS_FP_VERSION;
  d->n = oc->dseq + oc->dn - 1;
  memcpy(&d->u, body, len);
  d->mac = mac_of(d, sizeof *d, oc->id, oc->rank);
}

static void dir_queue_fp(struct ls_online_comm *oc, const struct ls_fp *f) {
  if (!g_xhost || oc->dir_pub < 0)
    return;
  if (!oc->dir_decided) {
    oc->dir_decided = 1;
    oc->dir_pub = window_absent(oc);
    if (oc->dir_pub) {
      struct ls_dir_hello h;
      memset(&h, 0, sizeof h);
      h.host = g_host;
      h.comm = oc->id;
      h.apis = g_apis;
      h.size = oc->size;
      h.rank = oc->rank;
      host_name(h.name, sizeof h.name);
      dir_queue(oc, DR_HELLO, &h, sizeof h);
    }
  }
  if (oc->dir_pub > 0) {
    struct ls_fp c = *f;
    c.mac = 0;
    dir_queue(oc, DR_FP, &c, sizeof c);
  }
}

static int dir_flush(struct ls_online_comm *oc);

/* A free record in the batch (flushed first when full); NULL when the log failed. */
static struct ls_dir_rec *dir_slot(struct ls_online_comm *oc) {
  if (!oc->dbuf && !(oc->dbuf = calloc(LS_DIR_BATCH, sizeof *oc->dbuf))) {
    oc->dir_pub = -1;
    return NULL;
  }
  if (oc->dn == LS_DIR_BATCH && dir_flush(oc) != 0)
    return NULL;
  return &oc->dbuf[oc->dn++];
}

/* Appends the batch: open, write, close (close-to-open: a reader that opens the log
 * afterwards sees it whole). The first append replaces a log left by an earlier run. */
static int dir_flush(struct ls_online_comm *oc) {
  if (!oc->dn || oc->dir_pub < 0)
    return 0;
  int fd;
  if (!oc->dseq) {
    unlink(oc->log);
    fd = open(oc->log, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  } else
    fd = open(oc->log, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  const char *why = NULL;
  if (fd < 0)
    why = strerror(errno);
  else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
           (st.st_mode & 077) || (uint64_t)st.st_size != oc->dseq * sizeof(struct ls_dir_rec))
    why = "not this process's private log any more";
  else {
    size_t len = oc->dn * sizeof(struct ls_dir_rec), done = 0;
    while (done < len) {
      ssize_t w = write(fd, (char *)oc->dbuf + done, len - done);
      if (w <= 0) {
        if (w < 0 && errno == EINTR)
          continue;
        why = w < 0 ? strerror(errno) : "short write";
        break;
      }
      done += (size_t)w;
    }
    int c = close(fd);
    fd = -1;
    if (!why && c != 0)
      why = strerror(errno); /* NFS reports a failed flush here */
  }
  if (fd >= 0)
    close(fd);
  if (why) {
    oc->dir_pub = -1;
    oc->dn = 0;
    char msg[900];
    x_notice(msg, snprintf(msg, sizeof msg,
                           "lockstep: online check across hosts off: cannot append to %s: %s; "
                           "ranks on other hosts compare through the traces (`lockstep "
                           "compare`)\n",
                           oc->log, why));
    return -1;
  }
  oc->dseq += oc->dn;
  oc->dn = 0;
  return 0;
}

/* Status into the log when it changed (at most once per poll period). */
static void dir_status(struct ls_online_comm *oc, const struct ls_fp_status *v) {
  if (oc->dir_pub <= 0 || (oc->d_logged && oc->d_ncoll == v->ncoll && oc->d_flags == v->flags))
    return;
  oc->d_logged = 1;
  oc->d_ncoll = v->ncoll;
  oc->d_flags = v->flags;
  struct ls_fp_status c = *v;
  c.mac = 0;
  if (oc->dn && oc->dbuf[oc->dn - 1].type == DR_STATUS)
    oc->dn--; /* not written yet: the newer status replaces it (one per batch at most) */
  dir_queue(oc, DR_STATUS, &c, sizeof c);
}

static void rem_reject(struct ls_online_comm *oc, unsigned slot, int p, const char *what) {
  struct ls_remote *rm = oc->rem[slot];
  char path[640];
  log_path(path, sizeof path, oc->id, p);
  if (rm->state == 1)
    oc->nread--;
  rm->state = -1;
  free(rm->ring);
  rm->ring = NULL;
  oc->bad_peers |= 1ull << slot;
  reject_in(oc, path, p, what);
}

/* Reads what is new in peer p's log. A record that fails validation may be one being
 * written (a reader can see part of an append): it is rejected only when it still
 * fails a second later. */
static void rem_poll(struct ls_online_comm *oc, unsigned slot, int p, uint64_t now) {
  struct ls_remote *rm = oc->rem[slot];
  char path[640];
  log_path(path, sizeof path, oc->id, p);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return; /* not there yet */
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 077)) {
    close(fd);
    rem_reject(oc, slot, p, "a log not private to this user");
    return;
  }
  if ((uint64_t)st.st_size < rm->off) {
    close(fd);
    rem_reject(oc, slot, p, "a log that shrank");
    return;
  }
  static struct ls_dir_rec buf[64];
  unsigned budget = LS_DIR_READ;
  while (budget && rm->state >= 0 && rm->state != 2 && rm->state != 3) {
    uint64_t avail = ((uint64_t)st.st_size - rm->off) / sizeof(struct ls_dir_rec);
    if (!avail)
      break;
    size_t want = avail < 64 ? (size_t)avail : 64;
    ssize_t got = pread(fd, buf, want * sizeof buf[0], (off_t)rm->off);
    if (got <= 0)
      break;
    size_t nr = (size_t)got / sizeof buf[0];
    for (size_t i = 0; i < nr && rm->state >= 0 && rm->state != 2 && rm->state != 3; i++) {
      struct ls_dir_rec *d = &buf[i];
      const char *bad = NULL;
      if (d->magic != LS_DIR_MAGIC || d->version != LS_FP_VERSION || d->n != rm->nrec ||
          mac_of(d, sizeof *d, oc->id, p) != d->mac)
        bad = "a log record";
      else if ((d->type == DR_HELLO) != (rm->nrec == 0))
        bad = "a log out of order";
      else if (d->type == DR_HELLO) {
        if (d->u.hello.comm != oc->id || d->u.hello.size != oc->size || d->u.hello.rank != p)
          bad = "a log of another communicator";
      } else if (d->type == DR_FP) {
        if (d->u.fp.tag != rm->nfp + 1 || d->u.fp.api >= LS_MAX_APIS)
          bad = "a fingerprint out of sequence";
      } else if (d->type != DR_STATUS)
        bad = "a log record of unknown type";
      if (bad) {
        if (!rm->t_bad)
          rm->t_bad = now;
        if (now - rm->t_bad >= 1000000000ull)
          rem_reject(oc, slot, p, bad);
        close(fd);
        return;
      }
      rm->t_bad = 0;
      rm->off += sizeof *d;
      rm->nrec++;
      budget--;
      if (d->type == DR_HELLO) {
        if (d->u.hello.host == g_host)
          rm->state = 2; /* same host: its row in our file is the one to read */
        else if (d->u.hello.apis != g_apis)
          rm->state = 3; /* another lockstep build: not comparable, not hostile */
        else if (slot == 0 || oc->nread < LS_DIR_PEERS) {
          rm->ring = calloc(LS_FP_SLOTS, sizeof *rm->ring);
          rm->state = rm->ring ? 1 : 3;
          if (rm->ring)
            oc->nread++;
        } else
          rm->state = 3; /* the chain of r -> r+1 checks covers it */
        memcpy(rm->host, d->u.hello.name, sizeof rm->host);
        rm->host[sizeof rm->host - 1] = 0;
      } else if (d->type == DR_FP) {
        struct ls_fp *f = &rm->ring[rm->nfp % LS_FP_SLOTS];
        *f = d->u.fp;
        rm->nfp++;
      } else {
        rm->st = d->u.st;
        rm->st.gen = 2;
        rm->have_st = 1;
      }
    }
    if (nr < want)
      break;
  }
  close(fd);
}

/* Peers whose rows stay empty in our file are looked for in the logs: every poll
 * period for the ones being read and, for the ones not seen anywhere yet, during the
 * first 2 s after this rank's first collective; then every 0.5 s, after 10 s every 2 s. */
static void dir_poll(struct ls_online_comm *oc, uint64_t now) {
  if (!g_xhost)
    return;
  int npeers = oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
  for (int k = 1; k <= npeers; k++) {
    unsigned slot = (unsigned)(k - 1);
    int p = (oc->rank + k) % oc->size;
    if (oc->bad_peers & (1ull << slot))
      continue;
    struct ls_remote *rm = oc->rem[slot];
    if (!rm) {
      if (__atomic_load_n(&status_of(oc, p)->gen, __ATOMIC_ACQUIRE))
        continue; /* on our host's file */
      if (!(rm = oc->rem[slot] = calloc(1, sizeof *rm)))
        continue;
    }
    if (rm->state == 2 || rm->state == 3 || rm->state < 0)
      continue;
    /* Everything this rank published is compared with that peer: nothing to read for
     * (a skip needs its status only while one of ours is not compared), so an idle
     * job costs the shared filesystem nothing. */
    if (rm->state == 1 && oc->checked[slot] >= oc->ncoll)
      continue;
    if (rm->state == 0) {
      if (__atomic_load_n(&status_of(oc, p)->gen, __ATOMIC_ACQUIRE)) {
        rm->state = 2;
        continue;
      }
      uint64_t age = oc->t_first ? now - oc->t_first : 0;
      uint64_t every = age > LS_DIR_NOTSEEN_NS ? 2000000000ull
                       : age > 2000000000ull   ? 500000000ull
                                               : g_dir_period_ns;
      if (rm->t_probe && now - rm->t_probe < every)
        continue;
      rm->t_probe = now;
      if (age > LS_DIR_NOTSEEN_NS && oc->t_first) {
        char msg[900];
        x_notice(msg, snprintf(msg, sizeof msg,
                               "lockstep: rank %d: online: rank %d of comm %016llx not seen on "
                               "the side channel after 10 s (on another host, with %s not "
                               "shared between the hosts, or another LOCKSTEP_JOB_SECRET "
                               "there?); it is compared through the traces only (`lockstep "
                               "compare`)\n",
                               oc->rank, p, (unsigned long long)oc->id, g_dir));
      }
    }
    rem_poll(oc, slot, p, now);
  }
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
  /* dtype and redop by the rules' names, as compare prints them (a number when unnamed) */
  uint16_t fam = f->api < LS_MAX_APIS ? ls_api_family((uint16_t)f->api) : 0;
  const char *dt = ls_enum_name(fam, 0, f->dtype), *op = ls_enum_name(fam, 1, f->redop);
  char dnum[16], onum[16];
  snprintf(dnum, sizeof dnum, "%d", f->dtype);
  snprintf(onum, sizeof onum, "%d", f->redop);
  int n = snprintf(buf, cap, "%s(count=%llu, dtype=%s", name_of(f->api), (unsigned long long)f->count,
                   dt ? dt : dnum);
  if (f->redop != LS_NO_VALUE)
    n += snprintf(buf + n, cap - (size_t)n, ", redop=%s", op ? op : onum);
  if (f->root_or_peer != LS_NO_VALUE)
    n += snprintf(buf + n, cap - (size_t)n, ", %s=%d", f->kind == LS_KIND_P2P ? "peer" : "root",
                  f->root_or_peer);
  return n + snprintf(buf + n, cap - (size_t)n, ") at %s+0x%llx", mod,
                      (unsigned long long)f->site_off);
}

/* Whether two collectives are one protocol instance, and if not, how they differ
 * (fingerprint.h: compare names the same class for the same two calls). */
static enum ls_class fp_class(const struct ls_fp *a, const struct ls_fp *b) {
  struct ls_fp_fields x = {a->count, a->dtype, a->redop, a->root_or_peer, a->kind};
  struct ls_fp_fields y = {b->count, b->dtype, b->redop, b->root_or_peer, b->kind};
  return ls_fp_diff(a->op_class == b->op_class, &x, &y);
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
                   peer, ls_class_name(fp_class(mine, theirs)), a, b, peer);
  say(msg, n, sizeof msg);
  event(oc, seq, peer, 0);
  ls_trace_sync();
  ls_apply_policy(oc->id, 0);
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

/* Collective `idx` of a peer read from its log: as read_fp. */
static int rem_fp(const struct ls_remote *rm, uint64_t idx, struct ls_fp *out) {
  if (idx >= rm->nfp)
    return 0;
  if (rm->nfp - idx > LS_FP_SLOTS)
    return 2;
  *out = rm->ring[idx % LS_FP_SLOTS];
  return ls_api_desc_of((uint16_t)out->api) ? 1 : -1;
}

/* A peer that has not issued collective k while this rank's k is stuck on the device:
 * skipped when it has moved on (exited, idle, calls elsewhere), slow otherwise. */
static void check_skip(struct ls_online_comm *oc, int p, unsigned slot, uint64_t now) {
  struct ls_fp_status st;
  struct ls_remote *rm = oc->rem[slot] && oc->rem[slot]->state == 1 ? oc->rem[slot] : NULL;
  int rs = rm ? rm->have_st : read_status(oc, p, &st);
  if (rm && rs)
    st = rm->st;
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
  /* (a pid is only worth asking about on this host) */
  int exited = (st.flags & ST_EXITED) ||
               (!rm && st.pid > 0 && kill(st.pid, 0) != 0 && errno == ESRCH);
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
  ls_apply_policy(oc->id, 0);
}

/* The k-th fingerprints of this rank and peer p are not the same call: the two paused
 * their check at different calls, so their numbering no longer lines up. Not a
 * divergence (the traces still have every call); that pair is not compared online
 * from here on, said once. */
static void apart(struct ls_online_comm *oc, unsigned slot, int p, const struct ls_fp *mine) {
  oc->apart |= 1ull << slot;
  char msg[768];
  int n = snprintf(msg, sizeof msg,
                   "lockstep: rank %d: seq %llu on comm %016llx: rank %d paused its online check "
                   "at other calls than this rank (lockstep_online_set_enabled); the two are "
                   "compared through the traces only from here (`lockstep compare`)\n",
                   oc->rank, (unsigned long long)mine->seq, (unsigned long long)oc->id, p);
  say(msg, n, sizeof msg);
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
    if ((oc->bad_peers | oc->apart) & (1ull << (k - 1)))
      continue;
    /* on another host: read from its log (state 1), or not read at all */
    struct ls_remote *rm = oc->rem[k - 1];
    if (rm && rm->state != 1 && rm->state != 2 && rm->state != 0)
      continue;
    if (rm && rm->state != 1)
      rm = NULL;
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
      int rc = rm ? rem_fp(rm, *next, &b) : read_fp(oc, p, *next, &b);
      if (rc == 2) { /* the peer lapped the ring: that seq can no longer be compared */
        (*next)++;
        continue;
      }
      if (rc < 0) {
        if (rm)
          rem_reject(oc, (unsigned)(k - 1), p, "a fingerprint");
        else {
          oc->bad_peers |= 1ull << (k - 1);
          reject(oc, p, "a fingerprint");
        }
        break;
      }
      if (rc == 0)
        break;
      if (a.paused != b.paused) {
        apart(oc, (unsigned)(k - 1), p, &a);
        break;
      }
      if (fp_class(&a, &b) != LS_CLASS_NONE) {
        report(oc, &a, p, &b);
        return;
      }
      (*next)++;
    }
    if (!((oc->bad_peers | oc->apart) & (1ull << (k - 1))))
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
        /* pause points at or before this record */
        while (g_tog_tail < g_tog_head && g_tog[g_tog_tail % LS_TOGGLES].at <= g_published)
          g_paused = !g_tog[g_tog_tail++ % LS_TOGGLES].on;
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
        if (!oc || r->comm_rank != oc->rank)
          continue;
        if (!g_paused)
          publish(oc, r, index);
        else {
          oc->paused++;
          oc->last_index = index; /* a call here all the same (ST_OTHER_AFTER) */
        }
      }
      uint64_t now = ls_now_ns();
      for (unsigned i = 0; i < g_ncomms; i++) {
        struct ls_online_comm *oc = &g_comms[i];
        if (!oc->map)
          continue;
        uint32_t flags = (idle && g_published == lim ? ST_IDLE : 0) |
                         (g_last_seq_index > oc->last_index + 1 ? ST_OTHER_AFTER : 0);
        publish_status(oc, flags);
        if (g_xhost && now - oc->t_dir >= g_dir_period_ns) {
          oc->t_dir = now;
          if (oc->dir_pub > 0 && !window_absent(oc))
            oc->dir_pub = 0; /* everyone it compares with is on this host's file */
          dir_flush(oc);
          dir_poll(oc, now);
        }
        check(oc, now);
      }
  }
}

/* What rank q's log says at exit: -1 no valid log, 1 it ends with an exited status,
 * 0 otherwise; *host: the writer's host key. */
static int log_state(struct ls_online_comm *oc, int q, uint64_t *host) {
  char path[640];
  log_path(path, sizeof path, oc->id, q);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  struct ls_dir_rec h, t;
  int rc = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
      st.st_size >= (off_t)sizeof h && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
      h.magic == LS_DIR_MAGIC && h.type == DR_HELLO && h.n == 0 &&
      mac_of(&h, sizeof h, oc->id, q) == h.mac) {
    *host = h.u.hello.host;
    off_t last = (st.st_size / (off_t)sizeof t - 1) * (off_t)sizeof t;
    rc = pread(fd, &t, sizeof t, last) == (ssize_t)sizeof t && t.magic == LS_DIR_MAGIC &&
         t.type == DR_STATUS && mac_of(&t, sizeof t, oc->id, q) == t.mac &&
         (t.u.st.flags & ST_EXITED);
  }
  close(fd);
  return rc;
}

/* Rank s's log can go once s has exited and so has every rank that reads it: those
 * it is compared with on other hosts (a rank with no log, or on s's host, reads s's
 * row in the mapped file instead). */
static int log_done(struct ls_online_comm *oc, int s) {
  uint64_t hs = 0, hq = 0;
  if (log_state(oc, s, &hs) != 1)
    return 0;
  int npeers = oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
  for (int k = 1; k <= npeers; k++) {
    int q = ((s - k) % oc->size + oc->size) % oc->size;
    int st = log_state(oc, q, &hq);
    if (st >= 0 && hq != hs && st != 1)
      return 0;
  }
  return 1;
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
      int logged = g_xhost && oc->dir_pub >= 0 && (oc->dseq || oc->dn);
      if (logged)
        oc->dir_pub = 1; /* the exit goes into the log too: its readers and cleanup need it */
      publish_status(oc, oc->st_flags | ST_EXITED);
      if (logged)
        dir_flush(oc);
      if (g_stats) {
        char msg[256];
        int n = snprintf(msg, sizeof msg,
                         "lockstep: rank %d: online: comm %016llx: %llu collectives published, "
                         "%llu paused\n",
                         oc->rank, (unsigned long long)oc->id, (unsigned long long)oc->ncoll,
                         (unsigned long long)oc->paused);
        say(msg, n, sizeof msg);
      }
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      /* Spanning hosts: a row that never appeared is a rank elsewhere, not a late one. */
      int spans = 0;
      for (unsigned k = 0; k < LS_ONLINE_PEERS; k++)
        spans |= oc->rem[k] && (oc->rem[k]->state == 1 || oc->rem[k]->state == 3);
      int others = 0;
      for (int p = 0; p < oc->size; p++) {
        struct ls_fp_status st;
        int rs = p != oc->rank ? read_status(oc, p, &st) : 1;
        if (p != oc->rank && ((rs <= 0 && !spans) ||
            (rs > 0 && !(st.flags & ST_EXITED) &&
             !(st.pid > 0 && kill(st.pid, 0) != 0 && errno == ESRCH))))
          others++; /* running, or not arrived yet: it still needs the file */
      }
      if (!others)
        unlink(oc->path);
      if (!g_xhost)
        continue;
      /* Logs: this rank's, and those of the peers it read, each once all its readers
       * are done (whoever exits last removes it). */
      char path[640];
      if (logged && log_done(oc, oc->rank))
        unlink(oc->log);
      int npeers = oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
      for (int k = 1; k <= npeers; k++) {
        struct ls_remote *rm = oc->rem[k - 1];
        if (!rm || (rm->state != 1 && rm->state != 3))
          continue;
        int q = (oc->rank + k) % oc->size;
        log_path(path, sizeof path, oc->id, q);
        if (log_done(oc, q))
          unlink(path);
      }
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
  g_tog_head = g_tog_tail = 0; /* the child's trace starts as the parent left the wish */
  g_paused = !g_want_on;
}

/* Exported (user-visible, see runtime/README.md): pauses (0) or resumes (1) the
 * publishing of this process's collectives from the next call it records on; the
 * recorder keeps recording. Every rank of a communicator must pause at the same calls
 * (a pair that does not is no longer compared online, and says so). Returns the
 * previous setting, or -1 when there is no online check to pause (LOCKSTEP_ONLINE=0,
 * nothing recorded yet, or the publisher more than LS_TOGGLES pause points behind for
 * two seconds). Not a hot-path call: it takes the publisher's lock. */
LS_EXPORT int lockstep_online_set_enabled(int on);
LS_EXPORT int lockstep_online_set_enabled(int on) {
  on = on != 0;
  for (int waited_ms = 0;; waited_ms++) {
    pthread_mutex_lock(&g_online_lock);
    if (!ls_g.hdr || !online_on()) {
      pthread_mutex_unlock(&g_online_lock);
      return -1;
    }
    int was = g_want_on;
    if (on == was) {
      pthread_mutex_unlock(&g_online_lock);
      return was;
    }
    if (g_tog_head - g_tog_tail < LS_TOGGLES) {
      /* Records claimed from here on are this thread's later calls (and whatever
       * other threads issue concurrently, whose side of the point is theirs to fix). */
      g_tog[g_tog_head % LS_TOGGLES].at = __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_ACQUIRE);
      g_tog[g_tog_head % LS_TOGGLES].on = on;
      g_tog_head++;
      g_want_on = on;
      pthread_mutex_unlock(&g_online_lock);
      return was;
    }
    pthread_mutex_unlock(&g_online_lock);
    if (waited_ms >= 2000)
      return -1;
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, NULL);
  }
}
