/* frontend.h — what the parts of lint's front end share beyond lint.h: parse.c (flags and
 * the libclang parse), location.c (the location cache), pragma.c (thread-region pragmas from
 * the source text) and convert.c (libclang's tree into ls_node trees, the entities they name).
 * Internal to analyzer/. */
#ifndef LOCKSTEP_FRONTEND_H
#define LOCKSTEP_FRONTEND_H

#include "lint.h"

/* ---- location cache (location.c) ---- */
/* Expansion locations without asking libclang for most nodes (clang_getExpansionLocation
 * costs ~1,000 instructions: a FileID search, then line and column lookups).
 * - A location in the main file (not from a macro): libclang's CXSourceLocation carries the
 *   raw clang::SourceLocation, which for a file is the file's start in the source-location
 *   space plus the byte offset; line and column then come from our own line table of the
 *   file's buffer (clang_getFileContents), columns counted in bytes like clang's.
 * - A location inside a macro expansion: every macro location that one top-level macro use
 *   creates (its body, its arguments, macros nested in them) is allocated in one contiguous
 *   run of the source-location space, before the next use's; so a raw location between two
 *   that libclang placed at the same use is from that use too: one interval is remembered.
 * Both rest on libclang's encoding, so they check themselves: the first locations of each
 * TU and then one in 64 are also asked of libclang, and a mismatch turns the shortcut off
 * for the TU. */
typedef struct ls_locache {
  ls_arena *arena;              /* where file names are copied */
  CXTranslationUnit tu;
  const char *wd;               /* the TU's -working-directory (a -p entry's), or NULL */
  CXFile last_file;             /* the file of the previous name asked for */
  const char *last_name;
  CXFile main;                  /* NULL: not known yet */
  int fast;                     /* -1: not set up, 0: off, 1: on */
  unsigned base, size;          /* raw start of the main file, its length */
  const char *buf;              /* the main file's text */
  unsigned *line_at;            /* start offset of line i+1 */
  unsigned nlines;
  unsigned last;                /* line index of the previous lookup */
  int mvalid, moff;             /* the macro interval; moff: macro shortcut off */
  unsigned mlo, mhi, mline, mcol;
  CXFile mfile;
  unsigned nchecks;
} ls_locache;

/* The expansion location of loc; *file is copied into lc->arena (one copy per run of
 * locations in the same file). Set lc->fast = -1 and lc->arena, lc->tu before the first call;
 * free lc->line_at after the last. */
void ls_loc_get(ls_locache *lc, CXSourceLocation loc, const char **file, unsigned *line, unsigned *col);
/* f's name ("<unknown>" for NULL), copied into lc->arena. */
const char *ls_loc_file_name(ls_locache *lc, CXFile f);

/* ---- thread-region pragmas (pragma.c) ---- */
/* a region pragma at `line` whose statement starts on line `body` (0: none found) */
struct ls_prag { unsigned line, body; const char *text; int used; };
typedef struct ls_pragfile { CXFile file; struct ls_prag *v; int n; } ls_pragfile;
typedef struct ls_pragmas { ls_pragfile *pf; int npf; } ls_pragmas; /* the files seen so far */
/* The region pragmas (rules' thread_regions) of `file`, scanned once per file; texts in p's
 * arena, the lists owned by pp (ls_pragmas_free). */
ls_pragfile *ls_pragmas_of(ls_pragmas *pp, ls_program *p, CXTranslationUnit tu, CXFile file);
void ls_pragmas_free(ls_pragmas *pp);

/* ---- parse.c to convert.c ---- */
/* the CPU seconds of this thread's last ls_tu_parse, which ls_tu_convert counts as parsing */
extern _Thread_local double ls_parse_cost;

#endif
