/* cmd_run.c — placeholder until `lockstep run` lands; replaced by its owner. */
#include <stdio.h>

#include "commands.h"

int ls_cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "lockstep run: not implemented yet\n");
  return 2;
}
