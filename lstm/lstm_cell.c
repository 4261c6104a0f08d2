/* lstm_cell.c — one step of the LSTM cell, forward and backward, for a batch (see lstm.h).
 *
 * Layout. The four gates of a row sit side by side in one row of act (B, 4H):
 *     act[r] = [ i (H) | f (H) | g (H) | o (H) ]      (PyTorch's order)
 * because the stacked weights Wx (4H, E) and Wh (4H, H) produce them in that order from
 * one GEMM. On entry act holds pre-activations; the forward loop overwrites each of them
 * with its activation, which is all backward needs besides c and c_prev: every local
 * derivative of σ and tanh can be written through the activation itself,
 *     σ'(a) = σ(a)(1 − σ(a)),   tanh'(a) = 1 − tanh²(a),
 * so no pre-activation has to be kept.
 *
 * Aliasing. forward reads h_prev only in its GEMM, before any h is written, so h may be
 * h_prev; no other two arguments may overlap (the row kernels take restrict pointers,
 * which is what lets the compiler vectorise them).
 *
 * Reference. As in every model folder, the vectorised kernel has its plain double loop
 * beside it, at the end of this file: lstm_cell_gates_reference, the gate equations one
 * element at a time with libm, which the tests hold the kernel to (no other code calls it).
 */
#include "lstm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <math.h>

/* ---- the element-wise part, one row at a time --------------------------------------
 *
 * Each unit j of a row is independent of the others, so the loops run over blocks of
 * FM_LANES units (one SIMD vector each, see common/core/fastmath.h) and a scalar tail; the
 * arithmetic of one unit is written once, in the *_unit functions, and inlined into both. */

/* The four gate blocks of one row of act or dpre, as separate pointers: the compiler
 * can then see that a write to one gate never changes another (restrict), which it could
 * not prove for offsets H, 2H, 3H of one pointer with H unknown. */
typedef struct gate_ptrs {
    double *restrict i, *restrict f, *restrict g, *restrict o; /* (H) each */
} gate_ptrs;

typedef struct const_gate_ptrs {
    const double *restrict i, *restrict f, *restrict g, *restrict o; /* (H) each */
} const_gate_ptrs;

static gate_ptrs gates_of(double *row, size_t H)
{
    return (gate_ptrs){row, row + H, row + 2 * H, row + 3 * H};
}

static const_gate_ptrs const_gates_of(const double *row, size_t H)
{
    return (const_gate_ptrs){row, row + H, row + 2 * H, row + 3 * H};
}

/* Forward of unit j from its four pre-activations zi, zf, zg, zo: writes the activations
 * to a.i[j], a.f[j], a.g[j], a.o[j], and c[j], h[j]; reads cp[j]. */
FM_INLINE void
forward_unit(gate_ptrs a, double *restrict c, double *restrict h, const double *restrict cp,
             size_t j, double zi, double zf, double zg, double zo)
{
    const double i = fm_sigmoid(zi);     /* how much of the candidate to write */
    const double f = fm_sigmoid(zf);     /* how much of the old cell to keep */
    const double g = fm_tanh(zg);        /* the candidate, in (−1, 1) */
    const double o = fm_sigmoid(zo);     /* how much of the cell to show */
    const double cn = f * cp[j] + i * g; /* c' = f⊙c + i⊙g */
    a.i[j] = i;
    a.f[j] = f;
    a.g[j] = g;
    a.o[j] = o;
    c[j] = cn;
    h[j] = o * fm_tanh(cn); /* h' = o⊙tanh(c') */
}

/* One row: a = [i f g o] pre-activations in, activations out; c, h, cp (H). */
FM_CLONES
static void forward_row(gate_ptrs a, double *restrict c, double *restrict h,
                        const double *restrict cp, size_t H)
{
    size_t j = 0;
    for (; j + FM_LANES <= H; j += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const size_t k = j + l;
            forward_unit(a, c, h, cp, k, a.i[k], a.f[k], a.g[k], a.o[k]);
        }
    for (; j < H; j++)
        forward_unit(a, c, h, cp, j, a.i[j], a.f[j], a.g[j], a.o[j]);
}

/* The same with the input part in a row of its own: a holds the recurrent part h·Whᵀ on
 * entry, x = [i f g o] (4H) the input part x·Wxᵀ + b; the gates are of their sum. */
FM_CLONES
static void forward_row_input(gate_ptrs a, double *restrict c, double *restrict h,
                              const double *restrict cp, const_gate_ptrs x, size_t H)
{
    size_t j = 0;
    for (; j + FM_LANES <= H; j += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++) {
            const size_t k = j + l;
            forward_unit(a, c, h, cp, k, a.i[k] + x.i[k], a.f[k] + x.f[k], a.g[k] + x.g[k],
                         a.o[k] + x.o[k]);
        }
    for (; j < H; j++)
        forward_unit(a, c, h, cp, j, a.i[j] + x.i[j], a.f[j] + x.f[j], a.g[j] + x.g[j],
                     a.o[j] + x.o[j]);
}

/* Backward of unit j: reads the activations a, c[j], cp[j], dh[j], dc[j]; writes d, the
 * gradients of the four pre-activations; accumulates dcp[j]. */
FM_INLINE void
backward_unit(gate_ptrs d, double *restrict dcp, const_gate_ptrs a, const double *restrict c,
              const double *restrict cp, const double *restrict dh, const double *restrict dc,
              size_t j)
{
    const double i = a.i[j], f = a.f[j], g = a.g[j], o = a.o[j];
    const double tc = fm_tanh(c[j]); /* recomputed: cheaper than keeping it */

    /* forward: h = o ⊙ tanh(c)
     *   ∂h/∂o = tanh(c)              → dL/do = dh ⊙ tanh(c)
     *   ∂h/∂c = o ⊙ (1 − tanh²(c))   → c gets dh through h, plus dc from the
     *                                   next step: the two paths add up. */
    const double d_o = dh[j] * tc;
    const double dct = dh[j] * o * (1.0 - tc * tc) + dc[j];

    /* forward: c = f ⊙ c_prev + i ⊙ g
     *   dL/df = dct ⊙ c_prev,  dL/di = dct ⊙ g,  dL/dg = dct ⊙ i,
     *   dL/dc_prev = dct ⊙ f   (the constant error carousel: when f ≈ 1 the
     *                           gradient passes back unchanged). */
    const double d_f = dct * cp[j];
    const double d_i = dct * g;
    const double d_g = dct * i;
    dcp[j] += dct * f;

    /* forward: i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
     *   σ' = σ(1 − σ),  tanh' = 1 − tanh²,  written through the activations. */
    d.i[j] = d_i * i * (1.0 - i);
    d.f[j] = d_f * f * (1.0 - f);
    d.g[j] = d_g * (1.0 - g * g);
    d.o[j] = d_o * o * (1.0 - o);
}

/* One row of backward (arguments as backward_unit's, all of them present: the caller
 * stands in zeros for a missing dc and a scratch row for a missing dcp, so the loop body
 * has no branch and vectorises). */
FM_CLONES
static void backward_row(gate_ptrs d, double *restrict dcp, const_gate_ptrs a,
                         const double *restrict c, const double *restrict cp,
                         const double *restrict dh, const double *restrict dc, size_t H)
{
    size_t j = 0;
    for (; j + FM_LANES <= H; j += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            backward_unit(d, dcp, a, c, cp, dh, dc, j + l);
    for (; j < H; j++)
        backward_unit(d, dcp, a, c, cp, dh, dc, j);
}

/* The same as backward_row, one unit at a time, with dc = NULL read as zeros and
 * dcp = NULL skipped: the plain form of the equations, kept for the calls that lack one
 * of the two (a cell on its own) and as the reference the tests compare against. */
static void backward_row_plain(gate_ptrs d, double *dcp, const_gate_ptrs a, const double *c,
                               const double *cp, const double *dh, const double *dc,
                               size_t H)
{
    for (size_t j = 0; j < H; j++) {
        const double i = a.i[j], f = a.f[j], g = a.g[j], o = a.o[j];
        const double tc = fm_tanh(c[j]);
        const double d_o = dh[j] * tc;
        const double dct = dh[j] * o * (1.0 - tc * tc) + (dc ? dc[j] : 0.0);
        if (dcp)
            dcp[j] += dct * f;
        d.i[j] = dct * g * i * (1.0 - i);
        d.f[j] = dct * cp[j] * f * (1.0 - f);
        d.g[j] = dct * i * (1.0 - g * g);
        d.o[j] = d_o * o * (1.0 - o);
    }
}

/* ---- the step ----------------------------------------------------------------------- */

/* Hochreiter & Schmidhuber (1997), with the forget gate of Gers, Schmidhuber & Cummins
 * (2000); equations as in lstm.h. */
void lstm_cell_forward(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                       const gsl_matrix *h_prev, const gsl_matrix *c_prev,
                       const gsl_matrix *Wh)
{
    const size_t B = act->size1, H = h->size2;
    assert(act->size2 == 4 * H && h->size1 == B && c->size1 == B && c->size2 == H);
    assert(c_prev->size1 == B && c_prev->size2 == H);

    /* act (B,4H) += h_prev (B,H) · Whᵀ (H,4H): the recurrent part of all four gates,
     * added to the input part x·Wxᵀ + b the caller already put there. */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, h_prev, Wh, 1.0, act);

    /* One fused pass per row: gates, new cell, new output, each element touched once. */
    for (size_t r = 0; r < B; r++)
        forward_row(gates_of(gsl_matrix_ptr(act, r, 0), H), gsl_matrix_ptr(c, r, 0),
                    gsl_matrix_ptr(h, r, 0), gsl_matrix_const_ptr(c_prev, r, 0), H);
}

void lstm_cell_forward_table(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                             const gsl_matrix *h_prev, const gsl_matrix *c_prev,
                             const gsl_matrix *P, const int *ids, const gsl_matrix *Wh)
{
    const size_t B = act->size1, H = h->size2;
    assert(act->size2 == 4 * H && P->size2 == 4 * H && h->size1 == B && c->size1 == B);
    assert(c->size2 == H && c_prev->size1 == B && c_prev->size2 == H);

    /* act (B,4H) = h_prev (B,H) · Whᵀ (H,4H): the recurrent part alone (beta = 0). The
     * input part is not copied in first: the row pass reads it straight from the table,
     * which stays in cache (V+1 rows), so no (B,4H) block is written and read back */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, h_prev, Wh, 0.0, act);

    for (size_t r = 0; r < B; r++) {
        assert(ids[r] >= 0 && (size_t)ids[r] < P->size1);
        forward_row_input(gates_of(gsl_matrix_ptr(act, r, 0), H), gsl_matrix_ptr(c, r, 0),
                          gsl_matrix_ptr(h, r, 0), gsl_matrix_const_ptr(c_prev, r, 0),
                          const_gates_of(gsl_matrix_const_ptr(P, (size_t)ids[r], 0), H), H);
    }
}

void lstm_cell_backward(gsl_matrix *dpre, gsl_matrix *dh_prev, gsl_matrix *dc_prev,
                        const gsl_matrix *dh, const gsl_matrix *dc,
                        const gsl_matrix *act, const gsl_matrix *c, const gsl_matrix *c_prev,
                        const gsl_matrix *Wh)
{
    const size_t B = act->size1, H = c->size2;
    assert(act->size2 == 4 * H && dpre->size1 == B && dpre->size2 == 4 * H);
    assert(dh->size1 == B && dh->size2 == H && c_prev->size1 == B);

    for (size_t r = 0; r < B; r++) {
        gate_ptrs d = gates_of(gsl_matrix_ptr(dpre, r, 0), H);
        const_gate_ptrs a = const_gates_of(gsl_matrix_const_ptr(act, r, 0), H);
        const double *cr = gsl_matrix_const_ptr(c, r, 0);
        const double *cp = gsl_matrix_const_ptr(c_prev, r, 0);
        const double *dhr = gsl_matrix_const_ptr(dh, r, 0);
        if (dc && dc_prev) /* every step of a layer */
            backward_row(d, gsl_matrix_ptr(dc_prev, r, 0), a, cr, cp, dhr,
                         gsl_matrix_const_ptr(dc, r, 0), H);
        else /* a lone cell (the tests): the plain loop, which allows the NULLs */
            backward_row_plain(d, dc_prev ? gsl_matrix_ptr(dc_prev, r, 0) : NULL, a, cr, cp,
                               dhr, dc ? gsl_matrix_const_ptr(dc, r, 0) : NULL, H);
    }

    /* forward: act += h_prev · Whᵀ   ⇒   dh_prev (B,H) += dpre (B,4H) · Wh (4H,H) */
    if (dh_prev)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dpre, Wh, 1.0, dh_prev);
}

/* ---- the plain reference ------------------------------------------------------------- */

void lstm_cell_gates_reference(gsl_matrix *h, gsl_matrix *c, gsl_matrix *act,
                               const gsl_matrix *c_prev)
{
    const size_t B = act->size1, H = h->size2;
    for (size_t r = 0; r < B; r++)
        for (size_t j = 0; j < H; j++) {
            /* i, f, o = σ(a), g = tanh(a);  c = f⊙c_prev + i⊙g;  h = o⊙tanh(c) */
            const double i = 1.0 / (1.0 + exp(-gsl_matrix_get(act, r, j)));
            const double f = 1.0 / (1.0 + exp(-gsl_matrix_get(act, r, H + j)));
            const double g = tanh(gsl_matrix_get(act, r, 2 * H + j));
            const double o = 1.0 / (1.0 + exp(-gsl_matrix_get(act, r, 3 * H + j)));
            const double cn = f * gsl_matrix_get(c_prev, r, j) + i * g;
            gsl_matrix_set(act, r, j, i);
            gsl_matrix_set(act, r, H + j, f);
            gsl_matrix_set(act, r, 2 * H + j, g);
            gsl_matrix_set(act, r, 3 * H + j, o);
            gsl_matrix_set(c, r, j, cn);
            gsl_matrix_set(h, r, j, o * tanh(cn));
        }
}
