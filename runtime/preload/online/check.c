/* online/check.c — the comparison: every collective both this rank and a peer have
 * published, oldest first, by fingerprint.h's ls_fp_diff (so compare names the same
 * class for the same two calls); a peer that has not issued collective k while this
 * rank's k is stuck on the device is skipped when it has moved on, slow otherwise. It
 * owns the report lines and the lockstep_mismatch records, and hands each divergence
 * to the core's policy. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "online.h"

void ls_on_reject_in(struct ls_online_comm *oc, const char *path, int from, const char *what) {
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

void ls_on_say(char *msg, int n, size_t cap) {
  if (ls_cfg.online_timestamps && n > 0 && (size_t)n < cap) {
    uint64_t t = ls_now_ns();
    n--; /* before the newline */
    n += snprintf(msg + n, cap - (size_t)n, " [t=%llu.%09llu]\n",
                  (unsigned long long)(t / 1000000000ull), (unsigned long long)(t % 1000000000ull));
  }
  if (n > 0)
    (void)!write(2, msg, (size_t)n < cap ? (size_t)n : cap - 1);
}

static void event(struct ls_online_comm *oc, uint64_t seq, int peer, int32_t what) {
  /* what: 0 mismatch, 1 skip */
  ls_rec_report(ls_g.mismatch_api, oc->id, oc->rank, oc->size, ls_now_ns(), seq,
                (uint64_t)(uint32_t)peer | (uint64_t)what << 32);
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
  ls_on_say(msg, n, sizeof msg);
  event(oc, seq, peer, 0);
  ls_trace_sync();
  ls_core_divergence(oc->id);
}

/* A peer that has not issued collective k while this rank's k is stuck on the device:
 * skipped when it has moved on (exited, idle, calls elsewhere), slow otherwise. */
static void check_skip(struct ls_online_comm *oc, int p, unsigned slot, uint64_t now) {
  struct ls_fp_status st;
  struct ls_remote *rm = oc->rem[slot] && oc->rem[slot]->state == 1 ? oc->rem[slot] : NULL;
  int rs = rm ? rm->have_st : ls_on_read_status(oc, p, &st);
  if (rm && rs)
    st = rm->st;
  if (rs < 0) {
    oc->bad_peers |= 1ull << slot;
    ls_on_reject(oc, p, "a status message");
    return;
  }
  if (rs == 0 || st.ncoll >= oc->ncoll)
    return;
  struct ls_fp mine;
  if (!ls_on_my_fp(oc, st.ncoll, &mine) || mine.index >= ls_rec_limit())
    return;
  if (ls_g.ring && mine.index < __atomic_load_n(&ls_g.floor, __ATOMIC_ACQUIRE))
    return; /* below a ring's floor: done (and its slot may be in reuse) */
  const struct ls_trace_record *r = ls_rec_live(mine.index);
  if (!r || ls_rec_pending(r) <= 0 || now - r->t_enter_ns <= ls_cfg.skip_ns)
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
    ls_on_say(msg, n, sizeof msg);
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
  ls_on_say(msg, n, sizeof msg);
  event(oc, mine.seq, p, 1);
  ls_trace_sync();
  ls_core_divergence(oc->id);
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
  ls_on_say(msg, n, sizeof msg);
}

/* Compares every seq both this rank and a peer have published, oldest first. */
void ls_on_check(struct ls_online_comm *oc, uint64_t now) {
  if (oc->reported)
    return; /* one line per communicator: after the first difference all follow */
  struct ls_fp *mine = ls_on_row(oc, oc->rank);
  /* The next ranks up, cyclically: ranks sharing a host are usually contiguous. */
  int npeers = ls_on_npeers(oc);
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
      int rc = rm ? ls_on_log_fp_of(rm, *next, &b) : ls_on_read_fp(oc, p, *next, &b);
      if (rc == 2) { /* the peer lapped the ring: that seq can no longer be compared */
        (*next)++;
        continue;
      }
      if (rc < 0) {
        if (rm)
          ls_on_log_reject(oc, (unsigned)(k - 1), p, "a fingerprint");
        else {
          oc->bad_peers |= 1ull << (k - 1);
          ls_on_reject(oc, p, "a fingerprint");
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
