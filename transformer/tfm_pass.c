/* tfm_pass.c — the teacher-forced passes of the model `transformer`: the encoder and
 * decoder stacks, the loss, forward and backward (see tfm.h).
 *
 * Data flow of a teacher-forced forward (Vaswani et al. 2017, Figure 1):
 *   xs = s·E_src[x] + PE                  (B·Ts, D)   s = emb_scale, PE = positions
 *   h_l = EncoderLayer_l(h_{l−1})         (B·Ts, D)   l = 1..L, h_0 = xs
 *   mem = LN_enc(h_L)                     (B·Ts, D)   the memory the decoder reads
 *   xt = s·E_tgt[y_in] + PE               (B·Tt, D)
 *   u_l = DecoderLayer_l(u_{l−1}, mem)    (B·Tt, D)   causal self-attention, cross-attention
 *   z = LN_dec(u_L);  logits = z·W_outᵀ + b_out   (B·Tt, V)
 *   loss = mean cross-entropy over all B·Tt positions
 * Backward reads the chain from its end, with two stream gradients that each layer reads
 * from and adds into in turn.
 *
 * Invariant (the error contract of common/core/model.h). Every token is checked to lie in
 * [0, V) and the batch to fit the reservation before anything reads it: a bad batch is
 * reported through GSL_ERROR and gives NaN (forward) or -1 (backward), having written no
 * activation the backward would trust (has_forward = 0) and no gradient.
 */
#include "tfm.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>

/* ---- the two stacks ------------------------------------------------------------------ */

void tfm_encode(tfm_model *m, const int *src)
{
    tfm_state *s = &m->s;
    const size_t B = s->B;
    tfm_embed_forward(&s->xs.matrix, src, m->w.enc_emb, m, s->Ts, 0);
    const gsl_matrix *h = &s->xs.matrix;
    for (size_t l = 0; l < m->L; l++) {
        tfm_encoder_layer_forward(&s->enc[l], h, &m->w.enc[l], B, m->NH, m->post_ln);
        h = &s->enc[l].s2.y.matrix;
    }
    /* the final norm (nn.Transformer's encoder norm): in pre-LN order the stream itself is
     * never normalised, so the memory would otherwise grow with depth */
    tfm_layernorm_forward(&s->mem.matrix, s->mem_mean, s->mem_rstd, h, &m->w.enc_norm);
}

void tfm_decode_teacher(tfm_model *m, const int *dec_in)
{
    tfm_state *s = &m->s;
    const size_t B = s->B;
    /* −∞ above the diagonal: position i attends to 0..i only */
    const gsl_matrix *mask = s->no_mask ? NULL : &s->mask.matrix;
    tfm_embed_forward(&s->xt.matrix, dec_in, m->w.dec_emb, m, s->Tt, 0);
    const gsl_matrix *u = &s->xt.matrix;
    for (size_t l = 0; l < m->L; l++) {
        tfm_decoder_layer_forward(&s->dec[l], u, &s->mem.matrix, mask, &m->w.dec[l], B, m->NH,
                                  m->post_ln);
        u = &s->dec[l].s3.y.matrix;
    }
    tfm_layernorm_forward(&s->z.matrix, s->z_mean, s->z_rstd, u, &m->w.dec_norm);
    /* logits (B·Tt,V) = z (B·Tt,D) · W_outᵀ (D,V) + b_out */
    op_linear_forward(&s->logits.matrix, &s->z.matrix, m->w.out_w, m->w.out_b);
}

/* ---- forward and backward ------------------------------------------------------------ */

/* Teacher-forced forward of a batch: the loss, the predictions, and (kept in the state)
 * every activation the backward reads. The batch is checked first, as every model's is
 * (model_open_call: sizes, then tokens), and only then are the views carved at its sizes
 * (tfm_state_fit). A token outside [0, V) would index past an embedding table (source,
 * decoder input) or past a row of logits (target, in op_cross_entropy). */
double tfm_forward(model *mm, const batch *b, int *pred)
{
    tfm_model *m = (tfm_model *)mm;
    if (model_open_call("transformer forward", &m->s.has_forward, m->s.cap,
                        (model_sizes){b->B, b->Ts, b->Tt}, m->V, b->src, b->dec_in,
                        b->tgt) != 0)
        return NAN;
    if (tfm_state_fit(m, b->B, b->Ts, b->Tt, 0) != 0)
        GSL_ERROR_VAL("transformer forward: sizes outside the reservation", GSL_EBADLEN, NAN);
    tfm_encode(m, b->src);
    tfm_decode_teacher(m, b->dec_in);
    /* mean over all B·Tt positions; dlogits = (softmax − onehot)/(B·Tt), kept for backward */
    const double loss = op_cross_entropy(&m->s.logits.matrix, b->tgt, &m->s.dlogits.matrix,
                                         pred);
    m->s.has_forward = 1;
    return loss;
}

/* The forward's chain read backwards: output layer, decoder from the top, the decoder's
 * embeddings, then the encoder from the top, fed by the memory's gradient that every
 * cross-attention contributed to. Parameter gradients accumulate (+=). */
int tfm_backward(model *mm, const batch *b)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    /* the sizes of the views are those of the last forward (tfm_state_fit); the tokens
     * pick the rows of the embeddings' gradients, checked as forward did */
    if (model_open_backward("transformer backward", s->has_forward,
                            (model_sizes){s->B, s->Ts, s->Tt}, m->V, b) != 0)
        return -1;
    const size_t B = s->B, D = m->D, Nt = B * s->Tt, Ns = B * s->Ts;
    /* two stream gradients: a layer reads one (∂L/∂output) and adds into the other */
    gsl_matrix_view dt[2] = {gsl_matrix_view_array(s->dstream[0], Nt, D),
                             gsl_matrix_view_array(s->dstream[1], Nt, D)};
    gsl_matrix_view ds[2] = {gsl_matrix_view_array(s->dstream[0], Ns, D),
                             gsl_matrix_view_array(s->dstream[1], Ns, D)};

    /* forward: logits = z · W_outᵀ + b_out
     *   dW_out (V,D) += dlogitsᵀ (V,Nt) · z (Nt,D);  db_out += Σ_rows dlogits
     *   dz (Nt,D) = dlogits (Nt,V) · W_out (V,D) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &s->dlogits.matrix, &s->z.matrix, 1.0,
                   m->g.out_w);
    op_bias_backward(m->g.out_b, &s->dlogits.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &s->dlogits.matrix, m->w.out_w, 0.0,
                   &dt[0].matrix);

    /* forward: z = LN_dec(u_L) */
    const gsl_matrix *uL = &s->dec[m->L - 1].s3.y.matrix;
    gsl_matrix_set_zero(&dt[1].matrix);
    tfm_layernorm_backward(&dt[1].matrix, &m->g.dec_norm, &dt[0].matrix, uL, s->z_mean,
                           s->z_rstd, &m->w.dec_norm);

    /* forward: u_l = DecoderLayer_l(u_{l−1}, mem), from the top; every layer adds its
     * cross-attention share into dmem */
    int cur = 1;
    gsl_matrix_set_zero(&s->dmem.matrix);
    for (size_t l = m->L; l-- > 0;) {
        const gsl_matrix *u_in = l ? &s->dec[l - 1].s3.y.matrix : &s->xt.matrix;
        gsl_matrix_set_zero(&dt[1 - cur].matrix);
        tfm_decoder_layer_backward(&dt[1 - cur].matrix, &s->dmem.matrix, &m->g.dec[l],
                                   &s->work, &dt[cur].matrix, u_in, &s->mem.matrix,
                                   &s->dec[l], &m->w.dec[l], B, m->NH, m->post_ln);
        cur = 1 - cur;
    }
    /* forward: xt = s·E_tgt[y_in] + PE */
    tfm_embed_backward(m->g.dec_emb, m->g.pos, &dt[cur].matrix, b->dec_in, m->emb_scale,
                       s->Tt);

    /* forward: mem = LN_enc(h_L) */
    const gsl_matrix *hL = &s->enc[m->L - 1].s2.y.matrix;
    cur = 0;
    gsl_matrix_set_zero(&ds[cur].matrix);
    tfm_layernorm_backward(&ds[cur].matrix, &m->g.enc_norm, &s->dmem.matrix, hL, s->mem_mean,
                           s->mem_rstd, &m->w.enc_norm);
    /* forward: h_l = EncoderLayer_l(h_{l−1}) */
    for (size_t l = m->L; l-- > 0;) {
        const gsl_matrix *h_in = l ? &s->enc[l - 1].s2.y.matrix : &s->xs.matrix;
        gsl_matrix_set_zero(&ds[1 - cur].matrix);
        tfm_encoder_layer_backward(&ds[1 - cur].matrix, &m->g.enc[l], &s->work,
                                   &ds[cur].matrix, h_in, &s->enc[l], &m->w.enc[l], B, m->NH,
                                   m->post_ln);
        cur = 1 - cur;
    }
    /* forward: xs = s·E_src[x] + PE */
    tfm_embed_backward(m->g.enc_emb, m->g.pos, &ds[cur].matrix, b->src, m->emb_scale, s->Ts);
    return 0;
}
