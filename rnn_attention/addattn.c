/* addattn.c — additive attention (Bahdanau, Cho & Bengio 2015), forward and backward,
 * one decoder step at a time (see addattn.h for the equations and the roles: the decoder
 * state is the query, the encoder states are the keys and the values).
 *
 * Where the work goes. Per decoder step and example, the scores need Ts·A evaluations of
 * tanh: the one cost of the model that grows with Ts·Tt (a GRU step costs the same
 * whatever the length). So that loop is made cheap and kept tight:
 *   - the keys k_j = W_k h_j + b do not depend on the step: one (Ts·B, H)·(H, A) GEMM per
 *     sequence, before the decoder runs (addattn_keys_forward);
 *   - tanh(q + k_j) is computed from e^{2q} and e^{2k_j}, taken once per step and once per
 *     sequence, so each of the Ts·A pairs is a multiply, an add and a divide (below);
 *   - for a whole example that is one pass over a (Ts, A) block, then e = U·v is one
 *     dgemv and c = Hᵀα another;
 *   - backward recomputes the block, fused with its own arithmetic, instead of keeping
 *     it: Tt·B·Ts·A doubles would be the largest array of the model by far;
 *   - what sums over steps (W_q, the values' and the keys' gradients) waits for the end
 *     of the sequence and becomes a few large GEMMs (addattn_seq_backward).
 *
 * Layout. Keys EK (Ts·B, A), values Henc (Ts·B, H) are time-major like every activation:
 * example b's rows are j·B + b, B rows apart, so its (Ts, ·) slice is a view with row
 * stride B·tda — no copy.
 *
 * Reference. As in every model folder, the fused kernel has its plain double loop beside
 * it: addattn_scores_reference, the scores as the equation reads with libm's tanh, which
 * the tests hold the kernel to (no other code calls it).
 */
#include "addattn.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <math.h>
#include <string.h>

#include "../common/core/fastmath.h"
#include "../common/core/tensor.h"

/* ---- the score kernels ------------------------------------------------------------------
 *
 * The hidden layer of the alignment model, u = tanh(q + k_j), is the one element-wise
 * function evaluated Tt·Ts·A times per sequence. Written through exponentials,
 *     tanh(x) = (e^{2x} − 1)/(e^{2x} + 1) = 1 − 2/(1 + e^{2x}),   e^{2(q+k)} = e^{2q} e^{2k},
 * so with the exponentials of the query (once per step) and of the keys (once per
 * sequence) taken ahead, each of the Ts·A pairs costs a multiply, an add and a divide
 * instead of a call to tanh: about 4× faster, and a loop the compiler vectorises. The
 * result is as accurate in absolute terms as libm's tanh (a few 1e-16), and the limits
 * are exact: a product that overflows gives 1, one that underflows −1, a NaN stays NaN.
 * That is why the keys are kept as EK = e^{2k} and the query projections as EQ = e^{2q}.
 *
 * Loops are written as blocks of FM_LANES independent elements plus a tail: a trip count
 * the compiler knows is what lets -O2 vectorise them. With GCC on x86-64 Linux the two
 * loops are also compiled for AVX2 and for AVX-512 (FM_CLONES, common/core/fastmath.h), and
 * the loader picks the widest the processor has: backward gains about a third, forward
 * little (the divider is the bottleneck at any width). Every version performs the same
 * IEEE operations on each element (no FMA contraction under -std=c11, no
 * reassociation), so they give the same bits; only the speed differs.
 */

/* Pre-activations are clamped to ±EXP_CLAMP before e^{2x}, so that every factor is a
 * finite, normal double (e^{±600}) and a product of two is never ∞·0. The clamp never
 * acts in a working model: the states are in (−1, 1), so |q| or |k| of 300 would need
 * weights of about 300/H each. A NaN passes through (both comparisons are false). */
#define EXP_CLAMP 300.0

/* e^{2x} of one element, x clamped first (the branch-free exp and select of
 * common/core/fastmath.h, so that the loop below vectorises). */
FM_INLINE double exp2x_one(double x)
{
    double c = fm_select(x > EXP_CLAMP, EXP_CLAMP, x);
    c = fm_select(c < -EXP_CLAMP, -EXP_CLAMP, c);
    return fm_exp(2.0 * c);
}

/* x (n) ← e^{2x}, the form in which queries and keys enter the scores. */
FM_CLONES
static void exp2x(double *restrict x, size_t n)
{
    size_t i = 0;
    for (; i + FM_LANES <= n; i += FM_LANES)
        for (size_t l = 0; l < FM_LANES; l++)
            x[i + l] = exp2x_one(x[i + l]);
    for (; i < n; i++)
        x[i] = exp2x_one(x[i]);
}

/* The scores of one example, e (Ts), e_j = vᵀ tanh(q + k_j) with
 * tanh(q + k_j) = 1 − 2/(1 + e^{2q} ⊙ e^{2k_j}): eq (A) is e^{2q}, row j of EK (kstride
 * doubles apart) is e^{2k_j}. The product with v is taken on the fly, so the (Ts, A)
 * block of tanh values is never stored: FM_LANES partial sums, one per lane, added up in a
 * fixed order at the end of the row (a fixed order, so the bits do not depend on the
 * vector width; the plain reference is addattn_scores_reference below). */
FM_CLONES
static void scores_forward(double *restrict e, const double *restrict eq,
                           const double *restrict EK, size_t kstride,
                           const double *restrict v, size_t Ts, size_t A)
{
    for (size_t j = 0; j < Ts; j++) {
        const double *ek = EK + j * kstride;
        double part[FM_LANES] = {0};
        size_t a = 0;
        for (; a + FM_LANES <= A; a += FM_LANES)
            for (size_t l = 0; l < FM_LANES; l++)
                part[l] += v[a + l] * (1.0 - 2.0 / (1.0 + eq[a + l] * ek[a + l]));
        double sum = 0.0;
        for (size_t l = 0; l < FM_LANES; l++)
            sum += part[l];
        for (; a < A; a++)
            sum += v[a] * (1.0 - 2.0 / (1.0 + eq[a] * ek[a]));
        e[j] = sum;
    }
}

void addattn_scores_reference(double *e, const double *q, const double *K, size_t kstride,
                              const double *v, size_t Ts, size_t A)
{
    for (size_t j = 0; j < Ts; j++) {
        /* the alignment score e_j = vᵀ tanh(q + k_j) = Σ_a v_a·tanh(q_a + k_ja) */
        double sum = 0.0;
        for (size_t a = 0; a < A; a++)
            sum += v[a] * tanh(q[a] + K[j * kstride + a]);
        e[j] = sum;
    }
}

/* Backward of the scores e_j = vᵀ u_j, u_j = tanh(q + k_j), of one example, given de (Ts),
 * with u_j recomputed on the way (d = 1 − u_j = 2/(1 + e^{2q} e^{2k_j})):
 *     dv += Σ_j de_j u_j                                     (A)
 *     g_j = de_j v ⊙ (1 − u_j²),  1 − u² = (1 − u)(1 + u) = d (2 − d)
 *     dq += Σ_j g_j,   dk_j += g_j      (q is shared by every j; k_j is j's own)
 * g is the gradient of the pre-activation q + k_j, so dq and dK are gradients of q and k,
 * not of their exponentials. dK rows are kstride doubles apart, as EK's. */
FM_CLONES
static void scores_backward(double *restrict dq, double *restrict dK, double *restrict dv,
                            const double *restrict de, const double *restrict eq,
                            const double *restrict EK, size_t kstride,
                            const double *restrict v, size_t Ts, size_t A)
{
    for (size_t j = 0; j < Ts; j++) {
        const double *ek = EK + j * kstride;
        double *dk = dK + j * kstride;
        const double dej = de[j];
        size_t a = 0;
        for (; a + FM_LANES <= A; a += FM_LANES)
            for (size_t l = 0; l < FM_LANES; l++) {
                const double d = 2.0 / (1.0 + eq[a + l] * ek[a + l]);
                const double g = dej * v[a + l] * (d * (2.0 - d));
                dv[a + l] += dej * (1.0 - d);
                dq[a + l] += g;
                dk[a + l] += g;
            }
        for (; a < A; a++) {
            const double d = 2.0 / (1.0 + eq[a] * ek[a]);
            const double g = dej * v[a] * (d * (2.0 - d));
            dv[a] += dej * (1.0 - d);
            dq[a] += g;
            dk[a] += g;
        }
    }
}

/* Example b's (Ts, n) slice of a time-major (Ts·B, n) matrix: rows j·B + b. */
static _gsl_matrix_const_view example_slice(const gsl_matrix *m, size_t b, size_t B)
{
    return gsl_matrix_const_view_array_with_tda(m->data + b * m->tda, m->size1 / B,
                                                m->size2, B * m->tda);
}

static gsl_matrix_view example_slice_rw(gsl_matrix *m, size_t b, size_t B)
{
    return gsl_matrix_view_array_with_tda(m->data + b * m->tda, m->size1 / B, m->size2,
                                          B * m->tda);
}

/* ---- forward ------------------------------------------------------------------------ */

void addattn_keys_forward(gsl_matrix *EK, const gsl_matrix *Henc, const addattn_weights *w)
{
    assert(EK->size1 == Henc->size1 && EK->size2 == w->Wk->size1 && EK->tda == EK->size2);
    /* k (Ts·B,A) = Henc (Ts·B,H) · W_kᵀ (H,A) + b: every key of the sequence at once */
    op_linear_forward(EK, Henc, w->Wk, w->bk);
    /* kept as e^{2k}, the form the scores read */
    exp2x(EK->data, EK->size1 * EK->size2);
}

void addattn_step_forward(gsl_matrix *c, gsl_matrix *alpha, gsl_matrix *EQ,
                          const gsl_matrix *s_prev, const gsl_matrix *EK,
                          const gsl_matrix *Henc, const addattn_weights *w)
{
    const size_t B = s_prev->size1, Ts = alpha->size2, A = EK->size2;
    assert(alpha->size1 == B && EQ->size1 == B && EQ->size2 == A && EQ->tda == A);
    assert(EK->size1 == Ts * B && Henc->size1 == Ts * B && c->size1 == B &&
           c->size2 == Henc->size2);

    /* q (B,A) = s_prev (B,H) · W_qᵀ (H,A): what the decoder is looking for; kept as e^{2q} */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, s_prev, w->Wq, 0.0, EQ);
    exp2x(EQ->data, B * A);

    for (size_t b = 0; b < B; b++) {
        /* e (Ts), e_j = vᵀ tanh(q_b + k_j) over the keys of example b, into α's row */
        gsl_vector_view ab = gsl_matrix_row(alpha, b);
        assert(ab.vector.stride == 1);
        scores_forward(ab.vector.data, gsl_matrix_const_ptr(EQ, b, 0), EK->data + b * EK->tda,
                       B * EK->tda, w->v->data, Ts, A);
        /* α = softmax(e): how much each source position is read; the max is subtracted */
        op_softmax_row(ab.vector.data, Ts);
        /* c_b (H) = Hbᵀ (H,Ts) · α (Ts): the values, weighted by α */
        _gsl_matrix_const_view Hb = example_slice(Henc, b, B);
        gsl_vector_view cb = gsl_matrix_row(c, b);
        gsl_blas_dgemv(CblasTrans, 1.0, &Hb.matrix, &ab.vector, 0.0, &cb.vector);
    }
}

/* ---- backward ----------------------------------------------------------------------- */

void addattn_step_backward(gsl_matrix *ds_prev, gsl_matrix *dK, addattn_weights *dw,
                           gsl_matrix *dq, addattn_work *ws, const gsl_matrix *dc,
                           const gsl_matrix *alpha, const gsl_matrix *EQ, const gsl_matrix *EK,
                           const gsl_matrix *Henc, const addattn_weights *w)
{
    const size_t B = alpha->size1, Ts = alpha->size2, A = EK->size2;
    assert(dq->size1 == B && dq->size2 == A && dK->size1 == Ts * B && dK->size2 == A);
    assert(dc->size1 == B && EQ->size1 == B && dw->v->size2 == A && dK->tda == EK->tda);

    gsl_vector_view da = gsl_vector_view_array(ws->da, Ts); /* (Ts) gradient of α */
    gsl_matrix_set_zero(dq); /* written: the sum over j starts here */
    for (size_t b = 0; b < B; b++) {
        const double *ab = gsl_matrix_const_ptr(alpha, b, 0);
        _gsl_matrix_const_view Hb = example_slice(Henc, b, B);
        gsl_vector_const_view dcb = gsl_matrix_const_row(dc, b);

        /* forward: c = Σ_j α_j h_j   ⇒   dα_j = h_j · dc:  dα (Ts) = Hb (Ts,H) · dc_b (H)
         * (the values' own gradient, dh_j += α_j dc, waits for addattn_seq_backward) */
        gsl_blas_dgemv(CblasNoTrans, 1.0, &Hb.matrix, &dcb.vector, 0.0, &da.vector);

        /* forward: α = softmax(e)   ⇒   de = α ⊙ (dα − α·dα) */
        memset(ws->e, 0, Ts * sizeof(double));
        op_softmax_row_backward(ws->e, ws->da, ab, Ts);

        /* forward: e_j = vᵀ tanh(q + k_j)   ⇒   dv += Σ_j de_j u_j, and through the tanh
         * dq += Σ_j g_j, dk_j += g_j with g_j = de_j v ⊙ (1 − u_j²) */
        scores_backward(gsl_matrix_ptr(dq, b, 0), dK->data + b * dK->tda, dw->v->data, ws->e,
                        gsl_matrix_const_ptr(EQ, b, 0), EK->data + b * EK->tda, B * EK->tda,
                        w->v->data, Ts, A);
    }

    /* forward: q = s_prev · W_qᵀ   ⇒   ds_prev (B,H) += dq (B,A) · W_q (A,H); dW_q waits
     * for the end of the sequence, where it is one GEMM over all steps */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dq, w->Wq, 1.0, ds_prev);
}

void addattn_seq_backward(gsl_matrix *dHenc, addattn_weights *dw, const gsl_matrix *dQ,
                          const gsl_matrix *dC, const gsl_matrix *dK, const gsl_matrix *S_prev,
                          const gsl_matrix *Alpha, const gsl_matrix *Henc,
                          const addattn_weights *w, size_t B)
{
    assert(B > 0 && Alpha->size1 % B == 0 && dQ->size1 == Alpha->size1);
    assert(dC->size1 == Alpha->size1 && dHenc->size1 == Alpha->size2 * B);

    /* forward: q_t = s_{t−1} · W_qᵀ  ⇒  dW_q (A,H) += dQᵀ (A,Tt·B) · S_prev (Tt·B,H) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dQ, S_prev, 1.0, dw->Wq);

    /* forward: c_t = Σ_j α_tj h_j  ⇒  dh_j += Σ_t α_tj dc_t; for example b, over all steps
     * at once: dH_b (Ts,H) += A_bᵀ (Ts,Tt) · dC_b (Tt,H), with A_b its (Tt,Ts) alignment */
    for (size_t b = 0; b < B; b++) {
        _gsl_matrix_const_view Ab = example_slice(Alpha, b, B);
        _gsl_matrix_const_view dCb = example_slice(dC, b, B);
        gsl_matrix_view dHb = example_slice_rw(dHenc, b, B);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &Ab.matrix, &dCb.matrix, 1.0,
                       &dHb.matrix);
    }

    /* forward: k = Henc · W_kᵀ + b
     *   dW_k (A,H) += dKᵀ (A,Ts·B) · Henc (Ts·B,H);  db (1,A) += Σ_rows dK
     *   dHenc (Ts·B,H) += dK (Ts·B,A) · W_k (A,H)    (the keys' share) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dK, Henc, 1.0, dw->Wk);
    op_bias_backward(dw->bk, dK);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dK, w->Wk, 1.0, dHenc);
}

/* ---- the cost ------------------------------------------------------------------------ */

double addattn_flops(double A, double Hq, double Hk, double Ts, double Tt)
{
    const double keys = Ts * (6.0 * A * Hk + 6.0 * A);
    const double queries = Tt * (6.0 * A * Hq + 4.0 * A + 1.0);
    const double pairs = Ts * Tt * (19.0 * A + 6.0 * Hk + 10.0);
    return keys + queries + pairs;
}
