/* gemm.h — the project's own matrix product (prefix: gemm_), with the bits of GSL's
 * reference CBLAS: C = alpha·op(A)·op(B) + beta·C computed in the very order, rounding by
 * rounding, of GSL's cblas_dgemm (gslcblas), only faster (blocked, packed, vectorised).
 *
 * Why. A build on GSL's own CBLAS (`make BLAS=gsl`, and the browser page, which has no
 * other) spends most of a training step in gslcblas's dgemm, three plain loops. Any
 * faster product that summed in another order would change the last bits of every
 * checkpoint, and the page would no longer compute the native program's bits. This one
 * keeps each element's sequence of operations and changes only which elements are worked
 * on together (gemm.c says how). gemm_cblas.c hands it to GSL as cblas_dgemm in the
 * builds that link gslcblas, never in the OpenBLAS build.
 *
 * The order, per element of C (row-major; a column-major call is the row-major product
 * of the transposes, C' = op(B)'·op(A)', so the two operands swap places). F is the left
 * operand, G the right one, n1 × n2 the shape of C:
 *   - nothing at all when alpha = 0 and beta = 1;
 *   - first C = 0.0 where beta = 0 (whatever C held), C = beta·C where beta ≠ 1;
 *   - then nothing more when alpha = 0;
 *   - G not transposed (A·B, Aᵀ·B): for k = 0, 1, ..., K−1: t = alpha·F[i,k], and when
 *     t ≠ 0.0 (so t = ±0 is skipped, a NaN is not): C[i,j] = C[i,j] + t·G[k,j];
 *   - G transposed (A·Bᵀ, Aᵀ·Bᵀ): s = 0.0, s = s + F[i,k]·G[j,k] for k = 0 .. K−1, then
 *     C[i,j] = C[i,j] + alpha·s.
 * Every operation rounds to double: no fused multiply-add (the build's -ffp-contract=off).
 */
#ifndef ATTNLAB_GEMM_H
#define ATTNLAB_GEMM_H

#include <stddef.h>

/* The layout of the matrices and whether an operand is transposed, as CBLAS says them
 * (their values are those of CBLAS's enums, so a caller may pass those). */
typedef enum { GEMM_ROW_MAJOR = 101, GEMM_COL_MAJOR = 102 } gemm_order;
typedef enum { GEMM_NO_TRANS = 111, GEMM_TRANS = 112, GEMM_CONJ_TRANS = 113 } gemm_trans;

/* C (M,N) = alpha · op(A) (M,K) · op(B) (K,N) + beta · C, in GSL's order of operations
 * (above), fast. op(X) is X or Xᵀ as trans says (CONJ_TRANS is TRANS for real numbers).
 * lda, ldb, ldc are the leading dimensions, the distance between consecutive rows
 * (row-major) or columns (column-major) in doubles, each at least the width it spans.
 * The arguments are not checked (gemm_cblas.c checks them as GSL does); C must not
 * overlap A or B. Reads A and B, writes the M × N elements of C and nothing else. */
void gemm_dgemm(gemm_order order, gemm_trans transa, gemm_trans transb, size_t m, size_t n,
                size_t k, double alpha, const double *a, size_t lda, const double *b,
                size_t ldb, double beta, double *c, size_t ldc);

/* The same product as plain loops, transcribed from the order above and nothing else:
 * the yardstick gemm_dgemm is tested against (tests/test_gemm.c), bit for bit. */
void gemm_dgemm_reference(gemm_order order, gemm_trans transa, gemm_trans transb,
                          size_t m, size_t n, size_t k, double alpha, const double *a,
                          size_t lda, const double *b, size_t ldb, double beta, double *c,
                          size_t ldc);

/* How gemm_dgemm's vectors are compiled: "wasm" (WebAssembly SIMD), "gnu" (GCC's and
 * clang's vector extension) or "scalar" (plain C). */
const char *gemm_vectors(void);

#endif /* ATTNLAB_GEMM_H */
