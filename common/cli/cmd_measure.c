/* cmd_measure.c — what the commands measure on a trained model and write beside it: the
 * evaluation per length (eval, and train at its end), the matrices of one example
 * (attention, and train with --trace), the cost per length (train with --cost-lengths).
 *
 * Design. Each measurement is the core's (eval.h, model_trace, bench_cost); this file
 * turns it into the run's files, each written whole (cmd_files.h), and into what the
 * command prints. A model reports bad input by the error contract of model.h: decode and
 * trace return -1 and model_last_error() says why; here that becomes a runtime error
 * quoting it. A stop signal (cmd_stop.h) ends an evaluation between chunks of sequences,
 * with nothing written.
 */
#include "cmd_measure.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../core/actstat.h"
#include "../core/align.h"
#include "args.h"
#include "bench.h"
#include "cmd_files.h"
#include "cmd_stop.h"
#include "../core/dataset.h"
#include "../core/eval.h"
#include "../core/model.h"
#include "report.h"
#include "../core/rng.h"
#include "safedir.h"
#include "../core/task.h"
#include "../core/tracefile.h"

void cmd_print_tokens(FILE *f, const task *t, size_t nsym, const int *x, size_t n)
{
    char word[DATASET_WORD_MAX + 1];
    for (size_t i = 0; i < n; i++) {
        task_symbol(t, nsym, x[i], word, sizeof word);
        fprintf(f, i ? " %s" : "%s", word);
    }
}

int cmd_data_lengths(const task *t, const char *flag, size_t *lens, size_t *nl)
{
    const dataset *d = t->data;
    size_t *all = malloc((d->max_Ts + 1) * sizeof *all);
    if (!all)
        return args_run_error("out of memory");
    const size_t na = dataset_lengths(d, DATASET_TEST, 1, d->max_Ts, all);
    int rc = 0;
    for (size_t k = 0; k < *nl && rc == 0; k++) {
        size_t i = 0;
        while (i < na && all[i] != lens[k])
            i++;
        if (i == na)
            rc = args_usage_error("%s: the test set of %s holds no source of length %zu "
                                  "(accepted: lengths from %zu to %zu that it holds; leave "
                                  "%s out for all of them)", flag, t->name, lens[k], all[0],
                                  all[na - 1], flag);
    }
    if (*nl == 0) {
        *nl = na < ARGS_MAX_LENGTHS ? na : ARGS_MAX_LENGTHS;
        memcpy(lens, all, *nl * sizeof *lens);
    }
    free(all);
    return rc;
}

void cmd_evaluation_plan(const task *t, const size_t *lens, size_t nl, size_t samples,
                         char *buf, size_t n)
{
    if (!t || !t->data) {
        snprintf(buf, n, "%zu lengths x %zu sequences", nl, samples);
        return;
    }
    /* a file task decodes each test example once: the counts are the set's, per length */
    enum { SHOWN = 6 }; /* lengths named one by one; the others summed */
    size_t count[SHOWN], total = 0, rest = 0;
    for (size_t k = 0; k < nl; k++) {
        const size_t c = dataset_within(t->data, DATASET_TEST, lens[k], lens[k]).count;
        total += c;
        if (k < SHOWN)
            count[k] = c;
        else
            rest += c;
    }
    size_t at = (size_t)snprintf(buf, n, "the %zu test example%s: ", total,
                                 total == 1 ? "" : "s");
    for (size_t k = 0; k < nl && k < SHOWN && at < n; k++)
        at += (size_t)snprintf(buf + at, n - at, "%s%zu of %slength %zu", k ? ", " : "",
                               count[k], k ? "" : "source ", lens[k]);
    if (nl > SHOWN && at < n)
        snprintf(buf + at, n - at, ", %zu at %zu other lengths", rest, nl - SHOWN);
}

/* ---- the evaluation (eval, and train at its end) ------------------------------------------ */

typedef struct eval_out {
    const char *model;
    const eval_result *r;
    size_t n;
} eval_out;

static int write_eval(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_tsv(f, e->model, e->r, e->n);
}

static int write_positions(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_positions_tsv(f, e->model, e->r, e->n);
}

static int write_bleu(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_bleu_tsv(f, e->model, e->r, e->n);
}

int cmd_evaluate(model *m, const size_t *lens, size_t nl, size_t samples,
                 unsigned long seed, const char *dir, int print)
{
    char err[ARGS_ERR_MAX];
    eval_result *r = calloc(nl, sizeof *r);
    if (!r)
        return args_run_error("out of memory");
    const task *t = task_open(&m->cfg, err, sizeof err);
    const volatile sig_atomic_t *stop = &cmd_stop_signal;
    const int got = !t ? -1
                  : t->data ? eval_data_run(m, t, DATASET_TEST, lens, nl, stop, r, err,
                                            sizeof err)
                            : eval_run(m, t, lens, nl, samples, seed, stop, r, err, sizeof err);
    if (got != 0) {
        task_close(t);
        eval_free(r, nl);
        free(r);
        return got == EVAL_STOPPED ? cmd_stopped_status() : args_run_error("%s", err);
    }
    const int file = t->data != NULL;
    task_close(t);
    if (print)
        eval_print(stdout, m->ops->name, r, nl);
    int rc = 0;
    eval_out eo = {m->ops->name, r, nl};
    /* a file task's BLEU counts first: eval.tsv marks a finished run, so a run that has
     * it has them too */
    if (dir && file && cmd_write_file(dir, "eval_bleu.tsv", write_bleu, &eo) != 0)
        rc = ARGS_EXIT_RUNTIME;
    if (dir && !rc && (cmd_write_file(dir, "eval.tsv", write_eval, &eo) != 0 ||
                cmd_write_file(dir, "eval_positions.tsv", write_positions, &eo) != 0))
        rc = ARGS_EXIT_RUNTIME;
    eval_free(r, nl);
    free(r);
    return rc;
}

/* ---- the alignment (eval --alignment) ------------------------------------------------------ */

/* Room for the maps of every length: a model of layers and heads sends one per head. */
#define ALIGN_MAX_RESULTS 4096

typedef struct align_out {
    const char *model;
    const align_result *r;
    size_t n;
} align_out;

static int write_alignment(FILE *f, const void *ctx)
{
    const align_out *a = ctx;
    return align_write_tsv(f, a->model, a->r, a->n);
}

int cmd_alignment(model *m, const size_t *lens, size_t nl, size_t samples,
                  unsigned long seed, const char *dir)
{
    char err[ARGS_ERR_MAX];
    align_result *r = calloc(ALIGN_MAX_RESULTS, sizeof *r);
    if (!r)
        return args_run_error("out of memory");
    const task *t = task_open(&m->cfg, err, sizeof err);
    size_t nr = 0;
    const int got = !t ? -1 : align_run(m, t, lens, nl, samples, seed, r, ALIGN_MAX_RESULTS,
                                        &nr, err, sizeof err);
    task_close(t);
    int rc = 0;
    if (got != 0) {
        rc = args_run_error("--alignment: %s", err);
    } else if (nr == 0) {
        printf("%s sends no attention map of its outputs over the source: nothing to "
               "score\n", m->ops->name);
    } else {
        printf("\n%-14s %6s %-16s %9s %11s\n", "model", "length", "matrix", "argmax_acc",
               "weight_mean");
        for (size_t k = 0; k < nr; k++)
            printf("%-14s %6zu %-16s %9.4f %11.4f\n", m->ops->name, r[k].len, r[k].name,
                   (double)r[k].hits / (double)r[k].rows, r[k].weight / (double)r[k].rows);
        align_out ao = {m->ops->name, r, nr};
        if (dir && cmd_write_file(dir, "eval_alignment.tsv", write_alignment, &ao) != 0)
            rc = ARGS_EXIT_RUNTIME;
    }
    free(r);
    return rc;
}

/* ---- the activations (eval --activations) ------------------------------------------------- */

typedef struct actstat_out {
    const char *model, *weights;
    const actstat_result *r;
    size_t n;
} actstat_out;

static int write_activations(FILE *f, const void *ctx)
{
    const actstat_out *a = ctx;
    return actstat_write_tsv(f, a->model, a->weights, a->r, a->n);
}

int cmd_activations(model *m, const size_t *lens, size_t nl, size_t samples,
                    unsigned long seed, const char *dir, const char *weights)
{
    char err[ARGS_ERR_MAX];
    actstat_result *r = calloc(ALIGN_MAX_RESULTS, sizeof *r);
    if (!r)
        return args_run_error("out of memory");
    const task *t = task_open(&m->cfg, err, sizeof err);
    size_t nr = 0;
    const int got = !t ? -1 : actstat_run(m, t, lens, nl, samples, seed, r, ALIGN_MAX_RESULTS,
                                          &nr, err, sizeof err);
    task_close(t);
    int rc = 0;
    if (got != 0) {
        rc = args_run_error("--activations: %s", err);
    } else if (nr == 0) {
        printf("%s declares no activation (gates, cells) in its trace: nothing to sum\n",
               m->ops->name);
    } else {
        printf("\n%-14s %-9s %6s %-12s %8s %8s %8s %8s\n", "model", "weights", "length",
               "matrix", "mean", "share_hi", "share_lo", "range");
        for (size_t k = 0; k < nr; k++) {
            const double N = (double)r[k].values;
            printf("%-14s %-9s %6zu %-12s %8.4f %8.4f %8.4f %.3f..%.3f\n", m->ops->name,
                   weights, r[k].len, r[k].name, r[k].sum / N, (double)r[k].hi / N,
                   (double)r[k].lo / N, r[k].min, r[k].max);
        }
        actstat_out ao = {m->ops->name, weights, r, nr};
        if (dir && cmd_write_file(dir, "eval_activations.tsv", write_activations, &ao) != 0)
            rc = ARGS_EXIT_RUNTIME;
    }
    free(r);
    return rc;
}

int cmd_untrain(model *m)
{
    rng_streams r;
    if (rng_open(&r, m->cfg.seed) != 0)
        return args_run_error("out of memory");
    m->ops->init(m, r.s[RNG_INIT]);
    rng_close(&r);
    return 0;
}

/* ---- the trace (attention, and train with --trace) ------------------------------------------ */

/* The tracefile's show hook: prints the matrix as a table (attention, train --trace
 * without --quiet). */
static void print_matrix(void *ctx, const char *name, const gsl_matrix *m,
                         const char (*rows)[16], const char (*cols)[16])
{
    report_print_matrix(ctx, name, m, rows, cols);
}

int cmd_write_trace(model *m, const int *src, size_t Ts, size_t Tt, const char *dir,
                    int print)
{
    char err[ARGS_ERR_MAX];
    if (!m->ops->trace)
        return args_run_error("model %s records no trace", m->ops->name);
    const task *t = task_open(&m->cfg, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    if (Tt == 0)
        Tt = task_target_len(t, Ts);
    const size_t V = m->cfg.symbols;
    int *out = malloc(Tt * sizeof *out);
    tracefile c;
    memset(&c, 0, sizeof c);
    int rc = 0;
    char fig_dir[AFILE_PATH_MAX];
    if (!out) {
        rc = args_run_error("out of memory");
        goto done;
    }
    if (afile_mkdirs(dir, err, sizeof err) != 0) {
        rc = args_run_error("--out: %s", err);
        goto done;
    }
    if (m->ops->reserve(m, 1, Ts, Tt) != 0) {
        rc = args_run_error("out of memory");
        goto done;
    }
    /* decode first so the target axis can be labelled with what the model emitted */
    if (model_decode(m, src, 1, Ts, Tt, out) != 0) {
        rc = args_run_error("%s decode failed: %s", m->ops->name, model_last_error());
        goto done;
    }
    if (tracefile_init(&c, m, t, src, Ts, out, Tt, dir) != 0) {
        rc = args_run_error("out of memory");
        goto done;
    }
    if (print) {
        c.show = print_matrix;
        c.show_ctx = stdout;
        printf("source:  ");
        cmd_print_tokens(stdout, t, V, src, Ts);
        printf("\ndecoded: ");
        cmd_print_tokens(stdout, t, V, out, Tt);
        printf("\n\n");
    }
    /* a refusal of the sink is a file that could not be written; any other failure is
     * the model's report (error contract) */
    if (model_trace(m, src, Ts, Tt, out, tracefile_sink, &c) != 0 || c.failed) {
        if (c.failed && c.err[0])
            args_run_error("%s", c.err);
        rc = c.failed ? args_run_error("could not write the trace into %s", dir)
                      : args_run_error("%s trace failed: %s", m->ops->name,
                                       model_last_error());
    }
    /* the labels and numbers as gnuplot variables, and DIR/figures/ for the figures
     * (gnuplot -e "dir='DIR'; trace='DIR'" plots/attention.gp): the scripts make no
     * folder, they start no shell */
    else if (report_write_trace_vars(dir, err, sizeof err) != 0 ||
             safedir_enter(dir, "figures", fig_dir, sizeof fig_dir, err, sizeof err) != 0)
        rc = args_run_error("%s", err);
done:
    task_close(t);
    free(out);
    tracefile_free(&c);
    return rc;
}

/* ---- the cost of a trained model ---------------------------------------------------- */

/* The cost of each requested length (cost.tsv): measured first, then written. */
typedef struct cost_rows {
    const char *model;
    const size_t *lens;
    size_t n;
    double *train_ms, *flops, *decode_ms; /* (n) each */
} cost_rows;

static int write_cost(FILE *f, const void *ctx)
{
    const cost_rows *c = ctx;
    fprintf(f, "model\tlen\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq\n");
    for (size_t k = 0; k < c->n; k++)
        fprintf(f, "%s\t%zu\t%.6g\t%.6g\t%.6g\n", c->model, c->lens[k], c->train_ms[k],
                c->flops[k], c->decode_ms[k]);
    return ferror(f) ? -1 : 0;
}

int cmd_measure_cost(model *m, const size_t *lens, size_t n, const gsl_rng *r,
                        const char *dir)
{
    char err[ARGS_ERR_MAX];
    const task *t = task_open(&m->cfg, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    double *v = malloc(3 * n * sizeof *v);
    if (!v) {
        task_close(t);
        return args_run_error("out of memory");
    }
    cost_rows c = {m->ops->name, lens, n, v, v + n, v + 2 * n};
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        const size_t L = lens[k];
        if (bench_cost(m, t, L, m->cfg.batch, 3, r, &c.train_ms[k], &c.decode_ms[k]) != 0)
            rc = args_run_error("measuring the cost at length %zu failed: %s", L,
                                model_last_error()[0] ? model_last_error() : "out of memory");
        else
            c.flops[k] = m->ops->flops(&m->cfg, L, task_target_len(t, L));
    }
    if (rc == 0 && cmd_write_file(dir, "cost.tsv", write_cost, &c) != 0)
        rc = ARGS_EXIT_RUNTIME;
    task_close(t);
    free(v);
    return rc;
}
