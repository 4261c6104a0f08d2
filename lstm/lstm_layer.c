/* lstm_layer.c — the LSTM cell run over T steps of a batch, forward and backward (see
 * lstm.h for the layout of X, Act, Hs, Cs).
 *
 * Where the work goes. Of the two products in every gate pre-activation,
 *     a_t = x_t·Wxᵀ + b  +  h_{t−1}·Whᵀ,
 * only the second waits for the previous step. The first is done for all T steps as one
 * (T·B, E)·(E, 4H) GEMM before the loop, so the loop holds just T small (B, H)·(H, 4H)
 * products and the element-wise gates. Backward mirrors it: the loop only carries the
 * gradient back through the recurrence (dpre_t, dh_{t−1}, dc_{t−1}); the three weight
 * gradients, which sum over steps, are formed after the loop from all the dpre_t at once.
 *
 * Invariant: block k of a matrix means rows [k·B, (k+1)·B), one step of the whole batch;
 * time-major storage makes every block a contiguous view.
 */
#include "lstm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>

#include "../common/tensor.h"

void lstm_input_forward(gsl_matrix *act, const gsl_matrix *X, const lstm_weights *w)
{
    /* act (N,4H) = X (N,E) · Wxᵀ (E,4H), then + b (1,4H) on every row */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, X, w->Wx, 0.0, act);
    op_add_bias(act, w->b);
}

void lstm_layer_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, const gsl_matrix *X,
                        const lstm_weights *w, size_t T)
{
    assert(T > 0 && X->size1 % T == 0);
    const size_t B = X->size1 / T;
    assert(Hs->size1 == (T + 1) * B && Cs->size1 == (T + 1) * B && Act->size1 == T * B);

    /* Act (T·B,4H) = X (T·B,E) · Wxᵀ (E,4H) + b: the input part of every step at once */
    lstm_input_forward(Act, X, w);

    /* The recurrence, steps 1..T. */
    for (size_t t = 1; t <= T; t++) {
        /* step t: gates in Act block t−1, reads state block t−1, writes block t */
        gsl_matrix_view a = lstm_block(Act, t - 1, B);                      /* (B,4H) */
        gsl_matrix_view h = lstm_block(Hs, t, B), c = lstm_block(Cs, t, B); /* (B,H) */
        gsl_matrix_view hp = lstm_block(Hs, t - 1, B), cp = lstm_block(Cs, t - 1, B);
        lstm_cell_forward(&h.matrix, &c.matrix, &a.matrix, &hp.matrix, &cp.matrix, w->Wh);
    }
}

void lstm_layer_backward(gsl_matrix *dX, const lstm_weights *dw, gsl_matrix *dPre,
                         gsl_matrix *dHs, gsl_matrix *dCs, const gsl_matrix *X,
                         const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                         const lstm_weights *w, size_t T)
{
    assert(T > 0 && X->size1 % T == 0);
    const size_t B = X->size1 / T;
    assert(dHs->size1 == (T + 1) * B && dCs->size1 == (T + 1) * B && dPre->size1 == T * B);

    /* Backpropagation through time, last step first. When step t is reached, blocks t of
     * dHs and dCs are complete: the outside gradient they held on entry plus what step
     * t+1 sent back through h_t·Whᵀ and f⊙c_t. Step t then adds its own share to blocks
     * t−1, so the sums build up in place with no extra buffer. */
    for (size_t t = T; t >= 1; t--) {
        gsl_matrix_view dp = lstm_block(dPre, t - 1, B);                      /* (B,4H) */
        gsl_matrix_view dh = lstm_block(dHs, t, B), dc = lstm_block(dCs, t, B); /* (B,H) */
        gsl_matrix_view dhp = lstm_block(dHs, t - 1, B), dcp = lstm_block(dCs, t - 1, B);
        gsl_matrix_const_view a = lstm_const_block(Act, t - 1, B);
        gsl_matrix_const_view c = lstm_const_block(Cs, t, B);
        gsl_matrix_const_view cp = lstm_const_block(Cs, t - 1, B);
        lstm_cell_backward(&dp.matrix, &dhp.matrix, &dcp.matrix, &dh.matrix, &dc.matrix,
                           &a.matrix, &c.matrix, &cp.matrix, w->Wh);
    }

    /* forward: Act = X · Wxᵀ + b  (all steps)
     *   dWx (4H,E) += dPreᵀ (4H,T·B) · X (T·B,E)     one GEMM sums over steps and batch
     *   db  (1,4H) += Σ_rows dPre                    the same sum, without the product */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dPre, X, 1.0, dw->Wx);
    op_bias_backward(dw->b, dPre);

    /* forward: a_t += h_{t−1} · Whᵀ  (each step)
     *   dWh (4H,H) += Σ_t dpre_tᵀ · h_{t−1} = dPreᵀ (4H,T·B) · Hs[0..T−1] (T·B,H),
     *   one GEMM because h_0 sits in front of h_1..h_T: blocks 0..T−1 of Hs are exactly
     *   the previous states of steps 1..T. */
    gsl_matrix_const_view Hprev = gsl_matrix_const_submatrix(Hs, 0, 0, T * B, Hs->size2);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dPre, &Hprev.matrix, 1.0, dw->Wh);

    /* forward: Act = X · Wxᵀ   ⇒   dX (T·B,E) += dPre (T·B,4H) · Wx (4H,E) */
    if (dX)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dPre, w->Wx, 1.0, dX);
}
