/* ffn.c — the position-wise feed-forward network (Vaswani et al. 2017, §3.3, Eq. 2),
 * forward and backward (see tfm.h):
 *     FFN(x) = max(0, x·W_1ᵀ + b_1)·W_2ᵀ + b_2
 *
 * Design. The same two-layer network runs at every position, so the positions are the N
 * rows of one GEMM per layer. The ReLU is applied in place on the hidden layer H, which
 * the forward keeps: H ≠ 0 exactly where the unit is on, so the backward needs no copy
 * of the pre-activation. Its row loops are written in blocks of FM_LANES without
 * branches, so they vectorise (common/core/fastmath.h).
 */
#include "tfm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <stdint.h>

#include "../common/core/fastmath.h"

/* H (N, F) = max(0, H) in place. Half the signs are random, so a branch would mispredict
 * half the time; the select below compiles to a compare and a blend, FM_LANES at a time
 * (with FM_CLONES, 4 or 8 per instruction). A NaN is kept (z != z), and −0 becomes +0, so
 * that H ≠ 0 means exactly "the unit is on", which the backward relies on. */
FM_INLINE void relu_row(double *restrict h, size_t F)
{
    size_t f = 0;
    for (; f + FM_LANES <= F; f += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double z = h[f + l];
            h[f + l] = (z > 0.0 || z != z) ? z : 0.0;
        }
    for (; f < F; f++) {
        const double z = h[f];
        h[f] = (z > 0.0 || z != z) ? z : 0.0;
    }
}

FM_CLONES
static void relu_rows(gsl_matrix *H)
{
    for (size_t r = 0; r < H->size1; r++)
        relu_row(gsl_matrix_ptr(H, r, 0), H->size2);
}

/* dH (N, F) ← dH ⊙ [H ≠ 0] in place, and db (F) += Σ_rows of the result. H comes from
 * relu_rows, so it is never negative nor −0: H is on exactly when its bits are not all 0
 * (a NaN unit lets its gradient through, so the NaN is not hidden). The test is made on
 * the bits, so the compiler sees integer masks it can vectorise, not a select it turns
 * into a branch (which mispredicts half the time). */
FM_INLINE double relu_grad(double h, double dh)
{
    const uint64_t hb = fm_to_bits(h);
    /* (hb | −hb) has its top bit set exactly when hb ≠ 0; 0 − that bit is the mask */
    const uint64_t on = 0 - ((hb | (0 - hb)) >> 63);
    return fm_from_bits(fm_to_bits(dh) & on);
}

/* One row of relu_rows_backward; its own function so that the restrict-qualified row
 * pointers are parameters, which is what the vectoriser needs to see. */
FM_INLINE void relu_row_backward(double *restrict dh, double *restrict db,
                                 const double *restrict h, size_t F)
{
    size_t f = 0;
    for (; f + FM_LANES <= F; f += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            dh[f + l] = relu_grad(h[f + l], dh[f + l]);
            db[f + l] += dh[f + l];
        }
    for (; f < F; f++) {
        dh[f] = relu_grad(h[f], dh[f]);
        db[f] += dh[f];
    }
}

FM_CLONES
static void relu_rows_backward(gsl_matrix *dH, double *db, const gsl_matrix *H)
{
    for (size_t r = 0; r < H->size1; r++)
        relu_row_backward(gsl_matrix_ptr(dH, r, 0), db, gsl_matrix_const_ptr(H, r, 0),
                          H->size2);
}

void tfm_ffn_forward(gsl_matrix *Y, gsl_matrix *H, const gsl_matrix *X, const tfm_ffn *p)
{
    /* the same two-layer network at every position: the positions are the N rows of one
     * GEMM. F = 4D in the paper (2048 = 4·512) and here (256 = 4·64). */
    /* Z (N,F) = X (N,D) · W_1ᵀ (D,F) + b_1, into H */
    op_linear_forward(H, X, p->w1, p->b1);
    relu_rows(H);
    /* Y (N,D) += H (N,F) · W_2ᵀ (F,D) + b_2 */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, H, p->w2, 1.0, Y);
    op_add_bias(Y, p->b2);
}

void tfm_ffn_backward(gsl_matrix *dX, tfm_ffn *dp, tfm_work *w, const gsl_matrix *dY,
                      const gsl_matrix *X, const gsl_matrix *H, const tfm_ffn *p)
{
    const size_t N = X->size1, F = H->size2;
    assert(N <= w->rows);
    gsl_matrix_view dH = gsl_matrix_view_array(w->dh, N, F);
    /* forward: Y += H · W_2ᵀ + b_2
     *   dW_2 (D,F) += dYᵀ (D,N) · H (N,F);  db_2 += Σ_rows dY
     *   dH (N,F) = dY (N,D) · W_2 (D,F) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dY, H, 1.0, dp->w2);
    op_bias_backward(dp->b2, dY);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dY, p->w2, 0.0, &dH.matrix);
    /* forward: H = max(0, Z + b_1)
     *   dZ = dH ⊙ [H > 0] (H > 0 exactly where Z + b_1 > 0; at 0 the slope is taken as 0,
     *   as PyTorch does), in place;  db_1 += Σ_rows dZ */
    relu_rows_backward(&dH.matrix, dp->b1->data, H);
    /* forward: Z = X · W_1ᵀ
     *   dW_1 (F,D) += dZᵀ (F,N) · X (N,D)
     *   dX (N,D) += dZ (N,F) · W_1 (F,D) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &dH.matrix, X, 1.0, dp->w1);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &dH.matrix, p->w1, 1.0, dX);
}

/* ---- the cost ------------------------------------------------------------------------ */

double tfm_ffn_flops(double D, double F)
{
    return 12.0 * D * F + 4.0 * F + 2.0 * D;
}
