/* test_tfm_layers.c — layer norm, the feed-forward block, the encoder and decoder layers
 * and the sinusoidal positions of transformer/ (norm.c, ffn.c, layer.c, embed.c; suite:
 * tfm_layers).
 *
 * Design. Gradient checks on sizes that are all different, the ReLU kink kept away by
 * the watch of testtfm.h; layer norm against its plain reference beside it in norm.c
 * (tfm_norm_reference), the bias passes of common/core/tensor.c against plain loops;
 * backward run twice doubles the gradients. Set TFM_REPORT=1 to print the largest
 * relative error of every gradient check.
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "../common/core/gradcheck.h"
#include "../common/core/task.h"
#include "../transformer/tfm.h"
#include "testtfm.h"
#include "testutil.h"

/* ---- layer norm ------------------------------------------------------------------------- */

typedef struct ln_ctx {
    tfm_norm w, g;
    arena a;
    gsl_matrix *X, *Y, *R;
    double mean[5], rstd[5];
} ln_ctx;

static void visit_ln(walk *wk, void *p)
{
    ln_ctx *c = p;
    tfm_norm_walk(wk, &c->w, &c->g, "ln", 7);
}

static double ln_loss(void *p)
{
    ln_ctx *c = p;
    tfm_layernorm_forward(c->Y, c->mean, c->rstd, c->X, &c->w);
    return tu_dot(c->Y, c->R);
}

START_TEST(test_layernorm)
{
    const size_t N = 5, D = 7;
    ln_ctx c = {0};
    gsl_rng *r = tu_rng(31);
    ck_assert_int_eq(walk_build(&c.a, visit_ln, &c), 0);
    c.X = gsl_matrix_alloc(N, D);
    c.Y = gsl_matrix_alloc(N, D);
    c.R = gsl_matrix_alloc(N, D);
    tu_fill(c.X, 2.0, r);
    gsl_matrix_add_constant(c.X, 0.7); /* rows with a mean far from 0 */
    tu_fill(c.R, 1.0, r);

    /* with γ = 1, β = 0 every row comes out with mean 0 and variance σ²/(σ² + ε) */
    gsl_matrix_set_all(c.w.g, 1.0);
    gsl_matrix_set_zero(c.w.b);
    tfm_layernorm_forward(c.Y, c.mean, c.rstd, c.X, &c.w);
    for (size_t i = 0; i < N; i++) {
        double m = 0.0, v = 0.0;
        for (size_t d = 0; d < D; d++)
            m += gsl_matrix_get(c.Y, i, d) / (double)D;
        for (size_t d = 0; d < D; d++)
            v += pow(gsl_matrix_get(c.Y, i, d) - m, 2) / (double)D;
        ck_assert(fabs(m) < 1e-14);
        const double var = 1.0 / (c.rstd[i] * c.rstd[i]) - TFM_LN_EPS; /* σ² of row i */
        tu_assert_rel(v, var / (var + TFM_LN_EPS), 1e-12);
    }

    tt_fill_arena(&c.a, r);
    gsl_matrix *dX = gsl_matrix_calloc(N, D);
    ln_loss(&c);
    tfm_layernorm_backward(dX, &c.g, c.R, c.X, c.mean, c.rstd, &c.w);
    double err = tu_gradcheck("dX", ln_loss, &c, c.X, dX);
    err = fmax(err, tt_gradcheck_arena(&c.a, ln_loss, &c));
    tt_report("layer norm", err);
    gsl_matrix_free(dX);
    gsl_matrix_free(c.X);
    gsl_matrix_free(c.Y);
    gsl_matrix_free(c.R);
    arena_free(&c.a);
    gsl_rng_free(r);
}
END_TEST

/* The bias passes every linear map here uses, op_add_bias and op_bias_backward
 * (common/core/tensor.c, vectorised with fm_add_row), give the bits of the plain double loops
 * they stand for: 3 rows of 21 (blocks and a tail). */
START_TEST(test_bias_passes_match_reference)
{
    gsl_rng *r = tu_rng(35);
    gsl_matrix *Y = gsl_matrix_alloc(3, 21), *Y2 = gsl_matrix_alloc(3, 21);
    gsl_matrix *b = gsl_matrix_alloc(1, 21), *b2 = gsl_matrix_alloc(1, 21);
    tu_fill(Y, 1.0, r);
    tu_fill(b, 1.0, r);
    gsl_matrix_memcpy(Y2, Y);
    gsl_matrix_memcpy(b2, b);
    op_add_bias(Y, b);
    op_bias_backward(b, Y);
    /* the plain loops: y_ij += b_j; then b_j += y_ij, row after row */
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 21; j++)
            Y2->data[i * 21 + j] += b2->data[j];
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 21; j++)
            b2->data[j] += Y2->data[i * 21 + j];
    ck_assert(gsl_matrix_equal(Y, Y2));
    ck_assert(gsl_matrix_equal(b, b2));
    gsl_matrix_free(Y);
    gsl_matrix_free(Y2);
    gsl_matrix_free(b);
    gsl_matrix_free(b2);
    gsl_rng_free(r);
}
END_TEST

/* Vectorised layer norm = plain layer norm (tfm_norm_reference and its backward, beside
 * the kernels in norm.c) to a few ulps, forward and backward, for rows of D = 5 (a tail
 * only), 16 (blocks only) and 21 (blocks and a tail), means far from 0. */
START_TEST(test_layernorm_matches_plain)
{
    const size_t N = 3, widths[] = {5, 16, 21};
    gsl_rng *r = tu_rng(33);
    for (size_t c = 0; c < 3; c++) {
        const size_t D = widths[c];
        double g[2][21], b[2][21], dg[2][21] = {{0}}, db[2][21] = {{0}};
        gsl_matrix_view gv[2], bv[2], dgv[2], dbv[2];
        tfm_norm w[2], dw[2];
        for (size_t k = 0; k < 2; k++) {
            gv[k] = gsl_matrix_view_array(g[k], 1, D);
            bv[k] = gsl_matrix_view_array(b[k], 1, D);
            dgv[k] = gsl_matrix_view_array(dg[k], 1, D);
            dbv[k] = gsl_matrix_view_array(db[k], 1, D);
            w[k] = (tfm_norm){&gv[k].matrix, &bv[k].matrix};
            dw[k] = (tfm_norm){&dgv[k].matrix, &dbv[k].matrix};
        }
        tu_fill(&gv[0].matrix, 1.0, r);
        tu_fill(&bv[0].matrix, 1.0, r);
        gsl_matrix_memcpy(&gv[1].matrix, &gv[0].matrix);
        gsl_matrix_memcpy(&bv[1].matrix, &bv[0].matrix);
        gsl_matrix *X = gsl_matrix_alloc(N, D), *dY = gsl_matrix_alloc(N, D);
        gsl_matrix *Y[2] = {gsl_matrix_alloc(N, D), gsl_matrix_alloc(N, D)};
        gsl_matrix *dX[2] = {gsl_matrix_calloc(N, D), gsl_matrix_calloc(N, D)};
        double mean[2][3], rstd[2][3];
        tu_fill(X, 2.0, r);
        gsl_matrix_add_constant(X, 3.3);
        tu_fill(dY, 1.0, r);
        tfm_layernorm_forward(Y[0], mean[0], rstd[0], X, &w[0]);
        tfm_norm_reference(Y[1], mean[1], rstd[1], X, &w[1]);
        tfm_layernorm_backward(dX[0], &dw[0], dY, X, mean[0], rstd[0], &w[0]);
        tfm_norm_reference_backward(dX[1], &dw[1], dY, X, mean[1], rstd[1], &w[1]);
        for (size_t i = 0; i < N; i++) {
            tu_assert_rel(mean[0][i], mean[1][i], 1e-14);
            tu_assert_rel(rstd[0][i], rstd[1][i], 1e-14);
            for (size_t d = 0; d < D; d++) {
                ck_assert(fabs(gsl_matrix_get(Y[0], i, d) - gsl_matrix_get(Y[1], i, d)) <
                          1e-14);
                ck_assert(fabs(gsl_matrix_get(dX[0], i, d) - gsl_matrix_get(dX[1], i, d)) <
                          1e-14);
            }
        }
        for (size_t d = 0; d < D; d++) {
            ck_assert(fabs(dg[0][d] - dg[1][d]) < 1e-14);
            ck_assert(fabs(db[0][d] - db[1][d]) < 1e-14);
        }
        gsl_matrix *all[] = {X, dY, Y[0], Y[1], dX[0], dX[1]};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            gsl_matrix_free(all[k]);
    }
    gsl_rng_free(r);
}
END_TEST

/* ---- feed-forward ---------------------------------------------------------------------- */

#define FF_N 5
#define FF_D 6
#define FF_F 7

typedef struct ffn_ctx {
    tfm_ffn w, g;
    arena a;
    tfm_work work;
    gsl_matrix *X, *H, *Y, *R;
    tt_relu_watch watch;
} ffn_ctx;

static void visit_ffn(walk *wk, void *p)
{
    ffn_ctx *c = p;
    tfm_ffn_walk(wk, &c->w, &c->g, "ff", FF_D, FF_F);
}

static void carve_ffn(carver *cv, void *p)
{
    ffn_ctx *c = p;
    tfm_work_carve(&c->work, cv, FF_N, 1, FF_D, FF_F);
}

static double ffn_loss(void *p)
{
    ffn_ctx *c = p;
    gsl_matrix_set_zero(c->Y);
    tfm_ffn_forward(c->Y, c->H, c->X, &c->w);
    tt_watch_check(&c->watch);
    return tu_dot(c->Y, c->R);
}

START_TEST(test_ffn_gradcheck)
{
    ffn_ctx c = {0};
    ck_assert_int_eq(walk_build(&c.a, visit_ffn, &c), 0);
    carve_block blk = tt_cut_block(carve_ffn, &c);
    c.X = gsl_matrix_alloc(FF_N, FF_D);
    c.H = gsl_matrix_alloc(FF_N, FF_F);
    c.Y = gsl_matrix_alloc(FF_N, FF_D);
    c.R = gsl_matrix_alloc(FF_N, FF_D);
    /* draw inputs until no pre-activation is within KINK_MARGIN of the ReLU's kink */
    unsigned long seed = 41;
    gsl_rng *r = NULL;
    for (; seed < 41 + SEED_TRIES; seed++) {
        if (r)
            gsl_rng_free(r);
        r = tu_rng(seed);
        tt_fill_arena(&c.a, r);
        tu_fill(c.X, 1.0, r);
        if (tt_ffn_margin(c.X, &c.w) >= KINK_MARGIN)
            break;
    }
    ck_assert_msg(tt_ffn_margin(c.X, &c.w) >= KINK_MARGIN, "no seed clear of the ReLU kink");
    tu_fill(c.R, 1.0, r);
    gsl_matrix *dX = gsl_matrix_calloc(FF_N, FF_D);
    ffn_loss(&c);
    tfm_ffn_backward(dX, &c.g, &c.work, c.R, c.X, c.H, &c.w);
    c.watch = (tt_relu_watch){.n = 1, .H = {c.H}};
    tt_watch_start(&c.watch);
    double err = tu_gradcheck("dX", ffn_loss, &c, c.X, dX);
    err = fmax(err, tt_gradcheck_arena(&c.a, ffn_loss, &c));
    tt_watch_end(&c.watch);
    tt_report("feed-forward", err);
    gsl_matrix_free(dX);
    gsl_matrix_free(c.X);
    gsl_matrix_free(c.H);
    gsl_matrix_free(c.Y);
    gsl_matrix_free(c.R);
    carve_free(&blk);
    arena_free(&c.a);
    gsl_rng_free(r);
}
END_TEST

/* ---- encoder and decoder layers ------------------------------------------------------- */


typedef struct layer_ctx {
    int post_ln;
    arena a;
    tfm_enc_layer ew, eg;
    tfm_dec_layer dw, dg;
    tfm_enc_act ea;
    tfm_dec_act da;
    tfm_work work;
    gsl_matrix *X, *Mem, *R, *mask;
    tt_relu_watch watch;
} layer_ctx;

static void visit_enc(walk *wk, void *p)
{
    layer_ctx *c = p;
    tfm_enc_layer_walk(wk, &c->ew, &c->eg, "enc.0", LY_D, LY_F);
}

static void visit_dec(walk *wk, void *p)
{
    layer_ctx *c = p;
    tfm_dec_layer_walk(wk, &c->dw, &c->dg, "dec.0", LY_D, LY_F);
}

static void carve_layers(carver *cv, void *p)
{
    layer_ctx *c = p;
    tfm_enc_act_carve(&c->ea, cv, LY_B, LY_TS, LY_D, LY_F, LY_NH, 1);
    tfm_dec_act_carve(&c->da, cv, LY_B, LY_TT, LY_TS, LY_D, LY_F, LY_NH, 0);
    tfm_work_carve(&c->work, cv, LY_B * LY_TS, LY_TS, LY_D, LY_F);
}

static double enc_loss(void *p)
{
    layer_ctx *c = p;
    tfm_encoder_layer_forward(&c->ea, c->X, &c->ew, LY_B, LY_NH, c->post_ln);
    tt_watch_check(&c->watch);
    return tu_dot(&c->ea.s2.y.matrix, c->R);
}

static double dec_loss(void *p)
{
    layer_ctx *c = p;
    tfm_decoder_layer_forward(&c->da, c->X, c->Mem, c->mask, &c->dw, LY_B, LY_NH, c->post_ln);
    tt_watch_check(&c->watch);
    return tu_dot(&c->da.s3.y.matrix, c->R);
}

/* Builds the layer test: params of one encoder (dec = 0) or decoder layer, inputs drawn
 * until the feed-forward pre-activations are clear of the kink. */
static carve_block layer_setup(layer_ctx *c, int dec, gsl_rng **r)
{
    const size_t T = dec ? LY_TT : LY_TS;
    ck_assert_int_eq(walk_build(&c->a, dec ? visit_dec : visit_enc, c), 0);
    carve_block blk = tt_cut_block(carve_layers, c);
    c->X = gsl_matrix_alloc(LY_B * T, LY_D);
    c->Mem = gsl_matrix_alloc(LY_B * LY_TS, LY_D);
    c->R = gsl_matrix_alloc(LY_B * T, LY_D);
    c->mask = tt_causal_mask(LY_TT);
    double margin = 0.0;
    for (unsigned long seed = 51;
         seed == 51 || (seed < 51 + SEED_TRIES && margin < KINK_MARGIN); seed++) {
        if (*r)
            gsl_rng_free(*r);
        *r = tu_rng(seed);
        tt_fill_arena(&c->a, *r);
        tu_fill(c->X, 1.0, *r);
        tu_fill(c->Mem, 1.0, *r);
        if (dec) {
            dec_loss(c);
            margin = tt_layer_margin(&c->da.s3, &c->da.s2.y.matrix, &c->dw.ff, c->post_ln);
        } else {
            enc_loss(c);
            margin = tt_layer_margin(&c->ea.s2, &c->ea.s1.y.matrix, &c->ew.ff, c->post_ln);
        }
    }
    ck_assert_msg(margin >= KINK_MARGIN, "no seed clear of the ReLU kink");
    tu_fill(c->R, 1.0, *r);
    c->watch = (tt_relu_watch){.n = 1, .H = {dec ? &c->da.h.matrix : &c->ea.h.matrix}};
    return blk;
}

static void layer_teardown(layer_ctx *c, carve_block *blk, gsl_rng *r)
{
    gsl_matrix_free(c->X);
    gsl_matrix_free(c->Mem);
    gsl_matrix_free(c->R);
    gsl_matrix_free(c->mask);
    carve_free(blk);
    arena_free(&c->a);
    gsl_rng_free(r);
}

START_TEST(test_encoder_layer_gradcheck)
{
    layer_ctx c = {.post_ln = _i};
    gsl_rng *r = NULL;
    carve_block blk = layer_setup(&c, 0, &r);
    gsl_matrix *dX = gsl_matrix_calloc(LY_B * LY_TS, LY_D);
    arena_zero_grad(&c.a);
    enc_loss(&c);
    tfm_encoder_layer_backward(dX, &c.eg, &c.work, c.R, c.X, &c.ea, &c.ew, LY_B, LY_NH,
                               c.post_ln);
    tt_watch_start(&c.watch);
    double err = tu_gradcheck("dX", enc_loss, &c, c.X, dX);
    err = fmax(err, tt_gradcheck_arena(&c.a, enc_loss, &c));
    tt_watch_end(&c.watch);
    tt_report(_i ? "encoder layer post-LN" : "encoder layer pre-LN", err);

    /* backward accumulates: a second call on the same forward doubles every gradient */
    gsl_matrix *dX1 = gsl_matrix_alloc(LY_B * LY_TS, LY_D);
    gsl_matrix_memcpy(dX1, dX);
    double *g1 = malloc(c.a.size * sizeof(double));
    memcpy(g1, c.a.grad, c.a.size * sizeof(double));
    enc_loss(&c);
    tfm_encoder_layer_backward(dX, &c.eg, &c.work, c.R, c.X, &c.ea, &c.ew, LY_B, LY_NH,
                               c.post_ln);
    tt_assert_doubled(dX->data, dX1->data, dX->size1 * dX->size2);
    tt_assert_doubled(c.a.grad, g1, c.a.size);
    free(g1);
    gsl_matrix_free(dX1);
    gsl_matrix_free(dX);
    layer_teardown(&c, &blk, r);
}
END_TEST

START_TEST(test_decoder_layer_gradcheck)
{
    layer_ctx c = {.post_ln = _i};
    gsl_rng *r = NULL;
    carve_block blk = layer_setup(&c, 1, &r);
    gsl_matrix *dX = gsl_matrix_calloc(LY_B * LY_TT, LY_D);
    gsl_matrix *dMem = gsl_matrix_calloc(LY_B * LY_TS, LY_D);
    dec_loss(&c);
    tfm_decoder_layer_backward(dX, dMem, &c.dg, &c.work, c.R, c.X, c.Mem, &c.da, &c.dw, LY_B,
                               LY_NH, c.post_ln);
    tt_watch_start(&c.watch);
    double err = tu_gradcheck("dX", dec_loss, &c, c.X, dX);
    err = fmax(err, tu_gradcheck("dMem", dec_loss, &c, c.Mem, dMem));
    err = fmax(err, tt_gradcheck_arena(&c.a, dec_loss, &c));
    tt_watch_end(&c.watch);
    tt_report(_i ? "decoder layer post-LN" : "decoder layer pre-LN", err);
    gsl_matrix_free(dX);
    gsl_matrix_free(dMem);
    layer_teardown(&c, &blk, r);
}
END_TEST

START_TEST(test_sinusoid)
{
    const size_t L = 9, D = 6;
    double pe[9 * 6];
    tfm_sinusoid(pe, L, D);
    for (size_t t = 0; t < L; t++)
        for (size_t i = 0; 2 * i < D; i++) {
            const double angle = (double)t / pow(10000.0, (double)(2 * i) / (double)D);
            ck_assert(fabs(pe[t * D + 2 * i] - sin(angle)) < 1e-13);
            ck_assert(fabs(pe[t * D + 2 * i + 1] - cos(angle)) < 1e-13);
        }
}
END_TEST

Suite *make_tfm_layers_suite(void)
{
    Suite *s = suite_create("tfm_layers");
    TCase *pieces = tcase_create("pieces");
    tcase_add_test(pieces, test_layernorm);
    tcase_add_test(pieces, test_bias_passes_match_reference);
    tcase_add_test(pieces, test_layernorm_matches_plain);
    tcase_add_test(pieces, test_ffn_gradcheck);
    tcase_add_loop_test(pieces, test_encoder_layer_gradcheck, 0, 2);
    tcase_add_loop_test(pieces, test_decoder_layer_gradcheck, 0, 2);
    tcase_add_test(pieces, test_sinusoid);
    suite_add_tcase(s, pieces);
    return s;
}
