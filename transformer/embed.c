/* embed.c — the embeddings (§3.4) and positions (§3.5) of the model `transformer`: the
 * sinusoid table, and the input of either stack, s·E[token] + position, with its backward
 * (see tfm.h).
 *
 * Invariant: row r of a (B·T, D) input is position r mod T of its sequence, so one
 * position's table row is added to the B rows that share it; the sinusoids are a constant
 * outside the arena, the learned table a parameter shared by both stacks.
 */
#include "tfm.h"

#include "../common/core/fastmath.h"

/* ---- positions (§3.5) and embeddings (§3.4) ----------------------------------------- */

void tfm_sinusoid(double *pe, size_t Lmax, size_t D)
{
    /* column 2i and 2i+1 share the frequency 1/10000^(2i/D): wavelengths form a geometric
     * progression from 2π to 10000·2π, so PE(t + k) is a linear function of PE(t) */
    for (size_t t = 0; t < Lmax; t++)
        for (size_t d = 0; d < D; d++) {
            const double freq = fm_exp(-fm_log(10000.0) * (double)(d - d % 2) / (double)D);
            const double angle = (double)t * freq;
            pe[t * D + d] = d % 2 == 0 ? fm_sin(angle) : fm_cos(angle);
        }
}

/* The position table the model adds, or NULL for none. */
static const double *positions(const tfm_model *m)
{
    switch (m->pos) {
    case TFM_POS_SINUSOIDAL:
        return m->pe;
    case TFM_POS_LEARNED:
        return m->w.pos->data;
    default:
        return NULL;
    }
}

void tfm_embed_forward(gsl_matrix *X, const int *ids, const gsl_matrix *E,
                       const tfm_model *m, size_t T, size_t t0)
{
    /* embedding and position in one pass; emb_scale s defaults to 1, not the paper's √D
     * (see docs/transformer.md) */
    const size_t n = X->size1, D = X->size2;
    const double *pe = positions(m), s = m->emb_scale;
    for (size_t r = 0; r < n; r++) {
        const double *e = gsl_matrix_const_ptr(E, (size_t)ids[r], 0);
        double *x = gsl_matrix_ptr(X, r, 0);
        if (pe) {
            const double *p = pe + (t0 + r % T) * D;
            for (size_t d = 0; d < D; d++)
                x[d] = s * e[d] + p[d];
        } else {
            for (size_t d = 0; d < D; d++)
                x[d] = s * e[d];
        }
    }
}

void tfm_embed_backward(gsl_matrix *dE, gsl_matrix *dP, const gsl_matrix *dX,
                        const int *ids, double s, size_t T)
{
    /* forward: x_r = s·E[ids[r]] + P[r mod T]
     *   dE[ids[r]] += s·dx_r;  dP[r mod T] += dx_r (learned positions only) */
    const size_t n = dX->size1, D = dX->size2;
    for (size_t r = 0; r < n; r++) {
        const double *dx = gsl_matrix_const_ptr(dX, r, 0);
        double *de = gsl_matrix_ptr(dE, (size_t)ids[r], 0);
        for (size_t d = 0; d < D; d++)
            de[d] += s * dx[d];
        if (dP) {
            double *dp = gsl_matrix_ptr(dP, r % T, 0);
            for (size_t d = 0; d < D; d++)
                dp[d] += dx[d];
        }
    }
}

/* ---- the cost ------------------------------------------------------------------------ */

double tfm_embed_flops(double D, tfm_pos pos)
{
    const double forward = pos == TFM_POS_NONE ? D : 2.0 * D;
    return forward + 2.0 * D + (pos == TFM_POS_LEARNED ? D : 0.0);
}
