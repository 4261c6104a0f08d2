/* gru.c — the GRU cell of Cho et al. (2014) in PyTorch's form, and the GRU run over T
 * steps of a batch, forward and backward (see gru.h for the equations).
 *
 * Layout. The three gates of a row sit side by side, act row = [ r (H) | z (H) | n (H) ],
 * because the stacked weights Wx (3H, In) and Wh (3H, H) produce them in that order from
 * one GEMM each. The cell keeps two things per step: the gates (r, z, n overwrite the
 * input part they were computed from) and hp = h_prev·Whᵀ + bh, whose n third U_n h + b_hn
 * is multiplied by r and so is needed to differentiate r. Every other local derivative is
 * written through an activation: σ' = σ(1 − σ), tanh' = 1 − tanh².
 *
 * Invariant: a layer's states are Hs ((T+1)·B, H) with h_0 in block 0, so "the state each
 * step reads" (blocks 0..T−1) and "the state each step writes" (blocks 1..T) are both one
 * contiguous view, and the recurrent weight gradient over all steps is one GEMM.
 *
 * Reference. As in every model folder, the vectorised cell has its plain double loop
 * beside it: gru_cell_gates_reference, the gate equations one element at a time with
 * libm, which the tests hold the kernel to (no other code calls it).
 */
#include "gru.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <math.h>

#include "../common/core/fastmath.h"
#include "../common/core/model.h"
#include "../common/core/tensor.h"

/* ---- the cell ------------------------------------------------------------------------ */

/* σ and tanh are fm_sigmoid and fm_tanh (common/core/fastmath.h: one exp each, with no call
 * and no branch), the LSTM's own, so the element-wise loops below vectorise like the
 * LSTM's. The loops run over blocks of FM_LANES units and a scalar tail; one unit's
 * arithmetic is written once, in the *_unit functions. */

/* The three gate blocks [r | z | n] of one row, as separate restrict pointers, so that
 * the compiler knows a write to one block leaves the others alone. */
typedef struct gru_gates {
    double *restrict r, *restrict z, *restrict n; /* (H) each */
} gru_gates;

typedef struct gru_const_gates {
    const double *restrict r, *restrict z, *restrict n; /* (H) each */
} gru_const_gates;

static gru_gates gates_of(double *row, size_t H)
{
    return (gru_gates){row, row + H, row + 2 * H};
}

static gru_const_gates const_gates_of(const double *row, size_t H)
{
    return (gru_const_gates){row, row + H, row + 2 * H};
}

/* Forward of unit i: a holds xp on entry, the gates on return; u = hp (read); hb = h_prev;
 * writes hn[i]. */
FM_INLINE void
forward_unit(gru_gates a, gru_const_gates u, const double *restrict hb, double *restrict hn,
             size_t i)
{
    const double r = fm_sigmoid(a.r[i] + u.r[i]); /* how much of h the candidate sees */
    const double z = fm_sigmoid(a.z[i] + u.z[i]); /* how much of h to keep as it is */
    const double n = fm_tanh(a.n[i] + r * u.n[i]); /* the candidate, in (−1, 1) */
    a.r[i] = r;
    a.z[i] = z;
    a.n[i] = n;
    /* h' = (1 − z) ⊙ n + z ⊙ h, written n + z ⊙ (h − n) as PyTorch does: z = 1
     * copies h exactly, the path along which the gradient survives many steps */
    hn[i] = n + z * (hb[i] - n);
}

FM_CLONES
static void forward_row(gru_gates a, gru_const_gates u, const double *restrict hb,
                        double *restrict hn, size_t H)
{
    size_t i = 0;
    for (; i + FM_LANES <= H; i += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            forward_unit(a, u, hb, hn, i + l);
    for (; i < H; i++)
        forward_unit(a, u, hb, hn, i);
}

void gru_cell_forward(gsl_matrix *h, gsl_matrix *act, gsl_matrix *hp,
                      const gsl_matrix *h_prev, const gsl_matrix *Wh, const gsl_matrix *bh)
{
    const size_t B = act->size1, H = h->size2;
    assert(act->size2 == 3 * H && hp->size1 == B && hp->size2 == 3 * H);
    assert(h->size1 == B && h_prev->size1 == B && h_prev->size2 == H);

    /* hp (B,3H) = h_prev (B,H) · Whᵀ (H,3H) + bh: the recurrent part of all three gates
     * (the bias rows first, then the GEMM adds into them) */
    op_linear_forward(hp, h_prev, Wh, bh);

    /* One fused pass per row: each element of the gates and the state touched once. */
    for (size_t b = 0; b < B; b++)
        forward_row(gates_of(gsl_matrix_ptr(act, b, 0), H),
                    const_gates_of(gsl_matrix_const_ptr(hp, b, 0), H),
                    gsl_matrix_const_ptr(h_prev, b, 0), gsl_matrix_ptr(h, b, 0), H);
}

void gru_cell_gates_reference(gsl_matrix *h, gsl_matrix *act, const gsl_matrix *hp,
                              const gsl_matrix *h_prev)
{
    const size_t B = act->size1, H = h->size2;
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < H; i++) {
            /* r, z = σ(xp + hp);  n = tanh(xp_n + r⊙hp_n);  h' = (1 − z)⊙n + z⊙h */
            const double r =
                1.0 / (1.0 + exp(-(gsl_matrix_get(act, b, i) + gsl_matrix_get(hp, b, i))));
            const double z = 1.0 / (1.0 + exp(-(gsl_matrix_get(act, b, H + i) +
                                                 gsl_matrix_get(hp, b, H + i))));
            const double n =
                tanh(gsl_matrix_get(act, b, 2 * H + i) + r * gsl_matrix_get(hp, b, 2 * H + i));
            gsl_matrix_set(act, b, i, r);
            gsl_matrix_set(act, b, H + i, z);
            gsl_matrix_set(act, b, 2 * H + i, n);
            gsl_matrix_set(h, b, i, (1.0 - z) * n + z * gsl_matrix_get(h_prev, b, i));
        }
}

/* Backward of unit i: reads the gates a, un = U_n h + b_hn, hb = h_prev, g = dh; writes
 * dx = dxp and dh = dhp (their r, z, n thirds); accumulates dhb[i] (h_prev's gradient). */
FM_INLINE void
backward_unit(gru_gates dx, gru_gates dh, double *restrict dhb, gru_const_gates a,
              const double *restrict un, const double *restrict hb, const double *restrict g,
              size_t i)
{
    const double r = a.r[i], z = a.z[i], n = a.n[i];

    /* forward: h' = (1 − z) ⊙ n + z ⊙ h
     *   ∂h'/∂n = 1 − z,   ∂h'/∂z = h − n,   ∂h'/∂h = z (the direct path) */
    const double dn = g[i] * (1.0 - z);
    const double dz = g[i] * (hb[i] - n);
    dhb[i] += g[i] * z;

    /* forward: n = tanh(a_n),  a_n = xp_n + r ⊙ hp_n
     *   da_n = dn ⊙ (1 − n²);  ∂a_n/∂xp_n = 1,  ∂a_n/∂hp_n = r,  ∂a_n/∂r = hp_n */
    const double da_n = dn * (1.0 - n * n);
    const double dr = da_n * un[i];

    /* forward: r = σ(xp_r + hp_r), z = σ(xp_z + hp_z)
     *   both parts of each sum get the same gradient, σ' = σ(1 − σ) */
    const double da_r = dr * r * (1.0 - r);
    const double da_z = dz * z * (1.0 - z);

    dx.r[i] = da_r;
    dx.z[i] = da_z;
    dx.n[i] = da_n;
    dh.r[i] = da_r;
    dh.z[i] = da_z;
    dh.n[i] = da_n * r; /* the one place the two parts differ */
}

FM_CLONES
static void backward_row(gru_gates dx, gru_gates dh, double *restrict dhb, gru_const_gates a,
                         const double *restrict un, const double *restrict hb,
                         const double *restrict g, size_t H)
{
    size_t i = 0;
    for (; i + FM_LANES <= H; i += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            backward_unit(dx, dh, dhb, a, un, hb, g, i + l);
    for (; i < H; i++)
        backward_unit(dx, dh, dhb, a, un, hb, g, i);
}

void gru_cell_backward(gsl_matrix *dxp, gsl_matrix *dhp, gsl_matrix *dh_prev,
                       const gsl_matrix *dh, const gsl_matrix *act, const gsl_matrix *hp,
                       const gsl_matrix *h_prev, const gsl_matrix *Wh)
{
    const size_t B = act->size1, H = dh->size2;
    assert(act->size2 == 3 * H && dxp->size1 == B && dxp->size2 == 3 * H);
    assert(dhp->size1 == B && dhp->size2 == 3 * H && dh->size1 == B);

    for (size_t b = 0; b < B; b++) {
        double *dhr = gsl_matrix_ptr(dhp, b, 0);
        double *dhb = dh_prev ? gsl_matrix_ptr(dh_prev, b, 0) : NULL;
        if (dhb) {
            backward_row(gates_of(gsl_matrix_ptr(dxp, b, 0), H), gates_of(dhr, H), dhb,
                         const_gates_of(gsl_matrix_const_ptr(act, b, 0), H),
                         gsl_matrix_const_ptr(hp, b, 0) + 2 * H,
                         gsl_matrix_const_ptr(h_prev, b, 0), gsl_matrix_const_ptr(dh, b, 0), H);
            continue;
        }
        /* no dh_prev (a cell on its own, in the tests): the equations of backward_unit
         * as a plain loop, in the same order of operations, without the accumulation */
        const double *ar = gsl_matrix_const_ptr(act, b, 0), *az = ar + H, *an = ar + 2 * H;
        const double *un = gsl_matrix_const_ptr(hp, b, 0) + 2 * H;
        const double *hb = gsl_matrix_const_ptr(h_prev, b, 0);
        const double *g = gsl_matrix_const_ptr(dh, b, 0);
        double *dxr = gsl_matrix_ptr(dxp, b, 0);
        for (size_t i = 0; i < H; i++) {
            const double r = ar[i], z = az[i], n = an[i];
            const double da_n = g[i] * (1.0 - z) * (1.0 - n * n);
            const double da_r = da_n * un[i] * r * (1.0 - r);
            const double da_z = g[i] * (hb[i] - n) * z * (1.0 - z);
            dxr[i] = dhr[i] = da_r;
            dxr[H + i] = dhr[H + i] = da_z;
            dxr[2 * H + i] = da_n;
            dhr[2 * H + i] = da_n * r;
        }
    }

    /* forward: hp = h_prev · Whᵀ + bh   ⇒   dh_prev (B,H) += dhp (B,3H) · Wh (3H,H) */
    if (dh_prev)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dhp, Wh, 1.0, dh_prev);
}

/* ---- the layer ----------------------------------------------------------------------- */

void gru_layer_forward(gsl_matrix *Hs, gsl_matrix *Act, gsl_matrix *HP, const gsl_matrix *X,
                       const gru_weights *w, size_t B)
{
    assert(B > 0 && X->size1 % B == 0);
    const size_t T = X->size1 / B;
    assert(Hs->size1 == (T + 1) * B && Act->size1 == T * B && HP->size1 == T * B);

    /* Act (T·B,3H) = X (T·B,In) · Wxᵀ (In,3H) + bx: the input part of every step at once,
     * since it does not wait for the recurrence */
    op_linear_forward(Act, X, w->Wx, w->bx);

    /* The recurrence, steps 1..T: step t reads block t−1 of Hs and writes block t. */
    for (size_t t = 1; t <= T; t++) {
        gsl_matrix_view a = model_block(Act, t - 1, B), u = model_block(HP, t - 1, B); /* (B,3H) */
        gsl_matrix_view h = model_block(Hs, t, B), hprev = model_block(Hs, t - 1, B);   /* (B,H) */
        gru_cell_forward(&h.matrix, &a.matrix, &u.matrix, &hprev.matrix, w->Wh, w->bh);
    }
}

void gru_layer_backward(gsl_matrix *dX, gru_weights *dw, gsl_matrix *dXP, gsl_matrix *dHP,
                        gsl_matrix *dHs, const gsl_matrix *X, const gsl_matrix *Hs,
                        const gsl_matrix *Act, const gsl_matrix *HP, const gru_weights *w,
                        size_t B)
{
    assert(B > 0 && X->size1 % B == 0);
    const size_t T = X->size1 / B;
    assert(dHs->size1 == (T + 1) * B && dXP->size1 == T * B && dHP->size1 == T * B);

    /* Backpropagation through time, last step first. When step t is reached, block t of
     * dHs is complete: what it held on entry plus what step t+1 sent back through
     * z ⊙ h_t and h_t·Whᵀ. Step t adds its own share to block t−1. */
    for (size_t t = T; t >= 1; t--) {
        gsl_matrix_view dxp = model_block(dXP, t - 1, B), dhp = model_block(dHP, t - 1, B);
        gsl_matrix_view dh = model_block(dHs, t, B), dhprev = model_block(dHs, t - 1, B);
        _gsl_matrix_const_view a = model_const_block(Act, t - 1, B);
        _gsl_matrix_const_view u = model_const_block(HP, t - 1, B);
        _gsl_matrix_const_view hprev = model_const_block(Hs, t - 1, B);
        gru_cell_backward(&dxp.matrix, &dhp.matrix, &dhprev.matrix, &dh.matrix, &a.matrix,
                          &u.matrix, &hprev.matrix, w->Wh);
    }

    /* Weight gradients sum over steps, so each is one GEMM over all T·B rows:
     *   forward: Act = X · Wxᵀ + bx       ⇒ dWx (3H,In) += dXPᵀ (3H,T·B) · X (T·B,In)
     *                                        dbx (1,3H) += Σ_rows dXP
     *   forward: HP_t = h_{t−1}·Whᵀ + bh  ⇒ dWh (3H,H) += dHPᵀ (3H,T·B) · Hs[0..T−1] (T·B,H)
     *                                        dbh (1,3H) += Σ_rows dHP */
    _gsl_matrix_const_view hin = gsl_matrix_const_submatrix(Hs, 0, 0, T * B, Hs->size2);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dXP, X, 1.0, dw->Wx);
    op_bias_backward(dw->bx, dXP);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dHP, &hin.matrix, 1.0, dw->Wh);
    op_bias_backward(dw->bh, dHP);
    /* forward: Act = X · Wxᵀ   ⇒   dX (T·B,In) += dXP (T·B,3H) · Wx (3H,In) */
    if (dX)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dXP, w->Wx, 1.0, dX);
}

/* ---- the cost ------------------------------------------------------------------------ */

double gru_layer_flops(double In, double H, double T)
{
    return T * (18.0 * H * (In + H) + 39.0 * H);
}
