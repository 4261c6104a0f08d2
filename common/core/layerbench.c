/* layerbench.c — one layer measured on its own: time, path of the gradient, crossings
 * (see layerbench.h for the interface and the conventions of the counts).
 *
 * Design. Everything here runs in the calling process and uses only C11, GSL and the
 * clock of train.c, so any front-end can call it; setting BLAS threads and writing files
 * is the command's (layerbench_cmd.c). A measurement owns every array it uses: the layer
 * (made by its ops), X, Y, dY and dX (n, d) each, and the repetitions' times.
 */
#include "layerbench.h"

#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void layerbench_input(gsl_matrix *X, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) { /* no stream: a fixed input still lets the caller go on */
        gsl_matrix_set_all(X, 1.0);
        return;
    }
    gsl_rng_set(r, seed);
    /* row by row, an even count each time (op_normal draws pairs), so row i has the same
     * values whatever the number of rows after it */
    const size_t d = X->size2;
    for (size_t i = 0; i < X->size1; i++) {
        double *row = gsl_matrix_ptr(X, i, 0);
        op_normal(row, d - d % 2, 1.0, r);
        if (d % 2) {
            double pair[2];
            op_normal(pair, 2, 1.0, r);
            row[d - 1] = pair[0];
        }
    }
    gsl_rng_free(r);
}

/* The four (n, d) matrices a measurement passes to its layer. */
typedef struct io {
    gsl_matrix *X, *Y, *dY, *dX;
} io;

static void io_free(io *m)
{
    gsl_matrix_free(m->X);
    gsl_matrix_free(m->Y);
    gsl_matrix_free(m->dY);
    gsl_matrix_free(m->dX);
}

static int io_alloc(io *m, size_t n, size_t d)
{
    m->X = gsl_matrix_alloc(n, d);
    m->Y = gsl_matrix_alloc(n, d);
    m->dY = gsl_matrix_calloc(n, d);
    m->dX = gsl_matrix_alloc(n, d);
    if (m->X && m->Y && m->dY && m->dX)
        return 0;
    io_free(m);
    return -1;
}

/* The path of the gradient on the arrays of m (X already filled). */
static void path_of(layerbench_layer *l, io *m, double *norm, double *rel)
{
    const size_t n = l->n, d = l->d;
    /* forward, then dY = 0 except its last row u = (1, ..., 1)/√d */
    l->ops->forward(l, m->Y, m->X);
    gsl_matrix_set_zero(m->dY);
    gsl_vector_view last = gsl_matrix_row(m->dY, n - 1);
    gsl_vector_set_all(&last.vector, 1.0 / sqrt((double)d));
    arena_zero_grad(&l->params);
    l->ops->backward(l, m->dX, m->dY);
    /* row 1 of dX is uᵀ·∂y_n/∂x_1; its norm against the mean norm of all rows */
    double first = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        gsl_vector_const_view row = gsl_matrix_const_row(m->dX, i);
        const double v = gsl_blas_dnrm2(&row.vector);
        if (i == 0)
            first = v;
        sum += v;
    }
    *norm = first;
    *rel = sum > 0 ? first / (sum / (double)n) : 0.0;
}

void layerbench_path(layerbench_layer *l, unsigned long seed, double *norm, double *rel)
{
    io m;
    *norm = *rel = NAN;
    if (io_alloc(&m, l->n, l->d) != 0)
        return;
    layerbench_input(m.X, seed);
    path_of(l, &m, norm, rel);
    io_free(&m);
}

int layerbench_measure(const layerbench_ops *ops, size_t d, size_t n, size_t reps,
                       double min_seconds, unsigned long seed, size_t threads,
                       layerbench_row *out)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double *t = malloc((reps ? reps : 1) * sizeof *t);
    io m = {0};
    layerbench_layer *l = NULL;
    int rc = -1;
    if (!r || !t || io_alloc(&m, n, d) != 0)
        goto done;
    gsl_rng_set(r, seed);
    if (!(l = ops->create(d, n, r)))
        goto done;
    memset(out, 0, sizeof *out);
    out->ops = ops;
    out->d = d;
    out->n = n;
    out->threads = threads;
    out->flops = ops->flops(d, (double)n);
    out->seq_ops = ops->sequential_ops(d, n);
    layerbench_input(m.X, seed + 1);
    path_of(l, &m, &out->path_norm, &out->path_rel); /* also the warm-up's forward */
    /* timing: dY with every row non-zero, as a loss gives it */
    op_normal(m.dY->data, n * d - (n * d) % 2, 1.0, r);
    for (size_t k = 0; k <= reps; k++) { /* k = 0: warm-up, not kept */
        size_t calls = 0;
        double t0 = train_now(), dt;
        do {
            arena_zero_grad(&l->params);
            ops->forward(l, m.Y, m.X);
            ops->backward(l, m.dX, m.dY);
            calls++;
            dt = train_now() - t0;
        } while (dt < min_seconds);
        if (k)
            t[k - 1] = dt / (double)calls;
    }
    qsort(t, reps, sizeof *t, cmp_double);
    out->t_min = t[0];
    out->t_max = t[reps - 1];
    out->t_median = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    rc = 0;
done:
    if (l)
        ops->destroy(l);
    io_free(&m);
    free(t);
    gsl_rng_free(r);
    return rc;
}

double layerbench_flops_crossover(const layerbench_ops *rec, const layerbench_ops *att,
                                  size_t d)
{
    /* g(n) = rec − att: positive while the recurrent layer costs more (short sequences:
     * attention's projections cost less than four gates), negative once attention's n²
     * terms dominate. Find a bracket by doubling, then halve it. */
    double lo = 1e-9, hi = 1.0;
    if (rec->flops(d, lo) - att->flops(d, lo) <= 0)
        return NAN; /* attention costs more even for the shortest sequence */
    while (rec->flops(d, hi) - att->flops(d, hi) > 0) {
        lo = hi;
        hi *= 2;
        if (hi > 1099511627776.0) /* 2^40 */
            return NAN;
    }
    while (hi - lo > 1e-12 * hi) {
        const double mid = 0.5 * (lo + hi);
        if (rec->flops(d, mid) - att->flops(d, mid) > 0)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double layerbench_time_crossover(const size_t *n, const double *t_rec, const double *t_att,
                                 size_t k)
{
    for (size_t i = 0; i + 1 < k; i++) {
        const double a = log(t_rec[i] / t_att[i]), b = log(t_rec[i + 1] / t_att[i + 1]);
        if (a == 0)
            return (double)n[i];
        if ((a > 0) != (b > 0) || b == 0) {
            /* the line through (log n_i, a) and (log n_i+1, b) meets 0 */
            const double x0 = log((double)n[i]), x1 = log((double)n[i + 1]);
            return exp(x0 + (x1 - x0) * a / (a - b));
        }
    }
    return NAN;
}

/* The rows of layer ops at width d and thread count th, in the order given: up to max of
 * their lengths and median times into n and t. Returns how many. */
static size_t series(const layerbench_row *r, size_t count, const layerbench_ops *ops,
                     size_t d, size_t th, size_t *n, double *t, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < count && k < max; i++)
        if (r[i].ops == ops && r[i].d == d && r[i].threads == th) {
            n[k] = r[i].n;
            t[k++] = r[i].t_median;
        }
    return k;
}

/* Is (d, threads) of row i the first of its kind among rows 0..i? */
static int first_group(const layerbench_row *r, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (r[j].d == r[i].d && r[j].threads == r[i].threads)
            return 0;
    return 1;
}

/* Is ops the first row of its layer among rows 0..i? */
static int first_layer(const layerbench_row *r, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (r[j].ops == r[i].ops)
            return 0;
    return 1;
}

size_t layerbench_crossovers(const layerbench_row *r, size_t count, layerbench_cross *out,
                             size_t max)
{
    size_t k = 0;
    size_t *nr = malloc((count ? count : 1) * sizeof *nr);
    size_t *na = malloc((count ? count : 1) * sizeof *na);
    double *tr = malloc((count ? count : 1) * sizeof *tr);
    double *ta = malloc((count ? count : 1) * sizeof *ta);
    if (!nr || !na || !tr || !ta)
        goto done;
    for (size_t g = 0; g < count; g++) {
        if (!first_group(r, g))
            continue;
        const size_t d = r[g].d, th = r[g].threads;
        for (size_t i = 0; i < count; i++) {
            if (!first_layer(r, i) || strcmp(r[i].ops->kind, LAYERBENCH_RECURRENT) != 0)
                continue;
            for (size_t j = 0; j < count; j++) {
                if (!first_layer(r, j) || strcmp(r[j].ops->kind, LAYERBENCH_ATTENTION) != 0)
                    continue;
                const size_t a = series(r, count, r[i].ops, d, th, nr, tr, count);
                const size_t b = series(r, count, r[j].ops, d, th, na, ta, count);
                int same = a == b && a > 0;
                for (size_t q = 0; same && q < a; q++)
                    same = nr[q] == na[q];
                if (k < max)
                    out[k] = (layerbench_cross){
                        .rec = r[i].ops,
                        .att = r[j].ops,
                        .d = d,
                        .threads = th,
                        .n_flops = layerbench_flops_crossover(r[i].ops, r[j].ops, d),
                        .n_time = same ? layerbench_time_crossover(nr, tr, ta, a) : NAN,
                    };
                k++;
            }
        }
    }
done:
    free(nr);
    free(na);
    free(tr);
    free(ta);
    return k < max ? k : max;
}

int layerbench_write_tsv(FILE *f, const layerbench_row *r, size_t count)
{
    fprintf(f, "layer\tkind\td\tn\tthreads\tflops\tseconds_median\tseconds_min\t"
               "seconds_max\tgflops\tsequential_ops\tpath_grad_norm\tpath_grad_rel\n");
    for (size_t i = 0; i < count; i++)
        fprintf(f, "%s\t%s\t%zu\t%zu\t%zu\t%.10g\t%.6g\t%.6g\t%.6g\t%.4g\t%.10g\t%.6g\t%.6g\n",
                r[i].ops->name, r[i].ops->kind, r[i].d, r[i].n, r[i].threads, r[i].flops,
                r[i].t_median, r[i].t_min, r[i].t_max,
                r[i].t_median > 0 ? r[i].flops / r[i].t_median * 1e-9 : 0.0, r[i].seq_ops,
                r[i].path_norm, r[i].path_rel);
    return ferror(f) ? -1 : 0;
}

void layerbench_print(FILE *f, const layerbench_row *r, size_t count)
{
    fprintf(f, "%-6s %-14s %5s %6s %3s %11s %27s %7s %8s %10s %9s\n", "layer", "kind", "d",
            "n", "thr", "MFLOP", "ms fwd+bwd (min-max)", "GFLOP/s", "seq.ops",
            "path norm", "path rel");
    for (size_t i = 0; i < count; i++) {
        char ms[48];
        snprintf(ms, sizeof ms, "%.3g (%.3g-%.3g)", 1e3 * r[i].t_median, 1e3 * r[i].t_min,
                 1e3 * r[i].t_max);
        fprintf(f, "%-6s %-14s %5zu %6zu %3zu %11.4g %27s %7.2f %8.0f %10.3g %9.3g\n",
                r[i].ops->name, r[i].ops->kind, r[i].d, r[i].n, r[i].threads,
                r[i].flops * 1e-6, ms,
                r[i].t_median > 0 ? r[i].flops / r[i].t_median * 1e-9 : 0.0, r[i].seq_ops,
                r[i].path_norm, r[i].path_rel);
    }
}

int layerbench_write_crossover_tsv(FILE *f, const layerbench_cross *c, size_t count)
{
    fprintf(f, "recurrent\tattention\td\tthreads\tn_flops\tn_time\n");
    for (size_t i = 0; i < count; i++)
        fprintf(f, "%s\t%s\t%zu\t%zu\t%.6g\t%.6g\n", c[i].rec->name, c[i].att->name, c[i].d,
                c[i].threads, c[i].n_flops, c[i].n_time);
    return ferror(f) ? -1 : 0;
}

void layerbench_print_crossover(FILE *f, const layerbench_cross *c, size_t count)
{
    fprintf(f, "%-9s %-9s %5s %3s %16s %16s\n", "recurrent", "attention", "d", "thr",
            "n* (FLOPs)", "n* (time)");
    for (size_t i = 0; i < count; i++) {
        char tm[32];
        if (isnan(c[i].n_time))
            snprintf(tm, sizeof tm, "not in range");
        else
            snprintf(tm, sizeof tm, "%.1f", c[i].n_time);
        fprintf(f, "%-9s %-9s %5zu %3zu %16.1f %16s\n", c[i].rec->name, c[i].att->name,
                c[i].d, c[i].threads, c[i].n_flops, tm);
    }
}

double layerbench_recurrent_sequential_ops(size_t d, size_t n)
{
    (void)d;
    return 2.0 * (double)n + 2.0;
}
