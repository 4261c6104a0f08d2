/* rundir_table.h — the checked reading of one table of a run directory, shared by the
 * loaders of rundir.c (internal to rundir: prefix rundir_).
 *
 * A table is read whole (tsv_read), every cell must be text, and each column the
 * program reads is parsed by its kind against a range taken from the run's own
 * configuration; records are then sorted by key and a repeated key refused. rundir.c
 * holds the column tables; this file what they are checked with.
 */
#ifndef ATTNLAB_RUNDIR_TABLE_H
#define ATTNLAB_RUNDIR_TABLE_H

#include <stddef.h>

#include "../core/config.h"
#include "../core/task.h"
#include "../core/tsv.h"

/* What a column holds, and so which values it accepts. */
typedef enum {
    K_MODEL,    /* the run's model, as config.tsv names it */
    K_LEN,      /* a sequence length: a whole number in [1, max_len] */
    K_POSITION, /* an output position: a whole number in [1, target length of the row's len] */
    K_STEP,     /* a training step: a whole number in [1, steps] */
    K_COUNT,    /* a count of sequences or parameters: a whole number in [1, 10^12] */
    K_FRACTION, /* an accuracy: a number in [0, 1] */
    K_AMOUNT,   /* a time, loss, rate, norm or FLOP count: a finite number >= 0 */
    K_LOSS,     /* an evaluation loss: as K_AMOUNT, or inf (a probability that became 0) */
} kind;

/* A column a run's table may have. */
typedef struct col_spec {
    const char *name;
    kind k;
    int required; /* a run without it is refused */
} col_spec;

/* The most columns of one table a loader reads. */
#define RUNDIR_MAX_COLS 16

/* What the checks of one table need to know about the run. */
typedef struct table_ctx {
    const config *cfg;
    const task *task; /* a generated task; NULL for a file task (its file is not read) */
    const char *path; /* the file, for messages */
} table_ctx;

/* Checks cell s of column spec c at file line `line`; row holds the values of the row's
 * earlier columns (a position needs its row's len at index len_at). Writes the value to
 * *v. Returns 0, or -1 with one line in err. */
int rundir_check_value(const table_ctx *t, const col_spec *c, const char *s, size_t line,
                       const double *row, long len_at, double *v, char *err, size_t n);

/* Every cell of t must be text; names the first that is not, by its column, or in a
 * key/value file by its key. Returns 0, or -1 with one line in err. */
int rundir_check_text(const tsv *t, const char *path, char *err, size_t n);

/* Reads dir/name and checks it against the k (<= RUNDIR_MAX_COLS) column specs. On
 * success *vals holds rows · k values (NAN for an absent optional column) and *rows the
 * row count; the caller frees *vals. Returns 0, or -1 with one line in err. A missing
 * file is an error unless optional, when it reads as no rows. */
int rundir_read_table(const table_ctx *tc, const char *dir, const char *name,
                      const col_spec *spec, size_t k, int optional, double **vals,
                      size_t *rows, char *err, size_t n);

/* Sorts nr records of size sz by cmp and refuses two with one key, naming their lines
 * (each record holds its file line, a size_t, at offset line_at). Returns 0, or -1 with
 * one line in err. */
int rundir_sort_unique(void *recs, size_t nr, size_t sz, size_t line_at,
                       int (*cmp)(const void *, const void *), const char *path,
                       const char *key, char *err, size_t n);

#endif
