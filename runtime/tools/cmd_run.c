/* cmd_run.c — `lockstep run`: start a command with liblockstep.so preloaded and the
 * recorder configured through LOCKSTEP_* variables, which launchers (mpirun,
 * torchrun, srun) pass on to every rank they start. The exit code is the command's
 * (128+N when signal N killed it; 127/126 when it cannot be started), so `run` can
 * stand in front of anything in a script. Non-goal: launching ranks itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"

#define LS_LIB_NAME "liblockstep.so"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lockstep run [--trace-dir DIR] [--timeout SEC] [--policy report|abort|exit]\n"
          "                    [--capacity RECORDS] [--] COMMAND [ARG]...\n"
          "\n"
          "Runs COMMAND with liblockstep.so preloaded (prepended to LD_PRELOAD); every\n"
          "process that calls NCCL writes DIR/<host>.<pid>.lstrace (default DIR:\n"
          "./lockstep-traces). Works in front of mpirun/torchrun: children inherit it.\n"
          "\n"
          "  --trace-dir DIR   where traces go (LOCKSTEP_TRACE_DIR), made absolute\n"
          "  --timeout SEC     watchdog timeout in seconds, 0 = never (LOCKSTEP_TIMEOUT, default 60)\n"
          "  --policy P        on timeout: report (default), abort the communicator, or\n"
          "                    exit the rank with code 86 (LOCKSTEP_POLICY)\n"
          "  --capacity N      trace records per process (LOCKSTEP_TRACE_CAPACITY, default 1048576)\n"
          "\n"
          "The library is found in $LOCKSTEP_LIB, next to this binary (build tree or\n"
          "install prefix), or in the configured build/install lib directories.\n"
          "Exit code: the command's; 128+N if signal N killed it; 127 if it cannot be\n"
          "started; 2 for a usage error.\n");
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
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
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
static void forward(int sig) {
  if (g_child > 0)
    kill(g_child, sig);
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
  if (policy && strcmp(policy, "report") && strcmp(policy, "abort") && strcmp(policy, "exit")) {
    fprintf(stderr, "lockstep run: --policy %s: expected report, abort or exit\n", policy);
    return 2;
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

  /* Like system(): the terminal's SIGINT/SIGQUIT reach the child's process group
   * anyway; we wait for it. SIGTERM/SIGHUP sent to us are forwarded. */
  struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward}, oldint, oldquit;
  sigemptyset(&ign.sa_mask);
  sigemptyset(&fwd.sa_mask);
  fflush(NULL);
  g_child = fork();
  if (g_child < 0) {
    fprintf(stderr, "lockstep run: fork: %s\n", strerror(errno));
    return 2;
  }
  if (g_child == 0) {
    execvp(argv[i], argv + i);
    int e = errno;
    fprintf(stderr, "lockstep run: %s: %s\n", argv[i], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  sigaction(SIGINT, &ign, &oldint);
  sigaction(SIGQUIT, &ign, &oldquit);
  sigaction(SIGTERM, &fwd, NULL);
  sigaction(SIGHUP, &fwd, NULL);
  int status = 0;
  while (waitpid(g_child, &status, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "lockstep run: waitpid: %s\n", strerror(errno));
      return 2;
    }
  sigaction(SIGINT, &oldint, NULL);
  sigaction(SIGQUIT, &oldquit, NULL);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 2;
}
