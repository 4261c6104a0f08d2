/* lstm_pass.c — the teacher-forced passes of the model `lstm`: the encoder and the output
 * layer that decoding shares, forward and backward (see lstm.h and lstm_model.c for the
 * layout of the state).
 *
 * Data flow of a teacher-forced forward:
 *   P_enc = enc.embed·Wxᵀ + b;  h_t, c_t = LSTM(P_enc[x_t], h_{t−1}, c_{t−1}), h_0 = c_0 = 0
 *   P_dec = dec.embed·Wxᵀ + b;  s_t, c_t = LSTM(P_dec[y_{t−1}], s_{t−1}, ...), s_0 = h_Ts
 *   (feed_context: LSTM(P_dec[y_{t−1}] + Kc, ...), Kc = h_Ts·Wcᵀ formed once)
 *   logits = [s_1 .. s_Tt]·out.Wᵀ + out.b;  loss = mean cross-entropy over B·Tt targets
 * Backward reads the chain from its end: the output layer, the decoder's recurrence, which
 * leaves the gradient of s_0 where the encoder reads that of h_Ts, the encoder's, then the
 * two tables.
 *
 * Errors (common/core/model.h). Forward checks its sizes against the reservation and every
 * token it will read (source, decoder input, target) before it writes anything; a refusal
 * goes through GSL_ERROR and returns NaN. Only a forward that completed leaves something
 * for backward (has_forward), which refuses (-1) any other batch.
 */
#include "lstm.h"

#include <gsl/gsl_blas.h>
#include <math.h>
#include <string.h>

#include "../common/core/tensor.h"

/* ---- pieces shared by forward, decode and trace ------------------------------------ */

/* The encoder (lstm.h). */
void lstm_encode(lstm_model *m, lstm_views *v, const int *src, size_t B, size_t Ts, int keep)
{
    const size_t H = m->head.cfg.hidden;
    (void)op_tokens_time_major(m->s.ids, src, B, Ts, config_vocab(&m->head.cfg));
    /* the input part of row i of every step is Pe row ids[i], Pe = enc.embed·Wxᵀ + b */
    lstm_table_forward(&v->Pe.matrix, m->w.enc_embed, &m->w.enc);
    memset(m->s.Hs, 0, B * H * sizeof(double)); /* h_0 = 0 */
    memset(m->s.Cs, 0, B * H * sizeof(double)); /* c_0 = 0 */
    gsl_matrix_view act = keep ? v->Ae : model_block(&v->Ae.matrix, 0, B);
    lstm_recur_forward_table(&v->He.matrix, &v->Ce.matrix, &act.matrix, &v->Pe.matrix,
                             m->s.ids, m->w.enc.Wh, B);
}

/* feed_context (lstm.h): the summary c = h_Ts, the decoder's initial state, is read again
 * at every step through dec.Wc. Its part of the pre-activations does not change from step
 * to step, so it is one (B, 4H) product per sequence. */
void lstm_context_forward(lstm_model *m, lstm_views *v, size_t B)
{
    gsl_matrix_view c = model_block(&v->Hd.matrix, 0, B); /* (B,H) h_Ts, the bridge block */
    /* Kc (B,4H) = c (B,H) · Wcᵀ (H,4H) */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &c.matrix, m->w.dec_Wc, 0.0, &v->Kc.matrix);
}

void lstm_context_input(gsl_matrix *act, const gsl_matrix *P, const int *ids,
                        const gsl_matrix *Kc)
{
    const size_t B = act->size1, G = act->size2;
    /* act row r (4H) = P row ids[r] + Kc row r: the token's part, then the summary's */
    for (size_t r = 0; r < B; r++) {
        const double *p = gsl_matrix_const_ptr(P, (size_t)ids[r], 0);
        const double *k = gsl_matrix_const_ptr(Kc, r, 0);
        double *a = gsl_matrix_ptr(act, r, 0);
        for (size_t j = 0; j < G; j++)
            a[j] = p[j] + k[j];
    }
}

/* feed_context, teacher forced: every step's input part P_dec[y_{t−1}] + Kc is known
 * once the encoder has run, so it is laid into Ad for all steps, and the recurrence
 * (lstm_recur_forward) adds s_{t−1}·Whᵀ step by step. */
static void context_decoder_forward(lstm_model *m, lstm_views *v, const int *dec_ids,
                                    size_t B, size_t Tt)
{
    lstm_context_forward(m, v, B);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view a = model_block(&v->Ad.matrix, t - 1, B); /* (B,4H) */
        lstm_context_input(&a.matrix, &v->Pd.matrix, dec_ids + (t - 1) * B, &v->Kc.matrix);
    }
    lstm_recur_forward(&v->Hd.matrix, &v->Cd.matrix, &v->Ad.matrix, m->w.dec.Wh, B);
}

/* Backward of the summary's part of every decoder step, after the decoder's recurrence
 * (dAd complete, the bridge block of dHs holding the decoder's dh_0):
 *   forward: a_t += Kc (every step), Kc = c · Wcᵀ, c = h_Ts
 *   dKc (B,4H)  = Σ_t da_t                 the same Kc was added at every step
 *   dWc (4H,H) += dKcᵀ (4H,B) · c (B,H)
 *   dc  (B,H)  += dKc (B,4H) · Wc (4H,H)    into the bridge block: the encoder's dh_Ts */
static void context_backward(lstm_model *m, lstm_views *v, size_t B, size_t Tt)
{
    gsl_matrix_view c = model_block(&v->Hd.matrix, 0, B);   /* (B,H) */
    gsl_matrix_view dc = model_block(&v->dHd.matrix, 0, B); /* (B,H) */
    gsl_matrix_set_zero(&v->dKc.matrix);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view da = model_block(&v->dAd.matrix, t - 1, B); /* (B,4H) */
        gsl_matrix_add(&v->dKc.matrix, &da.matrix);
    }
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v->dKc.matrix, &c.matrix, 1.0,
                   m->g.dec_Wc);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v->dKc.matrix, m->w.dec_Wc, 1.0,
                   &dc.matrix);
}

/* logits (N,V+1) = Hout (N,H) · out.Wᵀ (H,V+1), then + out.b (why: lstm_input_forward) */
void lstm_output_forward(gsl_matrix *logits, const gsl_matrix *Hout, const lstm_params *w)
{
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, Hout, w->out_W, 0.0, logits);
    op_add_bias(logits, w->out_b);
}

/* ---- forward and backward ----------------------------------------------------------- */

/* Refuses (GSL error, NaN), before writing anything, a batch that does not fit the
 * reservation or holds a token outside the vocabulary: then backward has nothing. */
double lstm_forward(model *mm, const batch *b, int *pred)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, V = config_vocab(&mm->cfg);
    /* until this forward is complete there is nothing to differentiate */
    if (model_open_call("lstm forward", &s->has_forward, s->cap, (model_sizes){B, Ts, Tt}, V,
                        b->src, b->dec_in, b->tgt) != 0)
        return NAN;
    lstm_views v;
    lstm_make_views(&v, m, B, Ts, Tt);

    /* the decoder's tokens to time-major (checked above), then the encoder */
    int *dec_ids = s->ids + Ts * B;
    (void)op_tokens_time_major(dec_ids, b->dec_in, B, Tt, V);
    (void)op_tokens_time_major(s->tgt, b->tgt, B, Tt, V);
    lstm_encode(m, &v, b->src, B, Ts, 1);

    /* decoder, teacher-forced: it reads (BOS, y_1 .. y_{Tt−1}), all known up front, each
     * step's input part a row of its own table */
    lstm_table_forward(&v.Pd.matrix, m->w.dec_embed, &m->w.dec);
    if (mm->cfg.feed_context) /* the summary is an input of every step, too */
        context_decoder_forward(m, &v, dec_ids, B, Tt);
    else
        lstm_recur_forward_table(&v.Hd.matrix, &v.Cd.matrix, &v.Ad.matrix, &v.Pd.matrix,
                                 dec_ids, m->w.dec.Wh, B);

    /* logits (Tt·B, V+1) = [h_1 .. h_Tt] (Tt·B, H) · out.Wᵀ + out.b, all steps at once */
    lstm_output_forward(&v.logits.matrix, &v.Hout.matrix, &m->w);

    /* mean cross-entropy over the B·Tt targets, its gradient kept for backward */
    return model_close_forward(&v.logits.matrix, s->tgt, &v.dlogits.matrix, s->pred, pred,
                               (model_sizes){B, Ts, Tt}, &s->last, &s->has_forward);
}

/* Refuses (GSL error, -1), writing no gradient, unless the last call was a forward that
 * completed on a batch of these sizes. */
int lstm_backward(model *mm, const batch *b)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, H = mm->cfg.hidden;
    if (model_open_backward("lstm backward", s->has_forward, s->last, config_vocab(&mm->cfg), b) != 0)
        return -1;
    lstm_views v;
    lstm_make_views(&v, m, B, Ts, Tt);

    /* forward: logits = Hout · out.Wᵀ + out.b
     *   dHout  (Tt·B,H) = dlogits (Tt·B,V+1) · out.W (V+1,H)
     *   dout.W (V+1,H) += dlogitsᵀ (V+1,Tt·B) · Hout (Tt·B,H)
     *   dout.b (1,V+1) += Σ_rows dlogits
     * dHout is written, not accumulated: it is the only gradient that reaches the decoder
     * states from outside the decoder, and the layer's backward starts from it. */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, m->w.out_W, 0.0,
                   &v.dHout.matrix);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &v.Hout.matrix, 1.0,
                   m->g.out_W);
    op_bias_backward(m->g.out_b, &v.dlogits.matrix);

    /* Gradients reaching the states from outside the layers: none for the encoder's
     * states (blocks 0..Ts of dHs, the bridge included — the decoder will add its part),
     * none for any cell state (the loss reads only h). */
    memset(s->dHs, 0, (Ts + 1) * B * H * sizeof(double));
    memset(s->dCs, 0, (Ts + Tt + 1) * B * H * sizeof(double));

    /* Decoder first: it leaves in the bridge block the gradient of its initial state,
     * which is the encoder's upstream gradient of h_Ts and c_Ts. */
    lstm_recur_backward(m->g.dec.Wh, &v.dAd.matrix, &v.dHd.matrix, &v.dCd.matrix,
                        &v.Hd.matrix, &v.Cd.matrix, &v.Ad.matrix, m->w.dec.Wh, B);
    if (mm->cfg.feed_context) /* the summary's other path back to h_Ts */
        context_backward(m, &v, B, Tt);
    lstm_recur_backward(m->g.enc.Wh, &v.dAe.matrix, &v.dHe.matrix, &v.dCe.matrix,
                        &v.He.matrix, &v.Ce.matrix, &v.Ae.matrix, m->w.enc.Wh, B);

    /* forward: A row i = P row ids[i], P = embed·Wxᵀ + b   ⇒   dP = the rows of dA
     * added up by token, then dWx, db and dembed from dP (V rows, not T·B) */
    lstm_table_backward(m->g.dec_embed, &m->g.dec, &v.dPd.matrix, &v.dAd.matrix,
                        s->ids + Ts * B, m->w.dec_embed, &m->w.dec);
    lstm_table_backward(m->g.enc_embed, &m->g.enc, &v.dPe.matrix, &v.dAe.matrix, s->ids,
                        m->w.enc_embed, &m->w.enc);
    return 0;
}
