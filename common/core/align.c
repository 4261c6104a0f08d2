/* align.c — attention's alignment scored over a test set (see align.h). */
#include "align.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* What the sink of one example needs: where the results of this length start, how many
 * there are room for, and the task's answer to "which source symbol does output t
 * repeat". */
typedef struct align_ctx {
    const task *t;
    size_t len;
    align_result *first; /* this length's results */
    size_t n, max;       /* how many there are; room */
    int full;            /* a map did not fit */
} align_ctx;

/* Scores one matrix the trace sent: only a map of decoded outputs over the source. */
static int align_sink(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                      const char *cols)
{
    align_ctx *c = ctx;
    if (strcmp(rows, "tgt") != 0 || strcmp(cols, "src") != 0 || m->size2 != c->len)
        return 0;
    align_result *r = NULL;
    for (size_t k = 0; k < c->n && !r; k++)
        if (strcmp(c->first[k].name, name) == 0)
            r = &c->first[k];
    if (!r) {
        if (c->n == c->max || strlen(name) >= ALIGN_NAME_MAX) {
            c->full = 1;
            return -1;
        }
        r = &c->first[c->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", name);
        r->len = c->len;
    }
    r->examples++;
    for (size_t i = 0; i < m->size1; i++) {
        const size_t want = c->t->source_of(c->len, i);
        size_t best = 0;
        for (size_t j = 1; j < m->size2; j++)
            if (gsl_matrix_get(m, i, j) > gsl_matrix_get(m, i, best))
                best = j;
        r->rows++;
        r->hits += best == want;
        r->weight += gsl_matrix_get(m, i, want);
    }
    return 0;
}

int align_trace_stream(model *m, const task *t, size_t L, size_t samples, unsigned long seed,
                       trace_sink sink, void *ctx, char *err, size_t n)
{
    const size_t Tt = task_target_len(t, L);
    batch b;
    int *pred = NULL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r || batch_alloc(&b, 1, L, Tt) != 0 || !(pred = malloc(Tt * sizeof *pred))) {
        if (r)
            gsl_rng_free(r);
        free(pred);
        snprintf(err, n, "out of memory for tracing sequences of length %zu", L);
        return -1;
    }
    int rc = 0;
    /* eval_run's stream of this length: its first sequences, one at a time */
    gsl_rng_set(r, rng_stream_seed((uint64_t)seed * 65537u + L, RNG_EVAL));
    if (m->ops->reserve(m, 1, L, Tt) != 0) {
        snprintf(err, n, "out of memory for tracing a sequence of length %zu", L);
        rc = -1;
    }
    for (size_t s = 0; s < samples && rc == 0; s++) {
        task_fill(t, &b, 1, L, m->cfg.symbols, r);
        if (m->ops->trace(m, b.src, L, Tt, pred, sink, ctx) != 0) {
            snprintf(err, n, "%s trace failed: %s", m->ops->name, model_last_error());
            rc = -1;
        }
    }
    batch_free(&b);
    free(pred);
    gsl_rng_free(r);
    return rc;
}

int align_check_lengths(const model *m, const size_t *lens, size_t nl, char *err, size_t n)
{
    if (!m->ops->trace) {
        snprintf(err, n, "%s records no matrices (it has no trace)", m->ops->name);
        return -1;
    }
    for (size_t k = 0; k < nl; k++)
        if (lens[k] == 0 || lens[k] > m->cfg.max_len) {
            snprintf(err, n, "length %zu is outside 1..%zu (the model's max_len)", lens[k],
                     m->cfg.max_len);
            return -1;
        }
    return 0;
}

int align_run(model *m, const task *t, const size_t *lens, size_t nl, size_t samples,
              unsigned long seed, align_result *out, size_t max, size_t *n_out, char *err,
              size_t n)
{
    *n_out = 0;
    if (t->data || !t->source_of) {
        snprintf(err, n, "task %s: its outputs do not each repeat one source symbol, so "
                 "there is no right place to attend to (accepted: copy, reverse)", t->name);
        return -1;
    }
    if (align_check_lengths(m, lens, nl, err, n) != 0)
        return -1;
    for (size_t k = 0; k < nl; k++) {
        align_ctx c = {t, lens[k], out + *n_out, 0, max - *n_out, 0};
        const int rc = align_trace_stream(m, t, lens[k], samples, seed, align_sink, &c, err, n);
        if (rc != 0 && c.full)
            snprintf(err, n, "more attention maps than the %zu there is room for", max);
        if (rc != 0)
            return -1;
        *n_out += c.n;
    }
    return 0;
}

int align_write_tsv(FILE *f, const char *model_name, const align_result *r, size_t nr)
{
    fprintf(f, "model\tlen\tmatrix\texamples\trows\targmax_acc\tweight_mean\n");
    for (size_t k = 0; k < nr; k++)
        fprintf(f, "%s\t%zu\t%s\t%zu\t%zu\t%.6f\t%.6f\n", model_name, r[k].len, r[k].name,
                r[k].examples, r[k].rows, r[k].rows ? (double)r[k].hits / (double)r[k].rows : 0.0,
                r[k].rows ? r[k].weight / (double)r[k].rows : 0.0);
    return ferror(f) ? -1 : 0;
}
