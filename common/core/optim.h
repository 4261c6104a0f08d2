/* optim.h — Adam and global-norm gradient clipping over flat arrays (prefix: optim_).
 *
 * The optimiser never sees tensors: a model's parameters and gradients are each one
 * contiguous block (see tensor.h), so an update is a loop over n doubles, whatever the
 * model. Adam keeps its two moment estimates in two more blocks of the same length.
 */
#ifndef ATTNLAB_OPTIM_H
#define ATTNLAB_OPTIM_H

#include <stddef.h>

typedef struct optim {
    size_t n;     /* number of parameters */
    double *m;    /* (n) first-moment estimate (mean of gradients) */
    double *v;    /* (n) second-moment estimate (mean of squared gradients) */
    size_t t;     /* updates done so far (for the bias correction) */
    double beta1, beta2, eps;
} optim;

/* Allocates zeroed moments for n parameters. Returns 0, or -1 when out of memory. */
int optim_alloc(optim *o, size_t n, double beta1, double beta2, double eps);
void optim_free(optim *o);

/* The Euclidean norm of g (n), summed in a way that cannot overflow for finite g. */
double optim_norm(const double *g, size_t n);

/* Global-norm clipping (Pascanu et al. 2013): when ‖g‖ > max_norm, scales g by
 * max_norm / ‖g‖ so the direction is kept and the norm becomes max_norm. max_norm = 0
 * disables clipping. Returns the norm before clipping. */
double optim_clip(double *g, size_t n, double max_norm);

/* One Adam update (Kingma & Ba 2015, Algorithm 1) of w (n) with gradient g (n):
 *     m ← β1 m + (1−β1) g          v ← β2 v + (1−β2) g²
 *     w ← w − lr · m̂ / (√v̂ + ε)    with m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ) */
void optim_adam_step(optim *o, double *w, const double *g, double lr);

/* The learning rate of step (1-based): a linear ramp from lr/warmup to lr over the first
 * warmup steps, then constant. warmup = 0 gives lr from the first step. */
double optim_lr(double lr, size_t warmup, size_t step);

/* The learning-rate schedules after the warm-up. */
typedef enum { OPTIM_CONSTANT = 0, OPTIM_COSINE = 1 } optim_schedule;

/* The schedule called name ("constant", "cosine"); -1 when there is none of that name. */
int optim_schedule_lookup(const char *name);

/* The learning rate of step (1-based) out of steps: optim_lr's warm-up, then under
 * OPTIM_COSINE a half cosine from lr down to floor·lr at the last step (Loshchilov &
 * Hutter 2017, without restarts):
 *     lr_t = lr·(floor + (1 − floor)·(1 + cos(π·(t − w)/(steps − w)))/2),  t ≥ w
 * A function of the step alone, so a resumed run continues the same schedule.
 * OPTIM_CONSTANT gives optim_lr exactly. */
double optim_lr_at(double lr, size_t warmup, optim_schedule schedule, double floor,
                   size_t step, size_t steps);

#endif
