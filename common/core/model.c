/* model.c — looking models up in the registry, the error path every model reports
 * through, the four calls of a model as the harness makes them, and the checks and
 * helpers every model shares (see model.h).
 *
 * Design. One message per process, written by the GSL error handler whoever calls it:
 * a model refusing its input (GSL_ERROR in the model's own code) or a GSL routine inside
 * a pass (gsl_blas_dgemm of mismatched shapes). model_forward and its siblings bracket
 * each call: they clear the message before it, so a message never outlives the
 * operation that wrote it, and look at it after, so an error a pass did not notice
 * still fails the call. The passes stay free of status checks after every product;
 * the price is that a failing product leaves the rest of its pass computing on what
 * it did not write, which is harmless because the call's results are all discarded.
 */
#include "model.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const model_ops *model_lookup(const char *name)
{
    for (size_t k = 0; model_registry[k]; k++)
        if (strcmp(model_registry[k]->name, name) == 0)
            return model_registry[k];
    return NULL;
}

size_t model_rank(const char *name)
{
    size_t k = 0;
    while (model_registry[k] && strcmp(model_registry[k]->name, name) != 0)
        k++;
    return k;
}

const char *const *model_sweep_of(const model_ops *ops, const char *preset)
{
    for (const model_sweep *w = ops->sweeps; w && w->preset; w++)
        if (strcmp(w->preset, preset) == 0)
            return w->settings;
    return NULL;
}

const char *model_names(void)
{
    static char names[256];
    if (!names[0])
        for (size_t k = 0; model_registry[k]; k++) {
            if (k)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, model_registry[k]->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

/* The last message; one per process (the program runs one model at a time, and the
 * parallel runs of compare are separate processes). "" while nothing was reported since
 * the current operation began. */
static char last_error[512];

void model_error_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)gsl_errno;
    snprintf(last_error, sizeof last_error, "%s (%s:%d)", reason ? reason : "GSL error",
             file ? file : "?", line);
}

void model_catch_errors(void)
{
    gsl_set_error_handler(model_error_handler);
}

const char *model_last_error(void)
{
    return last_error;
}

/* ---- what the models share ------------------------------------------------------------ */

/* Reports "who: what" through GSL's handler (the error contract of model.h); the handler
 * copies the message before this returns. */
static void report(const char *who, const char *what, int gsl_errno)
{
    char reason[160];
    snprintf(reason, sizeof reason, "%s: %s", who, what);
    gsl_error(reason, __FILE__, __LINE__, gsl_errno);
}

int model_fits(model_sizes cap, size_t B, size_t Ts, size_t Tt)
{
    return B >= 1 && Ts >= 1 && Tt >= 1 && B <= cap.B && Ts <= cap.Ts && Tt <= cap.Tt;
}

int model_open_call(const char *who, int *has_forward, model_sizes cap, model_sizes call,
                    size_t V, const int *src, const int *dec_in, const int *tgt)
{
    *has_forward = 0;
    if (!model_fits(cap, call.B, call.Ts, call.Tt)) {
        report(who, "sizes outside the reservation", GSL_EBADLEN);
        return -1;
    }
    /* the sizes fit, so B·Ts and B·Tt are sizes the reservation made arrays of */
    if (op_tokens_check(src, call.B * call.Ts, V) != 0) {
        report(who, "a source token is outside the vocabulary", GSL_EDOM);
        return -1;
    }
    if (dec_in && op_tokens_check(dec_in, call.B * call.Tt, V) != 0) {
        report(who, "a decoder input token is outside the vocabulary", GSL_EDOM);
        return -1;
    }
    if (tgt && op_tokens_check(tgt, call.B * call.Tt, V) != 0) {
        report(who, "a target token is outside the vocabulary", GSL_EDOM);
        return -1;
    }
    return 0;
}

int model_open_backward(const char *who, int has_forward, model_sizes last, size_t V,
                        const batch *b)
{
    if (!has_forward || b->B != last.B || b->Ts != last.Ts || b->Tt != last.Tt) {
        report(who, "no forward of this batch to differentiate", GSL_EINVAL);
        return -1;
    }
    if (op_tokens_check(b->src, b->B * b->Ts, V) != 0 ||
        op_tokens_check(b->dec_in, b->B * b->Tt, V) != 0) {
        report(who, "a token is outside the vocabulary", GSL_EDOM);
        return -1;
    }
    return 0;
}

double model_close_forward(const gsl_matrix *logits, const int *tgt, gsl_matrix *dlogits,
                           int *pred_tm, int *pred, model_sizes call, model_sizes *last,
                           int *has_forward)
{
    /* the gradient is formed here, while the exponentials are at hand, and kept */
    const double loss = op_cross_entropy(logits, tgt, dlogits, pred ? pred_tm : NULL);
    if (pred)
        op_tokens_batch_major(pred, pred_tm, call.B, call.Tt);
    *last = call;
    *has_forward = 1;
    return loss;
}

double model_output_flops(double in, double V)
{
    return 6.0 * in * V + 9.0 * V + 5.0;
}

void model_uniform(gsl_matrix *x, double k, const gsl_rng *r)
{
    op_uniform(x->data, x->size1 * x->size2, k, r);
}

void model_clear_error(void)
{
    last_error[0] = '\0';
}

const char *model_failure(void)
{
    return last_error[0] ? last_error
                         : "the loss is not a number, though nothing was refused (a weight "
                           "or an activation is not finite)";
}

/* After a call that returned normally: when something reported an error while it ran
 * (a GSL routine inside the pass), the call fails, and the message says where. */
static int failed_inside(const model *m, const char *op)
{
    if (!last_error[0])
        return 0;
    char reason[sizeof last_error];
    memcpy(reason, last_error, sizeof reason);
    snprintf(last_error, sizeof last_error, "%.32s %s: a GSL routine failed inside the pass: "
             "%.400s", m->ops->name, op, reason);
    return 1;
}

double model_forward(model *m, const batch *b, int *pred)
{
    model_clear_error();
    const double loss = m->ops->forward(m, b, pred);
    if (isnan(loss)) /* refused (the model said why) or the arithmetic's own NaN */
        return loss;
    return failed_inside(m, "forward") ? NAN : loss;
}

int model_backward(model *m, const batch *b)
{
    model_clear_error();
    if (m->ops->backward(m, b) != 0)
        return -1;
    return failed_inside(m, "backward") ? -1 : 0;
}

int model_decode(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    model_clear_error();
    if (m->ops->decode(m, src, B, Ts, Tt, out) != 0)
        return -1;
    return failed_inside(m, "decode") ? -1 : 0;
}

int model_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
                void *ctx)
{
    model_clear_error();
    if (!m->ops->trace || m->ops->trace(m, src, Ts, Tt, out, sink, ctx) != 0)
        return -1;
    return failed_inside(m, "trace") ? -1 : 0;
}
