/* cli.h — the attnlab command line (prefix: cli_).
 *
 * Subcommands: train, eval, gradcheck, attention, help (and --version). Usage errors
 * (unknown flag or subcommand, a value that is not a whole number of the right range,
 * an unknown model or task) print one line naming the flag and what is accepted and exit
 * with status 2; runtime errors (a missing or corrupt file, a failed write) print what
 * failed and exit with status 1. */
#ifndef ATTNLAB_CLI_H
#define ATTNLAB_CLI_H

/* Runs the program with its arguments; returns the exit status. */
int cli_main(int argc, char **argv);

#endif
