/* cdb_flags.c — makes a GCC build's compile_commands.json usable by libclang. Flags clang
 * does not know (`-fstdarg-opt`, `-fdiagnostics-urls=never`) make it refuse the whole TU, so
 * each distinct -f/-m flag is asked once from clang itself (a parse of an empty in-memory
 * file with those flags: its "unknown argument" diagnostics name them) and the unknown ones
 * are dropped with a note. An MPI compiler wrapper (mpicc, mpicxx, ...) adds its include dirs
 * implicitly; the wrapper is asked for them (`--showme:incdirs`, Open MPI; `-show`, MPICH and
 * Intel MPI) once per wrapper, with a deadline, and they are appended as -isystem dirs. */
#include "cdb_flags.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* basenames (prefixes) of MPI compiler wrappers: the only entry compilers lint runs */
static const char *const wrappers[] = {"mpicc", "mpicxx", "mpic++", "mpiCC", "mpiicc", "mpiicpc", "mpiicx",
                                       "mpiicpx", "mpigcc", "mpigxx", "mpiclang", "mpinvc", "mpixlc"};

enum { FLAG_GOOD = 1, FLAG_BAD = 2 };
struct flag { char *s; int state, noted; };
static struct flag *flags;
static size_t nflags, capflags;
struct wrapper { char *compiler; char **dirs; size_t ndirs; };
static struct wrapper *wraps;
static size_t nwraps;
static CXIndex probe_idx;

static struct flag *flag_of(const char *s, int add) {
  for (size_t i = 0; i < nflags; i++)
    if (!strcmp(flags[i].s, s))
      return &flags[i];
  if (!add)
    return NULL;
  if (nflags == capflags) {
    capflags = capflags ? 2 * capflags : 32;
    flags = ls_xrealloc(flags, capflags * sizeof *flags);
  }
  flags[nflags] = (struct flag){strdup(s), 0, 0};
  if (!flags[nflags].s)
    abort();
  return &flags[nflags++];
}

/* -f/-m flags are where GCC and clang differ; everything else is left as it is */
static int probed(const char *a) {
  return (a[0] == '-' && (a[1] == 'f' || a[1] == 'm') && a[2]) && !strchr(a, ' ');
}

/* The flag named in an "unknown argument: '-x'" / "unknown argument '-x'; did you mean"
 * diagnostic, or NULL. */
static const char *unknown_named(const char *msg, char *buf, size_t cap) {
  const char *p = strstr(msg, "unknown argument");
  if (!p || !(p = strchr(p, '\'')))
    return NULL;
  const char *e = strchr(++p, '\'');
  if (!e || (size_t)(e - p) >= cap)
    return NULL;
  memcpy(buf, p, (size_t)(e - p));
  buf[e - p] = 0;
  return buf;
}

/* Parses an empty file with `n` flags; marks those clang calls unknown bad. -1 when clang
 * produced no TU at all (then nothing is marked). */
static int probe(const char *const *argv, int n) {
  if (!probe_idx)
    probe_idx = clang_createIndex(0, 0);
  struct CXUnsavedFile uf = {"/lockstep-flag-probe.c", "", 0};
  CXTranslationUnit tu = NULL;
  if (clang_parseTranslationUnit2(probe_idx, uf.Filename, argv, n, &uf, 1, CXTranslationUnit_Incomplete, &tu) !=
          CXError_Success ||
      !tu)
    return -1;
  unsigned nd = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXString m = clang_getDiagnosticSpelling(d);
    char name[512];
    const char *f = unknown_named(clang_getCString(m), name, sizeof name);
    if (f)
      flag_of(f, 1)->state = FLAG_BAD;
    clang_disposeString(m);
    clang_disposeDiagnostic(d);
  }
  clang_disposeTranslationUnit(tu);
  return 0;
}

/* Runs `prog arg` without a shell; its stdout (heap) when it exits 0 within 10 s, else NULL. */
static char *capture(const char *prog, const char *arg) {
  int fd[2];
  if (pipe(fd))
    return NULL;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return NULL;
  }
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(fd[1], 1);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 2);
    }
    close(fd[0]);
    close(fd[1]);
    execlp(prog, prog, arg, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t len = 0, cap = 4096;
  char *out = malloc(cap);
  if (!out)
    abort();
  time_t deadline = time(NULL) + 10;
  int timed_out = 0;
  for (;;) {
    struct pollfd p = {fd[0], POLLIN, 0};
    int left = (int)(deadline - time(NULL));
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    int r = poll(&p, 1, left * 1000);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    if (len + 1024 > cap) {
      cap *= 2;
      out = ls_xrealloc(out, cap);
    }
    ssize_t k = read(fd[0], out + len, cap - len - 1);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    len += (size_t)k;
  }
  close(fd[0]);
  if (timed_out)
    kill(pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  out[len] = 0;
  if (timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !len) {
    free(out);
    return NULL;
  }
  return out;
}

static void add_dir(struct wrapper *w, const char *d, size_t n) {
  if (!n)
    return;
  w->dirs = ls_xrealloc(w->dirs, (w->ndirs + 1) * sizeof *w->dirs);
  if (!(w->dirs[w->ndirs] = strndup(d, n)))
    abort();
  w->ndirs++;
}

static int is_wrapper(const char *compiler) {
  const char *base = strrchr(compiler, '/');
  base = base ? base + 1 : compiler;
  for (size_t i = 0; i < sizeof wrappers / sizeof *wrappers; i++)
    if (!strncmp(base, wrappers[i], strlen(wrappers[i])))
      return 1;
  return 0;
}

static struct wrapper *wrapper_of(const char *db, const char *compiler) {
  for (size_t i = 0; i < nwraps; i++)
    if (!strcmp(wraps[i].compiler, compiler))
      return &wraps[i];
  wraps = ls_xrealloc(wraps, (nwraps + 1) * sizeof *wraps);
  struct wrapper *w = &wraps[nwraps++];
  *w = (struct wrapper){strdup(compiler), NULL, 0};
  if (!w->compiler)
    abort();
  const char *sep = " \t\r\n";
  char *out = capture(compiler, "--showme:incdirs"); /* Open MPI: the dirs, space-separated */
  if (out) {
    for (char *p = out; *p;) {
      p += strspn(p, sep);
      size_t n = strcspn(p, sep);
      add_dir(w, p, n);
      p += n;
    }
  } else if ((out = capture(compiler, "-show"))) { /* MPICH, Intel MPI: the whole command */
    int next = 0;
    for (char *p = out; *p;) {
      p += strspn(p, sep);
      size_t n = strcspn(p, sep);
      if (next)
        add_dir(w, p, n);
      else if (n > 2 && !strncmp(p, "-I", 2))
        add_dir(w, p + 2, n - 2);
      next = (n == 2 && !strncmp(p, "-I", 2)) || (n == 8 && !strncmp(p, "-isystem", 8));
      p += n;
    }
  }
  free(out);
  if (!w->ndirs)
    fprintf(stderr, "%s: note: the compiler wrapper '%s' did not name its include dirs (--showme:incdirs, -show); "
                    "its implicit headers (mpi.h) may not be found\n", db, compiler);
  return w;
}

void ls_cdb_adjust(ls_arena *a, const char *db, const char *compiler, ls_vec *args) {
  /* flags not asked yet, all at once */
  const char **ask = malloc((args->n + 1) * sizeof *ask);
  if (!ask)
    abort();
  int nask = 0;
  for (size_t i = 0; i < args->n; i++) {
    const char *s = args->v[i];
    if (!probed(s))
      continue;
    struct flag *f = flag_of(s, 1);
    if (!f->state) {
      f->state = -1; /* being asked */
      ask[nask++] = f->s;
    }
  }
  if (nask && probe(ask, nask) < 0)
    for (int i = 0; i < nask; i++) /* no TU at all: ask one flag at a time */
      if (probe(&ask[i], 1) < 0)
        flag_of(ask[i], 1)->state = FLAG_BAD;
  for (int i = 0; i < nask; i++) {
    struct flag *f = flag_of(ask[i], 0);
    if (f && f->state != FLAG_BAD)
      f->state = FLAG_GOOD;
  }
  free(ask);
  size_t j = 0;
  for (size_t i = 0; i < args->n; i++) {
    const char *s = args->v[i];
    struct flag *f = probed(s) ? flag_of(s, 0) : NULL;
    if (f && f->state == FLAG_BAD) {
      if (!f->noted)
        fprintf(stderr, "%s: note: dropping '%s': clang does not know this flag (a GCC-only option?)\n", db, s);
      f->noted = 1;
      continue;
    }
    args->v[j++] = args->v[i];
  }
  args->n = j;
  /* GCC's own warning options would be reported once per TU, and lint reports no warnings */
  ls_vec_push(args, (void *)"-Wno-unknown-warning-option");
  if (compiler && is_wrapper(compiler)) {
    struct wrapper *w = wrapper_of(db, compiler);
    for (size_t i = 0; i < w->ndirs; i++) {
      ls_vec_push(args, (void *)"-isystem");
      ls_vec_push(args, ls_strdup(a, w->dirs[i]));
    }
  }
}

void ls_cdb_done(void) {
  for (size_t i = 0; i < nflags; i++)
    free(flags[i].s);
  free(flags);
  flags = NULL;
  nflags = capflags = 0;
  for (size_t i = 0; i < nwraps; i++) {
    for (size_t k = 0; k < wraps[i].ndirs; k++)
      free(wraps[i].dirs[k]);
    free(wraps[i].dirs);
    free(wraps[i].compiler);
  }
  free(wraps);
  wraps = NULL;
  nwraps = 0;
  if (probe_idx)
    clang_disposeIndex(probe_idx);
  probe_idx = NULL;
}
