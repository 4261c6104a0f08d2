/* optim.c — Adam, clipping and warm-up over flat arrays (see optim.h). */
#include "optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastmath.h"

int optim_alloc(optim *o, size_t n, double beta1, double beta2, double eps)
{
    o->n = n;
    o->t = 0;
    o->beta1 = beta1;
    o->beta2 = beta2;
    o->eps = eps;
    o->m = calloc(n, sizeof(double));
    o->v = calloc(n, sizeof(double));
    if (!o->m || !o->v) {
        optim_free(o);
        return -1;
    }
    return 0;
}

void optim_free(optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
    o->n = 0;
}

double optim_norm(const double *g, size_t n)
{
    /* scaled sum of squares (as in BLAS dnrm2): ‖g‖ = scale · √ssq, no overflow */
    double scale = 0.0, ssq = 1.0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(g[i]);
        if (a == 0.0)
            continue;
        if (!(a <= scale)) { /* a > scale, or a is NaN (which then propagates) */
            ssq = 1.0 + ssq * (scale / a) * (scale / a);
            scale = a;
        } else {
            ssq += (a / scale) * (a / scale);
        }
    }
    return scale * sqrt(ssq);
}

double optim_clip(double *g, size_t n, double max_norm)
{
    double norm = optim_norm(g, n);
    if (max_norm > 0.0 && norm > max_norm) {
        double s = max_norm / norm;
        for (size_t i = 0; i < n; i++)
            g[i] *= s;
    }
    return norm;
}

void optim_adam_step(optim *o, double *w, const double *g, double lr)
{
    o->t++;
    const double b1 = o->beta1, b2 = o->beta2;
    /* fold both bias corrections into the step size, as Kingma & Ba suggest (§2):
     * lr · m̂/(√v̂ + ε) = lr_t · m / (√v + ε √(1−β2ᵗ)) with lr_t = lr √(1−β2ᵗ)/(1−β1ᵗ) */
    const double c1 = 1.0 - fm_pow(b1, (double)o->t);
    const double c2 = 1.0 - fm_pow(b2, (double)o->t);
    const double step = lr / c1;
    const double inv_sqrt_c2 = 1.0 / sqrt(c2);
    for (size_t i = 0; i < o->n; i++) {
        o->m[i] = b1 * o->m[i] + (1.0 - b1) * g[i];
        o->v[i] = b2 * o->v[i] + (1.0 - b2) * g[i] * g[i];
        w[i] -= step * o->m[i] / (sqrt(o->v[i]) * inv_sqrt_c2 + o->eps);
    }
}

double optim_lr(double lr, size_t warmup, size_t step)
{
    if (warmup == 0 || step >= warmup)
        return lr;
    return lr * (double)step / (double)warmup;
}

int optim_schedule_lookup(const char *name)
{
    if (strcmp(name, "constant") == 0)
        return OPTIM_CONSTANT;
    if (strcmp(name, "cosine") == 0)
        return OPTIM_COSINE;
    return -1;
}

double optim_lr_at(double lr, size_t warmup, optim_schedule schedule, double floor,
                   size_t step, size_t steps)
{
    if (schedule == OPTIM_CONSTANT || step < warmup || steps <= warmup)
        return optim_lr(lr, warmup, step);
    /* progress through the decay: 0 at the end of the warm-up, 1 at the last step */
    const double x = (double)(step - warmup) / (double)(steps - warmup);
    const double pi = 3.14159265358979323846;
    return lr * (floor + (1.0 - floor) * 0.5 * (1.0 + fm_cos(pi * (x > 1.0 ? 1.0 : x))));
}
