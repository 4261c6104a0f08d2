/* test_captions.c — captions that fit the report, and figures labelled in the page's
 * language.
 *
 * What is checked. A caption says only what holds for the report's task and models
 * (report_caption): a report of one model on a task read from a file never speaks of
 * copy's diagonal, of the LSTM or of a model without attention, and a copy report of the
 * three does; the note on lengths shorter than any trained one comes exactly when such
 * lengths were evaluated. Every label the figure scripts say as tr("KEY", "English") has
 * a Chinese line in report_labels_zh with the same printf conversions, and every line is
 * used. `report --lang zh` draws figures whose SVG holds the Chinese labels when
 * fontconfig names a Chinese font, and keeps the English ones otherwise, said once on
 * stderr and once on the page; an English report writes no Chinese label at all (the
 * browser page's path).
 *
 * Design. Whether a font is installed is the machine's business, so the tests put a
 * stand-in fc-list first on PATH, one that names a font or none: the SVG holds the
 * labels as text, whatever font draws them. The runs are the fixture run relabelled
 * (tests/testreport.h). Cases that need figures are left out without gnuplot. */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/cli/report.h"
#include "testreport.h"
#include "testutil.h"

/* ---- the captions for a scene ------------------------------------------------------- */

/* Every caption of every figure for scene, in Chinese when zh, one after the other;
 * free it. */
static char *all_captions(unsigned scene, int zh)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    for (size_t k = 0; k < REPORT_N_FIGURES; k++) {
        report_caption(f, &report_figures[k], scene, zh);
        fputc('\n', f);
    }
    fclose(f);
    return text;
}

/* What a report of one model on a task read from a file must not be told. */
static const char *const not_for_a_file[][2] = {
    {"In copy", "在复制任务中"},
    {"lies on the diagonal", "落在对角线上"},
    {"In reverse", "在反转任务中"},
    {"LSTM", "LSTM"},
    {"without attention", "没有注意力"},
    {"between two models", "两条线之间"},
};

START_TEST(a_file_task_with_one_model_is_told_of_neither_copy_nor_others)
{
    const unsigned scene = REPORT_FILE | REPORT_ONE | REPORT_NO_CONTRAST;
    for (int zh = 0; zh < 2; zh++) {
        char *text = all_captions(scene, zh);
        for (size_t i = 0; i < sizeof not_for_a_file / sizeof not_for_a_file[0]; i++)
            ck_assert_msg(!strstr(text, not_for_a_file[i][zh]),
                          "a file task with one model is told '%s'", not_for_a_file[i][zh]);
        ck_assert_msg(strstr(text, zh ? "从文件读入的任务中" : "In a task read from a file"),
                      "the note for a task read from a file is missing");
        free(text);
    }
}
END_TEST

START_TEST(copy_with_three_models_is_told_of_the_diagonal_and_the_contrast)
{
    const unsigned scene = REPORT_COPY | REPORT_SEVERAL | REPORT_CONTRAST;
    for (int zh = 0; zh < 2; zh++) {
        char *text = all_captions(scene, zh);
        for (size_t i = 0; i < sizeof not_for_a_file / sizeof not_for_a_file[0]; i++)
            if (i != 2 && i != 3) /* reverse is not this task; no caption names the LSTM */
                ck_assert_msg(strstr(text, not_for_a_file[i][zh]) != NULL,
                              "a copy report of three models is not told '%s'",
                              not_for_a_file[i][zh]);
        free(text);
    }
}
END_TEST

START_TEST(shorter_lengths_are_said_only_when_evaluated)
{
    static const char *const note[] = {"shorter than any trained length",
                                       "比任何训练长度都短"};
    for (int zh = 0; zh < 2; zh++) {
        char *with = all_captions(REPORT_COPY | REPORT_ONE | REPORT_SHORTER, zh);
        char *without = all_captions(REPORT_COPY | REPORT_ONE, zh);
        ck_assert_msg(strstr(with, note[zh]) != NULL, "no note on shorter lengths");
        ck_assert_msg(!strstr(without, note[zh]), "a note on lengths never evaluated");
        free(with);
        free(without);
    }
    /* the scene of facts: the shortest evaluated length against the training range */
    config c;
    config_defaults(&c);
    c.train_min = 4;
    c.train_max = 16;
    report_facts fx = {.cfg = &c, .n_models = 1, .shortest = 2};
    ck_assert(report_scene_of(&fx) & REPORT_SHORTER);
    fx.shortest = 4;
    ck_assert(!(report_scene_of(&fx) & REPORT_SHORTER));
}
END_TEST

/* ---- the labels: scripts and table agree -------------------------------------------- */

/* The printf conversions of s, in order ("%s %d %.2f" -> "sdf"), into out. A "%" that
 * starts no conversion (99% token) is not one. */
static void conversions(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = strchr(s, '%'); p && k + 1 < n; p = strchr(p + 1, '%')) {
        const char *q = p + 1 + strspn(p + 1, "-+#0123456789.");
        if (*q && strchr("sdfgeEcx", *q) && q > p)
            out[k++] = *q;
    }
    out[k] = '\0';
}

/* The zh line of key, or NULL. */
static const char *zh_of(const char *key)
{
    for (const report_label *l = report_labels_zh; l->key; l++)
        if (strcmp(l->key, key) == 0)
            return l->zh;
    return NULL;
}

START_TEST(every_label_has_its_chinese_with_the_same_conversions)
{
    static const char *const scripts[] = {"accuracy", "attention", "bleu", "budget",
                                          "capacity", "cost", "curves", "distance",
                                          "gates", "positions", "sweep"};
    char used[4096] = " "; /* the keys seen, each between spaces */
    size_t n_keys = 0;
    regex_t re;
    /* tr("KEY", "..." . "..."): the English is the string literals joined by '.' */
    ck_assert_int_eq(regcomp(&re, "tr\\(\"([a-z0-9_]+)\", *", REG_EXTENDED), 0);
    for (size_t k = 0; k < sizeof scripts / sizeof scripts[0]; k++) {
        char path[256];
        ru_fmt(path, sizeof path, "plots/%s.gp", scripts[k]);
        char *text = ru_slurp(path, NULL);
        ck_assert_msg(text != NULL, "cannot read %s", path);
        regmatch_t m[2];
        for (const char *p = text; regexec(&re, p, 2, m, 0) == 0; p += m[0].rm_eo) {
            char key[64], en[512] = "", a[16], b[16];
            ru_fmt(key, sizeof key, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
            const char *q = p + m[0].rm_eo;
            while (*q == '"') { /* a literal, then maybe . \ newline and another */
                const char *end = strchr(q + 1, '"');
                ck_assert_ptr_nonnull(end);
                strncat(en, q + 1, (size_t)(end - q - 1) < sizeof en - strlen(en) - 1
                                       ? (size_t)(end - q - 1)
                                       : sizeof en - strlen(en) - 1);
                q = end + 1 + strspn(end + 1, " ");
                if (*q != '.')
                    break;
                q += 1 + strspn(q + 1, " \\\n");
            }
            const char *zh = zh_of(key);
            ck_assert_msg(zh != NULL, "%s: tr(\"%s\", ...) has no Chinese line in "
                          "report_labels_zh", path, key);
            conversions(en, a, sizeof a);
            conversions(zh, b, sizeof b);
            ck_assert_msg(strcmp(a, b) == 0, "%s: '%s': the English formats '%s', the "
                          "Chinese '%s'", path, key, a, b);
            ck_assert_msg(!strpbrk(zh, "`@\\\""), "'%s': a character figure_vars.gp "
                          "would have to escape or run", key);
            char word[80];
            ru_fmt(word, sizeof word, " %s ", key);
            if (!strstr(used, word) && strlen(used) + strlen(word) < sizeof used) {
                strcat(used, key);
                strcat(used, " ");
                n_keys++;
            }
        }
        free(text);
    }
    regfree(&re);
    for (const report_label *l = report_labels_zh; l->key; l++) {
        char word[80];
        ru_fmt(word, sizeof word, " %s ", l->key);
        ck_assert_msg(strstr(used, word) != NULL, "report_labels_zh: '%s' is said by no "
                      "script", l->key);
    }
    ck_assert_msg(n_keys >= 100, "only %zu labels found in the scripts", n_keys);
}
END_TEST

/* ---- the figures of a Chinese report ------------------------------------------------ */

/* One report of a single run (the fixture's, task copy) in dir/out, in lang; fails the
 * test unless it succeeds. The stderr it printed is returned; free it. */
static char *report_one(const char *dir, const char *lang)
{
    char run[RU_PATH + 8], out[RU_PATH + 8];
    ru_fmt(run, sizeof run, "%s/runs/lstm", dir);
    ru_fmt(out, sizeof out, "%s/out", dir);
    struct stat st;
    if (stat(run, &st) != 0)
        ru_make_run(run, NULL, 0);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--lang", lang, "--out", out, run, NULL},
           NULL, 0);
    ck_assert_msg(r.status == 0, "report --lang %s: status %d: %s", lang, r.status, r.err);
    char *err = strdup(r.err ? r.err : "");
    ru_result_free(&r);
    return err;
}

/* The file dir/out/name; free it. */
static char *out_file(const char *dir, const char *name)
{
    char path[RU_PATH + 64];
    ru_fmt(path, sizeof path, "%s/out/%s", dir, name);
    char *text = ru_slurp_all(path, NULL);
    ck_assert_msg(text != NULL, "no %s", path);
    return text;
}

START_TEST(chinese_labels_where_a_font_is_found)
{
    char dir[RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    ru_fake_fc_list(dir, "WenQuanYi Micro Hei");
    free(report_one(dir, "zh"));
    char *svg = out_file(dir, "figures/accuracy.svg");
    ck_assert_msg(strstr(svg, "逐词准确率") && strstr(svg, "序列长度 L"),
                  "the Chinese report's accuracy figure has no Chinese labels");
    ck_assert_msg(!strstr(svg, "token accuracy (0"), "an English label is left");
    ck_assert_msg(strstr(svg, "font-family=\"WenQuanYi Micro Hei\""), "the font is not used");
    free(svg);
    svg = out_file(dir, "figures/curves.svg");
    ck_assert_msg(strstr(svg, "训练曲线"), "the curves figure has no Chinese title");
    free(svg);
    char *page = out_file(dir, "report.zh.html");
    ck_assert_msg(!strstr(page, "没有找到中文字体"), "the page says no font was found");
    free(page);
    /* an English report from the same runs: no Chinese label written, English drawn */
    free(report_one(dir, "en"));
    char *vars = out_file(dir, "figure_vars.gp");
    ck_assert_msg(!strstr(vars, "zh_") && !strstr(vars, "label_font"),
                  "an English report writes Chinese labels into figure_vars.gp");
    free(vars);
    svg = out_file(dir, "figures/accuracy.svg");
    ck_assert_msg(strstr(svg, "token accuracy (0") && !strstr(svg, "逐词准确率"),
                  "the English report's figure is not in English");
    free(svg);
    ru_remove_tree(dir);
}
END_TEST

START_TEST(english_labels_said_once_where_no_font_is_found)
{
    char dir[RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    ru_fake_fc_list(dir, "");
    char *err = report_one(dir, "zh");
    ck_assert_msg(ru_count_lines_with(err, "no Chinese font found") == 1,
                  "stderr does not say once that no font was found: %s", err);
    free(err);
    char *svg = out_file(dir, "figures/accuracy.svg");
    ck_assert_msg(strstr(svg, "token accuracy (0") && !strstr(svg, "逐词准确率"),
                  "without a font the figure is not in English");
    free(svg);
    char *page = out_file(dir, "report.zh.html");
    const char *say = "没有找到中文字体";
    const char *at = strstr(page, say);
    ck_assert_msg(at && !strstr(at + 1, say), "the page does not say once that the "
                  "figures keep English labels");
    free(page);
    ru_remove_tree(dir);
}
END_TEST

/* ---- a page of one model on a task read from a file --------------------------------- */

START_TEST(a_dates_page_of_one_model_fits_its_task)
{
    char dir[RU_PATH], run[RU_PATH + 32], out[RU_PATH + 8], cmd[4 * RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    ru_fmt(run, sizeof run, "%s/runs/rnn_attention", dir);
    ru_fmt(out, sizeof out, "%s/out", dir);
    /* the fixture run as one rnn_attention run on lab 08's dates, with its trace */
    const ru_edit task = {"config.tsv", RU_SET, "task", 0, "file:docs/labs/data/dates.tsv"};
    ru_make_run(run, &task, 1);
    ru_fmt(cmd, sizeof cmd,
           "sed -i 's/^model\tlstm$/model\trnn_attention/; s/^lstm\t/rnn_attention\t/' "
           "'%s'/*.tsv && mkdir -p '%s/trace' && cp '%s'/tests/fixtures/compare/trace/"
           "rnn_attention/*.tsv '%s/trace/'",
           run, run, ru_src_root(), run);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    static const char *const langs[] = {"en", "zh"}, *const pages[] = {"report.html",
                                                                        "report.zh.html"};
    for (int zh = 0; zh < 2; zh++) {
        ru_result r;
        ru_run(&r, (const char *const[]){"report", "--lang", langs[zh], "--out", out, run,
                                         NULL},
               NULL, 0);
        ck_assert_msg(r.status == 0, "report: status %d: %s", r.status, r.err);
        ru_result_free(&r);
        char *html = out_file(dir, pages[zh]);
        ck_assert_msg(strstr(html, "attention_rnn"), "no attention figure drawn");
        for (size_t i = 0; i < sizeof not_for_a_file / sizeof not_for_a_file[0]; i++)
            ck_assert_msg(!strstr(html, not_for_a_file[i][zh]),
                          "the %s page of one model on dates says '%s'", langs[zh],
                          not_for_a_file[i][zh]);
        ck_assert_msg(!strstr(html, zh ? "复制任务给出" : "copying gives"),
                      "a model's sentence speaks of copy");
        ck_assert_msg(strstr(html, zh ? "从文件读入的任务中" : "In a task read from a file"),
                      "the %s page has no note for a task read from a file", langs[zh]);
        free(html);
    }
    ru_remove_tree(dir);
}
END_TEST

Suite *make_captions_suite(void)
{
    Suite *s = suite_create("captions");
    TCase *tc = tcase_create("captions");
    tcase_add_test(tc, a_file_task_with_one_model_is_told_of_neither_copy_nor_others);
    tcase_add_test(tc, copy_with_three_models_is_told_of_the_diagonal_and_the_contrast);
    tcase_add_test(tc, shorter_lengths_are_said_only_when_evaluated);
    tcase_add_test(tc, every_label_has_its_chinese_with_the_same_conversions);
    suite_add_tcase(s, tc);
    if (ru_have_gnuplot()) {
        tc = tcase_create("figures");
        tcase_add_test(tc, chinese_labels_where_a_font_is_found);
        tcase_add_test(tc, english_labels_said_once_where_no_font_is_found);
        tcase_add_test(tc, a_dates_page_of_one_model_fits_its_task);
        tcase_set_timeout(tc, 180);
        suite_add_tcase(s, tc);
    }
    return s;
}
