/* actstat.h — what a model's activations (a recurrent cell's gates and states) do over
 * a test set, rather than in one example (prefix: actstat_).
 *
 * A heat map of the gates of one example shows how they moved once; a sentence such as
 * "training opens the forget gate" needs them over many sequences, and beside the same
 * model before training. This decodes the sequences the evaluation draws first at each
 * length (align_trace_stream: the same stream and seed as eval_run) through the model's
 * trace and sums, for every matrix the model declares an activation (model_ops.traces,
 * MODEL_TRACE_ACTIVATION), the values it holds: their mean and spread, how many lie at
 * or above ACTSTAT_HI (a gate almost open) and at or below ACTSTAT_LO (almost shut), and
 * their range. The shares speak of gates, whose values lie in (0, 1); for a cell state
 * the range says what they mean.
 */
#ifndef ATTNLAB_ACTSTAT_H
#define ATTNLAB_ACTSTAT_H

#include <stdio.h>

#include "model.h"
#include "task.h"

/* A value at or above HI counts as open, at or below LO as shut. */
#define ACTSTAT_HI 0.95
#define ACTSTAT_LO 0.05

/* Room for a matrix name ("enc.gate_f"). */
#define ACTSTAT_NAME_MAX 48

/* One activation matrix at one length, summed over the examples. */
typedef struct actstat_result {
    char name[ACTSTAT_NAME_MAX]; /* the matrix, as the trace names it */
    size_t len;                  /* source length L */
    size_t examples;
    size_t values;               /* entries summed (steps x units, over the examples) */
    double sum, sumsq;           /* of the values */
    size_t hi, lo;               /* values >= ACTSTAT_HI, <= ACTSTAT_LO */
    double min, max;
} actstat_result;

/* Sums the activation matrices of m at each of the nl lengths over samples examples
 * each, drawn from the evaluation stream of seed. out has room for max results, filled
 * in the order lengths, then matrices as the trace sends them; *n_out is how many.
 * Returns 0 (*n_out 0 for a model that declares no activation); or -1 with one line in
 * err (n bytes): a task read from a file, a model without a trace, a length outside
 * 1..max_len, more matrices than max, no memory, a trace that failed. */
int actstat_run(model *m, const task *t, const size_t *lens, size_t nl, size_t samples,
                unsigned long seed, actstat_result *out, size_t max, size_t *n_out,
                char *err, size_t n);

/* Writes the results as TSV (header: model weights len matrix examples values mean sd
 * share_hi share_lo min max; weights is the word given, e.g. "trained" or "untrained").
 * Returns 0, or -1 on a write error. */
int actstat_write_tsv(FILE *f, const char *model_name, const char *weights,
                      const actstat_result *r, size_t nr);

#endif
