/* train.c — the training loop (see train.h).
 *
 * Design. The loop computes and reports; it shows nothing. Its progress goes to the
 * caller's hook (train_hooks' progress) and its log to the stream the caller gives, so
 * the same loop runs under the command line, the tests and the browser. */
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"

double train_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Counts correct tokens and whole sequences of pred against tgt (B, T). */
static void count_correct(const int *pred, const int *tgt, size_t B, size_t T, size_t *tok,
                          size_t *seq)
{
    for (size_t b = 0; b < B; b++) {
        size_t ok = 0;
        for (size_t t = 0; t < T; t++)
            ok += pred[b * T + t] == tgt[b * T + t];
        *tok += ok;
        *seq += ok == T;
    }
}

void train_log_header(FILE *log)
{
    fprintf(log, "step\tseconds\tlr\tloss\ttoken_acc\tseq_acc\tgrad_norm\tseq_per_s\t"
            "val_loss\tval_token_acc\tval_seq_acc\tval_seq_acc_max\n");
}

size_t train_val_lengths(const config *c, size_t *lens)
{
    const size_t lo = c->train_min, hi = c->train_max, span = hi - lo;
    const size_t k = span + 1 < TRAIN_VAL_LENGTHS ? span + 1 : TRAIN_VAL_LENGTHS;
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        /* i-th of k points from lo to hi, rounded to the nearest length */
        const size_t L = k == 1 ? hi : lo + (span * i + (k - 1) / 2) / (k - 1);
        if (n == 0 || lens[n - 1] != L)
            lens[n++] = L;
    }
    return n;
}

int train_validates_at(const config *c, size_t step)
{
    const size_t K = c->log_every;
    if (step == c->steps || step % K == 0)
        return 1;
    if (c->val_first == 0 || step < c->val_first)
        return 0;
    /* walk the schedule: each next point 10% further (at least one step), never past the
     * next multiple of K, so from 10·K on it is the multiples of K alone */
    size_t v = c->val_first;
    while (v < step) {
        const size_t grow = v / 10 ? v / 10 : 1, grid = (v / K + 1) * K;
        v = v + grow < grid ? v + grow : grid;
    }
    return v == step;
}

size_t train_decay_end(const config *c)
{
    return c->decay_steps ? c->warmup + c->decay_steps : c->steps;
}

int train_val_update(train_best *best, const config *c, size_t step, double seconds,
                     double token_acc, double loss, const double *w, size_t n)
{
    /* the weights: the first validation is the best so far; later ones must add
     * min_delta */
    const int first = best->step == 0;
    /* the target needs no min_delta: below it the best was, at it nothing is left */
    const int reached = c->stop_acc > 0 && token_acc >= c->stop_acc;
    if (first || reached || token_acc >= best->token_acc + c->min_delta) {
        best->step = step;
        best->token_acc = token_acc;
        best->loss = loss;
        best->seconds = seconds;
        if (best->w)
            memcpy(best->w, w, n * sizeof *w);
        if (reached) /* nothing left to learn */
            return TRAIN_TARGET;
    }
    /* the plateau counts the validations every log_every steps only: the log-spaced ones
     * before them are a few steps apart, and patience is meant in units of log_every */
    if (c->val_first > 0 && step % c->log_every != 0)
        return TRAIN_GO_ON;
    /* the plateau: the mean of the last val_window validations must keep rising by
     * min_delta (one lucky validation does not reset the count; a mean does not jump) */
    const size_t W = c->val_window < 1                  ? 1
                     : c->val_window > TRAIN_WINDOW_MAX ? TRAIN_WINDOW_MAX
                                                        : c->val_window;
    best->recent[best->seen % TRAIN_WINDOW_MAX] = token_acc;
    best->seen++;
    const size_t k = best->seen < W ? best->seen : W;
    double mean = 0;
    for (size_t i = 0; i < k; i++)
        mean += best->recent[(best->seen - 1 - i) % TRAIN_WINDOW_MAX];
    mean /= (double)k;
    if (first || mean >= best->mean + c->min_delta) {
        best->mean = mean;
        best->since = 0;
        return TRAIN_GO_ON;
    }
    best->since++;
    return c->patience > 0 && best->since >= c->patience ? TRAIN_PLATEAU : TRAIN_GO_ON;
}

/* One validation (see train.h): the means over the validation lengths into v[0..2]
 * (loss, token and sequence accuracy) and the sequence accuracy at the longest into v[3].
 * Returns 0, or -1 with one line in err. */
static int validate(model *m, const task *t, const config *c, double v[4], char *err,
                    size_t n)
{
    size_t lens[TRAIN_VAL_LENGTHS], nl;
    eval_result res[TRAIN_VAL_LENGTHS];
    if (t->data) {
        /* a file task: its validation set, at every source length of the training range
         * (at most TRAIN_VAL_LENGTHS of them, spread as for a generated task) */
        size_t *all = malloc((t->data->max_Ts + 1) * sizeof *all);
        if (!all) {
            snprintf(err, n, "out of memory");
            return -1;
        }
        const size_t na = dataset_lengths(t->data, DATASET_VAL, c->train_min, c->train_max,
                                          all);
        nl = na < TRAIN_VAL_LENGTHS ? na : TRAIN_VAL_LENGTHS;
        for (size_t k = 0; k < nl; k++)
            lens[k] = all[nl == 1 ? na - 1 : k * (na - 1) / (nl - 1)];
        free(all);
        if (nl == 0) {
            snprintf(err, n, "%s: no validation example has a source length in %zu..%zu",
                     t->name, c->train_min, c->train_max);
            return -1;
        }
        if (eval_data_run(m, t, DATASET_VAL, lens, nl, NULL, res, err, n) != 0)
            return -1;
    } else {
        nl = train_val_lengths(c, lens);
        const size_t per = c->val_samples / nl ? c->val_samples / nl : 1;
        if (eval_run(m, t, lens, nl, per, c->seed ^ TRAIN_VAL_SEED, NULL, res, err, n) != 0)
            return -1;
    }
    v[0] = v[1] = v[2] = 0;
    for (size_t k = 0; k < nl; k++) {
        v[0] += res[k].loss / (double)nl;
        v[1] += res[k].token_acc / (double)nl;
        v[2] += res[k].seq_acc / (double)nl;
    }
    v[3] = res[nl - 1].seq_acc;
    eval_free(res, nl);
    return 0;
}

/* Where a divergence shows: the first tensor (in the model's own order) whose gradient
 * holds a value that is not finite; when every gradient is finite (a runaway loss), the
 * tensor whose weights have grown largest. Writes "in the gradient of tensor 'X'" or
 * "largest weights (N) in tensor 'X'" into buf. */
static void locate_divergence(const arena *p, char *buf, size_t n)
{
    for (size_t k = 0; k < p->n_tensors; k++) {
        const double *g = p->grad + p->offset[k];
        for (size_t i = 0; i < arena_numel(p, k); i++)
            if (!isfinite(g[i])) {
                snprintf(buf, n, "first in the gradient of tensor '%s'", p->spec[k].name);
                return;
            }
    }
    size_t big = 0;
    double top = -1;
    for (size_t k = 0; k < p->n_tensors; k++) {
        const double *w = p->data + p->offset[k];
        for (size_t i = 0; i < arena_numel(p, k); i++)
            if (fabs(w[i]) > top) {
                top = fabs(w[i]);
                big = k;
            }
    }
    snprintf(buf, n, "largest weights (|w| = %.3g) in tensor '%s'", top, p->spec[big].name);
}

int train_run(model *m, const task *t, const config *c, rng_streams *r, optim *o,
              size_t first, FILE *log, train_progress progress, const train_hooks *hooks,
              train_best *best, train_summary *out, char *err, size_t n)
{
    static const train_hooks none = {0};
    train_best scratch = {0};
    if (!best)
        best = &scratch;
    const optim_schedule sched = (optim_schedule)optim_schedule_lookup(c->lr_schedule);
    const model_ops *ops = m->ops;
    arena *p = &m->params;
    const size_t B = c->batch, Lmax = c->train_max;
    const size_t Tmax = task_max_target_len(t, c->train_min, Lmax);
    batch b;
    int *pred = NULL;
    if (!hooks)
        hooks = &none;
    memset(out, 0, sizeof *out);
    out->steps = first - 1;
    if (batch_alloc(&b, B, Lmax, Tmax) != 0) {
        snprintf(err, n, "out of memory for a batch of %zu sequences of length %zu", B, Lmax);
        return TRAIN_FAILED;
    }
    if (!(pred = malloc(B * Tmax * sizeof *pred)) || ops->reserve(m, B, Lmax, Tmax) != 0) {
        snprintf(err, n, "out of memory for training %s at batch %zu, length %zu", ops->name,
                 B, Lmax);
        batch_free(&b);
        free(pred);
        return TRAIN_FAILED;
    }

    const double t0 = train_now();
    double last_t = t0, sum_loss = 0, sum_norm = 0;
    double val_time = 0; /* seconds spent validating: measurement, not training */
    size_t sum_tok = 0, sum_ntok = 0, sum_seq = 0, sum_nseq = 0, interval = 0;
    int rc = TRAIN_DONE;
    for (size_t step = first; step <= c->steps; step++) {
        if (hooks->stop && *hooks->stop) {
            rc = TRAIN_STOPPED;
            break;
        }
        task_train_batch(t, &b, B, c, r->s[RNG_TRAIN]);
        arena_zero_grad(p);
        double loss = model_forward(m, &b, pred);
        if (isnan(loss) && model_last_error()[0]) {
            snprintf(err, n, "%s forward failed at step %zu: %s", ops->name, step,
                     model_last_error());
            rc = TRAIN_FAILED;
            break;
        }
        if (model_backward(m, &b) != 0) {
            snprintf(err, n, "%s backward failed at step %zu: %s", ops->name, step,
                     model_last_error());
            rc = TRAIN_FAILED;
            break;
        }
        double norm = optim_clip(p->grad, p->size, c->clip);
        if (!isfinite(loss) || !isfinite(norm) || loss > TRAIN_LOSS_RUNAWAY) {
            /* stop before the update: the weights stay those of the last good step */
            char what[64], where[160];
            locate_divergence(p, where, sizeof where);
            if (isfinite(loss) && isfinite(norm))
                snprintf(what, sizeof what, "loss is %.3g nats per token", loss);
            else
                snprintf(what, sizeof what, "%s is %s", isfinite(loss) ? "gradient norm" : "loss",
                         isnan(isfinite(loss) ? norm : loss) ? "NaN" : "infinite");
            snprintf(err, n, "%s diverged at step %zu: the %s, %s; lower --lr (now %g) or "
                     "keep --clip on (now %g)", ops->name, step, what, where, c->lr, c->clip);
            rc = TRAIN_FAILED;
            break;
        }
        const double lr = optim_lr_at(c->lr, c->warmup, sched, c->lr_floor, step,
                                      train_decay_end(c));
        optim_adam_step(o, p->data, p->grad, lr);

        sum_loss += loss;
        sum_norm += norm;
        count_correct(pred, b.tgt, B, b.Tt, &sum_tok, &sum_seq);
        sum_ntok += B * b.Tt;
        sum_nseq += B;
        interval++;
        out->steps = step;
        int stop = 0;
        if (train_validates_at(c, step)) {
            const double now = train_now(), dt = now - last_t;
            const double mloss = sum_loss / (double)interval;
            const double acc = (double)sum_tok / (double)sum_ntok;
            const double rate = dt > 0 ? (double)sum_nseq / dt : 0;
            /* the run's training seconds so far, validation left out */
            const double secs = hooks->seconds_offset + now - t0 - val_time;
            double v[4];
            if (validate(m, t, c, v, err, n) != 0) {
                rc = TRAIN_FAILED;
                break;
            }
            stop = train_val_update(best, c, step, secs, v[1], v[0], p->data, p->size);
            if (log) {
                fprintf(log, "%zu\t%.3f\t%.6g\t%.6g\t%.6f\t%.6f\t%.6g\t%.1f\t%.6g\t%.6f\t%.6f\t"
                        "%.6f\n", step, secs, lr, mloss, acc, (double)sum_seq / (double)sum_nseq,
                        sum_norm / (double)interval, rate, v[0], v[1], v[2], v[3]);
                fflush(log);
            }
            if (progress != TRAIN_QUIET && hooks->progress) {
                const train_tick tick = {ops->name, step, c->steps, mloss, acc,
                                         (double)interval / (dt > 0 ? dt : 1), rate, 0};
                hooks->progress(hooks->progress_ctx, progress, &tick);
            }
            out->loss = mloss;
            out->token_acc = acc;
            const double after = train_now();
            val_time += after - now;
            last_t = after;
            sum_loss = sum_norm = 0;
            sum_tok = sum_ntok = sum_seq = sum_nseq = interval = 0;
        }
        if (hooks->checkpoint && hooks->every && step % hooks->every == 0 && step < c->steps &&
            hooks->checkpoint(hooks->ctx, step, o) != 0) {
            snprintf(err, n, "%s: stopped at step %zu because the checkpoint could not be "
                     "written", ops->name, step);
            rc = TRAIN_FAILED;
            break;
        }
        if (stop != TRAIN_GO_ON) { /* the stopping rule fired */
            out->early = stop;
            break;
        }
    }
    if (progress != TRAIN_QUIET && hooks->progress) {
        const train_tick end = {.model = ops->name, .step = out->steps, .steps = c->steps,
                                .done = 1};
        hooks->progress(hooks->progress_ctx, progress, &end);
    }
    out->seconds = train_now() - t0 - val_time;
    batch_free(&b);
    free(pred);
    return rc;
}

int train_write_build(FILE *f, void (*build)(FILE *f), size_t params,
                      const train_summary *ts, const train_best *best)
{
    fprintf(f, "key\tvalue\n");
    build(f);
    fprintf(f, "parameters\t%zu\n", params);
    if (ts) {
        fprintf(f, "train_steps\t%zu\n", ts->steps);
        fprintf(f, "train_seconds\t%.3f\n", ts->seconds);
        fprintf(f, "stopped\t%s\n", ts->early == TRAIN_PLATEAU  ? "converged"
                                     : ts->early == TRAIN_TARGET ? "target"
                                                                 : "budget");
    }
    if (best && best->step) {
        fprintf(f, "best_step\t%zu\n", best->step);
        fprintf(f, "best_seconds\t%.3f\n", best->seconds);
        fprintf(f, "best_val_token_acc\t%.6f\n", best->token_acc);
        fprintf(f, "best_val_loss\t%.6g\n", best->loss);
    }
    return ferror(f) ? -1 : 0;
}
