/* tfm_decode.c — greedy decoding of the model `transformer` with a key/value cache, and
 * the attention traces (see tfm.h).
 *
 * Design. Decoding cannot be teacher forced: input t + 1 is the argmax of step t. So the
 * decoder runs one position at a time for all B sequences (B rows), and each layer keeps
 * the keys and values of the positions so far in a cache, where the new position's query
 * reads them (tfm_attend_cached): the encoder runs once, the memory's keys and values are
 * projected once per layer, and a step costs O(t) attention instead of recomputing the
 * prefix. Each step runs the same sublayers as training, in either order.
 *
 * Invariant. The cache of step t holds positions 0 .. t only, so no mask is needed; the
 * greedy tokens equal those of a teacher-forced pass on the decoder's own outputs (held
 * to it by tests/test_tfm.c), which is how a trace records all its maps at once.
 */
#include "tfm.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

/* One decoder layer l at position t for all B sequences of the step (s->step.x in, out).
 * The new position's key and value join the layer's cache (column t of the transposed
 * keys, row t of the values: st->kt_self, st->v_self), and its query attends to the t + 1
 * cached positions: the cache holds nothing later, so no mask is needed, and the step
 * costs O(t), not a recomputation of the prefix. */
static void decoder_step(tfm_model *m, size_t l, size_t t)
{
    tfm_state *s = &m->s;
    tfm_step *st = &s->step;
    const tfm_dec_layer *p = &m->w.dec[l];
    tfm_dec_act *a = &s->dec[l];
    const size_t B = s->B, D = m->D, NH = m->NH, Ts = s->Ts, Tt = s->Tt;
    const int post = m->post_ln;
    /* x, q, o: (B, D), one row per sequence; the sublayers run in either order exactly
     * as in training, on B rows instead of B·Tt */
    gsl_matrix *x = &st->x.matrix, *q = &st->q.matrix, *o = &st->o.matrix;

    /* masked self-attention over the cache */
    gsl_matrix *acc = tfm_sublayer_open(&st->s[0], x, &p->ln1, post);
    const gsl_matrix *in = tfm_sublayer_input(&st->s[0], x, post);
    tfm_mha_project_q(q, in, &p->self);
    /* [K | V] of position t, written straight into the cache: rows b·Tt + t, b = 0..B−1 */
    const size_t ld = a->self.kv.matrix.tda;
    gsl_matrix_view kv_t = gsl_matrix_view_array_with_tda(a->self.kv.matrix.data + t * ld, B,
                                                          2 * D, Tt * ld);
    tfm_mha_project_kv(&kv_t.matrix, in, &p->self);
    /* and from there into the caches the attention reads: the key, transposed, into
     * column t of sequence b's (D, Tt) block; the value into row t of its (Tt, D) block */
    double *kt = st->kt_self + l * B * D * Tt, *vc = st->v_self + l * B * Tt * D;
    for (size_t b = 0; b < B; b++) {
        const double *kv_bt = gsl_matrix_const_ptr(&kv_t.matrix, b, 0);
        for (size_t f = 0; f < D; f++)
            kt[(b * D + f) * Tt + t] = kv_bt[f];
        memcpy(vc + (b * Tt + t) * D, kv_bt + D, D * sizeof(double));
    }
    /* sequence b attends to its positions 0..t */
    gsl_matrix_const_view V = gsl_matrix_const_view_array(vc, B * Tt, D);
    tfm_attend_cached(o, st->p, q, kt, Tt, D * Tt, &V.matrix, Tt, t + 1, NH);
    tfm_mha_output(acc, o, &p->self);
    tfm_sublayer_close(&st->s[0], &p->ln1, post);

    /* cross-attention on the memory's keys and values, computed once per decode */
    const gsl_matrix *x1 = &st->s[0].y.matrix;
    acc = tfm_sublayer_open(&st->s[1], x1, &p->ln2, post);
    tfm_mha_project_q(q, tfm_sublayer_input(&st->s[1], x1, post), &p->cross);
    gsl_matrix_const_view Vx = gsl_matrix_const_view_array(st->v_cross + l * B * Ts * D,
                                                           B * Ts, D);
    tfm_attend_cached(o, st->p, q, st->kt_cross + l * B * D * Ts, Ts, D * Ts, &Vx.matrix, Ts,
                      Ts, NH);
    tfm_mha_output(acc, o, &p->cross);
    tfm_sublayer_close(&st->s[1], &p->ln2, post);

    /* feed-forward */
    const gsl_matrix *x2 = &st->s[1].y.matrix;
    acc = tfm_sublayer_open(&st->s[2], x2, &p->ln3, post);
    tfm_ffn_forward(acc, &st->h.matrix, tfm_sublayer_input(&st->s[2], x2, post), &p->ff);
    tfm_sublayer_close(&st->s[2], &p->ln3, post);
    gsl_matrix_memcpy(x, &st->s[2].y.matrix); /* the stream goes on to the next layer */
}

/* Greedy decoding of Tt tokens for each of the B sources src (B, Ts), checked, into out
 * (B, Tt), at the sizes the state was fitted to: the encoder once, the memory's keys and
 * values once per layer, then Tt steps of B rows each. */
static void greedy(tfm_model *m, const int *src, int *out)
{
    tfm_state *s = &m->s;
    tfm_step *st = &s->step;
    const int bos = config_bos(&m->head.cfg);
    const size_t B = s->B, Ts = s->Ts, Tt = s->Tt, D = m->D;
    /* the encoder runs once; so do the memory's keys and values for every decoder layer */
    tfm_encode(m, src);
    for (size_t l = 0; l < m->L; l++) {
        const gsl_matrix *kv = &s->dec[l].cross.kv.matrix; /* (B·Ts, 2D) [K | V] */
        tfm_mha_project_kv(&s->dec[l].cross.kv.matrix, &s->mem.matrix, &m->w.dec[l].cross);
        /* copied into the blocks the steps read: sequence b's keys transposed, Kᵀ (D, Ts),
         * and its values (Ts, D) */
        double *kt = st->kt_cross + l * B * D * Ts, *vc = st->v_cross + l * B * Ts * D;
        for (size_t b = 0; b < B; b++)
            for (size_t k = 0; k < Ts; k++) {
                const double *kv_bk = gsl_matrix_const_ptr(kv, b * Ts + k, 0);
                for (size_t f = 0; f < D; f++)
                    kt[(b * D + f) * Ts + k] = kv_bk[f];
                memcpy(vc + (b * Ts + k) * D, kv_bk + D, D * sizeof(double));
            }
    }
    /* each step costs O(t) attention on top of the position-wise work, so Tt steps cost
     * O(Tt²) in all; recomputing the prefix at every step would cost O(Tt³) */
    for (size_t t = 0; t < Tt; t++) {
        /* feed back each sequence's previous prediction (BOS first) */
        for (size_t b = 0; b < B; b++)
            s->ids[b] = t ? out[b * Tt + t - 1] : bos;
        tfm_embed_forward(&st->x.matrix, s->ids, m->w.dec_emb, m, 1, t);
        for (size_t l = 0; l < m->L; l++)
            decoder_step(m, l, t);
        tfm_layernorm_forward(&st->z.matrix, st->z_mean, st->z_rstd, &st->x.matrix,
                              &m->w.dec_norm);
        /* logits (B,V) = z (B,D) · W_outᵀ (D,V) + b_out */
        op_linear_forward(&st->logits.matrix, &st->z.matrix, m->w.out_w, m->w.out_b);
        for (size_t b = 0; b < B; b++)
            out[b * Tt + t] =
                op_argmax(gsl_matrix_const_ptr(&st->logits.matrix, b, 0), m->V);
    }
}

int tfm_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    tfm_model *m = (tfm_model *)mm;
    if (model_open_call("transformer decode", &m->s.has_forward, m->s.cap,
                        (model_sizes){B, Ts, Tt}, m->V, src, NULL, NULL) != 0)
        return -1;
    if (tfm_state_fit(m, B, Ts, Tt, 0) != 0)
        GSL_ERROR_VAL("transformer decode: sizes outside the reservation", GSL_EBADLEN, -1);
    greedy(m, src, out);
    return 0;
}

/* Sends head j of the attention weights P (NH·Tq, Tk) of one sequence to the sink. */
static int send_head(trace_sink sink, void *ctx, const char *kind, size_t l, size_t j,
                     const gsl_matrix *P, size_t Tq, const char *rows, const char *cols)
{
    char name[64]; /* e.g. "cross.l1.h3" */
    snprintf(name, sizeof name, "%s.l%zu.h%zu", kind, l, j);
    gsl_matrix_const_view Pj = gsl_matrix_const_submatrix(P, j * Tq, 0, Tq, P->size2);
    return sink(ctx, name, &Pj.matrix, rows, cols);
}

/* Decodes one example and sends every attention map, head by head: encoder
 * self-attention (src × src), masked decoder self-attention (tgt × tgt, its upper triangle
 * empty) and cross-attention (tgt × src), named kind.l<layer>.h<head>. */
int tfm_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
              void *ctx)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    if (model_open_call("transformer trace", &s->has_forward, s->cap, (model_sizes){1, Ts, Tt},
                        m->V, src, NULL, NULL) != 0)
        return -1;
    /* one example, its every weight kept (reserve made room for that) */
    if (tfm_state_fit(m, 1, Ts, Tt, 1) != 0)
        GSL_ERROR_VAL("transformer trace: sizes outside the reservation", GSL_EBADLEN, -1);
    greedy(m, src, out);
    /* The maps of a greedy decode are those of a teacher-forced pass on its own outputs
     * (the cache computes the same rows), and that pass keeps them all at once. */
    s->ids[0] = config_bos(&m->head.cfg);
    for (size_t t = 1; t < Tt; t++)
        s->ids[t] = out[t - 1];
    tfm_encode(m, src);
    tfm_decode_teacher(m, s->ids);
    for (size_t l = 0; l < m->L; l++)
        for (size_t j = 0; j < m->NH; j++)
            if (send_head(sink, ctx, "enc_self", l, j, &s->enc[l].att.p.matrix, Ts, "src",
                          "src") != 0)
                return -1;
    for (size_t l = 0; l < m->L; l++)
        for (size_t j = 0; j < m->NH; j++)
            /* a decoder query at step t reads the token before it: the keys are the
             * decoder's inputs (BOS, then the tokens emitted so far) */
            if (send_head(sink, ctx, "dec_self", l, j, &s->dec[l].self.p.matrix, Tt, "tgt",
                          "tgt_in") != 0)
                return -1;
    for (size_t l = 0; l < m->L; l++)
        for (size_t j = 0; j < m->NH; j++)
            if (send_head(sink, ctx, "cross", l, j, &s->dec[l].cross.p.matrix, Tt, "tgt",
                          "src") != 0)
                return -1;
    return 0;
}
