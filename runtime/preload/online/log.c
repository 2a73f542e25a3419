/* online/log.c — the cross-host transport, for a channel directory on a filesystem the
 * hosts share: one append-only log per rank, x-<job key>-<key id>-<comm>-r<rank>.log,
 * written in batches by open/append/close and read by open/pread/close at most every
 * LOCKSTEP_ONLINE_DIR_POLL_MS — NFS guarantees close-to-open consistency, not a coherent
 * mapping. A rank logs while one of the ranks that compare with it is not on its host's
 * file; it reads the log of a peer that is not on its host's file, at most LS_DIR_PEERS
 * of them (equality is transitive: rank r always checking r+1 covers every pair). It
 * owns the batches (dbuf) and the copies of peers' fingerprints (ls_remote, ring). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "online.h"

static int g_xnoticed; /* one notice per process about the cross-host transport */

/* Rank q's log in communicator `comm`. */
void ls_on_log_path(char *out, size_t cap, uint64_t comm, int q) {
  snprintf(out, cap, "%s/x-%016llx-%016llx-%016llx-r%d.log", ls_on.dir, (unsigned long long)ls_on.job,
           (unsigned long long)ls_on_key_id(), (unsigned long long)comm, q);
}

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
int ls_on_window_absent(struct ls_online_comm *oc) {
  int npeers = ls_on_npeers(oc);
  for (int k = 1; k <= npeers; k++) {
    int q = ((oc->rank - k) % oc->size + oc->size) % oc->size;
    if (!__atomic_load_n(&ls_on_status_of(oc, q)->gen, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&ls_on_status_of(oc, (oc->rank + k) % oc->size)->gen, __ATOMIC_ACQUIRE))
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
  d->mac = ls_on_mac(d, sizeof *d, oc->id, oc->rank);
}

void ls_on_log_fp(struct ls_online_comm *oc, const struct ls_fp *f) {
  if (!ls_cfg.online_crosshost || oc->dir_pub < 0)
    return;
  if (!oc->dir_decided) {
    oc->dir_decided = 1;
    oc->dir_pub = ls_on_window_absent(oc);
    if (oc->dir_pub) {
      struct ls_dir_hello h;
      memset(&h, 0, sizeof h);
      h.host = ls_on.host;
      h.comm = oc->id;
      h.apis = ls_on.apis;
      h.size = oc->size;
      h.rank = oc->rank;
      ls_on_host_name(h.name, sizeof h.name);
      dir_queue(oc, DR_HELLO, &h, sizeof h);
    }
  }
  if (oc->dir_pub > 0) {
    struct ls_fp c = *f;
    c.mac = 0;
    dir_queue(oc, DR_FP, &c, sizeof c);
  }
}

/* A free record in the batch (flushed first when full); NULL when the log failed. */
static struct ls_dir_rec *dir_slot(struct ls_online_comm *oc) {
  if (!oc->dbuf && !(oc->dbuf = calloc(LS_DIR_BATCH, sizeof *oc->dbuf))) {
    oc->dir_pub = -1;
    return NULL;
  }
  if (oc->dn == LS_DIR_BATCH && ls_on_log_flush(oc) != 0)
    return NULL;
  return &oc->dbuf[oc->dn++];
}

/* Appends the batch: open, write, close (close-to-open: a reader that opens the log
 * afterwards sees it whole). The first append replaces a log left by an earlier run. */
int ls_on_log_flush(struct ls_online_comm *oc) {
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
void ls_on_log_status(struct ls_online_comm *oc, const struct ls_fp_status *v) {
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

void ls_on_log_reject(struct ls_online_comm *oc, unsigned slot, int p, const char *what) {
  struct ls_remote *rm = oc->rem[slot];
  char path[640];
  ls_on_log_path(path, sizeof path, oc->id, p);
  if (rm->state == 1)
    oc->nread--;
  rm->state = -1;
  free(rm->ring);
  rm->ring = NULL;
  oc->bad_peers |= 1ull << slot;
  ls_on_reject_in(oc, path, p, what);
}

/* Reads what is new in peer p's log. A record that fails validation may be one being
 * written (a reader can see part of an append): it is rejected only when it still
 * fails a second later. */
static void rem_poll(struct ls_online_comm *oc, unsigned slot, int p, uint64_t now) {
  struct ls_remote *rm = oc->rem[slot];
  char path[640];
  ls_on_log_path(path, sizeof path, oc->id, p);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return; /* not there yet */
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 077)) {
    close(fd);
    ls_on_log_reject(oc, slot, p, "a log not private to this user");
    return;
  }
  if ((uint64_t)st.st_size < rm->off) {
    close(fd);
    ls_on_log_reject(oc, slot, p, "a log that shrank");
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
          ls_on_mac(d, sizeof *d, oc->id, p) != d->mac)
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
          ls_on_log_reject(oc, slot, p, bad);
        close(fd);
        return;
      }
      rm->t_bad = 0;
      rm->off += sizeof *d;
      rm->nrec++;
      budget--;
      if (d->type == DR_HELLO) {
        if (d->u.hello.host == ls_on.host)
          rm->state = 2; /* same host: its row in our file is the one to read */
        else if (d->u.hello.apis != ls_on.apis)
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
void ls_on_log_poll(struct ls_online_comm *oc, uint64_t now) {
  if (!ls_cfg.online_crosshost)
    return;
  int npeers = ls_on_npeers(oc);
  for (int k = 1; k <= npeers; k++) {
    unsigned slot = (unsigned)(k - 1);
    int p = (oc->rank + k) % oc->size;
    if (oc->bad_peers & (1ull << slot))
      continue;
    struct ls_remote *rm = oc->rem[slot];
    if (!rm) {
      if (__atomic_load_n(&ls_on_status_of(oc, p)->gen, __ATOMIC_ACQUIRE))
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
      if (__atomic_load_n(&ls_on_status_of(oc, p)->gen, __ATOMIC_ACQUIRE)) {
        rm->state = 2;
        continue;
      }
      uint64_t age = oc->t_first ? now - oc->t_first : 0;
      uint64_t every = age > LS_DIR_NOTSEEN_NS ? 2000000000ull
                       : age > 2000000000ull   ? 500000000ull
                                               : ls_cfg.online_dir_poll_ns;
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
                               oc->rank, p, (unsigned long long)oc->id, ls_on.dir));
      }
    }
    rem_poll(oc, slot, p, now);
  }
}
int ls_on_log_fp_of(const struct ls_remote *rm, uint64_t idx, struct ls_fp *out) {
  if (idx >= rm->nfp)
    return 0;
  if (rm->nfp - idx > LS_FP_SLOTS)
    return 2;
  *out = rm->ring[idx % LS_FP_SLOTS];
  return ls_api_desc_of((uint16_t)out->api) ? 1 : -1;
}

/* What rank q's log says at exit: -1 no valid log, 1 it ends with an exited status,
 * 0 otherwise; *host: the writer's host key. */
static int log_state(struct ls_online_comm *oc, int q, uint64_t *host) {
  char path[640];
  ls_on_log_path(path, sizeof path, oc->id, q);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  struct ls_dir_rec h, t;
  int rc = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
      st.st_size >= (off_t)sizeof h && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
      h.magic == LS_DIR_MAGIC && h.type == DR_HELLO && h.n == 0 &&
      ls_on_mac(&h, sizeof h, oc->id, q) == h.mac) {
    *host = h.u.hello.host;
    off_t last = (st.st_size / (off_t)sizeof t - 1) * (off_t)sizeof t;
    rc = pread(fd, &t, sizeof t, last) == (ssize_t)sizeof t && t.magic == LS_DIR_MAGIC &&
         t.type == DR_STATUS && ls_on_mac(&t, sizeof t, oc->id, q) == t.mac &&
         (t.u.st.flags & ST_EXITED);
  }
  close(fd);
  return rc;
}

/* Rank s's log can go once s has exited and so has every rank that reads it: those
 * it is compared with on other hosts (a rank with no log, or on s's host, reads s's
 * row in the mapped file instead). */
int ls_on_log_done(struct ls_online_comm *oc, int s) {
  uint64_t hs = 0, hq = 0;
  if (log_state(oc, s, &hs) != 1)
    return 0;
  int npeers = ls_on_npeers(oc);
  for (int k = 1; k <= npeers; k++) {
    int q = ((s - k) % oc->size + oc->size) % oc->size;
    int st = log_state(oc, q, &hq);
    if (st >= 0 && hq != hs && st != 1)
      return 0;
  }
  return 1;
}
