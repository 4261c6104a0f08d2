/* test_webtables.c — the comparison's tables are written by one piece of code for both
 * front-ends: summary_merge (common/cli/summary.c, compiled into the browser page too,
 * where page_compare calls it) writes exactly what `attnlab report` writes for its
 * figure scripts, and nothing of the program's own (no figure, no page); the captions
 * the page and report.html show are one table (report_figures) that covers every
 * figure script.
 *
 * Design. Run directories are made from tests/fixtures/run/ (testreport.h); the report is
 * run as a user runs it, with ATTNLAB_PLOTS pointing nowhere, so that it draws nothing and
 * its tables are compared with summary_merge's byte for byte. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/cli/report.h"
#include "../common/cli/summary.h"
#include "testreport.h"
#include "testutil.h"

/* Every file a comparison holds for the figure scripts, and the summary tables. */
static const char *const tables[] = {
    "accuracy.tsv",    "positions.tsv", "curves.tsv", "budget.tsv",  "convergence.tsv",
    "budget_at.tsv",   "capacity.tsv",  "cost.tsv",   "summary.tsv", "figure_vars.gp",
    "task.txt",        NULL};

/* Makes base/runs/s1 and base/runs/s2: the fixture run at seeds 1 and 2. */
static void two_seeds(const char *base, const char *runs[2], char dirs[2][RU_PATH + 16])
{
    const ru_edit seed2 = {"config.tsv", RU_SET, "seed", 0, "2"};
    ru_make_run1(base, "s1", NULL);
    ru_make_run1(base, "s2", &seed2);
    ru_fmt(dirs[0], RU_PATH + 16, "%s/runs/s1", base);
    ru_fmt(dirs[1], RU_PATH + 16, "%s/runs/s2", base);
    runs[0] = dirs[0];
    runs[1] = dirs[1];
}

static int exists(const char *dir, const char *name)
{
    char path[RU_PATH + 64];
    struct stat st;
    ru_fmt(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

START_TEST(merge_writes_what_the_scripts_read_and_nothing_else)
{
    char base[RU_PATH], out[RU_PATH + 16], dirs[2][RU_PATH + 16], err[512] = "";
    const char *runs[2];
    ru_fresh_dir(base, sizeof base);
    two_seeds(base, runs, dirs);
    ru_fmt(out, sizeof out, "%s/cmp", base);
    ck_assert_msg(summary_merge(runs, 2, out, err, sizeof err) == 0, "%s", err);
    for (size_t k = 0; tables[k]; k++)
        ck_assert_msg(exists(out, tables[k]), "%s was not written", tables[k]);
    ck_assert_msg(!exists(out, "figures") && !exists(out, "report.html") &&
                      !exists(out, "report.zh.html"),
                  "summary_merge drew figures or wrote a page");
    char path[RU_PATH + 64];
    ru_fmt(path, sizeof path, "%s/accuracy.tsv", out);
    char *acc = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(acc);
    ck_assert_msg(strstr(acc, "\nlstm\t166987\t2\t2\t") != NULL, "two seeds: %s", acc);
    free(acc);
    ru_remove_tree(base);
}
END_TEST

START_TEST(merge_writes_the_reports_own_bytes)
{
    char base[RU_PATH], out[RU_PATH + 16], dirs[2][RU_PATH + 16], err[512] = "";
    char rep[RU_PATH + 16];
    const char *runs[2];
    ru_fresh_dir(base, sizeof base);
    two_seeds(base, runs, dirs);
    ru_fmt(out, sizeof out, "%s/cmp", base);
    ru_fmt(rep, sizeof rep, "%s/rep", base);
    ck_assert_msg(summary_merge(runs, 2, out, err, sizeof err) == 0, "%s", err);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", rep, runs[0], runs[1], NULL},
           RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_result_free(&r);
    for (size_t k = 0; tables[k]; k++) {
        char a[RU_PATH + 64], b[RU_PATH + 64];
        ru_fmt(a, sizeof a, "%s/%s", out, tables[k]);
        ru_fmt(b, sizeof b, "%s/%s", rep, tables[k]);
        size_t na = 0, nb = 0;
        char *x = ru_slurp(a, &na), *y = ru_slurp(b, &nb);
        ck_assert_msg(x && y, "%s: missing", tables[k]);
        ck_assert_msg(na == nb && memcmp(x, y, na) == 0,
                      "%s differs between summary_merge and attnlab report", tables[k]);
        free(x);
        free(y);
    }
    ru_remove_tree(base);
}
END_TEST

START_TEST(merge_of_no_finished_run_says_so)
{
    char base[RU_PATH], out[RU_PATH + 16], dir[RU_PATH + 16], err[512] = "";
    ru_fresh_dir(base, sizeof base);
    const ru_edit no_eval = {"eval.tsv", RU_DEL, NULL, 0, NULL};
    ru_make_run1(base, "unfinished", &no_eval);
    ru_fmt(dir, sizeof dir, "%s/runs/unfinished", base);
    ru_fmt(out, sizeof out, "%s/cmp", base);
    const char *runs[] = {dir};
    ck_assert_int_eq(summary_merge(runs, 1, out, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no finished run") != NULL, "%s", err);
    ck_assert_msg(!exists(out, "accuracy.tsv"), "a table was written without a run");
    ru_remove_tree(base);
}
END_TEST

/* Scripts that draw a measurement, not a comparison (bench --layers): no report draws
 * them, so they have no caption in report_figures. */
static const char *const not_a_comparison[] = {"layers"};

/* Removes what a run writes only once its training is over: build.tsv, eval.tsv and
 * eval_positions.tsv, so dir holds what a run still training holds. */
static void unfinish(const char *dir)
{
    static const char *const after[] = {"build.tsv", "eval.tsv", "eval_positions.tsv"};
    for (size_t k = 0; k < 3; k++) {
        char path[RU_PATH + 64];
        ru_fmt(path, sizeof path, "%s/%s", dir, after[k]);
        ck_assert_msg(remove(path) == 0, "cannot remove %s", path);
    }
}

START_TEST(training_merge_draws_the_curves_the_report_will)
{
    char base[RU_PATH], out[RU_PATH + 16], live[RU_PATH + 16], dirs[2][RU_PATH + 16];
    char err[512] = "";
    const char *runs[2];
    ru_fresh_dir(base, sizeof base);
    two_seeds(base, runs, dirs);
    ru_fmt(out, sizeof out, "%s/cmp", base);
    ru_fmt(live, sizeof live, "%s/live", base);
    ck_assert_msg(summary_merge(runs, 2, out, err, sizeof err) == 0, "%s", err);
    unfinish(dirs[0]);
    unfinish(dirs[1]);
    /* the finished merge refuses them now; the merge of runs in training takes them */
    char none[RU_PATH + 16];
    ru_fmt(none, sizeof none, "%s/none", base);
    ck_assert_int_eq(summary_merge(runs, 2, none, err, sizeof err), -1);
    ck_assert_msg(summary_merge_training(runs, 2, live, err, sizeof err) == 0, "%s", err);
    char a[RU_PATH + 64], b[RU_PATH + 64];
    ru_fmt(a, sizeof a, "%s/curves.tsv", out);
    ru_fmt(b, sizeof b, "%s/curves.tsv", live);
    size_t na = 0, nb = 0;
    char *x = ru_slurp(a, &na), *y = ru_slurp(b, &nb);
    ck_assert_msg(x && y && na == nb && memcmp(x, y, na) == 0,
                  "curves.tsv of the runs in training differs from the finished runs'");
    free(x);
    free(y);
    ru_fmt(b, sizeof b, "%s/figure_vars.gp", live);
    char *vars = ru_slurp(b, NULL);
    ck_assert_msg(vars && strstr(vars, "models = \"lstm\"") && strstr(vars, "seeds = 2"),
                  "figure_vars.gp: %s", vars ? vars : "(missing)");
    free(vars);
    ck_assert_msg(!exists(live, "accuracy.tsv") && !exists(live, "summary.tsv"),
                  "a table of the evaluation was written for runs not yet evaluated");
    /* a run without its log is no run to show */
    ru_fmt(a, sizeof a, "%s/train_log.tsv", dirs[0]);
    ck_assert_int_eq(remove(a), 0);
    ck_assert_int_eq(summary_merge_training(runs, 1, live, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no run to show") != NULL, "%s", err);
    ru_remove_tree(base);
}
END_TEST

START_TEST(every_figure_script_has_its_captions)
{
    char plots[RU_PATH];
    ru_fmt(plots, sizeof plots, "%s/plots", ru_src_root());
    DIR *d = opendir(plots);
    ck_assert_ptr_nonnull(d);
    size_t scripts = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".gp") != 0)
            continue;
        int measurement = 0;
        for (size_t k = 0; k < sizeof not_a_comparison / sizeof not_a_comparison[0]; k++)
            measurement |= strncmp(not_a_comparison[k], e->d_name, l - 3) == 0 &&
                           not_a_comparison[k][l - 3] == '\0';
        if (measurement)
            continue;
        scripts++;
        size_t found = 0;
        for (size_t k = 0; k < REPORT_N_FIGURES; k++)
            if (strncmp(report_figures[k].script, e->d_name, l - 3) == 0 &&
                report_figures[k].script[l - 3] == '\0') {
                found++;
                ck_assert_msg(strlen(report_figures[k].caption) > 40 &&
                                  strlen(report_figures[k].caption_zh) > 40 &&
                                  report_figures[k].outputs[0],
                              "%s: a caption or its outputs are missing", e->d_name);
            }
        ck_assert_msg(found == 1, "%s has %zu entries in report_figures", e->d_name, found);
    }
    closedir(d);
    ck_assert_uint_eq(scripts, REPORT_N_FIGURES);
}
END_TEST

Suite *make_webtables_suite(void)
{
    Suite *s = suite_create("webtables");
    TCase *tc = tcase_create("merge");
    tcase_add_test(tc, merge_writes_what_the_scripts_read_and_nothing_else);
    tcase_add_test(tc, merge_writes_the_reports_own_bytes);
    tcase_add_test(tc, merge_of_no_finished_run_says_so);
    tcase_add_test(tc, training_merge_draws_the_curves_the_report_will);
    tcase_add_test(tc, every_figure_script_has_its_captions);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
