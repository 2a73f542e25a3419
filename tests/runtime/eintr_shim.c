/* eintr_shim.c — a test shim (LD_PRELOAD, ahead of liblockstep.so): every other
 * fallocate fails with EINTR, as a signal arriving during the call may make it
 * (fallocate(2)); the recorder must take that for an interruption, not a full disk. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

int fallocate(int fd, int mode, off_t offset, off_t len);

static unsigned g_calls; /* atomic */

int fallocate(int fd, int mode, off_t offset, off_t len) {
  if (__atomic_fetch_add(&g_calls, 1, __ATOMIC_RELAXED) % 2 == 0) {
    errno = EINTR;
    return -1;
  }
  return (int)syscall(SYS_fallocate, fd, mode, offset, len);
}
