/* test_lstm_cell.c — the LSTM cell and layer of lstm/ (lstm_cell.c, lstm_layer.c) and the
 * projection table (suite: lstm_cell).
 *
 * What each group proves:
 *   cell   — the forward pass is the equations of lstm.h in the gate order i, f, g, o
 *            (and its vectorised gates are lstm_cell_gates_reference, the plain loop
 *            beside them in lstm_cell.c), and its backward is the derivative of that
 *            forward for every input: pre-activation, h_prev, c_prev and Wh;
 *   layer  — the gradients of X, Wx, Wh, b and of the initial state (h_0, c_0) over T = 3
 *            steps, and that backward accumulates; the table's steps are the layer's.
 * Sizes are all different (B=2, T=3, E=5, H=4) so that a transposed index cannot pass by
 * accident; losses are Σ out ⊙ R with fixed random R. The model is test_lstm.c's.
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/gradcheck.h"
#include "../common/core/task.h"
#include "../lstm/lstm.h"
#include "testutil.h"

enum { NB = 2, NT = 3, NE = 5, NH = 4, NV = 7 }; /* B, T, E, H, data symbols */

/* Fails unless got = 2·once entry by entry, to 1e-12 of the largest |once| (sums formed
 * twice round differently, so "exactly double" holds only to rounding), and once ≠ 0
 * (zero gradients would double trivially). */
static void assert_doubled(const char *what, const double *got, const double *once, size_t n)
{
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(once[i]));
    ck_assert_msg(scale > 0.0, "%s: gradient is zero", what);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - 2.0 * once[i]) <= 1e-12 * scale,
                      "%s[%zu]: %.17g after two passes, %.17g after one", what, i, got[i],
                      once[i]);
}

/* ---- cell ------------------------------------------------------------------------------ */

typedef struct cell_case {
    gsl_matrix *pre;            /* (B,4H) input pre-activation x·Wxᵀ + b */
    gsl_matrix *h_prev, *c_prev; /* (B,H) */
    gsl_matrix *Wh;             /* (4H,H) */
    gsl_matrix *act, *h, *c;    /* (B,4H), (B,H), (B,H) outputs */
    gsl_matrix *Rh, *Rc;        /* (B,H) loss weights */
    int with_dc;                /* does the loss read c (so dc reaches the cell)? */
} cell_case;

static void cell_setup(cell_case *k, tu_pool *p, const gsl_rng *r)
{
    k->pre = tu_pool_new(p, NB, 4 * NH, 1.5, r);
    k->h_prev = tu_pool_new(p, NB, NH, 0.9, r);
    k->c_prev = tu_pool_new(p, NB, NH, 1.7, r);
    k->Wh = tu_pool_new(p, 4 * NH, NH, 0.8, r);
    k->act = tu_pool_new(p, NB, 4 * NH, 0, r);
    k->h = tu_pool_new(p, NB, NH, 0, r);
    k->c = tu_pool_new(p, NB, NH, 0, r);
    k->Rh = tu_pool_new(p, NB, NH, 1.3, r);
    k->Rc = tu_pool_new(p, NB, NH, 1.1, r);
}

/* L = Σ h ⊙ Rh (+ Σ c ⊙ Rc). The cell overwrites act, so each call starts from pre. */
static double cell_loss(void *ctx)
{
    cell_case *k = ctx;
    gsl_matrix_memcpy(k->act, k->pre);
    lstm_cell_forward(k->h, k->c, k->act, k->h_prev, k->c_prev, k->Wh);
    return tu_dot(k->h, k->Rh) + (k->with_dc ? tu_dot(k->c, k->Rc) : 0.0);
}

/* got within 1e-13 of want relatively, or 1e-15 absolutely: the cell's squashing
 * functions are exact to ~2e-16 in absolute terms, not relative ones near 0. */
#define assert_close(got, want)                                                           \
    do {                                                                                  \
        double g_ = (got), w_ = (want);                                                   \
        ck_assert_msg(fabs(g_ - w_) <= 1e-13 * fabs(w_) + 1e-15, "%s = %.17g, want %.17g", \
                      #got, g_, w_);                                                      \
    } while (0)

/* The vectorised gate kernel against its plain reference (libm, one element at a time):
 * H = 19 is two blocks of FM_LANES and a tail, so both loops run; pre-activations span
 * the saturated ranges too (±40) and the ends (±1e3). */
START_TEST(test_gates_match_reference)
{
    enum { B = 3, H = 19 };
    gsl_rng *r = tu_rng(77);
    tu_pool p = {0};
    gsl_matrix *pre = tu_pool_new(&p, B, 4 * H, 40.0, r), *c_prev = tu_pool_new(&p, B, H, 3.0, r);
    gsl_matrix_set(pre, 0, 0, 1e3);
    gsl_matrix_set(pre, 1, H + 2, -1e3);
    gsl_matrix_set(pre, 2, 3 * H + 18, -1e3); /* in the tail */
    gsl_matrix *a1 = tu_pool_new(&p, B, 4 * H, 0, r), *a2 = tu_pool_new(&p, B, 4 * H, 0, r);
    gsl_matrix *h1 = tu_pool_new(&p, B, H, 0, r), *h2 = tu_pool_new(&p, B, H, 0, r);
    gsl_matrix *c1 = tu_pool_new(&p, B, H, 0, r), *c2 = tu_pool_new(&p, B, H, 0, r);
    gsl_matrix *h0 = tu_pool_new(&p, B, H, 0, r), *Wh = tu_pool_new(&p, 4 * H, H, 0.5, r);
    gsl_matrix_memcpy(a1, pre);
    gsl_matrix_memcpy(a2, pre);
    lstm_cell_forward(h1, c1, a1, h0, c_prev, Wh); /* h_prev = 0: the GEMM adds nothing */
    lstm_cell_gates_reference(h2, c2, a2, c_prev);
    const gsl_matrix *got[3] = {a1, h1, c1}, *want[3] = {a2, h2, c2};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < got[k]->size1; i++)
            for (size_t j = 0; j < got[k]->size2; j++) {
                const double g = gsl_matrix_get(got[k], i, j), w = gsl_matrix_get(want[k], i, j);
                ck_assert_msg(fabs(g - w) <= 1e-15 * fmax(1.0, fabs(w)),
                              "output %zu [%zu][%zu]: %.17g, reference %.17g", k, i, j, g, w);
            }
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

/* A step whose input part is read from the table gives the bits of a step whose input
 * part was copied into act first: h_prev·Whᵀ + P[id] is the same sum either way. H = 19
 * runs the vector blocks and the tail; ids repeat and skip rows. */
START_TEST(test_cell_table_same_bits)
{
    enum { B = 3, H = 19, V = 5 };
    const int ids[B] = {4, 1, 4};
    gsl_rng *r = tu_rng(78);
    tu_pool p = {0};
    gsl_matrix *P = tu_pool_new(&p, V, 4 * H, 2.0, r), *Wh = tu_pool_new(&p, 4 * H, H, 0.5, r);
    gsl_matrix *h0 = tu_pool_new(&p, B, H, 0.9, r), *c0 = tu_pool_new(&p, B, H, 1.7, r);
    gsl_matrix *a1 = tu_pool_new(&p, B, 4 * H, 0, r), *a2 = tu_pool_new(&p, B, 4 * H, 3.0, r);
    gsl_matrix *h1 = tu_pool_new(&p, B, H, 0, r), *h2 = tu_pool_new(&p, B, H, 0, r);
    gsl_matrix *c1 = tu_pool_new(&p, B, H, 0, r), *c2 = tu_pool_new(&p, B, H, 0, r);
    for (size_t b = 0; b < B; b++) {
        gsl_vector_const_view row = gsl_matrix_const_row(P, (size_t)ids[b]);
        gsl_matrix_set_row(a1, b, &row.vector);
    }
    lstm_cell_forward(h1, c1, a1, h0, c0, Wh);
    lstm_cell_forward_table(h2, c2, a2, h0, c0, P, ids, Wh); /* a2 holds noise on entry */
    const gsl_matrix *got[3] = {a2, h2, c2}, *want[3] = {a1, h1, c1};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < got[k]->size1; i++)
            for (size_t j = 0; j < got[k]->size2; j++)
                ck_assert_msg(gsl_matrix_get(got[k], i, j) == gsl_matrix_get(want[k], i, j),
                              "output %zu [%zu][%zu]: %.17g, copied rows %.17g", k, i, j,
                              gsl_matrix_get(got[k], i, j), gsl_matrix_get(want[k], i, j));
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

/* The cell against the equations of lstm.h written out as scalar loops. */
START_TEST(test_cell_matches_equations)
{
    gsl_rng *r = tu_rng(11);
    tu_pool p = {0};
    cell_case k = {0}; /* with_dc 0: the loss reads only h here */
    cell_setup(&k, &p, r);
    cell_loss(&k);
    for (size_t b = 0; b < NB; b++)
        for (size_t j = 0; j < NH; j++) {
            double a[4]; /* i, f, g, o pre-activations of unit j */
            for (size_t q = 0; q < 4; q++) {
                a[q] = gsl_matrix_get(k.pre, b, q * NH + j);
                for (size_t u = 0; u < NH; u++)
                    a[q] += gsl_matrix_get(k.h_prev, b, u) * gsl_matrix_get(k.Wh, q * NH + j, u);
            }
            double i = tu_sigmoid_ref(a[0]), f = tu_sigmoid_ref(a[1]), g = tanh(a[2]);
            double o = tu_sigmoid_ref(a[3]);
            double c = f * gsl_matrix_get(k.c_prev, b, j) + i * g;
            assert_close(gsl_matrix_get(k.act, b, j), i);
            assert_close(gsl_matrix_get(k.act, b, NH + j), f);
            assert_close(gsl_matrix_get(k.act, b, 2 * NH + j), g);
            assert_close(gsl_matrix_get(k.act, b, 3 * NH + j), o);
            assert_close(gsl_matrix_get(k.c, b, j), c);
            assert_close(gsl_matrix_get(k.h, b, j), o * tanh(c));
        }
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

/* Gradients of the cell's inputs; _i = 1 also sends dc (the loss reads c), _i = 0 passes
 * dc = NULL. dWh is formed as the layer forms it, dpreᵀ · h_prev. */
START_TEST(test_cell_gradcheck)
{
    gsl_rng *r = tu_rng(12);
    tu_pool p = {0};
    cell_case k;
    cell_setup(&k, &p, r);
    k.with_dc = _i;
    gsl_matrix *dpre = tu_pool_new(&p, NB, 4 * NH, 0, r);
    gsl_matrix *dh_prev = tu_pool_new(&p, NB, NH, 0, r);
    gsl_matrix *dc_prev = tu_pool_new(&p, NB, NH, 0, r);
    gsl_matrix *dWh = tu_pool_new(&p, 4 * NH, NH, 0, r);

    cell_loss(&k);
    lstm_cell_backward(dpre, dh_prev, dc_prev, k.Rh, k.with_dc ? k.Rc : NULL, k.act, k.c,
                       k.c_prev, k.Wh);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dpre, k.h_prev, 0.0, dWh);

    tu_gradcheck("cell pre-activation", cell_loss, &k, k.pre, dpre);
    tu_gradcheck("cell h_prev", cell_loss, &k, k.h_prev, dh_prev);
    tu_gradcheck("cell c_prev", cell_loss, &k, k.c_prev, dc_prev);
    tu_gradcheck("cell Wh", cell_loss, &k, k.Wh, dWh);
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

/* ---- layer ----------------------------------------------------------------------------- */

typedef struct layer_case {
    gsl_matrix *X;                /* (T·B,E) */
    gsl_matrix *Hs, *Cs;          /* ((T+1)·B,H); block 0 = (h_0, c_0), an input */
    gsl_matrix *Act;              /* (T·B,4H) */
    lstm_weights w, dw;           /* Wx (4H,E), Wh (4H,H), b (1,4H) */
    gsl_matrix *dX, *dPre;        /* (T·B,E), (T·B,4H) */
    gsl_matrix *dHs, *dCs;        /* ((T+1)·B,H) */
    gsl_matrix *R;                /* (T·B,H) weight of h_1..h_T in the loss */
    gsl_matrix *Rc;               /* (B,H) weight of c_T */
} layer_case;

static void layer_setup(layer_case *k, tu_pool *p, const gsl_rng *r)
{
    k->X = tu_pool_new(p, NT * NB, NE, 1.2, r);
    k->Hs = tu_pool_new(p, (NT + 1) * NB, NH, 0.7, r);
    k->Cs = tu_pool_new(p, (NT + 1) * NB, NH, 1.4, r);
    k->Act = tu_pool_new(p, NT * NB, 4 * NH, 0, r);
    k->w.Wx = tu_pool_new(p, 4 * NH, NE, 0.6, r);
    k->w.Wh = tu_pool_new(p, 4 * NH, NH, 0.7, r);
    k->w.b = tu_pool_new(p, 1, 4 * NH, 0.5, r);
    k->dw.Wx = tu_pool_new(p, 4 * NH, NE, 0, r);
    k->dw.Wh = tu_pool_new(p, 4 * NH, NH, 0, r);
    k->dw.b = tu_pool_new(p, 1, 4 * NH, 0, r);
    k->dX = tu_pool_new(p, NT * NB, NE, 0, r);
    k->dPre = tu_pool_new(p, NT * NB, 4 * NH, 0, r);
    k->dHs = tu_pool_new(p, (NT + 1) * NB, NH, 0, r);
    k->dCs = tu_pool_new(p, (NT + 1) * NB, NH, 0, r);
    k->R = tu_pool_new(p, NT * NB, NH, 1.3, r);
    k->Rc = tu_pool_new(p, NB, NH, 0.9, r);
}

/* L = Σ_t h_t ⊙ R_t + Σ c_T ⊙ Rc: every output step and the final cell reach the loss. */
static double layer_loss(void *ctx)
{
    layer_case *k = ctx;
    lstm_layer_forward(k->Hs, k->Cs, k->Act, k->X, &k->w, NB);
    gsl_matrix_view h = gsl_matrix_submatrix(k->Hs, NB, 0, NT * NB, NH);
    gsl_matrix_view cT = model_block(k->Cs, NT, NB);
    return tu_dot(&h.matrix, k->R) + tu_dot(&cT.matrix, k->Rc);
}

/* Forward, then backward of layer_loss: blocks 1..T of dHs and dCs get the outside
 * gradients (R, and Rc at T); block 0 is left alone, so it accumulates. */
static void layer_pass(layer_case *k)
{
    layer_loss(k);
    gsl_matrix_view dh = gsl_matrix_submatrix(k->dHs, NB, 0, NT * NB, NH);
    gsl_matrix_view dc = gsl_matrix_submatrix(k->dCs, NB, 0, NT * NB, NH);
    gsl_matrix_view dcT = model_block(k->dCs, NT, NB);
    gsl_matrix_memcpy(&dh.matrix, k->R);
    gsl_matrix_set_zero(&dc.matrix);
    gsl_matrix_memcpy(&dcT.matrix, k->Rc);
    lstm_layer_backward(k->dX, &k->dw, k->dPre, k->dHs, k->dCs, k->X, k->Hs, k->Cs, k->Act,
                        &k->w, NB);
}

START_TEST(test_layer_gradcheck)
{
    gsl_rng *r = tu_rng(21);
    tu_pool p = {0};
    layer_case k;
    layer_setup(&k, &p, r);
    layer_pass(&k);
    gsl_matrix_view h0 = model_block(k.Hs, 0, NB), c0 = model_block(k.Cs, 0, NB);
    gsl_matrix_view dh0 = model_block(k.dHs, 0, NB), dc0 = model_block(k.dCs, 0, NB);
    tu_gradcheck("layer X", layer_loss, &k, k.X, k.dX);
    tu_gradcheck("layer Wx", layer_loss, &k, k.w.Wx, k.dw.Wx);
    tu_gradcheck("layer Wh", layer_loss, &k, k.w.Wh, k.dw.Wh);
    tu_gradcheck("layer b", layer_loss, &k, k.w.b, k.dw.b);
    tu_gradcheck("layer h_0", layer_loss, &k, &h0.matrix, &dh0.matrix);
    tu_gradcheck("layer c_0", layer_loss, &k, &c0.matrix, &dc0.matrix);
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

/* Two backward passes give twice the gradients: weights, inputs and initial state. */
START_TEST(test_layer_accumulates)
{
    gsl_rng *r = tu_rng(22);
    tu_pool p = {0};
    layer_case k;
    layer_setup(&k, &p, r);
    gsl_matrix *got[] = {k.dw.Wx, k.dw.Wh, k.dw.b, k.dX, k.dHs, k.dCs};
    const char *name[] = {"dWx", "dWh", "db", "dX", "dh_0", "dc_0"};
    gsl_matrix *once[6];
    layer_pass(&k);
    for (size_t q = 0; q < 6; q++) {
        once[q] = tu_pool_new(&p, got[q]->size1, got[q]->size2, 0, r);
        gsl_matrix_memcpy(once[q], got[q]);
    }
    layer_pass(&k);
    for (size_t q = 0; q < 4; q++)
        assert_doubled(name[q], got[q]->data, once[q]->data, got[q]->size1 * got[q]->size2);
    /* of dHs and dCs only block 0 accumulates; the others are working storage */
    for (size_t q = 4; q < 6; q++)
        assert_doubled(name[q], got[q]->data, once[q]->data, NB * NH);
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

/* ---- the projection table --------------------------------------------------------- */

/* Inputs that are tokens: the table path (P = embed·Wxᵀ + b, gather, recurrence) against
 * the layer on the embedded inputs X = embed[ids], forward and backward: the same states,
 * and the same gradients of embed (through dX), Wx, b, Wh, to rounding. */
START_TEST(test_table_matches_layer)
{
    enum { NIDS = NT * NB };
    gsl_rng *r = tu_rng(31);
    tu_pool p = {0};
    layer_case k;
    layer_setup(&k, &p, r);
    const int ids[NIDS] = {3, 0, 6, 3, 1, 6};
    gsl_matrix *embed = tu_pool_new(&p, NV, NE, 1.1, r);
    op_embed(k.X, embed, ids, NIDS);

    /* the layer on X, then X's gradient scattered into the table's */
    layer_pass(&k);
    gsl_matrix *dembed_ref = tu_pool_new(&p, NV, NE, 0, r);
    op_embed_backward(dembed_ref, k.dX, ids, NIDS);

    /* the table path, on copies of everything it writes */
    const size_t S = (NT + 1) * NB; /* state rows */
    gsl_matrix *Hs = tu_pool_new(&p, S, NH, 0, r), *Cs = tu_pool_new(&p, S, NH, 0, r);
    gsl_matrix *dHs = tu_pool_new(&p, S, NH, 0, r), *dCs = tu_pool_new(&p, S, NH, 0, r);
    gsl_matrix *Act = tu_pool_new(&p, NIDS, 4 * NH, 0, r), *dPre = tu_pool_new(&p, NIDS, 4 * NH, 0, r);
    gsl_matrix *P = tu_pool_new(&p, NV, 4 * NH, 0, r), *dP = tu_pool_new(&p, NV, 4 * NH, 0, r);
    gsl_matrix *dembed = tu_pool_new(&p, NV, NE, 0, r);
    lstm_weights dw = {tu_pool_new(&p, 4 * NH, NE, 0, r), tu_pool_new(&p, 4 * NH, NH, 0, r),
                       tu_pool_new(&p, 1, 4 * NH, 0, r)};
    gsl_matrix_view h0 = model_block(k.Hs, 0, NB), c0 = model_block(k.Cs, 0, NB);
    gsl_matrix_view h0t = model_block(Hs, 0, NB), c0t = model_block(Cs, 0, NB);
    gsl_matrix_memcpy(&h0t.matrix, &h0.matrix);
    gsl_matrix_memcpy(&c0t.matrix, &c0.matrix);
    lstm_table_forward(P, embed, &k.w);
    lstm_recur_forward_table(Hs, Cs, Act, P, ids, k.w.Wh, NB);
    gsl_matrix_view dh = gsl_matrix_submatrix(dHs, NB, 0, NT * NB, NH);
    gsl_matrix_view dcT = model_block(dCs, NT, NB);
    gsl_matrix_memcpy(&dh.matrix, k.R);
    gsl_matrix_memcpy(&dcT.matrix, k.Rc);
    lstm_recur_backward(dw.Wh, dPre, dHs, dCs, Hs, Cs, Act, k.w.Wh, NB);
    lstm_table_backward(dembed, &dw, dP, dPre, ids, embed, &k.w);

    const gsl_matrix *got[] = {Hs, Cs, dembed, dw.Wx, dw.b, dw.Wh, dHs, dCs};
    const gsl_matrix *want[] = {k.Hs, k.Cs, dembed_ref, k.dw.Wx, k.dw.b, k.dw.Wh, k.dHs, k.dCs};
    for (size_t t = 0; t < sizeof got / sizeof got[0]; t++)
        for (size_t i = 0; i < got[t]->size1; i++)
            for (size_t j = 0; j < got[t]->size2; j++) {
                const double g = gsl_matrix_get(got[t], i, j);
                const double w = gsl_matrix_get(want[t], i, j);
                ck_assert_msg(fabs(g - w) <= 1e-13 * fmax(1.0, fabs(w)),
                              "tensor %zu [%zu][%zu]: table %.17g, layer %.17g", t, i, j, g, w);
            }
    tu_pool_free(&p);
    gsl_rng_free(r);
}
END_TEST

Suite *make_lstm_cell_suite(void)
{
    Suite *s = suite_create("lstm_cell");
    TCase *cell = tcase_create("cell");
    tcase_add_test(cell, test_gates_match_reference);
    tcase_add_test(cell, test_cell_table_same_bits);
    tcase_add_test(cell, test_cell_matches_equations);
    tcase_add_loop_test(cell, test_cell_gradcheck, 0, 2); /* without, with dc */
    suite_add_tcase(s, cell);

    TCase *layer = tcase_create("layer");
    tcase_add_test(layer, test_layer_gradcheck);
    tcase_add_test(layer, test_layer_accumulates);
    tcase_add_test(layer, test_table_matches_layer);
    suite_add_tcase(s, layer);
    return s;
}
