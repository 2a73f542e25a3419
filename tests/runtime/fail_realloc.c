/* fail_realloc.c — a test shim (LD_PRELOAD) for the out-of-memory policy of lockstep's
 * commands (common/xalloc.h): realloc called from the main executable fails
 * with ENOMEM from its LS_FAIL_REALLOC_AT-th call on; other libraries' calls (libclang,
 * cJSON, libc) go through, so a failure lands on lockstep's own handling. At exit it
 * prints how many such calls it saw when LS_FAIL_REALLOC_COUNT is set. Children do not
 * inherit it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_realloc(void *, size_t);
void *realloc(void *p, size_t n);

static long g_at = -1, g_calls;
static char g_exe[4096];

__attribute__((constructor)) static void fr_init(void) {
  const char *v = getenv("LS_FAIL_REALLOC_AT");
  g_at = v ? atol(v) : -1;
  ssize_t k = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
  g_exe[k > 0 ? k : 0] = 0;
  unsetenv("LD_PRELOAD"); /* helpers it runs (addr2line) are not under test */
}

__attribute__((destructor)) static void fr_fini(void) {
  if (getenv("LS_FAIL_REALLOC_COUNT"))
    fprintf(stderr, "fail_realloc: %ld calls\n", g_calls);
}

static int from_exe(const void *ret) {
  Dl_info di;
  char buf[4096];
  if (!g_exe[0] || !dladdr(ret, &di) || !di.dli_fname)
    return 0;
  const char *f = di.dli_fname;
  if (!*f) /* the main program has an empty name in the link map */
    return 1;
  if (!realpath(f, buf))
    return 0;
  return !strcmp(buf, g_exe);
}

void *realloc(void *p, size_t n) {
  if (from_exe(__builtin_return_address(0))) {
    long k = __atomic_fetch_add(&g_calls, 1, __ATOMIC_RELAXED);
    if (g_at >= 0 && k >= g_at) {
      errno = ENOMEM;
      return NULL;
    }
  }
  return __libc_realloc(p, n);
}
