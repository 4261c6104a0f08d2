/* align.h — whether attention finds the source symbol each output repeats, over many
 * examples rather than one (prefix: align_).
 *
 * A heat map of one example shows where a model looked once. This measures it over a
 * test set: for a generated task whose every output repeats one source symbol
 * (task.source_of: copy, reverse), each example is decoded greedily through the model's
 * trace, and each attention map the trace sends with the decoded outputs as rows and
 * the source as columns ("tgt" × "src": an additive attention's alignment, each head of
 * a cross-attention) is scored row by row: a hit when the row's largest weight lies on
 * the source position the output repeats, and the weight it puts there. A model whose
 * trace sends no such map (only gates, say) gives nothing.
 *
 * The examples are those eval_run draws first at each length (the same evaluation
 * stream and seed), so the two measures speak of the same sequences.
 */
#ifndef ATTNLAB_ALIGN_H
#define ATTNLAB_ALIGN_H

#include <stdio.h>

#include "model.h"
#include "task.h"

/* Room for a matrix name ("cross.l1.h3"). */
#define ALIGN_NAME_MAX 48

/* One attention map at one length, summed over the examples. */
typedef struct align_result {
    char name[ALIGN_NAME_MAX]; /* the matrix, as the trace names it */
    size_t len;                /* source length L */
    size_t examples;
    size_t rows;               /* output positions scored */
    size_t hits;               /* rows whose largest weight is on the repeated symbol */
    double weight;             /* the sum over rows of the weight on it */
} align_result;

/* Scores the attention maps of m at each of the nl lengths over samples examples each,
 * drawn from the evaluation stream of seed. out has room for max results, filled in
 * the order lengths, then matrices as the trace sends them; *n_out is how many. Returns
 * 0; or -1 with one line in err (n bytes): a task without source_of (a file task), a
 * model without a trace, a length outside 1..max_len, more maps than max, no memory, a
 * trace that failed. A model whose trace sends no "tgt" × "src" map returns 0 with
 * *n_out 0. */
int align_run(model *m, const task *t, const size_t *lens, size_t nl, size_t samples,
              unsigned long seed, align_result *out, size_t max, size_t *n_out, char *err,
              size_t n);

/* Decodes, through m's trace, the first samples sequences of length L that eval_run
 * draws from the evaluation stream of seed for task t, one at a time, sending every
 * matrix to sink (ctx passed on). Shared by every measure over a test set that reads the
 * trace (this one, actstat.h). Returns 0; or -1 with one line in err (n bytes): no
 * memory, a trace that failed or a sink that said stop. */
int align_trace_stream(model *m, const task *t, size_t L, size_t samples, unsigned long seed,
                       trace_sink sink, void *ctx, char *err, size_t n);

/* Checks that m has a trace and that each of the nl lengths lies in 1..max_len. Returns
 * 0, or -1 with one line in err (n bytes). */
int align_check_lengths(const model *m, const size_t *lens, size_t nl, char *err, size_t n);

/* Writes the results as TSV (header: model len matrix examples rows argmax_acc
 * weight_mean). Returns 0, or -1 on a write error. */
int align_write_tsv(FILE *f, const char *model_name, const align_result *r, size_t nr);

#endif
