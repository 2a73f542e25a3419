/* trace_index.h — the digest index of a trace: per (communicator, rank, incarnation),
 * two digests of each block of K sequenced calls, so that compare can tell where ranks
 * first part by reading a few kilobytes per rank instead of every record.
 *
 * Written beside the trace as PATH.idx (PATH the .lstrace file) by the recorder's
 * watchdog thread, behind the low-water mark (never on the call path), mmap'ed
 * MAP_SHARED like the records so a killed process keeps what was indexed. Also written
 * by bench/synth/gen_traces and computed by compare itself over whatever an index does
 * not cover (older traces have none: compare then computes all of it). One indexer
 * (struct ls_indexer below) does the work for all three, so they agree by construction.
 *
 * A call's fingerprint for the digests is exactly what ls_fp_diff (fingerprint.h)
 * compares — count, dtype, root/peer, redop, kind — with the api's name standing for
 * its op: equal names are the same op for any reader; two names of one op (ncclBcast,
 * ncclBroadcast) digest apart, which only makes compare read that block.
 * Digests equal are taken as calls equal: see compare's README for why that is safe
 * enough (two independent 64-bit digests must collide on the same block at once).
 * Non-goal: portability across endianness (native little-endian, as the trace).
 *
 * Layout of PATH.idx:
 *   [0, 4096)              struct ls_index_header
 *   snap_offset[0], [1]    two struct ls_index_snap + max_streams struct ls_index_stream each
 *   entries_offset         struct ls_index_block[entries_cap], appended in block order
 * The writer fills the snapshot not in use, then publishes it (header.current); a
 * snapshot says which records it covers, how many block entries are valid, and the
 * open (not yet full) block of every stream at that point. */
#ifndef LOCKSTEP_TRACE_INDEX_H
#define LOCKSTEP_TRACE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

#define LS_INDEX_MAGIC "LSINDEX1"
#define LS_INDEX_VERSION 1u
#define LS_INDEX_SUFFIX ".idx" /* appended to the trace's path */
#define LS_INDEX_HEADER_SIZE 4096u
#define LS_INDEX_BLOCK 1024u      /* K: sequenced calls per block (LOCKSTEP_INDEX_BLOCK) */
#define LS_INDEX_MAX_STREAMS 1024u /* (communicator, rank, incarnation) per process */

/* Snapshot features: what the covered records hold besides plain calls. */
#define LS_IDX_F_REMARKABLE 0x1u /* a record compare's per-call facts may name (see ls_idx_remarkable) */
#define LS_IDX_F_UNORDERED 0x2u  /* some stream's seqs did not come in record order */

/* Block and stream flags. */
#define LS_IDX_B_P2P 0x1u       /* holds a send/recv: peers differ by rank, the digests do not compare */
#define LS_IDX_B_UNORDERED 0x2u /* the stream's seqs did not come in record order: no blocks after */
#define LS_IDX_S_SEEN0 0x4u     /* stream: its key saw seq 0 (a second seq 0 starts a new incarnation) */

struct ls_index_header {
  char magic[8];           /* LS_INDEX_MAGIC */
  uint32_t version;        /* LS_INDEX_VERSION */
  uint32_t header_size;    /* LS_INDEX_HEADER_SIZE */
  uint32_t block;          /* K */
  uint32_t max_streams;    /* stream slots per snapshot */
  uint32_t entry_size;     /* sizeof(struct ls_index_block) */
  uint32_t current;        /* atomic: 0 none published yet, else 1 + the snapshot in force */
  int32_t pid;             /* the trace's pid and start time: an index of another run is not used */
  uint32_t reserved0;
  uint64_t t0_realtime_ns;
  uint64_t snap_offset[2];
  uint64_t entries_offset;
  uint64_t entries_cap;    /* entries the file has room for */
  char reserved[4016];
};

struct ls_index_snap {
  uint64_t covered;   /* records [0, covered) are summarized: by the entries and the streams below */
  uint64_t nentries;  /* valid block entries */
  uint32_t features;  /* LS_IDX_F_* over the covered records */
  uint32_t nstreams;
  uint64_t check;     /* ls_idx_check over this struct (check = 0) and its streams */
};

/* A stream at `covered`: its totals and its open block. */
struct ls_index_stream {
  uint64_t comm;
  int32_t rank, size;  /* size: the largest comm_size its records gave */
  uint32_t inc, flags; /* incarnation; LS_IDX_B_* of the open block, LS_IDX_S_SEEN0 */
  uint64_t n;          /* calls so far (seqs [0, n) when ordered) */
  uint64_t first, last; /* record indices of its first and last call */
  uint64_t open_first;  /* record index of the open block's first call */
  uint64_t chain;       /* the chained digest through its last call */
  uint64_t local;       /* the open block's own digest so far */
};

/* One full block: seqs [block * K, block * K + K) of a stream. */
struct ls_index_block {
  uint64_t comm;
  int32_t rank, size;
  uint32_t inc, flags; /* LS_IDX_B_* */
  uint64_t block;
  uint64_t first, last; /* record indices of its first and last call */
  uint64_t chain;       /* the chained digest through the block's last call */
  uint64_t local;       /* the block's own digest */
  uint64_t check;       /* ls_idx_check over the entry with check = 0 */
};

_Static_assert(sizeof(struct ls_index_header) == LS_INDEX_HEADER_SIZE, "index header size");
_Static_assert(sizeof(struct ls_index_snap) == 32, "snapshot size");
_Static_assert(sizeof(struct ls_index_stream) == 72, "stream size");
_Static_assert(sizeof(struct ls_index_block) == 72, "block entry size");

/* What an index writer keeps of one stream while it indexes. */
struct ls_idx_live {
  struct ls_index_stream s;
  uint64_t key;  /* the (communicator, rank) key it belongs to, for incarnations */
};

/* The indexer: fed records in record order, it calls emit for each full block. It
 * allocates nothing itself (the recorder's watchdog runs it on static slots). A stream
 * past its slots, with no grow or a grow that fails, stops it (stopped: covered no
 * longer advances; readers scan the rest). */
struct ls_indexer {
  uint32_t block;  /* K */
  uint64_t covered;
  uint32_t features;
  int stopped;
  unsigned ns, cap, hint; /* hint: the stream the last record went to */
  struct ls_idx_live *st; /* cap slots, the owner's; grow (may be NULL) makes room for more */
  int (*grow)(struct ls_indexer *ix);
  /* the api table the records index into: name hashes and kinds (set by the owner) */
  const uint64_t *api_hash;
  const uint16_t *api_kind;
  uint32_t napis;
  void (*emit)(void *arg, const struct ls_index_block *b);
  void *arg;
  /* Test hook (LOCKSTEP_TEST_INDEX_COLLIDE=local:SEQ or chain:SEQ): the call at SEQ of
   * every stream enters that digest as a constant, so a divergence there collides in it
   * by construction. 0 off, 1 local, 2 chain. */
  int collide;
  uint64_t collide_seq;
};

/* The hash of an api name every indexer uses. */
uint64_t ls_idx_name_hash(const char *name);
/* Checksum of n bytes (entries and snapshots carry one against torn or damaged files). */
uint64_t ls_idx_check(const void *p, size_t n);
/* A record compare's per-call pass might report (error, hang, contract, incomplete,
 * lockstep's own events, non-blocking creation): only such a record makes compare read
 * a trace's records for per-call facts. Judged from the record alone, conservatively. */
int ls_idx_remarkable(const struct ls_trace_record *r, unsigned kind);
/* Sets up ix (block K >= 2) with its stream slots, the api table and emit callback. */
void ls_idx_init(struct ls_indexer *ix, uint32_t block, struct ls_idx_live *slots, unsigned nslots,
                 const uint64_t *api_hash, const uint16_t *api_kind, uint32_t napis,
                 void (*emit)(void *, const struct ls_index_block *), void *arg);
/* Takes record index i (== ix->covered) into the digests; returns 0, or -1 when the
 * indexer stopped (too many streams, or an api index it does not know). */
int ls_idx_feed(struct ls_indexer *ix, uint64_t i, const struct ls_trace_record *r);
/* Restores the streams of a published snapshot (a reader continuing an index); -1 when
 * they do not fit. */
int ls_idx_resume(struct ls_indexer *ix, const struct ls_index_snap *sn, const struct ls_index_stream *streams);

#endif
