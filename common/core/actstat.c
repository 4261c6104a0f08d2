/* actstat.c — activations summed over a test set (see actstat.h). */
#include "actstat.h"

#include <math.h>
#include <string.h>

#include "align.h"

/* What the sink of one length needs: the model's kinds of matrix, where this length's
 * results start and how many there are room for. */
typedef struct actstat_ctx {
    const model_trace_kind *kinds;
    size_t len;
    actstat_result *first;
    size_t n, max;
    int full; /* a matrix did not fit */
} actstat_ctx;

/* Whether name begins with the prefix of a kind the model declares an activation. */
static int is_activation(const model_trace_kind *k, const char *name)
{
    for (; k && k->prefix; k++)
        if (k->what == MODEL_TRACE_ACTIVATION && strncmp(name, k->prefix, strlen(k->prefix)) == 0)
            return 1;
    return 0;
}

/* Sums one matrix the trace sent, when it is an activation. */
static int actstat_sink(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                        const char *cols)
{
    (void)rows, (void)cols;
    actstat_ctx *c = ctx;
    if (!is_activation(c->kinds, name))
        return 0;
    actstat_result *r = NULL;
    for (size_t k = 0; k < c->n && !r; k++)
        if (strcmp(c->first[k].name, name) == 0)
            r = &c->first[k];
    if (!r) {
        if (c->n == c->max || strlen(name) >= ACTSTAT_NAME_MAX) {
            c->full = 1;
            return -1;
        }
        r = &c->first[c->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", name);
        r->len = c->len;
        r->min = INFINITY;
        r->max = -INFINITY;
    }
    r->examples++;
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < m->size2; j++) {
            const double v = gsl_matrix_get(m, i, j);
            r->values++;
            r->sum += v;
            r->sumsq += v * v;
            r->hi += v >= ACTSTAT_HI;
            r->lo += v <= ACTSTAT_LO;
            r->min = v < r->min ? v : r->min;
            r->max = v > r->max ? v : r->max;
        }
    return 0;
}

int actstat_run(model *m, const task *t, const size_t *lens, size_t nl, size_t samples,
                unsigned long seed, actstat_result *out, size_t max, size_t *n_out,
                char *err, size_t n)
{
    *n_out = 0;
    if (t->data) {
        snprintf(err, n, "task %s is read from a file: its sequences are not drawn per "
                 "length (accepted: copy, reverse)", t->name);
        return -1;
    }
    if (align_check_lengths(m, lens, nl, err, n) != 0)
        return -1;
    for (size_t k = 0; k < nl; k++) {
        actstat_ctx c = {m->ops->traces, lens[k], out + *n_out, 0, max - *n_out, 0};
        const int rc = align_trace_stream(m, t, lens[k], samples, seed, actstat_sink, &c, err, n);
        if (rc != 0 && c.full)
            snprintf(err, n, "more activation matrices than the %zu there is room for", max);
        if (rc != 0)
            return -1;
        *n_out += c.n;
    }
    return 0;
}

int actstat_write_tsv(FILE *f, const char *model_name, const char *weights,
                      const actstat_result *r, size_t nr)
{
    fprintf(f, "model\tweights\tlen\tmatrix\texamples\tvalues\tmean\tsd\tshare_hi\tshare_lo"
               "\tmin\tmax\n");
    for (size_t k = 0; k < nr; k++) {
        const double N = (double)r[k].values, mean = N > 0 ? r[k].sum / N : 0.0;
        const double var = N > 1 ? (r[k].sumsq - N * mean * mean) / (N - 1) : 0.0;
        fprintf(f, "%s\t%s\t%zu\t%s\t%zu\t%zu\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n", model_name,
                weights, r[k].len, r[k].name, r[k].examples, r[k].values, mean,
                var > 0 ? sqrt(var) : 0.0, N > 0 ? (double)r[k].hi / N : 0.0,
                N > 0 ? (double)r[k].lo / N : 0.0, r[k].min, r[k].max);
    }
    return ferror(f) ? -1 : 0;
}
