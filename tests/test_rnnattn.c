/* test_rnnattn.c — tests of rnn_attention/: the GRU cell and layer, additive attention,
 * the score kernel, and the model `rnn_attention` in both cell variants.
 *
 * Gradient checks use sizes that are all different (B = 2, Ts = 4, Tt = 3, E = 5, H = 6,
 * A = 7, 8 symbols so V = 9), so a transposed index cannot pass by accident, and a loss
 * Σ out ⊙ R with a fixed random R, so every output entry has its own weight.
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

/* A matrix filled from U(−scale, scale). */
static gsl_matrix *rand_matrix(size_t rows, size_t cols, double scale, const gsl_rng *r)
{
    gsl_matrix *m = gsl_matrix_alloc(rows, cols);
    ck_assert_ptr_nonnull(m);
    tu_fill(m, scale, r);
    return m;
}

static gsl_matrix *zero_matrix(size_t rows, size_t cols)
{
    gsl_matrix *m = gsl_matrix_calloc(rows, cols);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* Block k (rows [k·B, (k+1)·B)) of a time-major matrix. */
static gsl_matrix_view blk(gsl_matrix *m, size_t k, size_t B)
{
    return gsl_matrix_submatrix(m, k * B, 0, B, m->size2);
}

/* Largest gradient-check error seen by a test, printed once at its end. */
static void report_max(const char *what, double err)
{
    printf("rnnattn gradcheck %-22s max relative error %.2e\n", what, err);
}

static double sigmoid_ref(double x) { return 1.0 / (1.0 + exp(-x)); }

/* ---- the GRU cell ------------------------------------------------------------------------ */

typedef struct cell_case {
    gsl_matrix *xp, *h_prev, *Wh, *bh; /* what the gradients are taken of */
    gsl_matrix *h, *act, *hp, *R;      /* output, cache, loss weights */
} cell_case;

static void cell_case_init(cell_case *c, const gsl_rng *r)
{
    c->xp = rand_matrix(NB, 3 * NH, 1.3, r);
    c->h_prev = rand_matrix(NB, NH, 0.9, r);
    c->Wh = rand_matrix(3 * NH, NH, 0.6, r);
    c->bh = rand_matrix(1, 3 * NH, 0.5, r);
    c->h = zero_matrix(NB, NH);
    c->act = zero_matrix(NB, 3 * NH);
    c->hp = zero_matrix(NB, 3 * NH);
    c->R = rand_matrix(NB, NH, 1.0, r);
}

static void cell_case_free(cell_case *c)
{
    gsl_matrix *all[] = {c->xp, c->h_prev, c->Wh, c->bh, c->h, c->act, c->hp, c->R};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gsl_matrix_free(all[i]);
}

/* loss = Σ h ⊙ R, h = cell(xp, h_prev) */
static double cell_loss(void *ctx)
{
    cell_case *c = ctx;
    gsl_matrix_memcpy(c->act, c->xp); /* the cell overwrites its input with the gates */
    gru_cell_forward(c->h, c->act, c->hp, c->h_prev, c->Wh, c->bh);
    return tu_dot(c->h, c->R);
}

/* The cell against PyTorch's equations written out plainly, element by element. */
START_TEST(test_gru_cell_matches_equations)
{
    gsl_rng *r = tu_rng(101);
    cell_case c;
    cell_case_init(&c, r);
    cell_loss(&c);
    for (size_t b = 0; b < NB; b++)
        for (size_t i = 0; i < NH; i++) {
            double u[3]; /* (U h + b_h) of gate g, unit i */
            for (size_t g = 0; g < 3; g++) {
                u[g] = gsl_matrix_get(c.bh, 0, g * NH + i);
                for (size_t k = 0; k < NH; k++)
                    u[g] += gsl_matrix_get(c.Wh, g * NH + i, k) * gsl_matrix_get(c.h_prev, b, k);
            }
            const double rg = sigmoid_ref(gsl_matrix_get(c.xp, b, i) + u[0]);
            const double zg = sigmoid_ref(gsl_matrix_get(c.xp, b, NH + i) + u[1]);
            const double ng = tanh(gsl_matrix_get(c.xp, b, 2 * NH + i) + rg * u[2]);
            const double h = (1.0 - zg) * ng + zg * gsl_matrix_get(c.h_prev, b, i);
            tu_assert_rel(gsl_matrix_get(c.h, b, i), h, 1e-13);
            tu_assert_rel(gsl_matrix_get(c.act, b, i), rg, 1e-13);
            tu_assert_rel(gsl_matrix_get(c.act, b, NH + i), zg, 1e-13);
            tu_assert_rel(gsl_matrix_get(c.act, b, 2 * NH + i), ng, 1e-13);
        }
    cell_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_gru_cell_gradcheck)
{
    gsl_rng *r = tu_rng(102);
    cell_case c;
    cell_case_init(&c, r);
    gsl_matrix *dxp = zero_matrix(NB, 3 * NH), *dhp = zero_matrix(NB, 3 * NH);
    gsl_matrix *dh_prev = zero_matrix(NB, NH), *dWh = zero_matrix(3 * NH, NH);
    gsl_matrix *dbh = zero_matrix(1, 3 * NH);

    cell_loss(&c);
    gru_cell_backward(dxp, dhp, dh_prev, c.R, c.act, c.hp, c.h_prev, c.Wh);
    /* the caller's share: hp = h_prev·Whᵀ + bh ⇒ dWh = dhpᵀ·h_prev, dbh = Σ_rows dhp */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dhp, c.h_prev, 0.0, dWh);
    op_bias_backward(dbh, dhp);

    double err = 0.0;
    err = fmax(err, tu_gradcheck("cell xp", cell_loss, &c, c.xp, dxp));
    err = fmax(err, tu_gradcheck("cell h_prev", cell_loss, &c, c.h_prev, dh_prev));
    err = fmax(err, tu_gradcheck("cell Wh", cell_loss, &c, c.Wh, dWh));
    err = fmax(err, tu_gradcheck("cell bh", cell_loss, &c, c.bh, dbh));
    report_max("gru_cell", err);

    gsl_matrix *all[] = {dxp, dhp, dh_prev, dWh, dbh};
    for (size_t i = 0; i < 5; i++)
        gsl_matrix_free(all[i]);
    cell_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* ---- the GRU layer ------------------------------------------------------------------------ */

enum { LT = 3 }; /* steps of the layer test */

typedef struct layer_case {
    gsl_matrix *X, *h0;         /* inputs (LT·B, E), (B, H) */
    gru_weights w;              /* Wx (3H, E), Wh (3H, H), bx, bh (1, 3H) */
    gsl_matrix *Hs, *Act, *HP;  /* ((LT+1)·B, H), (LT·B, 3H) ×2 */
    gsl_matrix *R;              /* (LT·B, H) weights of h_1..h_T in the loss */
} layer_case;

static void layer_case_init(layer_case *c, const gsl_rng *r)
{
    c->X = rand_matrix(LT * NB, NE, 1.0, r);
    c->h0 = rand_matrix(NB, NH, 0.8, r);
    c->w.Wx = rand_matrix(3 * NH, NE, 0.5, r);
    c->w.Wh = rand_matrix(3 * NH, NH, 0.5, r);
    c->w.bx = rand_matrix(1, 3 * NH, 0.4, r);
    c->w.bh = rand_matrix(1, 3 * NH, 0.4, r);
    c->Hs = zero_matrix((LT + 1) * NB, NH);
    c->Act = zero_matrix(LT * NB, 3 * NH);
    c->HP = zero_matrix(LT * NB, 3 * NH);
    c->R = rand_matrix(LT * NB, NH, 1.0, r);
}

static void layer_case_free(layer_case *c)
{
    gsl_matrix *all[] = {c->X, c->h0, c->w.Wx, c->w.Wh, c->w.bx, c->w.bh,
                         c->Hs, c->Act, c->HP, c->R};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gsl_matrix_free(all[i]);
}

/* loss = Σ_t h_t ⊙ R_t over every state the layer writes */
static double layer_loss(void *ctx)
{
    layer_case *c = ctx;
    gsl_matrix_view h0 = blk(c->Hs, 0, NB);
    gsl_matrix_memcpy(&h0.matrix, c->h0);
    gru_layer_forward(c->Hs, c->Act, c->HP, c->X, &c->w, NB);
    gsl_matrix_view out = gsl_matrix_submatrix(c->Hs, NB, 0, LT * NB, NH);
    return tu_dot(&out.matrix, c->R);
}

START_TEST(test_gru_layer_gradcheck)
{
    gsl_rng *r = tu_rng(103);
    layer_case c;
    layer_case_init(&c, r);
    gru_weights dw = {zero_matrix(3 * NH, NE), zero_matrix(3 * NH, NH), zero_matrix(1, 3 * NH),
                      zero_matrix(1, 3 * NH)};
    gsl_matrix *dX = zero_matrix(LT * NB, NE), *dHs = zero_matrix((LT + 1) * NB, NH);
    gsl_matrix *dXP = zero_matrix(LT * NB, 3 * NH), *dHP = zero_matrix(LT * NB, 3 * NH);

    layer_loss(&c);
    gsl_matrix_view dout = gsl_matrix_submatrix(dHs, NB, 0, LT * NB, NH);
    gsl_matrix_memcpy(&dout.matrix, c.R); /* the gradient from outside: R; none on h_0 */
    gru_layer_backward(dX, &dw, dXP, dHP, dHs, c.X, c.Hs, c.Act, c.HP, &c.w, NB);
    gsl_matrix_view dh0 = blk(dHs, 0, NB);

    double err = 0.0;
    err = fmax(err, tu_gradcheck("layer X", layer_loss, &c, c.X, dX));
    err = fmax(err, tu_gradcheck("layer h0", layer_loss, &c, c.h0, &dh0.matrix));
    err = fmax(err, tu_gradcheck("layer Wx", layer_loss, &c, c.w.Wx, dw.Wx));
    err = fmax(err, tu_gradcheck("layer Wh", layer_loss, &c, c.w.Wh, dw.Wh));
    err = fmax(err, tu_gradcheck("layer bx", layer_loss, &c, c.w.bx, dw.bx));
    err = fmax(err, tu_gradcheck("layer bh", layer_loss, &c, c.w.bh, dw.bh));
    report_max("gru_layer (T=3)", err);

    gsl_matrix *all[] = {dw.Wx, dw.Wh, dw.bx, dw.bh, dX, dHs, dXP, dHP};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gsl_matrix_free(all[i]);
    layer_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* The layer is the cell applied step after step: same states as calling the cell by hand. */
START_TEST(test_gru_layer_is_cell_loop)
{
    gsl_rng *r = tu_rng(104);
    layer_case c;
    layer_case_init(&c, r);
    layer_loss(&c);
    gsl_matrix *h = gsl_matrix_alloc(NB, NH), *a = gsl_matrix_alloc(NB, 3 * NH);
    gsl_matrix *p = gsl_matrix_alloc(NB, 3 * NH), *hprev = gsl_matrix_alloc(NB, NH);
    gsl_matrix_memcpy(hprev, c.h0);
    for (size_t t = 0; t < LT; t++) {
        gsl_matrix_view x = blk(c.X, t, NB);
        /* a = x·Wxᵀ + bx, the input part, by hand */
        for (size_t b = 0; b < NB; b++)
            for (size_t i = 0; i < 3 * NH; i++) {
                double s = gsl_matrix_get(c.w.bx, 0, i);
                for (size_t k = 0; k < NE; k++)
                    s += gsl_matrix_get(&x.matrix, b, k) * gsl_matrix_get(c.w.Wx, i, k);
                gsl_matrix_set(a, b, i, s);
            }
        gru_cell_forward(h, a, p, hprev, c.w.Wh, c.w.bh);
        gsl_matrix_view ht = blk(c.Hs, t + 1, NB);
        for (size_t b = 0; b < NB; b++)
            for (size_t i = 0; i < NH; i++)
                tu_assert_rel(gsl_matrix_get(&ht.matrix, b, i), gsl_matrix_get(h, b, i), 1e-13);
        gsl_matrix_memcpy(hprev, h);
    }
    gsl_matrix_free(h);
    gsl_matrix_free(a);
    gsl_matrix_free(p);
    gsl_matrix_free(hprev);
    layer_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

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
    c->S = rand_matrix(Tt * NB, NH, 1.0, r);
    c->Henc = rand_matrix(Ts * NB, NH, 1.0, r);
    c->w.Wq = rand_matrix(NA, NH, 0.7, r);
    c->w.Wk = rand_matrix(NA, NH, 0.7, r);
    c->w.bk = rand_matrix(1, NA, 0.3, r);
    c->w.v = rand_matrix(1, NA, 1.5, r);
    c->EK = zero_matrix(Ts * NB, NA);
    c->EQ = zero_matrix(Tt * NB, NA);
    c->Alpha = zero_matrix(Tt * NB, Ts);
    c->Cwide = zero_matrix(Tt * NB, 2 + NH);
    c->C = gsl_matrix_submatrix(c->Cwide, 0, 2, Tt * NB, NH);
    c->R = rand_matrix(Tt * NB, NH, 1.0, r);
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
        gsl_matrix_view ct = blk(&c->C.matrix, t, NB), at = blk(c->Alpha, t, NB);
        gsl_matrix_view qt = blk(c->EQ, t, NB), st = blk(c->S, t, NB);
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
    addattn_weights dw = {zero_matrix(NA, NH), zero_matrix(NA, NH), zero_matrix(1, NA),
                          zero_matrix(1, NA)};
    gsl_matrix *dS = zero_matrix(NTT * NB, NH), *dHenc = zero_matrix(NTS * NB, NH);
    gsl_matrix *dK = zero_matrix(NTS * NB, NA), *dQ = zero_matrix(NTT * NB, NA);
    /* dC with a row stride of its own, like the model's */
    gsl_matrix *dCwide = zero_matrix(NTT * NB, NH + 3);
    gsl_matrix_view dC = gsl_matrix_submatrix(dCwide, 0, 3, NTT * NB, NH);
    gsl_matrix_memcpy(&dC.matrix, c.R);

    attn_forward(&c);
    for (size_t t = c.Tt; t-- > 0;) {
        gsl_matrix_view dst = blk(dS, t, NB), dqt = blk(dQ, t, NB), dct = blk(&dC.matrix, t, NB);
        gsl_matrix_view at = blk(c.Alpha, t, NB), qt = blk(c.EQ, t, NB);
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
    report_max("attention", err);

    gsl_matrix *all[] = {dw.Wq, dw.Wk, dw.bk, dw.v, dS, dHenc, dK, dQ, dCwide};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gsl_matrix_free(all[i]);
    attn_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* The fused score kernel inside addattn_step_forward (e^{2q}·e^{2k}, vᵀ on the fly, 8
 * partial sums) against addattn_scores_reference (libm's tanh, one term at a time), seen
 * through the weights α = softmax(e): A = 19 is two blocks of 8 and a tail. */
START_TEST(test_scores_match_reference)
{
    enum { B = 2, Ts = 5, H = 3, A = 19 };
    gsl_rng *r = tu_rng(5);
    gsl_matrix *S = rand_matrix(B, H, 1.0, r), *Henc = rand_matrix(Ts * B, H, 1.0, r);
    addattn_weights w = {rand_matrix(A, H, 0.9, r), rand_matrix(A, H, 0.9, r),
                         rand_matrix(1, A, 0.4, r), rand_matrix(1, A, 1.2, r)};
    gsl_matrix *EK = zero_matrix(Ts * B, A), *EQ = zero_matrix(B, A);
    gsl_matrix *alpha = zero_matrix(B, Ts), *c = zero_matrix(B, H);
    gsl_matrix *Q = zero_matrix(B, A), *K = zero_matrix(Ts * B, A);
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
        addattn_scores_reference(e, Q->data + b * A, K->data + b * A, B * A, w.v->data, Ts, A);
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
    gsl_matrix_view c0 = blk(&c.C.matrix, 0, NB), a0 = blk(c.Alpha, 0, NB);
    gsl_matrix_view q0 = blk(c.EQ, 0, NB), s0 = blk(c.S, 0, NB);
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

/* ---- the model -------------------------------------------------------------------------- */

static const char *const cells[2] = {"gru", "lstm"};

static config small_config(const char *cell)
{
    config c;
    config_defaults(&c);
    rnnattn_ops.defaults(&c);
    c.symbols = NSYM;
    c.embed = NE;
    c.hidden = NH;
    c.attn = NA;
    c.forget_bias = 0.7;
    snprintf(c.cell, sizeof c.cell, "%s", cell);
    return c;
}

static void print_tensor_error(void *ctx, const char *tensor, double err, size_t row,
                               size_t col)
{
    ck_assert_msg(err < GRADCHECK_TOL, "%s %s: relative error %.3g at (%zu, %zu)",
                  (const char *)ctx, tensor, err, row, col);
}

/* Every tensor of the model, for _i = 0..3: cell gru, lstm, then each with the
 * bidirectional encoder (whose tensors bwd.* and init.W must then be there, and checked). */
START_TEST(test_model_gradcheck)
{
    config c = small_config(cells[_i % 2]);
    c.bidirectional = _i / 2;
    model *m = tu_new_model(&rnnattn_ops, &c, 110 + (unsigned long)_i);
    gsl_rng *r = tu_rng(111);
    batch b;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, NTS, NTT), 0);
    char what[48];
    snprintf(what, sizeof what, "model (cell %s%s)", cells[_i % 2],
             c.bidirectional ? ", bidirectional" : "");
    ck_assert_str_eq(m->params.spec[m->params.n_tensors - 1].name,
                     c.bidirectional ? "init.W" : "out.b");
    const double err = gradcheck_model(m, &b, 1, print_tensor_error, what);
    ck_assert_double_lt(err, GRADCHECK_TOL);
    report_max(what, err);
    batch_free(&b);
    gsl_rng_free(r);
    rnnattn_ops.free(m);
}
END_TEST

/* What a trace sink received. */
typedef struct trace_log {
    int calls;
    char name[32], rows[8], cols[8];
    size_t n1, n2;
    double m[16 * 16];
    int fail; /* answer -1 to stop */
} trace_log;

static int record(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                  const char *cols)
{
    trace_log *log = ctx;
    log->calls++;
    snprintf(log->name, sizeof log->name, "%s", name);
    snprintf(log->rows, sizeof log->rows, "%s", rows);
    snprintf(log->cols, sizeof log->cols, "%s", cols);
    log->n1 = m->size1;
    log->n2 = m->size2;
    ck_assert(m->size1 * m->size2 <= 16 * 16);
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < m->size2; j++)
            log->m[i * m->size2 + j] = gsl_matrix_get(m, i, j);
    return log->fail ? -1 : 0;
}

/* trace: one (Tt, Ts) alignment, rows "tgt", cols "src", every row a distribution, and
 * the same tokens as decode; a sink's -1 comes back. */
START_TEST(test_trace_alignment)
{
    config c = small_config(cells[_i % 2]);
    c.bidirectional = _i / 2; /* the alignment over the annotations [→h_j; ←h_j] */
    model *m = tu_new_model(&rnnattn_ops, &c, 118);
    enum { Ts = 7, Tt = 5 };
    const int src[Ts] = {3, 0, 7, 7, 1, 5, 2};
    int out[Tt], dec[Tt];
    ck_assert_int_eq(rnnattn_ops.reserve(m, 4, Ts, Tt), 0);
    trace_log log = {0};
    ck_assert_int_eq(rnnattn_ops.trace(m, src, Ts, Tt, out, record, &log), 0);
    ck_assert_int_eq(log.calls, 1);
    ck_assert_str_eq(log.name, "alignment");
    ck_assert_str_eq(log.rows, "tgt");
    ck_assert_str_eq(log.cols, "src");
    ck_assert_uint_eq(log.n1, Tt);
    ck_assert_uint_eq(log.n2, Ts);
    for (size_t t = 0; t < Tt; t++) {
        double sum = 0.0;
        for (size_t j = 0; j < Ts; j++) {
            ck_assert(log.m[t * Ts + j] >= 0.0);
            sum += log.m[t * Ts + j];
        }
        ck_assert_msg(fabs(sum - 1.0) < 1e-14, "row %zu sums to %.17g", t, sum);
    }
    rnnattn_ops.decode(m, src, 1, Ts, Tt, dec);
    ck_assert_mem_eq(out, dec, sizeof out);
    log.fail = 1;
    ck_assert_int_eq(rnnattn_ops.trace(m, src, Ts, Tt, out, record, &log), -1);
    rnnattn_ops.free(m);
}
END_TEST

/* bidirectional: the annotations are [→h_j; ←h_j] with ←h_j the state of the cell run on
 * the source backwards with the bwd weights (rebuilt here through the cell's own layer,
 * on the model's embedding), and s_0 = tanh(←h_1·W_sᵀ) (libm's tanh), c_0 = 0: a gradient
 * check would accept the halves swapped, the source read forwards twice, or s_0 from
 * ←h_Ts. _i: cell gru, lstm. */
START_TEST(test_bidirectional_encoder)
{
    config c = small_config(cells[_i]);
    c.bidirectional = 1;
    model *m = tu_new_model(&rnnattn_ops, &c, 121);
    rnnattn_model *rm = (rnnattn_model *)m;
    gsl_rng *r = tu_rng(122);
    batch b;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, NTS, NTT), 0);
    ck_assert(!isnan(rnnattn_ops.forward(m, &b, NULL)));

    const size_t GH = rm->cell->gates * NH;
    gsl_matrix *X = zero_matrix(NTS * NB, NE), *Hr = zero_matrix((NTS + 1) * NB, NH);
    gsl_matrix *Cr = zero_matrix((NTS + 1) * NB, NH), *Act = zero_matrix(NTS * NB, GH);
    gsl_matrix *HP = zero_matrix(NTS * NB, GH);
    /* step k (1-based) of the backward encoder reads x_{Ts+1−k} */
    for (size_t k = 1; k <= NTS; k++)
        for (size_t i = 0; i < NB; i++) {
            const size_t tok = (size_t)b.src[i * NTS + (NTS - k)];
            for (size_t j = 0; j < NE; j++)
                gsl_matrix_set(X, (k - 1) * NB + i, j, gsl_matrix_get(rm->w.enc_embed, tok, j));
        }
    rm->cell->layer_forward(Hr, Cr, Act, HP, X, &rm->w.bwd, NB);
    /* h_j = [→h_j ; ←h_j], ←h_j = block Ts+1−j of Hr, →h_j = block j of the model's Hs */
    for (size_t jj = 1; jj <= NTS; jj++)
        for (size_t i = 0; i < NB; i++)
            for (size_t u = 0; u < NH; u++) {
                const double *ann = rm->s.Hann + ((jj - 1) * NB + i) * 2 * NH;
                ck_assert(ann[u] == rm->s.Hs[(jj * NB + i) * NH + u]);
                ck_assert_msg(ann[NH + u] == gsl_matrix_get(Hr, (NTS + 1 - jj) * NB + i, u),
                              "annotation %zu, example %zu, unit %zu: %.17g, want %.17g", jj,
                              i, u, ann[NH + u],
                              gsl_matrix_get(Hr, (NTS + 1 - jj) * NB + i, u));
            }
    /* s_0 = tanh(←h_1 · W_sᵀ): block Ts+1 of Hs; ←h_1 is Hr's last block */
    for (size_t i = 0; i < NB; i++)
        for (size_t u = 0; u < NH; u++) {
            double a = 0.0;
            for (size_t k = 0; k < NH; k++)
                a += gsl_matrix_get(Hr, NTS * NB + i, k) * gsl_matrix_get(rm->w.init_W, u, k);
            const double s0 = rm->s.Hs[((NTS + 1) * NB + i) * NH + u];
            ck_assert_msg(fabs(s0 - tanh(a)) <= 1e-14, "s_0[%zu][%zu] %.17g, want %.17g", i,
                          u, s0, tanh(a));
            if (rm->cell->has_cell_state)
                ck_assert(rm->s.Cs[((NTS + 1) * NB + i) * NH + u] == 0.0);
        }
    gsl_matrix *all[] = {X, Hr, Cr, Act, HP};
    for (size_t k = 0; k < 5; k++)
        gsl_matrix_free(all[k]);
    batch_free(&b);
    gsl_rng_free(r);
    rnnattn_ops.free(m);
}
END_TEST

/* The canonical model has PyTorch's parameter count (GRUAttnSeq2Seq: 210,123) and the
 * flops bench_torch.py counts, per token 2·384·160 + 2·128·128 ·2 + 4·L·128 + 2·384·288
 * + 2·256·11 for Ts = Tt = L, times 3 for a training step. */
START_TEST(test_canonical_size_and_flops)
{
    config c;
    config_defaults(&c);
    rnnattn_ops.defaults(&c);
    ck_assert_uint_eq(c.embed, 32);
    ck_assert_uint_eq(c.hidden, 128);
    ck_assert_uint_eq(c.attn, 128);
    ck_assert_str_eq(c.cell, "gru");
    model *m = rnnattn_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.size, 210123);
    const char *names[] = {"enc.embed", "enc.Wx", "enc.Wh", "enc.bx", "enc.bh", "dec.embed",
                           "dec.Wx", "dec.Wh", "dec.bx", "dec.bh", "attn.Wq", "attn.Wk",
                           "attn.bk", "attn.v", "out.W", "out.b"};
    ck_assert_uint_eq(m->params.n_tensors, 16);
    for (size_t k = 0; k < 16; k++)
        ck_assert_str_eq(m->params.spec[k].name, names[k]);
    ck_assert_uint_eq(rnnattn_ops.n_params(&c), m->params.size);
    rnnattn_ops.free(m);
    for (size_t L = 32; L <= 128; L *= 4) {
        const double per_token = 2.0 * 384 * 160 + 2.0 * 128 * 128 + 2.0 * 128 * 128 +
                                 4.0 * (double)L * 128 + 2.0 * 384 * 288 + 2.0 * 256 * 11;
        ck_assert(rnnattn_ops.flops(&c, L, L) == 3.0 * per_token * (double)L);
    }
    /* the LSTM ablation: 4H gates and one bias per cell, 16,384 + ... more weights */
    snprintf(c.cell, sizeof c.cell, "lstm");
    m = rnnattn_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.n_tensors, 14);
    const char *lstm_names[] = {"enc.embed", "enc.Wx", "enc.Wh", "enc.b", "dec.embed",
                                "dec.Wx", "dec.Wh", "dec.b", "attn.Wq", "attn.Wk",
                                "attn.bk", "attn.v", "out.W", "out.b"};
    for (size_t k = 0; k < 14; k++)
        ck_assert_str_eq(m->params.spec[k].name, lstm_names[k]);
    ck_assert_uint_eq(rnnattn_ops.n_params(&c), m->params.size);
    /* a fourth gate block in each cell: enc.Wx 128·32, enc.Wh 128·128, dec.Wx 128·160,
     * dec.Wh 128·128; and one bias of 4·128 per cell instead of the GRU's two of 3·128 */
    ck_assert_uint_eq(m->params.size, 210123 + 128 * 32 + 128 * 128 + 128 * 160 + 128 * 128 -
                                          2 * (2 * 384) + 2 * 512);
    rnnattn_ops.free(m);
    /* bidirectional GRU: annotations 2H = 256 wide, so dec.Wx (384, 288), attn.Wk
     * (128, 256), out.W (11, 384); then bwd.Wx (384, 32), bwd.Wh (384, 128), bwd.bx,
     * bwd.bh (1, 384) and init.W (128, 128), last */
    snprintf(c.cell, sizeof c.cell, "gru");
    c.bidirectional = 1;
    m = rnnattn_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.n_tensors, 21);
    for (size_t k = 0; k < 16; k++)
        ck_assert_str_eq(m->params.spec[k].name, names[k]);
    const char *bi_names[] = {"bwd.Wx", "bwd.Wh", "bwd.bx", "bwd.bh", "init.W"};
    for (size_t k = 0; k < 5; k++)
        ck_assert_str_eq(m->params.spec[16 + k].name, bi_names[k]);
    ck_assert_uint_eq(m->params.size, 210123 + 384 * 128 + 128 * 128 + 11 * 128 +
                                          (384 * 32 + 384 * 128 + 2 * 384) + 128 * 128);
    ck_assert_uint_eq(rnnattn_ops.n_params(&c), m->params.size);
    rnnattn_ops.free(m);
    /* per token at Ts = Tt = L: both encoders 2·2·384·160, keys 2·128·256, the decoder
     * 2·384·288 + 2·384·128 + 2·128·128 (query) + 2·L·128 + 2·L·256 + 2·11·384; once per
     * sequence s_0's 2·128·128; times 3 */
    for (size_t L = 32; L <= 128; L *= 4) {
        const double l = (double)L;
        const double per_token = 4.0 * 384 * 160 + 2.0 * 128 * 256 + 2.0 * 384 * 288 +
                                 2.0 * 384 * 128 + 2.0 * 128 * 128 + 2.0 * l * 128 +
                                 2.0 * l * 256 + 2.0 * 11 * 384;
        tu_assert_rel(rnnattn_ops.flops(&c, L, L), 3.0 * (per_token * l + 2.0 * 128 * 128),
                      1e-15);
    }
}
END_TEST

/* Initial weights: PyTorch's distributions, and the LSTM forget-gate bias. */
START_TEST(test_init)
{
    config c;
    config_defaults(&c);
    rnnattn_ops.defaults(&c);
    snprintf(c.cell, sizeof c.cell, "%s", cells[_i]);
    c.forget_bias = 2.5;
    model *m = tu_new_model(&rnnattn_ops, &c, 119), *twin = tu_new_model(&rnnattn_ops, &c, 119);
    arena *a = &m->params;
    ck_assert_mem_eq(a->data, twin->params.data, a->size * sizeof(double));
    const double kH = 1.0 / sqrt(128.0), k2H = 1.0 / sqrt(256.0);
    for (size_t t = 0; t < a->n_tensors; t++) {
        const char *name = a->spec[t].name;
        const double *x = a->data + a->offset[t];
        const size_t n = arena_numel(a, t);
        double sum2 = 0.0, amax = 0.0;
        for (size_t i = 0; i < n; i++) {
            sum2 += x[i] * x[i];
            amax = fmax(amax, fabs(x[i]));
        }
        double bound = kH;
        if (strstr(name, "embed")) {
            const double sd = sqrt(sum2 / (double)n); /* 288 draws of N(0, 1) */
            ck_assert_msg(sd > 0.85 && sd < 1.15, "%s: sd %g", name, sd);
            continue;
        }
        if (strcmp(name, "enc.b") == 0 || strcmp(name, "dec.b") == 0) {
            for (size_t i = 0; i < n; i++)
                ck_assert(i >= 128 && i < 256 ? x[i] == 2.5 : fabs(x[i]) <= 2 * kH);
            continue;
        }
        if (strncmp(name, "out.", 4) == 0)
            bound = k2H;
        ck_assert_msg(amax <= bound && (n < 1000 || amax > 0.99 * bound),
                      "%s: max |w| %g, bound %g", name, amax, bound);
    }
    rnnattn_ops.free(m);
    rnnattn_ops.free(twin);
}
END_TEST

/* ---- error paths ------------------------------------------------------------------------ */

START_TEST(test_errors)
{
    config c = small_config("gru");
    char err[200];
    ck_assert_int_eq(rnnattn_ops.check(&c, err, sizeof err), 0);
    config bad = c;
    snprintf(bad.cell, sizeof bad.cell, "rnn");
    ck_assert_int_eq(rnnattn_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--cell"));
    ck_assert_ptr_null(rnnattn_ops.alloc(&bad));
    bad = c;
    bad.attn = 0;
    ck_assert_int_eq(rnnattn_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--attn"));
    bad = c;
    bad.emb_init = NAN;
    ck_assert_int_eq(rnnattn_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--emb-init"));

    model *m = tu_new_model(&rnnattn_ops, &c, 120);
    ck_assert_int_eq(rnnattn_ops.reserve(m, 0, 3, 3), -1);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, SIZE_MAX / 2, SIZE_MAX / 2), -1);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, NTS, NTT), 0);

    gsl_error_handler_t *old = gsl_set_error_handler(tu_count_error);
    gsl_rng *r = tu_rng(121);
    batch b, longer;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    tu_random_batch(&longer, NB, NTS, NTT + 1, &c, r);
    int out[NB * (NTT + 1)];

    tu_errors = 0;
    ck_assert(isnan(rnnattn_ops.forward(m, &longer, NULL))); /* Tt beyond the reservation */
    ck_assert_int_eq(tu_errors, 1);
    rnnattn_ops.backward(m, &b); /* no forward of this batch */
    ck_assert_int_eq(tu_errors, 2);
    rnnattn_ops.decode(m, b.src, NB, NTS, NTT + 1, out);
    ck_assert_int_eq(tu_errors, 3);
    trace_log log = {0};
    ck_assert_int_eq(rnnattn_ops.trace(m, b.src, NTS + 1, NTT, out, record, &log), -1);
    ck_assert_int_eq(tu_errors, 4);
    b.src[1] = NSYM + 1; /* past BOS: not a token */
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 5);
    b.src[1] = -1;
    ck_assert_int_eq(rnnattn_ops.trace(m, b.src, NTS, NTT, out, record, &log), -1);
    ck_assert_int_eq(tu_errors, 6);
    ck_assert_int_eq(log.calls, 0);
    b.src[1] = 0;
    b.dec_in[2] = -3; /* a decoder input, then a target, outside the vocabulary */
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 7);
    b.dec_in[2] = 0;
    b.tgt[NB * NTT - 1] = NSYM + 1;
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 8);
    b.tgt[NB * NTT - 1] = 0;
    ck_assert(isfinite(rnnattn_ops.forward(m, &b, NULL))); /* and still works */

    /* A refused batch leaves nothing to differentiate (model.h: backward follows its own
     * forward), writes no gradient, and the next forward is as good as ever. */
    const arena *a = &m->params;
    double *once = malloc(a->size * sizeof(double));
    ck_assert_ptr_nonnull(once);
    arena_zero_grad(&m->params);
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), 0);
    memcpy(once, a->grad, a->size * sizeof(double));
    arena_zero_grad(&m->params);
    rnnattn_ops.forward(m, &b, NULL);
    const int tgt0 = b.tgt[0];
    b.tgt[0] = -1;
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 9);
    b.tgt[0] = tgt0;
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), -1);
    ck_assert_int_eq(tu_errors, 10);
    for (size_t i = 0; i < a->size; i++)
        ck_assert(a->grad[i] == 0.0);
    ck_assert(isfinite(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), 0);
    ck_assert_mem_eq(a->grad, once, a->size * sizeof(double));
    free(once);

    /* A reservation that cannot be made leaves the one before it usable. */
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, SIZE_MAX / 4, SIZE_MAX / 4), -1);
    ck_assert_int_eq(rnnattn_ops.reserve(m, SIZE_MAX / 2, NTS, NTT), -1);
    ck_assert(isfinite(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), 0);
    ck_assert_int_eq(tu_errors, 10);
    gsl_set_error_handler(old);

    batch_free(&b);
    batch_free(&longer);
    gsl_rng_free(r);
    rnnattn_ops.free(m);
}
END_TEST

Suite *make_rnnattn_suite(void)
{
    Suite *s = suite_create("rnn_attention");

    TCase *gru = tcase_create("gru");
    tcase_add_test(gru, test_gru_cell_matches_equations);
    tcase_add_test(gru, test_gru_cell_gradcheck);
    tcase_add_test(gru, test_gru_layer_gradcheck);
    tcase_add_test(gru, test_gru_layer_is_cell_loop);
    suite_add_tcase(s, gru);

    TCase *attn = tcase_create("attention");
    tcase_add_test(attn, test_attention_gradcheck);
    tcase_add_test(attn, test_scores_match_reference);
    tcase_add_loop_test(attn, test_attention_matches_equations, 0, 2);
    tcase_add_test(attn, test_attention_rows_are_distributions);
    tcase_add_test(attn, test_attention_reads_encoder_states);
    tcase_add_test(attn, test_attention_single_source);
    tcase_add_test(attn, test_attention_extremes);
    suite_add_tcase(s, attn);

    TCase *mdl = tcase_create("model");
    /* cell gru, cell lstm, then each with the bidirectional encoder */
    tcase_add_loop_test(mdl, test_model_gradcheck, 0, 4);
    tcase_add_loop_test(mdl, test_trace_alignment, 0, 4);
    tcase_add_loop_test(mdl, test_bidirectional_encoder, 0, 2); /* cell gru, cell lstm */
    tcase_add_loop_test(mdl, test_init, 0, 2);
    tcase_add_test(mdl, test_canonical_size_and_flops);
    tcase_add_test(mdl, test_errors);
    suite_add_tcase(s, mdl);
    return s;
}
