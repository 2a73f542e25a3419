/* no_analyzer.c — lint's subcommands in a build without libclang (-DLOCKSTEP_ANALYZER=OFF,
 * e.g. on a GPU node): they say so instead of pretending. */
#include <stdio.h>

#include "commands.h"

int ls_cmd_lint(int argc, char **argv) {
  (void)argc;
  fprintf(stderr, "lockstep: this build has no analyzer (configured with "
                  "-DLOCKSTEP_ANALYZER=OFF); `%s` is unavailable\n", argv[0]);
  return 2;
}
int ls_cmd_rules(int argc, char **argv) { return ls_cmd_lint(argc, argv); }
int ls_cmd_explain(int argc, char **argv) { return ls_cmd_lint(argc, argv); }
