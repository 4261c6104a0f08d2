/* fastmath.c — the project's own logarithm, sine, cosine and power (prefix: fm_),
 * so that no value of libm's reaches a weight, a loss or a printed number.
 *
 * Why not libm. Every libm is accurate to about an ulp, but which last bit it returns
 * differs between C libraries (glibc, musl, Apple's, the browser's) and, in glibc, between
 * processors: glibc picks an FMA variant of exp, log, sin, cos and pow where the processor
 * has FMA. One different bit in the first softmax grows, step by step, into other weights
 * after a few thousand steps, so "the same seed gives the same result" would hold only on
 * one kind of machine. Every function here (and fm_exp, fm_sigmoid, fm_tanh in
 * fastmath.h) is a fixed sequence of IEEE additions, multiplications and divisions of
 * doubles, with no fused multiply-add (-ffp-contract=off) and no table that a library
 * could hold differently: IEEE 754 rounds each of those exactly, so the results are the
 * same bits wherever the program runs — any x86-64 or arm64 processor, any compiler,
 * WebAssembly in a browser.
 *
 * How accurate. Within 1 ulp of the exact value over the ranges the tests sweep
 * (tests/test_fastmath.c against libm): the methods are the textbook ones (e.g. Muller,
 * "Elementary Functions", ch. 6 and 11; Cody & Waite 1980 for split constants), with the
 * series carried further than the last bit needs. None of these functions is in a hot
 * loop (one log per row of a cross-entropy, a position table built once, a cosine and
 * two powers per step), so they are written for clarity, with branches; fm_exp, which is hot, lives in
 * fastmath.h in a form that vectorises.
 */
#include "fastmath.h"

#include <math.h>

/* ln 2 in two parts, as in fm_exp: ln2_hi has its last 11 bits 0, so k·ln2_hi is exact for
 * every exponent k of a double (|k| < 1100). */
static const double ln2_hi = 6.93147180369123816490e-01;
static const double ln2_lo = 1.90821492927058770002e-10;

/* ln x. Write x = 2^k · m with m in [√2/2, √2), so ln x = k·ln 2 + ln m, and ln m = ln(1+f)
 * with f = m − 1 in [−0.293, 0.414], formed exactly (m and 1 are within a factor 2).
 * With s = f/(2+f), |s| ≤ 0.172:
 *     ln(1+f) = ln((1+s)/(1−s)) = 2s + 2s³/3 + 2s⁵/5 + ...
 * Two facts keep the big term exact: 2s = f − s·f, and f²/2·(1 − s) = s·f, so
 *     ln(1+f) = f − h + s·(h + R),   h = f²/2,   R = 2s²/3 + 2s⁴/5 + ... + 2s²²/23
 * where f is exact and everything else is a correction below f/4: its rounding errors
 * weigh a fraction of an ulp. R stops at s²² (the next term, 2s²⁴/25, is below 2e-19 of R's
 * first). Special values as libm: ln 0 = −∞, ln x = NaN for x < 0 or NaN, ln ∞ = ∞. */
double fm_log(double x)
{
    if (isnan(x) || x < 0.0)
        return NAN;
    if (x == 0.0)
        return -INFINITY;
    if (isinf(x))
        return x;
    int k = 0;
    if (x < 0x1p-1022) { /* subnormal: scale into the normal range first (exact) */
        x *= 0x1p54;
        k = -54;
    }
    const uint64_t u = fm_to_bits(x);
    k += (int)(u >> 52) - 1023; /* the biased exponent, minus its bias */
    /* m: x's significand with the exponent of 1, in [1, 2) */
    double m = fm_from_bits((u & 0x000fffffffffffffu) | 0x3ff0000000000000u);
    if (m > 1.4142135623730951) { /* √2: fold [√2, 2) onto [√2/2, 1) */
        m *= 0.5;
        k += 1;
    }
    const double f = m - 1.0;
    const double s = f / (2.0 + f), z = s * s;
    const double R =
        z * (2.0 / 3 + z * (2.0 / 5 + z * (2.0 / 7 + z * (2.0 / 9 + z * (2.0 / 11 +
        z * (2.0 / 13 + z * (2.0 / 15 + z * (2.0 / 17 + z * (2.0 / 19 + z * (2.0 / 21 +
        z * (2.0 / 23)))))))))));
    const double h = 0.5 * f * f;
    const double kd = (double)k;
    /* k·ln2_hi + (f − (h − (s·(h + R) + k·ln2_lo))): the exact parts last */
    return kd * ln2_hi + (f - (h - (s * (h + R) + kd * ln2_lo)));
}

/* π/2 in three parts of 33, 33 and 53 bits (Cody & Waite): with |n| < 2^20, n·P1 and n·P2
 * are exact, so x − n·P1 − n·P2 − n·P3 loses nothing to the products. Written in hex so
 * that every bit is the one meant: P1 + P2 + P3 = π/2 to about 2^-122. */
static const double pio2_1 = 0x1.921fb544p+0;
static const double pio2_2 = 0x1.0b4611a6p-34;
static const double pio2_3 = 0x1.3198a2e037073p-69;
static const double two_over_pi = 0x1.45f306dc9c883p-1;

/* The largest |x| whose reduction is exact in the products (|n| < 2^20). Every angle the
 * project takes is far below it (positions up to max_len, the schedule's π·t). */
#define FM_TRIG_EXACT 1.6e6

/* x = n·π/2 + (r + lo) with |r| ≤ π/4 (a little more beyond FM_TRIG_EXACT) and lo the
 * part of the remainder below r's last bit; returns n mod 4. n is rounded by the same
 * 1.5·2^52 addition as fm_exp's. Why lo: near 5000, r = 0.25 carries the rounding of the
 * subtraction x − n·π/2 (half an ulp of r), and the kernels add their own; keeping what
 * that subtraction rounded away (exactly, by Knuth's two-sum) holds sin and cos within
 * 1 ulp where r alone reaches 2. */
static unsigned trig_reduce(double x, double *r, double *lo)
{
    const double shift = 6755399441055744.0; /* 1.5·2^52 */
    const double t = x * two_over_pi + shift;
    const double n = t - shift;
    const double a = x - n * pio2_1; /* exact: n·P1 is, and a is close to x or small */
    const double w = n * pio2_2;     /* exact: 33 bits times at most 20 */
    /* two-sum: r1 + e1 = a − w exactly, whichever of the two is larger */
    const double r1 = a - w, bv = r1 - a;
    const double e1 = (a - (r1 - bv)) + (-w - bv);
    const double w3 = n * pio2_3; /* below 2^-48: its own rounding is far below r's ulp */
    *r = r1 - w3;
    *lo = ((r1 - *r) - w3) + e1;
    /* n's low bits are the low bits of t's significand (t's last bit is worth 1) */
    return (unsigned)(fm_to_bits(t) & 3u);
}

/* sin(r + lo) for |r| ≤ π/4 (≈ 0.785) and |lo| below r's ulp: r + r³·p(r²), the Taylor
 * series to r^17 (the next term, r^19/19!, is below 1e-19 of r), plus lo·cos r ≈
 * lo·(1 − r²/2). r enters last, as the exact leading term. */
static double sin_kernel(double r, double lo)
{
    const double z = r * r;
    const double p =
        -1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 +
        z * (-1.0 / 39916800 + z * (1.0 / 6227020800.0 + z * (-1.0 / 1307674368000.0 +
        z * (1.0 / 355687428096000.0)))))));
    return r + (r * z * p + lo * (1.0 - 0.5 * z));
}

/* cos(r + lo) for |r| ≤ π/4: 1 − r²/2 + r⁴·q(r²), the series to r^18 (next term below
 * 1e-20), minus lo·sin r ≈ lo·r. 1 − r²/2 loses up to 0.3 of its value to rounding, so
 * its rounding error is put back: w = 1 − h rounds, (1 − w) − h is exactly what it lost. */
static double cos_kernel(double r, double lo)
{
    const double z = r * r, h = 0.5 * z, w = 1.0 - h;
    const double q =
        1.0 / 24 + z * (-1.0 / 720 + z * (1.0 / 40320 + z * (-1.0 / 3628800 +
        z * (1.0 / 479001600.0 + z * (-1.0 / 87178291200.0 + z * (1.0 / 20922789888000.0 +
        z * (-1.0 / 6402373705728000.0)))))));
    return w + (((1.0 - w) - h) + (z * z * q - r * lo));
}

/* sin x and cos x by the quadrant n mod 4 of the reduction:
 *     n: 0      1       2       3
 *   sin: s(r)   c(r)   −s(r)   −c(r)
 *   cos: c(r)  −s(r)   −c(r)    s(r)
 * Within 1 ulp for |x| < FM_TRIG_EXACT; beyond it the reduction loses bits gradually
 * (the same bits everywhere still); ±∞ and NaN give NaN, and so does |x| ≥ 2^51, where
 * the rounding of n itself fails. ±0 gives sin ±0, as libm. */
double fm_sin(double x)
{
    if (!(fabs(x) < 0x1p51))
        return NAN;
    if (x == 0.0)
        return x; /* keeps the sign of −0, which the sums below would lose */
    double r, lo;
    switch (trig_reduce(x, &r, &lo)) {
    case 0: return sin_kernel(r, lo);
    case 1: return cos_kernel(r, lo);
    case 2: return -sin_kernel(r, lo);
    default: return -cos_kernel(r, lo);
    }
}

double fm_cos(double x)
{
    if (!(fabs(x) < 0x1p51))
        return NAN;
    double r, lo;
    switch (trig_reduce(x, &r, &lo)) {
    case 0: return cos_kernel(r, lo);
    case 1: return -sin_kernel(r, lo);
    case 2: return -cos_kernel(r, lo);
    default: return sin_kernel(r, lo);
    }
}

/* b^y for b > 0 as e^{y·ln b}, the way a bias correction 1 − β^t needs it. Repeated
 * squaring would double its relative error at each squaring (about t ulp for b^t); here
 * the error is about (1 + 2|y ln b|) ulp: a few ulp while b^y is still far from 0, which
 * is where 1 − β^t depends on it. b ≤ 0 gives NaN (no caller has one). */
double fm_pow(double b, double y)
{
    if (!(b > 0.0))
        return NAN;
    return fm_exp(y * fm_log(b));
}
