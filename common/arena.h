/* arena.h — memory by lifetime (a bump allocator freed in one call), the growable pointer
 * vector, and the string helpers that go with them. Used by lint and the rules library;
 * no dependency beyond libc. */
#ifndef LOCKSTEP_ARENA_H
#define LOCKSTEP_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct ls_arena {
  unsigned char *cur, *end; /* the free part of the newest chunk */
  struct ls_chunk *head;
  size_t size;              /* bytes of all chunks (LOCKSTEP_LINT_STATS) */
} ls_arena;
ls_arena *ls_arena_new(void);
void ls_arena_free(ls_arena *a);
void *ls_alloc_chunk(ls_arena *a, size_t n); /* a new chunk: ls_alloc's slow path */
/* zeroed, 16-aligned; aborts on OOM. Inline: half a million calls convert a large TU. */
static inline void *ls_alloc(ls_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if ((size_t)(a->end - a->cur) < n)
    return ls_alloc_chunk(a, n);
  void *p = a->cur;
  a->cur += n; /* chunks are never reused, so calloc's zeroes are still there */
  return p;
}
/* n rounded up to whole 64-byte lines: in an arena that holds nothing else (chunks start
 * on a line), each object starts on a line of its own */
static inline void *ls_alloc_lines(ls_arena *a, size_t n) { return ls_alloc(a, (n + 63) & ~(size_t)63); }
char *ls_strdup(ls_arena *a, const char *s);
char *ls_strndup(ls_arena *a, const char *s, size_t n);

/* growable pointer vector (heap; caller frees .v) */
typedef struct { void **v; size_t n, cap; } ls_vec;
void ls_vec_grow(ls_vec *v); /* ls_vec_push's slow path */
static inline void ls_vec_push(ls_vec *v, void *p) {
  if (v->n == v->cap)
    ls_vec_grow(v);
  v->v[v->n++] = p;
}

uint64_t ls_hash_str(uint64_t h, const char *s); /* FNV-1a of s, continuing from h (0: start) */

#endif
