/* layer.c — layer norm, the position-wise feed-forward network, residual sublayers and the
 * encoder and decoder layers built from them (see tfm.h); also the size table and the
 * carving of activation blocks that the model and the tests share.
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
#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fastmath.h"

/* ---- the size table ------------------------------------------------------------------ */
/* Each walker names the tensors of one piece in a fixed order, which is the order of the
 * arena (and so of checkpoints, of the optimiser's flat loops and of the initialisation's
 * draws). Names are prefix.part, e.g. "dec.1.cross.w_in". */

void tfm_walk_tensor(tfm_walk *wk, gsl_matrix **w, gsl_matrix **g, const char *prefix,
                     const char *name, size_t rows, size_t cols)
{
    const size_t k = wk->n++; /* pass 1 (no table, no arena) only counts */
    if (wk->spec) {           /* pass 2: describe the tensor */
        arena_spec *s = &wk->spec[k];
        const char *dot = *prefix ? "." : "";
        int len = snprintf(s->name, sizeof s->name, "%s%s%s", prefix, dot, name);
        if (len < 0 || (size_t)len >= sizeof s->name)
            wk->failed = 1; /* a truncated name could collide with another */
        s->rows = rows;
        s->cols = cols;
    } else if (wk->a) { /* pass 3: hand out its views */
        assert(wk->a->spec[k].rows == rows && wk->a->spec[k].cols == cols);
        *w = arena_w(wk->a, k);
        *g = arena_g(wk->a, k);
    }
}

void tfm_walk_norm(tfm_walk *wk, tfm_norm *w, tfm_norm *g, const char *prefix, size_t D)
{
    /* vectors are (1, n) matrices, so tfm_add_bias and tfm_bias_backward take them as is */
    tfm_walk_tensor(wk, &w->g, &g->g, prefix, "g", 1, D);
    tfm_walk_tensor(wk, &w->b, &g->b, prefix, "b", 1, D);
}

void tfm_walk_mha(tfm_walk *wk, tfm_mha *w, tfm_mha *g, const char *prefix, size_t D)
{
    /* PyTorch's nn.MultiheadAttention: in_proj_weight (3D, D), in_proj_bias (3D),
     * out_proj.weight (D, D), out_proj.bias (D) */
    tfm_walk_tensor(wk, &w->w_in, &g->w_in, prefix, "w_in", 3 * D, D);
    tfm_walk_tensor(wk, &w->b_in, &g->b_in, prefix, "b_in", 1, 3 * D);
    tfm_walk_tensor(wk, &w->w_out, &g->w_out, prefix, "w_out", D, D);
    tfm_walk_tensor(wk, &w->b_out, &g->b_out, prefix, "b_out", 1, D);
}

void tfm_walk_ffn(tfm_walk *wk, tfm_ffn *w, tfm_ffn *g, const char *prefix, size_t D,
                  size_t F)
{
    /* linear1 (F, D) widens, linear2 (D, F) narrows back: nn.Linear's (out, in) layout */
    tfm_walk_tensor(wk, &w->w1, &g->w1, prefix, "w1", F, D);
    tfm_walk_tensor(wk, &w->b1, &g->b1, prefix, "b1", 1, F);
    tfm_walk_tensor(wk, &w->w2, &g->w2, prefix, "w2", D, F);
    tfm_walk_tensor(wk, &w->b2, &g->b2, prefix, "b2", 1, D);
}

/* prefix + "." + part, e.g. "enc.0" + "attn" → "enc.0.attn" (truncation is caught later,
 * when the full tensor name does not fit) */
static void join(char *out, size_t n, const char *prefix, const char *part)
{
    snprintf(out, n, "%s%s%s", prefix, *prefix ? "." : "", part);
}

void tfm_walk_enc_layer(tfm_walk *wk, tfm_enc_layer *w, tfm_enc_layer *g, const char *prefix,
                        size_t D, size_t F)
{
    /* in the order the forward uses them: norm, attention, norm, feed-forward */
    char p[ARENA_NAME_MAX];
    join(p, sizeof p, prefix, "ln1");
    tfm_walk_norm(wk, &w->ln1, &g->ln1, p, D);
    join(p, sizeof p, prefix, "attn");
    tfm_walk_mha(wk, &w->attn, &g->attn, p, D);
    join(p, sizeof p, prefix, "ln2");
    tfm_walk_norm(wk, &w->ln2, &g->ln2, p, D);
    join(p, sizeof p, prefix, "ff");
    tfm_walk_ffn(wk, &w->ff, &g->ff, p, D, F);
}

void tfm_walk_dec_layer(tfm_walk *wk, tfm_dec_layer *w, tfm_dec_layer *g, const char *prefix,
                        size_t D, size_t F)
{
    /* norm, self-attention, norm, cross-attention, norm, feed-forward */
    char p[ARENA_NAME_MAX];
    join(p, sizeof p, prefix, "ln1");
    tfm_walk_norm(wk, &w->ln1, &g->ln1, p, D);
    join(p, sizeof p, prefix, "self");
    tfm_walk_mha(wk, &w->self, &g->self, p, D);
    join(p, sizeof p, prefix, "ln2");
    tfm_walk_norm(wk, &w->ln2, &g->ln2, p, D);
    join(p, sizeof p, prefix, "cross");
    tfm_walk_mha(wk, &w->cross, &g->cross, p, D);
    join(p, sizeof p, prefix, "ln3");
    tfm_walk_norm(wk, &w->ln3, &g->ln3, p, D);
    join(p, sizeof p, prefix, "ff");
    tfm_walk_ffn(wk, &w->ff, &g->ff, p, D, F);
}

int tfm_walk_build(arena *a, void (*visit)(tfm_walk *wk, void *ctx), void *ctx)
{
    memset(a, 0, sizeof *a);
    tfm_walk count = {0};
    visit(&count, ctx); /* pass 1: how many tensors */
    arena_spec *spec = calloc(count.n ? count.n : 1, sizeof *spec);
    if (!spec)
        return -1;
    tfm_walk describe = {.spec = spec};
    visit(&describe, ctx); /* pass 2: their names and shapes */
    int rc = describe.failed ? -1 : arena_alloc(a, spec, describe.n);
    free(spec);
    if (rc != 0)
        return -1;
    tfm_walk bind = {.a = a};
    visit(&bind, ctx); /* pass 3: the views */
    return 0;
}

/* ---- carving ------------------------------------------------------------------------- */
/* A piece's carve function lists its activations once; reserve() calls it on a NULL block
 * with the largest sizes to measure, and every forward calls it on the real block with the
 * sizes of its batch. Each buffer is contiguous at the sizes it was carved for, so a
 * matrix of N rows is always a plain (N, cols) view with row stride cols. */

double *tfm_carve_vector(tfm_carver *c, size_t n)
{
    /* the count must stay below SIZE_MAX / sizeof(double), so that reserve can multiply */
    if (c->used > SIZE_MAX / sizeof(double) - n) {
        c->overflow = 1;
        return NULL;
    }
    double *p = c->base ? c->base + c->used : NULL;
    c->used += n;
    return p;
}

gsl_matrix_view tfm_carve_matrix(tfm_carver *c, size_t rows, size_t cols)
{
    gsl_matrix_view v;
    memset(&v, 0, sizeof v); /* counting hands out an empty view: data NULL, sizes 0 */
    if (cols && rows > SIZE_MAX / cols) {
        c->overflow = 1;
        return v;
    }
    double *p = tfm_carve_vector(c, rows * cols);
    if (p)
        v = gsl_matrix_view_array(p, rows, cols);
    return v;
}

void tfm_sub_act_carve(tfm_sub_act *s, tfm_carver *c, size_t N, size_t D)
{
    /* n and y are separate in both orders: the backward needs LN's input and its output
     * (the next sublayer's input) at once */
    s->n = tfm_carve_matrix(c, N, D);
    s->mean = tfm_carve_vector(c, N);
    s->rstd = tfm_carve_vector(c, N);
    s->y = tfm_carve_matrix(c, N, D);
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

void tfm_mha_act_carve(tfm_mha_act *a, tfm_carver *c, size_t B, size_t Tq, size_t Tk,
                       size_t D, size_t NH, int self, int keep)
{
    assert(!self || Tq == Tk);
    if (self) { /* [Q | K | V] side by side: Q and [K | V] are views with row stride 3D */
        a->qkv = tfm_carve_matrix(c, B * Tq, 3 * D);
        if (c->base) {
            a->q = gsl_matrix_submatrix(&a->qkv.matrix, 0, 0, B * Tq, D);
            a->kv = gsl_matrix_submatrix(&a->qkv.matrix, 0, D, B * Tq, 2 * D);
        }
    } else {
        memset(&a->qkv, 0, sizeof a->qkv);
        a->q = tfm_carve_matrix(c, B * Tq, D);
        a->kv = tfm_carve_matrix(c, B * Tk, 2 * D);
    }
    if (keep) {
        a->p = tfm_carve_matrix(c, B * NH * Tq, Tk);
        a->pbuf = NULL;
    } else {
        memset(&a->p, 0, sizeof a->p);
        a->pbuf = tfm_carve_vector(c, Tq * Tk);
    }
    a->stat = tfm_carve_vector(c, B * NH * Tq * 2);
    a->mask = NULL;
    a->o = tfm_carve_matrix(c, B * Tq, D);
}

void tfm_enc_act_carve(tfm_enc_act *a, tfm_carver *c, size_t B, size_t T, size_t D, size_t F,
                       size_t NH, int keep)
{
    /* per row: 2·(2D + 2) for the sublayers, 3D + D + NH·T for attention with its
     * weights kept (2·NH without), F for the feed-forward; kept weights' NH·T outgrow the
     * rest once T > (8D + F)/NH (192 at the canonical sizes) */
    tfm_sub_act_carve(&a->s1, c, B * T, D);
    tfm_mha_act_carve(&a->att, c, B, T, T, D, NH, 1, keep);
    tfm_sub_act_carve(&a->s2, c, B * T, D);
    a->h = tfm_carve_matrix(c, B * T, F);
}

void tfm_dec_act_carve(tfm_dec_act *a, tfm_carver *c, size_t B, size_t Tt, size_t Ts,
                       size_t D, size_t F, size_t NH, int keep)
{
    /* self-attention is (Tt, Tt); cross-attention reads Ts keys: its [K | V] has B·Ts rows */
    tfm_sub_act_carve(&a->s1, c, B * Tt, D);
    tfm_mha_act_carve(&a->self, c, B, Tt, Tt, D, NH, 1, keep);
    tfm_sub_act_carve(&a->s2, c, B * Tt, D);
    tfm_mha_act_carve(&a->cross, c, B, Tt, Ts, D, NH, 0, keep);
    tfm_sub_act_carve(&a->s3, c, B * Tt, D);
    a->h = tfm_carve_matrix(c, B * Tt, F);
}

void tfm_work_carve(tfm_work *w, tfm_carver *c, size_t rows, size_t keys, size_t D, size_t F)
{
    /* one set for all layers: a layer's backward finishes with them before the next starts */
    w->rows = rows;
    w->keys = keys;
    w->g = tfm_carve_vector(c, rows * D);
    w->dn = tfm_carve_vector(c, rows * D);
    w->dqkv = tfm_carve_vector(c, rows * 3 * D);
    w->dout = tfm_carve_vector(c, rows * D);
    w->dh = tfm_carve_vector(c, rows * F);
    w->att = tfm_carve_vector(c, 2 * keys * keys);
}

/* ---- linear maps ---------------------------------------------------------------------- */

void tfm_linear_forward(gsl_matrix *Y, const gsl_matrix *X, const gsl_matrix *W,
                        const gsl_matrix *b)
{
    const size_t N = Y->size1, n = Y->size2;
    for (size_t r = 0; r < N; r++)
        memcpy(gsl_matrix_ptr(Y, r, 0), b->data, n * sizeof(double));
    /* Y (N,n) += X (N,m) · Wᵀ (m,n) */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, X, W, 1.0, Y);
}

FM_CLONES
void tfm_add_bias(gsl_matrix *Y, const gsl_matrix *b)
{
    assert(b->size1 == 1 && b->size2 == Y->size2);
    for (size_t r = 0; r < Y->size1; r++)
        fm_add_row(gsl_matrix_ptr(Y, r, 0), b->data, Y->size2);
}

FM_CLONES
void tfm_bias_backward(gsl_matrix *db, const gsl_matrix *dY)
{
    /* forward: y_r = ... + b for every row r, so db = Σ_r dy_r, added row after row (the
     * order op_bias_backward adds in, so the sums are the same) */
    assert(db->size1 == 1 && db->size2 == dY->size2);
    for (size_t r = 0; r < dY->size1; r++)
        fm_add_row(db->data, gsl_matrix_const_ptr(dY, r, 0), dY->size2);
}

/* ---- layer norm ----------------------------------------------------------------------
 * Row by row over D features, in blocks of FM_LANES with FM_LANES partial sums, so that the
 * loops vectorise (see common/fastmath.h); FM_CLONES compiles them for AVX2 and AVX-512
 * too, with the same bits at every width. The plain one-sum-at-a-time version is in
 * tests/test_tfm.c, which holds these to it. */

/* Σ x_d and Σ (x_d − μ)² of one row, each over FM_LANES partial sums added pairwise. */
FM_INLINE double row_sum(const double *restrict x, size_t D)
{
    double s[FM_LANES] = {0};
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            s[l] += x[d + l];
    for (size_t l = 0; d < D; d++, l++)
        s[l] += x[d];
    return fm_lanes_sum(s);
}

FM_INLINE double row_sq_dev(const double *restrict x, double mu, size_t D)
{
    double s[FM_LANES] = {0};
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            s[l] += (x[d + l] - mu) * (x[d + l] - mu);
    for (size_t l = 0; d < D; d++, l++)
        s[l] += (x[d] - mu) * (x[d] - mu);
    return fm_lanes_sum(s);
}

/* One row of the forward: y (D) = γ ⊙ (x − μ)·r + β; returns μ and r. Row kernels take
 * their rows as restrict parameters, which is what the vectoriser needs to see. */
FM_INLINE void ln_row_forward(double *restrict y, double *mean, double *rstd,
                                  const double *restrict x, const double *restrict g,
                                  const double *restrict b, size_t D)
{
    /* μ = Σ x / D; σ² = Σ (x − μ)² / D, in two passes: one pass (Σx² − Dμ²) cancels
     * catastrophically when |μ| ≫ σ */
    const double mu = row_sum(x, D) / (double)D;
    const double var = row_sq_dev(x, mu, D) / (double)D; /* biased, as PyTorch's */
    const double r_sd = 1.0 / sqrt(var + TFM_LN_EPS);
    /* y = γ ⊙ x̂ + β with x̂ = (x − μ)·r */
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            y[d + l] = g[d + l] * ((x[d + l] - mu) * r_sd) + b[d + l];
    for (; d < D; d++)
        y[d] = g[d] * ((x[d] - mu) * r_sd) + b[d];
    *mean = mu;
    *rstd = r_sd;
}

FM_CLONES
void tfm_layernorm_forward(gsl_matrix *Y, double *mean, double *rstd, const gsl_matrix *X,
                           const tfm_norm *p)
{
    /* each row (one position of one sequence) is normalised over its D features, on its
     * own: no statistic crosses positions, so nothing leaks past the causal mask */
    for (size_t r = 0; r < X->size1; r++)
        ln_row_forward(gsl_matrix_ptr(Y, r, 0), &mean[r], &rstd[r],
                       gsl_matrix_const_ptr(X, r, 0), p->g->data, p->b->data, X->size2);
}

/* One row of the backward (see below): dx (D) += ..., dγ and dβ (D) += ... */
FM_INLINE void ln_row_backward(double *restrict dx, double *restrict dg,
                                   double *restrict db, const double *restrict dy,
                                   const double *restrict x, const double *restrict g,
                                   double mu, double r_sd, size_t D)
{
    double s1[FM_LANES] = {0}, s2[FM_LANES] = {0};
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double xh = (x[d + l] - mu) * r_sd, dxh = dy[d + l] * g[d + l];
            dg[d + l] += dy[d + l] * xh;
            db[d + l] += dy[d + l];
            s1[l] += dxh;
            s2[l] += dxh * xh;
        }
    for (size_t l = 0; d < D; d++, l++) {
        const double xh = (x[d] - mu) * r_sd, dxh = dy[d] * g[d];
        dg[d] += dy[d] * xh;
        db[d] += dy[d];
        s1[l] += dxh;
        s2[l] += dxh * xh;
    }
    const double m1 = (((s1[0] + s1[1]) + (s1[2] + s1[3])) +
                       ((s1[4] + s1[5]) + (s1[6] + s1[7]))) / (double)D;
    const double m2 = (((s2[0] + s2[1]) + (s2[2] + s2[3])) +
                       ((s2[4] + s2[5]) + (s2[6] + s2[7]))) / (double)D;
    for (d = 0; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double xh = (x[d + l] - mu) * r_sd;
            dx[d + l] += r_sd * (dy[d + l] * g[d + l] - m1 - xh * m2);
        }
    for (; d < D; d++) {
        const double xh = (x[d] - mu) * r_sd;
        dx[d] += r_sd * (dy[d] * g[d] - m1 - xh * m2);
    }
}

FM_CLONES
void tfm_layernorm_backward(gsl_matrix *dX, tfm_norm *dp, const gsl_matrix *dY,
                            const gsl_matrix *X, const double *mean, const double *rstd,
                            const tfm_norm *p)
{
    /* forward: y = γ ⊙ x̂ + β
     *   dγ += dy ⊙ x̂;  dβ += dy;  dx̂ = dy ⊙ γ
     * forward: x̂ = (x − μ)·r with μ and r = (σ² + ε)^(−1/2) functions of the whole row.
     * Through μ every x̂_k moves by −r; through σ², ∂r/∂x_i = −r³(x_i − μ)/D. So
     *   dx_i = r·(dx̂_i − mean_k(dx̂_k) − x̂_i · mean_k(dx̂_k x̂_k)). */
    for (size_t r = 0; r < X->size1; r++)
        ln_row_backward(gsl_matrix_ptr(dX, r, 0), dp->g->data, dp->b->data,
                        gsl_matrix_const_ptr(dY, r, 0), gsl_matrix_const_ptr(X, r, 0),
                        p->g->data, mean[r], rstd[r], X->size2);
}

/* ---- position-wise feed-forward -------------------------------------------------------- */

/* H (N, F) = max(0, H) in place. Half the signs are random, so a branch would mispredict
 * half the time; the select below compiles to a compare and a blend, FM_LANES at a time
 * (with FM_CLONES, 4 or 8 per instruction). A NaN is kept (z != z), and −0 becomes +0, so
 * that H ≠ 0 means exactly "the unit is on", which the backward relies on. */
FM_INLINE void relu_row(double *restrict h, size_t F)
{
    size_t f = 0;
    for (; f + FM_LANES <= F; f += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double z = h[f + l];
            h[f + l] = (z > 0.0 || z != z) ? z : 0.0;
        }
    for (; f < F; f++) {
        const double z = h[f];
        h[f] = (z > 0.0 || z != z) ? z : 0.0;
    }
}

FM_CLONES
static void relu_rows(gsl_matrix *H)
{
    for (size_t r = 0; r < H->size1; r++)
        relu_row(gsl_matrix_ptr(H, r, 0), H->size2);
}

/* dH (N, F) ← dH ⊙ [H ≠ 0] in place, and db (F) += Σ_rows of the result. H comes from
 * relu_rows, so it is never negative nor −0: H is on exactly when its bits are not all 0
 * (a NaN unit lets its gradient through, so the NaN is not hidden). The test is made on
 * the bits, so the compiler sees integer masks it can vectorise, not a select it turns
 * into a branch (which mispredicts half the time). */
FM_INLINE double relu_grad(double h, double dh)
{
    const uint64_t hb = fm_to_bits(h);
    /* (hb | −hb) has its top bit set exactly when hb ≠ 0; 0 − that bit is the mask */
    const uint64_t on = 0 - ((hb | (0 - hb)) >> 63);
    return fm_from_bits(fm_to_bits(dh) & on);
}

/* One row of relu_rows_backward; its own function so that the restrict-qualified row
 * pointers are parameters, which is what the vectoriser needs to see. */
FM_INLINE void relu_row_backward(double *restrict dh, double *restrict db,
                                     const double *restrict h, size_t F)
{
    size_t f = 0;
    for (; f + FM_LANES <= F; f += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            dh[f + l] = relu_grad(h[f + l], dh[f + l]);
            db[f + l] += dh[f + l];
        }
    for (; f < F; f++) {
        dh[f] = relu_grad(h[f], dh[f]);
        db[f] += dh[f];
    }
}

FM_CLONES
static void relu_rows_backward(gsl_matrix *dH, double *db, const gsl_matrix *H)
{
    for (size_t r = 0; r < H->size1; r++)
        relu_row_backward(gsl_matrix_ptr(dH, r, 0), db, gsl_matrix_const_ptr(H, r, 0),
                          H->size2);
}

void tfm_ffn_forward(gsl_matrix *Y, gsl_matrix *H, const gsl_matrix *X, const tfm_ffn *p)
{
    /* the same two-layer network at every position: the positions are the N rows of one
     * GEMM. F = 4D in the paper (2048 = 4·512) and here (256 = 4·64). */
    /* Z (N,F) = X (N,D) · W_1ᵀ (D,F) + b_1, into H */
    tfm_linear_forward(H, X, p->w1, p->b1);
    relu_rows(H);
    /* Y (N,D) += H (N,F) · W_2ᵀ (F,D) + b_2 */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, H, p->w2, 1.0, Y);
    tfm_add_bias(Y, p->b2);
}

void tfm_ffn_backward(gsl_matrix *dX, tfm_ffn *dp, const gsl_matrix *dY, const gsl_matrix *X,
                      const gsl_matrix *H, const tfm_ffn *p, const tfm_work *w)
{
    const size_t N = X->size1, F = H->size2;
    assert(N <= w->rows);
    gsl_matrix_view dH = gsl_matrix_view_array(w->dh, N, F);
    /* forward: Y += H · W_2ᵀ + b_2
     *   dW_2 (D,F) += dYᵀ (D,N) · H (N,F);  db_2 += Σ_rows dY
     *   dH (N,F) = dY (N,D) · W_2 (D,F) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dY, H, 1.0, dp->w2);
    tfm_bias_backward(dp->b2, dY);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dY, p->w2, 0.0, &dH.matrix);
    /* forward: H = max(0, Z + b_1)
     *   dZ = dH ⊙ [H > 0] (H > 0 exactly where Z + b_1 > 0; at 0 the slope is taken as 0,
     *   as PyTorch does), in place;  db_1 += Σ_rows dZ */
    relu_rows_backward(&dH.matrix, dp->b1->data, H);
    /* forward: Z = X · W_1ᵀ
     *   dW_1 (F,D) += dZᵀ (F,N) · X (N,D)
     *   dX (N,D) += dZ (N,F) · W_1 (F,D) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &dH.matrix, X, 1.0, dp->w1);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &dH.matrix, p->w1, 1.0, dX);
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

void tfm_encoder_layer_backward(gsl_matrix *dX, tfm_enc_layer *dp, const gsl_matrix *dY,
                                const gsl_matrix *X, const tfm_enc_act *a,
                                const tfm_enc_layer *p, size_t B, size_t NH, int post_ln,
                                const tfm_work *w)
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
    tfm_ffn_backward(dfin, &dp->ff, df, tfm_sublayer_input(&a->s2, X1, post_ln),
                     &a->h.matrix, &p->ff, w);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln2, &a->s2, X1, &p->ln2, post_ln);

    /* self-attention sublayer, X → X1; queries and keys/values share one input, so both
     * gradients add into the same matrix */
    df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln1, &a->s1, &p->ln1, post_ln);
    const gsl_matrix *in = tfm_sublayer_input(&a->s1, X, post_ln);
    tfm_mha_backward(dfin, dfin, &dp->attn, df, in, in, &a->att, &p->attn, B, NH, w);
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
                                const gsl_matrix *dY, const gsl_matrix *X,
                                const gsl_matrix *Mem, const tfm_dec_act *a,
                                const tfm_dec_layer *p, size_t B, size_t NH, int post_ln,
                                const tfm_work *w)
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
    tfm_ffn_backward(dfin, &dp->ff, df, tfm_sublayer_input(&a->s3, X2, post_ln), &a->h.matrix,
                     &p->ff, w);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln3, &a->s3, X2, &p->ln3, post_ln);

    /* cross-attention sublayer, X1 → X2: the keys' and values' gradient leaves the decoder
     * for the memory, where every decoder layer adds its share */
    const gsl_matrix *X1 = &a->s1.y.matrix;
    df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln2, &a->s2, &p->ln2, post_ln);
    tfm_mha_backward(dfin, dMem, &dp->cross, df, tfm_sublayer_input(&a->s2, X1, post_ln), Mem,
                     &a->cross, &p->cross, B, NH, w);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln2, &a->s2, X1, &p->ln2, post_ln);

    /* masked self-attention sublayer, X → X1 */
    df = sub_back_open(&dfin, &g.matrix, &dn.matrix, &dp->ln1, &a->s1, &p->ln1, post_ln);
    const gsl_matrix *in = tfm_sublayer_input(&a->s1, X, post_ln);
    tfm_mha_backward(dfin, dfin, &dp->self, df, in, in, &a->self, &p->self, B, NH, w);
    sub_back_close(&g.matrix, &dn.matrix, &dp->ln1, &a->s1, X, &p->ln1, post_ln);

    gsl_matrix_add(dX, &g.matrix);
}
