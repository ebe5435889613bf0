/* The command line: sub-commands and their entry points. Each returns the process exit code:
 * 0 every layer that ran passed, 1 a check failed, crashed or timed out, 2 usage or unreadable
 * input. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include "sc_options.h"

#define SC_EXIT_OK 0
#define SC_EXIT_FAIL 1
#define SC_EXIT_USAGE 2

/* Dispatches argv to a sub-command (run by default). */
int sc_main(int argc, char **argv);
/* `stackcheck [run] [OPTIONS]`. */
int sc_cmd_run(int argc, char **argv);
/* `stackcheck explain ID`. */
int sc_cmd_explain(int argc, char **argv);
/* `stackcheck list`. */
int sc_cmd_list(int argc, char **argv);
/* `stackcheck libs [--arch ARCH]... [--json FILE] FILE...`. */
int sc_cmd_libs(int argc, char **argv);
/* `stackcheck diff A.json B.json [--json FILE] [--rtol R --atol A]`. */
int sc_cmd_diff(int argc, char **argv);
/* `stackcheck fleet [--json FILE] [--factor F] SNAPSHOT...|DIR...`. */
int sc_cmd_fleet(int argc, char **argv);
/* Parses the options of `run` into opt; returns 0, 1 for --help/--version (already printed), or
 * SC_EXIT_USAGE with a message on standard error. */
int sc_parse_run_options(int argc, char **argv, sc_options *opt);
/* Says on standard error, escaped, which option getopt_long refused (c is '?' or ':'; the caller
 * set opterr = 0 and began optstring with ':'), after "stackcheck COMMAND: "; returns
 * SC_EXIT_USAGE. */
int sc_cli_bad_option(const char *command, int c, char **argv);

#endif
