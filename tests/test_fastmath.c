/* test_fastmath.c — tests of common/core/fastmath.[ch] (prefix fm_): fm_exp against the C
 * library's exp over the whole range where exp is finite and nonzero and beyond it, its
 * special values, the same bits from the vectorised loop as from one call at a time,
 * fm_sigmoid and fm_tanh against libm; fm_log, fm_sin, fm_cos and fm_pow against libm
 * over every range the project uses and beyond, with their special values. libm is the
 * yardstick here only: no value of it reaches a result of the program. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "../common/core/fastmath.h"
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

/* fm_log within 1 ulp of libm: densely on [0.5, 2] (around 1, where ln x is small and
 * relative accuracy is hardest), then at every binary exponent of the doubles, subnormals
 * included, with significands that are not round numbers. */
START_TEST(test_log_matches_libm)
{
    double worst = 0.0, at = 0.0;
    for (double x = 0.5; x < 2.0; x += 7.3e-7) {
        const double e = ulps(fm_log(x), log(x));
        if (e > worst) {
            worst = e;
            at = x;
        }
    }
    for (int k = -1074; k <= 1023; k++)
        for (double m = 1.0; m < 2.0; m += 0.0137) {
            const double x = ldexp(m, k);
            if (x == 0.0 || !isfinite(x))
                continue;
            const double e = ulps(fm_log(x), log(x));
            if (e > worst) {
                worst = e;
                at = x;
            }
        }
    ck_assert_msg(worst <= 1.0, "fm_log is %.3f ulp from log at x = %.17g", worst, at);
}
END_TEST

START_TEST(test_log_special_values)
{
    ck_assert(fm_log(1.0) == 0.0);
    ck_assert(fm_log(0.0) == -INFINITY && fm_log(-0.0) == -INFINITY);
    ck_assert(fm_log(INFINITY) == INFINITY);
    ck_assert(isnan(fm_log(-1.0)) && isnan(fm_log(-INFINITY)) && isnan(fm_log(NAN)));
    ck_assert(fm_log(DBL_MAX) == log(DBL_MAX));
    ck_assert(fm_log(DBL_TRUE_MIN) == log(DBL_TRUE_MIN));
}
END_TEST

/* fm_sin and fm_cos within 1 ulp of libm: on [−5000, 5000] (every position angle a model
 * takes; the step is not a multiple of π, so points fall everywhere in each quadrant),
 * densely on [−π, π] (the schedule's angles), then sparsely out to 1.6e6, the end of the
 * exact reduction. Near a zero of sin or cos the result is tiny and its ulp too: the
 * reduction must be accurate far below the argument's own ulp for these to pass. */
START_TEST(test_sin_cos_match_libm)
{
    double worst = 0.0, at = 0.0;
    const char *which = "";
    const struct { double from, to, step; } sweeps[] = {
        {-5000.0, 5000.0, 1.37e-3}, {-3.2, 3.2, 3.1e-7}, {-1.6e6, 1.6e6, 0.7331}};
    for (size_t s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++)
        for (double x = sweeps[s].from; x < sweeps[s].to; x += sweeps[s].step) {
            const double es = ulps(fm_sin(x), sin(x)), ec = ulps(fm_cos(x), cos(x));
            if (es > worst || ec > worst) {
                worst = es > ec ? es : ec;
                which = es > ec ? "sin" : "cos";
                at = x;
            }
        }
    /* the doubles nearest multiples of π/2 up to 5000: results as small as ~1e-17 */
    for (int k = -3200; k <= 3200; k++) {
        const double x = (double)k * 1.5707963267948966;
        const double es = ulps(fm_sin(x), sin(x)), ec = ulps(fm_cos(x), cos(x));
        if (es > worst || ec > worst) {
            worst = es > ec ? es : ec;
            which = es > ec ? "sin" : "cos";
            at = x;
        }
    }
    ck_assert_msg(worst <= 1.0, "fm_%s is %.3f ulp from libm at x = %.17g", which, worst, at);
}
END_TEST

START_TEST(test_sin_cos_special_values)
{
    ck_assert(fm_sin(0.0) == 0.0 && fm_cos(0.0) == 1.0);
    ck_assert(signbit(fm_sin(-0.0))); /* sin(−0) = −0, as libm */
    ck_assert(fm_sin(1e-300) == 1e-300 && fm_cos(1e-300) == 1.0);
    ck_assert(isnan(fm_sin(INFINITY)) && isnan(fm_cos(-INFINITY)));
    ck_assert(isnan(fm_sin(NAN)) && isnan(fm_cos(NAN)));
    ck_assert(isnan(fm_sin(0x1p52)) && isnan(fm_cos(-0x1p60)));
}
END_TEST

/* fm_pow(b, t) for the betas Adam takes and every t up to 10^5 (until b^t underflows),
 * within its stated bound (1 + 2|t ln b|) ulp of libm's pow, plus one for libm's own
 * rounding. */
START_TEST(test_pow_matches_libm)
{
    const double betas[] = {0.5, 0.9, 0.98, 0.99, 0.999, 0.9999};
    for (size_t i = 0; i < sizeof betas / sizeof betas[0]; i++) {
        const double b = betas[i];
        for (double t = 1.0; t <= 1e5; t += 1.0) {
            const double want = pow(b, t);
            if (want < 1e-300)
                break;
            const double bound = 2.0 + 2.0 * fabs(t * log(b));
            ck_assert_msg(ulps(fm_pow(b, t), want) <= bound, "fm_pow(%g, %g) is %.1f ulp off",
                          b, t, ulps(fm_pow(b, t), want));
        }
    }
    ck_assert(fm_pow(2.0, 10.0) == 1024.0 && fm_pow(0.75, 0.0) == 1.0);
    ck_assert(isnan(fm_pow(0.0, 2.0)) && isnan(fm_pow(-1.0, 2.0)) && isnan(fm_pow(NAN, 1.0)));
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
    tc = tcase_create("libm");
    tcase_set_timeout(tc, 120); /* several million points, under a sanitizer */
    tcase_add_test(tc, test_log_matches_libm);
    tcase_add_test(tc, test_log_special_values);
    tcase_add_test(tc, test_sin_cos_match_libm);
    tcase_add_test(tc, test_sin_cos_special_values);
    tcase_add_test(tc, test_pow_matches_libm);
    suite_add_tcase(s, tc);
    return s;
}
