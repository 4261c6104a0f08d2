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
 * deviation, minimum and maximum over its runs (its seeds). Nothing is trusted: a run
 * directory with a missing or malformed file is reported by name and skipped.
 */
#ifndef ATTNLAB_SUMMARY_H
#define ATTNLAB_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

/* Merges the run directories runs[0..n-1] into out (created when missing), writes the
 * tables, draws the figures with gnuplot when it is installed (one line on stderr says
 * how to draw them later when it is not) and writes report.html, which shows
 * out/manifest.tsv when there is one. Prints the summary table on f. Returns 0, or -1
 * with one line in err. */
int summary_report(const char *const *runs, size_t n, const char *out, FILE *f, char *err,
                   size_t errn);

/* The directory holding the figure scripts (plots/NAME.gp): report_plots_dir(). */
const char *summary_plots_dir(void);

#endif
