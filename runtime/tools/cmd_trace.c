/* cmd_trace.c — `lockstep trace export`: traces as readable JSON (names, not
 * numbers) or as a Chrome-trace/Perfetto timeline: one process per rank, host
 * calls as slices on their thread, device completion as async slices, and the
 * first divergence (compare.c) as an instant event. Times are CLOCK_REALTIME
 * derived from each trace's t0 pair, so ranks line up. Non-goal: streaming
 * huge traces (the document is built in memory). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidb.h"
#include "commands.h"
#include "compare.h"
#include "report.h"
#include "symbolize.h"
#include "trace_read.h"
#include "xalloc.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lockstep trace export [--format=json|perfetto] [-o OUT] [--ranks LIST]\n"
          "                             [--around-divergence N | --seq FIRST-LAST] FILE|DIR...\n"
          "\n"
          "  --format=json      every header, api, module and record, with names instead of numbers (default)\n"
          "  --format=perfetto  a Chrome-trace JSON timeline (open in ui.perfetto.dev or chrome://tracing):\n"
          "                     one process per rank, calls as slices, device completion as async slices,\n"
          "                     the first divergence as an instant event\n"
          "  -o OUT             write to OUT instead of standard output\n"
          "  --ranks LIST       only these ranks' traces (launcher ranks: 0,3,8-15)\n"
          "  --around-divergence N\n"
          "                     per rank, only what it recorded from its call at seq S-N to its call at\n"
          "                     seq S+N on the communicator of the first divergence (seq S, as compare\n"
          "                     names it)\n"
          "  --seq FIRST-LAST   per rank, only what it recorded from its first to its last call with a\n"
          "                     seq in [FIRST, LAST], on any communicator\n"
          "Exit: 0 written, 2 bad input.\n");
}

static void add_hex(cJSON *o, const char *name, uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  cJSON_AddStringToObject(o, name, buf);
}

static void add_enum(cJSON *o, const char *name, const struct ls_apidb *db, const struct ls_trace *t,
                     const struct ls_trace_record *r, const char *which, int32_t v) {
  if (v == LS_NO_VALUE) {
    cJSON_AddNullToObject(o, name);
    return;
  }
  const char *s = ls_apidb_enum_name(db, t->apis[r->api].family, which, v);
  if (s)
    cJSON_AddStringToObject(o, name, s);
  else
    cJSON_AddNumberToObject(o, name, v);
}

static cJSON *flag_list(unsigned flags, const char *const *names, unsigned n) {
  cJSON *a = cJSON_CreateArray();
  for (unsigned i = 0; i < n; i++)
    if (flags & (1u << i))
      cJSON_AddItemToArray(a, cJSON_CreateString(names[i]));
  return a;
}

static const char *const header_flags[] = {"partial", "clean-exit", "watchdog"};
static const char *const record_flags[] = {"outer-group-end", "event-recorded", "completed", "timed-out",
                                           "in-group",        "nonblocking",    "no-device"};
static const char *const family_names[] = {"?", "nccl", "mpi", "lockstep"};

static cJSON *record_json(const struct ls_apidb *db, struct ls_symbolizer *sym, const struct ls_trace *t,
                          uint64_t index) {
  const struct ls_trace_record *r = &t->records[index];
  unsigned kind = ls_trace_api_kind(t, r);
  cJSON *o = cJSON_CreateObject();
  ls_json_add_u64(o, "index", t->first + index); /* the ordinal: a ring's start past 0 */
  cJSON_AddStringToObject(o, "state", r->state == LS_REC_ENTERED ? "entered" : "returned");
  cJSON_AddStringToObject(o, "api", ls_trace_api_name(t, r));
  cJSON_AddStringToObject(o, "kind", ls_kind_name(kind));
  cJSON_AddStringToObject(o, "op", ls_apidb_op(db, ls_trace_api_name(t, r)));
  cJSON_AddItemToObject(o, "flags", flag_list(r->flags, record_flags, 7));
  if (r->comm_id)
    add_hex(o, "comm", r->comm_id);
  else
    cJSON_AddNullToObject(o, "comm");
  if (r->seq != LS_NO_SEQ)
    ls_json_add_u64(o, "seq", r->seq);
  else
    cJSON_AddNullToObject(o, "seq");
  ls_json_add_u64(o, "count", r->count);
  add_enum(o, "dtype", db, t, r, "dtype", r->dtype);
  add_enum(o, "redop", db, t, r, "redop", r->redop);
  if (r->root_or_peer == LS_NO_VALUE)
    cJSON_AddNullToObject(o, kind == LS_KIND_P2P ? "peer" : "root");
  else
    cJSON_AddNumberToObject(o, kind == LS_KIND_P2P ? "peer" : "root", r->root_or_peer);
  if (r->state == LS_REC_RETURNED)
    add_enum(o, "rc", db, t, r, "result", r->rc);
  else
    cJSON_AddNullToObject(o, "rc");
  cJSON_AddNumberToObject(o, "group_depth", r->group_depth);
  cJSON_AddNumberToObject(o, "comm_rank", r->comm_rank);
  cJSON_AddNumberToObject(o, "comm_size", r->comm_size);
  cJSON_AddNumberToObject(o, "tid", r->tid);
  ls_json_add_u64(o, "t_enter_ns", r->t_enter_ns);
  if (r->state == LS_REC_RETURNED)
    ls_json_add_u64(o, "t_exit_ns", r->t_exit_ns);
  else
    cJSON_AddNullToObject(o, "t_exit_ns");
  if (r->flags & LS_REC_COMPLETED)
    ls_json_add_u64(o, "t_complete_ns", r->t_complete_ns);
  else
    cJSON_AddNullToObject(o, "t_complete_ns");
  cJSON *site = ls_site_json(ls_sym_site(sym, t, r), ls_trace_rank(t));
  cJSON_DeleteItemFromObject(site, "rank");
  cJSON_AddItemToObject(o, "site", site);
  add_hex(o, "site_pc", r->site_pc);
  cJSON *callers = cJSON_AddArrayToObject(o, "callers"); /* the frames above site_pc, innermost first */
  for (unsigned i = 0; i < LS_TRACE_CALLERS && r->callers[i]; i++) {
    char pc[24];
    snprintf(pc, sizeof pc, "0x%llx", (unsigned long long)r->callers[i]);
    cJSON_AddItemToArray(callers, cJSON_CreateString(pc));
  }
  add_hex(o, "stream", r->stream);
  ls_json_add_u64(o, "aux0", r->aux0);
  ls_json_add_u64(o, "aux1", r->aux1);
  return o;
}

/* What an export keeps: per trace, whether it is in, and the records [lo, hi). */
struct keep {
  unsigned char *in;
  uint64_t *lo, *hi;
};

/* "0,3,8-15" into a sorted-free list of inclusive ranges; 0 ok, -1 malformed. */
/* --seq FIRST-LAST: two decimal numbers, FIRST <= LAST, nothing else (no sign, no spaces). */
static int parse_seq_range(const char *s, unsigned long long *a, unsigned long long *b) {
  char *e;
  if (!isdigit((unsigned char)s[0]))
    return -1;
  errno = 0;
  *a = strtoull(s, &e, 10);
  if (errno || *e != '-' || !isdigit((unsigned char)e[1]))
    return -1;
  *b = strtoull(e + 1, &e, 10);
  return errno || *e || *b < *a ? -1 : 0;
}

static int parse_ranks(const char *s, long (**ranges)[2], size_t *n) {
  *n = 0;
  *ranges = NULL;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0)
      return -1;
    s = end;
    if (*s == '-') {
      b = strtol(++s, &end, 10);
      if (end == s || b < a)
        return -1;
      s = end;
    }
    if (*s && *s != ',')
      return -1;
    if (*s == ',' && !*++s)
      return -1;
    *ranges = ls_xrealloc(*ranges, (*n + 1) * sizeof **ranges);
    (*ranges)[*n][0] = a;
    (*ranges)[(*n)++][1] = b;
  }
  return *n ? 0 : -1;
}

/* Per trace, the records from its first to its last sequenced call with seq in [a, b]
 * (on comm only, unless comm is 0); none when it has no such call. */
static void seq_window(const struct ls_trace *t, uint64_t comm, uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi) {
  *lo = UINT64_MAX;
  *hi = 0;
  for (uint64_t k = 0; k < t->nrecords; k++) {
    const struct ls_trace_record *r = &t->records[k];
    if (r->state == LS_REC_FREE || r->seq == LS_NO_SEQ || r->seq < a || r->seq > b || (comm && r->comm_id != comm))
      continue;
    if (*lo == UINT64_MAX)
      *lo = k;
    *hi = k + 1;
  }
  if (*lo == UINT64_MAX)
    *lo = *hi = 0;
  ls_trace_release(t, 0, t->nrecords);
}

static cJSON *export_json(const struct ls_trace_set *set, const struct ls_apidb *db, struct ls_symbolizer *sym,
                          const struct keep *kp) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "version", 1);
  cJSON_AddStringToObject(doc, "tool", "lockstep");
  cJSON *traces = cJSON_AddArrayToObject(doc, "traces");
  for (size_t i = 0; i < set->n; i++) {
    if (!kp->in[i])
      continue;
    const struct ls_trace *t = &set->traces[i];
    const struct ls_trace_header *h = t->hdr;
    cJSON *to = cJSON_CreateObject();
    cJSON_AddItemToObject(to, "file", ls_json_text(t->path));
    cJSON *ho = cJSON_AddObjectToObject(to, "header");
    cJSON_AddNumberToObject(ho, "version", h->version);
    cJSON_AddItemToObject(ho, "flags", flag_list(h->flags, header_flags, 3));
    ls_json_add_u64(ho, "capacity", h->capacity);
    ls_json_add_u64(ho, "nrecords", h->nrecords);
    cJSON_AddBoolToObject(ho, "partial", t->partial);
    if (h->flags & LS_TRACE_F_RING) { /* only there: other traces' exports stay as they were */
      cJSON_AddBoolToObject(ho, "ring", 1);
      ls_json_add_u64(ho, "overwritten", t->first);
      ls_json_add_u64(ho, "dropped", t->dropped);
    }
    cJSON_AddNumberToObject(ho, "pid", h->pid);
    cJSON_AddNumberToObject(ho, "launcher_rank", h->launcher_rank);
    cJSON_AddNumberToObject(ho, "launcher_size", h->launcher_size);
    cJSON_AddNumberToObject(ho, "timeout_ms", h->timeout_ms);
    ls_json_add_u64(ho, "t0_realtime_ns", h->t0_realtime_ns);
    ls_json_add_u64(ho, "t0_monotonic_ns", h->t0_monotonic_ns);
    cJSON_AddItemToObject(ho, "hostname", ls_json_text(h->hostname));
    cJSON_AddItemToObject(ho, "exe", ls_json_text(h->exe));
    cJSON *apis = cJSON_AddArrayToObject(to, "apis");
    for (uint32_t k = 0; k < h->napis; k++) {
      cJSON *a = cJSON_CreateObject();
      cJSON_AddStringToObject(a, "name", t->apis[k].name);
      cJSON_AddStringToObject(a, "kind", ls_kind_name(t->apis[k].kind));
      cJSON_AddStringToObject(a, "family", t->apis[k].family < 4 ? family_names[t->apis[k].family] : "?");
      cJSON_AddItemToArray(apis, a);
    }
    cJSON *mods = cJSON_AddArrayToObject(to, "modules");
    for (uint32_t k = 0; k < t->nmodules; k++) {
      cJSON *m = cJSON_CreateObject();
      cJSON_AddItemToObject(m, "path", ls_json_text(t->modules[k].path));
      add_hex(m, "base", t->modules[k].base);
      add_hex(m, "start", t->modules[k].start);
      add_hex(m, "end", t->modules[k].end);
      cJSON_AddItemToArray(mods, m);
    }
    cJSON *recs = cJSON_AddArrayToObject(to, "records");
    for (uint64_t k = kp->lo[i]; k < kp->hi[i]; k++)
      if (t->records[k].state != LS_REC_FREE)
        cJSON_AddItemToArray(recs, record_json(db, sym, t, k));
    cJSON_AddItemToArray(traces, to);
  }
  return doc;
}

/* ---- Perfetto / Chrome trace ------------------------------------------------ */

struct timeline {
  cJSON *events;
  uint64_t base; /* realtime ns of ts 0 */
};

static double ts_of(const struct timeline *tl, const struct ls_trace *t, uint64_t mono) {
  uint64_t rt = ls_trace_realtime(t, mono);
  return rt >= tl->base ? (double)(rt - tl->base) / 1000.0 : -(double)(tl->base - rt) / 1000.0;
}

static cJSON *event(struct timeline *tl, const char *ph, const char *name, int pid, uint64_t tid, double ts) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "ph", ph);
  cJSON_AddStringToObject(e, "name", name);
  cJSON_AddNumberToObject(e, "pid", pid);
  cJSON_AddNumberToObject(e, "tid", (double)tid);
  cJSON_AddNumberToObject(e, "ts", ts);
  cJSON_AddItemToArray(tl->events, e);
  return e;
}

static void meta(struct timeline *tl, const char *what, int pid, uint64_t tid, const char *key, cJSON *value) {
  cJSON *e = event(tl, "M", what, pid, tid, 0);
  cJSON_AddItemToObject(cJSON_AddObjectToObject(e, "args"), key, value);
}

#define DEVICE_TID 1000000000u /* a track of its own beside the host threads */

static cJSON *export_perfetto(const struct ls_trace_set *set, const struct ls_apidb *db, struct ls_symbolizer *sym,
                              const struct ls_compare *cmp, const struct keep *kp) {
  struct timeline tl = {cJSON_CreateArray(), UINT64_MAX};
  for (size_t i = 0; i < set->n; i++)
    if (set->traces[i].hdr->t0_realtime_ns < tl.base)
      tl.base = set->traces[i].hdr->t0_realtime_ns;
  for (size_t i = 0; i < set->n; i++) {
    if (!kp->in[i])
      continue;
    const struct ls_trace *t = &set->traces[i];
    int pid = (int)i + 1, rank = ls_trace_rank(t);
    char name[512];
    if (rank >= 0)
      snprintf(name, sizeof name, "rank %d (%s pid %d)", rank, t->hdr->hostname, t->hdr->pid);
    else
      snprintf(name, sizeof name, "%s (%s pid %d)", t->path, t->hdr->hostname, t->hdr->pid);
    meta(&tl, "process_name", pid, 0, "name", ls_json_text(name));
    meta(&tl, "process_sort_index", pid, 0, "sort_index", cJSON_CreateNumber(rank >= 0 ? rank : (int)i));
    meta(&tl, "thread_name", pid, DEVICE_TID, "name", cJSON_CreateString("device completion"));
    for (uint64_t k = kp->lo[i]; k < kp->hi[i]; k++) {
      const struct ls_trace_record *r = &t->records[k];
      if (r->state == LS_REC_FREE)
        continue;
      char call[256], where[512];
      ls_format_call(db, (struct ls_ref){t, r}, call, sizeof call);
      ls_site_text(ls_sym_site(sym, t, r), where, sizeof where);
      const char *api = ls_trace_api_name(t, r);
      /* A call that never returned stays open ("B" without "E"): the viewer
       * shows it running to the end, which is what a hang looks like. */
      cJSON *e = event(&tl, r->state == LS_REC_RETURNED ? "X" : "B", api, pid, r->tid, ts_of(&tl, t, r->t_enter_ns));
      if (r->state == LS_REC_RETURNED)
        cJSON_AddNumberToObject(e, "dur", (double)(r->t_exit_ns - r->t_enter_ns) / 1000.0);
      cJSON_AddStringToObject(e, "cat", ls_kind_name(ls_trace_api_kind(t, r)));
      cJSON *args = cJSON_AddObjectToObject(e, "args");
      cJSON_AddStringToObject(args, "call", call);
      cJSON_AddItemToObject(args, "site", ls_json_text(where));
      if (r->comm_id)
        add_hex(args, "comm", r->comm_id);
      if (r->seq != LS_NO_SEQ)
        cJSON_AddNumberToObject(args, "seq", (double)r->seq);
      if (r->state == LS_REC_RETURNED) {
        char v[64];
        cJSON_AddStringToObject(args, "rc", ls_format_enum(db, t, r, "result", r->rc, v, sizeof v));
      }
      cJSON_AddNumberToObject(args, "group_depth", r->group_depth);
      if ((r->flags & LS_REC_EVENT_RECORDED) && (r->flags & LS_REC_COMPLETED) && r->state == LS_REC_RETURNED) {
        /* Enqueued at exit, done at completion; async so overlapping calls nest. */
        char id[40];
        snprintf(id, sizeof id, "0x%zx%08" PRIx64, i + 1, k);
        cJSON *b = event(&tl, "b", api, pid, DEVICE_TID, ts_of(&tl, t, r->t_exit_ns));
        cJSON_AddStringToObject(b, "cat", "device");
        cJSON_AddStringToObject(b, "id", id);
        cJSON_AddItemToObject(b, "args", cJSON_CreateObject());
        cJSON_AddStringToObject(cJSON_GetObjectItem(b, "args"), "call", call);
        cJSON *en = event(&tl, "e", api, pid, DEVICE_TID, ts_of(&tl, t, r->t_complete_ns));
        cJSON_AddStringToObject(en, "cat", "device");
        cJSON_AddStringToObject(en, "id", id);
        /* A flow arrow from the host call to its device slice. */
        cJSON *fs = event(&tl, "s", "enqueued", pid, r->tid, ts_of(&tl, t, r->t_enter_ns));
        cJSON_AddStringToObject(fs, "cat", "completion");
        cJSON_AddStringToObject(fs, "id", id);
        cJSON *ff = event(&tl, "f", "enqueued", pid, DEVICE_TID, ts_of(&tl, t, r->t_exit_ns));
        cJSON_AddStringToObject(ff, "cat", "completion");
        cJSON_AddStringToObject(ff, "id", id);
        cJSON_AddStringToObject(ff, "bp", "e");
      }
    }
  }
  /* The first divergence: a global instant, plus one on each involved rank's thread. */
  if (cmp && cmp->ndiv) {
    const struct ls_divergence *d = &cmp->div[0];
    char title[128];
    if (d->has_seq)
      snprintf(title, sizeof title, "first divergence: %s at seq %" PRIu64, d->cls, d->seq);
    else
      snprintf(title, sizeof title, "first divergence: %s", d->cls);
    int global = 0;
    for (int k = 0; k < d->nranks; k++) {
      const struct ls_ref s = d->site[k];
      if (!s.r || !kp->in[s.t - set->traces])
        continue;
      int pid = (int)(s.t - set->traces) + 1;
      if (!global && !d->last[k]) {
        /* At the diverging call itself (d->when), across all tracks. */
        double gts = d->when >= tl.base ? (double)(d->when - tl.base) / 1000.0 : 0;
        cJSON *g = event(&tl, "i", title, pid, s.r->tid, gts);
        cJSON_AddStringToObject(g, "s", "g");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(g, "args"), "detail", d->detail);
        global = 1;
      }
      /* On each rank's own thread: the diverging call, or where a rank that
       * issued nothing was last seen. */
      char what[160];
      snprintf(what, sizeof what, "%s%s", title, d->last[k] ? " (this rank's last call)" : "");
      cJSON *e = event(&tl, "i", what, pid, s.r->tid,
                       ts_of(&tl, s.t, d->last[k] && s.r->state == LS_REC_RETURNED ? s.r->t_exit_ns : s.r->t_enter_ns));
      cJSON_AddStringToObject(e, "s", "t");
      cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "args"), "detail", d->detail);
    }
  }
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddItemToObject(doc, "traceEvents", tl.events);
  cJSON_AddStringToObject(doc, "displayTimeUnit", "ns");
  cJSON *md = cJSON_AddObjectToObject(doc, "metadata");
  cJSON_AddStringToObject(md, "tool", "lockstep");
  ls_json_add_u64(md, "t0_realtime_ns", tl.base);
  return doc;
}

static int cmd_export(int argc, char **argv) {
  int perfetto = 0;
  const char *outpath = NULL, *ranks_arg = NULL, *seq_arg = NULL;
  long around = -1;
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  size_t npaths = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      free(paths);
      return 0;
    }
    if (!strcmp(a, "--format") && i + 1 < argc)
      a = argv[++i];
    else if (!strncmp(a, "--format=", 9))
      a += 9;
    else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
      outpath = argv[++i];
      continue;
    } else if (!strcmp(a, "--ranks") && i + 1 < argc) {
      ranks_arg = argv[++i];
      continue;
    } else if (!strcmp(a, "--seq") && i + 1 < argc) {
      seq_arg = argv[++i];
      continue;
    } else if (!strcmp(a, "--around-divergence") && i + 1 < argc) {
      char *end;
      around = strtol(argv[++i], &end, 10);
      if (*end || end == argv[i] || around < 0) {
        fprintf(stderr, "lockstep trace export: --around-divergence takes a number of calls, not '%s'\n", argv[i]);
        free(paths);
        return 2;
      }
      continue;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "lockstep trace export: unknown option '%s'\n", a);
      free(paths);
      return 2;
    } else {
      paths[npaths++] = argv[i];
      continue;
    }
    if (!strcmp(a, "json"))
      perfetto = 0;
    else if (!strcmp(a, "perfetto") || !strcmp(a, "chrome"))
      perfetto = 1;
    else {
      fprintf(stderr, "lockstep trace export: unknown format '%s' (json, perfetto)\n", a);
      free(paths);
      return 2;
    }
  }
  if (!npaths) {
    fprintf(stderr, "lockstep trace export: no trace file or directory given\n");
    usage(stderr);
    free(paths);
    return 2;
  }
  long (*ranges)[2] = NULL;
  size_t nranges = 0;
  unsigned long long sa = 0, sb = 0;
  if (ranks_arg && parse_ranks(ranks_arg, &ranges, &nranges)) {
    fprintf(stderr, "lockstep trace export: --ranks takes a list of ranks and ranges such as 0,3,8-15, not '%s'\n",
            ranks_arg);
    free(paths);
    free(ranges);
    return 2;
  }
  if (seq_arg && parse_seq_range(seq_arg, &sa, &sb)) {
    fprintf(stderr, "lockstep trace export: --seq takes FIRST-LAST (e.g. 990-1010), not '%s'\n", seq_arg);
    free(paths);
    free(ranges);
    return 2;
  }
  if (seq_arg && around >= 0) {
    fprintf(stderr, "lockstep trace export: --seq and --around-divergence both choose the records: give one\n");
    free(paths);
    free(ranges);
    return 2;
  }
  struct ls_trace_set set;
  int rc = ls_trace_set_load(&set, paths, npaths);
  free(paths);
  if (rc) {
    free(ranges);
    return 2;
  }
  struct ls_apidb db;
  ls_apidb_load(&db);
  cJSON *doc;
  struct ls_compare cmp = {0};
  int have_cmp = 0;
  if (perfetto || around >= 0) {
    have_cmp = ls_compare_run(&set, &db, &cmp) == 0;
    if (!have_cmp && around < 0)
      fprintf(stderr, "lockstep trace export: note: no divergence marked (the traces cannot be compared)\n");
  }
  const struct ls_divergence *first = have_cmp && cmp.ndiv ? &cmp.div[0] : NULL;
  if (around >= 0 && (!first || !first->has_seq || !first->has_comm)) {
    fprintf(stderr, "lockstep trace export: --around-divergence: %s\n",
            !have_cmp ? "the traces cannot be compared"
            : !first  ? "compare found no divergence in these traces"
                      : "the first divergence has no sequence number to center on (use --seq)");
    if (have_cmp)
      ls_compare_free(&cmp);
    ls_apidb_free(&db);
    ls_trace_set_free(&set);
    free(ranges);
    return 2;
  }
  struct keep kp = {ls_xrealloc(NULL, set.n + 1), ls_xrealloc(NULL, (set.n + 1) * sizeof *kp.lo),
                    ls_xrealloc(NULL, (set.n + 1) * sizeof *kp.hi)};
  size_t nkept = 0;
  for (size_t i = 0; i < set.n; i++) {
    const struct ls_trace *t = &set.traces[i];
    long rank = ls_trace_rank(t) >= 0 ? ls_trace_rank(t) : (long)i;
    kp.in[i] = !nranges;
    for (size_t k = 0; k < nranges; k++)
      kp.in[i] |= rank >= ranges[k][0] && rank <= ranges[k][1];
    kp.lo[i] = 0;
    kp.hi[i] = t->nrecords;
    if (kp.in[i] && around >= 0)
      seq_window(t, first->comm, first->seq > (uint64_t)around ? first->seq - (uint64_t)around : 0,
                 first->seq + (uint64_t)around, &kp.lo[i], &kp.hi[i]);
    else if (kp.in[i] && seq_arg)
      seq_window(t, 0, sa, sb, &kp.lo[i], &kp.hi[i]);
    nkept += kp.in[i];
  }
  free(ranges);
  if (nranges && !nkept) {
    fprintf(stderr, "lockstep trace export: --ranks %s: no trace of these ranks among the %zu given\n", ranks_arg,
            set.n);
    rc = 2;
    doc = NULL;
    goto done;
  }
  struct ls_symbolizer *sym = ls_sym_new();
  for (size_t i = 0; i < set.n; i++)
    for (uint64_t k = kp.lo[i]; kp.in[i] && k < kp.hi[i]; k++)
      if (set.traces[i].records[k].state != LS_REC_FREE)
        ls_sym_want(sym, &set.traces[i], &set.traces[i].records[k]);
  ls_sym_run(sym);
  if (perfetto)
    doc = export_perfetto(&set, &db, sym, have_cmp ? &cmp : NULL, &kp);
  else
    doc = export_json(&set, &db, sym, &kp);
  FILE *out = outpath ? fopen(outpath, "w") : stdout;
  rc = 0;
  if (!out) {
    fprintf(stderr, "lockstep: %s: cannot write: %m\n", outpath);
    rc = 2;
  } else {
    int bad = ls_json_print(out, doc) != 0, err = errno;
    if (outpath && fclose(out) != 0 && !bad) {
      bad = 1;
      err = errno;
    }
    if (bad) {
      fprintf(stderr, "lockstep: %s: write failed: %s\n", outpath ? outpath : "standard output", strerror(err));
      rc = 2;
    }
  }
  cJSON_Delete(doc);
  ls_sym_free(sym);
done:
  if (have_cmp)
    ls_compare_free(&cmp);
  free(kp.in);
  free(kp.lo);
  free(kp.hi);
  ls_apidb_free(&db);
  ls_trace_set_free(&set);
  return rc;
}

int ls_cmd_trace(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "export"))
    return cmd_export(argc - 1, argv + 1);
  fprintf(stderr, "lockstep trace: unknown action '%s' (export)\n", argv[1]);
  return 2;
}
