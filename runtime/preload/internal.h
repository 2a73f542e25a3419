/* internal.h — state shared by the recorder's own files (recorder.c, device.c,
 * watchdog.c); not for the family hooks, which use recorder.h only. */
#ifndef LOCKSTEP_PRELOAD_INTERNAL_H
#define LOCKSTEP_PRELOAD_INTERNAL_H

#include <stdint.h>

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

/* Records. */
LS_HIDDEN uint64_t ls_rec_limit(void); /* min(nrecords, capacity) */
LS_HIDDEN void ls_rec_set_flags(struct ls_trace_record *r, uint16_t f);
LS_HIDDEN uint16_t ls_rec_flags(const struct ls_trace_record *r);
LS_HIDDEN struct ls_trace_record *ls_rec_claim(uint64_t *index); /* NULL when full */
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
LS_HIDDEN void ls_dev_poll(void); /* watchdog: query armed events, mark members */
LS_HIDDEN void ls_dev_shutdown(void); /* exit handler: final poll, then driver off */
LS_HIDDEN void ls_dev_reset_after_fork(void);

/* Side channel (online/), driven by the watchdog thread. */
/* `idle`: no sequenced call of this process is pending (all returned and complete). */
LS_HIDDEN void ls_online_tick(int idle);
LS_HIDDEN void ls_online_shutdown(void); /* exit: unlink the shared files */
LS_HIDDEN void ls_online_reset_after_fork(void);

/* Watchdog (watchdog.c). */
LS_HIDDEN void ls_watchdog_start(void);
/* LOCKSTEP_POLICY applied to communicator `comm` (report: nothing; exit: no return). */
LS_HIDDEN void ls_apply_policy(uint64_t comm, int hang); /* hang: the watchdog's, else a divergence */
/* 1 if the sequenced call is not returned or not complete on the device, 0 if done
 * (or unsequenced), -1 if claimed but not yet written. */
LS_HIDDEN int ls_rec_pending(const struct ls_trace_record *r);
LS_HIDDEN void ls_watchdog_reset_after_fork(void);

/* Digest index beside the trace (index.c), driven by the watchdog thread. */
LS_HIDDEN void ls_index_tick(uint64_t lowwater); /* records below lowwater are done */
LS_HIDDEN void ls_index_shutdown(void);          /* exit: index every returned record */
LS_HIDDEN void ls_index_reset_after_fork(void);

#endif
