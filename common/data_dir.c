/* data_dir.c — where an installed or a build-tree binary finds its data (data_dir.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data_dir.h"

int ls_is_dir(const char *p) {
  struct stat st;
  return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int ls_exe_dir(char *out, size_t cap) {
  if (cap == 0)
    return -1;
  ssize_t n = readlink("/proc/self/exe", out, cap - 1);
  if (n <= 0 || (size_t)n >= cap - 1)
    return -1; /* a full buffer may be a truncated path */
  out[n] = 0;
  char *slash = strrchr(out, '/');
  if (!slash)
    return -1;
  *slash = 0;
  return 0;
}

const char *ls_data_dir(const char *name, const char *build, const char *install) {
  /* <bin>/../share/lockstep/NAME first: an installed (or relocated: cmake --install
   * --prefix) binary uses its own data, not a build tree that happens to exist */
  static _Thread_local char buf[4][PATH_MAX + 64];
  static _Thread_local int k;
  char exe[PATH_MAX];
  if (ls_exe_dir(exe, sizeof exe) == 0) {
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/../share/lockstep/%s", exe, name);
    char real[PATH_MAX];
    if (ls_is_dir(b) && realpath(b, real)) {
      snprintf(b, sizeof buf[0], "%s", real);
      return b;
    }
  }
  if (ls_is_dir(build))
    return build;
  return ls_is_dir(install) ? install : NULL;
}
