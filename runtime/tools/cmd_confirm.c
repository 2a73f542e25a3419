/* cmd_confirm.c — `lockstep confirm --findings lint.json --traces DIR`: join
 * static findings with a run by call site. A finding is confirmed when a
 * divergence that compare found has a call site (any rank) at one of the
 * finding's sites or its own line; exercised when some call hit those lines
 * and the ranks agreed; not-exercised otherwise. A call hits a line through its
 * own site or any of its recorded callers (a finding at the call of a helper
 * that issues the collective). Files match by path suffix
 * at a '/' boundary, because lint and the run may see different absolute
 * paths. Non-goal: matching by column (debug line tables have no columns). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidb.h"
#include "commands.h"
#include "compare.h"
#include "fingerprint.h"
#include "report.h"
#include "rule_ids.h"
#include "symbolize.h"
#include "trace_read.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lockstep confirm --findings LINT.json --traces DIR [--format=text|json]\n"
          "\n"
          "Joins `lockstep lint --format=json` findings with the traces of a run by call site:\n"
          "  confirmed      the run diverged at one of the finding's call sites or its own line:\n"
          "                 any divergence compare names but async-error, and api-error only for\n"
          "                 unbalanced-group and group-across-threads\n"
          "  exercised      calls ran through those lines and no such divergence was at them\n"
          "  not-exercised  no call of the run came from those lines\n"
          "The program must be built with debug info (-g) for call sites to have file:line.\n"
          "Exit: 1 when any finding is confirmed; else 3 when the run is incomplete (as compare\n"
          "says: a finding not confirmed there may have diverged in what is missing); else 0;\n"
          "2 bad input (also traces whose call sites have no file:line at all).\n");
}

struct target {
  const char *file;
  int line;
};

struct finding {
  const cJSON *json;
  const char *rule;
  struct target *t;
  int nt;
  const char *status;
  cJSON *evidence; /* divergence objects */
  unsigned long hits;
  unsigned ranks_hit; /* bit per rank (< 32) */
};

/* A path with "." and "dir/.." segments removed lexically, and leading "./" and
 * "../" dropped (they cannot be resolved without the compiler's directory). */
static void tidy_path(const char *in, char *out, size_t len) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", in);
  const char *seg[512];
  int n = 0, abs = tmp[0] == '/';
  for (char *save = NULL, *p = strtok_r(tmp, "/", &save); p && n < 512; p = strtok_r(NULL, "/", &save)) {
    if (!strcmp(p, "."))
      continue;
    if (!strcmp(p, "..") && n > 0 && strcmp(seg[n - 1], ".."))
      n--;
    else if (strcmp(p, "..") || n > 0 || abs)
      seg[n++] = p;
  }
  size_t k = 0;
  out[0] = 0;
  for (int i = 0; i < n && k < len; i++)
    k += (size_t)snprintf(out + k, len - k, "%s%s", (i || abs) ? "/" : "", seg[i]);
}

/* Whether two spellings of a path name the same file: equal, or one is a
 * suffix of the other starting after a '/' (lint and the run may see the file
 * under different absolute or relative paths). */
static int same_file(const char *pa, const char *pb) {
  char a[4096], b[4096];
  tidy_path(pa, a, sizeof a);
  tidy_path(pb, b, sizeof b);
  size_t la = strlen(a), lb = strlen(b);
  if (la == lb)
    return !strcmp(a, b);
  const char *lng = la > lb ? a : b, *shrt = la > lb ? b : a;
  size_t ll = la > lb ? la : lb, ls = la > lb ? lb : la;
  if (shrt[0] == '/')
    return 0; /* two different absolute paths */
  return ls > 0 && lng[ll - ls - 1] == '/' && !strcmp(lng + ll - ls, shrt);
}

static int hits(const struct finding *f, struct ls_site s) {
  if (!s.file)
    return 0;
  for (int i = 0; i < f->nt; i++)
    if (f->t[i].line == s.line && same_file(f->t[i].file, s.file))
      return 1;
  return 0;
}

/* The call's site or one of the frames above it is on the finding's lines. */
static int hits_call(const struct finding *f, struct ls_symbolizer *sym, const struct ls_trace *t,
                     const struct ls_trace_record *r) {
  if (hits(f, ls_sym_site(sym, t, r)))
    return 1;
  for (unsigned i = 0; i < LS_TRACE_CALLERS && r->callers[i]; i++)
    if (hits(f, ls_sym_pc(sym, t, r->callers[i])))
      return 1;
  return 0;
}

/* An API error confirms only the rules whose bug NCCL itself rejects at that call: a group
 * end below depth zero (unbalanced-group), or one on a thread that never opened the group
 * (group-across-threads: group state is per thread). */
static const enum ls_rule api_error_rules[] = {LS_RULE_UNBALANCED_GROUP, LS_RULE_GROUP_ACROSS_THREADS};

static int confirms(const struct finding *f, const char *cls) {
  if (!strcmp(cls, ls_class_name(LS_CLASS_ASYNC_ERROR)))
    return 0;
  if (!strcmp(cls, ls_class_name(LS_CLASS_API_ERROR))) {
    for (size_t i = 0; i < sizeof api_error_rules / sizeof *api_error_rules; i++)
      if (!strcmp(f->rule, ls_rule_id(api_error_rules[i])))
        return 1;
    return 0;
  }
  return 1;
}

/* Parses and checks the lint JSON; prints "lockstep: FILE:LINE:COL: ..." on error. */
static cJSON *load_findings(const char *path, struct finding **out, int *nout) {
  size_t len;
  char *buf = ls_read_file(path, &len);
  if (!buf) {
    fprintf(stderr, "lockstep: %s: cannot read: %m\n", path);
    return NULL;
  }
  unsigned eline, ecol;
  cJSON *doc = ls_json_parse(buf, len, 0, &eline, &ecol);
  if (!doc) {
    fprintf(stderr, "lockstep: %s:%u:%u: invalid JSON (expected `lockstep lint --format=json` output)\n", path,
            eline, ecol);
    free(buf);
    return NULL;
  }
  free(buf);
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "findings");
  if (!cJSON_IsArray(arr)) {
    fprintf(stderr, "lockstep: %s: no \"findings\" array (expected `lockstep lint --format=json` output)\n", path);
    cJSON_Delete(doc);
    return NULL;
  }
  int n = cJSON_GetArraySize(arr), k = 0;
  struct finding *fs = calloc((size_t)n + 1, sizeof *fs);
  const cJSON *f;
  cJSON_ArrayForEach(f, arr) {
    const char *rule = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "rule"));
    const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "file"));
    const cJSON *line = cJSON_GetObjectItemCaseSensitive(f, "line");
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(f, "sites");
    if (!rule || !file || !cJSON_IsNumber(line) || (sites && !cJSON_IsArray(sites))) {
      fprintf(stderr, "lockstep: %s: finding %d lacks rule, file or line\n", path, k);
      for (int i = 0; i < k; i++)
        free(fs[i].t);
      free(fs);
      cJSON_Delete(doc);
      return NULL;
    }
    struct finding *x = &fs[k++];
    x->json = f;
    x->rule = rule;
    x->t = calloc((size_t)cJSON_GetArraySize(sites) + 1, sizeof *x->t);
    x->t[x->nt++] = (struct target){file, line->valueint};
    const cJSON *s;
    cJSON_ArrayForEach(s, sites) {
      const char *sf = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "file"));
      const cJSON *sl = cJSON_GetObjectItemCaseSensitive(s, "line");
      if (sf && cJSON_IsNumber(sl))
        x->t[x->nt++] = (struct target){sf, sl->valueint};
    }
    x->evidence = cJSON_CreateArray();
  }
  *out = fs;
  *nout = k;
  return doc;
}

static int parse_args(int argc, char **argv, const char **findings, const char **traces, int *json) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    const char *names[] = {"--findings", "--traces", "--format"};
    int which = -1;
    for (int k = 0; k < 3; k++) {
      size_t n = strlen(names[k]);
      if (!strncmp(a, names[k], n) && a[n] == '=') {
        which = k;
        v = a + n + 1;
      } else if (!strcmp(a, names[k]) && i + 1 < argc) {
        which = k;
        v = argv[++i];
      }
    }
    if (which == 0)
      *findings = v;
    else if (which == 1)
      *traces = v;
    else if (which == 2 && (!strcmp(v, "json") || !strcmp(v, "text")))
      *json = !strcmp(v, "json");
    else {
      fprintf(stderr, "lockstep confirm: unknown argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!*findings || !*traces) {
    fprintf(stderr, "lockstep confirm: --findings and --traces are both required\n");
    usage(stderr);
    return 2;
  }
  return -1;
}

int ls_cmd_confirm(int argc, char **argv) {
  const char *fpath = NULL, *tdir = NULL;
  int json = 0;
  int rc = parse_args(argc, argv, &fpath, &tdir, &json);
  if (rc >= 0)
    return rc;
  struct finding *fs = NULL;
  int nf = 0;
  cJSON *lint = load_findings(fpath, &fs, &nf);
  if (!lint)
    return 2;
  struct ls_trace_set set;
  char *paths[1] = {(char *)tdir};
  if (ls_trace_set_load(&set, paths, 1)) {
    for (int i = 0; i < nf; i++) {
      free(fs[i].t);
      cJSON_Delete(fs[i].evidence);
    }
    free(fs);
    cJSON_Delete(lint);
    return 2;
  }
  struct ls_apidb db;
  ls_apidb_load(&db);
  struct ls_compare cmp;
  rc = 2;
  struct ls_symbolizer *sym = ls_sym_new();
  if (ls_compare_run(&set, &db, &cmp))
    goto free_set;
  unsigned long nsites = 0;
  for (size_t i = 0; i < set.n; i++)
    for (uint64_t k = 0; k < set.traces[i].nrecords; k++)
      if (set.traces[i].records[k].state != LS_REC_FREE) {
        ls_sym_want(sym, &set.traces[i], &set.traces[i].records[k]);
        nsites++;
      }
  ls_sym_run(sym);
  unsigned long resolved, unresolved;
  /* debug info is judged by the sites; caller frames (libc's, a runtime's) often have none */
  ls_sym_stats(sym, &resolved, &unresolved);
  for (size_t i = 0; i < set.n; i++)
    for (uint64_t k = 0; k < set.traces[i].nrecords; k++)
      for (unsigned c = 0; set.traces[i].records[k].state != LS_REC_FREE && c < LS_TRACE_CALLERS &&
                           set.traces[i].records[k].callers[c]; c++)
        ls_sym_want_pc(sym, &set.traces[i], set.traces[i].records[k].callers[c]);
  ls_sym_run(sym);
  if (nsites && !resolved) {
    fprintf(stderr, "lockstep confirm: %s: no call site in these traces has file:line (no debug info, or the "
                    "program's files are not here); nothing can be joined with the findings. Rebuild with -g and "
                    "run again.\n", tdir);
    goto free_cmp;
  }

  /* Divergences first: they decide "confirmed". */
  for (size_t d = 0; d < cmp.ndiv; d++) {
    const struct ls_divergence *dv = &cmp.div[d];
    for (int i = 0; i < nf; i++) {
      if (!confirms(&fs[i], dv->cls))
        continue;
      for (int k = 0; k < dv->nranks; k++)
        if (dv->site[k].r && !dv->last[k] && hits_call(&fs[i], sym, dv->site[k].t, dv->site[k].r)) {
          cJSON_AddItemToArray(fs[i].evidence, ls_divergence_json(sym, dv));
          break;
        }
    }
  }
  for (size_t ti = 0; ti < set.n; ti++) {
    const struct ls_trace *t = &set.traces[ti];
    for (uint64_t k = 0; k < t->nrecords; k++) {
      const struct ls_trace_record *r = &t->records[k];
      if (r->state == LS_REC_FREE)
        continue;
      for (int i = 0; i < nf; i++)
        if (hits_call(&fs[i], sym, t, r)) {
          fs[i].hits++;
          int rank = ls_ref_rank(&set, (struct ls_ref){t, r});
          if (rank >= 0 && rank < 32)
            fs[i].ranks_hit |= 1u << rank;
        }
    }
  }
  int nconf = 0, nexer = 0, nnot = 0;
  for (int i = 0; i < nf; i++) {
    if (cJSON_GetArraySize(fs[i].evidence)) {
      fs[i].status = "confirmed";
      nconf++;
    } else if (fs[i].hits) {
      fs[i].status = "exercised";
      nexer++;
    } else {
      fs[i].status = "not-exercised";
      nnot++;
    }
  }

  if (json) {
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "tool", "lockstep");
    cJSON_AddStringToObject(doc, "status", nconf ? "confirmed" : cmp.nmissing ? "incomplete" : "unconfirmed");
    cJSON *files = cJSON_AddArrayToObject(doc, "traces");
    for (size_t i = 0; i < set.n; i++)
      cJSON_AddItemToArray(files, ls_json_text(set.traces[i].path));
    cJSON_AddBoolToObject(doc, "debug_info", unresolved == 0);
    cJSON *out = cJSON_AddArrayToObject(doc, "findings");
    for (int i = 0; i < nf; i++) {
      cJSON *o = cJSON_CreateObject();
      const char *keys[] = {"rule", "file", "line", "column", "function", "message", "fingerprint"};
      for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(fs[i].json, keys[k]);
        if (v)
          cJSON_AddItemToObject(o, keys[k], cJSON_Duplicate(v, 1));
      }
      cJSON_AddStringToObject(o, "status", fs[i].status);
      cJSON_AddNumberToObject(o, "hits", (double)fs[i].hits);
      cJSON *rk = cJSON_AddArrayToObject(o, "ranks");
      for (int r = 0; r < 32; r++)
        if (fs[i].ranks_hit & (1u << r))
          cJSON_AddItemToArray(rk, cJSON_CreateNumber(r));
      cJSON_AddItemToObject(o, "evidence", fs[i].evidence);
      fs[i].evidence = NULL;
      cJSON_AddItemToArray(out, o);
    }
    cJSON *notes = ls_json_add_texts(doc, "notes", cmp.notes, cmp.nnotes);
    if (unresolved)
      cJSON_AddItemToArray(notes, cJSON_CreateString("some call sites have no debug info; findings at those "
                                                      "sites cannot be joined"));
    ls_json_add_texts(doc, "incomplete", cmp.missing, cmp.nmissing);
    ls_json_print(stdout, doc);
    cJSON_Delete(doc);
  } else {
    for (int i = 0; i < nf; i++) {
      char where[600];
      ls_site_text((struct ls_site){.file = fs[i].t[0].file, .line = fs[i].t[0].line}, where, sizeof where);
      printf("%-13s  %-25s  %s", fs[i].status, fs[i].rule, where);
      const cJSON *ev = cJSON_GetArrayItem(fs[i].evidence, 0);
      if (ev) {
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(ev, "seq");
        const char *comm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "comm"));
        printf("  %s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "class")));
        if (comm)
          printf(" on comm %s", comm);
        if (cJSON_IsRaw(seq)) /* exact 64-bit numbers are raw text */
          printf(" at seq %s", seq->valuestring);
        const cJSON *r;
        int first = 1;
        printf(" (ranks ");
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(ev, "ranks")) {
          printf("%s%d", first ? "" : ",", r->valueint);
          first = 0;
        }
        printf(")");
        if (cJSON_GetArraySize(fs[i].evidence) > 1)
          printf(" and %d more", cJSON_GetArraySize(fs[i].evidence) - 1);
      } else if (fs[i].hits) {
        printf("  %lu call%s on rank%s", fs[i].hits, fs[i].hits == 1 ? "" : "s",
               (fs[i].ranks_hit & (fs[i].ranks_hit - 1)) ? "s" : "");
        int first = 1;
        for (int r = 0; r < 32; r++)
          if (fs[i].ranks_hit & (1u << r)) {
            printf("%s%d", first ? " " : ",", r);
            first = 0;
          }
        printf(", ranks agreed");
      }
      printf("\n");
    }
    for (size_t i = 0; i < cmp.nnotes; i++)
      printf("note: %s\n", cmp.notes[i]);
    if (unresolved)
      printf("note: %lu of %lu call sites have no debug info; findings at them cannot be joined\n", unresolved,
             resolved + unresolved);
    for (size_t i = 0; i < cmp.nmissing; i++)
      printf("incomplete: %s\n", cmp.missing[i]);
    printf("lockstep: %d confirmed, %d exercised, %d not exercised (%d finding%s, %zu trace%s)%s\n", nconf, nexer,
           nnot, nf, nf == 1 ? "" : "s", set.n, set.n == 1 ? "" : "s",
           !nconf && cmp.nmissing ? "; incomplete: part of the run was not seen" : "");
  }
  rc = nconf ? 1 : cmp.nmissing ? LS_EXIT_INCOMPLETE : 0;
free_cmp:
  ls_compare_free(&cmp);
free_set:
  ls_sym_free(sym);
  ls_apidb_free(&db);
  ls_trace_set_free(&set);
  for (int i = 0; i < nf; i++) {
    free(fs[i].t);
    cJSON_Delete(fs[i].evidence);
  }
  free(fs);
  cJSON_Delete(lint);
  return rc;
}
