/* unbalanced-group — a group end that takes the depth below zero on some path, and the
 * exits (returns, the function's end) where the depth differs from the entry's: an early
 * return inside a group, a missing group end, more ends than starts, or paths that join with
 * different depths; and an exception that leaves the function with a group open. Reads the driver's group walk (group.c); a begin/end helper is its
 * callers' business. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

#define GZ LS_GZ

/* The group start an exit leaves open: the last API group start above the exit in its file
 * (a function that opens and closes several groups names the one the exit is in, not its
 * first); the function's first start when none is above it. */
static ls_node *opener(ls_check_ctx *c, const char *file, unsigned line) {
  ls_node *best = NULL;
  for (size_t j = 0; j < c->starts.n; j++) {
    ls_node *s = c->starts.v[j];
    if (s->ent && s->ent->rule && s->file == file && s->line <= line && (!best || s->line > best->line))
      best = s;
  }
  return best ? best : c->first_start;
}

/* a's exit is written before b's (the function's end, where no return is, last) */
static int exit_before(const ls_func *f, const ls_block *a, const ls_block *b) {
  unsigned la = a->term ? a->term->line : f->end_line, lb = b->term ? b->term->line : f->end_line;
  unsigned ca = a->term ? a->term->col : f->end_col, cb = b->term ? b->term->col : f->end_col;
  return la < lb || (la == lb && ca < cb);
}

void ls_check_unbalanced_group(ls_check_ctx *c) {
  ls_func *f = c->f;
  if (f->group_helper)
    return;
  int zero_exit = 0;
  for (int i = 0; i < f->exit->npred; i++)
    zero_exit |= (f->exit->pred[i]->gout & (1u << GZ)) != 0;
  for (size_t i = 0; i < c->below.n; i++) {
    ls_node *n = c->below.v[i];
    char msg[256];
    snprintf(msg, sizeof msg, "'%s' without a matching group start on some path: the group depth goes below zero",
             ls_callee(n));
    ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_UNBALANCED_GROUP), n->file, n->line, n->col, msg);
    if (fd) {
      ls_vec_push(&fd->sites, ls_check_loc(c->p, n->file, n->line, n->col, ls_callee(n)));
      fd->seqkey = "below-zero";
      ls_errpath_tag(c, fd, ls_errpath_at(c, n));
    }
  }
  /* the exits in source order, so that a group scope's first return carries the finding */
  int nx = f->exit->npred;
  ls_block **ex = malloc(((size_t)nx + 1) * sizeof *ex);
  struct scope { const ls_node *open; ls_finding *fd; int more; } *sc = malloc(((size_t)nx + 1) * sizeof *sc);
  if (!ex || !sc)
    abort();
  for (int i = 0; i < nx; i++)
    ex[i] = f->exit->pred[i];
  for (int i = 1; i < nx; i++) { /* insertion sort: a function has few exits */
    ls_block *k = ex[i];
    int j = i;
    while (j > 0 && exit_before(f, k, ex[j - 1]))
      ex[j] = ex[j - 1], j--;
    ex[j] = k;
  }
  int nsc = 0;
  for (int i = 0; i < nx; i++) {
    ls_block *k = ex[i];
    uint32_t m = k->gout;
    if (!m || m == 1u << GZ || !k->gin)
      continue;
    int d0 = ls_mask_depth(m);
    if (d0 < 0 && c->below.n)
      continue; /* already reported at the group end that went below zero */
    if (k->term && c->first_start && d0 > 0) {
      int own = 0; /* the error path of the group start itself (CHECK(ncclGroupStart())) */
      for (size_t j = 0; j < c->starts.n && !own; j++)
        own = ((ls_node *)c->starts.v[j])->line == k->term->line && ((ls_node *)c->starts.v[j])->file == k->term->file;
      if (own)
        continue;
    }
    const char *file = k->term ? k->term->file : f->file;
    unsigned line = k->term ? k->term->line : f->end_line, col = k->term ? k->term->col : f->end_col;
    int d = ls_mask_depth(m);
    char msg[512];
    const char *key;
    uint32_t open = m & ~(1u << GZ);
    if (d == 99 && k->term && (m & (1u << GZ)) && open && !(open & (open - 1)) && open > (1u << GZ)) {
      /* depth 0 or d here, told apart by a condition the walk tracked: the paths that
       * started the group (`if (n > 1) ncclGroupStart()`) return with it open */
      snprintf(msg, sizeof msg, "return inside a group leaves it open on the paths that started it (depth %d): ncclGroupEnd must still be called on this path; it also returns the error the group stored",
               ls_mask_depth(open));
      key = "error-return";
    } else if (d == 99) {
      snprintf(msg, sizeof msg, "group depth differs between the paths that reach this exit: some leave a group open");
      key = "join";
    } else if (d > 0 && k->term && zero_exit) {
      snprintf(msg, sizeof msg, "return inside a group leaves it open (depth %d): ncclGroupEnd must still be called on this path; it also returns the error the group stored", d);
      key = "error-return";
    } else if (d > 0) {
      snprintf(msg, sizeof msg, "function %s with the group depth at %d (it was 0 on entry): missing group end",
               k->term ? "returns" : "ends", d);
      key = "open";
    } else {
      snprintf(msg, sizeof msg, "function %s with the group depth at %d: more group ends than starts",
               k->term ? "returns" : "ends", d);
      key = "negative";
    }
    /* an error path: k itself runs only after a failure, or the normal run reaches k with
     * the depth it had on entry (the open group comes in by a failure side only) */
    ls_block *why = ls_errpath_why(c, k);
    if (!why && c->errany && c->gnorm[k->id] == 1u << GZ && d != 0 && (why = ls_errpath_into(c, k))) {
      /* a cleanup label the normal run reaches balanced: closing the group here would
       * unbalance that run, so no fix-it of the return (its key says why) */
      snprintf(msg, sizeof msg, "the failure paths that jump to this exit from inside a group leave it open: ncclGroupEnd must still be called on them; it also returns the error the group stored");
      key = "error-label";
    }
    ls_node *o = opener(c, file, line);
    /* the CHECK returns of one group scope are one finding: the first, with the others as notes */
    int j = 0;
    while (why && o && !strcmp(key, "error-return") && j < nsc && sc[j].open != o)
      j++;
    if (why && o && !strcmp(key, "error-return") && j < nsc) {
      ls_finding *fd = sc[j].fd;
      ls_vec_push(&fd->notes, ls_check_loc(c->p, file, line, col, "another return inside the same group on an error path leaves it open here"));
      ls_vec_push(&fd->sites, ls_check_loc(c->p, file, line, col, "return"));
      fd->seqkey = "error-return-scope";
      sc[j].more++;
      continue;
    }
    ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_UNBALANCED_GROUP), file, line, col, msg);
    if (!fd)
      continue;
    fd->seqkey = key;
    if (o) {
      ls_vec_push(&fd->notes, ls_check_loc(c->p, o->file, o->line, o->col, "group opened here"));
      ls_vec_push(&fd->sites, ls_check_loc(c->p, o->file, o->line, o->col, ls_callee(o)));
    }
    ls_errpath_tag(c, fd, why);
    if (why && o && !strcmp(key, "error-return"))
      sc[nsc++] = (struct scope){o, fd, 0};
  }
  for (int j = 0; j < nsc; j++)
    if (sc[j].more) {
      char m[256];
      snprintf(m, sizeof m, "fix: end the group on each of these %d error paths before returning (ncclGroupEnd in the failure branch, or a guard whose cleanup ends it)",
               sc[j].more + 1);
      ls_vec_push(&sc[j].fd->notes, ls_check_loc(c->p, sc[j].open->file, sc[j].open->line, sc[j].open->col, m));
    }
  free(ex);
  free(sc);
  /* an exception that leaves the function with a group open: the caller that catches it
   * goes on with the thread's group depth raised (no handler or destructor on its way
   * called ncclGroupEnd) */
  for (int i = 0; f->abort_blk && i < f->abort_blk->npred; i++) {
    ls_block *k = f->abort_blk->pred[i];
    ls_node *t = k->thrown;
    uint32_t open = k->gout & ~((2u << GZ) - 1); /* the depths above the entry's */
    if (!t || !k->gin || !open)
      continue;
    int own = 0; /* the error path of the group start itself (a CHECK that throws) */
    for (size_t j = 0; j < c->starts.n && !own; j++)
      own = ((ls_node *)c->starts.v[j])->line == t->line && ((ls_node *)c->starts.v[j])->file == t->file;
    if (own)
      continue;
    int d = ls_mask_depth(open);
    char msg[512], at[64] = "";
    if (d == 99)
      snprintf(at, sizeof at, " on some paths");
    else
      snprintf(at, sizeof at, " (depth %d)", d);
    if (t->kind == CXCursor_CallExpr)
      snprintf(msg, sizeof msg, "'%s' may throw inside a group, and its exception leaves the function with the group open%s: no handler or destructor on the way calls ncclGroupEnd",
               ls_callee(t), at);
    else
      snprintf(msg, sizeof msg, "exception thrown inside a group leaves the function with the group open%s: no handler or destructor on the way calls ncclGroupEnd",
               at);
    ls_finding *fd = ls_check_add(c, ls_rule_id(LS_RULE_UNBALANCED_GROUP), t->file, t->line, t->col, msg);
    if (!fd)
      continue;
    fd->seqkey = "throw";
    if (t->kind == CXCursor_CallExpr && t->ent && t->ent->def && t->ent->def->throws) {
      const ls_node *w = t->ent->def->throws;
      ls_vec_push(&fd->notes, ls_check_loc(c->p, w->file, w->line, w->col, "the exception can come from here"));
    }
    ls_node *o = opener(c, t->file, t->line);
    if (o) {
      ls_vec_push(&fd->notes, ls_check_loc(c->p, o->file, o->line, o->col, "group opened here"));
      ls_vec_push(&fd->sites, ls_check_loc(c->p, o->file, o->line, o->col, ls_callee(o)));
    }
    ls_errpath_tag(c, fd, ls_errpath_why(c, k)); /* a CHECK that throws when the call failed */
  }
}
