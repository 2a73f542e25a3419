/* commands.h — the subcommands of the `lockstep` binary.
 * Each takes the arguments after its name (argv[0] is the subcommand name) and
 * returns the process exit code: 0 clean/consistent, 1 findings/divergence,
 * 2 usage or input error. Each prints its own --help. */
#ifndef LOCKSTEP_COMMANDS_H
#define LOCKSTEP_COMMANDS_H

int ls_cmd_lint(int argc, char **argv);    /* analyzer/: static analysis */
int ls_cmd_run(int argc, char **argv);     /* runtime/tools/cmd_run.c: preload and launch */
int ls_cmd_compare(int argc, char **argv); /* runtime/tools/cmd_compare.c: cross-rank diff */
int ls_cmd_trace(int argc, char **argv);   /* runtime/tools/cmd_trace.c: export traces */
int ls_cmd_confirm(int argc, char **argv); /* runtime/tools/cmd_confirm.c: join lint + traces */
int ls_cmd_rules(int argc, char **argv);   /* analyzer/rule_docs.c: list the lint rules */
int ls_cmd_explain(int argc, char **argv); /* analyzer/rule_docs.c: one rule in full */

#endif
