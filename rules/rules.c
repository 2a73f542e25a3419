/* rules.c — loads the rules files (rules/ directory, *.json) and validates every
 * key lint uses. Syntax errors are reported as file:line:col from the parse end of cJSON;
 * semantic errors name the offending key path. Unknown extra keys are ignored so other
 * tools can extend the schema (rules/SCHEMA.md); a malformed file never crashes lint. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data_dir.h"
#include "json_file.h"
#include "rules.h"
#include "xalloc.h"

static const ls_role_info role_table[LS_ROLE_OTHER] = {
#define LS_ROLE_DEF(id, name, field, before, after) [LS_ROLE_##id] = {name, field, before, after},
#include "roles.def"
};

const ls_role_info *ls_role_info_of(enum ls_role role) {
  return role > LS_ROLE_NONE && role < LS_ROLE_OTHER ? &role_table[role] : NULL;
}

/* Each rules kind: its value in traces, its enumerator's name (for generated code), and the
 * recorder's refinement (rules.h: variant). */
#define KIND(json, kind, variant) {json, kind, #kind, variant}
static const struct { const char *name; enum ls_api_kind kind; const char *symbol, *variant; } kind_names[] = {
    KIND("collective", LS_KIND_COLLECTIVE, NULL),
    KIND("p2p", LS_KIND_P2P, NULL),
    KIND("group_start", LS_KIND_GROUP_START, NULL),
    KIND("group_end", LS_KIND_GROUP_END, NULL),
    KIND("unique_id", LS_KIND_UNIQUE_ID, NULL),
    KIND("comm_init", LS_KIND_COMM_INIT, NULL),
    KIND("comm_init_all", LS_KIND_COMM_INIT, "init_all"),
    KIND("comm_split", LS_KIND_COMM_SPLIT, NULL),
    KIND("comm_finalize", LS_KIND_COMM_FINALIZE, NULL),
    KIND("comm_destroy", LS_KIND_COMM_DESTROY, NULL),
    KIND("comm_abort", LS_KIND_COMM_ABORT, NULL),
    KIND("comm_revoke", LS_KIND_OTHER, "revoke"),
    KIND("async_error_query", LS_KIND_ASYNC_ERROR_QUERY, NULL),
    KIND("size_query", LS_KIND_SIZE_QUERY, NULL),
    KIND("rank_query", LS_KIND_RANK_QUERY, NULL),
    KIND("wait", LS_KIND_WAIT, NULL),
    /* MPI's creations are splits of the parent in the trace */
    KIND("comm_dup", LS_KIND_COMM_SPLIT, "dup"),
    KIND("comm_create", LS_KIND_COMM_SPLIT, "create"),
};
#undef KIND

const char *ls_kind_symbol(enum ls_api_kind kind) {
  for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
    if (kind_names[i].kind == kind)
      return kind_names[i].symbol;
  return "LS_KIND_OTHER";
}

/* The refinements a function's `variant` may name: those the recorder knows. */
static const char *const variants[] = {"init_all", "shrink", "scalable", "simulate",
                                       "revoke", "dup", "create", "create_group"};

/* Error context: the file and a key path built while descending. */
struct ctx {
  const char *path;
  FILE *errs;
  char key[256];
};

static int fail(const struct ctx *c, const char *what) {
  fprintf(c->errs, "%s: error: %s%s%s\n", c->path, c->key[0] ? c->key : "", c->key[0] ? ": " : "", what);
  return -1;
}

static const char *get_str(struct ctx *c, const cJSON *obj, const char *k, int required, int *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, k);
  if (!it) {
    if (required) {
      char m[128];
      snprintf(m, sizeof m, "missing required key \"%s\"", k);
      fail(c, m);
      *err = 1;
    }
    return NULL;
  }
  if (!cJSON_IsString(it) || !it->valuestring[0]) {
    char m[128];
    snprintf(m, sizeof m, "\"%s\" must be a non-empty string", k);
    fail(c, m);
    *err = 1;
    return NULL;
  }
  return it->valuestring;
}

static int load_fn(ls_rules *r, ls_arena *a, struct ctx *c, const cJSON *fn, ls_rule_fn *out, const char *api) {
  int err = 0;
  if (!cJSON_IsObject(fn))
    return fail(c, "must be an object");
  const char *name = get_str(c, fn, "name", 1, &err);
  const char *kind = get_str(c, fn, "kind", 1, &err);
  const char *op = get_str(c, fn, "op", 0, &err);
  get_str(c, fn, "doc", 0, &err);
  const char *ret = get_str(c, fn, "returns", 0, &err);
  const char *variant = get_str(c, fn, "variant", 0, &err);
  const char *received = get_str(c, fn, "received", 0, &err);
  if (err)
    return -1;
  if (received && strcmp(received, "uniform") && strcmp(received, "per_rank"))
    return fail(c, "\"received\" must be \"uniform\" or \"per_rank\"");
  out->received_uniform = received && !strcmp(received, "uniform");
  out->name = ls_strdup(a, name);
  out->kind_name = ls_strdup(a, kind);
  out->api = api;
  out->kind = LS_KIND_OTHER;
  for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
    if (!strcmp(kind, kind_names[i].name)) {
      out->kind = kind_names[i].kind;
      out->variant = kind_names[i].variant;
    }
  out->op = ls_strdup(a, op ? op : name);
  out->op_given = op ? out->op : NULL;
  out->returns = ret ? ls_strdup(a, ret) : NULL;
  const cJSON *coll = cJSON_GetObjectItemCaseSensitive(fn, "collective");
  if (coll && !cJSON_IsBool(coll))
    return fail(c, "\"collective\" must be true or false");
  out->seq_member = out->kind == LS_KIND_COLLECTIVE || cJSON_IsTrue(coll);
  if (!strcmp(kind, "comm_create") && !cJSON_IsTrue(coll))
    out->variant = "create_group"; /* called by the new group's members only */
  if (variant) {
    out->variant = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
      if (!strcmp(variant, variants[i]))
        out->variant = variants[i];
    if (!out->variant) {
      char m[160];
      snprintf(m, sizeof m, "\"variant\" names \"%.40s\", which the recorder does not know", variant);
      return fail(c, m);
    }
  }
  /* Before any early return: 0 would name argument 0 as the in-place buffer. */
  out->in_place_buf = out->in_place_count = out->in_place_dtype = -1;
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "args");
  if (!args) {
    if (out->kind == LS_KIND_COLLECTIVE || out->kind == LS_KIND_P2P)
      return fail(c, "missing required key \"args\"");
    return 0;
  }
  if (!cJSON_IsArray(args))
    return fail(c, "\"args\" must be an array");
  out->nargs = cJSON_GetArraySize(args);
  out->roles = ls_alloc(a, (size_t)(out->nargs + 1) * sizeof *out->roles);
  out->args = ls_alloc(a, (size_t)(out->nargs + 1) * sizeof *out->args);
  size_t base = strlen(c->key);
  int i = 0;
  const cJSON *arg;
  cJSON_ArrayForEach(arg, args) {
    snprintf(c->key + base, sizeof c->key - base, ".args[%d]", i);
    if (!cJSON_IsObject(arg))
      return fail(c, "must be an object {name, type, role?}");
    const char *an = get_str(c, arg, "name", 0, &err);
    const char *at = get_str(c, arg, "type", 0, &err);
    const char *role = get_str(c, arg, "role", 0, &err);
    if (err)
      return -1;
    out->args[i].name = an ? ls_strdup(a, an) : NULL;
    out->args[i].type = at ? ls_strdup(a, at) : NULL;
    out->args[i].role_name = role ? ls_strdup(a, role) : NULL;
    out->roles[i] = LS_ROLE_NONE;
    if (role) {
      out->roles[i] = LS_ROLE_OTHER; /* a role the table lacks is fine: nothing reads it */
      for (int k = LS_ROLE_NONE + 1; k < LS_ROLE_OTHER; k++)
        if (!strcmp(role, role_table[k].name))
          out->roles[i] = (enum ls_role)k;
    }
    i++;
  }
  c->key[base] = 0;
  const cJSON *ip = cJSON_GetObjectItemCaseSensitive(fn, "in_place");
  if (ip) {
    if (!cJSON_IsObject(ip))
      return fail(c, "\"in_place\" must be an object {buffer, count?, dtype?}");
    static const char *keys[3] = {"buffer", "count", "dtype"};
    int *dst[3] = {&out->in_place_buf, &out->in_place_count, &out->in_place_dtype};
    for (int k = 0; k < 3; k++) {
      const char *nm = get_str(c, ip, keys[k], k == 0, &err);
      if (err)
        return -1;
      if (!nm)
        continue;
      int idx = 0, found = -1;
      cJSON_ArrayForEach(arg, args) {
        const cJSON *an = cJSON_GetObjectItemCaseSensitive(arg, "name");
        if (cJSON_IsString(an) && !strcmp(an->valuestring, nm))
          found = idx;
        idx++;
      }
      if (found < 0) {
        char m[160];
        snprintf(m, sizeof m, "in_place.%s names \"%s\", which is not an argument", keys[k], nm);
        return fail(c, m);
      }
      *dst[k] = found;
    }
  }
  (void)r;
  return 0;
}

static int load_src(ls_arena *a, struct ctx *c, const cJSON *s, ls_rule_src *out, int uniform) {
  int err = 0;
  if (!cJSON_IsObject(s))
    return fail(c, "must be an object {call, arg+values | out_arg | returns}");
  const char *call = get_str(c, s, "call", 1, &err);
  get_str(c, s, "doc", 0, &err);
  if (err)
    return -1;
  out->call = ls_strdup(a, call);
  out->arg = out->out_arg = -1;
  out->uniform = uniform;
  const cJSON *arg = cJSON_GetObjectItemCaseSensitive(s, "arg");
  const cJSON *vals = cJSON_GetObjectItemCaseSensitive(s, "values");
  const cJSON *oarg = cJSON_GetObjectItemCaseSensitive(s, "out_arg");
  const cJSON *ret = cJSON_GetObjectItemCaseSensitive(s, "returns");
  if (arg) {
    if (!cJSON_IsNumber(arg) || arg->valueint < 0 || arg->valuedouble != (double)arg->valueint)
      return fail(c, "\"arg\" must be a non-negative integer");
    if (!cJSON_IsArray(vals))
      return fail(c, "\"arg\" needs \"values\", an array of strings");
    out->arg = arg->valueint;
    out->nvalues = cJSON_GetArraySize(vals);
    out->values = ls_alloc(a, (size_t)(out->nvalues + 1) * sizeof *out->values);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, vals) {
      if (!cJSON_IsString(v))
        return fail(c, "\"values\" must hold only strings");
      out->values[i++] = ls_strdup(a, v->valuestring);
    }
  } else if (vals) {
    return fail(c, "\"values\" needs \"arg\"");
  }
  if (oarg) {
    if (!cJSON_IsNumber(oarg) || oarg->valueint < 0 || oarg->valuedouble != (double)oarg->valueint)
      return fail(c, "\"out_arg\" must be a non-negative integer");
    out->out_arg = oarg->valueint;
  }
  if (ret) {
    if (!cJSON_IsBool(ret))
      return fail(c, "\"returns\" must be true or false");
    out->returns = cJSON_IsTrue(ret);
  }
  if (out->arg < 0 && out->out_arg < 0 && !out->returns)
    return fail(c, "needs one of \"arg\"+\"values\", \"out_arg\" or \"returns\": true");
  return 0;
}

static void *grow(void *old, int n, size_t size);

/* An array of integers (JSON numbers) appended to *v. */
static int load_ints(ls_arena *a, struct ctx *c, const cJSON *arr, long long **v, int *n) {
  if (!cJSON_IsArray(arr))
    return fail(c, "must be an array of integers");
  long long *nv = ls_alloc(a, (size_t)(*n + cJSON_GetArraySize(arr) + 1) * sizeof *nv);
  for (int k = 0; k < *n; k++)
    nv[k] = (*v)[k];
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    if (!cJSON_IsNumber(it) || it->valuedouble != (double)(long long)it->valuedouble)
      return fail(c, "must hold only integers");
    nv[(*n)++] = (long long)it->valuedouble;
  }
  *v = nv;
  return 0;
}

/* rules/host.json's top-level keys for lint's checks/threads.c: `thread_regions` (pragmas whose
 * statement runs on other threads), `primary_thread_regions` (inside those, on the primary
 * thread only), `stream_nonblocking_flag`, `default_streams`. */
static int load_host(ls_rules *r, ls_arena *a, struct ctx *c, const cJSON *root, int *found) {
  static const char *keys[2] = {"thread_regions", "primary_thread_regions"};
  const char ***lists[2] = {&r->regions, &r->primary_regions};
  int *counts[2] = {&r->nregions, &r->nprimary};
  for (int l = 0; l < 2; l++) {
    const cJSON *reg = cJSON_GetObjectItemCaseSensitive(root, keys[l]);
    if (!reg)
      continue;
    *found = 1;
    snprintf(c->key, sizeof c->key, "%s", keys[l]);
    if (!cJSON_IsArray(reg))
      return fail(c, "must be an array of strings");
    const char **nr = ls_alloc(a, (size_t)(*counts[l] + cJSON_GetArraySize(reg) + 1) * sizeof *nr);
    for (int k = 0; k < *counts[l]; k++)
      nr[k] = (*lists[l])[k];
    const cJSON *it;
    cJSON_ArrayForEach(it, reg) {
      if (!cJSON_IsString(it) || !it->valuestring[0])
        return fail(c, "must hold only non-empty strings");
      nr[(*counts[l])++] = ls_strdup(a, it->valuestring);
    }
    *lists[l] = nr;
  }
  const cJSON *nb = cJSON_GetObjectItemCaseSensitive(root, "stream_nonblocking_flag");
  if (nb) {
    *found = 1;
    snprintf(c->key, sizeof c->key, "stream_nonblocking_flag");
    if (!cJSON_IsNumber(nb) || nb->valuedouble < 1 || nb->valuedouble != (double)(long long)nb->valuedouble)
      return fail(c, "must be a positive integer (the flag bit)");
    r->nonblocking_flag = (long long)nb->valuedouble;
  }
  const cJSON *ds = cJSON_GetObjectItemCaseSensitive(root, "default_streams");
  if (ds) {
    *found = 1;
    snprintf(c->key, sizeof c->key, "default_streams");
    if (!cJSON_IsObject(ds))
      return fail(c, "must be an object {legacy, per_thread}");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(ds, "legacy");
    const cJSON *pt = cJSON_GetObjectItemCaseSensitive(ds, "per_thread");
    snprintf(c->key, sizeof c->key, "default_streams.legacy");
    if (l && load_ints(a, c, l, &r->legacy_streams, &r->nlegacy))
      return -1;
    snprintf(c->key, sizeof c->key, "default_streams.per_thread");
    if (pt && load_ints(a, c, pt, &r->per_thread_streams, &r->nper_thread))
      return -1;
  }
  c->key[0] = 0;
  return 0;
}

static void *grow(void *old, int n, size_t size) {
  return ls_xrealloc(old, (size_t)(n + 1) * size);
}

/* An integer that a long long holds: the range first, converting 1e30 is undefined. */
static int is_int(const cJSON *v) {
  return cJSON_IsNumber(v) && v->valuedouble >= -9223372036854775808.0 && v->valuedouble < 9223372036854775808.0 &&
         v->valuedouble == (double)(long long)v->valuedouble;
}

/* `enums`: {GROUP: {NAME: integer}} (the trace tools print values by these names). */
static int load_enums(ls_arena *a, struct ctx *c, const cJSON *en, ls_rules_file *f) {
  snprintf(c->key, sizeof c->key, "enums");
  if (!cJSON_IsObject(en))
    return fail(c, "must be an object {result?, dtype?, redop?}");
  f->nenums = cJSON_GetArraySize(en);
  f->enums = ls_alloc(a, (size_t)(f->nenums + 1) * sizeof *f->enums);
  int g = 0;
  const cJSON *grp, *it;
  cJSON_ArrayForEach(grp, en) {
    snprintf(c->key, sizeof c->key, "enums.%.200s", grp->string);
    if (!cJSON_IsObject(grp))
      return fail(c, "must be an object from C names to integers");
    ls_rule_enums *e = &f->enums[g++];
    e->name = ls_strdup(a, grp->string);
    e->v = ls_alloc(a, (size_t)(cJSON_GetArraySize(grp) + 1) * sizeof *e->v);
    cJSON_ArrayForEach(it, grp) {
      snprintf(c->key, sizeof c->key, "enums.%.100s.%.100s", grp->string, it->string);
      if (!is_int(it))
        return fail(c, "must be an integer");
      e->v[e->n].name = ls_strdup(a, it->string);
      e->v[e->n++].value = (long long)it->valuedouble;
    }
  }
  c->key[0] = 0;
  return 0;
}

/* an argument index 0..63, or -1 for an absent key; -2 after reporting a bad one */
static int flow_index(struct ctx *c, const cJSON *v, const char *k) {
  if (!v)
    return -1;
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 63 || v->valuedouble != (double)(int)v->valuedouble) {
    char m[128];
    snprintf(m, sizeof m, "\"%s\" must hold argument indices 0..63", k);
    fail(c, m);
    return -2;
  }
  return (int)v->valuedouble;
}

/* `value_flows`: [{call, from?, from_rest?, into?, into_rest?, returns?}] (SCHEMA.md) */
static int load_flows(ls_rules *r, ls_arena *a, struct ctx *c, const cJSON *root, int *found) {
  const cJSON *vf = cJSON_GetObjectItemCaseSensitive(root, "value_flows");
  if (!vf)
    return 0;
  *found = 1;
  snprintf(c->key, sizeof c->key, "value_flows");
  if (!cJSON_IsArray(vf))
    return fail(c, "must be an array");
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, vf) {
    snprintf(c->key, sizeof c->key, "value_flows[%d]", i++);
    if (!cJSON_IsObject(it))
      return fail(c, "must be an object {call, from?, from_rest?, into?, into_rest?, returns?}");
    int err = 0;
    const char *call = get_str(c, it, "call", 1, &err);
    if (err)
      return -1;
    ls_rule_flow fl = {.call = ls_strdup(a, call)};
    static const char *sets[2] = {"from", "into"};
    unsigned long long *bits[2] = {&fl.from, &fl.into};
    for (int s = 0; s < 2; s++) {
      const cJSON *arr = cJSON_GetObjectItemCaseSensitive(it, sets[s]);
      if (arr && !cJSON_IsArray(arr)) {
        char m[128];
        snprintf(m, sizeof m, "\"%s\" must be an array of argument indices", sets[s]);
        return fail(c, m);
      }
      const cJSON *v;
      cJSON_ArrayForEach(v, arr) {
        int k = flow_index(c, v, sets[s]);
        if (k < 0)
          return -1;
        *bits[s] |= 1ull << k;
      }
    }
    if ((fl.from_rest = flow_index(c, cJSON_GetObjectItemCaseSensitive(it, "from_rest"), "from_rest")) == -2 ||
        (fl.into_rest = flow_index(c, cJSON_GetObjectItemCaseSensitive(it, "into_rest"), "into_rest")) == -2)
      return -1;
    const cJSON *ret = cJSON_GetObjectItemCaseSensitive(it, "returns");
    if (ret && !cJSON_IsBool(ret))
      return fail(c, "\"returns\" must be true or false");
    fl.returns = cJSON_IsTrue(ret);
    if (!fl.from && fl.from_rest < 0)
      return fail(c, "needs \"from\" or \"from_rest\": the arguments whose data flows");
    if (!fl.into && fl.into_rest < 0 && !fl.returns)
      return fail(c, "needs \"into\", \"into_rest\" or \"returns\": where the data goes");
    if (ls_rules_flow(r, fl.call))
      return fail(c, "this call has a value_flows entry already");
    r->flows = grow(r->flows, r->nflows, sizeof *r->flows);
    r->flows[r->nflows++] = fl;
  }
  c->key[0] = 0;
  return 0;
}

/* `wrappers`: {NAME: {as, args?, doc?}}, kept as written until ls_rules_link (SCHEMA.md) */
static int load_wrappers(ls_rules *r, ls_arena *a, struct ctx *c, const cJSON *root, int *found) {
  const cJSON *ws = cJSON_GetObjectItemCaseSensitive(root, "wrappers");
  if (!ws)
    return 0;
  *found = 1;
  snprintf(c->key, sizeof c->key, "wrappers");
  if (!cJSON_IsObject(ws))
    return fail(c, "must be an object from wrapper names to {as, args?}");
  const cJSON *w;
  cJSON_ArrayForEach(w, ws) {
    snprintf(c->key, sizeof c->key, "wrappers.%.200s", w->string);
    if (!w->string[0])
      return fail(c, "a wrapper name must be non-empty");
    if (!cJSON_IsObject(w))
      return fail(c, "must be an object {as, args?}");
    int err = 0;
    const char *as = get_str(c, w, "as", 1, &err);
    get_str(c, w, "doc", 0, &err);
    if (err)
      return -1;
    ls_rule_wrap wr = {.path = ls_strdup(a, c->path), .name = ls_strdup(a, w->string), .as_name = ls_strdup(a, as)};
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(w, "args");
    if (args) {
      if (!cJSON_IsObject(args))
        return fail(c, "\"args\" must be an object from the target's argument names to parameter indices");
      wr.has_args = 1;
      wr.arg_names = ls_alloc(a, (size_t)(cJSON_GetArraySize(args) + 1) * sizeof *wr.arg_names);
      wr.arg_idx = ls_alloc(a, (size_t)(cJSON_GetArraySize(args) + 1) * sizeof *wr.arg_idx);
      const cJSON *m;
      cJSON_ArrayForEach(m, args) {
        snprintf(c->key, sizeof c->key, "wrappers.%.100s.args.%.100s", w->string, m->string);
        if (!cJSON_IsNumber(m) || m->valuedouble < 0 || m->valuedouble > 63 ||
            m->valuedouble != (double)(int)m->valuedouble)
          return fail(c, "must be the wrapper's parameter index, an integer 0..63");
        wr.arg_names[wr.nmap] = ls_strdup(a, m->string);
        wr.arg_idx[wr.nmap++] = (int)m->valuedouble;
      }
    }
    for (int k = 0; k < r->nwraps; k++)
      if (!strcmp(r->wraps[k].name, wr.name)) {
        snprintf(c->key, sizeof c->key, "wrappers.%.200s", w->string);
        return fail(c, "this wrapper is declared already");
      }
    r->wraps = grow(r->wraps, r->nwraps, sizeof *r->wraps);
    r->wrappers = grow(r->wrappers, r->nwraps, sizeof *r->wrappers);
    r->wraps[r->nwraps] = wr;
    memset(&r->wrappers[r->nwraps], 0, sizeof r->wrappers[0]);
    r->nwraps++;
  }
  c->key[0] = 0;
  return 0;
}

/* Which role an argument of the wrapper takes when several of the target's land on it
 * (`allreduce_in_place(buf, n)`: sendbuff and recvbuff): what the fingerprint reads first,
 * then the receive buffer (it makes the value uniform), then any. */
static int role_rank(enum ls_role r) {
  switch (r) {
  case LS_ROLE_COUNT: case LS_ROLE_DTYPE: case LS_ROLE_ROOT: case LS_ROLE_REDOP: case LS_ROLE_PEER:
  case LS_ROLE_COMM: case LS_ROLE_COUNTS:
    return 3;
  case LS_ROLE_RECVBUF:
    return 2;
  case LS_ROLE_NONE:
    return 0;
  default:
    return 1;
  }
}

void ls_rule_wrapper_init(ls_rule_fn *w, ls_arena *a, const char *name, const ls_rule_fn *target, const int *param,
                          int nparams) {
  *w = *target; /* what the call is (kind, op, api...): the target's; where its arguments are: below */
  w->name = name;
  w->as = target;
  w->as_fixed = NULL;
  int *pa = ls_alloc(a, (size_t)(target->nargs + 1) * sizeof *pa);
  for (int i = 0; i < target->nargs; i++)
    pa[i] = param[i] < nparams ? param[i] : -1;
  w->as_arg = pa;
  w->nargs = nparams;
  w->roles = ls_alloc(a, (size_t)(nparams + 1) * sizeof *w->roles);
  w->args = ls_alloc(a, (size_t)(nparams + 1) * sizeof *w->args);
  for (int j = 0; j < nparams; j++)
    w->roles[j] = LS_ROLE_NONE;
  for (int i = 0; i < target->nargs; i++) {
    int j = param[i];
    if (j < 0 || j >= nparams || role_rank(target->roles[i]) <= role_rank(w->roles[j]))
      continue;
    w->roles[j] = target->roles[i];
    w->args[j] = target->args[i];
  }
  int *ip[3] = {&w->in_place_buf, &w->in_place_count, &w->in_place_dtype};
  const int from[3] = {target->in_place_buf, target->in_place_count, target->in_place_dtype};
  for (int k = 0; k < 3; k++)
    *ip[k] = from[k] >= 0 && from[k] < target->nargs && param[from[k]] < nparams ? param[from[k]] : -1;
  if (w->in_place_buf < 0)
    w->in_place_count = w->in_place_dtype = -1;
}

int ls_rules_link(ls_rules *r, ls_arena *a) {
  FILE *errs = r->errs ? r->errs : stderr;
  for (int k = 0; k < r->nwraps; k++) {
    const ls_rule_wrap *wr = &r->wraps[k];
    const ls_rule_fn *t = NULL;
    for (int i = 0; i < r->nfns && !t; i++)
      if (!strcmp(r->fns[i].name, wr->as_name))
        t = &r->fns[i];
    if (!t) {
      fprintf(errs, "%s: error: wrappers.%s: \"as\" names \"%s\", which no rules file describes\n", wr->path,
              wr->name, wr->as_name);
      return -1;
    }
    int *param = ls_alloc(a, (size_t)(t->nargs + 1) * sizeof *param);
    int np = wr->has_args ? 0 : t->nargs;
    for (int i = 0; i < t->nargs; i++)
      param[i] = wr->has_args ? -1 : i;
    for (int m = 0; m < wr->nmap; m++) {
      int i = 0;
      while (i < t->nargs && !(t->args[i].name && !strcmp(t->args[i].name, wr->arg_names[m])))
        i++;
      if (i == t->nargs) {
        fprintf(errs, "%s: error: wrappers.%s.args.%s: %s has no argument \"%s\"\n", wr->path, wr->name,
                wr->arg_names[m], t->name, wr->arg_names[m]);
        return -1;
      }
      param[i] = wr->arg_idx[m];
      if (wr->arg_idx[m] + 1 > np)
        np = wr->arg_idx[m] + 1;
    }
    ls_rule_wrapper_init(&r->wrappers[k], a, wr->name, t, param, np);
  }
  return 0;
}

void ls_rules_release(ls_rules *r) {
  free(r->fns);
  free(r->srcs);
  free(r->noreturn);
  free(r->flows);
  free(r->wraps);
  free(r->wrappers);
  r->fns = NULL, r->srcs = NULL, r->noreturn = NULL, r->flows = NULL, r->wraps = NULL, r->wrappers = NULL;
  r->nfns = r->nsrcs = r->nnoreturn = r->nflows = r->nwraps = 0;
}

/* Appends the strings of root's array `key` (absent: none) to *v, in the arena: no owner frees
 * them; -1 with the error reported when it is no array of non-empty strings */
static int str_list(ls_arena *a, struct ctx *c, const cJSON *root, const char *key, const char ***v, int *n) {
  const cJSON *al = cJSON_GetObjectItemCaseSensitive(root, key), *it;
  c->key[0] = 0;
  if (al && !cJSON_IsArray(al)) {
    char m[128];
    snprintf(m, sizeof m, "\"%s\" must be an array of strings", key);
    fail(c, m);
    return -1;
  }
  int i = 0;
  cJSON_ArrayForEach(it, al) {
    snprintf(c->key, sizeof c->key, "%s[%d]", key, i++);
    if (!cJSON_IsString(it) || !it->valuestring[0]) {
      fail(c, "must be a non-empty string");
      return -1;
    }
    const char **na = ls_alloc(a, (size_t)(*n + 1) * sizeof *na);
    for (int k = 0; k < *n; k++)
      na[k] = (*v)[k];
    na[*n] = ls_strdup(a, it->valuestring);
    *v = na;
    (*n)++;
  }
  return 0;
}

/* `derived_dtypes`: {untyped?: [NAME...]} (SCHEMA.md); the file's functions get the names of
 * its enums.dtype that are not untyped as their basic datatypes. */
static int load_derived_dtypes(ls_rules *r, ls_arena *a, struct ctx *c, const cJSON *root, const ls_rules_file *f,
                               int first_fn) {
  const cJSON *dd = cJSON_GetObjectItemCaseSensitive(root, "derived_dtypes");
  if (!dd)
    return 0;
  snprintf(c->key, sizeof c->key, "derived_dtypes");
  const cJSON *un = cJSON_IsObject(dd) ? cJSON_GetObjectItemCaseSensitive(dd, "untyped") : NULL;
  if (!cJSON_IsObject(dd) || (un && !cJSON_IsArray(un))) {
    fail(c, "must be an object {untyped?: [datatype names]}");
    return -1;
  }
  const ls_rule_enums *e = NULL;
  for (int i = 0; i < f->nenums && !e; i++)
    if (!strcmp(f->enums[i].name, "dtype"))
      e = &f->enums[i];
  if (!e) {
    fail(c, "needs \"enums\".\"dtype\": the predefined datatypes");
    return -1;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, un) {
    int known = 0;
    for (int k = 0; cJSON_IsString(it) && k < e->n; k++)
      known |= !strcmp(e->v[k].name, it->valuestring);
    if (!known) {
      fail(c, "\"untyped\" must hold only names of \"enums\".\"dtype\"");
      return -1;
    }
  }
  const char **v = ls_alloc(a, (size_t)(e->n + 1) * sizeof *v);
  int n = 0;
  for (int k = 0; k < e->n; k++) {
    int skip = 0;
    cJSON_ArrayForEach(it, un) {
      skip |= !strcmp(e->v[k].name, it->valuestring);
    }
    if (!skip)
      v[n++] = e->v[k].name;
  }
  for (int k = first_fn; k < r->nfns; k++) {
    r->fns[k].basic_dtypes = v;
    r->fns[k].nbasic_dtypes = n;
  }
  return 0;
}

int ls_rules_load(ls_rules *r, ls_arena *a, const char *path) {
  struct ctx c = {.path = path, .errs = r->errs ? r->errs : stderr};
  ls_rules_file file = {.path = ls_strdup(a, path)};
  /* one reader for every JSON input: file:line:col on a syntax error */
  cJSON *root = ls_json_load(path, "rules file", c.errs);
  if (!root)
    return -1;
  int rc = -1, err = 0;
  if (!cJSON_IsObject(root)) {
    fail(&c, "top level must be a JSON object");
    goto out;
  }
  const char *api = get_str(&c, root, "api", 0, &err);
  get_str(&c, root, "version", 0, &err);
  if (err)
    goto out;
  api = ls_strdup(a, api ? api : "");
  const char *ipv = get_str(&c, root, "in_place_value", 0, &err);
  if (err)
    goto out;
  ipv = ipv ? ls_strdup(a, ipv) : NULL;
  int first_fn = r->nfns;
  const cJSON *fns = cJSON_GetObjectItemCaseSensitive(root, "functions");
  if (fns && !cJSON_IsArray(fns)) {
    fail(&c, "\"functions\" must be an array");
    goto out;
  }
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, fns) {
    snprintf(c.key, sizeof c.key, "functions[%d]", i++);
    r->fns = grow(r->fns, r->nfns, sizeof *r->fns);
    memset(&r->fns[r->nfns], 0, sizeof r->fns[0]);
    if (load_fn(r, a, &c, it, &r->fns[r->nfns], api))
      goto out;
    r->nfns++;
  }
  for (int k = first_fn; k < r->nfns; k++)
    r->fns[k].in_place_value = ipv;
  static const char *src_keys[2] = {"rank_sources", "uniform_sources"};
  for (int u = 0; u < 2; u++) {
    const cJSON *srcs = cJSON_GetObjectItemCaseSensitive(root, src_keys[u]);
    c.key[0] = 0;
    if (srcs && !cJSON_IsArray(srcs)) {
      char m[64];
      snprintf(m, sizeof m, "\"%s\" must be an array", src_keys[u]);
      fail(&c, m);
      goto out;
    }
    i = 0;
    cJSON_ArrayForEach(it, srcs) {
      snprintf(c.key, sizeof c.key, "%s[%d]", src_keys[u], i++);
      r->srcs = grow(r->srcs, r->nsrcs, sizeof *r->srcs);
      memset(&r->srcs[r->nsrcs], 0, sizeof r->srcs[0]);
      if (load_src(a, &c, it, &r->srcs[r->nsrcs], u))
        goto out;
      r->nsrcs++;
    }
  }
  const cJSON *nr = cJSON_GetObjectItemCaseSensitive(root, "noreturn");
  c.key[0] = 0;
  if (nr && !cJSON_IsArray(nr)) {
    fail(&c, "\"noreturn\" must be an array of strings");
    goto out;
  }
  i = 0;
  cJSON_ArrayForEach(it, nr) {
    snprintf(c.key, sizeof c.key, "noreturn[%d]", i++);
    if (!cJSON_IsString(it) || !it->valuestring[0]) {
      fail(&c, "must be a non-empty string");
      goto out;
    }
    r->noreturn = grow(r->noreturn, r->nnoreturn, sizeof *r->noreturn);
    r->noreturn[r->nnoreturn++] = ls_strdup(a, it->valuestring);
  }
  /* `allocators`: calls whose NULL result means the allocation failed; `assert_handlers`: what
   * a failed assert() calls; `status_prefixes`: names of an API's calls that return its status
   * (lint's errpath.c, all three); `fork_like`: calls that return 0 in a new child process
   * (lint's cfg.c) */
  if (str_list(a, &c, root, "allocators", &r->allocators, &r->nallocators) ||
      str_list(a, &c, root, "assert_handlers", &r->assert_handlers, &r->nassert_handlers) ||
      str_list(a, &c, root, "status_prefixes", &r->status_prefixes, &r->nstatus_prefixes) ||
      str_list(a, &c, root, "fork_like", &r->fork_like, &r->nfork_like))
    goto out;
  /* `pending`: the result that means "not finished yet" (lint's checks/contracts.c); several
   * files may each name one */
  const cJSON *pend = cJSON_GetObjectItemCaseSensitive(root, "pending");
  if (pend) {
    c.key[0] = 0;
    if (!cJSON_IsString(pend) || !pend->valuestring[0]) {
      fail(&c, "\"pending\" must be a non-empty string");
      goto out;
    }
    const char **np = ls_alloc(a, (size_t)(r->npending + 1) * sizeof *np); /* arena: no owner frees it */
    for (int k = 0; k < r->npending; k++)
      np[k] = r->pending[k];
    np[r->npending] = ls_strdup(a, pend->valuestring);
    r->pending = np;
    r->npending++;
  }
  const cJSON *rd = cJSON_GetObjectItemCaseSensitive(root, "root_designators");
  if (rd) {
    snprintf(c.key, sizeof c.key, "root_designators");
    if (!cJSON_IsArray(rd)) {
      fail(&c, "must be an array of strings");
      goto out;
    }
    const char **nd = ls_alloc(a, (size_t)(r->nroot_designators + cJSON_GetArraySize(rd) + 1) * sizeof *nr);
    for (int k = 0; k < r->nroot_designators; k++)
      nd[k] = r->root_designators[k];
    cJSON_ArrayForEach(it, rd) {
      if (!cJSON_IsString(it) || !it->valuestring[0]) {
        fail(&c, "must hold only non-empty strings");
        goto out;
      }
      nd[r->nroot_designators++] = ls_strdup(a, it->valuestring);
    }
    r->root_designators = nd;
  }
  int host = 0;
  if (load_host(r, a, &c, root, &host) || load_flows(r, a, &c, root, &host) || load_wrappers(r, a, &c, root, &host))
    goto out;
  /* `success`: the result that means "done, no error" (lint's checks/nonblocking.c) */
  c.key[0] = 0;
  const char *succ = get_str(&c, root, "success", 0, &err);
  if (err)
    goto out;
  if (succ) {
    const char **ns = ls_alloc(a, (size_t)(r->nsuccess + 1) * sizeof *ns);
    for (int k = 0; k < r->nsuccess; k++)
      ns[k] = r->success[k];
    ns[r->nsuccess] = ls_strdup(a, succ);
    r->success = ns;
    r->nsuccess++;
  }
  /* `nonblocking`: {config_field, value, null_config_inherits?} (SCHEMA.md) */
  const cJSON *nb = cJSON_GetObjectItemCaseSensitive(root, "nonblocking");
  if (nb) {
    snprintf(c.key, sizeof c.key, "nonblocking");
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(nb, "value");
    const cJSON *inh = cJSON_GetObjectItemCaseSensitive(nb, "null_config_inherits");
    const cJSON *psc = cJSON_GetObjectItemCaseSensitive(nb, "parent_settles_child");
    const char *field = cJSON_IsObject(nb) ? get_str(&c, nb, "config_field", 1, &err) : NULL;
    if (!cJSON_IsObject(nb)) {
      fail(&c, "must be an object {config_field, value, null_config_inherits?}");
      goto out;
    }
    if (err)
      goto out;
    if (!cJSON_IsNumber(val) || val->valuedouble != (double)(long long)val->valuedouble) {
      fail(&c, "\"value\" must be an integer");
      goto out;
    }
    if (inh && !cJSON_IsBool(inh)) {
      fail(&c, "\"null_config_inherits\" must be true or false");
      goto out;
    }
    if (psc && !cJSON_IsBool(psc)) {
      fail(&c, "\"parent_settles_child\" must be true or false");
      goto out;
    }
    r->nb_field = ls_strdup(a, field);
    r->nb_parent_settles = cJSON_IsTrue(psc);
    r->nb_value = (long long)val->valuedouble;
    r->nb_null_inherits = cJSON_IsTrue(inh);
    r->nb_success = succ ? ls_strdup(a, succ) : NULL;
    r->nb_pending = pend && cJSON_IsString(pend) ? ls_strdup(a, pend->valuestring) : NULL;
  }
  const cJSON *en = cJSON_GetObjectItemCaseSensitive(root, "enums");
  if (en && load_enums(a, &c, en, &file))
    goto out;
  if (load_derived_dtypes(r, a, &c, root, &file, first_fn))
    goto out;
  if (!fns && !r->nsrcs && !r->nnoreturn && !host && !cJSON_GetObjectItemCaseSensitive(root, "allocators")) {
    c.key[0] = 0;
    fail(&c, "no \"functions\", \"rank_sources\", \"noreturn\" or \"wrappers\": not a lockstep rules file");
    goto out;
  }
  file.api = api;
  file.success = succ ? ls_strdup(a, succ) : NULL;
  file.pending = pend && cJSON_IsString(pend) ? ls_strdup(a, pend->valuestring) : NULL;
  ls_rules_file *nf = ls_alloc(a, (size_t)(r->nfiles + 1) * sizeof *nf); /* arena: no owner frees it */
  for (int k = 0; k < r->nfiles; k++)
    nf[k] = r->files[k];
  nf[r->nfiles] = file;
  r->files = nf;
  r->nfiles++;
  rc = 0;
out:
  cJSON_Delete(root);
  return rc;
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

int ls_rules_load_dir(ls_rules *r, ls_arena *a, const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  ls_vec names = {0};
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 5 && !strcmp(e->d_name + n - 5, ".json")) {
      char *p = ls_alloc(a, strlen(dir) + n + 2);
      sprintf(p, "%s/%s", dir, e->d_name);
      ls_vec_push(&names, p);
    }
  }
  closedir(d);
  int rc = names.n ? 0 : -1;
  if (names.n)
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
  for (size_t i = 0; i < names.n && !rc; i++)
    rc = ls_rules_load(r, a, names.v[i]);
  free(names.v);
  return rc;
}

const ls_rule_fn *ls_rules_fn(const ls_rules *r, const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < r->nfns; i++) /* the first letter first: most names differ there */
    if (r->fns[i].name[0] == name[0] && !strcmp(r->fns[i].name, name))
      return &r->fns[i];
  for (int i = 0; i < r->nwraps; i++)
    if (r->wrappers[i].as && !strcmp(r->wrappers[i].name, name))
      return &r->wrappers[i];
  return NULL;
}

const ls_rule_flow *ls_rules_flow(const ls_rules *r, const char *name) {
  for (int i = 0; name && i < r->nflows; i++)
    if (r->flows[i].call[0] == name[0] && !strcmp(r->flows[i].call, name))
      return &r->flows[i];
  return NULL;
}

int ls_rules_noreturn(const ls_rules *r, const char *name) {
  if (!name)
    return 0;
  for (int i = 0; i < r->nnoreturn; i++)
    if (!strcmp(r->noreturn[i], name))
      return 1;
  return 0;
}

const ls_rules_file *ls_rules_file_of(const ls_rules *r, const char *api) {
  for (int i = 0; i < r->nfiles; i++)
    if (!strcmp(r->files[i].api, api))
      return &r->files[i];
  return NULL;
}

static const ls_rule_enums *enums_of(const ls_rules_file *f, const char *group) {
  for (int i = 0; f && i < f->nenums; i++)
    if (!strcmp(f->enums[i].name, group))
      return &f->enums[i];
  return NULL;
}

int ls_rules_enum_value(const ls_rules_file *f, const char *group, const char *name, long long *v) {
  const ls_rule_enums *e = enums_of(f, group);
  for (int i = 0; e && name && i < e->n; i++)
    if (!strcmp(e->v[i].name, name)) {
      *v = e->v[i].value;
      return 1;
    }
  return 0;
}

const char *ls_rules_enum_name(const ls_rules_file *f, const char *group, long long v) {
  const ls_rule_enums *e = enums_of(f, group);
  for (int i = 0; e && i < e->n; i++)
    if (e->v[i].value == v)
      return e->v[i].name;
  return NULL;
}

/* Where the build was configured (rules/CMakeLists.txt); empty in other builds. */
#ifndef LOCKSTEP_RULES_DIR_BUILD
#define LOCKSTEP_RULES_DIR_BUILD ""
#endif
#ifndef LOCKSTEP_RULES_DIR_INSTALL
#define LOCKSTEP_RULES_DIR_INSTALL ""
#endif

const char *ls_rules_dir_default(void) {
  const char *env = getenv("LOCKSTEP_RULES_DIR");
  if (ls_is_dir(env))
    return env;
  const char *d = ls_data_dir("rules", LOCKSTEP_RULES_DIR_BUILD, LOCKSTEP_RULES_DIR_INSTALL);
  return d ? d : LOCKSTEP_RULES_DIR_INSTALL;
}

void ls_rules_dir_configured(const char **build, const char **install) {
  *build = LOCKSTEP_RULES_DIR_BUILD;
  *install = LOCKSTEP_RULES_DIR_INSTALL;
}

