/* lstm.h — the LSTM cell, the LSTM layer and the LSTM encoder-decoder (prefix: lstm_).
 *
 * Cell (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000), gate
 * order i, f, g, o as in PyTorch:
 *     i = σ(W_i x + U_i h + b_i)      input gate: how much of the candidate to write
 *     f = σ(W_f x + U_f h + b_f)      forget gate: how much of the old cell to keep
 *     g = tanh(W_g x + U_g h + b_g)   candidate
 *     o = σ(W_o x + U_o h + b_o)      output gate: how much of the cell to show
 *     c' = f ⊙ c + i ⊙ g
 *     h' = o ⊙ tanh(c')
 * The four gates are stacked in one (4H, ·) weight so one GEMM computes them all.
 *
 * Split of the work. The input part x·Wxᵀ + b of every step does not depend on the
 * recurrence, so a layer computes it for all T steps in one GEMM before the loop; the
 * cell adds only the recurrent part h·Whᵀ. In backward the cell hands back the gradient
 * of the gate pre-activations (dpre) of its step; the layer keeps all of them and forms
 * dWx, dWh and db with one GEMM (or sum) over all steps.
 *
 * Files, the same roles as in rnn_attention/ and transformer/: lstm.h (this header: the
 * pieces, then the model's parameter and state structs with their shapes), lstm_model.c
 * (the configuration, the parameter walk, the state layout, alloc/free/init/reserve, the
 * ops table), lstm_pass.c (the encoder, forward and backward), lstm_decode.c (greedy
 * decoding and the trace); its pieces lstm_layer.c (T steps, the projection table, the
 * bias initialisation) and lstm_cell.c (one step).
 */
#ifndef ATTNLAB_LSTM_H
#define ATTNLAB_LSTM_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#include "../common/core/carve.h"
#include "../common/core/fastmath.h"
#include "../common/core/model.h"

/* The cell's σ and tanh are fm_sigmoid and fm_tanh (common/core/fastmath.h): one exp each,
 * with no call and no branch, so a loop over a row of gates becomes a loop over SIMD
 * vectors. Element-wise loops are written as blocks of FM_LANES independent units plus a
 * scalar tail and compiled for several vector widths (FM_CLONES); every version gives the
 * same bits. */

/* ---- the cell --------------------------------------------------------------------------- */

/* One step of the cell for a batch of B rows.
 * On entry act (B, 4H) holds the input pre-activation x·Wxᵀ + b of this step; on return
 * it holds the gate activations [i f g o] (what backward needs). Writes h (B, H) and
 * c (B, H). h_prev, c_prev (B, H) are the previous state; Wh (4H, H).
 *     act += h_prev (B,H) · Whᵀ (H,4H);  gates;  c = f⊙c_prev + i⊙g;  h = o⊙tanh(c) */
void lstm_cell_forward(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                       const gsl_matrix *h_prev, const gsl_matrix *c_prev,
                       const gsl_matrix *Wh);

/* The same step when the input is a token: the input part of row r is row ids[r] of the
 * projection table P (V, 4H) (see "inputs that are tokens" below), read where it lies.
 * act (B, 4H) is written (its contents on entry do not matter): the gate activations.
 *     act = h_prev·Whᵀ;  gates of act + P[ids];  c, h as above
 * Gives the same bits as copying the rows of P into act and calling lstm_cell_forward. */
void lstm_cell_forward_table(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                             const gsl_matrix *h_prev, const gsl_matrix *c_prev,
                             const gsl_matrix *P, const int *ids, const gsl_matrix *Wh);

/* The plain reference of lstm_cell_forward's element-wise part (everything after its
 * GEMM): the gates, c and h as the equations read, one element at a time with libm's exp
 * and tanh; the tests hold the vectorised kernel to it, and no other code calls it.
 * On entry act (B, 4H) holds the pre-activations [i f g o] (input and recurrent parts
 * already summed); on return their activations. Reads c_prev (B, H); writes c, h (B, H). */
void lstm_cell_gates_reference(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                               const gsl_matrix *c_prev);

/* Backward of one step. Reads the upstream gradients dh, dc (B, H) of this step's
 * outputs (dc is what flows back from the next step's cell state; may be NULL for 0),
 * and what forward kept: act (B, 4H), c (B, H), c_prev (B, H).
 * Writes dpre (B, 4H), the gradient of the four pre-activations (input part plus
 * recurrent part, which share it). Accumulates dh_prev += dpre · Wh and
 * dc_prev += dc_total ⊙ f, each skipped when NULL. Does not touch dWh: the caller forms
 * it from dpre and h_prev (one GEMM over all steps in the layer). */
void lstm_cell_backward(gsl_matrix *dpre, gsl_matrix *dh_prev, gsl_matrix *dc_prev,
                        const gsl_matrix *dh, const gsl_matrix *dc,
                        const gsl_matrix *act, const gsl_matrix *c, const gsl_matrix *c_prev,
                        const gsl_matrix *Wh);

/* ---- the layer: the cell run over T steps -------------------------------------
 *
 * Layout (time-major, so that one step of the whole batch is a contiguous block of B
 * rows and every per-step slice is a plain view, never a copy):
 *     X   (T·B, E)      row t·B + b is x_{t+1} of sequence b (steps counted from 1)
 *     Act (T·B, 4H)     block t-1 holds the gates [i f g o] of step t
 *     Hs  ((T+1)·B, H)  block t holds h_t: block 0 is the initial state h_0
 *     Cs  ((T+1)·B, H)  block t holds c_t: block 0 is c_0
 * Keeping h_0 in front of h_1..h_T makes "the previous state of every step" one view,
 * Hs rows [0, T·B), so the gradient of Wh over all steps is one GEMM, and lets two layers
 * share a block: the model lays its decoder's states right after its encoder's, so the
 * encoder's last state IS the decoder's first state, with no copy either way.
 */

/* Views of one layer's parameters, or of their gradients (same shapes). */
typedef struct lstm_weights {
    gsl_matrix *Wx; /* (4H, E) input weights, gate blocks i, f, g, o stacked by rows */
    gsl_matrix *Wh; /* (4H, H) recurrent weights, same stacking */
    gsl_matrix *b;  /* (1, 4H) bias (PyTorch's b_ih + b_hh in one) */
} lstm_weights;

/* Input part of the gate pre-activations of N rows at once (all steps of a layer, or one
 * step while decoding): writes act (N, 4H) = X (N, E) · Wxᵀ (E, 4H) + b. */
void lstm_input_forward(gsl_matrix *act, const gsl_matrix *X, const lstm_weights *w);

/* The recurrence alone: runs the cell over the T = Act->size1 / B steps of a batch of B
 * sequences. On entry Act (T·B, 4H) holds the input part of every step's pre-activations
 * (x_t·Wxᵀ + b, however the caller formed it); on return the gates. Reads the initial
 * state in block 0 of Hs and Cs, writes blocks 1..T. */
void lstm_recur_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, const gsl_matrix *Wh,
                        size_t B);

/* Backward of lstm_recur_forward. dHs, dCs are worked in place as in lstm_layer_backward
 * (below). Writes dPre (T·B, 4H); accumulates dWh += dPreᵀ·Hs[0..T−1], one GEMM. */
void lstm_recur_backward(gsl_matrix *dWh, gsl_matrix *dPre, gsl_matrix *dHs, gsl_matrix *dCs,
                         const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                         const gsl_matrix *Wh, size_t B);

/* Runs the cell over the T = X->size1 / B steps of a batch of B sequences (layout above).
 * Reads X and the initial state in block 0 of Hs and Cs; writes Act and blocks 1..T of
 * Hs and Cs. The input projection of all T steps is one GEMM before the loop. */
void lstm_layer_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, const gsl_matrix *X,
                        const lstm_weights *w, size_t B);

/* Backward of lstm_layer_forward.
 * dHs, dCs ((T+1)·B, H) carry the gradient of every state and are worked in place: on
 * entry block t holds the gradient that reaches h_t (c_t) from outside the layer (from an
 * output layer, or from a following layer at t = T; zero where nothing does); on return
 * block t holds the total gradient of h_t (c_t), so block 0 holds the gradients of the
 * initial state, accumulated (+=) onto what it held on entry.
 * Writes dPre (T·B, 4H), the gradient of every step's pre-activations. Accumulates
 * dw->Wx += dPreᵀ·X, dw->Wh += dPreᵀ·Hs[0..T-1] (one GEMM each, over all steps),
 * dw->b += column sums of dPre, and dX (T·B, E) += dPre·Wx (skipped when dX is NULL).
 * Reads what forward kept: X, Hs, Cs, Act. */
void lstm_layer_backward(gsl_matrix *dX, lstm_weights *dw, gsl_matrix *dPre,
                         gsl_matrix *dHs, gsl_matrix *dCs, const gsl_matrix *X,
                         const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                         const lstm_weights *w, size_t B);

/* The analytic FLOPs (MODEL FLOPS in common/core/model.h) of lstm_layer_forward and
 * lstm_layer_backward over T steps of one sequence, inputs of In features, H units:
 *   products  per step x·Wxᵀ (2·4H·In) and h·Whᵀ (2·4H·H), each with its input and
 *             weight gradients in backward (twice as much again)   → 24H·(In + H)
 *   element-wise, per step and unit: forward 4 (the bias) + 4 (σ, σ, tanh, σ) + 3
 *             (c = f·c + i·g) + 1 (tanh c) + 1 (o·tanh c) = 13; backward 24
 *             (lstm_cell.c's backward_unit: tanh c again, the chain through h and c, the
 *             four gate derivatives) + 4 (the bias gradient's column sums) = 28  → 41H
 *   so T·(24H·(In + H) + 41H). The layer benchmark's `lstm` is this at In = H = d; the
 *   model `lstm` counts its encoder and its decoder with it (lstm_model.c). T is real so
 *   that the benchmark can solve for a crossing. */
double lstm_layer_flops(double In, double H, double T);

/* ---- inputs that are tokens: the projection table ------------------------------------
 *
 * When x_t is row ids[t·B + b] of an embedding table embed (V, E), its input part is a
 * row of one small table:
 *     x_t·Wxᵀ + b = embed[id]·Wxᵀ + b = P[id],      P (V, 4H) = embed · Wxᵀ + b,
 * so the input part of all T·B rows is a row of P, formed with a GEMM of V rows
 * instead of T·B (V = 11 on the copy task, T·B = 1024 at T = 32). Backward: the rows of
 * dPre that share a token add up into one row of dP (a scatter-add), and then
 *     dWx += dPᵀ·embed,   db += Σ_rows dP,   dembed += dP·Wx,
 * again products of V rows. The result equals lstm_layer_forward on the embedded inputs
 * up to rounding (tests/test_lstm_cell.c compares the two). */

/* P (V, 4H) = embed (V, E) · Wxᵀ (E, 4H) + b. */
void lstm_table_forward(gsl_matrix *P, const gsl_matrix *embed, const lstm_weights *w);

/* lstm_recur_forward with the input part of row i of Act (T·B, 4H) taken as row ids[i] of
 * P (V, 4H), read there by the cell (lstm_cell_forward_table), never gathered into Act.
 * Act's contents on entry do not matter; on return it holds the gates of every step.
 * Given an Act of B rows instead, every step writes its gates there: for a caller that
 * needs none of them afterwards (greedy decoding), whose one block then stays in cache
 * instead of streaming T·B·4H doubles through memory. T = Hs->size1 / B − 1. */
void lstm_recur_forward_table(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act,
                              const gsl_matrix *P, const int *ids, const gsl_matrix *Wh,
                              size_t B);

/* Backward of "P = embed·Wxᵀ + b, then Act row i = P row ids[i]" for the N = dPre->size1
 * rows of dPre (N, 4H). Writes dP (V, 4H), the scatter-add of dPre by token; accumulates
 * dw->Wx += dPᵀ·embed, dw->b += Σ_rows dP, dembed (V, E) += dP·Wx. */
void lstm_table_backward(gsl_matrix *dembed, lstm_weights *dw, gsl_matrix *dP,
                         const gsl_matrix *dPre, const int *ids, const gsl_matrix *embed,
                         const lstm_weights *w);

/* ---- initialisation ------------------------------------------------------------------ */

/* Fills the gate bias b (1, 4H) as PyTorch's b_ih + b_hh, each drawn from U(−k, k) (in
 * that order, entry by entry), so the gates start from the reference's distribution; then
 * sets the forget block [H, 2H) to forget_bias, which makes f = σ(forget_bias) ≈ 0.73 at
 * 1: the cell starts out remembering (Gers et al. 2000; Jozefowicz et al. 2015; the knob
 * of Tallec & Ollivier 2018). Every LSTM cell of the project starts this way. */
void lstm_init_bias(gsl_matrix *b, double k, double forget_bias, const gsl_rng *r);

/* ---- the model `lstm` -------------------------------------------------------------
 *
 * Encoder-decoder of Sutskever et al. (2014) without attention: the source is embedded
 * (enc.embed) and read by the encoder LSTM; its final (h, c), one fixed-size state, starts
 * the decoder LSTM, which reads dec_in embedded by its own table (dec.embed); a linear
 * layer (out.W, out.b) maps each decoder state to logits over the V+1 tokens.
 * Parameters, in arena order: enc.embed (V+1, E), enc.Wx (4H, E), enc.Wh (4H, H),
 * enc.b (1, 4H), dec.embed, dec.Wx, dec.Wh, dec.b (same shapes), out.W (V+1, H),
 * out.b (1, V+1), and with feed_context dec.Wc (4H, H).
 * feed_context (Cho et al. 2014's RNN encoder-decoder): the encoder's final state
 * c = h_Ts, the fixed summary of the source, is also an input of every decoder step,
 * through its own weights: a_t = P_dec[y_{t−1}] + c·Wcᵀ + s_{t−1}·Whᵀ. Its part
 * Kc = c·Wcᵀ is the same at every step, so it is formed once per sequence.
 * trace() sends, for one example, the gates and the cell state of every step as (steps, H)
 * matrices named "enc.gate_i", "enc.gate_f", "enc.gate_o", "enc.cell" (rows: source
 * tokens) and "dec.gate_i", "dec.gate_f", "dec.gate_o", "dec.cell" (rows: decoded tokens);
 * columns are hidden units. */

/* ---- the model's three structs (lstm_model.c lays them out) ------------------------- */

/* Views of every parameter (or of every gradient: same shapes), in arena order. */
typedef struct lstm_params {
    gsl_matrix *enc_embed; /* (V+1, E) source token embeddings */
    lstm_weights enc;      /* Wx (4H, E), Wh (4H, H), b (1, 4H) of the encoder */
    gsl_matrix *dec_embed; /* (V+1, E) decoder input embeddings */
    lstm_weights dec;      /* Wx (4H, E), Wh (4H, H), b (1, 4H) of the decoder */
    gsl_matrix *out_W;     /* (V+1, H) output layer */
    gsl_matrix *out_b;     /* (1, V+1) its bias */
    gsl_matrix *dec_Wc;    /* (4H, H) the context's weights, feed_context only (else NULL):
                              last in arena order, so the other tensors keep their place */
} lstm_params;

/* Every activation of a step, cut from blk at the capacity cap. */
typedef struct lstm_state {
    carve_block blk;        /* the two blocks every array below lies in */
    model_sizes cap;        /* the largest batch and lengths reserved for */
    model_sizes last;       /* sizes of the last forward */
    int has_forward;        /* 1 while the arrays hold a whole forward of last: what
                               backward differentiates (a decode reuses the same arrays) */
    double *P, *dP;         /* (2·(V+1), 4H) encoder table, then decoder table */
    double *Act, *dPre;     /* ((Ts+Tt)·B, 4H) gates, gradients of the pre-activations */
    double *Hs, *Cs;        /* ((Ts+1+Tt)·B, H) hidden and cell states */
    double *dHs, *dCs;      /* ((Ts+1+Tt)·B, H) their gradients */
    double *logits;         /* (Tt·B, V+1) */
    double *dlogits;        /* (Tt·B, V+1) written by forward, read by backward */
    double *trace;          /* (max(Ts, Tt), H) one gate matrix, contiguous, for trace() */
    int *ids;               /* ((Ts+Tt)·B) source then decoder-input tokens, time-major */
    int *tgt;               /* (Tt·B) targets, time-major */
    int *pred;              /* (Tt·B) argmax tokens, time-major */
    double *Kc, *dKc;       /* (B, 4H) feed_context: the context's part h_Ts·Wcᵀ of every
                               decoder step, and its gradient (NULL without feed_context) */
} lstm_state;

typedef struct lstm_model {
    struct model head; /* first: a lstm_model * is a model * */
    lstm_params w;     /* parameter values */
    lstm_params g;     /* their gradients (same shapes) */
    lstm_state s;      /* run-time state */
} lstm_model;

/* The workspace seen at one batch's sizes: views into the front of each state array. */
typedef struct lstm_views {
    gsl_matrix_view Pe, Pd, dPe, dPd; /* (V+1, 4H) projection tables and their gradients */
    gsl_matrix_view Ae, Ad, dAe, dAd; /* (Ts·B, 4H), (Tt·B, 4H) gates, d pre-activations */
    gsl_matrix_view He, Ce, dHe, dCe; /* ((Ts+1)·B, H) encoder h_0..h_Ts */
    gsl_matrix_view Hd, Cd, dHd, dCd; /* ((Tt+1)·B, H) decoder h_0..h_Tt, h_0 = enc h_Ts */
    gsl_matrix_view Hout, dHout;      /* (Tt·B, H) decoder h_1..h_Tt: the output's input */
    gsl_matrix_view logits, dlogits;  /* (Tt·B, V+1) */
    gsl_matrix_view Kc, dKc;          /* (B, 4H) feed_context: h_Ts·Wcᵀ, its gradient */
} lstm_views;

/* Views of the front of every state array at one call's sizes (B, Ts, Tt) (lstm_model.c). */
void lstm_make_views(lstm_views *v, const lstm_model *m, size_t B, size_t Ts, size_t Tt);

/* ---- the passes (lstm_pass.c, lstm_decode.c); the error contract is common/core/model.h's -- */

/* The encoder: reads src (B, Ts), its tokens already checked, and runs the LSTM from
 * h_0 = c_0 = 0, leaving its final state in block Ts of Hs, Cs, where the decoder starts.
 * With keep, the encoder's gates of every step stay in v->Ae (for backward and trace);
 * without, its first block is rewritten by every step. */
void lstm_encode(lstm_model *m, lstm_views *v, const int *src, size_t B, size_t Ts, int keep);

/* feed_context: the context's part of every decoder step, Kc (B, 4H) = h_Ts (B, H) ·
 * dec.Wcᵀ (H, 4H), formed once per sequence from the encoder's final state (block Ts of
 * Hs, where lstm_encode left it) into v->Kc. */
void lstm_context_forward(lstm_model *m, lstm_views *v, size_t B);

/* feed_context: the input part of one decoder step of B rows, act (B, 4H) = P[ids] + Kc
 * (written): the row of the decoder's table picked by each token, plus the context's
 * part of its example. lstm_cell_forward then adds h_prev·Whᵀ and forms the gates. */
void lstm_context_input(gsl_matrix *act, const gsl_matrix *P, const int *ids,
                        const gsl_matrix *Kc);

/* logits (N, V+1) = Hout (N, H) · out.Wᵀ (H, V+1) + out.b: the output layer on N rows. */
void lstm_output_forward(gsl_matrix *logits, const gsl_matrix *Hout, const lstm_params *w);

/* The ops of `lstm`, with the contracts of common/core/model.h: forward and backward in
 * lstm_pass.c, decode and trace in lstm_decode.c, the rest in lstm_model.c. */
double lstm_forward(model *m, const batch *b, int *pred);
int lstm_backward(model *m, const batch *b);
int lstm_decode(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out);
int lstm_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
               void *ctx);

/* The registered model `lstm`. */
extern const model_ops lstm_ops;

#endif
