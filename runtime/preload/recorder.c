/* recorder.c — the core of liblockstep: lazy initialization, the mmap'ed trace
 * file, the api registry, the communicator table, the per-thread guard and group
 * depth, and the enter/exit halves every wrapper calls.
 *
 * Hot path rules: no malloc, no lock, no syscall besides clock_gettime (vDSO);
 * record slots are claimed with one atomic add, sequence numbers with another.
 * Initialization happens on the first interposed call, so a process that never
 * touches NCCL (true, ls, mpirun itself) gets no file and no thread. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "mix.h"

struct ls_state ls_g;

#define LS_TLS __thread __attribute__((tls_model("initial-exec")))

/* Per-thread state: NCCL's group state is thread-local, so ours is too. */
static LS_TLS int tl_guard;        /* inside a wrapper on this thread */
static LS_TLS int tl_depth;        /* mirror of NCCL's ncclGroupDepth */
static LS_TLS uint64_t tl_group;   /* id of the open outermost group */
static LS_TLS uint64_t tl_group_lo;/* first record index that can belong to it */
static LS_TLS uint32_t tl_tid;

enum { LS_INIT_NONE = 0, LS_INIT_READY = 1, LS_INIT_OFF = 2 };
static int g_init; /* atomic: LS_INIT_* */
static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
/* atomic; on a line of its own: every outermost group start adds to it, and g_init
 * beside it is read by every call of every thread */
static struct {
  uint64_t n;
  char pad[64 - sizeof(uint64_t)];
} g_group_counter __attribute__((aligned(64)));

/* ---- api registry ---------------------------------------------------------- */

static const struct ls_api_desc *g_api[LS_MAX_APIS];
static uint16_t g_api_family[LS_MAX_APIS];
static uint16_t g_api_opclass[LS_MAX_APIS];
static unsigned g_napis; /* guarded by g_init_lock for writers; atomic for readers */

static void write_api_entry(unsigned i);

static struct {
  const struct ls_enum_name *tab[2];
  unsigned n[2];
} g_enum_names[4]; /* by family; written by the constructors, before any call */

void ls_enum_names_register(uint16_t family, const struct ls_enum_name *dtype, unsigned ndtype,
                            const struct ls_enum_name *redop, unsigned nredop) {
  if (family >= 4)
    return;
  g_enum_names[family].tab[0] = dtype;
  g_enum_names[family].n[0] = ndtype;
  g_enum_names[family].tab[1] = redop;
  g_enum_names[family].n[1] = nredop;
}

const char *ls_enum_name(uint16_t family, int redop, long long value) {
  if (family >= 4)
    return NULL;
  int w = redop != 0;
  for (unsigned i = 0; i < g_enum_names[family].n[w]; i++)
    if (g_enum_names[family].tab[w][i].value == value)
      return g_enum_names[family].tab[w][i].name;
  return NULL;
}

uint16_t ls_api_register(const struct ls_api_desc *apis, unsigned n, uint16_t family) {
  pthread_mutex_lock(&g_init_lock);
  unsigned base = g_napis;
  if (base + n > LS_MAX_APIS) {
    pthread_mutex_unlock(&g_init_lock);
    return LS_API_UNREGISTERED;
  }
  for (unsigned i = 0; i < n; i++) {
    g_api[base + i] = &apis[i];
    g_api_family[base + i] = family;
    g_api_opclass[base + i] = 0;
    if (apis[i].op) /* the first entry of this family with the same op names the class */
      for (unsigned j = 0; j <= i; j++)
        if (apis[j].op && !strcmp(apis[j].op, apis[i].op)) {
          g_api_opclass[base + i] = (uint16_t)(base + j + 1);
          break;
        }
  }
  __atomic_store_n(&g_napis, base + n, __ATOMIC_RELEASE);
  if (ls_g.hdr) { /* registered after the trace exists: append to its table */
    for (unsigned i = base; i < base + n; i++)
      write_api_entry(i);
    __atomic_store_n(&ls_g.hdr->napis, base + n, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_init_lock);
  return (uint16_t)base;
}

const struct ls_api_desc *ls_api_desc_of(uint16_t api) {
  return api < __atomic_load_n(&g_napis, __ATOMIC_ACQUIRE) ? g_api[api] : NULL;
}
uint16_t ls_api_family(uint16_t api) { return api < LS_MAX_APIS ? g_api_family[api] : 0; }
uint16_t ls_api_op_class(uint16_t api) { return api < LS_MAX_APIS ? g_api_opclass[api] : 0; }

static void write_api_entry(unsigned i) {
  struct ls_trace_api *t =
      (struct ls_trace_api *)((char *)ls_g.hdr + ls_g.hdr->api_offset) + i;
  snprintf(t->name, sizeof t->name, "%s", g_api[i]->name);
  t->kind = g_api[i]->kind;
  t->family = g_api_family[i];
  t->op_class = g_api_opclass[i];
}

/* lockstep's own events, recorded into the same trace. */
static const struct ls_api_desc g_own_apis[] = {
    {"lockstep_watchdog", NULL, LS_KIND_EVENT, LS_SUB_NONE},
    {"lockstep_mismatch", NULL, LS_KIND_EVENT, LS_SUB_NONE},
};
static void at_fork_prepare(void);
static void at_fork_parent(void);
static void at_fork_child(void);
__attribute__((constructor)) static void ls_register_own(void) {
  ls_g.watchdog_api = ls_api_register(g_own_apis, 2, LS_FAMILY_LOCKSTEP);
  ls_g.mismatch_api = (uint16_t)(ls_g.watchdog_api + 1);
  /* At load, not at the first call: a fork while another thread is initializing
   * (g_init_lock held) must still give the child fresh locks. */
  pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
}

/* ---- helpers ---------------------------------------------------------------- */

uint64_t ls_hash_bytes(uint64_t seed, const void *p, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ ls_mix64(seed);
  const unsigned char *b = p;
  for (uint64_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  h = ls_mix64(h);
  return h ? h : 1; /* 0 means "no communicator" in the trace */
}

uint64_t ls_hash_u64(uint64_t seed, uint64_t v) { return ls_hash_bytes(seed, &v, sizeof v); }

void *ls_real_lookup(void *volatile *slot, const char *name, const char *soname) {
  void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (p)
    return p;
  p = dlsym(RTLD_NEXT, name);
  if (!p && soname) {
    /* The library may be loaded RTLD_LOCAL (Python extension dependencies), out of
     * RTLD_NEXT's reach; our wrapper still interposes its callers. */
    void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
      p = dlsym(h, name);
      dlclose(h);
    }
  }
  if (p) { /* never resolve to ourselves: that would recurse forever */
    Dl_info self, found;
    if (dladdr((void *)ls_real_lookup, &self) && dladdr(p, &found) &&
        self.dli_fbase == found.dli_fbase)
      p = NULL;
  }
  if (!p) {
    char msg[256];
    int n = snprintf(msg, sizeof msg, "lockstep: %s not found in any loaded library\n", name);
    if (n > 0)
      (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    return NULL;
  }
  __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  return p;
}

static uint32_t my_tid(void) {
  if (!tl_tid)
    tl_tid = (uint32_t)syscall(SYS_gettid);
  return tl_tid;
}

/* ---- communicators ------------------------------------------------------------ */

struct ls_comm {
  uint64_t id;
  const void *handle;
  int32_t rank, size;    /* -1 until known */
  uint64_t seq;          /* atomic: next sequence number */
  uint64_t nsplits;      /* atomic: splits/shrinks issued on this comm */
  int dead;
  uint16_t family;
  int nonblocking;       /* created non-blocking (NCCL config.blocking == 0) */
  int32_t async_seen;    /* atomic: the async state the trace last holds for it, or
                            LS_ASYNC_PENDING after a call on it returned "in progress" */
  uint32_t async_epoch;  /* atomic: g_async_epoch when async_seen was last set */
};
#define LS_ASYNC_PENDING INT32_MIN

static struct ls_comm g_comm_pool[LS_MAX_COMMS];
static uint32_t g_async_epoch; /* atomic: bumped when a call without a comm (a group end) returns "in progress" */
static unsigned g_comm_used; /* guarded by g_comm_lock */
static const void *g_comm_keys[LS_MAX_COMMS];      /* atomic; open addressing */
static struct ls_comm *g_comm_vals[LS_MAX_COMMS];  /* atomic */
static pthread_mutex_t g_comm_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned comm_slot0(const void *h) {
  return (unsigned)(ls_mix64((uint64_t)(uintptr_t)h) & (LS_MAX_COMMS - 1));
}

struct ls_comm *ls_comm_lookup(const void *handle) {
  if (!handle)
    return NULL;
  unsigned s = comm_slot0(handle);
  for (unsigned probe = 0; probe < LS_MAX_COMMS; probe++, s = (s + 1) & (LS_MAX_COMMS - 1)) {
    const void *k = __atomic_load_n(&g_comm_keys[s], __ATOMIC_ACQUIRE);
    if (!k)
      return NULL;
    if (k == handle)
      return __atomic_load_n(&g_comm_vals[s], __ATOMIC_ACQUIRE);
  }
  return NULL;
}

/* Entries are never removed: a handle value reused after destroy gets a fresh
 * ls_comm swapped into its slot, so a racing lookup sees the old or the new one. */
struct ls_comm *ls_comm_register(uint16_t family, const void *handle, uint64_t id, int rank,
                                 int size) {
  if (!handle)
    return NULL;
  pthread_mutex_lock(&g_comm_lock);
  struct ls_comm *cm = NULL;
  if (g_comm_used < LS_MAX_COMMS) {
    cm = &g_comm_pool[g_comm_used];
    cm->id = id;
    cm->handle = handle;
    cm->rank = rank;
    cm->size = size;
    cm->family = family;
    cm->nonblocking = 0;
    cm->async_seen = 0;
    cm->async_epoch = __atomic_load_n(&g_async_epoch, __ATOMIC_ACQUIRE);
    /* Counted only once filled: the watchdog walks the pool without the lock. */
    __atomic_store_n(&g_comm_used, g_comm_used + 1, __ATOMIC_RELEASE);
    unsigned s = comm_slot0(handle);
    for (unsigned probe = 0; probe < LS_MAX_COMMS; probe++, s = (s + 1) & (LS_MAX_COMMS - 1)) {
      const void *k = g_comm_keys[s];
      if (!k || k == handle) {
        __atomic_store_n(&g_comm_vals[s], cm, __ATOMIC_RELEASE);
        __atomic_store_n(&g_comm_keys[s], handle, __ATOMIC_RELEASE);
        break;
      }
    }
  }
  pthread_mutex_unlock(&g_comm_lock);
  return cm;
}

void ls_comm_set_rank(struct ls_comm *cm, int rank, int size) {
  if (!cm)
    return;
  __atomic_store_n(&cm->size, size, __ATOMIC_RELAXED);
  __atomic_store_n(&cm->rank, rank, __ATOMIC_RELEASE);
}
int ls_comm_rank_known(const struct ls_comm *cm) {
  return cm && __atomic_load_n(&cm->rank, __ATOMIC_ACQUIRE) >= 0;
}
uint64_t ls_comm_id(const struct ls_comm *cm) { return cm ? cm->id : 0; }
uint64_t ls_comm_next_split(struct ls_comm *cm) {
  return cm ? __atomic_fetch_add(&cm->nsplits, 1, __ATOMIC_RELAXED) : 0;
}
void ls_comm_mark_dead(struct ls_comm *cm) {
  if (cm)
    __atomic_store_n(&cm->dead, 1, __ATOMIC_RELEASE);
}

void ls_comm_set_nonblocking(struct ls_comm *cm, int nb) {
  if (cm)
    __atomic_store_n(&cm->nonblocking, nb, __ATOMIC_RELEASE);
}
int ls_comm_nonblocking(const struct ls_comm *cm) {
  return cm && __atomic_load_n(&cm->nonblocking, __ATOMIC_ACQUIRE);
}

/* Queries are recorded only when they say something new (nccl_hooks.c): a poll loop
 * on a non-blocking communicator leaves one record per change of state, and the poll
 * that saw "in progress" end is always among them. */
int ls_comm_async_news(struct ls_comm *cm, int32_t state) {
  if (!cm)
    return state != 0;
  uint32_t ep = __atomic_load_n(&g_async_epoch, __ATOMIC_ACQUIRE);
  int32_t old = __atomic_exchange_n(&cm->async_seen, state, __ATOMIC_ACQ_REL);
  uint32_t oep = __atomic_exchange_n(&cm->async_epoch, ep, __ATOMIC_ACQ_REL);
  return old != state || oep != ep;
}

void ls_comm_async_pending(struct ls_comm *cm) {
  if (cm)
    __atomic_store_n(&cm->async_seen, LS_ASYNC_PENDING, __ATOMIC_RELEASE);
  else /* a group end: it may have left any communicator in progress */
    __atomic_fetch_add(&g_async_epoch, 1, __ATOMIC_ACQ_REL);
}

const void *ls_comm_handle_by_id(uint64_t id, uint16_t *family_out) {
  unsigned n = __atomic_load_n(&g_comm_used, __ATOMIC_ACQUIRE);
  for (unsigned i = n; i-- > 0;)
    if (g_comm_pool[i].id == id && !__atomic_load_n(&g_comm_pool[i].dead, __ATOMIC_ACQUIRE)) {
      if (family_out)
        *family_out = g_comm_pool[i].family;
      return g_comm_pool[i].handle;
    }
  return NULL;
}

static ls_abort_fn g_abort_hook[4];
static ls_rank_query_fn g_rank_hook[4];
void ls_set_abort_hook(uint16_t family, ls_abort_fn fn) {
  if (family < 4)
    g_abort_hook[family] = fn;
}
void ls_set_rank_query_hook(uint16_t family, ls_rank_query_fn fn) {
  if (family < 4)
    g_rank_hook[family] = fn;
}
ls_abort_fn ls_abort_hook_for(uint16_t family) { return family < 4 ? g_abort_hook[family] : NULL; }

/* A comm created before we saw it (or by a path we do not wrap): give it an identity
 * that is at least stable in this process, and ask the family for rank/size. */
static struct ls_comm *comm_adopt(const void *handle, uint16_t family) {
  return ls_comm_register(family, handle, ls_hash_u64(0x756e6b6e6f776eull, (uintptr_t)handle),
                          -1, -1);
}

/* ---- trace file ----------------------------------------------------------------- */

static void errmsg(const char *what, const char *path, int err) {
  char msg[4400];
  int n = snprintf(msg, sizeof msg, "lockstep: %s %s: %s; recording is off for this process\n",
                   what, path, strerror(err));
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static int mkdir_p(const char *dir) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
    return ENAMETOOLONG;
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0700) && errno != EEXIST)
        return errno;
      *p = '/';
    }
  if (mkdir(tmp, 0700) && errno != EEXIST)
    return errno;
  return 0;
}

#define LS_PAGE 4096u
#define ROUND_PAGE(x) (((x) + LS_PAGE - 1) / LS_PAGE * LS_PAGE)

/* fallocate that a signal cannot fail (the program's timers interrupt it: EINTR is
 * not a full disk). Returns 0 or the errno. */
static int reserve_blocks(int fd, off_t off, off_t len) {
  while (fallocate(fd, 0, off, len) != 0)
    if (errno != EINTR)
      return errno;
  return 0;
}

static int trace_open(void) {
  const char *dir = ls_cfg.trace_dir;
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  for (char *p = host; *p; p++)
    if (*p == '/')
      *p = '_';
  int err = mkdir_p(dir);
  if (err) {
    errmsg("cannot create trace directory", dir, err);
    return -1;
  }
  if (snprintf(ls_g.path, sizeof ls_g.path, "%s/%s.%d%s", dir, host, (int)getpid(),
               LS_TRACE_FILE_SUFFIX) >= (int)sizeof ls_g.path) {
    errmsg("trace path too long under", dir, ENAMETOOLONG);
    return -1;
  }
  uint64_t cap = ls_cfg.capacity;
  uint64_t api_off = LS_TRACE_HEADER_SIZE;
  uint64_t mod_off = ROUND_PAGE(api_off + LS_MAX_APIS * sizeof(struct ls_trace_api));
  uint64_t rec_off = ROUND_PAGE(mod_off + LS_TRACE_MAX_MODULES * sizeof(struct ls_trace_module));
  uint64_t size = rec_off + cap * LS_TRACE_RECORD_SIZE;

  int fd = open(ls_g.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  /* Same pid again: a program that exec'ed another NCCL program keeps its pid. */
  for (int k = 1; fd < 0 && errno == EEXIST && k < 100; k++) {
    snprintf(ls_g.path, sizeof ls_g.path, "%s/%s.%d-%d%s", dir, host, (int)getpid(), k,
             LS_TRACE_FILE_SUFFIX);
    fd = open(ls_g.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  }
  if (fd < 0) {
    errmsg("cannot create trace file", ls_g.path, errno);
    return -1;
  }
  /* The file is as long as what is reserved (fallocate extends it): the header and the
   * first records now, more as it fills, so a short run leaves a short file. A write to
   * a mapped page with no disk block behind it (or past the end) raises SIGBUS: writers
   * stay below `backed`. */
  ls_g.fd = fd;
  ls_g.capacity = cap;
  ls_g.ring = ls_cfg.ring;
  ls_g.floor = 0;
  ls_g.backed = 0; /* a ring's stays 0: every claim of a ring takes claim_slow */
  ls_g.reserve_failed = 0;
  ls_g.reserve_unsupported = 0;
  ls_g.map_size = size;
  /* A ring reuses its slots: the whole file at once, so no write can SIGBUS later. */
  int fa = reserve_blocks(fd, 0, (off_t)(ls_g.ring ? size : rec_off));
  if (fa != 0) {
    if (fa == EOPNOTSUPP || fa == ENOSYS) {
      /* no reservation on this filesystem: the whole size at once, sparse */
      ls_g.reserve_unsupported = 1;
      if (ftruncate(fd, (off_t)size)) {
        errmsg("cannot size trace file", ls_g.path, errno);
        close(fd);
        return -1;
      }
    } else {
      errmsg("cannot reserve space for trace file", ls_g.path, fa);
      close(fd);
      return -1;
    }
  }
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    errmsg("cannot map trace file", ls_g.path, errno);
    close(fd);
    return -1;
  }
  struct ls_trace_header *h = m;
  memcpy(h->magic, LS_TRACE_MAGIC, 8);
  h->version = ls_g.ring ? LS_TRACE_VERSION_RING : LS_TRACE_VERSION;
  h->header_size = LS_TRACE_HEADER_SIZE;
  h->record_size = LS_TRACE_RECORD_SIZE;
  h->capacity = cap;
  h->api_offset = api_off;
  h->modules_offset = mod_off;
  h->records_offset = rec_off;
  h->pid = (int32_t)getpid();
  h->flags = LS_TRACE_F_ASYNC_CHANGES | (ls_g.ring ? LS_TRACE_F_RING : 0u);
  h->launcher_rank = ls_cfg.launcher_rank;
  h->launcher_size = ls_cfg.launcher_size;
  h->timeout_ms = (uint32_t)(ls_cfg.timeout_ns / 1000000u);
  struct timespec rt, mt;
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mt);
  h->t0_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
  h->t0_monotonic_ns = (uint64_t)mt.tv_sec * 1000000000u + (uint64_t)mt.tv_nsec;
  memcpy(h->hostname, host, sizeof h->hostname);
  ssize_t n = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
  if (n < 0)
    h->exe[0] = 0;
  ls_g.hdr = h;
  ls_g.claims = ls_g.ring ? &ls_g.ring_claims : &h->nrecords;
  ls_g.recs = (struct ls_trace_record *)((char *)m + rec_off);
  ls_trace_reserve(LS_RESERVE_FIRST);
  unsigned napis = __atomic_load_n(&g_napis, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < napis; i++)
    write_api_entry(i);
  __atomic_store_n(&h->napis, napis, __ATOMIC_RELEASE);
  return 0;
}

int ls_trace_reserve(uint64_t upto) {
  if (ls_g.ring)
    return 0; /* reserved whole at creation */
  if (upto > ls_g.capacity)
    upto = ls_g.capacity;
  if (ls_g.reserve_unsupported) {
    __atomic_store_n(&ls_g.backed, ls_g.capacity, __ATOMIC_RELEASE);
    return 0;
  }
  uint64_t have = __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE);
  if (upto <= have)
    return 0;
  /* Overlapping reservations from racing threads are harmless. Short of space, take
   * what is left (halving down to one page of records). */
  for (;;) {
    int err = reserve_blocks(ls_g.fd, (off_t)(ls_g.hdr->records_offset + have * LS_TRACE_RECORD_SIZE),
                             (off_t)((upto - have) * LS_TRACE_RECORD_SIZE));
    if (err == 0)
      break;
    if (err == EOPNOTSUPP || err == ENOSYS) {
      ls_g.reserve_unsupported = 1;
      __atomic_store_n(&ls_g.backed, ls_g.capacity, __ATOMIC_RELEASE);
      return 0;
    }
    if (err != ENOSPC || upto - have <= 32) {
      /* disk full: records past `backed` are dropped, never written; writers stop
       * asking until the watchdog's next attempt succeeds */
      __atomic_store_n(&ls_g.reserve_failed, 1, __ATOMIC_RELEASE);
      return -1;
    }
    upto = have + (upto - have) / 2;
  }
  __atomic_store_n(&ls_g.reserve_failed, 0, __ATOMIC_RELEASE);
  uint64_t cur = have;
  while (cur < upto &&
         !__atomic_compare_exchange_n(&ls_g.backed, &cur, upto, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
    ;
  return 0;
}

void ls_trace_sync(void) {
  if (ls_g.hdr)
    msync(ls_g.hdr, ls_g.map_size, MS_SYNC);
}

/* ---- module table ------------------------------------------------------------------ */

static pthread_mutex_t g_mod_lock = PTHREAD_MUTEX_INITIALIZER;

static int module_cb(struct dl_phdr_info *info, size_t sz, void *arg) {
  (void)sz;
  (void)arg;
  struct ls_trace_header *h = ls_g.hdr;
  struct ls_trace_module *mods = (struct ls_trace_module *)((char *)h + h->modules_offset);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uint64_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
    uint32_t n = __atomic_load_n(&h->nmodules, __ATOMIC_ACQUIRE);
    int seen = 0;
    for (uint32_t j = 0; j < n && !seen; j++)
      seen = mods[j].start == start && mods[j].end == end;
    if (seen || n >= LS_TRACE_MAX_MODULES)
      continue;
    struct ls_trace_module *m = &mods[n];
    m->base = info->dlpi_addr;
    m->start = start;
    m->end = end;
    const char *name = info->dlpi_name;
    if (!name || !*name) {
      ssize_t k = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
      m->path[k > 0 ? k : 0] = 0;
    } else {
      snprintf(m->path, sizeof m->path, "%s", name);
    }
    __atomic_store_n(&h->nmodules, n + 1, __ATOMIC_RELEASE);
  }
  return 0;
}

void ls_modules_refresh(void) {
  if (!ls_g.hdr)
    return;
  pthread_mutex_lock(&g_mod_lock);
  dl_iterate_phdr(module_cb, NULL);
  pthread_mutex_unlock(&g_mod_lock);
}

/* ---- init / fork / exit ------------------------------------------------------------ */

/* The subsystems' last look (device tracking polls its events once more, so work that
 * finished just before exit is not reported as never completed; the online check
 * publishes its exit), then the trace is marked as ended cleanly. */
static void at_exit_handler(void) {
  if (ls_g.hdr && __atomic_load_n(&g_init, __ATOMIC_ACQUIRE) == LS_INIT_READY) {
    ls_core_at_exit();
    __atomic_fetch_or(&ls_g.hdr->flags, LS_TRACE_F_CLEAN_EXIT, __ATOMIC_RELEASE);
  }
}

/* The child of a fork must not write into its parent's MAP_SHARED file: drop the
 * mapping and let the child start its own trace if it ever calls NCCL. */
/* No thread of ours may be inside the loader at fork time: glibc does not reset
 * dl_iterate_phdr's lock in the child, so a fork while another thread walked the
 * modules (initialization, a new communicator) or dlopen'ed libcuda left the child's
 * first call hung in dl_iterate_phdr. The fork waits for those instead (same lock
 * order as init_slow: init, then modules). */
static void at_fork_prepare(void) {
  pthread_mutex_lock(&g_init_lock);
  pthread_mutex_lock(&g_mod_lock);
}
static void at_fork_parent(void) {
  pthread_mutex_unlock(&g_mod_lock);
  pthread_mutex_unlock(&g_init_lock);
}

static void at_fork_child(void) {
  /* A lock another thread held at fork time stays held in the child for good. */
  pthread_mutex_init(&g_init_lock, NULL);
  pthread_mutex_init(&g_comm_lock, NULL);
  pthread_mutex_init(&g_mod_lock, NULL);
  if (__atomic_load_n(&g_init, __ATOMIC_ACQUIRE) == LS_INIT_NONE && !ls_g.hdr)
    return; /* nothing started yet (a process that never called NCCL: keep it cheap) */
  if (ls_g.hdr) {
    munmap(ls_g.hdr, ls_g.map_size);
    close(ls_g.fd);
  }
  ls_g.hdr = NULL;
  ls_g.recs = NULL;
  ls_g.capacity = 0;
  ls_g.ring = 0;
  ls_core_after_fork();
  tl_tid = 0;
  __atomic_store_n(&g_init, LS_INIT_NONE, __ATOMIC_RELEASE);
}

int ls_record_queries(void) { return ls_cfg.record_queries; }

/* Out of line: inlined, its frame would be set up on every call's path. */
static __attribute__((noinline)) int init_slow(void) {
  static int atexit_done;
  pthread_mutex_lock(&g_init_lock);
  int st = __atomic_load_n(&g_init, __ATOMIC_ACQUIRE);
  if (st == LS_INIT_NONE) {
    st = LS_INIT_OFF;
    ls_config_read();
    if (!ls_cfg.disable) {
      if (trace_open() == 0) {
        st = LS_INIT_READY;
        if (!atexit_done) {
          atexit_done = 1;
          atexit(at_exit_handler);
        }
      }
    }
    if (st == LS_INIT_READY) {
      /* Everything other threads read without a lock is set before READY is
       * published (release); they wait on the lock meanwhile. */
      ls_modules_refresh();
      ls_core_init();
    }
    __atomic_store_n(&g_init, st, __ATOMIC_RELEASE);
    if (st == LS_INIT_READY) {
      pthread_mutex_unlock(&g_init_lock);
      ls_core_start();
      return 1;
    }
  }
  pthread_mutex_unlock(&g_init_lock);
  return st == LS_INIT_READY;
}

/* ---- records ----------------------------------------------------------------------- */

uint64_t ls_rec_limit(void) {
  if (!ls_g.hdr)
    return 0;
  uint64_t n = __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_ACQUIRE);
  if (ls_g.ring)
    return n; /* every ordinal claimed has a slot (no drop takes one) */
  /* Never past the reserved blocks: on tmpfs even a read fault there needs a page,
   * and a full disk answers with SIGBUS. */
  uint64_t b = __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE);
  if (n > b)
    n = b;
  return n < ls_g.capacity ? n : ls_g.capacity;
}

struct ls_trace_record *ls_rec_at(uint64_t index) {
  if (!ls_g.hdr)
    return NULL;
  if (ls_g.ring)
    return index < __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_ACQUIRE) ? ls_rec_live(index) : NULL;
  return index < ls_g.capacity ? ls_rec_slot(index) : NULL;
}

void ls_rec_set_flags(struct ls_trace_record *r, uint16_t f) {
  __atomic_fetch_or(&r->flags, f, __ATOMIC_RELEASE);
}
uint16_t ls_rec_flags(const struct ls_trace_record *r) {
  return __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);
}

/* The slot claimed as i when it lies at or past the reserved blocks or the capacity:
 * reserves or drops (NULL). Out of line: the calls' path is the test alone. */
static __attribute__((noinline)) struct ls_trace_record *claim_slow(uint64_t i, uint64_t *index);

static inline struct ls_trace_record *claim(uint64_t *index) {
  uint64_t i = __atomic_fetch_add(ls_g.claims, 1, __ATOMIC_RELAXED);
  if (__builtin_expect(i >= __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE) || i + 1 >= ls_g.capacity, 0))
    return claim_slow(i, index);
  *index = i;
  /* The next call's record, most likely this thread's, for writing: its first writes
   * would otherwise wait for the lines (the watchdog faulted the page in, not the lines). */
  for (unsigned off = 0; off < sizeof(struct ls_trace_record); off += 64)
    __builtin_prefetch((const char *)&ls_g.recs[i + 1] + off, 1, 3);
  return &ls_g.recs[i]; /* not a ring (a ring's claims all take claim_slow): slot i */
}

struct ls_trace_record *ls_rec_claim(uint64_t *index) { return claim(index); }

/* A ring's claim (claim() counted it in ls_g.ring_claims, not in nrecords: that path
 * stays the same instructions as without a ring). A ring takes its ordinal here, by
 * compare-and-swap, and only when slot n % capacity is free to reuse
 * (its previous ordinal n - capacity below the readers' floor); otherwise the call is
 * dropped without an ordinal, so the ordinals stay dense and every one gets its record
 * (no reader waits on a hole). Never blocks: a full ring drops, counts, marks partial. */
static struct ls_trace_record *claim_ring(uint64_t *index) {
  uint64_t cap = ls_g.capacity, n = __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_RELAXED), floor;
  do {
    floor = __atomic_load_n(&ls_g.floor, __ATOMIC_ACQUIRE);
    if (n >= floor + cap) {
      __atomic_fetch_add(&ls_g.hdr->dropped, 1, __ATOMIC_RELAXED);
      if (!(__atomic_load_n(&ls_g.hdr->flags, __ATOMIC_RELAXED) & LS_TRACE_F_PARTIAL))
        __atomic_fetch_or(&ls_g.hdr->flags, LS_TRACE_F_PARTIAL, __ATOMIC_RELEASE);
      ls_core_wake();
      return NULL;
    }
  } while (!__atomic_compare_exchange_n(&ls_g.hdr->nrecords, &n, n + 1, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
  if (n - floor >= cap / 2)
    ls_core_wake(); /* half the ring ahead of the floor: a backed-off thread ticks now */
  struct ls_trace_record *r = &ls_g.recs[n % cap];
  /* Everything but the ordinal, which readers load (atomic) to tell whose the slot is:
   * until the store below it still names the old ordinal, and no reader looks at that. */
  memset(r, 0, offsetof(struct ls_trace_record, ordinal));
  memset(r->reserved2, 0, sizeof r->reserved2);
  __atomic_store_n(&r->ordinal, n, __ATOMIC_RELEASE);
  *index = n;
  return r;
}

static struct ls_trace_record *claim_slow(uint64_t i, uint64_t *index) {
  if (ls_g.ring)
    return claim_ring(index);
  /* The watchdog keeps blocks reserved ahead; a writer that outruns it reserves the
   * next stretch itself (as many slots again as are used, at most 4 chunks). */
  /* A reservation short of space succeeds with less than asked (it halves down), so
   * slot i is usable only if it lies below `backed` afterwards. */
  if (__builtin_expect(i >= __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE), 0) &&
      i < ls_g.capacity &&
      (__atomic_load_n(&ls_g.reserve_failed, __ATOMIC_ACQUIRE) ||
       ls_trace_reserve(ls_reserve_target(i + 1)) != 0 ||
       i >= __atomic_load_n(&ls_g.backed, __ATOMIC_ACQUIRE)))
    i = ls_g.capacity; /* no space: drop rather than risk SIGBUS */
  if (i >= ls_g.capacity) {
    /* Overflow never blocks the program: flag it and drop the record. */
    if (!(__atomic_load_n(&ls_g.hdr->flags, __ATOMIC_RELAXED) & LS_TRACE_F_PARTIAL))
      __atomic_fetch_or(&ls_g.hdr->flags, LS_TRACE_F_PARTIAL, __ATOMIC_RELEASE);
    return NULL;
  }
  *index = i;
  /* The next call's record, most likely this thread's, for writing: its first writes
   * would otherwise wait for the lines (the watchdog faulted the page in, not the lines). */
  if (i + 1 < ls_g.capacity)
    for (unsigned off = 0; off < sizeof(struct ls_trace_record); off += 64)
      __builtin_prefetch((const char *)ls_rec_slot(i + 1) + off, 1, 3);
  return ls_rec_slot(i);
}

void ls_rec_complete(uint64_t index) {
  struct ls_trace_record *r = ls_rec_at(index);
  if (!r)
    return;
  r->t_complete_ns = ls_now_ns();
  ls_rec_set_flags(r, LS_REC_COMPLETED);
}

/* ---- the wrapper halves -------------------------------------------------------------- */

/* ls_call_begin but for the arguments and the clock. */
static inline __attribute__((always_inline)) int begin_call(struct ls_call *c, uint16_t api, const void *site) {
  if (__builtin_expect(tl_guard, 0))
    return 0;
  int st = __atomic_load_n(&g_init, __ATOMIC_ACQUIRE);
  if (__builtin_expect(st != LS_INIT_READY, 0)) {
    if (st == LS_INIT_OFF || api == LS_API_UNREGISTERED)
      return 0;
    tl_guard = 1; /* nothing below calls NCCL, but be safe */
    int ok = init_slow();
    tl_guard = 0;
    if (!ok)
      return 0;
  }
  const struct ls_api_desc *d = ls_api_desc_of(api);
  if (!d)
    return 0;
  tl_guard = 1;
  c->api = api;
  c->kind = d->kind;
  c->sub = d->sub;
  c->family = g_api_family[api];
  c->depth = tl_depth;
  c->site = site;
  c->frame = NULL;
  c->rec = NULL;
  c->index = 0;
  c->comm = NULL;
  c->aux0 = c->aux1 = 0;
  c->h0 = 0;
  return 1;
}

int ls_call_begin(struct ls_call *c, uint16_t api, const void *site) {
  if (!begin_call(c, api, site))
    return 0;
  /* Field by field, not memset: gcc turns a memset of this size into rep stosq, whose
   * startup costs more than the stores on every call. */
  _Static_assert(sizeof(struct ls_args) == 13 * sizeof(int64_t) + 6 * sizeof(void *),
                 "a new ls_args field must be set below");
  struct ls_args *a = &c->args;
  a->count = 0;
  a->dtype = a->redop = a->root = a->peer = LS_NO_VALUE;
  a->nranks = a->rank = a->color = a->key = a->exclude_count = a->nid = 0;
  a->comm = a->unique_id = a->exclude_ranks = a->config = NULL;
  a->out_comm = a->out_async_state = NULL;
  a->stream = 0;
  a->request = 0;
  /* Last: only c then lives across the call (no registers to save for the rest). */
  c->t_enter = ls_now_ns();
  return 1;
}

static int has_seq(uint16_t kind) { return kind == LS_KIND_COLLECTIVE || kind == LS_KIND_P2P; }

/* ls_call_enter with the record's values given (`handle`: role comm). */
static inline __attribute__((always_inline)) void enter_call(struct ls_call *c, const void *handle,
                                                             int64_t count, int64_t dtype, int64_t redop,
                                                             int64_t root_or_peer, uint64_t stream) {
  uint16_t fam = c->family;
  if (!c->comm && handle && c->kind != LS_KIND_COMM_INIT) {
    c->comm = ls_comm_lookup(handle);
    if (!c->comm)
      c->comm = comm_adopt(handle, fam);
  }
  struct ls_comm *cm = c->comm;
  if (cm && !ls_comm_rank_known(cm) && fam < 4 && g_rank_hook[fam]) {
    int r = -1, s = -1;
    g_rank_hook[fam](cm->handle, &r, &s);
    if (r >= 0)
      ls_comm_set_rank(cm, r, s);
  }
  /* A rank still unknown means a non-blocking split whose job has not ended (NCCL
   * learns rank and size there): NCCL refuses the call, so it takes no place in the
   * sequence (and the reader rejects a sequenced record without a rank); compare
   * still sees it on the communicator (not-ready). */
  uint64_t seq = LS_NO_SEQ;
  int seqd = has_seq(c->kind);
  if (cm && seqd && ls_comm_rank_known(cm))
    seq = __atomic_fetch_add(&cm->seq, 1, __ATOMIC_RELAXED);
  struct ls_trace_record *r = claim(&c->index);
  c->rec = r;
  if (!r)
    return;
  r->api = c->api;
  r->flags = c->depth > 0 ? LS_REC_IN_GROUP : 0;
  r->comm_id = cm ? cm->id : 0;
  r->seq = seq;
  r->count = (uint64_t)count;
  r->dtype = (int32_t)dtype;
  r->redop = (int32_t)redop;
  r->root_or_peer = (int32_t)root_or_peer;
  r->group_depth = c->depth;
  r->comm_rank = cm ? __atomic_load_n(&cm->rank, __ATOMIC_ACQUIRE) : -1;
  r->comm_size = cm ? cm->size : -1;
  r->tid = my_tid();
  r->t_enter_ns = c->t_enter;
  r->site_pc = (uint64_t)(uintptr_t)c->site;
  ls_stack_callers_from(c->site, c->frame, (uintptr_t)__builtin_frame_address(0), r->callers);
  r->stream = stream;
  r->aux0 = c->aux0;
  r->aux1 = seqd && c->depth > 0 ? tl_group : c->aux1;
  __atomic_store_n(&r->state, LS_REC_ENTERED, __ATOMIC_RELEASE);
}

void ls_call_enter(struct ls_call *c) {
  enter_call(c, c->args.comm, c->args.count, c->args.dtype, c->args.redop,
             c->kind == LS_KIND_P2P ? c->args.peer : c->args.root, c->args.stream);
}

int ls_call_plain(struct ls_call *c, uint16_t api, const void *site, const void *frame, const void *comm,
                  uint64_t stream, int64_t count, int64_t dtype, int64_t redop, int64_t root_or_peer) {
  if (!begin_call(c, api, site))
    return 0;
  c->frame = frame;
  c->args.comm = comm;
  c->args.stream = stream;
  c->t_enter = ls_now_ns();
  enter_call(c, comm, count, dtype, redop, root_or_peer, stream);
  return 1;
}

/* After the outermost group end returned: one event per stream the group used,
 * recorded now that the work is on the streams (never earlier: inside a group an
 * event would complete before the collective even starts). A stream at a time: its
 * slot is held from the cover to the arm. */
static void cover_group(uint64_t lo, uint64_t hi_excl, uint64_t group, int launched, uint64_t now) {
  enum { MAXS = 64 };
  uint64_t streams[MAXS];
  unsigned ns = 0;
  uint32_t me = my_tid();
  uint64_t lim = ls_rec_limit();
  if (hi_excl > lim)
    hi_excl = lim;
  int dev = launched && ls_dev_available();
  for (uint64_t i = lo; i < hi_excl; i++) {
    struct ls_trace_record *r = ls_rec_live(i);
    if (!r)
      continue;
    /* State first (acquire): other threads may be writing their records right now;
     * ours in the range all returned before this outermost end was called. */
    if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != LS_REC_RETURNED || r->tid != me ||
        r->aux1 != group || r->seq == LS_NO_SEQ)
      continue;
    if (!dev || r->rc != 0) {
      if (launched && r->rc == 0)
        ls_rec_set_flags(r, LS_REC_NO_DEVICE);
      __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
      continue;
    }
    unsigned k = 0;
    while (k < ns && streams[k] != r->stream)
      k++;
    if (k == ns) {
      if (ns == MAXS) { /* more streams than we track: leave it unwatched */
        __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
        continue;
      }
      streams[ns++] = r->stream;
    }
  }
  for (unsigned k = 0; k < ns; k++) {
    uint32_t tag = ls_dev_cover(streams[k], lo, hi_excl ? hi_excl - 1 : 0, now);
    for (uint64_t i = lo; i < hi_excl; i++) {
      struct ls_trace_record *r = ls_rec_live(i);
      if (!r || __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != LS_REC_RETURNED || r->tid != me ||
          r->aux1 != group || r->seq == LS_NO_SEQ || r->rc != 0 || r->stream != streams[k] ||
          __atomic_load_n(&r->wtag, __ATOMIC_ACQUIRE) != LS_WTAG_PENDING)
        continue;
      if (tag) {
        __atomic_store_n(&r->wtag, tag, __ATOMIC_RELEASE);
        ls_rec_set_flags(r, LS_REC_EVENT_RECORDED);
      } else {
        __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
      }
    }
    if (tag)
      ls_dev_arm(tag);
  }
}

void ls_call_exit(struct ls_call *c, int64_t rc) {
  struct ls_trace_record *r = c->rec;
  int device_family = c->family == LS_FAMILY_NCCL;
  if (r) {
    r->rc = (int32_t)rc;
    r->t_exit_ns = c->t_exit;
    /* Atomics for wtag and flags although the record is not published as returned
     * yet: the watchdog's event poll reads the wtag of every record an event's range
     * covers (other threads' too), and its timeout report sets a flag on a call that
     * has not returned. */
    if (has_seq(c->kind)) {
      if (!device_family) {
        if (!(ls_rec_flags(r) & LS_REC_NONBLOCKING) && rc == 0) {
          r->t_complete_ns = c->t_exit;
          ls_rec_set_flags(r, LS_REC_COMPLETED);
        }
        __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELAXED);
      } else if (rc != 0) {
        /* not enqueued (or in progress in the background) */
        __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELAXED);
      }
    }
    __atomic_store_n(&r->state, LS_REC_RETURNED, __ATOMIC_RELEASE);
  }
  switch (c->kind) {
  case LS_KIND_GROUP_START:
    if (rc == 0) {
      if (tl_depth == 0) {
        tl_group = __atomic_add_fetch(&g_group_counter.n, 1, __ATOMIC_RELAXED);
        /* past the start's own record: no member (cover_group looks from there) */
        tl_group_lo = r ? c->index + 1 : __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_RELAXED);
      }
      tl_depth++;
    }
    if (r)
      r->aux1 = tl_group;
    break;
  case LS_KIND_GROUP_END:
    /* NCCL: depth 0 -> ncclInvalidUsage and no change; otherwise the depth drops
     * whatever the result (a stored error is returned by the outermost end). */
    if (c->depth > 0 && tl_depth > 0) {
      tl_depth--;
      if (tl_depth == 0) {
        if (r) {
          r->aux1 = tl_group;
          /* Not a locked or: a record without a sequence number has no other writer
           * (the watchdog and the device poll set flags on sequenced calls only). */
          __atomic_store_n(&r->flags, (uint16_t)(ls_rec_flags(r) | LS_REC_OUTER_GROUP_END),
                           __ATOMIC_RELEASE);
        }
        if (device_family) {
          uint64_t hi = r ? c->index : __atomic_load_n(&ls_g.hdr->nrecords, __ATOMIC_RELAXED);
          cover_group(tl_group_lo, hi, tl_group, rc == 0 && c->sub != LS_SUB_SIMULATE, c->t_exit);
        }
      }
    }
    break;
  case LS_KIND_COLLECTIVE:
  case LS_KIND_P2P:
    if (device_family && r && rc == 0 && c->depth == 0) {
      if (ls_dev_available()) {
        uint32_t tag = ls_dev_cover(c->args.stream, c->index, c->index, c->t_exit);
        if (tag) {
          __atomic_store_n(&r->wtag, tag, __ATOMIC_RELEASE);
          ls_rec_set_flags(r, LS_REC_EVENT_RECORDED);
          ls_dev_arm(tag);
        } else {
          __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
        }
      } else {
        ls_rec_set_flags(r, LS_REC_NO_DEVICE);
        __atomic_store_n(&r->wtag, LS_WTAG_NONE, __ATOMIC_RELEASE);
      }
    }
    break;
  default:
    break;
  }
  tl_guard = 0;
}

/* Only the calling thread's guard: used by lockstep's own threads so nothing they do
 * (e.g. the watchdog's ncclCommAbort) is recorded or recursed into. */
void ls_guard_thread(void) { tl_guard = 1; }
