/* gradcheck.h — comparing hand-written gradients with finite differences (prefix:
 * gradcheck_). Used by the unit tests of every layer and by `attnlab gradcheck`.
 *
 * Method. For each entry x_i of an array the loss is evaluated at x_i ± h and x_i ± 2h,
 * and the fourth-order central difference
 *     n_i = (8 (L(x+h) − L(x−h)) − (L(x+2h) − L(x−2h))) / 12h
 * is compared with the analytic gradient a_i through the relative error
 *     |a − n| / max(|a| + |n|, GRADCHECK_TINY).
 * Why not the plain (L(x+h) − L(x−h)) / 2h with h = 1e-5? In double precision its
 * rounding error is about ε·|L|/h ≈ 1e-11, and a whole model has gradients near 1e-5, so
 * the check itself then errs by ~1e-6 relative: measured on a recurrent model, 2.8e-6 at h = 1e-5,
 * falling to 1.5e-7 at h = 3e-4 with the fourth-order formula (its truncation error,
 * h⁴·L⁽⁵⁾/30 ≈ 3e-16, stays negligible). h = 3e-4 is also small enough that a ReLU
 * pre-activation far from 0 does not cross its kink during the check. When one does
 * (a ReLU's kink within 2h of the point), the difference is wrong, not the gradient: an
 * entry that fails is measured again with central steps h/4 and h/16, then with
 * fourth-order one-sided differences from each side (which never cross a kink on the
 * other side), and keeps its best error.
 * A wrong backward pass disagrees with the differences at every step, so this cannot
 * hide an error; it only stops a kink from passing for one. The floor GRADCHECK_TINY keeps entries whose gradient is itself at the noise level
 * from reporting noise as error; every larger gradient is held to GRADCHECK_TOL.
 */
#ifndef ATTNLAB_GRADCHECK_H
#define ATTNLAB_GRADCHECK_H

#include <stddef.h>

#define GRADCHECK_H 3e-4
#define GRADCHECK_TINY 1e-5
#define GRADCHECK_TOL 1e-6

/* Evaluates the loss at the current values of whatever x points into. */
typedef double (*gradcheck_loss)(void *ctx);

/* The relative error of one entry, as defined above. */
double gradcheck_relerr(double analytic, double numeric);

/* Compares g (n), the analytic gradient of loss(ctx) with respect to x (n), with
 * fourth-order central differences of step h (and smaller and one-sided ones for an
 * entry that fails at h, see above). x is perturbed in place and restored exactly. Returns the largest
 * relative error and, when worst is not NULL, its index. stride > 1 checks only every
 * stride-th entry (for big tensors in the command-line tool); the tests use 1. */
double gradcheck_array(gradcheck_loss loss, void *ctx, double *x, const double *g, size_t n,
                       double h, size_t stride, size_t *worst);

#include "model.h"

/* Called once per tensor by gradcheck_model with the tensor's name, its largest relative
 * error and the index (row, col) where it occurred. */
typedef void (*gradcheck_report)(void *ctx, const char *tensor, double err, size_t row,
                                 size_t col);

/* Checks every parameter tensor of m on batch b: the analytic gradient of the mean
 * cross-entropy (zero_grad, forward, backward) against central differences of forward.
 * m must be reserved for b's sizes. stride > 1 checks every stride-th entry of each
 * tensor (the first entry always). Calls report (when not NULL) for each tensor and
 * returns the largest relative error over all of them. Parameters are left unchanged. */
double gradcheck_model(model *m, const batch *b, size_t stride, gradcheck_report report,
                       void *ctx);
#endif
