/* test_report.c — `attnlab report` on run directories and paths that are not to be
 * trusted: nothing in them runs, impossible values are refused by name, nothing is
 * silently cut off. (What happens to the figures is test_plots.c's.)
 *
 * Each case makes run directories from tests/fixtures/run/ with one value changed
 * (testreport.h) and runs the program as a user would, reading what it printed. Cases
 * that need no figure point ATTNLAB_PLOTS at a folder that does not exist, so report
 * writes its tables and says the figure scripts were not found; the cases where gnuplot
 * must run are left out without it.
 *
 * "Nothing runs" is checked the only way it can be: every payload is a command that
 * would create a file in an empty folder of the test's own, and that folder must stay
 * empty. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/core/config.h"
#include "../common/core/model.h"
#include "testreport.h"
#include "testutil.h"

/* ---- impossible values are refused by name ---------------------------------------------- */

/* A run made impossible by one edit, and what the line that skips it must say. */
typedef struct bad_case {
    const char *name;
    ru_edit e;
    const char *says[3];
} bad_case;

static const bad_case bad_cases[] = {
    {"a-tok5", {"eval.tsv", RU_SET, "token_acc", 1, "5.0"},
     {"eval.tsv line 2, field token_acc", "'5.0' is out of range", "[0, 1]"}},
    {"a-tokneg", {"eval.tsv", RU_SET, "token_acc", 2, "-1"},
     {"eval.tsv line 3, field token_acc", "'-1' is out of range", NULL}},
    {"a-seqnan", {"eval.tsv", RU_SET, "seq_acc", 1, "nan"},
     {"eval.tsv line 2, field seq_acc", "not a number", NULL}},
    {"b-lenneg", {"eval.tsv", RU_SET, "len", 1, "-4"},
     {"eval.tsv line 2, field len", "'-4' is not a whole number", "max_len"}},
    {"b-lenhuge", {"eval.tsv", RU_SET, "len", 1, "1e300"},
     {"eval.tsv line 2, field len", "'1e300' is not a whole number", NULL}},
    {"b-lenbeyond", {"eval.tsv", RU_SET, "len", 1, "257"},
     {"eval.tsv line 2, field len", "out of range", "[1, 256]"}},
    {"c-evaldup", {"eval.tsv", RU_DUP, NULL, 2, NULL},
     {"eval.tsv: lines 3 and 6", "same len", NULL}},
    {"c-evalempty", {"eval.tsv", RU_CUT, NULL, 0, NULL}, {"eval.tsv has no rows", NULL, NULL}},
    {"c-evalmodel", {"eval.tsv", RU_SET, "model", 1, "transformer"},
     {"eval.tsv line 2, field model", "not the run's model", NULL}},
    {"c-noeval", {"eval.tsv", RU_DEL, NULL, 0, NULL}, {"eval.tsv", NULL, NULL}},
    {"d-cfgmodel", {"config.tsv", RU_SET, "model", 0, "gpt"},
     {"config.tsv", "model 'gpt' is not a model of this build", "lstm"}},
    {"d-cfgtask", {"config.tsv", RU_SET, "task", 0, "sort"},
     {"config.tsv", "task 'sort' is not a task of this build", NULL}},
    {"d-cfgdup", {"config.tsv", RU_ADD, NULL, 0, "seed\t7"},
     {"config.tsv", "both set seed", NULL}},
    {"d-cfgrange", {"config.tsv", RU_SET, "train_max", 0, "300"},
     {"config.tsv", "--train-len", NULL}},
    {"e-pos", {"eval_positions.tsv", RU_SET, "position", 1, "99"},
     {"eval_positions.tsv line 2, field position", "out of range", NULL}},
    {"e-posacc", {"eval_positions.tsv", RU_SET, "accuracy", 1, "1.5"},
     {"eval_positions.tsv line 2, field accuracy", "out of range", NULL}},
    {"e-poslen", {"eval_positions.tsv", RU_SET, "len", 1, "10"},
     {"eval_positions.tsv line 2, field len", "not a length of eval.tsv", NULL}},
    {"e-posdup", {"eval_positions.tsv", RU_DUP, NULL, 1, NULL},
     {"eval_positions.tsv: lines 2 and", "same len and position", NULL}},
    {"f-logacc", {"train_log.tsv", RU_SET, "token_acc", 1, "2"},
     {"train_log.tsv line 2, field token_acc", "out of range", NULL}},
    {"f-logstep", {"train_log.tsv", RU_SET, "step", 1, "1000"},
     {"train_log.tsv line 2, field step", "the run's steps", NULL}},
    {"f-logloss", {"train_log.tsv", RU_SET, "loss", 1, "-1"},
     {"train_log.tsv line 2, field loss", "out of range", NULL}},
    {"f-logdup", {"train_log.tsv", RU_DUP, NULL, 1, NULL},
     {"train_log.tsv: lines 2 and 3", NULL, NULL}},
    {"g-costlen", {"cost.tsv", RU_SET, "len", 1, "0"},
     {"cost.tsv line 2, field len", NULL, NULL}},
    {"g-costms", {"cost.tsv", RU_SET, "train_ms_per_seq", 1, "-3"},
     {"cost.tsv line 2, field train_ms_per_seq", NULL, NULL}},
    {"h-params", {"build.tsv", RU_SET, "parameters", 0, "many"},
     {"build.tsv line 8, field parameters", "not a whole number", NULL}},
    {"h-secs", {"build.tsv", RU_SET, "train_seconds", 0, "-1"},
     {"build.tsv line 10, field train_seconds", "out of range", NULL}},
    {"h-stopped", {"build.tsv", RU_SET, "stopped", 0, "tired"},
     {"build.tsv line 11, field stopped", "budget, converged, target", NULL}},
    {"h-beststep", {"build.tsv", RU_SET, "best_step", 0, "41"},
     {"build.tsv line 12, field best_step", "the run's steps", NULL}},
    {"h-bestsecs", {"build.tsv", RU_SET, "best_seconds", 0, "soon"},
     {"build.tsv line 13, field best_seconds", "not a number", NULL}},
    {"f-valacc", {"train_log.tsv", RU_SET, "val_token_acc", 1, "1.01"},
     {"train_log.tsv line 2, field val_token_acc", "out of range", NULL}},
    {"f-valmax", {"train_log.tsv", RU_SET, "val_seq_acc_max", 1, "-0.5"},
     {"train_log.tsv line 2, field val_seq_acc_max", "out of range", NULL}},
};
enum { N_BAD = sizeof bad_cases / sizeof bad_cases[0] };


START_TEST(impossible_values_are_refused_by_name)
{
    char base[RU_PATH], line[2048];
    ru_fresh_dir(base, sizeof base);
    const ru_edit seed2 = {"config.tsv", RU_SET, "seed", 0, "2"};
    ru_make_run1(base, "good-1", NULL);
    ru_make_run1(base, "good-2", &seed2);
    for (size_t i = 0; i < N_BAD; i++)
        ru_make_run1(base, bad_cases[i].name, &bad_cases[i].e);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* one line for each run that adds nothing, naming the file, the line and the field */
    ck_assert_uint_eq(ru_count_lines_with(r.err, "attnlab report: skipping "), N_BAD);
    for (size_t i = 0; i < N_BAD; i++) {
        char who[RU_PATH + 64];
        ru_fmt(who, sizeof who, "skipping %s/runs/%s: ", base, bad_cases[i].name);
        ru_line_with(r.err, who, line, sizeof line);
        ck_assert_msg(line[0], "%s is not listed as skipped:\n%s", bad_cases[i].name, r.err);
        for (size_t k = 0; k < 3 && bad_cases[i].says[k]; k++)
            ck_assert_msg(strstr(line, bad_cases[i].says[k]), "%s: no \"%s\" in: %s",
                          bad_cases[i].name, bad_cases[i].says[k], line);
    }
    /* the two good runs are the only seeds */
    char path[RU_PATH];
    ru_fmt(path, sizeof path, "%s/accuracy.tsv", base);
    char *acc = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(acc);
    ck_assert_msg(strstr(acc, "\nlstm\t166987\t2\t2\t") != NULL, "accuracy.tsv:\n%s", acc);
    ck_assert_msg(strstr(acc, "5.0") == NULL && ru_count_lines_with(acc, "\nlstm\t") == 4,
                  "accuracy.tsv:\n%s", acc);
    free(acc);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* ---- the tables of training ------------------------------------------------------------- */

/* Two seeds: one reaches the target at step 20 and stops, the other runs its 40 steps.
 * budget.tsv carries the first at its last validation after step 20 (seeds 2, running
 * 1, seconds at its own pace), convergence.tsv counts the two ends and takes the median
 * of their best steps; a log with some validation columns and not others is refused. */
START_TEST(budget_carries_runs_stopped_early)
{
    char base[RU_PATH], a[RU_PATH + 16], b[RU_PATH + 16], path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    const ru_edit seed2 = {"config.tsv", RU_SET, "seed", 0, "2"};
    ru_make_run1(base, "a", NULL);
    ru_make_run1(base, "b", &seed2);
    ru_fmt(a, sizeof a, "%s/runs/a", base);
    ru_fmt(b, sizeof b, "%s/runs/b", base);
    static const char head[] = "step\tseconds\tlr\tloss\ttoken_acc\tseq_acc\tgrad_norm\t"
                               "seq_per_s\tval_loss\tval_token_acc\tval_seq_acc\t"
                               "val_seq_acc_max\n";
    char text[2048];
    ru_fmt(text, sizeof text, "%s10\t1\t0.001\t1\t0.5\t0\t1\t1\t1\t0.6\t0.2\t0.5\n"
                              "20\t2\t0.001\t0.1\t0.99\t0.9\t1\t1\t0.1\t0.9995\t1\t1\n", head);
    ru_put(a, "train_log.tsv", text);
    ru_put(a, "build.tsv", "key\tvalue\nparameters\t166987\ntrain_steps\t20\n"
                        "train_seconds\t2\nstopped\ttarget\nbest_step\t20\n"
                        "best_seconds\t2\n");
    ru_fmt(text, sizeof text, "%s10\t3\t0.001\t2\t0.3\t0\t1\t1\t2\t0.3\t0\t0.1\n"
                              "20\t6\t0.001\t2\t0.3\t0\t1\t1\t2\t0.3\t0\t0.2\n"
                              "30\t9\t0.001\t2\t0.3\t0\t1\t1\t2\t0.4\t0\t0.3\n"
                              "40\t12\t0.001\t2\t0.3\t0\t1\t1\t2\t0.5\t0\t0.4\n", head);
    ru_put(b, "train_log.tsv", text);
    ru_put(b, "build.tsv", "key\tvalue\nparameters\t166987\ntrain_steps\t40\n"
                        "train_seconds\t12\nstopped\tbudget\nbest_step\t40\n"
                        "best_seconds\t12\n");
    /* a third run whose log lost one validation column: refused */
    ru_make_run1(base, "c", &(ru_edit){"config.tsv", RU_SET, "seed", 0, "3"});
    ru_fmt(path, sizeof path, "%s/runs/c", base);
    ru_put(path, "train_log.tsv", "step\tseconds\tlr\tloss\ttoken_acc\tseq_acc\tgrad_norm\t"
                               "seq_per_s\tval_loss\tval_token_acc\n"
                               "40\t1\t0.001\t1\t0.5\t0\t1\t1\t1\t0.5\n");
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "some validation columns and not others"), "%s", r.err);
    ru_fmt(path, sizeof path, "%s/budget.tsv", base);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    /* step 20: both logged it; step 40: a is carried at 1.0, seconds 2 * 40 / 20 = 4 */
    ck_assert_msg(strstr(t, "\nlstm\t20\t2\t2\t4.000\t0.600000\t0.200000\t1.000000\t"),
                  "budget.tsv:\n%s", t);
    /* b, which the cap ended at step 40, is counted there (capped 1) */
    ck_assert_msg(strstr(t, "\nlstm\t40\t2\t1\t8.000\t0.700000\t0.400000\t1.000000\t"
                            "0.749750\t0.500000\t0.999500\t1\n"), "budget.tsv:\n%s", t);
    ck_assert_msg(strstr(t, "\nlstm\t30\t2\t1\t6.000\t"), "budget.tsv:\n%s", t);
    ck_assert_msg(strstr(t, "\t0\n") && !strstr(t, "\t2\n"), "budget.tsv:\n%s", t);
    free(t);
    ru_fmt(path, sizeof path, "%s/convergence.tsv", base);
    t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, "\nlstm\t166987\t2\t1\t0\t1\t30\t20\t40\t30\t20\t40\t7\t2\t12\t"
                            "0.74975\t0.5\t"), "convergence.tsv:\n%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* Censoring: three seeds with the target 0.999 and a cap of 40 steps; a reaches the
 * target at step 20, b and c are ended by the cap below it. convergence.tsv, the printed
 * table and report.html say that two of three did not reach 0.999 within 40 steps and
 * never that they converged; budget_at.tsv counts a run that never reached a level as
 * more than its last step, and writes "> 40" where a median or extreme falls on one. */
START_TEST(capped_runs_are_censored)
{
    char base[RU_PATH], dir[RU_PATH + 16], path[RU_PATH + 64], text[2048];
    ru_fresh_dir(base, sizeof base);
    static const char head[] = "step\tseconds\tlr\tloss\ttoken_acc\tseq_acc\tgrad_norm\t"
                               "seq_per_s\tval_loss\tval_token_acc\tval_seq_acc\t"
                               "val_seq_acc_max\n";
    static const struct {
        const char *name, *seed, *end, *log;
    } runs[] = {
        {"a", "1", "target", "10\t1\t0.001\t1\t0.5\t0\t1\t1\t1\t0.95\t0.2\t0.4\n"
                             "20\t2\t0.001\t0.1\t0.99\t0.9\t1\t1\t0.1\t0.9995\t1\t0.95\n"},
        {"b", "2", "budget", "10\t1\t0.001\t1\t0.5\t0\t1\t1\t1\t0.5\t0\t0\n"
                             "20\t2\t0.001\t1\t0.5\t0\t1\t1\t1\t0.92\t0\t0.2\n"
                             "30\t3\t0.001\t1\t0.5\t0\t1\t1\t1\t0.95\t0\t0.3\n"
                             "40\t4\t0.001\t1\t0.5\t0\t1\t1\t1\t0.97\t0\t0.6\n"},
        {"c", "3", "budget", "10\t1\t0.001\t1\t0.5\t0\t1\t1\t1\t0.6\t0\t0\n"
                             "20\t2\t0.001\t1\t0.5\t0\t1\t1\t1\t0.91\t0\t0.1\n"
                             "30\t3\t0.001\t1\t0.5\t0\t1\t1\t1\t0.95\t0\t0.5\n"
                             "40\t4\t0.001\t1\t0.5\t0\t1\t1\t1\t0.99\t0\t0.7\n"},
    };
    for (size_t k = 0; k < 3; k++) {
        const ru_edit e[] = {{"config.tsv", RU_SET, "seed", 0, runs[k].seed},
                             {"config.tsv", RU_ADD, NULL, 0, "stop_acc\t0.999"}};
        ru_fmt(dir, sizeof dir, "%s/runs/%s", base, runs[k].name);
        ru_make_run(dir, e, 2);
        ru_fmt(text, sizeof text, "%s%s", head, runs[k].log);
        ru_put(dir, "train_log.tsv", text);
        const char *last = k ? "40" : "20";
        ru_fmt(text, sizeof text, "key\tvalue\nparameters\t166987\ntrain_steps\t%s\n"
               "train_seconds\t%s\nstopped\t%s\nbest_step\t%s\nbest_seconds\t2\n", last,
               k ? "4" : "2", runs[k].end, last);
        ru_put(dir, "build.tsv", text);
    }
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    static const char says[] = "2 of 3 did not reach 0.999 within 40 steps (stopped by the cap)";
    ck_assert_msg(strstr(r.out, says) && strstr(r.out, "cut short"), "%s", r.out);
    ck_assert_msg(!strstr(r.out, "converged"), "%s", r.out);
    ru_fmt(path, sizeof path, "%s/convergence.tsv", base);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, "\t0.999\t40\t1\t") && strstr(t, says), "convergence.tsv:\n%s", t);
    free(t);
    ru_fmt(path, sizeof path, "%s/report.html", base);
    t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, says) && strstr(t, "Some runs stopped before they reached the "
                                               "target"), "report.html lacks the note");
    free(t);
    /* the Chinese page says the same in Chinese (convergence.tsv's verdict_zh) */
    static const char says_zh[] = "3 次运行中有 2 次在 40 步内没有达到 0.999（被上限停止）";
    ru_result_free(&r);
    ru_run(&r, (const char *const[]){"report", "--lang", "zh", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/convergence.tsv", base);
    t = ru_slurp(path, NULL);
    ck_assert_msg(t && strstr(t, "\tverdict\tverdict_zh\n") && strstr(t, says_zh),
                  "convergence.tsv:\n%s", t ? t : "(missing)");
    free(t);
    ru_fmt(path, sizeof path, "%s/report.zh.html", base);
    t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, says_zh) && !strstr(t, says), "report.zh.html: the verdict is not "
                  "the Chinese one");
    free(t);
    ru_fmt(path, sizeof path, "%s/budget_at.tsv", base);
    t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    /* 0.9: a at step 10, b and c at 20; 0.99: a at 20, c at 40, b never (> 40); 0.999: a at
     * 20, b and c never: the median falls on a censored run */
    ck_assert_msg(strstr(t, "\nlstm\tval_token_acc\t0.9\t3\t3\t20\t10\t20\t2\t1\t2\t"),
                  "budget_at.tsv:\n%s", t);
    ck_assert_msg(strstr(t, "\nlstm\tval_token_acc\t0.99\t3\t2\t40\t20\t> 40\t4\t2\t> 4\t"),
                  "budget_at.tsv:\n%s", t);
    ck_assert_msg(strstr(t, "\nlstm\tval_token_acc\t0.999\t3\t1\t> 40\t20\t> 40\t> 4\t2\t"
                            "> 4\t> "), "budget_at.tsv:\n%s", t);
    ck_assert_msg(strstr(t, "\nlstm\tval_seq_acc_max\t0.5\t3\t3\t30\t20\t40\t"),
                  "budget_at.tsv:\n%s", t);
    ck_assert_msg(strstr(t, "\nlstm\tval_seq_acc_max\t0.9\t3\t1\t> 40\t20\t> 40\t"),
                  "budget_at.tsv:\n%s", t);
    ck_assert_msg(!strstr(t, "nan"), "FLOPs of a generated task are known:\n%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* compute.tsv adds up what the runs cost: two seeds of one model, 1,800 s on one thread
 * and 5,400 s on two, are 2 runs, 7,200 training seconds and 12,600 core-seconds (3.5
 * core-hours); the line "all" repeats it for the only group. */
START_TEST(compute_adds_up_seconds_times_threads)
{
    char base[RU_PATH], dir[RU_PATH + 16], path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    static const struct {
        const char *name, *seed, *threads, *steps, *secs;
    } runs[] = {{"a", "1", "1", "40", "1800"}, {"b", "2", "2", "30", "5400"}};
    for (size_t k = 0; k < 2; k++) {
        const ru_edit e[] = {{"config.tsv", RU_SET, "seed", 0, runs[k].seed},
                             {"config.tsv", RU_SET, "threads", 0, runs[k].threads},
                             {"build.tsv", RU_SET, "train_steps", 0, runs[k].steps},
                             {"build.tsv", RU_SET, "train_seconds", 0, runs[k].secs}};
        ru_fmt(dir, sizeof dir, "%s/runs/%s", base, runs[k].name);
        ru_make_run(dir, e, 4);
    }
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/compute.tsv", base);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strcmp(t, "model\truns\ttrain_steps\ttrain_seconds\tcore_hours\n"
                            "lstm\t2\t70\t7200.0\t3.500\nall\t2\t70\t7200.0\t3.500\n") == 0,
                  "compute.tsv:\n%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* Three sizes of the LSTM given in an order that is not their size's: capacity.tsv lists
 * them from the smallest, and each reach counts from the shortest trained length (4) up
 * to the last length of 99% token accuracy or more: 6 for a run that fails at 8, 8 for
 * one that holds throughout (its failure at 2, below the range, does not count), 0 for
 * one below 99% at 4 already. */
START_TEST(capacity_lists_sizes_in_order_with_their_reach)
{
    char base[RU_PATH], dir[RU_PATH + 16];
    ru_fresh_dir(base, sizeof base);
    const ru_edit h128[] = {{"eval.tsv", RU_SET, "token_acc", 2, "1.0"},
                            {"eval.tsv", RU_SET, "token_acc", 3, "0.995"},
                            {"eval.tsv", RU_SET, "token_acc", 4, "0.5"}};
    const ru_edit h256[] = {{"config.tsv", RU_SET, "hidden", 0, "256"},
                            {"build.tsv", RU_SET, "parameters", 0, "595403"},
                            {"eval.tsv", RU_SET, "token_acc", 1, "0.5"},
                            {"eval.tsv", RU_SET, "token_acc", 2, "1.0"},
                            {"eval.tsv", RU_SET, "token_acc", 3, "0.999"},
                            {"eval.tsv", RU_SET, "token_acc", 4, "0.99"}};
    const ru_edit h32[] = {{"config.tsv", RU_SET, "hidden", 0, "32"},
                           {"build.tsv", RU_SET, "parameters", 0, "17707"},
                           {"eval.tsv", RU_SET, "token_acc", 2, "0.9"},
                           {"eval.tsv", RU_SET, "token_acc", 3, "1.0"}};
    ru_fmt(dir, sizeof dir, "%s/runs/a", base);
    ru_make_run(dir, h128, 3);
    ru_fmt(dir, sizeof dir, "%s/runs/b", base);
    ru_make_run(dir, h256, 6);
    ru_fmt(dir, sizeof dir, "%s/runs/c", base);
    ru_make_run(dir, h32, 4);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(dir, sizeof dir, "%s/capacity.tsv", base);
    char *t = ru_slurp(dir, NULL);
    ck_assert_ptr_nonnull(t);
    const char *h32_row = strstr(t, "\nlstm:hidden=32\tlstm\t3\t17707\t1\t0\t0\t0\t");
    const char *h128_row = strstr(t, "\nlstm:hidden=128\tlstm\t3\t166987\t1\t6\t6\t6\t");
    const char *h256_row = strstr(t, "\nlstm:hidden=256\tlstm\t3\t595403\t1\t8\t8\t8\t");
    ck_assert_msg(h32_row && h128_row && h256_row, "capacity.tsv:\n%s", t);
    ck_assert_msg(h32_row < h128_row && h128_row < h256_row, "not by size:\n%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* The FLOPs of cost.tsv are counted again from each run's configuration by the program
 * that reports, not copied from the run: the fixture's run holds the counts of an older
 * program (products only: 7.9319e+06 at length 8), and the comparison's table has this
 * program's. */
START_TEST(cost_flops_are_counted_at_report_time)
{
    char base[RU_PATH], path[RU_PATH + 32], want[64];
    ru_fresh_dir(base, sizeof base);
    ru_make_run1(base, "a", NULL);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    config c;
    config_defaults(&c);
    const model_ops *ops = model_lookup("lstm");
    ck_assert_ptr_nonnull(ops);
    ops->defaults(&c);
    ck_assert(c.symbols == 10 && c.embed == 32 && c.hidden == 128); /* the fixture's */
    ru_fmt(want, sizeof want, "\nlstm\t8\t1\t0.225497\t%.6g\t0.124037\n", ops->flops(&c, 8, 8));
    ck_assert(strstr(want, "7.9319e+06") == NULL);
    ru_fmt(path, sizeof path, "%s/cost.tsv", base);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, want) != NULL, "want%s in cost.tsv:\n%s", want, t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* ---- no silent limits ------------------------------------------------------------------- */

START_TEST(many_runs_and_groups_are_all_reported)
{
    char base[RU_PATH], dir[RU_PATH + 32], value[32], path[RU_PATH];
    ru_fresh_dir(base, sizeof base);
    /* 300 seeds of one setup */
    for (int s = 1; s <= 300; s++) {
        ru_fmt(value, sizeof value, "%d", s);
        ru_fmt(dir, sizeof dir, "%s/a/runs/s%03d", base, s);
        const ru_edit e = {"config.tsv", RU_SET, "seed", 0, value};
        ru_make_run(dir, &e, 1);
    }
    ru_fmt(dir, sizeof dir, "%s/a", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", dir, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/a/accuracy.tsv", base);
    char *text = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "\nlstm\t166987\t2\t300\t"), "accuracy.tsv:\n%.400s", text);
    free(text);
    ru_fmt(path, sizeof path, "%s/a/figure_vars.gp", base);
    text = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "seeds = 300\n"), "figure_vars.gp:\n%s", text);
    free(text);
    ru_result_free(&r);

    /* 20 setups, one run each: 20 groups */
    for (int h = 0; h < 20; h++) {
        ru_fmt(value, sizeof value, "%d", 100 + h);
        ru_fmt(dir, sizeof dir, "%s/b/runs/h%02d", base, h);
        const ru_edit e = {"config.tsv", RU_SET, "hidden", 0, value};
        ru_make_run(dir, &e, 1);
    }
    ru_fmt(dir, sizeof dir, "%s/b", base);
    ru_run(&r, (const char *const[]){"report", dir, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/b/summary.tsv", base);
    text = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(text);
    /* each group has a line per selected length; count the groups at the shortest */
    size_t groups = 0;
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
        groups += strncmp(p + 1, "lstm", 4) == 0 && strstr(p + 1, "\t2\t") &&
                  strstr(p + 1, "\t2\t") < strchr(p + 1, '\n');
    ck_assert_msg(groups == 20, "%zu groups in summary.tsv:\n%s", groups, text);
    for (int h = 0; h < 20; h++) { /* each setup named by its width, the first too */
        char name[64];
        ru_fmt(name, sizeof name, "\nlstm:hidden=%d\t", 100 + h);
        ck_assert_msg(strstr(text, name), "no group %s in summary.tsv", name + 1);
    }
    free(text);
    ru_result_free(&r);

    /* more run directories than one report merges: refused, naming the limit */
    ru_fmt(dir, sizeof dir, "%s/c", base);
    char cmd[2 * RU_PATH];
    ru_fmt(cmd, sizeof cmd, "cd '%s' && mkdir -p runs && cd runs && for i in $(seq 1 4097); do "
           "mkdir r$i && : > r$i/config.tsv || exit 1; done", dir);
    ru_mkdir_p(dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    ru_run(&r, (const char *const[]){"report", dir, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 1 && strstr(r.err, "more than 4096 run directories (4097 "
                                                 "found)"),
                  "status %d: %.300s", r.status, r.err);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* ---- nothing read or typed reaches gnuplot as code ------------------------------------- */

/* Commands, each in a form some reader could run: gnuplot's single and double quotes,
 * the shell's $() and backquotes, a newline, bytes that are not UTF-8. @ stands for the
 * file they would create (fill). */
static const char *const payloads[] = {
    "x';y=system('touch @');b='",
    "x\";system(\"touch @\");\"",
    "$(touch @)",
    "`touch @`",
    /* without a space, so that a setting's name check lets them pass */
    "x\";system(\"touch${IFS}@\");\"",
    "`touch${IFS}@`",
    "a\nb`touch @`",
    "\xff\xfe`touch @`",
};
enum {
    N_PAYLOADS = sizeof payloads / sizeof payloads[0],
    TEXT_PAYLOADS = 6, /* the ones before are text on one line */
    P_NEWLINE = 6,
    P_BYTES = 7,
};

/* A field of a run directory, and whether it is free text (build facts nothing reads:
 * any text is kept, only a broken line or a byte that is not text is refused). */
typedef struct field_case {
    char file[32], field[64];
    size_t row; /* 0: the key of a key/value file; else the first data row */
    int free_text;
} field_case;

enum { MAX_FIELDS = 96 };

/* Every field of every file of the fixture run: each key of config.tsv and build.tsv,
 * each column of the tables. Returns how many. */
static size_t all_fields(field_case *out)
{
    static const char *const files[] = {"config.tsv", "build.tsv", "train_log.tsv",
                                        "eval.tsv", "eval_positions.tsv", "cost.tsv"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[RU_PATH];
        ru_fmt(path, sizeof path, "%s/tests/fixtures/run/%s", ru_src_root(), files[i]);
        char *text = ru_slurp(path, NULL);
        ck_assert_ptr_nonnull(text);
        const int kv = strncmp(text, "key\tvalue\n", 10) == 0;
        if (kv) { /* one field per line after the header: its key */
            for (char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
                ck_assert(n < MAX_FIELDS);
                size_t k = strcspn(p + 1, "\t\n");
                ru_fmt(out[n].file, sizeof out[n].file, "%s", files[i]);
                ru_fmt(out[n].field, sizeof out[n].field, "%.*s", (int)k, p + 1);
                out[n].row = 0;
                /* build.tsv's keys report reads are checked; the rest is free text */
                static const char *const read[] = {"parameters", "train_seconds",
                                                   "train_steps", "best_step",
                                                   "best_seconds", "stopped"};
                out[n].free_text = strcmp(files[i], "build.tsv") == 0;
                for (size_t r = 0; r < sizeof read / sizeof read[0]; r++)
                    out[n].free_text &= strcmp(out[n].field, read[r]) != 0;
                n++;
            }
        } else { /* one field per column of the header */
            text[strcspn(text, "\n")] = '\0';
            for (char *c = strtok(text, "\t"); c; c = strtok(NULL, "\t")) {
                ck_assert(n < MAX_FIELDS);
                ru_fmt(out[n].file, sizeof out[n].file, "%s", files[i]);
                ru_fmt(out[n].field, sizeof out[n].field, "%s", c);
                out[n].row = 1;
                out[n].free_text = 0;
                n++;
            }
        }
        free(text);
    }
    return n;
}

/* Writes payload into buf with @ replaced by pwn/NUMBER. */
static void fill(char *buf, size_t n, const char *payload, const char *pwn, size_t number)
{
    const char *at = strchr(payload, '@');
    ck_assert_ptr_nonnull(at);
    ru_fmt(buf, n, "%.*s%s/%zu%s", (int)(at - payload), payload, pwn, number, at + 1);
}

/* Fails unless the folder pwn is still empty. */
static void assert_nothing_ran(const char *pwn, const char *what)
{
    long n = ru_count_entries(pwn);
    ck_assert_msg(n == 0, "%s: %ld file(s) appeared in %s: a payload ran", what, n, pwn);
}

START_TEST(no_field_of_a_run_reaches_gnuplot_as_code)
{
    char base[RU_PATH], pwn[RU_PATH + 8], line[4096], path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(pwn, sizeof pwn, "%s/pwn", base);
    ru_mkdir_p(pwn);
    ru_make_run1(base, "good", NULL);
    static field_case field_cases[MAX_FIELDS];
    static char value[MAX_FIELDS][N_PAYLOADS][RU_PATH];
    const size_t n_fields = all_fields(field_cases);
    for (size_t f = 0; f < n_fields; f++)
        for (size_t p = 0; p < N_PAYLOADS; p++) {
            char name[32];
            ru_fmt(name, sizeof name, "f%02zu-p%zu", f, p);
            fill(value[f][p], RU_PATH, payloads[p], pwn, f * N_PAYLOADS + p);
            const ru_edit e = {field_cases[f].file, RU_SET, field_cases[f].field,
                               field_cases[f].row, value[f][p]};
            ru_make_run1(base, name, &e);
        }
    /* the comparison's manifest, shown on the page */
    ru_fmt(path, sizeof path, "%s/manifest.tsv", base);
    char manifest[4 * RU_PATH];
    ru_fmt(manifest, sizeof manifest,
           "key\tvalue\ncommand\t%s\nmodels\t%s\ntask\t%s\nseeds\t%s\n", value[0][0],
           value[0][1], value[0][2], value[0][3]);
    ru_spit(path, manifest, strlen(manifest));
    ru_result r;
    ru_run(&r, (const char *const[]){"report", base, NULL}, NULL, 0);
    assert_nothing_ran(pwn, "report");
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    for (size_t f = 0; f < n_fields; f++)
        for (size_t p = 0; p < N_PAYLOADS; p++) {
            char who[RU_PATH + 64];
            ru_fmt(who, sizeof who, "skipping %s/runs/f%02zu-p%zu: ", base, f, p);
            ru_line_with(r.err, who, line, sizeof line);
            const int kept = field_cases[f].free_text && p < TEXT_PAYLOADS;
            if (kept) {
                ck_assert_msg(!line[0], "%s %s: text refused: %s", field_cases[f].file,
                              field_cases[f].field, line);
                continue;
            }
            ck_assert_msg(line[0], "%s %s, payload %zu: not skipped", field_cases[f].file,
                          field_cases[f].field, p);
            ck_assert_msg(strstr(line, field_cases[f].file), "no file named: %s", line);
            /* a newline breaks the line itself: then the line is named, not a field */
            if (p != P_NEWLINE)
                ck_assert_msg(strstr(line, field_cases[f].field), "no field named: %s", line);
        }
    /* the figures were drawn from the good run's values only */
    ru_fmt(path, sizeof path, "%s/figure_vars.gp", base);
    char *vars = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(vars);
    ck_assert_msg(strstr(vars, "models = \"lstm\"\n"), "figure_vars.gp:\n%s", vars);
    free(vars);
    ru_fmt(path, sizeof path, "%s/task.txt", base);
    vars = ru_slurp(path, NULL);
    ck_assert_msg(vars && strcmp(vars, "copy\n") == 0, "task.txt: %s", vars ? vars : "none");
    free(vars);
    ru_fmt(path, sizeof path, "%s/figures/accuracy.png", base);
    ck_assert_msg(access(path, F_OK) == 0, "no accuracy figure: %s", r.err);
    /* the manifest is on the page as text */
    ru_fmt(path, sizeof path, "%s/report.html", base);
    char *html = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(strstr(html, "<h2>Manifest</h2>") && strstr(html, "x&quot;;system(&quot;"),
                  "the manifest is not on the page");
    free(html);
    ru_result_free(&r);

    /* a manifest that is not text is left out, with a line saying so */
    ru_fmt(manifest, sizeof manifest, "key\tvalue\ncommand\t%s\n", value[0][P_BYTES]);
    ru_fmt(path, sizeof path, "%s/manifest.tsv", base);
    ru_spit(path, manifest, strlen(manifest));
    ru_run(&r, (const char *const[]){"report", base, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "report.html shows no manifest.tsv") &&
                      strstr(r.err, "line 2 holds a control character or a byte that is not "
                                    "UTF-8"),
                  "%s", r.err);
    assert_nothing_ran(pwn, "report");
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

START_TEST(output_path_is_not_code)
{
    char base[RU_PATH], pwn[RU_PATH + 8], run_dir[RU_PATH + 16];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(pwn, sizeof pwn, "%s/pwn", base);
    ru_mkdir_p(pwn);
    ru_fmt(run_dir, sizeof run_dir, "%s/runs/good", base);
    ru_make_run(run_dir, NULL, 0);
    /* every payload but the one that is only a newline, then that one, then bytes that
     * are not UTF-8, each the name of a folder in base */
    for (size_t i = 0; i < 3; i++) {
        char out[RU_PATH], fig[RU_PATH + 32], p[4][RU_PATH];
        for (size_t k = 0; k < 4; k++)
            fill(p[k], sizeof p[k], payloads[i == 0 ? k : i == 1 ? P_NEWLINE : P_BYTES], pwn,
                 10 * i + k);
        if (i == 0)
            ru_fmt(out, sizeof out, "%s/o %s%s%s%s", base, p[0], p[1], p[2], p[3]);
        else
            ru_fmt(out, sizeof out, "%s/o%zu %s", base, i, p[0]);
        ru_result r;
        ru_run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 0);
        assert_nothing_ran(pwn, out);
        ck_assert_msg(r.status == 0, "--out %s: status %d: %s", out, r.status, r.err);
        ru_fmt(fig, sizeof fig, "%s/figures/accuracy.svg", out);
        ck_assert_msg(access(fig, F_OK) == 0, "--out %s: no figure: %s", out, r.err);
        ru_result_free(&r);
    }
    ru_remove_tree(base);
}
END_TEST

/* A data file may have any name a file system takes: Chinese, spaces, parentheses,
 * quotes, braces, enhanced-text markup. The run is reported into a folder named the same
 * way; every figure is drawn, and its title shows the task's name as written. */
START_TEST(any_file_name_is_a_task_and_a_folder)
{
    static const char *const names[] = {"数据", "my data (2)", "a\"b'c {x}_y^z @~&\\d"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char base[RU_PATH], run_dir[2 * RU_PATH], out[2 * RU_PATH], task[RU_PATH],
            path[3 * RU_PATH];
        ru_fresh_dir(base, sizeof base);
        ru_fmt(task, sizeof task, "file:data/%s.tsv", names[i]);
        ru_fmt(run_dir, sizeof run_dir, "%s/%s/runs/1", base, names[i]);
        const ru_edit e = {"config.tsv", RU_SET, "task", 0, task};
        ru_make_run(run_dir, &e, 1);
        ru_fmt(out, sizeof out, "%s/结果 %s", base, names[i]);
        ru_result r;
        ru_run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 0);
        ck_assert_msg(r.status == 0, "task %s: status %d: %s", task, r.status, r.err);
        ck_assert_msg(!strstr(r.err, "report: skipping"), "task %s: %s", task, r.err);
        static const char *const figs[] = {"accuracy", "positions", "curves", "budget"};
        for (size_t k = 0; k < 4; k++) {
            ru_fmt(path, sizeof path, "%s/figures/%s.svg", out, figs[k]);
            char *svg = ru_slurp(path, NULL);
            ck_assert_msg(svg != NULL, "task %s: no %s figure: %s", task, figs[k], r.err);
            /* the SVG writes & as &amp; */
            char want[RU_PATH];
            size_t o = 0;
            ru_fmt(want, sizeof want, "Task ");
            o = strlen(want);
            for (const char *c = names[i]; *c && o + 8 < sizeof want; c++)
                o += (size_t)snprintf(want + o, sizeof want - o, "%s",
                                      *c == '&' ? "&amp;" : (char[2]){*c, 0});
            ck_assert_msg(strstr(svg, want), "task %s: %s.svg does not show '%s'", task,
                          figs[k], want);
            free(svg);
        }
        ru_fmt(path, sizeof path, "%s/report.html", out);
        ck_assert_msg(access(path, F_OK) == 0, "task %s: no page", task);
        ru_result_free(&r);
        ru_remove_tree(base);
    }
}
END_TEST

START_TEST(compare_output_path_is_not_code)
{
    char base[RU_PATH], pwn[RU_PATH + 8], out[2 * RU_PATH], fig[2 * RU_PATH + 32];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(pwn, sizeof pwn, "%s/pwn", base);
    ru_mkdir_p(pwn);
    ru_fmt(out, sizeof out, "%s/c x';y=system('touch %s/c1');b='`touch %s/c2`", base, pwn,
           pwn);
    ru_result r;
    const char *const args[] = {"compare", "--preset", "smoke", "--models", "lstm",
                                "--steps", "4", "--eval-lengths", "2:4:2", "--samples", "4",
                                "--jobs", "1", "--out", out, NULL};
    ru_run(&r, args, NULL, 0);
    assert_nothing_ran(pwn, "compare");
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(fig, sizeof fig, "%s/figures/accuracy.svg", out);
    ck_assert_msg(access(fig, F_OK) == 0, "no figure: %s", r.err);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

Suite *make_report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("values");
    tcase_add_test(tc, impossible_values_are_refused_by_name);
    tcase_add_test(tc, many_runs_and_groups_are_all_reported);
    tcase_add_test(tc, budget_carries_runs_stopped_early);
    tcase_add_test(tc, capped_runs_are_censored);
    tcase_add_test(tc, capacity_lists_sizes_in_order_with_their_reach);
    tcase_add_test(tc, compute_adds_up_seconds_times_threads);
    tcase_add_test(tc, cost_flops_are_counted_at_report_time);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    /* these need gnuplot; without it they are not run (and do not fail) */
    if (ru_have_gnuplot()) {
        tc = tcase_create("gnuplot");
        tcase_add_test(tc, no_field_of_a_run_reaches_gnuplot_as_code);
        tcase_add_test(tc, output_path_is_not_code);
        tcase_add_test(tc, any_file_name_is_a_task_and_a_folder);
        tcase_set_timeout(tc, 300);
        suite_add_tcase(s, tc);
        tc = tcase_create("compare");
        tcase_set_tags(tc, "slow");
        tcase_add_test(tc, compare_output_path_is_not_code);
        tcase_set_timeout(tc, 300);
        suite_add_tcase(s, tc);
    } else {
        printf("gnuplot not found: skipping the report cases that run it\n");
    }
    return s;
}
