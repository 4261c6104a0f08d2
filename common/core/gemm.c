/* gemm.c — C = alpha·op(A)·op(B) + beta·C with the bits of GSL's reference cblas_dgemm,
 * blocked, packed and vectorised (gemm.h says the order of operations it keeps).
 *
 * What may change and what may not. Each element C[i,j] of the product is a chain of
 * roundings: in the "axpy" form (G = the right operand not transposed) it is
 * c ← c + t_k·G[k,j] for k ascending, skipping the k where t_k = alpha·F[i,k] is ±0; in
 * the "dot" form (G transposed) it is s ← s + F[i,k]·G[j,k] from s = +0.0, k ascending,
 * then c ← c + alpha·s. The chains of different elements never meet. So the chain of an
 * element must stay as it is, but which elements advance together, and in what order
 * the elements take their turns, is free. GSL advances one row of C at a time, reading
 * and writing all of it for every (i, k); here a tile of MR × NR elements stays in
 * registers for a whole run of k and advances two elements (j, j+1) per vector operation.
 * Stopping a chain and storing it (between two blocks of k) loses nothing: a double is
 * stored exactly.
 *
 * Layout. The loop nest (after Goto & van de Geijn, "Anatomy of high-performance matrix
 * multiplication", ACM TOMS 34(3), 2008, with fewer levels), over the part of C that
 * whole MR × NR tiles cover:
 *
 *   for each block of NC columns j of C
 *     for each block of MC rows i of C
 *       for each block of KC values of k, ascending
 *         axpy form: F's block packed as t = alpha·F (not when alpha = 1: t is F)
 *         dot form:  G's block packed transposed, so that G[j,k] and G[j+1,k] are
 *                    neighbours, as a vector wants them
 *         for each strip of NR columns, for each panel of MR rows: the micro-kernel
 *         advances that tile of C through the block's values of k (dot form: the tile
 *         of the sums s, from +0.0 at the first block; C = C + alpha·s at the last)
 *
 * What is not packed is read where it lies, through its strides. The packs and the dot
 * form's partial sums sit on the stack (sizes below), so a call allocates nothing. The
 * elements outside the whole tiles (the last n1 mod MR rows and n2 mod NR columns) are
 * worked one at a time in GSL's own loops: there are few of them, and the products of
 * a few rows or columns (a head of a short sequence, a small vocabulary) are where a
 * padded tile would waste the most.
 *
 * The skip. The axpy form adds nothing for a k where t = 0.0 or −0.0 (GSL's `if (temp !=
 * 0.0)`), and that changes bits: −0 + (+0·g) is +0, and 0·∞ is NaN. The micro-kernel
 * tests the MR values of t of one k together: when none is zero (the usual case), every
 * row advances; otherwise each row is tested alone. A NaN is not zero and advances, as
 * in GSL.
 *
 * Vectors. Two doubles at a time: WebAssembly's SIMD (wasm_simd128.h, compiled with
 * -msimd128, the page's default), GCC's and clang's vector extension elsewhere (SSE2 on
 * x86-64, NEON on arm64), and a portable pair of scalars for any other C11 compiler, or
 * when ATTNLAB_GEMM_SCALAR is defined. A lane's product and sum round exactly as the
 * scalar ones; the build's -ffp-contract=off keeps every multiply and add apart (each is
 * also its own statement here, so no compiler could fuse them under `#pragma STDC
 * FP_CONTRACT ON` either).
 */
#include "gemm.h"

#include <string.h>

#if defined(ATTNLAB_GEMM_SCALAR)
#define GEMM_VECTORS "scalar"
#elif defined(__wasm_simd128__)
#define GEMM_VECTORS "wasm"
#include <wasm_simd128.h>
#elif defined(__GNUC__)
#define GEMM_VECTORS "gnu"
#else
#define GEMM_VECTORS "scalar"
#endif

/* ---- two doubles: v2 and its five operations ------------------------------------------ */

#if defined(__wasm_simd128__) && !defined(ATTNLAB_GEMM_SCALAR)
typedef v128_t v2;
static inline v2 v2_load(const double *p) { return wasm_v128_load(p); }
static inline void v2_store(double *p, v2 x) { wasm_v128_store(p, x); }
static inline v2 v2_splat(const double *p) { return wasm_v128_load64_splat(p); }
static inline v2 v2_add(v2 x, v2 y) { return wasm_f64x2_add(x, y); }
static inline v2 v2_mul(v2 x, v2 y) { return wasm_f64x2_mul(x, y); }
#elif defined(__GNUC__) && !defined(ATTNLAB_GEMM_SCALAR)
typedef double v2 __attribute__((vector_size(16)));
/* memcpy: the packs and C are aligned to 8 bytes only; compilers make it one load */
static inline v2 v2_load(const double *p)
{
    v2 x;
    memcpy(&x, p, sizeof x);
    return x;
}
static inline void v2_store(double *p, v2 x) { memcpy(p, &x, sizeof x); }
static inline v2 v2_splat(const double *p) { return (v2){*p, *p}; }
static inline v2 v2_add(v2 x, v2 y) { return x + y; }
static inline v2 v2_mul(v2 x, v2 y) { return x * y; }
#else
typedef struct { double lo, hi; } v2;
static inline v2 v2_load(const double *p) { return (v2){p[0], p[1]}; }
static inline void v2_store(double *p, v2 x)
{
    p[0] = x.lo;
    p[1] = x.hi;
}
static inline v2 v2_splat(const double *p) { return (v2){*p, *p}; }
static inline v2 v2_add(v2 x, v2 y) { return (v2){x.lo + y.lo, x.hi + y.hi}; }
static inline v2 v2_mul(v2 x, v2 y) { return (v2){x.lo * y.lo, x.hi * y.hi}; }
#endif

/* ---- sizes ------------------------------------------------------------------------------ */

/* The micro-tile: MR rows × NR columns of C in 8 vector registers (x86-64 and
 * WebAssembly's engines have 16), plus 2 for a row of G and 1 for t. A strip of G and a
 * panel of F (KC values of k: 4 KiB each) stay in the first-level cache while the tiles
 * run through them; MC and NC bound the blocks, whose packs and partial sums take the
 * 34 KiB that gemm_blocked keeps on the stack (emscripten's smallest default stack is
 * 64 KiB). */
enum { MR = 4, NR = 4, KC = 128, MC = 16, NC = 16 };

/* A matrix read through strides: element (r, s) is at p[r·rs + s·ss]. F is read as (i, k),
 * G as (k, j), whatever their transposition. */
typedef struct strided {
    const double *p;
    size_t rs, ss;
} strided;

static inline const double *at(const strided *x, size_t r, size_t s)
{
    return x->p + r * x->rs + s * x->ss;
}

/* ---- the micro-kernel ------------------------------------------------------------------- */

/* Where a tile's MR × NR values come from and where they go (rows ld apart). in == NULL:
 * from +0.0 (the dot form's s = 0.0). With finish, out = out + alpha·value (the dot form's
 * last step), else out = value. */
typedef struct tile_io {
    const double *in;
    size_t ldin;
    double *out;
    size_t ldout;
    int finish;
    double alpha;
} tile_io;

/* One step of a row of the tile: c (2 vectors, NR = 4 columns) += t·g. A product and a
 * sum, each rounded, in two statements. */
#define ROW_STEP(c0, c1, t)                                                                \
    do {                                                                                   \
        const v2 p0_ = v2_mul(t, g0);                                                     \
        const v2 p1_ = v2_mul(t, g1);                                                     \
        c0 = v2_add(c0, p0_);                                                             \
        c1 = v2_add(c1, p1_);                                                             \
    } while (0)

/* Loads row r of a tile into c0, c1 (from +0.0 when p is NULL). */
#define ROW_LOAD(c0, c1, p, r)                                                             \
    do {                                                                                   \
        c0 = p ? v2_load(p + (r) * io->ldin) : zero;                                       \
        c1 = p ? v2_load(p + (r) * io->ldin + 2) : zero;                                   \
    } while (0)

/* Stores row r (finish: adds alpha times it, as GSL's C[i,j] += alpha * temp). */
#define ROW_STORE(c0, c1, r)                                                               \
    do {                                                                                   \
        double *o_ = io->out + (r) * io->ldout;                                            \
        if (io->finish) {                                                                  \
            const v2 q0_ = v2_mul(alpha, c0), q1_ = v2_mul(alpha, c1);                    \
            c0 = v2_add(v2_load(o_), q0_);                                                 \
            c1 = v2_add(v2_load(o_ + 2), q1_);                                             \
        }                                                                                  \
        v2_store(o_, c0);                                                                  \
        v2_store(o_ + 2, c1);                                                              \
    } while (0)

/* The axpy form's micro-kernel: the MR × NR tile of C at c (rows ldc apart) advances
 * through kb values of k, k ascending: c[r][j] += t[k][r]·g(k, j), with t a packed panel
 * (kb × MR, GSL's t = alpha·F) and g(k, j) at g[k·gks + j]. Where zero[k] is set, some t
 * of that k is ±0 and each row is tested alone: GSL adds nothing for a zero t. */
static void micro_axpy(size_t kb, const double *t, const unsigned char *zero, const double *g,
                       size_t gks, double *c, size_t ldc)
{
    v2 c00 = v2_load(c), c01 = v2_load(c + 2);
    v2 c10 = v2_load(c + ldc), c11 = v2_load(c + ldc + 2);
    v2 c20 = v2_load(c + 2 * ldc), c21 = v2_load(c + 2 * ldc + 2);
    v2 c30 = v2_load(c + 3 * ldc), c31 = v2_load(c + 3 * ldc + 2);
    for (size_t k = 0; k < kb; k++, t += MR, g += gks) {
        const v2 g0 = v2_load(g), g1 = v2_load(g + 2);
        if (!zero[k]) {
            const v2 t0 = v2_splat(t), t1 = v2_splat(t + 1);
            const v2 t2 = v2_splat(t + 2), t3 = v2_splat(t + 3);
            ROW_STEP(c00, c01, t0);
            ROW_STEP(c10, c11, t1);
            ROW_STEP(c20, c21, t2);
            ROW_STEP(c30, c31, t3);
            continue;
        }
        if (t[0] != 0.0) {
            const v2 t0 = v2_splat(t);
            ROW_STEP(c00, c01, t0);
        }
        if (t[1] != 0.0) {
            const v2 t1 = v2_splat(t + 1);
            ROW_STEP(c10, c11, t1);
        }
        if (t[2] != 0.0) {
            const v2 t2 = v2_splat(t + 2);
            ROW_STEP(c20, c21, t2);
        }
        if (t[3] != 0.0) {
            const v2 t3 = v2_splat(t + 3);
            ROW_STEP(c30, c31, t3);
        }
    }
    v2_store(c, c00), v2_store(c + 2, c01);
    v2_store(c + ldc, c10), v2_store(c + ldc + 2, c11);
    v2_store(c + 2 * ldc, c20), v2_store(c + 2 * ldc + 2, c21);
    v2_store(c + 3 * ldc, c30), v2_store(c + 3 * ldc + 2, c31);
}

/* The dot form's micro-kernel: the tile of sums advances through kb values of k, k
 * ascending: s[r][j] += f(r, k)·g[k][j], with f(r, k) at f[r·frs + k·fks] and g a packed
 * strip (kb × NR, G transposed); io says where the sums start and where they go. */
static void micro_dot(size_t kb, const double *f, size_t frs, size_t fks, const double *g,
                      const tile_io *io)
{
    const double zeros[2] = {0.0, 0.0};
    const v2 zero = v2_load(zeros), alpha = v2_splat(&io->alpha);
    v2 c00, c01, c10, c11, c20, c21, c30, c31;
    ROW_LOAD(c00, c01, io->in, 0);
    ROW_LOAD(c10, c11, io->in, 1);
    ROW_LOAD(c20, c21, io->in, 2);
    ROW_LOAD(c30, c31, io->in, 3);
    const double *f0 = f, *f1 = f + frs, *f2 = f + 2 * frs, *f3 = f + 3 * frs;
    for (size_t k = 0; k < kb; k++, f0 += fks, f1 += fks, f2 += fks, f3 += fks, g += NR) {
        const v2 g0 = v2_load(g), g1 = v2_load(g + 2);
        const v2 t0 = v2_splat(f0), t1 = v2_splat(f1);
        const v2 t2 = v2_splat(f2), t3 = v2_splat(f3);
        ROW_STEP(c00, c01, t0);
        ROW_STEP(c10, c11, t1);
        ROW_STEP(c20, c21, t2);
        ROW_STEP(c30, c31, t3);
    }
    ROW_STORE(c00, c01, 0);
    ROW_STORE(c10, c11, 1);
    ROW_STORE(c20, c21, 2);
    ROW_STORE(c30, c31, 3);
}

/* ---- packing ---------------------------------------------------------------------------- */

/* F's rows i0 .. i0+mb−1 (mb a multiple of MR) at values k0 .. k0+kb−1, as GSL's
 * t = alpha·F[i,k], into panels of MR rows, each kb × MR: panel q holds rows i0+q·MR ...,
 * its k-th line the MR values of that k; zero[q·kb + k] is set where one of them is ±0. */
static void pack_t(double *out, unsigned char *zero, const strided *F, size_t i0, size_t mb,
                   size_t k0, size_t kb, double alpha)
{
    for (size_t q = 0; q < mb; q += MR)
        for (size_t k = 0; k < kb; k++) {
            unsigned char z = 0;
            for (size_t r = 0; r < MR; r++) {
                const double t = alpha * *at(F, i0 + q + r, k0 + k);
                z |= t == 0.0;
                *out++ = t;
            }
            *zero++ = z;
        }
}

/* G's values k0 .. k0+kb−1 at columns j0 .. j0+nb−1 (nb a multiple of NR) into strips of
 * NR columns, each kb × NR: for the dot form, where G(k, j) lies at G[j·ldg + k], this is
 * the transposition that puts G(k, j) and G(k, j+1) side by side. */
static void pack_g(double *out, const strided *G, size_t k0, size_t kb, size_t j0, size_t nb)
{
    for (size_t q = 0; q < nb; q += NR)
        for (size_t k = 0; k < kb; k++)
            for (size_t j = 0; j < NR; j++)
                *out++ = *at(G, k0 + k, j0 + q + j);
}

/* ---- the product ------------------------------------------------------------------------ */

/* The axpy form over one block of k, for the whole tiles of rows i0 .. i0+mb−1 of C:
 * its panels of t packed in tp (with their zero flags), G read where it lies (in this
 * form its rows are contiguous: G->ss = 1), every strip of NR columns up to n2t. */
static void axpy_block(size_t i0, size_t mb, size_t n2t, size_t k0, size_t kb,
                       const double *tp, const unsigned char *zero, const strided *G,
                       double *C, size_t ldc)
{
    for (size_t j = 0; j < n2t; j += NR)
        for (size_t iq = 0; iq < mb; iq += MR)
            micro_axpy(kb, tp + iq * kb, zero + iq / MR * kb, at(G, k0, j), G->rs,
                       C + (i0 + iq) * ldc + j, ldc);
}

/* The dot form over one block of k, for the whole tiles of rows i0 .. i0+mb−1 and columns
 * j0 .. j0+nb−1 of C. G's block comes packed (transposed) in gp; F is read where it lies.
 * The sums start from +0.0 at the first block, wait in s (MC × NC, rows NC apart) between
 * blocks, and at the last one go into C as C + alpha·s. */
static void dot_block(size_t i0, size_t mb, size_t j0, size_t nb, size_t k0, size_t kb,
                      int first, int last, double alpha, const strided *F, const double *gp,
                      double *s, double *C, size_t ldc)
{
    for (size_t jq = 0; jq < nb; jq += NR)
        for (size_t iq = 0; iq < mb; iq += MR) {
            double *sp = s + iq * NC + jq;
            tile_io io = {first ? NULL : sp, NC, sp, NC, 0, alpha};
            if (last) {
                io.out = C + (i0 + iq) * ldc + j0 + jq, io.ldout = ldc;
                io.finish = 1;
            }
            micro_dot(kb, at(F, i0 + iq, k0), F->rs, F->ss, gp + jq * kb, &io);
        }
}

/* The elements of C outside the whole tiles (rows from i1 on, or columns from j1 on),
 * one at a time in GSL's order, over all of k: they are few (fewer than MR rows and NR
 * columns at the edges), and GSL's plain loops are the fastest way to do so little. */
static void edges(size_t n1, size_t n2, size_t i1, size_t j1, size_t nk, double alpha,
                  const strided *F, const strided *G, double *C, size_t ldc, int dot)
{
    for (size_t i = 0; i < n1; i++) {
        const size_t ja = i < i1 ? j1 : 0; /* in the whole rows, only the last columns */
        if (ja == n2)
            continue;
        double *c = C + i * ldc;
        if (!dot) {
            for (size_t k = 0; k < nk; k++) {
                const double t = alpha * *at(F, i, k);
                if (t != 0.0)
                    for (size_t j = ja; j < n2; j++) {
                        const double p = t * *at(G, k, j);
                        c[j] += p;
                    }
            }
            continue;
        }
        for (size_t j = ja; j < n2; j++) {
            double sum = 0.0;
            for (size_t k = 0; k < nk; k++) {
                const double p = *at(F, i, k) * *at(G, k, j);
                sum += p;
            }
            const double p = alpha * sum;
            c[j] += p;
        }
    }
}

/* C (n1, n2; rows ldc apart) += the product of F (n1 × K) and G (K × n2), alpha ≠ 0,
 * beta already applied: the axpy form (dot = 0) or the dot form. The whole tiles in
 * blocks, then the edges. */
static void gemm_blocked(size_t n1, size_t n2, size_t nk, double alpha, const strided *F,
                         const strided *G, double *C, size_t ldc, int dot)
{
    /* the packs (the axpy form's t and its zero flags, the dot form's G) and the dot
     * form's partial sums */
    double fp[KC * MC], gp[KC * NC], s[MC * NC];
    unsigned char zero[KC * MC / MR];
    const size_t n1t = n1 - n1 % MR, n2t = n2 - n2 % NR; /* the rows and columns in tiles */
    if (!dot) /* each block of t packed once, the whole width of C advanced through it */
        for (size_t k0 = 0; k0 < nk; k0 += KC) {
            const size_t kb = nk - k0 < KC ? nk - k0 : KC;
            for (size_t i0 = 0; i0 < n1t; i0 += MC) {
                const size_t mb = n1t - i0 < MC ? n1t - i0 : MC;
                pack_t(fp, zero, F, i0, mb, k0, kb, alpha);
                axpy_block(i0, mb, n2t, k0, kb, fp, zero, G, C, ldc);
            }
        }
    else
        for (size_t j0 = 0; j0 < n2t; j0 += NC) {
            const size_t nb = n2t - j0 < NC ? n2t - j0 : NC;
            for (size_t i0 = 0; i0 < n1t; i0 += MC) {
                const size_t mb = n1t - i0 < MC ? n1t - i0 : MC;
                for (size_t k0 = 0; k0 < nk; k0 += KC) {
                    const size_t kb = nk - k0 < KC ? nk - k0 : KC;
                    pack_g(gp, G, k0, kb, j0, nb);
                    dot_block(i0, mb, j0, nb, k0, kb, k0 == 0, k0 + kb == nk, alpha, F, gp,
                              s, C, ldc);
                }
            }
        }
    /* K = 0 in the dot form: no block ran, yet GSL adds alpha·0.0 to every element */
    const size_t i1 = dot && nk == 0 ? 0 : n1t;
    edges(n1, n2, i1, n2t, nk, alpha, F, G, C, ldc, dot);
}

/* The operands as GSL sees them: the row-major product n1 × n2 of F and G (a
 * column-major call swaps A and B), with F read as (i, k) and G as (k, j). Returns
 * whether G is transposed (the dot form). */
static int operands(gemm_order order, gemm_trans transa, gemm_trans transb, size_t m,
                    size_t n, const double *a, size_t lda, const double *b, size_t ldb,
                    size_t *n1, size_t *n2, strided *F, strided *G)
{
    const int row = order == GEMM_ROW_MAJOR;
    const int tf = (row ? transa : transb) != GEMM_NO_TRANS;
    const int tg = (row ? transb : transa) != GEMM_NO_TRANS;
    const size_t ldf = row ? lda : ldb, ldg = row ? ldb : lda;
    *n1 = row ? m : n;
    *n2 = row ? n : m;
    F->p = row ? a : b;
    G->p = row ? b : a;
    F->rs = tf ? 1 : ldf; /* F (i, k): F[i·ldf + k], or F[k·ldf + i] when transposed */
    F->ss = tf ? ldf : 1;
    G->rs = tg ? 1 : ldg; /* G (k, j): G[k·ldg + j], or G[j·ldg + k] when transposed */
    G->ss = tg ? ldg : 1;
    return tg;
}

/* beta's pass over C, before any product (GSL's "form y := beta*y"). */
static void scale_c(size_t n1, size_t n2, double beta, double *C, size_t ldc)
{
    if (beta == 1.0)
        return;
    for (size_t i = 0; i < n1; i++)
        for (size_t j = 0; j < n2; j++)
            C[i * ldc + j] = beta == 0.0 ? 0.0 : beta * C[i * ldc + j];
}

void gemm_dgemm(gemm_order order, gemm_trans transa, gemm_trans transb, size_t m, size_t n,
                size_t k, double alpha, const double *a, size_t lda, const double *b,
                size_t ldb, double beta, double *c, size_t ldc)
{
    if (alpha == 0.0 && beta == 1.0)
        return;
    size_t n1, n2;
    strided F, G;
    const int dot = operands(order, transa, transb, m, n, a, lda, b, ldb, &n1, &n2, &F, &G);
    scale_c(n1, n2, beta, c, ldc);
    if (alpha == 0.0)
        return;
    gemm_blocked(n1, n2, k, alpha, &F, &G, c, ldc, dot);
}

const char *gemm_vectors(void) { return GEMM_VECTORS; }

/* ---- the yardstick ---------------------------------------------------------------------- */

/* Written apart from everything above (no shared helper), so that a mistake there cannot
 * hide in both: GSL's order as gemm.h states it, with C indexed as GSL does, C[ldc·i + j]
 * for the row-major n1 × n2 product of F and G. */
void gemm_dgemm_reference(gemm_order order, gemm_trans transa, gemm_trans transb,
                          size_t m, size_t n, size_t k, double alpha, const double *a,
                          size_t lda, const double *b, size_t ldb, double beta, double *c,
                          size_t ldc)
{
    if (alpha == 0.0 && beta == 1.0)
        return;
    /* column-major: the row-major product of the transposes, so F = B and G = A */
    const int row = order == GEMM_ROW_MAJOR;
    const size_t n1 = row ? m : n, n2 = row ? n : m;
    const double *F = row ? a : b, *G = row ? b : a;
    const size_t ldf = row ? lda : ldb, ldg = row ? ldb : lda;
    const int trans_f = (row ? transa : transb) != GEMM_NO_TRANS;
    const int trans_g = (row ? transb : transa) != GEMM_NO_TRANS;
    if (beta == 0.0) {
        for (size_t i = 0; i < n1; i++)
            for (size_t j = 0; j < n2; j++)
                c[ldc * i + j] = 0.0;
    } else if (beta != 1.0) {
        for (size_t i = 0; i < n1; i++)
            for (size_t j = 0; j < n2; j++)
                c[ldc * i + j] *= beta;
    }
    if (alpha == 0.0)
        return;
    if (!trans_g) { /* F·G and Fᵀ·G: k outermost, a row of C per nonzero t */
        for (size_t p = 0; p < k; p++)
            for (size_t i = 0; i < n1; i++) {
                const double t = alpha * (trans_f ? F[ldf * p + i] : F[ldf * i + p]);
                if (t != 0.0)
                    for (size_t j = 0; j < n2; j++)
                        c[ldc * i + j] += t * G[ldg * p + j];
            }
        return;
    }
    for (size_t i = 0; i < n1; i++) /* F·Gᵀ and Fᵀ·Gᵀ: one dot product per element */
        for (size_t j = 0; j < n2; j++) {
            double s = 0.0;
            for (size_t p = 0; p < k; p++)
                s += (trans_f ? F[ldf * p + i] : F[ldf * i + p]) * G[ldg * j + p];
            c[ldc * i + j] += alpha * s;
        }
}
