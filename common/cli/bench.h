/* bench.h — measuring training and decoding speed (prefix: bench_).
 *
 * Method. Each (model, length) is measured in a child process of its own, so its peak
 * memory (the child's maximum resident set) belongs to that measurement alone and one
 * model's allocations never warm another's caches. In the child: build the model at its
 * canonical sizes, reserve, run warm-up steps, then time `reps` repetitions of a block of
 * full training steps (forward, backward, clipping, Adam) and report the median and the
 * spread (minimum and maximum) of sequences per second; the same for greedy decoding.
 * Analytic FLOPs per step (model_ops.flops) divided by the median time gives the achieved
 * GFLOP/s, which is compared with the DGEMM rate of the same machine measured in the same
 * run, so efficiency is a ratio rather than a guess. Medians, because machines are shared
 * and noisy.
 */
#ifndef ATTNLAB_BENCH_H
#define ATTNLAB_BENCH_H

#include <stdio.h>

#include "../core/config.h"
#include "../core/model.h"

typedef struct bench_result {
    char model[CONFIG_STR_MAX];
    size_t len, batch, params;
    double train_seq_s, train_min, train_max; /* sequences per second: median, spread */
    double decode_seq_s, decode_min, decode_max;
    double flops_step;   /* analytic FLOPs of one training step (whole batch) */
    double gflops;       /* achieved: flops_step / median step time */
    double peak_mib;     /* peak resident memory of the measuring process */
} bench_result;

/* Measures one model at source/target length L with configuration c (batch c->batch) in
 * a child process. Returns 0, or -1 with one line in err (which quotes the model's own
 * message when it refused a backward or a decode: model.h's error contract). */
int bench_model(const model_ops *ops, const config *c, size_t L, size_t reps,
                bench_result *out, char *err, size_t n);

/* The DGEMM rate of this machine (GFLOP/s, median of reps) for square matrices of side n,
 * the size class of the models' products; 0 when memory runs out or the product fails. */
double bench_dgemm(size_t side, size_t reps);

/* Writes the results as TSV (header included). */
int bench_write_tsv(FILE *f, const bench_result *r, size_t n, double dgemm_gflops);

/* Prints the results as a table. */
void bench_print(FILE *f, const bench_result *r, size_t n, double dgemm_gflops);


#include <gsl/gsl_rng.h>

#include "../core/task.h"

/* The cost of one length for a trained model, as `attnlab train --cost-lengths` records
 * it: the median time of a forward and backward pass (a training step without the
 * optimiser) and of greedy decoding, each per sequence in milliseconds, over reps
 * batches of B sequences of length L drawn from r. The parameters are left unchanged and
 * the gradients zero. Returns 0, or -1 when memory runs out or the model refuses a
 * backward or a decode (error contract of model.h: model_last_error() says why). */
int bench_cost(model *m, const task *t, size_t L, size_t B, size_t reps, const gsl_rng *r,
               double *train_ms, double *decode_ms);

#endif
