/* summary.h — merging finished runs into one comparison: tables, figures, a web page
 * (prefix: summary_).
 *
 * Input: run directories written by `attnlab train` (config.tsv, build.tsv,
 * train_log.tsv, eval.tsv, eval_positions.tsv, and cost.tsv and trace/ when asked for).
 * Output, in the comparison directory (columns in docs/results-format.md): the tables
 * accuracy.tsv, positions.tsv, curves.tsv, cost.tsv and summary.tsv, written here; then
 * figure_vars.gp, trace/MODEL/NAME.tsv, figures/NAME.png and .svg (drawn by
 * plots/NAME.gp) and report.html, written by report.h's functions.
 * Runs are grouped by model; a model's numbers at a length are the mean, standard
 * deviation, minimum and maximum over its runs (its seeds). Nothing is trusted: every
 * value of a run directory is checked (rundir.h), and a run with a missing, malformed or
 * impossible value is skipped whole, with one line on stderr naming the file, the line
 * and the field. There is no limit on the number of runs or models a comparison holds.
 */
#ifndef ATTNLAB_SUMMARY_H
#define ATTNLAB_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

/* Merges the run directories runs[0..n-1] into out (created when missing): writes the
 * tables, the copies of the runs' traces, figure_vars.gp and task.txt, everything the
 * figure scripts read, and nothing else (no figure, no page, nothing printed but the line
 * on stderr for each run skipped). Portable (summary.c): the browser page's entry point
 * calls it too (common/web/web_page.h, page_compare). Returns 0, or -1 with one line in
 * err when no run could be read or a file could not be written. */
int summary_merge(const char *const *runs, size_t n, const char *out, char *err,
                  size_t errn);

/* The same for runs still training (config.tsv and train_log.tsv so far: no build.tsv,
 * no evaluation yet): writes curves.tsv, figure_vars.gp and task.txt into out, what
 * plots/curves.gp reads, by the writers summary_merge uses, so that a figure drawn while
 * the runs train is the one their report will draw up to the last step logged. The browser
 * page calls it while its runs train (web_page.h, page_curves). Returns 0, or -1 with one
 * line in err. */
int summary_merge_training(const char *const *runs, size_t n, const char *out, char *err,
                           size_t errn);

/* The command's whole report (summary_report.c): summary_merge's files, then
 * merges the run directories runs[0..n-1] into out (created when missing), writes the
 * tables, draws the figures with gnuplot when it is installed (one line on stderr says
 * how to draw them later when it is not) and writes report.html, which shows the figures
 * drawn and out/manifest.tsv when there is one. Prints the summary table on f. Returns
 * 0; or -1 with one line in err when no run could be read, a file could not be written,
 * or a figure failed (report.html and the tables are written first, the figures already
 * in out/figures/ stay as they were). */
int summary_report(const char *const *runs, size_t n, const char *out, FILE *f, char *err,
                   size_t errn);

/* Sets what summary_report writes as out/manifest.tsv once the runs are read and their
 * tables written, before the page that shows it: write(f, ctx), key<TAB>value lines
 * (attnlab report into a directory of its own); NULL, the default: nothing (a comparison
 * directory keeps compare's manifest). One report runs per process, so this is a setting
 * of the program, like report_set_lang. */
void summary_set_manifest(int (*write)(FILE *, const void *), const void *ctx);

/* The directory holding the figure scripts (plots/NAME.gp): report_plots_dir(). */
const char *summary_plots_dir(void);

#endif
