/* fixit.c — fix-it hints where the fix is mechanical, shown as a `note: fix-it:` in the text
 * output and carried in SARIF as `fixes`. Only source that reads plainly gets one: the
 * statement must be written out (not hidden in a macro), start its line or be a lone
 * `return ...;`, and end on that line. An uncertain fix is worse than none. */
#include <stdlib.h>
#include <string.h>

#include "checks/rule_ids.h"
#include "integ.h"

static int ws_before(const char *l, unsigned col) {
  for (unsigned i = 0; i + 1 < col; i++)
    if (l[i] != ' ' && l[i] != '\t')
      return 0;
  return 1;
}

/* the ';' ending the statement that starts at col (0-based index), outside strings and
 * parentheses; -1 if it does not end on this line */
static long stmt_end(const char *l, size_t from) {
  int depth = 0;
  char q = 0;
  for (size_t i = from; l[i]; i++) {
    char c = l[i];
    if (q) {
      if (c == '\\' && l[i + 1])
        i++;
      else if (c == q)
        q = 0;
    } else if (c == '"' || c == '\'') {
      q = c;
    } else if (c == '(') {
      depth++;
    } else if (c == ')') {
      depth--;
    } else if (c == ';' && depth == 0) {
      return (long)i;
    } else if (c == '/' && (l[i + 1] == '/' || l[i + 1] == '*')) {
      return -1;
    }
  }
  return -1;
}

static void add_note(ls_arena *a, ls_finding *f, unsigned line, unsigned col, const char *msg) {
  ls_loc *n = ls_alloc(a, sizeof *n);
  n->file = f->file;
  n->line = line;
  n->col = col;
  n->msg = ls_strdup(a, msg);
  ls_vec_push(&f->notes, n);
}

/* `return X;` inside a group: `{ ncclGroupEnd(); return X; }` (braces: it may be the body
 * of an unbraced if). One end per open level. */
static void fix_return(ls_arena *a, ls_finding *f) {
  const char *l = ls_source_line(a, f->file, f->line);
  int depth = 1;
  const char *d = strstr(f->message, "(depth ");
  if (d) { /* not sscanf: no undefined behaviour on an out-of-range number */
    char *e;
    long v = strtol(d + 7, &e, 10);
    depth = e == d + 7 ? 1 : v >= 1 && v <= 4 ? (int)v : 0;
  }
  if (!l || depth < 1 || depth > 4 || strlen(l) < f->col || strncmp(l + f->col - 1, "return", 6) ||
      (l[f->col + 5] != ' ' && l[f->col + 5] != ';' && l[f->col + 5] != '('))
    return;
  long end = stmt_end(l, f->col - 1);
  if (end < 0)
    return;
  size_t n = (size_t)end + 1 - (f->col - 1);
  size_t cap = n + 16 * (size_t)depth + 8, k;
  char *text = ls_alloc(a, cap);
  k = (size_t)snprintf(text, cap, "{ ");
  for (int i = 0; i < depth; i++)
    k += (size_t)snprintf(text + k, cap - k, "ncclGroupEnd(); ");
  snprintf(text + k, cap - k, "%.*s }", (int)n, l + f->col - 1);
  ls_fix *fx = ls_alloc(a, sizeof *fx);
  fx->desc = "close the group before returning";
  fx->nedits = 1;
  fx->edits[0] = (ls_edit){f->file, f->line, f->col, f->line, (unsigned)end + 2, text};
  f->fix = fx;
  char *msg = ls_alloc(a, strlen(text) + n + 64);
  sprintf(msg, "fix-it: replace '%.*s' with '%s'", (int)n, l + f->col - 1, text);
  add_note(a, f, f->line, f->col, msg);
}

/* an ungrouped send/recv pair written as statements on nearby lines at the same indent:
 * ncclGroupStart(); before the first, ncclGroupEnd(); after the second */
static void fix_p2p(ls_arena *a, ls_finding *f) {
  if (f->sites.n != 2)
    return;
  ls_loc *s0 = f->sites.v[0], *s1 = f->sites.v[1];
  if (strcmp(s0->file, f->file) || strcmp(s1->file, f->file) || s0->line == s1->line)
    return;
  ls_loc *first = s0->line < s1->line ? s0 : s1, *last = first == s0 ? s1 : s0;
  if (last->line - first->line > 3 || first->col != last->col)
    return;
  const char *l0 = ls_source_line(a, f->file, first->line), *l1 = ls_source_line(a, f->file, last->line);
  if (!l0 || !l1 || !ws_before(l0, first->col) || !ws_before(l1, last->col) || !first->msg || !last->msg ||
      strncmp(l0 + first->col - 1, first->msg, strlen(first->msg)) ||
      strncmp(l1 + last->col - 1, last->msg, strlen(last->msg)) || stmt_end(l1, last->col - 1) < 0)
    return;
  unsigned ind = first->col - 1;
  char *pre = ls_alloc(a, ind + 32), *post = ls_alloc(a, ind + 32);
  sprintf(pre, "ncclGroupStart();\n%.*s", (int)ind, l0);
  sprintf(post, "\n%.*sncclGroupEnd();", (int)ind, l1);
  unsigned eol = (unsigned)strlen(l1) + 1;
  ls_fix *fx = ls_alloc(a, sizeof *fx);
  fx->desc = "group the send/receive pair";
  fx->nedits = 2;
  fx->edits[0] = (ls_edit){f->file, first->line, first->col, first->line, first->col, pre};
  fx->edits[1] = (ls_edit){f->file, last->line, eol, last->line, eol, post};
  f->fix = fx;
  char msg[160];
  snprintf(msg, sizeof msg, "fix-it: insert 'ncclGroupStart();' before line %u and 'ncclGroupEnd();' after line %u",
           first->line, last->line);
  add_note(a, f, first->line, first->col, msg);
}

void ls_fixits(ls_arena *a, ls_vec *findings) {
  for (size_t i = 0; i < findings->n; i++) {
    ls_finding *f = findings->v[i];
    if (f->fix)
      continue;
    /* (a group scope with several error returns, "error-return-scope", gets a note, not
     * an edit of its first return alone) */
    if (!strcmp(f->rule, ls_rule_id(LS_RULE_UNBALANCED_GROUP)) && f->seqkey && !strcmp(f->seqkey, "error-return"))
      fix_return(a, f);
    else if (!strcmp(f->rule, ls_rule_id(LS_RULE_UNGROUPED_P2P)))
      fix_p2p(a, f);
  }
}
