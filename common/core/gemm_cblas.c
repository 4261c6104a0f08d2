/* gemm_cblas.c — cblas_dgemm, the name under which GSL's gsl_blas_dgemm calls a CBLAS,
 * answered by the project's own product (gemm.c) instead of GSL's reference gslcblas:
 * the same bits, several times faster.
 *
 * Where it is linked. Only in the builds that take their CBLAS from GSL's gslcblas: the
 * native `make BLAS=gsl` and the WebAssembly builds (`make web`). The Makefile leaves
 * this file out of the OpenBLAS build, where it would hide OpenBLAS's own cblas_dgemm.
 * Every other CBLAS routine (dgemv, ddot, daxpy ...) still comes from gslcblas: a
 * definition in the program comes before the libraries on the link line, so the linker
 * takes this cblas_dgemm and never pulls gslcblas's (each gslcblas routine is an object
 * of its own in the static library; with the shared one, the program's definition is the
 * one the dynamic linker binds libgsl's calls to).
 *
 * The arguments are checked as GSL checks them (gsl/cblas/error_cblas_l3.h): a bad one is
 * reported through cblas_xerbla, which GSL's CBLAS defines (it prints the position of the
 * argument and aborts). gsl_blas_dgemm checks the shapes before it calls, so a report
 * here means a direct call with bad arguments. */
#include <gsl/gsl_cblas.h>

#include "gemm.h"

/* The position (1-based, as CBLAS counts) of the first bad argument, 0 when none:
 * the order, the transpositions, the sizes, then each leading dimension against the
 * width its matrix spans in memory (at least 1). */
static int bad_argument(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, int lda, int ldb,
                        int ldc)
{
    if (order != CblasRowMajor && order != CblasColMajor)
        return 1;
    if (ta != CblasNoTrans && ta != CblasTrans && ta != CblasConjTrans)
        return 2;
    if (tb != CblasNoTrans && tb != CblasTrans && tb != CblasConjTrans)
        return 3;
    if (m < 0)
        return 4;
    if (n < 0)
        return 5;
    if (k < 0)
        return 6;
    const int row = order == CblasRowMajor;
    /* the width of a stored row (row-major) or column (column-major) of A, B and C */
    const int wa = (ta == CblasNoTrans) == row ? k : m;
    const int wb = (tb == CblasNoTrans) == row ? n : k;
    const int wc = row ? n : m;
    if (lda < (wa > 1 ? wa : 1))
        return 9;
    if (ldb < (wb > 1 ? wb : 1))
        return 11;
    if (ldc < (wc > 1 ? wc : 1))
        return 14;
    return 0;
}

void cblas_dgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                 const enum CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                 const double alpha, const double *A, const int lda, const double *B,
                 const int ldb, const double beta, double *C, const int ldc)
{
    const int pos = bad_argument(Order, TransA, TransB, M, N, K, lda, ldb, ldc);
    if (pos) {
        cblas_xerbla(pos, __FILE__, "");
        return;
    }
    gemm_dgemm((gemm_order)Order, (gemm_trans)TransA, (gemm_trans)TransB, (size_t)M,
               (size_t)N, (size_t)K, alpha, A, (size_t)lda, B, (size_t)ldb, beta, C,
               (size_t)ldc);
}
