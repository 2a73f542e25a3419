/* cmd_trace.c — placeholder until `lockstep trace` lands; replaced by its owner. */
#include <stdio.h>

#include "commands.h"

int ls_cmd_trace(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "lockstep trace: not implemented yet\n");
  return 2;
}
