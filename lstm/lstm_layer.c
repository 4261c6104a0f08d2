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
 * When the inputs are tokens (the model's case) even that first GEMM shrinks: x_t is a
 * row of an embedding table, so x_t·Wxᵀ + b is a row of the table P = embed·Wxᵀ + b,
 * which has V rows where X has T·B (lstm_table_forward / _backward; docs/lstm.md).
 *
 * Invariant: block k of a matrix means rows [k·B, (k+1)·B), one step of the whole batch;
 * time-major storage makes every block a contiguous view.
 */
#include "lstm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_rng.h>

#include "../common/core/tensor.h"

void lstm_input_forward(gsl_matrix *act, const gsl_matrix *X, const lstm_weights *w)
{
    /* act (N,4H) = X (N,E) · Wxᵀ (E,4H), then + b (1,4H) on every row. The product comes
     * first, unlike op_linear_forward (the bias first, the product added onto it): once
     * the GEMM sums over E in more than one block the two orders round differently, and
     * this layer's results (rnn_attention --cell lstm) are kept to the bit. */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, X, w->Wx, 0.0, act);
    op_add_bias(act, w->b);
}

void lstm_recur_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, const gsl_matrix *Wh,
                        size_t B)
{
    assert(B > 0 && Act->size1 % B == 0);
    const size_t T = Act->size1 / B;
    assert(Hs->size1 == (T + 1) * B && Cs->size1 == (T + 1) * B);

    /* The recurrence, steps 1..T. */
    for (size_t t = 1; t <= T; t++) {
        /* step t: gates in Act block t−1, reads state block t−1, writes block t */
        gsl_matrix_view a = model_block(Act, t - 1, B);                      /* (B,4H) */
        gsl_matrix_view h = model_block(Hs, t, B), c = model_block(Cs, t, B); /* (B,H) */
        gsl_matrix_view hp = model_block(Hs, t - 1, B), cp = model_block(Cs, t - 1, B);
        lstm_cell_forward(&h.matrix, &c.matrix, &a.matrix, &hp.matrix, &cp.matrix, Wh);
    }
}

void lstm_layer_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, const gsl_matrix *X,
                        const lstm_weights *w, size_t B)
{
    assert(B > 0 && X->size1 % B == 0 && Act->size1 == X->size1);

    /* Act (T·B,4H) = X (T·B,E) · Wxᵀ (E,4H) + b: the input part of every step at once */
    lstm_input_forward(Act, X, w);
    lstm_recur_forward(Hs, Cs, Act, w->Wh, B);
}

void lstm_recur_backward(gsl_matrix *dWh, gsl_matrix *dPre, gsl_matrix *dHs, gsl_matrix *dCs,
                         const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                         const gsl_matrix *Wh, size_t B)
{
    assert(B > 0 && dPre->size1 % B == 0);
    const size_t T = dPre->size1 / B;
    assert(dHs->size1 == (T + 1) * B && dCs->size1 == (T + 1) * B && Act->size1 == T * B);

    /* Backpropagation through time, last step first. When step t is reached, blocks t of
     * dHs and dCs are complete: the outside gradient they held on entry plus what step
     * t+1 sent back through h_t·Whᵀ and f⊙c_t. Step t then adds its own share to blocks
     * t−1, so the sums build up in place with no extra buffer. */
    for (size_t t = T; t >= 1; t--) {
        gsl_matrix_view dp = model_block(dPre, t - 1, B);                      /* (B,4H) */
        gsl_matrix_view dh = model_block(dHs, t, B), dc = model_block(dCs, t, B); /* (B,H) */
        gsl_matrix_view dhp = model_block(dHs, t - 1, B), dcp = model_block(dCs, t - 1, B);
        gsl_matrix_const_view a = model_const_block(Act, t - 1, B);
        gsl_matrix_const_view c = model_const_block(Cs, t, B);
        gsl_matrix_const_view cp = model_const_block(Cs, t - 1, B);
        lstm_cell_backward(&dp.matrix, &dhp.matrix, &dcp.matrix, &dh.matrix, &dc.matrix,
                           &a.matrix, &c.matrix, &cp.matrix, Wh);
    }

    /* forward: a_t += h_{t−1} · Whᵀ  (each step)
     *   dWh (4H,H) += Σ_t dpre_tᵀ · h_{t−1} = dPreᵀ (4H,T·B) · Hs[0..T−1] (T·B,H),
     *   one GEMM because h_0 sits in front of h_1..h_T: blocks 0..T−1 of Hs are exactly
     *   the previous states of steps 1..T. */
    gsl_matrix_const_view Hprev = gsl_matrix_const_submatrix(Hs, 0, 0, T * B, Hs->size2);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dPre, &Hprev.matrix, 1.0, dWh);
}

void lstm_layer_backward(gsl_matrix *dX, lstm_weights *dw, gsl_matrix *dPre,
                         gsl_matrix *dHs, gsl_matrix *dCs, const gsl_matrix *X,
                         const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                         const lstm_weights *w, size_t B)
{
    assert(B > 0 && X->size1 % B == 0 && dPre->size1 == X->size1);
    lstm_recur_backward(dw->Wh, dPre, dHs, dCs, Hs, Cs, Act, w->Wh, B);

    /* forward: Act = X · Wxᵀ + b  (all steps)
     *   dWx (4H,E) += dPreᵀ (4H,T·B) · X (T·B,E)     one GEMM sums over steps and batch
     *   db  (1,4H) += Σ_rows dPre                    the same sum, without the product */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dPre, X, 1.0, dw->Wx);
    op_bias_backward(dw->b, dPre);

    /* forward: Act = X · Wxᵀ   ⇒   dX (T·B,E) += dPre (T·B,4H) · Wx (4H,E) */
    if (dX)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dPre, w->Wx, 1.0, dX);
}

/* ---- the cost ------------------------------------------------------------------------ */

double lstm_layer_flops(double In, double H, double T)
{
    return T * (24.0 * H * (In + H) + 41.0 * H);
}

/* ---- inputs that are tokens: the projection table ------------------------------------ */

void lstm_table_forward(gsl_matrix *P, const gsl_matrix *embed, const lstm_weights *w)
{
    assert(P->size1 == embed->size1 && P->size2 == w->Wx->size1);
    /* P (V,4H) = embed (V,E) · Wxᵀ (E,4H) + b: every row starts as b, and the GEMM adds
     * onto it (beta = 1), one pass over P instead of a zeroing and a bias pass */
    op_linear_forward(P, embed, w->Wx, w->b);
}

void lstm_recur_forward_table(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act,
                              const gsl_matrix *P, const int *ids, const gsl_matrix *Wh,
                              size_t B)
{
    assert(B > 0 && Hs->size1 % B == 0 && Hs->size1 > B);
    const size_t T = Hs->size1 / B - 1;
    const int keep = Act->size1 == T * B; /* else one block, rewritten by every step */
    assert(Cs->size1 == (T + 1) * B && (keep || Act->size1 == B));

    /* As lstm_recur_forward, with the input part of step t read from the table rows
     * ids[(t−1)·B ..] inside the cell: the rows of P are never copied into Act. */
    for (size_t t = 1; t <= T; t++) {
        gsl_matrix_view a = model_block(Act, keep ? t - 1 : 0, B);           /* (B,4H) */
        gsl_matrix_view h = model_block(Hs, t, B), c = model_block(Cs, t, B); /* (B,H) */
        gsl_matrix_view hp = model_block(Hs, t - 1, B), cp = model_block(Cs, t - 1, B);
        lstm_cell_forward_table(&h.matrix, &c.matrix, &a.matrix, &hp.matrix, &cp.matrix, P,
                                ids + (t - 1) * B, Wh);
    }
}

/* dst (n) += src (n): fm_add_row compiled for each vector width (its caller is not). */
FM_CLONES
static void add_row(double *restrict dst, const double *restrict src, size_t n)
{
    fm_add_row(dst, src, n);
}

void lstm_table_backward(gsl_matrix *dembed, lstm_weights *dw, gsl_matrix *dP,
                         const gsl_matrix *dPre, const int *ids, const gsl_matrix *embed,
                         const lstm_weights *w)
{
    assert(dP->size1 == embed->size1 && dP->size2 == dPre->size2);
    /* forward: Act row i = P row ids[i]   ⇒   dP row v = Σ_{i: ids[i] = v} dPre row i,
     * a scatter-add of the T·B rows into V */
    gsl_matrix_set_zero(dP);
    for (size_t i = 0; i < dPre->size1; i++)
        add_row(gsl_matrix_ptr(dP, (size_t)ids[i], 0), gsl_matrix_const_ptr(dPre, i, 0),
                dP->size2);

    /* forward: P = embed · Wxᵀ + b
     *   dWx (4H,E)   += dPᵀ (4H,V) · embed (V,E)
     *   db  (1,4H)   += Σ_rows dP
     *   dembed (V,E) += dP (V,4H) · Wx (4H,E) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dP, embed, 1.0, dw->Wx);
    op_bias_backward(dw->b, dP);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dP, w->Wx, 1.0, dembed);
}

/* ---- initialisation ------------------------------------------------------------------ */

void lstm_init_bias(gsl_matrix *b, double k, double forget_bias, const gsl_rng *r)
{
    const size_t G = b->size2, H = G / 4;
    for (size_t j = 0; j < G; j++) {
        double b_ih = k * (2.0 * gsl_rng_uniform(r) - 1.0);
        double b_hh = k * (2.0 * gsl_rng_uniform(r) - 1.0);
        b->data[j] = b_ih + b_hh;
    }
    for (size_t j = H; j < 2 * H; j++)
        b->data[j] = forget_bias;
}
