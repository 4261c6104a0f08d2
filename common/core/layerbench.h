/* layerbench.h — one layer of a model measured on its own: the cost, the time, the chain
 * of sequential operations and the path of the gradient against the length n, the three
 * columns of Vaswani et al. 2017, Table 1 (prefix: layerbench_).
 *
 * Design. A model folder lends ONE of its layers through a small ops table: the layer is
 * made at width d for sequences of length n (batch 1: one sequence, the case of the
 * paper's table), with its weights drawn as the model draws them; forward maps an input
 * X (n, d) to an output Y (n, d) with the model's own kernels; backward maps dY (n, d) to
 * dX (n, d) and adds the weight gradients, as a training step computes them. Beside the
 * code, two formulas: the analytic FLOPs of forward + backward, and the number of
 * sequential operations. This file names no model: attnlab.c lists the layers in
 * layerbench_registry, beside the model registry.
 *
 * Conventions of the counts (docs/performance.md, *One layer*):
 *   FLOPs     those of a whole model (MODEL FLOPS in model.h): 2 per multiply-add of a
 *             matrix product; 1 per addition, multiplication, division or comparison of
 *             the element-wise work; 1 per evaluation of exp, tanh or σ. The element-wise
 *             work is counted as the code does it: biases, gates, the attention's scaling
 *             by 1/√dk, its softmax (maximum, subtraction, exp, sum, scaling by 1/sum) and
 *             the softmax's backward. A layer's formula is a function of its model's
 *             folder that the model's own count calls too, so the two cannot part.
 *   sequential operations  the length of the longest chain of matrix products that wait
 *             for one another in forward + backward (products that could run at the same
 *             time count once; element-wise work between them counts nothing).
 * The path of the gradient. One forward on a fixed input, then one backward with dY zero
 * except its last row, u = (1, ..., 1)/√d (a unit vector): row 1 of dX is then
 * uᵀ·∂y_n/∂x_1, and its Euclidean norm is how much the first input still moves the last
 * output (path_norm). A softmax spreads each query over n keys, so an attention's path
 * norm also carries a factor of about 1/n that has nothing to do with distance; the
 * ratio of row 1's norm to the mean norm of all n rows of dX (path_rel) removes it: about
 * 1 when the first position counts as much as any other, small when distance erases it.
 */
#ifndef ATTNLAB_LAYERBENCH_H
#define ATTNLAB_LAYERBENCH_H

#include <stddef.h>
#include <stdio.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#include "tensor.h"

#define LAYERBENCH_RECURRENT "recurrent"
#define LAYERBENCH_ATTENTION "self-attention"

struct layerbench_ops;

/* The part every layer shares; an implementation's own struct begins with it, so a
 * pointer to one is a pointer to the other (as struct model in model.h). */
typedef struct layerbench_layer {
    const struct layerbench_ops *ops;
    size_t d, n;   /* width and sequence length it was made for */
    arena params;  /* its weights and their gradients, named (tensor.h) */
} layerbench_layer;

typedef struct layerbench_ops {
    const char *name;  /* short, unique, one word (the tables' first column) */
    const char *kind;  /* LAYERBENCH_RECURRENT or LAYERBENCH_ATTENTION */
    const char *about; /* one line: which layer of which model */
    /* Makes the layer at width d for sequences of n positions, batch 1, drawing its
     * weights from r exactly as the model draws them (the same distributions and bounds).
     * Every workspace is allocated here. Every d ≥ 1 is a width it takes. Returns NULL
     * when memory runs out (or d or n is 0). */
    layerbench_layer *(*create)(size_t d, size_t n, const gsl_rng *r);
    void (*destroy)(layerbench_layer *l);
    /* Y (n, d) = layer(X (n, d)). X is read again by backward: it must not change until
     * then. Y is written, not accumulated. */
    void (*forward)(layerbench_layer *l, gsl_matrix *Y, const gsl_matrix *X);
    /* From dY (n, d), the gradient of the last forward's Y: writes dX (n, d) and
     * accumulates (+=) the gradient of every weight into l->params.grad. */
    void (*backward)(layerbench_layer *l, gsl_matrix *dX, const gsl_matrix *dY);
    /* Analytic FLOPs of one forward and one backward at width d and length n (a real
     * number, so that the crossing of two layers' formulas can be solved exactly). */
    double (*flops)(size_t d, double n);
    /* The number of sequential operations of one forward and one backward. */
    double (*sequential_ops)(size_t d, size_t n);
} layerbench_ops;

/* The sequential operations of a recurrent layer over n steps, the same for every cell:
 * forward, the input projection of all steps (1 product), then n recurrent products, each
 * waiting for the previous state; backward, n products carrying the state's gradient
 * back, then the weight and input gradients (1 level): 2n + 2. */
double layerbench_recurrent_sequential_ops(size_t d, size_t n);

/* Every registered layer, NULL-terminated; defined in attnlab.c. */
extern const layerbench_ops *const layerbench_registry[];

/* One measurement: a layer at one width, length and BLAS thread count. */
typedef struct layerbench_row {
    const layerbench_ops *ops;
    size_t d, n, threads;
    double flops;            /* analytic, forward + backward */
    double t_median, t_min, t_max; /* seconds per forward + backward, over the repetitions */
    double seq_ops;          /* sequential operations */
    double path_norm;        /* ‖uᵀ·∂y_n/∂x_1‖ (above) */
    double path_rel;         /* ‖dX row 1‖ / mean of ‖dX row j‖ over the n rows */
} layerbench_row;

/* The input of every measurement: X (n, d) with N(0, 1) entries drawn row by row from a
 * stream seeded with seed, so a shorter sequence is the first rows of a longer one and
 * x_1 is the same for every n. */
void layerbench_input(gsl_matrix *X, unsigned long seed);

/* The path of the gradient of layer l (made for length l->n) at its input from
 * layerbench_input(seed): one forward, one backward with dY = u in the last row (above).
 * Writes *norm and *rel. Leaves gradients in l->params.grad. */
void layerbench_path(layerbench_layer *l, unsigned long seed, double *norm, double *rel);

/* Measures ops at width d and length n: makes it (weights from seed), takes its path,
 * then one warm-up and reps repetitions, each timing as many forward + backward passes
 * (the weight gradients zeroed before each, as a training step does) as last at least
 * min_seconds. threads is only recorded. Returns 0, or -1 when memory runs out. */
int layerbench_measure(const layerbench_ops *ops, size_t d, size_t n, size_t reps,
                       double min_seconds, unsigned long seed, size_t threads,
                       layerbench_row *out);

/* The real length n > 0 at which the analytic FLOPs of rec and att are equal, at width d
 * (bisection to a relative 1e-12); NAN when they do not cross below 2^40. */
double layerbench_flops_crossover(const layerbench_ops *rec, const layerbench_ops *att,
                                  size_t d);

/* The length at which the measured times t_rec (k) and t_att (k) at lengths n (k,
 * increasing) cross: the first pair of neighbouring lengths between which log(t_rec/t_att)
 * changes sign, interpolated linearly in log n. NAN when it never changes sign. */
double layerbench_time_crossover(const size_t *n, const double *t_rec, const double *t_att,
                                 size_t k);

/* Where one recurrent layer and one attention layer cross at one width and thread
 * count. */
typedef struct layerbench_cross {
    const layerbench_ops *rec, *att;
    size_t d, threads;
    double n_flops; /* layerbench_flops_crossover */
    double n_time;  /* layerbench_time_crossover over the measured lengths, or NAN */
} layerbench_cross;

/* The crossings of every recurrent layer with every attention layer among the count
 * rows, for each width and thread count they share, the lengths of each group in
 * increasing order as measured (rows of one layer, width and thread count at distinct
 * lengths). Writes at most max into out; returns how many there are. */
size_t layerbench_crossovers(const layerbench_row *r, size_t count, layerbench_cross *out,
                             size_t max);

/* The crossings as TSV, header included; NAN is written "nan". Returns 0, or -1. */
int layerbench_write_crossover_tsv(FILE *f, const layerbench_cross *c, size_t count);

/* Prints the crossings as a table. */
void layerbench_print_crossover(FILE *f, const layerbench_cross *c, size_t count);

/* The rows as TSV, header included. Returns 0, or -1 on a write error. */
int layerbench_write_tsv(FILE *f, const layerbench_row *r, size_t count);

/* Prints the rows as a table. */
void layerbench_print(FILE *f, const layerbench_row *r, size_t count);

#endif
