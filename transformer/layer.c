/* layer.c — the encoder and decoder layers (Vaswani et al. 2017, §3.1) built from residual
 * sublayers around attention and the feed-forward network; and the walks and carvers
 * that name every piece's parameters and lay out its activations (see tfm.h).
 *
 * Design. A layer is a chain of residual sublayers, each around one function f (attention
 * or feed-forward). Both orders are written once, in tfm_sublayer_open/_close (forward) and
 * sub_back_open/sub_back_close (backward), so a layer reads as its list of sublayers:
 *     pre-LN:   n = LN(x);      y = x + f(n)      f adds straight into y
 *     post-LN:  n = x + f(x);   y = LN(n)         f adds straight into n
 * Every f adds its output into a matrix that already holds x, so a residual connection is
 * a copy, never an extra pass.
 *
 * Backward keeps the gradient of the residual stream in one matrix g and updates it in
 * place, sublayer by sublayer from the last: on entry to a sublayer g = ∂L/∂y, on exit
 * g = ∂L/∂x.
 */
#include "tfm.h"

#include <assert.h>
#include <gsl/gsl_matrix.h>
#include <string.h>

/* ---- the size table ------------------------------------------------------------------ */
/* Each walker names the tensors of one piece in a fixed order, which is the order of the
 * arena (and so of checkpoints, of the optimiser's flat loops and of the initialisation's
 * draws). Names are prefix.part, e.g. "dec.1.cross.w_in". */

void tfm_norm_walk(walk *wk, tfm_norm *w, tfm_norm *g, const char *prefix, size_t D)
{
    /* vectors are (1, n) matrices, so op_add_bias and op_bias_backward take them as is */
    walk_tensor(wk, &w->g, &g->g, prefix, "g", 1, D);
    walk_tensor(wk, &w->b, &g->b, prefix, "b", 1, D);
}

void tfm_mha_walk(walk *wk, tfm_mha *w, tfm_mha *g, const char *prefix, size_t D)
{
    /* PyTorch's nn.MultiheadAttention: in_proj_weight (3D, D), in_proj_bias (3D),
     * out_proj.weight (D, D), out_proj.bias (D) */
    walk_tensor(wk, &w->w_in, &g->w_in, prefix, "w_in", 3 * D, D);
    walk_tensor(wk, &w->b_in, &g->b_in, prefix, "b_in", 1, 3 * D);
    walk_tensor(wk, &w->w_out, &g->w_out, prefix, "w_out", D, D);
    walk_tensor(wk, &w->b_out, &g->b_out, prefix, "b_out", 1, D);
}

void tfm_ffn_walk(walk *wk, tfm_ffn *w, tfm_ffn *g, const char *prefix, size_t D, size_t F)
{
    /* linear1 (F, D) widens, linear2 (D, F) narrows back: nn.Linear's (out, in) layout */
    walk_tensor(wk, &w->w1, &g->w1, prefix, "w1", F, D);
    walk_tensor(wk, &w->b1, &g->b1, prefix, "b1", 1, F);
    walk_tensor(wk, &w->w2, &g->w2, prefix, "w2", D, F);
    walk_tensor(wk, &w->b2, &g->b2, prefix, "b2", 1, D);
}

void tfm_enc_layer_walk(walk *wk, tfm_enc_layer *w, tfm_enc_layer *g, const char *prefix,
                        size_t D, size_t F)
{
    /* in the order the forward uses them: norm, attention, norm, feed-forward */
    char p[ARENA_NAME_MAX];
    walk_join(p, sizeof p, prefix, "ln1");
    tfm_norm_walk(wk, &w->ln1, &g->ln1, p, D);
    walk_join(p, sizeof p, prefix, "attn");
    tfm_mha_walk(wk, &w->attn, &g->attn, p, D);
    walk_join(p, sizeof p, prefix, "ln2");
    tfm_norm_walk(wk, &w->ln2, &g->ln2, p, D);
    walk_join(p, sizeof p, prefix, "ff");
    tfm_ffn_walk(wk, &w->ff, &g->ff, p, D, F);
}

void tfm_dec_layer_walk(walk *wk, tfm_dec_layer *w, tfm_dec_layer *g, const char *prefix,
                        size_t D, size_t F)
{
    /* norm, self-attention, norm, cross-attention, norm, feed-forward */
    char p[ARENA_NAME_MAX];
    walk_join(p, sizeof p, prefix, "ln1");
    tfm_norm_walk(wk, &w->ln1, &g->ln1, p, D);
    walk_join(p, sizeof p, prefix, "self");
    tfm_mha_walk(wk, &w->self, &g->self, p, D);
    walk_join(p, sizeof p, prefix, "ln2");
    tfm_norm_walk(wk, &w->ln2, &g->ln2, p, D);
    walk_join(p, sizeof p, prefix, "cross");
    tfm_mha_walk(wk, &w->cross, &g->cross, p, D);
    walk_join(p, sizeof p, prefix, "ln3");
    tfm_norm_walk(wk, &w->ln3, &g->ln3, p, D);
    walk_join(p, sizeof p, prefix, "ff");
    tfm_ffn_walk(wk, &w->ff, &g->ff, p, D, F);
}

/* ---- carving ------------------------------------------------------------------------- */
/* A piece's carve function lists its activations once; reserve() runs it on a counting
 * carver with the largest sizes to measure, and every forward runs it on the real block
 * with the sizes of its batch. Each buffer is contiguous at the sizes it was carved for,
 * so a matrix of N rows is always a plain (N, cols) view with row stride cols. */

void tfm_sub_act_carve(tfm_sub_act *s, carver *c, size_t N, size_t D)
{
    /* n and y are separate in both orders: the backward needs LN's input and its output
     * (the next sublayer's input) at once */
    s->n = carve_matrix(c, N, D);
    s->mean = carve_vector(c, N);
    s->rstd = carve_vector(c, N);
    s->y = carve_matrix(c, N, D);
}

int tfm_keep_maps(size_t B, size_t Ts, size_t Tt, size_t NH, size_t L)
{
    /* per layer: encoder self-attention Ts·Ts, decoder self-attention Tt·Tt, cross-attention
     * Tt·Ts weights per sequence and head; with overflow checks, as sizes come from users */
    const size_t big = TFM_KEEP_MAPS_MAX / sizeof(double);
    size_t per_head = 0;
    const size_t sq[3][2] = {{Ts, Ts}, {Tt, Tt}, {Tt, Ts}};
    for (size_t k = 0; k < 3; k++) {
        if (sq[k][0] && sq[k][1] > big / sq[k][0])
            return 0;
        per_head += sq[k][0] * sq[k][1];
        if (per_head > big)
            return 0;
    }
    const size_t heads = B * NH * L;
    return heads == 0 || per_head <= big / heads;
}

void tfm_mha_act_carve(tfm_mha_act *a, carver *c, size_t B, size_t Tq, size_t Tk, size_t D,
                       size_t NH, int self, int keep)
{
    assert(!self || Tq == Tk); /* the callers' choice, not an input */
    const size_t Nq = carve_mul(c, B, Tq), Nk = carve_mul(c, B, Tk);
    if (self) { /* [Q | K | V] side by side: Q and [K | V] are views with row stride 3D */
        a->qkv = carve_matrix(c, Nq, 3 * D);
        if (a->qkv.matrix.data) {
            a->q = gsl_matrix_submatrix(&a->qkv.matrix, 0, 0, Nq, D);
            a->kv = gsl_matrix_submatrix(&a->qkv.matrix, 0, D, Nq, 2 * D);
        }
    } else {
        memset(&a->qkv, 0, sizeof a->qkv);
        a->q = carve_matrix(c, Nq, D);
        a->kv = carve_matrix(c, Nk, 2 * D);
    }
    const size_t rows = carve_mul(c, carve_mul(c, B, NH), Tq); /* weight rows, all heads */
    if (keep) {
        a->p = carve_matrix(c, rows, Tk);
        a->pbuf = NULL;
    } else {
        memset(&a->p, 0, sizeof a->p);
        a->pbuf = carve_vector(c, carve_mul(c, Tq, Tk));
    }
    a->stat = carve_vector(c, carve_mul(c, rows, 2));
    a->mask = NULL;
    a->o = carve_matrix(c, Nq, D);
}

void tfm_enc_act_carve(tfm_enc_act *a, carver *c, size_t B, size_t T, size_t D, size_t F,
                       size_t NH, int keep)
{
    /* per row: 2·(2D + 2) for the sublayers, 3D + D + NH·T for attention with its
     * weights kept (2·NH without), F for the feed-forward; kept weights' NH·T outgrow the
     * rest once T > (8D + F)/NH (192 at the canonical sizes) */
    const size_t N = carve_mul(c, B, T);
    tfm_sub_act_carve(&a->s1, c, N, D);
    tfm_mha_act_carve(&a->att, c, B, T, T, D, NH, 1, keep);
    tfm_sub_act_carve(&a->s2, c, N, D);
    a->h = carve_matrix(c, N, F);
}

void tfm_dec_act_carve(tfm_dec_act *a, carver *c, size_t B, size_t Tt, size_t Ts, size_t D,
                       size_t F, size_t NH, int keep)
{
    /* self-attention is (Tt, Tt); cross-attention reads Ts keys: its [K | V] has B·Ts rows */
    const size_t N = carve_mul(c, B, Tt);
    tfm_sub_act_carve(&a->s1, c, N, D);
    tfm_mha_act_carve(&a->self, c, B, Tt, Tt, D, NH, 1, keep);
    tfm_sub_act_carve(&a->s2, c, N, D);
    tfm_mha_act_carve(&a->cross, c, B, Tt, Ts, D, NH, 0, keep);
    tfm_sub_act_carve(&a->s3, c, N, D);
    a->h = carve_matrix(c, N, F);
}

void tfm_work_carve(tfm_work *w, carver *c, size_t rows, size_t keys, size_t D, size_t F)
{
    /* one set for all layers: a layer's backward finishes with them before the next starts */
    w->rows = rows;
    w->keys = keys;
    w->g = carve_vector(c, carve_mul(c, rows, D));
    w->dn = carve_vector(c, carve_mul(c, rows, D));
    w->dqkv = carve_vector(c, carve_mul(c, rows, 3 * D));
    w->dout = carve_vector(c, carve_mul(c, rows, D));
    w->dh = carve_vector(c, carve_mul(c, rows, F));
    w->att = carve_vector(c, carve_mul(c, 2 * keys, keys));
}

/* ---- residual sublayers ---------------------------------------------------------------- */

const gsl_matrix *tfm_sublayer_input(const tfm_sub_act *s, const gsl_matrix *x, int post_ln)
{
    return post_ln ? x : &s->n.matrix;
}

gsl_matrix *tfm_sublayer_open(tfm_sub_act *s, const gsl_matrix *x, const tfm_norm *ln,
                              int post_ln)
{
    if (post_ln) { /* n = x + f(x): f adds into n */
        gsl_matrix_memcpy(&s->n.matrix, x);
        return &s->n.matrix;
    }
    /* n = LN(x); y = x + f(n): f adds into y */
    tfm_layernorm_forward(&s->n.matrix, s->mean, s->rstd, x, ln);
    gsl_matrix_memcpy(&s->y.matrix, x);
    return &s->y.matrix;
}

void tfm_sublayer_close(tfm_sub_act *s, const tfm_norm *ln, int post_ln)
{
    if (post_ln)
        tfm_layernorm_forward(&s->y.matrix, s->mean, s->rstd, &s->n.matrix, ln);
}

/* Opens the backward of sublayer s. On entry g = ∂L/∂y. Returns the gradient of f's output
 * and sets *dfin to where f must add the gradient of its input.
 *   pre-LN,  y = x + f(n):  ∂L/∂f = g, and f's input gradient goes to dn (zeroed here);
 *   post-LN, y = LN(n), n = x + f(x):  dn = LN'(g); then ∂L/∂f = dn, and since x reaches
 *   n directly, g becomes dn, to which f adds its input gradient. */
static const gsl_matrix *sub_back_open(gsl_matrix **dfin, gsl_matrix *g, gsl_matrix *dn,
                                       tfm_norm *dln, const tfm_sub_act *s,
                                       const tfm_norm *ln, int post_ln)
{
    gsl_matrix_set_zero(dn);
    if (!post_ln) {
        *dfin = dn;
        return g;
    }
    tfm_layernorm_backward(dn, dln, g, &s->n.matrix, s->mean, s->rstd, ln);
    gsl_matrix_memcpy(g, dn);
    *dfin = g;
    return dn;
}

/* Closes the backward: in pre-LN order, n = LN(x) sends dn back through the norm into g,
 * which already holds the residual path's ∂L/∂y. On exit g = ∂L/∂x in both orders. */
static void sub_back_close(gsl_matrix *g, const gsl_matrix *dn, tfm_norm *dln,
                           const tfm_sub_act *s, const gsl_matrix *x, const tfm_norm *ln,
                           int post_ln)
{
    if (!post_ln)
        tfm_layernorm_backward(g, dln, dn, x, s->mean, s->rstd, ln);
}

/* ---- encoder layer ------------------------------------------------------------------- */

void tfm_encoder_layer_forward(tfm_enc_act *a, const gsl_matrix *X, const tfm_enc_layer *p,
                               size_t B, size_t NH, int post_ln)
{
    /* self-attention: "all of the keys, values and queries come from the same place, the
     * output of the previous layer" (§3.2.3); no mask, every position sees every other */
    gsl_matrix *acc = tfm_sublayer_open(&a->s1, X, &p->ln1, post_ln);
    const gsl_matrix *in = tfm_sublayer_input(&a->s1, X, post_ln);
    tfm_mha_forward(acc, &a->att, in, in, &p->attn, NULL, B, NH);
    tfm_sublayer_close(&a->s1, &p->ln1, post_ln);

    /* feed-forward, applied to each position separately and identically (§3.3) */
    const gsl_matrix *X1 = &a->s1.y.matrix;
    acc = tfm_sublayer_open(&a->s2, X1, &p->ln2, post_ln);
    tfm_ffn_forward(acc, &a->h.matrix, tfm_sublayer_input(&a->s2, X1, post_ln), &p->ff);
    tfm_sublayer_close(&a->s2, &p->ln2, post_ln);
}

void tfm_encoder_layer_backward(gsl_matrix *dX, tfm_enc_layer *dp, tfm_work *w,
                                const gsl_matrix *dY, const gsl_matrix *X,
                                const tfm_enc_act *a, const tfm_enc_layer *p, size_t B,
                                size_t NH, int post_ln)
{
    const size_t N = X->size1, D = X->size2;
    assert(N <= w->rows);
    gsl_matrix_view g = gsl_matrix_view_array(w->g, N, D);
    gsl_matrix_view dn = gsl_matrix_view_array(w->dn, N, D);
    gsl_matrix *dfin;
    gsl_matrix_memcpy(&g.matrix, dY); /* g = ∂L/∂(layer output) */

    /* feed-forward sublayer, X1 → output */
    const gsl_matrix *X1 = &a->s1.y.matrix;
    const gsl_matrix *df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln2, &a->s2,
                                         &p->ln2, post_ln);
    tfm_ffn_backward(dfin, &dp->ff, w, df, tfm_sublayer_input(&a->s2, X1, post_ln),
                     &a->h.matrix, &p->ff);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln2, &a->s2, X1, &p->ln2, post_ln);

    /* self-attention sublayer, X → X1; queries and keys/values share one input, so both
     * gradients add into the same matrix */
    df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln1, &a->s1, &p->ln1, post_ln);
    const gsl_matrix *in = tfm_sublayer_input(&a->s1, X, post_ln);
    tfm_mha_backward(dfin, dfin, &dp->attn, w, df, in, in, &a->att, &p->attn, B, NH);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln1, &a->s1, X, &p->ln1, post_ln);

    gsl_matrix_add(dX, &g.matrix);
}

/* ---- decoder layer ------------------------------------------------------------------- */

void tfm_decoder_layer_forward(tfm_dec_act *a, const gsl_matrix *X, const gsl_matrix *Mem,
                               const gsl_matrix *mask, const tfm_dec_layer *p, size_t B,
                               size_t NH, int post_ln)
{
    /* masked self-attention: position i sees positions ≤ i only, which keeps the decoder
     * auto-regressive (§3.2.3) */
    gsl_matrix *acc = tfm_sublayer_open(&a->s1, X, &p->ln1, post_ln);
    const gsl_matrix *in = tfm_sublayer_input(&a->s1, X, post_ln);
    tfm_mha_forward(acc, &a->self, in, in, &p->self, mask, B, NH);
    tfm_sublayer_close(&a->s1, &p->ln1, post_ln);

    /* encoder-decoder attention: "the queries come from the previous decoder layer, and the
     * memory keys and values come from the output of the encoder" (§3.2.3) */
    const gsl_matrix *X1 = &a->s1.y.matrix;
    acc = tfm_sublayer_open(&a->s2, X1, &p->ln2, post_ln);
    tfm_mha_forward(acc, &a->cross, tfm_sublayer_input(&a->s2, X1, post_ln), Mem, &p->cross,
                    NULL, B, NH);
    tfm_sublayer_close(&a->s2, &p->ln2, post_ln);

    /* feed-forward */
    const gsl_matrix *X2 = &a->s2.y.matrix;
    acc = tfm_sublayer_open(&a->s3, X2, &p->ln3, post_ln);
    tfm_ffn_forward(acc, &a->h.matrix, tfm_sublayer_input(&a->s3, X2, post_ln), &p->ff);
    tfm_sublayer_close(&a->s3, &p->ln3, post_ln);
}

void tfm_decoder_layer_backward(gsl_matrix *dX, gsl_matrix *dMem, tfm_dec_layer *dp,
                                tfm_work *w, const gsl_matrix *dY, const gsl_matrix *X,
                                const gsl_matrix *Mem, const tfm_dec_act *a,
                                const tfm_dec_layer *p, size_t B, size_t NH, int post_ln)
{
    const size_t N = X->size1, D = X->size2;
    assert(N <= w->rows);
    gsl_matrix_view g = gsl_matrix_view_array(w->g, N, D);
    gsl_matrix_view dn = gsl_matrix_view_array(w->dn, N, D);
    gsl_matrix *dfin;
    gsl_matrix_memcpy(&g.matrix, dY);

    /* feed-forward sublayer, X2 → output */
    const gsl_matrix *X2 = &a->s2.y.matrix;
    const gsl_matrix *df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln3, &a->s3,
                                         &p->ln3, post_ln);
    tfm_ffn_backward(dfin, &dp->ff, w, df, tfm_sublayer_input(&a->s3, X2, post_ln),
                     &a->h.matrix, &p->ff);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln3, &a->s3, X2, &p->ln3, post_ln);

    /* cross-attention sublayer, X1 → X2: the keys' and values' gradient leaves the decoder
     * for the memory, where every decoder layer adds its share */
    const gsl_matrix *X1 = &a->s1.y.matrix;
    df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln2, &a->s2, &p->ln2, post_ln);
    tfm_mha_backward(dfin, dMem, &dp->cross, w, df, tfm_sublayer_input(&a->s2, X1, post_ln),
                     Mem, &a->cross, &p->cross, B, NH);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln2, &a->s2, X1, &p->ln2, post_ln);

    /* masked self-attention sublayer, X → X1 */
    df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln1, &a->s1, &p->ln1, post_ln);
    const gsl_matrix *in = tfm_sublayer_input(&a->s1, X, post_ln);
    tfm_mha_backward(dfin, dfin, &dp->self, w, df, in, in, &a->self, &p->self, B, NH);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln1, &a->s1, X, &p->ln1, post_ln);

    gsl_matrix_add(dX, &g.matrix);
}
