/* xalloc.h — the out-of-memory policy of lockstep's commands (lint, compare, trace,
 * confirm): they are short-lived and have nothing useful to do without memory, so a
 * failed allocation ends the command with one clear line and exit status 2 (the house
 * status for errors) rather than a NULL dereference, or a leak of the old block in
 * `p = realloc(p, n)`. Readers that report errors to a caller (trace_read.c) keep
 * their own checks. The recorder (runtime/preload) never allocates on its paths. */
#ifndef LOCKSTEP_XALLOC_H
#define LOCKSTEP_XALLOC_H

#include <stdio.h>
#include <stdlib.h>

/* realloc(p, n) that never returns NULL: on failure p is freed, a message goes to
 * stderr and the process exits 2. n == 0 asks for 1 byte (realloc(p, 0) may free p). */
static inline void *ls_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "lockstep: out of memory (allocating %zu bytes)\n", n);
    free(p);
    exit(2);
  }
  return q;
}

#endif
