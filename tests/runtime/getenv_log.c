/* getenv_log.c — a preloaded shim (ahead of liblockstep.so in LD_PRELOAD) that appends
 * the name of every LOCKSTEP_* variable liblockstep asks getenv for to $LS_GETENV_LOG,
 * one line per call; calls from anywhere else are not logged. t_config_once.sh checks
 * that each documented variable is read exactly once per process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

char *getenv(const char *name);
char *getenv(const char *name) {
  static char *(*real)(const char *);
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "getenv");
  Dl_info di;
  if (name && !strncmp(name, "LOCKSTEP_", 9) && dladdr(__builtin_return_address(0), &di) &&
      di.dli_fname && strstr(di.dli_fname, "liblockstep")) {
    const char *path = real("LS_GETENV_LOG");
    int fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (fd >= 0) {
      char line[256];
      size_t n = strlen(name) < sizeof line - 1 ? strlen(name) : sizeof line - 2;
      memcpy(line, name, n);
      line[n] = '\n';
      (void)!write(fd, line, n + 1);
      close(fd);
    }
  }
  return real(name);
}
