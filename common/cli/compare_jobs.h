/* compare_jobs.h — the runs of a comparison and the process manager that runs them
 * (prefix: compare_).
 *
 * Design. A comparison is a list of jobs, one per setup x seed, each a self-contained
 * `attnlab train` command with its own run directory DIR/runs/LABEL-sSEED (cmd_compare.c
 * builds the list). A setup is a model at its canonical settings (LABEL is its name) or,
 * in a preset's sweep, a model with one setting changed (LABEL: MODEL-hidden256). The same command is what --print-jobs prints, what DIR/command.txt
 * records, and what compare_schedule runs in a child process, at most `at_once` at a
 * time. A job's state moves one way:
 *     WAITING → RUNNING → DONE | FAILED | STOPPED      (or SKIPPED before it starts)
 * SKIPPED: finished by an earlier invocation of the same command (its eval.tsv exists
 * and its command.txt matches). STOPPED: ended by SIGINT/SIGTERM with its state saved,
 * so the same command later resumes it with `attnlab train --resume`.
 *
 * Ownership. compare holds the lock of its directory (runlock.h) while it runs, so a
 * second compare on the same directory is refused; each run holds its own run
 * directory's lock. The runs stay in compare's process group, and each watches compare
 * (CMD_PARENT_ENV): killed by any signal, SIGKILL included, compare leaves no run
 * writing on. A run directory still locked when a job is due (a run of an earlier
 * compare saving its state) is waited for, then looked at again.
 */
#ifndef ATTNLAB_COMPARE_JOBS_H
#define ATTNLAB_COMPARE_JOBS_H

#include <stdio.h>
#include <sys/types.h>

#include "../core/afile.h"
#include "../core/config.h"

#define COMPARE_MAX_ARGS 40 /* arguments of one job's command */
#define COMPARE_MAX_SETUPS 32 /* setups of one comparison: every model, or a preset's sweep */

typedef enum compare_state {
    COMPARE_WAITING, /* not started */
    COMPARE_RUNNING, /* its process is running */
    COMPARE_DONE,    /* exited with status 0 */
    COMPARE_FAILED,  /* could not start, or exited with another status */
    COMPARE_SKIPPED, /* finished by an earlier invocation */
    COMPARE_STOPPED  /* stopped by a signal, its state saved: resumable */
} compare_state;

/* One run of a comparison. */
typedef struct compare_job {
    char label[2 * CONFIG_STR_MAX];        /* its setup: the model, or MODEL-KEYVALUE
                                            * (e.g. MODEL-hidden256) for a preset's sweep */
    unsigned long seed;
    char dir[AFILE_PATH_MAX];              /* its run directory */
    char *argv[COMPARE_MAX_ARGS + 1];      /* the train command, NULL-terminated; each
                                            * argument allocated whole (compare_jobs_free) */
    int argc;
    pid_t pid;                             /* while RUNNING */
    double start, seconds;                 /* wall time of its process */
    compare_state state;
} compare_job;

/* Appends one argument, formatted as by printf and allocated whole, to the command of
 * j. Returns 0, or -1 when memory runs out or j already has COMPARE_MAX_ARGS arguments
 * (nothing appended). */
__attribute__((format(printf, 2, 3))) int compare_job_arg(compare_job *j, const char *fmt,
                                                          ...);

/* Frees the arguments of the n jobs (not the array). */
void compare_jobs_free(compare_job *jobs, size_t n);

/* Prints the command of j as one shell line, quoting the arguments that need it. */
void compare_job_print(FILE *f, const compare_job *j);

/* Marks SKIPPED every job finished by an earlier invocation of the same command, saying
 * so on standard error. Returns the number of jobs left to do. */
size_t compare_skip_finished(compare_job *jobs, size_t n);

/* Refuses to start when the directory of a job left to do holds a run (model.ckpt,
 * eval.tsv or checkpoint.ckpt) that another command made (its command.txt differs):
 * such a run is never replaced. Returns 0, or the runtime status after one line naming
 * the directory. */
int compare_check_dirs(const compare_job *jobs, size_t n);

/* Runs the jobs not SKIPPED, at most at_once processes at a time, each as
 * `exe train ...` (or `exe train --resume DIR --quiet` for a job stopped earlier with
 * its state saved), writing DIR/command.txt before it starts and reporting each end on
 * standard error ("[k/todo] MODEL seed S: done in T s"). A job whose directory another
 * process has locked is waited for (said once on standard error), then looked at again:
 * skipped if that process finished it. Every run gets this process's pid in
 * CMD_PARENT_ENV. On SIGINT or SIGTERM (cmd_stop_signal) it starts nothing more, passes
 * the signal on to the running jobs and waits for them. Returns the number of jobs
 * FAILED. */
size_t compare_schedule(compare_job *jobs, size_t n, size_t todo, size_t at_once,
                        const char *exe);

/* What a comparison records in DIR/manifest.tsv. */
typedef struct compare_manifest {
    const config *c;          /* the shared settings: task, lengths, steps, batch */
    const char *preset, *models, *eval_lengths, *command;
    size_t seeds, jobs, samples;
    const compare_job *list;  /* every job, for its wall time or its state */
    size_t njobs;
    double wall;
    const char *started, *finished; /* UTC, ISO 8601 */
} compare_manifest;

/* Writes dir/manifest.tsv (key, value lines). Returns 0, or -1 after printing the
 * error. */
int compare_write_manifest(const char *dir, const compare_manifest *m);

#endif
