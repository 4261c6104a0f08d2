/* test_rnnattn.c — the model `rnn_attention` of rnn_attention/ in both cell variants
 * (suite: rnn_attention).
 *
 * Gradient checks use sizes that are all different (B = 2, Ts = 4, Tt = 3, E = 5, H = 6,
 * A = 7, 8 symbols so V = 9), so a transposed index cannot pass by accident, and a loss
 * Σ out ⊙ R with a fixed random R, so every output entry has its own weight. The GRU is
 * test_gru.c's, additive attention test_addattn.c's.
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "../common/core/gradcheck.h"
#include "../common/core/model.h"
#include "../common/core/task.h"
#include "../common/core/tensor.h"
#include "../rnn_attention/addattn.h"
#include "../rnn_attention/gru.h"
#include "../rnn_attention/rnnattn.h"
#include "testutil.h"

enum { NB = 2, NTS = 4, NTT = 3, NE = 5, NH = 6, NA = 7, NSYM = 8 };

/* ---- the model -------------------------------------------------------------------------- */

static const char *const cells[2] = {"gru", "lstm"};

static config small_config(const char *cell)
{
    config c;
    config_defaults(&c);
    rnnattn_ops.defaults(&c);
    c.symbols = NSYM;
    c.embed = NE;
    c.hidden = NH;
    c.attn = NA;
    c.forget_bias = 0.7;
    snprintf(c.cell, sizeof c.cell, "%s", cell);
    return c;
}

static void print_tensor_error(void *ctx, const char *tensor, double err, size_t row,
                               size_t col)
{
    ck_assert_msg(err < GRADCHECK_TOL, "%s %s: relative error %.3g at (%zu, %zu)",
                  (const char *)ctx, tensor, err, row, col);
}

/* Every tensor of the model, for _i = 0..3: cell gru, lstm, then each with the
 * bidirectional encoder (whose tensors bwd.* and init.W must then be there, and checked). */
START_TEST(test_model_gradcheck)
{
    config c = small_config(cells[_i % 2]);
    c.bidirectional = _i / 2;
    model *m = tu_new_model(&rnnattn_ops, &c, 110 + (unsigned long)_i);
    gsl_rng *r = tu_rng(111);
    batch b;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, NTS, NTT), 0);
    char what[48];
    snprintf(what, sizeof what, "model (cell %s%s)", cells[_i % 2],
             c.bidirectional ? ", bidirectional" : "");
    ck_assert_str_eq(m->params.spec[m->params.n_tensors - 1].name,
                     c.bidirectional ? "init.W" : "out.b");
    const double err = gradcheck_model(m, &b, 1, print_tensor_error, what);
    ck_assert_double_lt(err, GRADCHECK_TOL);
    tu_report_max("rnnattn", what, err);
    batch_free(&b);
    gsl_rng_free(r);
    rnnattn_ops.free(m);
}
END_TEST

/* What a trace sink received. */
typedef struct trace_log {
    int calls;
    char name[32], rows[8], cols[8];
    size_t n1, n2;
    double m[16 * 16];
    int fail; /* answer -1 to stop */
} trace_log;

static int record(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                  const char *cols)
{
    trace_log *log = ctx;
    log->calls++;
    snprintf(log->name, sizeof log->name, "%s", name);
    snprintf(log->rows, sizeof log->rows, "%s", rows);
    snprintf(log->cols, sizeof log->cols, "%s", cols);
    log->n1 = m->size1;
    log->n2 = m->size2;
    ck_assert(m->size1 * m->size2 <= 16 * 16);
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < m->size2; j++)
            log->m[i * m->size2 + j] = gsl_matrix_get(m, i, j);
    return log->fail ? -1 : 0;
}

/* trace: one (Tt, Ts) alignment, rows "tgt", cols "src", every row a distribution, and
 * the same tokens as decode; a sink's -1 comes back. */
START_TEST(test_trace_alignment)
{
    config c = small_config(cells[_i % 2]);
    c.bidirectional = _i / 2; /* the alignment over the annotations [→h_j; ←h_j] */
    model *m = tu_new_model(&rnnattn_ops, &c, 118);
    enum { Ts = 7, Tt = 5 };
    const int src[Ts] = {3, 0, 7, 7, 1, 5, 2};
    int out[Tt], dec[Tt];
    ck_assert_int_eq(rnnattn_ops.reserve(m, 4, Ts, Tt), 0);
    trace_log log = {0};
    ck_assert_int_eq(rnnattn_ops.trace(m, src, Ts, Tt, out, record, &log), 0);
    ck_assert_int_eq(log.calls, 1);
    ck_assert_str_eq(log.name, "alignment");
    ck_assert_str_eq(log.rows, "tgt");
    ck_assert_str_eq(log.cols, "src");
    ck_assert_uint_eq(log.n1, Tt);
    ck_assert_uint_eq(log.n2, Ts);
    for (size_t t = 0; t < Tt; t++) {
        double sum = 0.0;
        for (size_t j = 0; j < Ts; j++) {
            ck_assert(log.m[t * Ts + j] >= 0.0);
            sum += log.m[t * Ts + j];
        }
        ck_assert_msg(fabs(sum - 1.0) < 1e-14, "row %zu sums to %.17g", t, sum);
    }
    rnnattn_ops.decode(m, src, 1, Ts, Tt, dec);
    ck_assert_mem_eq(out, dec, sizeof out);
    log.fail = 1;
    ck_assert_int_eq(rnnattn_ops.trace(m, src, Ts, Tt, out, record, &log), -1);
    rnnattn_ops.free(m);
}
END_TEST

/* bidirectional: the annotations are [→h_j; ←h_j] with ←h_j the state of the cell run on
 * the source backwards with the bwd weights (rebuilt here through the cell's own layer,
 * on the model's embedding), and s_0 = tanh(←h_1·W_sᵀ) (libm's tanh), c_0 = 0: a gradient
 * check would accept the halves swapped, the source read forwards twice, or s_0 from
 * ←h_Ts. _i: cell gru, lstm. */
START_TEST(test_bidirectional_encoder)
{
    config c = small_config(cells[_i]);
    c.bidirectional = 1;
    model *m = tu_new_model(&rnnattn_ops, &c, 121);
    rnnattn_model *rm = (rnnattn_model *)m;
    gsl_rng *r = tu_rng(122);
    batch b;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, NTS, NTT), 0);
    ck_assert(!isnan(rnnattn_ops.forward(m, &b, NULL)));

    const size_t GH = rm->cell->gates * NH;
    gsl_matrix *X = tu_zero_matrix(NTS * NB, NE), *Hr = tu_zero_matrix((NTS + 1) * NB, NH);
    gsl_matrix *Cr = tu_zero_matrix((NTS + 1) * NB, NH), *Act = tu_zero_matrix(NTS * NB, GH);
    gsl_matrix *HP = tu_zero_matrix(NTS * NB, GH);
    /* step k (1-based) of the backward encoder reads x_{Ts+1−k} */
    for (size_t k = 1; k <= NTS; k++)
        for (size_t i = 0; i < NB; i++) {
            const size_t tok = (size_t)b.src[i * NTS + (NTS - k)];
            for (size_t j = 0; j < NE; j++)
                gsl_matrix_set(X, (k - 1) * NB + i, j, gsl_matrix_get(rm->w.enc_embed, tok, j));
        }
    rm->cell->layer_forward(Hr, Cr, Act, HP, X, &rm->w.bwd, NB);
    /* h_j = [→h_j ; ←h_j], ←h_j = block Ts+1−j of Hr, →h_j = block j of the model's Hs */
    for (size_t jj = 1; jj <= NTS; jj++)
        for (size_t i = 0; i < NB; i++)
            for (size_t u = 0; u < NH; u++) {
                const double *ann = rm->s.Hann + ((jj - 1) * NB + i) * 2 * NH;
                ck_assert(ann[u] == rm->s.Hs[(jj * NB + i) * NH + u]);
                ck_assert_msg(ann[NH + u] == gsl_matrix_get(Hr, (NTS + 1 - jj) * NB + i, u),
                              "annotation %zu, example %zu, unit %zu: %.17g, want %.17g", jj,
                              i, u, ann[NH + u],
                              gsl_matrix_get(Hr, (NTS + 1 - jj) * NB + i, u));
            }
    /* s_0 = tanh(←h_1 · W_sᵀ): block Ts+1 of Hs; ←h_1 is Hr's last block */
    for (size_t i = 0; i < NB; i++)
        for (size_t u = 0; u < NH; u++) {
            double a = 0.0;
            for (size_t k = 0; k < NH; k++)
                a += gsl_matrix_get(Hr, NTS * NB + i, k) * gsl_matrix_get(rm->w.init_W, u, k);
            const double s0 = rm->s.Hs[((NTS + 1) * NB + i) * NH + u];
            ck_assert_msg(fabs(s0 - tanh(a)) <= 1e-14, "s_0[%zu][%zu] %.17g, want %.17g", i,
                          u, s0, tanh(a));
            if (rm->cell->has_cell_state)
                ck_assert(rm->s.Cs[((NTS + 1) * NB + i) * NH + u] == 0.0);
        }
    gsl_matrix *all[] = {X, Hr, Cr, Act, HP};
    for (size_t k = 0; k < 5; k++)
        gsl_matrix_free(all[k]);
    batch_free(&b);
    gsl_rng_free(r);
    rnnattn_ops.free(m);
}
END_TEST

/* The canonical model has PyTorch's parameter count (GRUAttnSeq2Seq: 210,123); its
 * products are those bench_torch.py counts, per token 2·384·160 + 2·128·128 ·2 + 4·L·128
 * + 2·384·288 + 2·256·11 for Ts = Tt = L, times 3 for a training step, and its
 * element-wise work is counted here by hand (the equations of gru.h and addattn.h). */
START_TEST(test_canonical_size_and_flops)
{
    config c;
    config_defaults(&c);
    rnnattn_ops.defaults(&c);
    ck_assert_uint_eq(c.embed, 32);
    ck_assert_uint_eq(c.hidden, 128);
    ck_assert_uint_eq(c.attn, 128);
    ck_assert_str_eq(c.cell, "gru");
    model *m = rnnattn_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.size, 210123);
    const char *names[] = {"enc.embed", "enc.Wx", "enc.Wh", "enc.bx", "enc.bh", "dec.embed",
                           "dec.Wx", "dec.Wh", "dec.bx", "dec.bh", "attn.Wq", "attn.Wk",
                           "attn.bk", "attn.v", "out.W", "out.b"};
    ck_assert_uint_eq(m->params.n_tensors, 16);
    for (size_t k = 0; k < 16; k++)
        ck_assert_str_eq(m->params.spec[k].name, names[k]);
    ck_assert_uint_eq(rnnattn_ops.n_params(&c), m->params.size);
    rnnattn_ops.free(m);
    /* Element-wise, per token: the encoder's and the decoder's GRU steps, 39·128 each (16
     * a unit forward, 23 backward); the key's bias, its gradient and e^{2k}, 6·128; the
     * query's e^{2q}, 4·128, and the softmax's 1/sum, 1; the output's bias, the loss and
     * their gradients, 9·11 + 5; the embedding rows' gradients, 32 + 32. Per (step, source
     * position) pair: tanh(q + k) by exponentials, 4·128, its backward 9·128, the softmax
     * and its backward, 10. */
    const double per_token_ew = 2.0 * 39 * 128 + 6.0 * 128 + 4.0 * 128 + 1 + 9.0 * 11 + 5 +
                                2.0 * 32;
    const double per_pair_ew = 13.0 * 128 + 10;
    for (size_t L = 32; L <= 128; L *= 4) {
        const double l = (double)L;
        const double per_token = 2.0 * 384 * 160 + 2.0 * 128 * 128 + 2.0 * 128 * 128 +
                                 4.0 * l * 128 + 2.0 * 384 * 288 + 2.0 * 256 * 11;
        ck_assert(rnnattn_ops.flops(&c, L, L) ==
                  3.0 * per_token * l + per_token_ew * l + per_pair_ew * l * l);
    }
    /* What grows with Ts·Tt and nothing else (a mixed second difference): per pair the
     * products vᵀu and Σ α h with their gradients, 6·128 + 6·128, and the element-wise
     * work above; no term grows with Ts² or Tt² */
    for (size_t ts = 3; ts <= 40; ts += 37)
        for (size_t tt = 2; tt <= 50; tt += 48) {
            const double mixed = rnnattn_ops.flops(&c, ts + 1, tt + 1) -
                                 rnnattn_ops.flops(&c, ts + 1, tt) -
                                 rnnattn_ops.flops(&c, ts, tt + 1) + rnnattn_ops.flops(&c, ts, tt);
            ck_assert_msg(mixed == 12.0 * 128 + per_pair_ew, "Ts %zu Tt %zu: %.17g", ts, tt,
                          mixed);
            ck_assert(rnnattn_ops.flops(&c, ts + 1, tt) - 2 * rnnattn_ops.flops(&c, ts, tt) +
                          rnnattn_ops.flops(&c, ts - 1, tt) == 0.0);
            ck_assert(rnnattn_ops.flops(&c, ts, tt + 1) - 2 * rnnattn_ops.flops(&c, ts, tt) +
                          rnnattn_ops.flops(&c, ts, tt - 1) == 0.0);
        }
    /* the LSTM ablation: 4H gates and one bias per cell, 16,384 + ... more weights */
    snprintf(c.cell, sizeof c.cell, "lstm");
    m = rnnattn_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.n_tensors, 14);
    const char *lstm_names[] = {"enc.embed", "enc.Wx", "enc.Wh", "enc.b", "dec.embed",
                                "dec.Wx", "dec.Wh", "dec.b", "attn.Wq", "attn.Wk",
                                "attn.bk", "attn.v", "out.W", "out.b"};
    for (size_t k = 0; k < 14; k++)
        ck_assert_str_eq(m->params.spec[k].name, lstm_names[k]);
    ck_assert_uint_eq(rnnattn_ops.n_params(&c), m->params.size);
    /* a fourth gate block in each cell: enc.Wx 128·32, enc.Wh 128·128, dec.Wx 128·160,
     * dec.Wh 128·128; and one bias of 4·128 per cell instead of the GRU's two of 3·128 */
    ck_assert_uint_eq(m->params.size, 210123 + 128 * 32 + 128 * 128 + 128 * 160 + 128 * 128 -
                                          2 * (2 * 384) + 2 * 512);
    rnnattn_ops.free(m);
    /* bidirectional GRU: annotations 2H = 256 wide, so dec.Wx (384, 288), attn.Wk
     * (128, 256), out.W (11, 384); then bwd.Wx (384, 32), bwd.Wh (384, 128), bwd.bx,
     * bwd.bh (1, 384) and init.W (128, 128), last */
    snprintf(c.cell, sizeof c.cell, "gru");
    c.bidirectional = 1;
    m = rnnattn_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.n_tensors, 21);
    for (size_t k = 0; k < 16; k++)
        ck_assert_str_eq(m->params.spec[k].name, names[k]);
    const char *bi_names[] = {"bwd.Wx", "bwd.Wh", "bwd.bx", "bwd.bh", "init.W"};
    for (size_t k = 0; k < 5; k++)
        ck_assert_str_eq(m->params.spec[16 + k].name, bi_names[k]);
    ck_assert_uint_eq(m->params.size, 210123 + 384 * 128 + 128 * 128 + 11 * 128 +
                                          (384 * 32 + 384 * 128 + 2 * 384) + 128 * 128);
    ck_assert_uint_eq(rnnattn_ops.n_params(&c), m->params.size);
    rnnattn_ops.free(m);
    /* per token at Ts = Tt = L: both encoders 2·2·384·160, keys 2·128·256, the decoder
     * 2·384·288 + 2·384·128 + 2·128·128 (query) + 2·L·128 + 2·L·256 + 2·11·384; once per
     * sequence s_0's 2·128·128; times 3. Element-wise as above, with a third GRU layer
     * (39·128), a third embedding row (32) and the annotations' gradient split into the
     * two directions (2·128) per token, and once per sequence s_0's tanh and its
     * backward (4·128) */
    for (size_t L = 32; L <= 128; L *= 4) {
        const double l = (double)L;
        const double per_token = 4.0 * 384 * 160 + 2.0 * 128 * 256 + 2.0 * 384 * 288 +
                                 2.0 * 384 * 128 + 2.0 * 128 * 128 + 2.0 * l * 128 +
                                 2.0 * l * 256 + 2.0 * 11 * 384;
        const double ew = (per_token_ew + 39.0 * 128 + 32 + 2.0 * 128) * l +
                          per_pair_ew * l * l + 4.0 * 128;
        tu_assert_rel(rnnattn_ops.flops(&c, L, L),
                      3.0 * (per_token * l + 2.0 * 128 * 128) + ew, 1e-15);
    }
}
END_TEST

/* Initial weights: PyTorch's distributions, and the LSTM forget-gate bias. */
START_TEST(test_init)
{
    config c;
    config_defaults(&c);
    rnnattn_ops.defaults(&c);
    snprintf(c.cell, sizeof c.cell, "%s", cells[_i]);
    c.forget_bias = 2.5;
    model *m = tu_new_model(&rnnattn_ops, &c, 119), *twin = tu_new_model(&rnnattn_ops, &c, 119);
    arena *a = &m->params;
    ck_assert_mem_eq(a->data, twin->params.data, a->size * sizeof(double));
    const double kH = 1.0 / sqrt(128.0), k2H = 1.0 / sqrt(256.0);
    for (size_t t = 0; t < a->n_tensors; t++) {
        const char *name = a->spec[t].name;
        const double *x = a->data + a->offset[t];
        const size_t n = arena_numel(a, t);
        double sum2 = 0.0, amax = 0.0;
        for (size_t i = 0; i < n; i++) {
            sum2 += x[i] * x[i];
            amax = fmax(amax, fabs(x[i]));
        }
        double bound = kH;
        if (strstr(name, "embed")) {
            const double sd = sqrt(sum2 / (double)n); /* 288 draws of N(0, 1) */
            ck_assert_msg(sd > 0.85 && sd < 1.15, "%s: sd %g", name, sd);
            continue;
        }
        if (strcmp(name, "enc.b") == 0 || strcmp(name, "dec.b") == 0) {
            for (size_t i = 0; i < n; i++)
                ck_assert(i >= 128 && i < 256 ? x[i] == 2.5 : fabs(x[i]) <= 2 * kH);
            continue;
        }
        if (strncmp(name, "out.", 4) == 0)
            bound = k2H;
        ck_assert_msg(amax <= bound && (n < 1000 || amax > 0.99 * bound),
                      "%s: max |w| %g, bound %g", name, amax, bound);
    }
    rnnattn_ops.free(m);
    rnnattn_ops.free(twin);
}
END_TEST

/* ---- error paths ------------------------------------------------------------------------ */

START_TEST(test_errors)
{
    config c = small_config("gru");
    char err[200];
    ck_assert_int_eq(rnnattn_ops.check(&c, err, sizeof err), 0);
    config bad = c;
    snprintf(bad.cell, sizeof bad.cell, "rnn");
    ck_assert_int_eq(rnnattn_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--cell"));
    ck_assert_ptr_null(rnnattn_ops.alloc(&bad));
    bad = c;
    bad.attn = 0;
    ck_assert_int_eq(rnnattn_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--attn"));
    bad = c;
    bad.emb_init = NAN;
    ck_assert_int_eq(rnnattn_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--emb-init"));

    model *m = tu_new_model(&rnnattn_ops, &c, 120);
    ck_assert_int_eq(rnnattn_ops.reserve(m, 0, 3, 3), -1);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, SIZE_MAX / 2, SIZE_MAX / 2), -1);
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, NTS, NTT), 0);

    gsl_error_handler_t *old = gsl_set_error_handler(tu_count_error);
    gsl_rng *r = tu_rng(121);
    batch b, longer;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    tu_random_batch(&longer, NB, NTS, NTT + 1, &c, r);
    int out[NB * (NTT + 1)];

    tu_errors = 0;
    ck_assert(isnan(rnnattn_ops.forward(m, &longer, NULL))); /* Tt beyond the reservation */
    ck_assert_int_eq(tu_errors, 1);
    rnnattn_ops.backward(m, &b); /* no forward of this batch */
    ck_assert_int_eq(tu_errors, 2);
    rnnattn_ops.decode(m, b.src, NB, NTS, NTT + 1, out);
    ck_assert_int_eq(tu_errors, 3);
    trace_log log = {0};
    ck_assert_int_eq(rnnattn_ops.trace(m, b.src, NTS + 1, NTT, out, record, &log), -1);
    ck_assert_int_eq(tu_errors, 4);
    b.src[1] = NSYM + 1; /* past BOS: not a token */
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 5);
    b.src[1] = -1;
    ck_assert_int_eq(rnnattn_ops.trace(m, b.src, NTS, NTT, out, record, &log), -1);
    ck_assert_int_eq(tu_errors, 6);
    ck_assert_int_eq(log.calls, 0);
    b.src[1] = 0;
    b.dec_in[2] = -3; /* a decoder input, then a target, outside the vocabulary */
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 7);
    b.dec_in[2] = 0;
    b.tgt[NB * NTT - 1] = NSYM + 1;
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 8);
    b.tgt[NB * NTT - 1] = 0;
    ck_assert(isfinite(rnnattn_ops.forward(m, &b, NULL))); /* and still works */

    /* A refused batch leaves nothing to differentiate (model.h: backward follows its own
     * forward), writes no gradient, and the next forward is as good as ever. */
    const arena *a = &m->params;
    double *once = malloc(a->size * sizeof(double));
    ck_assert_ptr_nonnull(once);
    arena_zero_grad(&m->params);
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), 0);
    memcpy(once, a->grad, a->size * sizeof(double));
    arena_zero_grad(&m->params);
    rnnattn_ops.forward(m, &b, NULL);
    const int tgt0 = b.tgt[0];
    b.tgt[0] = -1;
    ck_assert(isnan(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(tu_errors, 9);
    b.tgt[0] = tgt0;
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), -1);
    ck_assert_int_eq(tu_errors, 10);
    for (size_t i = 0; i < a->size; i++)
        ck_assert(a->grad[i] == 0.0);
    ck_assert(isfinite(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), 0);
    ck_assert_mem_eq(a->grad, once, a->size * sizeof(double));
    free(once);

    /* A reservation that cannot be made leaves the one before it usable. */
    ck_assert_int_eq(rnnattn_ops.reserve(m, NB, SIZE_MAX / 4, SIZE_MAX / 4), -1);
    ck_assert_int_eq(rnnattn_ops.reserve(m, SIZE_MAX / 2, NTS, NTT), -1);
    ck_assert(isfinite(rnnattn_ops.forward(m, &b, NULL)));
    ck_assert_int_eq(rnnattn_ops.backward(m, &b), 0);
    ck_assert_int_eq(tu_errors, 10);
    gsl_set_error_handler(old);

    batch_free(&b);
    batch_free(&longer);
    gsl_rng_free(r);
    rnnattn_ops.free(m);
}
END_TEST

Suite *make_rnnattn_suite(void)
{
    Suite *s = suite_create("rnn_attention");

    TCase *mdl = tcase_create("model");
    /* cell gru, cell lstm, then each with the bidirectional encoder */
    tcase_add_loop_test(mdl, test_model_gradcheck, 0, 4);
    tcase_add_loop_test(mdl, test_trace_alignment, 0, 4);
    tcase_add_loop_test(mdl, test_bidirectional_encoder, 0, 2); /* cell gru, cell lstm */
    tcase_add_loop_test(mdl, test_init, 0, 2);
    tcase_add_test(mdl, test_canonical_size_and_flops);
    tcase_add_test(mdl, test_errors);
    suite_add_tcase(s, mdl);
    return s;
}
