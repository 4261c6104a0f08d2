/* test_report_pdf.c — the report page on paper, as a browser prints it: every page is A4
 * and no figure is cut, neither the image nor its caption.
 *
 * Design. A comparison of the smoke preset (three models, every kind of figure) gives
 * the pages: its report in English and in Chinese, and the report of one model alone
 * (the case of a lab) in both languages, whose fewer figures fall elsewhere on the
 * pages. Headless Chromium prints each to PDF, which poppler's tools read:
 *   - pdfinfo: the size of every page, which must be A4;
 *   - pdfimages -list: every image drawn, with its page and its pixels per inch on paper
 *     (so its height there), in the order drawn, which is the page's order. Every figure
 *     is one PNG in its own <figure>, so a page of N figures draws N images; a figure cut
 *     by a page break is drawn on both pages, once each, and one taller than a sheet
 *     cannot be whole;
 *   - pdftotext: the text of each page (pages end with a form feed). The caption of the
 *     k-th figure, read from the HTML, must stand whole in the text of the page of the
 *     k-th image: a caption pushed to the next page, or cut by its end, fails.
 * Texts are compared on ASCII letters and digits and CJK ideographs alone: spaces, line
 * ends, punctuation, tags and entities left out, so how a line wraps or how a PDF spells a
 * dash changes nothing. The print style sheet's rule that keeps a figure whole (figure
 * {break-inside:avoid}) is what this test holds: without it a caption of the pages of one
 * model falls on the next page.
 *
 * Skipped, with one line, when no Chromium (tests/testutil.h, tu_chromium) or no
 * poppler-utils is found; left out without gnuplot (no figure). Slow: a training run of
 * seconds, five reports beside the comparison's own and six prints. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testreport.h"
#include "testutil.h"

enum { MAX_FIGS = 64, MAX_PAGES = 128 };

/* ---- reading what a command prints ---------------------------------------------------- */

/* What the shell command cmd writes on its standard output (NUL-terminated; free it); the
 * test fails when it cannot be run or exits non-zero. */
static char *output_of(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    ck_assert_msg(f != NULL, "cannot run %s", cmd);
    size_t n = 0, cap = 1 << 16;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    for (size_t got; (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n < 2) {
            s = realloc(s, cap *= 2);
            ck_assert_ptr_nonnull(s);
        }
    }
    s[n] = '\0';
    const int st = pclose(f);
    ck_assert_msg(st == 0, "%s: status %d", cmd, st);
    return s;
}

/* Is the program prog on the PATH? */
static int on_path(const char *prog)
{
    char sh[256];
    ru_fmt(sh, sizeof sh, "command -v %s > /dev/null 2>&1", prog);
    return system(sh) == 0;
}

/* ---- the text a caption and a page share ---------------------------------------------- */

/* The letters of [a, b) (free it): ASCII letters and digits and the CJK ideographs
 * (U+3400 to U+9FFF), in order, nothing else; with html, what lies in a tag or an entity
 * is left out too. */
static char *letters_of(const char *a, const char *b, int html)
{
    char *out = malloc((size_t)(b - a) + 1);
    ck_assert_ptr_nonnull(out);
    size_t k = 0;
    for (const char *p = a; p < b;) {
        const unsigned char c = (unsigned char)*p;
        const char *close = html && (c == '<' || c == '&')
                                ? memchr(p, c == '<' ? '>' : ';', (size_t)(b - p))
                                : NULL;
        if (close) {
            p = close + 1;
        } else if (c < 0x80) {
            if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
                out[k++] = (char)c;
            p++;
        } else {
            /* one UTF-8 character: its length from its first byte, kept when it is a
             * three-byte ideograph */
            const size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if ((size_t)(b - p) < n)
                break;
            if (n == 3) {
                const unsigned long cp = (unsigned long)(c & 0x0F) << 12 |
                                         (unsigned long)(p[1] & 0x3F) << 6 |
                                         (unsigned long)(p[2] & 0x3F);
                if (cp >= 0x3400 && cp <= 0x9FFF) {
                    memcpy(out + k, p, 3);
                    k += 3;
                }
            }
            p += n;
        }
    }
    out[k] = '\0';
    return out;
}

/* The captions of the page's figures, in order, as letters_of keeps them, into caps
 * (free each); returns how many. */
static size_t captions_of(const char *html, char **caps)
{
    size_t n = 0;
    for (const char *p = html; (p = strstr(p, "<figure>")) != NULL; n++) {
        const char *end = strstr(p, "</figure>");
        const char *a = strstr(p, "<figcaption>");
        const char *b = a ? strstr(a, "</figcaption>") : NULL;
        ck_assert_msg(end && b && b < end, "figure %zu has no caption", n + 1);
        ck_assert_msg(n < MAX_FIGS, "more than %d figures", MAX_FIGS);
        caps[n] = letters_of(a + strlen("<figcaption>"), b, 1);
        p = end;
    }
    return n;
}

/* ---- the printed page ----------------------------------------------------------------- */

/* Prints page (an absolute path) to pdf with browser: A4 from the page's own @page, no
 * header or footer of the browser's. A profile of its own in dir, so nothing of the
 * user's is read or changed. */
static void print_page(const char *browser, const char *page, const char *pdf,
                       const char *dir)
{
    char sh[4 * RU_PATH];
    ru_fmt(sh, sizeof sh,
           "'%s' --headless --no-sandbox --disable-gpu --no-first-run "
           "--user-data-dir='%s/profile' --no-pdf-header-footer --print-to-pdf='%s' "
           "'file://%s' > /dev/null 2>&1",
           browser, dir, pdf, page);
    const int st = system(sh);
    FILE *f = fopen(pdf, "rb");
    ck_assert_msg(f != NULL, "%s printed no PDF with %s (status %d)", page, browser, st);
    fclose(f);
}

/* Every page of pdf is A4 (pdfinfo names the size); returns the number of pages. */
static int a4_pages(const char *pdf)
{
    char cmd[RU_PATH + 64];
    ru_fmt(cmd, sizeof cmd, "pdfinfo -f 1 -l %d '%s'", MAX_PAGES, pdf);
    char *info = output_of(cmd);
    int pages = 0;
    for (const char *p = info; (p = strstr(p, "\nPage ")) != NULL; p++) {
        char line[256];
        ru_fmt(line, sizeof line, "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
        if (!strstr(line, " size:"))
            continue;
        pages++;
        ck_assert_msg(strstr(line, "(A4)") != NULL, "%s: %s, not A4", pdf, line);
    }
    ck_assert_msg(pages > 0, "%s: pdfinfo gives no page size", pdf);
    free(info);
    return pages;
}

/* The page (from 1) of every image pdf draws, in the order drawn, into page_of; returns
 * how many. A soft mask (an image's alpha) is not an image of its own. */
static size_t image_pages(const char *pdf, int *page_of)
{
    char cmd[RU_PATH + 32];
    ru_fmt(cmd, sizeof cmd, "pdfimages -list '%s'", pdf);
    char *list = output_of(cmd);
    size_t n = 0;
    /* two lines of heading, then "page num type width height ..." */
    const char *p = strchr(list, '\n');
    p = p ? strchr(p + 1, '\n') : NULL;
    for (; p && p[1]; p = strchr(p + 1, '\n')) {
        int page, num, w, h, y_ppi;
        char type[16];
        if (sscanf(p + 1, "%d %d %15s %d %d %*s %*d %*d %*s %*s %*d %*d %*d %d", &page,
                   &num, type, &w, &h, &y_ppi) != 6 ||
            strcmp(type, "image"))
            continue;
        /* drawn h pixels at y_ppi per inch: taller than an A4 sheet (297 mm), it is
         * drawn in slices, or cut */
        ck_assert_msg(y_ppi > 0 && h * 25.4 / y_ppi <= 297.0,
                      "%s: image %zu is drawn %.0f mm tall, more than an A4 page", pdf,
                      n + 1, y_ppi > 0 ? h * 25.4 / y_ppi : 0.0);
        ck_assert_msg(n < MAX_FIGS * 2, "%s: more than %d images", pdf, MAX_FIGS * 2);
        page_of[n++] = page;
    }
    free(list);
    return n;
}

/* The text of every page of pdf as letters_of keeps it, into text (free each); returns
 * how many pages. */
static int page_texts(const char *pdf, char **text)
{
    char cmd[RU_PATH + 48];
    ru_fmt(cmd, sizeof cmd, "pdftotext -enc UTF-8 '%s' -", pdf);
    char *all = output_of(cmd);
    int n = 0;
    for (const char *p = all; *p && n < MAX_PAGES; n++) {
        const char *ff = strchr(p, '\f');
        if (!ff)
            ff = p + strlen(p);
        text[n] = letters_of(p, ff, 0);
        p = *ff ? ff + 1 : ff;
    }
    free(all);
    return n;
}

/* Prints page and holds its PDF to the design's rules: A4 pages, one image per figure,
 * each figure's whole caption on its image's page. Returns the number of figures. */
static size_t assert_prints_whole(const char *browser, const char *page, const char *dir)
{
    char pdf[RU_PATH + 16];
    ru_fmt(pdf, sizeof pdf, "%s/page.pdf", dir);
    remove(pdf);
    print_page(browser, page, pdf, dir);
    const int pages = a4_pages(pdf);

    char *html = ru_slurp_all(page, NULL);
    ck_assert_msg(html != NULL, "cannot read %s", page);
    char *caps[MAX_FIGS], *text[MAX_PAGES];
    int page_of[2 * MAX_FIGS];
    const size_t n_figs = captions_of(html, caps);
    const size_t n_imgs = image_pages(pdf, page_of);
    ck_assert_msg(n_imgs == n_figs,
                  "%s: %zu figures, %zu images drawn on paper (a figure cut by a page break "
                  "is drawn twice)", page, n_figs, n_imgs);
    const int n_text = page_texts(pdf, text);
    ck_assert_msg(n_text >= pages, "%s: the text of %d pages for %d pages", page, n_text,
                  pages);
    for (size_t k = 0; k < n_figs; k++) {
        const int p = page_of[k];
        ck_assert_msg(p >= 1 && p <= pages, "%s: figure %zu on page %d of %d", page, k + 1,
                      p, pages);
        ck_assert_msg(strstr(text[p - 1], caps[k]) != NULL,
                      "%s: figure %zu is drawn on page %d, its caption is not whole there "
                      "(cut, or pushed to another page)", page, k + 1, p);
    }
    for (size_t k = 0; k < n_figs; k++)
        free(caps[k]);
    for (int i = 0; i < n_text; i++)
        free(text[i]);
    free(html);
    return n_figs;
}

/* ---- the pages ---------------------------------------------------------------------- */

/* Runs the program with args; the test fails unless it succeeds. */
static void run_ok(const char *const *args)
{
    ru_result r;
    ru_run(&r, args, NULL, 0);
    ck_assert_msg(r.status == 0, "%s: status %d: %s", args[0], r.status, r.err);
    ru_result_free(&r);
}

START_TEST(report_prints_with_no_figure_cut)
{
    const char *browser = tu_chromium();
    if (!browser) {
        printf("report_pdf: no Chromium found, the report is not printed (set CHROMIUM)\n");
        return;
    }
    if (!on_path("pdfimages") || !on_path("pdftotext") || !on_path("pdfinfo")) {
        printf("report_pdf: no poppler-utils (pdfimages, pdftotext, pdfinfo), the printed "
               "report is not read (apt-get install poppler-utils)\n");
        return;
    }
    char dir[RU_PATH], cmp[RU_PATH + 8], one[RU_PATH + 8], run[RU_PATH + 64];
    ru_fresh_dir(dir, sizeof dir);
    ru_fmt(cmp, sizeof cmp, "%s/cmp", dir);
    ru_fmt(one, sizeof one, "%s/one", dir);
    run_ok((const char *const[]){"compare", "--preset", "smoke", "--out", cmp, NULL});
    run_ok((const char *const[]){"report", "--lang", "zh", cmp, NULL});
    static const char *const alone[] = {"transformer", "lstm"};
    ru_fmt(run, sizeof run, "%s/report.html", cmp);
    const size_t figs = assert_prints_whole(browser, run, dir);
    ck_assert_msg(figs >= 8, "the smoke comparison's page has %zu figures", figs);
    ru_fmt(run, sizeof run, "%s/report.zh.html", cmp);
    assert_prints_whole(browser, run, dir);
    for (size_t m = 0; m < sizeof alone / sizeof alone[0]; m++) {
        ru_fmt(run, sizeof run, "%s/runs/%s-s1", cmp, alone[m]);
        ru_remove_tree(one);
        run_ok((const char *const[]){"report", "--out", one, run, NULL});
        run_ok((const char *const[]){"report", "--lang", "zh", "--out", one, run, NULL});
        ru_fmt(run, sizeof run, "%s/report.html", one);
        assert_prints_whole(browser, run, dir);
        ru_fmt(run, sizeof run, "%s/report.zh.html", one);
        assert_prints_whole(browser, run, dir);
    }
    ru_remove_tree(dir);
}
END_TEST

Suite *make_report_pdf_suite(void)
{
    Suite *s = suite_create("report_pdf");
    if (ru_have_gnuplot()) {
        TCase *tc = tcase_create("paper");
        tcase_set_tags(tc, "slow");
        tcase_set_timeout(tc, 900);
        tcase_add_test(tc, report_prints_with_no_figure_cut);
        suite_add_tcase(s, tc);
    }
    return s;
}
