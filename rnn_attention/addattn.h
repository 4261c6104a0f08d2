/* addattn.h — additive attention, one decoder step at a time, forward and backward
 * (prefix: addattn_).
 *
 * Shapes. B batch, Ts source length, Tt target length, H state width (of the encoder and
 * of the decoder), A attention width. Activations are time-major: row t·B + b holds
 * example b at step t, so one step of the whole batch is a block of B rows.
 *
 * Additive attention (Bahdanau, Cho & Bengio 2015, "Neural Machine Translation by Jointly
 * Learning to Align and Translate", eq. 6 and appendix A.1.2). The decoder state s_{t−1}
 * is the query; the encoder states h_1..h_Ts are the keys and also the values:
 *     q_t  = W_q s_{t−1}                    query projection, no bias      (A)
 *     k_j  = W_k h_j + b                    key projection, once per source (A)
 *     e_tj = vᵀ tanh(q_t + k_j)             alignment score
 *     α_t  = softmax_j(e_t)                 weights over the source, sum to 1
 *     c_t  = Σ_j α_tj h_j                   context: the values, weighted
 *
 * The scores evaluate tanh(q + k_j) as 1 − 2/(1 + e^{2q} e^{2k_j}) (see addattn.c), so
 * keys and query projections are kept in that form: EK = e^{2k}, EQ = e^{2q}. Gradients
 * (dK, dq) are always those of k and q themselves.
 *
 * Argument order: outputs first, then inputs, then weights, then sizes. A backward takes
 * the gradients it writes (the input gradients first, then the weight gradients, then the
 * scratch it writes), then the upstream gradient, then what forward kept, then the
 * weights, then sizes.
 */
#ifndef ATTNLAB_ADDATTN_H
#define ATTNLAB_ADDATTN_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>

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

/* ---- forward ---------------------------------------------------------------------------- */

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

/* The plain reference of the score kernel inside addattn_step_forward: the scores e (Ts)
 * of one example, e_j = vᵀ tanh(q + k_j), one term at a time with libm's tanh (the two
 * differ only in the order of the additions). The tests hold the kernel to it; no other
 * code calls it. q (A); row j of K at K + j·kstride (A), k_j = W_k h_j + b itself (not
 * e^{2k_j}); v (A). */
void addattn_scores_reference(double *e, const double *q, const double *K, size_t kstride,
                              const double *v, size_t Ts, size_t A);

/* ---- backward --------------------------------------------------------------------------- */

/* Backward of one step: the part the recurrence needs now. Accumulates the input
 * gradients ds_prev (B, H) += dq·W_q and dK (Ts·B, A, same row stride as EK) += the
 * gradient of the keys k, and the weight gradient dw->v += the gradient of v. Writes dq
 * (B, A), the gradient of the query projection q, and uses ws->e, ws->da as scratch.
 * Reads dc (B, H), the total gradient of the context, and what forward kept (alpha, EQ,
 * EK, Henc). The rest waits for addattn_seq_backward. */
void addattn_step_backward(gsl_matrix *ds_prev, gsl_matrix *dK, addattn_weights *dw,
                           gsl_matrix *dq, addattn_work *ws, const gsl_matrix *dc,
                           const gsl_matrix *alpha, const gsl_matrix *EQ, const gsl_matrix *EK,
                           const gsl_matrix *Henc, const addattn_weights *w);

/* Backward of the whole sequence of Tt steps, after the step loop: what sums over steps.
 * Accumulates the input gradient dHenc (Ts·B, H) += Σ_t α_tjᵀ dc_t (the values' share)
 * + dK·W_k (the keys' share), and the weight gradients dw->Wq += dQᵀ·S_prev,
 * dw->Wk += dKᵀ·Henc, dw->bk += Σ dK. Reads the upstream dQ (Tt·B, A), dC (Tt·B, H)
 * (every step's dq and dc) and dK, and what forward kept: the query states S_prev
 * (Tt·B, H) (s_0..s_{Tt−1}), every step's weights Alpha (Tt·B, Ts), Henc. */
void addattn_seq_backward(gsl_matrix *dHenc, addattn_weights *dw, const gsl_matrix *dQ,
                          const gsl_matrix *dC, const gsl_matrix *dK, const gsl_matrix *S_prev,
                          const gsl_matrix *Alpha, const gsl_matrix *Henc,
                          const addattn_weights *w, size_t B);

/* The analytic FLOPs (MODEL FLOPS in common/core/model.h) of the attention of one
 * sequence, forward and backward: Tt decoder steps, each with a query state of Hq
 * features, over Ts encoder states of Hk features (keys and values), attention width A.
 *   keys, per source position: products W_k h (2A·Hk) with its two gradients → 6A·Hk;
 *             element-wise the bias and its gradient (2A), e^{2k} (two comparisons of
 *             the clamp, the doubling, exp: 4A)                         → 6A
 *   query, per step: products W_q s with its two gradients → 6A·Hq; e^{2q} → 4A
 *   per step and source position: products vᵀu (2A) with dv and du → 6A, the context
 *             Σ α h (2Hk) with dα and dh → 6Hk; element-wise u = tanh(q + k) as
 *             1 − 2/(1 + e^{2q}·e^{2k}) (4A); backward u again (4A: ×, +, ÷ and 1 − d),
 *             tanh' = d·(2 − d) (2A), the product by it (A), dq and dk (2A) → 9A; the
 *             softmax (maximum, −, exp, sum, × 1/sum: 5) and its backward (dot product 2,
 *             dα + α·(dα − dot) 3)                                       → 10
 *   per step: 1/sum of the softmax                                      → 1
 * so Ts·(6A·Hk + 6A) + Tt·(6A·Hq + 4A + 1) + Ts·Tt·(19A + 6Hk + 10): the last term is
 * attention's price, growing with Ts·Tt. */
double addattn_flops(double A, double Hq, double Hk, double Ts, double Tt);

#endif
