/* testcli.h — running the attnlab program from the tests of its command line
 * (prefix: cli_).
 *
 * Design. The tests of test_cli.c, test_cli_runs.c and test_compare.c see the program
 * from outside: each runs the built program (the path in $ATTNLAB, default
 * build/attnlab) in a child process and reads what it printed, its exit status and the
 * files it wrote. These are the few ways they do it, written once.
 */
#ifndef ATTNLAB_TESTCLI_H
#define ATTNLAB_TESTCLI_H

#include <stddef.h>
#include <sys/types.h>

/* What one run of the program printed and returned. */
typedef struct run_out {
    int status;      /* exit status, or -1 when it died of a signal */
    char out[16384]; /* standard output (truncated) */
    char err[4096];  /* standard error (truncated) */
} run_out;

/* Runs the program with the NULL-terminated argument list args (argv[0] excluded, at
 * most 62), feeding stdin_text (may be NULL) on standard input, into r. */
void cli_run(run_out *r, const char *stdin_text, const char *const *args);

/* Starts argv (argv[0] the program, NULL-terminated, at most 31) in the background with
 * its output discarded, in a process group of its own when own_group is set; returns
 * its pid. */
pid_t cli_spawn_silent(const char *const *argv, int own_group);

/* Reads a whole small file into buf (NUL-terminated, truncated to n-1 bytes; "" when
 * it cannot be read). */
void cli_slurp(const char *path, char *buf, size_t n);

/* The first line of dir/name, without its newline ("" when unreadable). */
void cli_first_line(const char *dir, const char *name, char *buf, size_t n);

/* Number of lines in s. */
size_t cli_count_lines(const char *s);

/* Are the two files byte for byte the same? */
int cli_same_file(const char *a, const char *b);

/* Trains a tiny LSTM (8 units, lengths 3:5) of seed 3 for steps steps at rate lr into
 * dir, failing the test when train fails: two such runs start from the same weights. */
void cli_tiny_lstm_run(const char *dir, const char *steps, const char *lr);

/* Does dir (recursively) hold a temporary file left by an interrupted write? */
int cli_has_temporary(const char *dir);

/* Removes the directory tree at path (fails the test when rm does). */
void cli_remove(const char *path);

#endif
