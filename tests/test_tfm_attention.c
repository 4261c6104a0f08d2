/* test_tfm_attention.c — scaled dot-product and multi-head attention of
 * transformer/attention.c (suite: tfm_attention).
 *
 * Design. Gradient checks on sizes that are all different (so a transposed index cannot
 * hide), with non-round random values and the loss Σ out ⊙ R for a fixed random R, every
 * entry held to GRADCHECK_TOL; the forward against its plain reference beside it in
 * attention.c (tfm_attention_reference), the softmax kernels against common/'s plain
 * ones; masked entries exactly 0, a fully masked row, one query, and the cached
 * attention of decoding against recomputing. Set TFM_REPORT=1 to print the largest
 * relative error of every gradient check, TFM_REPORT=2 to add every tensor's.
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

/* ---- scaled dot-product attention ------------------------------------------------------ */

/* Sizes all different: Tq, Tk, dk = D/NH, D, NH. Kind 0: no mask; 1: causal (Tq = Tk);
 * 2: a ragged mask whose row 1 is masked everywhere. The last two are long enough for
 * two row blocks (of 32 rows), each against the keys its rows may see. */
static const struct {
    size_t Tq, Tk;
    int mask;
} attn_cases[] = {{3, 4, 0}, {4, 4, 1}, {3, 5, 2}, {40, 40, 1}, {37, 43, 2}};
#define ATTN_CASES 5
#define ATTN_TQ_MAX 40
#define ATTN_TK_MAX 43
#define ATTN_D 14
#define ATTN_NH 2

/* The weights kept (P) or not (NULL: the backward makes them again from stat). */
typedef struct attn_ctx {
    gsl_matrix *Q, *K, *Vm, *O, *P, *M, *R;
    int keep;
    double stat[2 * ATTN_NH * ATTN_TQ_MAX], scratch[2 * ATTN_TQ_MAX * ATTN_TK_MAX];
} attn_ctx;

static double attn_loss(void *p)
{
    attn_ctx *c = p;
    tfm_attention_forward(c->O, c->keep ? c->P : NULL, c->stat, c->scratch, c->Q, c->K, c->Vm,
                          c->M, ATTN_NH);
    return tu_dot(c->O, c->R);
}

static gsl_matrix *ragged_mask(size_t Tq, size_t Tk)
{
    gsl_matrix *M = gsl_matrix_alloc(Tq, Tk);
    for (size_t i = 0; i < Tq; i++)
        for (size_t j = 0; j < Tk; j++)
            gsl_matrix_set(M, i, j, (j > i + 1 || i == 1) ? -INFINITY : 0.0);
    return M;
}

/* _i: case _i % ATTN_CASES, weights kept when _i < ATTN_CASES. */
START_TEST(test_attention_gradcheck)
{
    const int ci = _i % ATTN_CASES;
    const size_t Tq = attn_cases[ci].Tq, Tk = attn_cases[ci].Tk, D = ATTN_D;
    gsl_rng *r = tu_rng(11 + (unsigned long)ci);
    attn_ctx c = {gsl_matrix_alloc(Tq, D), gsl_matrix_alloc(Tk, D), gsl_matrix_alloc(Tk, D),
                  gsl_matrix_alloc(Tq, D), gsl_matrix_alloc(ATTN_NH * Tq, Tk), NULL,
                  gsl_matrix_alloc(Tq, D), .keep = _i < ATTN_CASES};
    if (attn_cases[ci].mask == 1)
        c.M = tt_causal_mask(Tq);
    else if (attn_cases[ci].mask == 2)
        c.M = ragged_mask(Tq, Tk);
    tu_fill(c.Q, 1.0, r);
    tu_fill(c.K, 1.0, r);
    tu_fill(c.Vm, 1.0, r);
    tu_fill(c.R, 1.0, r);
    gsl_matrix *dQ = gsl_matrix_calloc(Tq, D), *dK = gsl_matrix_calloc(Tk, D),
               *dV = gsl_matrix_calloc(Tk, D);
    attn_loss(&c);
    gsl_matrix *O = gsl_matrix_alloc(Tq, D);
    tfm_attention_reference(O, c.Q, c.K, c.Vm, c.M, ATTN_NH);
    for (size_t i = 0; i < Tq; i++)
        for (size_t d = 0; d < D; d++)
            ck_assert_msg(fabs(gsl_matrix_get(O, i, d) - gsl_matrix_get(c.O, i, d)) < 1e-13,
                          "O(%zu, %zu): %.17g vs %.17g by the definition", i, d,
                          gsl_matrix_get(c.O, i, d), gsl_matrix_get(O, i, d));
    gsl_matrix_free(O);
    if (c.keep) /* kept weights are whole rows, 0 where masked */
        for (size_t i = 0; i < ATTN_NH * Tq; i++)
            for (size_t k = 0; k < Tk; k++)
                if (c.M && gsl_matrix_get(c.M, i % Tq, k) == -INFINITY)
                    ck_assert(gsl_matrix_get(c.P, i, k) == 0.0);
    tfm_attention_backward(dQ, dK, dV, c.scratch, c.R, c.Q, c.K, c.Vm, c.M,
                           c.keep ? c.P : NULL, c.stat, ATTN_NH);
    double err = tu_gradcheck("dQ", attn_loss, &c, c.Q, dQ);
    err = fmax(err, tu_gradcheck("dK", attn_loss, &c, c.K, dK));
    err = fmax(err, tu_gradcheck("dV", attn_loss, &c, c.Vm, dV));
    static const char *const kinds[] = {"", " causal", " ragged"};
    char what[64];
    snprintf(what, sizeof what, "attention %zux%zu%s%s", Tq, Tk, kinds[attn_cases[ci].mask],
             c.keep ? "" : ", again");
    tt_report(what, err);
    gsl_matrix *all[] = {c.Q, c.K, c.Vm, c.O, c.P, c.R, dQ, dK, dV, c.M};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k])
            gsl_matrix_free(all[k]);
    gsl_rng_free(r);
}
END_TEST

/* A row masked everywhere gives weights 0 and output 0, never NaN, forward and backward,
 * with the weights kept (_i = 0) or made again in the backward (_i = 1). */
START_TEST(test_attention_fully_masked_row)
{
    const size_t Tq = 3, Tk = 5, D = ATTN_D;
    gsl_rng *r = tu_rng(5);
    gsl_matrix *Q = gsl_matrix_alloc(Tq, D), *K = gsl_matrix_alloc(Tk, D),
               *Vm = gsl_matrix_alloc(Tk, D), *O = gsl_matrix_alloc(Tq, D),
               *P = gsl_matrix_alloc(ATTN_NH * Tq, Tk), *dO = gsl_matrix_alloc(Tq, D);
    gsl_matrix *M = ragged_mask(Tq, Tk); /* row 1: −∞ everywhere */
    gsl_matrix *dQ = gsl_matrix_calloc(Tq, D), *dK = gsl_matrix_calloc(Tk, D),
               *dV = gsl_matrix_calloc(Tk, D);
    tu_fill(Q, 1.0, r);
    tu_fill(K, 1.0, r);
    tu_fill(Vm, 1.0, r);
    tu_fill(dO, 1.0, r);
    double scratch[2 * 3 * 5], stat[2 * ATTN_NH * 3]; /* 2·Tq·Tk; 2·NH·Tq */
    tfm_attention_forward(O, P, stat, scratch, Q, K, Vm, M, ATTN_NH);
    tfm_attention_backward(dQ, dK, dV, scratch, dO, Q, K, Vm, M, _i ? NULL : P, stat, ATTN_NH);
    for (size_t j = 0; j < ATTN_NH; j++)
        for (size_t k = 0; k < Tk; k++)
            ck_assert(gsl_matrix_get(P, j * Tq + 1, k) == 0.0);
    for (size_t d = 0; d < D; d++) {
        ck_assert(gsl_matrix_get(O, 1, d) == 0.0);
        ck_assert(gsl_matrix_get(dQ, 1, d) == 0.0);
    }
    gsl_matrix *all[] = {O, P, dQ, dK, dV};
    for (size_t k = 0; k < 5; k++)
        for (size_t i = 0; i < all[k]->size1; i++)
            for (size_t j = 0; j < all[k]->size2; j++)
                ck_assert(isfinite(gsl_matrix_get(all[k], i, j)));
    gsl_matrix *mats[] = {Q, K, Vm, O, P, dO, M, dQ, dK, dV};
    for (size_t k = 0; k < sizeof mats / sizeof mats[0]; k++)
        gsl_matrix_free(mats[k]);
    gsl_rng_free(r);
}
END_TEST

/* The vectorised softmax kernels against the plain references in common/: the forward
 * (and its replay from the row's statistics, which must give the same bits)
 * against op_softmax_row on x + m, the in-place backward against op_softmax_row_backward
 * into a zeroed dx, to within a few ulps (fm_exp is within 1 ulp of exp, and the sums run
 * in FM_LANES partial sums), and exactly where it matters: masked entries 0, NaN rows all
 * NaN. Rows of 21 entries (two blocks of FM_LANES and a tail) and of 5 (a tail only):
 * unmasked, partly masked, fully masked, a NaN among finite scores, a NaN among masked
 * ones. */
static int same_number(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int close_number(double a, double b, double tol)
{
    return same_number(a, b) || fabs(a - b) <= tol;
}

START_TEST(test_softmax_kernels_match_reference)
{
    gsl_rng *r = tu_rng(3);
    for (size_t n = 5; n <= 21; n += 16)
        for (int kind = 0; kind < 5; kind++) {
            double x[21], m[21], ref[21], dy[21], d[21], dref[21] = {0}, s[21], stat[2];
            for (size_t k = 0; k < n; k++) {
                x[k] = 8.0 * (gsl_rng_uniform(r) - 0.5);
                m[k] = (kind == 2 || kind == 4 || (kind == 1 && k % 3 == 1)) ? -INFINITY
                                                                             : 0.0;
                dy[k] = d[k] = gsl_rng_uniform(r) - 0.5;
            }
            if (kind >= 3)
                x[2] = NAN;
            for (size_t k = 0; k < n; k++) {
                ref[k] = x[k] + m[k];
                s[k] = x[k];
            }
            op_softmax_row_stat(x, kind ? m : NULL, n, stat);
            /* made again from the same scores and the statistics: the same bits */
            op_softmax_row_replay(s, kind ? m : NULL, n, stat);
            for (size_t k = 0; k < n; k++)
                ck_assert_msg(same_number(s[k], x[k]) && signbit(s[k]) == signbit(x[k]),
                              "replay, n %zu, row kind %d, entry %zu: %.17g vs %.17g", n,
                              kind, k, s[k], x[k]);
            op_softmax_row(ref, n);
            op_softmax_row_backward_inplace(d, x, n);
            op_softmax_row_backward(dref, dy, ref, n);
            for (size_t k = 0; k < n; k++) {
                /* weights are in [0, 1] and gradients of order 1: 1e-15 is a few ulps */
                ck_assert_msg(close_number(x[k], ref[k], 1e-15),
                              "n %zu, row kind %d, entry %zu: %.17g vs %.17g", n, kind, k,
                              x[k], ref[k]);
                ck_assert_msg(close_number(d[k], dref[k], 1e-15),
                              "n %zu, row kind %d, entry %zu: %.17g vs %.17g", n, kind, k,
                              d[k], dref[k]);
                if (kind == 1 || kind == 2)
                    ck_assert(m[k] == 0.0 || (x[k] == 0.0 && !signbit(x[k]) && d[k] == 0.0));
                if (kind >= 3)
                    ck_assert(isnan(x[k])); /* a NaN is never hidden */
            }
        }
    gsl_rng_free(r);
}
END_TEST

/* A single query (the decoding case, computed with gemv) gets the same attention as the
 * same query inside a block of queries (computed with GEMM), to rounding. */
START_TEST(test_attention_single_query)
{
    const size_t Tq = 3, Tk = 5, D = ATTN_D;
    gsl_rng *r = tu_rng(7);
    gsl_matrix *Q = gsl_matrix_alloc(Tq, D), *K = gsl_matrix_alloc(Tk, D),
               *Vm = gsl_matrix_alloc(Tk, D), *O = gsl_matrix_alloc(Tq, D),
               *P = gsl_matrix_alloc(ATTN_NH * Tq, Tk), *O1 = gsl_matrix_alloc(1, D),
               *P1 = gsl_matrix_alloc(ATTN_NH, Tk);
    double stat[2 * ATTN_NH * 3]; /* 2·NH·Tq */
    tu_fill(Q, 1.0, r);
    tu_fill(K, 1.0, r);
    tu_fill(Vm, 1.0, r);
    tfm_attention_forward(O, P, stat, NULL, Q, K, Vm, NULL, ATTN_NH);
    for (size_t i = 0; i < Tq; i++) {
        gsl_matrix_const_view qi = gsl_matrix_const_submatrix(Q, i, 0, 1, D);
        tfm_attention_forward(O1, P1, stat, NULL, &qi.matrix, K, Vm, NULL, ATTN_NH);
        for (size_t d = 0; d < D; d++)
            tu_assert_rel(gsl_matrix_get(O1, 0, d), gsl_matrix_get(O, i, d), 1e-13);
        for (size_t j = 0; j < ATTN_NH; j++)
            for (size_t k = 0; k < Tk; k++)
                tu_assert_rel(gsl_matrix_get(P1, j, k), gsl_matrix_get(P, j * Tq + i, k),
                              1e-13);
    }
    gsl_matrix *all[] = {Q, K, Vm, O, P, O1, P1};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        gsl_matrix_free(all[k]);
    gsl_rng_free(r);
}
END_TEST

/* The decoding kernel (keys transposed, one query per sequence, all heads in one pass)
 * against tfm_attention_forward on each sequence's single query: B = 3 sequences whose
 * caches have room for 13 positions, of which Tk are filled; Tk = 1 (one key: weight 1),
 * 5 (a tail only), 13 (a block of FM_LANES and a tail). */
START_TEST(test_attend_cached_matches_reference)
{
    const size_t B = 3, cap = 13, D = ATTN_D, NH = ATTN_NH;
    const size_t lens[] = {1, 5, 13};
    gsl_rng *r = tu_rng(9);
    gsl_matrix *Q = gsl_matrix_alloc(B, D), *K = gsl_matrix_alloc(B * cap, D),
               *Vm = gsl_matrix_alloc(B * cap, D), *O = gsl_matrix_alloc(B, D),
               *O1 = gsl_matrix_alloc(1, D), *P1 = gsl_matrix_alloc(NH, cap);
    double kt[3 * ATTN_D * 13], p[ATTN_NH * 13], stat[2 * ATTN_NH];
    tu_fill(Q, 2.0, r);
    tu_fill(K, 2.0, r);
    tu_fill(Vm, 1.0, r);
    /* sequence b's keys transposed: a (D, cap) block, row f = feature f of every position */
    for (size_t b = 0; b < B; b++)
        for (size_t f = 0; f < D; f++)
            for (size_t k = 0; k < cap; k++)
                kt[(b * D + f) * cap + k] = gsl_matrix_get(K, b * cap + k, f);
    for (size_t c = 0; c < 3; c++) {
        const size_t Tk = lens[c];
        tfm_attend_cached(O, p, Q, kt, cap, D * cap, Vm, cap, Tk, NH);
        for (size_t b = 0; b < B; b++) {
            gsl_matrix_const_view qb = gsl_matrix_const_submatrix(Q, b, 0, 1, D);
            gsl_matrix_const_view Kb = gsl_matrix_const_submatrix(K, b * cap, 0, Tk, D);
            gsl_matrix_const_view Vb = gsl_matrix_const_submatrix(Vm, b * cap, 0, Tk, D);
            gsl_matrix_view Pb = gsl_matrix_submatrix(P1, 0, 0, NH, Tk);
            tfm_attention_forward(O1, &Pb.matrix, stat, NULL, &qb.matrix, &Kb.matrix,
                                  &Vb.matrix, NULL, NH);
            for (size_t d = 0; d < D; d++)
                tu_assert_rel(gsl_matrix_get(O, b, d), gsl_matrix_get(O1, 0, d), 1e-13);
            if (b + 1 == B) /* p keeps the weights of the last sequence */
                for (size_t j = 0; j < NH; j++)
                    for (size_t k = 0; k < Tk; k++)
                        tu_assert_rel(p[j * Tk + k], gsl_matrix_get(P1, j, k), 1e-13);
        }
    }
    gsl_matrix *all[] = {Q, K, Vm, O, O1, P1};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        gsl_matrix_free(all[k]);
    gsl_rng_free(r);
}
END_TEST

/* ---- multi-head attention ------------------------------------------------------------ */

/* Case 0: cross-attention, B=3 sequences of Tq=4 queries over Tk=5 keys; case 1:
 * self-attention under the causal mask, T=4 (the same matrix for queries and keys). */
#define MHA_B 3
#define MHA_D 14
#define MHA_NH 2

typedef struct mha_ctx {
    tfm_mha w, g;
    arena a;
    tfm_mha_act act;
    tfm_work work;
    size_t Tq, Tk;
    int self; /* queries, keys and values from one matrix, one [Q | K | V] GEMM */
    int keep; /* the attention weights kept for the backward, or made again there */
    gsl_matrix *Xq, *Xkv, *Y, *R, *M;
} mha_ctx;

static void visit_mha(walk *wk, void *p)
{
    mha_ctx *c = p;
    tfm_mha_walk(wk, &c->w, &c->g, "mha", MHA_D);
}

static void carve_mha(carver *cv, void *p)
{
    mha_ctx *c = p;
    tfm_mha_act_carve(&c->act, cv, MHA_B, c->Tq, c->Tk, MHA_D, MHA_NH, c->self, c->keep);
    tfm_work_carve(&c->work, cv, MHA_B * 5, 5, MHA_D, 1);
}

static double mha_loss(void *p)
{
    mha_ctx *c = p;
    gsl_matrix_set_zero(c->Y);
    tfm_mha_forward(c->Y, &c->act, c->Xq, c->Xkv, &c->w, c->M, MHA_B, MHA_NH);
    return tu_dot(c->Y, c->R);
}

/* Sets up case self (see above) with its weights kept or not. */
static carve_block mha_setup(mha_ctx *c, int self, int keep, const gsl_rng *r)
{
    *c = (mha_ctx){.Tq = 4, .Tk = self ? 4 : 5, .self = self, .keep = keep};
    ck_assert_int_eq(walk_build(&c->a, visit_mha, c), 0);
    tt_fill_arena(&c->a, r);
    carve_block blk = tt_cut_block(carve_mha, c);
    ck_assert(self == (c->act.qkv.matrix.data != NULL)); /* self: the one-GEMM [Q|K|V] path */
    ck_assert(keep == (c->act.p.matrix.data != NULL));
    c->Xq = gsl_matrix_alloc(MHA_B * c->Tq, MHA_D);
    c->Xkv = self ? c->Xq : gsl_matrix_alloc(MHA_B * c->Tk, MHA_D);
    c->Y = gsl_matrix_alloc(MHA_B * c->Tq, MHA_D);
    c->R = gsl_matrix_alloc(MHA_B * c->Tq, MHA_D);
    c->M = self ? tt_causal_mask(c->Tq) : NULL;
    tu_fill(c->Xq, 1.0, r);
    if (!self)
        tu_fill(c->Xkv, 1.0, r);
    tu_fill(c->R, 1.0, r);
    return blk;
}

static void mha_teardown(mha_ctx *c, carve_block *blk)
{
    if (!c->self)
        gsl_matrix_free(c->Xkv);
    if (c->M)
        gsl_matrix_free(c->M);
    gsl_matrix_free(c->Xq);
    gsl_matrix_free(c->Y);
    gsl_matrix_free(c->R);
    carve_free(blk);
    arena_free(&c->a);
}

/* _i: self-attention when odd; weights kept when _i < 2. */
START_TEST(test_mha_gradcheck)
{
    const int self = _i % 2, keep = _i < 2;
    gsl_rng *r = tu_rng(21 + (unsigned long)self);
    mha_ctx c;
    carve_block blk = mha_setup(&c, self, keep, r);
    gsl_matrix *dXq = gsl_matrix_calloc(MHA_B * c.Tq, MHA_D);
    gsl_matrix *dXkv = self ? dXq : gsl_matrix_calloc(MHA_B * c.Tk, MHA_D);

    mha_loss(&c);
    tfm_mha_backward(dXq, dXkv, &c.g, &c.work, c.R, c.Xq, c.Xkv, &c.act, &c.w, MHA_B, MHA_NH);
    double err = tu_gradcheck("dXq", mha_loss, &c, c.Xq, dXq);
    if (!self)
        err = fmax(err, tu_gradcheck("dXkv", mha_loss, &c, c.Xkv, dXkv));
    err = fmax(err, tt_gradcheck_arena(&c.a, mha_loss, &c));
    static const char *const names[] = {"mha cross", "mha self causal", "mha cross, made again",
                                        "mha self causal, again"};
    tt_report(names[_i], err);

    if (!self)
        gsl_matrix_free(dXkv);
    gsl_matrix_free(dXq);
    mha_teardown(&c, &blk);
    gsl_rng_free(r);
}
END_TEST

/* Weights made again in the backward are the forward's, bit for bit: every gradient is the
 * same whether they were kept or not (_i: self-attention when 1). */
START_TEST(test_mha_weights_made_again_same_bits)
{
    const int self = _i;
    mha_ctx c[2];
    carve_block blk[2];
    gsl_matrix *dXq[2], *dXkv[2];
    for (int keep = 0; keep < 2; keep++) {
        gsl_rng *r = tu_rng(31); /* the same inputs and weights for both */
        blk[keep] = mha_setup(&c[keep], self, keep, r);
        gsl_rng_free(r);
        dXq[keep] = gsl_matrix_calloc(MHA_B * c[keep].Tq, MHA_D);
        dXkv[keep] = self ? dXq[keep] : gsl_matrix_calloc(MHA_B * c[keep].Tk, MHA_D);
        mha_loss(&c[keep]);
        tfm_mha_backward(dXq[keep], dXkv[keep], &c[keep].g, &c[keep].work, c[keep].R,
                         c[keep].Xq, c[keep].Xkv, &c[keep].act, &c[keep].w, MHA_B, MHA_NH);
    }
    ck_assert(memcmp(dXq[0]->data, dXq[1]->data, dXq[0]->size1 * MHA_D * sizeof(double)) == 0);
    ck_assert(memcmp(dXkv[0]->data, dXkv[1]->data, dXkv[0]->size1 * MHA_D * sizeof(double)) ==
              0);
    ck_assert_uint_eq(c[0].a.size, c[1].a.size);
    ck_assert(memcmp(c[0].a.grad, c[1].a.grad, c[0].a.size * sizeof(double)) == 0);
    for (int keep = 0; keep < 2; keep++) {
        if (!self)
            gsl_matrix_free(dXkv[keep]);
        gsl_matrix_free(dXq[keep]);
        mha_teardown(&c[keep], &blk[keep]);
    }
}
END_TEST

Suite *make_tfm_attention_suite(void)
{
    Suite *s = suite_create("tfm_attention");
    TCase *pieces = tcase_create("pieces");
    tcase_add_loop_test(pieces, test_attention_gradcheck, 0, 2 * ATTN_CASES);
    tcase_add_loop_test(pieces, test_attention_fully_masked_row, 0, 2);
    tcase_add_test(pieces, test_softmax_kernels_match_reference);
    tcase_add_test(pieces, test_attention_single_query);
    tcase_add_test(pieces, test_attend_cached_matches_reference);
    tcase_add_loop_test(pieces, test_mha_gradcheck, 0, 4);
    tcase_add_loop_test(pieces, test_mha_weights_made_again_same_bits, 0, 2);
    suite_add_tcase(s, pieces);
    return s;
}
