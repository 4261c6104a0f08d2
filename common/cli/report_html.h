/* report_html.h — HTML pieces of report.html (prefix: report_html_): escaping, tables, a
 * group's name, an inline PNG, which know nothing of the page; and the tables of weights
 * under an attention figure (report_weights.c). report_page.c writes the page with them.
 */
#ifndef ATTNLAB_REPORT_HTML_H
#define ATTNLAB_REPORT_HTML_H

#include <stdio.h>

#include "../core/tsv.h"
#include "report.h"

/* Writes s to f escaped for HTML text and attribute values (< > & "). */
void report_html_text(FILE *f, const char *s);

/* Writes the table t (read by tsv_read) to f as an HTML table, its header as it is,
 * every cell escaped. */
void report_html_table(FILE *f, const tsv *t);

/* Writes a group's name as the command line says it: "MODEL:hidden=256,forget_bias=0"
 * becomes "MODEL --hidden 256 --forget-bias 0" (the figure scripts do the same). */
void report_html_group(FILE *f, const char *name);

/* Writes out/figures/NAME.png to f as an <img> inside the page, base64 in a data: URI
 * (in a <div class="fig">) with alt text alt, of class heat for a heat map (heat: the page
 * sets it for the figures a trace feeds, whose cells it keeps sharp). Writes nothing
 * when the file cannot be read or is not a PNG. */
void report_html_image(FILE *f, const char *out, const char *name, const char *alt, int heat);

/* The kind of matrix that the trace of group m of fx sends to figure name (the first,
 * when several do), or NULL: what a model's ops say it traces. */
const model_trace_kind *report_trace_kind(const report_facts *fx, size_t m, const char *name);

/* Under attention figure name of the report in out: the tables of the matrices it was
 * drawn from (the first group of fx whose model's trace sends attention maps to it, as
 * plots/attention.gp chooses, found by the prefix of their kind), in Chinese when zh;
 * on paper, one line saying where they are instead. Nothing when there are none. */
void report_weights(FILE *f, const char *out, const report_facts *fx, const char *name,
                    int zh);

/* The page's style sheet (report_style.c): CSS for the screen and an @media print block
 * for A4 paper, to be written whole inside <style>. */
extern const char report_style[];

#endif
