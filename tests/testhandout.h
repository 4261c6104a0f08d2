/* testhandout.h — the lab handouts as the tests read and run them: the attnlab and gnuplot
 * commands of their ```sh blocks, split into words the way sh would, and a way to run one
 * from the top of the tree with its results/labs/ paths moved into a directory of the
 * test. Shared by test_docs.c (the handouts run as written) and test_keys.c (the keys'
 * bands hold for this build). */
#ifndef ATTNLAB_TESTHANDOUT_H
#define ATTNLAB_TESTHANDOUT_H

#include <stddef.h>

#define MAX_ARGS 96
#define MAX_CMDS 128
#define PATH_LEN 512
#define LINE_LEN 4096

/* One command of a handout: its words, as the shell would pass them. */
typedef struct cmd {
    char *argv[MAX_ARGS + 1];
    int argc;
    int line;       /* line of the file where the command starts */
    int is_attnlab; /* 1: attnlab (or a lab's copy of it); 0: gnuplot */
} cmd;

/* Everything read from one handout. */
typedef struct handout {
    char path[PATH_LEN];
    char *text;
    cmd cmds[MAX_CMDS];
    size_t ncmds;
    char *sh;      /* every logical line of its sh blocks, '\n'-separated */
    char err[PATH_LEN + 256]; /* why a command line could not be read ("" if all could) */
} handout;

/* A growing argument vector of owned strings. */
typedef struct argvec {
    char *v[2 * MAX_ARGS + 8];
    int n;
} argvec;

/* The program under test: $ATTNLAB, default build/attnlab. */
const char *ho_program(void);

/* A whole file as a new NUL-terminated string; NULL when it cannot be read. */
char *ho_read_file(const char *path);

int ho_exists(const char *path);

/* The file names matching a glob pattern, sorted, into out; returns the count. */
size_t ho_find_files(const char *pattern, char (*out)[PATH_LEN], size_t max);

/* Splits one logical shell line into words as sh would (see testhandout.c); -1 when it
 * cannot. *bad_segments flags the pipeline segments that use shell syntax. */
int ho_split_words(const char *s, char **out, int max, int *bad_segments);

/* Appends text and a newline to the growing string *s (fails the test when out of
 * memory). */
void ho_append_line(char **s, const char *text);

/* Reads a handout and its commands (fails the test when the file cannot be read);
 * handout_free releases them. */
void handout_read(handout *h, const char *path);
void handout_free(handout *h);

/* The command as text, for messages. */
void ho_cmd_text(const cmd *c, char *buf, size_t n);

/* Runs argv from the top of the tree, input from /dev/null, both outputs into log; the
 * exit status, -1 after a signal, 127 when it could not start. */
int ho_run_argv(char *const *argv, int search, const char *log);

/* The last n - 1 bytes of a log, for failure messages. */
void ho_log_tail(const char *log, char *buf, size_t n);

void av_push(argvec *a, const char *s);
void av_free(argvec *a);

/* s with every results/labs/ path moved under dir (a new string). */
char *ho_relocate(const char *s, const char *dir);

/* The argument vector of c: the program (attnlab) or gnuplot, then its words, moved under
 * dir when dir is not NULL. */
void ho_build_args(argvec *a, const cmd *c, const char *dir);

/* Does c hold the flag, as --flag or --flag=VALUE? */
int ho_has_flag(const cmd *c, const char *flag);

/* The value of flag in c (--flag VALUE or --flag=VALUE); NULL when absent. */
const char *ho_flag_value(const cmd *c, const char *flag);

#endif
