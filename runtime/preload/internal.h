/* internal.h — state shared by the recorder's own files (recorder.c, device.c,
 * watchdog.c); not for the family hooks, which use recorder.h only. */
#ifndef LOCKSTEP_PRELOAD_INTERNAL_H
#define LOCKSTEP_PRELOAD_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "recorder.h"
#include "config.h"

#define LS_MAX_APIS 512u
#define LS_MAX_COMMS 4096u
#define LS_DEFAULT_CAPACITY (1u << 20) /* records: 192 MiB of sparse file */
#define LS_EXIT_CODE 86                /* policy exit: distinct from any NCCL/MPI code */
#define LS_END_CODE 87                 /* policy end: a divergence reported and a hang seen */

/* Writer-private completion tag in record->wtag. */
#define LS_WTAG_PENDING 0u          /* waiting: outer group end or event not armed yet */
#define LS_WTAG_NONE 0xffffffffu    /* nothing to wait for (error, untracked, no device) */

struct ls_state {
  struct ls_trace_header *hdr;
  struct ls_trace_record *recs;
  uint64_t capacity;
  int ring;          /* a ring trace (version 3): ordinal o lives in slot o % capacity */
  /* atomic, ring only: the lowest ordinal one of the recorder's own readers (the
   * low-water mark, the digest index, the side channel) may still read; written by
   * lockstep's thread after each tick. A slot is reused only once its ordinal is below. */
  uint64_t floor;
  uint64_t *claims;      /* what claim() counts: &hdr->nrecords, or ring_claims for a ring */
  uint64_t ring_claims;  /* atomic, unused but counted (a ring claims in claim_slow) */
  uint64_t backed;   /* atomic: records whose disk blocks are reserved (fallocate) */
  int fd;            /* the trace file, kept open to reserve blocks as it fills */
  int reserve_unsupported; /* the filesystem cannot fallocate: no reservation */
  int reserve_failed;      /* atomic: the last reservation found the disk full */
  uint64_t map_size;
  uint16_t watchdog_api; /* api id of lockstep's own "watchdog" event */
  uint16_t mismatch_api; /* ... and of its "mismatch" event (online/check.c) */
  char path[4096];
};
extern struct ls_state ls_g LS_HIDDEN;

/* Api registry (recorder.c). */
LS_HIDDEN const struct ls_api_desc *ls_api_desc_of(uint16_t api);
LS_HIDDEN uint16_t ls_api_family(uint16_t api);
LS_HIDDEN uint16_t ls_api_op_class(uint16_t api);

/* Comm table walk for the watchdog (not hot path). */
LS_HIDDEN const void *ls_comm_handle_by_id(uint64_t id, uint16_t *family_out);

LS_HIDDEN ls_abort_fn ls_abort_hook_for(uint16_t family);
/* Marks the calling (lockstep-owned) thread as inside a wrapper for good, so nothing
 * it calls into NCCL is recorded or recursed into. */
LS_HIDDEN void ls_guard_thread(void);

/* Fills out[] with the return addresses above `site` on the calling thread's stack,
 * 0 past where the chain could be followed (callstack.c). `frame`: the wrapper's own
 * frame address (its saved return address is `site`), or NULL to search for it. */
LS_HIDDEN void ls_stack_callers(const void *site, const void *frame, uint64_t out[LS_TRACE_CALLERS]);
/* The calling thread's stack [lo, hi) for the walk; hi 0: not looked up yet, 1: unknown. */
LS_HIDDEN extern __thread __attribute__((tls_model("initial-exec"))) uintptr_t ls_tl_stack_lo, ls_tl_stack_hi;

/* ls_stack_callers, inline for a wrapper's frame that holds the site and lies on the
 * thread's known stack above `below` (the caller's own frame): the frames above it,
 * by the same rules; anything else goes to ls_stack_callers. */
static inline void ls_stack_callers_from(const void *site, const void *frame, uintptr_t below,
                                         uint64_t out[LS_TRACE_CALLERS]) {
  uintptr_t fp = (uintptr_t)frame, hi = ls_tl_stack_hi, top = hi - 2 * sizeof(uintptr_t);
  if (!fp || hi <= 1 || fp < below || fp < ls_tl_stack_lo || fp > top || (fp & 15u) ||
      ((const uintptr_t *)fp)[1] != (uintptr_t)site) {
    ls_stack_callers(site, frame, out);
    return;
  }
  uint64_t v[LS_TRACE_CALLERS] = {0};
  unsigned k = 0;
  uintptr_t next = ((const uintptr_t *)fp)[0];
  /* the chain climbs (next in (fp, top], 16-aligned) or ends */
  while (!(next & 15u) && next - fp - 1 < top - fp) {
    fp = next;
    v[k++] = ((const uintptr_t *)fp)[1];
    next = ((const uintptr_t *)fp)[0];
    if (k == LS_TRACE_CALLERS)
      break;
  }
  memcpy(out, v, sizeof v);
}

/* Records. */
/* The slot that holds record `ordinal` (its claim index): every lookup of a record by
 * ordinal goes through here, so how ordinals map to slots is decided in one place. */
static inline struct ls_trace_record *ls_rec_slot(uint64_t ordinal) {
  if (__builtin_expect(ls_g.ring, 0))
    return &ls_g.recs[ordinal % ls_g.capacity];
  return &ls_g.recs[ordinal];
}
/* The record of `ordinal` for a reader, or NULL while its slot (a ring's) holds another
 * ordinal: not written yet, or overwritten. Readers look at its state only after this. */
static inline struct ls_trace_record *ls_rec_live(uint64_t ordinal) {
  struct ls_trace_record *r = ls_rec_slot(ordinal);
  if (__builtin_expect(ls_g.ring, 0) && __atomic_load_n(&r->ordinal, __ATOMIC_ACQUIRE) != ordinal)
    return NULL;
  return r;
}
/* Ring only: lockstep's thread computes the floor after a tick (core.c) from these. */
LS_HIDDEN uint64_t ls_index_floor(void); /* ordinal the index reads next; UINT64_MAX: none */
LS_HIDDEN uint64_t ls_on_floor(void);    /* ... the side channel; UINT64_MAX: none */
LS_HIDDEN uint64_t ls_rec_limit(void); /* min(nrecords, capacity) */
LS_HIDDEN void ls_rec_set_flags(struct ls_trace_record *r, uint16_t f);
LS_HIDDEN uint16_t ls_rec_flags(const struct ls_trace_record *r);
LS_HIDDEN struct ls_trace_record *ls_rec_claim(uint64_t *index); /* NULL when full */
/* A finished record of the recorder's own (watchdog, online check) that no NCCL call made:
 * not sequenced, no value fields; dropped when the trace is full. */
LS_HIDDEN void ls_rec_report(uint16_t api, uint64_t comm_id, int32_t rank, int32_t size, uint64_t t_ns,
                             uint64_t aux0, uint64_t aux1);
LS_HIDDEN void ls_trace_sync(void);
/* Reserves disk blocks for records [0, upto) so writing them cannot SIGBUS on a full
 * disk; 0 on success (or when the filesystem cannot reserve). */
LS_HIDDEN int ls_trace_reserve(uint64_t upto);
#define LS_RESERVE_CHUNK 65536u /* records (12 MiB) */
/* The file grows as it fills: the first reservation is small (768 KiB of records), later
 * ones keep about as many free slots ahead as are used, up to 4 chunks. */
#define LS_RESERVE_FIRST 4096u
static inline uint64_t ls_reserve_target(uint64_t used) {
  uint64_t t = used < LS_RESERVE_FIRST / 2 ? LS_RESERVE_FIRST : 2 * used;
  if (t > used + 4ull * LS_RESERVE_CHUNK)
    t = used + 4ull * LS_RESERVE_CHUNK;
  return (t + LS_RESERVE_FIRST - 1) / LS_RESERVE_FIRST * LS_RESERVE_FIRST;
}

/* Device completion (device.c). */
LS_HIDDEN int ls_dev_init(void); /* 1 when a CUDA driver is usable */
LS_HIDDEN int ls_dev_available(void);
/* Covers the records in [lo, hi] whose wtag will equal the returned tag with an event
 * on `stream` after the work enqueued so far (or, with LOCKSTEP_DEFER_US, with the
 * stream's next event); `now` is the caller's exit time. 0: unwatched. A nonzero tag
 * holds the stream's slot: the caller stores the tag in the members, then arms it,
 * and covers no other stream in between. */
LS_HIDDEN uint32_t ls_dev_cover(uint64_t stream, uint64_t lo, uint64_t hi, uint64_t now);
LS_HIDDEN void ls_dev_arm(uint32_t tag);
LS_HIDDEN void ls_dev_poll(void); /* its tick: query armed events, mark members */
LS_HIDDEN void ls_dev_shutdown(void); /* exit handler: final poll, then driver off */
LS_HIDDEN void ls_dev_reset_after_fork(void);

/* The core (core.c): the subsystem table, lockstep's thread, progress, the policy. */
LS_HIDDEN void ls_core_init(void);       /* every subsystem's init, under the init lock */
LS_HIDDEN void ls_core_start(void);      /* the thread, once the recorder is ready */
LS_HIDDEN void ls_core_at_exit(void);    /* every subsystem's at_exit, in table order */
LS_HIDDEN void ls_core_after_fork(void); /* in the child: the core's and every subsystem's */
/* 1 while the thread sleeps longer than LOCKSTEP_POLL_MS (backed off: nothing was due);
 * ls_core_wake ends such a sleep now (device tracking, when a ring fills half way). */
LS_HIDDEN extern int ls_core_backed_off;
LS_HIDDEN void ls_core_wake(void);
LS_HIDDEN extern uint64_t ls_core_ticks; /* ticks so far (LOCKSTEP_DEVICE_STATS) */

/* One tick of lockstep's thread. Progress is computed once per tick, when a subsystem
 * first asks, so the ones that mark completions (device tracking) tick before it. */
struct ls_tick {
  int have_progress;
  uint64_t limit;    /* ls_rec_limit() */
  uint64_t lowwater; /* records below it are not pending */
};
LS_HIDDEN uint64_t ls_tick_lowwater(struct ls_tick *t);
LS_HIDDEN uint64_t ls_tick_limit(struct ls_tick *t);
/* No sequenced call of this process is pending (all returned and complete). */
LS_HIDDEN int ls_tick_idle(struct ls_tick *t);
/* 1 if the sequenced call is not returned or not complete on the device, 0 if done
 * (or unsequenced), -1 if claimed but not yet written. */
LS_HIDDEN int ls_rec_pending(const struct ls_trace_record *r);

/* What subsystems report, after they said so on stderr and in the trace; the core
 * applies LOCKSTEP_POLICY: report nothing more, abort the communicator through its
 * family's hook, exit (86), or end (87, once both a hang and a divergence were seen).
 * May not return. */
LS_HIDDEN void ls_core_hang(uint64_t comm);       /* the watchdog, on a sequenced call */
LS_HIDDEN void ls_core_divergence(uint64_t comm); /* the online check: mismatch or skip */
/* A hang of a call without a communicator id (ls_watch_begin): abort `handle`. */
LS_HIDDEN void ls_core_hang_on(uint16_t family, const void *handle);

/* Digest index beside the trace (index.c), subsystem "index". */
LS_HIDDEN void ls_index_tick(uint64_t lowwater); /* records below lowwater are done */
LS_HIDDEN void ls_index_shutdown(void);          /* exit: index every returned record */
LS_HIDDEN void ls_index_reset_after_fork(void);

#endif
