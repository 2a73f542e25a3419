/* unit_recorder.c — unit tests of the recorder core, linked from its objects (no
 * preload, no NCCL): identity hashing, the lock-free communicator table, the api
 * registry's op classes, and one begin/enter/exit cycle per kind with the group-depth
 * mirror, the guard and the record it leaves, and the caller-frame walk against
 * frame pointers that are garbage. Exit 0 when every check holds. */
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

/* ---- caller frames (callstack.c) ---------------------------------------------------- */

/* probe plays the wrapper: its return address is the call's site, its saved rbp is
 * whatever its caller left in rbp. hostile() calls it with rbp = the given value, as
 * code built without frame pointers may (rbp used as a general register). */
uint64_t probe_out[LS_TRACE_CALLERS];
/* 0: the walk searches for the site's frame; 1: it is given probe's own frame, as the
 * generated wrappers give theirs; 2: it is given a frame that does not hold the site
 * (the search must take over). */
int probe_frame_mode;
void probe(void);
__attribute__((noinline)) void probe(void) {
  const void *fr = probe_frame_mode == 1 ? __builtin_frame_address(0)
                   : probe_frame_mode == 2 ? (const void *)probe_out : NULL;
  ls_stack_callers(__builtin_return_address(0), fr, probe_out);
}
void hostile(uintptr_t rbp);
__asm__(".text\n.globl hostile\n.type hostile,@function\nhostile:\n"
        "  push %rbp\n  mov %rdi, %rbp\n  call probe\n  pop %rbp\n  ret\n");

static int walked_mode(uintptr_t rbp, int mode) {
  probe_frame_mode = mode;
  hostile(rbp);
  int n = 0;
  while (n < (int)LS_TRACE_CALLERS && probe_out[n])
    n++;
  return n;
}
static int walked(uintptr_t rbp) {
  /* every case must come out the same whether the walk finds the site's frame itself
   * or starts at the one given (valid or not) */
  uint64_t want[LS_TRACE_CALLERS];
  int n = walked_mode(rbp, 0);
  memcpy(want, probe_out, sizeof want);
  for (int mode = 1; mode <= 2; mode++) {
    memset(probe_out, 0xa5, sizeof probe_out);
    CHECK(walked_mode(rbp, mode) == n && !memcmp(probe_out, want, sizeof want));
  }
  return n;
}

/* A site further up than the search looks (OWN_FRAMES): only a given frame reaches it. */
static uint64_t deep_out[LS_TRACE_CALLERS];
__attribute__((noinline)) static void deep(int n, const void *site, const void *frame) {
  if (n)
    deep(n - 1, site, frame);
  else
    ls_stack_callers(site, frame, deep_out);
  __asm__ volatile("" ::: "memory"); /* no tail call: every level keeps its frame */
}
__attribute__((noinline)) static void deep_top(int given) {
  deep(8, __builtin_return_address(0), given ? __builtin_frame_address(0) : NULL);
  __asm__ volatile("" ::: "memory");
}

static void test_callers(void) {
  /* Outside the thread's stack, misaligned, or not climbing: nothing is read there. */
  static uintptr_t heap_frame[4] __attribute__((aligned(16)));
  heap_frame[0] = (uintptr_t)heap_frame;
  heap_frame[1] = 0x1234;
  const uintptr_t bad[] = {0, 1, 8, 0xdeadbeef, 0xffff800000000000u, UINTPTR_MAX - 15, (uintptr_t)heap_frame};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(walked(bad[i]) == 0);
  /* Frames made up on this stack (above the probe's): followed while they climb. */
  uintptr_t frames[16] __attribute__((aligned(16)));
  memset(frames, 0, sizeof frames);
  frames[0] = (uintptr_t)&frames[4]; frames[1] = 0x1111;
  frames[4] = (uintptr_t)&frames[8]; frames[5] = 0x2222;
  frames[8] = (uintptr_t)&frames[8]; frames[9] = 0x3333; /* points at itself: the walk ends */
  CHECK(walked((uintptr_t)frames) == 3);
  CHECK(probe_out[0] == 0x1111 && probe_out[1] == 0x2222 && probe_out[2] == 0x3333);
  CHECK(walked((uintptr_t)&frames[1]) == 0); /* misaligned */
  frames[0] = (uintptr_t)frames - 64;          /* goes down the stack */
  CHECK(walked((uintptr_t)frames) == 1 && probe_out[0] == 0x1111);
  frames[0] = UINTPTR_MAX - 15;                /* past the stack's top */
  CHECK(walked((uintptr_t)frames) == 1);
  /* A real chain: this function's frame pointer gives its caller's return address. */
  CHECK(walked((uintptr_t)__builtin_frame_address(0)) >= 1 && probe_out[0] == (uint64_t)(uintptr_t)__builtin_return_address(0));
  deep_top(0);
  CHECK(deep_out[0] == 0); /* nine of our frames deep: the search gives up */
  deep_top(1);
  CHECK(deep_out[0] == (uint64_t)(uintptr_t)__builtin_return_address(0)); /* the frame given: found */
}

int main(int argc, char **argv) {
  if (argc > 1)
    setenv("LOCKSTEP_TRACE_DIR", argv[1], 1);
  setenv("LOCKSTEP_TIMEOUT", "0", 1);
  test_hash();
  test_callers();
  test_calls(); /* before test_comms exhausts the communicator pool */
  test_comms();
  if (!failures)
    printf("ok\n");
  return failures ? 1 : 0;
}
