/* summary_report.c — attnlab report's whole comparison: the tables (summary.c), the
 * summary printed, the figures drawn by gnuplot and report.html (see summary.h).
 *
 * Design. What is portable, reading the runs and writing every file the figure scripts
 * read, is summary.c's, which the browser page compiles too; this file adds what only
 * the program does: print for people, start gnuplot (report_draw.c) and write the page
 * of figures (report_page.c). A figure that failed is an error, but only after the page
 * shows every figure that was drawn. A Chinese report asks fontconfig for a Chinese
 * font first: with one, figure_vars.gp gives the figures Chinese labels.
 */
#include "summary.h"

#include <stdio.h>

#include "../core/afile.h"
#include "report.h"
#include "rundir.h"
#include "summary_group.h"

/* The writer of out/manifest.tsv and its context (summary_set_manifest), or NULL. */
static int (*manifest_write)(FILE *, const void *);
static const void *manifest_ctx;

void summary_set_manifest(int (*write)(FILE *, const void *), const void *ctx)
{
    manifest_write = write;
    manifest_ctx = ctx;
}

/* Prints the summaries, draws the figures and writes the page of comparison c, whose
 * tables are written in out. Returns 0, or -1 with one line in err. */
static int draw_and_page(const summary_ctx *c, const report_facts *fx, const char *out,
                         FILE *f, char *err, size_t errn)
{
    summary_print(f, c);
    summary_print_convergence(f, c);
    summary_print_bleu(f, c);
    report_drawn drawn;
    char why[1024];
    const int figures = report_draw(out, fx, &drawn, f, why, sizeof why);
    if (report_write_page(out, fx, &drawn, err, errn) != 0)
        return -1;
    char shown[AFILE_PATH_MAX];
    fprintf(f, "report:  %s/%s\n", rundir_printable(out, shown, sizeof shown),
            report_page_name());
    if (figures != 0) {
        snprintf(err, errn, "%s", why);
        return -1;
    }
    return 0;
}

/* The font of the figures' Chinese labels, into font (n bytes), or NULL when none is
 * installed: then the figures keep their English labels, said once here (and on the
 * page). Nothing is said when there are no figure scripts to draw with. */
static const char *chinese_labels(char *font, size_t n)
{
    if (report_cjk_font(font, n) == 0)
        return font;
    if (report_plots_dir())
        fprintf(stderr, "attnlab report: no Chinese font found (fc-list :lang=zh lists "
                "none): the figures keep their English labels; install one (Debian: "
                "apt-get install fonts-wqy-microhei, which sh .ci/deps.sh does) and run the "
                "report again\n");
    return NULL;
}

int summary_report(const char *const *runs, size_t n, const char *out, FILE *f, char *err,
                   size_t errn)
{
    summary_ctx c;
    summary_facts_buf b = {0};
    int rc = -1;
    if (summary_load(&c, runs, n, SUMMARY_FINISHED, err, errn) == 0) {
        char font[128];
        if (summary_facts(&c, &b) != 0) {
            snprintf(err, errn, "out of memory");
        } else {
            if (report_get_lang() == REPORT_ZH)
                b.fx.label_font = chinese_labels(font, sizeof font);
            if (summary_write_tables(&c, &b.fx, out, err, errn) == 0 &&
                (!manifest_write || afile_write(out, "manifest.tsv", manifest_write,
                                                manifest_ctx, err, errn) == 0))
                rc = draw_and_page(&c, &b.fx, out, f, err, errn);
        }
    }
    summary_facts_free(&b);
    summary_free(&c);
    return rc;
}

const char *summary_plots_dir(void)
{
    return report_plots_dir();
}
