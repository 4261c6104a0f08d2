/* test_report_print.c — the report page on paper: an A4 print style sheet, figures that
 * shrink to the width of the page (heat maps too), one numbered caption directly under
 * each figure (in English and in Chinese), and no word about hovering that a printed
 * page would show.
 *
 * Design. The program makes the page from three runs, relabelled from the fixture run
 * as an LSTM, an RNN with attention and a Transformer, each with the fixture
 * comparison's trace of its model: attention.gp then draws several figures from one
 * script, the case where one caption used to follow them all. The HTML is read as text:
 * the style sheet's rules by their selectors, the <figure> elements by their tags. The
 * cases that need figures are left out without gnuplot. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testreport.h"
#include "testutil.h"

/* ---- making a page -------------------------------------------------------------------- */

/* Runs dir/runs/{lstm,rnn_attention,transformer} made from the fixture run, each with the
 * trace of its model in its trace/. */
static void three_runs(const char *dir)
{
    static const char *const models[] = {"lstm", "rnn_attention", "transformer"};
    for (size_t m = 0; m < 3; m++) {
        char run[RU_PATH + 32], cmd[4 * RU_PATH];
        ru_fmt(run, sizeof run, "%s/runs/%s", dir, models[m]);
        ru_make_run(run, NULL, 0);
        ru_fmt(cmd, sizeof cmd,
               "sed -i 's/^model\tlstm$/model\t%s/; s/^lstm\t/%s\t/' '%s'/*.tsv && "
               "mkdir -p '%s/trace' && cp '%s'/tests/fixtures/compare/trace/%s/*.tsv "
               "'%s/trace/'",
               models[m], models[m], run, run, ru_src_root(), models[m], run);
        ck_assert_msg(system(cmd) == 0, "%s", cmd);
    }
}

/* The page report writes in lang (en, zh) from the runs of dir, figures drawn or not
 * (plots: as ru_run takes it); free it. */
static char *page_of(const char *dir, const char *lang, const char *plots)
{
    char runs[3][RU_PATH + 32], out[RU_PATH + 8], path[RU_PATH + 32];
    ru_fmt(runs[0], sizeof runs[0], "%s/runs/lstm", dir);
    ru_fmt(runs[1], sizeof runs[1], "%s/runs/rnn_attention", dir);
    ru_fmt(runs[2], sizeof runs[2], "%s/runs/transformer", dir);
    ru_fmt(out, sizeof out, "%s/out", dir);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--lang", lang, "--out", out, runs[0], runs[1],
                                     runs[2], NULL},
           plots, 0);
    ck_assert_msg(r.status == 0, "report --lang %s: status %d: %s", lang, r.status, r.err);
    ru_result_free(&r);
    ru_fmt(path, sizeof path, "%s/%s", out, strcmp(lang, "zh") == 0 ? "report.zh.html"
                                                                     : "report.html");
    char *html = ru_slurp_all(path, NULL);
    ck_assert_msg(html != NULL, "no %s", path);
    return html;
}

/* The page's style sheet (between <style> and </style>), copied; free it. */
static char *style_of(const char *html)
{
    const char *a = strstr(html, "<style>"), *b = a ? strstr(a, "</style>") : NULL;
    ck_assert_msg(a && b, "the page has no style sheet");
    a += strlen("<style>");
    char *s = malloc((size_t)(b - a) + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, a, (size_t)(b - a));
    s[b - a] = '\0';
    return s;
}

/* The block of the at-rule that starts at `at` ("@media print{...}"), its braces
 * balanced, copied; free it. NULL when at is NULL or the block is not closed. */
static char *block_at(const char *at)
{
    const char *open = at ? strchr(at, '{') : NULL;
    if (!open)
        return NULL;
    int depth = 0;
    for (const char *p = open; *p; p++) {
        depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
        if (depth == 0) {
            char *s = malloc((size_t)(p - open) + 2);
            ck_assert_ptr_nonnull(s);
            memcpy(s, open, (size_t)(p - open) + 1);
            s[p - open + 1] = '\0';
            return s;
        }
    }
    return NULL;
}

/* The declarations of the rule of css whose selector list holds exactly sel (as written
 * in the page: "figure", ".fig img"), copied into buf; NULL when there is none. */
static const char *rule_of(const char *css, const char *sel, char *buf, size_t n)
{
    for (const char *p = css; (p = strstr(p, sel)) != NULL; p++) {
        const char *end = p + strlen(sel);
        const int starts = p == css || strchr("{};,\n", p[-1]) != NULL;
        if (!starts || (*end != '{' && *end != ','))
            continue;
        const char *open = strchr(end, '{'), *close = open ? strchr(open, '}') : NULL;
        if (!close)
            return NULL;
        ru_fmt(buf, n, "%.*s", (int)(close - open - 1), open + 1);
        return buf;
    }
    return NULL;
}

/* ---- the print style sheet ------------------------------------------------------------ */

/* An @media print block: A4 with margins, a figure (with its caption) never cut across
 * pages, and what works only on a screen (class screen) left out. No figure needed. */
START_TEST(print_style_sheet_is_a4)
{
    char dir[RU_PATH], rule[512];
    ru_fresh_dir(dir, sizeof dir);
    three_runs(dir);
    char *html = page_of(dir, "en", RU_NO_PLOTS);
    char *css = style_of(html);
    char *print = block_at(strstr(css, "@media print"));
    ck_assert_msg(print != NULL, "the page has no @media print block");
    ck_assert_msg(rule_of(print, "@page", rule, sizeof rule) && strstr(rule, "size:A4") &&
                      strstr(rule, "margin:"),
                  "no @page of size A4 with margins in print");
    ck_assert_msg(rule_of(print, "figure", rule, sizeof rule) &&
                      strstr(rule, "break-inside:avoid"),
                  "a figure may be cut across two pages");
    ck_assert_msg(rule_of(print, ".screen", rule, sizeof rule) &&
                      strstr(rule, "display:none"),
                  "what works only on a screen is printed");
    free(print);
    free(css);
    free(html);
    ru_remove_tree(dir);
}
END_TEST

/* ---- the figures: the width of the page, one numbered caption each ----------------------- */

/* Every <img> of the page sits in a <div class="fig"> whose rule shrinks it to the page
 * (max-width:100%, height:auto), and no rule for an img (a heat map's) takes that back. */
START_TEST(figures_fit_the_page)
{
    char dir[RU_PATH], rule[512];
    ru_fresh_dir(dir, sizeof dir);
    three_runs(dir);
    char *html = page_of(dir, "en", NULL);
    char *css = style_of(html);
    ck_assert_msg(rule_of(css, ".fig img", rule, sizeof rule) &&
                      strstr(rule, "max-width:100%") && strstr(rule, "height:auto"),
                  "a figure's image does not shrink to the page");
    /* every rule whose selector names img: any max-width it sets is 100% */
    for (const char *p = css; (p = strstr(p, "img")) != NULL; p++) {
        const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
        ck_assert_ptr_nonnull(close);
        for (const char *m = open; (m = strstr(m, "max-width:")) != NULL && m < close; m++)
            ck_assert_msg(strncmp(m, "max-width:100%", 14) == 0,
                          "a rule for images sets %.*s", (int)strcspn(m, ";}"), m);
    }
    size_t n_img = 0, n_heat = 0;
    for (const char *p = html; (p = strstr(p, "<img")) != NULL; p++) {
        const size_t div = strlen("<div class=\"fig\">");
        ck_assert_msg((size_t)(p - html) >= div && strncmp(p - div, "<div class=\"fig\">",
                                                           div) == 0,
                      "an image outside <div class=\"fig\">: %.60s", p);
        n_img++;
        n_heat += strncmp(p, "<img class=\"heat\"", 17) == 0;
    }
    ck_assert_msg(n_img > 0 && n_heat > 0, "the page has %zu images, %zu heat maps", n_img,
                  n_heat);
    free(css);
    free(html);
    ru_remove_tree(dir);
}
END_TEST

/* The text of an element's content from p on, tags left out, its first n bytes. */
static void text_from(const char *p, char *buf, size_t n)
{
    size_t k = 0;
    for (int in_tag = 0; *p && k + 1 < n; p++)
        if (*p == '<')
            in_tag = 1;
        else if (*p == '>')
            in_tag = 0;
        else if (!in_tag)
            buf[k++] = *p;
    buf[k] = '\0';
}

/* How many times what occurs in [a, b). */
static size_t count_in(const char *a, const char *b, const char *what)
{
    size_t n = 0;
    for (const char *p = a; (p = strstr(p, what)) != NULL && p < b; p++)
        n++;
    return n;
}

/* Each <figure> of the page in lang holds one image and, directly under it, one
 * figcaption that starts with its number ("Figure 3.", on the Chinese page "图 3"), the
 * numbers 1, 2, 3 ... in order; every image of the page is in a figure. */
static void assert_numbered(const char *lang)
{
    char dir[RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    three_runs(dir);
    char *html = page_of(dir, lang, NULL);
    size_t n = 0, attention = 0;
    for (const char *p = html; (p = strstr(p, "<figure>")) != NULL; p++) {
        const char *end = strstr(p, "</figure>");
        ck_assert_msg(end != NULL, "figure %zu is not closed", n + 1);
        n++;
        ck_assert_msg(count_in(p, end, "<img") == 1, "figure %zu holds %zu images", n,
                      count_in(p, end, "<img"));
        ck_assert_msg(count_in(p, end, "<figcaption") == 1, "figure %zu holds %zu captions",
                      n, count_in(p, end, "<figcaption"));
        const char *img_end = strstr(strstr(p, "<img"), "</div>\n");
        ck_assert_msg(img_end && strncmp(img_end + 7, "<figcaption>", 12) == 0,
                      "the caption of figure %zu is not directly under its image", n);
        attention += count_in(p, end, "alt=\"attention_") != 0;
        char want[64], got[512];
        if (strcmp(lang, "zh") == 0)
            ru_fmt(want, sizeof want, "图 %zu", n);
        else
            ru_fmt(want, sizeof want, "Figure %zu.", n);
        text_from(strstr(p, "<figcaption>") + 12, got, sizeof got);
        ck_assert_msg(strncmp(got, want, strlen(want)) == 0 &&
                          !isdigit((unsigned char)got[strlen(want)]),
                      "figure %zu's caption starts %.40s, not %s", n, got, want);
        p = end;
    }
    ck_assert_msg(n > 0 && n == count_in(html, html + strlen(html), "<img"),
                  "%zu figures for %zu images", n, count_in(html, html + strlen(html), "<img"));
    ck_assert_msg(attention >= 2, "the fixture's runs drew %zu attention figures, the case of "
                  "one script with several is not tested", attention);
    free(html);
    ru_remove_tree(dir);
}

START_TEST(each_figure_has_its_numbered_caption)
{
    assert_numbered("en");
}
END_TEST

START_TEST(each_figure_has_its_numbered_caption_zh)
{
    assert_numbered("zh");
}
END_TEST

/* ---- nothing about hovering on paper -------------------------------------------------- */

/* Where the element whose start tag begins at p ends (past its end tag, same-named
 * elements inside it counted); the end of html when it is not closed. */
static const char *element_end(const char *p)
{
    char name[16], open[20], close[20];
    size_t l = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789");
    ck_assert_msg(l > 0 && l < sizeof name, "no tag at %.20s", p);
    ru_fmt(name, sizeof name, "%.*s", (int)l, p + 1);
    ru_fmt(open, sizeof open, "<%s", name);
    ru_fmt(close, sizeof close, "</%s>", name);
    int depth = 1;
    const char *q = p + 1;
    while (depth > 0) {
        const char *o = strstr(q, open), *c = strstr(q, close);
        if (!c)
            return p + strlen(p);
        if (o && o < c && !isalnum((unsigned char)o[strlen(open)])) {
            depth++;
            q = o + 1;
        } else if (o && o < c) {
            q = o + 1;
        } else {
            depth--;
            q = c + strlen(close);
        }
    }
    return q;
}

/* Is offset at of html inside an element of class screen (hidden in print)? */
static int in_screen_only(const char *html, const char *at)
{
    for (const char *p = html; (p = strstr(p, " class=\"screen\"")) != NULL && p < at; p++) {
        const char *tag = p;
        while (tag > html && *tag != '<')
            tag--;
        if (tag < at && at < element_end(tag))
            return 1;
    }
    return 0;
}

/* In the body of the page (en and zh), every word about hovering (hover, 鼠标) is inside
 * an element of class screen, which the print style sheet hides. */
START_TEST(no_hover_on_paper)
{
    char dir[RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    three_runs(dir);
    static const char *const langs[] = {"en", "zh"}, *const words[] = {"hover", "鼠标"};
    for (size_t i = 0; i < 2; i++) {
        char *html = page_of(dir, langs[i], NULL);
        const char *body = strstr(html, "<body>");
        ck_assert_ptr_nonnull(body);
        size_t n = 0;
        for (const char *p = body; (p = strstr(p, words[i])) != NULL; p++, n++)
            ck_assert_msg(in_screen_only(html, p), "the %s page says %s on paper: %.80s",
                          langs[i], words[i], p > body + 80 ? p - 80 : body);
        /* the fixtures reach the tables of weights, whose hint is the case at hand */
        ck_assert_msg(n > 0, "the %s page has no tables of weights with their hint", langs[i]);
        free(html);
    }
    ru_remove_tree(dir);
}
END_TEST

Suite *make_report_print_suite(void)
{
    Suite *s = suite_create("report_print");
    TCase *tc = tcase_create("style");
    tcase_add_test(tc, print_style_sheet_is_a4);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    if (ru_have_gnuplot()) {
        tc = tcase_create("figures");
        tcase_add_test(tc, figures_fit_the_page);
        tcase_add_test(tc, each_figure_has_its_numbered_caption);
        tcase_add_test(tc, each_figure_has_its_numbered_caption_zh);
        tcase_add_test(tc, no_hover_on_paper);
        tcase_set_timeout(tc, 180);
        suite_add_tcase(s, tc);
    }
    return s;
}
