/* ls_gen.c — build-time generator of liblockstep's wrappers from a rules table
 * (rules/nccl.json now, rules/mpi.json later): one exported wrapper per function,
 * the family's api table, and its registration. The table is the only description
 * of an entry point; no wrapper is written by hand.
 *
 *   ls_gen --rules FILE --family NCCL|MPI --hooks PREFIX --soname LIB
 *          [--real-prefix P] [--missing-rc EXPR] [--include H]... [--role-macros] -o OUT.c
 *
 * Each wrapper resolves the real function lazily once (dlsym(RTLD_NEXT, real-prefix +
 * name), then LIB if it was loaded RTLD_LOCAL), fills `struct ls_args` by role and
 * calls PREFIX_pre / the real function / PREFIX_post (recorder.h). Host tool only:
 * it links cJSON, liblockstep does not. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_rules_path;

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ls_gen: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("%s: cannot open", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  if (n < 0)
    die("%s: cannot read", path);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
    die("%s: cannot read", path);
  buf[n] = 0;
  fclose(f);
  return buf;
}

struct kindmap {
  const char *json, *kind, *sub;
};
static const struct kindmap kinds[] = {
    {"collective", "LS_KIND_COLLECTIVE", "LS_SUB_NONE"},
    {"p2p", "LS_KIND_P2P", "LS_SUB_NONE"},
    {"group_start", "LS_KIND_GROUP_START", "LS_SUB_NONE"},
    {"group_end", "LS_KIND_GROUP_END", "LS_SUB_NONE"},
    {"unique_id", "LS_KIND_UNIQUE_ID", "LS_SUB_NONE"},
    {"comm_init", "LS_KIND_COMM_INIT", "LS_SUB_NONE"},
    {"comm_init_all", "LS_KIND_COMM_INIT", "LS_SUB_INIT_ALL"},
    {"comm_split", "LS_KIND_COMM_SPLIT", "LS_SUB_NONE"},
    {"comm_finalize", "LS_KIND_COMM_FINALIZE", "LS_SUB_NONE"},
    {"comm_destroy", "LS_KIND_COMM_DESTROY", "LS_SUB_NONE"},
    {"comm_abort", "LS_KIND_COMM_ABORT", "LS_SUB_NONE"},
    {"comm_revoke", "LS_KIND_OTHER", "LS_SUB_REVOKE"},
    {"async_error_query", "LS_KIND_ASYNC_ERROR_QUERY", "LS_SUB_NONE"},
    {"size_query", "LS_KIND_SIZE_QUERY", "LS_SUB_NONE"},
    {"rank_query", "LS_KIND_RANK_QUERY", "LS_SUB_NONE"},
    {"wait", "LS_KIND_WAIT", "LS_SUB_NONE"},
    /* MPI creation calls: splits of the parent in the trace; the MPI hooks header
     * defines these refinements (runtime/mpi/mpi_hooks.h) */
    {"comm_dup", "LS_KIND_COMM_SPLIT", "LS_SUB_DUP"},
    {"comm_create", "LS_KIND_COMM_SPLIT", "LS_SUB_CREATE"},
};

/* role -> assignment into struct ls_args (%s is the argument name). */
struct rolemap {
  const char *role, *lhs, *pre, *post; /* lhs = pre NAME post; */
};
static const struct rolemap roles[] = {
    {"count", "c.args.count", "LS_I64(", ")"},
    {"dtype", "c.args.dtype", "LS_I64(", ")"},
    {"redop", "c.args.redop", "LS_I64(", ")"},
    {"root", "c.args.root", "LS_I64(", ")"},
    {"peer", "c.args.peer", "LS_I64(", ")"},
    {"nranks", "c.args.nranks", "LS_I64(", ")"},
    {"rank", "c.args.rank", "LS_I64(", ")"},
    {"color", "c.args.color", "LS_I64(", ")"},
    {"key", "c.args.key", "LS_I64(", ")"},
    {"exclude_count", "c.args.exclude_count", "LS_I64(", ")"},
    {"unique_id_count", "c.args.nid", "LS_I64(", ")"},
    {"comm", "c.args.comm", "(const void *)(intptr_t)(", ")"},
    {"out_comm", "c.args.out_comm", "(void *)(", ")"},
    {"out_comm_array", "c.args.out_comm", "(void *)(", ")"},
    {"unique_id", "c.args.unique_id", "(const void *)&(", ")"},
    {"unique_id_array", "c.args.unique_id", "(const void *)(", ")"},
    {"exclude_ranks", "c.args.exclude_ranks", "(const void *)(", ")"},
    {"out_async_state", "c.args.out_async_state", "(void *)(", ")"},
    {"config", "c.args.config", "(const void *)(", ")"},
    {"stream", "c.args.stream", "(uint64_t)(uintptr_t)(", ")"},
    {"request", "c.args.request", "LS_I64(", ")"},
};

static const char *str_of(cJSON *o, const char *key, const char *fn) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(v))
    die("%s: function %s lacks a string field", g_rules_path, fn ? fn : key);
  return v->valuestring;
}

/* "int[][3]" + "ranges" -> "int ranges[][3]"; "void*" + "p" -> "void* p". */
static void print_decl(FILE *o, const char *type, const char *name) {
  const char *br = strchr(type, '[');
  if (br)
    fprintf(o, "%.*s %s%s", (int)(br - type), type, name, br);
  else
    fprintf(o, "%s %s", type, name);
}

static void print_params(FILE *o, cJSON *args) {
  int n = cJSON_GetArraySize(args);
  if (n == 0) {
    fputs("void", o);
    return;
  }
  for (int i = 0; i < n; i++) {
    cJSON *a = cJSON_GetArrayItem(args, i);
    if (i)
      fputs(", ", o);
    print_decl(o, str_of(a, "type", NULL), str_of(a, "name", NULL));
  }
}

static void print_call_args(FILE *o, cJSON *args) {
  int n = cJSON_GetArraySize(args);
  for (int i = 0; i < n; i++)
    fprintf(o, "%s%s", i ? ", " : "", str_of(cJSON_GetArrayItem(args, i), "name", NULL));
}

/* --role-macros (MPI): roles struct ls_args has no field for go to
 * LS_ROLE_<role>(&c, arg), and a function's "in_place" to LS_IN_PLACE(buf), each
 * only where the included hooks header defines the macro. */
static void emit_role_macros(FILE *o, cJSON *f, cJSON *args, const char *name) {
  int na = cJSON_GetArraySize(args);
  for (int j = 0; j < na; j++) {
    cJSON *a = cJSON_GetArrayItem(args, j);
    cJSON *role = cJSON_GetObjectItemCaseSensitive(a, "role");
    if (!cJSON_IsString(role))
      continue;
    int known = 0;
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++)
      known |= !strcmp(roles[r].role, role->valuestring);
    if (!known)
      fprintf(o, "#ifdef LS_ROLE_%s\n  LS_ROLE_%s(&c, %s);\n#endif\n", role->valuestring,
              role->valuestring, str_of(a, "name", NULL));
  }
  cJSON *ip = cJSON_GetObjectItemCaseSensitive(f, "in_place");
  if (!cJSON_IsObject(ip))
    return;
  cJSON *buf = cJSON_GetObjectItemCaseSensitive(ip, "buffer");
  cJSON *cnt = cJSON_GetObjectItemCaseSensitive(ip, "count");
  cJSON *dt = cJSON_GetObjectItemCaseSensitive(ip, "dtype");
  if (!cJSON_IsString(buf))
    die("%s: function %s: \"in_place\" lacks \"buffer\"", g_rules_path, name);
  fprintf(o, "#ifdef LS_IN_PLACE\n  if (LS_IN_PLACE(%s)) {\n", buf->valuestring);
  if (cJSON_IsString(cnt))
    fprintf(o, "    c.args.count = LS_I64(%s);\n", cnt->valuestring);
  if (cJSON_IsString(dt))
    fprintf(o, "    c.args.dtype = LS_I64(%s);\n", dt->valuestring);
  fprintf(o, "  }\n#endif\n");
}

int main(int argc, char **argv) {
  const char *rules = NULL, *family = NULL, *hooks = NULL, *soname = NULL, *out = NULL;
  const char *real_prefix = "", *missing_rc = "0";
  const char *includes[16];
  int nincludes = 0;
  int role_macros = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--role-macros")) { /* a flag, no value */
      role_macros = 1;
      continue;
    }
    if (!v)
      die("option %s needs a value", a);
    if (!strcmp(a, "--rules"))
      rules = v;
    else if (!strcmp(a, "--family"))
      family = v;
    else if (!strcmp(a, "--hooks"))
      hooks = v;
    else if (!strcmp(a, "--soname"))
      soname = v;
    else if (!strcmp(a, "--real-prefix"))
      real_prefix = v;
    else if (!strcmp(a, "--missing-rc"))
      missing_rc = v;
    else if (!strcmp(a, "--include") && nincludes < 16)
      includes[nincludes++] = v;
    else if (!strcmp(a, "-o"))
      out = v;
    else
      die("unknown option %s", a);
    i++;
  }
  if (!rules || !family || !hooks || !soname || !out)
    die("usage: ls_gen --rules FILE --family NAME --hooks PREFIX --soname LIB -o OUT.c");
  g_rules_path = rules;
  char *text = slurp(rules);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    int line = 1, col = 1;
    for (const char *p = text; end && p < end; p++, col++)
      if (*p == '\n')
        line++, col = 0;
    fprintf(stderr, "%s:%d:%d: error: invalid JSON\n", rules, line, col);
    return 2;
  }
  cJSON *fns = cJSON_GetObjectItemCaseSensitive(root, "functions");
  if (!cJSON_IsArray(fns))
    die("%s: no \"functions\" array%s", rules, "");

  FILE *o = fopen(out, "w");
  if (!o)
    die("%s: cannot write", out);
  fprintf(o, "/* Generated by runtime/gen/ls_gen from %s — do not edit; edit the rules. */\n", rules);
  fprintf(o, "#include <stdint.h>\n#include <stddef.h>\n#include \"recorder.h\"\n");
  for (int i = 0; i < nincludes; i++)
    fprintf(o, "#include \"%s\"\n", includes[i]);

  /* api table */
  fprintf(o, "\nstatic const struct ls_api_desc %s_apis[] = {\n", hooks);
  int n = cJSON_GetArraySize(fns);
  for (int i = 0; i < n; i++) {
    cJSON *f = cJSON_GetArrayItem(fns, i);
    const char *name = str_of(f, "name", NULL);
    const char *kind = str_of(f, "kind", name);
    cJSON *op = cJSON_GetObjectItemCaseSensitive(f, "op");
    const struct kindmap *k = NULL;
    for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++)
      if (!strcmp(kinds[j].json, kind))
        k = &kinds[j];
    const char *sub = k ? k->sub : "LS_SUB_NONE";
    if (!strcmp(name, "ncclCommShrink"))
      sub = "LS_SUB_SHRINK"; /* refinements the schema has no kind for */
    else if (!strcmp(name, "ncclCommInitRankScalable"))
      sub = "LS_SUB_SCALABLE";
    else if (!strcmp(name, "ncclGroupSimulateEnd"))
      sub = "LS_SUB_SIMULATE";
    else if (!strcmp(kind, "comm_create") &&
             !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "collective")))
      sub = "LS_SUB_CREATE_GROUP"; /* called by the new group's members only */
    if (cJSON_IsString(op))
      fprintf(o, "  {\"%s\", \"%s\", %s, %s},\n", name, op->valuestring, k ? k->kind : "LS_KIND_OTHER", sub);
    else
      fprintf(o, "  {\"%s\", NULL, %s, %s},\n", name, k ? k->kind : "LS_KIND_OTHER", sub);
  }
  fprintf(o, "};\n\nstatic uint16_t %s_base = LS_API_UNREGISTERED;\n", hooks);
  fprintf(o, "__attribute__((constructor)) static void %s_register(void) {\n"
             "  %s_base = ls_api_register(%s_apis, %d, LS_FAMILY_%s);\n}\n",
          hooks, hooks, hooks, n, family);

  for (int i = 0; i < n; i++) {
    cJSON *f = cJSON_GetArrayItem(fns, i);
    const char *name = str_of(f, "name", NULL);
    const char *ret = str_of(f, "returns", name);
    cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "args");
    if (!cJSON_IsArray(args))
      die("%s: function %s has no args array", rules, name);
    fprintf(o, "\ntypedef %s (*ls_fn_%s_t)(", ret, name);
    print_params(o, args);
    fprintf(o, ");\nstatic void *volatile ls_real_%s;\nLS_EXPORT %s %s(", name, ret, name);
    print_params(o, args);
    fprintf(o, ");\nLS_EXPORT %s %s(", ret, name);
    print_params(o, args);
    fprintf(o, ") {\n  ls_fn_%s_t fn = (ls_fn_%s_t)__atomic_load_n(&ls_real_%s, __ATOMIC_ACQUIRE);\n",
            name, name, name);
    fprintf(o, "  if (__builtin_expect(!fn, 0)) {\n"
               "    fn = (ls_fn_%s_t)ls_real_lookup(&ls_real_%s, \"%s%s\", \"%s\");\n"
               "    if (!fn)\n      return %s;\n  }\n",
            name, name, real_prefix, name, soname, missing_rc);
    fprintf(o, "  struct ls_call c;\n  uint16_t api = %s_base;\n"
               "  if (api != LS_API_UNREGISTERED)\n    api = (uint16_t)(api + %d);\n"
               "  if (!ls_call_begin(&c, api, __builtin_return_address(0)))\n    return fn(",
            hooks, i);
    print_call_args(o, args);
    fprintf(o, ");\n");
    int na = cJSON_GetArraySize(args);
    for (int j = 0; j < na; j++) {
      cJSON *a = cJSON_GetArrayItem(args, j);
      cJSON *role = cJSON_GetObjectItemCaseSensitive(a, "role");
      if (!cJSON_IsString(role))
        continue;
      for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++)
        if (!strcmp(roles[r].role, role->valuestring)) {
          fprintf(o, "  %s = %s%s%s;\n", roles[r].lhs, roles[r].pre, str_of(a, "name", NULL),
                  roles[r].post);
        }
    }
    if (role_macros)
      emit_role_macros(o, f, args, name);
    fprintf(o, "  %s_pre(&c);\n  %s rc = fn(", hooks, ret);
    print_call_args(o, args);
    fprintf(o, ");\n  c.t_exit = ls_now_ns();\n  %s_post(&c, LS_I64(rc));\n  return rc;\n}\n", hooks);
  }
  if (fclose(o))
    die("%s: write failed", out);
  cJSON_Delete(root);
  free(text);
  return 0;
}
