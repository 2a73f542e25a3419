/* program.c — a lint run's program: its arenas, functions and TUs, and the entity table
 * (variables, parameters, fields, functions keyed by USR, open addressing) that lets TUs
 * share what they name. A function entity is matched against the rules once, here. */
#include <stdlib.h>
#include <string.h>

#include "lint.h"

struct ls_enthash {
  ls_entity **slot;
  size_t cap, n;
};

ls_program *ls_program_new(const ls_rules *rules) {
  ls_program *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  p->arena = ls_arena_new();
  p->lines = ls_arena_new();
  p->rules = rules;
  p->ents = calloc(1, sizeof *p->ents);
  if (!p->ents)
    abort();
  p->ents->cap = 4096;
  p->ents->slot = calloc(p->ents->cap, sizeof *p->ents->slot);
  if (!p->ents->slot)
    abort();
  return p;
}

void ls_program_free(ls_program *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->tus.n; i++) {
    free(((ls_tu_info *)p->tus.v[i])->errors.v);
    free(((ls_tu_info *)p->tus.v[i])->skipped.v);
  }
  free(p->funcs.v);
  free(p->tus.v);
  free(p->fpcalls.v);
  free(p->ents->slot);
  free(p->ents);
  ls_arena_free(p->arena);
  ls_arena_free(p->lines);
  free(p);
}

int ls_usr_has_scopes(const char *usr, const char *qname, size_t len) {
  const char *u = usr, *stop = qname + len;
  for (const char *q = qname; q < stop;) {
    const char *end = strstr(q, "::");
    if (!end || end > stop)
      end = stop;
    size_t n = (size_t)(end - q);
    const char *hit = strchr(u, '@');
    while (hit && (strncmp(hit + 1, q, n) || hit[n + 1] != '@'))
      hit = strchr(hit + 1, '@');
    if (!hit)
      return 0;
    u = hit + n + 1;
    q = end == stop ? stop : end + 2;
  }
  return 1;
}

const char *ls_qualified_last(const char *qname) {
  const char *last = NULL;
  for (const char *s = strstr(qname, "::"); s; s = strstr(s + 2, "::"))
    last = s + 2;
  return last;
}

/* Does the qualified name of a wrapper ("NcclApi::allReduce", "ns::Comm::bcast") name the
 * function whose USR is usr and whose own name is name? */
static int qualified_is(const char *qname, const char *usr, const char *name) {
  const char *last = ls_qualified_last(qname);
  return last && !strcmp(last, name) && ls_usr_has_scopes(usr, qname, (size_t)(last - 2 - qname));
}

ls_entity *ls_entity_get(ls_program *p, const char *key, const char *name, enum ls_ent_kind kind) {
  struct ls_enthash *h = p->ents;
  if (2 * (h->n + 1) > h->cap) {
    size_t ncap = h->cap * 2;
    ls_entity **ns = calloc(ncap, sizeof *ns);
    if (!ns)
      abort();
    for (size_t i = 0; i < h->cap; i++)
      if (h->slot[i]) {
        size_t j = ls_hash_str(0, h->slot[i]->key) & (ncap - 1);
        while (ns[j])
          j = (j + 1) & (ncap - 1);
        ns[j] = h->slot[i];
      }
    free(h->slot);
    h->slot = ns;
    h->cap = ncap;
  }
  size_t j = ls_hash_str(0, key) & (h->cap - 1);
  while (h->slot[j]) {
    if (!strcmp(h->slot[j]->key, key))
      return h->slot[j];
    j = (j + 1) & (h->cap - 1);
  }
  ls_entity *e = ls_alloc(p->arena, sizeof *e);
  e->key = ls_strdup(p->arena, key);
  e->name = ls_strdup(p->arena, name ? name : key);
  e->kind = kind;
  if (kind == LS_ENT_FUNC) {
    e->rule = ls_rules_fn(p->rules, e->name);
    for (int i = 0; !e->rule && i < p->rules->nwraps; i++) /* a method the project declares a wrapper */
      if (p->rules->wrappers[i].as && qualified_is(p->rules->wrappers[i].name, e->key, e->name))
        e->rule = &p->rules->wrappers[i];
    e->rule_noreturn = ls_rules_noreturn(p->rules, e->name);
    for (int i = 0; i < p->rules->nfork_like; i++)
      e->rule_fork |= !strcmp(p->rules->fork_like[i], e->name);
    e->flow = ls_rules_flow(p->rules, e->name);
    for (int i = 0; i < p->rules->nsrcs; i++) {
      const ls_rule_src *s = &p->rules->srcs[i];
      if (strcmp(s->call, e->name))
        continue;
      e->src |= LS_SRC_ANY;
      if (s->out_arg >= 0)
        e->src |= LS_SRC_OUT;
      if (s->arg >= 0)
        e->src |= LS_SRC_STR;
    }
  }
  h->slot[j] = e;
  h->n++;
  return e;
}
