/* ls_gen.c — build-time generator of liblockstep's wrappers from a rules table
 * (rules/nccl.json, rules/mpi.json): one exported wrapper per function,
 * the family's api table, and its registration. The table is the only description
 * of an entry point; no wrapper is written by hand.
 *
 *   ls_gen --rules FILE --family NCCL|MPI --hooks PREFIX --soname LIB
 *          [--real-prefix P] [--missing-rc EXPR] [--include H]... [--role-macros] -o OUT.c
 *
 * Each wrapper resolves the real function lazily once (dlsym(RTLD_NEXT, real-prefix +
 * name), then LIB if it was loaded RTLD_LOCAL), fills `struct ls_args` by role and
 * calls PREFIX_pre / the real function / PREFIX_post (recorder.h); NCCL's collectives, p2p
 * calls and group brackets pass their values to ls_call_plain instead, which writes the
 * record from them (the calls a training loop makes). The table comes from the
 * rules library (rules/rules.h: kinds, roles and their struct ls_args fields, variants).
 * Host tool only: it links the library and cJSON, liblockstep does not. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static const char *g_rules_path;

/* The rules' `enums` group WHICH (name -> number) of the loaded file as a C array of
 * struct ls_enum_name; returns its length (0: none). */
static int emit_enum_names(FILE *o, const ls_rules *r, const char *hooks, const char *which) {
  int n = 0;
  fprintf(o, "static const struct ls_enum_name %s_%s_names[] = {\n", hooks, which);
  for (int f = 0; f < r->nfiles; f++)
    for (int g = 0; g < r->files[f].nenums; g++) {
      const ls_rule_enums *e = &r->files[f].enums[g];
      if (!e->name || strcmp(e->name, which))
        continue;
      for (int k = 0; k < e->n; k++, n++)
        fprintf(o, "  {\"%s\", %lldLL},\n", e->v[k].name, e->v[k].value);
    }
  if (!n)
    fprintf(o, "  {NULL, 0},\n");
  fprintf(o, "};\n");
  return n;
}

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ls_gen: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

/* "int[][3]" + "ranges" -> "int ranges[][3]"; "void*" + "p" -> "void* p". */
static void print_decl(FILE *o, const char *type, const char *name) {
  const char *br = strchr(type, '[');
  if (br)
    fprintf(o, "%.*s %s%s", (int)(br - type), type, name, br);
  else
    fprintf(o, "%s %s", type, name);
}

static void print_params(FILE *o, const ls_rule_fn *f) {
  if (f->nargs == 0) {
    fputs("void", o);
    return;
  }
  for (int i = 0; i < f->nargs; i++) {
    if (i)
      fputs(", ", o);
    print_decl(o, f->args[i].type, f->args[i].name);
  }
}

static void print_call_args(FILE *o, const ls_rule_fn *f) {
  for (int i = 0; i < f->nargs; i++)
    fprintf(o, "%s%s", i ? ", " : "", f->args[i].name);
}

/* --role-macros (MPI): roles struct ls_args has no field for go to
 * LS_ROLE_<role>(&c, arg), and a function's "in_place" to LS_IN_PLACE(buf), each
 * only where the included hooks header defines the macro. */
static void emit_role_macros(FILE *o, const ls_rule_fn *f) {
  for (int j = 0; j < f->nargs; j++) {
    const ls_role_info *ri = ls_role_info_of(f->roles[j]);
    if (f->args[j].role_name && !(ri && ri->field))
      fprintf(o, "#ifdef LS_ROLE_%s\n  LS_ROLE_%s(&c, %s);\n#endif\n", f->args[j].role_name,
              f->args[j].role_name, f->args[j].name);
  }
  if (f->in_place_buf < 0)
    return;
  fprintf(o, "#ifdef LS_IN_PLACE\n  if (LS_IN_PLACE(%s)) {\n", f->args[f->in_place_buf].name);
  if (f->in_place_count >= 0)
    fprintf(o, "    c.args.count = LS_I64(%s);\n", f->args[f->in_place_count].name);
  if (f->in_place_dtype >= 0)
    fprintf(o, "    c.args.dtype = LS_I64(%s);\n", f->args[f->in_place_dtype].name);
  fprintf(o, "  }\n#endif\n");
}

/* The argument expression of the role field `field` for function f, or NULL. */
static const char *plain_value(const ls_rule_fn *f, const char *field, char *buf, size_t n) {
  for (int j = 0; j < f->nargs; j++) {
    const ls_role_info *ri = ls_role_info_of(f->roles[j]);
    if (ri && ri->field && !strcmp(ri->field, field)) {
      snprintf(buf, n, "%s%s%s", ri->before, f->args[j].name, ri->after);
      return buf;
    }
  }
  return NULL;
}

/* A function whose record holds only what ls_call_plain takes (recorder.h): NCCL's
 * collectives, p2p calls and group brackets, with no role field besides those. */
static int is_plain(const ls_rule_fn *f, const char *family, int role_macros) {
  if (strcmp(family, "NCCL") || role_macros ||
      (f->kind != LS_KIND_COLLECTIVE && f->kind != LS_KIND_P2P && f->kind != LS_KIND_GROUP_START &&
       f->kind != LS_KIND_GROUP_END))
    return 0;
  static const char *const fields[] = {"comm", "stream", "count", "dtype", "redop", "root", "peer"};
  for (int j = 0; j < f->nargs; j++) {
    const ls_role_info *ri = ls_role_info_of(f->roles[j]);
    if (!ri || !ri->field) /* a buffer: not recorded (roles without a field, NCCL has no macros) */
      continue;
    int known = 0;
    for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
      known |= !strcmp(ri->field, fields[k]);
    if (!known)
      return 0;
  }
  return 1;
}

/* The plain wrapper's entry: ls_call_plain with each field's argument or its default. */
static void emit_plain_entry(FILE *o, const ls_rule_fn *f) {
  char b[6][256];
  const char *comm = plain_value(f, "comm", b[0], sizeof b[0]);
  const char *stream = plain_value(f, "stream", b[1], sizeof b[1]);
  const char *count = plain_value(f, "count", b[2], sizeof b[2]);
  const char *dtype = plain_value(f, "dtype", b[3], sizeof b[3]);
  const char *redop = plain_value(f, "redop", b[4], sizeof b[4]);
  const char *rp = plain_value(f, f->kind == LS_KIND_P2P ? "peer" : "root", b[5], sizeof b[5]);
  fprintf(o,
          "  if (!ls_call_plain(&c, api, __builtin_return_address(0), __builtin_frame_address(0),\n"
          "                     %s, %s, %s, %s, %s, %s))\n    return fn(",
          comm ? comm : "NULL", stream ? stream : "0", count ? count : "0", dtype ? dtype : "LS_NO_VALUE",
          redop ? redop : "LS_NO_VALUE", rp ? rp : "LS_NO_VALUE");
}

/* LS_SUB_<variant in upper case>, the recorder's name of the refinement. */
static void print_sub(FILE *o, const char *variant) {
  fputs("LS_SUB_", o);
  for (const char *p = variant ? variant : "none"; *p; p++)
    fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, o);
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
  ls_arena *arena = ls_arena_new();
  ls_rules r;
  memset(&r, 0, sizeof r);
  if (ls_rules_load(&r, arena, rules)) /* the library said what is wrong, and where */
    return 2;
  if (!r.nfns)
    die("%s: no \"functions\"", rules);
  /* What a wrapper needs that lint does not: each checked before anything is written. */
  for (int i = 0; i < r.nfns; i++) {
    const ls_rule_fn *f = &r.fns[i];
    if (!f->returns)
      die("%s: function %s lacks \"returns\"", g_rules_path, f->name);
    if (!f->args)
      die("%s: function %s has no args array", rules, f->name);
    for (int j = 0; j < f->nargs; j++)
      if (!f->args[j].name || !f->args[j].type)
        die("%s: function %s: args[%d] lacks \"name\" or \"type\"", g_rules_path, f->name, j);
  }

  FILE *o = fopen(out, "w");
  if (!o)
    die("%s: cannot write", out);
  fprintf(o, "/* Generated by runtime/gen/ls_gen from %s — do not edit; edit the rules. */\n", rules);
  fprintf(o, "#include <stdint.h>\n#include <stddef.h>\n#include \"recorder.h\"\n");
  for (int i = 0; i < nincludes; i++)
    fprintf(o, "#include \"%s\"\n", includes[i]);

  /* api table */
  fprintf(o, "\nstatic const struct ls_api_desc %s_apis[] = {\n", hooks);
  int n = r.nfns;
  for (int i = 0; i < n; i++) {
    const ls_rule_fn *f = &r.fns[i];
    if (f->op_given)
      fprintf(o, "  {\"%s\", \"%s\", %s, ", f->name, f->op_given, ls_kind_symbol(f->kind));
    else
      fprintf(o, "  {\"%s\", NULL, %s, ", f->name, ls_kind_symbol(f->kind));
    print_sub(o, f->variant);
    fputs("},\n", o);
  }
  fprintf(o, "};\n\n");
  int nd = emit_enum_names(o, &r, hooks, "dtype"), nr = emit_enum_names(o, &r, hooks, "redop");
  fprintf(o, "\nstatic uint16_t %s_base = LS_API_UNREGISTERED;\n", hooks);
  fprintf(o, "__attribute__((constructor)) static void %s_register(void) {\n"
             "  %s_base = ls_api_register(%s_apis, %d, LS_FAMILY_%s);\n"
             "  ls_enum_names_register(LS_FAMILY_%s, %s_dtype_names, %d, %s_redop_names, %d);\n}\n",
          hooks, hooks, hooks, n, family, family, hooks, nd, hooks, nr);

  for (int i = 0; i < n; i++) {
    const ls_rule_fn *f = &r.fns[i];
    const char *name = f->name, *ret = f->returns;
    fprintf(o, "\ntypedef %s (*ls_fn_%s_t)(", ret, name);
    print_params(o, f);
    fprintf(o, ");\nstatic void *volatile ls_real_%s;\nLS_EXPORT %s %s(", name, ret, name);
    print_params(o, f);
    fprintf(o, ");\nLS_EXPORT %s %s(", ret, name);
    print_params(o, f);
    fprintf(o, ") {\n  ls_fn_%s_t fn = (ls_fn_%s_t)__atomic_load_n(&ls_real_%s, __ATOMIC_ACQUIRE);\n",
            name, name, name);
    fprintf(o, "  if (__builtin_expect(!fn, 0)) {\n"
               "    fn = (ls_fn_%s_t)ls_real_lookup(&ls_real_%s, \"%s%s\", \"%s\");\n"
               "    if (!fn)\n      return %s;\n  }\n",
            name, name, real_prefix, name, soname, missing_rc);
    fprintf(o, "  struct ls_call c;\n  uint16_t api = %s_base;\n"
               "  if (api != LS_API_UNREGISTERED)\n    api = (uint16_t)(api + %d);\n",
            hooks, i);
    if (is_plain(f, family, role_macros)) {
      /* the record written from the arguments, no hook before the call */
      emit_plain_entry(o, f);
      print_call_args(o, f);
      fprintf(o, ");\n  %s rc = fn(", ret);
      print_call_args(o, f);
      fprintf(o, ");\n  c.t_exit = ls_now_ns();\n  %s_post(&c, LS_I64(rc));\n  return rc;\n}\n", hooks);
      continue;
    }
    fprintf(o, "  if (!ls_call_begin(&c, api, __builtin_return_address(0)))\n    return fn(");
    print_call_args(o, f);
    /* the wrapper's own frame: the caller walk starts there (callstack.c) */
    fprintf(o, ");\n  c.frame = __builtin_frame_address(0);\n");
    for (int j = 0; j < f->nargs; j++) {
      const ls_role_info *ri = ls_role_info_of(f->roles[j]);
      if (ri && ri->field)
        fprintf(o, "  c.args.%s = %s%s%s;\n", ri->field, ri->before, f->args[j].name, ri->after);
    }
    if (role_macros)
      emit_role_macros(o, f);
    fprintf(o, "  %s_pre(&c);\n  %s rc = fn(", hooks, ret);
    print_call_args(o, f);
    fprintf(o, ");\n  c.t_exit = ls_now_ns();\n  %s_post(&c, LS_I64(rc));\n  return rc;\n}\n", hooks);
  }
  if (fclose(o))
    die("%s: write failed", out);
  ls_rules_release(&r);
  ls_arena_free(arena);
  return 0;
}
