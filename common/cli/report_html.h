/* report_html.h — HTML pieces of report.html that know nothing of the page (prefix:
 * report_html_): escaping, tables, a group's name, an inline PNG. report_page.c writes
 * the page with them.
 */
#ifndef ATTNLAB_REPORT_HTML_H
#define ATTNLAB_REPORT_HTML_H

#include <stdio.h>

#include "../core/tsv.h"

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

/* The page's style sheet (report_style.c): CSS for the screen and an @media print block
 * for A4 paper, to be written whole inside <style>. */
extern const char report_style[];

#endif
