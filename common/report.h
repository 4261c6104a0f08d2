/* report.h — writing results for people and for plotting (prefix: report_).
 *
 * Matrices (attention maps, gate activations) are written as TSV with a header row of
 * column labels and a label at the start of each row, the layout gnuplot reads with
 * `matrix rowheaders columnheaders`:
 *     corner  c1  c2  ...
 *     r1      v   v   ...
 * Labels are the tokens on that axis, so a heat map can show them on its axes.
 */
#ifndef ATTNLAB_REPORT_H
#define ATTNLAB_REPORT_H

#include <gsl/gsl_matrix.h>
#include <stdio.h>

/* Writes m with row and column labels as TSV. Returns 0, or -1 on a write error. */
int report_write_matrix(FILE *f, const gsl_matrix *m, const char (*rows)[16],
                        const char (*cols)[16], const char *corner);

/* Prints m as an aligned table with labels, 3 decimals (for the terminal). Wide matrices
 * are printed whole: a terminal scrolls, a teacher wants every column. */
void report_print_matrix(FILE *f, const char *title, const gsl_matrix *m,
                         const char (*rows)[16], const char (*cols)[16]);

#endif
