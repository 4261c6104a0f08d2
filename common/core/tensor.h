/* tensor.h — parameter/gradient arenas of named tensors, and the small numeric ops
 * every model shares (prefix: arena_ for arenas, op_ for operations).
 *
 * Layout. A model's parameters live in one contiguous block of doubles; a second block
 * of the same size holds their gradients (and the optimiser keeps two more of that size
 * for Adam's moments). A size table names every tensor with its shape and its offset in
 * the block; gsl_matrix views into both blocks are handed out once, when the arena is
 * built, so no tensor is ever allocated or freed on its own.
 *
 * Invariant: tensor k occupies data[offset[k] .. offset[k] + rows[k]*cols[k]) and the
 * tensors tile the block in table order without gaps, so a flat loop over the block
 * (zeroing gradients, an Adam update, a checkpoint) touches every parameter exactly once.
 */
#ifndef ATTNLAB_TENSOR_H
#define ATTNLAB_TENSOR_H

#include <math.h>
#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#define ARENA_NAME_MAX 48 /* longest tensor name, including the terminating NUL */

/* One line of a size table: what a model asks for. A vector is a (1, n) matrix. */
typedef struct arena_spec {
    char name[ARENA_NAME_MAX];
    size_t rows, cols;
} arena_spec;

/* A block of named tensors with a gradient block of the same shape. */
typedef struct arena {
    size_t n_tensors;
    arena_spec *spec;      /* (n_tensors) names and shapes */
    size_t *offset;        /* (n_tensors) start of each tensor in data/grad */
    size_t size;           /* total number of doubles */
    double *data;          /* (size) parameter values */
    double *grad;          /* (size) gradients, same layout */
    gsl_matrix_view *w;    /* (n_tensors) views into data */
    gsl_matrix_view *g;    /* (n_tensors) views into grad */
} arena;

/* Builds an arena from a size table of n entries: allocates both blocks (zeroed) and the
 * views. Returns 0, or -1 when memory runs out or a name is empty/duplicated or a shape
 * has a zero side (the arena is then left empty and safe to free). */
int arena_alloc(arena *a, const arena_spec *spec, size_t n);

/* Frees both blocks and the table; the arena is left empty. Safe on an empty arena. */
void arena_free(arena *a);

/* Index of the tensor called name, or -1. */
long arena_find(const arena *a, const char *name);

/* Views of tensor k (value and gradient). k must be < n_tensors. */
gsl_matrix *arena_w(arena *a, size_t k);
gsl_matrix *arena_g(arena *a, size_t k);

/* Sets every gradient to 0: the one call a training step makes before backward. */
void arena_zero_grad(arena *a);

/* Number of doubles in tensor k. */
size_t arena_numel(const arena *a, size_t k);

/* ---- small ops ---------------------------------------------------------------- */

/* Fills x (n) with draws from U(-bound, bound). */
void op_uniform(double *x, size_t n, double bound, const gsl_rng *r);
/* Fills x (n) with draws from N(0, sd²). */
void op_normal(double *x, size_t n, double sd, const gsl_rng *r);

/* Numerically stable softmax of one row in place: subtracts the row maximum first, so no
 * exp overflows. Entries equal to -INFINITY get probability exactly 0; a row whose every
 * entry is -INFINITY becomes all zeros (never NaN). A row holding a NaN becomes all NaN,
 * so an upstream fault shows instead of passing for a masked row. */
void op_softmax_row(double *x, size_t n);

/* Backward of y = softmax(x) for one row: dx += y ⊙ (dy − (dy·y)). */
void op_softmax_row_backward(double *dx, const double *dy, const double *y, size_t n);

/* Softmax cross-entropy over the rows of logits (N, V) against targets (N).
 * Returns the mean loss over the N rows. When dlogits is not NULL it receives
 * (softmax − onehot)/N, the gradient of that mean (written, not accumulated: it is a
 * fresh activation gradient). When pred is not NULL it receives each row's argmax. */
double op_cross_entropy(const gsl_matrix *logits, const int *targets, gsl_matrix *dlogits,
                        int *pred);

/* Index of the largest of z[0..n), the first one on ties: the greedy choice of a
 * decoder, the same rule op_cross_entropy uses for its predictions. */
int op_argmax(const double *z, size_t n);

/* Tokens from batch-major (B, T), as batches store them, to time-major (T, B), where one
 * step of the whole batch is contiguous: dst[t·B + b] = src[b·T + t]. Returns -1 at a
 * token outside [0, V) (it would index past an embedding table), else 0. */
int op_tokens_time_major(int *dst, const int *src, size_t B, size_t T, size_t V);

/* Returns -1 when one of ids (n) lies outside [0, V) (it would index past an embedding
 * table), else 0: the check of the error contract (common/core/model.h) before a pass reads a
 * batch. */
int op_tokens_check(const int *ids, size_t n, size_t V);

/* The way back, for predictions: dst[b·T + t] = src[t·B + b]. */
void op_tokens_batch_major(int *dst, const int *src, size_t B, size_t T);

/* Gathers rows of a table: out row i = table row ids[i]. out (N, E), table (V, E). */
void op_embed(gsl_matrix *out, const gsl_matrix *table, const int *ids, size_t n);

/* Scatters gradient rows back: dtable row ids[i] += dout row i. */
void op_embed_backward(gsl_matrix *dtable, const gsl_matrix *dout, const int *ids, size_t n);

/* Sets every row of x (N, C) to the (1, C) bias row: the start of a product that adds
 * into it (Y = b, then Y += X·Wᵀ). Most linear layers of the project form the bias first;
 * a few form the product first and add the bias after (op_add_bias), which rounds
 * differently: each layer keeps the order it was verified with (the model that does so
 * says why). */
void op_fill_rows(gsl_matrix *x, const gsl_matrix *bias);

/* A linear layer of N rows: Y (N, n) = X (N, m) · Wᵀ (m, n) + b (1, n), formed as
 * Y = b then Y += X·Wᵀ (one GEMM). */
void op_linear_forward(gsl_matrix *Y, const gsl_matrix *X, const gsl_matrix *W,
                       const gsl_matrix *b);

/* Adds a (1, C) bias row to every row of x (N, C) (any row stride). Vectorised; each
 * entry gets one addition, so the bits are those of the plain loop. */
void op_add_bias(gsl_matrix *x, const gsl_matrix *bias);

/* Accumulates the column sums of dx (N, C) into dbias (1, C), adding the rows in order:
 * the plain loop's sums, bit for bit, at any vector width. */
void op_bias_backward(gsl_matrix *dbias, const gsl_matrix *dx);

/* The attention softmax kernels (scaled dot-product attention): vectorised
 * with fm_exp, the same bits at every vector width. */

/* One row of attention weights: x (n) ← softmax(x + m), with m (n) a mask row of 0 and
 * −∞, or NULL; x and m do not overlap. Vectorised (fm_exp, partial sums): within a few
 * ulps of op_softmax_row on x + m, its plain reference, and exactly like it where it
 * matters: masked entries exactly 0, a fully masked row all 0, a row with a NaN all NaN.
 * stat (2), unless NULL, receives the row's maximum and 1/sum (−∞ and 0, or NaN, for a
 * row with no weight). */
void op_softmax_row_stat(double *restrict x, const double *restrict m, size_t n,
                     double *restrict stat);
/* The same row again from the same scores x and the stat that op_softmax_row_stat wrote:
 * the same bits, with no maximum or sum to take. */
void op_softmax_row_replay(double *restrict x, const double *restrict m, size_t n,
                            const double *restrict stat);
/* Its backward in place: on entry d (n) = ∂L/∂y, on return d = ∂L/∂x for y (n) =
 * softmax(x). Within a few ulps of op_softmax_row_backward into a zeroed dx (the dot
 * product is summed in FM_LANES partial sums), with no dx to zero first. */
void op_softmax_row_backward_inplace(double *restrict d, const double *restrict y, size_t n);

#endif
