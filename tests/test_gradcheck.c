/* test_gradcheck.c — the finite differences of common/core/gradcheck.c (suite: gradcheck).
 *
 * Design. A loss with a kink (ReLU) is checked where central differences straddle the
 * kink, which the check must step over, and where the gradient is really wrong, which it
 * must report.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/gradcheck.h"
#include "../common/core/tensor.h"
#include "testutil.h"

/* Σ r_i · relu(x_i): a loss with kinks, for the finite-difference checker itself. */
typedef struct relu_ctx {
    double x[6], r[6];
} relu_ctx;

static double relu_loss(void *p)
{
    const relu_ctx *c = p;
    double s = 0;
    for (int i = 0; i < 6; i++)
        s += c->r[i] * (c->x[i] > 0 ? c->x[i] : 0.0);
    return s;
}

START_TEST(gradcheck_steps_over_kinks_but_not_errors)
{
    /* some points sit within a step of the kink at 0, on either side */
    relu_ctx c = {{0.7, -0.4, 2e-5, -3e-6, 1e-9, 0.25}, {0.3, -1.1, 0.8, 0.5, -0.6, 1.7}};
    double g[6];
    for (int i = 0; i < 6; i++)
        g[i] = c.x[i] > 0 ? c.r[i] : 0.0; /* the true gradient */
    double err = gradcheck_array(relu_loss, &c, c.x, g, 6, GRADCHECK_H, 1, NULL);
    ck_assert_msg(err < GRADCHECK_TOL, "a kink near the point passed for an error: %g", err);
    /* a gradient wrong by 1% at one entry, even next to a kink, must still fail */
    for (int bad = 0; bad < 6; bad++) {
        double h[6];
        memcpy(h, g, sizeof h);
        h[bad] = h[bad] == 0.0 ? 1e-3 : 1.01 * h[bad];
        size_t worst = 99;
        err = gradcheck_array(relu_loss, &c, c.x, h, 6, GRADCHECK_H, 1, &worst);
        ck_assert_msg(err > GRADCHECK_TOL && worst == (size_t)bad,
                      "a wrong gradient at %d was not caught (error %g at %zu)", bad, err,
                      worst);
    }
}
END_TEST

Suite *make_gradcheck_suite(void)
{
    Suite *s = suite_create("gradcheck");
    TCase *tc = tcase_create("ops");
    tcase_add_test(tc, gradcheck_steps_over_kinks_but_not_errors);
    suite_add_tcase(s, tc);
    return s;
}
