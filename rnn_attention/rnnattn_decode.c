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

#include "../common/core/tensor.h"

/* ---- greedy decoding ----------------------------------------------------------------- */

/* Greedy decoding: the same encoder and decoder step as forward, but each step's input is
 * the argmax of the step before (exactly Tt steps, no stopping symbol: the tasks know
 * their target length). Uses the forward arrays, so it invalidates a pending backward. */
/* Greedy decoding of Tt tokens for each of the B sources src (B, Ts), checked, into out
 * (B, Tt): the same encoder and decoder step as forward, but each step's input is the
 * argmax of the step before (exactly Tt steps, no stopping symbol: the tasks know their
 * target length). Every step writes the blocks forward would, so the trace reads them. */
static void greedy(rnnattn_model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    rnnattn_state *s = &m->s;
    const config *cfg = &m->head.cfg;
    const size_t V = config_vocab(cfg);
    op_tokens_time_major(s->src, src, B, Ts, V);
    rnnattn_views v;
    rnnattn_make_views(&v, m, B, Ts, Tt);

    rnnattn_encode(m, &v, B, Ts);

    /* The decoder cannot project its inputs up front: input t+1 is the argmax of step t.
     * Each step writes the same blocks forward would, so trace() can read them after. */
    int *y = s->din; /* (Tt·B) block t−1: the input of step t */
    for (size_t i = 0; i < B; i++)
        y[i] = config_bos(cfg);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view x = model_block(&v.Xd.matrix, t - 1, B); /* (B,E+H) */
        gsl_matrix_view xe = gsl_matrix_submatrix(&x.matrix, 0, 0, B, cfg->embed);
        gsl_matrix_view a = model_block(&v.Ad.matrix, t - 1, B);     /* (B,GH) */
        gsl_matrix_view st = model_block(&v.S_out.matrix, t - 1, B); /* s_t (B,H) */
        gsl_matrix_view ct = model_block(&v.C.matrix, t - 1, B);     /* c_t (B,H) */
        gsl_matrix_view z = model_block(&v.logits.matrix, t - 1, B); /* (B,V) */

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
}

/* Uses the forward arrays, so it ends a pending backward, refused or not (model.h). */
int rnnattn_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    if (model_open_call("rnn_attention decode", &m->s.has_forward, m->s.cap,
                        (model_sizes){B, Ts, Tt}, config_vocab(&mm->cfg), src, NULL, NULL) != 0)
        return -1;
    greedy(m, src, B, Ts, Tt, out);
    return 0;
}

/* ---- trace ---------------------------------------------------------------------------- */

/* With B = 1, Alpha (Tt·1, Ts) is the alignment matrix itself: row t is α_t over the
 * source, the picture of Bahdanau et al.'s figure 3. */
int rnnattn_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
                  void *ctx)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    if (model_open_call("rnn_attention trace", &m->s.has_forward, m->s.cap,
                        (model_sizes){1, Ts, Tt}, config_vocab(&mm->cfg), src, NULL, NULL) != 0)
        return -1;
    greedy(m, src, 1, Ts, Tt, out);
    gsl_matrix_view alignment = gsl_matrix_view_array(m->s.Alpha, Tt, Ts);
    return sink(ctx, "alignment", &alignment.matrix, "tgt", "src") != 0 ? -1 : 0;
}
