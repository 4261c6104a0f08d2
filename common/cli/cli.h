/* cli.h — the attnlab command line (prefix: cli_).
 *
 * Subcommands: train, eval, gradcheck, attention, compare, report, bench, help (and
 * --version), each in a file of its own (cmd_NAME.c, listed in cmd.h), all reading their flags through
 * args.h. Usage errors (unknown flag or subcommand, a value that is not a whole
 * number of the right range, an unknown model or task) print one line naming the flag
 * and what is accepted and exit with status 2; runtime errors (a missing or corrupt
 * file, a failed write, a model's report of bad input) print what failed and exit with
 * status 1. */
#ifndef ATTNLAB_CLI_H
#define ATTNLAB_CLI_H

/* Runs the program with its arguments; returns the exit status. */
int cli_main(int argc, char **argv);

/* Parses and checks a train command line (argv[0] is "train") exactly as `attnlab train`
 * does, without running it: returns 0 when it is valid, or 2 after printing the one-line
 * usage error. For the fuzzer and the tests of the parser. */
int cli_check_train_args(int argc, char **argv);

#endif
