/* check.c — how the rules of checks/ add findings: one finding per rule and place (an
 * open-addressing set over the run's findings), note locations, the notes that retrace a
 * rank value to its source. */
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static uint64_t finding_key(const char *rule, const char *file, unsigned line, unsigned col) {
  uint64_t h = ls_hash_str(ls_hash_str(0, rule), file);
  return (h ^ line) * 1099511628211ull ^ col;
}

static void seen_insert(ls_check_ctx *c, ls_finding *f) {
  if (!c->seen || 2 * (c->findings->n + 1) > c->seencap) {
    size_t nc = c->seencap ? 2 * c->seencap : 256;
    ls_finding **ns = calloc(nc, sizeof *ns);
    if (!ns)
      abort();
    for (size_t i = 0; i < c->seencap; i++)
      if (c->seen[i]) {
        size_t j = finding_key(c->seen[i]->rule, c->seen[i]->file, c->seen[i]->line, c->seen[i]->col) & (nc - 1);
        while (ns[j])
          j = (j + 1) & (nc - 1);
        ns[j] = c->seen[i];
      }
    free(c->seen);
    c->seen = ns;
    c->seencap = nc;
  }
  size_t j = finding_key(f->rule, f->file, f->line, f->col) & (c->seencap - 1);
  while (c->seen[j])
    j = (j + 1) & (c->seencap - 1);
  c->seen[j] = f;
}

ls_loc *ls_check_loc(ls_program *p, const char *file, unsigned line, unsigned col, const char *msg) {
  ls_loc *l = ls_alloc(p->arena, sizeof *l);
  l->file = file;
  l->line = line;
  l->col = col;
  l->msg = msg ? ls_strdup(p->arena, msg) : NULL;
  return l;
}

ls_finding *ls_check_add(ls_check_ctx *c, const char *rule, const char *file, unsigned line, unsigned col,
                         const char *msg) {
  if (c->seencap)
    for (size_t j = finding_key(rule, file, line, col) & (c->seencap - 1); c->seen[j]; j = (j + 1) & (c->seencap - 1)) {
      ls_finding *o = c->seen[j];
      if (o->line == line && o->col == col && !strcmp(o->rule, rule) && !strcmp(o->file, file))
        return NULL; /* one finding per place and rule */
    }
  ls_finding *f = ls_alloc(c->p->arena, sizeof *f);
  f->rule = rule;
  f->file = file;
  f->line = line;
  f->col = col;
  f->function = c->f->name;
  f->message = ls_strdup(c->p->arena, msg);
  seen_insert(c, f);
  ls_vec_push(c->findings, f);
  return f;
}

void ls_check_origin_notes(ls_check_ctx *c, ls_finding *fd, const ls_origin *o) {
  if (!fd || !o)
    return;
  /* the value's way back to its source, a few steps at most: past that the source */
  const ls_origin *src = o;
  while (src->from)
    src = src->from;
  char m[512];
  for (int step = 0; o; o = step == 3 ? src : o->from, step++) {
    ls_str2(m, sizeof m, o->what, " here");
    ls_vec_push(&fd->notes, ls_check_loc(c->p, o->file, o->line, o->col, m));
    if (o == src)
      break;
  }
}

size_t ls_key_cat(char *key, size_t cap, size_t k, const char *a, const char *b) {
  const char *part[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    size_t len = strlen(part[i]);
    if (k < cap) {
      size_t w = len < cap - 1 - k ? len : cap - 1 - k;
      memcpy(key + k, part[i], w);
      key[k + w] = 0;
    }
    k += len;
  }
  return k;
}
