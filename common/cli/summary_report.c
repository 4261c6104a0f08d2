/* summary_report.c — attnlab report's whole comparison: the tables (summary.c), the
 * summary printed, the figures drawn by gnuplot and report.html (see summary.h).
 *
 * Design. What is portable, reading the runs and writing every file the figure scripts
 * read, is summary.c's, which the browser page compiles too; this file adds what only
 * the program does: print for people, start gnuplot (report_draw.c) and write the page
 * of figures (report_page.c). A figure that failed is an error, but only after the page
 * shows every figure that was drawn.
 */
#include "summary.h"

#include <stdio.h>

#include "../core/afile.h"
#include "report.h"
#include "rundir.h"
#include "summary_group.h"

/* Prints the summaries, draws the figures and writes the page of comparison c, whose
 * tables are written in out. Returns 0, or -1 with one line in err. */
static int draw_and_page(const summary_ctx *c, const report_facts *fx, const char *out,
                         FILE *f, char *err, size_t errn)
{
    summary_print(f, c);
    summary_print_convergence(f, c);
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

int summary_report(const char *const *runs, size_t n, const char *out, FILE *f, char *err,
                   size_t errn)
{
    summary_ctx c;
    summary_facts_buf b = {0};
    int rc = -1;
    if (summary_load(&c, runs, n, SUMMARY_FINISHED, err, errn) == 0) {
        if (summary_facts(&c, &b) != 0)
            snprintf(err, errn, "out of memory");
        else if (summary_write_tables(&c, &b.fx, out, err, errn) == 0)
            rc = draw_and_page(&c, &b.fx, out, f, err, errn);
    }
    summary_facts_free(&b);
    summary_free(&c);
    return rc;
}

const char *summary_plots_dir(void)
{
    return report_plots_dir();
}
