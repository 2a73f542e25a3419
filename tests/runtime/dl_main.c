/* dl_main.c — loads dl_user.so with RTLD_LOCAL (see dl_user.c) and runs it; links
 * neither NCCL nor the recorder. Exit status is dl_user_run's, 10 if loading fails. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2)
    return 10;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dl_main: %s\n", dlerror());
    return 10;
  }
  int (*run)(void) = (int (*)(void))dlsym(h, "dl_user_run");
  return run ? run() : 10;
}
