/* online/channel.c — the side channel's set-up and its publisher: ranks of a communicator
 * publish the fingerprints of their collectives, and each rank's watchdog thread compares
 * its calls with the others' as soon as both have issued collective k, and calls a skip
 * early from the published progress plus device completion — long before a timeout and
 * without any barrier: application threads are not involved, the publisher walks the
 * trace on the watchdog thread. This file owns the keys, the directory, the walk of the
 * trace (what is published, paused or skipped) and the channel's end at exit and fork;
 * the transports (shm.c same host, log.c across hosts) carry the messages, check.c
 * compares them and reports.
 *
 * Every message carries a keyed hash (siphash.c) over the per-job secret
 * LOCKSTEP_JOB_SECRET (set by `lockstep run`), the communicator and the rank. A message
 * that fails validation is rejected, reported once, and its rank no longer compared. A
 * channel that cannot be set up says so once; traces are written as always. Only
 * collectives are compared, numbered among themselves (send/recv counts may
 * legitimately differ per rank). The last process out unlinks the files. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "online.h"

_Static_assert(LS_FP_KIND_P2P == LS_KIND_P2P, "fingerprint.h's p2p kind");

struct ls_online_state ls_on = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* The publisher's walk of the trace. */
static uint64_t g_published;      /* trace records [0, g_published) looked at */
static uint64_t g_last_seq_index; /* trace index of the latest sequenced call, +1 */
static uint64_t g_free_index = UINT64_MAX;
static unsigned g_free_ticks;

/* Communicator ids of MPI_COMM_WORLD & co. are the same in every job, and files of
 * a killed run stay behind: the file name also carries what the ranks of one run
 * share and other runs do not — the trace directory and the launcher's job ids. */
static uint64_t job_key(void) {
  const char *dir = ls_cfg.trace_dir;
  char real[4096];
  if (realpath(dir, real))
    dir = real;
  uint64_t h = ls_hash_bytes(0x6a6f62, dir, strlen(dir));
  for (unsigned i = 0; i < LS_CFG_JOB_IDS; i++) {
    const char *v = ls_cfg.job_ids[i];
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
  const char *o = ls_cfg.online_host;
  if (o)
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

void ls_on_host_name(char *out, size_t cap) {
  snprintf(out, cap, "%s", ls_cfg.online_host ? ls_cfg.online_host : ls_g.hdr->hostname);
}

/* File names carry an id of the key (a MAC of a constant no message has the length
 * of): a file left by an earlier run (killed, same trace directory and launcher ids)
 * or written by a job with another secret is never opened, rather than rejected as
 * foreign — which would turn the check off — or, with the same secret, trusted. */
uint64_t ls_on_key_id(void) {
  static const char what[] = "lockstep file name";
  return ls_siphash(ls_on.key, what, sizeof what - 1);
}

void ls_on_notice_off(const char *why, const char *what) {
  if (ls_on.noticed++)
    return;
  char msg[768];
  int n = snprintf(msg, sizeof msg,
                   "lockstep: online check off: %s %s; the trace is still written (compare "
                   "traces with `lockstep compare`)\n",
                   why, what);
  if (n > 0)
    (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

/* The key: LOCKSTEP_JOB_SECRET (32 hex digits, set by `lockstep run`); without it a
 * key derived from the job key, which only detects corruption (the directory mode is
 * then the only protection). */
static void load_key(void) {
  ls_on.key[0] = ls_cfg.have_secret ? ls_cfg.secret[0] : ls_hash_u64(0x6b6579, ls_on.job);
  ls_on.key[1] = ls_cfg.have_secret ? ls_cfg.secret[1] : ls_hash_u64(0x6b657932, ls_on.job);
}

/* The channel directory: created 0700 if missing; an existing one must be this
 * user's and closed to others, or nobody else's messages could be ruled out. */
static int setup_dir(void) {
  if (ls_cfg.online_dir)
    snprintf(ls_on.dir, sizeof ls_on.dir, "%s", ls_cfg.online_dir);
  else {
    snprintf(ls_on.dir, sizeof ls_on.dir, "%s/online", ls_cfg.trace_dir);
    ls_on.dir_ours = 1;
  }
  if (mkdir(ls_on.dir, 0700) != 0 && errno != EEXIST) {
    char why[600];
    snprintf(why, sizeof why, "cannot create the side-channel directory %s:", ls_on.dir);
    ls_on_notice_off(why, strerror(errno));
    return -1;
  }
  struct stat st;
  if (lstat(ls_on.dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 077)) {
    char why[600];
    snprintf(why, sizeof why, "side-channel directory %s", ls_on.dir);
    ls_on_notice_off(why, "is not a directory of this user closed to others (mode 0700)");
    return -1;
  }
  return 0;
}

int ls_on_dir_ready(void) {
  static int dir_state; /* made when a first communicator needs it: 1 ok, -1 not usable */
  if (!dir_state)
    dir_state = setup_dir() == 0 ? 1 : -1;
  if (dir_state < 0)
    ls_on.state = -1;
  return dir_state > 0;
}

int ls_on_enabled(void) {
  if (!ls_on.state) {
    ls_on.state = ls_cfg.online_off ? -1 : 1;
    ls_on.job = job_key();
    load_key();
    for (uint16_t a = 0; ls_api_desc_of(a); a++)
      ls_on.apis = ls_hash_bytes(ls_on.apis, ls_api_desc_of(a)->name, strlen(ls_api_desc_of(a)->name) + 1);
    if (ls_g.hdr)
      ls_on.host = host_key();
  }
  return ls_on.state > 0;
}

/* ---- publishing ---------------------------------------------------------------------- */

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
  f.mac = ls_on_mac(&f, sizeof f, oc->id, oc->rank);
  ls_on_shm_put_fp(oc, &f);
  if (!oc->t_first)
    oc->t_first = ls_now_ns();
  ls_on_log_fp(oc, &f);
}

static void publish_status(struct ls_online_comm *oc, uint32_t flags) {
  struct ls_fp_status *s = ls_on_status_of(oc, oc->rank);
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
  v.mac = ls_on_mac(&v, sizeof v, oc->id, oc->rank);
  ls_on_log_status(oc, &v);
  ls_on_shm_put_status(oc, &v);
}

static void tick_locked(int idle);

/* The ordinal the channel reads next, for a ring's floor (core.c); UINT64_MAX while it
 * reads nothing. */
static uint64_t g_floor_pos = UINT64_MAX;
uint64_t ls_on_floor(void) { return __atomic_load_n(&g_floor_pos, __ATOMIC_ACQUIRE); }

static void online_tick(struct ls_tick *t) {
  int idle = ls_tick_idle(t);
  pthread_mutex_lock(&ls_on.lock);
  int on = ls_on_enabled() && ls_g.hdr;
  if (on)
    tick_locked(idle);
  __atomic_store_n(&g_floor_pos, on ? g_published : UINT64_MAX, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&ls_on.lock);
}

static void tick_locked(int idle) {
  uint64_t lim = ls_rec_limit();
  /* A ring reused the slots below its floor: calls the channel never saw (it started
   * after the ring came round) are gone. */
  uint64_t floor = ls_g.ring ? __atomic_load_n(&ls_g.floor, __ATOMIC_ACQUIRE) : 0;
  if (g_published < floor)
    g_published = floor;
  while (g_published < lim) {
    int paused = ls_on_paused_at(g_published);
    const struct ls_trace_record *r = ls_rec_live(g_published);
    uint32_t st = r ? __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) : LS_REC_FREE;
    if (!r)
      break; /* a ring's slot still naming an older ordinal: being written */
    if (st == LS_REC_FREE) {
      /* being written: next tick; dropped for lack of disk space: skip it after ~1 s */
      if (g_free_index != g_published) {
        g_free_index = g_published;
        g_free_ticks = 0;
      }
      /* (never in a ring: no call is dropped there after taking its ordinal) */
      if (++g_free_ticks < 100 || ls_g.ring)
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
    struct ls_online_comm *oc = ls_on_comm_for(r->comm_id, r->comm_rank, r->comm_size);
    if (!oc || r->comm_rank != oc->rank)
      continue;
    if (!paused)
      publish(oc, r, index);
    else {
      oc->paused++;
      oc->last_index = index; /* a call here all the same (ST_OTHER_AFTER) */
    }
  }
  uint64_t now = ls_now_ns();
  for (unsigned i = 0; i < ls_on.ncomms; i++) {
    struct ls_online_comm *oc = &ls_on.comms[i];
    if (!oc->map)
      continue;
    uint32_t flags = (idle && g_published == lim ? ST_IDLE : 0) |
                     (g_last_seq_index > oc->last_index + 1 ? ST_OTHER_AFTER : 0);
    publish_status(oc, flags);
    if (ls_cfg.online_crosshost && now - oc->t_dir >= ls_cfg.online_dir_poll_ns) {
      oc->t_dir = now;
      if (oc->dir_pub > 0 && !ls_on_window_absent(oc))
        oc->dir_pub = 0; /* everyone it compares with is on this host's file */
      ls_on_log_flush(oc);
      ls_on_log_poll(oc, now);
    }
    ls_on_check(oc, now);
  }
}

static void online_at_exit(void) {
  pthread_mutex_lock(&ls_on.lock);
  if (ls_on_enabled() && ls_g.hdr) {
    tick_locked(0); /* what was issued since the last tick, then exited */
    /* The last one out unlinks: a rank that exits early (the skip case) must stay
     * visible, exited, to a rank that maps the file later. */
    for (unsigned i = 0; i < ls_on.ncomms; i++) {
      struct ls_online_comm *oc = &ls_on.comms[i];
      if (!oc->map)
        continue;
      int logged = ls_cfg.online_crosshost && oc->dir_pub >= 0 && (oc->dseq || oc->dn);
      if (logged)
        oc->dir_pub = 1; /* the exit goes into the log too: its readers and cleanup need it */
      publish_status(oc, oc->st_flags | ST_EXITED);
      if (logged)
        ls_on_log_flush(oc);
      if (ls_cfg.online_stats) {
        char msg[256];
        int n = snprintf(msg, sizeof msg,
                         "lockstep: rank %d: online: comm %016llx: %llu collectives published, "
                         "%llu paused\n",
                         oc->rank, (unsigned long long)oc->id, (unsigned long long)oc->ncoll,
                         (unsigned long long)oc->paused);
        ls_on_say(msg, n, sizeof msg);
      }
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      /* Spanning hosts: a row that never appeared is a rank elsewhere, not a late one. */
      int spans = 0;
      for (unsigned k = 0; k < LS_ONLINE_PEERS; k++)
        spans |= oc->rem[k] && (oc->rem[k]->state == 1 || oc->rem[k]->state == 3);
      int others = 0;
      for (int p = 0; p < oc->size; p++) {
        struct ls_fp_status st;
        int rs = p != oc->rank ? ls_on_read_status(oc, p, &st) : 1;
        if (p != oc->rank && ((rs <= 0 && !spans) ||
            (rs > 0 && !(st.flags & ST_EXITED) &&
             !(st.pid > 0 && kill(st.pid, 0) != 0 && errno == ESRCH))))
          others++; /* running, or not arrived yet: it still needs the file */
      }
      if (!others)
        unlink(oc->path);
      if (!ls_cfg.online_crosshost)
        continue;
      /* Logs: this rank's, and those of the peers it read, each once all its readers
       * are done (whoever exits last removes it). */
      char path[640];
      if (logged && ls_on_log_done(oc, oc->rank))
        unlink(oc->log);
      int npeers = ls_on_npeers(oc);
      for (int k = 1; k <= npeers; k++) {
        struct ls_remote *rm = oc->rem[k - 1];
        if (!rm || (rm->state != 1 && rm->state != 3))
          continue;
        int q = (oc->rank + k) % oc->size;
        ls_on_log_path(path, sizeof path, oc->id, q);
        if (ls_on_log_done(oc, q))
          unlink(path);
      }
    }
    if (ls_on.ncomms && ls_on.dir_ours)
      rmdir(ls_on.dir); /* the last one out removes it (fails while others remain) */
  }
  ls_on.state = -1; /* the watchdog outlives the exit handler: no more ticks */
  pthread_mutex_unlock(&ls_on.lock);
}

static void online_after_fork(void) {
  pthread_mutex_init(&ls_on.lock, NULL);
  ls_on.ncomms = 0; /* the parent's mappings stay mapped but unused */
  g_published = 0;
  g_floor_pos = UINT64_MAX;
  g_last_seq_index = 0;
  ls_on_pause_after_fork();
}

/* Publishing and the peers' checks run every tick: no back-off while the channel is on.
 * Under the lock: the exit handler turns the channel off while the thread still ticks. */
static int online_quiet(struct ls_tick *t) {
  (void)t;
  pthread_mutex_lock(&ls_on.lock);
  int quiet = !ls_on_enabled() || !ls_g.hdr;
  pthread_mutex_unlock(&ls_on.lock);
  return quiet;
}

static const struct ls_subsystem g_online = {
    .name = "online", .order = LS_ORDER_ONLINE, .tick = online_tick, .quiet = online_quiet,
    .at_exit = online_at_exit, .after_fork = online_after_fork};
__attribute__((constructor)) static void online_register(void) { ls_subsystem_register(&g_online); }
