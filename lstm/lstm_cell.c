/* lstm_cell.c — one step of the LSTM cell, forward and backward, for a batch (see lstm.h).
 *
 * Layout. The four gates of a row sit side by side in one row of act (B, 4H):
 *     act[r] = [ i (H) | f (H) | g (H) | o (H) ]      (PyTorch's order)
 * because the stacked weights Wx (4H, E) and Wh (4H, H) produce them in that order from
 * one GEMM. On entry act holds pre-activations; the forward loop overwrites each of them
 * with its activation, which is all backward needs besides c and c_prev: every local
 * derivative of σ and tanh can be written through the activation itself,
 *     σ'(a) = σ(a)(1 − σ(a)),   tanh'(a) = 1 − tanh²(a),
 * so no pre-activation has to be kept.
 *
 * Aliasing. forward reads h_prev only in its GEMM, before any h is written, and reads
 * c_prev[r][j] before writing c[r][j], so h may be h_prev and c may be c_prev (a state
 * updated in place). act must not overlap h or c.
 */
#include "lstm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <math.h>

/* Hochreiter & Schmidhuber (1997), with the forget gate of Gers, Schmidhuber & Cummins
 * (2000); equations as in lstm.h. */
void lstm_cell_forward(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                       const gsl_matrix *h_prev, const gsl_matrix *c_prev,
                       const gsl_matrix *Wh)
{
    const size_t B = act->size1, H = h->size2;
    assert(act->size2 == 4 * H && h->size1 == B && c->size1 == B && c->size2 == H);
    assert(c_prev->size1 == B && c_prev->size2 == H);

    /* act (B,4H) += h_prev (B,H) · Whᵀ (H,4H): the recurrent part of all four gates,
     * added to the input part x·Wxᵀ + b the caller already put there. */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, h_prev, Wh, 1.0, act);

    /* One fused pass per row: gates, new cell, new output, each element touched once. */
    for (size_t r = 0; r < B; r++) {
        double *ai = gsl_matrix_ptr(act, r, 0); /* (H) each, side by side */
        double *af = ai + H, *ag = ai + 2 * H, *ao = ai + 3 * H;
        const double *cp = gsl_matrix_const_ptr(c_prev, r, 0);
        double *cr = gsl_matrix_ptr(c, r, 0), *hr = gsl_matrix_ptr(h, r, 0);
        for (size_t j = 0; j < H; j++) {
            const double i = lstm_sigmoid(ai[j]); /* how much of the candidate to write */
            const double f = lstm_sigmoid(af[j]); /* how much of the old cell to keep */
            const double g = lstm_tanh(ag[j]);    /* the candidate, in (−1, 1) */
            const double o = lstm_sigmoid(ao[j]); /* how much of the cell to show */
            const double cn = f * cp[j] + i * g; /* c' = f⊙c + i⊙g */
            ai[j] = i;
            af[j] = f;
            ag[j] = g;
            ao[j] = o;
            cr[j] = cn;
            hr[j] = o * lstm_tanh(cn); /* h' = o⊙tanh(c') */
        }
    }
}

void lstm_cell_backward(gsl_matrix *dpre, gsl_matrix *dh_prev, gsl_matrix *dc_prev,
                        const gsl_matrix *dh, const gsl_matrix *dc,
                        const gsl_matrix *act, const gsl_matrix *c, const gsl_matrix *c_prev,
                        const gsl_matrix *Wh)
{
    const size_t B = act->size1, H = c->size2;
    assert(act->size2 == 4 * H && dpre->size1 == B && dpre->size2 == 4 * H);
    assert(dh->size1 == B && dh->size2 == H && c_prev->size1 == B);

    for (size_t r = 0; r < B; r++) {
        const double *ai = gsl_matrix_const_ptr(act, r, 0); /* activations, not pre- */
        const double *af = ai + H, *ag = ai + 2 * H, *ao = ai + 3 * H;
        const double *cr = gsl_matrix_const_ptr(c, r, 0);
        const double *cp = gsl_matrix_const_ptr(c_prev, r, 0);
        const double *dhr = gsl_matrix_const_ptr(dh, r, 0);
        const double *dcr = dc ? gsl_matrix_const_ptr(dc, r, 0) : NULL;
        double *dcp = dc_prev ? gsl_matrix_ptr(dc_prev, r, 0) : NULL;
        double *di = gsl_matrix_ptr(dpre, r, 0); /* (H) each: d of the pre-activations */
        double *df = di + H, *dg = di + 2 * H, *dout = di + 3 * H;
        for (size_t j = 0; j < H; j++) {
            const double i = ai[j], f = af[j], g = ag[j], o = ao[j];
            const double tc = lstm_tanh(cr[j]); /* recomputed: cheaper than keeping it */

            /* forward: h = o ⊙ tanh(c)
             *   ∂h/∂o = tanh(c)              → dL/do = dh ⊙ tanh(c)
             *   ∂h/∂c = o ⊙ (1 − tanh²(c))   → c gets dh through h, plus dc from the
             *                                   next step: the two paths add up. */
            const double d_o = dhr[j] * tc;
            const double dct = dhr[j] * o * (1.0 - tc * tc) + (dcr ? dcr[j] : 0.0);

            /* forward: c = f ⊙ c_prev + i ⊙ g
             *   dL/df = dct ⊙ c_prev,  dL/di = dct ⊙ g,  dL/dg = dct ⊙ i,
             *   dL/dc_prev = dct ⊙ f   (the constant error carousel: when f ≈ 1 the
             *                           gradient passes back unchanged). */
            const double d_f = dct * cp[j];
            const double d_i = dct * g;
            const double d_g = dct * i;
            if (dcp)
                dcp[j] += dct * f;

            /* forward: i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
             *   σ' = σ(1 − σ),  tanh' = 1 − tanh²,  written through the activations. */
            di[j] = d_i * i * (1.0 - i);
            df[j] = d_f * f * (1.0 - f);
            dg[j] = d_g * (1.0 - g * g);
            dout[j] = d_o * o * (1.0 - o);
        }
    }

    /* forward: act += h_prev · Whᵀ   ⇒   dh_prev (B,H) += dpre (B,4H) · Wh (4H,H) */
    if (dh_prev)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dpre, Wh, 1.0, dh_prev);
}
