/* symbolize.h — call sites (module + offset) to file:line function, outside the
 * recorder's hot path. Batches every wanted offset of a module into one
 * `addr2line -e MODULE -a -f -C -i ...` run and caches the answers. Without
 * addr2line, the module file, or debug info, sites stay module+offset and a
 * note says so once per module. */
#ifndef LOCKSTEP_SYMBOLIZE_H
#define LOCKSTEP_SYMBOLIZE_H

#include <stdint.h>

#include "trace_read.h"

struct ls_symbolizer;

/* A resolved site. Strings are owned by the symbolizer; file/function are NULL
 * and line 0 when unknown; module is NULL when the pc is in no module. */
struct ls_site {
  const char *module;
  uint64_t offset; /* pc - module base (a return address: the instruction after the call) */
  const char *file;
  int line;
  const char *function;
};

struct ls_symbolizer *ls_sym_new(void);
void ls_sym_free(struct ls_symbolizer *s);
/* Queue the site of record r of trace t; resolved by the next ls_sym_run. */
void ls_sym_want(struct ls_symbolizer *s, const struct ls_trace *t, const struct ls_trace_record *r);
/* The same for any pc of t's process (a caller frame). */
void ls_sym_want_pc(struct ls_symbolizer *s, const struct ls_trace *t, uint64_t pc);
struct ls_site ls_sym_pc(struct ls_symbolizer *s, const struct ls_trace *t, uint64_t pc);
/* Resolve everything queued (runs addr2line once per module and batch). */
void ls_sym_run(struct ls_symbolizer *s);
/* The site of r (file/line only if it was queued and resolved). */
struct ls_site ls_sym_site(struct ls_symbolizer *s, const struct ls_trace *t, const struct ls_trace_record *r);
/* How many queued sites resolved to file:line, and how many did not. */
void ls_sym_stats(const struct ls_symbolizer *s, unsigned long *resolved, unsigned long *unresolved);

#endif
