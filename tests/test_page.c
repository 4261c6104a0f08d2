/* test_page.c — the page a report writes, read as a student reads it: every figure inside
 * it as the very PNG gnuplot drew (no SVG, whose heat maps are tiny images a browser
 * blurs), heat maps marked to be shown pixel for pixel, the weights of the attention
 * cells under their figure with their query and key, the summary in words, a title that
 * fits the models, and the same page in Chinese with --lang zh (report.zh.html, beside
 * report.html). A language other than en and zh is a usage error that writes nothing.
 *
 * Run directories come from tests/fixtures/run/ (testreport.h), relabelled as another
 * model where a case needs one, with the trace of that model from
 * tests/fixtures/compare/trace/. The cases that draw figures need gnuplot and are left
 * out without it; how to look at the page in a browser is tests/screenshot.sh's. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cli/report.h"
#include "testreport.h"
#include "testutil.h"

/* ---- the page: its figures inside it, pixel for pixel, and its language ----------------- */

/* A run directory dir made from the fixture run as a run of model `as` (lstm or
 * rnn_attention: every model cell rewritten), with the fixture comparison's trace of that
 * model in dir/trace/. */
static void traced_run(const char *dir, const char *as)
{
    char cmd[3 * RU_PATH];
    ru_make_run(dir, NULL, 0);
    ru_fmt(cmd, sizeof cmd,
           "sed -i 's/^model\tlstm$/model\t%s/; s/^lstm\t/%s\t/' '%s'/*.tsv && "
           "mkdir -p '%s/trace' && cp '%s'/tests/fixtures/compare/trace/%s/*.tsv '%s/trace/'",
           as, as, dir, dir, ru_src_root(), as, dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/* Fails unless the page html holds figures/NAME.png of out byte for byte in a data: URI,
 * in an <img> whose class is heat exactly when heat is 1. */
static void assert_embedded(const char *html, const char *out, const char *name, int heat)
{
    char key[128], path[RU_PATH + 64];
    ru_fmt(key, sizeof key, "alt=\"%s\" src=\"data:image/png;base64,", name);
    const char *at = strstr(html, key);
    ck_assert_msg(at != NULL, "the page has no PNG of %s", name);
    size_t len, file_len;
    unsigned char *png = ru_base64_decode(at + strlen(key), &len);
    ck_assert_msg(png != NULL, "the data: URI of %s is not base64", name);
    ru_fmt(path, sizeof path, "%s/figures/%s.png", out, name);
    char *file = ru_slurp_all(path, &file_len);
    ck_assert_ptr_nonnull(file);
    ck_assert_msg(len == file_len && memcmp(png, file, len) == 0,
                  "the PNG of %s in the page (%zu bytes) is not figures/%s.png (%zu bytes)",
                  name, len, name, file_len);
    /* the <img that holds it */
    const char *img = at;
    while (img > html && strncmp(img, "<img", 4) != 0)
        img--;
    const int is_heat = strncmp(img, "<img class=\"heat\"", 17) == 0;
    ck_assert_msg(is_heat == heat, "%s is%s shown as a heat map", name, is_heat ? "" : " not");
    free(png);
    free(file);
}

START_TEST(page_holds_sharp_pngs)
{
    char base[RU_PATH], out[RU_PATH + 8], a[RU_PATH + 16], b[RU_PATH + 16];
    char path[RU_PATH + 64], want[128];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(a, sizeof a, "%s/runs/a", base);
    traced_run(a, "lstm");
    ru_fmt(b, sizeof b, "%s/runs/b", base);
    traced_run(b, "rnn_attention");
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, b, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_result_free(&r);
    ru_fmt(path, sizeof path, "%s/report.html", out);
    char *html = ru_slurp_all(path, NULL);
    ck_assert_ptr_nonnull(html);
    /* no SVG (its heat maps are images the browser smooths): the PNGs, whole */
    ck_assert_msg(!strstr(html, "<svg"), "the page still inlines an SVG");
    assert_embedded(html, out, "accuracy", 0);
    assert_embedded(html, out, "cost", 0);
    assert_embedded(html, out, "gates", 1);
    assert_embedded(html, out, "attention_rnn", 1);
    ck_assert_msg(strstr(html, "img.heat{image-rendering:pixelated}"),
                  "heat maps are not shown pixel for pixel");
    /* the alignment's first cell, as the fixture has it, titled with its query and key */
    ru_fmt(path, sizeof path, "%s/tests/fixtures/compare/trace/rnn_attention/alignment.tsv",
           ru_src_root());
    char *tsv = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(tsv);
    const char *row1 = strchr(tsv, '\n') + 1, *v = strchr(row1, '\t') + 1;
    ru_fmt(want, sizeof want, "title=\"query %.*s (row 1) → key ", (int)strcspn(row1, "\t"),
           row1);
    ck_assert_msg(strstr(html, want), "no cell titled %s", want);
    ru_fmt(want, sizeof want, "(column 1): %.4f\">", strtod(v, NULL));
    ck_assert_msg(strstr(html, want), "the first weight is not shown as %s", want);
    free(tsv);
    /* the summary in words: named columns, each length said for what it is */
    ck_assert_msg(strstr(html, "<th>token accuracy</th>") && !strstr(html, "token_mean"),
                  "the summary shows raw column names");
    ck_assert_msg(strstr(html, "shorter than any trained length"),
                  "length 2 (under the training range 4-8) is not explained");
    ck_assert_msg(strstr(html, "<h1>Why attention replaced the LSTM"), "the title of two "
                  "models, an LSTM and an attention model, is lost");
    free(html);
    ru_remove_tree(base);
}
END_TEST

START_TEST(page_in_chinese)
{
    char base[RU_PATH], out[RU_PATH + 8], a[RU_PATH + 16], path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(a, sizeof a, "%s/runs/a", base);
    traced_run(a, "lstm");
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--lang", "zh", "--out", out, a, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "report.zh.html"), "the page is not named: %s", r.out);
    ru_result_free(&r);
    ru_fmt(path, sizeof path, "%s/report.html", out);
    ck_assert_msg(access(path, F_OK) != 0, "--lang zh wrote report.html");
    ru_fmt(path, sizeof path, "%s/report.zh.html", out);
    char *html = ru_slurp_all(path, NULL);
    ck_assert_ptr_nonnull(html);
    static const char *const zh[] = {
        "<html lang=\"zh-CN\">", "<h2>摘要</h2>", "<th>逐词准确率</th>", "<th>整序列准确率</th>",
        "逐词准确率和整序列准确率随序列长度的变化", /* the accuracy caption */
        "只画记忆最长的 8 个单元",                  /* the gates caption */
        "要看实测的斜率",                           /* the cost caption */
        "比所有训练长度都短",                       /* what length 2 is */
        "<h1>lstm：copy 任务</h1>",                 /* one model: its own title */
    };
    for (size_t i = 0; i < sizeof zh / sizeof zh[0]; i++)
        ck_assert_msg(strstr(html, zh[i]), "the Chinese page lacks %s", zh[i]);
    ck_assert_msg(!strstr(html, "Token and whole-sequence accuracy"),
                  "the Chinese page has an English caption");
    free(html);
    /* then in English, beside it: both stay */
    ru_run(&r, (const char *const[]){"report", "--out", out, "--lang=en", a, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_result_free(&r);
    ck_assert_msg(access(path, F_OK) == 0, "report.zh.html is gone");
    ru_fmt(path, sizeof path, "%s/report.html", out);
    html = ru_slurp_all(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(strstr(html, "<h1>lstm on the copy task</h1>"), "one model's title");
    ck_assert_msg(!strstr(html, "Why attention replaced"), "one model is not a comparison");
    ck_assert_msg(strstr(html, "Token and whole-sequence accuracy"), "no English caption");
    free(html);
    ru_remove_tree(base);
}
END_TEST

/* ---- what the models' ops tell the page ---------------------------------------------------- */

/* Two models the registry does not hold, known to the page only by their ops: one that
 * carries the source in one state (its title heads the page), one that attends and
 * sends matrices named look* to the figure attention_rnn. */
static const model_trace_kind looker_kinds[] = {
    {"look", "attention_rnn", MODEL_TRACE_ATTENTION, 1, "Looker: row t is where it looked.",
     "Looker 的注意力。"},
    {NULL, NULL, 0, 0, NULL, NULL},
};
static const model_ops plain_ops = {.name = "plain", .title = "Plain Recurrence"};
static const model_ops looker_ops = {.name = "looker", .attends = 1, .traces = looker_kinds};

/* The title, the heat map, the tables of weights (masked as the kind says) and the
 * caption's sentence all come from the ops of the models shown, not from their names. */
START_TEST(page_follows_the_models_ops)
{
    char base[RU_PATH], out[RU_PATH + 8], path[RU_PATH + 64], err[512];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_fmt(path, sizeof path, "%s/figures", out);
    ru_mkdir_p(path);
    ru_fmt(path, sizeof path, "%s/trace/looker", out);
    ru_mkdir_p(path);
    /* a PNG as far as the page reads one: the signature and IHDR, 3 x 2 pixels */
    static const unsigned char png[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
                                          0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 3,
                                          0, 0, 0, 2};
    ru_fmt(path, sizeof path, "%s/figures/attention_rnn.png", out);
    ru_spit(path, (const char *)png, sizeof png);
    static const char look[] = "tgt\\src\t3\t1\n5\t0.25\t0.75\n9\t0.5\t0.5\n";
    ru_fmt(path, sizeof path, "%s/trace/looker/look.l0.h0.tsv", out);
    ru_spit(path, look, strlen(look));
    config c;
    config_defaults(&c);
    const char *const models[] = {"plain", "looker"}, *const runs[] = {base, base};
    const model_ops *const ops[] = {&plain_ops, &looker_ops};
    const report_facts fx = {.cfg = &c, .n_models = 2, .models = models, .runs = runs,
                             .ops = ops, .seeds = 1};
    static const report_figure fig = {"x", {"attention_rnn"}, "The figure.", "图。",
                                      {{0, NULL, NULL}}};
    report_drawn d = {.n = 1};
    d.fig[0].name = "attention_rnn";
    d.fig[0].from = &fig;
    report_set_lang(REPORT_EN);
    ck_assert_msg(report_write_page(out, &fx, &d, err, sizeof err) == 0, "%s", err);
    ru_fmt(path, sizeof path, "%s/report.html", out);
    char *html = ru_slurp_all(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(strstr(html, "<h1>Why attention replaced the Plain Recurrence: 2 models"),
                  "the title does not come from the ops (title, attends)");
    ck_assert_msg(strstr(html, "<img class=\"heat\" width=\"3\" height=\"2\" "
                               "alt=\"attention_rnn\""),
                  "a figure a model's trace feeds is not a heat map");
    ck_assert_msg(strstr(html, "(row 2) → key 1 (column 2): 0.5000\">"),
                  "the weights of look* are not shown");
    ck_assert_msg(strstr(html, "<td class=\"x\"") && !strstr(html, "0.7500"),
                  "the kind is masked, its table is not");
    ck_assert_msg(strstr(html, "<figcaption><strong>Figure 1.</strong> The figure. Looker: "
                               "row t is where it looked."
                               "</figcaption>"),
                  "the caption lacks the model's own sentence");
    free(html);
    ru_remove_tree(base);
}
END_TEST

/* ---- a language the page is not written in is a usage error ------------------------------ */

START_TEST(unknown_language_refused)
{
    static const char *const bad[][2] = {{"--lang", "fr"}, {"--lang", ""}, {"--lang=EN", NULL},
                                         {"--lang", NULL}};
    char base[RU_PATH], out[RU_PATH + 8], a[RU_PATH + 16];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(a, sizeof a, "%s/runs/a", base);
    ru_make_run(a, NULL, 0);
    ru_fmt(out, sizeof out, "%s/out", base);
    const char *const *flag = bad[_i];
    ru_result r;
    /* the flag last when it lacks its value */
    if (flag[1] || strchr(flag[0], '='))
        ru_run(&r, (const char *const[]){"report", "--out", out, flag[0], flag[1], a, NULL},
               RU_NO_PLOTS, 0);
    else
        ru_run(&r, (const char *const[]){"report", "--out", out, a, flag[0], NULL},
               RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 2, "%s %s: status %d: %s", flag[0], flag[1] ? flag[1] : "",
                  r.status, r.err);
    char line[512];
    ru_line_with(r.err, "--lang", line, sizeof line);
    ck_assert_msg(strstr(line, "(accepted: en, zh)"), "the refusal does not name the "
                  "languages: %s", r.err);
    ck_assert_msg(access(out, F_OK) != 0, "a refused report wrote %s", out);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* ---- the page in a browser (tests/screenshot.sh) ------------------------------------------ */

START_TEST(page_renders_in_chromium)
{
    char base[RU_PATH], out[RU_PATH + 8], a[RU_PATH + 16], script[RU_PATH], page[RU_PATH + 32];
    char png[RU_PATH + 32];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(a, sizeof a, "%s/runs/a", base);
    traced_run(a, "lstm");
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_result_free(&r);
    ru_fmt(script, sizeof script, "%s/tests/screenshot.sh", ru_src_root());
    ru_fmt(page, sizeof page, "%s/report.html", out);
    ru_fmt(png, sizeof png, "%s/shot.png", base);
    /* a page that is not there is a usage error */
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execlp("sh", "sh", script, "/nonexistent/report.html", png, (char *)NULL);
        _exit(127);
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    ck_assert_msg(WEXITSTATUS(st) == 2, "a missing page: status %d", WEXITSTATUS(st));
    /* the page, 1200 CSS pixels wide, 900 high */
    if ((pid = fork()) == 0) {
        freopen("/dev/null", "w", stdout);
        execlp("sh", "sh", script, page, png, "1200", "900", (char *)NULL);
        _exit(127);
    }
    ck_assert(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    if (WEXITSTATUS(st) == 3) {
        printf("chromium not found: the page is not rendered (tests/screenshot.sh)\n");
    } else {
        ck_assert_msg(WEXITSTATUS(st) == 0, "screenshot.sh: status %d", WEXITSTATUS(st));
        size_t len;
        unsigned char *b = (unsigned char *)ru_slurp_all(png, &len);
        ck_assert_msg(b && len > 24 && memcmp(b + 12, "IHDR", 4) == 0, "%s is no PNG", png);
        const unsigned long w = (unsigned long)b[16] << 24 | (unsigned long)b[17] << 16 |
                                (unsigned long)b[18] << 8 | b[19];
        ck_assert_msg(w == 1200, "the screenshot is %lu pixels wide, not 1200", w);
        free(b);
    }
    ru_remove_tree(base);
}
END_TEST

Suite *make_page_suite(void)
{
    Suite *s = suite_create("page");
    if (ru_have_gnuplot()) {
        TCase *tc = tcase_create("figures");
        tcase_add_test(tc, page_holds_sharp_pngs);
        tcase_add_test(tc, page_in_chinese);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        tc = tcase_create("browser"); /* Chromium takes seconds to start */
        tcase_add_test(tc, page_renders_in_chromium);
        tcase_set_tags(tc, "slow");
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
    } else {
        printf("gnuplot not found: the page's figures are not checked\n");
    }
    TCase *ops = tcase_create("ops");
    tcase_add_test(ops, page_follows_the_models_ops);
    suite_add_tcase(s, ops);
    TCase *lang = tcase_create("lang");
    tcase_add_loop_test(lang, unknown_language_refused, 0, 4);
    suite_add_tcase(s, lang);
    return s;
}
