/* testtfm.c — what the Transformer's test files share (see testtfm.h). */
#include "testtfm.h"

#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static size_t watch_size(const tt_relu_watch *w)
{
    size_t total = 0;
    for (size_t k = 0; k < w->n; k++)
        total += w->H[k]->size1 * w->H[k]->size2;
    return total;
}

/* Records the pattern of the last forward. */
void tt_watch_start(tt_relu_watch *w)
{
    free(w->sign);
    w->sign = malloc(watch_size(w) + 1);
    ck_assert_ptr_nonnull(w->sign);
    size_t i = 0;
    for (size_t k = 0; k < w->n; k++)
        for (size_t r = 0; r < w->H[k]->size1; r++)
            for (size_t f = 0; f < w->H[k]->size2; f++)
                w->sign[i++] = gsl_matrix_get(w->H[k], r, f) > 0.0;
    w->evaluations = w->crossings = 0;
}

/* Counts the pre-activations on the other side of the kink than when recorded. */
void tt_watch_check(tt_relu_watch *w)
{
    if (!w->sign)
        return;
    size_t i = 0;
    w->evaluations++;
    for (size_t k = 0; k < w->n; k++)
        for (size_t r = 0; r < w->H[k]->size1; r++)
            for (size_t f = 0; f < w->H[k]->size2; f++)
                w->crossings += w->sign[i++] != (gsl_matrix_get(w->H[k], r, f) > 0.0);
}

/* Ends a check: it must have evaluated the loss and never crossed a kink. */
void tt_watch_end(tt_relu_watch *w)
{
    ck_assert(w->evaluations > 0);
    ck_assert_msg(w->crossings == 0, "%zu ReLU pre-activations crossed 0 during the check",
                  w->crossings);
    free(w->sign);
    w->sign = NULL;
}

/* TFM_REPORT as a number: 0 when unset. */
int tt_report_level(void)
{
    const char *v = getenv("TFM_REPORT");
    return v ? atoi(v) : 0;
}

/* Prints the largest error of one gradient check when TFM_REPORT ≥ 1. Flushed at once:
 * a failing check ends its (forked) test before stdout would be flushed. */
void tt_report(const char *what, double err)
{
    if (tt_report_level() >= 1)
        printf("tfm gradcheck %-28s max rel err %.2e\n", what, err);
    fflush(stdout);
}

/* A block of the test's own, laid out by fn (common/core/carve.h): counted and allocated by
 * carve_reserve, then cut. carve_free releases it. */
carve_block tt_cut_block(carve_layout fn, void *ctx)
{
    carve_block blk = {0};
    ck_assert_int_eq(carve_reserve(&blk, fn, ctx), 0);
    carver cut = carve_start(&blk);
    fn(&cut, ctx);
    return blk;
}

/* Fills every tensor of an arena with non-round values; gains of layer norm near 1. */
void tt_fill_arena(arena *a, const gsl_rng *r)
{
    for (size_t k = 0; k < a->n_tensors; k++) {
        gsl_matrix *w = arena_w(a, k);
        tu_fill(w, 0.5, r);
        const char *name = a->spec[k].name;
        size_t len = strlen(name);
        if (len >= 2 && strcmp(name + len - 2, ".g") == 0)
            gsl_matrix_add_constant(w, 1.0);
    }
}

/* Central difference of loss with respect to x[i], step GRADCHECK_H; x[i] restored. */
double tt_numeric(gradcheck_loss loss, void *ctx, double *x)
{
    const double saved = *x;
    *x = saved + GRADCHECK_H;
    const double up = loss(ctx);
    *x = saved - GRADCHECK_H;
    const double down = loss(ctx);
    *x = saved;
    return (up - down) / (2.0 * GRADCHECK_H);
}

/* Checks the gradient g of tensor w (its name says which). Returns the largest error.
 *
 * The key bias b_k (columns D .. 2D−1 of an attention block's b_in) has gradient 0 in
 * exact arithmetic: it adds q·b_k to every score of a row, and a softmax ignores a shift
 * of its whole row. Its finite differences are then the loss's rounding noise (about
 * ε·|L|/h) and its analytic gradient the backward's rounding noise, so a relative error
 * would compare two noises. Those entries are checked to be zero instead: analytic below
 * 1e-13, numeric below 1e-9 (far above the noise, far below any real gradient here).
 * b_q and b_v, and every other tensor, are held to the relative tolerance. */
double tt_gradcheck_tensor(const char *name, gradcheck_loss loss, void *ctx,
                           gsl_matrix *w, const gsl_matrix *g)
{
    const size_t len = strlen(name);
    if (len < 4 || strcmp(name + len - 4, "b_in") != 0)
        return tu_gradcheck(name, loss, ctx, w, g);
    const size_t D = w->size2 / 3;
    size_t worst = 0;
    double err = 0.0;
    for (size_t part = 0; part < 3; part += 2) { /* b_q, then b_v */
        double e = gradcheck_array(loss, ctx, w->data + part * D, g->data + part * D, D,
                                   GRADCHECK_H, 1, &worst);
        ck_assert_msg(e < GRADCHECK_TOL, "%s: relative error %.3g at (0, %zu)", name, e,
                      part * D + worst);
        err = fmax(err, e);
    }
    for (size_t k = D; k < 2 * D; k++) {
        ck_assert_msg(fabs(g->data[k]) < 1e-13, "%s: key bias gradient %g at %zu", name,
                      g->data[k], k);
        const double n = tt_numeric(loss, ctx, w->data + k);
        ck_assert_msg(fabs(n) < 1e-9, "%s: key bias moves the loss: %g at %zu", name, n, k);
    }
    return err;
}

/* Checks the gradient of every tensor of arena a; returns the largest error. */
double tt_gradcheck_arena(arena *a, gradcheck_loss loss, void *ctx)
{
    double worst = 0.0;
    for (size_t k = 0; k < a->n_tensors; k++) {
        double e = tt_gradcheck_tensor(a->spec[k].name, loss, ctx, arena_w(a, k), arena_g(a, k));
        if (tt_report_level() >= 2)
            printf("    %-24s %.2e\n", a->spec[k].name, e);
        worst = fmax(worst, e);
    }
    return worst;
}

/* now (n) holds the gradients after two backward passes, once after one: now = 2·once,
 * to rounding. Entries that are rounding noise themselves (the key bias) are compared
 * against a floor of 1e-14 of the largest gradient. */
void tt_assert_doubled(const double *now, const double *once, size_t n)
{
    double big = 0.0;
    for (size_t i = 0; i < n; i++)
        big = fmax(big, fabs(once[i]));
    ck_assert(big > 0.0);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(now[i] - 2.0 * once[i]) <= 1e-12 * fabs(now[i]) + 1e-14 * big,
                      "entry %zu: %.17g after two passes, %.17g after one", i, now[i],
                      once[i]);
}

/* Smallest |z| of the pre-activations z = X·W_1ᵀ + b_1 of a feed-forward block. */
double tt_ffn_margin(const gsl_matrix *X, const tfm_ffn *p)
{
    double best = INFINITY;
    for (size_t r = 0; r < X->size1; r++)
        for (size_t f = 0; f < p->w1->size1; f++) {
            double z = gsl_matrix_get(p->b1, 0, f);
            for (size_t d = 0; d < X->size2; d++)
                z += gsl_matrix_get(X, r, d) * gsl_matrix_get(p->w1, f, d);
            best = fmin(best, fabs(z));
        }
    return best;
}

/* A causal mask (T, T): 0 on and below the diagonal, −∞ above. */
gsl_matrix *tt_causal_mask(size_t T)
{
    gsl_matrix *M = gsl_matrix_alloc(T, T);
    for (size_t i = 0; i < T; i++)
        for (size_t j = 0; j < T; j++)
            gsl_matrix_set(M, i, j, j <= i ? 0.0 : -INFINITY);
    return M;
}

double tt_layer_margin(const tfm_sub_act *s, const gsl_matrix *x, const tfm_ffn *p,
                       int post_ln)
{
    return tt_ffn_margin(tfm_sublayer_input(s, x, post_ln), p);
}
