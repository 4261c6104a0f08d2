/* testtfm.h — what the Transformer's test files share (prefix: tt_): the ReLU watch of
 * the gradient checks, the checks of an arena's tensors, the layer sizes.
 *
 * Design. ReLU has a kink at 0 where finite differences are wrong; rather than loosening
 * the tolerance, each check involving a feed-forward block first draws seeds until every
 * pre-activation is at least KINK_MARGIN away from 0, then records the ReLU pattern
 * [H > 0] and compares it after every evaluation of the loss during the check
 * (tt_relu_watch): the test asserts that no pre-activation crossed the kink, so each
 * finite difference it compared was taken on one smooth piece.
 */
#ifndef ATTNLAB_TESTTFM_H
#define ATTNLAB_TESTTFM_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#include "../common/core/carve.h"
#include "../common/core/gradcheck.h"
#include "../common/core/tensor.h"
#include "../transformer/tfm.h"

/* Inputs with a ReLU pre-activation closer than KINK_MARGIN to 0 are drawn again. The
 * check moves one entry by up to 2h = 6e-4 (GRADCHECK_H = 3e-4, fourth-order
 * differences), which moves a pre-activation by that times its sensitivity: the margin
 * makes a crossing unlikely, and tt_relu_watch then proves there was none. */
#define KINK_MARGIN 1e-3
#define SEED_TRIES 200 /* seeds tried to find inputs clear of the kink */

/* The ReLU pattern of up to 8 feed-forward blocks: recorded at the unperturbed point,
 * compared after each evaluation of the loss. H = max(0, Z), so H > 0 exactly where the
 * pre-activation Z is on the positive side of the kink. */
typedef struct tt_relu_watch {
    size_t n;                /* blocks watched */
    const gsl_matrix *H[8];  /* (N, F) each */
    unsigned char *sign;     /* the recorded pattern, all blocks one after the other */
    size_t evaluations, crossings;
} tt_relu_watch;

/* B=3 sequences, Ts=6 source and Tt=4 target positions, D=10 with NH=2 heads of dk=5,
 * F=7: all different. */
#define LY_B 3
#define LY_TS 6
#define LY_TT 4
#define LY_D 10
#define LY_NH 2
#define LY_F 7

/* Records the pattern of the last forward. */
void tt_watch_start(tt_relu_watch *w);

/* Counts the pre-activations on the other side of the kink than when recorded. */
void tt_watch_check(tt_relu_watch *w);

/* Ends a check: it must have evaluated the loss and never crossed a kink. */
void tt_watch_end(tt_relu_watch *w);

/* TFM_REPORT as a number: 0 when unset. */
int tt_report_level(void);

/* Prints the largest error of one gradient check when TFM_REPORT ≥ 1. Flushed at once:
 * a failing check ends its (forked) test before stdout would be flushed. */
void tt_report(const char *what, double err);

/* A block of the test's own, laid out by fn (common/core/carve.h): counted and allocated by
 * carve_reserve, then cut. carve_free releases it. */
carve_block tt_cut_block(carve_layout fn, void *ctx);

/* Fills every tensor of an arena with non-round values; gains of layer norm near 1. */
void tt_fill_arena(arena *a, const gsl_rng *r);

/* Central difference of loss with respect to x[i], step GRADCHECK_H; x[i] restored. */
double tt_numeric(gradcheck_loss loss, void *ctx, double *x);

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
                           gsl_matrix *w, const gsl_matrix *g);

/* Checks the gradient of every tensor of arena a; returns the largest error. */
double tt_gradcheck_arena(arena *a, gradcheck_loss loss, void *ctx);

/* now (n) holds the gradients after two backward passes, once after one: now = 2·once,
 * to rounding. Entries that are rounding noise themselves (the key bias) are compared
 * against a floor of 1e-14 of the largest gradient. */
void tt_assert_doubled(const double *now, const double *once, size_t n);

/* Smallest |z| of the pre-activations z = X·W_1ᵀ + b_1 of a feed-forward block. */
double tt_ffn_margin(const gsl_matrix *X, const tfm_ffn *p);

/* A causal mask (T, T): 0 on and below the diagonal, −∞ above. */
gsl_matrix *tt_causal_mask(size_t T);

/* Smallest |z| of the feed-forward pre-activations of a layer's last sublayer s, whose
 * stream input is x (the FFN's input as the layer computes it). */
double tt_layer_margin(const tfm_sub_act *s, const gsl_matrix *x, const tfm_ffn *p,
                       int post_ln);

#endif
