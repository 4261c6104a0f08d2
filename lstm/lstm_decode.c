/* lstm_decode.c — greedy decoding of the model `lstm` and the trace of its gates (see
 * lstm.h).
 *
 * Design. Decoding cannot be teacher forced: input t + 1 is the argmax of step t. So the
 * encoder runs as in forward (lstm_encode), and the decoder runs one step at a time for
 * all B sequences, each step reading B rows of its projection table and writing the
 * blocks forward would use, so that trace() reads the gates and cells of one example
 * where forward leaves them.
 *
 * Invariant: a decode or a trace overwrites the arrays a forward keeps, so it ends what
 * backward could differentiate (has_forward = 0) before it checks anything.
 */
#include "lstm.h"

#include <stdio.h>
#include <string.h>

#include "../common/core/tensor.h"

/* ---- greedy decoding ----------------------------------------------------------------- */

/* Greedy decoding, shared by decode() and trace() (keep says which). With keep, every
 * step's gates stay in its block of Act, as forward leaves them, for trace() to read;
 * without, each layer rewrites one block, which stays in cache. Refuses (GSL error, -1),
 * before writing anything, sizes that do not fit the reservation and a source token
 * outside the vocabulary; else 0. */
static int greedy(lstm_model *m, const int *src, size_t B, size_t Ts, size_t Tt, int keep,
                  int *out)
{
    lstm_state *s = &m->s;
    const config *cfg = &m->head.cfg;
    const size_t V = config_vocab(cfg);
    /* the arrays will hold a decode: nothing for backward */
    if (model_open_call(keep ? "lstm trace" : "lstm decode", &s->has_forward, s->cap,
                        (model_sizes){B, Ts, Tt}, V, src, NULL, NULL) != 0)
        return -1;
    lstm_views v;
    lstm_make_views(&v, m, B, Ts, Tt);
    lstm_encode(m, &v, src, B, Ts, keep);

    /* The decoder cannot know its inputs up front: input t+1 is the argmax of step t.
     * Its table is ready, though: each step reads B rows of it. The states and the
     * logits of each step go to the blocks forward would use. */
    lstm_table_forward(&v.Pd.matrix, m->w.dec_embed, &m->w.dec);
    if (cfg->feed_context) /* the summary's part of every step, once */
        lstm_context_forward(m, &v, B);
    int *y = s->ids + Ts * B; /* (Tt·B) block t−1: the input of step t */
    for (size_t i = 0; i < B; i++)
        y[i] = config_bos(cfg);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view a = model_block(&v.Ad.matrix, keep ? t - 1 : 0, B); /* (B,4H) */
        gsl_matrix_view h = model_block(&v.Hd.matrix, t, B);         /* (B,H) */
        gsl_matrix_view c = model_block(&v.Cd.matrix, t, B);
        gsl_matrix_view hp = model_block(&v.Hd.matrix, t - 1, B);
        gsl_matrix_view cp = model_block(&v.Cd.matrix, t - 1, B);
        gsl_matrix_view z = model_block(&v.logits.matrix, t - 1, B); /* (B,V+1) */

        if (cfg->feed_context) { /* input part P_dec[y] + Kc, then the cell */
            lstm_context_input(&a.matrix, &v.Pd.matrix, y + (t - 1) * B, &v.Kc.matrix);
            lstm_cell_forward(&h.matrix, &c.matrix, &a.matrix, &hp.matrix, &cp.matrix,
                              m->w.dec.Wh);
        } else {
            lstm_cell_forward_table(&h.matrix, &c.matrix, &a.matrix, &hp.matrix, &cp.matrix,
                                    &v.Pd.matrix, y + (t - 1) * B, m->w.dec.Wh);
        }
        lstm_output_forward(&z.matrix, &h.matrix, &m->w);
        for (size_t i = 0; i < B; i++) {
            int tok = op_argmax(gsl_matrix_const_ptr(&z.matrix, i, 0), V);
            out[i * Tt + (t - 1)] = tok;
            if (t < Tt)
                y[t * B + i] = tok; /* fed back as the next input */
        }
    }
    return 0;
}

/* Returns greedy's status: 0, or -1 after a GSL error (the error contract). */
int lstm_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    return greedy((lstm_model *)mm, src, B, Ts, Tt, 0, out);
}

/* ---- trace -------------------------------------------------------------------------- */

/* Decodes src (1, Ts) and sends the gates i, f, o and the cells of every step (lstm.h
 * names them). Returns 0, or -1 when greedy refused the call or the sink said stop. */
int lstm_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out,
                      trace_sink sink, void *ctx)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t H = mm->cfg.hidden;
    if (greedy(m, src, 1, Ts, Tt, 1, out) != 0)
        return -1;

    /* With B = 1 a block is one row: Act rows 0..Ts−1 are the encoder's steps and rows
     * Ts..Ts+Tt−1 the decoder's; Cs rows 1..Ts and Ts+1..Ts+Tt their cell states. */
    const struct {
        const char *prefix, *rows;
        size_t first, n; /* first Act row, number of steps */
    } part[2] = {{"enc", "src", 0, Ts}, {"dec", "tgt", Ts, Tt}};
    static const struct {
        const char *name;
        size_t block; /* position in [i f g o] */
    } gate[3] = {{"gate_i", 0}, {"gate_f", 1}, {"gate_o", 3}};
    gsl_matrix_view act = gsl_matrix_view_array(s->Act, Ts + Tt, 4 * H);
    char name[ARENA_NAME_MAX];
    for (size_t p = 0; p < 2; p++) {
        /* a gate is a strided column block of Act; the sink gets a contiguous copy */
        gsl_matrix_view buf = gsl_matrix_view_array(s->trace, part[p].n, H);
        for (size_t k = 0; k < 3; k++) {
            gsl_matrix_const_view g = gsl_matrix_const_submatrix(
                &act.matrix, part[p].first, gate[k].block * H, part[p].n, H);
            gsl_matrix_memcpy(&buf.matrix, &g.matrix);
            snprintf(name, sizeof name, "%s.%s", part[p].prefix, gate[k].name);
            if (sink(ctx, name, &buf.matrix, part[p].rows, "unit") != 0)
                return -1;
        }
        gsl_matrix_const_view cell =
            gsl_matrix_const_view_array(s->Cs + (part[p].first + 1) * H, part[p].n, H);
        snprintf(name, sizeof name, "%s.cell", part[p].prefix);
        if (sink(ctx, name, &cell.matrix, part[p].rows, "unit") != 0)
            return -1;
    }
    return 0;
}
