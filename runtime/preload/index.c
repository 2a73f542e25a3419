/* index.c — the recorder's digest index (trace_index.h), written beside the trace by
 * the watchdog thread: each tick takes the records below the low-water mark (returned,
 * and complete where completion is watched) into the indexer, appends the full blocks
 * and publishes a snapshot. Never on the call path; the file is reserved whole when it
 * is created, so a full disk cannot SIGBUS a write into it (then there is no index, and
 * compare computes the digests itself). LOCKSTEP_INDEX=0 turns it off. A subsystem: it
 * ticks after the online check (either order indexes the same records, those below the
 * tick's low-water mark) and ends after it at exit, so its events are indexed too. */
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
#include "trace_index.h"

enum { IX_NONE = 0, IX_ON = 1, IX_OFF = 2 };
static int g_state;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* the watchdog's tick against the exit handler's */
static struct ls_indexer g_ix;
static struct ls_idx_live g_slots[LS_INDEX_MAX_STREAMS];
static uint64_t g_hash[LS_MAX_APIS];
static uint16_t g_kind[LS_MAX_APIS];
static struct ls_index_header *g_h;
static size_t g_size;
static uint64_t g_nentries;
static int g_fd = -1; /* a ring's index, kept open to grow: it covers the whole history */
/* The ordinal the index reads next, for a ring's floor; UINT64_MAX when it reads no more. */
static uint64_t g_floor_pos;

/* Doubles a ring's index file (reserved, then mapped anew); 0 on success. Under g_lock. */
static int grow_file(void) {
  size_t size = g_size * 2;
  int err;
  while ((err = fallocate(g_fd, 0, (off_t)g_size, (off_t)(size - g_size)) != 0 ? errno : 0) == EINTR)
    ;
  if (err && ((err != EOPNOTSUPP && err != ENOSYS) || ftruncate(g_fd, (off_t)size) != 0))
    return -1;
  void *m = mremap(g_h, g_size, size, MREMAP_MAYMOVE);
  if (m == MAP_FAILED)
    return -1;
  g_h = m;
  g_size = size;
  g_h->entries_cap = (size - g_h->entries_offset) / sizeof(struct ls_index_block);
  return 0;
}

static void emit(void *arg, const struct ls_index_block *b) {
  (void)arg;
  if (g_nentries >= g_h->entries_cap && (g_fd < 0 || grow_file() != 0)) {
    g_ix.stopped = 1; /* no room: the index covers what it has published */
    return;
  }
  struct ls_index_block *e = (struct ls_index_block *)((char *)g_h + g_h->entries_offset);
  e[g_nentries++] = *b;
}

static int open_index(void) {
  if (ls_cfg.index_off)
    return -1;
  uint32_t block = ls_cfg.index_block;
  char path[sizeof ls_g.path + 8];
  snprintf(path, sizeof path, "%s%s", ls_g.path, LS_INDEX_SUFFIX);
  uint64_t snap_bytes = sizeof(struct ls_index_snap) + LS_INDEX_MAX_STREAMS * sizeof(struct ls_index_stream);
  snap_bytes = (snap_bytes + 4095) / 4096 * 4096;
  uint64_t cap = ls_g.capacity / block + 16;
  uint64_t size = LS_INDEX_HEADER_SIZE + 2 * snap_bytes + cap * sizeof(struct ls_index_block);
  size = (size + 4095) / 4096 * 4096;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  int err;
  while ((err = fallocate(fd, 0, 0, (off_t)size) != 0 ? errno : 0) == EINTR)
    ;
  if (err && (err != EOPNOTSUPP && err != ENOSYS)) {
    close(fd);
    unlink(path);
    return -1;
  }
  if (err && ftruncate(fd, (off_t)size) != 0) {
    close(fd);
    unlink(path);
    return -1;
  }
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    unlink(path);
    return -1;
  }
  if (ls_g.ring)
    g_fd = fd;
  else
    close(fd);
  struct ls_index_header *h = m;
  memcpy(h->magic, LS_INDEX_MAGIC, 8);
  h->version = LS_INDEX_VERSION;
  h->header_size = LS_INDEX_HEADER_SIZE;
  h->block = block;
  h->max_streams = LS_INDEX_MAX_STREAMS;
  h->entry_size = sizeof(struct ls_index_block);
  h->pid = ls_g.hdr->pid;
  h->t0_realtime_ns = ls_g.hdr->t0_realtime_ns;
  h->snap_offset[0] = LS_INDEX_HEADER_SIZE;
  h->snap_offset[1] = LS_INDEX_HEADER_SIZE + snap_bytes;
  h->entries_offset = LS_INDEX_HEADER_SIZE + 2 * snap_bytes;
  h->entries_cap = (size - h->entries_offset) / sizeof(struct ls_index_block);
  g_h = h;
  g_size = size;
  g_nentries = 0;
  ls_idx_init(&g_ix, block, g_slots, LS_INDEX_MAX_STREAMS, g_hash, g_kind, 0, emit, NULL);
  g_ix.collide = ls_cfg.test_index_collide;
  g_ix.collide_seq = ls_cfg.test_index_collide_seq;
  return 0;
}

static void publish(void) {
  uint32_t cur = __atomic_load_n(&g_h->current, __ATOMIC_ACQUIRE);
  unsigned which = cur == 1 ? 1 : 0; /* the snapshot not in force */
  struct ls_index_snap *sn = (struct ls_index_snap *)((char *)g_h + g_h->snap_offset[which]);
  struct ls_index_stream *st = (struct ls_index_stream *)(sn + 1);
  for (unsigned i = 0; i < g_ix.ns; i++)
    st[i] = g_ix.st[i].s;
  struct ls_index_snap v = {g_ix.covered, g_nentries, g_ix.features, g_ix.ns, 0};
  uint64_t c = ls_idx_check(&v, sizeof v);
  v.check = c ^ ls_idx_check(st, g_ix.ns * sizeof *st);
  *sn = v;
  __atomic_store_n(&g_h->current, which + 1, __ATOMIC_RELEASE);
}

/* Records [covered, upto) that have returned, in order; stops at the first that has not. */
static void index_upto(uint64_t upto) {
  if (g_state == IX_NONE) /* under g_lock; ls_index_tick reads it without */
    __atomic_store_n(&g_state, open_index() == 0 ? IX_ON : IX_OFF, __ATOMIC_RELEASE);
  if (g_state != IX_ON || g_ix.stopped)
    return;
  unsigned napis = 0;
  while (napis < LS_MAX_APIS && ls_api_desc_of((uint16_t)napis))
    napis++;
  for (unsigned a = g_ix.napis; a < napis; a++) {
    const struct ls_api_desc *d = ls_api_desc_of((uint16_t)a);
    g_hash[a] = ls_idx_name_hash(d->name);
    g_kind[a] = d->kind;
  }
  g_ix.napis = napis;
  uint64_t lim = ls_rec_limit(), from = g_ix.covered;
  if (upto > lim)
    upto = lim;
  while (g_ix.covered < upto) {
    const struct ls_trace_record *r = ls_rec_live(g_ix.covered);
    if (!r || __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != LS_REC_RETURNED ||
        ls_idx_feed(&g_ix, g_ix.covered, r) != 0)
      break;
  }
  if (g_ix.covered != from)
    publish();
  __atomic_store_n(&g_floor_pos, g_ix.stopped ? UINT64_MAX : g_ix.covered, __ATOMIC_RELEASE);
}

uint64_t ls_index_floor(void) {
  /* before its first tick the index holds everything back: it must see every record */
  return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == IX_OFF ? UINT64_MAX
                                                                : __atomic_load_n(&g_floor_pos, __ATOMIC_ACQUIRE);
}

void ls_index_tick(uint64_t lowwater) {
  if (!ls_g.hdr || __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == IX_OFF)
    return;
  pthread_mutex_lock(&g_lock);
  index_upto(lowwater);
  pthread_mutex_unlock(&g_lock);
}

void ls_index_shutdown(void) {
  if (!ls_g.hdr)
    return;
  pthread_mutex_lock(&g_lock);
  index_upto(UINT64_MAX); /* every returned record: the program is done with them */
  pthread_mutex_unlock(&g_lock);
}

void ls_index_reset_after_fork(void) {
  pthread_mutex_init(&g_lock, NULL);
  if (g_h)
    munmap(g_h, g_size); /* the parent's file: the child indexes its own trace */
  g_h = NULL;
  if (g_fd >= 0)
    close(g_fd);
  g_fd = -1;
  g_floor_pos = 0;
  __atomic_store_n(&g_state, IX_NONE, __ATOMIC_RELEASE);
}

static void index_tick(struct ls_tick *t) { ls_index_tick(ls_tick_lowwater(t)); }
static int index_quiet(struct ls_tick *t) { /* a later tick indexes what this one left */
  (void)t;
  return 1;
}
static const struct ls_subsystem g_index = {
    .name = "index", .order = LS_ORDER_INDEX, .tick = index_tick, .quiet = index_quiet,
    .at_exit = ls_index_shutdown, .after_fork = ls_index_reset_after_fork};
__attribute__((constructor)) static void index_register(void) { ls_subsystem_register(&g_index); }
