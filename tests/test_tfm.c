/* test_tfm.c — the model `transformer` of transformer/ (suite: transformer).
 *
 * Design. Every tensor of the whole model by central differences (the ReLU kink watched
 * as in testtfm.h), for each position kind and both layer-norm placements; then what the
 * lesson claims: no information flows leftward through the causal mask (and the check
 * does fail when the mask is removed), attention rows are distributions with masked
 * entries exactly 0, and greedy decoding with the key/value cache equals recomputing the
 * prefix (the contract every model keeps is in test_models.c); the trace, the checks and
 * errors, the canonical sizes. The pieces are test_tfm_attention.c's and
 * test_tfm_layers.c's.
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "../common/core/gradcheck.h"
#include "../common/core/task.h"
#include "../transformer/tfm.h"
#include "testtfm.h"
#include "testutil.h"

/* ---- the whole model ------------------------------------------------------------------ */

/* A small configuration of the model: sizes as different as the model allows. */
static config small_config(int post_ln, const char *pos)
{
    config c;
    config_defaults(&c);
    tfm_ops.defaults(&c);
    strcpy(c.model, "transformer");
    c.symbols = 8; /* V = 9 with BOS */
    c.max_len = 8;
    c.d_model = LY_D;
    c.heads = LY_NH;
    c.d_ff = LY_F;
    c.layers = 2;
    c.post_ln = post_ln;
    strcpy(c.pos, pos);
    return c;
}

/* A model of configuration c, initialised from seed and reserved for (B, Ts, Tt). */
static tfm_model *small_model(const config *c, size_t B, size_t Ts, size_t Tt,
                              unsigned long seed)
{
    char err[160];
    ck_assert_msg(tfm_ops.check(c, err, sizeof err) == 0, "%s", err);
    model *m = tu_new_model(&tfm_ops, c, seed);
    ck_assert_int_eq(tfm_ops.reserve(m, B, Ts, Tt), 0);
    return (tfm_model *)m;
}

/* Smallest distance of any feed-forward pre-activation of the last forward from 0. */
static double model_margin(const tfm_model *m)
{
    double best = INFINITY;
    for (size_t l = 0; l < m->L; l++) {
        const tfm_enc_act *e = &m->s.enc[l];
        const tfm_dec_act *d = &m->s.dec[l];
        best = fmin(best, tt_layer_margin(&e->s2, &e->s1.y.matrix, &m->w.enc[l].ff, m->post_ln));
        best = fmin(best, tt_layer_margin(&d->s3, &d->s2.y.matrix, &m->w.dec[l].ff, m->post_ln));
    }
    return best;
}

typedef struct worst_tensor {
    double err;
    char name[ARENA_NAME_MAX];
    size_t row, col;
} worst_tensor;

static void note_worst(void *ctx, const char *tensor, double err, size_t row, size_t col)
{
    worst_tensor *w = ctx;
    if (tt_report_level() >= 2)
        printf("    %-24s %.2e at (%zu, %zu)\n", tensor, err, row, col);
    if (!(err <= w->err)) {
        w->err = err;
        snprintf(w->name, sizeof w->name, "%s", tensor);
        w->row = row;
        w->col = col;
    }
}

/* gradcheck_model calls the model through m->ops->forward, so the model test points
 * m->ops at a copy of tfm_ops whose forward also watches the ReLU pattern (one model per
 * test process, hence one watch). */
static tt_relu_watch model_watch;
static model_ops watched_ops;

static double watched_forward(model *m, const batch *b, int *pred)
{
    double loss = tfm_ops.forward(m, b, pred);
    tt_watch_check(&model_watch);
    return loss;
}

/* Watches every feed-forward block of m. */
static void watch_model(tfm_model *m)
{
    model_watch = (tt_relu_watch){.n = 2 * m->L};
    ck_assert(model_watch.n <= 8);
    for (size_t l = 0; l < m->L; l++) {
        model_watch.H[2 * l] = &m->s.enc[l].h.matrix;
        model_watch.H[2 * l + 1] = &m->s.dec[l].h.matrix;
    }
    watched_ops = tfm_ops;
    watched_ops.forward = watched_forward;
    m->head.ops = &watched_ops;
}

#define MD_B 3
#define MD_TS 6
#define MD_TT 4
static const char *const pos_kinds[] = {"sinusoidal", "learned", "none"};

/* The whole model (gradcheck_model): every parameter tensor, pre-LN and post-LN order,
 * each kind of positions. */
START_TEST(test_model_gradcheck)
{
    config c = small_config(_i / 3, pos_kinds[_i % 3]);
    batch b;
    gsl_rng *r = tu_rng(71);
    tu_random_batch(&b, MD_B, MD_TS, MD_TT, &c, r);
    tfm_model *m = NULL;
    double margin = 0.0;
    for (unsigned long seed = 81;
         seed == 81 || (seed < 81 + SEED_TRIES && margin < KINK_MARGIN); seed++) {
        if (m)
            tfm_ops.free(&m->head);
        m = small_model(&c, MD_B, MD_TS, MD_TT, seed);
        ck_assert(isfinite(tfm_ops.forward(&m->head, &b, NULL)));
        margin = model_margin(m);
    }
    ck_assert_msg(margin >= KINK_MARGIN, "no seed clear of the ReLU kink");
    watch_model(m);
    tt_watch_start(&model_watch);
    worst_tensor w = {0};
    double err = gradcheck_model(&m->head, &b, 1, note_worst, &w);
    tt_watch_end(&model_watch);
    ck_assert_msg(err < GRADCHECK_TOL, "%s: relative error %.3g at (%zu, %zu)", w.name, err,
                  w.row, w.col);
    char what[64];
    snprintf(what, sizeof what, "model %s %s", _i / 3 ? "post-LN" : "pre-LN",
             pos_kinds[_i % 3]);
    tt_report(what, err);
    tfm_ops.free(&m->head);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* A step whose attention weights are made again in the backward gives the same loss and
 * the same gradients, bit for bit, as one that kept them. */
START_TEST(test_model_weights_made_again)
{
    config c = small_config(0, "sinusoidal");
    batch b;
    gsl_rng *r = tu_rng(93);
    tu_random_batch(&b, MD_B, MD_TS, MD_TT, &c, r);
    tfm_model *m = small_model(&c, MD_B, MD_TS, MD_TT, 94);
    arena *a = &m->head.params;
    double loss[2], *g[2];
    for (int never = 0; never < 2; never++) {
        m->s.never_keep = never;
        arena_zero_grad(a);
        loss[never] = tfm_ops.forward(&m->head, &b, NULL);
        /* a small batch keeps its weights unless told not to */
        ck_assert((m->s.dec[0].self.p.matrix.data == NULL) == never);
        ck_assert((m->s.enc[1].att.pbuf == NULL) == !never);
        tfm_ops.backward(&m->head, &b);
        g[never] = malloc(a->size * sizeof(double));
        ck_assert_ptr_nonnull(g[never]);
        memcpy(g[never], a->grad, a->size * sizeof(double));
    }
    ck_assert(memcmp(&loss[0], &loss[1], sizeof loss[0]) == 0);
    ck_assert(memcmp(g[0], g[1], a->size * sizeof(double)) == 0);
    free(g[0]);
    free(g[1]);
    tfm_ops.free(&m->head);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* Which batches keep their weights: all of them below TFM_KEEP_MAPS_MAX bytes. */
START_TEST(test_keep_maps_bound)
{
    /* canonical sizes, NH 4, L 2: 3·T² weights per head and layer, B·NH·L heads */
    ck_assert(tfm_keep_maps(32, 32, 32, 4, 2));   /* 6 MiB */
    ck_assert(!tfm_keep_maps(32, 64, 64, 4, 2));  /* 24 MiB */
    ck_assert(!tfm_keep_maps(32, 128, 128, 4, 2)); /* 96 MiB */
    /* exactly at the bound, and one sequence more: T = 1 gives 3 weights per head */
    const size_t words = TFM_KEEP_MAPS_MAX / sizeof(double);
    ck_assert(tfm_keep_maps(words / 3, 1, 1, 1, 1));
    ck_assert(!tfm_keep_maps(words / 3 + 1, 1, 1, 1, 1));
    ck_assert(!tfm_keep_maps(1, 1024, 1024, 2, 1)); /* 2 heads of 3·2^20 weights */
    ck_assert(!tfm_keep_maps(SIZE_MAX / 2, 4, 4, 4, 2));
    ck_assert(!tfm_keep_maps(1, SIZE_MAX / 2, SIZE_MAX / 2, 1, 1));
}
END_TEST

/* Are rows i ≤ t of every sequence's logits bitwise the same in x and y (B·Tt, V)? Sets
 * *right_differs when some row i > t differs. */
static int left_rows_same(const gsl_matrix *x, const gsl_matrix *y, size_t B, size_t Tt,
                          size_t t, int *right_differs)
{
    int same = 1;
    *right_differs = 0;
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < Tt; i++) {
            int eq = memcmp(gsl_matrix_const_ptr(x, b * Tt + i, 0),
                            gsl_matrix_const_ptr(y, b * Tt + i, 0),
                            x->size2 * sizeof(double)) == 0;
            if (i <= t && !eq)
                same = 0;
            if (i > t && !eq)
                *right_differs = 1;
        }
    return same;
}

/* No information flows leftward: changing decoder inputs after position t leaves the
 * logits at positions ≤ t bitwise unchanged. Without the mask the same check fails. */
START_TEST(test_no_leftward_flow)
{
    const size_t B = 2, Ts = 5, Tt = 6;
    config c = small_config(_i, "sinusoidal");
    batch b, changed;
    gsl_rng *r = tu_rng(101);
    tu_random_batch(&b, B, Ts, Tt, &c, r);
    tu_random_batch(&changed, B, Ts, Tt, &c, r);
    memcpy(changed.src, b.src, B * Ts * sizeof(int));
    memcpy(changed.tgt, b.tgt, B * Tt * sizeof(int));
    tfm_model *m = small_model(&c, B, Ts, Tt, 102);
    gsl_matrix *base = gsl_matrix_alloc(B * Tt, m->V);
    for (int no_mask = 0; no_mask <= 1; no_mask++) {
        m->s.no_mask = no_mask;
        tfm_ops.forward(&m->head, &b, NULL);
        gsl_matrix_memcpy(base, &m->s.logits.matrix);
        for (size_t t = 0; t + 1 < Tt; t++) {
            /* every decoder input after position t replaced by a different symbol */
            for (size_t k = 0; k < B * Tt; k++)
                changed.dec_in[k] = k % Tt > t ? (b.dec_in[k] + 1) % (int)c.symbols
                                               : b.dec_in[k];
            tfm_ops.forward(&m->head, &changed, NULL);
            int right_differs;
            int same = left_rows_same(base, &m->s.logits.matrix, B, Tt, t, &right_differs);
            ck_assert_msg(right_differs, "t=%zu: the change did not reach later positions", t);
            if (!no_mask)
                ck_assert_msg(same, "t=%zu: a later input changed an earlier logit", t);
            else
                ck_assert_msg(!same, "t=%zu: without the mask the check saw no change", t);
        }
    }
    gsl_matrix_free(base);
    tfm_ops.free(&m->head);
    batch_free(&b);
    batch_free(&changed);
    gsl_rng_free(r);
}
END_TEST

/* Every attention row is a distribution: it sums to 1; in decoder self-attention the
 * entries after the query are exactly 0; in encoder self-attention every entry is > 0. */
START_TEST(test_attention_rows)
{
    const size_t B = 2, Ts = 5, Tt = 4;
    config c = small_config(_i, "sinusoidal");
    batch b;
    gsl_rng *r = tu_rng(111);
    tu_random_batch(&b, B, Ts, Tt, &c, r);
    tfm_model *m = small_model(&c, B, Ts, Tt, 112);
    ck_assert(isfinite(tfm_ops.forward(&m->head, &b, NULL)));
    for (size_t l = 0; l < m->L; l++) {
        const gsl_matrix *Pe = &m->s.enc[l].att.p.matrix;
        const gsl_matrix *Ps = &m->s.dec[l].self.p.matrix;
        const gsl_matrix *Pc = &m->s.dec[l].cross.p.matrix;
        ck_assert(Pe->size1 == B * m->NH * Ts && Pe->size2 == Ts);
        for (size_t i = 0; i < Pe->size1; i++) {
            double sum = 0.0;
            for (size_t k = 0; k < Ts; k++) {
                ck_assert_msg(gsl_matrix_get(Pe, i, k) > 0.0, "encoder row %zu blind at %zu",
                              i, k);
                sum += gsl_matrix_get(Pe, i, k);
            }
            tu_assert_rel(sum, 1.0, 1e-12);
        }
        for (size_t row = 0; row < Ps->size1; row++) {
            const size_t i = row % Tt; /* the query's position */
            double sum = 0.0;
            for (size_t k = 0; k < Tt; k++) {
                const double p = gsl_matrix_get(Ps, row, k);
                if (k > i)
                    ck_assert_msg(p == 0.0 && !signbit(p), "masked entry (%zu, %zu) = %g", i,
                                  k, p);
                else
                    ck_assert(p > 0.0);
                sum += p;
            }
            tu_assert_rel(sum, 1.0, 1e-12);
        }
        for (size_t row = 0; row < Pc->size1; row++) {
            double sum = 0.0;
            for (size_t k = 0; k < Ts; k++)
                sum += gsl_matrix_get(Pc, row, k);
            tu_assert_rel(sum, 1.0, 1e-12);
        }
    }
    tfm_ops.free(&m->head);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* In self-attention the queries, keys and values come from the same place: changing one
 * source token j of sequence 0 changes its own query row, and, through key j, the first
 * encoder layer's attention row of every other position of sequence 0, in every head;
 * sequence 1's rows stay bitwise the same. (Were the keys taken from anywhere but the
 * encoder's own input, the other rows of sequence 0 would not move.) */
START_TEST(test_self_attention_one_source)
{
    const size_t B = 2, Ts = 5, Tt = 4, j = 2;
    config c = small_config(0, "sinusoidal");
    batch b;
    gsl_rng *r = tu_rng(131);
    tu_random_batch(&b, B, Ts, Tt, &c, r);
    tfm_model *m = small_model(&c, B, Ts, Tt, 132);
    ck_assert(isfinite(tfm_ops.forward(&m->head, &b, NULL)));
    const gsl_matrix *Pe = &m->s.enc[0].att.p.matrix;
    gsl_matrix *before = gsl_matrix_alloc(Pe->size1, Pe->size2);
    gsl_matrix_memcpy(before, Pe);
    b.src[j] = (b.src[j] + 1) % (int)c.symbols; /* sequence 0, position j */
    ck_assert(isfinite(tfm_ops.forward(&m->head, &b, NULL)));
    for (size_t seq = 0; seq < B; seq++)
        for (size_t h = 0; h < m->NH; h++)
            for (size_t i = 0; i < Ts; i++) {
                const size_t row = (seq * m->NH + h) * Ts + i;
                int moved = 0;
                for (size_t k = 0; k < Ts; k++)
                    moved |= gsl_matrix_get(Pe, row, k) != gsl_matrix_get(before, row, k);
                ck_assert_msg(moved == (seq == 0), "sequence %zu, head %zu, query %zu: %s", seq,
                              h, i, moved ? "moved" : "did not move");
            }
    gsl_matrix_free(before);
    tfm_ops.free(&m->head);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* Greedy decoding with the key/value cache gives the tokens that recomputing the prefix
 * gives: the argmax of a teacher-forced forward on the decoder's own outputs. */
START_TEST(test_greedy_matches_recompute)
{
    const size_t B = 3, T = 7;
    config c = small_config(_i / 2, _i % 2 ? "learned" : "sinusoidal");
    batch b;
    gsl_rng *r = tu_rng(121);
    tu_random_batch(&b, B, T, T, &c, r);
    tfm_model *m = small_model(&c, B, T, T, 122 + (unsigned long)_i);
    int out[3 * 7], pred[3 * 7], out2[2 * 7];
    tfm_ops.decode(&m->head, b.src, B, T, T, out);
    int seen[16] = {0}, distinct = 0;
    for (size_t k = 0; k < B * T; k++) {
        ck_assert(out[k] >= 0 && (size_t)out[k] < m->V);
        distinct += !seen[out[k]]++;
        b.tgt[k] = out[k];
        b.dec_in[k] = k % T ? out[k - 1] : config_bos(&c);
    }
    ck_assert_msg(distinct >= 2, "the decoder emits one token only: a weak test");
    ck_assert(isfinite(tfm_ops.forward(&m->head, &b, pred)));
    for (size_t k = 0; k < B * T; k++)
        ck_assert_msg(pred[k] == out[k], "position %zu: cached %d, recomputed %d", k, out[k],
                      pred[k]);
    /* a smaller batch inside the reservation decodes the same */
    tfm_ops.decode(&m->head, b.src, 2, T, T, out2);
    for (size_t k = 0; k < 2 * T; k++)
        ck_assert_int_eq(out2[k], out[k]);
    tfm_ops.free(&m->head);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* ---- traces -------------------------------------------------------------------------- */

typedef struct trace_log {
    size_t n, stop_after, Ts, Tt;
    char names[16][32];
} trace_log;

static int log_sink(void *ctx, const char *name, const gsl_matrix *P, const char *rows,
                    const char *cols)
{
    trace_log *log = ctx;
    ck_assert(log->n < 16);
    snprintf(log->names[log->n++], sizeof log->names[0], "%s", name);
    const int enc = strncmp(name, "enc_self", 8) == 0;
    const int self = strncmp(name, "dec_self", 8) == 0;
    ck_assert_str_eq(rows, enc ? "src" : "tgt");
    ck_assert_str_eq(cols, enc || !self ? "src" : "tgt_in"); /* keys: BOS, then outputs */
    ck_assert_uint_eq(P->size1, enc ? log->Ts : log->Tt);
    ck_assert_uint_eq(P->size2, enc || !self ? log->Ts : log->Tt);
    for (size_t i = 0; i < P->size1; i++)
        for (size_t k = i + 1; self && k < P->size2; k++)
            ck_assert(gsl_matrix_get(P, i, k) == 0.0); /* the upper triangle is empty */
    return log->stop_after && log->n >= log->stop_after ? -1 : 0;
}

START_TEST(test_trace)
{
    const size_t Ts = 5, Tt = 6;
    config c = small_config(0, "sinusoidal");
    batch b;
    gsl_rng *r = tu_rng(131);
    tu_random_batch(&b, 2, Ts, Tt, &c, r);
    tfm_model *m = small_model(&c, 2, Ts, Tt, 132);
    int out[6], dec[2 * 6];
    trace_log log = {.Ts = Ts, .Tt = Tt};
    ck_assert_int_eq(tfm_ops.trace(&m->head, b.src, Ts, Tt, out, log_sink, &log), 0);
    ck_assert_uint_eq(log.n, 3 * m->L * m->NH);
    ck_assert_str_eq(log.names[0], "enc_self.l0.h0");
    ck_assert_str_eq(log.names[1], "enc_self.l0.h1");
    ck_assert_str_eq(log.names[2], "enc_self.l1.h0");
    ck_assert_str_eq(log.names[4], "dec_self.l0.h0");
    ck_assert_str_eq(log.names[11], "cross.l1.h1");
    tfm_ops.decode(&m->head, b.src, 2, Ts, Tt, dec);
    for (size_t t = 0; t < Tt; t++)
        ck_assert_int_eq(out[t], dec[t]);
    /* a sink that says stop is obeyed */
    trace_log stop = {.Ts = Ts, .Tt = Tt, .stop_after = 1};
    ck_assert_int_eq(tfm_ops.trace(&m->head, b.src, Ts, Tt, out, log_sink, &stop), -1);
    ck_assert_uint_eq(stop.n, 1);
    tfm_ops.free(&m->head);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* ---- configuration, sizes and errors --------------------------------------------------- */

/* The last call reported the error number `count`, whose reason names what. */
static void assert_reported(int count, const char *what)
{
    ck_assert_int_eq(tu_errors, count);
    ck_assert_msg(strstr(tu_reason, what) != NULL, "reason '%s' does not name '%s'",
                  tu_reason, what);
}

/* Every gradient of the arena is 0: a refused call wrote none. */
static void assert_no_gradient(const tfm_model *m)
{
    const arena *a = &m->head.params;
    for (size_t k = 0; k < a->size; k++)
        ck_assert(a->grad[k] == 0.0);
}

START_TEST(test_check_and_errors)
{
    char err[160];
    config c = small_config(0, "sinusoidal");
    ck_assert_int_eq(tfm_ops.check(&c, err, sizeof err), 0);
    c.heads = 3; /* 10 is not divisible by 3 */
    ck_assert_int_eq(tfm_ops.check(&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--heads"));
    ck_assert_ptr_null(tfm_ops.alloc(&c));
    c.heads = LY_NH;
    strcpy(c.pos, "rotary");
    ck_assert_int_eq(tfm_ops.check(&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--pos"));
    strcpy(c.pos, "sinusoidal");

    /* lengths beyond max_len cannot be reserved */
    tfm_model *m = small_model(&c, 2, 5, 4, 141);
    model *mm = &m->head;
    ck_assert_int_eq(tfm_ops.reserve(mm, 2, c.max_len + 1, 4), -1);
    batch b;
    gsl_rng *r = tu_rng(142);
    tu_random_batch(&b, 3, 5, 4, &c, r);
    int out[3 * 4], tr[8];
    for (size_t k = 0; k < 12; k++)
        out[k] = -7;
    gsl_error_handler_t *old = gsl_set_error_handler(tu_count_error);
    tu_errors = 0;

    /* batches beyond the reservation are refused, not overrun, and out is not written */
    ck_assert(isnan(tfm_ops.forward(mm, &b, NULL)));
    assert_reported(1, "reservation");
    ck_assert_int_eq(tfm_ops.decode(mm, b.src, 3, 5, 4, out), -1);
    assert_reported(2, "reservation");
    for (size_t k = 0; k < 12; k++)
        ck_assert_int_eq(out[k], -7);
    trace_log log = {.Ts = 6, .Tt = 4};
    ck_assert_int_eq(tfm_ops.trace(mm, b.src, 6, 4, tr, log_sink, &log), -1);
    assert_reported(3, "reservation");
    ck_assert_uint_eq(log.n, 0);

    /* backward needs the forward of its own batch, the last call before it */
    b.B = 2; /* the first two sequences: within the reservation */
    ck_assert_int_eq(tfm_ops.backward(mm, &b), -1);
    assert_reported(4, "no forward");
    ck_assert(isfinite(tfm_ops.forward(mm, &b, NULL)));
    b.Tt = 3;
    ck_assert_int_eq(tfm_ops.backward(mm, &b), -1);
    assert_reported(5, "no forward");
    b.Tt = 4;
    ck_assert_int_eq(tfm_ops.decode(mm, b.src, 2, 5, 4, out), 0);
    ck_assert_int_eq(tfm_ops.backward(mm, &b), -1); /* decode replaced the activations */
    assert_reported(6, "no forward");
    assert_no_gradient(m);

    /* a token outside [0, V) in the source, the decoder input or the target: NaN */
    const int V = (int)m->V;
    int *where[] = {&b.src[2 * 5 - 1], &b.dec_in[1], &b.tgt[0]};
    const char *what[] = {"source", "decoder input", "target"};
    for (size_t k = 0; k < 3; k++) {
        const int saved = *where[k];
        *where[k] = V;
        ck_assert(isnan(tfm_ops.forward(mm, &b, NULL)));
        assert_reported(7 + 2 * (int)k, what[k]);
        *where[k] = -1;
        ck_assert(isnan(tfm_ops.forward(mm, &b, NULL)));
        assert_reported(8 + 2 * (int)k, what[k]);
        *where[k] = saved;
    }
    ck_assert_int_eq(tfm_ops.backward(mm, &b), -1); /* the failed forwards left nothing */
    assert_reported(13, "no forward");
    /* a backward handed other tokens than its forward's checks them too */
    ck_assert(isfinite(tfm_ops.forward(mm, &b, NULL)));
    const int saved = b.dec_in[1];
    b.dec_in[1] = V;
    ck_assert_int_eq(tfm_ops.backward(mm, &b), -1);
    assert_reported(14, "vocabulary");
    b.dec_in[1] = saved;
    assert_no_gradient(m);

    /* decoding or tracing a bad source */
    b.src[0] = V;
    ck_assert_int_eq(tfm_ops.decode(mm, b.src, 2, 5, 4, out), -1);
    assert_reported(15, "source");
    trace_log log2 = {.Ts = 5, .Tt = 4};
    ck_assert_int_eq(tfm_ops.trace(mm, b.src, 5, 4, tr, log_sink, &log2), -1);
    assert_reported(16, "source");
    ck_assert_uint_eq(log2.n, 0);
    b.src[0] = 0;
    gsl_set_error_handler(old);

    /* growing the reservation keeps the model usable */
    b.B = 3;
    ck_assert_int_eq(tfm_ops.reserve(mm, 3, 5, 4), 0);
    ck_assert(isfinite(tfm_ops.forward(mm, &b, NULL)));
    ck_assert_int_eq(tfm_ops.backward(mm, &b), 0);
    tfm_ops.free(mm);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

/* The canonical model has the reference's defaults, its parameter count and its FLOPs. */
START_TEST(test_canonical_sizes)
{
    config c;
    config_defaults(&c);
    tfm_ops.defaults(&c);
    strcpy(c.model, "transformer");
    c.symbols = 10;
    ck_assert_uint_eq(c.d_model, 64);
    ck_assert_uint_eq(c.heads, 4);
    ck_assert_uint_eq(c.d_ff, 256);
    ck_assert_uint_eq(c.layers, 2);
    ck_assert_str_eq(c.pos, "sinusoidal");
    ck_assert(c.emb_scale == 1.0 && c.emb_init == 1.0 && c.lr == 1e-3 && c.warmup == 0);
    model *m = tfm_ops.alloc(&c);
    ck_assert_ptr_nonnull(m);
    /* nn.Transformer(64, 4, 2, 2, 256) + two (11, 64) embeddings + Linear(64, 11), as
     * counted by PyTorch for the twin of tests/pytorch/twin.py */
    ck_assert_uint_eq(m->params.size, 235851);
    /* The products are bench_torch.py's analytic count (forward matmul FLOPs per source
     * and target token, times 3 for training, times L tokens), less the corner of the
     * decoder's self-attention its row blocks skip (tfm_scores_causal): it scores
     * `pairs` of the L² per head, 2·2·64 flops each forward. Element-wise, per layer:
     * encoder self-attention 4 heads · (10·L² + L) (scaling, softmax and backward; 1/sum)
     * + 4·64·2L (biases) + 64·2L (scaling dQ, dK); decoder self-attention the same with the
     * mask (11 per pair) over its pairs, dK scaled over `reach` rows; cross-attention as the
     * encoder's; per position, two (encoder) and three (decoder) layer norms of 25·64 + 7,
     * two feed-forwards of 4·256 + 2·64 and two residual gradients of 64. Then per
     * position the two final norms, the embeddings with sinusoids (4·64 each), and per
     * target the output's bias, the loss and their gradients (9·11 + 5). */
    static const struct {
        size_t L;
        double pairs, reach;
    } causal[] = {{16, 256, 16}, {32, 1024, 32}, {64, 32 * 32 + 32 * 64, 32 + 64},
                  {128, 32.0 * (32 + 64 + 96 + 128), 32 + 64 + 96 + 128}};
    for (size_t k = 0; k < 4; k++) {
        const double L = (double)causal[k].L, pairs = causal[k].pairs;
        const double enc = 2 * (2 * 64 * 192 + 2 * 64 * 64 + 2 * 2 * 64 * 256 + 4 * L * 64);
        const double dec = 2 * (2 * 64 * 192 + 2 * 64 * 64 + 2 * 64 * 64 * 2 + 2 * 64 * 128 +
                                2 * 2 * 64 * 256 + 2 * 4 * L * 64);
        const double ref = 3.0 * (enc + dec + 2 * 64 * 11) * L;
        const double skipped = 2 * 3.0 * 4 * 64 * (L * L - pairs);
        const double attn_full = 4 * (10 * L * L + L) + 4 * 64 * 2 * L + 64 * 2 * L;
        const double attn_causal =
            4 * (11 * pairs + L) + 4 * 64 * 2 * L + 64 * (L + causal[k].reach);
        const double per_position = 5 * (25 * 64 + 7) + 2 * (4 * 256 + 2 * 64) + 2 * 64;
        const double ew = 2 * (2 * attn_full + attn_causal + per_position * L) +
                          2 * L * (25 * 64 + 7) + 2 * L * 4 * 64 + L * (9 * 11 + 5);
        tu_assert_rel(tfm_ops.flops(&c, causal[k].L, causal[k].L), ref - skipped + ew, 1e-15);
    }
    /* What grows with the square of a length (second differences), per layer: the
     * encoder's self-attention, 12·64 flops of products and 10 per head element-wise for
     * each pair; the decoder's, 11 per head with the mask (up to 32 positions, one row
     * block: every pair); the cross-attention, with Ts·Tt, 12·64 + 10·4 */
    for (size_t ts = 5; ts <= 30; ts += 25)
        for (size_t tt = 3; tt <= 30; tt += 27) {
            const double f = tfm_ops.flops(&c, ts, tt);
            ck_assert(tfm_ops.flops(&c, ts + 1, tt) - 2 * f + tfm_ops.flops(&c, ts - 1, tt) ==
                      2 * 2 * (12.0 * 64 + 10 * 4));
            ck_assert(tfm_ops.flops(&c, ts, tt + 1) - 2 * f + tfm_ops.flops(&c, ts, tt - 1) ==
                      2 * 2 * (12.0 * 64 + 11 * 4));
            ck_assert(tfm_ops.flops(&c, ts + 1, tt + 1) - tfm_ops.flops(&c, ts + 1, tt) -
                          tfm_ops.flops(&c, ts, tt + 1) + f ==
                      2 * (12.0 * 64 + 10 * 4));
        }
    /* initialisation: gains 1, attention biases 0, embeddings N(0, 1) */
    gsl_rng *r = tu_rng(151);
    tfm_ops.init(m, r);
    tfm_model *t = (tfm_model *)m;
    ck_assert(gsl_matrix_get(t->w.enc[1].ln2.g, 0, 5) == 1.0);
    ck_assert(gsl_matrix_isnull(t->w.dec[0].cross.b_in));
    double ss = 0.0;
    for (size_t k = 0; k < 11 * 64; k++)
        ss += t->w.enc_emb->data[k] * t->w.enc_emb->data[k];
    ck_assert(fabs(ss / (11 * 64) - 1.0) < 0.2);
    tfm_ops.free(m);
    gsl_rng_free(r);
}
END_TEST

/* The pairs the causal self-attention scores per head, as its row blocks take them
 * (attention.c: blocks of 32 rows, or of ⌈T/16⌉ beyond 512 positions, each against the
 * keys its last row may see), and the key rows of dK those blocks write. */
START_TEST(test_causal_scores)
{
    static const struct {
        size_t T;
        double pairs, reach;
    } cases[] = {
        {1, 1, 1},
        {16, 256, 16},
        {32, 1024, 32},
        {33, 32 * 32 + 1 * 33, 32 + 33},
        /* 62.5% of the square, the figure attention.c quotes */
        {128, 0.625 * 128 * 128, 32 + 64 + 96 + 128},
        /* blocks of 38 rows: 15 whole ones reaching 38, 76, .., 570, then 30 rows to 600 */
        {600, 38 * 38 * 120 + 30 * 600, 38 * 120 + 600},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tfm_scores s = tfm_scores_causal(cases[k].T);
        ck_assert_msg(s.pairs == cases[k].pairs && s.reach == cases[k].reach && s.masked,
                      "T %zu: pairs %g reach %g", cases[k].T, s.pairs, s.reach);
    }
    const tfm_scores full = tfm_scores_full(7, 5);
    ck_assert(full.pairs == 35 && full.reach == 5 && !full.masked);
}
END_TEST

Suite *make_tfm_suite(void)
{
    Suite *s = suite_create("transformer");
    TCase *whole = tcase_create("model");
    tcase_set_timeout(whole, 120); /* the model gradient checks under a sanitizer */
    tcase_add_loop_test(whole, test_model_gradcheck, 0, 6);
    tcase_add_test(whole, test_model_weights_made_again);
    tcase_add_test(whole, test_keep_maps_bound);
    tcase_add_loop_test(whole, test_no_leftward_flow, 0, 2);
    tcase_add_loop_test(whole, test_attention_rows, 0, 2);
    tcase_add_test(whole, test_self_attention_one_source);
    tcase_add_loop_test(whole, test_greedy_matches_recompute, 0, 4);
    tcase_add_test(whole, test_trace);
    tcase_add_test(whole, test_check_and_errors);
    tcase_add_test(whole, test_canonical_sizes);
    tcase_add_test(whole, test_causal_scores);
    suite_add_tcase(s, whole);
    return s;
}
