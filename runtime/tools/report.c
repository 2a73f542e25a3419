/* report.c — text and JSON renderings shared by the trace tools (report.h).
 * One place decides how a site or a divergence reads, so compare, export and
 * confirm never disagree about it. */
#include "report.h"
#include "fingerprint.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ls_site_text(struct ls_site s, char *buf, size_t len) {
  if (s.file) {
    const char *f = s.file;
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) {
      size_t n = strlen(cwd);
      if (!strncmp(f, cwd, n) && f[n] == '/')
        f += n + 1;
    }
    snprintf(buf, len, "%s:%d", f, s.line);
  } else if (s.module) {
    const char *base = strrchr(s.module, '/');
    snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : s.module, s.offset);
  } else {
    snprintf(buf, len, "pc 0x%" PRIx64, s.offset);
  }
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s) {
  int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
  if (n == 2 && s[0] < 0xc2)
    return 0; /* overlong */
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

cJSON *ls_json_text(const char *s) {
  size_t n = strlen(s);
  char *clean = malloc(n + 1);
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int len = utf8_len(p);
    if (len == 0) {
      clean[k++] = '?';
      p++;
    } else {
      memcpy(clean + k, p, (size_t)len);
      k += (size_t)len;
      p += len;
    }
  }
  clean[k] = 0;
  cJSON *j = cJSON_CreateString(clean);
  free(clean);
  return j;
}

cJSON *ls_json_add_texts(cJSON *obj, const char *name, char *const *s, size_t n) {
  cJSON *a = cJSON_AddArrayToObject(obj, name);
  for (size_t i = 0; i < n; i++)
    cJSON_AddItemToArray(a, ls_json_text(s[i]));
  return a;
}

void ls_json_add_u64(cJSON *obj, const char *name, uint64_t v) {
  char num[32];
  snprintf(num, sizeof num, "%" PRIu64, v);
  cJSON_AddItemToObject(obj, name, cJSON_CreateRaw(num));
}

static void add_str_or_null(cJSON *o, const char *name, const char *v) {
  if (v)
    cJSON_AddItemToObject(o, name, ls_json_text(v));
  else
    cJSON_AddNullToObject(o, name);
}

cJSON *ls_site_json(struct ls_site s, int rank) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "rank", rank);
  add_str_or_null(o, "module", s.module);
  ls_json_add_u64(o, "offset", s.offset);
  add_str_or_null(o, "file", s.file);
  if (s.file)
    cJSON_AddNumberToObject(o, "line", s.line);
  else
    cJSON_AddNullToObject(o, "line");
  add_str_or_null(o, "function", s.function);
  return o;
}

void ls_divergences_want(struct ls_symbolizer *sym, const struct ls_compare *cmp) {
  for (size_t i = 0; i < cmp->ndiv; i++)
    for (int k = 0; k < cmp->div[i].nranks; k++)
      if (cmp->div[i].site[k].r)
        ls_sym_want(sym, cmp->div[i].site[k].t, cmp->div[i].site[k].r);
}

/* "rank 0 ncclAllReduce(count=1, ...) at a.c:40" */
static void rank_call(const struct ls_apidb *db, struct ls_symbolizer *sym, int rank, struct ls_ref ref, int last,
                      int lost, char *buf, size_t len) {
  if (!ref.r) {
    snprintf(buf, len, "rank %d (%s)", rank, lost ? "its call there was overwritten" : "no call");
    return;
  }
  char call[256], where[512];
  ls_format_call(db, ref, call, sizeof call);
  ls_site_text(ls_sym_site(sym, ref.t, ref.r), where, sizeof where);
  if (last && ref.r->seq != LS_NO_SEQ)
    ls_bufprintf(buf, len, "rank %d (no call; its last was seq %llu %s at %s)", rank,
                 (unsigned long long)ref.r->seq, call, where);
  else
    ls_bufprintf(buf, len, "rank %d %s at %s", rank, call, where);
}

void ls_divergence_print(FILE *out, const struct ls_apidb *db, struct ls_symbolizer *sym,
                         const struct ls_divergence *d) {
  char comm[48] = "", seq[40] = "", a[1024], b[1024];
  if (d->has_comm) {
    char id[40];
    ls_format_comm(d->comm, d->incarnation, id, sizeof id);
    ls_bufprintf(comm, sizeof comm, " on comm %s", id);
  }
  if (d->has_seq)
    snprintf(seq, sizeof seq, " at seq %" PRIu64, d->seq);
  int lost = !strcmp(d->cls, ls_class_name(LS_CLASS_OVERWRITTEN)); /* the ranks' calls, not their absence */
  rank_call(db, sym, d->ranks[0], d->site[0], d->last[0], lost, a, sizeof a);
  if (d->nranks > 1) {
    rank_call(db, sym, d->ranks[1], d->site[1], d->last[1], lost, b, sizeof b);
    fprintf(out, "divergence: %s%s%s: %s vs %s\n", d->cls, comm, seq, a, b);
  } else {
    fprintf(out, "divergence: %s%s%s: %s\n", d->cls, comm, seq, a);
  }
  fprintf(out, "  note: %s\n", d->detail);
}

cJSON *ls_divergence_json(struct ls_symbolizer *sym, const struct ls_divergence *d) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "class", d->cls);
  if (d->has_comm) {
    char id[40];
    ls_format_comm(d->comm, d->incarnation, id, sizeof id);
    cJSON_AddStringToObject(o, "comm", id);
  } else {
    cJSON_AddNullToObject(o, "comm");
  }
  if (d->has_seq)
    ls_json_add_u64(o, "seq", d->seq);
  else
    cJSON_AddNullToObject(o, "seq");
  cJSON *ranks = cJSON_AddArrayToObject(o, "ranks"), *ops = cJSON_AddArrayToObject(o, "op");
  cJSON *sites = cJSON_CreateArray();
  for (int k = 0; k < d->nranks; k++) {
    cJSON_AddItemToArray(ranks, cJSON_CreateNumber(d->ranks[k]));
    if (d->site[k].r) {
      cJSON *site = ls_site_json(ls_sym_site(sym, d->site[k].t, d->site[k].r), d->ranks[k]);
      if (d->last[k]) {
        /* The rank issued nothing here: its site is where it was last seen. */
        cJSON_AddItemToArray(ops, cJSON_CreateNull());
        cJSON_AddTrueToObject(site, "last_call");
      } else {
        cJSON_AddItemToArray(ops, cJSON_CreateString(ls_trace_api_name(d->site[k].t, d->site[k].r)));
      }
      cJSON_AddItemToArray(sites, site);
    } else {
      cJSON_AddItemToArray(ops, cJSON_CreateNull());
    }
  }
  cJSON_AddStringToObject(o, "detail", d->detail);
  cJSON_AddItemToObject(o, "sites", sites);
  return o;
}
