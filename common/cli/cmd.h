/* cmd.h — the commands of attnlab, one file each (prefix: cmd_).
 *
 * Design. Each command is a function `int cmd_NAME(argc, argv)` in cmd_NAME.c (argv[0]
 * is the command word) returning the exit status, with `cmd_NAME_help` printing its
 * --help; cli.c dispatches to them from one table and includes nothing else of theirs:
 *   cmd_train.c      train: one run directory (traindir.h), periodic checkpoints, --resume
 *   cmd_eval.c       eval: accuracy per length, or the answers to your own input
 *   cmd_gradcheck.c  gradcheck: the backward pass against finite differences
 *   cmd_attention.c  attention: the matrices of one example
 *   cmd_compare.c    compare: presets and the job list (compare_jobs.h runs them)
 *   cmd_report.c     report: merging runs into tables, figures and report.html
 *   cmd_bench.c      bench: the command around bench.c's measurements
 * What several commands share lives in helper files of the same prefix, each with its
 * header: cmd_files.h (files and folders of a run), cmd_measure.h (evaluation, trace and
 * cost written into a run), cmd_stop.h (stopping cleanly on a signal). Helpers never
 * include this header, so the includes point one way: cli.c -> commands -> helpers.
 */
#ifndef ATTNLAB_CMD_H
#define ATTNLAB_CMD_H

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

/* Merges the runs under the comparison directory dir into its tables, figures and
 * report.html (summary_report). The caller holds the lock of dir (runlock.h), as compare
 * does for its whole life. Returns the exit status (the error printed). */
int cmd_report_dir(const char *dir);

#endif
