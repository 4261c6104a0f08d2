/* compare_jobs.c — the jobs of a comparison: their commands, whether an earlier
 * invocation finished them, the process manager that runs them, and the manifest (see
 * compare_jobs.h).
 *
 * Design. Each job is an independent `attnlab train` process; the parent only forks,
 * execs and waits, so a job that fails or is killed costs nothing but itself. Whether a
 * job is already done is read from its directory alone (eval.tsv is written last, and
 * command.txt must hold the same command), which is what lets an interrupted comparison
 * resume and lets the same job list run on other machines. A job's state is a
 * compare_state; the exit status of its process decides the state it ends in (0 DONE,
 * 130 or 143 STOPPED with its state saved, anything else FAILED). A job's command has no
 * length limit: each argument is allocated to its size, and the texts compared with
 * command.txt are built in memory streams that grow.
 */
#include "compare_jobs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buildinfo.h"
#include "args.h"
#include "cmd_files.h"
#include "cmd_stop.h"
#include "runlock.h"
#include "../core/train.h"

/* ---- the command of a job -------------------------------------------------------------- */

int compare_job_arg(compare_job *j, const char *fmt, ...)
{
    if (j->argc == COMPARE_MAX_ARGS)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    const int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *arg = len < 0 ? NULL : malloc((size_t)len + 1);
    if (!arg)
        return -1;
    va_start(ap, fmt);
    vsnprintf(arg, (size_t)len + 1, fmt, ap);
    va_end(ap);
    j->argv[j->argc++] = arg;
    j->argv[j->argc] = NULL;
    return 0;
}

void compare_jobs_free(compare_job *jobs, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        for (int i = 0; i < jobs[k].argc; i++)
            free(jobs[k].argv[i]);
        jobs[k].argc = 0;
        jobs[k].argv[0] = NULL;
    }
}

void compare_job_print(FILE *f, const compare_job *j)
{
    for (int i = 0; i < j->argc; i++) {
        if (i)
            fputc(' ', f);
        cmd_shell_word(f, j->argv[i]);
    }
    fputc('\n', f);
}

/* The command text of a job, as written to DIR/command.txt and compared on resume. */
static int write_command(FILE *f, const void *ctx)
{
    const compare_job *j = ctx;
    for (int i = 1; i < j->argc; i++) /* without the program path: it may move */
        fprintf(f, "%s%s", i > 1 ? " " : "", j->argv[i]);
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

/* Bytes of a command.txt read back: beyond any command line exec(2) would take. */
#define COMMAND_TXT_MAX ((size_t)16 << 20)

/* Did an earlier invocation start job j with the same command (DIR/command.txt)? */
static int same_command(const compare_job *j)
{
    char path[AFILE_PATH_MAX], *want = NULL;
    size_t want_len = 0;
    if (afile_join(path, sizeof path, j->dir, "command.txt") != 0)
        return 0;
    /* read whole, never waited on (a FIFO is refused like any file that is not ours) */
    char *text = afile_read(path, COMMAND_TXT_MAX, NULL);
    if (!text)
        return 0;
    FILE *mem = open_memstream(&want, &want_len);
    int same = 0;
    if (mem) {
        write_command(mem, j);
        if (fclose(mem) == 0)
            same = strcmp(text, want) == 0;
    }
    free(want);
    free(text);
    return same;
}

/* Has job j finished in an earlier invocation with the same command? */
static int job_finished(const compare_job *j)
{
    return cmd_exists_in(j->dir, "eval.tsv") && same_command(j);
}

/* Was job j stopped part-way with its state saved? Then it resumes instead of restarting. */
static int job_resumable(const compare_job *j)
{
    return !cmd_exists_in(j->dir, "eval.tsv") && cmd_exists_in(j->dir, "checkpoint.ckpt") &&
           cmd_exists_in(j->dir, "args.txt") && same_command(j);
}

/* Does dir hold a run, finished or stopped with its state saved? */
static int holds_run(const char *dir)
{
    return cmd_exists_in(dir, "model.ckpt") || cmd_exists_in(dir, "eval.tsv") ||
           cmd_exists_in(dir, "checkpoint.ckpt");
}

int compare_check_dirs(const compare_job *jobs, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (jobs[k].state != COMPARE_SKIPPED && holds_run(jobs[k].dir) &&
            !same_command(&jobs[k]))
            return args_run_error("%s holds a run that another command made (its "
                                  "command.txt differs); choose another --out, or remove "
                                  "that directory", jobs[k].dir);
    return 0;
}

size_t compare_skip_finished(compare_job *jobs, size_t n)
{
    size_t todo = 0;
    for (size_t k = 0; k < n; k++) {
        if (job_finished(&jobs[k])) {
            jobs[k].state = COMPARE_SKIPPED;
            fprintf(stderr, "%s %s seed %lu: finished earlier, skipped\n", args_command(),
                    jobs[k].label, jobs[k].seed);
        } else {
            todo++;
        }
    }
    return todo;
}

/* ---- the process manager ------------------------------------------------------------------ */

/* Waits while another process holds the lock of j's directory (a run of an earlier
 * compare still saving its state, or a train started by hand), saying so once. Returns
 * 0 when the directory is free, -1 when a stop signal came first. */
static int wait_for_dir(const compare_job *j)
{
    int said = 0;
    long pid;
    while ((pid = runlock_holder(j->dir)) > 0) {
        if (cmd_stop_signal)
            return -1;
        if (!said)
            fprintf(stderr, "%s %s seed %lu: %s is in use by another attnlab process "
                    "(pid %ld); waiting for it to end\n", args_command(), j->label, j->seed,
                    j->dir, pid);
        said = 1;
        usleep(100000);
    }
    return cmd_stop_signal ? -1 : 0;
}

/* Starts job j: waits for its directory, writes its command.txt (unless it resumes) and
 * forks `exe` on its command. Returns 0 when it started; 1 when, after the wait, it
 * turned out finished (SKIPPED) or a stop signal came (still WAITING); -1 when it could
 * not start (FAILED). */
static int start_job(compare_job *j, const char *exe)
{
    char err[ARGS_ERR_MAX];
    if (wait_for_dir(j) != 0)
        return 1;
    if (job_finished(j)) {
        j->state = COMPARE_SKIPPED;
        fprintf(stderr, "%s %s seed %lu: finished meanwhile, skipped\n", args_command(),
                j->label, j->seed);
        return 1;
    }
    const int resume = job_resumable(j);
    if (!resume && (afile_mkdirs(j->dir, err, sizeof err) != 0 ||
                    cmd_write_file(j->dir, "command.txt", write_command, j) != 0)) {
        j->state = COMPARE_FAILED;
        return -1;
    }
    if (resume)
        fprintf(stderr, "%s %s seed %lu: resuming from its checkpoint\n", args_command(),
                j->label, j->seed);
    fflush(NULL);
    /* the child stays in this process group: a signal to the group reaches every run */
    j->pid = fork();
    if (j->pid == 0) {
        static char train_w[] = "train", resume_w[] = "--resume", quiet_w[] = "--quiet";
        char *again[] = {j->argv[0], train_w, resume_w, j->dir, quiet_w, NULL};
        execv(exe, resume ? again : j->argv);
        _exit(127);
    }
    if (j->pid < 0) {
        j->state = COMPARE_FAILED;
        return -1;
    }
    j->state = COMPARE_RUNNING;
    j->start = train_now();
    return 0;
}

/* Records the end of job j, whose process exited with wait status st, and reports it
 * as the k-th of todo. */
static void end_job(compare_job *j, int st, size_t k, size_t todo)
{
    j->seconds = train_now() - j->start;
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code == 128 + SIGINT || code == 128 + SIGTERM) {
        j->state = COMPARE_STOPPED; /* stopped with its state saved: resumable */
        fprintf(stderr, "[%zu/%zu] %s seed %lu: stopped after %.1f s, state saved\n", k, todo,
                j->label, j->seed, j->seconds);
        return;
    }
    j->state = code == 0 ? COMPARE_DONE : COMPARE_FAILED;
    fprintf(stderr, "[%zu/%zu] %s seed %lu: %s in %.1f s\n", k, todo, j->label, j->seed,
            j->state == COMPARE_DONE ? "done" : "FAILED", j->seconds);
}

size_t compare_schedule(compare_job *jobs, size_t n, size_t todo, size_t at_once,
                        const char *exe)
{
    size_t next = 0, running = 0, ended = 0, failed = 0;
    int forwarded = 0;
    char self[32];
    cmd_catch_stop_signals();
    /* every run learns who started it, and stops once this process is gone */
    snprintf(self, sizeof self, "%ld", (long)getpid());
    setenv(CMD_PARENT_ENV, self, 1);
    while (ended < todo) {
        /* a stop signal: no new run starts; the running ones get the signal (when it was
         * sent to this process alone), save their state and exit; then this one does */
        if (cmd_stop_signal && !forwarded) {
            for (size_t k = 0; k < n; k++)
                if (jobs[k].state == COMPARE_RUNNING)
                    kill(jobs[k].pid, (int)cmd_stop_signal);
            forwarded = 1;
        }
        while (!cmd_stop_signal && running < at_once && next < n) {
            compare_job *j = &jobs[next++];
            if (j->state == COMPARE_SKIPPED)
                continue;
            const int started = start_job(j, exe);
            if (started < 0) {
                failed++;
                ended++;
            } else if (started == 0) {
                running++;
            } else if (j->state == COMPARE_SKIPPED) {
                ended++;
            }
        }
        if (running == 0)
            break;
        int st;
        pid_t pid = wait(&st);
        if (pid < 0) {
            if (errno == EINTR)
                continue; /* a signal: handled at the top of the loop */
            break;
        }
        for (size_t k = 0; k < n; k++)
            if (jobs[k].state == COMPARE_RUNNING && jobs[k].pid == pid) {
                running--;
                ended++;
                end_job(&jobs[k], st, ended, todo);
                failed += jobs[k].state == COMPARE_FAILED;
            }
        if (cmd_stop_signal && running == 0)
            break;
    }
    return failed;
}

/* ---- the manifest ------------------------------------------------------------------------ */

static int write_manifest(FILE *f, const void *p)
{
    const compare_manifest *m = p;
    fprintf(f, "key\tvalue\n");
    fprintf(f, "command\t%s\n", m->command);
    buildinfo_write_tsv(f);
    fprintf(f, "preset\t%s\nmodels\t%s\nseeds\t%zu\ntask\t%s\ntrain_len\t%zu:%zu\n", m->preset,
            m->models, m->seeds, m->c->task, m->c->train_min, m->c->train_max);
    fprintf(f, "steps\t%zu\nbatch\t%zu\neval_lengths\t%s\nsamples\t%zu\njobs\t%zu\n",
            m->c->steps, m->c->batch, m->eval_lengths, m->samples, m->jobs);
    fprintf(f, "started\t%s\nfinished\t%s\nwall_seconds\t%.1f\n", m->started, m->finished,
            m->wall);
    for (size_t k = 0; k < m->njobs; k++) {
        const compare_job *j = &m->list[k];
        fprintf(f, "wall_seconds.%s.s%lu\t", j->label, j->seed);
        switch (j->state) {
        case COMPARE_SKIPPED:
            fprintf(f, "finished earlier\n");
            break;
        case COMPARE_DONE:
            fprintf(f, "%.1f\n", j->seconds);
            break;
        case COMPARE_STOPPED:
            fprintf(f, "stopped after %.1f s (resumable)\n", j->seconds);
            break;
        case COMPARE_FAILED:
            fprintf(f, "failed\n");
            break;
        case COMPARE_WAITING:
        case COMPARE_RUNNING:
            fprintf(f, "not started\n");
            break;
        }
    }
    return ferror(f) ? -1 : 0;
}

int compare_write_manifest(const char *dir, const compare_manifest *m)
{
    return cmd_write_file(dir, "manifest.tsv", write_manifest, m);
}
