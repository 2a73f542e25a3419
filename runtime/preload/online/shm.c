/* online/shm.c — the same-host transport: one shared file per communicator,
 * online-<host key>-<job key>-<key id>-<comm>.fp in the channel directory, 0600, mapped:
 * a header page, then per rank a status block (progress, idle, exited, pid) and a ring
 * of LS_FP_SLOTS fingerprints (slot = collective index % LS_FP_SLOTS), each published
 * seqlock-style. It owns the mappings (ls_on.comms[].map); a rank writes only its own
 * row, and what it reads of the others is checked against their MAC here. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "online.h"

struct ls_fp_status *ls_on_status_of(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp_status *)((char *)oc->map + LS_HDR_PAGE + (size_t)rank * ROW_SIZE);
}

struct ls_fp *ls_on_row(struct ls_online_comm *oc, int rank) {
  return (struct ls_fp *)(ls_on_status_of(oc, rank) + 1);
}

struct ls_online_comm *ls_on_comm_for(uint64_t id, int rank, int size) {
  for (unsigned i = 0; i < ls_on.ncomms; i++)
    if (ls_on.comms[i].id == id)
      return ls_on.comms[i].map ? &ls_on.comms[i] : NULL;
  if (ls_on.ncomms == LS_ONLINE_COMMS || rank < 0 || size <= 1 || rank >= size)
    return NULL;
  if (!ls_on_dir_ready())
    return NULL;
  struct ls_online_comm *oc = &ls_on.comms[ls_on.ncomms++];
  memset(oc, 0, sizeof *oc);
  oc->id = id; /* remembered even if mapping fails, so it is tried once */
  oc->rank = rank;
  oc->size = size;
  /* The host is in the name: ranks elsewhere sharing that directory over a network
   * filesystem must not share the mapping (it is not coherent across hosts). */
  snprintf(oc->path, sizeof oc->path, "%s/online-%016llx-%016llx-%016llx-%016llx.fp", ls_on.dir,
           (unsigned long long)ls_on.host, (unsigned long long)ls_on.job, (unsigned long long)ls_on_key_id(),
           (unsigned long long)id);
  ls_on_log_path(oc->log, sizeof oc->log, id, rank);
  size_t sz = LS_HDR_PAGE + (size_t)size * ROW_SIZE;
  int fd = open(oc->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    ls_on_notice_off("cannot open", oc->path);
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) ||
      !S_ISREG(st.st_mode)) {
    close(fd);
    ls_on_reject(oc, -1, "a file not private to this user");
    return NULL;
  }
  if (st.st_size < (off_t)sz && ftruncate(fd, (off_t)sz) != 0) {
    close(fd);
    ls_on_notice_off("cannot size", oc->path);
    return NULL;
  }
  /* Reserve this rank's row (and the header) so publishing cannot SIGBUS on a full
   * disk; other rows are only read where their owners wrote them. */
  if ((fallocate(fd, 0, 0, LS_HDR_PAGE) != 0 && errno == ENOSPC) ||
      (fallocate(fd, 0, (off_t)(LS_HDR_PAGE + (size_t)rank * ROW_SIZE), (off_t)ROW_SIZE) != 0 &&
       errno == ENOSPC)) {
    close(fd);
    ls_on_notice_off("no space for", oc->path);
    return NULL;
  }
  void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    ls_on_notice_off("cannot map", oc->path);
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
    h->apis = ls_on.apis;
    struct ls_fp_header v = *h;
    v.magic = LS_FP_MAGIC; /* as readers will see it */
    h->mac = ls_on_mac(&v, sizeof v, id, -1);
    __atomic_store_n(&h->magic, LS_FP_MAGIC, __ATOMIC_RELEASE);
  }
  for (int spin = 0; __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == 1 && spin < 1000; spin++)
    usleep(100); /* another rank is writing the header */
  struct ls_fp_header c = *h;
  uint64_t want = c.mac;
  c.magic = LS_FP_MAGIC;
  if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != LS_FP_MAGIC || c.version != LS_FP_VERSION ||
      c.comm_id != id || c.size != size || ls_on_mac(&c, sizeof c, id, -1) != want) {
    ls_on_reject(oc, -1, "its header");
    munmap(m, sz);
    oc->map = NULL;
    return NULL;
  }
  if (c.apis != ls_on.apis) { /* another lockstep build: not comparable, not hostile */
    munmap(m, sz);
    oc->map = NULL;
    return NULL;
  }
  return oc;
}
void ls_on_shm_put_fp(struct ls_online_comm *oc, const struct ls_fp *f) {
  struct ls_fp *s = &ls_on_row(oc, oc->rank)[(f->tag - 1) % LS_FP_SLOTS];
  __atomic_store_n(&s->tag, 0, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy((char *)s + 8, (const char *)f + 8, sizeof *f - 8);
  __atomic_store_n(&s->tag, f->tag, __ATOMIC_RELEASE);
}

void ls_on_shm_put_status(struct ls_online_comm *oc, const struct ls_fp_status *v) {
  struct ls_fp_status *s = ls_on_status_of(oc, oc->rank);
  __atomic_store_n(&s->gen, v->gen - 1, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy((char *)s + 8, (const char *)v + 8, sizeof *v - 8);
  __atomic_store_n(&s->gen, v->gen, __ATOMIC_RELEASE);
}

int ls_on_read_fp(struct ls_online_comm *oc, int p, uint64_t idx, struct ls_fp *out) {
  struct ls_fp *y = &ls_on_row(oc, p)[idx % LS_FP_SLOTS];
  uint64_t want = idx + 1;
  uint64_t ty = __atomic_load_n(&y->tag, __ATOMIC_ACQUIRE);
  if (ty != want)
    return ty > want ? 2 : 0;
  memcpy(out, y, sizeof *out);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (__atomic_load_n(&y->tag, __ATOMIC_ACQUIRE) != want)
    return 0; /* rewritten while copied: look again next tick */
  out->tag = want;
  if (ls_on_mac(out, sizeof *out, oc->id, p) != out->mac || !ls_api_desc_of((uint16_t)out->api) ||
      out->api >= LS_MAX_APIS)
    return -1;
  return 1;
}

int ls_on_read_status(struct ls_online_comm *oc, int p, struct ls_fp_status *out) {
  struct ls_fp_status *s = ls_on_status_of(oc, p);
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
    return ls_on_mac(out, sizeof *out, oc->id, p) == out->mac ? 1 : -1;
  }
  return 0;
}

int ls_on_my_fp(struct ls_online_comm *oc, uint64_t k, struct ls_fp *out) {
  struct ls_fp *x = &ls_on_row(oc, oc->rank)[k % LS_FP_SLOTS];
  if (__atomic_load_n(&x->tag, __ATOMIC_ACQUIRE) != k + 1)
    return 0;
  *out = *x;
  return 1;
}
