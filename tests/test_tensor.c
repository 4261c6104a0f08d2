/* test_tensor.c — the arenas and the small ops of common/core/tensor.c (suite: tensor).
 *
 * Design. Arenas are checked for their layout (one block, table order, no gaps) and their
 * refusals; the ops (softmax, cross-entropy, embeddings, Gaussian draws) against their
 * definitions, and their backward passes by central differences (testutil.h).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/tensor.h"
#include "../common/core/gradcheck.h"
#include "testutil.h"

START_TEST(arena_layout)
{
    const arena_spec spec[] = {{"a", 2, 3}, {"b", 1, 4}, {"c", 5, 1}};
    arena a;
    ck_assert_int_eq(arena_alloc(&a, spec, 3), 0);
    ck_assert_uint_eq(a.size, 6 + 4 + 5);
    ck_assert_uint_eq(a.offset[1], 6);
    ck_assert_uint_eq(a.offset[2], 10);
    ck_assert_int_eq(arena_find(&a, "b"), 1);
    ck_assert_int_eq(arena_find(&a, "nope"), -1);
    /* views point into the one block, in table order, without gaps */
    gsl_matrix *b = arena_w(&a, 1);
    ck_assert_ptr_eq(b->data, a.data + 6);
    ck_assert_uint_eq(b->size1, 1);
    ck_assert_uint_eq(b->size2, 4);
    gsl_matrix_set(arena_w(&a, 2), 4, 0, 7.5);
    ck_assert(a.data[14] == 7.5);
    ck_assert_ptr_eq(arena_g(&a, 2)->data, a.grad + 10);
    arena_free(&a);
    ck_assert_ptr_null(a.data);
}
END_TEST

START_TEST(arena_zero_grad_all)
{
    const arena_spec spec[] = {{"x", 3, 3}, {"y", 2, 2}};
    arena a;
    ck_assert_int_eq(arena_alloc(&a, spec, 2), 0);
    for (size_t i = 0; i < a.size; i++) {
        a.grad[i] = (double)i + 1;
        a.data[i] = 2.0;
    }
    arena_zero_grad(&a);
    for (size_t i = 0; i < a.size; i++) {
        ck_assert(a.grad[i] == 0.0);
        ck_assert(a.data[i] == 2.0); /* parameters untouched */
    }
    arena_free(&a);
}
END_TEST

START_TEST(arena_rejects_bad_tables)
{
    arena a;
    const arena_spec dup[] = {{"w", 2, 2}, {"w", 1, 1}};
    ck_assert_int_eq(arena_alloc(&a, dup, 2), -1);
    const arena_spec empty_side[] = {{"w", 0, 2}};
    ck_assert_int_eq(arena_alloc(&a, empty_side, 1), -1);
    const arena_spec noname[] = {{"", 1, 1}};
    ck_assert_int_eq(arena_alloc(&a, noname, 1), -1);
    const arena_spec huge[] = {{"w", (size_t)1 << 40, (size_t)1 << 40}};
    ck_assert_int_eq(arena_alloc(&a, huge, 1), -1);
    arena_free(&a); /* safe on the empty arena a failed alloc leaves */
}
END_TEST

START_TEST(softmax_sums_to_one_and_is_stable)
{
    double x[4] = {1000.0, 1001.0, 999.0, -1000.0}; /* exp(1000) overflows without the max */
    op_softmax_row(x, 4);
    double s = 0;
    for (int i = 0; i < 4; i++) {
        ck_assert(isfinite(x[i]) && x[i] >= 0.0);
        s += x[i];
    }
    tu_assert_rel(s, 1.0, 1e-15);
    tu_assert_rel(x[1] / x[0], exp(1.0), 1e-12);
}
END_TEST

START_TEST(softmax_masks)
{
    double x[3] = {0.5, -INFINITY, 0.5};
    op_softmax_row(x, 3);
    ck_assert(x[1] == 0.0); /* masked entries are exactly zero */
    ck_assert(x[0] == 0.5 && x[2] == 0.5);
    double y[3] = {-INFINITY, -INFINITY, -INFINITY};
    op_softmax_row(y, 3);
    for (int i = 0; i < 3; i++)
        ck_assert(y[i] == 0.0); /* a fully masked row is zeros, not NaN */
    double z[3] = {0.5, NAN, -INFINITY};
    op_softmax_row(z, 3);
    for (int i = 0; i < 3; i++)
        ck_assert(isnan(z[i])); /* a NaN is not mistaken for a masked row */
}
END_TEST

typedef struct softmax_ctx {
    double x[5], y[5], r[5];
} softmax_ctx;

static double softmax_loss(void *p)
{
    softmax_ctx *c = p;
    memcpy(c->y, c->x, sizeof c->x);
    op_softmax_row(c->y, 5);
    double s = 0;
    for (int i = 0; i < 5; i++)
        s += c->y[i] * c->r[i];
    return s;
}

START_TEST(softmax_backward_gradcheck)
{
    gsl_rng *r = tu_rng(11);
    softmax_ctx c;
    for (int i = 0; i < 5; i++) {
        c.x[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
        c.r[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
    }
    softmax_loss(&c);
    double dx[5] = {0};
    op_softmax_row_backward(dx, c.r, c.y, 5);
    double err = gradcheck_array(softmax_loss, &c, c.x, dx, 5, GRADCHECK_H, 1, NULL);
    ck_assert_msg(err < GRADCHECK_TOL, "softmax backward relative error %g", err);
    gsl_rng_free(r);
}
END_TEST

typedef struct ce_ctx {
    gsl_matrix *z;
    int t[3];
} ce_ctx;

static double ce_loss(void *p)
{
    ce_ctx *c = p;
    return op_cross_entropy(c->z, c->t, NULL, NULL);
}

START_TEST(cross_entropy_value_and_gradient)
{
    gsl_rng *r = tu_rng(5);
    ce_ctx c = {gsl_matrix_alloc(3, 4), {2, 0, 3}};
    tu_fill(c.z, 3.0, r);
    gsl_matrix *dz = gsl_matrix_alloc(3, 4);
    int pred[3];
    double loss = op_cross_entropy(c.z, c.t, dz, pred);
    /* the value against the definition −log softmax(z)_t, row by row */
    double want = 0;
    for (size_t i = 0; i < 3; i++) {
        double s = 0;
        size_t arg = 0;
        for (size_t v = 0; v < 4; v++) {
            s += exp(gsl_matrix_get(c.z, i, v));
            if (gsl_matrix_get(c.z, i, v) > gsl_matrix_get(c.z, i, arg))
                arg = v;
        }
        want += -log(exp(gsl_matrix_get(c.z, i, (size_t)c.t[i])) / s) / 3.0;
        ck_assert_int_eq(pred[i], (int)arg);
    }
    tu_assert_rel(loss, want, 1e-13);
    tu_gradcheck("cross-entropy logits", ce_loss, &c, c.z, dz);
    /* huge logits: the log-sum-exp form must not overflow */
    gsl_matrix_set_all(c.z, 0.0);
    gsl_matrix_set(c.z, 0, 2, 800.0);
    ck_assert(isfinite(op_cross_entropy(c.z, c.t, dz, NULL)));
    gsl_matrix_free(c.z);
    gsl_matrix_free(dz);
    gsl_rng_free(r);
}
END_TEST

START_TEST(embed_gathers_and_scatters)
{
    gsl_matrix *table = gsl_matrix_alloc(4, 3), *out = gsl_matrix_alloc(3, 3);
    gsl_matrix *dtable = gsl_matrix_calloc(4, 3), *dout = gsl_matrix_alloc(3, 3);
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            gsl_matrix_set(table, i, j, 10.0 * (double)i + (double)j);
    const int ids[3] = {2, 0, 2};
    op_embed(out, table, ids, 3);
    ck_assert(gsl_matrix_get(out, 0, 1) == 21.0 && gsl_matrix_get(out, 1, 2) == 2.0);
    gsl_matrix_set_all(dout, 1.0);
    op_embed_backward(dtable, dout, ids, 3);
    ck_assert(gsl_matrix_get(dtable, 2, 0) == 2.0); /* row 2 used twice: accumulated */
    ck_assert(gsl_matrix_get(dtable, 0, 0) == 1.0);
    ck_assert(gsl_matrix_get(dtable, 1, 0) == 0.0);
    gsl_matrix_free(table);
    gsl_matrix_free(out);
    gsl_matrix_free(dtable);
    gsl_matrix_free(dout);
}
END_TEST

/* op_normal draws from N(0, sd²): its mean, variance, fourth moment and two-sided tail
 * beyond 2 sd agree with the Gaussian's within five standard errors over 200,000 draws
 * (a sampler with a wrong scale, a wrong transform or a dropped half fails one of them),
 * and the same generator state gives the same draws. */
START_TEST(normal_draws_have_the_moments_of_a_gaussian)
{
    enum { N = 200000 };
    const double sd = 0.5;
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937), *r2 = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    gsl_rng_set(r2, 7);
    op_normal(x, N, sd, r);
    op_normal(y, N, sd, r2);
    ck_assert_int_eq(memcmp(x, y, N * sizeof *x), 0);
    double m1 = 0, m2 = 0, m4 = 0, tail = 0;
    for (size_t i = 0; i < N; i++) {
        const double z = x[i] / sd;
        m1 += z;
        m2 += z * z;
        m4 += z * z * z * z;
        tail += fabs(z) > 2.0;
    }
    m1 /= N;
    m2 /= N;
    m4 /= N;
    tail /= N;
    const double p2 = 0.04550026389635842; /* P(|Z| > 2) */
    ck_assert_msg(fabs(m1) < 5.0 / sqrt(N), "mean %g sd", m1);
    ck_assert_msg(fabs(m2 - 1.0) < 5.0 * sqrt(2.0 / N), "variance %g sd²", m2);
    ck_assert_msg(fabs(m4 - 3.0) < 5.0 * sqrt(96.0 / N), "fourth moment %g sd⁴", m4);
    ck_assert_msg(fabs(tail - p2) < 5.0 * sqrt(p2 * (1 - p2) / N), "tail %g", tail);
    gsl_rng_free(r);
    gsl_rng_free(r2);
    free(x);
    free(y);
}
END_TEST

Suite *make_tensor_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, arena_layout);
    tcase_add_test(tc, arena_zero_grad_all);
    tcase_add_test(tc, arena_rejects_bad_tables);
    suite_add_tcase(s, tc);
    tc = tcase_create("ops");
    tcase_add_test(tc, softmax_sums_to_one_and_is_stable);
    tcase_add_test(tc, softmax_masks);
    tcase_add_test(tc, softmax_backward_gradcheck);
    tcase_add_test(tc, cross_entropy_value_and_gradient);
    tcase_add_test(tc, embed_gathers_and_scatters);
    tcase_add_test(tc, normal_draws_have_the_moments_of_a_gaussian);
    suite_add_tcase(s, tc);
    return s;
}
