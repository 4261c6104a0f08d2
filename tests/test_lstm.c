/* test_lstm.c — the model `lstm` of lstm/ (suite: lstm).
 *
 * What it proves: every parameter tensor by gradcheck_model, feed_context, the trace,
 * the cost count, the canonical size, the initialisation and the error paths (what every
 * model must do — accumulate, decode as it is taught, ignore its reservation — is in
 * test_models.c; the cell and the layer are test_lstm_cell.c's).
 * Sizes are all different (B=2, T=3, E=5, H=4, V=7 symbols) so that a transposed index
 * cannot pass by accident; losses are Σ out ⊙ R with fixed random R.
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/gradcheck.h"
#include "../common/core/layerbench.h"
#include "../common/core/task.h"
#include "../lstm/lstm.h"
#include "testutil.h"

enum { NB = 2, NT = 3, NE = 5, NH = 4, NV = 7 }; /* B, T, E, H, data symbols */

/* ---- model ----------------------------------------------------------------------------- */

/* The small test configuration: V = 7 symbols (+BOS), E = 5, H = 4. */
static config small_config(void)
{
    config c;
    config_defaults(&c);
    lstm_ops.defaults(&c);
    c.symbols = NV;
    c.embed = NE;
    c.hidden = NH;
    return c;
}

typedef struct report_log {
    size_t n;       /* tensors reported */
    double max_err; /* over all of them */
} report_log;

static void report_tensor(void *ctx, const char *tensor, double err, size_t row, size_t col)
{
    report_log *log = ctx;
    log->n++;
    log->max_err = fmax(log->max_err, err);
    ck_assert_msg(err < GRADCHECK_TOL, "%s: relative error %.3g at (%zu, %zu)", tensor, err,
                  row, col);
}

/* Every parameter tensor against central differences of the mean cross-entropy, with
 * Ts = 3 ≠ Tt = 4, without (_i = 0) and with (_i = 1) feed_context. Each tensor must also
 * have a gradient that is not zero: a broken bridge from encoder to decoder would give
 * zero on both sides and still "agree". */
START_TEST(test_model_gradcheck)
{
    config c = small_config();
    c.feed_context = _i;
    model *m = tu_new_model(&lstm_ops, &c, 31);
    gsl_rng *r = tu_rng(32);
    batch b;
    tu_random_batch(&b, NB, NT, NT + 1, &c, r);
    ck_assert_int_eq(lstm_ops.reserve(m, NB, NT, NT + 1), 0);
    report_log log = {0, 0.0};
    double err = gradcheck_model(m, &b, 1, report_tensor, &log);
    ck_assert_uint_eq(log.n, m->params.n_tensors);
    ck_assert_uint_eq(m->params.n_tensors, _i ? 11 : 10); /* feed_context: dec.Wc */
    ck_assert_double_lt(err, GRADCHECK_TOL);
    printf("lstm gradcheck model%s: max relative error %.2e\n", _i ? " (feed_context)" : "",
           err);
    for (size_t k = 0; k < m->params.n_tensors; k++) {
        double norm = 0.0;
        const double *g = m->params.grad + m->params.offset[k];
        for (size_t i = 0; i < arena_numel(&m->params, k); i++)
            norm += g[i] * g[i];
        ck_assert_msg(norm > 0.0, "%s: gradient is zero", m->params.spec[k].name);
    }
    batch_free(&b);
    gsl_rng_free(r);
    lstm_ops.free(m);
}
END_TEST

/* feed_context: the decoder is the LSTM layer of lstm.h run on the concatenated inputs
 * x_t = [dec.embed[y_{t−1}]; h_Ts] with the weights [dec.Wx | dec.Wc], from (h_Ts, c_Ts):
 * the equations of docs/lstm.md, rebuilt from the layer API and the model's own weights
 * and encoder states. A gradient check alone would accept a context read from the wrong
 * block (h_{Ts−1}, say), or given to some steps only. */
START_TEST(test_feed_context_is_concatenation)
{
    config c = small_config();
    c.feed_context = 1;
    model *m = tu_new_model(&lstm_ops, &c, 33);
    lstm_model *lm = (lstm_model *)m;
    gsl_rng *r = tu_rng(34);
    enum { Ts = NT, Tt = NT + 2 };
    batch b;
    tu_random_batch(&b, NB, Ts, Tt, &c, r);
    ck_assert_int_eq(lstm_ops.reserve(m, NB, Ts, Tt), 0);
    ck_assert(!isnan(lstm_ops.forward(m, &b, NULL)));

    tu_pool p = {0};
    gsl_matrix *X = tu_pool_new(&p, Tt * NB, NE + NH, 0, r);
    gsl_matrix *Wx = tu_pool_new(&p, 4 * NH, NE + NH, 0, r);
    gsl_matrix *Hs = tu_pool_new(&p, (Tt + 1) * NB, NH, 0, r);
    gsl_matrix *Cs = tu_pool_new(&p, (Tt + 1) * NB, NH, 0, r);
    gsl_matrix *Act = tu_pool_new(&p, Tt * NB, 4 * NH, 0, r);
    /* Wx' = [dec.Wx | dec.Wc] (4H, E+H) */
    for (size_t i = 0; i < 4 * NH; i++) {
        for (size_t j = 0; j < NE; j++)
            gsl_matrix_set(Wx, i, j, gsl_matrix_get(lm->w.dec.Wx, i, j));
        for (size_t j = 0; j < NH; j++)
            gsl_matrix_set(Wx, i, NE + j, gsl_matrix_get(lm->w.dec_Wc, i, j));
    }
    /* the encoder's final state, block Ts of the model's arrays: (h_Ts, c_Ts) */
    const double *hT = lm->s.Hs + Ts * NB * NH, *cT = lm->s.Cs + Ts * NB * NH;
    for (size_t i = 0; i < NB; i++)
        for (size_t j = 0; j < NH; j++) {
            gsl_matrix_set(Hs, i, j, hT[i * NH + j]);
            gsl_matrix_set(Cs, i, j, cT[i * NH + j]);
        }
    /* x_t = [dec.embed[y_{t−1}]; h_Ts], row t·B + i for example i */
    for (size_t t = 0; t < Tt; t++)
        for (size_t i = 0; i < NB; i++) {
            const size_t tok = (size_t)b.dec_in[i * Tt + t];
            for (size_t j = 0; j < NE; j++)
                gsl_matrix_set(X, t * NB + i, j, gsl_matrix_get(lm->w.dec_embed, tok, j));
            for (size_t j = 0; j < NH; j++)
                gsl_matrix_set(X, t * NB + i, NE + j, hT[i * NH + j]);
        }
    lstm_weights w = {Wx, lm->w.dec.Wh, lm->w.dec.b};
    lstm_layer_forward(Hs, Cs, Act, X, &w, NB);
    /* the model's decoder states s_1..s_Tt: blocks Ts+1..Ts+Tt */
    for (size_t t = 1; t <= Tt; t++)
        for (size_t i = 0; i < NB; i++)
            for (size_t j = 0; j < NH; j++) {
                const double want = gsl_matrix_get(Hs, t * NB + i, j);
                const double got = lm->s.Hs[((Ts + t) * NB + i) * NH + j];
                ck_assert_msg(fabs(got - want) <= 1e-13,
                              "s_%zu[%zu][%zu]: model %.17g, equations %.17g", t, i, j, got,
                              want);
            }
    tu_pool_free(&p);
    batch_free(&b);
    gsl_rng_free(r);
    lstm_ops.free(m);
}
END_TEST

/* feed_context draws dec.Wc after every other tensor: the others get exactly the values
 * of the model without it (same seed), and dec.Wc is U(−1/√H, 1/√H), not all zero. */
START_TEST(test_feed_context_init)
{
    config c = small_config();
    model *plain = tu_new_model(&lstm_ops, &c, 35);
    c.feed_context = 1;
    model *m = tu_new_model(&lstm_ops, &c, 35);
    ck_assert_uint_eq(m->params.offset[10], plain->params.size);
    ck_assert_mem_eq(m->params.data, plain->params.data, plain->params.size * sizeof(double));
    const double k = 1.0 / sqrt((double)NH);
    const double *wc = m->params.data + m->params.offset[10];
    double largest = 0.0;
    for (size_t i = 0; i < arena_numel(&m->params, 10); i++) {
        ck_assert(fabs(wc[i]) <= k);
        largest = fmax(largest, fabs(wc[i]));
    }
    ck_assert(largest > 0.5 * k);
    lstm_ops.free(plain);
    lstm_ops.free(m);
}
END_TEST

/* The source reaches the output only through the encoder's final state: changing the
 * first source token, the one read longest before any output, must change the loss. */
START_TEST(test_source_reaches_decoder)
{
    config c = small_config();
    model *m = tu_new_model(&lstm_ops, &c, 37);
    gsl_rng *r = tu_rng(38);
    batch b;
    tu_random_batch(&b, NB, NT, NT, &c, r);
    ck_assert_int_eq(lstm_ops.reserve(m, NB, NT, NT), 0);
    double before = lstm_ops.forward(m, &b, NULL);
    b.src[0] = (b.src[0] + 1) % NV;
    double after = lstm_ops.forward(m, &b, NULL);
    ck_assert_msg(fabs(after - before) > 1e-9 * fabs(before),
                  "loss %.17g did not change with the source", before);
    batch_free(&b);
    gsl_rng_free(r);
    lstm_ops.free(m);
}
END_TEST

/* What a trace sink saw: up to 8 matrices of up to 5 × NH. */
typedef struct trace_log {
    size_t n, stop_after;
    char name[8][32], rows[8][8];
    size_t size1[8], size2[8];
    double val[8][5 * NH]; /* row-major copies */
} trace_log;

static int record_trace(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                        const char *cols)
{
    trace_log *log = ctx;
    ck_assert_uint_lt(log->n, 8);
    ck_assert_uint_le(m->size1 * m->size2, 5 * NH);
    ck_assert_str_eq(cols, "unit");
    snprintf(log->name[log->n], sizeof log->name[0], "%s", name);
    snprintf(log->rows[log->n], sizeof log->rows[0], "%s", rows);
    log->size1[log->n] = m->size1;
    log->size2[log->n] = m->size2;
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < m->size2; j++)
            log->val[log->n][i * m->size2 + j] = gsl_matrix_get(m, i, j);
    log->n++;
    return log->n == log->stop_after ? -1 : 0;
}

/* A reservation that cannot be made returns -1 and changes nothing. Each of these sizes
 * overflows size_t while the state is counted, before anything is allocated: B·(Ts+Tt),
 * Ts+Tt+1 itself, Tt = SIZE_MAX, and (Ts+Tt)·B·4H. After the refusals the model still
 * serves the sizes it had, differentiates the forward it ran before them, computes the
 * same bits as a twin that never saw them, and grows when asked for sizes that fit. */
START_TEST(test_reserve_failure)
{
    config c = small_config();
    model *m = tu_new_model(&lstm_ops, &c, 46), *twin = tu_new_model(&lstm_ops, &c, 46);
    gsl_rng *r = tu_rng(47);
    batch b, big;
    tu_random_batch(&b, NB, NT, NT + 1, &c, r);
    tu_random_batch(&big, 5, 7, 6, &c, r);
    ck_assert_int_eq(lstm_ops.reserve(m, NB, NT, NT + 1), 0);
    ck_assert_int_eq(lstm_ops.reserve(twin, NB, NT, NT + 1), 0);
    arena_zero_grad(&m->params);
    arena_zero_grad(&twin->params);
    const double l1 = lstm_ops.forward(m, &b, NULL), l2 = lstm_ops.forward(twin, &b, NULL);
    ck_assert(l1 == l2 && !isnan(l1));

    const size_t absurd[][3] = {{SIZE_MAX / 2, 1, 1}, {1, SIZE_MAX - 1, 1},
                                {1, 1, SIZE_MAX}, {1, SIZE_MAX / 8, 1}};
    for (size_t k = 0; k < sizeof absurd / sizeof absurd[0]; k++)
        ck_assert_msg(lstm_ops.reserve(m, absurd[k][0], absurd[k][1], absurd[k][2]) == -1,
                      "reserve(%zu, %zu, %zu) was not refused", absurd[k][0], absurd[k][1],
                      absurd[k][2]);

    /* the forward before the refusals is still there to differentiate */
    ck_assert_int_eq(lstm_ops.backward(m, &b), 0);
    ck_assert_int_eq(lstm_ops.backward(twin, &b), 0);
    ck_assert_mem_eq(m->params.grad, twin->params.grad, m->params.size * sizeof(double));

    /* and the old sizes still serve: forward, decode, trace give the twin's bits */
    int p1[NB * (NT + 1)], p2[NB * (NT + 1)], o1[NB * (NT + 1)], o2[NB * (NT + 1)];
    ck_assert(lstm_ops.forward(m, &b, p1) == lstm_ops.forward(twin, &b, p2));
    ck_assert_mem_eq(p1, p2, sizeof p1);
    ck_assert_int_eq(lstm_ops.decode(m, b.src, NB, NT, NT + 1, o1), 0);
    ck_assert_int_eq(lstm_ops.decode(twin, b.src, NB, NT, NT + 1, o2), 0);
    ck_assert_mem_eq(o1, o2, sizeof o1);
    trace_log log = {0};
    ck_assert_int_eq(lstm_ops.trace(m, b.src, NT, NT + 1, o1, record_trace, &log), 0);
    ck_assert_uint_eq(log.n, 8);

    /* the capacity is the old one: a larger batch is refused by forward, not read past */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    ck_assert(isnan(lstm_ops.forward(m, &big, NULL)));
    gsl_set_error_handler(old);

    /* and the reservation grows when the sizes fit */
    ck_assert_int_eq(lstm_ops.reserve(m, 5, 7, 6), 0);
    ck_assert(!isnan(lstm_ops.forward(m, &big, NULL)));
    ck_assert_int_eq(lstm_ops.backward(m, &big), 0);
    batch_free(&b);
    batch_free(&big);
    gsl_rng_free(r);
    lstm_ops.free(m);
    lstm_ops.free(twin);
}
END_TEST

/* The layer weights of one side of the model, looked up by name. */
static lstm_weights layer_of(model *m, const char *side)
{
    char name[16];
    gsl_matrix *w[3];
    const char *part[3] = {"Wx", "Wh", "b"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s.%s", side, part[k]);
        long i = arena_find(&m->params, name);
        ck_assert_int_ge(i, 0);
        w[k] = arena_w(&m->params, (size_t)i);
    }
    return (lstm_weights){w[0], w[1], w[2]};
}

/* The trace of one example names its matrices as lstm.h says, and they hold the gates
 * and cells of the steps: rebuilt here from the layer API with the model's own weights,
 * the encoder from zero state, the decoder from the encoder's final state, reading BOS
 * and then the decoded tokens. */
START_TEST(test_trace)
{
    config c = small_config();
    model *m = tu_new_model(&lstm_ops, &c, 41);
    enum { Ts = 5, Tt = 3 };
    const int src[Ts] = {3, 0, 6, 6, 1};
    ck_assert_int_eq(lstm_ops.reserve(m, 2, Ts, Tt), 0);
    int out[Tt], expect[Tt];
    lstm_ops.decode(m, src, 1, Ts, Tt, expect);

    trace_log log = {0};
    ck_assert_int_eq(lstm_ops.trace(m, src, Ts, Tt, out, record_trace, &log), 0);
    ck_assert_mem_eq(out, expect, sizeof out);
    const char *names[8] = {"enc.gate_i", "enc.gate_f", "enc.gate_o", "enc.cell",
                            "dec.gate_i", "dec.gate_f", "dec.gate_o", "dec.cell"};
    ck_assert_uint_eq(log.n, 8);
    for (size_t k = 0; k < 8; k++) {
        ck_assert_str_eq(log.name[k], names[k]);
        ck_assert_str_eq(log.rows[k], k < 4 ? "src" : "tgt");
        ck_assert_uint_eq(log.size1[k], k < 4 ? Ts : Tt);
        ck_assert_uint_eq(log.size2[k], NH);
    }

    /* B = 1: rows are steps. Hs, Cs rows 0..Ts encoder, Ts..Ts+Tt decoder. */
    gsl_rng *r = tu_rng(45);
    tu_pool p = {0};
    gsl_matrix *Xe = tu_pool_new(&p, Ts, NE, 0, r), *Xd = tu_pool_new(&p, Tt, NE, 0, r);
    gsl_matrix *Ae = tu_pool_new(&p, Ts, 4 * NH, 0, r), *Ad = tu_pool_new(&p, Tt, 4 * NH, 0, r);
    gsl_matrix *Hs = tu_pool_new(&p, Ts + Tt + 1, NH, 0, r);
    gsl_matrix *Cs = tu_pool_new(&p, Ts + Tt + 1, NH, 0, r);
    int dec_in[Tt] = {config_bos(&c), out[0], out[1]};
    op_embed(Xe, arena_w(&m->params, (size_t)arena_find(&m->params, "enc.embed")), src, Ts);
    op_embed(Xd, arena_w(&m->params, (size_t)arena_find(&m->params, "dec.embed")), dec_in, Tt);
    lstm_weights enc = layer_of(m, "enc"), dec = layer_of(m, "dec");
    gsl_matrix_view He = gsl_matrix_submatrix(Hs, 0, 0, Ts + 1, NH);
    gsl_matrix_view Ce = gsl_matrix_submatrix(Cs, 0, 0, Ts + 1, NH);
    gsl_matrix_view Hd = gsl_matrix_submatrix(Hs, Ts, 0, Tt + 1, NH);
    gsl_matrix_view Cd = gsl_matrix_submatrix(Cs, Ts, 0, Tt + 1, NH);
    lstm_layer_forward(&He.matrix, &Ce.matrix, Ae, Xe, &enc, 1); /* one example */
    lstm_layer_forward(&Hd.matrix, &Cd.matrix, Ad, Xd, &dec, 1);

    const size_t block[3] = {0, 1, 3}; /* i, f, o in [i f g o] */
    for (size_t k = 0; k < 8; k++) {
        const size_t steps = k < 4 ? Ts : Tt;
        const gsl_matrix *A = k < 4 ? Ae : Ad;
        for (size_t t = 0; t < steps; t++)
            for (size_t j = 0; j < NH; j++) {
                double want = k % 4 == 3
                                  ? gsl_matrix_get(Cs, (k < 4 ? 1 : Ts + 1) + t, j)
                                  : gsl_matrix_get(A, t, block[k % 4] * NH + j);
                tu_assert_rel(log.val[k][t * NH + j], want, 1e-13);
            }
    }

    /* a sink that says stop ends the trace */
    trace_log stop = {.stop_after = 2};
    ck_assert_int_eq(lstm_ops.trace(m, src, Ts, Tt, out, record_trace, &stop), -1);
    ck_assert_uint_eq(stop.n, 2);
    tu_pool_free(&p);
    gsl_rng_free(r);
    lstm_ops.free(m);
}
END_TEST

/* The canonical model: its sizes, parameter count and cost, counted by hand here. */
START_TEST(test_canonical_size_and_flops)
{
    config c;
    config_defaults(&c);
    lstm_ops.defaults(&c);
    ck_assert_uint_eq(c.embed, 32);
    ck_assert_uint_eq(c.hidden, 128);
    ck_assert(c.forget_bias == 1.0);
    model *m = lstm_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    /* per LSTM: 11·32 (embed) + 512·32 (Wx) + 512·128 (Wh) + 512 (b) = 82784;
     * two of them, then 11·128 + 11 for the output: 166987 */
    ck_assert_uint_eq(m->params.size, 166987);
    ck_assert_uint_eq(lstm_ops.n_params(&c), 166987); /* the same walk, nothing allocated */
    const char *names[] = {"enc.embed", "enc.Wx", "enc.Wh", "enc.b", "dec.embed",
                           "dec.Wx", "dec.Wh", "dec.b", "out.W", "out.b"};
    ck_assert_uint_eq(m->params.n_tensors, 10);
    for (size_t k = 0; k < 10; k++)
        ck_assert_str_eq(m->params.spec[k].name, names[k]);
    /* Ts = Tt = 32. Products: 64 steps · 2·512·(32+128) + 32 · 2·11·128 = 10575872,
     * times 3 = 31727616. Element-wise: 64 steps · 41·128 (the gates, 13 a unit forward
     * and 28 backward) + 32 targets · (9·11 + 5) (the output's bias, the loss and their
     * gradients) = 335872 + 3328 = 339200 */
    ck_assert(lstm_ops.flops(&c, 32, 32) == 31727616.0 + 339200.0);
    ck_assert(lstm_ops.flops(&c, 64, 64) == 2 * (31727616.0 + 339200.0));
    /* Ts = 32, Tt = 16: products 48 · 163840 + 16 · 2816 = 7909376, times 3; element-wise
     * 48 · 5248 + 16 · 104 = 253568 */
    ck_assert(lstm_ops.flops(&c, 32, 16) == 23728128.0 + 253568.0);
    lstm_ops.free(m);
    /* feed_context: dec.Wc (512, 128) last, 65,536 more; h_Ts·Wcᵀ once per sequence,
     * 2·512·128 = 131072 flops, times 3; its gradient summed over the 32 decoder steps,
     * 512 additions each */
    c.feed_context = 1;
    m = lstm_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->params.size, 166987 + 512 * 128);
    ck_assert_uint_eq(lstm_ops.n_params(&c), m->params.size);
    ck_assert_uint_eq(m->params.n_tensors, 11);
    for (size_t k = 0; k < 10; k++)
        ck_assert_str_eq(m->params.spec[k].name, names[k]);
    ck_assert_str_eq(m->params.spec[10].name, "dec.Wc");
    ck_assert(lstm_ops.flops(&c, 32, 32) == 31727616.0 + 339200.0 + 3.0 * 131072 + 32 * 512);
    lstm_ops.free(m);
}
END_TEST

/* The model's count is its two layers' (the layer benchmark's `lstm`, whose formula is
 * the model's own) and the rest of the model: at E = H = d, what remains is the output
 * layer and the loss, n · (6·d·V + 9V + 5) with V = 11, for Ts = Tt = n. */
START_TEST(test_flops_are_the_layers_and_the_output)
{
    const layerbench_ops *layer = NULL;
    for (size_t k = 0; layerbench_registry[k]; k++)
        if (strcmp(layerbench_registry[k]->name, "lstm") == 0)
            layer = layerbench_registry[k];
    ck_assert_ptr_nonnull(layer);
    config c;
    config_defaults(&c);
    lstm_ops.defaults(&c);
    for (size_t d = 8; d <= 64; d *= 2)
        for (size_t n = 1; n <= 40; n += 13) {
            c.embed = c.hidden = d;
            const double D = (double)d, N = (double)n;
            const double rest = lstm_ops.flops(&c, n, n) - 2.0 * layer->flops(d, N);
            ck_assert_msg(rest == N * (6.0 * D * 11 + 9.0 * 11 + 5),
                          "d %zu n %zu: %.17g left", d, n, rest);
        }
}
END_TEST

/* Initial weights: the distributions of lstm_init, and the forget-gate bias. */
START_TEST(test_init)
{
    config c;
    config_defaults(&c);
    lstm_ops.defaults(&c);
    c.forget_bias = 2.5;
    c.emb_init = 0.5;
    model *m = tu_new_model(&lstm_ops, &c, 42), *twin = tu_new_model(&lstm_ops, &c, 42);
    arena *a = &m->params;
    ck_assert_mem_eq(a->data, twin->params.data, a->size * sizeof(double));
    const double k = 1.0 / sqrt(128.0);
    const size_t H = 128;
    for (size_t t = 0; t < a->n_tensors; t++) {
        const char *name = a->spec[t].name;
        const double *x = a->data + a->offset[t];
        const size_t n = arena_numel(a, t);
        double sum2 = 0.0, amax = 0.0;
        for (size_t i = 0; i < n; i++) {
            sum2 += x[i] * x[i];
            amax = fmax(amax, fabs(x[i]));
        }
        if (strstr(name, "embed")) {
            double sd = sqrt(sum2 / (double)n); /* 352 draws: within 15% of 0.5 */
            ck_assert_msg(sd > 0.425 && sd < 0.575, "%s: sd %g", name, sd);
        } else if (strcmp(name, "enc.b") == 0 || strcmp(name, "dec.b") == 0) {
            for (size_t i = 0; i < n; i++)
                if (i >= H && i < 2 * H)
                    ck_assert(x[i] == 2.5);
                else
                    ck_assert(fabs(x[i]) <= 2 * k);
        } else {
            /* within the bound, and (for the big tensors) reaching close to it */
            ck_assert_msg(amax <= k && (n < 1000 || amax > 0.99 * k),
                          "%s: max |w| %g, bound %g", name, amax, k);
        }
    }
    lstm_ops.free(m);
    lstm_ops.free(twin);
}
END_TEST

/* ---- error paths ------------------------------------------------------------------------ */

START_TEST(test_errors)
{
    config c = small_config();
    char err[200];
    ck_assert_int_eq(lstm_ops.check(&c, err, sizeof err), 0);
    config bad = c;
    bad.hidden = 0;
    ck_assert_int_eq(lstm_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--hidden"));
    ck_assert_ptr_null(lstm_ops.alloc(&bad));
    bad = c;
    bad.embed = 5000;
    ck_assert_int_eq(lstm_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--embed"));
    bad = c;
    bad.forget_bias = NAN;
    ck_assert_int_eq(lstm_ops.check(&bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--forget-bias"));

    model *m = tu_new_model(&lstm_ops, &c, 43);
    ck_assert_int_eq(lstm_ops.reserve(m, 0, 3, 3), -1);
    ck_assert_int_eq(lstm_ops.reserve(m, NB, SIZE_MAX / 2, SIZE_MAX / 2), -1);
    ck_assert_int_eq(lstm_ops.reserve(m, NB, NT, NT), 0);

    gsl_error_handler_t *old = gsl_set_error_handler(tu_count_error);
    gsl_rng *r = tu_rng(44);
    batch b, longer;
    tu_random_batch(&b, NB, NT, NT, &c, r);
    tu_random_batch(&longer, NB, NT, NT + 1, &c, r);

    tu_errors = 0;
    ck_assert(isnan(lstm_ops.forward(m, &longer, NULL))); /* Tt beyond the reservation */
    ck_assert_int_eq(tu_errors, 1);
    ck_assert_int_eq(lstm_ops.backward(m, &b), -1); /* no forward yet */
    ck_assert_int_eq(tu_errors, 2);
    ck_assert(!isnan(lstm_ops.forward(m, &b, NULL)));
    longer.Tt = NT - 1;
    ck_assert_int_eq(lstm_ops.backward(m, &longer), -1); /* not the batch of the last forward */
    ck_assert_int_eq(tu_errors, 3);
    int out[NB * (NT + 1)] = {0};
    ck_assert_int_eq(lstm_ops.decode(m, b.src, NB, NT, NT + 1, out), -1);
    ck_assert_int_eq(tu_errors, 4);
    ck_assert_int_eq(lstm_ops.decode(m, b.src, NB, NT, NT, out), 0);
    ck_assert_int_eq(lstm_ops.backward(m, &b), -1); /* decode replaced the activations */
    ck_assert_int_eq(tu_errors, 5);
    ck_assert_int_eq(lstm_ops.trace(m, b.src, NT, NT + 1, out, record_trace, NULL), -1);
    ck_assert_int_eq(tu_errors, 6);
    ck_assert_ptr_nonnull(strstr(tu_reason, "lstm trace"));

    /* a token outside [0, V+1) would index outside an embedding table; each is refused
     * after a forward that completed, and the message names where it was */
    int *where[] = {&b.src[NB * NT - 1], &b.dec_in[1], &b.tgt[0]};
    const char *what[] = {"source", "decoder input", "target"};
    for (size_t k = 0; k < 3; k++) {
        const int saved = *where[k];
        ck_assert(!isnan(lstm_ops.forward(m, &b, NULL)));
        *where[k] = NV + 1;
        ck_assert(isnan(lstm_ops.forward(m, &b, NULL)));
        ck_assert_int_eq(tu_errors, 7 + 3 * (int)k);
        ck_assert_msg(strstr(tu_reason, what[k]), "'%s' does not say %s", tu_reason,
                      what[k]);
        *where[k] = -1;
        ck_assert(isnan(lstm_ops.forward(m, &b, NULL)));
        ck_assert_int_eq(tu_errors, 8 + 3 * (int)k);
        *where[k] = saved;
        /* the refused forwards left nothing to differentiate */
        ck_assert_int_eq(lstm_ops.backward(m, &b), -1);
        ck_assert_int_eq(tu_errors, 9 + 3 * (int)k);
    }
    b.src[0] = NV + 1;
    ck_assert_int_eq(lstm_ops.decode(m, b.src, NB, NT, NT, out), -1);
    ck_assert_int_eq(tu_errors, 16);
    ck_assert_int_eq(lstm_ops.trace(m, b.src, NT, NT, out, record_trace, NULL), -1);
    ck_assert_int_eq(tu_errors, 17);

    gsl_set_error_handler(old);
    batch_free(&b);
    batch_free(&longer);
    gsl_rng_free(r);
    lstm_ops.free(m);
}
END_TEST

Suite *make_lstm_suite(void)
{
    Suite *s = suite_create("lstm");
    TCase *mdl = tcase_create("model");
    tcase_add_loop_test(mdl, test_model_gradcheck, 0, 2); /* feed_context off, on */
    tcase_add_test(mdl, test_feed_context_is_concatenation);
    tcase_add_test(mdl, test_feed_context_init);
    tcase_add_test(mdl, test_source_reaches_decoder);
    tcase_add_test(mdl, test_reserve_failure);
    tcase_add_test(mdl, test_trace);
    tcase_add_test(mdl, test_canonical_size_and_flops);
    tcase_add_test(mdl, test_flops_are_the_layers_and_the_output);
    tcase_add_test(mdl, test_init);
    tcase_add_test(mdl, test_errors);
    suite_add_tcase(s, mdl);
    return s;
}
