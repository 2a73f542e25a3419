/* location.c — the expansion location (what the user wrote) of each converted node, mostly
 * without asking libclang: see ls_locache in frontend.h for the two shortcuts and how they
 * check themselves. */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "xalloc.h"

const char *ls_loc_file_name(ls_locache *lc, CXFile f) {
  if (!f)
    return "<unknown>";
  if (f == lc->last_file)
    return lc->last_name;
  CXString s = clang_getFileName(f);
  const char *name = clang_getCString(s) ? clang_getCString(s) : "<unknown>";
  if (lc->wd && name[0] != '/' && name[0] != '<') {
    /* a header found through a relative -I of a -p entry is named relative to the entry's
     * directory, while the entry itself is absolute: name both the same way */
    while (name[0] == '.' && name[1] == '/')
      name += 2;
    size_t a = strlen(lc->wd), b = strlen(name);
    char *full = ls_alloc(lc->arena, a + b + 2);
    memcpy(full, lc->wd, a);
    full[a] = '/';
    memcpy(full + a + 1, name, b + 1);
    lc->last_name = full;
  } else {
    lc->last_name = ls_strdup(lc->arena, name);
  }
  clang_disposeString(s);
  lc->last_file = f;
  return lc->last_name;
}


static void lc_setup(ls_locache *lc, CXTranslationUnit tu, CXFile f) {
  lc->fast = 0;
  size_t size = 0;
  const char *buf = clang_getFileContents(tu, f, &size);
  CXSourceLocation start = clang_getLocationForOffset(tu, f, 0);
  if (!buf || size >= 0x40000000u || (start.int_data & 0x80000000u))
    return;
  unsigned cap = 1024, n = 0;
  unsigned *v = malloc(cap * sizeof *v);
  if (!v)
    abort();
  v[n++] = 0;
  int cr = memchr(buf, '\r', size) != NULL;
  for (size_t i = 0; i < size; i++) { /* line ends as clang counts them: \n, \r\n, \r */
    if (!cr) {
      const char *nl = memchr(buf + i, '\n', size - i);
      if (!nl)
        break;
      i = (size_t)(nl - buf);
    } else if (buf[i] != '\n' && buf[i] != '\r') {
      continue;
    }
    if (buf[i] == '\r' && i + 1 < size && buf[i + 1] == '\n')
      i++;
    if (n == cap) {
      cap *= 2;
      v = ls_xrealloc(v, cap * sizeof *v);
    }
    v[n++] = (unsigned)i + 1;
  }
  lc->main = f;
  lc->buf = buf;
  lc->base = start.int_data;
  lc->size = (unsigned)size;
  lc->line_at = v;
  lc->nlines = n;
  lc->fast = 1;
}

/* line and column of byte offset off of the main file */
static void lc_linecol(ls_locache *lc, unsigned off, unsigned *line, unsigned *col) {
  unsigned i = lc->last;
  if (!(lc->line_at[i] <= off && (i + 1 == lc->nlines || off < lc->line_at[i + 1]))) {
    unsigned lo = 0, hi = lc->nlines; /* the last line starting at or before off */
    while (hi - lo > 1) {
      unsigned mid = lo + (hi - lo) / 2;
      if (lc->line_at[mid] <= off)
        lo = mid;
      else
        hi = mid;
    }
    i = lc->last = lo;
  }
  *line = i + 1;
  *col = off - lc->line_at[i] + 1;
}

/* A macro location's expansion point: libclang finds the file and offset, the main file's
 * line table (lc_linecol) the line and column, which is half of what asking libclang for
 * them costs (~1,300 instructions a location; 22k locations in the generated benchmark TU). */
static void macro_expansion(ls_locache *lc, CXSourceLocation loc, CXFile *f, unsigned *line, unsigned *col) {
  unsigned off;
  if (lc->fast > 0) {
    clang_getExpansionLocation(loc, f, NULL, NULL, &off);
    if (*f == lc->main && off <= lc->size) {
      lc_linecol(lc, off, line, col);
      return;
    }
  }
  clang_getExpansionLocation(loc, f, line, col, NULL);
}

void ls_loc_get(ls_locache *lc, CXSourceLocation loc, const char **file, unsigned *line, unsigned *col) {
  unsigned raw = loc.int_data;
  CXFile f = NULL;
  int check = (lc->nchecks++ & 63) == 0 || lc->nchecks < 16;
  if (raw & 0x80000000u) {
    if (lc->mvalid && raw >= lc->mlo && raw <= lc->mhi) {
      if (!check) {
        *line = lc->mline;
        *col = lc->mcol;
        *file = ls_loc_file_name(lc, lc->mfile);
        return;
      }
      clang_getExpansionLocation(loc, &f, line, col, NULL);
      if (f != lc->mfile || *line != lc->mline || *col != lc->mcol)
        lc->moff = 1, lc->mvalid = 0;
      *file = ls_loc_file_name(lc, f);
      return;
    }
    macro_expansion(lc, loc, &f, line, col);
    *file = ls_loc_file_name(lc, f);
    if (!f || lc->moff)
      return;
    if (lc->mvalid && f == lc->mfile && *line == lc->mline && *col == lc->mcol) {
      if (raw < lc->mlo)
        lc->mlo = raw;
      if (raw > lc->mhi)
        lc->mhi = raw;
    } else {
      lc->mvalid = 1;
      lc->mlo = lc->mhi = raw;
      lc->mfile = f;
      lc->mline = *line;
      lc->mcol = *col;
    }
    return;
  }
  if (lc->fast > 0 && raw - lc->base <= lc->size) {
    lc_linecol(lc, raw - lc->base, line, col);
    if (check) {
      unsigned l2, c2;
      clang_getExpansionLocation(loc, &f, &l2, &c2, NULL);
      if (f != lc->main || l2 != *line || c2 != *col) {
        lc->fast = 0;
        *line = l2;
        *col = c2;
        *file = ls_loc_file_name(lc, f);
        return;
      }
    }
    *file = ls_loc_file_name(lc, lc->main);
    return;
  }
  clang_getExpansionLocation(loc, &f, line, col, NULL);
  *file = ls_loc_file_name(lc, f);
  if (lc->fast < 0 && f && clang_Location_isFromMainFile(loc))
    lc_setup(lc, lc->tu, f);
}

