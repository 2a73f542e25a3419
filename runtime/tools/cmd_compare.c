/* cmd_compare.c — placeholder until `lockstep compare` lands; replaced by its owner. */
#include <stdio.h>

#include "commands.h"

int ls_cmd_compare(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "lockstep compare: not implemented yet\n");
  return 2;
}
