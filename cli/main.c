/* main.c — the `lockstep` front end: a table of subcommands and their one-line
 * help. Everything else lives in the libraries the subcommands call (commands.h);
 * a build without the analyzer links no_analyzer.c for lint's three. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct subcommand {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
};

static const struct subcommand subcommands[] = {
    {"lint", ls_cmd_lint, "find rank-divergent collectives and unbalanced groups in C/C++/CUDA sources"},
    {"rules", ls_cmd_rules, "list the lint rules, one line each"},
    {"explain", ls_cmd_explain, "explain one lint rule, with a bad and a good example"},
    {"run", ls_cmd_run, "run a command with liblockstep.so preloaded, writing one trace per rank"},
    {"compare", ls_cmd_compare, "align the ranks' traces and name the first divergence"},
    {"trace", ls_cmd_trace, "export traces as JSON or as a Perfetto/Chrome timeline"},
    {"confirm", ls_cmd_confirm, "join lint findings with run traces: confirmed / exercised / not exercised"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: lockstep <command> [options]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
    fprintf(out, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(out, "\n`lockstep <command> --help` describes each command; `lockstep --version` prints\n"
               "the version.\n"
               "Exit codes: 0 clean, 1 findings or divergence, 2 usage or input error; compare\n"
               "and confirm also 3 (part of the run missing), run the command's own (its --help).\n");
}

/* Output that never reached its file (a full disk) fails the command: a caller must
 * not be told "done" about a truncated JSON document. A command that already failed
 * (2) has said why. */
static int stdout_written(int rc) {
  errno = 0;
  if (rc == 2 || (fflush(stdout) == 0 && !ferror(stdout)))
    return rc;
  fprintf(stderr, "lockstep: standard output: write failed%s%s; the output is incomplete\n",
          errno ? ": " : "", errno ? strerror(errno) : "");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("lockstep %s\n", LOCKSTEP_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
    if (!strcmp(argv[1], subcommands[i].name))
      return stdout_written(subcommands[i].fn(argc - 1, argv + 1));
  fprintf(stderr, "lockstep: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
