/* test_addattn.c — additive attention and its score kernel, rnn_attention/addattn.c
 * (suite: addattn).
 *
 * Design. Gradients by central differences (sizes all different: B = 2, Ts = 4, Tt = 3,
 * H = 6, A = 7); the fused score kernel against its plain reference beside it in
 * addattn.c (addattn_scores_reference); the weights against the equations, as
 * distributions, and at the extremes (one source position, saturated scores).
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "../common/core/gradcheck.h"
#include "../common/core/model.h"
#include "../common/core/task.h"
#include "../common/core/tensor.h"
#include "../rnn_attention/addattn.h"
#include "../rnn_attention/gru.h"
#include "../rnn_attention/rnnattn.h"
#include "testutil.h"

enum { NB = 2, NTS = 4, NTT = 3, NE = 5, NH = 6, NA = 7, NSYM = 8 };

/* ---- additive attention --------------------------------------------------------------- */

/* Tt decoder steps of attention over Ts source positions, with inputs S (the query states
 * s_{t−1} of every step, (Tt·B, H)) and Henc ((Ts·B, H), keys and values). The context of
 * every step is written into the last H columns of a wider matrix, as the model does, so
 * the strided paths are the ones tested. */
typedef struct attn_case {
    size_t Ts, Tt;
    gsl_matrix *S, *Henc;        /* inputs */
    addattn_weights w;           /* Wq (A, H), Wk (A, H), bk (1, A), v (1, A) */
    gsl_matrix *EK, *EQ, *Alpha; /* (Ts·B, A), (Tt·B, A), (Tt·B, Ts) */
    gsl_matrix *Cwide;           /* (Tt·B, 2 + H): c_t in columns 2.. */
    gsl_matrix_view C;           /* (Tt·B, H) */
    gsl_matrix *R;               /* (Tt·B, H) */
    addattn_work ws;
} attn_case;

static void attn_case_init(attn_case *c, size_t Ts, size_t Tt, const gsl_rng *r)
{
    c->Ts = Ts;
    c->Tt = Tt;
    c->S = tu_rand_matrix(Tt * NB, NH, 1.0, r);
    c->Henc = tu_rand_matrix(Ts * NB, NH, 1.0, r);
    c->w.Wq = tu_rand_matrix(NA, NH, 0.7, r);
    c->w.Wk = tu_rand_matrix(NA, NH, 0.7, r);
    c->w.bk = tu_rand_matrix(1, NA, 0.3, r);
    c->w.v = tu_rand_matrix(1, NA, 1.5, r);
    c->EK = tu_zero_matrix(Ts * NB, NA);
    c->EQ = tu_zero_matrix(Tt * NB, NA);
    c->Alpha = tu_zero_matrix(Tt * NB, Ts);
    c->Cwide = tu_zero_matrix(Tt * NB, 2 + NH);
    c->C = gsl_matrix_submatrix(c->Cwide, 0, 2, Tt * NB, NH);
    c->R = tu_rand_matrix(Tt * NB, NH, 1.0, r);
    c->ws.e = malloc(Ts * sizeof(double));
    c->ws.da = malloc(Ts * sizeof(double));
    ck_assert(c->ws.e && c->ws.da);
}

static void attn_case_free(attn_case *c)
{
    gsl_matrix *all[] = {c->S, c->Henc, c->w.Wq, c->w.Wk, c->w.bk, c->w.v,
                         c->EK, c->EQ, c->Alpha, c->Cwide, c->R};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gsl_matrix_free(all[i]);
    free(c->ws.e);
    free(c->ws.da);
}

/* Keys once, then every step. */
static void attn_forward(attn_case *c)
{
    addattn_keys_forward(c->EK, c->Henc, &c->w);
    for (size_t t = 0; t < c->Tt; t++) {
        gsl_matrix_view ct = tu_step_block(&c->C.matrix, t, NB), at = tu_step_block(c->Alpha, t, NB);
        gsl_matrix_view qt = tu_step_block(c->EQ, t, NB), st = tu_step_block(c->S, t, NB);
        addattn_step_forward(&ct.matrix, &at.matrix, &qt.matrix, &st.matrix, c->EK, c->Henc,
                             &c->w);
    }
}

static double attn_loss(void *ctx)
{
    attn_case *c = ctx;
    attn_forward(c);
    return tu_dot(&c->C.matrix, c->R);
}

START_TEST(test_attention_gradcheck)
{
    gsl_rng *r = tu_rng(105);
    attn_case c;
    attn_case_init(&c, NTS, NTT, r);
    addattn_weights dw = {tu_zero_matrix(NA, NH), tu_zero_matrix(NA, NH), tu_zero_matrix(1, NA),
                          tu_zero_matrix(1, NA)};
    gsl_matrix *dS = tu_zero_matrix(NTT * NB, NH), *dHenc = tu_zero_matrix(NTS * NB, NH);
    gsl_matrix *dK = tu_zero_matrix(NTS * NB, NA), *dQ = tu_zero_matrix(NTT * NB, NA);
    /* dC with a row stride of its own, like the model's */
    gsl_matrix *dCwide = tu_zero_matrix(NTT * NB, NH + 3);
    gsl_matrix_view dC = gsl_matrix_submatrix(dCwide, 0, 3, NTT * NB, NH);
    gsl_matrix_memcpy(&dC.matrix, c.R);

    attn_forward(&c);
    for (size_t t = c.Tt; t-- > 0;) {
        gsl_matrix_view dst = tu_step_block(dS, t, NB), dqt = tu_step_block(dQ, t, NB), dct = tu_step_block(&dC.matrix, t, NB);
        gsl_matrix_view at = tu_step_block(c.Alpha, t, NB), qt = tu_step_block(c.EQ, t, NB);
        addattn_step_backward(&dst.matrix, dK, &dw, &dqt.matrix, &c.ws, &dct.matrix,
                              &at.matrix, &qt.matrix, c.EK, c.Henc, &c.w);
    }
    addattn_seq_backward(dHenc, &dw, dQ, &dC.matrix, dK, c.S, c.Alpha, c.Henc, &c.w, NB);

    double err = 0.0;
    err = fmax(err, tu_gradcheck("attn s (query)", attn_loss, &c, c.S, dS));
    err = fmax(err, tu_gradcheck("attn h (keys, values)", attn_loss, &c, c.Henc, dHenc));
    err = fmax(err, tu_gradcheck("attn Wq", attn_loss, &c, c.w.Wq, dw.Wq));
    err = fmax(err, tu_gradcheck("attn Wk", attn_loss, &c, c.w.Wk, dw.Wk));
    err = fmax(err, tu_gradcheck("attn bk", attn_loss, &c, c.w.bk, dw.bk));
    err = fmax(err, tu_gradcheck("attn v", attn_loss, &c, c.w.v, dw.v));
    tu_report_max("rnnattn", "attention", err);

    gsl_matrix *all[] = {dw.Wq, dw.Wk, dw.bk, dw.v, dS, dHenc, dK, dQ, dCwide};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gsl_matrix_free(all[i]);
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* The fused score kernel inside addattn_step_forward (e^{2q}·e^{2k}, vᵀ on the fly, 8
 * partial sums) against addattn_scores_reference (libm's tanh, one term at a time),
 * seen through the weights α = softmax(e): A = 19 is two blocks of 8 and a tail. */
START_TEST(test_scores_match_reference)
{
    enum { B = 2, Ts = 5, H = 3, A = 19 };
    gsl_rng *r = tu_rng(5);
    gsl_matrix *S = tu_rand_matrix(B, H, 1.0, r), *Henc = tu_rand_matrix(Ts * B, H, 1.0, r);
    addattn_weights w = {tu_rand_matrix(A, H, 0.9, r), tu_rand_matrix(A, H, 0.9, r),
                         tu_rand_matrix(1, A, 0.4, r), tu_rand_matrix(1, A, 1.2, r)};
    gsl_matrix *EK = tu_zero_matrix(Ts * B, A), *EQ = tu_zero_matrix(B, A);
    gsl_matrix *alpha = tu_zero_matrix(B, Ts), *c = tu_zero_matrix(B, H);
    gsl_matrix *Q = tu_zero_matrix(B, A), *K = tu_zero_matrix(Ts * B, A);
    addattn_keys_forward(EK, Henc, &w);
    addattn_step_forward(c, alpha, EQ, S, EK, Henc, &w);

    /* q = s·W_qᵀ, k = Henc·W_kᵀ + b, then the plain scores and their softmax */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, S, w.Wq, 0.0, Q);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, Henc, w.Wk, 0.0, K);
    for (size_t i = 0; i < Ts * B; i++)
        for (size_t a = 0; a < A; a++)
            K->data[i * A + a] += w.bk->data[a];
    for (size_t b = 0; b < B; b++) {
        double e[Ts];
        addattn_scores_reference(e, Q->data + b * A, K->data + b * A, B * A, w.v->data, Ts,
                                 A);
        op_softmax_row(e, Ts);
        for (size_t j = 0; j < Ts; j++)
            ck_assert_msg(fabs(gsl_matrix_get(alpha, b, j) - e[j]) <= 1e-14,
                          "alpha[%zu][%zu] = %.17g, reference %.17g", b, j,
                          gsl_matrix_get(alpha, b, j), e[j]);
    }
    gsl_matrix *all[] = {S, Henc, w.Wq, w.Wk, w.bk, w.v, EK, EQ, alpha, c, Q, K};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        gsl_matrix_free(all[k]);
    gsl_rng_free(r);
}
END_TEST

/* The step against the equations with plain loops and libm's tanh:
 * e_tj = vᵀ tanh(W_q s + W_k h_j + b), α = softmax(e), c = Σ_j α_j h_j.
 * Loop 0 with ordinary weights; loop 1 with W_q and W_k ×40, so q and k reach ±100 with
 * opposite signs and q + k is moderate: the case where computing tanh(q + k) from
 * e^{2q}·e^{2k} must not lose accuracy (tanh's addition formula would cancel there). */
START_TEST(test_attention_matches_equations)
{
    gsl_rng *r = tu_rng(106);
    attn_case c;
    attn_case_init(&c, 9, 2, r); /* Ts = 9 > 8: the kernels' blocks and their tails */
    if (_i == 1) {
        gsl_matrix_scale(c.w.Wq, 40.0);
        gsl_matrix_scale(c.w.Wk, 40.0);
    }
    attn_forward(&c);
    const size_t Ts = c.Ts;
    for (size_t t = 0; t < c.Tt; t++)
        for (size_t b = 0; b < NB; b++) {
            const size_t row = t * NB + b;
            double e[9], emax = -INFINITY, sum = 0.0;
            for (size_t j = 0; j < Ts; j++) {
                e[j] = 0.0;
                for (size_t a = 0; a < NA; a++) {
                    double pre = gsl_matrix_get(c.w.bk, 0, a);
                    for (size_t k = 0; k < NH; k++)
                        pre += gsl_matrix_get(c.w.Wq, a, k) * gsl_matrix_get(c.S, row, k) +
                               gsl_matrix_get(c.w.Wk, a, k) *
                                   gsl_matrix_get(c.Henc, j * NB + b, k);
                    e[j] += gsl_matrix_get(c.w.v, 0, a) * tanh(pre);
                }
                emax = fmax(emax, e[j]);
            }
            for (size_t j = 0; j < Ts; j++)
                sum += exp(e[j] - emax);
            for (size_t j = 0; j < Ts; j++)
                tu_assert_rel(gsl_matrix_get(c.Alpha, row, j), exp(e[j] - emax) / sum, 1e-12);
            for (size_t k = 0; k < NH; k++) {
                double ck = 0.0;
                for (size_t j = 0; j < Ts; j++)
                    ck += exp(e[j] - emax) / sum * gsl_matrix_get(c.Henc, j * NB + b, k);
                tu_assert_rel(gsl_matrix_get(&c.C.matrix, row, k), ck, 1e-12);
            }
        }
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* Every row of α is a distribution, even when the scores are far apart. */
START_TEST(test_attention_rows_are_distributions)
{
    gsl_rng *r = tu_rng(107);
    attn_case c;
    attn_case_init(&c, 11, NTT, r);
    gsl_matrix_scale(c.w.v, 200.0); /* scores hundreds apart: softmax must not overflow */
    for (int pass = 0; pass < 2; pass++) {
        attn_forward(&c);
        for (size_t i = 0; i < c.Alpha->size1; i++) {
            double sum = 0.0;
            for (size_t j = 0; j < c.Ts; j++) {
                const double a = gsl_matrix_get(c.Alpha, i, j);
                ck_assert_msg(a >= 0.0 && a <= 1.0, "alpha[%zu][%zu] = %g", i, j, a);
                sum += a;
            }
            ck_assert_msg(fabs(sum - 1.0) < 1e-14, "row %zu sums to %.17g", i, sum);
        }
        gsl_matrix_scale(c.w.v, 1.0 / 200.0);
    }
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* The context really reads the encoder states: change one value h_j of example 0 and its
 * context moves by exactly α_j·Δ (keys left as they were), example 1's does not move;
 * change it as a key too and the weights themselves change. */
START_TEST(test_attention_reads_encoder_states)
{
    gsl_rng *r = tu_rng(108);
    attn_case c;
    attn_case_init(&c, NTS, 1, r);
    attn_forward(&c);
    gsl_matrix *C0 = gsl_matrix_alloc(NB, NH), *A0 = gsl_matrix_alloc(NB, NTS);
    gsl_matrix_memcpy(C0, &c.C.matrix);
    gsl_matrix_memcpy(A0, c.Alpha);

    const size_t j = 2, row = j * NB + 0; /* h_j of example 0 */
    const double delta = 0.25;
    for (size_t k = 0; k < NH; k++)
        gsl_matrix_set(c.Henc, row, k, gsl_matrix_get(c.Henc, row, k) + delta);
    /* as a value only: the keys stay those of the old states */
    gsl_matrix_view c0 = tu_step_block(&c.C.matrix, 0, NB), a0 = tu_step_block(c.Alpha, 0, NB);
    gsl_matrix_view q0 = tu_step_block(c.EQ, 0, NB), s0 = tu_step_block(c.S, 0, NB);
    addattn_step_forward(&c0.matrix, &a0.matrix, &q0.matrix, &s0.matrix, c.EK, c.Henc, &c.w);
    for (size_t k = 0; k < NH; k++) {
        const double moved = gsl_matrix_get(&c.C.matrix, 0, k) - gsl_matrix_get(C0, 0, k);
        tu_assert_rel(moved, gsl_matrix_get(A0, 0, j) * delta, 1e-9);
        ck_assert(gsl_matrix_get(&c.C.matrix, 1, k) == gsl_matrix_get(C0, 1, k));
    }
    /* as a key too: α of example 0 changes, example 1's does not */
    attn_forward(&c);
    double change = 0.0;
    for (size_t i = 0; i < NTS; i++) {
        change += fabs(gsl_matrix_get(c.Alpha, 0, i) - gsl_matrix_get(A0, 0, i));
        ck_assert(gsl_matrix_get(c.Alpha, 1, i) == gsl_matrix_get(A0, 1, i));
    }
    ck_assert_msg(change > 1e-6, "alpha did not change: %g", change);

    gsl_matrix_free(C0);
    gsl_matrix_free(A0);
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* With one source position there is nothing to choose: α = 1 exactly and c = h_1. */
START_TEST(test_attention_single_source)
{
    gsl_rng *r = tu_rng(109);
    attn_case c;
    attn_case_init(&c, 1, NTT, r);
    attn_forward(&c);
    for (size_t t = 0; t < NTT; t++)
        for (size_t b = 0; b < NB; b++) {
            ck_assert(gsl_matrix_get(c.Alpha, t * NB + b, 0) == 1.0);
            for (size_t k = 0; k < NH; k++)
                ck_assert(gsl_matrix_get(&c.C.matrix, t * NB + b, k) ==
                          gsl_matrix_get(c.Henc, b, k));
        }
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* Pre-activations far beyond any sane training (|q| ~ 1e5) still give distributions: the
 * clamp before e^{2x} keeps every product finite or a clean 0/∞, never ∞·0. A NaN in an
 * encoder state comes out as NaN weights, not as a plausible-looking distribution. */
START_TEST(test_attention_extremes)
{
    gsl_rng *r = tu_rng(110);
    attn_case c;
    attn_case_init(&c, NTS, 1, r);
    gsl_matrix_scale(c.w.Wq, 1e5);
    attn_forward(&c);
    for (size_t b = 0; b < NB; b++) {
        double sum = 0.0;
        for (size_t j = 0; j < NTS; j++) {
            const double a = gsl_matrix_get(c.Alpha, b, j);
            ck_assert_msg(isfinite(a) && a >= 0.0, "alpha[%zu][%zu] = %g", b, j, a);
            sum += a;
        }
        ck_assert_msg(fabs(sum - 1.0) < 1e-14, "row %zu sums to %.17g", b, sum);
    }
    gsl_matrix_set(c.Henc, 0 * NB + 1, 0, NAN); /* h_1 of example 1, a key and a value */
    attn_forward(&c);
    ck_assert(isnan(gsl_matrix_get(c.Alpha, 1, 0)) && isnan(gsl_matrix_get(&c.C.matrix, 1, 0)));
    ck_assert(isfinite(gsl_matrix_get(c.Alpha, 0, 0))); /* example 0 untouched */
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

Suite *make_addattn_suite(void)
{
    Suite *s = suite_create("addattn");

    TCase *attn = tcase_create("attention");
    tcase_add_test(attn, test_attention_gradcheck);
    tcase_add_test(attn, test_scores_match_reference);
    tcase_add_loop_test(attn, test_attention_matches_equations, 0, 2);
    tcase_add_test(attn, test_attention_rows_are_distributions);
    tcase_add_test(attn, test_attention_reads_encoder_states);
    tcase_add_test(attn, test_attention_single_source);
    tcase_add_test(attn, test_attention_extremes);
    suite_add_tcase(s, attn);
    return s;
}
