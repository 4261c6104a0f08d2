/* gru.h — the GRU cell and the GRU layer, forward and backward (prefix: gru_).
 *
 * Shapes. B batch, T steps, In input width, H state width. Activations are time-major:
 * row t·B + b holds example b at step t, so one step of the whole batch is a contiguous
 * block of B rows ("block t") and the steps of a sequence are one matrix.
 *
 * GRU (Cho et al. 2014, "Learning Phrase Representations using RNN Encoder-Decoder"), in
 * PyTorch's form, gate order r, z, n stacked along the 3H axis of every weight:
 *     r  = σ(W_r x + b_ir + U_r h + b_hr)           reset gate
 *     z  = σ(W_z x + b_iz + U_z h + b_hz)           update gate
 *     n  = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn))  candidate (r scales U_n h + b_hn,
 *                                                    which is why b_hn stays apart)
 *     h' = (1 − z) ⊙ n + z ⊙ h
 * Split of the work as in lstm/: the input part xp = x·Wxᵀ + bx of every step is one GEMM
 * before the loop; the cell adds the recurrent part hp = h·Whᵀ + bh.
 *
 * Argument order: outputs first, then inputs, then weights, then sizes. A backward takes
 * the gradients it writes (the input gradient first, then the weight gradients, then the
 * scratch it writes), then the upstream gradient, then what forward kept, then the
 * weights, then sizes.
 */
#ifndef ATTNLAB_GRU_H
#define ATTNLAB_GRU_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

/* Views of one GRU's parameters, or of their gradients (same shapes). */
typedef struct gru_weights {
    gsl_matrix *Wx; /* (3H, In) input weights [W_r; W_z; W_n] */
    gsl_matrix *Wh; /* (3H, H)  recurrent weights [U_r; U_z; U_n] */
    gsl_matrix *bx; /* (1, 3H)  input biases [b_ir b_iz b_in] */
    gsl_matrix *bh; /* (1, 3H)  recurrent biases [b_hr b_hz b_hn] */
} gru_weights;

/* ---- the cell ------------------------------------------------------------------------ */

/* One step of the cell for a batch of B rows.
 * On entry act (B, 3H) holds the input part xp = x·Wxᵀ + bx of this step; on return it
 * holds the gates [r z n] (what backward needs). Writes hp (B, 3H) = h_prev·Whᵀ + bh,
 * kept because backward needs its n part, and the new state h (B, H). h_prev (B, H).
 * h must not overlap h_prev, act or hp. */
void gru_cell_forward(gsl_matrix *h, gsl_matrix *act, gsl_matrix *hp,
                      const gsl_matrix *h_prev, const gsl_matrix *Wh, const gsl_matrix *bh);

/* The plain reference of gru_cell_forward's element-wise part (everything after its
 * GEMM): the gates and the new state as the equations above read, one element at a time
 * with libm's exp and tanh; the tests hold the vectorised kernel to it, and no other code
 * calls it. On entry act (B, 3H) holds the input part xp; on return the gates [r z n].
 * Reads hp (B, 3H) = h_prev·Whᵀ + bh and h_prev (B, H); writes h (B, H). */
void gru_cell_gates_reference(gsl_matrix *h, gsl_matrix *act, const gsl_matrix *hp,
                              const gsl_matrix *h_prev);

/* Backward of one step. Reads dh (B, H), the total gradient of this step's output, and
 * what forward kept: act = [r z n], hp (B, 3H), h_prev (B, H).
 * Writes dxp (B, 3H), the gradient of the input part xp, and dhp (B, 3H), that of the
 * recurrent part hp (they differ in the n third, where hp is scaled by r). Accumulates
 * dh_prev (B, H) += dh ⊙ z + dhp·Wh (skipped when NULL). Leaves dWx, dbx, dWh, dbh to the
 * caller, which forms them from dxp and dhp of all steps with one GEMM each. */
void gru_cell_backward(gsl_matrix *dxp, gsl_matrix *dhp, gsl_matrix *dh_prev,
                       const gsl_matrix *dh, const gsl_matrix *act, const gsl_matrix *hp,
                       const gsl_matrix *h_prev, const gsl_matrix *Wh);

/* ---- the layer: the cell run over T steps --------------------------------------------- */

/* Runs the cell over the T = X->size1 / B steps of a batch of B sequences.
 * Reads X (T·B, In) and h_0 in block 0 of Hs ((T+1)·B, H); writes blocks 1..T of Hs,
 * Act (T·B, 3H) (the gates of every step) and HP (T·B, 3H) (the recurrent parts).
 * The input parts of all T steps are one GEMM before the loop. */
void gru_layer_forward(gsl_matrix *Hs, gsl_matrix *Act, gsl_matrix *HP, const gsl_matrix *X,
                       const gru_weights *w, size_t B);

/* Backward of gru_layer_forward.
 * Accumulates dX (T·B, In) += dXP·Wx (skipped when dX is NULL) and, with one GEMM each
 * over all steps, dw->Wx += dXPᵀ·X, dw->bx += Σ dXP, dw->Wh += dHPᵀ·Hs[0..T−1],
 * dw->bh += Σ dHP. Writes dXP, dHP (T·B, 3H) (every step's dxp and dhp).
 * dHs ((T+1)·B, H) is worked in place: on entry block t holds the gradient that reaches
 * h_t from outside the layer; on return it holds the total gradient of h_t, so block 0
 * holds the gradient of h_0, accumulated onto what it held.
 * Reads what forward kept: X, Hs, Act, HP. */
void gru_layer_backward(gsl_matrix *dX, gru_weights *dw, gsl_matrix *dXP, gsl_matrix *dHP,
                        gsl_matrix *dHs, const gsl_matrix *X, const gsl_matrix *Hs,
                        const gsl_matrix *Act, const gsl_matrix *HP, const gru_weights *w,
                        size_t B);

/* The analytic FLOPs (MODEL FLOPS in common/core/model.h) of gru_layer_forward and
 * gru_layer_backward over T steps of one sequence, inputs of In features, H units:
 *   products  per step x·Wxᵀ (2·3H·In) and h·Whᵀ (2·3H·H), each with its input and
 *             weight gradients in backward (twice as much again)   → 18H·(In + H)
 *   element-wise, per step and unit: forward 3 + 3 (the biases bx, bh) + 2 (r: add, σ)
 *             + 2 (z) + 3 (n: r·hp_n, add, tanh) + 3 (h' = n + z·(h − n)) = 16;
 *             backward 17 (gru.c's backward_unit) + 6 (the two biases' column sums)
 *             = 23                                                    → 39H
 *   so T·(18H·(In + H) + 39H). The layer benchmark's `gru` is this at In = H = d; the
 *   model `rnn_attention` counts its encoders and its decoder with it (the decoder's
 *   input [emb; c] has In = E + H). T is real so that the benchmark can solve for a
 *   crossing. */
double gru_layer_flops(double In, double H, double T);

#endif
