/* rnnattn.h — the GRU cell and layer, additive attention, and the attention
 * encoder-decoder `rnn_attention` (prefixes: gru_ for the GRU, addattn_ for the attention,
 * rnnattn_ for the model).
 *
 * Shapes. B batch, Ts source length, Tt target length, E embedding width, H recurrent
 * state width, A attention width, V vocabulary (data symbols + BOS). Every activation is
 * time-major: row t·B + b holds example b at step t, so one step of the whole batch is a
 * contiguous block of B rows ("block t") and the steps of a sequence are one matrix.
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
 * Additive attention (Bahdanau, Cho & Bengio 2015, "Neural Machine Translation by Jointly
 * Learning to Align and Translate", eq. 6 and appendix A.1.2). The decoder state s_{t−1}
 * is the query; the encoder states h_1..h_Ts are the keys and also the values:
 *     q_t  = W_q s_{t−1}                    query projection, no bias      (A)
 *     k_j  = W_k h_j + b                    key projection, once per source (A)
 *     e_tj = vᵀ tanh(q_t + k_j)             alignment score
 *     α_t  = softmax_j(e_t)                 weights over the source, sum to 1
 *     c_t  = Σ_j α_tj h_j                   context: the values, weighted
 */
#ifndef ATTNLAB_RNNATTN_H
#define ATTNLAB_RNNATTN_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

#include "../common/model.h"

/* ---- GRU ---------------------------------------------------------------------------- */

/* Views of one GRU's parameters, or of their gradients (same shapes). */
typedef struct gru_weights {
    gsl_matrix *Wx; /* (3H, In) input weights [W_r; W_z; W_n] */
    gsl_matrix *Wh; /* (3H, H)  recurrent weights [U_r; U_z; U_n] */
    gsl_matrix *bx; /* (1, 3H)  input biases [b_ir b_iz b_in] */
    gsl_matrix *bh; /* (1, 3H)  recurrent biases [b_hr b_hz b_hn] */
} gru_weights;

/* One step of the cell for a batch of B rows.
 * On entry act (B, 3H) holds the input part xp = x·Wxᵀ + bx of this step; on return it
 * holds the gates [r z n] (what backward needs). Writes hp (B, 3H) = h_prev·Whᵀ + bh,
 * kept because backward needs its n part, and the new state h (B, H). h_prev (B, H).
 * h must not overlap h_prev, act or hp. */
void gru_cell_forward(gsl_matrix *h, gsl_matrix *act, gsl_matrix *hp,
                      const gsl_matrix *h_prev, const gsl_matrix *Wh, const gsl_matrix *bh);

/* Backward of one step. Reads dh (B, H), the total gradient of this step's output, and
 * what forward kept: act = [r z n], hp (B, 3H), h_prev (B, H).
 * Writes dxp (B, 3H), the gradient of the input part xp, and dhp (B, 3H), that of the
 * recurrent part hp (they differ in the n third, where hp is scaled by r). Accumulates
 * dh_prev (B, H) += dh ⊙ z + dhp·Wh (skipped when NULL). Leaves dWx, dbx, dWh, dbh to the
 * caller, which forms them from dxp and dhp of all steps with one GEMM each. */
void gru_cell_backward(gsl_matrix *dxp, gsl_matrix *dhp, gsl_matrix *dh_prev,
                       const gsl_matrix *dh, const gsl_matrix *act, const gsl_matrix *hp,
                       const gsl_matrix *h_prev, const gsl_matrix *Wh);

/* Runs the cell over the T = X->size1 / B steps of a batch of B sequences.
 * Reads X (T·B, In) and h_0 in block 0 of Hs ((T+1)·B, H); writes blocks 1..T of Hs,
 * Act (T·B, 3H) (the gates of every step) and HP (T·B, 3H) (the recurrent parts).
 * The input parts of all T steps are one GEMM before the loop. */
void gru_layer_forward(gsl_matrix *Hs, gsl_matrix *Act, gsl_matrix *HP, const gsl_matrix *X,
                       const gru_weights *w, size_t B);

/* Backward of gru_layer_forward.
 * dHs ((T+1)·B, H) is worked in place: on entry block t holds the gradient that reaches
 * h_t from outside the layer; on return it holds the total gradient of h_t, so block 0
 * holds the gradient of h_0, accumulated onto what it held. Writes dXP, dHP (T·B, 3H)
 * (every step's dxp and dhp). Accumulates, with one GEMM each over all steps,
 * dw->Wx += dXPᵀ·X, dw->bx += Σ dXP, dw->Wh += dHPᵀ·Hs[0..T−1], dw->bh += Σ dHP, and
 * dX (T·B, In) += dXP·Wx (skipped when dX is NULL). */
void gru_layer_backward(const gru_weights *dw, gsl_matrix *dX, gsl_matrix *dHs,
                        gsl_matrix *dXP, gsl_matrix *dHP, const gsl_matrix *X,
                        const gsl_matrix *Hs, const gsl_matrix *Act, const gsl_matrix *HP,
                        const gru_weights *w, size_t B);

/* ---- additive attention --------------------------------------------------------------- */

/* Views of the attention's parameters, or of their gradients (same shapes). */
typedef struct addattn_weights {
    gsl_matrix *Wq; /* (A, H) query projection W_q, applied to the decoder state */
    gsl_matrix *Wk; /* (A, H) key projection W_k, applied to the encoder states */
    gsl_matrix *bk; /* (1, A) key bias b */
    gsl_matrix *v;  /* (1, A) scoring vector v */
} addattn_weights;

/* Scratch of one step, for one example at a time (caller-owned, so nothing allocates). */
typedef struct addattn_work {
    double *e;  /* (Ts) gradient of the scores */
    double *da; /* (Ts) gradient of the weights α */
} addattn_work;

/* The scores evaluate tanh(q + k_j) as 1 − 2/(1 + e^{2q} e^{2k_j}) (see addattn.c), so
 * keys and query projections are kept in that form: EK = e^{2k}, EQ = e^{2q}. Gradients
 * (dK, dq) are always those of k and q themselves. */

/* The keys of every source position, computed once per sequence, before the decoder runs:
 * k (Ts·B, A) = Henc (Ts·B, H) · W_kᵀ (H, A) + b, written as EK = e^{2k} (contiguous). */
void addattn_keys_forward(gsl_matrix *EK, const gsl_matrix *Henc, const addattn_weights *w);

/* One decoder step for B rows. Reads the query state s_prev (B, H), the keys EK (Ts·B, A)
 * and the values Henc (Ts·B, H) (time-major, Ts = alpha->size2). Writes the query
 * projection q = s_prev·W_qᵀ as EQ (B, A) = e^{2q} (contiguous), the weights alpha (B, Ts)
 * (each row sums to 1) and the context c (B, H); alpha and c may be views with any row
 * stride (alpha's columns contiguous). */
void addattn_step_forward(gsl_matrix *c, gsl_matrix *alpha, gsl_matrix *EQ,
                          const gsl_matrix *s_prev, const gsl_matrix *EK,
                          const gsl_matrix *Henc, const addattn_weights *w);

/* The scores e (Ts), e_j = vᵀ tanh(q + k_j), of one example as the plainest loop, with
 * libm's tanh: the reference for the fused kernel inside addattn_step_forward. q (A),
 * row j of K at K + j·kstride (A), v (A). */
void addattn_scores_reference(double *e, const double *q, const double *K, size_t kstride,
                              const double *v, size_t Ts, size_t A);

/* Backward of one step: the part the recurrence needs now. Reads dc (B, H), the total
 * gradient of the context, and what forward kept (alpha, EQ, EK, Henc).
 * Writes dq (B, A), the gradient of the query projection q. Accumulates ds_prev (B, H) +=
 * dq·W_q, dK (Ts·B, A, same row stride as EK) += the gradient of the keys k, dw->v += the
 * gradient of v. The rest waits for addattn_seq_backward. Uses ws->e, ws->da. */
void addattn_step_backward(gsl_matrix *ds_prev, gsl_matrix *dq, gsl_matrix *dK,
                           const addattn_weights *dw, const gsl_matrix *dc,
                           const gsl_matrix *alpha, const gsl_matrix *EQ, const gsl_matrix *EK,
                           const gsl_matrix *Henc, const addattn_weights *w,
                           const addattn_work *ws);

/* Backward of the whole sequence of Tt steps, after the step loop: what sums over steps.
 * Reads dQ (Tt·B, A) and dC (Tt·B, H) (every step's dq and dc), the query states S_prev
 * (Tt·B, H) (s_0..s_{Tt−1}), every step's weights Alpha (Tt·B, Ts), and dK, Henc.
 * Accumulates dw->Wq += dQᵀ·S_prev; dHenc (Ts·B, H) += Σ_t α_tjᵀ dc_t (the values' share)
 * + dK·W_k (the keys' share); dw->Wk += dKᵀ·Henc; dw->bk += Σ dK. */
void addattn_seq_backward(const addattn_weights *dw, gsl_matrix *dHenc, const gsl_matrix *dQ,
                          const gsl_matrix *dC, const gsl_matrix *dK, const gsl_matrix *S_prev,
                          const gsl_matrix *Alpha, const gsl_matrix *Henc,
                          const addattn_weights *w, size_t B);

/* ---- the model `rnn_attention` ----------------------------------------------------------
 *
 * Embedding (enc.embed) → GRU encoder, every state h_1..h_Ts kept as keys and values →
 * decoder s_t = GRU([emb(y_{t−1}); c_t], s_{t−1}) with s_0 = h_Ts and c_t the attention
 * over h_1..h_Ts with query s_{t−1} → logits_t = out.W [s_t; c_t] + out.b over all V
 * tokens. The PyTorch twin is GRUAttnSeq2Seq in shared/reference/models.py.
 * With cell lstm both GRUs become LSTMs (lstm/lstm.h) and s_0 = (h_Ts, c_Ts): everything
 * else is model `lstm`, so attention is the only difference (the controlled experiment).
 * Parameters, in arena order: enc.embed (V, E), enc.Wx (GH, E), enc.Wh (GH, H), then
 * enc.bx, enc.bh (1, 3H) for GRU or enc.b (1, 4H) for LSTM; dec.embed (V, E),
 * dec.Wx (GH, E+H), dec.Wh (GH, H), dec biases as the encoder's; attn.Wq (A, H),
 * attn.Wk (A, H), attn.bk (1, A), attn.v (1, A); out.W (V, 2H), out.b (1, V) — G = 3 (GRU)
 * or 4 (LSTM). dec.Wx's first E columns read the embedding, the last H the context.
 * trace() sends one (Tt, Ts) matrix, "alignment", rows "tgt", cols "src": row t is α_t.
 */
extern const model_ops rnnattn_ops;

#endif
