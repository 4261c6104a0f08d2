/* test_bleu_table.c — a report over several comparison directories: Bahdanau et al.'s
 * Table 1 and Fig. 2 from runs trained on two ranges of lengths (bleu-table.tsv, the
 * labels and line styles of figure_vars.gp, the report's own manifest), and the inputs
 * it refuses (a directory that is not there, runs of different tasks or test sets).
 *
 * The runs are tests/fixtures/run/ (an LSTM on copy, testreport.h) turned into the
 * encoder-decoder fed its context (feed_context 1, so its model names it RNNencdec),
 * with eval_bleu.tsv files whose counts give scores worked by hand:
 *   A/runs/s1  lengths 2 and 4, precisions pooled 20/20, 8/16, 6/12, 2/8: BLEU
 *              (1 · 1/2 · 1/2 · 1/4)^(1/4) = 1/2 (a mean of the two lengths' scores
 *              would give 0.474); the step cap ended it short of its target
 *   A/runs/s2  every n-gram matched: BLEU 1
 *   B/runs/s1  trained to 6, not 8; length 2 only, every n-gram matched but 9 words
 *              against 10: BLEU = BP = exp(1 - 10/9)
 * so RNNencdec-8 has mean 75, sd 100 · sqrt(1/8) = 35.3553, range 50 to 100 (× 100).
 * Cases that need no figure point ATTNLAB_PLOTS at a folder that does not exist.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testreport.h"
#include "testutil.h"

/* The header of eval_bleu.tsv. */
#define BLEU_HEAD                                                                          \
    "model\tlen\tsamples\thyp_len\tref_len\tmatch1\ttotal1\tmatch2\ttotal2\tmatch3\t"      \
    "total3\tmatch4\ttotal4\tbleu\n"

/* Makes base/sub/runs/name: the fixture run as RNNencdec with a target of 0.999, train_max
 * and seed as given, ended as `stopped` says, with the BLEU counts bleu (rows after the
 * header). */
static void make_encdec(const char *base, const char *sub, const char *name,
                        const char *train_max, const char *seed, const char *stopped,
                        const char *bleu)
{
    char dir[RU_PATH], path[RU_PATH + 32], text[1024];
    ru_fmt(dir, sizeof dir, "%s/%s/runs/%s", base, sub, name);
    const ru_edit e[] = {
        {"config.tsv", RU_ADD, NULL, 0, "feed_context\t1"},
        {"config.tsv", RU_ADD, NULL, 0, "stop_acc\t0.999"},
        {"config.tsv", RU_SET, "train_max", 0, train_max},
        {"config.tsv", RU_SET, "seed", 0, seed},
        {"build.tsv", RU_SET, "stopped", 0, stopped},
    };
    ru_make_run(dir, e, sizeof e / sizeof e[0]);
    ru_fmt(path, sizeof path, "%s/eval_bleu.tsv", dir);
    ru_fmt(text, sizeof text, "%s%s", BLEU_HEAD, bleu);
    ru_spit(path, text, strlen(text));
}

/* A fresh directory base (RU_PATH bytes) with the three runs of the header comment under
 * base/A and base/B; a, b and out (RU_PATH bytes each) receive base/A, base/B and
 * base/fig2, where the tests write their report. */
static void make_two_ranges(char *base, char *a, char *b, char *out)
{
    ru_fresh_dir(base, RU_PATH);
    ru_fmt(a, RU_PATH, "%s/A", base);
    ru_fmt(b, RU_PATH, "%s/B", base);
    ru_fmt(out, RU_PATH, "%s/fig2", base);
    make_encdec(base, "A", "s1", "8", "1", "budget",
                "lstm\t2\t3\t10\t10\t10\t10\t4\t8\t1\t6\t1\t4\t0.38\n"
                "lstm\t4\t4\t10\t10\t10\t10\t4\t8\t5\t6\t1\t4\t0.57\n");
    make_encdec(base, "A", "s2", "8", "2", "target",
                "lstm\t2\t3\t10\t10\t10\t10\t8\t8\t6\t6\t4\t4\t1\n"
                "lstm\t4\t4\t10\t10\t10\t10\t8\t8\t6\t6\t4\t4\t1\n");
    make_encdec(base, "B", "s1", "6", "1", "converged",
                "lstm\t2\t3\t9\t10\t9\t9\t8\t8\t7\t7\t6\t6\t0.89\n");
}

/* bleu-table.tsv's rows: by training length, each group's BLEU of every test sentence
 * over its seeds, the runs the cap ended, and the paper's names. */
START_TEST(test_table_of_two_ranges)
{
    char base[RU_PATH], a[RU_PATH], b[RU_PATH], out[RU_PATH], path[RU_PATH + 32];
    make_two_ranges(base, a, b, out);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, b, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/bleu-table.tsv", out);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    static const char want[] =
        "label\tmodel\ttrain_min\ttrain_max\tseeds\tcapped\tlen_min\tlen_max\tsentences\t"
        "bleu100_mean\tbleu100_sd\tbleu100_min\tbleu100_max\n"
        "RNNencdec-6\tlstm:train_max=6\t4\t6\t1\t0\t2\t2\t3\t89.4839\t0.0000\t89.4839\t"
        "89.4839\n"
        "RNNencdec-8\tlstm:train_max=8\t4\t8\t2\t1\t2\t4\t7\t75.0000\t35.3553\t50.0000\t"
        "100.0000\n";
    ck_assert_msg(strcmp(t, want) == 0, "bleu-table.tsv:\n%s", t);
    free(t);
    /* the same numbers printed for people, the censored run said */
    ck_assert_msg(strstr(r.out, "RNNencdec-8") && strstr(r.out, "75.00 [50.00-100.00]") &&
                      strstr(r.out, "1 of 2 stopped by the cap"),
                  "%s", r.out);
    /* bleu.tsv's pooled row agrees: 0.75 over every length */
    ru_fmt(path, sizeof path, "%s/bleu.tsv", out);
    t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, "lstm:train_max=8\tall\tall\t2\t7\t0.750000\t0.500000\t1.000000\n"),
                  "bleu.tsv:\n%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* figure_vars.gp: per group the label, the longest training length, the first group of
 * the same setup (the two ranges of one setup share a colour) and the runs capped. */
START_TEST(test_figure_vars_per_group)
{
    char base[RU_PATH], a[RU_PATH], b[RU_PATH], out[RU_PATH], path[RU_PATH + 32];
    make_two_ranges(base, a, b, out);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, b, a, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/figure_vars.gp", out);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    /* B given first: its group comes first in the tables, and is its setup's first */
    ck_assert_msg(strstr(t, "\nmodels = \"lstm:train_max=6 lstm:train_max=8\"\n"), "%s", t);
    ck_assert_msg(strstr(t, "\nlabels = \"RNNencdec-6 RNNencdec-8\"\n"), "%s", t);
    ck_assert_msg(strstr(t, "\ntrained_to = \"6 8\"\n"), "%s", t);
    ck_assert_msg(strstr(t, "\nkin = \"1 1\"\n"), "%s", t);
    ck_assert_msg(strstr(t, "\ncapped = \"0 1\"\n"), "%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* The figure in the paper's shape, drawn by gnuplot from the two comparisons: written
 * (a variable the script reads and the report did not write stops it), the key naming
 * the groups as the paper does and saying how many runs the cap ended, and the note on
 * the open points. Checked in the SVG, whose text is the key's. (test_plots.c holds the
 * scripts to no warning on its fixture.) */
START_TEST(test_figure_drawn)
{
    char base[RU_PATH], a[RU_PATH], b[RU_PATH], out[RU_PATH], path[RU_PATH + 32];
    make_two_ranges(base, a, b, out);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, b, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "bleu.gp: wrote"), "%s", r.out);
    ru_fmt(path, sizeof path, "%s/figures/bleu.svg", out);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, "RNNencdec-6 (all: 89.5)"), "no RNNencdec-6 in the key");
    ck_assert_msg(strstr(t, "RNNencdec-8 (all: 75.0; 1 of 2 runs stopped by the cap)"),
                  "no RNNencdec-8 with its capped run in the key");
    ck_assert_msg(strstr(t, "open points: runs stopped by the step cap"), "no note");
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* The same figure in a Chinese report (a stand-in fc-list names a font): the key and the
 * note in the glossary's words, the numbers where the English has them. */
START_TEST(test_figure_in_chinese)
{
    char base[RU_PATH], a[RU_PATH], b[RU_PATH], out[RU_PATH], path[RU_PATH + 32];
    make_two_ranges(base, a, b, out);
    ru_fake_fc_list(base, "WenQuanYi Micro Hei");
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--lang", "zh", "--out", out, a, b, NULL},
           NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/figures/bleu.svg", out);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strstr(t, "RNNencdec-6（全部长度：89.5）"), "no Chinese key of RNNencdec-6");
    ck_assert_msg(strstr(t, "RNNencdec-8（全部长度：75.0；有 1 次运行被步数上限停下，共 2 次）"),
                  "no Chinese key of RNNencdec-8 with its capped run");
    ck_assert_msg(strstr(t, "空心点：有运行被步数上限停下") && !strstr(t, "open points"),
                  "the note is not in Chinese");
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* The report's own manifest: the command, the build (its commit), and each comparison's
 * manifest under inputK. */
START_TEST(test_manifest_of_inputs)
{
    char base[RU_PATH], a[RU_PATH], b[RU_PATH], out[RU_PATH], path[RU_PATH + 32];
    make_two_ranges(base, a, b, out);
    static const char mf[] = "key\tvalue\ncommand\tattnlab compare --preset bahdanau\n"
                             "commit\tabc1234\n";
    ru_fmt(path, sizeof path, "%s/manifest.tsv", a);
    ru_spit(path, mf, strlen(mf));
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, b, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_fmt(path, sizeof path, "%s/manifest.tsv", out);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(strncmp(t, "key\tvalue\ncommand\tattnlab report --out ", 39) == 0, "%s", t);
    ck_assert_msg(strstr(t, "\ncommit\t"), "%s", t);
    char line[RU_PATH + 64];
    ru_fmt(line, sizeof line, "\ninput1\t%s\n", a);
    ck_assert_msg(strstr(t, line), "%s", t);
    ck_assert_msg(strstr(t, "\ninput1.command\tattnlab compare --preset bahdanau\n"), "%s", t);
    ck_assert_msg(strstr(t, "\ninput1.commit\tabc1234\n"), "%s", t);
    ru_fmt(line, sizeof line, "\ninput2\t%s\n", b);
    ck_assert_msg(strstr(t, line), "%s", t);
    free(t);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* Inputs a report refuses, each with one line naming what was wrong and what is
 * accepted, and a non-zero status; nothing merged. */
typedef struct refusal {
    const char *name;
    ru_edit e;            /* the change to the run of C/runs/s1 (NULL file: no C) */
    const char *missing;  /* a path given that is not there, or NULL */
    const char *says[2];
} refusal;

static const refusal refusals[] = {
    {"missing", {NULL, RU_SET, NULL, 0, NULL}, "no-such-dir",
     {"no-such-dir is not a directory", "accepted: a comparison directory or a run"}},
    {"task", {"config.tsv", RU_SET, "task", 0, "reverse"}, NULL,
     {"trained on task reverse", "a report compares runs of one task"}},
    {"crc", {"config.tsv", RU_ADD, NULL, 0, "data_crc\t7"}, NULL,
     {"different contents of file:", "a report compares runs of one test set"}},
};

START_TEST(test_refusals)
{
    const refusal *c = &refusals[_i];
    char base[RU_PATH], a[RU_PATH], other[RU_PATH], out[RU_PATH], dir[RU_PATH];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(a, sizeof a, "%s/A", base);
    ru_fmt(out, sizeof out, "%s/out", base);
    /* A: one run; for the case of the test set, on a file task of CRC 0 */
    const ru_edit file_task = {"config.tsv", RU_SET, "task", 0, "file:/nonexistent/t.tsv"};
    const int crc = strcmp(c->name, "crc") == 0;
    ru_fmt(dir, sizeof dir, "%s/runs/s1", a);
    ru_make_run(dir, &file_task, crc);
    if (c->missing) {
        ru_fmt(other, sizeof other, "%s/%s", base, c->missing);
    } else {
        ru_fmt(other, sizeof other, "%s/C", base);
        ru_fmt(dir, sizeof dir, "%s/runs/s1", other);
        const ru_edit both[] = {file_task, c->e};
        ru_make_run(dir, crc ? both : &c->e, crc ? 2 : 1);
    }
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, other, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status != 0, "%s: status 0\n%s", c->name, r.out);
    const char *nl = strchr(r.err, '\n');
    ck_assert_msg(nl && nl[1] == '\0', "%s: not one line:\n%s", c->name, r.err);
    for (int k = 0; k < 2; k++)
        ck_assert_msg(strstr(r.err, c->says[k]), "%s: no \"%s\" in: %s", c->name, c->says[k],
                      r.err);
    ru_fmt(dir, sizeof dir, "%s/bleu-table.tsv", out);
    ck_assert_msg(access(dir, F_OK) != 0, "%s: tables written", c->name);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

Suite *make_bleu_table_suite(void)
{
    Suite *s = suite_create("bleu_table");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_table_of_two_ranges);
    tcase_add_test(tc, test_figure_vars_per_group);
    tcase_add_test(tc, test_manifest_of_inputs);
    tcase_add_loop_test(tc, test_refusals, 0, (int)(sizeof refusals / sizeof refusals[0]));
    suite_add_tcase(s, tc);
    /* needs gnuplot; without it not run (and not failed) */
    if (ru_have_gnuplot()) {
        tc = tcase_create("gnuplot");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_figure_drawn);
        tcase_add_test(tc, test_figure_in_chinese);
        suite_add_tcase(s, tc);
    }
    return s;
}
