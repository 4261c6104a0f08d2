/* test_gru.c — the GRU cell and layer of rnn_attention/gru.c (suite: gru).
 *
 * Design. The cell's forward pass is held to the equations of gru.h written as plain
 * scalar loops (its gates to gru_cell_gates_reference, the plain loop beside the kernel
 * in gru.c), its backward and the layer's (T = 3 steps, initial state included) to
 * central differences; the layer is the cell applied step by step. Sizes are all
 * different (B = 2, T = 3, E = 5, H = 6) so a transposed index cannot pass by accident,
 * and the loss Σ out ⊙ R with a fixed random R gives every output entry its own weight.
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

/* ---- the GRU cell ------------------------------------------------------------------------ */

typedef struct cell_case {
    gsl_matrix *xp, *h_prev, *Wh, *bh; /* what the gradients are taken of */
    gsl_matrix *h, *act, *hp, *R;      /* output, cache, loss weights */
} cell_case;

static void cell_case_init(cell_case *c, const gsl_rng *r)
{
    c->xp = tu_rand_matrix(NB, 3 * NH, 1.3, r);
    c->h_prev = tu_rand_matrix(NB, NH, 0.9, r);
    c->Wh = tu_rand_matrix(3 * NH, NH, 0.6, r);
    c->bh = tu_rand_matrix(1, 3 * NH, 0.5, r);
    c->h = tu_zero_matrix(NB, NH);
    c->act = tu_zero_matrix(NB, 3 * NH);
    c->hp = tu_zero_matrix(NB, 3 * NH);
    c->R = tu_rand_matrix(NB, NH, 1.0, r);
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

/* The cell against PyTorch's equations: its recurrent part hp = h_prev·Whᵀ + bh against
 * the sums written out plainly, its gates and new state against gru_cell_gates_reference
 * (gru.c, the plain loop beside the kernel) run on those sums. */
START_TEST(test_gru_cell_matches_equations)
{
    gsl_rng *r = tu_rng(101);
    cell_case c;
    cell_case_init(&c, r);
    cell_loss(&c);
    gsl_matrix *hp = tu_zero_matrix(NB, 3 * NH), *act = tu_zero_matrix(NB, 3 * NH);
    gsl_matrix *h = tu_zero_matrix(NB, NH);
    for (size_t b = 0; b < NB; b++)
        for (size_t q = 0; q < 3 * NH; q++) { /* (U h + b_h) of gate row q */
            double u = gsl_matrix_get(c.bh, 0, q);
            for (size_t k = 0; k < NH; k++)
                u += gsl_matrix_get(c.Wh, q, k) * gsl_matrix_get(c.h_prev, b, k);
            gsl_matrix_set(hp, b, q, u);
            tu_assert_rel(gsl_matrix_get(c.hp, b, q), u, 1e-13);
        }
    gsl_matrix_memcpy(act, c.xp);
    gru_cell_gates_reference(h, act, hp, c.h_prev);
    for (size_t b = 0; b < NB; b++)
        for (size_t i = 0; i < NH; i++) {
            tu_assert_rel(gsl_matrix_get(c.h, b, i), gsl_matrix_get(h, b, i), 1e-13);
            for (size_t g = 0; g < 3; g++) /* r, z, n */
                tu_assert_rel(gsl_matrix_get(c.act, b, g * NH + i),
                              gsl_matrix_get(act, b, g * NH + i), 1e-13);
        }
    gsl_matrix_free(hp);
    gsl_matrix_free(act);
    gsl_matrix_free(h);
    cell_case_free(&c);
    gsl_rng_free(r);
}
END_TEST

/* The kernel's σ and tanh are within an ulp or two of libm's, and it forms h' as
 * n + z⊙(h − n): a few ulps of the largest of 1 and |h'| apart. */
#define GRU_GATES_TOL 1e-15

/* The vectorised gate kernel against its plain reference (libm, one element at a time)
 * on the recurrent part the kernel formed: H = 19 is two blocks of FM_LANES and a tail,
 * so both loops run; input parts span the saturated ranges too (±40) and the ends
 * (±1e3). */
START_TEST(test_gru_gates_match_reference)
{
    enum { B = 3, H = 19 };
    gsl_rng *r = tu_rng(103);
    gsl_matrix *xp = tu_rand_matrix(B, 3 * H, 40.0, r), *h_prev = tu_rand_matrix(B, H, 3.0, r);
    gsl_matrix *Wh = tu_rand_matrix(3 * H, H, 0.5, r), *bh = tu_rand_matrix(1, 3 * H, 0.5, r);
    gsl_matrix_set(xp, 0, 0, 1e3);
    gsl_matrix_set(xp, 1, H + 2, -1e3);
    gsl_matrix_set(xp, 2, 2 * H + 18, -1e3); /* in the tail */
    gsl_matrix *a1 = tu_zero_matrix(B, 3 * H), *a2 = tu_zero_matrix(B, 3 * H);
    gsl_matrix *hp = tu_zero_matrix(B, 3 * H);
    gsl_matrix *h1 = tu_zero_matrix(B, H), *h2 = tu_zero_matrix(B, H);
    gsl_matrix_memcpy(a1, xp);
    gsl_matrix_memcpy(a2, xp);
    gru_cell_forward(h1, a1, hp, h_prev, Wh, bh);
    gru_cell_gates_reference(h2, a2, hp, h_prev);
    const gsl_matrix *got[2] = {a1, h1}, *want[2] = {a2, h2};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < got[k]->size1; i++)
            for (size_t j = 0; j < got[k]->size2; j++) {
                const double g = gsl_matrix_get(got[k], i, j), w = gsl_matrix_get(want[k], i, j);
                ck_assert_msg(fabs(g - w) <= GRU_GATES_TOL * fmax(1.0, fabs(w)),
                              "output %zu [%zu][%zu]: %.17g, reference %.17g", k, i, j, g, w);
            }
    gsl_matrix *all[] = {xp, h_prev, Wh, bh, a1, a2, hp, h1, h2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        gsl_matrix_free(all[k]);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_gru_cell_gradcheck)
{
    gsl_rng *r = tu_rng(102);
    cell_case c;
    cell_case_init(&c, r);
    gsl_matrix *dxp = tu_zero_matrix(NB, 3 * NH), *dhp = tu_zero_matrix(NB, 3 * NH);
    gsl_matrix *dh_prev = tu_zero_matrix(NB, NH), *dWh = tu_zero_matrix(3 * NH, NH);
    gsl_matrix *dbh = tu_zero_matrix(1, 3 * NH);

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
    tu_report_max("rnnattn", "gru_cell", err);

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
    c->X = tu_rand_matrix(LT * NB, NE, 1.0, r);
    c->h0 = tu_rand_matrix(NB, NH, 0.8, r);
    c->w.Wx = tu_rand_matrix(3 * NH, NE, 0.5, r);
    c->w.Wh = tu_rand_matrix(3 * NH, NH, 0.5, r);
    c->w.bx = tu_rand_matrix(1, 3 * NH, 0.4, r);
    c->w.bh = tu_rand_matrix(1, 3 * NH, 0.4, r);
    c->Hs = tu_zero_matrix((LT + 1) * NB, NH);
    c->Act = tu_zero_matrix(LT * NB, 3 * NH);
    c->HP = tu_zero_matrix(LT * NB, 3 * NH);
    c->R = tu_rand_matrix(LT * NB, NH, 1.0, r);
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
    gsl_matrix_view h0 = tu_step_block(c->Hs, 0, NB);
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
    gru_weights dw = {tu_zero_matrix(3 * NH, NE), tu_zero_matrix(3 * NH, NH), tu_zero_matrix(1, 3 * NH),
                      tu_zero_matrix(1, 3 * NH)};
    gsl_matrix *dX = tu_zero_matrix(LT * NB, NE), *dHs = tu_zero_matrix((LT + 1) * NB, NH);
    gsl_matrix *dXP = tu_zero_matrix(LT * NB, 3 * NH), *dHP = tu_zero_matrix(LT * NB, 3 * NH);

    layer_loss(&c);
    gsl_matrix_view dout = gsl_matrix_submatrix(dHs, NB, 0, LT * NB, NH);
    gsl_matrix_memcpy(&dout.matrix, c.R); /* the gradient from outside: R; none on h_0 */
    gru_layer_backward(dX, &dw, dXP, dHP, dHs, c.X, c.Hs, c.Act, c.HP, &c.w, NB);
    gsl_matrix_view dh0 = tu_step_block(dHs, 0, NB);

    double err = 0.0;
    err = fmax(err, tu_gradcheck("layer X", layer_loss, &c, c.X, dX));
    err = fmax(err, tu_gradcheck("layer h0", layer_loss, &c, c.h0, &dh0.matrix));
    err = fmax(err, tu_gradcheck("layer Wx", layer_loss, &c, c.w.Wx, dw.Wx));
    err = fmax(err, tu_gradcheck("layer Wh", layer_loss, &c, c.w.Wh, dw.Wh));
    err = fmax(err, tu_gradcheck("layer bx", layer_loss, &c, c.w.bx, dw.bx));
    err = fmax(err, tu_gradcheck("layer bh", layer_loss, &c, c.w.bh, dw.bh));
    tu_report_max("rnnattn", "gru_layer (T=3)", err);

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
        gsl_matrix_view x = tu_step_block(c.X, t, NB);
        /* a = x·Wxᵀ + bx, the input part, by hand */
        for (size_t b = 0; b < NB; b++)
            for (size_t i = 0; i < 3 * NH; i++) {
                double s = gsl_matrix_get(c.w.bx, 0, i);
                for (size_t k = 0; k < NE; k++)
                    s += gsl_matrix_get(&x.matrix, b, k) * gsl_matrix_get(c.w.Wx, i, k);
                gsl_matrix_set(a, b, i, s);
            }
        gru_cell_forward(h, a, p, hprev, c.w.Wh, c.w.bh);
        gsl_matrix_view ht = tu_step_block(c.Hs, t + 1, NB);
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

Suite *make_gru_suite(void)
{
    Suite *s = suite_create("gru");

    TCase *gru = tcase_create("gru");
    tcase_add_test(gru, test_gru_cell_matches_equations);
    tcase_add_test(gru, test_gru_gates_match_reference);
    tcase_add_test(gru, test_gru_cell_gradcheck);
    tcase_add_test(gru, test_gru_layer_gradcheck);
    tcase_add_test(gru, test_gru_layer_is_cell_loop);
    suite_add_tcase(s, gru);
    return s;
}
