/* tensor.c — arenas of named tensors and the shared numeric ops (see tensor.h). */
#include "tensor.h"

#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastmath.h"

int arena_alloc(arena *a, const arena_spec *spec, size_t n)
{
    memset(a, 0, sizeof *a);
    if (n == 0)
        return -1;
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        if (spec[k].name[0] == '\0' || spec[k].rows == 0 || spec[k].cols == 0)
            return -1;
        for (size_t j = 0; j < k; j++)
            if (strcmp(spec[j].name, spec[k].name) == 0)
                return -1;
        if (spec[k].rows > SIZE_MAX / spec[k].cols)
            return -1;
        size_t numel = spec[k].rows * spec[k].cols;
        if (numel > SIZE_MAX / sizeof(double) - total)
            return -1;
        total += numel;
    }
    a->spec = malloc(n * sizeof *a->spec);
    a->offset = malloc(n * sizeof *a->offset);
    a->w = malloc(n * sizeof *a->w);
    a->g = malloc(n * sizeof *a->g);
    a->data = calloc(total, sizeof(double));
    a->grad = calloc(total, sizeof(double));
    if (!a->spec || !a->offset || !a->w || !a->g || !a->data || !a->grad) {
        arena_free(a);
        return -1;
    }
    a->n_tensors = n;
    a->size = total;
    size_t off = 0;
    for (size_t k = 0; k < n; k++) {
        a->spec[k] = spec[k];
        a->offset[k] = off;
        a->w[k] = gsl_matrix_view_array(a->data + off, spec[k].rows, spec[k].cols);
        a->g[k] = gsl_matrix_view_array(a->grad + off, spec[k].rows, spec[k].cols);
        off += spec[k].rows * spec[k].cols;
    }
    return 0;
}

void arena_free(arena *a)
{
    free(a->spec);
    free(a->offset);
    free(a->w);
    free(a->g);
    free(a->data);
    free(a->grad);
    memset(a, 0, sizeof *a);
}

long arena_find(const arena *a, const char *name)
{
    for (size_t k = 0; k < a->n_tensors; k++)
        if (strcmp(a->spec[k].name, name) == 0)
            return (long)k;
    return -1;
}

gsl_matrix *arena_w(arena *a, size_t k) { return &a->w[k].matrix; }
gsl_matrix *arena_g(arena *a, size_t k) { return &a->g[k].matrix; }

size_t arena_numel(const arena *a, size_t k) { return a->spec[k].rows * a->spec[k].cols; }

void arena_zero_grad(arena *a)
{
    if (a->grad)
        memset(a->grad, 0, a->size * sizeof(double));
}

void op_uniform(double *x, size_t n, double bound, const gsl_rng *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = bound * (2.0 * gsl_rng_uniform(r) - 1.0);
}

void op_normal(double *x, size_t n, double sd, const gsl_rng *r)
{
    /* Marsaglia's polar method (1964): a point (u, v) uniform in the unit disc, with
     * s = u² + v², gives two independent standard normals
     *     u·√(−2 ln s / s)   and   v·√(−2 ln s / s).
     * The point is drawn uniform in the square [−1, 1)² and kept when 0 < s < 1 (π/4 of
     * the time). Its only elementary functions are fm_log and sqrt, both the same bits
     * everywhere (common/core/fastmath.c): GSL's samplers call libm. The second normal of a
     * pair is used too; for an odd n the last pair's second is dropped. */
    for (size_t i = 0; i < n;) {
        const double u = 2.0 * gsl_rng_uniform(r) - 1.0;
        const double v = 2.0 * gsl_rng_uniform(r) - 1.0;
        const double s = u * u + v * v;
        if (s >= 1.0 || s == 0.0)
            continue;
        const double k = sd * sqrt(-2.0 * fm_log(s) / s);
        x[i++] = u * k;
        if (i < n)
            x[i++] = v * k;
    }
}

void op_softmax_row(double *x, size_t n)
{
    double mx = -INFINITY;
    for (size_t j = 0; j < n; j++) {
        if (isnan(x[j])) { /* a NaN score poisons the row: let it show, never hide it */
            for (size_t k = 0; k < n; k++)
                x[k] = NAN;
            return;
        }
        if (x[j] > mx)
            mx = x[j];
    }
    if (mx == -INFINITY) { /* every entry masked: no distribution, all weights 0 */
        for (size_t j = 0; j < n; j++)
            x[j] = 0.0;
        return;
    }
    double sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        x[j] = fm_exp(x[j] - mx); /* e^−∞ = 0 exactly: masked entries vanish */
        sum += x[j];
    }
    double inv = 1.0 / sum; /* sum >= 1: the maximum contributes exp(0) */
    for (size_t j = 0; j < n; j++)
        x[j] *= inv;
}

void op_softmax_row_backward(double *dx, const double *dy, const double *y, size_t n)
{
    /* y_j = exp(x_j) / Σ_k exp(x_k)  ⇒  ∂y_j/∂x_i = y_j (δ_ij − y_i)
     * dx_i = Σ_j dy_j y_j (δ_ij − y_i) = y_i (dy_i − Σ_j dy_j y_j) */
    double dot = 0.0;
    for (size_t j = 0; j < n; j++)
        dot += dy[j] * y[j];
    for (size_t i = 0; i < n; i++)
        dx[i] += y[i] * (dy[i] - dot);
}

int op_argmax(const double *z, size_t n)
{
    size_t best = 0;
    for (size_t v = 1; v < n; v++)
        if (z[v] > z[best])
            best = v;
    return (int)best;
}

double op_cross_entropy(const gsl_matrix *logits, const int *targets, gsl_matrix *dlogits,
                        int *pred)
{
    const size_t N = logits->size1, V = logits->size2;
    double total = 0.0;
    for (size_t i = 0; i < N; i++) {
        const double *z = gsl_matrix_const_ptr(logits, i, 0);
        const size_t arg = (size_t)op_argmax(z, V);
        /* log Σ exp(z) = z_max + log Σ exp(z − z_max): no overflow */
        double sum = 0.0;
        for (size_t v = 0; v < V; v++)
            sum += fm_exp(z[v] - z[arg]);
        double lse = z[arg] + fm_log(sum);
        total += lse - z[targets[i]];
        if (pred)
            pred[i] = (int)arg;
        if (dlogits) {
            /* ∂(lse − z_t)/∂z_v = softmax_v − [v = t], averaged over N rows */
            double *d = gsl_matrix_ptr(dlogits, i, 0);
            for (size_t v = 0; v < V; v++)
                d[v] = fm_exp(z[v] - lse) / (double)N;
            d[targets[i]] -= 1.0 / (double)N;
        }
    }
    return total / (double)N;
}

int op_tokens_time_major(int *dst, const int *src, size_t B, size_t T, size_t V)
{
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++) {
            const int tok = src[b * T + t];
            if (tok < 0 || (size_t)tok >= V)
                return -1;
            dst[t * B + b] = tok;
        }
    return 0;
}

int op_tokens_check(const int *ids, size_t n, size_t V)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || (size_t)ids[i] >= V)
            return -1;
    return 0;
}

void op_tokens_batch_major(int *dst, const int *src, size_t B, size_t T)
{
    for (size_t t = 0; t < T; t++)
        for (size_t b = 0; b < B; b++)
            dst[b * T + t] = src[t * B + b];
}

void op_embed(gsl_matrix *out, const gsl_matrix *table, const int *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gsl_vector_const_view src = gsl_matrix_const_row(table, (size_t)ids[i]);
        gsl_vector_view dst = gsl_matrix_row(out, i);
        gsl_vector_memcpy(&dst.vector, &src.vector);
    }
}

void op_embed_backward(gsl_matrix *dtable, const gsl_matrix *dout, const int *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gsl_vector_const_view src = gsl_matrix_const_row(dout, i);
        gsl_vector_view dst = gsl_matrix_row(dtable, (size_t)ids[i]);
        gsl_vector_add(&dst.vector, &src.vector);
    }
}

void op_fill_rows(gsl_matrix *x, const gsl_matrix *bias)
{
    for (size_t i = 0; i < x->size1; i++)
        memcpy(gsl_matrix_ptr(x, i, 0), bias->data, x->size2 * sizeof(double));
}

void op_linear_forward(gsl_matrix *Y, const gsl_matrix *X, const gsl_matrix *W,
                       const gsl_matrix *b)
{
    op_fill_rows(Y, b);
    /* Y (N,n) += X (N,m) · Wᵀ (m,n) */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, X, W, 1.0, Y);
}

/* The two bias passes run on every linear layer of every model, so they are written to
 * vectorise (fm_add_row, compiled for each vector width by FM_CLONES). Each entry gets
 * the same additions in the same order as in the plain double loop (a row at a time,
 * rows in order), so every width gives the plain loop's bits: tests/test_tfm_layers.c holds
 * them to it. */
FM_CLONES
void op_add_bias(gsl_matrix *x, const gsl_matrix *bias)
{
    for (size_t i = 0; i < x->size1; i++)
        fm_add_row(gsl_matrix_ptr(x, i, 0), bias->data, x->size2);
}

FM_CLONES
void op_bias_backward(gsl_matrix *dbias, const gsl_matrix *dx)
{
    /* forward: x_i = ... + b for every row i, so db = Σ_i dx_i, added row after row */
    for (size_t i = 0; i < dx->size1; i++)
        fm_add_row(dbias->data, gsl_matrix_const_ptr(dx, i, 0), dx->size2);
}

/* ---- the attention softmax kernels ------------------------------------------------------------------
 * The one element-wise function of attention evaluated B·NH·Tq·Tk times, so it is written
 * to vectorise: e^x is fm_exp (common/core/fastmath.h), a call the compiler sees through, and
 * the maximum and the sum keep FM_LANES partial results (a running maximum or sum over k
 * is a chain the compiler may not reorder; FM_LANES chains side by side it may run as
 * one vector). FM_CLONES compiles each kernel for AVX2 and AVX-512 as well; every width
 * performs the same operations in the same order, so all give the same bits. */

FM_CLONES
void op_softmax_row_stat(double *restrict x, const double *restrict m, size_t n,
                     double *restrict stat)
{
    /* x ← x + m and its maximum in one pass; subtracting the maximum keeps every exp ≤ 1.
     * (x > mx ? x : mx) skips a NaN, as the scalar code did */
    double mx_l[FM_LANES], sum_l[FM_LANES];
    for (size_t l = 0; l < FM_LANES; l++) {
        mx_l[l] = -INFINITY;
        sum_l[l] = 0.0;
    }
    size_t k = 0;
    if (m)
        fm_axpy(x, 1.0, m, n); /* 1·m is m exactly: x + m */
    for (k = 0; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            mx_l[l] = x[k + l] > mx_l[l] ? x[k + l] : mx_l[l];
    for (size_t l = 0; k < n; k++, l++)
        mx_l[l] = x[k] > mx_l[l] ? x[k] : mx_l[l];
    const double mx = fm_lanes_max(mx_l);
    if (mx == -INFINITY) {
        /* every key masked: no distribution, all weights 0. The maximum skips NaN, so a
         * NaN can also land here: then, as everywhere, it poisons the whole row (with a
         * finite entry beside it, it does so through the sum below) */
        int nan = 0;
        for (k = 0; k < n; k++)
            nan |= isnan(x[k]);
        for (k = 0; k < n; k++)
            x[k] = nan ? NAN : 0.0;
        if (stat) {
            stat[0] = -INFINITY;
            stat[1] = nan ? NAN : 0.0;
        }
        return;
    }
    /* e_k = exp(x_k − max): a masked score is −∞ and fm_exp(−∞) is exactly 0, with no
     * branch; a NaN stays NaN and reaches every entry through the sum */
    for (k = 0; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const double e = fm_exp(x[k + l] - mx);
            x[k + l] = e;
            sum_l[l] += e;
        }
    for (size_t l = 0; k < n; k++, l++) {
        const double e = fm_exp(x[k] - mx);
        x[k] = e;
        sum_l[l] += e;
    }
    /* sum ≥ 1: the maximum contributes e^0 */
    const double inv = 1.0 / fm_lanes_sum(sum_l);
    fm_scal(x, inv, n);
    if (stat) {
        stat[0] = mx;
        stat[1] = inv;
    }
}

FM_CLONES
void op_softmax_row_replay(double *restrict x, const double *restrict m, size_t n,
                            const double *restrict stat)
{
    /* the forward's operations on the same scores in the same order, less the two
     * reductions whose results stat holds: the same bits */
    const double mx = stat[0], inv = stat[1];
    if (mx == -INFINITY) {
        const double fill = isnan(inv) ? NAN : 0.0;
        for (size_t k = 0; k < n; k++)
            x[k] = fill;
        return;
    }
    if (m)
        fm_axpy(x, 1.0, m, n);
    size_t k = 0;
    for (; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            x[k + l] = fm_exp(x[k + l] - mx);
    for (; k < n; k++)
        x[k] = fm_exp(x[k] - mx);
    fm_scal(x, inv, n);
}

FM_CLONES
void op_softmax_row_backward_inplace(double *restrict d, const double *restrict y, size_t n)
{
    /* y = softmax(x):  dx_k = y_k (dy_k − Σ_j dy_j y_j), written over dy once the sum is
     * known, so no second buffer has to be zeroed first */
    double dot_l[FM_LANES] = {0};
    size_t k = 0;
    for (; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            dot_l[l] += d[k + l] * y[k + l];
    for (size_t l = 0; k < n; k++, l++)
        dot_l[l] += d[k] * y[k];
    const double dot = fm_lanes_sum(dot_l);
    for (k = 0; k + FM_LANES <= n; k += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            d[k + l] = y[k + l] * (d[k + l] - dot);
    for (; k < n; k++)
        d[k] = y[k] * (d[k] - dot);
}
