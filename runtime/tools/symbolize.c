/* symbolize.c — addr2line batches per module with a per-module cache (see
 * symbolize.h). We ask addr2line about pc-1 because a recorded pc is a return
 * address: pc itself may already belong to the next source line. With -i the
 * first frame printed is the innermost one, i.e. where the call is written. */
#include "symbolize.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define LS_SYM_BATCH 256

struct sym_entry {
  uint64_t offset;
  char *file;
  char *function;
  int line;
  int done;
};

struct sym_module {
  char *path;
  struct sym_entry *e;
  size_t n, cap;
  size_t sorted; /* e[0..sorted) is sorted and deduplicated */
  int noted;     /* a note about this module was printed */
};

struct ls_symbolizer {
  struct sym_module *m;
  size_t n, cap;
  int no_addr2line;
  unsigned long resolved, unresolved;
};

struct ls_symbolizer *ls_sym_new(void) { return calloc(1, sizeof(struct ls_symbolizer)); }

void ls_sym_free(struct ls_symbolizer *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->n; i++) {
    for (size_t j = 0; j < s->m[i].n; j++) {
      free(s->m[i].e[j].file);
      free(s->m[i].e[j].function);
    }
    free(s->m[i].e);
    free(s->m[i].path);
  }
  free(s->m);
  free(s);
}

static struct sym_module *module(struct ls_symbolizer *s, const char *path) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->m[i].path, path))
      return &s->m[i];
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->m = ls_xrealloc(s->m, s->cap * sizeof *s->m);
  }
  struct sym_module *m = &s->m[s->n++];
  memset(m, 0, sizeof *m);
  m->path = strdup(path);
  return m;
}

static int cmp_entry(const void *a, const void *b) {
  uint64_t x = ((const struct sym_entry *)a)->offset, y = ((const struct sym_entry *)b)->offset;
  return x < y ? -1 : x > y;
}

static struct sym_entry *find(struct sym_module *m, uint64_t off) {
  struct sym_entry key = {.offset = off};
  return m->sorted ? bsearch(&key, m->e, m->sorted, sizeof *m->e, cmp_entry) : NULL;
}

void ls_sym_want(struct ls_symbolizer *s, const struct ls_trace *t, const struct ls_trace_record *r) {
  ls_sym_want_pc(s, t, r->site_pc);
}

void ls_sym_want_pc(struct ls_symbolizer *s, const struct ls_trace *t, uint64_t pc) {
  const struct ls_trace_module *mod = ls_trace_module_of(t, pc);
  if (!mod)
    return;
  struct sym_module *m = module(s, mod->path);
  uint64_t off = pc - mod->base;
  if (find(m, off))
    return;
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    m->e = ls_xrealloc(m->e, m->cap * sizeof *m->e);
  }
  m->e[m->n++] = (struct sym_entry){.offset = off};
}

/* Sorts and deduplicates the entries, keeping resolved ones. */
static void compact(struct sym_module *m) {
  qsort(m->e, m->n, sizeof *m->e, cmp_entry);
  size_t k = 0;
  for (size_t i = 0; i < m->n; i++) {
    if (k && m->e[k - 1].offset == m->e[i].offset) {
      if (!m->e[k - 1].done && m->e[i].done) {
        struct sym_entry tmp = m->e[k - 1];
        m->e[k - 1] = m->e[i];
        m->e[i] = tmp;
      }
      free(m->e[i].file);
      free(m->e[i].function);
      continue;
    }
    m->e[k++] = m->e[i];
  }
  m->n = m->sorted = k;
}

/* Runs addr2line on entries [from, to) of m; fills them. Returns -1 when
 * addr2line could not be started. */
static int run_batch(struct sym_module *m, size_t from, size_t to) {
  char *argv[LS_SYM_BATCH + 8];
  char addrs[LS_SYM_BATCH][24];
  int a = 0;
  argv[a++] = "addr2line";
  argv[a++] = "-e";
  argv[a++] = m->path;
  argv[a++] = "-a";
  argv[a++] = "-f";
  argv[a++] = "-C";
  argv[a++] = "-i";
  for (size_t i = from; i < to; i++) {
    uint64_t off = m->e[i].offset ? m->e[i].offset - 1 : 0;
    snprintf(addrs[i - from], sizeof addrs[0], "0x%llx", (unsigned long long)off);
    argv[a++] = addrs[i - from];
  }
  argv[a] = NULL;
  int pipefd[2];
  if (pipe(pipefd) != 0)
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, "addr2line", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    return -1;
  }
  FILE *f = fdopen(pipefd[0], "r");
  char line[8192], func[8192];
  size_t cur = from - 1; /* index of the address being read; from-1 = none yet */
  int state = 0;         /* 0: expect address, 1: expect function, 2: expect file:line */
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, "0x", 2) && state != 2) {
      cur++;
      state = 1;
      continue;
    }
    if (cur < from || cur >= to)
      continue;
    if (state == 1) {
      snprintf(func, sizeof func, "%s", line);
      state = 2;
    } else if (state == 2) {
      state = 1;
      struct sym_entry *e = &m->e[cur];
      if (e->done)
        continue; /* a further (outer) inline frame: the innermost is the call */
      e->done = 1;
      char *disc = strstr(line, " (discriminator");
      if (disc)
        *disc = 0;
      char *colon = strrchr(line, ':');
      long lnl = colon ? strtol(colon + 1, NULL, 10) : 0; /* not atoi: no UB on overflow */
      int ln = lnl > 0 && lnl <= INT_MAX ? (int)lnl : 0;
      if (colon && ln > 0 && strncmp(line, "??", 2)) {
        *colon = 0;
        e->file = strdup(line);
        e->line = ln;
      }
      if (strcmp(func, "??"))
        e->function = strdup(func);
    }
  }
  if (f)
    fclose(f);
  else
    close(pipefd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return -1;
  return 0;
}

void ls_sym_run(struct ls_symbolizer *s) {
  for (size_t i = 0; i < s->n; i++) {
    struct sym_module *m = &s->m[i];
    compact(m);
    size_t pending = 0;
    for (size_t j = 0; j < m->n; j++)
      pending += !m->e[j].done;
    if (!pending)
      continue;
    if (access(m->path, R_OK) != 0) {
      if (!m->noted)
        fprintf(stderr, "lockstep: note: %s: not readable here (%s); its call sites are shown as module+offset\n",
                m->path, strerror(errno));
      m->noted = 1;
    } else if (!s->no_addr2line) {
      for (size_t j = 0; j < m->n;) {
        while (j < m->n && m->e[j].done)
          j++;
        size_t k = j;
        while (k < m->n && k - j < LS_SYM_BATCH && !m->e[k].done)
          k++;
        if (j < k && run_batch(m, j, k) != 0) {
          fprintf(stderr, "lockstep: note: addr2line (binutils) is not available; call sites are shown as "
                          "module+offset\n");
          s->no_addr2line = 1;
          break;
        }
        j = k;
      }
    }
    unsigned long ok = 0, bad = 0;
    for (size_t j = 0; j < m->n; j++) {
      if (m->e[j].done == 2)
        continue; /* counted by an earlier run */
      if (m->e[j].file)
        ok++;
      else
        bad++;
      m->e[j].done = 2;
    }
    s->resolved += ok;
    s->unresolved += bad;
    if (!ok && bad && !m->noted && !s->no_addr2line && access(m->path, R_OK) == 0) {
      fprintf(stderr, "lockstep: note: %s: no debug info for its call sites (rebuild with -g to see file:line; "
                      "`lockstep confirm` needs it)\n", m->path);
      m->noted = 1;
    }
  }
}

struct ls_site ls_sym_site(struct ls_symbolizer *s, const struct ls_trace *t, const struct ls_trace_record *r) {
  return ls_sym_pc(s, t, r->site_pc);
}

struct ls_site ls_sym_pc(struct ls_symbolizer *s, const struct ls_trace *t, uint64_t pc) {
  struct ls_site site = {0};
  const struct ls_trace_module *mod = ls_trace_module_of(t, pc);
  if (!mod) {
    site.offset = pc;
    return site;
  }
  site.module = mod->path;
  site.offset = pc - mod->base;
  for (size_t i = 0; i < s->n; i++) {
    if (strcmp(s->m[i].path, mod->path))
      continue;
    struct sym_entry *e = find(&s->m[i], site.offset);
    if (e) {
      site.module = s->m[i].path;
      site.file = e->file;
      site.line = e->line;
      site.function = e->function;
    }
    break;
  }
  return site;
}

void ls_sym_stats(const struct ls_symbolizer *s, unsigned long *resolved, unsigned long *unresolved) {
  *resolved = s->resolved;
  *unresolved = s->unresolved;
}
