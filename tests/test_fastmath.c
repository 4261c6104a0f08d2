/* test_fastmath.c — tests of common/fastmath.h (prefix fm_): fm_exp against the C
 * library's exp over the whole range where exp is finite and nonzero and beyond it, its
 * special values, the same bits from the vectorised loop as from one call at a time, and
 * fm_sigmoid and fm_tanh against libm. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "../common/fastmath.h"
#include "testutil.h"

/* |a − b| in units in the last place of b (the spacing of doubles at b); 0 when equal. */
static double ulps(double a, double b)
{
    if (a == b)
        return 0.0;
    double spacing = nextafter(b, INFINITY) - b;
    if (b == 0.0 || !isfinite(spacing))
        spacing = nextafter(0.0, 1.0); /* around 0 the spacing is the smallest subnormal */
    return fabs(a - b) / spacing;
}

/* Within 1 ulp of libm at about 2·10^6 points spread over [−746.5, 710.5], a step that is
 * not a round number so the points fall everywhere in the reduction interval; and densely
 * on [−1, 1], where softmax spends its time. */
START_TEST(test_exp_matches_libm)
{
    double worst = 0.0, at = 0.0;
    for (double x = -746.5; x < 710.5; x += 7.31e-4) {
        const double e = ulps(fm_exp(x), exp(x));
        if (e > worst) {
            worst = e;
            at = x;
        }
    }
    for (double x = -1.0; x < 1.0; x += 1.0e-6) {
        const double e = ulps(fm_exp(x), exp(x));
        if (e > worst) {
            worst = e;
            at = x;
        }
    }
    ck_assert_msg(worst <= 1.0, "fm_exp is %.3f ulp from exp at x = %.17g", worst, at);
}
END_TEST

/* The edges: −∞ and large negatives give exactly +0, subnormal results are right, the
 * largest finite results are right, +∞ and large positives give +∞, NaN stays NaN. */
START_TEST(test_exp_special_values)
{
    ck_assert(fm_exp(-INFINITY) == 0.0 && !signbit(fm_exp(-INFINITY)));
    ck_assert(fm_exp(-745.2) == 0.0);
    ck_assert(fm_exp(-1000.0) == 0.0);
    ck_assert(fm_exp(-DBL_MAX) == 0.0);
    ck_assert(fm_exp(INFINITY) == INFINITY);
    ck_assert(fm_exp(709.8) == INFINITY);
    ck_assert(fm_exp(DBL_MAX) == INFINITY);
    ck_assert(isnan(fm_exp(NAN)));
    ck_assert(isnan(fm_exp(-NAN)));
    ck_assert(fm_exp(0.0) == 1.0 && fm_exp(-0.0) == 1.0);
    ck_assert(fm_exp(1e-300) == 1.0 && fm_exp(-1e-300) == 1.0);
    /* subnormal results (x < −708.4) and the largest finite ones (e^709.78 ≈ 1.79e308):
     * the two-factor scaling gets them to within 1 ulp too */
    const double edge[] = {-745.1, -744.0, -740.5, -720.25, -708.5, -708.3, 709.0, 709.78};
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++)
        ck_assert_msg(ulps(fm_exp(edge[k]), exp(edge[k])) <= 1.0, "x = %g: %.17g vs %.17g",
                      edge[k], fm_exp(edge[k]), exp(edge[k]));
    ck_assert(fm_exp(-745.1) > 0.0);
    ck_assert(isfinite(fm_exp(709.78)));
}
END_TEST

/* y (n) = e^x, in a loop the compiler vectorises (in whichever clone the processor runs). */
FM_CLONES
static void exp_loop(double *restrict y, const double *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = fm_exp(x[i]);
}

/* The vectorised loop gives the bits of one call at a time, special values included (a
 * volatile read keeps each scalar call a scalar call). */
START_TEST(test_exp_vector_equals_scalar)
{
    enum { N = 1003 }; /* not a multiple of any vector width: the tail runs too */
    double x[N], y[N];
    for (size_t i = 0; i < N; i++)
        x[i] = -760.0 + 1.4729 * (double)i; /* −760 .. 717: both ends out of range */
    x[5] = -INFINITY;
    x[6] = INFINITY;
    x[7] = NAN;
    exp_loop(y, x, N);
    for (size_t i = 0; i < N; i++) {
        volatile double xi = x[i];
        const double s = fm_exp(xi);
        ck_assert_msg(fm_to_bits(s) == fm_to_bits(y[i]) || (isnan(s) && isnan(y[i])),
                      "x = %.17g: vector %.17g, scalar %.17g", x[i], y[i], s);
    }
}
END_TEST

/* fm_sigmoid and fm_tanh against libm: within 4e-16 absolutely over a fine grid that
 * includes tiny arguments, exact at the saturated ends and at ±∞, never NaN for huge
 * arguments, NaN for NaN. */
START_TEST(test_squashing_matches_libm)
{
    double worst_s = 0.0, worst_t = 0.0;
    for (double a = -40.0; a <= 40.0; a += 0.0009765625 * 3.3) {
        const double s = a >= 0 ? 1.0 / (1.0 + exp(-a)) : exp(a) / (1.0 + exp(a));
        worst_s = fmax(worst_s, fabs(fm_sigmoid(a) - s));
        worst_t = fmax(worst_t, fabs(fm_tanh(a) - tanh(a)));
    }
    for (double a = 1e-12; a < 1e-2; a *= 1.7) { /* near 0, where tanh(a) ≈ a */
        worst_t = fmax(worst_t, fabs(fm_tanh(a) - tanh(a)));
        worst_t = fmax(worst_t, fabs(fm_tanh(-a) - tanh(-a)));
    }
    ck_assert_msg(worst_s <= 4e-16, "sigmoid: %g from libm", worst_s);
    ck_assert_msg(worst_t <= 4e-16, "tanh: %g from libm", worst_t);
    ck_assert(fm_sigmoid(1000.0) == 1.0 && fm_sigmoid(-1000.0) == 0.0);
    ck_assert(fm_tanh(1000.0) == 1.0 && fm_tanh(-1000.0) == -1.0);
    ck_assert(fm_sigmoid(INFINITY) == 1.0 && fm_sigmoid(-INFINITY) == 0.0);
    ck_assert(fm_tanh(INFINITY) == 1.0 && fm_tanh(-INFINITY) == -1.0);
    ck_assert(fm_sigmoid(0.0) == 0.5 && fm_tanh(0.0) == 0.0);
    ck_assert(isnan(fm_sigmoid(NAN)) && isnan(fm_tanh(NAN)));
}
END_TEST

Suite *make_fastmath_suite(void)
{
    Suite *s = suite_create("fastmath");
    TCase *tc = tcase_create("exp");
    tcase_add_test(tc, test_exp_matches_libm);
    tcase_add_test(tc, test_exp_special_values);
    tcase_add_test(tc, test_exp_vector_equals_scalar);
    tcase_add_test(tc, test_squashing_matches_libm);
    suite_add_tcase(s, tc);
    return s;
}
