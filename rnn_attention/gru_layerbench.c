/* gru_layerbench.c — one GRU layer lent to the layer benchmark (common/core/layerbench.h): the
 * encoder's layer of model `rnn_attention` (its default cell) at In = H = d, batch 1, run
 * by gru_layer_forward and gru_layer_backward.
 *
 * Layout. Weights Wx (3d, d), Wh (3d, d), bx, bh (1, 3d) in one arena, drawn as
 * rnnattn_init draws the encoder's: every one from U(−k, k), k = 1/√H, in that order. The
 * workspace is one carved block: Hs, dHs ((n+1), d) with h_0 = 0 in row 0, Act, HP, dXP,
 * dHP (n, 3d). The output Y is h_1 .. h_n, copied out of Hs rows 1..n.
 */
#include "gru.h"

#include <math.h>
#include <stdlib.h>

#include "../common/core/carve.h"
#include "../common/core/layerbench.h"
#include "../common/core/model.h"

extern const layerbench_ops gru_layerbench_ops; /* this file's table, at its end */

typedef struct gru_bench {
    layerbench_layer head;   /* first: a gru_bench * is a layerbench_layer * */
    gru_weights w, g;        /* views of the values and of the gradients */
    carve_block blk;
    gsl_matrix_view Hs, dHs;           /* ((n+1), d) */
    gsl_matrix_view Act, HP, dXP, dHP; /* (n, 3d) */
    const gsl_matrix *X;               /* (n, d) the last forward's input */
} gru_bench;

static void layout(carver *c, void *ctx)
{
    gru_bench *l = ctx;
    const size_t n = l->head.n, d = l->head.d;
    l->Hs = carve_matrix(c, n + 1, d);
    l->dHs = carve_matrix(c, n + 1, d);
    l->Act = carve_matrix(c, n, 3 * d);
    l->HP = carve_matrix(c, n, 3 * d);
    l->dXP = carve_matrix(c, n, 3 * d);
    l->dHP = carve_matrix(c, n, 3 * d);
}

static void destroy(layerbench_layer *ll)
{
    gru_bench *l = (gru_bench *)ll;
    carve_free(&l->blk);
    arena_free(&l->head.params);
    free(l);
}

static layerbench_layer *create(size_t d, size_t n, const gsl_rng *r)
{
    gru_bench *l = calloc(1, sizeof *l);
    if (!l || d == 0 || n == 0) {
        free(l);
        return NULL;
    }
    l->head.ops = &gru_layerbench_ops;
    l->head.d = d;
    l->head.n = n;
    const arena_spec spec[] = {
        {"Wx", 3 * d, d}, {"Wh", 3 * d, d}, {"bx", 1, 3 * d}, {"bh", 1, 3 * d}};
    if (arena_alloc(&l->head.params, spec, 4) != 0 ||
        carve_reserve(&l->blk, layout, l) != 0) {
        destroy(&l->head);
        return NULL;
    }
    carver c = carve_start(&l->blk);
    layout(&c, l);
    arena *p = &l->head.params;
    l->w = (gru_weights){arena_w(p, 0), arena_w(p, 1), arena_w(p, 2), arena_w(p, 3)};
    l->g = (gru_weights){arena_g(p, 0), arena_g(p, 1), arena_g(p, 2), arena_g(p, 3)};
    /* nn.GRU's draws, in the model's order: Wx, Wh, then b_i and b_h */
    const double k = 1.0 / sqrt((double)d);
    model_uniform(l->w.Wx, k, r);
    model_uniform(l->w.Wh, k, r);
    model_uniform(l->w.bx, k, r);
    model_uniform(l->w.bh, k, r);
    return &l->head;
}

static void forward(layerbench_layer *ll, gsl_matrix *Y, const gsl_matrix *X)
{
    gru_bench *l = (gru_bench *)ll;
    const size_t n = l->head.n, d = l->head.d;
    l->X = X;
    gsl_vector_view h0 = gsl_matrix_row(&l->Hs.matrix, 0); /* h_0 = 0 */
    gsl_vector_set_zero(&h0.vector);
    gru_layer_forward(&l->Hs.matrix, &l->Act.matrix, &l->HP.matrix, X, &l->w, 1);
    /* Y (n,d) = h_1 .. h_n */
    gsl_matrix_const_view H = gsl_matrix_const_submatrix(&l->Hs.matrix, 1, 0, n, d);
    gsl_matrix_memcpy(Y, &H.matrix);
}

static void backward(layerbench_layer *ll, gsl_matrix *dX, const gsl_matrix *dY)
{
    gru_bench *l = (gru_bench *)ll;
    const size_t n = l->head.n, d = l->head.d;
    /* what reaches h_t from outside is row t of dY; nothing reaches h_0 */
    gsl_vector_view dh0 = gsl_matrix_row(&l->dHs.matrix, 0);
    gsl_vector_set_zero(&dh0.vector);
    gsl_matrix_view dH = gsl_matrix_submatrix(&l->dHs.matrix, 1, 0, n, d);
    gsl_matrix_memcpy(&dH.matrix, dY);
    gsl_matrix_set_zero(dX); /* the layer accumulates into it */
    gru_layer_backward(dX, &l->g, &l->dXP.matrix, &l->dHP.matrix, &l->dHs.matrix, l->X,
                       &l->Hs.matrix, &l->Act.matrix, &l->HP.matrix, &l->w, 1);
}

/* The layer's own count at In = H = d (gru_layer_flops in gru.h, written out there):
 * n·(36d² + 39d). */
static double flops(size_t d, double n)
{
    return gru_layer_flops((double)d, (double)d, n);
}

const layerbench_ops gru_layerbench_ops = {
    .name = "gru",
    .kind = LAYERBENCH_RECURRENT,
    .about = "one GRU layer of model rnn_attention (3 gates, In = H = d)",
    .create = create,
    .destroy = destroy,
    .forward = forward,
    .backward = backward,
    .flops = flops,
    .sequential_ops = layerbench_recurrent_sequential_ops,
};
