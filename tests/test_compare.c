/* test_compare.c — attnlab compare and report seen from outside: the documented tables,
 * a rerun that skips and resumes, --print-jobs, a stop by signal, and ownership: a run
 * directory of another command is never replaced, a run still locked is waited for, and
 * compare killed by SIGKILL leaves no run writing. Runs the built program
 * (testcli.h); locks are also taken in-process (runlock.h). */
#include <check.h>
#include <fcntl.h>
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

/* ---- compare and report ------------------------------------------------------------------ */

#define TINY_COMPARE "compare", "--preset", "smoke", "--models", "lstm,transformer", \
    "--steps", "12", "--eval-lengths", "2:8:2", "--samples", "8", "--jobs", "2"

START_TEST(compare_writes_documented_tables_and_resumes)
{
    char dir[64], line[1024];
    snprintf(dir, sizeof dir, "/tmp/attnlab-cmp-%ld", (long)getpid());
    run_out r;
    cli_run(&r, NULL, (const char *const[]){TINY_COMPARE, "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "compare: %s", r.err);
    static const struct {
        const char *file, *header;
    } tables[] = {
        {"accuracy.tsv", "model\tparams\tlen\tseeds\ttoken_mean\ttoken_sd\ttoken_min\t"
                         "token_max\tseq_mean\tseq_sd\tseq_min\tseq_max"},
        {"positions.tsv", "model\tlen\tposition\tseeds\tacc_mean\tacc_min\tacc_max"},
        {"curves.tsv", "model\tstep\tseeds\tseconds_mean\tloss_mean\tloss_min\tloss_max\t"
                       "acc_mean\tacc_min\tacc_max\tval_loss_mean\tval_loss_min\t"
                       "val_loss_max\tval_acc_mean\tval_acc_min\tval_acc_max"},
        {"budget.tsv", "model\tstep\tseeds\trunning\tseconds_median\tseq_median\tseq_min\t"
                       "seq_max\ttok_median\ttok_min\ttok_max\tcapped"},
        {"budget_at.tsv", "model\tmeasure\tlevel\tseeds\treached\tsteps_median\t"
                          "steps_min\tsteps_max\tseconds_median\tseconds_min\t"
                          "seconds_max\tflops_median\tflops_min\tflops_max"},
        {"convergence.tsv", "model\tparams\tseeds\tstopped_target\tstopped_converged\t"
                            "stopped_budget\tsteps_median\tsteps_min\tsteps_max\t"
                            "best_step_median\tbest_step_min\tbest_step_max\t"
                            "best_seconds_median\tbest_seconds_min\tbest_seconds_max\t"
                            "best_val_acc_median\tbest_val_acc_min\ttarget\tcap\t"
                            "reached_target\tverdict\tverdict_zh"},
        {"capacity.tsv", "model\tbase\tsetups\tparams\tseeds\treach_median\treach_min\t"
                         "reach_max\ttok_train_max_mean\ttok_train_max_min\t"
                         "tok_train_max_max"},
        {"cost.tsv", "model\tlen\tseeds\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq"},
        {"summary.tsv", "model\tparams\tseeds\ttrain_seconds_mean\tlen\ttoken_mean\ttoken_sd\t"
                        "seq_mean\tseq_sd"},
        {"compute.tsv", "model\truns\ttrain_steps\ttrain_seconds\tcore_hours"},
        {"manifest.tsv", "key\tvalue"},
        {"runs/lstm-s1/eval.tsv", "model\tlen\tsamples\ttoken_acc\tseq_acc\tloss"},
        {"runs/transformer-s1/cost.tsv",
         "model\tlen\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq"},
    };
    {
        /* the manifest records the source commit and whether the tree was modified */
        char mpath[128];
        snprintf(mpath, sizeof mpath, "%s/manifest.tsv", dir);
        FILE *mf = fopen(mpath, "r");
        ck_assert_ptr_nonnull(mf);
        char mline[1024];
        int commit = 0, modified = 0;
        while (fgets(mline, sizeof mline, mf)) {
            commit |= strncmp(mline, "commit\t", 7) == 0 && mline[7] != '\n';
            modified |= strncmp(mline, "modified\t", 9) == 0;
        }
        fclose(mf);
        ck_assert_msg(commit && modified, "manifest.tsv has no commit or modified line");
    }
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        cli_first_line(dir, tables[k].file, line, sizeof line);
        ck_assert_msg(strcmp(line, tables[k].header) == 0, "%s header: '%s'", tables[k].file,
                      line);
    }
    char path[256], text[8192];
    snprintf(path, sizeof path, "%s/accuracy.tsv", dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "\nlstm\t"));
    ck_assert_ptr_nonnull(strstr(text, "\ntransformer\t"));
    snprintf(path, sizeof path, "%s/figure_vars.gp", dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "models = \"lstm transformer\""));
    snprintf(path, sizeof path, "%s/report.html", dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "<table>"));
    ck_assert(!cli_has_temporary(dir));

    /* the same command again: both runs are finished and skipped */
    cli_run(&r, NULL, (const char *const[]){TINY_COMPARE, "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "second compare: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "lstm seed 1: finished earlier, skipped"));
    ck_assert_ptr_nonnull(strstr(r.err, "transformer seed 1: finished earlier, skipped"));
    ck_assert_ptr_nonnull(strstr(r.err, "0 to do"));

    /* report merges run directories given one by one */
    char out[96], r1[128], r2[128];
    snprintf(out, sizeof out, "%s-merged", dir);
    snprintf(r1, sizeof r1, "%s/runs/lstm-s1", dir);
    snprintf(r2, sizeof r2, "%s/runs/transformer-s1", dir);
    cli_run(&r, NULL, (const char *const[]){"report", "--out", out, r1, r2, NULL});
    ck_assert_msg(r.status == 0, "report: %s", r.err);
    snprintf(path, sizeof path, "%s/accuracy.tsv", out);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "\nlstm\t"));
    ck_assert_ptr_nonnull(strstr(text, "\ntransformer\t"));
    /* a directory that is not a run is named and skipped, not fatal */
    cli_run(&r, NULL, (const char *const[]){"report", "--out", out, r1, "/tmp", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "skipping /tmp"));

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, out);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(compare_print_jobs)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "quick", "--seeds", "3",
                                            "--out", "/tmp/x", "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(cli_count_lines(r.out), 9); /* 3 models x 3 seeds */
    ck_assert_ptr_nonnull(strstr(r.out, " train --model=transformer "));
    ck_assert_ptr_nonnull(strstr(r.out, "--seed=3 "));
    ck_assert_ptr_nonnull(strstr(r.out, "'--trace=3 1 4 1 5 9 2 6 5 3 5 8'"));
    ck_assert_int_ne(access("/tmp/x/manifest.tsv", F_OK), 0); /* nothing was run */
    cli_run(&r, NULL, (const char *const[]){"compare", "--hidden", "7", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--hidden"));
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "huge", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "huge"));
}
END_TEST

START_TEST(killed_compare_leaves_no_partial_file)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/attnlab-kill-%ld", (long)getpid());
    const char *argv[] = {tu_program(), "compare", "--models", "lstm", "--seeds", "2",
                          "--steps", "3000", "--train-len", "4:8", "--jobs", "2",
                          "--out", dir, NULL};
    /* its own process group: the signal below reaches it and its runs */
    pid_t pid = cli_spawn_silent(argv, 1);
    char ck[128];
    snprintf(ck, sizeof ck, "%s/runs/lstm-s1/checkpoint.ckpt", dir);
    for (int k = 0; k < 4000 && access(ck, F_OK) != 0; k++)
        usleep(5000);
    usleep(20000);
    kill(-pid, SIGTERM); /* as a scheduler or `kill` would: to the whole group */
    int st;
    waitpid(pid, &st, 0);
    ck_assert(WIFEXITED(st));
    ck_assert_msg(WEXITSTATUS(st) == 143, "compare exit status %d", WEXITSTATUS(st));
    ck_assert_msg(!cli_has_temporary(dir), "a temporary file was left in %s", dir);
    /* each run stopped with its state saved: a resumable checkpoint and a whole log */
    char path[160], line[256];
    for (int s = 1; s <= 2; s++) {
        snprintf(path, sizeof path, "%s/runs/lstm-s%d", dir, s);
        cli_first_line(path, "train_log.tsv", line, sizeof line);
        ck_assert_str_eq(line, "step\tseconds\tlr\tloss\ttoken_acc\tseq_acc\tgrad_norm\tseq_per_s\t"
                               "val_loss\tval_token_acc\tval_seq_acc\tval_seq_acc_max");
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST


/* ---- ownership ---------------------------------------------------------------------------- */

/* One lstm run of the smoke preset, 12 steps: a comparison of a few seconds. */
#define ONE_RUN "compare", "--preset", "smoke", "--models", "lstm", "--steps", "12", \
    "--eval-lengths", "2:8:2", "--samples", "8", "--jobs", "1"

/* Starts argv (argv[0] the program) in the background, its standard error into the file
 * log, its standard output discarded; returns its pid. */
static pid_t spawn_logged(const char *const *argv, const char *log)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY), fe = open(log, O_WRONLY | O_CREAT | O_TRUNC,
                                                          0644);
        dup2(null, 1);
        dup2(fe, 2);
        char *rw[32];
        size_t n = 0;
        for (; argv[n] && n < 31; n++)
            rw[n] = strdup(argv[n]);
        rw[n] = NULL;
        execv(rw[0], rw);
        _exit(127);
    }
    return pid;
}

START_TEST(compare_never_replaces_a_run_of_another_command)
{
    /* a comparison directory of about 2300 characters: longer than any fixed buffer the
     * commands of its runs or its manifest once had */
    static char dir[2600], path[2800], keep[128], text[16384];
    char top[64];
    snprintf(top, sizeof top, "/tmp/attnlab-cmpx-%ld", (long)getpid());
    int len = snprintf(dir, sizeof dir, "%s", top);
    for (int k = 0; k < 11; k++)
        len += snprintf(dir + len, sizeof dir - (size_t)len, "/%0200d", k);
    /* and a word a shell would split: the manifest must quote it */
    len += snprintf(dir + len, sizeof dir - (size_t)len, "/with space");
    run_out r;
    cli_run(&r, NULL, (const char *const[]){ONE_RUN, "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "compare: %s", r.err);
    snprintf(path, sizeof path, "%s/runs/lstm-s1/eval.tsv", dir);
    ck_assert_msg(access(path, F_OK) == 0, "the run was not written where compare said");
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    cli_slurp(path, text, sizeof text);
    static char quoted[2700];
    snprintf(quoted, sizeof quoted, " --out '%s'\n", dir);
    ck_assert_msg(strstr(text, quoted), "manifest.tsv does not hold the whole command, each "
                  "word as a shell takes it back");
    /* another command into the same directory: refused before anything starts */
    snprintf(path, sizeof path, "%s/runs/lstm-s1/model.ckpt", dir);
    snprintf(keep, sizeof keep, "%s.keep", top);
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, keep);
    ck_assert_int_eq(system(cmd), 0);
    cli_run(&r, NULL, (const char *const[]){ONE_RUN, "--steps", "13", "--out", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "runs/lstm-s1 holds a run that another command made"),
                  "message: %s", r.err);
    ck_assert_msg(cli_same_file(path, keep), "the run of the first command was replaced");
    cli_remove(top);
    cli_remove(keep);
}
END_TEST

START_TEST(compare_waits_for_a_run_in_use)
{
    char dir[64], run[96], log[96], err[256], path[160], text[4096] = "";
    snprintf(dir, sizeof dir, "/tmp/attnlab-cmpw-%ld", (long)getpid());
    snprintf(run, sizeof run, "%s/runs/lstm-s1", dir);
    snprintf(log, sizeof log, "%s.log", dir);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", run);
    ck_assert_int_eq(system(cmd), 0);
    runlock held;
    ck_assert_msg(runlock_take(&held, run, err, sizeof err) == 0, "%s", err);
    const char *argv[] = {tu_program(), ONE_RUN, "--out", dir, NULL};
    pid_t pid = spawn_logged(argv, log);
    /* it says it waits, goes on waiting, and has not touched the run */
    for (int k = 0; k < 4000 && !strstr(text, "waiting for it to end"); k++) {
        usleep(5000);
        cli_slurp(log, text, sizeof text);
    }
    ck_assert_msg(strstr(text, "waiting for it to end"), "stderr: %s", text);
    usleep(300000);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0);
    snprintf(path, sizeof path, "%s/command.txt", run);
    ck_assert_int_ne(access(path, F_OK), 0);
    runlock_release(&held);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    cli_slurp(log, text, sizeof text);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "compare: %s", text);
    ck_assert_msg(strstr(text, "lstm-s1 is in use by another attnlab process") &&
                      strstr(text, "waiting for it to end"),
                  "stderr: %s", text);
    snprintf(path, sizeof path, "%s/eval.tsv", run);
    ck_assert_int_eq(access(path, F_OK), 0);
    cli_remove(dir);
    unlink(log);
}
END_TEST

START_TEST(compare_killed_by_sigkill_leaves_no_run_writing)
{
    char dir[64], run[2][96];
    snprintf(dir, sizeof dir, "/tmp/attnlab-kill9-%ld", (long)getpid());
    const char *argv[] = {tu_program(), "compare", "--models", "lstm", "--seeds", "2",
                          "--steps", "3000", "--train-len", "4:8", "--jobs", "2",
                          "--out", dir, NULL};
    pid_t pid = cli_spawn_silent(argv, 1);
    /* both runs under way: each holds the lock of its directory */
    long holder[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        snprintf(run[s], sizeof run[s], "%s/runs/lstm-s%d", dir, s + 1);
        for (int k = 0; k < 4000 && (holder[s] = runlock_holder(run[s])) == 0; k++)
            usleep(5000);
        ck_assert_msg(holder[s] > 0, "%s: no process holds the run directory", run[s]);
    }
    usleep(100000);
    kill(pid, SIGKILL); /* compare alone: it cannot pass this one on */
    int st;
    waitpid(pid, &st, 0);
    /* within seconds no run holds its directory: each has ended */
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 2000 && runlock_holder(run[s]) != 0; k++)
            usleep(5000);
        ck_assert_msg(runlock_holder(run[s]) == 0,
                      "%s: its run (pid %ld) still writes 10 s after compare was killed",
                      run[s], holder[s]);
        /* stopped as on SIGTERM: its state saved, not finished */
        char path[256];
        snprintf(path, sizeof path, "%s/eval.tsv", run[s]);
        ck_assert_int_ne(access(path, F_OK), 0);
    }
    ck_assert_msg(!cli_has_temporary(dir), "a temporary file was left in %s", dir);
    cli_remove(dir);
}
END_TEST

START_TEST(report_refuses_more_runs_than_it_merges)
{
    char dir[64], path[256];
    snprintf(dir, sizeof dir, "/tmp/attnlab-many-%ld", (long)getpid());
    snprintf(path, sizeof path, "%s/runs", dir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    for (int k = 0; k < 4097; k++) {
        snprintf(path, sizeof path, "%s/runs/r%04d", dir, k);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/runs/r%04d/config.tsv", dir, k);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fclose(f);
    }
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"report", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "more than 4096 run directories (4097 found)"), "message: %s",
                  r.err);
    cli_remove(dir);
}
END_TEST

Suite *make_compare_suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("compare");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, compare_print_jobs);
    tcase_add_test(tc, report_refuses_more_runs_than_it_merges);
    suite_add_tcase(s, tc);
    /* compare starts the program itself once per run: under qemu-user without binfmt
     * (.ci/arm64.sh) the kernel cannot start an arm64 program, so these are left out there */
    tc = tcase_create("compare_runs");
    tcase_set_tags(tc, "noqemu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, compare_writes_documented_tables_and_resumes);
    tcase_add_test(tc, killed_compare_leaves_no_partial_file);
    tcase_add_test(tc, compare_never_replaces_a_run_of_another_command);
    tcase_add_test(tc, compare_waits_for_a_run_in_use);
    tcase_add_test(tc, compare_killed_by_sigkill_leaves_no_run_writing);
    suite_add_tcase(s, tc);
    return s;
}
