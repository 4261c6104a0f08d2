/* rundir.h — one finished run directory, read whole and checked (prefix: rundir_).
 *
 * A run directory is what `attnlab train --out DIR` leaves behind (columns in
 * docs/results-format.md):
 *     config.tsv          every setting, key<TAB>value
 *     build.tsv           build facts and run totals, key<TAB>value ("parameters",
 *                         "train_seconds" are read here)
 *     train_log.tsv       step, seconds, loss, token_acc, ...
 *     eval.tsv            len, token_acc, seq_acc, ...
 *     eval_positions.tsv  len, position, accuracy, ...
 *     cost.tsv            only when the run measured its cost (train --cost-lengths)
 * Nothing is trusted: people copy, merge and edit these files. rundir_load reads them all
 * and checks every cell a comparison reads before anything is computed, so a malformed
 * run is refused whole, with one line naming the file, the line and what was wrong, and
 * the cells of a loaded run can be read without further checks.
 */
#ifndef ATTNLAB_RUNDIR_H
#define ATTNLAB_RUNDIR_H

#include <stddef.h>

#include "config.h"
#include "tsv.h"

/* What one run directory holds, with the column index of every field a comparison
 * reads. Every listed cell of every row is a finite number. */
typedef struct rundir {
    const char *dir;              /* the directory (the caller's string, not copied) */
    config cfg;                   /* config.tsv read over the generic defaults */
    double params, train_seconds; /* from build.tsv; NAN when absent or not a number */
    tsv eval, pos, log, cost;     /* the tables; cost.rows == 0 when there is no cost.tsv */
    long e_len, e_tok, e_seq;     /* eval.tsv: len, token_acc, seq_acc */
    long p_len, p_pos, p_acc;     /* eval_positions.tsv: len, position, accuracy */
    long l_step, l_sec, l_loss, l_acc; /* train_log.tsv: step, seconds, loss, token_acc */
    long c_len, c_train, c_flops, c_decode; /* cost.tsv: len, train_ms_per_seq,
                                               flops_per_seq, decode_ms_per_seq */
} rundir;

/* Loads run directory dir into r. Returns 0, or -1 with one line in err (n bytes) and
 * nothing held: a missing file, a missing column, a cell that is not a number. */
int rundir_load(rundir *r, const char *dir, char *err, size_t n);

/* Frees the tables of a run rundir_load filled. */
void rundir_free(rundir *r);

#endif
