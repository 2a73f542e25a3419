/* trace_format.h — the on-disk trace of one process, shared by the writer
 * (liblockstep.so) and every reader (lockstep compare / trace export / confirm).
 *
 * One file per process, mmap'ed MAP_SHARED by the writer so that a SIGKILL loses
 * nothing already stored: the kernel owns the pages. Readers must treat the file
 * as untrusted input (truncated, corrupted, foreign) and never crash on it.
 * Non-goal: portability across endianness; the file is native little-endian x86-64.
 *
 * Layout (all offsets in bytes from the start of the file):
 *   [0, LS_TRACE_HEADER_SIZE)            struct ls_trace_header
 *   [api_offset, +napis*sizeof api)      struct ls_trace_api[napis]   (names of api ids)
 *   [modules_offset, +LS_TRACE_MAX_MODULES*sizeof mod)  struct ls_trace_module[]
 *   [records_offset, +capacity*record_size)             struct ls_trace_record[]
 * Since version 2 the file grows as records are claimed (the writer reserves space ahead of
 * them): it must hold every claimed record, except claims dropped for lack of disk space
 * (LS_TRACE_F_PARTIAL), which lie past its end. A version-1 file holds every slot. A file
 * shorter than that was truncated: a reader reports the damage, naming the file and offset.
 */
#ifndef LOCKSTEP_TRACE_FORMAT_H
#define LOCKSTEP_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define LS_TRACE_MAGIC "LSTRACE1" /* 8 bytes, no terminator stored */
/* Version 2 appended `callers` to the record (128 -> 192 bytes). A version-1 record is
 * a prefix of a version-2 one, so readers of version 2 read both (version 1 without
 * callers); a reader of version 1 refuses version 2 by its version number. A change
 * that older readers cannot skip gets the next version. */
#define LS_TRACE_VERSION 2u
/* Version 3: a ring trace (LOCKSTEP_TRACE_RING=1, LS_TRACE_F_RING). The file holds all
 * `capacity` slots from the start; record of ordinal o (the o-th claim, 0-based) lies in
 * slot o % capacity and carries o in `ordinal`; nrecords counts the ordinals claimed, so
 * [max(0, nrecords - capacity), nrecords) are live, older ones were overwritten. A slot
 * whose ordinal is not the one it should hold was not written (yet). `dropped` counts
 * calls not recorded at all because their slot was still needed by the recorder's own
 * readers (LS_TRACE_F_PARTIAL is set then). Traces written without the ring stay
 * version 2, byte for byte. */
#define LS_TRACE_VERSION_RING 3u
#define LS_TRACE_HEADER_SIZE 4096u
#define LS_TRACE_RECORD_SIZE 192u
#define LS_TRACE_RECORD_SIZE_V1 128u
#define LS_TRACE_CALLERS 4u /* return addresses above site_pc kept per record */
#define LS_TRACE_MAX_MODULES 512u
#define LS_TRACE_FILE_SUFFIX ".lstrace"

/* Header flags. */
#define LS_TRACE_F_PARTIAL 0x1u    /* records were dropped: capacity exhausted */
#define LS_TRACE_F_CLEAN_EXIT 0x2u /* the process ran its exit handler */
#define LS_TRACE_F_WATCHDOG 0x4u   /* the watchdog fired at least once */
/* The writer records every async-state query that saw a communicator's state change
 * (in particular the poll that saw ncclInProgress end in ncclSuccess), not only those
 * that saw an error. Without it a reader cannot tell "never polled" from "polled but
 * not recorded", so `not-ready` is only judged on traces that carry it. Added without a
 * version change: older traces lack it and still read. */
#define LS_TRACE_F_ASYNC_CHANGES 0x10u
#define LS_TRACE_F_RING 0x20u /* version 3: slots reused oldest first (see above) */

/* What an api entry is: the one kind enum, also lint's (the rules library maps the rules
 * files' "kind" strings to it, rules/rules.c). Traces store these values: never renumber. */
enum ls_api_kind {
  LS_KIND_OTHER = 0,
  LS_KIND_COLLECTIVE = 1,
  LS_KIND_P2P = 2,
  LS_KIND_GROUP_START = 3,
  LS_KIND_GROUP_END = 4,
  LS_KIND_COMM_INIT = 5,
  LS_KIND_COMM_SPLIT = 6,
  LS_KIND_COMM_FINALIZE = 7,
  LS_KIND_COMM_DESTROY = 8,
  LS_KIND_COMM_ABORT = 9,
  LS_KIND_ASYNC_ERROR_QUERY = 10,
  LS_KIND_RANK_QUERY = 11,
  LS_KIND_SIZE_QUERY = 12,
  LS_KIND_UNIQUE_ID = 13,
  LS_KIND_WAIT = 14,         /* MPI_Wait/Test family: completes a request */
  LS_KIND_EVENT = 15,        /* lockstep's own events (watchdog report, ...) */
};

/* Which library an api belongs to. */
enum ls_api_family { LS_FAMILY_NCCL = 1, LS_FAMILY_MPI = 2, LS_FAMILY_LOCKSTEP = 3 };

/* Record flags. */
#define LS_REC_OUTER_GROUP_END 0x0001u /* this group_end closed the outermost scope */
#define LS_REC_EVENT_RECORDED 0x0002u  /* a device completion event covers this call */
#define LS_REC_COMPLETED 0x0004u       /* completion observed; t_complete_ns is valid */
#define LS_REC_TIMED_OUT 0x0008u       /* the watchdog reported this call */
#define LS_REC_IN_GROUP 0x0010u        /* issued while the thread's group depth > 0 */
#define LS_REC_NONBLOCKING 0x0020u     /* MPI_I* call; completion via a wait */
#define LS_REC_NO_DEVICE 0x0040u       /* no CUDA driver: completion cannot be observed */
#define LS_REC_COMM_NONBLOCKING 0x0080u /* comm_init/comm_split whose new communicator is
                                           non-blocking (config.blocking == 0, inherited
                                           from the parent, or NCCL_COMM_BLOCKING=0) */

/* Record state, written last with release ordering so a reader never sees a
 * half-written record as valid. */
enum ls_rec_state {
  LS_REC_FREE = 0,     /* slot claimed or not yet written: ignore */
  LS_REC_ENTERED = 1,  /* the call started and has not returned (yet) */
  LS_REC_RETURNED = 2, /* the call returned; rc and t_exit_ns are valid */
};

#define LS_NO_SEQ UINT64_MAX /* record is not part of a communicator's sequence */
#define LS_NO_VALUE (-1)     /* dtype/redop/root/peer not applicable */

struct ls_trace_header {
  char magic[8];             /* LS_TRACE_MAGIC */
  uint32_t version;          /* LS_TRACE_VERSION */
  uint32_t header_size;      /* LS_TRACE_HEADER_SIZE */
  uint32_t record_size;      /* LS_TRACE_RECORD_SIZE */
  uint32_t flags;            /* LS_TRACE_F_* (updated atomically by the writer) */
  uint64_t capacity;         /* record slots present in the file */
  uint64_t nrecords;         /* slots claimed so far (atomic); may exceed capacity on overflow */
  uint64_t api_offset;       /* offset of struct ls_trace_api[napis] */
  uint32_t napis;
  uint32_t nmodules;         /* valid entries in the module table (atomic) */
  uint64_t modules_offset;   /* offset of struct ls_trace_module[LS_TRACE_MAX_MODULES] */
  uint64_t records_offset;   /* offset of the first record */
  int32_t pid;
  int32_t launcher_rank;     /* rank from the launcher's environment, -1 unknown */
  int32_t launcher_size;     /* world size from the launcher's environment, -1 unknown */
  uint32_t timeout_ms;       /* watchdog timeout in force */
  uint64_t t0_realtime_ns;   /* CLOCK_REALTIME at start ... */
  uint64_t t0_monotonic_ns;  /* ... and CLOCK_MONOTONIC at the same instant (record times are monotonic) */
  char hostname[64];
  char exe[256];             /* /proc/self/exe at start */
  uint64_t dropped;          /* version 3: calls not recorded, their slot still in use (atomic) */
  char reserved[3664];       /* pads the header to LS_TRACE_HEADER_SIZE; zero */
};

struct ls_trace_api {
  char name[48];             /* NUL-terminated, e.g. "ncclAllReduce" */
  uint16_t kind;             /* enum ls_api_kind */
  uint16_t family;           /* enum ls_api_family */
  uint16_t op_class;         /* 1 + index of the first api entry with the same "op" in the
                                rules (ncclBcast and ncclBroadcast share one); 0 = no op */
  uint16_t reserved;
};

struct ls_trace_module {
  uint64_t base;             /* load address (the l_addr of dl_iterate_phdr) */
  uint64_t start, end;       /* executable mapping range */
  char path[232];            /* NUL-terminated */
};

struct ls_trace_record {
  uint32_t state;            /* enum ls_rec_state; written last (release) */
  uint16_t api;              /* index into the api table */
  uint16_t flags;            /* LS_REC_* */
  uint64_t comm_id;          /* communicator identity, equal on every rank; 0 if none */
  uint64_t seq;              /* per-communicator sequence number, or LS_NO_SEQ */
  uint64_t count;
  int32_t dtype;             /* library's own enum value, or LS_NO_VALUE */
  int32_t redop;
  int32_t root_or_peer;
  int32_t rc;                /* return code (state == LS_REC_RETURNED) */
  int32_t group_depth;       /* this thread's group depth when the call was entered */
  int32_t comm_rank;
  int32_t comm_size;
  uint32_t tid;
  uint64_t t_enter_ns;       /* CLOCK_MONOTONIC */
  uint64_t t_exit_ns;
  uint64_t t_complete_ns;    /* device completion observed (LS_REC_COMPLETED) */
  uint64_t site_pc;          /* return address in the caller; symbolize with the module table */
  uint64_t stream;           /* cudaStream_t value, 0 for none/default */
  uint64_t aux0;             /* kind-specific: split parent id, async state (the out-parameter of
                                an async_error_query, when it returned success), MPI request, ... */
  uint64_t aux1;             /* kind-specific: split color/key, group id of the outer end, ... */
  uint32_t wtag;             /* writer's private use (completion bookkeeping); readers ignore */
  uint8_t reserved[4];
  /* version 2: the frames above site_pc, innermost first (callers[0] is the return
   * address into whoever called the function that made the call), by the frame-pointer
   * chain; 0 where the chain ended or could not be followed (code built without frame
   * pointers may skip frames or end it early). Best effort: a site, never a proof. */
  uint64_t callers[LS_TRACE_CALLERS];
  uint64_t ordinal;          /* version 3: this record's ordinal (atomic, release); 0 otherwise */
  uint8_t reserved2[24];
};

_Static_assert(sizeof(struct ls_trace_header) == LS_TRACE_HEADER_SIZE, "header size");
_Static_assert(sizeof(struct ls_trace_record) == LS_TRACE_RECORD_SIZE, "record size");
_Static_assert(offsetof(struct ls_trace_record, callers) == LS_TRACE_RECORD_SIZE_V1, "v1 record is a prefix");
_Static_assert(sizeof(struct ls_trace_api) == 56, "api entry size");
_Static_assert(sizeof(struct ls_trace_module) == 256, "module entry size");

#endif
