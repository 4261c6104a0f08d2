/* rnnattn_decode.c — greedy decoding of the model `rnn_attention` and the trace of its
 * alignment (see rnnattn.h).
 *
 * Design. Decoding cannot be teacher forced: input t + 1 is the argmax of step t. So the
 * encoder runs as in forward (rnnattn_encode), then the decoder runs one step at a time
 * for all B sequences with the same step as forward (rnnattn_decoder_step), each step's
 * input projected on its own. Every step writes the blocks forward would, so the trace
 * reads the alignment where forward leaves it.
 *
 * Invariant: a decode or a trace overwrites the arrays a forward keeps, so it ends what
 * backward could differentiate (has_forward = 0) before it checks anything.
 */
#include "rnnattn.h"

#include <gsl/gsl_errno.h>

#include "../common/tensor.h"

/* Block k of m: rows [k·B, (k+1)·B), one step of the whole batch, as a view. */
static gsl_matrix_view block(gsl_matrix_view *m, size_t k, size_t B)
{
    return gsl_matrix_submatrix(&m->matrix, k * B, 0, B, m->matrix.size2);
}

/* ---- greedy decoding ----------------------------------------------------------------- */

/* Greedy decoding: the same encoder and decoder step as forward, but each step's input is
 * the argmax of the step before (exactly Tt steps, no stopping symbol: the tasks know
 * their target length). Uses the forward arrays, so it invalidates a pending backward. */
int rnnattn_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    rnnattn_state *s = &m->s;
    const size_t V = config_vocab(&mm->cfg);
    s->has_forward = 0; /* a decode, refused or not, leaves nothing for backward (model.h) */
    if (!rnnattn_fits(s, B, Ts, Tt))
        GSL_ERROR_VAL("rnn_attention decode: sizes outside the reservation", GSL_EBADLEN, -1);
    if (op_tokens_check(src, B * Ts, V) != 0)
        GSL_ERROR_VAL("rnn_attention decode: source token outside the vocabulary", GSL_EDOM,
                      -1);
    op_tokens_time_major(s->src, src, B, Ts, V);
    rnnattn_views v;
    rnnattn_make_views(&v, m, B, Ts, Tt);

    rnnattn_encode(m, &v, B, Ts);

    /* The decoder cannot project its inputs up front: input t+1 is the argmax of step t.
     * Each step writes the same blocks forward would, so trace() can read them after. */
    int *y = s->din; /* (Tt·B) block t−1: the input of step t */
    for (size_t i = 0; i < B; i++)
        y[i] = config_bos(&mm->cfg);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view x = block(&v.Xd, t - 1, B); /* (B,E+H) */
        gsl_matrix_view xe = gsl_matrix_submatrix(&x.matrix, 0, 0, B, mm->cfg.embed);
        gsl_matrix_view a = block(&v.Ad, t - 1, B);     /* (B,GH) */
        gsl_matrix_view st = block(&v.S_out, t - 1, B); /* s_t (B,H) */
        gsl_matrix_view ct = block(&v.C, t - 1, B);     /* c_t (B,H) */
        gsl_matrix_view z = block(&v.logits, t - 1, B); /* (B,V) */

        op_embed(&xe.matrix, m->w.dec_embed, y + (t - 1) * B, B);
        rnnattn_decoder_input(&a.matrix, &xe.matrix, &m->w);
        rnnattn_decoder_step(m, &v, t, B);
        rnnattn_output_forward(&z.matrix, &st.matrix, &ct.matrix, &m->w);
        for (size_t i = 0; i < B; i++) {
            const int tok = op_argmax(gsl_matrix_const_ptr(&z.matrix, i, 0), V);
            out[i * Tt + (t - 1)] = tok;
            if (t < Tt)
                y[t * B + i] = tok; /* fed back as the next input */
        }
    }
    return 0;
}

/* ---- trace ---------------------------------------------------------------------------- */

/* With B = 1, Alpha (Tt·1, Ts) is the alignment matrix itself: row t is α_t over the
 * source, the picture of Bahdanau et al.'s figure 3. */
int rnnattn_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
                  void *ctx)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    if (!rnnattn_fits(&m->s, 1, Ts, Tt))
        GSL_ERROR_VAL("rnn_attention trace: sizes outside the reservation", GSL_EBADLEN, -1);
    if (op_tokens_check(src, Ts, config_vocab(&mm->cfg)) != 0)
        GSL_ERROR_VAL("rnn_attention trace: source token outside the vocabulary", GSL_EDOM,
                      -1);
    if (rnnattn_decode(mm, src, 1, Ts, Tt, out) != 0)
        return -1;
    gsl_matrix_view alignment = gsl_matrix_view_array(m->s.Alpha, Tt, Ts);
    return sink(ctx, "alignment", &alignment.matrix, "tgt", "src") != 0 ? -1 : 0;
}
