/* gradcheck.c — central finite differences against analytic gradients (see gradcheck.h). */
#include "gradcheck.h"

#include <math.h>

double gradcheck_relerr(double analytic, double numeric)
{
    double den = fabs(analytic) + fabs(numeric);
    if (den < GRADCHECK_TINY)
        den = GRADCHECK_TINY;
    return fabs(analytic - numeric) / den;
}

/* The fourth-order central difference of loss at x[i] with step h (x[i] restored). */
static double central_difference(gradcheck_loss loss, void *ctx, double *x, size_t i, double h)
{
    const double saved = x[i];
    x[i] = saved + h;
    const double up1 = loss(ctx);
    x[i] = saved - h;
    const double down1 = loss(ctx);
    x[i] = saved + 2.0 * h;
    const double up2 = loss(ctx);
    x[i] = saved - 2.0 * h;
    const double down2 = loss(ctx);
    x[i] = saved;
    /* the h² error terms of the two spans cancel */
    return (8.0 * (up1 - down1) - (up2 - down2)) / (12.0 * h);
}

/* The fourth-order one-sided difference of loss at x[i], stepping towards dir (+1 or
 * −1) only: it never looks at the other side of x[i], where a kink may sit. */
static double one_sided_difference(gradcheck_loss loss, void *ctx, double *x, size_t i,
                                   double h, double dir)
{
    const double saved = x[i];
    double f[5];
    for (int k = 0; k < 5; k++) {
        x[i] = saved + dir * (double)k * h;
        f[k] = loss(ctx);
    }
    x[i] = saved;
    return dir * (-25.0 * f[0] + 48.0 * f[1] - 36.0 * f[2] + 16.0 * f[3] - 3.0 * f[4]) /
           (12.0 * h);
}

double gradcheck_array(gradcheck_loss loss, void *ctx, double *x, const double *g, size_t n,
                       double h, size_t stride, size_t *worst)
{
    double max_err = 0.0;
    if (stride == 0)
        stride = 1;
    if (worst)
        *worst = 0;
    for (size_t i = 0; i < n; i += stride) {
        double err = gradcheck_relerr(g[i], central_difference(loss, ctx, x, i, h));
        /* A kink (ReLU at 0) within 2h of x[i] spoils the difference, not the gradient.
         * Smaller steps step over it; a wrong gradient stays wrong at every step, so
         * keeping the best of three cannot hide an error of the backward pass. */
        for (double hs = h / 4; err >= GRADCHECK_TOL && hs >= h / 16; hs /= 4) {
            const double e = gradcheck_relerr(g[i], central_difference(loss, ctx, x, i, hs));
            if (e < err)
                err = e;
        }
        /* a kink closer still: differences from one side only, each side in turn */
        for (double dir = -1.0; err >= GRADCHECK_TOL && dir <= 1.0; dir += 2.0)
            for (double hs = h / 4; err >= GRADCHECK_TOL && hs >= h / 64; hs /= 4) {
                const double e =
                    gradcheck_relerr(g[i], one_sided_difference(loss, ctx, x, i, hs, dir));
                if (e < err)
                    err = e;
            }
        if (!(err <= max_err)) { /* also catches NaN */
            max_err = isnan(err) ? INFINITY : err;
            if (worst)
                *worst = i;
        }
    }
    return max_err;
}

/* The loss of a model on a batch, as gradcheck_array wants it. */
typedef struct model_loss_ctx {
    model *m;
    const batch *b;
} model_loss_ctx;

static double model_loss(void *ctx)
{
    model_loss_ctx *c = ctx;
    return model_forward(c->m, c->b, NULL);
}

double gradcheck_model(model *m, const batch *b, size_t stride, gradcheck_report report,
                       void *ctx)
{
    arena *a = &m->params;
    arena_zero_grad(a);
    if (isnan(model_forward(m, b, NULL)) || model_backward(m, b) != 0)
        return INFINITY; /* the model reported why (model_last_error) */
    model_loss_ctx lc = {m, b};
    double max_err = 0.0;
    for (size_t k = 0; k < a->n_tensors; k++) {
        size_t worst = 0;
        double err = gradcheck_array(model_loss, &lc, a->data + a->offset[k],
                                     a->grad + a->offset[k], arena_numel(a, k), GRADCHECK_H,
                                     stride, &worst);
        if (report)
            report(ctx, a->spec[k].name, err, worst / a->spec[k].cols,
                   worst % a->spec[k].cols);
        if (!(err <= max_err))
            max_err = err;
    }
    return max_err;
}
