/* unit_recorder.c — unit tests of the recorder core, linked from its objects (no
 * preload, no NCCL): identity hashing, the lock-free communicator table, the api
 * registry's op classes, and one begin/enter/exit cycle per kind with the group-depth
 * mirror, the guard and the record it leaves. Exit 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int failures;
#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "unit_recorder:%d: check failed: %s\n", __LINE__, #cond);         \
      failures++;                                                                       \
    }                                                                                   \
  } while (0)

static void test_hash(void) {
  CHECK(ls_hash_bytes(0, "abc", 3) == ls_hash_bytes(0, "abc", 3));
  CHECK(ls_hash_bytes(0, "abc", 3) != ls_hash_bytes(0, "abd", 3));
  CHECK(ls_hash_bytes(0, "abc", 3) != ls_hash_bytes(1, "abc", 3));
  CHECK(ls_hash_u64(7, 1) != ls_hash_u64(7, 2));
  for (uint64_t i = 0; i < 100000; i++)
    if (ls_hash_u64(i, i * 3) == 0) {
      CHECK(!"hash is 0: reserved for no communicator");
      break;
    }
}

static void test_comms(void) {
  /* handles that collide in the low bits, as malloc'ed pointers do */
  enum { N = 3000 };
  for (uintptr_t i = 0; i < N; i++)
    CHECK(ls_comm_register(LS_FAMILY_NCCL, (void *)(0x10000 + i * 4096), 1000 + i, (int)i, N) != NULL);
  int bad = 0;
  for (uintptr_t i = 0; i < N; i++)
    bad += ls_comm_id(ls_comm_lookup((void *)(0x10000 + i * 4096))) != 1000 + i;
  CHECK(bad == 0);
  CHECK(ls_comm_lookup((void *)0x7) == NULL);
  CHECK(ls_comm_lookup(NULL) == NULL);
  /* a handle value reused after destroy gets the new identity */
  struct ls_comm *old = ls_comm_lookup((void *)0x10000);
  ls_comm_mark_dead(old);
  struct ls_comm *re = ls_comm_register(LS_FAMILY_NCCL, (void *)0x10000, 42, 0, 2);
  CHECK(re != NULL && re != old && ls_comm_lookup((void *)0x10000) == re);
  CHECK(ls_comm_handle_by_id(42, NULL) == (void *)0x10000);
  CHECK(ls_comm_handle_by_id(1000, NULL) == NULL); /* dead */
  /* split ordinals count per communicator */
  CHECK(ls_comm_next_split(re) == 0 && ls_comm_next_split(re) == 1);
  CHECK(ls_comm_next_split(ls_comm_lookup((void *)(0x10000 + 4096))) == 0);
  /* the pool is bounded: registration fails cleanly, lookups keep working */
  int nulls = 0;
  for (uintptr_t i = 0; i < 2000; i++)
    nulls += ls_comm_register(LS_FAMILY_NCCL, (void *)(0x9000000 + i * 8), 5, 0, 1) == NULL;
  CHECK(nulls > 0);
  CHECK(ls_comm_id(ls_comm_lookup((void *)(0x10000 + 17 * 4096))) == 1017);
}

static const struct ls_api_desc apis[] = {
    {"t_allreduce", "allreduce", LS_KIND_COLLECTIVE, LS_SUB_NONE},
    {"t_start", NULL, LS_KIND_GROUP_START, LS_SUB_NONE},
    {"t_end", NULL, LS_KIND_GROUP_END, LS_SUB_NONE},
    {"t_allreduce2", "allreduce", LS_KIND_COLLECTIVE, LS_SUB_NONE},
};
static uint16_t base;

static struct ls_trace_record *call(unsigned which, const void *comm, int64_t rc, int *depth_out) {
  struct ls_call c;
  if (!ls_call_begin(&c, (uint16_t)(base + which), NULL))
    return NULL;
  c.args.comm = comm;
  c.args.count = 10 + which;
  ls_call_enter(&c);
  /* the guard: a nested call on this thread passes straight through */
  struct ls_call inner;
  CHECK(ls_call_begin(&inner, (uint16_t)(base + which), NULL) == 0);
  c.t_exit = ls_now_ns();
  if (depth_out)
    *depth_out = c.depth;
  ls_call_exit(&c, rc);
  return c.rec;
}

static void test_calls(void) {
  base = ls_api_register(apis, 4, LS_FAMILY_NCCL);
  CHECK(base != LS_API_UNREGISTERED);
  CHECK(ls_api_desc_of((uint16_t)(base + 3)) == &apis[3]);
  void *h = (void *)0x5555000;
  ls_comm_register(LS_FAMILY_NCCL, h, 0xabcdef, 1, 4);
  int d;
  struct ls_trace_record *r = call(0, h, 0, &d);
  CHECK(r && r->seq == 0 && r->comm_id == 0xabcdef && r->comm_rank == 1 && r->comm_size == 4);
  CHECK(r && r->state == LS_REC_RETURNED && r->count == 10 && r->t_exit_ns >= r->t_enter_ns);
  CHECK(r && (r->flags & LS_REC_NO_DEVICE)); /* no libcuda in a unit test */
  r = call(3, h, 0, &d);
  CHECK(r && r->seq == 1);
  /* depth mirror: end at 0 changes nothing; start/start/end/end nests */
  call(2, NULL, 5, &d);
  CHECK(d == 0);
  call(1, NULL, 0, &d);
  CHECK(d == 0);
  call(1, NULL, 0, &d);
  CHECK(d == 1);
  r = call(0, h, 4, &d); /* an error inside the group: recorded, still sequenced */
  CHECK(d == 2 && r && r->rc == 4 && r->seq == 2 && (r->flags & LS_REC_IN_GROUP));
  r = call(2, NULL, 0, &d);
  CHECK(d == 2 && r && !(r->flags & LS_REC_OUTER_GROUP_END));
  r = call(2, NULL, 4, &d); /* the outer end returns the stored error: depth still drops */
  CHECK(d == 1 && r && (r->flags & LS_REC_OUTER_GROUP_END));
  call(2, NULL, 5, &d);
  CHECK(d == 0);
}

int main(int argc, char **argv) {
  if (argc > 1)
    setenv("LOCKSTEP_TRACE_DIR", argv[1], 1);
  setenv("LOCKSTEP_TIMEOUT", "0", 1);
  test_hash();
  test_calls(); /* before test_comms exhausts the communicator pool */
  test_comms();
  if (!failures)
    printf("ok\n");
  return failures ? 1 : 0;
}
