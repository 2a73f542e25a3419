/* cmd_confirm.c — placeholder until `lockstep confirm` lands; replaced by its owner. */
#include <stdio.h>

#include "commands.h"

int ls_cmd_confirm(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "lockstep confirm: not implemented yet\n");
  return 2;
}
