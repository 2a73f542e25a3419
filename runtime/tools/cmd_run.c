/* cmd_run.c — `lockstep run`: start a command with liblockstep.so preloaded and the
 * recorder configured through LOCKSTEP_* variables, which launchers (mpirun,
 * torchrun, srun) pass on to every rank they start. The exit code is the command's
 * (128+N when signal N killed it; 127/126 when it cannot be started), or
 * LS_RUN_DIVERGED when the command succeeded although lockstep reported a divergence
 * or a hang, so `run` can stand in front of anything in a script. The command runs in
 * a process group of its own: signals sent to `run` go to the whole group, and what
 * is left of it afterwards is ended. Non-goal: launching ranks itself. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "apidb.h"
#include "commands.h"
#include "compare.h"
#include "data_dir.h"
#include "report.h"
#include "symbolize.h"
#include "trace_read.h"

/* The command exited 0, but the side channel reported a divergence or the watchdog a
 * hang: distinct from the recorder's 86 (policy exit) and 87 (policy end). */
#define LS_RUN_DIVERGED 85
#define LS_END_CODE 87

#define LS_LIB_NAME "liblockstep.so"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lockstep run [--trace-dir DIR] [--timeout SEC] [--policy end|report|abort|exit]\n"
          "                    [--capacity RECORDS] [--] COMMAND [ARG]...\n"
          "\n"
          "Runs COMMAND with liblockstep.so preloaded (prepended to LD_PRELOAD); every\n"
          "process that calls NCCL writes DIR/<host>.<pid>.lstrace (default DIR:\n"
          "./lockstep-traces). Works in front of mpirun/torchrun: children inherit it.\n"
          "\n"
          "  --trace-dir DIR   where traces go (LOCKSTEP_TRACE_DIR), made absolute\n"
          "  --timeout SEC     watchdog timeout in seconds, 0 = never (LOCKSTEP_TIMEOUT, default 60)\n"
          "  --policy P        what a rank does on a hang or a reported divergence\n"
          "                    (LOCKSTEP_POLICY): end (default) reports, and once the side\n"
          "                    channel reported a divergence and the watchdog's timeout\n"
          "                    passed on a call, exits with code 87 (the ranks cannot meet\n"
          "                    again: the launcher ends the job); report only reports;\n"
          "                    abort aborts the communicator; exit ends the rank with 86 at\n"
          "                    the first report\n"
          "  --capacity N      trace records per process (LOCKSTEP_TRACE_CAPACITY, default 1048576)\n"
          "\n"
          "The library is found in $LOCKSTEP_LIB, next to this binary (build tree or\n"
          "install prefix), or in the configured build/install lib directories.\n"
          "SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to `lockstep run` go to the command's\n"
          "process group; whatever of it is still running 2 s after such a signal is killed.\n"
          "Exit code: the command's; 128+N if signal N killed it; 127 if it cannot be\n"
          "started; 85 if it exited 0 but lockstep reported a divergence or a hang (the\n"
          "traces say where: lockstep compare DIR); 2 for a usage error.\n");
}

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* $LOCKSTEP_LIB, then beside the binary (build tree: <bin>/runtime; install:
 * <bin>/../lib[64]), then the configured directories. */
static int find_lib(char *out, size_t cap) {
  const char *env = getenv("LOCKSTEP_LIB");
  if (env && *env) {
    if (!is_file(env)) {
      fprintf(stderr, "lockstep run: LOCKSTEP_LIB=%s: no such file\n", env);
      return -1;
    }
    snprintf(out, cap, "%s", env);
    return 0;
  }
  char exe[PATH_MAX];
  if (ls_exe_dir(exe, sizeof exe) == 0) {
    static const char *const rel[] = {"runtime", "../lib", "../lib64", "../lib/x86_64-linux-gnu"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
      if (snprintf(out, cap, "%s/%s/%s", exe, rel[i], LS_LIB_NAME) < (int)cap && is_file(out)) {
        char real[PATH_MAX];
        if (realpath(out, real))
          snprintf(out, cap, "%s", real);
        return 0;
      }
    }
  }
#ifdef LOCKSTEP_BUILD_LIBDIR
  if (snprintf(out, cap, "%s/%s", LOCKSTEP_BUILD_LIBDIR, LS_LIB_NAME) < (int)cap && is_file(out))
    return 0;
#endif
#ifdef LOCKSTEP_INSTALL_LIBDIR
  if (snprintf(out, cap, "%s/%s", LOCKSTEP_INSTALL_LIBDIR, LS_LIB_NAME) < (int)cap && is_file(out))
    return 0;
#endif
  fprintf(stderr, "lockstep run: cannot find %s (set LOCKSTEP_LIB to its path)\n", LS_LIB_NAME);
  return -1;
}

static int mkdir_p(const char *dir) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0700) && errno != EEXIST)
        return -1;
      *p = '/';
    }
  return mkdir(tmp, 0700) && errno != EEXIST ? -1 : 0;
}

static pid_t g_child;
static volatile sig_atomic_t g_signalled;
static void forward(int sig) {
  g_signalled = sig;
  if (g_child > 0)
    kill(-g_child, sig); /* the launcher and every rank that stayed in its group */
}

/* The command exists and may be executed (execvp's lookup), so a mistyped one leaves no
 * trace directory behind. */
static int runnable(const char *cmd) {
  if (strchr(cmd, '/'))
    return access(cmd, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path || !*path)
    path = "/bin:/usr/bin";
  for (const char *p = path;; p++) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", cmd) < (int)sizeof full &&
        access(full, X_OK) == 0)
      return 1;
    if (!e)
      return 0;
    p = e;
  }
}

/* Traces already in DIR belong to earlier runs: compare would read them with this one. */
static void warn_earlier(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  unsigned n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    n += len > 8 && !strcmp(e->d_name + len - 8, LS_TRACE_FILE_SUFFIX);
  }
  closedir(d);
  if (n)
    fprintf(stderr, "lockstep run: note: %s already holds %u trace%s of an earlier run; `lockstep compare` reads "
                    "every trace of a directory: use a --trace-dir per run\n", dir, n, n == 1 ? "" : "s");
}

/* What the recorder reported in the traces this run wrote (started at or after
 * t0_ns): online divergence reports and watchdog timeouts; mine[] gets their paths. */
static void reported(const char *dir, uint64_t t0_ns, unsigned long *ndiv, unsigned long *nhang, char ***mine,
                     size_t *nmine) {
  *ndiv = *nhang = 0;
  *mine = NULL;
  *nmine = 0;
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len <= 8 || strcmp(e->d_name + len - 8, LS_TRACE_FILE_SUFFIX))
      continue;
    char path[PATH_MAX], err[256];
    struct ls_trace t;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
        ls_trace_load(path, &t, err, sizeof err))
      continue; /* compare names a damaged file; run only counts reports */
    if (t.hdr->t0_realtime_ns + 2000000000ull >= t0_ns) { /* hosts' clocks: 2 s of slack */
      char **grown = realloc(*mine, (*nmine + 1) * sizeof **mine);
      if (grown) {
        *mine = grown;
        (*mine)[(*nmine)++] = strdup(path);
      }
    }
    if (t.hdr->t0_realtime_ns + 2000000000ull >= t0_ns)
      for (uint64_t i = 0; i < t.nrecords; i++) {
        if (t.records[i].state == LS_REC_FREE)
          continue;
        const char *api = ls_trace_api_name(&t, &t.records[i]);
        *ndiv += !strcmp(api, "lockstep_mismatch");
        *nhang += !strcmp(api, "lockstep_watchdog");
      }
    ls_trace_free(&t);
  }
  closedir(d);
}

/* The first divergence of this run's traces, as compare prints it (names, file:line):
 * the ranks' own reports carry raw numbers' names but no symbols (the recorder does not
 * symbolize), so this is where a run's sites get their lines. */
static void first_divergence(char **paths, size_t n) {
  struct ls_trace_set set;
  int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0)
    dup2(null, 2); /* a damaged trace is compare's to name, not run's */
  int bad = ls_trace_set_load(&set, paths, n);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  if (null >= 0)
    close(null);
  if (bad)
    return;
  struct ls_apidb db;
  ls_apidb_load(&db);
  struct ls_compare cmp;
  if (ls_compare_run(&set, &db, &cmp) == 0) {
    if (cmp.ndiv) {
      struct ls_symbolizer *sym = ls_sym_new();
      ls_divergences_want(sym, &cmp);
      ls_sym_run(sym);
      fputs("lockstep run: first divergence:\n", stderr);
      ls_divergence_print(stderr, &db, sym, &cmp.div[0]);
      ls_sym_free(sym);
    }
    ls_compare_free(&cmp);
  }
  ls_apidb_free(&db);
  ls_trace_set_free(&set);
}

/* After a forwarded signal: what is left of the command's group, and the processes that
 * were re-parented to us (we are their subreaper) when their parent died, get SIGTERM,
 * then SIGKILL 2 s later. */
static void end_leftovers(pid_t pgid) {
  for (int round = 0; round < 2; round++) {
    int sig = round ? SIGKILL : SIGTERM, any = kill(-pgid, sig) == 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "r");
    char list[4096];
    size_t got = f ? fread(list, 1, sizeof list - 1, f) : 0;
    list[got] = 0;
    if (f)
      fclose(f);
    for (char *p = list, *end; *p; p = end) {
      long pid = strtol(p, &end, 10);
      if (end == p)
        break;
      if (pid > 1)
        any |= kill((pid_t)pid, sig) == 0;
    }
    for (int k = 0; any && k < 200; k++) { /* reap for up to 2 s */
      while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
      if (kill(-pgid, 0) != 0 && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
        return;
      usleep(10000);
    }
  }
}

/* Option value from "--opt VALUE" or "--opt=VALUE"; advances *i. NULL on a mismatch. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *err) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) // NOLINT(clang-analyzer-core.NonNullParamChecker): argv[i < argc] is never NULL
    return NULL;
  if (argv[*i][n] == '=')
    return argv[*i] + n + 1;
  if (argv[*i][n])
    return NULL;
  if (*i + 1 >= argc) {
    fprintf(stderr, "lockstep run: %s needs a value\n", name);
    *err = 1;
    return NULL;
  }
  return argv[++*i];
}

int ls_cmd_run(int argc, char **argv) {
  const char *dir = "lockstep-traces", *timeout = NULL, *policy = NULL, *capacity = NULL;
  struct timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  int i = 1, err = 0;
  for (; i < argc; i++) {
    const char *v;
    if (!strcmp(argv[i], "--")) {
      i++;
      break;
    }
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if ((v = opt_value(argc, argv, &i, "--trace-dir", &err)))
      dir = v;
    else if ((v = opt_value(argc, argv, &i, "--timeout", &err)))
      timeout = v;
    else if ((v = opt_value(argc, argv, &i, "--policy", &err)))
      policy = v;
    else if ((v = opt_value(argc, argv, &i, "--capacity", &err)))
      capacity = v;
    else if (err)
      return 2;
    else if (argv[i][0] == '-') { // NOLINT(clang-analyzer-core.NullDereference): argv[i < argc] is never NULL
      fprintf(stderr, "lockstep run: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else
      break;
  }
  if (i >= argc) {
    fprintf(stderr, "lockstep run: no command given\n");
    usage(stderr);
    return 2;
  }
  if (timeout) {
    char *end;
    double t = strtod(timeout, &end);
    if (*end || end == timeout || t < 0) {
      fprintf(stderr, "lockstep run: --timeout %s: not a number of seconds\n", timeout);
      return 2;
    }
  }
  if (policy && strcmp(policy, "end") && strcmp(policy, "report") && strcmp(policy, "abort") &&
      strcmp(policy, "exit")) {
    fprintf(stderr, "lockstep run: --policy %s: expected end, report, abort or exit\n", policy);
    return 2;
  }
  if (!runnable(argv[i])) {
    fprintf(stderr, "lockstep run: %s: %s\n", argv[i],
            strchr(argv[i], '/') && access(argv[i], F_OK) == 0 ? "not executable" : "command not found");
    return strchr(argv[i], '/') && access(argv[i], F_OK) == 0 ? 126 : 127;
  }
  if (capacity && strtoull(capacity, NULL, 0) == 0) {
    fprintf(stderr, "lockstep run: --capacity %s: expected a positive number\n", capacity);
    return 2;
  }

  char lib[PATH_MAX];
  if (find_lib(lib, sizeof lib))
    return 2;
  /* Children may chdir (launchers do): the directory must be absolute. */
  char absdir[PATH_MAX];
  if (dir[0] == '/') {
    snprintf(absdir, sizeof absdir, "%s", dir);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) ||
        snprintf(absdir, sizeof absdir, "%s/%s", cwd, dir) >= (int)sizeof absdir) {
      fprintf(stderr, "lockstep run: %s: cannot make the path absolute\n", dir);
      return 2;
    }
  }
  if (mkdir_p(absdir)) {
    fprintf(stderr, "lockstep run: %s: cannot create: %s\n", absdir, strerror(errno));
    return 2;
  }
  warn_earlier(absdir);

  const char *old = getenv("LD_PRELOAD");
  if (old && *old && !strstr(old, lib)) {
    size_t n = strlen(lib) + strlen(old) + 2;
    char *both = malloc(n);
    if (!both)
      return 2;
    snprintf(both, n, "%s:%s", lib, old);
    setenv("LD_PRELOAD", both, 1);
    free(both);
  } else if (!old || !*old) {
    setenv("LD_PRELOAD", lib, 1);
  }
  setenv("LOCKSTEP_TRACE_DIR", absdir, 1);
  if (timeout)
    setenv("LOCKSTEP_TIMEOUT", timeout, 1);
  if (policy)
    setenv("LOCKSTEP_POLICY", policy, 1);
  else if (!getenv("LOCKSTEP_POLICY"))
    setenv("LOCKSTEP_POLICY", "end", 1); /* an outer setting wins, as for the secret */
  if (capacity)
    setenv("LOCKSTEP_TRACE_CAPACITY", capacity, 1);
  /* The online side channel's per-job key (runtime/README.md): 128 random bits the
   * job's processes inherit and nobody else knows. An outer `lockstep run` wins. */
  if (!getenv("LOCKSTEP_JOB_SECRET")) {
    unsigned char key[16];
    FILE *ur = fopen("/dev/urandom", "rb");
    if (ur && fread(key, 1, sizeof key, ur) == sizeof key) {
      char hex[33];
      for (int b = 0; b < 16; b++)
        snprintf(hex + 2 * b, 3, "%02x", key[b]);
      setenv("LOCKSTEP_JOB_SECRET", hex, 1);
    }
    if (ur)
      fclose(ur);
  }

  /* The command gets a process group of its own, so a signal to us reaches every
   * process of it (a launcher's ranks too, unless they moved to groups of their own:
   * those are re-parented to us when the launcher dies, and ended then). On a
   * terminal the group becomes the foreground one, as a shell's job would. */
  struct sigaction fwd = {.sa_handler = forward}, ign = {.sa_handler = SIG_IGN}, oldttou;
  sigemptyset(&fwd.sa_mask);
  sigemptyset(&ign.sa_mask);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  sigaction(SIGTTOU, &ign, &oldttou);
  static const int fwd_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t k = 0; k < sizeof fwd_sigs / sizeof *fwd_sigs; k++)
    sigaction(fwd_sigs[k], &fwd, NULL);
  fflush(NULL);
  g_child = fork();
  if (g_child < 0) {
    fprintf(stderr, "lockstep run: fork: %s\n", strerror(errno));
    return 2;
  }
  if (g_child == 0) {
    setpgid(0, 0);
    if (tty)
      tcsetpgrp(STDIN_FILENO, getpgrp());
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    for (size_t k = 0; k < sizeof fwd_sigs / sizeof *fwd_sigs; k++)
      sigaction(fwd_sigs[k], &dfl, NULL);
    sigaction(SIGTTOU, &oldttou, NULL);
    execvp(argv[i], argv + i);
    int e = errno;
    fprintf(stderr, "lockstep run: %s: %s\n", argv[i], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  setpgid(g_child, g_child); /* both sides: whichever runs first */
  if (tty)
    tcsetpgrp(STDIN_FILENO, g_child);
  int status = 0;
  while (waitpid(g_child, &status, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "lockstep run: waitpid: %s\n", strerror(errno));
      return 2;
    }
  if (tty)
    tcsetpgrp(STDIN_FILENO, getpgrp());
  sigaction(SIGTTOU, &oldttou, NULL);
  if (g_signalled)
    end_leftovers(g_child);
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 2;
  unsigned long ndiv, nhang;
  char **mine;
  size_t nmine;
  reported(absdir, (uint64_t)start.tv_sec * 1000000000ull + (uint64_t)start.tv_nsec, &ndiv, &nhang, &mine, &nmine);
  if (ndiv || nhang) {
    char what[128];
    snprintf(what, sizeof what, "%lu divergence report%s and %lu hang%s", ndiv, ndiv == 1 ? "" : "s", nhang,
             nhang == 1 ? "" : "s");
    if (rc == LS_END_CODE)
      fprintf(stderr, "lockstep run: a rank ended the job (exit %d) once a divergence was reported and its call "
                      "hung past the timeout (%s); `lockstep compare %s` names the divergence\n", rc, what, absdir);
    else
      fprintf(stderr, "lockstep run: the ranks diverged or hung (%s in the traces); `lockstep compare %s` names "
                      "it%s\n", what, absdir, rc == 0 ? "; exit 85 although the command exited 0" : "");
    if (rc == 0)
      rc = LS_RUN_DIVERGED;
    first_divergence(mine, nmine);
  }
  for (size_t k = 0; k < nmine; k++)
    free(mine[k]);
  free(mine);
  return rc;
}
