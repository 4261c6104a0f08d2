/* test_gemm.c — tests of common/core/gemm.[ch] (prefix gemm_): the fast product gives,
 * bit for bit, what the plain transcription of GSL's order gives (gemm_dgemm_reference),
 * for both layouts and every transposition, sizes from 0 through the edges of every
 * block, leading dimensions wider than the matrices, alpha and beta in {0, 1, −1, 0.5,
 * others} and operands holding zeros, −0.0, ±∞ and NaN; and what GSL's own compiled
 * cblas_dgemm gives (libgslcblas, loaded at run time, where it is installed).
 *
 * Equal means the same 64 bits, with one exception: two NaNs are equal whatever their
 * payloads. Which of two NaN operands an addition returns depends on the order in which
 * the compiler puts them, and a compiler may swap the operands of a commutative
 * operation; a result that is NaN stops training anyway. A −0.0 against a +0.0 is a
 * difference. Each case compares the whole buffer of C, the gaps between its rows (a
 * leading dimension larger than the width) included, which no product may touch. */
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_rng.h>

#include "../common/core/gemm.h"
#include "testutil.h"

/* ---- operands ----------------------------------------------------------------------- */

/* What fill() puts in a matrix: plain values only, or with special values among them. */
enum { PLAIN = 0, SPECIAL = 1 };

/* n doubles of non-round values in [−2, 2), a tenth of them 0.0; with SPECIAL also
 * −0.0, ±∞ and NaN, a few per cent each. */
static void fill(double *x, size_t n, int special, gsl_rng *r)
{
    for (size_t e = 0; e < n; e++) {
        const double u = gsl_rng_uniform(r);
        double v = 4.0 * gsl_rng_uniform(r) - 2.0;
        if (u < 0.10)
            v = 0.0;
        else if (special && u < 0.16)
            v = -0.0;
        else if (special && u < 0.18)
            v = u < 0.17 ? INFINITY : -INFINITY;
        else if (special && u < 0.20)
            v = NAN;
        x[e] = v;
    }
}

/* Index of the first double where a and b differ (other than NaN against NaN); n when
 * none does. */
static size_t first_difference(const double *a, const double *b, size_t n)
{
    for (size_t e = 0; e < n; e++) {
        if (isnan(a[e]) && isnan(b[e]))
            continue;
        if (memcmp(a + e, b + e, sizeof *a) != 0)
            return e;
    }
    return n;
}

/* The bits of a double, for messages. */
static unsigned long long bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (unsigned long long)u;
}

/* ---- one case ----------------------------------------------------------------------- */

/* A product as CBLAS takes it. */
typedef struct gemm_case {
    gemm_order order;
    gemm_trans ta, tb;
    size_t m, n, k, pad; /* pad: how much each leading dimension exceeds its width */
    double alpha, beta;
    int special; /* PLAIN or SPECIAL operands */
} gemm_case;

/* The stored shape of op(X) (rows × cols of the wanted product) in a layout: the number
 * of rows or columns that the leading dimension spans, and how many of them. */
static void stored(const gemm_case *g, gemm_trans t, size_t rows, size_t cols, size_t *width,
                   size_t *lines)
{
    const int trans = t != GEMM_NO_TRANS;
    const size_t r = trans ? cols : rows, c = trans ? rows : cols; /* X itself is r × c */
    *width = g->order == GEMM_ROW_MAJOR ? c : r;
    *lines = g->order == GEMM_ROW_MAJOR ? r : c;
}

/* Signature of CBLAS's own cblas_dgemm (GSL's, loaded by name). */
typedef void (*cblas_dgemm_fn)(int order, int ta, int tb, int m, int n, int k, double alpha,
                               const double *a, int lda, const double *b, int ldb,
                               double beta, double *c, int ldc);

/* Runs the case with gemm_dgemm and with the yardstick (other == NULL: the
 * transcription; else that cblas_dgemm) on the same operands, and fails on the first
 * element of C's buffer where they differ. */
static void check_case(const gemm_case *g, gsl_rng *r, cblas_dgemm_fn other)
{
    size_t wa, la, wb, lb, wc, lc;
    stored(g, g->ta, g->m, g->k, &wa, &la);
    stored(g, g->tb, g->k, g->n, &wb, &lb);
    stored(g, GEMM_NO_TRANS, g->m, g->n, &wc, &lc);
    /* CBLAS asks every leading dimension to be at least 1 */
    const size_t lda = (wa ? wa : 1) + g->pad, ldb = (wb ? wb : 1) + g->pad;
    const size_t ldc = (wc ? wc : 1) + g->pad;
    const size_t na = lda * la + 1, nb = ldb * lb + 1, nc = ldc * lc + 1;
    double *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
    double *c = malloc(nc * sizeof *c), *want = malloc(nc * sizeof *c);
    ck_assert(a && b && c && want);
    fill(a, na, g->special, r);
    fill(b, nb, g->special, r);
    fill(c, nc, g->special, r);
    memcpy(want, c, nc * sizeof *c);
    if (other)
        other((int)g->order, (int)g->ta, (int)g->tb, (int)g->m, (int)g->n, (int)g->k,
              g->alpha, a, (int)lda, b, (int)ldb, g->beta, want, (int)ldc);
    else
        gemm_dgemm_reference(g->order, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a, lda, b,
                             ldb, g->beta, want, ldc);
    gemm_dgemm(g->order, g->ta, g->tb, g->m, g->n, g->k, g->alpha, a, lda, b, ldb, g->beta, c,
               ldc);
    const size_t e = first_difference(c, want, nc);
    ck_assert_msg(e == nc,
                  "%s-major, op %d·%d, m %zu n %zu k %zu, leading dimensions +%zu, alpha %g "
                  "beta %g, %s operands: C's double %zu (of %zu, ldc %zu) is %.17g (%016llx), "
                  "%s gives %.17g (%016llx); vectors: %s",
                  g->order == GEMM_ROW_MAJOR ? "row" : "column", (int)g->ta, (int)g->tb, g->m,
                  g->n, g->k, g->pad, g->alpha, g->beta, g->special ? "special" : "plain", e,
                  nc, ldc, c[e], bits(c[e]), other ? "GSL's cblas_dgemm" : "the reference",
                  want[e], bits(want[e]), gemm_vectors());
    free(a), free(b), free(c), free(want);
}

/* The loop tests run over the 18 layouts and transpositions: case number _i. */
static const gemm_trans TRANS[] = {GEMM_NO_TRANS, GEMM_TRANS, GEMM_CONJ_TRANS};

static gemm_case layout(int i)
{
    gemm_case g;
    memset(&g, 0, sizeof g);
    g.order = i < 9 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
    g.ta = TRANS[(i % 9) / 3];
    g.tb = TRANS[i % 3];
    return g;
}

static const double ALPHAS[] = {0.0, 1.0, -1.0, 0.5, -0.3127, 1.7e3};
static const double BETAS[] = {0.0, 1.0, -1.0, 0.5, 1.713, -2.5e-3};
#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

/* ---- the tests ---------------------------------------------------------------------- */

/* Every small size (0 to 9 rows, columns and inner dimension: less than a micro-tile, one,
 * one and a bit), every alpha and beta, leading dimensions exact and wider, plain and
 * special operands. */
START_TEST(test_small_sizes_match_the_reference)
{
    static const size_t SIZES[] = {0, 1, 2, 3, 4, 5, 7, 9};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1000u + (unsigned long)_i);
    gemm_case g = layout(_i);
    size_t count = 0;
    for (size_t im = 0; im < COUNT(SIZES); im++)
        for (size_t in = 0; in < COUNT(SIZES); in++)
            for (size_t ik = 0; ik < COUNT(SIZES); ik++)
                for (size_t ia = 0; ia < COUNT(ALPHAS); ia++)
                    for (size_t ib = 0; ib < COUNT(BETAS); ib++, count++) {
                        g.m = SIZES[im], g.n = SIZES[in], g.k = SIZES[ik];
                        g.alpha = ALPHAS[ia], g.beta = BETAS[ib];
                        g.pad = count % 2 ? 3 : 0;
                        g.special = count % 3 == 0 ? SPECIAL : PLAIN;
                        check_case(&g, r, NULL);
                    }
    gsl_rng_free(r);
}
END_TEST

/* Sizes across the blocks' edges (MC = NC = 32 rows and columns, KC = 128 values of k, the
 * 4 × 4 micro-tile) and a long k of several blocks, where a chain of sums stops and
 * resumes. */
START_TEST(test_block_edges_match_the_reference)
{
    static const size_t MNK[][3] = {{33, 37, 129}, {32, 32, 128}, {65, 31, 257}, {1, 70, 300},
                                    {70, 1, 3},    {40, 40, 0},   {4, 4, 4},     {97, 66, 130},
                                    {5, 130, 7},   {64, 6, 1}};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2000u + (unsigned long)_i);
    gemm_case g = layout(_i);
    for (size_t s = 0; s < COUNT(MNK); s++)
        for (size_t v = 0; v < 4; v++) {
            g.m = MNK[s][0], g.n = MNK[s][1], g.k = MNK[s][2];
            g.alpha = v == 1 ? 1.0 : v == 2 ? -0.3127 : 0.5;
            g.beta = v == 0 ? 0.0 : v == 1 ? 1.0 : 0.7;
            g.pad = v % 2 ? 5 : 0;
            g.special = v == 3 ? SPECIAL : PLAIN;
            check_case(&g, r, NULL);
        }
    gsl_rng_free(r);
}
END_TEST

/* The skip, in numbers: with t = alpha·A[i,k] = 0, A·B leaves a −0.0 of C as it is even
 * where B holds ∞ (0·∞ would be NaN), while A·Bᵀ adds the whole dot product, NaN; and
 * beta = 0 writes 0.0 over a NaN of C. */
START_TEST(test_zero_skip_and_beta)
{
    const double a[2] = {0.0, -0.0}, b[2] = {INFINITY, INFINITY};
    double c[1] = {-0.0};
    /* (1×2)·(2×1): both t are ±0, both skipped */
    gemm_dgemm(GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, 1, 1, 2, 1.0, a, 2, b, 1, 1.0,
               c, 1);
    ck_assert_msg(c[0] == 0.0 && signbit(c[0]), "A·B: %g, want -0", c[0]);
    gemm_dgemm(GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, 1, 1, 2, 1.0, a, 2, b, 2, 1.0, c, 1);
    ck_assert_msg(isnan(c[0]), "A·Bᵀ: %g, want NaN (0·∞ is summed)", c[0]);
    gemm_dgemm(GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, 1, 1, 2, 0.0, a, 2, b, 1, 0.0,
               c, 1);
    ck_assert_msg(c[0] == 0.0 && !signbit(c[0]), "beta 0: %g, want +0", c[0]);
}
END_TEST

/* GSL's own cblas_dgemm, from its shared library when the system has one. */
static cblas_dgemm_fn gsl_cblas_dgemm(void **handle)
{
    static const char *const NAMES[] = {"libgslcblas.so.0", "libgslcblas.so",
                                        "libgslcblas.0.dylib", "libgslcblas.dylib"};
    for (size_t k = 0; k < COUNT(NAMES); k++) {
        *handle = dlopen(NAMES[k], RTLD_NOW | RTLD_LOCAL);
        if (!*handle)
            continue;
        void *sym = dlsym(*handle, "cblas_dgemm");
        if (sym) {
            cblas_dgemm_fn f;
            memcpy(&f, &sym, sizeof f); /* object pointer to function pointer, as POSIX allows */
            return f;
        }
        dlclose(*handle);
    }
    *handle = NULL;
    return NULL;
}

/* Whether that cblas_dgemm fuses a multiply and an add into one rounding (a library
 * compiled with contraction, as Debian's arm64 gslcblas is): c + a·b with a·b = 1 − 2⁻⁶⁰,
 * which rounds to 1 alone, so the sum is 0 unfused and −2⁻⁶⁰ fused. */
static int fuses(cblas_dgemm_fn gsl)
{
    const double a = 1.0 + ldexp(1.0, -30), b = 1.0 - ldexp(1.0, -30);
    double c = -1.0;
    gsl(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 1.0, &c, 1);
    return c != 0.0;
}

/* The same bits as GSL's compiled cblas_dgemm itself, on small and block-crossing sizes
 * (the transcription above is the test's reading of GSL's order; this is GSL). Not where
 * the system's library was compiled to fuse multiply-adds: its bits are then not GSL's
 * order rounding by rounding, and the program's, with this product, are. */
START_TEST(test_matches_gsl_cblas)
{
    void *handle;
    const cblas_dgemm_fn gsl = gsl_cblas_dgemm(&handle);
    if (!gsl || fuses(gsl)) {
        if (_i == 0)
            printf("gemm: %s: compared with the transcription only\n",
                   gsl ? "the system's libgslcblas fuses multiply-adds"
                       : "GSL's libgslcblas not found by dlopen");
        if (gsl)
            dlclose(handle);
        return;
    }
    static const size_t MNK[][3] = {{0, 3, 2}, {1, 1, 1}, {3, 5, 2}, {7, 9, 5},
                                    {33, 37, 129}, {5, 66, 200}};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3000u + (unsigned long)_i);
    gemm_case g = layout(_i);
    for (size_t s = 0; s < COUNT(MNK); s++)
        for (size_t ia = 0; ia < COUNT(ALPHAS); ia++)
            for (size_t ib = 0; ib < COUNT(BETAS); ib += 2) {
                g.m = MNK[s][0], g.n = MNK[s][1], g.k = MNK[s][2];
                g.alpha = ALPHAS[ia], g.beta = BETAS[ib + (ia % 2)];
                g.pad = ia % 2 ? 2 : 0;
                g.special = ib == 2 ? SPECIAL : PLAIN;
                check_case(&g, r, gsl);
            }
    gsl_rng_free(r);
    dlclose(handle);
}
END_TEST

Suite *make_gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("reference");
    tcase_set_timeout(tc, 120); /* under a sanitizer */
    tcase_add_loop_test(tc, test_small_sizes_match_the_reference, 0, 18);
    tcase_add_loop_test(tc, test_block_edges_match_the_reference, 0, 18);
    tcase_add_test(tc, test_zero_skip_and_beta);
    tcase_add_loop_test(tc, test_matches_gsl_cblas, 0, 18);
    suite_add_tcase(s, tc);
    return s;
}
