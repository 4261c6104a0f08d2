/* attention.c — scaled dot-product attention and multi-head attention (see tfm.h).
 *
 * Design. Scaled dot-product attention (Vaswani et al. 2017, §3.2.1, Eq. 1)
 *     Attention(Q, K, V) = softmax(Q·Kᵀ/√dk + M)·V
 * is computed for one sequence at a time and, inside it, one head at a time: head j of Q,
 * K, V and O is a column block of width dk, viewed in place with the row stride of the
 * full matrix (gsl_matrix_view_array_with_tda), so the heads are never copied apart or
 * concatenated back. Multi-head attention (§3.2.2) wraps it in projections that run as one
 * GEMM over all B·T rows of the batch (op_linear_forward, op_add_bias and op_bias_backward
 * of common/core/tensor.h: this file calls no other file of the model).
 *
 * Invariant. Masked scores are exactly −∞, so their weights are exactly 0 and a masked key
 * contributes 0·v to the output: nothing about it, not even rounding, reaches the query.
 * A row masked everywhere gets weights 0 and output 0, never NaN.
 *
 * Reference. As in every model folder, the blocked, vectorised kernel has its plain loop
 * beside it: tfm_attention_reference, Eq. 1 entry by entry with libm's exp, which the
 * tests hold tfm_attention_forward to (no other code calls it); tfm_attend_cached, the
 * decoding kernel, is held in turn to tfm_attention_forward.
 */
#include "tfm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <math.h>

#include "../common/core/fastmath.h"

/* ---- views of one head ------------------------------------------------------------- */

/* Head j of X (T, D): its columns j·dk .. (j+1)·dk − 1, a (T, dk) view with X's stride.
 * (GSL's gsl_matrix_const_view is a const-qualified _gsl_matrix_const_view; a function
 * returns the unqualified type.) */
static _gsl_matrix_const_view head(const gsl_matrix *X, size_t j, size_t dk)
{
    return gsl_matrix_const_view_array_with_tda(X->data + j * dk, X->size1, dk, X->tda);
}

static gsl_matrix_view head_mut(gsl_matrix *X, size_t j, size_t dk)
{
    return gsl_matrix_view_array_with_tda(X->data + j * dk, X->size1, dk, X->tda);
}

/* Head j's weights in P (NH·Tq, Tk): rows j·Tq .. (j+1)·Tq − 1, a (Tq, Tk) view. */
static gsl_matrix_view weights(gsl_matrix *P, size_t j, size_t Tq)
{
    return gsl_matrix_view_array_with_tda(P->data + j * Tq * P->tda, Tq, P->size2, P->tda);
}

/* ---- scaled dot-product attention ------------------------------------------------------ */

/* Row blocks. Under a mask, the queries are taken a block of rows at a time, and each block
 * only against the keys that some row of it may see: under the causal mask, rows r0 .. r1 − 1
 * see keys 0 .. r1 − 1, so the products and the softmax skip the masked corner (at Tq = 128
 * in blocks of 32 they do 62.5% of the full square's work). Without a mask there is one
 * block of every row and key. A key beyond a block's reach has weight exactly 0 for every
 * row of the block, so leaving it out changes no sum. */
#define ROW_BLOCK 32 /* rows per block: narrower products run further below BLAS's peak */
#define MAX_BLOCKS 16 /* longer sequences take longer blocks */

typedef struct row_blocks {
    size_t n;                 /* blocks */
    size_t rows;              /* rows per block (the last may have fewer) */
    size_t reach[MAX_BLOCKS]; /* block b uses keys 0 .. reach[b] − 1 */
} row_blocks;

/* Rows per block of a masked attention over Tq queries. */
static size_t block_rows(size_t Tq)
{
    const size_t longer = (Tq + MAX_BLOCKS - 1) / MAX_BLOCKS;
    return longer > ROW_BLOCK ? longer : ROW_BLOCK;
}

static void plan_blocks(row_blocks *rb, const gsl_matrix *M, size_t Tq, size_t Tk)
{
    if (!M) {
        rb->n = 1;
        rb->rows = Tq;
        rb->reach[0] = Tk;
        return;
    }
    rb->rows = block_rows(Tq);
    rb->n = (Tq + rb->rows - 1) / rb->rows;
    for (size_t b = 0; b < rb->n; b++) {
        const size_t r0 = b * rb->rows, r1 = r0 + rb->rows < Tq ? r0 + rb->rows : Tq;
        /* at least one key, so that every product has a width; a block whose every key is
         * masked then gets weights 0 from the softmax, as it would over all keys */
        size_t reach = 1;
        for (size_t i = r1; i-- > r0;) {
            const double *m = gsl_matrix_const_ptr(M, i, 0);
            size_t k = Tk;
            while (k > reach && m[k - 1] == -INFINITY)
                k--;
            reach = k;
        }
        rb->reach[b] = reach;
    }
}

void tfm_attention_forward(gsl_matrix *O, gsl_matrix *P, double *stat, double *scratch,
                           const gsl_matrix *Q, const gsl_matrix *K, const gsl_matrix *Vm,
                           const gsl_matrix *M, size_t NH)
{
    const size_t Tq = Q->size1, Tk = K->size1, dk = Q->size2 / NH;
    assert(!P || (P->size1 == NH * Tq && P->size2 == Tk));
    assert(!M || (M->size1 == Tq && M->size2 == Tk));
    /* dividing by √dk keeps the scores' variance near 1 whatever the head width, so the
     * softmax does not saturate (§3.2.1) */
    const double scale = 1.0 / sqrt((double)dk);
    row_blocks rb;
    if (Tq > 1)
        plan_blocks(&rb, M, Tq, Tk);
    for (size_t j = 0; j < NH; j++) {
        gsl_matrix_const_view Qj = head(Q, j, dk), Kj = head(K, j, dk), Vj = head(Vm, j, dk);
        gsl_matrix_view Oj = head_mut(O, j, dk);
        /* head j's weights: kept in P, or made in scratch and dropped after use */
        gsl_matrix_view Pj = P ? weights(P, j, Tq) : gsl_matrix_view_array(scratch, Tq, Tk);
        double *stj = stat + 2 * j * Tq;
        if (Tq == 1) {
            /* one query, as in a decoding step: both products are matrix-vector products,
             * and gemv skips the packing a one-row GEMM would pay for
             *   s (Tk) = K_j (Tk,dk) · q (dk) / √dk;  p = softmax(s + m);
             *   o (dk) = V_jᵀ (dk,Tk) · p (Tk) */
            gsl_vector_const_view q = gsl_matrix_const_row(&Qj.matrix, 0);
            gsl_vector_view p = gsl_matrix_row(&Pj.matrix, 0);
            gsl_vector_view o = gsl_matrix_row(&Oj.matrix, 0);
            gsl_blas_dgemv(CblasNoTrans, scale, &Kj.matrix, &q.vector, 0.0, &p.vector);
            op_softmax_row_stat(p.vector.data, M ? M->data : NULL, Tk, stj);
            gsl_blas_dgemv(CblasTrans, 1.0, &Vj.matrix, &p.vector, 0.0, &o.vector);
            continue;
        }
        for (size_t b = 0; b < rb.n; b++) {
            /* rows r0 .. r0 + nr − 1 against keys 0 .. nk − 1 */
            const size_t r0 = b * rb.rows, nr = r0 + rb.rows < Tq ? rb.rows : Tq - r0;
            const size_t nk = rb.reach[b];
            gsl_matrix_const_view Qb = gsl_matrix_const_submatrix(&Qj.matrix, r0, 0, nr, dk);
            gsl_matrix_const_view Kn = gsl_matrix_const_submatrix(&Kj.matrix, 0, 0, nk, dk);
            gsl_matrix_const_view Vn = gsl_matrix_const_submatrix(&Vj.matrix, 0, 0, nk, dk);
            gsl_matrix_view Sb = gsl_matrix_submatrix(&Pj.matrix, r0, 0, nr, nk);
            gsl_matrix_view Ob = gsl_matrix_submatrix(&Oj.matrix, r0, 0, nr, dk);
            /* S (nr,nk) = Q_b (nr,dk) · K_nᵀ (dk,nk) / √dk, written where the weights go */
            gsl_blas_dgemm(CblasNoTrans, CblasTrans, scale, &Qb.matrix, &Kn.matrix, 0.0,
                           &Sb.matrix);
            /* P = softmax(S + M), one row (one query) at a time; s + (−∞) = −∞ gives the
             * weight exactly 0. Each row's maximum and 1/sum go to stat, from which the
             * backward can make the row again. */
            for (size_t i = 0; i < nr; i++)
                op_softmax_row_stat(gsl_matrix_ptr(&Sb.matrix, i, 0),
                                M ? gsl_matrix_const_ptr(M, r0 + i, 0) : NULL, nk,
                                stj + 2 * (r0 + i));
            if (P && nk < Tk) { /* kept weights are whole rows: 0 beyond the reach */
                gsl_matrix_view rest = gsl_matrix_submatrix(&Pj.matrix, r0, nk, nr, Tk - nk);
                gsl_matrix_set_zero(&rest.matrix);
            }
            /* O_b (nr,dk) = P (nr,nk) · V_n (nk,dk): each query's weighted mean of values */
            gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &Sb.matrix, &Vn.matrix, 0.0,
                           &Ob.matrix);
        }
    }
}

void tfm_attention_backward(gsl_matrix *dQ, gsl_matrix *dK, gsl_matrix *dV, double *scratch,
                            const gsl_matrix *dO, const gsl_matrix *Q, const gsl_matrix *K,
                            const gsl_matrix *Vm, const gsl_matrix *M, const gsl_matrix *P,
                            const double *stat, size_t NH)
{
    const size_t Tq = Q->size1, Tk = K->size1, dk = Q->size2 / NH;
    const double scale = 1.0 / sqrt((double)dk);
    /* one head's (Tq, Tk) gradient, first of the weights (dP), then, in place, of the
     * scores (dS); every head reuses it. Without kept weights, the next Tq·Tk hold the
     * head's weights, made again. */
    gsl_matrix_view dS = gsl_matrix_view_array(scratch, Tq, Tk);
    gsl_matrix_view remade = gsl_matrix_view_array(scratch + Tq * Tk, Tq, Tk);
    row_blocks rb;
    plan_blocks(&rb, Tq > 1 ? M : NULL, Tq, Tk);
    /* one block of every key writes dK and dV once; blocks that share keys add into them */
    const int shared = rb.n > 1 || rb.reach[0] < Tk;
    const double beta = shared ? 1.0 : 0.0;
    for (size_t j = 0; j < NH; j++) {
        gsl_matrix_const_view Qj = head(Q, j, dk), Kj = head(K, j, dk), Vj = head(Vm, j, dk);
        gsl_matrix_const_view dOj = head(dO, j, dk);
        gsl_matrix_view dQj = head_mut(dQ, j, dk), dKj = head_mut(dK, j, dk);
        gsl_matrix_view dVj = head_mut(dV, j, dk);
        const double *stj = stat + 2 * j * Tq;
        if (shared) {
            gsl_matrix_set_zero(&dKj.matrix);
            gsl_matrix_set_zero(&dVj.matrix);
        }
        for (size_t b = 0; b < rb.n; b++) {
            const size_t r0 = b * rb.rows, nr = r0 + rb.rows < Tq ? rb.rows : Tq - r0;
            const size_t nk = rb.reach[b];
            gsl_matrix_const_view Qb = gsl_matrix_const_submatrix(&Qj.matrix, r0, 0, nr, dk);
            gsl_matrix_const_view dOb = gsl_matrix_const_submatrix(&dOj.matrix, r0, 0, nr, dk);
            gsl_matrix_const_view Kn = gsl_matrix_const_submatrix(&Kj.matrix, 0, 0, nk, dk);
            gsl_matrix_const_view Vn = gsl_matrix_const_submatrix(&Vj.matrix, 0, 0, nk, dk);
            gsl_matrix_view dQb = gsl_matrix_submatrix(&dQj.matrix, r0, 0, nr, dk);
            gsl_matrix_view dKn = gsl_matrix_submatrix(&dKj.matrix, 0, 0, nk, dk);
            gsl_matrix_view dVn = gsl_matrix_submatrix(&dVj.matrix, 0, 0, nk, dk);
            gsl_matrix_view dSb = gsl_matrix_submatrix(&dS.matrix, r0, 0, nr, nk);
            _gsl_matrix_const_view Pb; /* unqualified: assigned below */
            if (P) {
                Pb = gsl_matrix_const_submatrix(P, j * Tq + r0, 0, nr, nk);
            } else {
                /* the weights made again, bit for bit as the forward made them: the same
                 * product on the same operands, then each row replayed from its stat */
                gsl_matrix_view Rb = gsl_matrix_submatrix(&remade.matrix, r0, 0, nr, nk);
                if (Tq == 1) { /* the forward's gemv (see there) */
                    gsl_vector_const_view q = gsl_matrix_const_row(&Qb.matrix, 0);
                    gsl_vector_view r = gsl_matrix_row(&Rb.matrix, 0);
                    gsl_blas_dgemv(CblasNoTrans, scale, &Kn.matrix, &q.vector, 0.0, &r.vector);
                } else {
                    gsl_blas_dgemm(CblasNoTrans, CblasTrans, scale, &Qb.matrix, &Kn.matrix,
                                   0.0, &Rb.matrix);
                }
                for (size_t i = 0; i < nr; i++)
                    op_softmax_row_replay(gsl_matrix_ptr(&Rb.matrix, i, 0),
                                           M ? gsl_matrix_const_ptr(M, r0 + i, 0) : NULL, nk,
                                           stj + 2 * (r0 + i));
                Pb = gsl_matrix_const_submatrix(&remade.matrix, r0, 0, nr, nk);
            }

            /* forward: O_b = P_b · V_n
             *   dP_b (nr,nk) = dO_b (nr,dk) · V_nᵀ (dk,nk)
             *   dV_n (nk,dk) += P_bᵀ (nk,nr) · dO_b (nr,dk) */
            gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &dOb.matrix, &Vn.matrix, 0.0,
                           &dSb.matrix);
            gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &Pb.matrix, &dOb.matrix, beta,
                           &dVn.matrix);

            /* forward: P = softmax(S + M), row by row; M is a constant, so dS = d(S + M):
             *   dS_i = P_i ⊙ (dP_i − (dP_i · P_i)), in place of dP_i.
             * Masked weights are exactly 0, so their scores get gradient exactly 0. */
            for (size_t i = 0; i < nr; i++)
                op_softmax_row_backward_inplace(gsl_matrix_ptr(&dSb.matrix, i, 0),
                                         gsl_matrix_const_ptr(&Pb.matrix, i, 0), nk);

            /* forward: S_b = Q_b · K_nᵀ / √dk
             *   dQ_b (nr,dk) = dS_b (nr,nk) · K_n (nk,dk) / √dk
             *   dK_n (nk,dk) += dS_bᵀ (nk,nr) · Q_b (nr,dk) / √dk */
            gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, scale, &dSb.matrix, &Kn.matrix, 0.0,
                           &dQb.matrix);
            gsl_blas_dgemm(CblasTrans, CblasNoTrans, scale, &dSb.matrix, &Qb.matrix, beta,
                           &dKn.matrix);
        }
    }
}

/* ---- the plain reference ------------------------------------------------------------- */

/* s_ik = q_i·k_k/√dk + m_ik over head j's dk features (columns j·dk .. (j+1)·dk − 1). */
static double reference_score(const gsl_matrix *Q, const gsl_matrix *K, const gsl_matrix *M,
                              size_t i, size_t k, size_t j, size_t dk)
{
    double dot = 0.0;
    for (size_t f = j * dk; f < (j + 1) * dk; f++)
        dot += gsl_matrix_get(Q, i, f) * gsl_matrix_get(K, k, f);
    return dot / sqrt((double)dk) + (M ? gsl_matrix_get(M, i, k) : 0.0);
}

void tfm_attention_reference(gsl_matrix *O, const gsl_matrix *Q, const gsl_matrix *K,
                             const gsl_matrix *Vm, const gsl_matrix *M, size_t NH)
{
    const size_t Tq = Q->size1, Tk = K->size1, dk = Q->size2 / NH;
    for (size_t j = 0; j < NH; j++)
        for (size_t i = 0; i < Tq; i++) {
            /* o_i = Σ_k p_ik·v_k,  p_ik = e^{s_ik − m} / Σ_k' e^{s_ik' − m},  m = max_k s_ik
             * (s is formed again in each pass rather than kept, so nothing needs scratch;
             * a row masked everywhere has m = −∞ and gets weights 0) */
            double mx = -INFINITY, sum = 0.0;
            for (size_t k = 0; k < Tk; k++)
                mx = fmax(mx, reference_score(Q, K, M, i, k, j, dk));
            for (size_t k = 0; k < Tk; k++) {
                const double sk = reference_score(Q, K, M, i, k, j, dk);
                sum += mx == -INFINITY ? 0.0 : exp(sk - mx);
            }
            for (size_t f = j * dk; f < (j + 1) * dk; f++)
                gsl_matrix_set(O, i, f, 0.0);
            for (size_t k = 0; k < Tk; k++) {
                const double sk = reference_score(Q, K, M, i, k, j, dk);
                const double e = mx == -INFINITY ? 0.0 : exp(sk - mx);
                const double w = sum > 0.0 ? e / sum : 0.0;
                for (size_t f = j * dk; f < (j + 1) * dk; f++)
                    *gsl_matrix_ptr(O, i, f) += w * gsl_matrix_get(Vm, k, f);
            }
        }
}

/* ---- one query against a key/value cache ------------------------------------------------
 * A decoding step has one query per sequence. tfm_attention_forward would serve it with
 * two gemv calls per head and sequence on (Tk, dk) blocks only 16 columns wide: 512 calls
 * a step at the canonical sizes, each too small to pay for itself. Here the keys are kept
 * transposed, row f holding feature f of every cached position, so that the scores of
 * head j are dk rows of the cache added with weights q_f,
 *     s (Tk) = Σ_f q_f · Kᵀ[f, :]   (f over head j's features)
 * a loop over contiguous positions that vectorises; the values are read row by row,
 * every head at once. tfm_attention_forward is the reference the tests hold this to. */

/* One sequence: o (D) and the weights p (NH, Tk) of query q (D) over Tk positions; kt
 * (D, ldk) the keys transposed, v (Tk, ldv) the values, head j in columns j·dk .. */
FM_CLONES
static void attend_one(double *restrict o, double *restrict p, const double *restrict q,
                       const double *restrict kt, size_t ldk, const double *restrict v,
                       size_t ldv, size_t Tk, size_t D, size_t NH)
{
    const size_t dk = D / NH;
    const double scale = 1.0 / sqrt((double)dk);
    for (size_t j = 0; j < NH; j++) {
        /* s_j (Tk) = K_j (Tk,dk) · q_j (dk) / √dk, as dk passes over rows of Kᵀ */
        double *s = p + j * Tk;
        const double *qj = q + j * dk, *ktj = kt + j * dk * ldk;
        for (size_t k = 0; k < Tk; k++)
            s[k] = 0.0;
        /* the cache comes from memory, not from the processor's caches: each row asks for
         * the one two rows ahead (measured: +10% on decoding at L = 128; four rows ahead,
         * and eight for the values, was no better than none) */
        for (size_t d = 0; d < dk; d++) {
            const double *row = ktj + d * ldk;
            for (size_t k = 0; k < Tk; k += FM_LANES)
                FM_PREFETCH(row + 2 * ldk + k);
            fm_axpy(s, qj[d], row, Tk);
        }
        fm_scal(s, scale, Tk);
        op_softmax_row_stat(s, NULL, Tk, NULL); /* the cache holds no later position: no mask */
    }
    /* o_j (dk) = V_jᵀ (dk,Tk) · p_j (Tk): one pass over the value rows, every head in it,
     * so the NH·dk sums are independent chains */
    for (size_t f = 0; f < D; f++)
        o[f] = 0.0;
    for (size_t k = 0; k < Tk; k++) {
        const double *vk = v + k * ldv;
        for (size_t f = 0; f < D; f += FM_LANES)
            FM_PREFETCH(vk + 4 * ldv + f);
        for (size_t j = 0; j < NH; j++)
            fm_axpy(o + j * dk, p[j * Tk + k], vk + j * dk, dk);
    }
}

void tfm_attend_cached(gsl_matrix *O, double *p, const gsl_matrix *Q, const double *Kt,
                       size_t ldk, size_t kt_stride, const gsl_matrix *V, size_t vstride,
                       size_t Tk, size_t NH)
{
    const size_t B = Q->size1, D = Q->size2;
    assert(O->size1 == B && O->size2 == D && V->size2 == D && Tk <= ldk && Tk <= vstride);
    assert(V->size1 >= (B - 1) * vstride + Tk);
    for (size_t b = 0; b < B; b++)
        attend_one(gsl_matrix_ptr(O, b, 0), p, gsl_matrix_const_ptr(Q, b, 0),
                   Kt + b * kt_stride, ldk, gsl_matrix_const_ptr(V, b * vstride, 0), V->tda,
                   Tk, D, NH);
}

/* ---- multi-head attention ------------------------------------------------------------ */

void tfm_mha_project_q(gsl_matrix *Q, const gsl_matrix *Xq, const tfm_mha *p)
{
    const size_t D = Xq->size2;
    /* W_q is the first D rows of the stacked in_proj, b_q its first D entries */
    gsl_matrix_const_view Wq = gsl_matrix_const_submatrix(p->w_in, 0, 0, D, D);
    gsl_matrix_const_view bq = gsl_matrix_const_submatrix(p->b_in, 0, 0, 1, D);
    /* Q (N,D) = Xq (N,D) · W_qᵀ (D,D) + b_q */
    op_linear_forward(Q, Xq, &Wq.matrix, &bq.matrix);
}

void tfm_mha_project_kv(gsl_matrix *KV, const gsl_matrix *Xkv, const tfm_mha *p)
{
    const size_t D = Xkv->size2;
    /* [W_k; W_v] is rows D .. 3D−1 of in_proj: one (2D, D) block, so one GEMM makes both */
    gsl_matrix_const_view Wkv = gsl_matrix_const_submatrix(p->w_in, D, 0, 2 * D, D);
    gsl_matrix_const_view bkv = gsl_matrix_const_submatrix(p->b_in, 0, D, 1, 2 * D);
    /* [K | V] (N,2D) = Xkv (N,D) · [W_k; W_v]ᵀ (D,2D) + [b_k, b_v] */
    op_linear_forward(KV, Xkv, &Wkv.matrix, &bkv.matrix);
}

/* The attention of each of B sequences: a->q (B·Tq, D) and the Tk keys and values of
 * sequence b, the rows b·Tk .. of a->kv, make a->o (B·Tq, D), a->stat and, when kept,
 * a->p (B·NH·Tq, Tk). */
static void attend_batch(tfm_mha_act *a, const gsl_matrix *M, size_t B, size_t Tk, size_t NH)
{
    const gsl_matrix *Q = &a->q.matrix, *KV = &a->kv.matrix;
    const size_t Tq = Q->size1 / B, D = Q->size2;
    assert(Q->size1 == B * Tq && KV->size1 == B * Tk);
    for (size_t b = 0; b < B; b++) {
        /* sequence b: its Tq queries, and its Tk keys (left half of KV) and values (right
         * half) */
        const double *kv = gsl_matrix_const_ptr(KV, b * Tk, 0);
        gsl_matrix_const_view Qb = gsl_matrix_const_submatrix(Q, b * Tq, 0, Tq, D);
        gsl_matrix_const_view Kb = gsl_matrix_const_view_array_with_tda(kv, Tk, D, KV->tda);
        gsl_matrix_const_view Vb = gsl_matrix_const_view_array_with_tda(kv + D, Tk, D,
                                                                        KV->tda);
        gsl_matrix_view Ob = gsl_matrix_submatrix(&a->o.matrix, b * Tq, 0, Tq, D);
        gsl_matrix_view Pb;
        if (a->p.matrix.data)
            Pb = gsl_matrix_submatrix(&a->p.matrix, b * NH * Tq, 0, NH * Tq, Tk);
        tfm_attention_forward(&Ob.matrix, a->p.matrix.data ? &Pb.matrix : NULL,
                              a->stat + 2 * b * NH * Tq, a->pbuf, &Qb.matrix, &Kb.matrix,
                              &Vb.matrix, M, NH);
    }
}

void tfm_mha_output(gsl_matrix *Y, const gsl_matrix *O, const tfm_mha *p)
{
    /* Y (N,D) += O (N,D) · W_oᵀ (D,D) + b_o: W_o mixes what the heads found */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, O, p->w_out, 1.0, Y);
    op_add_bias(Y, p->b_out);
}

void tfm_mha_forward(gsl_matrix *Y, tfm_mha_act *a, const gsl_matrix *Xq,
                     const gsl_matrix *Xkv, const tfm_mha *p, const gsl_matrix *M, size_t B,
                     size_t NH)
{
    const size_t Tk = Xkv->size1 / B;
    if (Xq == Xkv && a->qkv.matrix.data) {
        /* [Q | K | V] (N,3D) = X (N,D) · [W_q; W_k; W_v]ᵀ (D,3D) + b_in: one GEMM */
        op_linear_forward(&a->qkv.matrix, Xq, p->w_in, p->b_in);
    } else {
        tfm_mha_project_q(&a->q.matrix, Xq, p);
        tfm_mha_project_kv(&a->kv.matrix, Xkv, p);
    }
    a->mask = M;
    attend_batch(a, M, B, Tk, NH);
    tfm_mha_output(Y, &a->o.matrix, p);
}

void tfm_mha_backward(gsl_matrix *dXq, gsl_matrix *dXkv, tfm_mha *dp, tfm_work *w,
                      const gsl_matrix *dY, const gsl_matrix *Xq, const gsl_matrix *Xkv,
                      const tfm_mha_act *a, const tfm_mha *p, size_t B, size_t NH)
{
    const size_t Nq = Xq->size1, Nk = Xkv->size1, D = Xq->size2;
    const size_t Tq = Nq / B, Tk = Nk / B;
    assert(Nq <= w->rows && Nk <= w->rows && Tq <= w->keys && Tk <= w->keys);
    /* self-attention with one [Q | K | V]: its gradient is one matrix too, and two GEMMs
     * send it back; otherwise dQ and d[K | V] are blocks of the same scratch */
    const int fused = Xq == Xkv && dXq == dXkv && a->qkv.matrix.data;
    const size_t rows = Nq > Nk ? Nq : Nk;
    gsl_matrix_view dO = gsl_matrix_view_array(w->dout, Nq, D);
    gsl_matrix_view dQKV = gsl_matrix_view_array(w->dqkv, rows, 3 * D);
    gsl_matrix_view dQ = gsl_matrix_submatrix(&dQKV.matrix, 0, 0, Nq, D);
    gsl_matrix_view dKV = gsl_matrix_submatrix(&dQKV.matrix, 0, D, Nk, 2 * D);

    /* forward: Y += O · W_oᵀ + b_o
     *   dW_o (D,D) += dYᵀ (D,Nq) · O (Nq,D);  db_o += Σ_rows dY
     *   dO (Nq,D) = dY (Nq,D) · W_o (D,D) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dY, &a->o.matrix, 1.0, dp->w_out);
    op_bias_backward(dp->b_out, dY);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dY, p->w_out, 0.0, &dO.matrix);

    /* forward: O_b = Attention(Q_b, K_b, V_b) for each sequence b; the attention backward
     * writes each sequence's and head's block of dQ and d[K | V] once, so nothing has to
     * be zeroed first (beta = 0: OpenBLAS's small-matrix kernels then never read it) */
    for (size_t b = 0; b < B; b++) {
        gsl_matrix_const_view Qb = gsl_matrix_const_submatrix(&a->q.matrix, b * Tq, 0, Tq, D);
        gsl_matrix_const_view Kb = gsl_matrix_const_submatrix(&a->kv.matrix, b * Tk, 0, Tk, D);
        gsl_matrix_const_view Vb = gsl_matrix_const_submatrix(&a->kv.matrix, b * Tk, D, Tk, D);
        const int kept = a->p.matrix.data != NULL;
        _gsl_matrix_const_view Pb; /* unqualified: assigned below */
        if (kept)
            Pb = gsl_matrix_const_submatrix(&a->p.matrix, b * NH * Tq, 0, NH * Tq, Tk);
        gsl_matrix_const_view dOb = gsl_matrix_const_submatrix(&dO.matrix, b * Tq, 0, Tq, D);
        gsl_matrix_view dQb = gsl_matrix_submatrix(&dQ.matrix, b * Tq, 0, Tq, D);
        gsl_matrix_view dKb = gsl_matrix_submatrix(&dKV.matrix, b * Tk, 0, Tk, D);
        gsl_matrix_view dVb = gsl_matrix_submatrix(&dKV.matrix, b * Tk, D, Tk, D);
        tfm_attention_backward(&dQb.matrix, &dKb.matrix, &dVb.matrix, w->att, &dOb.matrix,
                               &Qb.matrix, &Kb.matrix, &Vb.matrix, a->mask,
                               kept ? &Pb.matrix : NULL, a->stat + 2 * b * NH * Tq, NH);
    }

    if (fused) {
        /* forward: [Q | K | V] = X · [W_q; W_k; W_v]ᵀ + b_in
         *   dW_in (3D,D) += dQKVᵀ (3D,N) · X (N,D);  db_in += Σ_rows dQKV
         *   dX (N,D) += dQKV (N,3D) · W_in (3D,D) */
        gsl_matrix_view dQKVn = gsl_matrix_submatrix(&dQKV.matrix, 0, 0, Nq, 3 * D);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &dQKVn.matrix, Xq, 1.0, dp->w_in);
        op_bias_backward(dp->b_in, &dQKVn.matrix);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &dQKVn.matrix, p->w_in, 1.0, dXq);
        return;
    }

    /* forward: [K | V] = Xkv · [W_k; W_v]ᵀ + [b_k, b_v]
     *   d[W_k; W_v] (2D,D) += dKVᵀ (2D,Nk) · Xkv (Nk,D);  d[b_k, b_v] += Σ_rows dKV
     *   dXkv (Nk,D) += dKV (Nk,2D) · [W_k; W_v] (2D,D) */
    gsl_matrix_const_view Wkv = gsl_matrix_const_submatrix(p->w_in, D, 0, 2 * D, D);
    gsl_matrix_view dWkv = gsl_matrix_submatrix(dp->w_in, D, 0, 2 * D, D);
    gsl_matrix_view dbkv = gsl_matrix_submatrix(dp->b_in, 0, D, 1, 2 * D);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &dKV.matrix, Xkv, 1.0, &dWkv.matrix);
    op_bias_backward(&dbkv.matrix, &dKV.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &dKV.matrix, &Wkv.matrix, 1.0, dXkv);

    /* forward: Q = Xq · W_qᵀ + b_q
     *   dW_q (D,D) += dQᵀ (D,Nq) · Xq (Nq,D);  db_q += Σ_rows dQ
     *   dXq (Nq,D) += dQ (Nq,D) · W_q (D,D)
     * When dXq and dXkv are the same matrix, both paths add into it. */
    gsl_matrix_const_view Wq = gsl_matrix_const_submatrix(p->w_in, 0, 0, D, D);
    gsl_matrix_view dWq = gsl_matrix_submatrix(dp->w_in, 0, 0, D, D);
    gsl_matrix_view dbq = gsl_matrix_submatrix(dp->b_in, 0, 0, 1, D);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &dQ.matrix, Xq, 1.0, &dWq.matrix);
    op_bias_backward(&dbq.matrix, &dQ.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &dQ.matrix, &Wq.matrix, 1.0, dXq);
}

/* ---- the cost ------------------------------------------------------------------------ */

tfm_scores tfm_scores_full(double Nq, double Nk)
{
    return (tfm_scores){.pairs = Nq * Nk, .reach = Nk, .masked = 0};
}

tfm_scores tfm_scores_causal(size_t T)
{
    /* plan_blocks on the causal mask: the block of rows r0 .. r1 − 1 reaches keys
     * 0 .. r1 − 1, those its last row may see */
    tfm_scores s = {.pairs = 0.0, .reach = 0.0, .masked = 1};
    const size_t rows = block_rows(T);
    for (size_t r0 = 0; r0 < T; r0 += rows) {
        const size_t r1 = r0 + rows < T ? r0 + rows : T;
        s.pairs += (double)(r1 - r0) * (double)r1;
        s.reach += (double)r1;
    }
    return s;
}

double tfm_mha_flops(double D, double NH, double Nq, double Nk, tfm_scores s)
{
    const double products = 12.0 * D * D * (Nq + Nk) + 12.0 * D * s.pairs;
    const double per_head = (10.0 + (s.masked ? 1.0 : 0.0)) * s.pairs + Nq;
    return products + NH * per_head + 4.0 * D * (Nq + Nk) + D * (Nq + s.reach);
}
