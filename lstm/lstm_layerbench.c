/* lstm_layerbench.c — one LSTM layer lent to the layer benchmark (common/core/layerbench.h):
 * the encoder's layer of model `lstm` at E = H = d, batch 1, run by lstm_layer_forward
 * and lstm_layer_backward.
 *
 * Layout. Weights Wx (4d, d), Wh (4d, d), b (1, 4d) in one arena, drawn as lstm_init
 * draws the encoder's (U(−k, k) with k = 1/√H, the bias as b_ih + b_hh with the forget
 * block at the model's default forget_bias). The workspace is one carved block: Hs, Cs,
 * dHs, dCs ((n+1), d) with h_0 = c_0 = 0 in row 0, Act and dPre (n, 4d). The output Y is
 * h_1 .. h_n, copied out of Hs rows 1..n.
 */
#include "lstm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "../common/core/layerbench.h"

extern const layerbench_ops lstm_layerbench_ops; /* this file's table, at its end */

typedef struct lstm_bench {
    layerbench_layer head;   /* first: a lstm_bench * is a layerbench_layer * */
    lstm_weights w, g;       /* views of the values and of the gradients */
    carve_block blk;
    gsl_matrix_view Hs, Cs, dHs, dCs; /* ((n+1), d) */
    gsl_matrix_view Act, dPre;        /* (n, 4d) */
    const gsl_matrix *X;              /* (n, d) the last forward's input */
} lstm_bench;

static void layout(carver *c, void *ctx)
{
    lstm_bench *l = ctx;
    const size_t n = l->head.n, d = l->head.d;
    l->Hs = carve_matrix(c, n + 1, d);
    l->Cs = carve_matrix(c, n + 1, d);
    l->dHs = carve_matrix(c, n + 1, d);
    l->dCs = carve_matrix(c, n + 1, d);
    l->Act = carve_matrix(c, n, 4 * d);
    l->dPre = carve_matrix(c, n, 4 * d);
}

static void destroy(layerbench_layer *ll)
{
    lstm_bench *l = (lstm_bench *)ll;
    carve_free(&l->blk);
    arena_free(&l->head.params);
    free(l);
}

static layerbench_layer *create(size_t d, size_t n, const gsl_rng *r)
{
    lstm_bench *l = calloc(1, sizeof *l);
    if (!l || d == 0 || n == 0) {
        free(l);
        return NULL;
    }
    l->head.ops = &lstm_layerbench_ops;
    l->head.d = d;
    l->head.n = n;
    const arena_spec spec[] = {{"Wx", 4 * d, d}, {"Wh", 4 * d, d}, {"b", 1, 4 * d}};
    if (arena_alloc(&l->head.params, spec, 3) != 0 ||
        carve_reserve(&l->blk, layout, l) != 0) {
        destroy(&l->head);
        return NULL;
    }
    carver c = carve_start(&l->blk);
    layout(&c, l);
    arena *p = &l->head.params;
    l->w = (lstm_weights){arena_w(p, 0), arena_w(p, 1), arena_w(p, 2)};
    l->g = (lstm_weights){arena_g(p, 0), arena_g(p, 1), arena_g(p, 2)};
    /* the model's own draws, in its order: Wx, Wh, then the bias */
    config cfg;
    memset(&cfg, 0, sizeof cfg);
    lstm_ops.defaults(&cfg);
    const double k = 1.0 / sqrt((double)d);
    model_uniform(l->w.Wx, k, r);
    model_uniform(l->w.Wh, k, r);
    lstm_init_bias(l->w.b, k, cfg.forget_bias, r);
    return &l->head;
}

static void forward(layerbench_layer *ll, gsl_matrix *Y, const gsl_matrix *X)
{
    lstm_bench *l = (lstm_bench *)ll;
    const size_t n = l->head.n, d = l->head.d;
    l->X = X;
    /* h_0 = c_0 = 0, then the n steps of one sequence (B = 1) */
    gsl_vector_view h0 = gsl_matrix_row(&l->Hs.matrix, 0), c0 = gsl_matrix_row(&l->Cs.matrix, 0);
    gsl_vector_set_zero(&h0.vector);
    gsl_vector_set_zero(&c0.vector);
    lstm_layer_forward(&l->Hs.matrix, &l->Cs.matrix, &l->Act.matrix, X, &l->w, 1);
    /* Y (n,d) = h_1 .. h_n */
    gsl_matrix_const_view H = gsl_matrix_const_submatrix(&l->Hs.matrix, 1, 0, n, d);
    gsl_matrix_memcpy(Y, &H.matrix);
}

static void backward(layerbench_layer *ll, gsl_matrix *dX, const gsl_matrix *dY)
{
    lstm_bench *l = (lstm_bench *)ll;
    const size_t n = l->head.n, d = l->head.d;
    /* what reaches h_t from outside is row t of dY; nothing reaches c_t or h_0 */
    gsl_matrix_set_zero(&l->dCs.matrix);
    gsl_vector_view dh0 = gsl_matrix_row(&l->dHs.matrix, 0);
    gsl_vector_set_zero(&dh0.vector);
    gsl_matrix_view dH = gsl_matrix_submatrix(&l->dHs.matrix, 1, 0, n, d);
    gsl_matrix_memcpy(&dH.matrix, dY);
    gsl_matrix_set_zero(dX); /* the layer accumulates into it */
    lstm_layer_backward(dX, &l->g, &l->dPre.matrix, &l->dHs.matrix, &l->dCs.matrix, l->X,
                        &l->Hs.matrix, &l->Cs.matrix, &l->Act.matrix, &l->w, 1);
}

/* The layer's own count at E = H = d (lstm_layer_flops in lstm.h, written out there):
 * n·(48d² + 41d). */
static double flops(size_t d, double n)
{
    return lstm_layer_flops((double)d, (double)d, n);
}

const layerbench_ops lstm_layerbench_ops = {
    .name = "lstm",
    .kind = LAYERBENCH_RECURRENT,
    .about = "one LSTM layer of model lstm (4 gates, E = H = d)",
    .create = create,
    .destroy = destroy,
    .forward = forward,
    .backward = backward,
    .flops = flops,
    .sequential_ops = layerbench_recurrent_sequential_ops,
};
