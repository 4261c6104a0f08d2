/* tfm_model.c — the model `transformer` as the harness sees it: its configuration, size
 * table, allocation and initialisation, the run-time state and reserve(), and the ops
 * table (see tfm.h; the passes are in tfm_pass.c and tfm_decode.c, the embeddings and
 * positions in embed.c).
 *
 * Design. The parameters are named once, by visit_params, which walk_build runs to build
 * the arena and bind the views of m->w and m->g, and which walk_count runs on a skeleton
 * to count them (common/core/walk.h). The activations are laid out once, by state_layout,
 * which carve_reserve runs to size the block and every batch runs to take its views
 * (common/core/carve.h).
 *
 * Invariant. reserve() allocates one block for the largest batch; every forward and
 * decode carves it again at the sizes of its batch (cheap: views only), so nothing is
 * allocated during a step. The block's front (the causal mask, the decoding tokens) is
 * carved at the reservation's sizes, so it stays where reserve() wrote it. Decoding and
 * tracing reuse the same activations: they overwrite what a forward kept, so backward
 * must follow its own forward (has_forward says whether it does).
 */
#include "tfm.h"

#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t max2(size_t a, size_t b) { return a > b ? a : b; }

/* ---- the size table ------------------------------------------------------------------ */

/* Every tensor of the model, in arena order. The correspondence with the PyTorch twin
 * (tests/pytorch/twin.py, built on nn.Transformer): enc_emb, dec_emb ↔ enc_emb, dec_emb; enc.l ↔
 * tf.encoder.layers.l (ln1 = norm1, attn = self_attn, ln2 = norm2, ff = linear1/linear2);
 * dec.l ↔ tf.decoder.layers.l (self = self_attn, cross = multihead_attn, ln3 = norm3);
 * enc_norm, dec_norm ↔ tf.encoder.norm, tf.decoder.norm; out ↔ out. */
static void visit_params(walk *wk, void *ctx)
{
    tfm_model *m = ctx;
    /* tfm_n_params walks a skeleton without the layer arrays: its passes write through no
     * pointer, so one stand-in serves every layer there */
    tfm_enc_layer enc_none = {0};
    tfm_dec_layer dec_none = {0};
    char p[ARENA_NAME_MAX];
    /* two tables: the source and the target are different languages in general */
    walk_tensor(wk, &m->w.enc_emb, &m->g.enc_emb, "", "enc_emb", m->V, m->D);
    walk_tensor(wk, &m->w.dec_emb, &m->g.dec_emb, "", "dec_emb", m->V, m->D);
    if (m->pos == TFM_POS_LEARNED) /* one table for both stacks, like the sinusoids */
        walk_tensor(wk, &m->w.pos, &m->g.pos, "", "pos", m->Lmax, m->D);
    for (size_t l = 0; l < m->L; l++) {
        snprintf(p, sizeof p, "enc.%zu", l);
        tfm_enc_layer_walk(wk, m->w.enc ? &m->w.enc[l] : &enc_none,
                           m->g.enc ? &m->g.enc[l] : &enc_none, p, m->D, m->F);
    }
    tfm_norm_walk(wk, &m->w.enc_norm, &m->g.enc_norm, "enc_norm", m->D);
    for (size_t l = 0; l < m->L; l++) {
        snprintf(p, sizeof p, "dec.%zu", l);
        tfm_dec_layer_walk(wk, m->w.dec ? &m->w.dec[l] : &dec_none,
                           m->g.dec ? &m->g.dec[l] : &dec_none, p, m->D, m->F);
    }
    tfm_norm_walk(wk, &m->w.dec_norm, &m->g.dec_norm, "dec_norm", m->D);
    walk_tensor(wk, &m->w.out_w, &m->g.out_w, "out", "w", m->V, m->D);
    walk_tensor(wk, &m->w.out_b, &m->g.out_b, "out", "b", 1, m->V);
}

/* ---- run-time state -------------------------------------------------------------------- */

/* What state_layout carves: the front at the reservation's sizes, then every activation
 * of a batch (B, Ts, Tt), with every attention weight kept or not (tfm_keep_maps). */
typedef struct tfm_state_shape {
    tfm_model *m;
    size_t cap_B, cap_Tt; /* the reservation, which sizes the front */
    size_t B, Ts, Tt;     /* the batch */
    int keep;             /* 1: keep every attention weight for the backward */
} tfm_state_shape;

/* Carves every array of m->s at the shape ctx (a tfm_state_shape) gives; on a counting
 * carver it only counts, leaving empty views. */
static void state_layout(carver *c, void *ctx)
{
    const tfm_state_shape *sh = ctx;
    tfm_model *m = sh->m;
    tfm_state *s = &m->s;
    const size_t B = sh->B, Ts = sh->Ts, Tt = sh->Tt;
    const int keep = sh->keep;
    const size_t D = m->D, F = m->F, NH = m->NH, V = m->V, LD = carve_mul(c, m->L, D);
    const size_t keys = max2(Ts, Tt);
    const size_t Ns = carve_mul(c, B, Ts), Nt = carve_mul(c, B, Tt);
    const size_t rows = carve_mul(c, B, keys);

    /* the front, the same from one batch to the next: the causal mask and the tokens a
     * decoding feeds back */
    s->mask_block = carve_vector(c, carve_mul(c, sh->cap_Tt, sh->cap_Tt));
    s->ids = carve_ints(c, max2(sh->cap_B, sh->cap_Tt));

    /* the encoder: its input, every layer, the memory */
    s->xs = carve_matrix(c, Ns, D);
    for (size_t l = 0; l < m->L; l++)
        tfm_enc_act_carve(&s->enc[l], c, B, Ts, D, F, NH, keep);
    s->mem = carve_matrix(c, Ns, D);
    s->mem_mean = carve_vector(c, Ns);
    s->mem_rstd = carve_vector(c, Ns);

    /* the decoder: its input, every layer (whose [K | V] blocks are also the decoding
     * caches), the final norm and the logits */
    s->xt = carve_matrix(c, Nt, D);
    for (size_t l = 0; l < m->L; l++)
        tfm_dec_act_carve(&s->dec[l], c, B, Tt, Ts, D, F, NH, keep);
    s->z = carve_matrix(c, Nt, D);
    s->z_mean = carve_vector(c, Nt);
    s->z_rstd = carve_vector(c, Nt);
    s->logits = carve_matrix(c, Nt, V);
    s->dlogits = carve_matrix(c, Nt, V);

    /* backward scratch: the stream gradients serve both stacks, hence max(Ts, Tt) rows */
    s->dstream[0] = carve_vector(c, carve_mul(c, rows, D));
    s->dstream[1] = carve_vector(c, carve_mul(c, rows, D));
    s->dmem = carve_matrix(c, Ns, D);
    tfm_work_carve(&s->work, c, rows, keys, D, F);

    /* one decoding step: B rows each; the attention weights of one step are at most
     * max(Ts, Tt) wide (self-attention sees t + 1 ≤ Tt keys, cross-attention Ts) */
    tfm_step *st = &s->step;
    st->x = carve_matrix(c, B, D);
    for (size_t k = 0; k < 3; k++)
        tfm_sub_act_carve(&st->s[k], c, B, D);
    st->q = carve_matrix(c, B, D);
    st->o = carve_matrix(c, B, D);
    st->p = carve_vector(c, carve_mul(c, carve_mul(c, B, NH), keys));
    st->kt_self = carve_vector(c, carve_mul(c, carve_mul(c, LD, B), Tt)); /* (L, B, D, Tt) */
    st->v_self = carve_vector(c, carve_mul(c, carve_mul(c, LD, B), Tt));  /* (L, B, Tt, D) */
    st->kt_cross = carve_vector(c, carve_mul(c, carve_mul(c, LD, B), Ts)); /* (L, B, D, Ts) */
    st->v_cross = carve_vector(c, carve_mul(c, carve_mul(c, LD, B), Ts));  /* (L, B, Ts, D) */
    st->h = carve_matrix(c, B, F);
    st->z = carve_matrix(c, B, D);
    st->z_mean = carve_vector(c, B);
    st->z_rstd = carve_vector(c, B);
    st->logits = carve_matrix(c, B, V);
}

/* reserve()'s layout, counted only: room for the larger of two states, the largest batch
 * ctx gives (its weights kept if they are small enough) and one example of its lengths
 * with every weight kept (a trace). */
static void reserve_layout(carver *c, void *ctx)
{
    tfm_state_shape *big = ctx;
    tfm_state_shape one = *big;
    one.B = 1;
    one.keep = 1;
    carver nb = {0}, n1 = {0};
    state_layout(&nb, big);
    state_layout(&n1, &one);
    c->overflow |= nb.overflow | n1.overflow;
    carve_vector(c, max2(nb.used, n1.used));
    carve_ints(c, max2(nb.iused, n1.iused));
}

int tfm_state_fit(tfm_model *m, size_t B, size_t Ts, size_t Tt, int maps)
{
    tfm_state *s = &m->s;
    s->has_forward = 0;
    if (!s->blk.d || !model_fits(s->cap, B, Ts, Tt))
        return -1;
    /* the same batch shape and the same request: the same views */
    const int ask = maps ? 1 : s->never_keep ? -1 : 0;
    if (s->B == B && s->Ts == Ts && s->Tt == Tt && s->asked == ask)
        return 0;
    tfm_state_shape sh = {.m = m, .cap_B = s->cap.B, .cap_Tt = s->cap.Tt, .B = B, .Ts = Ts,
                      .Tt = Tt};
    sh.keep = ask == 1 || (ask == 0 && tfm_keep_maps(B, Ts, Tt, m->NH, m->L));
    if (sh.keep) {
        /* counting carves views of nothing: the carve below makes them again (and a
         * refusal leaves no shape recorded, so the next batch is carved whatever its
         * shape) */
        carver count = {0};
        state_layout(&count, &sh);
        if (count.overflow || count.used > s->blk.nd || count.iused > s->blk.ni) {
            if (maps) {
                s->B = s->Ts = s->Tt = 0;
                return -1;
            }
            sh.keep = 0;
        }
    }
    carver c = carve_start(&s->blk);
    state_layout(&c, &sh);
    /* the causal mask of Tt positions is the top-left corner of the largest one */
    gsl_matrix_view full = gsl_matrix_view_array(s->mask_block, s->cap.Tt, s->cap.Tt);
    s->mask = gsl_matrix_submatrix(&full.matrix, 0, 0, Tt, Tt);
    s->B = B;
    s->Ts = Ts;
    s->Tt = Tt;
    s->asked = ask;
    return 0;
}

/* Allocates one block for every activation of the largest batch, carved again at each
 * batch's sizes; after this, forward, backward and decode never allocate. */
static int tfm_reserve(model *mm, size_t B, size_t Ts, size_t Tt)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    /* positions exist up to Lmax only (the learned table has Lmax rows) */
    if (B == 0 || Ts == 0 || Tt == 0 || Ts > m->Lmax || Tt > m->Lmax)
        return -1;
    if (s->blk.d && B <= s->cap.B && Ts <= s->cap.Ts && Tt <= s->cap.Tt)
        return 0;
    /* grow to cover both the old and the new reservation */
    tfm_state_shape big = {.m = m, .B = max2(B, s->cap.B), .Ts = max2(Ts, s->cap.Ts),
                       .Tt = max2(Tt, s->cap.Tt)};
    big.cap_B = big.B;
    big.cap_Tt = big.Tt;
    big.keep = tfm_keep_maps(big.B, big.Ts, big.Tt, m->NH, m->L);
    /* counting leaves the views empty: whatever happens, every batch carves them again */
    s->B = s->Ts = s->Tt = 0;
    s->has_forward = 0;
    if (carve_reserve(&s->blk, reserve_layout, &big) != 0)
        return -1; /* the old block and its reservation stay usable */
    s->cap = (model_sizes){big.B, big.Ts, big.Tt};
    /* the front of the new block: the causal mask M, 0 where key j ≤ query i, −∞ (not a
     * large negative number) above the diagonal, so a later position gets weight exactly
     * 0 */
    carver c = carve_start(&s->blk);
    state_layout(&c, &big);
    for (size_t i = 0; i < big.Tt; i++)
        for (size_t j = 0; j < big.Tt; j++)
            s->mask_block[i * big.Tt + j] = j <= i ? 0.0 : -INFINITY;
    return 0;
}

/* ---- model_ops ----------------------------------------------------------------------- */

static void tfm_defaults(config *c)
{
    c->d_model = 64;
    c->heads = 4;
    c->d_ff = 256;
    c->layers = 2;
    strcpy(c->pos, "sinusoidal");
    c->post_ln = 0;
    /* embeddings are not multiplied by √D: the reference measured that the scaling drowns
     * the positions (copy task, 0.41 token accuracy against perfect without it) */
    c->emb_scale = 1.0;
    c->emb_init = 1.0; /* N(0, 1), as nn.Embedding */
    c->lr = 1e-3;
    c->warmup = 0;
}

static int parse_pos(const char *name, tfm_pos *out)
{
    static const char *const names[] = {"sinusoidal", "learned", "none"};
    for (int k = 0; k < 3; k++)
        if (strcmp(name, names[k]) == 0) {
            *out = (tfm_pos)k;
            return 0;
        }
    return -1;
}

/* The numeric settings this model reads. */
static const char *const tfm_fields[] = {"symbols", "max_len", "d_model", "heads",
                                         "d_ff",    "layers",  "emb_scale", "emb_init"};

/* Holds every setting this model reads to the range of its line in the configuration
 * table (config.c), so no range is written twice; then checks what ties two of them. */
static int tfm_check(const config *c, char *err, size_t n)
{
    if (config_check_fields(c, "transformer", tfm_fields,
                            sizeof tfm_fields / sizeof tfm_fields[0], err, n) != 0)
        return -1;
    /* the heads split the D features between them: dk = D/NH must be whole */
    if (c->d_model % c->heads != 0) {
        snprintf(err, n, "--heads: %zu does not divide --d-model %zu (accepted: a divisor of "
                 "--d-model)", c->heads, c->d_model);
        return -1;
    }
    tfm_pos pos;
    if (parse_pos(c->pos, &pos) != 0) {
        snprintf(err, n, "--pos: '%s' is not accepted (accepted: sinusoidal, learned, none)",
                 c->pos);
        return -1;
    }
    return 0;
}

/* Decodes the sizes and orders of c into m (the fields after m->head); -1 when c names
 * no kind of positions. */
static int read_config(tfm_model *m, const config *c)
{
    m->D = c->d_model;
    m->NH = c->heads;
    m->F = c->d_ff;
    m->L = c->layers;
    m->V = config_vocab(c);
    m->Lmax = c->max_len;
    m->post_ln = c->post_ln != 0;
    m->emb_scale = c->emb_scale;
    return parse_pos(c->pos, &m->pos);
}

/* Frees what alloc and reserve allocated; safe on a half-built model (the pointers
 * alloc never reached are NULL). */
static void tfm_free(model *mm)
{
    tfm_model *m = (tfm_model *)mm;
    if (!m)
        return;
    arena_free(&m->head.params);
    free(m->w.enc);
    free(m->g.enc);
    free(m->w.dec);
    free(m->g.dec);
    free(m->s.enc);
    free(m->s.dec);
    free(m->pe);
    carve_free(&m->s.blk);
    free(m);
}

/* The configuration decides every shape; alloc copies it, so later flag changes cannot
 * disagree with the arena. Activations wait for reserve(), which knows the batch. */
static model *tfm_alloc(const config *c)
{
    char err[160];
    if (tfm_check(c, err, sizeof err) != 0) /* the harness checks first; this is a guard */
        return NULL;
    tfm_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->head.ops = &tfm_ops;
    m->head.cfg = *c;
    read_config(m, c);
    /* per-layer view structs: pointers into the arena, filled by the walk below */
    m->w.enc = calloc(m->L, sizeof *m->w.enc);
    m->g.enc = calloc(m->L, sizeof *m->g.enc);
    m->w.dec = calloc(m->L, sizeof *m->w.dec);
    m->g.dec = calloc(m->L, sizeof *m->g.dec);
    m->s.enc = calloc(m->L, sizeof *m->s.enc);
    m->s.dec = calloc(m->L, sizeof *m->s.dec);
    if (!m->w.enc || !m->g.enc || !m->w.dec || !m->g.dec || !m->s.enc || !m->s.dec)
        goto fail;
    if (m->pos == TFM_POS_SINUSOIDAL) { /* a constant, not a parameter: outside the arena */
        if (m->Lmax > SIZE_MAX / sizeof(double) / m->D)
            goto fail;
        m->pe = malloc(m->Lmax * m->D * sizeof(double));
        if (!m->pe)
            goto fail;
        tfm_sinusoid(m->pe, m->Lmax, m->D);
    }
    if (walk_build(&m->head.params, visit_params, m) != 0)
        goto fail;
    return &m->head;
fail:
    tfm_free(&m->head);
    return NULL;
}

/* Glorot & Bengio (2010) uniform bound for a (rows, cols) matrix: √(6/(fan_in + fan_out)). */
static void xavier(gsl_matrix *w, const gsl_rng *r)
{
    model_uniform(w, sqrt(6.0 / (double)(w->size1 + w->size2)), r);
}

/* nn.Linear's default: weight and bias from U(±1/√fan_in). */
static void linear_init(gsl_matrix *w, gsl_matrix *b, const gsl_rng *r)
{
    const double bound = 1.0 / sqrt((double)w->size2);
    model_uniform(w, bound, r);
    model_uniform(b, bound, r); /* (1, out): its size2 values */
}

/* Layer norm starts as the identity on normalised rows: γ = 1, β = 0. */
static void norm_init(tfm_norm *p)
{
    gsl_matrix_set_all(p->g, 1.0);
    gsl_matrix_set_zero(p->b);
}

/* nn.MultiheadAttention: Xavier-uniform in_proj, taken as one (3D, D) matrix so its bound
 * is √(6/4D); out_proj Xavier-uniform too, as nn.Transformer re-initialises it; biases 0. */
static void mha_init(tfm_mha *p, const gsl_rng *r)
{
    xavier(p->w_in, r);
    gsl_matrix_set_zero(p->b_in);
    xavier(p->w_out, r);
    gsl_matrix_set_zero(p->b_out);
}

static void tfm_init(model *mm, gsl_rng *r)
{
    tfm_model *m = (tfm_model *)mm;
    const config *c = &m->head.cfg;
    /* in arena order, so a seed always gives the same weights; embeddings N(0, emb_init²)
     * as nn.Embedding (emb_init = 1), learned positions alike */
    op_normal(m->w.enc_emb->data, m->V * m->D, c->emb_init, r);
    op_normal(m->w.dec_emb->data, m->V * m->D, c->emb_init, r);
    if (m->w.pos)
        op_normal(m->w.pos->data, m->Lmax * m->D, c->emb_init, r);
    for (size_t l = 0; l < m->L; l++) {
        tfm_enc_layer *e = &m->w.enc[l];
        norm_init(&e->ln1);
        mha_init(&e->attn, r);
        norm_init(&e->ln2);
        linear_init(e->ff.w1, e->ff.b1, r);
        linear_init(e->ff.w2, e->ff.b2, r);
    }
    norm_init(&m->w.enc_norm);
    for (size_t l = 0; l < m->L; l++) {
        tfm_dec_layer *d = &m->w.dec[l];
        norm_init(&d->ln1);
        mha_init(&d->self, r);
        norm_init(&d->ln2);
        mha_init(&d->cross, r);
        norm_init(&d->ln3);
        linear_init(d->ff.w1, d->ff.b1, r);
        linear_init(d->ff.w2, d->ff.b2, r);
    }
    norm_init(&m->w.dec_norm);
    linear_init(m->w.out_w, m->w.out_b, r); /* nn.Linear(D, V) */
}

/* Per sequence, by the conventions of MODEL FLOPS (common/core/model.h), from the count
 * of each piece, written out beside it in tfm.h:
 *   per encoder layer: self-attention over the S source positions, every pair
 *             (tfm_mha_flops, tfm_scores_full), and per position two layer norms
 *             (tfm_norm_flops), the feed-forward (tfm_ffn_flops) and the residual's
 *             gradient added into the layer's input gradient (D; the forward's residual
 *             is the beta = 1 of the sublayer's last product, which counts nothing);
 *   per decoder layer: self-attention over the T target positions under the causal
 *             mask (tfm_scores_causal: the pairs its row blocks score), cross-attention
 *             of T queries over S memory rows (every pair), and per position three layer
 *             norms, the feed-forward and the residual's gradient (D);
 *   the two final norms (S + T rows); the embeddings with their positions, S + T tokens
 *             (tfm_embed_flops); the output layer and the loss per target position
 *             (model_output_flops).
 * In all, with norm = tfm_norm_flops(D) and ffn = tfm_ffn_flops(D, F):
 *   L·( mha(S, S, every pair) + S·(2·norm + ffn + D)
 *     + mha(T, T, causal) + mha(T, S, every pair) + T·(3·norm + ffn + D) )
 *   + (S + T)·(norm + tfm_embed_flops(D, pos)) + T·model_output_flops(D, V)
 * 0 for positions check() rejects. */
static double tfm_flops(const config *c, size_t Ts, size_t Tt)
{
    tfm_pos pos;
    if (parse_pos(c->pos, &pos) != 0)
        return 0.0;
    const double D = (double)c->d_model, F = (double)c->d_ff, NH = (double)c->heads;
    const double V = (double)config_vocab(c), L = (double)c->layers;
    const double S = (double)Ts, T = (double)Tt;
    const double norm = tfm_norm_flops(D), ffn = tfm_ffn_flops(D, F);
    const double enc = tfm_mha_flops(D, NH, S, S, tfm_scores_full(S, S)) +
                       S * (2.0 * norm + ffn + D);
    const double dec = tfm_mha_flops(D, NH, T, T, tfm_scores_causal(Tt)) +
                       tfm_mha_flops(D, NH, T, S, tfm_scores_full(T, S)) +
                       T * (3.0 * norm + ffn + D);
    return L * (enc + dec) + (S + T) * (norm + tfm_embed_flops(D, pos)) +
           T * model_output_flops(D, V);
}

/* The size of the arena c implies: the same walk as alloc's (visit_params), counted on a
 * skeleton that has the sizes and nothing else, so nothing of the configuration's size is
 * allocated. */
static size_t tfm_n_params(const config *c)
{
    tfm_model skeleton;
    memset(&skeleton, 0, sizeof skeleton);
    if (read_config(&skeleton, c) != 0)
        return 0;
    return walk_count(visit_params, &skeleton);
}

/* Small sizes, all different: D = 8 in NH = 2 heads (dk = 4), F = 12, two layers each
 * side (so a layer's output feeding the next is checked too). */
static void tfm_gradcheck_sizes(config *c)
{
    c->d_model = 8;
    c->heads = 2;
    c->d_ff = 12;
    c->layers = 2;
}

/* Both layer-norm orders, and the three kinds of positions. */
/* The positions experiment (compare --preset positions): each scheme of positions, so
 * that what fails past the trained lengths is seen scheme by scheme (learned rows past
 * the longest trained position are never trained; no positions leaves only the mask). */
static const char *const tfm_positions[] = {"pos=sinusoidal", "pos=learned", "pos=none", NULL};

/* The headline (compare --preset full): the rate of the learning-rate sweep with the
 * fewest steps to 0.99 (docs/figures/lrsweep/sweep.tsv): 3e-3, above its recipe's 1e-3,
 * which the command line's defaults keep (the labs' keys and the golden runs use it). */
static const char *const tfm_full[] = {"lr=0.003", NULL};

static const model_sweep tfm_sweeps[] = {
    {"full", tfm_full, NULL},
    {"positions", tfm_positions, NULL},
    {NULL, NULL, NULL},
};

static const char *const tfm_variants[] = {"", "post_ln=1", "pos=learned", "pos=none", NULL};

/* What tfm_trace sends: every layer and head of the three attentions (KIND.lL.hJ), each
 * kind a figure of plots/attention.gp. */
static const model_trace_kind tfm_traces[] = {
    {"enc_self.", "attention_enc_self", MODEL_TRACE_ATTENTION, 0,
     "Transformer encoder self-attention: every position sees every position.",
     "Transformer 编码器自注意力：每个位置都能看到所有位置。"},
    {"dec_self.", "attention_dec_self", MODEL_TRACE_ATTENTION, 1,
     "Masked decoder self-attention: the upper triangle is empty, no position sees its "
     "future.",
     "带掩码的解码器自注意力：上三角为空，没有哪个位置能看到它之后的位置。"},
    {"cross.", "attention_cross", MODEL_TRACE_ATTENTION, 0,
     "Encoder-decoder (cross) attention: row t is where output t looked in the source.",
     "编码器-解码器（交叉）注意力：第 t 行是写出输出 t 时在源序列中看向哪里。"},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const model_ops tfm_ops = {
    .name = "transformer",
    .about = "encoder-decoder Transformer: multi-head self- and cross-attention, causal mask "
             "(Vaswani et al. 2017)",
    .title = "Transformer",
    .attends = 1,
    .small = "d_model=32 heads=2 d_ff=64 layers=1",
    .defaults = tfm_defaults,
    .check = tfm_check,
    .alloc = tfm_alloc,
    .free = tfm_free,
    .init = tfm_init,
    .reserve = tfm_reserve,
    .forward = tfm_forward,
    .backward = tfm_backward,
    .decode = tfm_decode,
    .trace = tfm_trace,
    .n_params = tfm_n_params,
    .flops = tfm_flops,
    .gradcheck_sizes = tfm_gradcheck_sizes,
    .variants = tfm_variants,
    .sweeps = tfm_sweeps,
    .traces = tfm_traces,
};
