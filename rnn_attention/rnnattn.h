/* rnnattn.h — the attention encoder-decoder `rnn_attention`: its parameters, its run-time
 * state, the table of its two cells and its passes (prefix: rnnattn_). The GRU is gru.h
 * (gru_), the attention addattn.h (addattn_).
 *
 * Shapes. B batch, Ts source length, Tt target length, E embedding width, H recurrent
 * state width, A attention width, V vocabulary (data symbols + BOS), G gates per unit of
 * the cell (3 for the GRU, 4 for the LSTM), GH = G·H, K the width of an annotation (H,
 * or 2H when bidirectional). Every activation is time-major: row t·B + b holds example b
 * at step t, so one step of the whole batch is a contiguous block of B rows ("block t")
 * and the steps of a sequence are one matrix.
 *
 * The model. Embedding (enc.embed) → GRU encoder, every state h_1..h_Ts kept as keys and
 * values → decoder s_t = GRU([emb(y_{t−1}); c_t], s_{t−1}) with s_0 = h_Ts and c_t the
 * attention over h_1..h_Ts with query s_{t−1} → logits_t = out.W [s_t; c_t] + out.b over
 * all V tokens (Bahdanau, Cho & Bengio 2015). The PyTorch twin is RnnAttention in
 * tests/pytorch/twin.py (`make check-pytorch` compares the two).
 * With cell lstm both GRUs become LSTMs (lstm/lstm.h) and s_0 = (h_Ts, c_Ts): everything
 * else is model `lstm`, so attention is the only difference (the controlled experiment).
 * With bidirectional (RNNsearch, Bahdanau et al. 2015, section 3.2 and appendix A.2.1)
 * a second encoder (bwd) reads the source from its end, and the annotations are
 *     h_j = [→h_j ; ←h_j]   (K = 2H wide; K = H without the setting, h_j = →h_j)
 * which the attention reads as keys and values, so the context c_t is K wide; the
 * decoder starts from s_0 = tanh(W_s ←h_1) (init.W; no bias, as in the paper's A.2.2),
 * with cell state 0 for the LSTM.
 * The two cells sit behind one table (rnnattn_cell, rnnattn_cell.c), chosen once when the
 * model is allocated; the passes call the cell only through it.
 *
 * Files, the same roles as in lstm/ and transformer/: rnnattn.h (this header: the
 * parameter, cell and state structs with their shapes), rnnattn_model.c (the
 * configuration, the parameter walk, the state layout and its views, alloc/free/init/
 * reserve, the ops table), rnnattn_pass.c (the encoder, the decoder step, forward and
 * backward), rnnattn_decode.c (greedy decoding and the trace); its pieces rnnattn_cell.c
 * (the cell table), gru.c (the GRU) and addattn.c (additive attention).
 *
 * Parameters, in arena order: enc.embed (V, E), enc.Wx (GH, E), enc.Wh (GH, H), then
 * enc.bx, enc.bh (1, 3H) for GRU or enc.b (1, 4H) for LSTM; dec.embed (V, E),
 * dec.Wx (GH, E+K), dec.Wh (GH, H), dec biases as the encoder's; attn.Wq (A, H),
 * attn.Wk (A, K), attn.bk (1, A), attn.v (1, A); out.W (V, H+K), out.b (1, V); and with
 * bidirectional, last, bwd.Wx (GH, E), bwd.Wh (GH, H), bwd biases, init.W (H, H).
 * dec.Wx's first E columns read the embedding, the last K the context. Checkpoints store
 * the tensors by these names in this order.
 * trace() sends one (Tt, Ts) matrix, "alignment", rows "tgt", cols "src": row t is α_t.
 *
 * Argument order, everywhere: outputs first, then inputs, then weights, then sizes. A
 * backward takes the gradients it writes (the input gradient first, then the weight
 * gradients, then the scratch it writes), then the upstream gradient, then what forward
 * kept, then the weights, then sizes.
 */
#ifndef ATTNLAB_RNNATTN_H
#define ATTNLAB_RNNATTN_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "../common/core/carve.h"
#include "../common/core/model.h"
#include "addattn.h"

/* ---- parameters ------------------------------------------------------------------------ */

/* Views of one recurrent layer's parameters (or of their gradients: same shapes),
 * whichever the cell. */
typedef struct rnnattn_rnn {
    gsl_matrix *Wx; /* (GH, In) input weights, gate blocks stacked by rows (In = E or E+K) */
    gsl_matrix *Wh; /* (GH, H)  recurrent weights, same stacking */
    gsl_matrix *bx; /* (1, GH)  GRU: input biases b_i; LSTM: its one bias b (b_ih + b_hh) */
    gsl_matrix *bh; /* (1, GH)  GRU: recurrent biases b_h; LSTM: NULL */
} rnnattn_rnn;

/* Views of every parameter, into the arena (or of every gradient: same shapes). */
typedef struct rnnattn_params {
    gsl_matrix *enc_embed;      /* (V, E) source token embeddings */
    rnnattn_rnn enc;            /* Wx (GH, E), Wh (GH, H), biases (1, GH) */
    gsl_matrix *dec_embed;      /* (V, E) decoder input embeddings */
    rnnattn_rnn dec;            /* Wx (GH, E+K), Wh (GH, H), biases (1, GH) */
    addattn_weights attn;       /* Wq (A, H), Wk (A, H), bk (1, A), v (1, A) */
    gsl_matrix *out_W;          /* (V, 2H) reads [s_t; c_t] */
    gsl_matrix *out_b;          /* (1, V) */
    rnnattn_rnn bwd;            /* bidirectional: the backward encoder, shapes as enc's */
    gsl_matrix *init_W;         /* bidirectional: (H, H) W_s, s_0 = tanh(←h_1·W_sᵀ) */
    gsl_matrix_view dec_Wx_emb; /* (GH, E) columns of dec.Wx that read emb(y_{t−1}) */
    gsl_matrix_view dec_Wx_ctx; /* (GH, K) columns of dec.Wx that read c_t */
    gsl_matrix_view out_W_s;    /* (V, H)  columns of out.W that read s_t */
    gsl_matrix_view out_W_c;    /* (V, K)  columns of out.W that read c_t */
} rnnattn_params;

/* ---- the cell ----------------------------------------------------------------------------
 *
 * One entry per cell (rnnattn_cell.c): its sizes, which decide the parameters and which
 * arrays the state holds, and its functions, which are all the passes call. Arrays a cell
 * does not keep (HP for the LSTM, Cs for the GRU) are passed as empty matrices and never
 * read. In the layer and step functions, Hs and Cs ((T+1)·B, H) hold the states h_0..h_T
 * (and the cell states c_0..c_T), Act (T·B, GH) the gates of every step and HP (T·B, GH)
 * the recurrent parts h·Whᵀ + bh; step t (1-based) reads block t−1 of Hs (Cs) and writes
 * block t, and its gates are block t−1 of Act. */
typedef struct rnnattn_cell {
    const char *name;      /* the value of cfg.cell that selects it */
    size_t gates;          /* G, gates per unit: weights and gate arrays have GH = G·H */
    size_t biases;         /* bias tensors per layer: 2 (GRU bx, bh) or 1 (LSTM b, in bx) */
    const char *bias[2];   /* their names in the arena, in arena order */
    int keeps_recurrent;   /* a step keeps HP, its h·Whᵀ + bh (GH per row): the GRU */
    int has_cell_state;    /* a cell state c beside h (H per row): the LSTM */

    /* Draws the biases of w from PyTorch's initialisation: U(−k, k), and for the LSTM
     * the forget block set to forget_bias (lstm_init_bias). */
    void (*init_bias)(rnnattn_rnn *w, double k, double forget_bias, const gsl_rng *r);

    /* Runs the layer over the T = X->size1 / B steps of X (T·B, In), from the state in
     * block 0 of Hs (and Cs): writes blocks 1..T of Hs (Cs), Act, HP. */
    void (*layer_forward)(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, gsl_matrix *HP,
                          const gsl_matrix *X, const rnnattn_rnn *w, size_t B);

    /* Backward of layer_forward: accumulates dX (T·B, In) and the weight gradients dw;
     * writes dAct (T·B, GH) (the gradient of every step's input part) and dHP; works dHs
     * (and dCs) in place: on entry block t holds the gradient that reaches h_t (c_t) from
     * outside the layer, on return its total, block 0 accumulated onto what it held. */
    void (*layer_backward)(gsl_matrix *dX, rnnattn_rnn *dw, gsl_matrix *dAct, gsl_matrix *dHP,
                           gsl_matrix *dHs, gsl_matrix *dCs, const gsl_matrix *X,
                           const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                           const gsl_matrix *HP, const rnnattn_rnn *w, size_t B);

    /* Step t alone (a decoder, whose input waits for the step before): on entry block t−1
     * of Act holds the step's input part x_t·Wxᵀ + bias; on return its gates. Writes block
     * t of Hs (and Cs), block t−1 of HP. */
    void (*step_forward)(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act, gsl_matrix *HP,
                         const rnnattn_rnn *w, size_t t, size_t B);

    /* Backward of step_forward, given the total gradient of h_t (c_t) in block t of dHs
     * (dCs): writes block t−1 of dAct (the gradient of the input part) and of dHP;
     * accumulates the recurrent share into block t−1 of dHs (dCs). The weight gradients
     * wait for weights_backward. */
    void (*step_backward)(gsl_matrix *dAct, gsl_matrix *dHP, gsl_matrix *dHs, gsl_matrix *dCs,
                          const gsl_matrix *Hs, const gsl_matrix *Cs, const gsl_matrix *Act,
                          const gsl_matrix *HP, const rnnattn_rnn *w, size_t t, size_t B);

    /* The weight gradients of T steps run with step_forward, one GEMM each over all steps:
     * accumulates dw from dAct, dHP (T·B, GH), the inputs X (T·B, In) and the states each
     * step read, Hprev (T·B, H) (h_0..h_{T−1}). */
    void (*weights_backward)(rnnattn_rnn *dw, const gsl_matrix *dAct, const gsl_matrix *dHP,
                             const gsl_matrix *X, const gsl_matrix *Hprev);

    /* The analytic FLOPs of T steps of one sequence through a layer of H units with In
     * inputs, forward and backward (gru_layer_flops, lstm_layer_flops: a step run by
     * step_forward and weights_backward costs what a step of the layer does). */
    double (*layer_flops)(double In, double H, double T);
} rnnattn_cell;

/* The two entries. */
extern const rnnattn_cell rnnattn_cell_gru, rnnattn_cell_lstm;

/* The entry whose name is c->cell, or NULL when there is none of that name. */
const rnnattn_cell *rnnattn_cell_of(const config *c);

/* ---- the run-time state ---------------------------------------------------------------
 *
 * Every array of a step, cut from one block of doubles and one of ints (common/core/carve.h)
 * by state_layout in rnnattn_model.c, each with room for the reserved sizes cap. The
 * shapes below are those of a call: a call uses the front of each array, seen as a
 * contiguous matrix of its own sizes (rnnattn_make_views). The gradient d… of an array
 * has its shape.
 * The states: blocks 0..Ts of Hs are the encoder's h_0 = 0, h_1..h_Ts, and blocks
 * Ts..Ts+Tt the decoder's s_0..s_Tt: s_0 IS block Ts, so the encoder's last state and the
 * decoder's first are one block of memory (no copy in forward, and in backward the
 * gradient of s_0 lands where the encoder reads that of h_Ts). Blocks 1..Ts are the keys'
 * and values' source, Henc. The context c_t lives in the last H columns of Xd, so one
 * GEMM over all steps forms the decoder's input-weight gradient over [emb; c]. */
typedef struct rnnattn_state {
    carve_block blk; /* (nd) doubles and (ni) ints: every array below */
    model_sizes cap; /* batch size and lengths reserved (0 before the first reserve) */
    model_sizes last; /* sizes of the last forward */
    int has_forward; /* 1 while the arrays hold a whole forward of last: what
                        backward differentiates (a decode reuses the same arrays) */

    double *Xe;     /* (Ts·B, E)            embedded source */
    double *dXe;    /* (Ts·B, E) */
    double *Ae;     /* (Ts·B, GH)           encoder gates of every step */
    double *dAe;    /* (Ts·B, GH)           gradient of their input part */
    double *Pe;     /* (Ts·B, GH)           encoder h·Whᵀ + bh (GRU; NULL for LSTM) */
    double *dPe;    /* (Ts·B, GH)           (GRU; NULL for LSTM) */
    double *Hs;     /* ((Ts+1+Tt)·B, H)     states h_0..h_Ts = s_0, s_1..s_Tt */
    double *dHs;    /* ((Ts+1+Tt)·B, H) */
    double *Cs;     /* ((Ts+1+Tt)·B, H)     cell states, as Hs (LSTM; NULL for GRU) */
    double *dCs;    /* ((Ts+1+Tt)·B, H)     (LSTM; NULL for GRU) */
    double *EK;     /* (Ts·B, A)            keys k_j, as e^{2k} */
    double *dK;     /* (Ts·B, A)            gradient of the keys k */
    double *Xd;     /* (Tt·B, E+K)          decoder inputs [emb(y_{t−1}) | c_t] */
    double *dXd;    /* (Tt·B, E+K) */
    double *Ad;     /* (Tt·B, GH)           decoder gates of every step */
    double *dAd;    /* (Tt·B, GH)           gradient of their input part */
    double *Pd;     /* (Tt·B, GH)           decoder s·Whᵀ + bh (GRU; NULL for LSTM) */
    double *dPd;    /* (Tt·B, GH)           (GRU; NULL for LSTM) */
    double *EQ;     /* (Tt·B, A)            query projections q_t, as e^{2q} */
    double *dQ;     /* (Tt·B, A)            gradient of the queries q */
    double *Alpha;  /* (Tt·B, Ts)           attention weights α_t */
    double *logits; /* (Tt·B, V) */
    double *dlogits; /* (Tt·B, V)            written by forward's cross-entropy */
    addattn_work ws; /* e (Ts), da (Ts): the attention's scratch of one example */
    int *src;       /* (Ts·B) source tokens, time-major */
    int *din;       /* (Tt·B) decoder inputs, time-major */
    int *tgt;       /* (Tt·B) targets, time-major */
    int *pred;      /* (Tt·B) argmax of every step, time-major */
    /* bidirectional only (NULL otherwise), after every other array. Hs then has one more
     * block: blocks 0..Ts are →h_0..→h_Ts, blocks Ts+1..Ts+1+Tt the decoder's s_0..s_Tt. */
    double *Xr, *dXr;     /* (Ts·B, E)    the source embedded backwards: block k−1 is x_{Ts+1−k} */
    double *Ar, *dAr;     /* (Ts·B, GH)   backward encoder gates, their input part's gradient */
    double *Pr, *dPr;     /* (Ts·B, GH)   its h·Whᵀ + bh (GRU) */
    double *Hr, *dHr;     /* ((Ts+1)·B, H) its states: block k is ←h_{Ts+1−k}, block 0 = 0 */
    double *Cr, *dCr;     /* ((Ts+1)·B, H) its cell states (LSTM) */
    double *Hann, *dHann; /* (Ts·B, 2H)   annotations h_j = [→h_j ; ←h_j], block j−1 */
    int *srcr;            /* (Ts·B) the source tokens backwards, time-major */
} rnnattn_state;

/* ---- the model ------------------------------------------------------------------------ */

typedef struct rnnattn_model {
    struct model head;         /* ops, cfg, params: first, so a model * is a rnnattn_model * */
    const rnnattn_cell *cell;  /* the cell cfg.cell names, chosen once in alloc */
    rnnattn_params w;          /* parameter values */
    rnnattn_params g;          /* their gradients */
    rnnattn_state s;           /* run-time state */
} rnnattn_model;

/* ---- views of one call's sizes (rnnattn_model.c) -------------------------------------- */

/* Every matrix of a call, as views of the front of the reserved arrays (rnnattn_state).
 * Views of arrays the cell does not keep (P… for the LSTM, C… for the GRU) are empty. */
typedef struct rnnattn_views {
    gsl_matrix_view Xe;      /* (Ts·B, E)       embedded source */
    gsl_matrix_view Ae;      /* (Ts·B, GH)      encoder gates */
    gsl_matrix_view Pe;      /* (Ts·B, GH)      encoder h·Whᵀ + bh (GRU) */
    gsl_matrix_view He;      /* ((Ts+1)·B, H)   h_0 .. h_Ts */
    gsl_matrix_view Ce;      /* ((Ts+1)·B, H)   c_0 .. c_Ts (LSTM) */
    gsl_matrix_view Henc;    /* (Ts·B, K)       h_1 .. h_Ts: keys' source and values */
    gsl_matrix_view EK;      /* (Ts·B, A)       keys, as e^{2k} */
    gsl_matrix_view Xd;      /* (Tt·B, E+K)     decoder inputs [emb(y_{t−1}) | c_t] */
    gsl_matrix_view Xd_emb;  /* (Tt·B, E)       its first E columns (row stride E+K) */
    gsl_matrix_view C;       /* (Tt·B, K)       its last K columns: c_1 .. c_Tt */
    gsl_matrix_view Ad;      /* (Tt·B, GH)      decoder gates */
    gsl_matrix_view Pd;      /* (Tt·B, GH)      decoder s·Whᵀ + bh (GRU) */
    gsl_matrix_view Hd;      /* ((Tt+1)·B, H)   s_0 (= h_Ts unless bidirectional) .. s_Tt */
    gsl_matrix_view Cd;      /* ((Tt+1)·B, H)   cell states of s_0 .. s_Tt (LSTM) */
    gsl_matrix_view S_prev;  /* (Tt·B, H)       s_0 .. s_{Tt−1}: the queries' source */
    gsl_matrix_view S_out;   /* (Tt·B, H)       s_1 .. s_Tt: what the output reads */
    gsl_matrix_view EQ;      /* (Tt·B, A)       queries, as e^{2q} */
    gsl_matrix_view Alpha;   /* (Tt·B, Ts)      weights α_t */
    gsl_matrix_view logits;  /* (Tt·B, V) */
    gsl_matrix_view dXe;     /* (Ts·B, E)       the gradients: each as its activation */
    gsl_matrix_view dAe;     /* (Ts·B, GH) */
    gsl_matrix_view dPe;     /* (Ts·B, GH)      (GRU) */
    gsl_matrix_view dHe;     /* ((Ts+1)·B, H) */
    gsl_matrix_view dCe;     /* ((Ts+1)·B, H)   (LSTM) */
    gsl_matrix_view dHenc;   /* (Ts·B, K) */
    gsl_matrix_view dK;      /* (Ts·B, A)       gradient of k itself */
    gsl_matrix_view dXd;     /* (Tt·B, E+K) */
    gsl_matrix_view dXd_emb; /* (Tt·B, E)       row stride E+K */
    gsl_matrix_view dC;      /* (Tt·B, K)       row stride E+K */
    gsl_matrix_view dAd;     /* (Tt·B, GH) */
    gsl_matrix_view dPd;     /* (Tt·B, GH)      (GRU) */
    gsl_matrix_view dHd;     /* ((Tt+1)·B, H) */
    gsl_matrix_view dCd;     /* ((Tt+1)·B, H)   (LSTM) */
    gsl_matrix_view dS_out;  /* (Tt·B, H) */
    gsl_matrix_view dQ;      /* (Tt·B, A)       gradient of q itself */
    gsl_matrix_view dlogits; /* (Tt·B, V) */
    gsl_matrix_view Xr, Ar, Pr, Hr, Cr;      /* bidirectional: the backward encoder's, */
    gsl_matrix_view dXr, dAr, dPr, dHr, dCr; /* shapes as Xe, Ae, Pe, He, Ce (else empty) */
} rnnattn_views;

/* Takes the views of the front of every reserved array at one call's sizes (B, Ts, Tt):
 * a (N, cols) array of a call is always a plain contiguous matrix. */
void rnnattn_make_views(rnnattn_views *v, rnnattn_model *m, size_t B, size_t Ts, size_t Tt);

/* ---- pieces shared by forward, decode and trace (rnnattn_pass.c) ----------------------- */

/* The encoder: embeds the source (already time-major in m->s.src), runs the cell from
 * h_0 = 0 (and c_0 = 0), leaving h_1..h_Ts in Henc and the final state in block Ts where
 * the decoder starts; then the keys of every source position, once for the sequence.
 * bidirectional: the backward encoder too, the annotations [→h_j; ←h_j] in Henc, and the
 * decoder's s_0 = tanh(←h_1·W_sᵀ) in its own block. */
void rnnattn_encode(rnnattn_model *m, rnnattn_views *v, size_t B, size_t Ts);

/* a (N, GH) = X_emb (N, E) · W_embᵀ (E, GH) + bias: the decoder input's embedding part,
 * for all steps at once under teacher forcing, one step at a time when decoding. */
void rnnattn_decoder_input(gsl_matrix *a, const gsl_matrix *Xemb, const rnnattn_params *w);

/* Decoder step t (1-based) for B rows. On entry Ad block t−1 holds the embedding part
 * emb(y_{t−1})·W_embᵀ + bias of the cell's input; writes q_t, α_t, c_t (into Xd), the
 * gates and s_t (and its cell state for LSTM).
 *     c_t = attention(query s_{t−1}; keys, values h_1..h_Ts)
 *     s_t = cell([emb(y_{t−1}); c_t], s_{t−1}) */
void rnnattn_decoder_step(rnnattn_model *m, rnnattn_views *v, size_t t, size_t B);

/* logits (N, V) = S (N, H) · W_sᵀ (H, V) + C (N, H) · W_cᵀ (H, V) + b, that is
 * out.W [s; c] + b with the concatenation left implicit (s and c live in different
 * arrays). */
void rnnattn_output_forward(gsl_matrix *logits, const gsl_matrix *S, const gsl_matrix *C,
                            const rnnattn_params *w);

/* ---- the passes (rnnattn_pass.c, rnnattn_decode.c); the error contract is
 * common/core/model.h's -------------------------------------------------------------------- */

/* Teacher-forced forward of batch b (sizes within the reservation, every token in
 * [0, V)): the mean cross-entropy over the B·Tt targets, and the argmax of every position
 * into pred (B, Tt) when pred is not NULL. Keeps what backward needs. NaN (GSL_ERROR)
 * for sizes outside the reservation or a bad token, found before anything is written. */
double rnnattn_forward(model *m, const batch *b, int *pred);

/* Backward of the last forward, which must have been of a batch of b's sizes: accumulates
 * the gradient of the mean loss into the gradient arena. 0, or -1 (GSL_ERROR) when there
 * is no such forward. */
int rnnattn_backward(model *m, const batch *b);

/* Greedy decoding of Tt tokens into out (B, Tt) for each source of src (B, Ts). 0, or -1
 * (GSL_ERROR) for sizes outside the reservation or a bad token. Leaves nothing for
 * backward. */
int rnnattn_decode(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out);

/* Decodes one source (Ts tokens, Tt out) and sends its (Tt, Ts) alignment to sink. 0, or
 * -1 when the sizes or a token are wrong (GSL_ERROR) or the sink stops. */
int rnnattn_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
                  void *ctx);

/* The registered model `rnn_attention` (rnnattn_model.c). */
extern const model_ops rnnattn_ops;

#endif
