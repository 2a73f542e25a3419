/* trace_index.c — the indexer every index writer and reader shares (trace_index.h):
 * streams, incarnations and seq order exactly as compare's per-rank summary counts
 * them, and the two digests of each block. No allocation, no locks: the recorder runs
 * it on its watchdog thread. */
#include "trace_index.h"

#include <string.h>

#include "mix.h"

static uint64_t fmix_b(uint64_t z) { /* murmur3's: a second function, unrelated to ls_mix64 */
  z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
  z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return z ^ (z >> 33);
}

uint64_t ls_idx_name_hash(const char *name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 0x100000001b3ull;
  return ls_mix64(h);
}

uint64_t ls_idx_check(const void *p, size_t n) {
  uint64_t h = 0x6c73696478636b31ull;
  const unsigned char *b = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = fmix_b(h ^ w);
  }
  for (; i < n; i++)
    h = fmix_b(h ^ b[i]);
  return h;
}

int ls_idx_remarkable(const struct ls_trace_record *r, unsigned kind) {
  /* flags atomically: in a live process (the recorder's exit-time pass) other threads may
   * still be setting them */
  uint16_t f = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);
  if (r->state != LS_REC_RETURNED || r->rc != 0 || (f & LS_REC_TIMED_OUT))
    return 1;
  if ((f & LS_REC_EVENT_RECORDED) && !(f & LS_REC_COMPLETED))
    return 1;
  switch (kind) {
  case LS_KIND_COLLECTIVE:
  case LS_KIND_P2P:
  case LS_KIND_GROUP_START:
  case LS_KIND_GROUP_END:
  case LS_KIND_RANK_QUERY:
  case LS_KIND_SIZE_QUERY:
  case LS_KIND_UNIQUE_ID:
  case LS_KIND_WAIT:
  case LS_KIND_OTHER:
  case LS_KIND_COMM_FINALIZE:
  case LS_KIND_COMM_DESTROY:
    return 0;
  case LS_KIND_COMM_INIT:
  case LS_KIND_COMM_SPLIT: /* a NULL child or a non-blocking communicator: contracts follow */
    return !r->comm_id || (r->flags & LS_REC_COMM_NONBLOCKING) != 0;
  default: /* abort, async-state queries, lockstep's own events */
    return 1;
  }
}

void ls_idx_init(struct ls_indexer *ix, uint32_t block, struct ls_idx_live *slots, unsigned nslots,
                 const uint64_t *api_hash, const uint16_t *api_kind, uint32_t napis,
                 void (*emit)(void *, const struct ls_index_block *), void *arg) {
  memset(ix, 0, sizeof *ix);
  ix->block = block < 2 ? 2 : block;
  ix->st = slots;
  ix->cap = nslots;
  ix->api_hash = api_hash;
  ix->api_kind = api_kind;
  ix->napis = napis;
  ix->emit = emit;
  ix->arg = arg;
}

int ls_idx_resume(struct ls_indexer *ix, const struct ls_index_snap *sn, const struct ls_index_stream *streams) {
  while (ix->cap < sn->nstreams)
    if (!ix->grow || ix->grow(ix) != 0)
      return -1;
  ix->covered = sn->covered;
  ix->features = sn->features;
  ix->ns = sn->nstreams;
  for (unsigned i = 0; i < ix->ns; i++) {
    ix->st[i].s = streams[i];
    ix->st[i].key = streams[i].comm ^ ls_mix64((uint64_t)(uint32_t)streams[i].rank);
  }
  return 0;
}

/* The stream a sequenced record counts for, as compare's sum_for finds it: per
 * (communicator, rank) key, a seq 0 after one was already seen starts a new incarnation. */
static struct ls_idx_live *stream_for(struct ls_indexer *ix, const struct ls_trace_record *r) {
  uint64_t key = r->comm_id ^ ls_mix64((uint64_t)(uint32_t)r->comm_rank);
  struct ls_idx_live *cur = NULL;
  /* the latest incarnation of a key is the last one made: a later one never follows the hint's */
  if (ix->hint < ix->ns && ix->st[ix->hint].key == key && ix->st[ix->hint].s.comm == r->comm_id &&
      ix->st[ix->hint].s.rank == r->comm_rank) {
    cur = &ix->st[ix->hint];
    for (unsigned i = ix->hint + 1; i < ix->ns && cur == &ix->st[ix->hint]; i++)
      if (ix->st[i].key == key && ix->st[i].s.comm == r->comm_id && ix->st[i].s.rank == r->comm_rank)
        cur = &ix->st[i];
  }
  for (unsigned i = ix->ns; i-- > 0 && !cur;)
    if (ix->st[i].key == key && ix->st[i].s.comm == r->comm_id && ix->st[i].s.rank == r->comm_rank)
      cur = &ix->st[i];
  if (cur)
    ix->hint = (unsigned)(cur - ix->st);
  uint32_t inc = 0;
  if (cur) {
    if (r->seq != 0)
      return cur;
    if (!(cur->s.flags & LS_IDX_S_SEEN0)) {
      cur->s.flags |= LS_IDX_S_SEEN0;
      return cur;
    }
    inc = cur->s.inc + 1;
  }
  if (ix->ns == ix->cap && (!ix->grow || ix->grow(ix) != 0))
    return NULL;
  ix->hint = ix->ns;
  struct ls_idx_live *x = &ix->st[ix->ns++];
  memset(x, 0, sizeof *x);
  x->key = key;
  x->s.comm = r->comm_id;
  x->s.rank = r->comm_rank;
  x->s.inc = inc;
  x->s.flags = r->seq == 0 ? LS_IDX_S_SEEN0 : 0;
  return x;
}

int ls_idx_feed(struct ls_indexer *ix, uint64_t i, const struct ls_trace_record *r) {
  if (ix->stopped)
    return -1;
  if (r->state == LS_REC_FREE) { /* unwritten: nothing to index (the reader counts it) */
    ix->covered = i + 1;
    return 0;
  }
  if (r->api >= ix->napis) {
    ix->stopped = 1;
    return -1;
  }
  unsigned kind = ix->api_kind[r->api];
  if (ls_idx_remarkable(r, kind))
    ix->features |= LS_IDX_F_REMARKABLE;
  if (r->seq != LS_NO_SEQ && r->comm_id && r->comm_rank >= 0) {
    struct ls_idx_live *x = stream_for(ix, r);
    if (!x) {
      ix->stopped = 1;
      return -1;
    }
    struct ls_index_stream *s = &x->s;
    if (r->comm_size > s->size)
      s->size = r->comm_size;
    if (!s->n)
      s->first = i;
    s->last = i;
    if (r->seq != s->n && !(s->flags & LS_IDX_B_UNORDERED)) {
      s->flags |= LS_IDX_B_UNORDERED;
      ix->features |= LS_IDX_F_UNORDERED;
    }
    if (!(s->flags & LS_IDX_B_UNORDERED)) {
      if (s->n % ix->block == 0) {
        s->open_first = i;
        s->local = 0;
        s->flags &= ~(uint32_t)LS_IDX_B_P2P;
      }
      if (kind == LS_KIND_P2P)
        s->flags |= LS_IDX_B_P2P;
      /* the fields ls_fp_diff compares, the api's name for its op; two seeds, two functions */
      uint64_t a = ls_mix64(ix->api_hash[r->api] ^ 0x243f6a8885a308d3ull);
      a = ls_mix64(a ^ r->count);
      a = ls_mix64(a ^ ((uint64_t)(uint32_t)r->dtype << 32 | (uint32_t)r->redop));
      a = ls_mix64(a ^ ((uint64_t)(uint32_t)r->root_or_peer << 32 | kind));
      uint64_t b = fmix_b(ix->api_hash[r->api] ^ 0x13198a2e03707344ull);
      b = fmix_b(b ^ r->count ^ 0xa4093822299f31d0ull);
      b = fmix_b(b ^ ((uint64_t)(uint32_t)r->redop << 32 | (uint32_t)r->dtype));
      b = fmix_b(b ^ ((uint64_t)kind << 32 | (uint32_t)r->root_or_peer));
      if (ix->collide == 1 && r->seq == ix->collide_seq)
        b = 1;
      if (ix->collide == 2 && r->seq == ix->collide_seq)
        a = 1;
      s->chain = ls_mix64(s->chain ^ a) + 1;
      s->local = fmix_b(s->local ^ b) + 1;
    }
    s->n++;
    if (!(s->flags & LS_IDX_B_UNORDERED) && s->n % ix->block == 0 && ix->emit) {
      struct ls_index_block e;
      memset(&e, 0, sizeof e);
      e.comm = s->comm;
      e.rank = s->rank;
      e.size = s->size;
      e.inc = s->inc;
      e.flags = s->flags & LS_IDX_B_P2P;
      e.block = s->n / ix->block - 1;
      e.first = s->open_first;
      e.last = i;
      e.chain = s->chain;
      e.local = s->local;
      e.check = ls_idx_check(&e, sizeof e);
      ix->emit(ix->arg, &e);
    }
  }
  ix->covered = i + 1;
  return 0;
}
