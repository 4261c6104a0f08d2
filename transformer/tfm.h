/* tfm.h — the encoder-decoder Transformer of Vaswani et al. 2017, "Attention Is All You
 * Need", with the forward and the backward pass of every piece (prefix: tfm_).
 *
 * Shapes. B batch, Ts source length, Tt target length, T either, N = B·T rows,
 * D model width (d_model), NH heads, dk = D/NH the width of one head, F feed-forward
 * width (d_ff), V vocabulary (the data symbols plus BOS), Lmax = max_len, L layers.
 *
 * Layout. The activations of B sequences are row-major (N, ·) matrices whose row b·T + t
 * is position t of sequence b, so every projection is one GEMM over all N rows. Head j of
 * a (N, D) matrix is its column block j·dk .. (j+1)·dk − 1, seen in place through
 * gsl_matrix_view_array_with_tda (row stride D), never copied.
 *
 * Ownership. Parameters are views into the model's arena (common/core/tensor.h), named and
 * bound by one walk (common/core/walk.h): the structs below only point into it, one copy
 * pointing at the values and one, of the same type, at the gradients. Activations are
 * views into one block (common/core/carve.h) that reserve() allocates for the largest batch and
 * that each forward carves again at the sizes of its batch; backward reads what the last
 * forward left there. Nothing allocates during a step.
 *
 * Files, the same roles as in lstm/ and rnn_attention/: tfm.h (this header: the pieces,
 * then the model's parameter and state structs with their shapes), tfm_model.c (the
 * configuration, the size table, the state layout and reserve(), alloc/free/init, the ops
 * table), tfm_pass.c (the two stacks, forward and backward), tfm_decode.c (greedy
 * decoding with a key/value cache, traces); the last two read the state tfm_model.c lays
 * out, and its ops table lists them. Its pieces, each calling only those after it:
 * embed.c (embeddings and positions), layer.c (walks and carving of every
 * piece, residual sublayers, encoder and decoder layers), attention.c (softmax, scaled
 * dot-product and multi-head attention), ffn.c (feed-forward), norm.c (layer norm). The
 * linear maps are common/core/tensor.h's op_linear_forward, op_add_bias and op_bias_backward.
 *
 * Conventions as in PyTorch's nn.Transformer, so weights are comparable: W_q, W_k, W_v are
 * stacked in one (3D, D) matrix (in_proj_weight); every linear map stores W as (out, in)
 * and computes y = x·Wᵀ + b.
 *
 * Argument order, everywhere: outputs first, then inputs and weights, then sizes.
 * Backward takes the gradients it writes or accumulates (+=) — the input gradient first,
 * then the weight gradients, then the scratch it writes — then the upstream gradient,
 * then what the forward kept, then the weights, then sizes.
 */
#ifndef ATTNLAB_TFM_H
#define ATTNLAB_TFM_H

#include <stddef.h>
#include <gsl/gsl_matrix.h>

#include "../common/core/carve.h"
#include "../common/core/model.h"
#include "../common/core/tensor.h"
#include "../common/core/walk.h"

#define TFM_LN_EPS 1e-5 /* ε of layer norm, as PyTorch's default */

/* ---- parameters -------------------------------------------------------------------- */

/* Layer norm (Ba et al. 2016): y = γ ⊙ (x − μ)/√(σ² + ε) + β over the D features. */
typedef struct tfm_norm {
    gsl_matrix *g; /* (1, D) gain γ, starts at 1 */
    gsl_matrix *b; /* (1, D) bias β, starts at 0 */
} tfm_norm;

/* Multi-head attention (§3.2.2): the projections of queries, keys, values and output. */
typedef struct tfm_mha {
    gsl_matrix *w_in;  /* (3D, D) [W_q; W_k; W_v] stacked by rows (PyTorch's in_proj) */
    gsl_matrix *b_in;  /* (1, 3D) [b_q, b_k, b_v] */
    gsl_matrix *w_out; /* (D, D) W_o, mixes the concatenated heads */
    gsl_matrix *b_out; /* (1, D) b_o */
} tfm_mha;

/* Position-wise feed-forward network (§3.3, Eq. 2):
 *     FFN(x) = max(0, x·W_1ᵀ + b_1)·W_2ᵀ + b_2 */
typedef struct tfm_ffn {
    gsl_matrix *w1; /* (F, D) */
    gsl_matrix *b1; /* (1, F) */
    gsl_matrix *w2; /* (D, F) */
    gsl_matrix *b2; /* (1, D) */
} tfm_ffn;

/* One encoder layer (§3.1): self-attention, then feed-forward, each a residual sublayer. */
typedef struct tfm_enc_layer {
    tfm_norm ln1;  /* (1, D) γ, β: norm of the attention sublayer */
    tfm_mha attn;  /* (3D, D), (D, D): self-attention, queries, keys and values from the
                    * layer's input */
    tfm_norm ln2;  /* (1, D) γ, β: norm of the feed-forward sublayer */
    tfm_ffn ff;    /* (F, D), (D, F): feed-forward */
} tfm_enc_layer;

/* One decoder layer (§3.1): masked self-attention, cross-attention, feed-forward. */
typedef struct tfm_dec_layer {
    tfm_norm ln1;  /* (1, D) γ, β: norm of the self-attention sublayer */
    tfm_mha self;  /* (3D, D), (D, D): masked self-attention over the target prefix */
    tfm_norm ln2;  /* (1, D) γ, β: norm of the cross-attention sublayer */
    tfm_mha cross; /* (3D, D), (D, D): queries from the decoder, keys and values from the
                    * memory */
    tfm_norm ln3;  /* (1, D) γ, β: norm of the feed-forward sublayer */
    tfm_ffn ff;    /* (F, D), (D, F): feed-forward */
} tfm_dec_layer;

/* ---- the size table, written once ---------------------------------------------------
 * Each walker names the tensors of one piece with walk_tensor (common/core/walk.h), in a fixed
 * order: the order of the arena, and so of checkpoints, of the optimiser's flat loops and
 * of the initialisation's draws. Names are prefix.part, e.g. "dec.1.cross.w_in". w and g
 * receive the views of the values and of the gradients (walk_build's last pass). */
void tfm_norm_walk(walk *wk, tfm_norm *w, tfm_norm *g, const char *prefix, size_t D);
void tfm_mha_walk(walk *wk, tfm_mha *w, tfm_mha *g, const char *prefix, size_t D);
void tfm_ffn_walk(walk *wk, tfm_ffn *w, tfm_ffn *g, const char *prefix, size_t D, size_t F);
void tfm_enc_layer_walk(walk *wk, tfm_enc_layer *w, tfm_enc_layer *g, const char *prefix,
                        size_t D, size_t F);
void tfm_dec_layer_walk(walk *wk, tfm_dec_layer *w, tfm_dec_layer *g, const char *prefix,
                        size_t D, size_t F);

/* ---- activations --------------------------------------------------------------------- */

/* A residual sublayer around a function f (attention or feed-forward), in either order:
 *   pre-LN  (Xiong et al. 2020; the default):  y = x + f(LN(x))
 *   post-LN (the paper, §3.1: "LayerNorm(x + Sublayer(x))"):  y = LN(x + f(x)) */
typedef struct tfm_sub_act {
    gsl_matrix_view n; /* (N, D) pre-LN: LN(x), f's input; post-LN: x + f(x), LN's input */
    double *mean;      /* (N) mean of each row that LN normalised */
    double *rstd;      /* (N) 1/√(σ² + ε) of each such row */
    gsl_matrix_view y; /* (N, D) the residual stream after the sublayer */
} tfm_sub_act;

/* What multi-head attention keeps for its backward, for B sequences of Tq queries and Tk
 * keys. In self-attention (Tq = Tk = T) Q, K and V are the column blocks of one (B·T, 3D)
 * matrix, so one GEMM with the whole in_proj makes all three (as PyTorch does). */
typedef struct tfm_mha_act {
    gsl_matrix_view qkv; /* (B·T, 3D) [Q | K | V] in self-attention; an empty view otherwise */
    gsl_matrix_view q;   /* (B·Tq, D) Q = Xq·W_qᵀ + b_q, head j in columns j·dk .. */
    gsl_matrix_view kv;  /* (B·Tk, 2D) [K | V] = Xkv·[W_k; W_v]ᵀ + [b_k, b_v] */
    gsl_matrix_view p;   /* (B·NH·Tq, Tk) attention weights, row (b·NH + j)·Tq + i, when
                          * kept (see tfm_keep_maps); an empty view otherwise */
    double *stat;        /* (B·NH·Tq, 2) each weight row's softmax maximum and 1/sum: what
                          * the backward needs to make a row again, bit for bit */
    double *pbuf;        /* (Tq·Tk) one head's weights, when p is not kept; or NULL */
    const gsl_matrix *mask; /* (Tq, Tk) the mask the last forward applied, or NULL */
    gsl_matrix_view o;   /* (B·Tq, D) the heads' outputs side by side, the input of W_o */
} tfm_mha_act;

/* One encoder layer's activations for B sequences of Ts positions. */
typedef struct tfm_enc_act {
    tfm_sub_act s1;    /* (B·Ts, D) attention sublayer; s1.y is the stream after it */
    tfm_mha_act att;   /* (B, Ts, Ts) self-attention */
    tfm_sub_act s2;    /* (B·Ts, D) feed-forward sublayer; s2.y is the layer's output */
    gsl_matrix_view h; /* (B·Ts, F) max(0, x·W_1ᵀ + b_1), kept after the ReLU */
} tfm_enc_act;

/* One decoder layer's activations for B sequences of Tt positions reading Ts. */
typedef struct tfm_dec_act {
    tfm_sub_act s1;    /* (B·Tt, D) masked self-attention sublayer */
    tfm_mha_act self;  /* (B, Tt, Tt); in decoding, self.kv is where a step projects [K | V] */
    tfm_sub_act s2;    /* (B·Tt, D) cross-attention sublayer */
    tfm_mha_act cross; /* (B, Tt, Ts); cross.kv holds the memory's keys and values (copied,
                        * in decoding, into the step's caches) */
    tfm_sub_act s3;    /* (B·Tt, D) feed-forward sublayer; s3.y is the layer's output */
    gsl_matrix_view h; /* (B·Tt, F) the feed-forward hidden layer, after the ReLU */
} tfm_dec_act;

/* Keeping the attention weights. A training step keeps, for each attention of each layer,
 * B·NH·Tq·Tk weights for its backward: at L = 128 and the canonical sizes 6 × 16 MiB, more
 * than every other activation together. Above TFM_KEEP_MAPS_MAX bytes (in all) they are
 * not kept: the forward keeps each weight row's maximum and 1/sum, and the backward makes
 * the weights again from Q, K and those, one head at a time, bit for bit the forward's
 * (one more Q·Kᵀ product and exponential per head; see docs/transformer.md). */
#define TFM_KEEP_MAPS_MAX ((size_t)16 << 20)
/* Whether a batch (B, Ts, Tt) keeps its weights: their bytes over all L layers ≤ the bound. */
int tfm_keep_maps(size_t B, size_t Ts, size_t Tt, size_t NH, size_t L);

/* The carvers of the activations (common/core/carve.h): each takes from c, in a fixed order,
 * the arrays of one piece at the sizes given, and points the views of its struct at them
 * (empty views when c only counts). The model's layout calls them once per layer, the
 * tests on blocks of their own. */

/* s: n and y (N, D), mean and rstd (N). */
void tfm_sub_act_carve(tfm_sub_act *s, carver *c, size_t N, size_t D);
/* a: as tfm_mha_act lists, for B sequences of Tq queries and Tk keys. self: q and kv as
 * the column blocks of one [Q | K | V] matrix (needs Tq = Tk). keep: p for every weight,
 * else pbuf for one head's. */
void tfm_mha_act_carve(tfm_mha_act *a, carver *c, size_t B, size_t Tq, size_t Tk, size_t D,
                       size_t NH, int self, int keep);
/* a: one encoder layer for B sequences of T positions (self-attention over T keys). */
void tfm_enc_act_carve(tfm_enc_act *a, carver *c, size_t B, size_t T, size_t D, size_t F,
                       size_t NH, int keep);
/* a: one decoder layer for B sequences of Tt positions reading Ts memory positions. */
void tfm_dec_act_carve(tfm_dec_act *a, carver *c, size_t B, size_t Tt, size_t Ts, size_t D,
                       size_t F, size_t NH, int keep);

/* Scratch of the backward pass, shared by all layers (each uses it, then the next). The
 * pointers are raw so each use makes views of the size it needs. A backward writes it:
 * it is passed without const, after the gradients. */
typedef struct tfm_work {
    size_t rows;  /* capacity in rows: N ≤ rows for every matrix below */
    size_t keys;  /* capacity in positions: Tq and Tk ≤ keys */
    double *g;    /* (rows, D) gradient of the residual stream inside a layer */
    double *dn;   /* (rows, D) gradient of a sublayer's n (see tfm_sub_act) */
    double *dqkv; /* (rows, 3D) gradient of [Q | K | V] (or of Q and of [K | V] apart) */
    double *dout; /* (rows, D) gradient of the concatenated head outputs */
    double *dh;   /* (rows, F) gradient of the feed-forward hidden layer */
    double *att;  /* (2·keys·keys) gradient of one head's weights P_j, then of its scores;
                   * then P_j itself, made again when the weights were not kept */
} tfm_work;

/* w: the scratch above for up to rows rows and keys positions. */
void tfm_work_carve(tfm_work *w, carver *c, size_t rows, size_t keys, size_t D, size_t F);

/* ---- layer norm --------------------------------------------------------------------- */

/* Y (N, D) = γ ⊙ (X − μ)/√(σ² + ε) + β, row by row; writes mean and rstd (N). Y ≠ X. */
void tfm_layernorm_forward(gsl_matrix *Y, double *mean, double *rstd, const gsl_matrix *X,
                           const tfm_norm *p);
/* Accumulates dX (N, D), dp->g and dp->b from dY (N, D), the input X and the statistics
 * the forward wrote. */
void tfm_layernorm_backward(gsl_matrix *dX, tfm_norm *dp, const gsl_matrix *dY,
                            const gsl_matrix *X, const double *mean, const double *rstd,
                            const tfm_norm *p);

/* The analytic FLOPs of tfm_layernorm_forward and tfm_layernorm_backward on one row of
 * D features (MODEL FLOPS in common/core/model.h):
 *   forward   Σx (D), /D (1), Σ(x − μ)² (3D), /D, + ε, √, 1/ (4), γ·((x − μ)·r) + β (4D)
 *                                                                    → 8D + 5
 *   backward  x̂ again, dx̂ = dy·γ, dγ += dy·x̂, dβ += dy and the two sums Σdx̂, Σdx̂·x̂
 *             (9D), the two means (2), dx += r·(dx̂ − m1 − x̂·m2) with x̂ again (8D)
 *                                                                    → 17D + 2
 * so 25D + 7. */
double tfm_norm_flops(double D);

/* The plain references of the two above, one sum at a time as the equations read (the
 * kernels add in FM_LANES partial sums): the tests hold the kernels to them, and no other
 * code calls them. Same arguments, shapes and contracts as tfm_layernorm_forward and
 * tfm_layernorm_backward. */
void tfm_norm_reference(gsl_matrix *Y, double *mean, double *rstd, const gsl_matrix *X,
                        const tfm_norm *p);
void tfm_norm_reference_backward(gsl_matrix *dX, tfm_norm *dp, const gsl_matrix *dY,
                                 const gsl_matrix *X, const double *mean, const double *rstd,
                                 const tfm_norm *p);

/* ---- scaled dot-product attention (§3.2.1, Eq. 1), one sequence, all heads ----------- */

/* For each head j: P_j = softmax(Q_j·K_jᵀ/√dk + M), O_j = P_j·V_j.
 * Q (Tq, D), K and Vm (Tk, D), O (Tq, D): any row stride, head j in columns j·dk .. .
 * P (NH·Tq, Tk): head j in rows j·Tq .. ; or NULL not to keep the weights, which are
 * then made in scratch (Tq·Tk doubles) one head at a time. stat (NH·Tq, 2) receives each
 * weight row's maximum and 1/sum (op_softmax_row_stat). M (Tq, Tk) adds 0 where a query may
 * look and −∞ where it may not, or is NULL for no mask. A query whose every key is masked
 * gets weights 0 and output 0 (never NaN). */
void tfm_attention_forward(gsl_matrix *O, gsl_matrix *P, double *stat, double *scratch,
                           const gsl_matrix *Q, const gsl_matrix *K, const gsl_matrix *Vm,
                           const gsl_matrix *M, size_t NH);
/* Writes dQ (Tq, D), dK and dV (Tk, D) from dO (Tq, D) and what the forward read and
 * wrote: the weights P, or, with P NULL, their statistics stat, from which each head's
 * weights are made again, the same bits. They are gradients of activations, each written
 * once, so they are not accumulated (no pass to zero them first). scratch holds Tq·Tk
 * doubles, 2·Tq·Tk when P is NULL. */
void tfm_attention_backward(gsl_matrix *dQ, gsl_matrix *dK, gsl_matrix *dV, double *scratch,
                            const gsl_matrix *dO, const gsl_matrix *Q, const gsl_matrix *K,
                            const gsl_matrix *Vm, const gsl_matrix *M, const gsl_matrix *P,
                            const double *stat, size_t NH);

/* The plain reference of tfm_attention_forward's output: O (Tq, D), head by head and
 * entry by entry as Eq. 1 reads, with libm's exp; Q, K, Vm, M and NH as there (M may be
 * NULL; a query whose every key is masked gets output 0). The tests hold the blocked,
 * vectorised forward to it; no other code calls it. */
void tfm_attention_reference(gsl_matrix *O, const gsl_matrix *Q, const gsl_matrix *K,
                             const gsl_matrix *Vm, const gsl_matrix *M, size_t NH);

/* Decoding: the query of one new position of each of B sequences, Q (B, D), attends to
 * Tk cached positions; writes O (B, D). Sequence b's keys are transposed, a (D, Tk) block
 * at Kt + b·kt_stride with row stride ldk (row f: feature f at positions 0 .. Tk − 1); its
 * values are the Tk rows of V (·, D) from row b·vstride on, head j in columns j·dk .. .
 * p is scratch of NH·Tk doubles (left holding the weights of sequence B − 1). The same
 * attention as tfm_attention_forward with one query, to rounding; no mask (the cache holds
 * no later position). */
void tfm_attend_cached(gsl_matrix *O, double *p, const gsl_matrix *Q, const double *Kt,
                       size_t ldk, size_t kt_stride, const gsl_matrix *V, size_t vstride,
                       size_t Tk, size_t NH);

/* ---- multi-head attention (§3.2.2) --------------------------------------------------
 * MultiHead(Xq, Xkv) = Concat(head_1, ..., head_NH)·W_oᵀ + b_o,
 * head_j = Attention(Xq·W_q,jᵀ, Xkv·W_k,jᵀ, Xkv·W_v,jᵀ). The projections are public so
 * that decoding can put keys and values in a cache and attend to it (tfm_attend_cached). */

/* Q (N, D) = Xq (N, D)·W_qᵀ + b_q. */
void tfm_mha_project_q(gsl_matrix *Q, const gsl_matrix *Xq, const tfm_mha *p);
/* KV (N, 2D) = Xkv (N, D)·[W_k; W_v]ᵀ + [b_k, b_v]. KV may have any row stride. */
void tfm_mha_project_kv(gsl_matrix *KV, const gsl_matrix *Xkv, const tfm_mha *p);
/* Y (N, D) += O (N, D)·W_oᵀ + b_o: adds, so the residual connection costs nothing. */
void tfm_mha_output(gsl_matrix *Y, const gsl_matrix *O, const tfm_mha *p);

/* Y (B·Tq, D) += MultiHead(Xq (B·Tq, D), Xkv (B·Tk, D)) with mask M (Tq, Tk) or NULL,
 * keeping in a what the backward needs. Self-attention passes the same matrix twice (and
 * then makes Q, K, V with one GEMM when a was carved for it). */
void tfm_mha_forward(gsl_matrix *Y, tfm_mha_act *a, const gsl_matrix *Xq,
                     const gsl_matrix *Xkv, const tfm_mha *p, const gsl_matrix *M, size_t B,
                     size_t NH);
/* Accumulates dXq, dXkv (which may be the same matrix) and dp from dY (B·Tq, D); writes
 * the scratch w. */
void tfm_mha_backward(gsl_matrix *dXq, gsl_matrix *dXkv, tfm_mha *dp, tfm_work *w,
                      const gsl_matrix *dY, const gsl_matrix *Xq, const gsl_matrix *Xkv,
                      const tfm_mha_act *a, const tfm_mha *p, size_t B, size_t NH);

/* ---- the cost of attention (MODEL FLOPS in common/core/model.h) ----------------------
 * What one head of tfm_attention_forward scores, and what tfm_attention_backward scales:
 * pairs, the (query, key) pairs whose scores are made (every one without a mask; under
 * the causal mask, those of the row blocks, which skip the masked corner: at T = 128,
 * 62.5% of T²), and reach, the key rows of dK the blocks write, summed over the blocks
 * (Nk without a mask). */
typedef struct tfm_scores {
    double pairs, reach; /* per head */
    int masked;          /* the mask is added to the scores */
} tfm_scores;

/* Every query against every key, no mask: Nq·Nk pairs, reach Nk. */
tfm_scores tfm_scores_full(double Nq, double Nk);
/* Self-attention over T positions under the causal mask, as the row blocks of
 * attention.c take it: T² pairs up to T = 32 (one block), fewer beyond. */
tfm_scores tfm_scores_causal(size_t T);

/* The analytic FLOPs of tfm_mha_forward and tfm_mha_backward for one sequence: Nq
 * queries against Nk keys and values, width D in NH heads, scores s:
 *   products  Q = Xq·W_qᵀ (2Nq·D²), [K|V] = Xkv·[W_k; W_v]ᵀ (4Nk·D²), the output O·W_oᵀ
 *             (2Nq·D²), the scores Q_j·K_jᵀ and the weighted values P_j·V_j of every
 *             head (2·pairs·D each); backward twice each        → 12D²·(Nq + Nk) + 12D·pairs
 *   element-wise, per head and pair: the scaling by 1/√dk (1), the mask (1 when masked),
 *             the softmax (maximum, subtraction, exp, sum, scaling by 1/sum: 5) and its
 *             backward (dot product 2, y·(d − dot) 2); per head and query: 1/sum
 *                                                   → NH·((10 + masked)·pairs + Nq)
 *   the biases b_q, [b_k, b_v], b_o and their gradients       → 4D·(Nq + Nk)
 *   the scaling of dQ and dK by 1/√dk                          → D·(Nq + reach)
 * Without kept weights (tfm_keep_maps: a bound on the batch's weights, so a matter of
 * the batch) the backward makes them again, one more Q_j·K_jᵀ and the softmax replayed:
 * not counted here. */
double tfm_mha_flops(double D, double NH, double Nq, double Nk, tfm_scores s);

/* ---- position-wise feed-forward (§3.3) ---------------------------------------------- */

/* H (N, F) = max(0, X·W_1ᵀ + b_1); Y (N, D) += H·W_2ᵀ + b_2. */
void tfm_ffn_forward(gsl_matrix *Y, gsl_matrix *H, const gsl_matrix *X, const tfm_ffn *p);
/* Accumulates dX (N, D) and dp from dY (N, D), given the forward's input X and its H;
 * writes the scratch w. */
void tfm_ffn_backward(gsl_matrix *dX, tfm_ffn *dp, tfm_work *w, const gsl_matrix *dY,
                      const gsl_matrix *X, const gsl_matrix *H, const tfm_ffn *p);

/* The analytic FLOPs of tfm_ffn_forward and tfm_ffn_backward on one row (position)
 * (MODEL FLOPS in common/core/model.h):
 *   products  X·W_1ᵀ and H·W_2ᵀ (2DF each), backward twice each    → 12DF
 *   element-wise  b_1 and the ReLU (2F), b_2 (D); backward db_2 (D), the ReLU's mask and
 *             db_1 (2F)                                              → 4F + 2D */
double tfm_ffn_flops(double D, double F);

/* ---- layers (§3.1) ------------------------------------------------------------------ */

/* Opens the residual sublayer s around its input x (N, D): in pre-LN order writes
 * s->n = LN(x). Returns the matrix into which f must add its output, already holding x
 * (the residual connection): s->y in pre-LN order, s->n in post-LN order. */
gsl_matrix *tfm_sublayer_open(tfm_sub_act *s, const gsl_matrix *x, const tfm_norm *ln,
                              int post_ln);
/* What f reads, given the sublayer's input x: s->n = LN(x) in pre-LN order, x in post-LN. */
const gsl_matrix *tfm_sublayer_input(const tfm_sub_act *s, const gsl_matrix *x, int post_ln);
/* Closes the sublayer after f: in post-LN order normalises the sum, s->y = LN(s->n). */
void tfm_sublayer_close(tfm_sub_act *s, const tfm_norm *ln, int post_ln);

/* Encoder layer on X (B·T, D): self-attention (every position attends to every position),
 * then feed-forward. Output in a->s2.y. */
void tfm_encoder_layer_forward(tfm_enc_act *a, const gsl_matrix *X, const tfm_enc_layer *p,
                               size_t B, size_t NH, int post_ln);
/* Accumulates dX (B·T, D) and dp from dY, the gradient of a->s2.y; writes the scratch w. */
void tfm_encoder_layer_backward(gsl_matrix *dX, tfm_enc_layer *dp, tfm_work *w,
                                const gsl_matrix *dY, const gsl_matrix *X,
                                const tfm_enc_act *a, const tfm_enc_layer *p, size_t B,
                                size_t NH, int post_ln);

/* Decoder layer on X (B·Tt, D) with the memory Mem (B·Ts, D): self-attention under mask
 * (Tt, Tt) (the causal mask, or NULL), cross-attention on the memory, feed-forward.
 * Output in a->s3.y. */
void tfm_decoder_layer_forward(tfm_dec_act *a, const gsl_matrix *X, const gsl_matrix *Mem,
                               const gsl_matrix *mask, const tfm_dec_layer *p, size_t B,
                               size_t NH, int post_ln);
/* Accumulates dX (B·Tt, D), dMem (B·Ts, D) and dp from dY, the gradient of a->s3.y;
 * writes the scratch w. */
void tfm_decoder_layer_backward(gsl_matrix *dX, gsl_matrix *dMem, tfm_dec_layer *dp,
                                tfm_work *w, const gsl_matrix *dY, const gsl_matrix *X,
                                const gsl_matrix *Mem, const tfm_dec_act *a,
                                const tfm_dec_layer *p, size_t B, size_t NH, int post_ln);

/* ---- the model `transformer` ------------------------------------------------------- */

/* The kinds of positions (--pos). */
typedef enum { TFM_POS_SINUSOIDAL, TFM_POS_LEARNED, TFM_POS_NONE } tfm_pos;

/* Every parameter tensor; the model holds one of these for the values (w) and one, of
 * the same type, for the gradients (g). */
typedef struct tfm_params {
    gsl_matrix *enc_emb;   /* (V, D) source token embeddings */
    gsl_matrix *dec_emb;   /* (V, D) target token embeddings */
    gsl_matrix *pos;       /* (Lmax, D) learned positions, shared by both stacks; or NULL */
    tfm_enc_layer *enc;    /* (L) encoder layers */
    tfm_norm enc_norm;     /* (1, D) γ and β: final norm of the encoder stack */
    tfm_dec_layer *dec;    /* (L) decoder layers */
    tfm_norm dec_norm;     /* (1, D) γ and β: final norm of the decoder stack */
    gsl_matrix *out_w;     /* (V, D) output projection to the vocabulary */
    gsl_matrix *out_b;     /* (1, V) its bias */
} tfm_params;

/* One greedy-decoding step for B sequences: the decoder at one new position. */
typedef struct tfm_step {
    gsl_matrix_view x;      /* (B, D) residual stream at the current position */
    tfm_sub_act s[3];       /* (B, ·) the three sublayers of one decoder layer */
    gsl_matrix_view q;      /* (B, D) the new position's query */
    gsl_matrix_view o;      /* (B, D) attention output */
    double *p;              /* (B·NH·max(Ts, Tt)) attention weights of this step */
    /* The caches the steps read, one block per layer and sequence, each contiguous: a
     * step streams them all from memory (megabytes: they outgrow the processor's cache),
     * and contiguous blocks stream about twice as fast as rows picked out of [K | V]. */
    double *kt_self;        /* (L, B, D, Tt) each layer's keys so far, transposed */
    double *v_self;         /* (L, B, Tt, D) each layer's values so far */
    double *kt_cross;       /* (L, B, D, Ts) the memory's keys of each layer, transposed */
    double *v_cross;        /* (L, B, Ts, D) the memory's values of each layer */
    gsl_matrix_view h;      /* (B, F) feed-forward hidden layer */
    gsl_matrix_view z;      /* (B, D) after the final norm */
    double *z_mean;         /* (B) its rows' means */
    double *z_rstd;         /* (B) its rows' 1/√(σ² + ε) */
    gsl_matrix_view logits; /* (B, V) */
} tfm_step;

/* The run-time state: every activation of one batch, views into one block of doubles
 * and one of ints (common/core/carve.h) that reserve() allocates and every batch carves again
 * at its own sizes, behind a front part carved at the reservation's sizes (mask, ids),
 * which therefore stays where it is. */
typedef struct tfm_state {
    model_sizes cap;              /* the reservation: the most sequences of a batch, and
                                   * the longest source and target */
    carve_block blk;              /* (blk.nd doubles, blk.ni ints) everything below */
    double *mask_block;           /* (cap.Tt, cap.Tt) causal mask: 0 at j ≤ i, −∞ above */
    int *ids;                     /* (max(cap.B, cap.Tt)) tokens fed back while decoding */
    size_t B, Ts, Tt;             /* the batch the views below were carved for; 0: none */
    int asked;                    /* ... and what it asked of the weights: 1 keep them
                                   * (a trace), 0 keep them if small, -1 never_keep */
    int has_forward;              /* 1 while the views hold a whole forward of that batch:
                                   * what backward differentiates */
    gsl_matrix_view xs;           /* (B·Ts, D) encoder input: emb_scale·E_src[x] + PE */
    tfm_enc_act *enc;             /* (L) encoder layers */
    gsl_matrix_view mem;          /* (B·Ts, D) memory: final encoder norm of the stack */
    double *mem_mean, *mem_rstd;  /* (B·Ts) each: that norm's statistics */
    gsl_matrix_view xt;           /* (B·Tt, D) decoder input: emb_scale·E_tgt[y] + PE */
    tfm_dec_act *dec;             /* (L) decoder layers */
    gsl_matrix_view z;            /* (B·Tt, D) final decoder norm */
    double *z_mean, *z_rstd;      /* (B·Tt) each: that norm's statistics */
    gsl_matrix_view logits;       /* (B·Tt, V) */
    gsl_matrix_view dlogits;      /* (B·Tt, V) written by the forward's cross-entropy */
    gsl_matrix_view mask;         /* (Tt, Tt) top-left corner of mask_block */
    double *dstream[2];           /* (B·max(Ts, Tt)·D) each: stream gradients, ping-pong */
    gsl_matrix_view dmem;         /* (B·Ts, D) gradient of the memory, summed over layers */
    tfm_work work;                /* (B·max(Ts, Tt) rows) backward scratch */
    tfm_step step;                /* (B rows) one decoding step and its caches */
    int no_mask;    /* tests only: 1 drops the causal mask, to show that its test can fail */
    int never_keep; /* tests only: 1 keeps no attention weights for the backward */
} tfm_state;

typedef struct tfm_model {
    struct model head; /* first, so a tfm_model * is a model *: ops, cfg, the arena */
    /* the configuration head.cfg, decoded once */
    size_t D;          /* model width (d_model) */
    size_t NH;         /* heads; dk = D/NH */
    size_t F;          /* feed-forward width (d_ff) */
    size_t L;          /* layers of each stack */
    size_t V;          /* vocabulary: the data symbols and BOS */
    size_t Lmax;       /* longest sequence (max_len): rows of a position table */
    int post_ln;       /* 1: post-LN order (the paper's), 0: pre-LN */
    tfm_pos pos;       /* which positions are added to the embeddings */
    double emb_scale;  /* embeddings are multiplied by this (1: not by √D; see docs) */
    double *pe;        /* (Lmax, D) sinusoidal table when pos is sinusoidal, else NULL */
    tfm_params w;      /* parameter values (views into head.params.data) */
    tfm_params g;      /* their gradients, same shapes (views into head.params.grad) */
    tfm_state s;       /* run-time state (reserve() allocates it) */
} tfm_model;

/* The registered model `transformer`. */
extern const model_ops tfm_ops;

/* ---- shared by the model's files (tfm_model.c, tfm_pass.c, tfm_decode.c) ------------- */

/* embed.c. PE (Lmax, D): PE(t, 2i) = sin(t/10000^(2i/D)),
 * PE(t, 2i+1) = cos(t/10000^(2i/D)) (§3.5). */
void tfm_sinusoid(double *pe, size_t Lmax, size_t D);

/* X (n, D), row r = s·E[ids[r]] + PE[t0 + r mod T] for the n = X->size1 tokens ids, each
 * in [0, V) (the caller checked them), with the embedding table E (V, D) and m's scale s
 * and positions; T is the length of a sequence (rows r of one position share its PE). */
void tfm_embed_forward(gsl_matrix *X, const int *ids, const gsl_matrix *E,
                       const tfm_model *m, size_t T, size_t t0);
/* Its backward: accumulates dE (V, D) += s·dX rows by token, and, unless dP is NULL
 * (positions not learned), dP (Lmax, D) += dX rows by position, from dX (n, D). */
void tfm_embed_backward(gsl_matrix *dE, gsl_matrix *dP, const gsl_matrix *dX,
                        const int *ids, double s, size_t T);

/* The analytic FLOPs of tfm_embed_forward and tfm_embed_backward on one token of D
 * features (MODEL FLOPS in common/core/model.h): s·E[id] + PE (2D; D with no positions),
 * dE += s·dx (2D), dP += dx (D, learned positions only). */
double tfm_embed_flops(double D, tfm_pos pos);

/* Carves the views of m's state at the sizes of a batch (B, Ts, Tt), keeping every
 * attention weight when they are small enough (tfm_keep_maps) or when maps asks for them
 * (a trace reads them). Returns 0, or -1, reporting nothing (the caller names its pass),
 * when the batch does not fit the reservation. Every call ends what backward could
 * differentiate (has_forward = 0): the views are about to be overwritten. */
int tfm_state_fit(tfm_model *m, size_t B, size_t Ts, size_t Tt, int maps);

/* Source tokens src (B, Ts), checked, → the memory m->s.mem (B·Ts, D), at the sizes the
 * state was fitted to. */
void tfm_encode(tfm_model *m, const int *src);
/* Decoder inputs dec_in (B, Tt), checked, and the memory → m->s.logits (B·Tt, V),
 * teacher forced (every position at once, under the causal mask). */
void tfm_decode_teacher(tfm_model *m, const int *dec_in);

/* The ops of `transformer`, with the contracts of common/core/model.h: forward and backward in
 * tfm_pass.c, decode and trace in tfm_decode.c, the rest in tfm_model.c. */
double tfm_forward(model *m, const batch *b, int *pred);
int tfm_backward(model *m, const batch *b);
int tfm_decode(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out);
int tfm_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
              void *ctx);

#endif
