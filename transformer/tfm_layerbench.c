/* tfm_layerbench.c — one self-attention sublayer lent to the layer benchmark
 * (common/core/layerbench.h): the multi-head attention of an encoder layer of model
 * `transformer` at D = d, batch 1, no mask, no residual and no norm around it, run by
 * tfm_mha_forward and tfm_mha_backward.
 *
 * Heads. The model's default ratio: the head width dk of its canonical sizes (d_model /
 * heads, read from its defaults: 64 / 4 = 16), so NH = d / dk heads, the largest divisor
 * of d not above that (at least 1: d = 8 has one head of width 8).
 *
 * Layout. Weights w_in (3d, d), b_in (1, 3d), w_out (d, d), b_out (1, d) in one arena,
 * drawn as the model's mha_init draws them (Xavier-uniform w_in taken whole, bound
 * √(6/4d); w_out Xavier-uniform, √(6/2d); biases 0). The activations and the backward's
 * scratch are carved by the model's own carvers (tfm_mha_act_carve, tfm_work_carve) from
 * one block. The attention weights are kept for the backward under the model's own rule
 * (tfm_keep_maps, for this one attention); above its bound the backward makes them again.
 */
#include "tfm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "../common/core/layerbench.h"

extern const layerbench_ops tfm_layerbench_ops; /* this file's table, at its end */

typedef struct mha_bench {
    layerbench_layer head;  /* first: a mha_bench * is a layerbench_layer * */
    size_t NH;              /* heads */
    int keep;               /* the attention weights are kept for the backward */
    tfm_mha w, g;           /* views of the values and of the gradients */
    carve_block blk;
    tfm_mha_act act;        /* (n, 3d) [Q | K | V], (NH·n, n) weights or one head's, ... */
    tfm_work work;          /* (n rows, n keys) backward scratch */
    const gsl_matrix *X;    /* (n, d) the last forward's input */
} mha_bench;

/* The heads of width d: the model's default head width decides. */
static size_t heads_of(size_t d)
{
    config c;
    memset(&c, 0, sizeof c);
    tfm_ops.defaults(&c);
    const size_t dk = c.heads ? c.d_model / c.heads : 1;
    size_t nh = dk ? d / dk : 1;
    if (nh < 1)
        nh = 1;
    while (d % nh != 0)
        nh--;
    return nh;
}

static int keeps(size_t n, size_t NH)
{
    return tfm_keep_maps(1, n, 0, NH, 1);
}

static void layout(carver *c, void *ctx)
{
    mha_bench *l = ctx;
    const size_t n = l->head.n, d = l->head.d;
    tfm_mha_act_carve(&l->act, c, 1, n, n, d, l->NH, 1, l->keep);
    tfm_work_carve(&l->work, c, n, n, d, 1); /* the feed-forward's part unused: width 1 */
}

static void destroy(layerbench_layer *ll)
{
    mha_bench *l = (mha_bench *)ll;
    carve_free(&l->blk);
    arena_free(&l->head.params);
    free(l);
}

static layerbench_layer *create(size_t d, size_t n, const gsl_rng *r)
{
    mha_bench *l = calloc(1, sizeof *l);
    if (!l || d == 0 || n == 0) {
        free(l);
        return NULL;
    }
    l->head.ops = &tfm_layerbench_ops;
    l->head.d = d;
    l->head.n = n;
    l->NH = heads_of(d);
    l->keep = keeps(n, l->NH);
    const arena_spec spec[] = {
        {"w_in", 3 * d, d}, {"b_in", 1, 3 * d}, {"w_out", d, d}, {"b_out", 1, d}};
    if (arena_alloc(&l->head.params, spec, 4) != 0 ||
        carve_reserve(&l->blk, layout, l) != 0) {
        destroy(&l->head);
        return NULL;
    }
    carver c = carve_start(&l->blk);
    layout(&c, l);
    arena *p = &l->head.params;
    l->w = (tfm_mha){arena_w(p, 0), arena_w(p, 1), arena_w(p, 2), arena_w(p, 3)};
    l->g = (tfm_mha){arena_g(p, 0), arena_g(p, 1), arena_g(p, 2), arena_g(p, 3)};
    /* mha_init's draws (the arena starts at 0, so the biases already are) */
    model_uniform(l->w.w_in, sqrt(6.0 / (double)(3 * d + d)), r);
    model_uniform(l->w.w_out, sqrt(6.0 / (double)(d + d)), r);
    return &l->head;
}

static void forward(layerbench_layer *ll, gsl_matrix *Y, const gsl_matrix *X)
{
    mha_bench *l = (mha_bench *)ll;
    l->X = X;
    gsl_matrix_set_zero(Y); /* tfm_mha_forward adds its output (the residual's place) */
    tfm_mha_forward(Y, &l->act, X, X, &l->w, NULL, 1, l->NH);
}

static void backward(layerbench_layer *ll, gsl_matrix *dX, const gsl_matrix *dY)
{
    mha_bench *l = (mha_bench *)ll;
    gsl_matrix_set_zero(dX); /* accumulated into, through Q, K and V alike */
    tfm_mha_backward(dX, dX, &l->g, &l->work, dY, l->X, l->X, &l->act, &l->w, 1, l->NH);
}

/* One sequence of n positions at D = d in NH heads: the model's count of one attention
 * (tfm_mha_flops in tfm.h, written out there) with every pair scored and no mask,
 *     24nd² + 12n²d + NH·(10n² + n) + 10nd,
 * and, when the weights are not kept (tfm_keep_maps), what the backward does to make
 * them again: one more Q_j·K_jᵀ (2n²d in all) and the scaling, subtraction, exp and
 * scaling of every score (4·NH·n²). */
static double flops(size_t d, double n)
{
    const double D = (double)d, NH = (double)heads_of(d);
    double f = tfm_mha_flops(D, NH, n, n, tfm_scores_full(n, n));
    if (!keeps((size_t)ceil(n), heads_of(d)))
        f += 2.0 * n * n * D + 4.0 * NH * n * n;
    return f;
}

/* Forward: [Q|K|V], then the scores, then P·V, then W_o: 4 products, each waiting for the
 * one before (the heads, done one after another, wait for nothing of each other).
 * Backward: dO, then dP (dV beside it), then dQ and dK, then dX (the weight gradients
 * beside each): 4. Independent of n. */
static double sequential_ops(size_t d, size_t n)
{
    (void)d;
    (void)n;
    return 8.0;
}

const layerbench_ops tfm_layerbench_ops = {
    .name = "mha",
    .kind = LAYERBENCH_ATTENTION,
    .about = "one multi-head self-attention sublayer of model transformer (head width as "
             "its defaults, no mask)",
    .create = create,
    .destroy = destroy,
    .forward = forward,
    .backward = backward,
    .flops = flops,
    .sequential_ops = sequential_ops,
};
