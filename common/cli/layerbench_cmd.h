/* layerbench_cmd.h — `attnlab bench --layers`: the command around layerbench.c's
 * measurements (prefix: layerbench_cmd_). bench's own command hands its line over when
 * it holds --layers. */
#ifndef ATTNLAB_LAYERBENCH_CMD_H
#define ATTNLAB_LAYERBENCH_CMD_H

/* Does the bench command line argv (argc) ask for --layers? */
int layerbench_cmd_wanted(int argc, char **argv);

/* Prints the part of bench's --help about --layers. */
void layerbench_cmd_help(void);

/* Runs `attnlab bench --layers ...` (argv[0] the command word). check: only parse and
 * check the line (0 when valid), as cmd_bench_check does; help prints bench's whole
 * help for --help (the caller's, so that this file needs nothing of cmd_bench.c).
 * Returns the exit status. */
int layerbench_cmd_run(int argc, char **argv, int check, void (*help)(void));

#endif
