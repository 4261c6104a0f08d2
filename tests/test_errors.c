/* test_errors.c — the error path of model.h seen from the harness: a GSL error raised
 * inside a pass fails the call, the training step and the evaluation that hit it, with
 * GSL's reason; and the last error belongs to one operation, so an earlier refusal is
 * never quoted for a later failure (suite: errors).
 *
 * Design. To raise a GSL error where no real model would, the tests define a model
 * "faulty" with a parameter block of two (2, 3) tensors A and B. Each of its four calls
 * computes C (2, 2) = A (2, 3) · Bᵀ (3, 2), a product whose shapes agree, except the one
 * named by `fault`, which multiplies A · B without the transpose: (2, 3) · (2, 3), so
 * gsl_blas_dgemm reports GSL_EBADLEN through the installed handler and returns without
 * computing. The call itself then returns normally (a finite loss, 0), as a pass that
 * ignores the status of its products would: only the harness's check can see it.
 * The refusal-then-NaN test uses every registered model instead: its refusal is the
 * model's own, and its NaN comes from weights set to NaN.
 */
#include <check.h>
#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/eval.h"
#include "../common/core/model.h"
#include "../common/core/optim.h"
#include "../common/core/rng.h"
#include "../common/core/task.h"
#include "../common/core/train.h"
#include "testutil.h"

/* ---- the faulty model -------------------------------------------------------------- */

typedef enum { FAULT_NONE, FAULT_FORWARD, FAULT_BACKWARD, FAULT_DECODE, FAULT_TRACE } fault_at;

static fault_at fault; /* which call makes the product of mismatched shapes */

typedef struct faulty {
    model head;    /* first: a faulty * is a model * */
    double c[4];   /* (2, 2) the product's result */
} faulty;

/* C = A · Bᵀ, or A · B (mismatched) when this call is the faulty one; returns the status
 * gsl_blas_dgemm gave, which the passes below ignore on purpose. */
static int product(model *m, fault_at here)
{
    faulty *f = (faulty *)m;
    gsl_matrix_view C = gsl_matrix_view_array(f->c, 2, 2);
    const gsl_matrix *A = arena_w(&m->params, 0), *B = arena_w(&m->params, 1);
    return gsl_blas_dgemm(CblasNoTrans, fault == here ? CblasNoTrans : CblasTrans, 1.0, A, B,
                          0.0, &C.matrix);
}

static model *faulty_alloc(const config *c);

static void faulty_free(model *m)
{
    if (!m)
        return;
    arena_free(&m->params);
    free(m);
}

static void faulty_init(model *m, gsl_rng *r)
{
    for (size_t k = 0; k < m->params.n_tensors; k++)
        tu_fill(arena_w(&m->params, k), 0.3, r);
}

static int faulty_reserve(model *m, size_t B, size_t Ts, size_t Tt)
{
    (void)m, (void)B, (void)Ts, (void)Tt;
    return 0;
}

/* A loss of log V whatever the batch, every prediction 0. */
static double faulty_forward(model *m, const batch *b, int *pred)
{
    (void)product(m, FAULT_FORWARD);
    if (pred)
        memset(pred, 0, b->B * b->Tt * sizeof *pred);
    return log((double)m->cfg.symbols);
}

/* A gradient of 0.01 on every parameter. */
static int faulty_backward(model *m, const batch *b)
{
    (void)b;
    (void)product(m, FAULT_BACKWARD);
    for (size_t i = 0; i < m->params.size; i++)
        m->params.grad[i] += 0.01;
    return 0;
}

static int faulty_decode(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    (void)src, (void)Ts;
    (void)product(m, FAULT_DECODE);
    memset(out, 0, B * Tt * sizeof *out);
    return 0;
}

static int faulty_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out,
                        trace_sink sink, void *ctx)
{
    (void)product(m, FAULT_TRACE);
    (void)sink, (void)ctx;
    return faulty_decode(m, src, 1, Ts, Tt, out);
}

static const model_ops faulty_ops = {
    .name = "faulty",
    .alloc = faulty_alloc,
    .free = faulty_free,
    .init = faulty_init,
    .reserve = faulty_reserve,
    .forward = faulty_forward,
    .backward = faulty_backward,
    .decode = faulty_decode,
    .trace = faulty_trace,
};

static model *faulty_alloc(const config *c)
{
    faulty *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    const arena_spec spec[2] = {{"faulty.A", 2, 3}, {"faulty.B", 2, 3}};
    if (arena_alloc(&f->head.params, spec, 2) != 0) {
        free(f);
        return NULL;
    }
    f->head.ops = &faulty_ops;
    f->head.cfg = *c;
    return &f->head;
}

/* A short copy-task configuration the faulty model can be trained with. */
static void faulty_config(config *c)
{
    config_defaults(c);
    strcpy(c->model, "faulty");
    c->symbols = 6;
    c->batch = 3;
    c->train_min = 2;
    c->train_max = 4;
    c->steps = 4;
    c->val_samples = 8;
}

static model *faulty_model(const config *c)
{
    model *m = faulty_alloc(c);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = tu_rng(3);
    faulty_init(m, r);
    gsl_rng_free(r);
    return m;
}

/* Fails unless the last error is GSL's report of the mismatched product, met inside the
 * pass `op` of the faulty model. */
static void assert_gsl_reason(const char *text, const char *op)
{
    char want[64];
    snprintf(want, sizeof want, "faulty %s: a GSL routine failed inside the pass", op);
    ck_assert_msg(strstr(text, want), "'%s' does not say '%s'", text, want);
    ck_assert_msg(strstr(text, "invalid length"), "'%s' does not give GSL's reason", text);
}

/* ---- a GSL error inside a pass ------------------------------------------------------ */

/* Each of the four calls, made faulty in turn: the call fails with its error value and
 * the reason; the same call without the fault succeeds and leaves no message. */
START_TEST(gsl_error_inside_a_pass_fails_the_call)
{
    config c;
    faulty_config(&c);
    model *m = faulty_model(&c);
    batch b;
    ck_assert_int_eq(batch_alloc(&b, 2, 3, 3), 0);
    b.B = 2; /* a batch of zeros: the faulty model reads no token */
    b.Ts = b.Tt = 3;
    memset(b.src, 0, 6 * sizeof *b.src);
    memset(b.dec_in, 0, 6 * sizeof *b.dec_in);
    memset(b.tgt, 0, 6 * sizeof *b.tgt);
    int out[6];
    static const char *const ops[] = {"", "forward", "backward", "decode", "trace"};
    for (fault_at at = FAULT_FORWARD; at <= FAULT_TRACE; at++) {
        fault = FAULT_NONE;
        ck_assert(isfinite(model_forward(m, &b, out)));
        ck_assert_int_eq(model_backward(m, &b), 0);
        ck_assert_int_eq(model_decode(m, b.src, 2, 3, 3, out), 0);
        ck_assert_int_eq(model_trace(m, b.src, 3, 3, out, NULL, NULL), 0);
        ck_assert_str_eq(model_last_error(), "");
        fault = at;
        int failed = 0;
        switch (at) {
        case FAULT_FORWARD:
            failed = isnan(model_forward(m, &b, out));
            break;
        case FAULT_BACKWARD:
            failed = model_backward(m, &b) == -1;
            break;
        case FAULT_DECODE:
            failed = model_decode(m, b.src, 2, 3, 3, out) == -1;
            break;
        default:
            failed = model_trace(m, b.src, 3, 3, out, NULL, NULL) == -1;
            break;
        }
        ck_assert_msg(failed, "a GSL error in %s was ignored", ops[at]);
        assert_gsl_reason(model_last_error(), ops[at]);
    }
    fault = FAULT_NONE;
    batch_free(&b);
    faulty_free(m);
}
END_TEST

/* The training step that hits a GSL error fails with the reason, before its update. */
START_TEST(gsl_error_fails_the_training_step)
{
    const fault_at where[2] = {FAULT_FORWARD, FAULT_BACKWARD};
    const task *t = task_lookup("copy");
    ck_assert_ptr_nonnull(t);
    for (int k = 0; k < 2; k++) {
        config c;
        faulty_config(&c);
        model *m = faulty_model(&c);
        double before[12];
        memcpy(before, m->params.data, sizeof before);
        rng_streams r;
        optim o;
        ck_assert_int_eq(rng_open(&r, c.seed), 0);
        ck_assert_int_eq(optim_alloc(&o, m->params.size, c.beta1, c.beta2, c.eps), 0);
        train_summary ts;
        char err[512] = "";
        fault = where[k];
        const int rc = train_run(m, t, &c, &r, &o, 1, NULL, TRAIN_QUIET, NULL, NULL, &ts, err,
                                 sizeof err);
        fault = FAULT_NONE;
        ck_assert_msg(rc == TRAIN_FAILED, "the run went on: %d (%s)", rc, err);
        char want[64];
        snprintf(want, sizeof want, "faulty %s failed at step 1: ",
                 k ? "backward" : "forward");
        ck_assert_msg(strstr(err, want), "'%s' does not say '%s'", err, want);
        assert_gsl_reason(err, k ? "backward" : "forward");
        ck_assert_msg(memcmp(before, m->params.data, sizeof before) == 0,
                      "the weights were updated");
        /* the same run without the fault trains to its end */
        ck_assert_int_eq(train_run(m, t, &c, &r, &o, 1, NULL, TRAIN_QUIET, NULL, NULL, &ts, err,
                                   sizeof err), TRAIN_DONE);
        optim_free(&o);
        rng_close(&r);
        faulty_free(m);
    }
}
END_TEST

/* The evaluation (what eval and the end of train run) fails with the reason. */
START_TEST(gsl_error_fails_the_evaluation)
{
    const fault_at where[2] = {FAULT_DECODE, FAULT_FORWARD};
    const task *t = task_lookup("copy");
    config c;
    faulty_config(&c);
    model *m = faulty_model(&c);
    const size_t L = 3;
    for (int k = 0; k < 2; k++) {
        eval_result e;
        char err[512] = "";
        fault = where[k];
        const int rc = eval_run(m, t, &L, 1, 16, 1, NULL, &e, err, sizeof err);
        fault = FAULT_NONE;
        ck_assert_int_eq(rc, -1);
        eval_free(&e, 1);
        char want[64];
        snprintf(want, sizeof want, "faulty %s failed at length 3: ", k ? "forward" : "decode");
        ck_assert_msg(strstr(err, want), "'%s' does not say '%s'", err, want);
        assert_gsl_reason(err, k ? "forward" : "decode");
        ck_assert_int_eq(eval_run(m, t, &L, 1, 16, 1, NULL, &e, err, sizeof err), 0);
        eval_free(&e, 1);
    }
    faulty_free(m);
}
END_TEST

/* ---- one operation, one error ------------------------------------------------------- */

/* Model _i of the registry refuses a batch (a token outside the vocabulary), then meets a
 * NaN of its own (every weight NaN): the training step and the evaluation report the NaN,
 * never the earlier refusal. */
START_TEST(a_refusal_then_a_nan_reports_the_nan)
{
    const model_ops *ops = model_registry[_i];
    config c;
    config_defaults(&c);
    ops->defaults(&c);
    ops->gradcheck_sizes(&c);
    strcpy(c.model, ops->name);
    c.symbols = 5;
    c.batch = 2;
    c.train_min = 2;
    c.train_max = 4;
    c.steps = 3;
    char err[512] = "";
    ck_assert_msg(ops->check(&c, err, sizeof err) == 0, "%s", err);
    model *m = ops->alloc(&c);
    ck_assert_ptr_nonnull(m);
    gsl_rng *g = tu_rng(9);
    ops->init(m, g);
    gsl_rng_free(g);
    const task *t = task_lookup("copy");
    batch b;
    ck_assert_int_eq(batch_alloc(&b, 2, 4, 4), 0);
    ck_assert_int_eq(ops->reserve(m, 2, 4, 4), 0);
    g = tu_rng(4);
    task_fill(t, &b, 2, 3, c.symbols, g);
    gsl_rng_free(g);
    b.src[1] = 99; /* far outside the vocabulary */
    ck_assert(isnan(model_forward(m, &b, NULL)));
    char refusal[512];
    snprintf(refusal, sizeof refusal, "%s", model_last_error());
    ck_assert_msg(refusal[0], "%s: the bad token was not refused", ops->name);

    for (size_t i = 0; i < m->params.size; i++)
        m->params.data[i] = NAN;
    rng_streams r;
    optim o;
    train_summary ts;
    ck_assert_int_eq(rng_open(&r, c.seed), 0);
    ck_assert_int_eq(optim_alloc(&o, m->params.size, c.beta1, c.beta2, c.eps), 0);
    ck_assert_int_eq(train_run(m, t, &c, &r, &o, 1, NULL, TRAIN_QUIET, NULL, NULL, &ts, err,
                               sizeof err), TRAIN_FAILED);
    ck_assert_msg(!strstr(err, refusal), "training quotes the earlier refusal: %s", err);
    ck_assert_msg(strstr(err, "diverged at step 1: the loss is NaN"), "%s", err);

    ck_assert(isnan(model_forward(m, &b, NULL))); /* the refusal again, then evaluate */
    const size_t L = 3;
    eval_result e;
    ck_assert_int_eq(eval_run(m, t, &L, 1, 4, 1, NULL, &e, err, sizeof err), -1);
    eval_free(&e, 1);
    ck_assert_msg(!strstr(err, refusal), "evaluation quotes the earlier refusal: %s", err);
    ck_assert_msg(strstr(err, "the loss is not a number, though nothing was refused"), "%s",
                  err);
    optim_free(&o);
    rng_close(&r);
    batch_free(&b);
    ops->free(m);
}
END_TEST

Suite *make_errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("gsl");
    tcase_add_test(tc, gsl_error_inside_a_pass_fails_the_call);
    tcase_add_test(tc, gsl_error_fails_the_training_step);
    tcase_add_test(tc, gsl_error_fails_the_evaluation);
    suite_add_tcase(s, tc);
    tc = tcase_create("last error");
    size_t n = 0;
    while (model_registry[n])
        n++;
    tcase_add_loop_test(tc, a_refusal_then_a_nan_reports_the_nan, 0, (int)n);
    suite_add_tcase(s, tc);
    return s;
}
