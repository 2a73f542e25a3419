/* fuzz_common.h — shared pieces of the libFuzzer harnesses (tests/fuzz/fuzz_*.c):
 * fuzz bytes become files the readers open by path (memfd, /proc/self/fd/N, so no
 * disk traffic), and stderr is captured around each call so a harness can check
 * that a rejected input was named with its file and offset/key, the error contract
 * of STYLE.md. Sanitizer reports go to a saved copy of the real stderr. */
#ifndef LOCKSTEP_FUZZ_COMMON_H
#define LOCKSTEP_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void __sanitizer_set_report_fd(void *fd);

/* stderr as libFuzzer started us; sanitizer reports and our own aborts go there. */
static int fz_real_stderr = -1;
static int fz_capture_fd = -1;

static void fz_init_io(void) {
  if (fz_real_stderr >= 0)
    return;
  fz_real_stderr = dup(2);
  __sanitizer_set_report_fd((void *)(intptr_t)fz_real_stderr);
  fz_capture_fd = memfd_create("fuzz-stderr", MFD_CLOEXEC);
  /* Reports of normal operation (stdout) are not what we test: discard them. */
  if (!freopen("/dev/null", "w", stdout))
    abort();
}

/* Everything written to fd 2 between begin and end lands in a buffer. */
static void fz_capture_begin(void) {
  fflush(stderr);
  if (ftruncate(fz_capture_fd, 0) != 0 || lseek(fz_capture_fd, 0, SEEK_SET) != 0)
    abort();
  dup2(fz_capture_fd, 2);
}

/* Returns the captured text (NUL-terminated, static, truncated at 64 KiB). */
static const char *fz_capture_end(void) {
  static char buf[65536];
  fflush(stderr);
  dup2(fz_real_stderr, 2);
  ssize_t n = pread(fz_capture_fd, buf, sizeof buf - 1, 0);
  buf[n > 0 ? n : 0] = 0;
  return buf;
}

/* The harness found a broken contract (not a sanitizer finding): say what and abort,
 * so libFuzzer saves the input as a crash. */
static void fz_contract(const char *what, const char *text) {
  dprintf(fz_real_stderr, "fuzz contract broken: %s\n--- captured stderr ---\n%s\n---\n", what, text);
  abort();
}

/* A file holding data, opened by path as /proc/self/fd/N. Close with fz_file_close. */
struct fz_file {
  int fd;
  char path[64];
};

static void fz_file_open(struct fz_file *f, const void *data, size_t n) {
  f->fd = memfd_create("fuzz-input", MFD_CLOEXEC);
  if (f->fd < 0)
    abort();
  const unsigned char *p = data;
  while (n) {
    ssize_t w = write(f->fd, p, n);
    if (w <= 0)
      abort();
    p += w;
    n -= (size_t)w;
  }
  snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
}

static void fz_file_close(struct fz_file *f) {
  close(f->fd);
  f->fd = -1;
}

#endif
