/* norm.c — layer norm (Ba et al. 2016), forward and backward, over the D features of each
 * row (see tfm.h).
 *
 * Design. Row by row over D features, in blocks of FM_LANES with FM_LANES partial sums, so
 * that the loops vectorise (see common/core/fastmath.h); FM_CLONES compiles them for AVX2 and
 * AVX-512 too, with the same bits at every width.
 *
 * Reference. As in every model folder, the vectorised kernels have their plain double
 * loops beside them, at the end of this file: tfm_norm_reference and
 * tfm_norm_reference_backward, one sum at a time as the equations read, which the tests
 * hold the kernels to (no other code calls them).
 *
 * Invariant. Each row (one position of one sequence) is normalised on its own: no
 * statistic crosses positions, so nothing leaks past the causal mask. The forward keeps
 * each row's mean μ and r = 1/√(σ² + ε), from which the backward makes x̂ again.
 */
#include "tfm.h"

#include <math.h>

#include "../common/core/fastmath.h"

/* Σ x_d and Σ (x_d − μ)² of one row, each over FM_LANES partial sums added pairwise. */
FM_INLINE double row_sum(const double *restrict x, size_t D)
{
    double s[FM_LANES] = {0};
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            s[l] += x[d + l];
    for (size_t l = 0; d < D; d++, l++)
        s[l] += x[d];
    return fm_lanes_sum(s);
}

FM_INLINE double row_sq_dev(const double *restrict x, double mu, size_t D)
{
    double s[FM_LANES] = {0};
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            s[l] += (x[d + l] - mu) * (x[d + l] - mu);
    for (size_t l = 0; d < D; d++, l++)
        s[l] += (x[d] - mu) * (x[d] - mu);
    return fm_lanes_sum(s);
}

/* One row of the forward: y (D) = γ ⊙ (x − μ)·r + β; returns μ and r. Row kernels take
 * their rows as restrict parameters, which is what the vectoriser needs to see. */
FM_INLINE void ln_row_forward(double *restrict y, double *mean, double *rstd,
                              const double *restrict x, const double *restrict g,
                              const double *restrict b, size_t D)
{
    /* μ = Σ x / D; σ² = Σ (x − μ)² / D, in two passes: one pass (Σx² − Dμ²) cancels
     * catastrophically when |μ| ≫ σ */
    const double mu = row_sum(x, D) / (double)D;
    const double var = row_sq_dev(x, mu, D) / (double)D; /* biased, as PyTorch's */
    const double r_sd = 1.0 / sqrt(var + TFM_LN_EPS);
    /* y = γ ⊙ x̂ + β with x̂ = (x − μ)·r */
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            y[d + l] = g[d + l] * ((x[d + l] - mu) * r_sd) + b[d + l];
    for (; d < D; d++)
        y[d] = g[d] * ((x[d] - mu) * r_sd) + b[d];
    *mean = mu;
    *rstd = r_sd;
}

FM_CLONES
void tfm_layernorm_forward(gsl_matrix *Y, double *mean, double *rstd, const gsl_matrix *X,
                           const tfm_norm *p)
{
    /* each row (one position of one sequence) is normalised over its D features, on its
     * own (see the top of the file) */
    for (size_t r = 0; r < X->size1; r++)
        ln_row_forward(gsl_matrix_ptr(Y, r, 0), &mean[r], &rstd[r],
                       gsl_matrix_const_ptr(X, r, 0), p->g->data, p->b->data, X->size2);
}

/* One row of the backward (see below): dx (D) += ..., dγ and dβ (D) += ... */
FM_INLINE void ln_row_backward(double *restrict dx, double *restrict dg,
                               double *restrict db, const double *restrict dy,
                               const double *restrict x, const double *restrict g,
                               double mu, double r_sd, size_t D)
{
    double s1[FM_LANES] = {0}, s2[FM_LANES] = {0};
    size_t d = 0;
    for (; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double xh = (x[d + l] - mu) * r_sd, dxh = dy[d + l] * g[d + l];
            dg[d + l] += dy[d + l] * xh;
            db[d + l] += dy[d + l];
            s1[l] += dxh;
            s2[l] += dxh * xh;
        }
    for (size_t l = 0; d < D; d++, l++) {
        const double xh = (x[d] - mu) * r_sd, dxh = dy[d] * g[d];
        dg[d] += dy[d] * xh;
        db[d] += dy[d];
        s1[l] += dxh;
        s2[l] += dxh * xh;
    }
    const double m1 = fm_lanes_sum(s1) / (double)D; /* mean_k(dx̂_k) */
    const double m2 = fm_lanes_sum(s2) / (double)D; /* mean_k(dx̂_k x̂_k) */
    for (d = 0; d + FM_LANES <= D; d += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double xh = (x[d + l] - mu) * r_sd;
            dx[d + l] += r_sd * (dy[d + l] * g[d + l] - m1 - xh * m2);
        }
    for (; d < D; d++) {
        const double xh = (x[d] - mu) * r_sd;
        dx[d] += r_sd * (dy[d] * g[d] - m1 - xh * m2);
    }
}

FM_CLONES
void tfm_layernorm_backward(gsl_matrix *dX, tfm_norm *dp, const gsl_matrix *dY,
                            const gsl_matrix *X, const double *mean, const double *rstd,
                            const tfm_norm *p)
{
    /* forward: y = γ ⊙ x̂ + β
     *   dγ += dy ⊙ x̂;  dβ += dy;  dx̂ = dy ⊙ γ
     * forward: x̂ = (x − μ)·r with μ and r = (σ² + ε)^(−1/2) functions of the whole row.
     * Through μ every x̂_k moves by −r; through σ², ∂r/∂x_i = −r³(x_i − μ)/D. So
     *   dx_i = r·(dx̂_i − mean_k(dx̂_k) − x̂_i · mean_k(dx̂_k x̂_k)). */
    for (size_t r = 0; r < X->size1; r++)
        ln_row_backward(gsl_matrix_ptr(dX, r, 0), dp->g->data, dp->b->data,
                        gsl_matrix_const_ptr(dY, r, 0), gsl_matrix_const_ptr(X, r, 0),
                        p->g->data, mean[r], rstd[r], X->size2);
}

/* ---- the plain reference ------------------------------------------------------------- */

void tfm_norm_reference(gsl_matrix *Y, double *mean, double *rstd, const gsl_matrix *X,
                        const tfm_norm *p)
{
    const size_t N = X->size1, D = X->size2;
    for (size_t r = 0; r < N; r++) {
        /* y = γ ⊙ (x − μ)/√(σ² + ε) + β,  μ = Σ x_d / D,  σ² = Σ (x_d − μ)² / D */
        double mu = 0.0, var = 0.0;
        for (size_t d = 0; d < D; d++)
            mu += gsl_matrix_get(X, r, d);
        mu /= (double)D;
        for (size_t d = 0; d < D; d++)
            var += pow(gsl_matrix_get(X, r, d) - mu, 2);
        var /= (double)D;
        const double rs = 1.0 / sqrt(var + TFM_LN_EPS);
        for (size_t d = 0; d < D; d++)
            gsl_matrix_set(Y, r, d, p->g->data[d] * ((gsl_matrix_get(X, r, d) - mu) * rs) +
                                        p->b->data[d]);
        mean[r] = mu;
        rstd[r] = rs;
    }
}

void tfm_norm_reference_backward(gsl_matrix *dX, tfm_norm *dp, const gsl_matrix *dY,
                                 const gsl_matrix *X, const double *mean, const double *rstd,
                                 const tfm_norm *p)
{
    const size_t N = X->size1, D = X->size2;
    for (size_t r = 0; r < N; r++) {
        /* dγ += dy⊙x̂;  dβ += dy;  dx += r·(dx̂ − mean(dx̂) − x̂⊙mean(dx̂⊙x̂)),  dx̂ = dy⊙γ */
        double m1 = 0.0, m2 = 0.0;
        for (size_t d = 0; d < D; d++) {
            const double xh = (gsl_matrix_get(X, r, d) - mean[r]) * rstd[r];
            const double dy = gsl_matrix_get(dY, r, d), dxh = dy * p->g->data[d];
            dp->g->data[d] += dy * xh;
            dp->b->data[d] += dy;
            m1 += dxh / (double)D;
            m2 += dxh * xh / (double)D;
        }
        for (size_t d = 0; d < D; d++) {
            const double xh = (gsl_matrix_get(X, r, d) - mean[r]) * rstd[r];
            const double dy = gsl_matrix_get(dY, r, d);
            *gsl_matrix_ptr(dX, r, d) += rstd[r] * (dy * p->g->data[d] - m1 - xh * m2);
        }
    }
}

/* ---- the cost ------------------------------------------------------------------------ */

double tfm_norm_flops(double D)
{
    return 25.0 * D + 7.0;
}
