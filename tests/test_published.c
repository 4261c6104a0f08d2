/* test_published.c — plots/published.sh, which makes the tables and figures published
 * beside committed runs again with one build's `attnlab report`: it replaces what is
 * stale, keeps the compare's own manifest and adds the report's, refreshes only the
 * figures a folder already shows, reports a folder of several comparisons as one, and
 * leaves a folder whose report fails, or that holds no runs, as it was.
 *
 * The runs are the fixture run (tests/fixtures/run/, testreport.h) under two seeds; the
 * script is run with the program under test. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testreport.h"
#include "testutil.h"

/* Runs plots/published.sh with the program under test on dirs (a space-separated list of
 * quoted paths, or "" for none), its output in base/out.txt and base/err.txt. Returns
 * the exit status. */
static int published(const char *base, const char *dirs)
{
    static char prog[PATH_MAX];
    ck_assert_msg(realpath(tu_program(), prog) != NULL, "no program %s", tu_program());
    char cmd[4 * RU_PATH];
    ru_fmt(cmd, sizeof cmd, "sh '%s/plots/published.sh' '%s' %s > '%s/out.txt' 2> '%s/err.txt'",
           ru_src_root(), prog, dirs, base, base);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* An experiment folder exp (runs of two seeds, the compare's manifest) holding stale
 * tables: summary.tsv and convergence.tsv with text no report writes. */
static void make_experiment(const char *exp)
{
    ru_make_run1(exp, "lstm-s1", NULL);
    ru_make_run1(exp, "lstm-s2", &(ru_edit){"config.tsv", RU_SET, "seed", 0, "2"});
    ru_put(exp, "manifest.tsv", "key\tvalue\ncommand\tattnlab compare --out the-runs\n");
    ru_put(exp, "summary.tsv", "stale\n1\n");
    ru_put(exp, "convergence.tsv", "stale\n1\n");
}

/* Runs the script on the one folder exp and requires it to succeed. */
static void published_ok(const char *base, const char *exp)
{
    char dirs[RU_PATH + 32];
    ru_fmt(dirs, sizeof dirs, "'%s'", exp);
    const int st = published(base, dirs);
    char *err = ru_read(base, "err.txt");
    ck_assert_msg(st == 0, "status %d: %s", st, err);
    free(err);
}

/* Requires dir/summary.tsv to be the report's, not the stale one. */
static void summary_made_again(const char *dir)
{
    char *t = ru_read(dir, "summary.tsv");
    ck_assert_msg(strncmp(t, "model\t", 6) == 0 && strstr(t, "\nlstm\t"),
                  "%s/summary.tsv not made again:\n%s", dir, t);
    free(t);
}

/* The stale tables are made again, every table with rows is added, the compare's manifest
 * stays and the report's comes beside it, and nothing is left under a temporary name. */
START_TEST(tables_made_again_manifests_kept)
{
    char base[RU_PATH], exp[RU_PATH + 16];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(exp, sizeof exp, "%s/exp", base);
    make_experiment(exp);
    published_ok(base, exp);
    summary_made_again(exp);
    char *t = ru_read(exp, "convergence.tsv");
    ck_assert_msg(!strstr(t, "stale") && strstr(t, "\nlstm\t"), "convergence.tsv:\n%s", t);
    free(t);
    t = ru_read(exp, "accuracy.tsv"); /* not published before: added, it has rows */
    ck_assert_msg(strstr(t, "\nlstm\t") != NULL, "accuracy.tsv:\n%s", t);
    free(t);
    t = ru_read(exp, "manifest.tsv");
    ck_assert_msg(strstr(t, "attnlab compare --out the-runs"), "the compare's manifest was "
                  "replaced:\n%s", t);
    free(t);
    t = ru_read(exp, "report-manifest.tsv");
    ck_assert_msg(strstr(t, "\ncommand\tattnlab report --out ") && strstr(t, "\ncommit\t"),
                  "report-manifest.tsv:\n%s", t);
    free(t);
    t = ru_read(base, "out.txt");
    ck_assert_msg(strstr(t, "exp: ") && strstr(t, "tables"), "out.txt:\n%s", t);
    free(t);
    char cmd[RU_PATH + 64];
    ru_fmt(cmd, sizeof cmd, "ls -a '%s' | grep -q '\\.new$'", exp);
    ck_assert_msg(system(cmd) != 0, "a file was left under its temporary name in %s", exp);
    ru_remove_tree(base);
}
END_TEST

/* A folder without runs/ whose subfolders hold comparisons is one experiment merged from
 * them: one report over the subfolders in name order, its tables put in the folder, and
 * the report's manifest names both inputs; the subfolders are left as they were. */
START_TEST(merged_comparisons_reported_together)
{
    char base[RU_PATH], exp[RU_PATH + 16], sub[RU_PATH + 32];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(exp, sizeof exp, "%s/merged", base);
    ru_fmt(sub, sizeof sub, "%s/30", exp);
    make_experiment(sub);
    ru_fmt(sub, sizeof sub, "%s/50", exp);
    make_experiment(sub);
    ru_put(exp, "summary.tsv", "stale\n1\n");
    published_ok(base, exp);
    summary_made_again(exp);
    char *t = ru_read(exp, "report-manifest.tsv");
    ck_assert_msg(strstr(t, "/merged/30\n") && strstr(t, "\ninput2\t")
                  && strstr(t, "/merged/50\n"), "report-manifest.tsv:\n%s", t);
    free(t);
    t = ru_read(sub, "summary.tsv"); /* a subfolder is an input, not a folder to refresh */
    ck_assert_str_eq(t, "stale\n1\n");
    free(t);
    ru_remove_tree(base);
}
END_TEST

/* With gnuplot: the figure the folder shows is drawn again; the report's other figures
 * are not added. */
START_TEST(only_published_figures_refreshed)
{
    char base[RU_PATH], exp[RU_PATH + 16], path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(exp, sizeof exp, "%s/exp", base);
    make_experiment(exp);
    ru_put(exp, "accuracy.png", "not a png");
    published_ok(base, exp);
    size_t len = 0;
    ru_fmt(path, sizeof path, "%s/accuracy.png", exp);
    char *png = ru_slurp_all(path, &len);
    ck_assert_msg(png && len > 8 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0,
                  "accuracy.png was not drawn again");
    free(png);
    ru_fmt(path, sizeof path, "%s/positions.png", exp);
    ck_assert_msg(access(path, F_OK) != 0, "positions.png was added, though not published");
    ru_remove_tree(base);
}
END_TEST

/* A folder without runs/, or whose report fails (runs/ holds no run), is left as it was
 * and the script ends with status 1 after the others; a missing program is a usage
 * error. */
START_TEST(failures_leave_folders_as_they_were)
{
    char base[RU_PATH], good[RU_PATH + 16], bare[RU_PATH + 16], empty[RU_PATH + 16];
    char dirs[4 * RU_PATH];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(good, sizeof good, "%s/good", base);
    ru_fmt(bare, sizeof bare, "%s/bare", base);
    ru_fmt(empty, sizeof empty, "%s/empty", base);
    make_experiment(good);
    ru_mkdir_p(bare);
    ru_put(bare, "summary.tsv", "stale\n1\n");
    char runs[RU_PATH + 32];
    ru_fmt(runs, sizeof runs, "%s/runs", empty);
    ru_mkdir_p(runs);
    ru_put(empty, "summary.tsv", "stale\n1\n");
    ru_fmt(dirs, sizeof dirs, "'%s' '%s' '%s'", bare, empty, good);
    const int st = published(base, dirs);
    char *err = ru_read(base, "err.txt");
    ck_assert_msg(st == 1, "status %d, not 1: %s", st, err);
    ck_assert_msg(strstr(err, "bare has no runs/ folder"), "%s", err);
    ck_assert_msg(strstr(err, "report failed on") && strstr(err, "empty (left as it was)"),
                  "%s", err);
    free(err);
    char *t = ru_read(bare, "summary.tsv");
    ck_assert_str_eq(t, "stale\n1\n");
    free(t);
    t = ru_read(empty, "summary.tsv");
    ck_assert_str_eq(t, "stale\n1\n");
    free(t);
    t = ru_read(good, "summary.tsv"); /* the others are still made again */
    ck_assert_msg(strstr(t, "\nlstm\t") != NULL, "summary.tsv of good:\n%s", t);
    free(t);
    char cmd[2 * RU_PATH];
    ru_fmt(cmd, sizeof cmd, "sh '%s/plots/published.sh' '%s/no-such-program' 2> /dev/null",
           ru_src_root(), base);
    const int us = system(cmd);
    ck_assert_msg(WIFEXITED(us) && WEXITSTATUS(us) == 2, "a missing program: status %d", us);
    ru_remove_tree(base);
}
END_TEST

Suite *make_published_suite(void)
{
    Suite *s = suite_create("published");
    TCase *tc = tcase_create("tables");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tables_made_again_manifests_kept);
    tcase_add_test(tc, failures_leave_folders_as_they_were);
    tcase_add_test(tc, merged_comparisons_reported_together);
    suite_add_tcase(s, tc);
    if (ru_have_gnuplot()) { /* without gnuplot no figure is drawn: not run, not failed */
        tc = tcase_create("figures");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, only_published_figures_refreshed);
        suite_add_tcase(s, tc);
    }
    return s;
}
