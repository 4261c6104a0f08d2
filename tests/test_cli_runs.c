/* test_cli_runs.c — a run directory over time, seen from outside: divergence, a stop and
 * --resume, the same command twice, and who may write a run directory: one writer at a
 * time (its lock), no finished or stopped run replaced without --force, and a --resume
 * that refuses files that do not belong together (another run's checkpoint, an edited
 * args.txt) or says how to start again when there is nothing to resume. Runs the built
 * program (testcli.h); the lock of a directory is also taken in-process, to hold a
 * directory while the program tries to write it. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cli/runlock.h"
#include "testcli.h"
#include "testutil.h"

/* ---- reliability: divergence, interruption, determinism ------------------------------ */

START_TEST(divergence_is_reported_and_keeps_files)
{
    char dir[64], path[128], text[8192];
    snprintf(dir, sizeof dir, "/tmp/attnlab-nan-%ld", (long)getpid());
    run_out r;
    /* Adam moves every weight by about lr per step whatever the gradient, so only an
     * absurd rate makes the products overflow: weights near 1e300 after one step */
    cli_run(&r, NULL,
            (const char *const[]){"train", "--model", "lstm", "--hidden", "8", "--embed", "4",
                                  "--lr", "1e300", "--clip", "0", "--steps", "2000",
                                  "--checkpoint-every", "1", "--log-every", "1", "--train-len",
                                  "3:5", "--out", dir, "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "lstm diverged at step "), "message: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "--lr"));
    ck_assert_ptr_nonnull(strstr(r.err, "tensor '"));
    /* the log up to the last good step and the last good checkpoint stay */
    snprintf(path, sizeof path, "%s/train_log.tsv", dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_eq(strstr(text, "step\tseconds"), text);
    ck_assert_uint_ge(cli_count_lines(text), 2);
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", path, "--lengths", "3",
                                            "--samples", "4", NULL});
    ck_assert_msg(r.status == 0, "the kept checkpoint does not load: %s", r.err);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(path), 0);
}
END_TEST

/* A finished run's training seconds: build.tsv's train_seconds, or the seconds column of
 * train_log.tsv's last line. */
static double run_seconds(const char *dir, const char *file)
{
    char path[256], buf[65536];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cli_slurp(path, buf, sizeof buf);
    if (strcmp(file, "build.tsv") == 0) {
        const char *k = strstr(buf, "\ntrain_seconds\t");
        ck_assert_msg(k != NULL, "%s has no train_seconds", path);
        return strtod(k + strlen("\ntrain_seconds\t"), NULL);
    }
    size_t n = strlen(buf);
    while (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    const char *last = strrchr(buf, '\n'), *tab = last ? strchr(last, '\t') : NULL;
    ck_assert_msg(tab != NULL, "%s has no logged step", path);
    return strtod(tab + 1, NULL);
}

/* The settings of the interrupted and the uninterrupted run: identical but --out; a
 * decay horizon of its own and log-spaced validations, which the resumed run must take
 * from its configuration. */
#define RESUME_ARGS "train", "--model", "lstm", "--hidden", "16", "--embed", "8", \
    "--steps", "400", "--train-len", "4:10", "--checkpoint-every", "20", "--log-every", \
    "20", "--samples", "16", "--eval-lengths", "4,8", "--lr-schedule", "cosine", \
    "--decay-steps", "150", "--val-first", "5", "--quiet"

START_TEST(interrupt_then_resume_gives_the_same_weights)
{
    char a[64], b[64], pa[128], pb[128];
    snprintf(a, sizeof a, "/tmp/attnlab-resume-a-%ld", (long)getpid());
    snprintf(b, sizeof b, "/tmp/attnlab-resume-b-%ld", (long)getpid());
    run_out r;
    cli_run(&r, NULL, (const char *const[]){RESUME_ARGS, "--out", a, NULL});
    ck_assert_msg(r.status == 0, "uninterrupted run: %s", r.err);

    /* start the same run, stop it with SIGINT once its first checkpoint is on disk */
    const char *argv[] = {tu_program(), RESUME_ARGS, "--out", b, NULL};
    pid_t pid = cli_spawn_silent(argv, 0);
    snprintf(pb, sizeof pb, "%s/checkpoint.ckpt", b);
    for (int k = 0; k < 2000 && access(pb, F_OK) != 0; k++)
        usleep(5000);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    ck_assert(WIFEXITED(st));
    if (WEXITSTATUS(st) == 0) {
        /* the run finished before the signal landed: nothing to resume, nothing to test */
        fprintf(stderr, "interrupt test: the run ended before SIGINT; not exercised\n");
    } else {
        ck_assert_int_eq(WEXITSTATUS(st), 130);
        snprintf(pb, sizeof pb, "%s/eval.tsv", b);
        ck_assert_int_ne(access(pb, F_OK), 0); /* not finished */
        cli_run(&r, NULL, (const char *const[]){"train", "--resume", b, "--quiet", NULL});
        ck_assert_msg(r.status == 0, "resume: %s", r.err);
        /* its training seconds are the whole run's, both sessions, as its log counts them */
        const double build = run_seconds(b, "build.tsv"), log = run_seconds(b, "train_log.tsv");
        ck_assert_msg(build >= log - 0.0005, "build.tsv train_seconds %.3f, below the log's "
                      "last %.3f: the first session left out", build, log);
    }
    snprintf(pa, sizeof pa, "%s/model.ckpt", a);
    snprintf(pb, sizeof pb, "%s/model.ckpt", b);
    ck_assert_msg(cli_same_file(pa, pb), "resumed weights differ from the uninterrupted run");
    snprintf(pa, sizeof pa, "%s/eval.tsv", a);
    snprintf(pb, sizeof pb, "%s/eval.tsv", b);
    ck_assert(cli_same_file(pa, pb));
    /* a finished run cannot be resumed */
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", b, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "already finished"));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", a, b);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The settings of the runs stopped in their final evaluation: the three cost lengths
 * come between build.tsv and the evaluation and take at least 0.9 s (each timing loop
 * runs until its clock says so), the window in which the test's signal lands. */
#define EVALSTOP_ARGS "train", "--model", "lstm", "--hidden", "8", "--embed", "4", \
    "--steps", "20", "--train-len", "3:5", "--eval-lengths", "3,6", "--samples", "64", \
    "--cost-lengths", "3,4,5", "--quiet"

/* SIGINT (_i 0) or SIGTERM (_i 1) once training is over: the evaluation stops, every file
 * written before it is whole, the one line names them and the command that finishes the
 * run, status 130 or 143; that command then writes the eval.tsv and eval_positions.tsv
 * of an uninterrupted run, byte for byte. */
START_TEST(a_signal_stops_the_final_evaluation)
{
    const int sig = _i ? SIGTERM : SIGINT;
    char a[64], b[64], pa[128], pb[128], errp[128], text[8192];
    snprintf(a, sizeof a, "/tmp/attnlab-evalstop-a-%ld", (long)getpid());
    snprintf(b, sizeof b, "/tmp/attnlab-evalstop-b-%ld", (long)getpid());
    snprintf(errp, sizeof errp, "/tmp/attnlab-evalstop-%ld.err", (long)getpid());
    run_out r;
    cli_run(&r, NULL, (const char *const[]){EVALSTOP_ARGS, "--out", a, NULL});
    ck_assert_msg(r.status == 0, "uninterrupted run: %s", r.err);

    const char *argv[] = {tu_program(), EVALSTOP_ARGS, "--out", b, NULL};
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        if (!freopen(errp, "w", stderr))
            _exit(127);
        char *rw[40]; /* execv takes char *const[]: copies, not a cast */
        size_t n = 0;
        for (; argv[n]; n++)
            rw[n] = strdup(argv[n]);
        rw[n] = NULL;
        execv(rw[0], rw);
        _exit(127);
    }
    snprintf(pb, sizeof pb, "%s/build.tsv", b); /* training is over once it exists */
    for (int k = 0; k < 6000 && access(pb, F_OK) != 0; k++)
        usleep(5000);
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
    cli_slurp(errp, text, sizeof text);
    unlink(errp);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig,
                  "status %d after signal %d: %s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, sig,
                  text);
    ck_assert_uint_eq(cli_count_lines(text), 1);
    ck_assert_msg(strstr(text, "during the final evaluation") &&
                      strstr(text, "model.ckpt") && strstr(text, "cost.tsv") &&
                      strstr(text, "but no eval.tsv or eval_positions.tsv"),
                  "message: %s", text);
    static const char *const kept[] = {"args.txt", "config.tsv", "train_log.tsv", "model.ckpt",
                                       "last.ckpt", "build.tsv", "cost.tsv"};
    for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++) {
        snprintf(pa, sizeof pa, "%s/%s", a, kept[k]);
        snprintf(pb, sizeof pb, "%s/%s", b, kept[k]);
        ck_assert_msg(access(pb, F_OK) == 0, "%s was not written", kept[k]);
        /* the other files hold times or the directory's name */
        if (strstr(kept[k], ".ckpt") || strcmp(kept[k], "config.tsv") == 0)
            ck_assert_msg(cli_same_file(pa, pb), "%s differs from the uninterrupted run",
                          kept[k]);
    }
    snprintf(pb, sizeof pb, "%s/eval.tsv", b);
    ck_assert_msg(access(pb, F_OK) != 0, "eval.tsv was written");
    ck_assert(!cli_has_temporary(b));

    /* the command given finishes the run as an uninterrupted one */
    const char *with = strstr(text, "to write them: attnlab ");
    ck_assert_ptr_nonnull(with);
    char line[1024];
    snprintf(line, sizeof line, "%s", with + strlen("to write them: attnlab "));
    line[strcspn(line, "\n")] = '\0';
    const char *words[64];
    size_t n = 0;
    for (char *w = strtok(line, " "); w && n < 63; w = strtok(NULL, " "))
        words[n++] = w;
    words[n] = NULL;
    cli_run(&r, NULL, words);
    ck_assert_msg(r.status == 0, "the command given fails: %s", r.err);
    static const char *const evals[] = {"eval.tsv", "eval_positions.tsv"};
    for (int k = 0; k < 2; k++) {
        snprintf(pa, sizeof pa, "%s/%s", a, evals[k]);
        snprintf(pb, sizeof pb, "%s/%s", b, evals[k]);
        ck_assert_msg(cli_same_file(pa, pb), "%s differs from the uninterrupted run", evals[k]);
    }
    cli_remove(a);
    cli_remove(b);
}
END_TEST

START_TEST(same_command_same_bytes)
{
    char d[3][64], p[2][128];
    const char *seeds[3] = {"5", "5", "6"};
    run_out r;
    for (int k = 0; k < 3; k++) {
        snprintf(d[k], sizeof d[k], "/tmp/attnlab-det-%d-%ld", k, (long)getpid());
        cli_run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--hidden", "8",
                                                "--embed", "4", "--steps", "60", "--train-len",
                                                "3:6", "--samples", "32", "--seed", seeds[k],
                                                "--out", d[k], "--quiet", NULL});
        ck_assert_msg(r.status == 0, "%s", r.err);
    }
    static const char *const files[] = {"model.ckpt", "eval.tsv", "eval_positions.tsv",
                                        "config.tsv"};
    for (int f = 0; f < 4; f++) {
        snprintf(p[0], sizeof p[0], "%s/%s", d[0], files[f]);
        snprintf(p[1], sizeof p[1], "%s/%s", d[1], files[f]);
        ck_assert_msg(cli_same_file(p[0], p[1]), "%s differs between two identical runs",
                          files[f]);
    }
    /* another seed: other weights */
    snprintf(p[0], sizeof p[0], "%s/model.ckpt", d[0]);
    snprintf(p[1], sizeof p[1], "%s/model.ckpt", d[2]);
    ck_assert(!cli_same_file(p[0], p[1]));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", d[0], d[1], d[2]);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST


/* ---- who writes a run directory ---------------------------------------------------------- */

/* Trains a tiny LSTM into dir (30 steps, a checkpoint every 10), with one more setting
 * flag and value (NULL: none). Returns the exit status. */
static int tiny_train(const char *dir, const char *flag, const char *value, run_out *r)
{
    cli_run(r, NULL,
            (const char *const[]){"train", "--model", "lstm", "--hidden", "8", "--embed", "4",
                                  "--steps", "30", "--train-len", "3:5", "--samples", "8",
                                  "--eval-lengths", "4", "--checkpoint-every", "10",
                                  "--quiet", "--out", dir, flag, value, NULL});
    return r->status;
}

/* Makes the finished run in dir look stopped after its last checkpoint: the files a run
 * writes at its end are removed, checkpoint.ckpt stays. */
static void unfinish(const char *dir)
{
    static const char *const end[] = {"eval.tsv", "eval_positions.tsv", "model.ckpt",
                                      "build.tsv"};
    char path[256];
    for (size_t k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, end[k]);
        ck_assert_int_eq(unlink(path), 0);
    }
}

/* Writes text to path, replacing it. */
static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Copies the file from to to (cp). */
static void copy_file(const char *from, const char *to)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(a_finished_run_is_not_replaced_without_force)
{
    char dir[64], keep[96], ck[96], path[128], text[4096];
    snprintf(dir, sizeof dir, "/tmp/attnlab-own-%ld", (long)getpid());
    snprintf(keep, sizeof keep, "%s.keep", dir);
    snprintf(ck, sizeof ck, "%s/model.ckpt", dir);
    run_out r;
    ck_assert_msg(tiny_train(dir, NULL, NULL, &r) == 0, "%s", r.err);
    copy_file(ck, keep);
    /* another model into the same directory: refused, the weights untouched */
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "transformer", "--steps", "2",
                                            "--samples", "2", "--eval-lengths", "4", "--out",
                                            dir, "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, dir) && strstr(r.err, "finished run of another "
                                                       "configuration") &&
                      strstr(r.err, "--force"),
                  "message: %s", r.err);
    ck_assert_msg(cli_same_file(ck, keep), "the finished run's model.ckpt was replaced");
    /* the very same command again: refused too, and said so */
    ck_assert_int_eq(tiny_train(dir, NULL, NULL, &r), 1);
    ck_assert_msg(strstr(r.err, "finished run of this configuration"), "message: %s", r.err);
    /* --force replaces it, and nothing of the old run stays beside the new one */
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "transformer", "--steps", "2",
                                            "--samples", "2", "--eval-lengths", "4", "--out",
                                            dir, "--quiet", "--force", NULL});
    ck_assert_msg(r.status == 0, "--force: %s", r.err);
    snprintf(path, sizeof path, "%s/config.tsv", dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "model\ttransformer\n"));
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", dir); /* 2 steps: no checkpoint */
    ck_assert_msg(access(path, F_OK) != 0, "the old run's checkpoint.ckpt was left");
    cli_remove(dir);
    cli_remove(keep);
}
END_TEST

START_TEST(a_stopped_run_is_not_replaced_without_force)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/attnlab-stopped-%ld", (long)getpid());
    run_out r;
    ck_assert_msg(tiny_train(dir, NULL, NULL, &r) == 0, "%s", r.err);
    unfinish(dir);
    ck_assert_int_eq(tiny_train(dir, NULL, NULL, &r), 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "stopped run") && strstr(r.err, "attnlab train --resume") &&
                      strstr(r.err, "--force"),
                  "message: %s", r.err);
    cli_remove(dir);
}
END_TEST

START_TEST(a_directory_in_use_is_refused)
{
    char dir[64], err[256], pid[32];
    snprintf(dir, sizeof dir, "/tmp/attnlab-lock-%ld", (long)getpid());
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    runlock held;
    ck_assert_msg(runlock_take(&held, dir, err, sizeof err) == 0, "%s", err);
    /* train, --resume and compare all refuse a directory another process writes */
    run_out r;
    ck_assert_int_eq(tiny_train(dir, NULL, NULL, &r), 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, dir) && strstr(r.err, "in use") && strstr(r.err, pid),
                  "message: %s", r.err);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "in use"), "message: %s", r.err);
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "smoke", "--models", "lstm",
                                            "--steps", "2", "--out", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "in use"), "message: %s", r.err);
    /* nothing was written while it was held; once free, the run goes */
    char path[128];
    snprintf(path, sizeof path, "%s/args.txt", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    runlock_release(&held);
    ck_assert_msg(tiny_train(dir, NULL, NULL, &r) == 0, "%s", r.err);
    cli_remove(dir);
}
END_TEST

START_TEST(resume_refuses_files_of_another_run)
{
    char a[64], b[64], c[64], path[128], mine[128], text[8192];
    snprintf(a, sizeof a, "/tmp/attnlab-mix-a-%ld", (long)getpid());
    snprintf(b, sizeof b, "/tmp/attnlab-mix-b-%ld", (long)getpid());
    snprintf(c, sizeof c, "/tmp/attnlab-mix-c-%ld", (long)getpid());
    run_out r;
    ck_assert_msg(tiny_train(a, NULL, NULL, &r) == 0, "%s", r.err);
    ck_assert_msg(tiny_train(b, "--hidden", "12", &r) == 0, "%s", r.err);
    ck_assert_msg(tiny_train(c, "--task", "reverse", &r) == 0, "%s", r.err);
    unfinish(a);
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", a);
    snprintf(mine, sizeof mine, "%s.ckpt", a);
    copy_file(path, mine);
    static const struct {
        const char *from; /* 'b' or 'c': whose checkpoint */
        const char *field;
    } others[] = {{"b", "--hidden 12"}, {"c", "--task reverse"}};
    for (size_t k = 0; k < 2; k++) {
        char other[128];
        snprintf(other, sizeof other, "%s/checkpoint.ckpt", others[k].from[0] == 'b' ? b : c);
        copy_file(other, path);
        cli_run(&r, NULL, (const char *const[]){"train", "--resume", a, "--quiet", NULL});
        ck_assert_int_eq(r.status, 1);
        ck_assert_uint_eq(cli_count_lines(r.err), 1);
        ck_assert_msg(strstr(r.err, "checkpoint.ckpt is not this run's") &&
                          strstr(r.err, others[k].field),
                      "message: %s", r.err);
    }
    copy_file(mine, path);
    /* an edited args.txt: the field it changed is named */
    char args[128], saved[4096];
    snprintf(args, sizeof args, "%s/args.txt", a);
    cli_slurp(args, saved, sizeof saved);
    snprintf(text, sizeof text, "%s--lr\n0.5\n", saved);
    put_file(args, text);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", a, "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "args.txt gives --lr 0.5"), "message: %s", r.err);
    snprintf(text, sizeof text, "%s--steps\n40\n", saved);
    put_file(args, text);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", a, "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "args.txt gives --steps 40"), "message: %s", r.err);
    /* its own files again: it resumes and ends with a model its config.tsv describes */
    put_file(args, saved);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", a, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "resume of its own files: %s", r.err);
    snprintf(path, sizeof path, "%s/model.ckpt", a);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", path, "--lengths", "3",
                                            "--samples", "2", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    cli_remove(a);
    cli_remove(b);
    cli_remove(c);
    cli_remove(mine);
}
END_TEST

START_TEST(a_run_killed_before_its_first_checkpoint_says_how_to_start_again)
{
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/attnlab-early-%ld", (long)getpid());
    /* a first checkpoint after 500 steps of a transformer: seconds away when it is killed */
    const char *argv[] = {tu_program(), "train", "--model", "transformer", "--steps",
                          "100000", "--samples", "2", "--eval-lengths", "4", "--out", dir,
                          "--quiet", NULL};
    pid_t pid = cli_spawn_silent(argv, 0);
    snprintf(path, sizeof path, "%s/config.tsv", dir);
    for (int k = 0; k < 2000 && access(path, F_OK) != 0; k++)
        usleep(2000);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", dir);
    ck_assert_msg(access(path, F_OK) != 0, "a checkpoint was written before the kill");
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    const char *with = strstr(r.err, "start it again with: attnlab train ");
    ck_assert_msg(strstr(r.err, "before its first checkpoint") && with, "message: %s", r.err);
    /* the command given, as given (plain words here), starts the run again */
    const char *words[64];
    char line[1024];
    snprintf(line, sizeof line, "%s", with + strlen("start it again with: attnlab "));
    line[strcspn(line, "\n")] = '\0';
    size_t n = 0;
    for (char *w = strtok(line, " "); w && n < 60; w = strtok(NULL, " "))
        words[n++] = w;
    ck_assert_str_eq(words[n - 2], "--out");
    ck_assert_str_eq(words[n - 1], dir);
    words[n++] = "--steps"; /* shorter, the last value wins */
    words[n++] = "3";
    words[n] = NULL;
    cli_run(&r, NULL, words);
    ck_assert_msg(r.status == 0, "the command given fails: %s", r.err);
    cli_remove(dir);
}
END_TEST

Suite *make_cli_runs_suite(void)
{
    Suite *s = suite_create("cli_runs");
    TCase *tc = tcase_create("reliability");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, divergence_is_reported_and_keeps_files);
    tcase_add_test(tc, interrupt_then_resume_gives_the_same_weights);
    tcase_add_loop_test(tc, a_signal_stops_the_final_evaluation, 0, 2);
    tcase_add_test(tc, same_command_same_bytes);
    suite_add_tcase(s, tc);
    tc = tcase_create("ownership");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_finished_run_is_not_replaced_without_force);
    tcase_add_test(tc, a_stopped_run_is_not_replaced_without_force);
    tcase_add_test(tc, a_directory_in_use_is_refused);
    tcase_add_test(tc, resume_refuses_files_of_another_run);
    tcase_add_test(tc, a_run_killed_before_its_first_checkpoint_says_how_to_start_again);
    suite_add_tcase(s, tc);
    return s;
}
