/* tracefile.h — a model's trace written as files: every matrix it sends as a labelled
 * TSV, DIR/NAME.tsv, its axes labelled with the tokens of the example (prefix:
 * tracefile_).
 *
 * The layout, read by gnuplot with `matrix rowheaders columnheaders` and by the figure
 * scripts through trace_vars.gp (docs/results-format.md):
 *     corner  c1  c2  ...        corner: "ROWS\COLS", the kinds of the two axes
 *     r1      v   v   ...        numbers as %.6g
 * An axis of kind "src" carries the source tokens, "tgt" the decoded ones, "tgt_in" the
 * decoder's inputs (BOS, then the decoded tokens but the last), any other kind numbers
 * 0, 1, 2, ... (units, steps). A label is a token as task_symbol shows it, cut to 15
 * bytes at the start of a UTF-8 character.
 *
 * One copy for every front-end: `attnlab attention` and `train --trace`, and the browser
 * page's decoding, write their traces with tracefile_sink.
 */
#ifndef ATTNLAB_TRACEFILE_H
#define ATTNLAB_TRACEFILE_H

#include <gsl/gsl_matrix.h>
#include <stdio.h>

#include "model.h"
#include "task.h"

#define TRACEFILE_ERR_MAX 512

/* One trace being written: the labels of each axis and where the files go. */
typedef struct tracefile {
    const char *dir;
    char (*src)[16];    /* (Ts) source tokens */
    char (*tgt)[16];    /* (Tt) decoded tokens */
    char (*tgt_in)[16]; /* (Tt) decoder inputs: BOS then the decoded tokens */
    char (*index)[16];  /* (n_index) 0, 1, 2, ... */
    size_t n_index;
    /* called with each matrix before it is written, when not NULL (the command line
     * prints it as a table) */
    void (*show)(void *ctx, const char *name, const gsl_matrix *m, const char (*rows)[16],
                 const char (*cols)[16]);
    void *show_ctx;
    int failed;                  /* the sink refused a matrix or could not write it */
    char err[TRACEFILE_ERR_MAX]; /* then why, when a file could not be written */
} tracefile;

/* Writes m with row and column labels as TSV (the layout above) on f. Returns 0, or -1
 * on a write error. */
int tracefile_write_matrix(FILE *f, const gsl_matrix *m, const char (*rows)[16],
                           const char (*cols)[16], const char *corner);

/* Writes the label of token tok of task t (nsym data symbols; nsym itself is BOS) into
 * lab: as task_symbol shows it, cut to 15 bytes at the start of a UTF-8 character. */
void tracefile_label(const task *t, size_t nsym, int tok, char lab[16]);

/* Prepares tf to write the trace of model m decoding src (Ts tokens) into out (Tt
 * tokens) as files in dir (which must exist): the labels of every axis, numbered ones
 * for as many units as m's trace sends (ops->trace_units) or steps of the two sides.
 * show is cleared. Returns 0, or -1 when memory runs out (free it with tracefile_free
 * either way). */
int tracefile_init(tracefile *tf, const model *m, const task *t, const int *src, size_t Ts,
                   const int *out, size_t Tt, const char *dir);

/* Frees the labels of tf. */
void tracefile_free(tracefile *tf);

/* The trace_sink (model.h) over a tracefile (ctx): writes the matrix as dir/NAME.tsv,
 * whole or not at all (afile.h). Returns 0, or -1 with tf->failed set (and tf->err when
 * the file could not be written). */
int tracefile_sink(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                   const char *cols);

#endif
