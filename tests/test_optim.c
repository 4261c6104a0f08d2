/* test_optim.c — Adam, clipping and warm-up of common/core/optim.c (suite: optim).
 *
 * Design. Adam is held to what its equations imply (a quadratic minimised; a first step
 * of lr times the sign of the gradient), clipping to keeping the direction of the
 * gradient, and warm-up to its linear ramp.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/optim.h"
#include "../common/core/tensor.h"
#include "testutil.h"

START_TEST(adam_minimises_a_quadratic)
{
    /* f(w) = Σ a_i (w_i − c_i)², minimum at c */
    const double a[3] = {1.0, 10.0, 0.1}, c[3] = {3.0, -2.0, 0.5};
    double w[3] = {0, 0, 0}, g[3];
    optim o;
    ck_assert_int_eq(optim_alloc(&o, 3, 0.9, 0.999, 1e-8), 0);
    for (int step = 1; step <= 5000; step++) {
        for (int i = 0; i < 3; i++)
            g[i] = 2.0 * a[i] * (w[i] - c[i]);
        optim_adam_step(&o, w, g, optim_lr(0.05, 100, (size_t)step));
    }
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(w[i] - c[i]) < 1e-3, "w[%d] = %g, want %g", i, w[i], c[i]);
    optim_free(&o);
}
END_TEST

START_TEST(adam_first_step_is_lr_times_sign)
{
    /* with bias correction, the first step moves every weight by lr (up to ε) */
    double w[2] = {1.0, 1.0}, g[2] = {1e-3, -50.0};
    optim o;
    ck_assert_int_eq(optim_alloc(&o, 2, 0.9, 0.999, 1e-12), 0);
    optim_adam_step(&o, w, g, 0.01);
    tu_assert_rel(w[0], 0.99, 1e-8);
    tu_assert_rel(w[1], 1.01, 1e-8);
    optim_free(&o);
}
END_TEST

START_TEST(clipping_keeps_direction)
{
    double g[4] = {3.0, 4.0, 0.0, 0.0};
    double norm = optim_clip(g, 4, 1.0);
    tu_assert_rel(norm, 5.0, 1e-15);
    tu_assert_rel(g[0], 0.6, 1e-15);
    tu_assert_rel(g[1], 0.8, 1e-15);
    double h[2] = {0.3, 0.4};
    optim_clip(h, 2, 1.0); /* below the bound: untouched */
    ck_assert(h[0] == 0.3 && h[1] == 0.4);
    double big[2] = {1e200, 1e200}; /* the norm itself must not overflow */
    tu_assert_rel(optim_norm(big, 2), sqrt(2.0) * 1e200, 1e-14);
    double off[2] = {30.0, 40.0};
    optim_clip(off, 2, 0.0); /* 0 disables */
    ck_assert(off[0] == 30.0);
}
END_TEST

START_TEST(warmup_ramps_linearly)
{
    tu_assert_rel(optim_lr(1e-3, 100, 1), 1e-5, 1e-12);
    tu_assert_rel(optim_lr(1e-3, 100, 50), 5e-4, 1e-12);
    ck_assert(optim_lr(1e-3, 100, 100) == 1e-3);
    ck_assert(optim_lr(1e-3, 0, 1) == 1e-3);
}
END_TEST

Suite *make_optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_test(tc, adam_minimises_a_quadratic);
    tcase_add_test(tc, adam_first_step_is_lr_times_sign);
    tcase_add_test(tc, clipping_keeps_direction);
    tcase_add_test(tc, warmup_ramps_linearly);
    suite_add_tcase(s, tc);
    return s;
}
