/* arena.c — bump allocator for everything a lint run builds (nodes, CFGs, strings) and the
 * rules tables. Freed in one call; individual frees do not exist. Also the tiny growable vector. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "xalloc.h"

struct ls_chunk {
  struct ls_chunk *next;
  _Alignas(16) unsigned char data[];
};

static void oom(void) { /* the commands' policy (xalloc.h): one line, exit 2 */
  fputs("lockstep: out of memory\n", stderr);
  exit(2);
}

ls_arena *ls_arena_new(void) {
  ls_arena *a = calloc(1, sizeof *a);
  if (!a)
    oom();
  ls_alloc_chunk(a, 0); /* a chunk from the start: ls_alloc(a, 0) never returns NULL */
  return a;
}

void ls_arena_free(ls_arena *a) {
  if (!a)
    return;
  for (struct ls_chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    free(c);
  }
  free(a);
}

void *ls_alloc_chunk(ls_arena *a, size_t n) { /* n: rounded by ls_alloc */
  /* 256 KiB: the analysis's chunks are taken from what libclang's dispose freed, and 1 MiB
   * chunks found fewer holes that size there (1.3k more fresh pages on bench's generated TU) */
  size_t size = n > (1u << 18) ? n : (1u << 18);
  /* zeroed once (fresh pages from the kernel), not per allocation; the data from a 64-byte
   * boundary, so that 64-byte objects (ls_node) are one cache line each */
  struct ls_chunk *c = calloc(1, sizeof *c + size + 48);
  if (!c)
    oom();
  c->next = a->head;
  a->head = c;
  a->size += size;
  unsigned char *d = c->data + (-(uintptr_t)c->data & 63);
  a->cur = d + n;
  a->end = d + size;
  return d;
}

char *ls_strndup(ls_arena *a, const char *s, size_t n) {
  char *d = ls_alloc(a, n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

char *ls_strdup(ls_arena *a, const char *s) { return ls_strndup(a, s, strlen(s)); }

void ls_vec_grow(ls_vec *v) {
  v->cap = v->cap ? v->cap * 2 : 8;
  v->v = ls_xrealloc(v->v, v->cap * sizeof *v->v);
}

uint64_t ls_hash_str(uint64_t h, const char *s) {
  if (!h)
    h = 1469598103934665603ull;
  for (; s && *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}
