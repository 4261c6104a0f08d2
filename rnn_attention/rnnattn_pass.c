/* rnnattn_pass.c — the teacher-forced passes of the model `rnn_attention`: embedding →
 * encoder (every state kept) → decoder that reads, at each step, an attention-weighted sum
 * of the encoder states → linear layer over [s_t; c_t] (Bahdanau, Cho & Bengio 2015;
 * equations in rnnattn.h, gru.h, addattn.h): the pieces decoding shares, forward and its
 * backward (greedy decoding and the trace are rnnattn_decode.c).
 *
 * Design. A call first takes views of the front of every reserved array at its own sizes
 * (rnnattn_make_views: a (N, cols) array of a call is always a plain contiguous matrix),
 * then works on those views only. The encoder runs its whole layer at once; the decoder
 * runs step by step, because the query of step t is the state step t−1 wrote. The cell is
 * reached only through the table m->cell (rnnattn_cell.c): the same lines serve the GRU
 * and the LSTM. Backward follows forward's lines in reverse, quoting each one, and
 * leaves what sums over steps (weight gradients, the encoder states' share of the
 * attention) to one GEMM each after the step loop.
 *
 * Invariant: the sizes of the last forward are in m->s.last, has_forward = 0 when
 * the arrays hold no forward (none yet, or a decode since); backward differentiates only
 * a forward of the same sizes. Every entry point checks its sizes against the reservation
 * and its tokens against the vocabulary before it writes anything (model_open_call,
 * model_open_backward: common/core/model.h).
 */
#include "rnnattn.h"

#include <gsl/gsl_blas.h>
#include <math.h>
#include <string.h>

#include "../common/core/fastmath.h"
#include "../common/core/tensor.h"

/* ---- pieces shared by forward, decode and trace ---------------------------------------- */

/* bidirectional (RNNsearch, Bahdanau et al. 2015, A.2.1-2), after the forward encoder:
 *   ←h_j = cell(x_j, ←h_{j+1}), ←h_{Ts+1} = 0     the backward encoder reads x_Ts .. x_1
 *   h_j  = [→h_j ; ←h_j]                          the annotations (Ts·B, 2H)
 *   s_0  = tanh(←h_1 · W_sᵀ)                      the decoder's initial state (c_0 = 0)
 * The backward encoder is the forward one's layer run on the source backwards (block k−1
 * of Xr is x_{Ts+1−k}), so block k of Hr is ←h_{Ts+1−k}: ←h_1 is its last block. */
static void encode_backward_direction(rnnattn_model *m, rnnattn_views *v, size_t B, size_t Ts)
{
    rnnattn_state *s = &m->s;
    const size_t H = m->head.cfg.hidden;
    for (size_t k = 0; k < Ts; k++) /* block k of srcr = block Ts−1−k of src */
        memcpy(s->srcr + k * B, s->src + (Ts - 1 - k) * B, B * sizeof(int));
    op_embed(&v->Xr.matrix, m->w.enc_embed, s->srcr, Ts * B);
    memset(s->Hr, 0, B * H * sizeof(double)); /* ←h_{Ts+1} = 0 */
    if (m->cell->has_cell_state)
        memset(s->Cr, 0, B * H * sizeof(double));
    m->cell->layer_forward(&v->Hr.matrix, &v->Cr.matrix, &v->Ar.matrix, &v->Pr.matrix,
                           &v->Xr.matrix, &m->w.bwd, B);

    /* h_j = [→h_j ; ←h_j]: row (j−1)·B + b of Hann from row j·B + b of He and row
     * (Ts+1−j)·B + b of Hr */
    for (size_t j = 1; j <= Ts; j++)
        for (size_t b = 0; b < B; b++) {
            double *row = s->Hann + ((j - 1) * B + b) * 2 * H;
            memcpy(row, s->Hs + (j * B + b) * H, H * sizeof(double));
            memcpy(row + H, s->Hr + ((Ts + 1 - j) * B + b) * H, H * sizeof(double));
        }

    /* s_0 (B,H) = tanh(←h_1 (B,H) · W_sᵀ (H,H)) */
    gsl_matrix_view back1 = model_block(&v->Hr.matrix, Ts, B);
    gsl_matrix_view s0 = model_block(&v->Hd.matrix, 0, B);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &back1.matrix, m->w.init_W, 0.0, &s0.matrix);
    for (size_t i = 0; i < B * H; i++)
        s0.matrix.data[i] = fm_tanh(s0.matrix.data[i]);
    if (m->cell->has_cell_state) {
        gsl_matrix_view c0 = model_block(&v->Cd.matrix, 0, B);
        gsl_matrix_set_zero(&c0.matrix); /* the decoder's cell starts empty */
    }
}

/* Backward of encode_backward_direction, once the decoder and the attention are done:
 * dHann holds the gradient of every annotation, block 0 of dHd that of s_0. Adds the
 * halves of dHann to the two encoders' state gradients, differentiates s_0's layer, runs
 * the backward encoder's backward and its embedding rows. dHr, dCr, dXr start at 0. */
static void encode_backward_direction_backward(rnnattn_model *m, rnnattn_views *v, size_t B,
                                               size_t Ts)
{
    rnnattn_state *s = &m->s;
    const size_t H = m->head.cfg.hidden;
    /* forward: s_0 = tanh(u), u = ←h_1 · W_sᵀ
     *   du (B,H) = ds_0 ⊙ (1 − s_0²)            written over ds_0, read by nothing else
     *   dW_s (H,H) += duᵀ (H,B) · ←h_1 (B,H)
     *   d←h_1 (B,H) += du (B,H) · W_s (H,H)     into the backward encoder's last block */
    gsl_matrix_view s0 = model_block(&v->Hd.matrix, 0, B);
    gsl_matrix_view du = model_block(&v->dHd.matrix, 0, B);
    gsl_matrix_view back1 = model_block(&v->Hr.matrix, Ts, B);
    gsl_matrix_view dback1 = model_block(&v->dHr.matrix, Ts, B);
    for (size_t i = 0; i < B * H; i++)
        du.matrix.data[i] *= 1.0 - s0.matrix.data[i] * s0.matrix.data[i];
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &du.matrix, &back1.matrix, 1.0, m->g.init_W);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &du.matrix, m->w.init_W, 1.0,
                   &dback1.matrix);

    /* forward: h_j = [→h_j ; ←h_j]   ⇒   d→h_j += dh_j[0, H),  d←h_j += dh_j[H, 2H) */
    for (size_t j = 1; j <= Ts; j++)
        for (size_t b = 0; b < B; b++) {
            const double *row = s->dHann + ((j - 1) * B + b) * 2 * H;
            double *fwd = s->dHs + (j * B + b) * H, *bwd = s->dHr + ((Ts + 1 - j) * B + b) * H;
            for (size_t i = 0; i < H; i++) {
                fwd[i] += row[i];
                bwd[i] += row[H + i];
            }
        }

    /* the backward encoder through time, then its embedding rows (the table is shared) */
    m->cell->layer_backward(&v->dXr.matrix, &m->g.bwd, &v->dAr.matrix, &v->dPr.matrix,
                            &v->dHr.matrix, &v->dCr.matrix, &v->Xr.matrix, &v->Hr.matrix,
                            &v->Cr.matrix, &v->Ar.matrix, &v->Pr.matrix, &m->w.bwd, B);
    op_embed_backward(m->g.enc_embed, &v->dXr.matrix, s->srcr, Ts * B);
}

/* The encoder (rnnattn.h). */
void rnnattn_encode(rnnattn_model *m, rnnattn_views *v, size_t B, size_t Ts)
{
    const size_t H = m->head.cfg.hidden;
    op_embed(&v->Xe.matrix, m->w.enc_embed, m->s.src, Ts * B);
    memset(m->s.Hs, 0, B * H * sizeof(double)); /* h_0 = 0 */
    if (m->cell->has_cell_state)
        memset(m->s.Cs, 0, B * H * sizeof(double)); /* c_0 = 0 */
    m->cell->layer_forward(&v->He.matrix, &v->Ce.matrix, &v->Ae.matrix, &v->Pe.matrix,
                           &v->Xe.matrix, &m->w.enc, B);
    if (m->head.cfg.bidirectional) /* ←h, the annotations [→h_j; ←h_j], s_0 */
        encode_backward_direction(m, v, B, Ts);
    /* k (Ts·B,A) = Henc (Ts·B,H) · W_kᵀ + b, kept as e^{2k}: the keys do not depend on
     * the decoder */
    addattn_keys_forward(&v->EK.matrix, &v->Henc.matrix, &m->w.attn);
}

/* Decoder step t (rnnattn.h). */
void rnnattn_decoder_step(rnnattn_model *m, rnnattn_views *v, size_t t, size_t B)
{
    const rnnattn_params *w = &m->w;
    gsl_matrix_view s_prev = model_block(&v->Hd.matrix, t - 1, B);  /* (B,H) */
    gsl_matrix_view eq = model_block(&v->EQ.matrix, t - 1, B);       /* (B,A) */
    gsl_matrix_view alpha = model_block(&v->Alpha.matrix, t - 1, B); /* (B,Ts) */
    gsl_matrix_view c = model_block(&v->C.matrix, t - 1, B);         /* (B,H), row stride E+H */
    gsl_matrix_view a = model_block(&v->Ad.matrix, t - 1, B);        /* (B,GH) */

    addattn_step_forward(&c.matrix, &alpha.matrix, &eq.matrix, &s_prev.matrix, &v->EK.matrix,
                         &v->Henc.matrix, &w->attn);
    /* a (B,GH) += c_t (B,H) · W_ctxᵀ (H,GH): the context's part of the input projection,
     * the one part that had to wait for this step */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &c.matrix, &w->dec_Wx_ctx.matrix, 1.0,
                   &a.matrix);
    /* s_t (and c_t of an LSTM) in block t of Hd (Cd) */
    m->cell->step_forward(&v->Hd.matrix, &v->Cd.matrix, &v->Ad.matrix, &v->Pd.matrix, &w->dec,
                          t, B);
}

/* a (N,GH) = X_emb (N,E) · W_embᵀ (E,GH) + bias (rnnattn.h) */
void rnnattn_decoder_input(gsl_matrix *a, const gsl_matrix *Xemb, const rnnattn_params *w)
{
    op_linear_forward(a, Xemb, &w->dec_Wx_emb.matrix, w->dec.bx);
}

/* logits (N,V) = out.W [s; c] + b (rnnattn.h) */
void rnnattn_output_forward(gsl_matrix *logits, const gsl_matrix *S, const gsl_matrix *C,
                            const rnnattn_params *w)
{
    op_linear_forward(logits, S, &w->out_W_s.matrix, w->out_b);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, C, &w->out_W_c.matrix, 1.0, logits);
}

/* ---- forward and backward ----------------------------------------------------------- */

/* bidirectional: zeroes, before backward, what accumulates beyond the one-way arrays: the
 * gradient of the decoder's own s_0 block, every cell state's (Hs has one more block),
 * the annotations', and the backward encoder's states and inputs. */
static void bidirectional_zero(rnnattn_model *m, size_t B, size_t Ts, size_t Tt)
{
    rnnattn_state *s = &m->s;
    const size_t H = m->head.cfg.hidden, E = m->head.cfg.embed;
    memset(s->dHs + (Ts + 1) * B * H, 0, B * H * sizeof(double));
    if (m->cell->has_cell_state) {
        memset(s->dCs, 0, (Ts + 2 + Tt) * B * H * sizeof(double));
        memset(s->dCr, 0, (Ts + 1) * B * H * sizeof(double));
    }
    memset(s->dHann, 0, Ts * B * 2 * H * sizeof(double));
    memset(s->dHr, 0, (Ts + 1) * B * H * sizeof(double));
    memset(s->dXr, 0, Ts * B * E * sizeof(double));
}

/* The encoder, the decoder loop, the output layer for all steps at once, the mean
 * cross-entropy. Sizes and tokens are checked before anything is written, so a refused
 * batch leaves the last forward as it was; the sizes are recorded so backward can refuse
 * a batch it did not see. */
double rnnattn_forward(model *mm, const batch *b, int *pred)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    rnnattn_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, V = config_vocab(&mm->cfg);
    /* from here until this forward is complete there is nothing to differentiate: a
     * refused batch leaves no earlier forward for backward to take as its own */
    if (model_open_call("rnn_attention forward", &s->has_forward, s->cap,
                        (model_sizes){B, Ts, Tt}, V, b->src, b->dec_in, b->tgt) != 0)
        return NAN;
    op_tokens_time_major(s->src, b->src, B, Ts, V);
    op_tokens_time_major(s->din, b->dec_in, B, Tt, V);
    op_tokens_time_major(s->tgt, b->tgt, B, Tt, V);
    rnnattn_views v;
    rnnattn_make_views(&v, m, B, Ts, Tt);

    rnnattn_encode(m, &v, B, Ts);

    /* decoder, teacher-forced: its inputs (BOS, y_1 .. y_{Tt−1}) are known up front, so
     * their part of the input projection is one GEMM over all steps:
     * Ad (Tt·B,GH) = Xd_emb (Tt·B,E) · W_embᵀ (E,GH) + bias */
    op_embed(&v.Xd_emb.matrix, m->w.dec_embed, s->din, Tt * B);
    rnnattn_decoder_input(&v.Ad.matrix, &v.Xd_emb.matrix, &m->w);
    for (size_t t = 1; t <= Tt; t++)
        rnnattn_decoder_step(m, &v, t, B);

    /* logits (Tt·B,V) = out.W [s_t; c_t] + out.b for every step at once */
    rnnattn_output_forward(&v.logits.matrix, &v.S_out.matrix, &v.C.matrix, &m->w);

    /* mean cross-entropy over the B·Tt targets, its gradient kept for backward */
    return model_close_forward(&v.logits.matrix, s->tgt, &v.dlogits.matrix, s->pred, pred,
                               (model_sizes){B, Ts, Tt}, &s->last, &s->has_forward);
}

/* Backward of the last forward, in the reverse order of its lines: the output layer for
 * all steps, the decoder loop from the last step to the first (cell, context, attention),
 * what sums over steps (one GEMM each), then the encoder. Parameter gradients accumulate;
 * activation gradients are written or zeroed first. */
int rnnattn_backward(model *mm, const batch *b)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    rnnattn_state *s = &m->s;
    const rnnattn_params *w = &m->w;
    rnnattn_params *g = &m->g;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, H = mm->cfg.hidden, E = mm->cfg.embed;
    if (model_open_backward("rnn_attention backward", s->has_forward,
                            s->last, config_vocab(&mm->cfg), b) != 0)
        return -1;
    rnnattn_views v;
    rnnattn_make_views(&v, m, B, Ts, Tt);

    /* forward: loss = mean CE(logits, tgt)   ⇒   dlogits = (softmax − onehot)/(Tt·B),
     * formed by forward */

    /* forward: logits = S_out · W_sᵀ + C · W_cᵀ + b
     *   dS_out (Tt·B,H) = dlogits (Tt·B,V) · W_s (V,H)   written: the first gradient of
     *   dC     (Tt·B,H) = dlogits (Tt·B,V) · W_c (V,H)   s_t and c_t from outside
     *   dW_s (V,H) += dlogitsᵀ · S_out,  dW_c (V,H) += dlogitsᵀ · C,  db += Σ_rows dlogits */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &w->out_W_s.matrix,
                   0.0, &v.dS_out.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &w->out_W_c.matrix,
                   0.0, &v.dC.matrix);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &v.S_out.matrix, 1.0,
                   &g->out_W_s.matrix);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &v.C.matrix, 1.0,
                   &g->out_W_c.matrix);
    op_bias_backward(g->out_b, &v.dlogits.matrix);

    /* What accumulates starts at zero: the encoder's state gradients (blocks 0..Ts, the
     * bridge s_0 = h_Ts included), every cell-state gradient, the keys', the inputs'. */
    memset(s->dHs, 0, (Ts + 1) * B * H * sizeof(double));
    if (m->cell->has_cell_state)
        memset(s->dCs, 0, (Ts + 1 + Tt) * B * H * sizeof(double));
    memset(s->dK, 0, Ts * B * mm->cfg.attn * sizeof(double));
    memset(s->dXe, 0, Ts * B * E * sizeof(double));
    if (mm->cfg.bidirectional) /* s_0's own block, every cell state, the annotations and
                                  the backward encoder's arrays */
        bidirectional_zero(m, B, Ts, Tt);

    /* The decoder, last step first. When step t is reached, block t of dHd holds the whole
     * gradient of s_t (from the output, and from step t+1's cell and query) and block t−1
     * of dC the output's share of dc_t. */
    for (size_t t = Tt; t >= 1; t--) {
        gsl_matrix_view ds_prev = model_block(&v.dHd.matrix, t - 1, B); /* (B,H) */
        gsl_matrix_view da = model_block(&v.dAd.matrix, t - 1, B);      /* (B,GH) */
        gsl_matrix_view dc = model_block(&v.dC.matrix, t - 1, B);       /* (B,H) */
        gsl_matrix_view dq = model_block(&v.dQ.matrix, t - 1, B);       /* (B,A) */
        gsl_matrix_view eq = model_block(&v.EQ.matrix, t - 1, B);       /* (B,A) */
        gsl_matrix_view alpha = model_block(&v.Alpha.matrix, t - 1, B); /* (B,Ts) */

        /* forward: s_t = cell(a_t, s_{t−1})   ⇒   da_t, and ds_{t−1} += its direct share */
        m->cell->step_backward(&v.dAd.matrix, &v.dPd.matrix, &v.dHd.matrix, &v.dCd.matrix,
                               &v.Hd.matrix, &v.Cd.matrix, &v.Ad.matrix, &v.Pd.matrix, &w->dec,
                               t, B);

        /* forward: a_t += c_t · W_ctxᵀ   ⇒   dc_t (B,H) += da_t (B,GH) · W_ctx (GH,H) */
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &da.matrix, &w->dec_Wx_ctx.matrix, 1.0,
                       &dc.matrix);

        /* forward: c_t = attention(s_{t−1}, K, Henc)   ⇒   ds_{t−1} += its query share,
         * dK, dv, and dq_t */
        addattn_step_backward(&ds_prev.matrix, &v.dK.matrix, &g->attn, &dq.matrix, &s->ws,
                              &dc.matrix, &alpha.matrix, &eq.matrix, &v.EK.matrix,
                              &v.Henc.matrix, &w->attn);
    }

    /* Decoder weights, each one GEMM over all Tt steps:
     *   forward: a = [emb; c] · Wxᵀ + bias, then the cell's recurrent part from s_prev
     *   ⇒ dWx (GH,E+H) += dAdᵀ (GH,Tt·B) · Xd (Tt·B,E+H), dWh (GH,H) += dPᵀ · S_prev and
     *   the biases, where dP is dAd for the LSTM and dPd for the GRU (the cell's entry) */
    m->cell->weights_backward(&g->dec, &v.dAd.matrix, &v.dPd.matrix, &v.Xd.matrix,
                              &v.S_prev.matrix);
    /* forward: a = emb · W_embᵀ + ...   ⇒   dX_emb (Tt·B,E) = dAd (Tt·B,GH) · W_emb (GH,E),
     * then the embedding rows: forward X row i = table row ids[i] ⇒ dtable row ids[i] += */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dAd.matrix, &w->dec_Wx_emb.matrix, 0.0,
                   &v.dXd_emb.matrix);
    op_embed_backward(g->dec_embed, &v.dXd_emb.matrix, s->din, Tt * B);

    /* Attention, what sums over steps: dW_q, and the encoder states' two shares (as values,
     * Σ_t α_tj dc_t; as keys, dK·W_k) added to the gradient of h_1..h_Ts */
    addattn_seq_backward(&v.dHenc.matrix, &g->attn, &v.dQ.matrix, &v.dC.matrix, &v.dK.matrix,
                         &v.S_prev.matrix, &v.Alpha.matrix, &v.Henc.matrix, &w->attn, B);

    if (mm->cfg.bidirectional) /* dHann to both encoders, s_0's layer, the backward one */
        encode_backward_direction_backward(m, &v, B, Ts);
    /* The encoder: block t of dHe now holds all that reaches h_t from outside the layer,
     * the attention's shares and, at t = Ts, the decoder's gradient of s_0. */
    m->cell->layer_backward(&v.dXe.matrix, &g->enc, &v.dAe.matrix, &v.dPe.matrix,
                            &v.dHe.matrix, &v.dCe.matrix, &v.Xe.matrix, &v.He.matrix,
                            &v.Ce.matrix, &v.Ae.matrix, &v.Pe.matrix, &w->enc, B);
    op_embed_backward(g->enc_embed, &v.dXe.matrix, s->src, Ts * B);
    return 0;
}
