/* checks.c — drives the analysis of a whole program and runs the four checks:
 *   rank-divergent-collective  collectives control-dependent on a rank-dependent branch whose
 *                              alternatives issue different fingerprint sequences;
 *   unbalanced-group           sparse-style group-depth walk over the CFG;
 *   rank-dependent-argument    count/dtype/root/redop that depend on the rank;
 *   ungrouped-p2p              send/recv outside a group that every rank orders the same way.
 * Functions are processed callees first, so calls use the callee's summary (collective
 * sequence, net group effect, noreturn). Sequences are compared by hash: H(x) is the hash of
 * the canonical collective sequence from block x to the function exit along the
 * post-dominator chain; alternatives of a branch are equal when their regions are equal. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "split_comm.h"
#include "xalloc.h"

#define HB 0x100000001b3ull /* base of the sequence hash (odd) */

static uint64_t powb(long e) {
  uint64_t r = 1, b = HB;
  for (; e > 0; e >>= 1, b *= b)
    if (e & 1)
      r *= b;
  return r;
}

struct sbuf { char *s; size_t n, cap; };

struct ctx {
  ls_program *p;
  ls_vec *findings;
  ls_func *f;
  unsigned gen;
  ls_finding **seen; /* open-addressing set of findings by (rule, file, line, col) */
  size_t seencap;
  int budget;        /* blocks a report walk may still visit */
  struct sbuf nbuf;  /* norm's buffer */
};

static uint64_t finding_key(const char *rule, const char *file, unsigned line, unsigned col) {
  uint64_t h = ls_hash_str(ls_hash_str(0, rule), file);
  return (h ^ line) * 1099511628211ull ^ col;
}

static void seen_insert(struct ctx *c, ls_finding *f) {
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

/* ---- normalized argument text (fingerprint expressions) ---- */
static void sb_add(struct sbuf *b, const char *t) {
  size_t k = strlen(t);
  if (b->n + k + 1 > b->cap) {
    b->cap = (b->n + k + 1) * 2;
    b->s = ls_xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, t, k + 1);
  b->n += k;
}

static const char *binop_text(int op) {
  static const char *t[] = {"?", ".*", "->*", "*", "/", "%", "+", "-", "<<", ">>", "<=>", "<", ">", "<=", ">=",
                            "==", "!=", "&", "^", "|", "&&", "||", "=", "*=", "/=", "%=", "+=", "-=", "<<=",
                            ">>=", "&=", "^=", "|=", ","};
  return op >= 0 && (size_t)op < sizeof t / sizeof t[0] ? t[op] : "?";
}

/* "#<value>" without snprintf (~700 instructions a call, and every argument has one) */
static void sb_int(struct sbuf *b, long long v) {
  char tmp[32], *t = tmp + sizeof tmp;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  *--t = 0;
  do
    *--t = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0)
    *--t = '-';
  *--t = '#';
  sb_add(b, t);
}

static void norm_rec(struct sbuf *b, const ls_node *n) {
  if (!n)
    return;
  if (ls_nx(n)->norm) {
    sb_add(b, n->x->norm);
    return;
  }
  char tmp[32];
  switch (n->kind) {
  case CXCursor_IntegerLiteral:
    sb_int(b, n->ival);
    return;
  case CXCursor_DeclRefExpr:
    if (n->ilit) {
      sb_int(b, n->ival);
    } else {
      sb_add(b, n->text ? n->text : "?");
    }
    return;
  case CXCursor_MemberRefExpr:
    for (unsigned i = 0; i < n->nkids; i++)
      norm_rec(b, n->kids[i]);
    sb_add(b, ".");
    sb_add(b, n->text ? n->text : "?");
    return;
  case CXCursor_BinaryOperator:
    sb_add(b, "(");
    if (n->nkids == 2) {
      norm_rec(b, n->kids[0]);
      sb_add(b, binop_text(n->op));
      norm_rec(b, n->kids[1]);
    }
    sb_add(b, ")");
    return;
  case CXCursor_CallExpr:
    sb_add(b, n->text ? n->text : "?");
    sb_add(b, "(");
    for (unsigned i = 0; i < n->nkids; i++) {
      if (i)
        sb_add(b, ",");
      norm_rec(b, n->kids[i]);
    }
    sb_add(b, ")");
    return;
  case CXCursor_UnaryOperator:
    snprintf(tmp, sizeof tmp, "u%d(", n->op);
    sb_add(b, tmp);
    break;
  case CXCursor_ArraySubscriptExpr:
    sb_add(b, "[");
    break;
  default:
    if (n->text && n->nkids == 0)
      sb_add(b, n->text);
    for (unsigned i = 0; i < n->nkids; i++)
      norm_rec(b, n->kids[i]);
    return;
  }
  for (unsigned i = 0; i < n->nkids; i++) {
    if (i)
      sb_add(b, ",");
    norm_rec(b, n->kids[i]);
  }
  sb_add(b, n->kind == CXCursor_ArraySubscriptExpr ? "]" : ")");
}

/* b: one buffer for all (the run's, freed with it): a malloc and a free per argument cost
 * more than the text */
static const char *norm(ls_program *p, struct sbuf *b, ls_node *n) {
  if (!n)
    return "";
  if (!ls_nx(n)->norm) {
    b->n = 0;
    sb_add(b, "");
    norm_rec(b, n);
    ls_node_ext(p->arena, n)->norm = ls_strndup(p->arena, b->s, b->n);
  }
  return n->x->norm;
}

/* ---- events ---- */
static int is_coll(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->seq_member;
}
static int is_p2p(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->kind == LS_KIND_P2P;
}
static int is_helper_call(const ls_node *n) {
  return n->kind == CXCursor_CallExpr && n->ent && !n->ent->rule && n->ent->def && n->ent->def->analyzed &&
         n->ent->def->entry->len > 0;
}

/* Token of a collective event: op + comm + count/dtype/root/redop expressions. */
static int event_token(struct ctx *c, ls_node *n, uint64_t *tok) {
  if (is_coll(n)) {
    const ls_rule_fn *r = n->ent->rule;
    uint64_t h = ls_hash_str(0, r->op);
    int inplace = r->in_place_buf >= 0 && r->in_place_value && (unsigned)r->in_place_buf < n->nkids &&
                  n->kids[r->in_place_buf] && ls_nx(n->kids[r->in_place_buf])->spell &&
                  !strcmp(ls_nx(n->kids[r->in_place_buf])->spell, r->in_place_value);
    for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++) {
      enum ls_role ro = r->roles[i];
      if (inplace) { /* the library ignores count/dtype here and reads these instead */
        if (ro == LS_ROLE_COUNT || ro == LS_ROLE_DTYPE)
          continue;
        if (i == r->in_place_count)
          ro = LS_ROLE_COUNT;
        else if (i == r->in_place_dtype)
          ro = LS_ROLE_DTYPE;
      }
      if (ro == LS_ROLE_COUNT || ro == LS_ROLE_DTYPE || ro == LS_ROLE_ROOT || ro == LS_ROLE_REDOP || ro == LS_ROLE_COMM ||
          ro == LS_ROLE_COUNTS) {
        char tag[4] = {'|', (char)('a' + ro), '=', 0};
        h = ls_hash_str(h, tag);
        h = ls_hash_str(h, norm(c->p, &c->nbuf, n->kids[i]));
      }
    }
    *tok = h | 1;
    return 1;
  }
  if (is_helper_call(n)) {
    *tok = (n->ent->def->entry->h * 31 + 7) | 1;
    return 1;
  }
  return 0;
}

/* ---- sequence hash per block, memoized along the post-dominator chain ---- */
struct seq { uint64_t h; long len; int stop; int ends; };

static struct seq cat(struct seq a, struct seq b) {
  struct seq r = {a.h + powb(a.len) * b.h, a.len + b.len, b.stop, b.ends};
  return r;
}

static struct seq seq_of(struct ctx *c, ls_block *k);

/* The region of alternative s of a branch whose join is P. */
static struct seq region(struct seq s, struct seq P) {
  if (s.stop == P.stop && s.len >= P.len && s.ends == P.ends) {
    struct seq r = {s.h - powb(s.len - P.len) * P.h, s.len - P.len, -1, 0};
    return r;
  }
  s.stop = -1;
  return s;
}

static struct seq seq_of(struct ctx *c, ls_block *k) {
  ls_func *f = c->f;
  struct seq none = {0, 0, -1, 0};
  if (!k || k == f->vexit || k == f->exit)
    return none;
  if (k == f->abort_blk || k == f->killall) {
    none.ends = k == f->abort_blk ? 1 : 2;
    return none;
  }
  if (k->hstate == 2) {
    struct seq r = {k->h, k->len, k->stop, k->ends};
    return r;
  }
  if (k->hstate == 1) { /* back to a block being computed: a loop goes around again, and
                          * that matters only when the loop issues collectives */
    struct seq r = {k->cyc_ev ? ((uint64_t)k->id * 0x9e3779b97f4a7c15ull) | 1 : 0, k->cyc_ev, k->id, 0};
    return r;
  }
  k->hstate = 1;
  struct seq ev = {0, 0, -1, 0};
  for (int i = 0; i < k->nitems; i++) {
    uint64_t t;
    if (event_token(c, k->items[i], &t)) {
      struct seq one = {t, 1, -1, 0};
      ev = cat(ev, one);
    }
  }
  struct seq rest = none;
  if (k->nsucc == 1) {
    rest = seq_of(c, k->succ[0]);
  } else if (k->nsucc > 1) {
    ls_block *P = k->ipdom;
    struct seq sp = seq_of(c, P);
    struct seq alt[2] = {{0}};
    int nalt = 0, differ = 0;
    uint64_t mix = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < k->nsucc; i++) {
      struct seq s = seq_of(c, k->succ[i]);
      if (s.ends && !sp.ends)
        continue; /* an error exit (abort) does not change what surviving ranks issue */
      struct seq r = region(s, sp);
      if (nalt && (r.h != alt[0].h || r.len != alt[0].len))
        differ = 1;
      if (!nalt)
        alt[0] = r;
      nalt++;
      mix = (mix ^ r.h) * HB + (uint64_t)r.len;
    }
    struct seq mid = none;
    if (nalt && !differ) {
      mid = alt[0];
    } else if (nalt) {
      mid.h = mix | 1;
      mid.len = 1;
    }
    rest = cat(mid, sp);
  }
  struct seq r = cat(ev, rest);
  k->h = r.h;
  k->len = r.len;
  k->stop = r.stop;
  k->ends = r.ends;
  k->hstate = 2;
  return r;
}

/* ---- flat event lists for reporting ---- */
#define MAXEV 16
/* why[i]: the innermost nested branch or loop that decides whether v[i] is issued at
 * all (NULL: issued on every path of this side), so that a report never shows two
 * sides as issuing the same calls when one of them issues them only sometimes. */
struct evlist { ls_node *v[MAXEV]; const ls_block *why[MAXEV]; int n; int exited; };

/* Whether two alternatives issue the same calls (by callee, as the report names them). */
static int same_calls(const struct evlist *a, const struct evlist *b) {
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (a->v[i]->ent != b->v[i]->ent)
      return 0;
  return 1;
}

/* The walk stops at the join (immediate post-dominator) of every branch it is inside of:
 * each such block's nstop counts how many of the open walks stop there (`depth` of them
 * are open). */
static void walk_in(struct ctx *c, ls_block *k, int depth, struct evlist *out, int p2p) {
  ls_func *f = c->f;
  /* a report needs the first few collectives of each side: the walk is bounded so that
   * many rank-dependent exits in one long function stay linear */
  while (k && !k->nstop && k->mark != c->gen && out->n < MAXEV && c->budget-- > 0) {
    if (k == f->exit || k == f->abort_blk || k == f->vexit || k == f->killall) {
      out->exited = 1;
      return;
    }
    k->mark = c->gen;
    for (int i = 0; i < k->nitems && out->n < MAXEV; i++) {
      ls_node *n = k->items[i];
      if (p2p ? is_p2p(n) : (is_coll(n) || is_helper_call(n))) {
        out->why[out->n] = NULL;
        out->v[out->n++] = n;
      }
    }
    if (k->nsucc == 0)
      return;
    if (k->nsucc > 1) {
      /* a nested branch: follow the alternative that issues the most (error exits issue
       * nothing more and are skipped) */
      /* two lists, the best so far and the one being filled, swapped instead of copied
       * (and not zeroed: only their first n entries are read) */
      struct evlist buf[2], *best = NULL, *sub = &buf[0];
      int alts = 0, varies = 0;
      for (int i = 0; i < k->nsucc && depth < 64; i++) {
        ls_block *s = k->succ[i];
        if (s == f->abort_blk || s == f->killall || (s->hstate == 2 && s->ends))
          continue;
        sub->n = 0;
        sub->exited = 0;
        if (k->ipdom)
          k->ipdom->nstop++;
        walk_in(c, s, depth + 1, sub, p2p);
        if (k->ipdom)
          k->ipdom->nstop--;
        if (alts++ && !same_calls(sub, best))
          varies = 1;
        if (!best || sub->n > best->n) {
          best = sub;
          sub = sub == &buf[0] ? &buf[1] : &buf[0];
        }
      }
      for (int i = 0; best && i < best->n && out->n < MAXEV; i++) {
        out->why[out->n] = best->why[i] ? best->why[i] : varies || k->is_loop ? k : NULL;
        out->v[out->n++] = best->v[i];
      }
      k = k->ipdom;
      continue;
    }
    k = k->succ[0];
  }
}

/* The calls on the way from k until `stop` (or the function's exit). */
static void walk(struct ctx *c, ls_block *k, ls_block *stop, struct evlist *out, int p2p) {
  if (stop)
    stop->nstop++;
  walk_in(c, k, 1, out, p2p);
  if (stop)
    stop->nstop--;
}

/* ---- findings ---- */
static ls_loc *mkloc(ls_program *p, const char *file, unsigned line, unsigned col, const char *msg) {
  ls_loc *l = ls_alloc(p->arena, sizeof *l);
  l->file = file;
  l->line = line;
  l->col = col;
  l->msg = msg ? ls_strdup(p->arena, msg) : NULL;
  return l;
}

static ls_finding *add_finding(struct ctx *c, const char *rule, const char *file, unsigned line, unsigned col,
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

static size_t key_cat(char *key, size_t cap, size_t k, const char *a, const char *b);
/* snprintf(buf, cap, "%s%s", a, b) without the formatting (notes are thousands) */
static void str2(char *buf, size_t cap, const char *a, const char *b) { (void)key_cat(buf, cap, 0, a, b); }

static void add_origin_note(struct ctx *c, ls_finding *fd, const ls_origin *o) {
  if (!fd || !o)
    return;
  /* the value's way back to its source, a few steps at most: past that the source */
  const ls_origin *src = o;
  while (src->from)
    src = src->from;
  char m[512];
  for (int step = 0; o; o = step == 3 ? src : o->from, step++) {
    str2(m, sizeof m, o->what, " here");
    ls_vec_push(&fd->notes, mkloc(c->p, o->file, o->line, o->col, m));
    if (o == src)
      break;
  }
}

static const char *callee(const ls_node *n) { return n && n->text ? n->text : "?"; }

/* snprintf(key + k, cap - k, "%s%s", a, b) for k < cap, without the formatting (~700
 * instructions a call, several per finding): the length it would have written is returned */
static size_t key_cat(char *key, size_t cap, size_t k, const char *a, const char *b) {
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

/* buf[*k...] = s, as much as fits before cap (NUL-terminated) */
static void app(char *buf, size_t cap, size_t *k, const char *s) {
  for (; *s && *k + 1 < cap; s++)
    buf[(*k)++] = *s;
  buf[*k] = 0;
}
static void app_u(char *buf, size_t cap, size_t *k, unsigned v) {
  char t[12], *d = t + sizeof t;
  *--d = 0;
  do
    *--d = (char)('0' + v % 10);
  while (v /= 10);
  app(buf, cap, k, d);
}

/* `outer`: the branch the report is about; a nested condition on its line is told apart
 * by its column (`rank == 0 && i % 2` is two conditions on one line). */
static void seq_text(char *buf, size_t cap, const struct evlist *l, const ls_node *outer) {
  buf[0] = 0;
  size_t k = 0;
  if (!l->n)
    snprintf(buf, cap, "no collective");
  int run = 0; /* calls so far decided by the same nested branch or loop */
  for (int i = 0; i < l->n && k + 1 < cap; i++) { /* appends by hand: one snprintf per call cost ~1,000 */
    const char *part[3] = {i ? ", " : "", callee(l->v[i]), is_coll(l->v[i]) ? "" : "() (issues collectives)"};
    for (int j = 0; j < 3; j++)
      for (const char *t = part[j]; *t && k + 1 < cap; t++)
        buf[k++] = *t;
    buf[k] = 0;
    const ls_block *w = l->why[i];
    run = w && i && l->why[i - 1] == w ? run + 1 : 1;
    if (!w || (i + 1 < l->n && l->why[i + 1] == w))
      continue;
    /* " (these N depending on the condition at line L, column C)" and the like, appended
     * by hand like the calls (three snprintf per group cost ~3,000 instructions) */
    app(buf, cap, &k, " (");
    if (run > 1) {
      app(buf, cap, &k, "these ");
      app_u(buf, cap, &k, (unsigned)run);
      app(buf, cap, &k, " ");
    }
    if (!w->cond) {
      app(buf, cap, &k, "on some paths only)");
      continue;
    }
    app(buf, cap, &k, w->is_loop ? "repeated by the loop at line " : "depending on the condition at line ");
    app_u(buf, cap, &k, w->cond->line);
    if (outer && w->cond->line == outer->line && w->cond->file == outer->file) {
      app(buf, cap, &k, ", column ");
      app_u(buf, cap, &k, w->cond->col);
    }
    app(buf, cap, &k, ")");
  }
}

/* ---- a rank-dependent exit behind a nested uniform condition ----
 * `if (rank == 0) { if (!p) abort(); } MPI_Barrier(...)`: the inner branch is uniform, so the
 * sequence hashes skip its abort like any error exit, but only the ranks on one side of the
 * outer branch can take it. A block that ends in abort/exit/throw and is reachable from one
 * successor of the rank-dependent branch only (without passing the branch again) is such an
 * exit; the survivors' first collective after it is what the exiting ranks skip. The two
 * reachability walks are bounded, so many branches in one long function stay linear. */
#define NX_BUDGET 512
static void check_nested_exit(struct ctx *c, ls_block *b) {
  ls_func *f = c->f;
  if (!f->abort_blk || !f->abort_blk->npred || b->nsucc != 2)
    return;
  ls_block **stk = malloc(((size_t)f->nblocks + 1) * 2 * sizeof *stk);
  if (!stk)
    abort();
  /* side 0 marks gen; side 1 marks gen+2, and blocks side 0 reached become gen+3 (both) */
  c->gen += 4;
  unsigned g0 = c->gen - 3, g1 = c->gen - 1;
  int budget = NX_BUDGET, ok = 1;
  ls_block *hit = NULL;
  {
    ls_block *s = b->succ[0];
    int sp = 0;
    if (s != b) {
      s->mark = g0;
      stk[sp++] = s;
    }
    while (sp && ok) {
      ls_block *k = stk[--sp];
      if (--budget < 0)
        ok = 0;
      if (k == f->exit || k == f->vexit || k == f->abort_blk || k == f->killall)
        continue;
      for (int i = 0; i < k->nsucc; i++)
        if (k->succ[i] != b && k->succ[i]->mark != g0) {
          k->succ[i]->mark = g0;
          stk[sp++] = k->succ[i];
        }
    }
    s = b->succ[1];
    sp = 0;
    if (s != b && ok) {
      s->mark = s->mark == g0 ? g1 + 1 : g1;
      stk[sp++] = s;
    }
    while (sp && ok) {
      ls_block *k = stk[--sp];
      if (--budget < 0)
        ok = 0;
      if (k == f->exit || k == f->vexit || k == f->abort_blk || k == f->killall)
        continue;
      for (int i = 0; i < k->nsucc; i++) {
        ls_block *t = k->succ[i];
        if (t == b || t->mark == g1 || t->mark == g1 + 1)
          continue;
        t->mark = t->mark == g0 ? g1 + 1 : g1;
        stk[sp++] = t;
      }
    }
  }
  /* one-sided blocks: marked g0 only (side 0) or g1 only (side 1) */
  for (int i = 0; i < f->nblocks && ok && !hit; i++) {
    ls_block *k = f->blocks[i];
    if ((k->mark != g0 && k->mark != g1) || k == b->succ[0] || k == b->succ[1])
      continue; /* b's own successors: check_branch's direct abort case */
    for (int j = 0; j < k->nsucc; j++)
      if (k->succ[j] == f->abort_blk)
        hit = k;
  }
  free(stk);
  if (!hit)
    return;
  /* the survivors: from the branch that leads to the exit, the other way on */
  ls_block *from = NULL;
  for (int i = 0; i < f->nblocks && !from; i++) {
    ls_block *k = f->blocks[i];
    if (k->nsucc < 2 || (k->mark != g0 && k->mark != g1 && k != b))
      continue;
    int leads = 0;
    for (int j = 0; j < k->nsucc; j++)
      leads |= k->succ[j] == hit;
    for (int j = 0; j < k->nsucc && leads; j++)
      if (k->succ[j] != hit && seq_of(c, k->succ[j]).len > 0)
        from = k->succ[j];
  }
  if (!from)
    return;
  struct evlist la = {.n = 0};
  c->gen++;
  c->budget = 256;
  walk(c, from, f->vexit, &la, 0);
  if (!la.n || !is_coll(la.v[0]))
    return;
  ls_node *at = la.v[0], *cn = b->cond, *ex = hit->nitems ? hit->items[hit->nitems - 1] : cn;
  char msg[1024];
  snprintf(msg, sizeof msg, "collective '%s' is skipped by ranks that leave early at line %u: the exit condition depends on the rank",
           callee(at), ex->line);
  ls_finding *fd = add_finding(c, "rank-divergent-collective", at->file, at->line, at->col, msg);
  if (!fd)
    return;
  ls_vec_push(&fd->notes, mkloc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
  add_origin_note(c, fd, b->cond_taint);
  ls_vec_push(&fd->notes, mkloc(c->p, ex->file, ex->line, ex->col,
                                "only ranks on one side of that condition can leave here"));
  char sa[400], m1[512], key[1024];
  seq_text(sa, sizeof sa, &la, cn);
  str2(m1, sizeof m1, "the ranks that go on issue: ", sa);
  ls_vec_push(&fd->notes, mkloc(c->p, cn->file, cn->line, cn->col, m1));
  size_t k = key_cat(key, sizeof key, 0, "X", "");
  for (int j = 0; j < la.n; j++) {
    ls_vec_push(&fd->sites, mkloc(c->p, la.v[j]->file, la.v[j]->line, la.v[j]->col, callee(la.v[j])));
    if (k < sizeof key)
      k = key_cat(key, sizeof key, k, ",", callee(la.v[j]));
  }
  fd->seqkey = ls_strdup(c->p->arena, key);
}

static void check_branch(struct ctx *c, ls_block *b) {
  ls_func *f = c->f;
  ls_block *P = b->ipdom;
  /* A side that dies (exit, abort, throw) issues nothing more: compare whole sequences to
   * the function exit, so the survivors' collectives count as skipped by the others. */
  int aborts = 0;
  for (int i = 0; i < b->nsucc; i++)
    aborts |= seq_of(c, b->succ[i]).ends == 1;
  if (aborts)
    P = f->vexit;
  struct seq sp = seq_of(c, P);
  struct seq r0 = {0};
  int differ = 0, have = 0;
  for (int i = 0; i < b->nsucc; i++) {
    if (seq_of(c, b->succ[i]).ends == 2)
      continue; /* a job-wide abort leaves nobody waiting */
    struct seq r = region(seq_of(c, b->succ[i]), sp);
    if (have && (r.h != r0.h || r.len != r0.len))
      differ = 1;
    if (!have)
      r0 = r;
    have = 1;
  }
  if (!differ) {
    if (!aborts)
      check_nested_exit(c, b);
    return;
  }
  /* Two alternatives that differ: the first successor vs the first that differs from it. */
  struct evlist la = {.n = 0}, lb = {.n = 0};
  int ia = 0, ib = b->nsucc;
  while (ia < b->nsucc && seq_of(c, b->succ[ia]).ends == 2)
    ia++;
  for (int i = ia + 1; i < b->nsucc; i++) {
    if (seq_of(c, b->succ[i]).ends == 2)
      continue;
    struct seq r = region(seq_of(c, b->succ[i]), sp);
    if (r.h != r0.h || r.len != r0.len) {
      ib = i;
      break;
    }
  }
  if (ia >= b->nsucc || ib >= b->nsucc)
    return;
  /* b itself is not marked: a path that loops back through b issues b's calls again */
  c->gen++;
  c->budget = 256;
  walk(c, b->succ[ia], P, &la, 0);
  c->gen++;
  c->budget = 256;
  walk(c, b->succ[ib], P, &lb, 0);
  uint64_t ta = 0, tb = 0;
  int i = 0;
  for (; i < la.n && i < lb.n; i++) {
    event_token(c, la.v[i], &ta);
    event_token(c, lb.v[i], &tb);
    if (ta != tb)
      break;
  }
  ls_node *at = i < la.n ? la.v[i] : i < lb.n ? lb.v[i] : NULL;
  ls_node *other = at == (i < la.n ? la.v[i] : NULL) ? (i < lb.n ? lb.v[i] : NULL) : (i < la.n ? la.v[i] : NULL);
  if (!at) { /* the flat lists hide the difference (a nested uniform choice): point at the first */
    at = la.n ? la.v[0] : lb.n ? lb.v[0] : NULL;
    other = NULL;
  }
  if (!at)
    return; /* the difference lies in paths that do not return; nothing to point at */
  if (!b->is_loop) { /* on communicators split by this very condition: whole groups agree */
    ls_node *all[2 * MAXEV];
    int na = 0;
    for (int j = 0; j < la.n; j++)
      all[na++] = la.v[j];
    for (int j = 0; j < lb.n; j++)
      all[na++] = lb.v[j];
    if (ls_split_guarded(c->p, b->cond, all, na))
      return;
  }
  ls_node *cn = b->cond;
  char msg[1024], sa[400], sb[400];
  const char *what = is_coll(at) ? "collective" : "call to";
  if (b->is_loop)
    snprintf(msg, sizeof msg, "%s '%s' runs a rank-dependent number of times: the loop condition at line %u depends on the rank",
             what, callee(at), cn->line);
  else if (P == f->vexit && (aborts || la.exited != lb.exited || !other))
    snprintf(msg, sizeof msg, "%s '%s' is skipped by ranks that leave early at line %u: the exit condition depends on the rank",
             what, callee(at), cn->line);
  else if (!other)
    snprintf(msg, sizeof msg, "%s '%s' is issued only by ranks on one side of the rank-dependent branch at line %u",
             what, callee(at), cn->line);
  else if (!strcmp(callee(at), callee(other)))
    snprintf(msg, sizeof msg, "ranks issue '%s' with different arguments here (count, datatype, root, reduction op or communicator differ between the sides of the rank-dependent branch at line %u)",
             callee(at), cn->line);
  else
    snprintf(msg, sizeof msg, "ranks issue different collectives here: '%s' on one side of the rank-dependent branch at line %u, '%s' on the other",
             callee(at), cn->line, callee(other));
  ls_finding *fd = add_finding(c, "rank-divergent-collective", at->file, at->line, at->col, msg);
  if (!fd)
    return;
  ls_vec_push(&fd->notes, mkloc(c->p, cn->file, cn->line, cn->col, "this condition depends on the rank"));
  add_origin_note(c, fd, b->cond_taint);
  seq_text(sa, sizeof sa, &la, cn);
  seq_text(sb, sizeof sb, &lb, cn);
  char m1[512];
  str2(m1, sizeof m1, "one side issues: ", sa);
  ls_vec_push(&fd->notes, mkloc(c->p, cn->file, cn->line, cn->col, m1));
  str2(m1, sizeof m1, "the other side issues: ", sb);
  ls_vec_push(&fd->notes, mkloc(c->p, cn->file, cn->line, cn->col, m1));
  char key[1024];
  size_t k = key_cat(key, sizeof key, 0, "A", "");
  for (int j = 0; j < la.n; j++) {
    ls_vec_push(&fd->sites, mkloc(c->p, la.v[j]->file, la.v[j]->line, la.v[j]->col, callee(la.v[j])));
    if (k < sizeof key)
      k = key_cat(key, sizeof key, k, ",", callee(la.v[j]));
  }
  if (k < sizeof key)
    k = key_cat(key, sizeof key, k, "|B", "");
  for (int j = 0; j < lb.n; j++) {
    ls_vec_push(&fd->sites, mkloc(c->p, lb.v[j]->file, lb.v[j]->line, lb.v[j]->col, callee(lb.v[j])));
    if (k < sizeof key)
      k = key_cat(key, sizeof key, k, ",", callee(lb.v[j]));
  }
  fd->seqkey = ls_strdup(c->p->arena, key);
}

static void check_args(struct ctx *c, ls_node *n) {
  const ls_rule_fn *r = n->ent->rule;
  static const char *rn[] = {[LS_ROLE_COUNT] = "count", [LS_ROLE_DTYPE] = "datatype", [LS_ROLE_ROOT] = "root",
                             [LS_ROLE_REDOP] = "reduction op", [LS_ROLE_COUNTS] = "counts"};
  for (int i = 0; i < r->nargs && (unsigned)i < n->nkids; i++) {
    enum ls_role ro = r->roles[i];
    if (ro != LS_ROLE_COUNT && ro != LS_ROLE_DTYPE && ro != LS_ROLE_ROOT && ro != LS_ROLE_REDOP && ro != LS_ROLE_COUNTS)
      continue;
    /* a counts array must hold the same numbers on every rank: look at its elements */
    const ls_origin *o = ro == LS_ROLE_COUNTS ? ls_content_taint(c->p, n->kids[i]) : ls_expr_taint(c->p, n->kids[i]);
    if (!o)
      continue;
    char msg[512];
    snprintf(msg, sizeof msg, "%s argument of '%s' depends on the rank; every rank must pass the same value",
             rn[ro], callee(n));
    ls_finding *fd = add_finding(c, "rank-dependent-argument", n->file, n->line, n->col, msg);
    if (!fd)
      return;
    add_origin_note(c, fd, o);
    ls_vec_push(&fd->sites, mkloc(c->p, n->file, n->line, n->col, callee(n)));
    fd->seqkey = ls_strdup(c->p->arena, rn[ro]);
    return;
  }
}

/* ---- group depth ---- */
#define GZ LS_GZ /* bit GZ+d of a mask: depth d is possible */
static uint32_t shift(uint32_t m, int d) { return d >= 0 ? m << d : m >> -d; }

int ls_group_delta(const ls_node *n) {
  if (n->kind != CXCursor_CallExpr || !n->ent)
    return 0;
  if (n->ent->rule)
    return n->ent->rule->kind == LS_KIND_GROUP_START ? 1 : n->ent->rule->kind == LS_KIND_GROUP_END ? -1 : 0;
  if (n->ent->def && n->ent->def->group_helper)
    return n->ent->def->group_net;
  return 0;
}

static void group_flow(ls_func *f) {
  for (int i = 0; i < f->nblocks; i++)
    f->blocks[i]->gin = f->blocks[i]->gout = 0, f->blocks[i]->gdone = 0;
  ls_block **q = malloc(((size_t)f->nblocks + 1) * sizeof *q);
  if (!q)
    abort();
  int qh = 0, qt = 0, n = f->nblocks + 1;
  f->entry->gin = 1u << GZ;
  q[qt++ % n] = f->entry;
  f->entry->gdone = 1;
  while (qh != qt) {
    ls_block *k = q[qh++ % n];
    qh %= n;
    qt %= n;
    k->gdone = 0;
    uint32_t m = k->gin;
    for (int i = 0; i < k->nitems; i++) {
      int d = ls_group_delta(k->items[i]);
      if (d)
        m = shift(m, d);
    }
    k->gout = m;
    for (int s = 0; s < k->nsucc; s++) {
      ls_block *t = k->succ[s];
      if ((t->gin | m) != t->gin) {
        t->gin |= m;
        if (!t->gdone) {
          t->gdone = 1;
          q[qt++ % n] = t;
          qt %= n;
        }
      }
    }
  }
  free(q);
}

static int mask_depth(uint32_t m) { /* the single depth in m, or 99 */
  for (int d = -GZ; d < 32 - GZ; d++)
    if (m == 1u << (GZ + d))
      return d;
  return 99;
}

static void check_groups(struct ctx *c, ls_vec *p2p_cands) {
  ls_func *f = c->f;
  group_flow(f);
  ls_vec below = {0}, starts = {0};
  ls_node *first_start = NULL;
  int nends = 0;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    uint32_t m = k->gin;
    if (!m)
      continue;
    for (int i = 0; i < k->nitems; i++) {
      ls_node *n = k->items[i];
      int d = ls_group_delta(n);
      if (d < 0 && (m & (1u << GZ)))
        ls_vec_push(&below, n);
      if (d < 0)
        nends++;
      if (d > 0 && n->ent->rule && !first_start)
        first_start = n;
      if (d > 0)
        ls_vec_push(&starts, n);
      if (d)
        m = shift(m, d);
      if (is_p2p(n) && (m & (1u << GZ))) {
        int req = 0;
        for (int a = 0; a < n->ent->rule->nargs; a++)
          req |= n->ent->rule->roles[a] == LS_ROLE_REQUEST;
        if (!req) {
          ls_vec_push(p2p_cands, n);
          ls_vec_push(p2p_cands, k); /* pairs: call, its block */
        }
      }
    }
  }
  uint32_t all = 0;
  int zero_exit = 0;
  for (int i = 0; i < f->exit->npred; i++) {
    all |= f->exit->pred[i]->gout;
    zero_exit |= (f->exit->pred[i]->gout & (1u << GZ)) != 0;
  }
  int net = mask_depth(all);
  /* a pure begin helper only opens, a pure end helper only closes (sparse's +1/-1) */
  if (f->ent && f->ent->ncalls > 0 && ((net == 1 && !nends) || (net == -1 && !starts.n))) {
    f->group_net = net; /* a begin/end helper: its callers account for it */
    f->group_helper = 1;
    free(below.v);
    free(starts.v);
    return;
  }
  for (size_t i = 0; i < below.n; i++) {
    ls_node *n = below.v[i];
    char msg[256];
    snprintf(msg, sizeof msg, "'%s' without a matching group start on some path: the group depth goes below zero",
             callee(n));
    ls_finding *fd = add_finding(c, "unbalanced-group", n->file, n->line, n->col, msg);
    if (fd) {
      ls_vec_push(&fd->sites, mkloc(c->p, n->file, n->line, n->col, callee(n)));
      fd->seqkey = "below-zero";
    }
  }
  for (int i = 0; i < f->exit->npred; i++) {
    ls_block *k = f->exit->pred[i];
    uint32_t m = k->gout;
    if (!m || m == 1u << GZ || !k->gin)
      continue;
    int d0 = mask_depth(m);
    if (d0 < 0 && below.n)
      continue; /* already reported at the group end that went below zero */
    if (k->term && first_start && d0 > 0) {
      int own = 0; /* the error path of the group start itself (CHECK(ncclGroupStart())) */
      for (size_t j = 0; j < starts.n && !own; j++)
        own = ((ls_node *)starts.v[j])->line == k->term->line && ((ls_node *)starts.v[j])->file == k->term->file;
      if (own)
        continue;
    }
    const char *file = k->term ? k->term->file : f->file;
    unsigned line = k->term ? k->term->line : f->end_line, col = k->term ? k->term->col : f->end_col;
    int d = mask_depth(m);
    char msg[512];
    const char *key;
    if (d == 99) {
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
    ls_finding *fd = add_finding(c, "unbalanced-group", file, line, col, msg);
    if (!fd)
      continue;
    fd->seqkey = key;
    if (first_start) {
      ls_vec_push(&fd->notes, mkloc(c->p, first_start->file, first_start->line, first_start->col, "group opened here"));
      ls_vec_push(&fd->sites, mkloc(c->p, first_start->file, first_start->line, first_start->col, callee(first_start)));
    }
  }
  free(below.v);
  free(starts.v);
}

/* ---- ungrouped p2p ---- */


static void report_p2p(struct ctx *c, ls_node *n, ls_node *other, const char *why) {
  char msg[512];
  snprintf(msg, sizeof msg, "'%s' outside a group and %s: without ncclGroupStart/End around the pair the ranks can deadlock",
           callee(n), why);
  ls_finding *fd = add_finding(c, "ungrouped-p2p", n->file, n->line, n->col, msg);
  if (!fd)
    return;
  ls_vec_push(&fd->sites, mkloc(c->p, n->file, n->line, n->col, callee(n)));
  if (other) {
    ls_vec_push(&fd->notes, mkloc(c->p, other->file, other->line, other->col, "the matching operation, also ungrouped"));
    ls_vec_push(&fd->sites, mkloc(c->p, other->file, other->line, other->col, callee(other)));
  }
  fd->seqkey = n->ent->rule->op;
}

static void check_p2p(struct ctx *c, ls_vec *cands) {
  ls_func *f = c->f;
  if (cands->n < 1)
    return;
  /* unconditional ones: every rank runs the same order */
  ls_node *first = NULL, *other = NULL;
  for (size_t i = 0; i + 1 < cands->n; i += 2) {
    ls_node *n = cands->v[i];
    ls_block *k = cands->v[i + 1];
    if (k->cdep)
      continue;
    if (!first)
      first = n;
    else if (!other && strcmp(n->ent->rule->op, first->ent->rule->op))
      other = n;
  }
  if (first && other)
    report_p2p(c, first, other, "issued in the same order by every rank");
  /* under rank-dependent branches: every side starting with the same operation */
  char *dep = calloc((size_t)f->nblocks, 1); /* branches some candidate depends on */
  if (!dep)
    abort();
  for (size_t i = 1; i < cands->n; i += 2)
    if (((ls_block *)cands->v[i])->cdep)
      dep[((ls_block *)cands->v[i])->cdep->id] = 1;
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    if (!k->cond_taint || k->nsucc < 2 || !dep[k->id])
      continue;
    const char *op0 = NULL;
    int same = 1, mixed = 0, sides = 0;
    ls_node *at = NULL, *oth = NULL;
    for (int s = 0; s < k->nsucc; s++) {
      struct evlist l = {.n = 0};
      c->gen++;
      k->mark = c->gen;
      c->budget = 256;
      walk(c, k->succ[s], k->ipdom, &l, 1);
      ls_node *fst = NULL;
      for (int i = 0; i < l.n; i++) {
        int cand = 0;
        for (size_t j = 0; j + 1 < cands->n && !cand; j += 2)
          cand = cands->v[j] == l.v[i];
        if (!cand)
          continue;
        if (!fst)
          fst = l.v[i];
        else if (strcmp(l.v[i]->ent->rule->op, fst->ent->rule->op)) {
          mixed = 1;
          if (!oth)
            oth = l.v[i];
        }
      }
      if (!fst)
        continue;
      sides++;
      if (!op0) {
        op0 = fst->ent->rule->op;
        at = fst;
      } else if (strcmp(op0, fst->ent->rule->op)) {
        same = 0;
      }
    }
    if (sides >= 2 && same && mixed && at)
      report_p2p(c, at, oth, "every side of the rank-dependent branch starts with it");
  }
  free(dep);
}

/* ---- flow-sensitive rank dependence of locals ----
 * The whole-program facts are flow-insensitive. For the locals they mark, a bitset data-flow
 * over this function's CFG refines them: a later write of a uniform value, or a collective
 * that receives into the variable (MPI_Bcast(&steps), an in-place allreduce), makes it
 * uniform again from there on. Only candidates get bits, so the pass stays linear. */
struct fs {
  ls_func *f;
  ls_vec cands;    /* ls_entity* */
  int words;
  uint64_t *in;    /* nblocks x words */
};


static void fs_cand(struct fs *x, ls_entity *e) {
  if (e && !e->fsidx && e->taint && (e->kind == LS_ENT_VAR || e->kind == LS_ENT_PARAM) && x->cands.n < 4096) {
    ls_vec_push(&x->cands, e);
    e->fsidx = (int)x->cands.n;
  }
}

static ls_entity *fs_target(ls_node *arg, int start) {
  int level = start;
  ls_entity *t = ls_target_of(arg, &level);
  return t && t->fsidx && level <= 0 ? t : NULL;
}

/* one item's effect on the state (the state is also what ls_expr_taint reads) */
static void fs_step(ls_program *p, ls_node *n, uint64_t *st, const ls_origin *impl) {
  ls_entity *t;
  switch (n->kind) {
  case CXCursor_VarDecl:
    if (n->ent && n->ent->fsidx) {
      int v = impl != NULL;
      for (unsigned i = 0; i < n->nkids && !v; i++)
        v = ls_expr_taint(p, n->kids[i]) != NULL;
      ls_fs_set(st, n->ent, v);
    }
    return;
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator:
    if (n->nkids == 2 && (t = fs_target(n->kids[0], 0))) {
      int v = impl != NULL || ls_expr_taint(p, n->kids[1]) != NULL;
      if (n->kind == CXCursor_CompoundAssignOperator)
        v |= ls_fs_get(st, t);
      ls_fs_set(st, t, v);
    }
    return;
  case CXCursor_CallExpr: {
    ls_entity *e = n->ent;
    if (!e)
      return;
    if (e->rule)
      for (int i = 0; i < e->rule->nargs && (unsigned)i < n->nkids; i++) {
        enum ls_role ro = e->rule->roles[i];
        if (ro == LS_ROLE_OUT_RANK && (t = fs_target(n->kids[i], 1)))
          ls_fs_set(st, t, 1);
        if (ro == LS_ROLE_RECVBUF && e->rule->kind == LS_KIND_COLLECTIVE && (t = fs_target(n->kids[i], 1)))
          ls_fs_set(st, t, 0); /* what a collective delivers is the same on every rank */
      }
    for (int i = 0; (e->src & LS_SRC_OUT) && i < p->rules->nsrcs; i++) {
      const ls_rule_src *r = &p->rules->srcs[i];
      if (!r->uniform && r->out_arg >= 0 && (unsigned)r->out_arg < n->nkids && n->text && !strcmp(r->call, n->text) &&
          (t = fs_target(n->kids[r->out_arg], 1)))
        ls_fs_set(st, t, 1);
    }
    if (e->def && e->out_taint)
      for (unsigned i = 0; i < n->nkids && i < 64; i++)
        if (e->out_taint >> i & 1 && (t = fs_target(n->kids[i], 1)))
          ls_fs_set(st, t, 1);
    return;
  }
  default:
    return;
  }
}

/* Only locals that something can make uniform again need a bit: a write of a value that
 * is uniform (flow-insensitively) or a collective's receive buffer. Every other local keeps
 * its whole-program fact, so the bitsets stay small however long the function is. */
static void fs_items(ls_program *p, ls_node *n, struct fs *x) {
  if (n->kind == CXCursor_VarDecl && n->nkids) {
    int uniform = 1;
    for (unsigned i = 0; i < n->nkids && uniform; i++)
      uniform = !ls_expr_taint(p, n->kids[i]);
    if (uniform)
      fs_cand(x, n->ent);
  }
  if (n->kind == CXCursor_BinaryOperator && n->op == CXBinaryOperator_Assign && n->nkids == 2 &&
      !ls_expr_taint(p, n->kids[1])) {
    int level = 0;
    ls_entity *t = ls_target_of(n->kids[0], &level);
    if (level <= 0)
      fs_cand(x, t);
  }
  if (n->kind == CXCursor_CallExpr && n->ent && n->ent->rule && n->ent->rule->kind == LS_KIND_COLLECTIVE)
    for (int i = 0; i < n->ent->rule->nargs && (unsigned)i < n->nkids; i++) {
      if (n->ent->rule->roles[i] != LS_ROLE_RECVBUF)
        continue;
      int level = 1;
      ls_entity *t = ls_target_of(n->kids[i], &level);
      if (level <= 0)
        fs_cand(x, t);
    }
}

static void solve_step(void *ctx, ls_block *k, uint64_t *st) {
  struct ctx *c = ctx;
  ls_taint_state(st);
  for (int i = 0; i < k->nitems; i++)
    fs_step(c->p, k->items[i], st, k->impl);
  ls_taint_state(NULL);
}

static void fs_solve(struct ctx *c, struct fs *x) {
  ls_func *f = x->f;
  int W = x->words;
  memset(x->in, 0, (size_t)f->nblocks * (size_t)W * sizeof *x->in);
  uint64_t *st = calloc((size_t)W, sizeof *st);
  if (!st)
    abort();
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i]->fsidx)
      ls_fs_set(&x->in[f->entry->id * W], f->params[i], 1);
  ls_cfg_forward(f, W, x->in, st, solve_step, c);
  free(st);
}

/* Computes cond_taint of every branch with the flow-sensitive state and runs the argument
 * check at each collective with the state at that call. */
static void flow_sensitive(struct ctx *c, ls_func *f) {
  struct fs x = {.f = f};
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b]->nitems; i++)
      fs_items(c->p, f->blocks[b]->items[i], &x);
  x.words = (int)(x.cands.n + 63) / 64;
  if (!x.words)
    x.words = 1;
  /* Without candidates the state is empty and ls_expr_taint reads the same with or without
   * it (only entities with a bit consult it), and fs_step only sets bits: no solve, no steps. */
  int track = x.cands.n > 0;
  /* the block states only where there is a solve (it clears them) */
  x.in = track ? malloc((size_t)f->nblocks * (size_t)x.words * sizeof *x.in) : NULL;
  uint64_t *st = calloc((size_t)x.words, sizeof *st);
  if ((track && !x.in) || !st)
    abort();
  /* implicit flow depends on which branches are rank-dependent, which depends on the
   * state: iterate a few rounds from the flow-insensitive guess */
  for (int round = 0; round < 3; round++) {
    if (track)
      fs_solve(c, &x);
    int changed = 0;
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      if (!k->cond || k->nsucc < 2) { /* the state at its end serves a branch only */
        k->cond_taint = NULL;
        continue;
      }
      if (track) {
        memcpy(st, &x.in[k->id * x.words], (size_t)x.words * sizeof *st);
        ls_taint_state(st);
        for (int i = 0; i < k->nitems; i++)
          fs_step(c->p, k->items[i], st, k->impl);
      }
      k->cond_taint = ls_expr_taint(c->p, k->cond);
      ls_taint_state(NULL);
    }
    for (int b = 0; b < f->nblocks; b++)
      f->blocks[b]->mark = 0;
    for (int b = 0; b < f->nblocks; b++) { /* recompute control dependence on these branches */
      ls_block *k = f->blocks[b];
      if (!k->cond_taint)
        continue;
      for (int s2 = 0; s2 < k->nsucc; s2++)
        for (ls_block *r = k->succ[s2]; r && r != k->ipdom && r != f->vexit && !r->mark; r = r->ipdom)
          r->mark = 1;
    }
    for (int b = 0; b < f->nblocks; b++) {
      ls_block *k = f->blocks[b];
      if (!k->mark && k->impl) {
        k->impl = NULL;
        changed = 1;
      }
      k->mark = 0;
    }
    if (!changed)
      break;
  }
  /* final replay: the argument check with the state at each call */
  for (int b = 0; b < f->nblocks; b++) {
    ls_block *k = f->blocks[b];
    int last = k->nitems - 1; /* the state matters up to the block's last collective */
    while (last >= 0 && !is_coll(k->items[last]))
      last--;
    if (last < 0)
      continue;
    if (track) {
      memcpy(st, &x.in[k->id * x.words], (size_t)x.words * sizeof *st);
      ls_taint_state(st);
    }
    for (int i = 0; i <= last; i++) {
      if (is_coll(k->items[i]))
        check_args(c, k->items[i]);
      if (track)
        fs_step(c->p, k->items[i], st, k->impl);
    }
    ls_taint_state(NULL);
  }
  for (size_t i = 0; i < x.cands.n; i++)
    ((ls_entity *)x.cands.v[i])->fsidx = 0;
  free(x.cands.v);
  free(x.in);
  free(st);
}

/* ---- driver ---- */

/* The distinct rules kinds and each rules function's index among them (63: the 64th and
 * later share a bit), so the call-graph walk can note which kinds a body calls. */
static void kinds_build(ls_program *p) {
  const ls_rules *r = p->rules;
  p->kind_names = ls_alloc(p->arena, ((size_t)r->nfns + 1) * sizeof *p->kind_names);
  p->fn_kind = ls_alloc(p->arena, (size_t)r->nfns + 1);
  p->nkind_names = 0;
  for (int i = 0; i < r->nfns; i++) {
    int k = 0;
    while (k < p->nkind_names && strcmp(p->kind_names[k], r->fns[i].kind_name))
      k++;
    if (k == p->nkind_names)
      p->kind_names[p->nkind_names++] = r->fns[i].kind_name;
    p->fn_kind[i] = (unsigned char)(k < 63 ? k : 63);
  }
}

uint64_t ls_kind_mask(const ls_program *p, const char *kind) {
  if (!p->kind_names)
    return ~0ull; /* the bodies were not walked: anything may be there */
  for (int k = 0; k < p->nkind_names; k++)
    if (!strcmp(p->kind_names[k], kind))
      return 1ull << (k < 63 ? k : 63);
  return 0; /* no rules function has that kind */
}

int ls_func_calls_kind(const ls_program *p, const ls_func *f, const char *kind) {
  return !p->kind_names || (f->calls_kinds & ls_kind_mask(p, kind)) != 0;
}

static void scan_calls(ls_program *p, ls_func *f, ls_node *n, ls_vec *out, ls_vec *refs) {
  if (!n)
    return;
  if (n->ent)
    ls_vec_push(refs, n);
  if (n->kind == CXCursor_UnexposedStmt && n->text)
    f->has_pragma = 1;
  if (n->kind == CXCursor_CallExpr && n->ent) {
    if (n->ent->rule) {
      size_t i = (size_t)(n->ent->rule - p->rules->fns);
      f->calls_kinds |= 1ull << (i < (size_t)p->rules->nfns ? p->fn_kind[i] : 63);
    }
    n->ent->ncalls++;
    if (n->ent->def)
      ls_vec_push(out, n->ent->def);
    if (ls_nx(n)->dtor) {
      n->x->dtor->ncalls++;
      if (n->x->dtor->def)
        ls_vec_push(out, n->x->dtor->def);
    }
  }
  if (n->kind == CXCursor_VarDecl && ls_nx(n)->dtor) { /* the implicit call at scope exit */
    n->x->dtor->ncalls++;
    if (n->x->dtor->def)
      ls_vec_push(out, n->x->dtor->def);
  }
  for (unsigned i = 0; i < n->nkids; i++)
    scan_calls(p, f, n->kids[i], out, refs);
}

/* refs: scratch, copied into f->refs before the callees reuse it */
static void order_visit(ls_program *p, ls_func *f, ls_vec *order, ls_vec *refs) {
  f->visiting = 1;
  ls_vec callees = {0};
  refs->n = 0;
  scan_calls(p, f, f->body, &callees, refs);
  f->nrefs = (int)refs->n;
  f->refs = ls_alloc(p->arena, (refs->n + 1) * sizeof *f->refs);
  if (refs->n)
    memcpy(f->refs, refs->v, refs->n * sizeof *f->refs);
  for (size_t i = 0; i < callees.n; i++) {
    ls_func *g = callees.v[i];
    if (!g->visiting)
      order_visit(p, g, order, refs);
  }
  free(callees.v);
  ls_vec_push(order, f);
}

/* Tarjan's SCCs: cyc_ev marks blocks on a cycle that contains a collective event. */
struct scc { int *idx, *low, *stk, sp, next; char *on; ls_func *f; struct ctx *c; };

static int block_has_event(struct ctx *c, ls_block *k) {
  for (int i = 0; i < k->nitems; i++)
    if (is_coll(k->items[i]) || is_helper_call(k->items[i]))
      return 1;
  (void)c;
  return 0;
}

static void scc_visit(struct scc *t, ls_block *v) {
  t->idx[v->id] = t->low[v->id] = t->next++;
  t->stk[t->sp++] = v->id;
  t->on[v->id] = 1;
  for (int i = 0; i < v->nsucc; i++) {
    ls_block *w = v->succ[i];
    if (t->idx[w->id] < 0) {
      scc_visit(t, w);
      if (t->low[w->id] < t->low[v->id])
        t->low[v->id] = t->low[w->id];
    } else if (t->on[w->id] && t->idx[w->id] < t->low[v->id]) {
      t->low[v->id] = t->idx[w->id];
    }
  }
  if (t->low[v->id] != t->idx[v->id])
    return;
  int start = t->sp, ev = 0, size = 0;
  do {
    start--;
    size++;
    ev |= block_has_event(t->c, t->f->blocks[t->stk[start]]);
  } while (t->stk[start] != v->id);
  int self = 0;
  for (int i = 0; i < v->nsucc; i++)
    self |= v->succ[i] == v;
  for (int i = start; i < t->sp; i++) {
    t->on[t->stk[i]] = 0;
    t->f->blocks[t->stk[i]]->cyc_ev = ev && (size > 1 || self);
  }
  t->sp = start;
}

static void mark_cycles(struct ctx *c, ls_func *f) {
  int n = f->nblocks;
  struct scc t = {.f = f, .c = c};
  t.idx = malloc((size_t)n * sizeof *t.idx);
  t.low = malloc((size_t)n * sizeof *t.low);
  t.stk = malloc((size_t)n * sizeof *t.stk);
  t.on = calloc((size_t)n, 1);
  if (!t.idx || !t.low || !t.stk || !t.on)
    abort();
  for (int i = 0; i < n; i++)
    t.idx[i] = -1;
  for (int i = 0; i < n; i++)
    if (t.idx[i] < 0)
      scc_visit(&t, f->blocks[i]);
  free(t.idx);
  free(t.low);
  free(t.stk);
  free(t.on);
}

static void analyze(struct ctx *c, ls_func *f) {
  c->f = f;
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    k->hstate = 0;
    k->cdep = NULL;
    k->mark = 0;
  }
  flow_sensitive(c, f); /* cond_taint of every branch, and the argument check */
  mark_cycles(c, f);
  seq_of(c, f->entry);
  for (int i = 0; i < f->nblocks; i++) /* unreachable blocks still get checked */
    seq_of(c, f->blocks[i]);
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    if (!k->cond_taint)
      continue;
    for (int s = 0; s < k->nsucc; s++)
      for (ls_block *r = k->succ[s]; r && r != k->ipdom && r != f->vexit && !r->cdep; r = r->ipdom)
        r->cdep = k;
  }
  ls_vec p2p = {0};
  check_groups(c, &p2p);
  for (int i = 0; i < f->nblocks; i++) {
    ls_block *k = f->blocks[i];
    if (k->cond_taint)
      check_branch(c, k);
  }
  check_p2p(c, &p2p);
  free(p2p.v);
  f->analyzed = 1;
}

void ls_checks_run(ls_program *p, ls_vec *findings) {
  ls_vec order = {0};
  size_t nf = p->funcs.n; /* lambdas were added during parsing; all functions are known */
  kinds_build(p);
  ls_vec refs = {0};
  for (size_t i = 0; i < nf; i++) {
    ls_func *f = p->funcs.v[i];
    if (!f->visiting)
      order_visit(p, f, &order, &refs);
  }
  free(refs.v);
  double t0 = ls_cpu_now();
  for (size_t i = 0; i < order.n; i++) {
    ls_func *f = order.v[i];
    ls_cfg_build(p, f);
    ls_cfg_postdom(f);
  }
  double t1 = ls_cpu_now();
  ls_taint_run(p);
  double t2 = ls_cpu_now();
  struct ctx c = {.p = p, .findings = findings};
  for (size_t i = 0; i < order.n; i++)
    analyze(&c, order.v[i]);
  for (size_t i = 0; i < order.n; i++)
    ls_check_contracts(p, order.v[i], findings);
  ls_check_threads(p, findings);
  if (getenv("LOCKSTEP_LINT_STATS"))
    fprintf(stderr, "lockstep lint: cfg %.3fs, taint %.3fs, checks %.3fs\n", t1 - t0, t2 - t1, ls_cpu_now() - t2);
  free(order.v);
  free(c.seen);
  free(c.nbuf.s);
}
