/* cli_cmd.h — the commands of attnlab and the run-directory pieces they share
 * (prefix: cmd_).
 *
 * Design. One file per concern, each command a function `int cmd_NAME(argc, argv)`
 * (argv[0] is the command word) returning the exit status, and `cmd_NAME_help` printing
 * its --help:
 *   cli.c          dispatch, help, --version; report; the file and run helpers below
 *   cmd_train.c    train: periodic checkpoints, signals, --resume
 *   cmd_train_dir.c  train's run directory: its lock, --force, args.txt, the checks of
 *                  --resume (cmd_train_dir.h)
 *   cmd_inspect.c  eval, gradcheck, attention; the evaluation and the trace train reuses
 *   compare.c      compare: presets and the job list (compare_jobs.c runs them)
 *   bench_cmd.c    bench: the command around bench.c's measurements
 * Every file of a run is written whole or not at all (afile.h), so an interrupted
 * command never leaves a half-written file.
 */
#ifndef ATTNLAB_CLI_CMD_H
#define ATTNLAB_CLI_CMD_H

#include <signal.h>
#include <stdio.h>

#include "../core/afile.h"
#include "../core/model.h"
#include "runlock.h"
#include "../core/task.h"

/* The commands: parse argv (argv[0] the command word), run, return the exit status. */
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_gradcheck(int argc, char **argv);
int cmd_attention(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Their --help texts, on standard output. */
void cmd_train_help(void);
void cmd_eval_help(void);
void cmd_gradcheck_help(void);
void cmd_attention_help(void);
void cmd_compare_help(void);
void cmd_report_help(void);
void cmd_bench_help(void);

/* Parse and check a command line as the command does, without running it: 0 when it is
 * valid (or asked for --help), else the usage status after the message. They stop where
 * the command would start its work (train: the run directory; eval and attention: the
 * checkpoint; gradcheck: the model; bench: the first measurement). */
int cmd_train_check(int argc, char **argv);
int cmd_eval_check(int argc, char **argv);
int cmd_attention_check(int argc, char **argv);
int cmd_gradcheck_check(int argc, char **argv);
int cmd_bench_check(int argc, char **argv);

/* ---- shared by the commands ------------------------------------------------------------ */

/* Writes dir/name atomically with write(f, ctx) (0 on success). Returns 0, or prints the
 * runtime error and returns -1. */
int cmd_write_file(const char *dir, const char *name, int (*write)(FILE *, const void *),
                   const void *ctx);

/* Is dir/name an existing file? */
int cmd_exists_in(const char *dir, const char *name);

/* Does dir hold a run of attnlab train (config.tsv, args.txt, model.ckpt or
 * checkpoint.ckpt)? */
int cmd_holds_run(const char *dir);

/* Claims the --out dir of a command that writes its own files there (eval, attention,
 * bench): makes dir, takes its lock into l (runlock.h), so the command never writes
 * while another one does, and, when refuse_run is set, refuses a dir holding a run of
 * attnlab train, saying why in what ("its own eval.tsv would be replaced"); refuse_run 2
 * lets through a run whose training ended (model.ckpt) and whose final evaluation was
 * stopped before any of its files was written (eval's own case). Returns 0
 * with l held, or the exit status after one line (l not held). */
int cmd_claim_out(runlock *l, const char *dir, int refuse_run, const char *what);

/* Prints s to f as one word of a POSIX shell command: as it is when it holds only
 * letters, digits and _-./:,=+@%, else in single quotes (a quote inside written '\''). */
void cmd_shell_word(FILE *f, const char *s);

/* Appends the run directories under path (a comparison directory's runs/, sorted by
 * name, or path itself when it has no runs/) to list, from entry have on, at most max
 * in all. Returns the number added. Runs beyond max are not silently dropped: they are
 * counted, and the merge of this process's report then refuses with the limit. */
size_t cmd_collect_runs(const char *path, char (*list)[AFILE_PATH_MAX], size_t max,
                        size_t have);

/* Merges the runs under the comparison directory dir into its tables, figures and
 * report.html (summary_report). The caller holds the lock of dir (runlock.h), as compare
 * does for its whole life. Returns the exit status (the error printed). */
int cmd_report_dir(const char *dir);

/* Evaluates m at the nl lengths lens, samples sequences each (evaluation seed seed); for
 * a file task, every example of its test set at those source lengths instead (samples
 * and seed unused). Prints the table when print is set and, when dir is not NULL,
 * writes eval.tsv and eval_positions.tsv into dir. Returns the exit status (the error
 * printed); when cmd_stop_signal is set during it, cmd_stopped_status() with nothing
 * printed or written, the caller saying what it had written before. */
int cmd_evaluate(model *m, const size_t *lens, size_t nl, size_t samples,
                 unsigned long seed, const char *dir, int print);

/* The source lengths of the final evaluation of a file task t (its test set): with *nl
 * > 0, the nl lengths in lens (given by flag), each of which must hold test examples;
 * with *nl 0, every source length of the test set, written into lens (room for
 * ARGS_MAX_LENGTHS). Returns 0, or prints and returns the usage status. */
int cmd_data_lengths(const task *t, const char *flag, size_t *lens, size_t *nl);

/* Decodes src (Ts symbols) with m, then writes every matrix the model traces as
 * dir/NAME.tsv, printing the example and each matrix as a table when print is set.
 * Returns the exit status (the error printed). */
int cmd_write_trace(model *m, const int *src, size_t Ts, const char *dir, int print);

/* Measures the time of a training step and of decoding per sequence of m at the n lengths
 * lens (bench_cost; sequences drawn from r) with the analytic FLOPs, and writes
 * dir/cost.tsv (model len train_ms_per_seq flops_per_seq decode_ms_per_seq). Returns the
 * exit status. */
int cmd_measure_cost(model *m, const size_t *lens, size_t n, const gsl_rng *r,
                     const char *dir);

/* Set to the signal number by SIGINT or SIGTERM once cmd_catch_stop_signals has run:
 * training finishes its step and saves, the final evaluation of train stops before its
 * next chunk of sequences (writing no eval.tsv), compare starts no new run. */
extern volatile sig_atomic_t cmd_stop_signal;

/* Installs the handlers of SIGINT and SIGTERM (without SA_RESTART, so a wait() in
 * compare returns at once). */
void cmd_catch_stop_signals(void);

/* The environment variable in which compare passes its pid to the train runs it starts:
 * a run whose parent is that process stops (state saved, as on SIGTERM) once it is gone,
 * whatever ended it, SIGKILL included. */
#define CMD_PARENT_ENV "ATTNLAB_COMPARE_PID"

/* The exit status of a command stopped by cmd_stop_signal: 128 + the signal, as shells
 * report it. */
int cmd_stopped_status(void);

#endif
