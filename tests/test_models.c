/* test_models.c — every registered model, in every variant it lists, held to the
 * contract of common/core/model.h; and a golden regression test of whole training runs.
 *
 * Design. No model is named here. The cases are the pairs (model, variant) met by walking
 * model_registry and each model's ops->variants, numbered in that order, and every test
 * is a loop test over those numbers: a model or a variant is covered as soon as it is
 * registered. A case's configuration is the generic defaults, then the model's
 * (ops->defaults), then its gradient-check sizes (small and all different), then V = 5
 * data symbols, B = 2 and max_len 16, then the variant's settings (config_find and
 * config_set, as the command line applies a flag). Batches have Ts ≠ Tt, so a model that
 * mixes the two lengths up cannot pass.
 *
 * The contract. A token outside [0, V), sizes outside the reservation, or a backward
 * without its forward are refused: forward returns NaN, backward, decode and trace -1,
 * a message is kept for model_last_error(), and no gradient is written. The test runner
 * installs model_error_handler, so a report never aborts. To see that a call reported,
 * a test first leaves a marker message (NO_REPORT) in the handler and then checks that
 * the call replaced it. Out-of-bounds reads are caught by `make SANITIZE=1 check`.
 *
 * A second backward. model.h: backward "accumulates (+=) the gradient of the mean loss"
 * of "the last forward", and refuses when "the last call was not a forward of a batch of
 * these sizes". Backward reads what forward kept and does not consume it, so it may run
 * twice on one forward (only forward, decode and trace replace what it reads); the test
 * requires a second backward without a forward to succeed and to double every gradient.
 *
 * The golden test trains each case for 60 steps from a fixed seed through the program
 * ($ATTNLAB) and compares the CRC-32 of model.ckpt with tests/fixtures/
 * golden-checkpoints.tsv. Those bits depend on the BLAS kernel alone (not on the
 * compiler: docs/reliability.md), so the fixture is keyed by kernel, and the test forces
 * each kernel it knows in turn (OPENBLAS_CORETYPE) until the machine runs one. tests/
 * golden.sh regenerates the fixture: it runs this test with ATTNLAB_GOLDEN_WRITE set to a
 * file, and the test then writes its lines there instead of comparing. The lines of
 * kernel "gsl" pin the program built on GSL's CBLAS ($ATTNLAB_GSL, make BLAS=gsl) the
 * same way: the browser page's CBLAS, and the bits it must keep.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/core/config.h"
#include "../common/core/crc32.h"
#include "../common/core/model.h"
#include "../common/core/task.h"
#include "testutil.h"

/* The small sizes: B sequences, source and target lengths (different), data symbols,
 * longest sequence a model accepts. */
enum { NB = 2, NTS = 5, NTT = 4, NSYM = 5, MAXLEN = 16 };

/* The message a test leaves in the error handler before a call that must report. */
#define NO_REPORT "no error reported yet"

/* The words of the shared reports (common/core/model.c) for sizes outside the reservation
 * and for a backward without its forward. */
#define OUTSIDE "sizes outside the reservation"
#define NO_FORWARD "no forward of this batch to differentiate"

/* ---- the cases: every model × every variant ---------------------------------------- */

typedef struct model_case {
    const model_ops *ops;
    const char *variant; /* "key=value ..." settings; "" for the defaults */
    char label[96];      /* "name" or "name [variant]", for messages */
    int index;           /* its number among all cases */
} model_case;

/* A model that lists no variants is tested with its defaults only. */
static const char *const defaults_only[] = {"", NULL};

static const char *const *variants_of(const model_ops *ops)
{
    return ops->variants ? ops->variants : defaults_only;
}

static size_t case_count(void)
{
    size_t n = 0;
    for (size_t k = 0; model_registry[k]; k++)
        for (const char *const *v = variants_of(model_registry[k]); *v; v++)
            n++;
    return n;
}

/* Case number i, in registry order and then variant order. */
static model_case case_at(int i)
{
    model_case mc = {0};
    int n = 0;
    for (size_t k = 0; model_registry[k] && !mc.ops; k++)
        for (const char *const *v = variants_of(model_registry[k]); *v && !mc.ops; v++)
            if (n++ == i) {
                mc.ops = model_registry[k];
                mc.variant = *v;
            }
    ck_assert_msg(mc.ops != NULL, "no case %d", i);
    mc.index = i;
    snprintf(mc.label, sizeof mc.label, mc.variant[0] ? "%s [%s]" : "%s", mc.ops->name,
             mc.variant);
    return mc;
}

/* Applies the space-separated key=value settings to c, each through the settings table
 * as a command-line flag would be. */
static void apply_settings(config *c, const char *settings)
{
    char buf[256], err[200];
    snprintf(buf, sizeof buf, "%s", settings);
    char *save = NULL;
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        ck_assert_msg(eq != NULL, "variant setting '%s' is not key=value", kv);
        *eq = '\0';
        const config_field *f = config_find(kv);
        ck_assert_msg(f != NULL, "variant setting '%s' is not a configuration key", kv);
        ck_assert_msg(config_set(c, f, eq + 1, err, sizeof err) == 0, "%s", err);
    }
}

/* The configuration of case mc at its small sizes (see the top of the file), or, with
 * canonical set, at the model's own sizes. */
static config case_config(const model_case *mc, int canonical)
{
    config c;
    config_defaults(&c);
    snprintf(c.model, sizeof c.model, "%s", mc->ops->name);
    mc->ops->defaults(&c);
    if (!canonical) {
        mc->ops->gradcheck_sizes(&c);
        c.symbols = NSYM;
        c.batch = NB;
        c.max_len = MAXLEN;
    }
    apply_settings(&c, mc->variant);
    char err[256];
    ck_assert_msg(mc->ops->check(&c, err, sizeof err) == 0, "%s: %s", mc->label, err);
    return c;
}

/* ---- what a refused call must leave behind ---------------------------------------- */

static void mark_no_report(void)
{
    model_error_handler(NO_REPORT, "test_models.c", 0, 0);
}

/* Fails unless the last call kept an error message, naming word when word is not NULL. */
static void assert_reported(const char *what, const char *word)
{
    const char *msg = model_last_error();
    ck_assert_msg(msg[0] != '\0' && strstr(msg, NO_REPORT) == NULL,
                  "%s: no error reported", what);
    ck_assert_msg(!word || strstr(msg, word), "%s: the message '%s' does not name '%s'",
                  what, msg, word);
}

/* Fails unless every gradient is still 0 (the arena was zeroed before the calls). */
static void assert_grad_zero(const model *m, const char *what)
{
    const arena *a = &m->params;
    for (size_t i = 0; i < a->size; i++)
        ck_assert_msg(a->grad[i] == 0.0, "%s: gradient entry %zu written (%g)", what, i,
                      a->grad[i]);
}

/* The report of a refused call must be the shared one of common/core/model.h's opening
 * checks: "NAME CALL: WHY" (model_open_call, model_open_backward), so every model says the
 * same thing for the same fault. */
static void assert_reported_as(const char *what, const model_ops *ops, const char *call,
                               const char *why)
{
    char expect[160];
    snprintf(expect, sizeof expect, "%s %s: %s", ops->name, call, why);
    assert_reported(what, expect);
}

/* A trace sink that takes everything. */
static int take_all(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                    const char *cols)
{
    (void)name, (void)m, (void)rows, (void)cols;
    ++*(size_t *)ctx;
    return 0;
}

/* ---- 1. tokens outside [0, V) ------------------------------------------------------- */

/* A token −1 and a token V (one past BOS) in turn at the first and at the last position
 * of src, dec_in and tgt: forward refuses each (NaN, a message naming the token) and
 * writes no gradient, and the backward that follows has nothing to differentiate. decode
 * and trace refuse such a source. The model still works afterwards. */
START_TEST(test_bad_tokens_refused)
{
    const model_case mc = case_at(_i);
    const model_ops *ops = mc.ops;
    const config c = case_config(&mc, 0);
    model *m = tu_new_model(mc.ops, &c, 11);
    ck_assert_int_eq(ops->reserve(m, NB, NTS, NTT), 0);
    gsl_rng *r = tu_rng(12);
    batch b;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    int pred[NB * NTT], out[NB * NTT];
    const int bad[2] = {-1, (int)config_vocab(&c)};
    const struct {
        const char *name;
        int *tok;
        size_t n;
        const char *why; /* the shared report's words */
    } where[3] = {{"src", b.src, NB * NTS, "a source token is outside the vocabulary"},
                  {"dec_in", b.dec_in, NB * NTT,
                   "a decoder input token is outside the vocabulary"},
                  {"tgt", b.tgt, NB * NTT, "a target token is outside the vocabulary"}};
    char what[160];

    for (size_t w = 0; w < 3; w++)
        for (size_t v = 0; v < 2; v++)
            for (size_t p = 0; p < 2; p++) {
                const size_t at = p ? where[w].n - 1 : 0;
                snprintf(what, sizeof what, "%s: %s[%zu] = %d", mc.label, where[w].name, at,
                         bad[v]);
                /* a good forward first: the refused one must also end its backward */
                ck_assert(isfinite(ops->forward(m, &b, NULL)));
                arena_zero_grad(&m->params);
                const int saved = where[w].tok[at];
                where[w].tok[at] = bad[v];
                mark_no_report();
                const double loss = ops->forward(m, &b, pred);
                ck_assert_msg(isnan(loss), "%s: forward returned %g, not NaN", what, loss);
                assert_reported_as(what, ops, "forward", where[w].why);
                mark_no_report();
                ck_assert_msg(ops->backward(m, &b) == -1,
                              "%s: backward after the refused forward did not refuse", what);
                assert_reported_as(what, ops, "backward", NO_FORWARD);
                assert_grad_zero(m, what);
                where[w].tok[at] = saved;
            }

    /* decode and trace read a source only */
    for (size_t v = 0; v < 2; v++)
        for (size_t p = 0; p < 2; p++) {
            const size_t at = p ? NB * NTS - 1 : 0, at1 = p ? NTS - 1 : 0;
            const int saved = b.src[at];
            b.src[at] = bad[v];
            snprintf(what, sizeof what, "%s: decode, src[%zu] = %d", mc.label, at, bad[v]);
            mark_no_report();
            ck_assert_msg(ops->decode(m, b.src, NB, NTS, NTT, out) == -1, "%s: not refused",
                          what);
            assert_reported_as(what, ops, "decode", where[0].why);
            b.src[at] = saved;
            if (ops->trace) {
                const int saved1 = b.src[at1];
                b.src[at1] = bad[v];
                snprintf(what, sizeof what, "%s: trace, src[%zu] = %d", mc.label, at1, bad[v]);
                size_t calls = 0;
                mark_no_report();
                ck_assert_msg(ops->trace(m, b.src, NTS, NTT, out, take_all, &calls) == -1,
                              "%s: not refused", what);
                assert_reported_as(what, ops, "trace", where[0].why);
                b.src[at1] = saved1;
            }
        }

    /* and the model still works */
    arena_zero_grad(&m->params);
    ck_assert(isfinite(ops->forward(m, &b, NULL)));
    ck_assert_int_eq(ops->backward(m, &b), 0);
    ck_assert_int_eq(ops->decode(m, b.src, NB, NTS, NTT, out), 0);
    batch_free(&b);
    gsl_rng_free(r);
    ops->free(m);
}
END_TEST

/* ---- 2. backward accumulates ------------------------------------------------------ */

/* forward, backward, then backward again without a forward (see the top of the file):
 * every gradient is then twice what the first backward left. Twice to rounding, not
 * bit for bit: a gradient that sums several contributions, g = ((0 + a) + b) + c, forms
 * ((g + a) + b) + c the second time, which may round differently from 2g (by one unit in
 * the last place, as measured). The bound is 1e-12 of the largest gradient of the model:
 * it scales with the contributions (which may cancel to a much smaller sum), and a
 * backward that overwrote instead of adding, or added a term twice, misses it by far. */
START_TEST(test_backward_twice_doubles)
{
    const model_case mc = case_at(_i);
    const model_ops *ops = mc.ops;
    const config c = case_config(&mc, 0);
    model *m = tu_new_model(mc.ops, &c, 21);
    ck_assert_int_eq(ops->reserve(m, NB, NTS, NTT), 0);
    gsl_rng *r = tu_rng(22);
    batch b;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    arena *a = &m->params;
    arena_zero_grad(a);
    ck_assert(isfinite(ops->forward(m, &b, NULL)));
    ck_assert_int_eq(ops->backward(m, &b), 0);
    double *once = malloc(a->size * sizeof *once);
    ck_assert_ptr_nonnull(once);
    memcpy(once, a->grad, a->size * sizeof *once);
    double big = 0.0;
    for (size_t i = 0; i < a->size; i++)
        big = fmax(big, fabs(once[i]));
    ck_assert_msg(big > 0.0, "%s: every gradient is 0", mc.label);
    ck_assert_msg(ops->backward(m, &b) == 0, "%s: a second backward was refused", mc.label);
    for (size_t k = 0; k < a->n_tensors; k++)
        for (size_t i = a->offset[k]; i < a->offset[k] + arena_numel(a, k); i++)
            ck_assert_msg(fabs(a->grad[i] - 2.0 * once[i]) <= 1e-12 * big,
                          "%s: %s[%zu] is %.17g after two backwards, %.17g after one",
                          mc.label, a->spec[k].name, i - a->offset[k], a->grad[i], once[i]);
    free(once);
    batch_free(&b);
    gsl_rng_free(r);
    ops->free(m);
}
END_TEST

/* ---- 3. decoding is the teacher-forced argmax ------------------------------------- */

/* Number of different tokens among y[0..n). */
static size_t distinct_tokens(const int *y, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && y[j] != y[i])
            j++;
        d += j == i;
    }
    return d;
}

/* y = decode(src); a forward with dec_in = (BOS, y_1 .. y_{Tt−1}) predicts y exactly:
 * the step-by-step path and the all-steps-at-once path compute one function. A decoder
 * that repeats one token would make this weak, so the first of a few initialisations
 * whose decodes hold two different tokens or more is used. */
START_TEST(test_decode_is_teacher_forced_argmax)
{
    enum { TT = 7, SEEDS = 16 };
    const model_case mc = case_at(_i);
    const model_ops *ops = mc.ops;
    const config c = case_config(&mc, 0);
    gsl_rng *r = tu_rng(32);
    batch b;
    tu_random_batch(&b, NB, NTS, TT, &c, r);
    int y[NB * TT], pred[NB * TT];
    model *m = NULL;
    for (unsigned long seed = 31; seed < 31 + SEEDS; seed++) {
        if (m)
            ops->free(m);
        m = tu_new_model(mc.ops, &c, seed);
        ck_assert_int_eq(ops->reserve(m, NB, NTS, TT), 0);
        ck_assert_int_eq(ops->decode(m, b.src, NB, NTS, TT, y), 0);
        if (distinct_tokens(y, NB * TT) >= 2)
            break;
    }
    ck_assert_msg(distinct_tokens(y, NB * TT) >= 2,
                  "%s: %d initialisations decode one token only", mc.label, SEEDS);
    for (size_t i = 0; i < NB; i++)
        for (size_t t = 0; t < TT; t++) {
            const int tok = y[i * TT + t];
            ck_assert_msg(tok >= 0 && (size_t)tok < config_vocab(&c), "%s: decoded %d",
                          mc.label, tok);
            b.tgt[i * TT + t] = tok;
            b.dec_in[i * TT + t] = t ? y[i * TT + t - 1] : config_bos(&c);
        }
    ck_assert(isfinite(ops->forward(m, &b, pred)));
    for (size_t i = 0; i < NB * TT; i++)
        ck_assert_msg(pred[i] == y[i], "%s: position %zu: forward predicts %d, decode gave %d",
                      mc.label, i, pred[i], y[i]);
    batch_free(&b);
    gsl_rng_free(r);
    ops->free(m);
}
END_TEST

/* ---- 4. the reservation changes no bit -------------------------------------------- */

/* One training step of a batch: zeroed gradients, forward (loss, predictions), backward;
 * then a decode of its sources. */
typedef struct step_result {
    double loss;
    int pred[NB * NTT], out[NB * NTT];
} step_result;

static void step(model *m, const batch *b, step_result *res)
{
    arena_zero_grad(&m->params);
    res->loss = m->ops->forward(m, b, res->pred);
    ck_assert(isfinite(res->loss));
    ck_assert_int_eq(m->ops->backward(m, b), 0);
    ck_assert_int_eq(m->ops->decode(m, b->src, NB, NTS, NTT, res->out), 0);
}

static void assert_same_step(const model_case *mc, const char *when, const model *m1,
                             const step_result *r1, const model *m2, const step_result *r2)
{
    ck_assert_msg(memcmp(&r1->loss, &r2->loss, sizeof r1->loss) == 0,
                  "%s, %s: loss %.17g vs %.17g", mc->label, when, r1->loss, r2->loss);
    ck_assert_msg(memcmp(r1->pred, r2->pred, sizeof r1->pred) == 0,
                  "%s, %s: predictions differ", mc->label, when);
    ck_assert_msg(memcmp(r1->out, r2->out, sizeof r1->out) == 0, "%s, %s: decodes differ",
                  mc->label, when);
    const arena *a = &m1->params;
    for (size_t i = 0; i < a->size; i++)
        ck_assert_msg(memcmp(&a->grad[i], &m2->params.grad[i], sizeof(double)) == 0,
                      "%s, %s: gradient entry %zu: %.17g vs %.17g", mc->label, when, i,
                      a->grad[i], m2->params.grad[i]);
}

/* Two models with the same weights, one reserved for exactly (B, Ts, Tt), one for
 * (3B, Ts + 7, Tt + 9) that first ran a larger batch: the loss, predictions, gradients
 * and decodes of a batch are bitwise the same; and again after each model decoded a
 * batch of other sizes in between. */
START_TEST(test_reservation_changes_no_bit)
{
    const model_case mc = case_at(_i);
    const model_ops *ops = mc.ops;
    const config c = case_config(&mc, 0);
    model *exact = tu_new_model(mc.ops, &c, 41), *large = tu_new_model(mc.ops, &c, 41);
    ck_assert_int_eq(ops->reserve(exact, NB, NTS, NTT), 0);
    ck_assert_int_eq(ops->reserve(large, 3 * NB, NTS + 7, NTT + 9), 0);
    gsl_rng *r = tu_rng(42);
    batch b, big;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    tu_random_batch(&big, 3 * NB, NTS + 7, NTT + 9, &c, r);
    int other[3 * NB * (NTT + 9)];

    /* the large model's workspace first holds a larger step */
    arena_zero_grad(&large->params);
    ck_assert(isfinite(ops->forward(large, &big, NULL)));
    ck_assert_int_eq(ops->backward(large, &big), 0);

    step_result r1, r2;
    step(exact, &b, &r1);
    step(large, &b, &r2);
    assert_same_step(&mc, "reserved exactly vs 3B, Ts+7, Tt+9", exact, &r1, large, &r2);

    /* a decode of other sizes in between: B = 1 and a longer target in the large model,
     * a shorter one in the exact one */
    ck_assert_int_eq(ops->decode(large, big.src, 1, NTS + 7, NTT + 9, other), 0);
    ck_assert_int_eq(ops->decode(large, big.src, 3 * NB, NTS + 3, NTT + 1, other), 0);
    ck_assert_int_eq(ops->decode(exact, b.src, 1, NTS - 2, NTT - 1, other), 0);
    step(exact, &b, &r1);
    step(large, &b, &r2);
    assert_same_step(&mc, "after decodes of other sizes", exact, &r1, large, &r2);

    /* a smaller reservation never shrinks a larger one: the large batch still runs */
    ck_assert_int_eq(ops->reserve(large, 1, 1, 1), 0);
    ck_assert(isfinite(ops->forward(large, &big, NULL)));
    ck_assert_int_eq(ops->decode(large, big.src, 3 * NB, NTS + 7, NTT + 9, other), 0);

    batch_free(&b);
    batch_free(&big);
    gsl_rng_free(r);
    ops->free(exact);
    ops->free(large);
}
END_TEST

/* ---- 5. n_params and the parameter walk ------------------------------------------- */

/* ops->n_params(cfg) = the arena's size = Σ rows·cols of its size table; the tensors
 * tile the block in table order; every name is unique. At the small sizes and at the
 * model's own. */
START_TEST(test_n_params_is_the_walk)
{
    const model_case mc = case_at(_i);
    ck_assert_msg(mc.ops->variants && mc.ops->variants[0] && mc.ops->variants[0][0] == '\0',
                  "%s: the variants list must start with \"\" (the defaults)", mc.ops->name);
    for (int canonical = 0; canonical < 2; canonical++) {
        const config c = case_config(&mc, canonical);
        model *m = mc.ops->alloc(&c);
        ck_assert_ptr_nonnull(m);
        const arena *a = &m->params;
        ck_assert_msg(mc.ops->n_params(&c) == a->size, "%s: n_params %zu, arena %zu",
                      mc.label, mc.ops->n_params(&c), a->size);
        ck_assert_uint_gt(a->n_tensors, 0);
        size_t sum = 0;
        for (size_t k = 0; k < a->n_tensors; k++) {
            const arena_spec *s = &a->spec[k];
            ck_assert_msg(a->offset[k] == sum, "%s: %s starts at %zu, not %zu", mc.label,
                          s->name, a->offset[k], sum);
            ck_assert_msg(s->rows > 0 && s->cols > 0, "%s: %s is empty", mc.label, s->name);
            sum += s->rows * s->cols;
            for (size_t j = 0; j < k; j++)
                ck_assert_msg(strcmp(a->spec[j].name, s->name) != 0,
                              "%s: tensors %zu and %zu are both called %s", mc.label, j, k,
                              s->name);
        }
        ck_assert_msg(sum == a->size, "%s: the size table holds %zu, the arena %zu", mc.label,
                      sum, a->size);
        mc.ops->free(m);
    }
}
END_TEST

/* ---- 6. sizes outside the reservation --------------------------------------------- */

/* Reserved for (B, Ts, Tt): one more sequence, one more source or one more target
 * position is refused by forward (NaN), backward, decode and trace (-1), with a message
 * and no gradient written. */
START_TEST(test_sizes_outside_refused)
{
    const model_case mc = case_at(_i);
    const model_ops *ops = mc.ops;
    const config c = case_config(&mc, 0);
    model *m = tu_new_model(mc.ops, &c, 51);
    ck_assert_int_eq(ops->reserve(m, NB, NTS, NTT), 0);
    gsl_rng *r = tu_rng(52);
    static const size_t over[3][3] = {
        {NB + 1, NTS, NTT}, {NB, NTS + 1, NTT}, {NB, NTS, NTT + 1}};
    int out[(NB + 1) * (NTT + 1)];
    char what[160];
    arena_zero_grad(&m->params);
    for (size_t k = 0; k < 3; k++) {
        const size_t B = over[k][0], Ts = over[k][1], Tt = over[k][2];
        batch b;
        tu_random_batch(&b, B, Ts, Tt, &c, r);
        snprintf(what, sizeof what, "%s: (B, Ts, Tt) = (%zu, %zu, %zu) reserved (%d, %d, %d)",
                 mc.label, B, Ts, Tt, NB, NTS, NTT);
        mark_no_report();
        const double loss = ops->forward(m, &b, out);
        ck_assert_msg(isnan(loss), "%s: forward returned %g, not NaN", what, loss);
        assert_reported_as(what, ops, "forward", OUTSIDE);
        mark_no_report();
        ck_assert_msg(ops->backward(m, &b) == -1, "%s: backward not refused", what);
        assert_reported_as(what, ops, "backward", NO_FORWARD);
        mark_no_report();
        ck_assert_msg(ops->decode(m, b.src, B, Ts, Tt, out) == -1, "%s: decode not refused",
                      what);
        assert_reported_as(what, ops, "decode", OUTSIDE);
        if (ops->trace && B == NB) { /* a trace decodes one sequence */
            size_t calls = 0;
            mark_no_report();
            ck_assert_msg(ops->trace(m, b.src, Ts, Tt, out, take_all, &calls) == -1,
                          "%s: trace not refused", what);
            assert_reported_as(what, ops, "trace", OUTSIDE);
        }
        assert_grad_zero(m, what);
        batch_free(&b);
    }
    gsl_rng_free(r);
    ops->free(m);
}
END_TEST

/* ---- 7. backward without its forward ---------------------------------------------- */

/* Backward is refused (-1, a message, no gradient) with no forward yet, with a batch of
 * other sizes than the last forward's, and after a decode replaced what forward kept. */
START_TEST(test_backward_needs_its_forward)
{
    const model_case mc = case_at(_i);
    const model_ops *ops = mc.ops;
    const config c = case_config(&mc, 0);
    model *m = tu_new_model(mc.ops, &c, 61);
    ck_assert_int_eq(ops->reserve(m, NB, NTS, NTT), 0);
    gsl_rng *r = tu_rng(62);
    batch b, fewer;
    tu_random_batch(&b, NB, NTS, NTT, &c, r);
    tu_random_batch(&fewer, NB - 1, NTS, NTT, &c, r);
    int out[NB * NTT];
    char what[160];
    arena_zero_grad(&m->params);

    snprintf(what, sizeof what, "%s: backward before any forward", mc.label);
    mark_no_report();
    ck_assert_msg(ops->backward(m, &b) == -1, "%s: not refused", what);
    assert_reported_as(what, ops, "backward", NO_FORWARD);

    ck_assert(isfinite(ops->forward(m, &b, NULL)));
    snprintf(what, sizeof what, "%s: backward of a batch of B = %d after a forward of B = %d",
             mc.label, NB - 1, NB);
    mark_no_report();
    ck_assert_msg(ops->backward(m, &fewer) == -1, "%s: not refused", what);
    assert_reported_as(what, ops, "backward", NO_FORWARD);

    ck_assert_int_eq(ops->decode(m, b.src, NB, NTS, NTT, out), 0);
    snprintf(what, sizeof what, "%s: backward after a decode", mc.label);
    mark_no_report();
    ck_assert_msg(ops->backward(m, &b) == -1, "%s: not refused", what);
    assert_reported_as(what, ops, "backward", NO_FORWARD);
    assert_grad_zero(m, what);

    /* a refused decode, too, leaves nothing to differentiate */
    ck_assert(isfinite(ops->forward(m, &b, NULL)));
    const int keep = b.src[0];
    b.src[0] = -1;
    ck_assert_int_eq(ops->decode(m, b.src, NB, NTS, NTT, out), -1);
    b.src[0] = keep;
    snprintf(what, sizeof what, "%s: backward after a refused decode", mc.label);
    mark_no_report();
    ck_assert_msg(ops->backward(m, &b) == -1, "%s: not refused", what);
    assert_reported_as(what, ops, "backward", NO_FORWARD);
    assert_grad_zero(m, what);

    batch_free(&b);
    batch_free(&fewer);
    gsl_rng_free(r);
    ops->free(m);
}
END_TEST

/* ---- 8. golden checkpoints ---------------------------------------------------------- */

/* Appends to args (from *n on, at most max) the flags of the settings of a variant:
 * key=value becomes --key value ('-' for '_'), a switch key=1 becomes --key. The strings
 * live in store. */
static void variant_flags(const char *variant, char store[][64], const char **args,
                          size_t *n, size_t max)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", variant);
    char *save = NULL;
    size_t s = 0;
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        ck_assert_msg(eq != NULL, "variant setting '%s' is not key=value", kv);
        *eq = '\0';
        const config_field *f = config_find(kv);
        ck_assert_msg(f != NULL, "variant setting '%s' is not a configuration key", kv);
        ck_assert(*n + 2 < max);
        char *flag = store[s++];
        snprintf(flag, 64, "--%s", f->name);
        for (char *p = flag; *p; p++)
            *p = *p == '_' ? '-' : *p;
        args[(*n)++] = flag;
        if (f->type == CFG_BOOL)
            ck_assert_msg(strcmp(eq + 1, "1") == 0, "%s: only 1 can be given as a flag", kv);
        else
            args[(*n)++] = strcpy(store[s++], eq + 1);
    }
}

/* The CRC-32 of a checkpoint file: of all its bytes but the last four, which hold that
 * very CRC (docs/checkpoint-format.md). The CRC of the whole file would say nothing: a
 * message followed by its own CRC-32 always gives the same value, 2144df1c. Fails unless
 * the file's last four bytes agree. */
static uint32_t checkpoint_crc32(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert(fseek(f, 0, SEEK_END) == 0);
    const long size = ftell(f);
    ck_assert_msg(size > 4, "%s: %ld bytes", path, size);
    rewind(f);
    unsigned char buf[65536];
    uint32_t crc = 0;
    for (long left = size - 4; left > 0;) {
        const size_t want = left < (long)sizeof buf ? (size_t)left : sizeof buf;
        ck_assert(fread(buf, 1, want, f) == want);
        crc = crc32_update(crc, buf, want);
        left -= (long)want;
    }
    const size_t n = fread(buf, 1, 4, f);
    fclose(f);
    ck_assert_uint_eq(n, 4);
    const uint32_t stored = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
                            (uint32_t)buf[3] << 24; /* little-endian */
    ck_assert_msg(crc == stored, "%s: stored CRC %08lx, computed %08lx", path,
                  (unsigned long)stored, (unsigned long)crc);
    return crc;
}

/* The fixture: (kernel, model, variant, crc) lines. */
typedef struct golden_line {
    char core[64], model[64], variant[128];
    uint32_t crc;
} golden_line;

/* Reads tests/fixtures/golden-checkpoints.tsv (under $ATTNLAB_SRC) into at most max
 * lines; returns their number. */
static size_t golden_read(golden_line *g, size_t max)
{
    const char *root = getenv("ATTNLAB_SRC");
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/golden-checkpoints.tsv",
             root && *root ? root : ".");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t n = 0;
    for (int first = 1; fgets(line, sizeof line, f); first = 0) {
        char crc[16];
        if (first)
            continue; /* the header */
        ck_assert_msg(n < max, "%s: more than %zu lines", path, max);
        ck_assert_msg(sscanf(line, "%63[^\t]\t%63[^\t]\t%127[^\t]\t%15[0-9a-f]", g[n].core,
                             g[n].model, g[n].variant, crc) == 4,
                      "%s: bad line '%s'", path, line);
        g[n].crc = (uint32_t)strtoul(crc, NULL, 16);
        n++;
    }
    fclose(f);
    return n;
}

/* glibc's tunable that hides processor features from its own choice of routines: with
 * it, glibc's libm takes its variants for a processor without AVX2, FMA or AVX-512 (other
 * C libraries ignore the variable). The program's results must not change. */
#define GOLDEN_PLAIN_CPU "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX512DQ,-AVX512BW,-AVX512VL"

/* Trains the case for 60 steps from seed 1 through the program, with the BLAS kernel
 * forced to core (OPENBLAS_CORETYPE; NULL: the machine's own) and, when tunables is not
 * NULL, GLIBC_TUNABLES set to it; returns the CRC-32 of its model.ckpt; the kernel the
 * program really ran (its build.tsv) goes to ran. */
static uint32_t golden_run(const model_case *mc, const char *core, const char *tunables,
                           char *ran, size_t nran)
{
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/attnlab-golden-%ld-%d", (long)getpid(), mc->index);
    const char *args[48] = {"train", "--quiet", "--steps", "60", "--train-len", "3:9",
                            "--eval-lengths", "4,8", "--samples", "16",
                            "--checkpoint-every", "25", "--seed", "1", "--out", dir,
                            "--model", mc->ops->name};
    size_t n = 18;
    char store[16][64];
    variant_flags(mc->variant, store, args, &n, 47);
    args[n] = NULL;
    if (core)
        setenv("OPENBLAS_CORETYPE", core, 1);
    if (tunables)
        setenv("GLIBC_TUNABLES", tunables, 1);
    char err[2048];
    const int status = tu_run_quiet(args, err, sizeof err);
    unsetenv("OPENBLAS_CORETYPE"); /* under CK_FORK=no the next test shares this process */
    unsetenv("GLIBC_TUNABLES");
    ck_assert_msg(status == 0, "%s: training failed (status %d): %s", mc->label, status, err);
    char path[256], line[256];
    snprintf(path, sizeof path, "%s/build.tsv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    snprintf(ran, nran, "unknown");
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "blas_core\t", 10) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(ran, nran, "%.*s", (int)(nran - 1), line + 10);
        }
    fclose(f);
    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    const uint32_t crc = checkpoint_crc32(path);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    return crc;
}

/* The fixture's name for the runs of the program built on GSL's CBLAS (make BLAS=gsl),
 * which has no kernels to choose: the bits of GSL's order of operations, on any
 * processor. test_golden_checkpoint_on_gsl_cblas holds that program to these lines. */
#define GOLDEN_GSL "gsl"

/* Runs the case with each BLAS kernel of the fixture in turn until one takes (GLIBC_TUNABLES
 * set to tunables unless NULL) and fails unless its checkpoint's CRC-32 is the fixture's
 * for that kernel; says so on stdout when the machine runs none of the kernels. */
static void golden_check(const model_case *mc, const char *variant, const char *tunables)
{
    static golden_line g[256];
    char ran[64];
    const size_t n = golden_read(g, 256);
    for (size_t k = 0; k < n; k++) {
        if (strcmp(g[k].model, mc->ops->name) != 0 || strcmp(g[k].variant, variant) != 0 ||
            strcmp(g[k].core, GOLDEN_GSL) == 0)
            continue;
        const uint32_t crc = golden_run(mc, g[k].core, tunables, ran, sizeof ran);
        if (strcmp(ran, g[k].core) != 0)
            continue; /* this machine cannot run that kernel: try the next one */
        ck_assert_msg(crc == g[k].crc,
                      "%s%s%s: model.ckpt has CRC-32 %08lx, the fixture %08lx (BLAS kernel "
                      "%s): the numerics changed; if that was meant, run tests/golden.sh",
                      mc->label, tunables ? " with GLIBC_TUNABLES=" : "",
                      tunables ? tunables : "", (unsigned long)crc, (unsigned long)g[k].crc,
                      ran);
        return;
    }
    printf("golden checkpoint of %s not checked: this machine runs none of the BLAS kernels "
           "the fixture has a line for (tests/golden.sh writes them)\n", mc->label);
}

/* The CRC-32 of a 60-step run's model.ckpt must equal the fixture's for the BLAS kernel it
 * ran on. The bits do not depend on the compiler or its flags (-ffp-contract=off; see
 * docs/reliability.md), only on the kernel, so the fixture is keyed by kernel alone, and
 * the run is made with each kernel the fixture knows forced in turn (OPENBLAS_CORETYPE)
 * until one takes: so the test checks on any machine that can run one of them, built with
 * any compiler. With ATTNLAB_GOLDEN_WRITE=FILE it appends this case's line for the kernel
 * in use to FILE instead (tests/golden.sh). */
START_TEST(test_golden_checkpoint)
{
    const model_case mc = case_at(_i);
    const char *variant = mc.variant[0] ? mc.variant : "defaults";
    char ran[64];
    const char *out = getenv("ATTNLAB_GOLDEN_WRITE");
    if (out && *out) {
        const uint32_t crc =
            golden_run(&mc, getenv("OPENBLAS_CORETYPE"), NULL, ran, sizeof ran);
        FILE *f = fopen(out, "a");
        ck_assert_msg(f != NULL, "cannot open %s", out);
        fprintf(f, "%s\t%s\t%s\t%08lx\n", ran, mc.ops->name, variant, (unsigned long)crc);
        ck_assert_int_eq(fclose(f), 0);
        return;
    }
    golden_check(&mc, variant, NULL);
}
END_TEST

/* The same runs with glibc's processor features masked (GOLDEN_PLAIN_CPU): glibc then
 * gives the program its libm variants for an older processor, as another machine would.
 * No value of libm's reaches the weights (common/core/fastmath.c), so the checkpoints must be
 * the fixture's still. Before the project had its own log, sin, cos and pow, this failed
 * for every model. Where the C library is not glibc the variable is ignored and the case
 * repeats the one above. */
START_TEST(test_golden_checkpoint_on_a_plainer_processor)
{
    const char *out = getenv("ATTNLAB_GOLDEN_WRITE");
    if (out && *out)
        return; /* tests/golden.sh is writing the fixture: nothing to compare with yet */
    const model_case mc = case_at(_i);
    golden_check(&mc, mc.variant[0] ? mc.variant : "defaults", GOLDEN_PLAIN_CPU);
}
END_TEST

/* The same runs by the program built on GSL's CBLAS, $ATTNLAB_GSL (make check builds it:
 * make BLAS=gsl), against the fixture's lines for GOLDEN_GSL: the CBLAS of the browser
 * page, whose cblas_dgemm is the project's own (common/core/gemm.c) and must keep the bits
 * of GSL's reference gslcblas, which wrote those lines. Skipped, with one line, where
 * ATTNLAB_GSL is not set; with ATTNLAB_GOLDEN_WRITE=FILE it appends its line to FILE. */
START_TEST(test_golden_checkpoint_on_gsl_cblas)
{
    const char *gsl = getenv("ATTNLAB_GSL");
    if (!gsl || !*gsl) {
        if (_i == 0)
            printf("golden checkpoints of the build on GSL's CBLAS not checked: ATTNLAB_GSL "
                   "names no program (make check sets it)\n");
        return;
    }
    const model_case mc = case_at(_i);
    const char *variant = mc.variant[0] ? mc.variant : "defaults";
    char ran[64], program[1024];
    snprintf(program, sizeof program, "%s", tu_program());
    setenv("ATTNLAB", gsl, 1); /* golden_run runs $ATTNLAB */
    const uint32_t crc = golden_run(&mc, NULL, NULL, ran, sizeof ran);
    setenv("ATTNLAB", program, 1);
    ck_assert_msg(strcmp(ran, "unknown") == 0,
                  "%s is not built on GSL's CBLAS: it runs BLAS kernel %s", gsl, ran);
    const char *out = getenv("ATTNLAB_GOLDEN_WRITE");
    if (out && *out) {
        FILE *f = fopen(out, "a");
        ck_assert_msg(f != NULL, "cannot open %s", out);
        fprintf(f, "%s\t%s\t%s\t%08lx\n", GOLDEN_GSL, mc.ops->name, variant,
                (unsigned long)crc);
        ck_assert_int_eq(fclose(f), 0);
        return;
    }
    static golden_line g[256];
    const size_t n = golden_read(g, 256);
    for (size_t k = 0; k < n; k++)
        if (strcmp(g[k].core, GOLDEN_GSL) == 0 && strcmp(g[k].model, mc.ops->name) == 0 &&
            strcmp(g[k].variant, variant) == 0) {
            ck_assert_msg(crc == g[k].crc,
                          "%s on GSL's CBLAS (%s): model.ckpt has CRC-32 %08lx, the fixture "
                          "%08lx: the numerics changed; if that was meant, run "
                          "tests/golden.sh", mc.label, gsl, (unsigned long)crc,
                          (unsigned long)g[k].crc);
            return;
        }
    ck_abort_msg("the fixture has no line for %s %s on GSL's CBLAS (tests/golden.sh writes it)",
                 mc.ops->name, variant);
}
END_TEST

/* Every registered model's small preset (ops->small, the page's) is a list of settings
 * that config_set accepts on the model's defaults, that the model's check accepts, and
 * that makes the model smaller than its defaults. */
START_TEST(test_small_preset_is_valid_and_small)
{
    for (size_t k = 0; model_registry[k]; k++) {
        const model_ops *ops = model_registry[k];
        if (!ops->small)
            continue;
        config c, d;
        char err[256], buf[256];
        config_defaults(&c);
        c.symbols = 10;
        ops->defaults(&c);
        d = c;
        snprintf(buf, sizeof buf, "%s", ops->small);
        for (char *save = NULL, *kv = strtok_r(buf, " ", &save); kv;
             kv = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(kv, '=');
            ck_assert_msg(eq != NULL, "%s: small setting '%s' is not key=value", ops->name, kv);
            *eq = '\0';
            const config_field *f = config_find(kv);
            ck_assert_msg(f != NULL, "%s: small setting %s is no setting", ops->name, kv);
            ck_assert_msg(config_set(&c, f, eq + 1, err, sizeof err) == 0, "%s: %s", ops->name,
                          err);
        }
        ck_assert_msg(ops->check(&c, err, sizeof err) == 0, "%s: %s", ops->name, err);
        ck_assert_msg(ops->n_params(&c) < ops->n_params(&d), "%s: small is not smaller",
                      ops->name);
    }
}
END_TEST

Suite *make_models_suite(void)
{
    Suite *s = suite_create("models");
    const int n = (int)case_count();

    TCase *tc = tcase_create("contract");
    tcase_set_timeout(tc, 120); /* under a sanitizer */
    tcase_add_loop_test(tc, test_bad_tokens_refused, 0, n);
    tcase_add_loop_test(tc, test_backward_twice_doubles, 0, n);
    tcase_add_loop_test(tc, test_decode_is_teacher_forced_argmax, 0, n);
    tcase_add_loop_test(tc, test_reservation_changes_no_bit, 0, n);
    tcase_add_loop_test(tc, test_n_params_is_the_walk, 0, n);
    tcase_add_loop_test(tc, test_sizes_outside_refused, 0, n);
    tcase_add_loop_test(tc, test_backward_needs_its_forward, 0, n);
    tcase_add_test(tc, test_small_preset_is_valid_and_small);
    suite_add_tcase(s, tc);

    /* one training run of 60 steps per case */
    TCase *golden = tcase_create("golden");
    tcase_set_tags(golden, "slow"); /* about 10 s, minutes under a sanitizer */
    tcase_set_timeout(golden, 600);
    tcase_add_loop_test(golden, test_golden_checkpoint, 0, n);
    tcase_add_loop_test(golden, test_golden_checkpoint_on_a_plainer_processor, 0, n);
    suite_add_tcase(s, golden);
    /* the same runs by the program on GSL's CBLAS, a case of its own for tests/golden.sh */
    TCase *golden_gsl = tcase_create("golden_gsl");
    tcase_set_tags(golden_gsl, "slow");
    tcase_set_timeout(golden_gsl, 600);
    tcase_add_loop_test(golden_gsl, test_golden_checkpoint_on_gsl_cblas, 0, n);
    suite_add_tcase(s, golden_gsl);
    return s;
}
