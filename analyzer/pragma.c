/* pragma.c — the thread-region pragmas of a file, read from its text. Pragmas are gone from
 * libclang's tree, and with -fopenmp the statement of an OpenMP directive hides inside a
 * CapturedStmt that libclang does not visit. So lint parses without -fopenmp (ls_tu_parse)
 * and finds the pragmas here: the first node that starts on the line after such a pragma is
 * its statement, which convert.c wraps in an UnexposedStmt node whose text is the pragma
 * ("omp parallel num_threads(2)"). */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "xalloc.h"

static int region_pragma(const ls_rules *r, const char *t) {
  for (int i = 0; i < r->nregions + r->nprimary; i++) {
    const char *g = i < r->nregions ? r->regions[i] : r->primary_regions[i - r->nregions];
    size_t k = strlen(g);
    if (!strncmp(t, g, k) && (!t[k] || t[k] == ' ' || t[k] == '('))
      return 1;
  }
  return 0;
}

ls_pragfile *ls_pragmas_of(ls_pragmas *pp, ls_program *p, CXTranslationUnit tu, CXFile file) {
  for (int i = 0; i < pp->npf; i++)
    if (pp->pf[i].file == file)
      return &pp->pf[i];
  pp->pf = ls_xrealloc(pp->pf, (size_t)(pp->npf + 1) * sizeof *pp->pf);
  ls_pragfile *pf = &pp->pf[pp->npf++];
  memset(pf, 0, sizeof *pf);
  pf->file = file;
  size_t size = 0;
  const char *buf = clang_getFileContents(tu, file, &size);
  int any = 0; /* most files have no pragma at all: one cheap look first (memchr, not a byte loop) */
  for (const char *q = buf, *e = buf + size; q && !any && (q = memchr(q, 'p', (size_t)(e - q))) != NULL; q++)
    any = e - q >= 6 && !memcmp(q, "pragma", 6);
  if (!any)
    return pf;
  const char *e = buf + size, *q = buf;
  unsigned line = 1;
  struct ls_prag *open = NULL; /* a pragma waiting for its statement's line */
  while (q < e) {
    const char *eol = memchr(q, '\n', (size_t)(e - q));
    if (!eol)
      eol = e;
    const char *t = q;
    while (t < eol && (*t == ' ' || *t == '\t'))
      t++;
    unsigned here = line;
    if (t < eol && *t == '#') {
      /* the directive with its continuation lines, whitespace collapsed */
      char text[512] = {0};
      size_t n = 0;
      int cont;
      const char *l = t + 1;
      do {
        const char *le = eol;
        cont = le > l && le[-1] == '\\';
        for (const char *x = l; x < le - cont && n + 1 < sizeof text; x++) {
          char ch = *x == '\t' || *x == '\r' ? ' ' : *x;
          if (ch == ' ' && (n == 0 || text[n - 1] == ' '))
            continue;
          text[n++] = ch;
        }
        if (n && text[n - 1] != ' ' && n + 1 < sizeof text)
          text[n++] = ' ';
        if (cont && eol < e) {
          q = eol + 1;
          line++;
          eol = memchr(q, '\n', (size_t)(e - q));
          if (!eol)
            eol = e;
          l = q;
        } else {
          cont = 0;
        }
      } while (cont);
      while (n && text[n - 1] == ' ')
        n--;
      text[n] = 0;
      if (!strncmp(text, "pragma ", 7) && region_pragma(p->rules, text + 7)) {
        pf->v = ls_xrealloc(pf->v, (size_t)(pf->n + 1) * sizeof *pf->v);
        open = &pf->v[pf->n++];
        *open = (struct ls_prag){here, 0, ls_strdup(p->arena, text + 7), 0};
      }
    } else if (open && t < eol && eol - t >= 2 && t[0] == '/' && t[1] == '*') {
      /* a block comment between the pragma and its statement: skip to its end */
      const char *x = t + 2;
      while (x < e) {
        const char *star = memchr(x, '*', (size_t)(e - x));
        if (!star || star + 1 >= e) {
          x = e;
          break;
        }
        if (star[1] == '/') {
          x = star + 2;
          break;
        }
        x = star + 1;
      }
      for (const char *y = eol; y < x && y < e; y++) /* the lines it spans */
        if (*y == '\n') {
          line++;
          eol = memchr(y + 1, '\n', (size_t)(e - y - 1));
          if (!eol)
            eol = e;
          y = eol - 1;
        }
      const char *rest = x; /* code after the comment on its last line */
      while (rest < eol && (*rest == ' ' || *rest == '\t'))
        rest++;
      if (rest < eol && !(eol - rest >= 2 && rest[0] == '/' && rest[1] == '/')) {
        open->body = line;
        open = NULL;
      }
    } else if (open && t < eol && !(eol - t >= 2 && t[0] == '/' && t[1] == '/')) {
      open->body = here; /* the first line of code after the pragma */
      open = NULL;
    }
    q = eol + 1;
    line++;
  }
  return pf;
}


void ls_pragmas_free(ls_pragmas *pp) {
  for (int i = 0; i < pp->npf; i++)
    free(pp->pf[i].v);
  free(pp->pf);
  pp->pf = NULL;
  pp->npf = 0;
}
