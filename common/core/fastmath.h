/* fastmath.h — the project's own elementary functions (prefix: fm_): the exponential, σ
 * and tanh that vectorise, written inline here, the logarithm, sine, cosine and power of
 * fastmath.c, and the attribute that compiles hot loops for wider vector units. Every
 * model uses these: recurrent gates, additive-attention scores, the softmax of
 * dot-product attention and a position table, the loss, Adam and the schedule. No value of
 * libm's reaches a weight, a loss or a printed number (sqrt aside, which IEEE 754
 * rounds correctly everywhere): libm's last bit differs between C libraries and, in
 * glibc, between processors (fastmath.c says more).
 *
 * Why. glibc's exp is accurate and fast for one number, but it is a call the compiler
 * cannot see into, so a loop that calls it stays scalar: one exp at a time, about 5 ns
 * each here. fm_exp is written inline from adds, multiplies and bit operations only, so
 * the compiler vectorises a loop over it (4 or 8 doubles at a time with AVX2 or AVX-512).
 *
 * How (the textbook method; e.g. Muller, "Elementary Functions", ch. 11, and Cody & Waite
 * 1980 for the two-part constant):
 *     x = n·ln2 + r,  n = round(x / ln2),  |r| ≤ ln2/2 ≈ 0.347
 *     e^x = 2^n · e^r
 *   - n is rounded by adding 1.5·2^52 (the sum's last bit is then worth 1, so the addition
 *     itself rounds; no conversion to an integer, which is undefined for NaN);
 *   - r = x − n·ln2_hi − n·ln2_lo: ln2_hi has its last 11 bits 0, so n·ln2_hi is exact for
 *     |n| < 2^11 and the subtraction loses nothing (Sterbenz);
 *   - e^r by its Taylor series to r^13 (the first term left out, r^14/14!, is below
 *     5e-18 relative), written e^r = 1 + (r + r²·q(r)) with q = 1/2! + r/3! + ... +
 *     r^11/13!: the sum is formed by the last two additions, so their roundings are the
 *     ones that matter, and q enters only through r²·q < 0.07, where its own rounding
 *     errors weigh less than a tenth of an ulp of the result. q itself is evaluated by
 *     Estrin's scheme (pairs a + b·r, then pairs of pairs with r², r⁴), so the chain of
 *     dependent operations from r to e^r is 11 long where Horner's rule makes it 26:
 *     the gate loops, which run five exps side by side, wait on that chain, not on the
 *     arithmetic units;
 *   - 2^n is built from its exponent bits, in two factors 2^n1·2^n2 (n1 + n2 = n) that are
 *     both normal doubles, so results that are subnormal (x < −708.4) or just below
 *     overflow (2^1024·e^r with e^r < 1) come out right with a single final rounding.
 * Measured against glibc over [−746, 710] (tests/test_fastmath.c): at most 1 ulp apart.
 *
 * Two exps used to live here and in a model's folder (Horner's rule to the end, within 1 ulp; and
 * Estrin's scheme throughout, within 2 ulp, ~0.4 ulp on average, because its last
 * additions round sums of several terms). This one keeps the first's accuracy (1 ulp at
 * most, 0.10 on average) at the second's speed: a recurrent gate pass of one step (B = 32,
 * H = 128) takes 33 µs with it or with the Estrin exp, 47 µs with Horner's (AVX-512).
 *
 * Special values, as exp: x = −∞ and x < −745.2 give exactly +0; x = +∞ and x > 709.8
 * give +∞; NaN gives NaN. x is first clamped to [−746, 710], which keeps every integer
 * in range and changes no result (e^−746 rounds to 0, e^710 overflows); the clamp is
 * written with comparisons that are false for NaN, so a NaN goes through untouched, and
 * as bit-mask selects (fm_select), not ?: — with ?: GCC branches around the arithmetic
 * that follows and then vectorises the loop only with AVX-512's masks, not with AVX2.
 *
 * Reproducibility. Every step is a plain IEEE operation in a fixed order; nothing relies
 * on -ffast-math (which this project never uses) and -std=c11 disables FMA contraction in
 * GCC, so the scalar code and every vector width give the same bits.
 *
 * FM_CLONES. Put it before the definition of a function whose loops should vectorise:
 * with GCC ≥ 11 on x86-64 Linux the function is compiled three times (baseline x86-64,
 * x86-64-v3 = AVX2, x86-64-v4 = AVX-512) and the loader picks the widest the processor
 * has; the binary stays portable. Elsewhere it is empty. -DFM_CLONES= turns it off.
 */
#ifndef ATTNLAB_FASTMATH_H
#define ATTNLAB_FASTMATH_H

#include <stdint.h>
#include <string.h>

#ifndef FM_CLONES
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#if __GNUC__ >= 11
#define FM_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#endif
#ifndef FM_CLONES
#define FM_CLONES
#endif

/* FM_INLINE marks the small row kernels that FM_CLONES functions call: they must be
 * inlined into each clone to be compiled for its vector width (a call would reach one
 * baseline copy), and GCC does not always inline a function of another target on its
 * own. */
#if defined(__GNUC__)
#define FM_INLINE static inline __attribute__((always_inline))
#else
#define FM_INLINE static inline
#endif

/* FM_PREFETCH(p) asks for the cache line at p ahead of its use (a hint: it never faults,
 * even past the end of an array). The hardware's own prefetcher stops at every 4 KiB
 * page, which costs a loop that streams megabytes a stall at each page. */
#if defined(__GNUC__)
#define FM_PREFETCH(p) __builtin_prefetch(p)
#else
#define FM_PREFETCH(p) ((void)(p))
#endif

/* Loops over independent elements are written as blocks of FM_LANES plus a tail, and
 * sums and maxima keep FM_LANES partial results: a fixed trip count is what lets -O2
 * vectorise them, and a fixed order of the partial results keeps the bits the same at
 * every vector width. */
#define FM_LANES 8

/* The sum of FM_LANES partial sums, added pairwise in a fixed order: the last step of
 * every such reduction, the same bits at every vector width. */
FM_INLINE double fm_lanes_sum(const double *s)
{
    _Static_assert(FM_LANES == 8, "fm_lanes_sum adds exactly 8 partial sums");
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* y (n) += x (n), in blocks of FM_LANES so that it vectorises. */
FM_INLINE void fm_add_row(double *restrict y, const double *restrict x, size_t n)
{
    size_t j = 0;
    for (; j + FM_LANES <= n; j += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            y[j + l] += x[j + l];
    for (; j < n; j++)
        y[j] += x[j];
}

FM_INLINE double fm_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

FM_INLINE uint64_t fm_to_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* c ? a : b as bit masks: the form the vectoriser takes at every width (see the top of
 * the file). */
FM_INLINE double fm_select(int c, double a, double b)
{
    const uint64_t m = (uint64_t)0 - (uint64_t)(c != 0); /* all ones when c holds */
    return fm_from_bits((fm_to_bits(a) & m) | (fm_to_bits(b) & ~m));
}

/* e^x, within 1 ulp of the correctly rounded value; see the top of the file. */
FM_INLINE double fm_exp(double x)
{
    const double log2e = 1.4426950408889634;          /* 1/ln 2 */
    const double ln2_hi = 6.93147180369123816490e-01; /* ln 2, last 11 bits 0 */
    const double ln2_lo = 1.90821492927058770002e-10; /* ln 2 − ln2_hi */
    const double shift = 6755399441055744.0;          /* 1.5·2^52 */
    /* clamp: false for NaN, so NaN stays */
    const int low = x < -746.0;
    x = fm_select(low, -746.0, x);
    x = fm_select(x > 710.0, 710.0, x);
    /* n = round(x/ln2): t's last bit is worth 1, and t − shift is n exactly */
    const double t = x * log2e + shift;
    const double n = t - shift;
    const double r = (x - n * ln2_hi) - n * ln2_lo;
    /* q = Σ_{k=2..13} r^{k−2}/k! by Estrin: the pairs c_k + c_{k+1}·r, then pairs of
     * pairs with r², then r⁴. Separate multiplies and adds, not fma(): where the processor
     * has no FMA unit, or the compiler makes no clones (clang), fma() is a library call
     * per step, which would make this slower than exp itself */
    const double r2 = r * r, r4 = r2 * r2;
    const double p23 = 1.0 / 2.0 + r * (1.0 / 6.0);
    const double p45 = 1.0 / 24.0 + r * (1.0 / 120.0);
    const double p67 = 1.0 / 720.0 + r * (1.0 / 5040.0);
    const double p89 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    const double p1011 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    const double p1213 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    const double q25 = p23 + r2 * p45, q69 = p67 + r2 * p89, q1013 = p1011 + r2 * p1213;
    const double q = q25 + r4 * (q69 + r4 * q1013);
    /* e^r = 1 + (r + r²·q): the two additions that carry the result come last */
    const double e_r = 1.0 + (r + r2 * q);
    /* below the clamp the answer is +0: set it here, so that the scaling below multiplies
     * an exact 0 instead of producing a result that underflows, which x86 processors
     * finish in microcode (measured: 7 ns per element instead of 1; the masked entries of
     * a softmax are all −∞ and would each pay it) */
    const double p = fm_select(low, 0.0, e_r);
    /* 2^n = 2^n1 · 2^n2. With u = n + 2100 ≥ 0 (n ∈ [−1077, 1025] after the clamp), the
     * halves u1 = u/2 and u − u1 give n1 = u1 − 1050 and n2 = n − n1, whose biased
     * exponents n1 + 1023 = u1 − 27 and n2 + 1023 = u − u1 − 27 lie in [484, 1536]: both
     * factors are normal. Unsigned arithmetic only, which every vector unit has. */
    const uint64_t u = fm_to_bits(t) - fm_to_bits(shift) + 2100u;
    const uint64_t u1 = u >> 1;
    const double s1 = fm_from_bits((u1 - 27u) << 52);
    const double s2 = fm_from_bits((u - u1 - 27u) << 52);
    return p * s1 * s2;
}

/* The squashing functions of the recurrent gates, one fm_exp each:
 *     σ(a) = 1 / (1 + e^{−a}),      tanh(a) = 2σ(2a) − 1 = 1 − 2 / (1 + e^{2a}),
 * because libm's tanh costs several exps (it works through expm1 for relative accuracy
 * near 0), and without a branch on the sign, which gate pre-activations would mispredict
 * half the time. Overflow is harmless: e^{±a} = ∞ gives exactly 0 or ±1, never NaN; a
 * NaN stays NaN. Both stay within ~2e-16 of the exact value in absolute terms; tanh
 * loses relative accuracy only near 0, which no gate needs (tests/test_fastmath.c holds
 * both to libm). */
FM_INLINE double fm_sigmoid(double a) { return 1.0 / (1.0 + fm_exp(-a)); }
FM_INLINE double fm_tanh(double a) { return 1.0 - 2.0 / (1.0 + fm_exp(2.0 * a)); }

/* The rest of the project's own elementary functions (fastmath.c): scalar, for the few
 * places that are not hot loops. Each is a fixed sequence of IEEE operations, so, like
 * fm_exp, it gives the same bits on every processor and C library. */

/* ln x, within 1 ulp; ln 0 = −∞, NaN for x < 0. */
double fm_log(double x);
/* sin x and cos x, within 1 ulp for |x| < 1.6e6 (every angle the project takes);
 * NaN for ±∞, NaN and |x| ≥ 2^51. */
double fm_sin(double x);
double fm_cos(double x);
/* b^y = e^{y·ln b} for b > 0, within about (1 + 2|y ln b|) ulp. */
double fm_pow(double b, double y);

/* ---- row helpers of the vectorised kernels ---- */

/* y (n) += a·x (n) and x (n) *= a, in blocks of FM_LANES (see above); inline, so each
 * clone of a caller gets its own vector width. */
FM_INLINE void fm_axpy(double *restrict y, double a, const double *restrict x, size_t n)
{
    size_t k = 0;
    for (; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            y[k + l] += a * x[k + l];
    for (; k < n; k++)
        y[k] += a * x[k];
}

FM_INLINE void fm_scal(double *x, double a, size_t n)
{
    size_t k = 0;
    for (; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            x[k + l] *= a;
    for (; k < n; k++)
        x[k] *= a;
}

/* The largest of FM_LANES partial maxima, in a fixed order. */
FM_INLINE double fm_lanes_max(const double *mx)
{
    double m = mx[0];
    for (size_t l = 1; l < FM_LANES; l++)
        m = mx[l] > m ? mx[l] : m;
    return m;
}

#endif
