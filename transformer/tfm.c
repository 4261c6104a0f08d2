/* tfm.c — the model `transformer`: embeddings and positions, the encoder and decoder
 * stacks, the output projection, training passes, greedy decoding with a key/value cache,
 * attention traces (see tfm.h).
 *
 * Data flow of a teacher-forced forward (Vaswani et al. 2017, Figure 1):
 *   xs = s·E_src[x] + PE                  (B·Ts, D)   s = emb_scale, PE = positions
 *   h_l = EncoderLayer_l(h_{l−1})         (B·Ts, D)   l = 1..L, h_0 = xs
 *   mem = LN_enc(h_L)                     (B·Ts, D)   the memory the decoder reads
 *   xt = s·E_tgt[y_in] + PE               (B·Tt, D)
 *   u_l = DecoderLayer_l(u_{l−1}, mem)    (B·Tt, D)   causal self-attention, cross-attention
 *   z = LN_dec(u_L);  logits = z·W_outᵀ + b_out   (B·Tt, V)
 *   loss = mean cross-entropy over all B·Tt positions
 *
 * Invariant. reserve() allocates one block for the largest batch; every forward and
 * decode carves it again at the sizes of its batch (cheap: views only), so nothing is
 * allocated during a step. Decoding and tracing reuse the same activations: they
 * overwrite what a forward kept, so backward must follow its own forward.
 */
#include "tfm.h"

#include <assert.h>
#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t max2(size_t a, size_t b) { return a > b ? a : b; }

/* ---- positions (§3.5) ---------------------------------------------------------------- */

void tfm_sinusoid(double *pe, size_t Lmax, size_t D)
{
    /* column 2i and 2i+1 share the frequency 1/10000^(2i/D): wavelengths form a geometric
     * progression from 2π to 10000·2π, so PE(t + k) is a linear function of PE(t) */
    for (size_t t = 0; t < Lmax; t++)
        for (size_t d = 0; d < D; d++) {
            const double freq = exp(-log(10000.0) * (double)(d - d % 2) / (double)D);
            const double angle = (double)t * freq;
            pe[t * D + d] = d % 2 == 0 ? sin(angle) : cos(angle);
        }
}

/* The position table the model adds, or NULL for none. */
static const double *positions(const tfm_model *m)
{
    switch (m->pos) {
    case TFM_POS_SINUSOIDAL:
        return m->pe;
    case TFM_POS_LEARNED:
        return m->w.pos->data;
    default:
        return NULL;
    }
}

/* X (n, D), row r = s·E[ids[r]] + PE[t0 + r mod T] (§3.4, §3.5): embedding and position in
 * one pass. emb_scale s defaults to 1, not the paper's √D (see docs/transformer.md). */
static void embed_forward(gsl_matrix *X, const gsl_matrix *E, const int *ids, size_t T,
                          size_t t0, const tfm_model *m)
{
    const size_t n = X->size1, D = X->size2;
    const double *pe = positions(m), s = m->emb_scale;
    for (size_t r = 0; r < n; r++) {
        const double *e = gsl_matrix_const_ptr(E, (size_t)ids[r], 0);
        double *x = gsl_matrix_ptr(X, r, 0);
        if (pe) {
            const double *p = pe + (t0 + r % T) * D;
            for (size_t d = 0; d < D; d++)
                x[d] = s * e[d] + p[d];
        } else {
            for (size_t d = 0; d < D; d++)
                x[d] = s * e[d];
        }
    }
}

/* forward: x_r = s·E[ids[r]] + P[r mod T]
 *   dE[ids[r]] += s·dx_r;  dP[r mod T] += dx_r (learned positions only) */
static void embed_backward(gsl_matrix *dE, gsl_matrix *dP, const gsl_matrix *dX,
                           const int *ids, size_t T, double s)
{
    const size_t n = dX->size1, D = dX->size2;
    for (size_t r = 0; r < n; r++) {
        const double *dx = gsl_matrix_const_ptr(dX, r, 0);
        double *de = gsl_matrix_ptr(dE, (size_t)ids[r], 0);
        for (size_t d = 0; d < D; d++)
            de[d] += s * dx[d];
        if (dP) {
            double *dp = gsl_matrix_ptr(dP, r % T, 0);
            for (size_t d = 0; d < D; d++)
                dp[d] += dx[d];
        }
    }
}

/* ---- the size table ------------------------------------------------------------------ */

/* Every tensor of the model, in arena order. The correspondence with the reference
 * (shared/reference/models.py): enc_emb, dec_emb ↔ enc_emb, dec_emb; enc.l ↔
 * tf.encoder.layers.l (ln1 = norm1, attn = self_attn, ln2 = norm2, ff = linear1/linear2);
 * dec.l ↔ tf.decoder.layers.l (self = self_attn, cross = multihead_attn, ln3 = norm3);
 * enc_norm, dec_norm ↔ tf.encoder.norm, tf.decoder.norm; out ↔ out. */
static void visit_model(tfm_walk *wk, void *ctx)
{
    tfm_model *m = ctx;
    char p[ARENA_NAME_MAX];
    /* two tables: the source and the target are different languages in general */
    tfm_walk_tensor(wk, &m->w.enc_emb, &m->g.enc_emb, "", "enc_emb", m->V, m->D);
    tfm_walk_tensor(wk, &m->w.dec_emb, &m->g.dec_emb, "", "dec_emb", m->V, m->D);
    if (m->pos == TFM_POS_LEARNED) /* one table for both stacks, like the sinusoids */
        tfm_walk_tensor(wk, &m->w.pos, &m->g.pos, "", "pos", m->Lmax, m->D);
    for (size_t l = 0; l < m->L; l++) {
        snprintf(p, sizeof p, "enc.%zu", l);
        tfm_walk_enc_layer(wk, &m->w.enc[l], &m->g.enc[l], p, m->D, m->F);
    }
    tfm_walk_norm(wk, &m->w.enc_norm, &m->g.enc_norm, "enc_norm", m->D);
    for (size_t l = 0; l < m->L; l++) {
        snprintf(p, sizeof p, "dec.%zu", l);
        tfm_walk_dec_layer(wk, &m->w.dec[l], &m->g.dec[l], p, m->D, m->F);
    }
    tfm_walk_norm(wk, &m->w.dec_norm, &m->g.dec_norm, "dec_norm", m->D);
    tfm_walk_tensor(wk, &m->w.out_w, &m->g.out_w, "out", "w", m->V, m->D);
    tfm_walk_tensor(wk, &m->w.out_b, &m->g.out_b, "out", "b", 1, m->V);
}

/* ---- run-time state ---------------------------------------------------------------- */

/* Carves every activation of a batch (B, Ts, Tt) out of block, or only counts its size
 * when block is NULL; keep: with every attention weight (tfm_keep_maps). Returns the
 * number of doubles, or SIZE_MAX on overflow. */
static size_t state_carve(tfm_model *m, double *block, size_t B, size_t Ts, size_t Tt,
                          int keep)
{
    tfm_state *s = &m->s;
    tfm_carver c = {.base = block};
    const size_t D = m->D, F = m->F, NH = m->NH, V = m->V;
    const size_t Ns = B * Ts, Nt = B * Tt, rows = B * max2(Ts, Tt), keys = max2(Ts, Tt);

    /* the encoder: its input, every layer, the memory */
    s->xs = tfm_carve_matrix(&c, Ns, D);
    for (size_t l = 0; l < m->L; l++)
        tfm_enc_act_carve(&s->enc[l], &c, B, Ts, D, F, NH, keep);
    s->mem = tfm_carve_matrix(&c, Ns, D);
    s->mem_mean = tfm_carve_vector(&c, Ns);
    s->mem_rstd = tfm_carve_vector(&c, Ns);

    /* the decoder: its input, every layer (whose [K | V] blocks are also the decoding
     * caches), the final norm and the logits */
    s->xt = tfm_carve_matrix(&c, Nt, D);
    for (size_t l = 0; l < m->L; l++)
        tfm_dec_act_carve(&s->dec[l], &c, B, Tt, Ts, D, F, NH, keep);
    s->z = tfm_carve_matrix(&c, Nt, D);
    s->z_mean = tfm_carve_vector(&c, Nt);
    s->z_rstd = tfm_carve_vector(&c, Nt);
    s->logits = tfm_carve_matrix(&c, Nt, V);
    s->dlogits = tfm_carve_matrix(&c, Nt, V);

    /* backward scratch: the stream gradients serve both stacks, hence max(Ts, Tt) rows */
    s->dstream[0] = tfm_carve_vector(&c, rows * D);
    s->dstream[1] = tfm_carve_vector(&c, rows * D);
    s->dmem = tfm_carve_matrix(&c, Ns, D);
    tfm_work_carve(&s->work, &c, rows, keys, D, F);

    /* one decoding step: B rows each; the attention weights of one step are at most
     * max(Ts, Tt) wide (self-attention sees t + 1 ≤ Tt keys, cross-attention Ts) */
    tfm_step *st = &s->step;
    st->x = tfm_carve_matrix(&c, B, D);
    for (size_t k = 0; k < 3; k++)
        tfm_sub_act_carve(&st->s[k], &c, B, D);
    st->q = tfm_carve_matrix(&c, B, D);
    st->o = tfm_carve_matrix(&c, B, D);
    st->p = tfm_carve_vector(&c, B * NH * keys);
    st->kt_self = tfm_carve_matrix(&c, m->L * B * D, Tt).matrix.data;
    st->v_self = tfm_carve_matrix(&c, m->L * B * Tt, D).matrix.data;
    st->kt_cross = tfm_carve_matrix(&c, m->L * B * D, Ts).matrix.data;
    st->v_cross = tfm_carve_matrix(&c, m->L * B * Ts, D).matrix.data;
    st->h = tfm_carve_matrix(&c, B, F);
    st->z = tfm_carve_matrix(&c, B, D);
    st->z_mean = tfm_carve_vector(&c, B);
    st->z_rstd = tfm_carve_vector(&c, B);
    st->logits = tfm_carve_matrix(&c, B, V);
    return c.overflow ? SIZE_MAX : c.used;
}

/* Carves the state for a batch, keeping its attention weights when they are small enough
 * (tfm_keep_maps) or when maps asks for them (a trace reads them); -1 when the batch does
 * not fit the reservation. */
static int carve_for(tfm_model *m, size_t B, size_t Ts, size_t Tt, int maps)
{
    tfm_state *s = &m->s;
    if (!s->block || B == 0 || Ts == 0 || Tt == 0 || B > s->cap_B || Ts > s->cap_Ts ||
        Tt > s->cap_Tt)
        return -1;
    /* the same batch shape and the same request: the same views */
    const int ask = maps ? 1 : s->never_keep ? -1 : 0;
    if (s->B == B && s->Ts == Ts && s->Tt == Tt && s->asked == ask)
        return 0;
    int keep = ask == 1 || (ask == 0 && tfm_keep_maps(B, Ts, Tt, m->NH, m->L));
    /* counting carves views of nothing: the carve below makes them again (and a refusal
     * leaves no shape recorded, so the next batch is carved whatever its shape) */
    if (keep && state_carve(m, NULL, B, Ts, Tt, 1) > s->cap_n) {
        if (maps) {
            s->B = s->Ts = s->Tt = 0;
            return -1;
        }
        keep = 0;
    }
    state_carve(m, s->block, B, Ts, Tt, keep);
    /* the causal mask of Tt positions is the top-left corner of the largest one */
    gsl_matrix_view full = gsl_matrix_view_array(s->mask_block, s->cap_Tt, s->cap_Tt);
    s->mask = gsl_matrix_submatrix(&full.matrix, 0, 0, Tt, Tt);
    s->B = B;
    s->Ts = Ts;
    s->Tt = Tt;
    s->asked = ask;
    return 0;
}

/* ---- the two stacks ------------------------------------------------------------------ */

/* Source tokens src (B, Ts) → the memory s->mem (B·Ts, D). */
static void encode(tfm_model *m, const int *src)
{
    tfm_state *s = &m->s;
    const size_t B = s->B;
    embed_forward(&s->xs.matrix, m->w.enc_emb, src, s->Ts, 0, m);
    const gsl_matrix *h = &s->xs.matrix;
    for (size_t l = 0; l < m->L; l++) {
        tfm_encoder_layer_forward(&s->enc[l], h, &m->w.enc[l], B, m->NH, m->post_ln);
        h = &s->enc[l].s2.y.matrix;
    }
    /* the final norm (nn.Transformer's encoder norm): in pre-LN order the stream itself is
     * never normalised, so the memory would otherwise grow with depth */
    tfm_layernorm_forward(&s->mem.matrix, s->mem_mean, s->mem_rstd, h, &m->w.enc_norm);
}

/* Decoder inputs dec_in (B, Tt) and the memory → s->logits (B·Tt, V), teacher forced. */
static void decode_teacher(tfm_model *m, const int *dec_in)
{
    tfm_state *s = &m->s;
    const size_t B = s->B;
    /* −∞ above the diagonal: position i attends to 0..i only */
    const gsl_matrix *mask = s->no_mask ? NULL : &s->mask.matrix;
    embed_forward(&s->xt.matrix, m->w.dec_emb, dec_in, s->Tt, 0, m);
    const gsl_matrix *u = &s->xt.matrix;
    for (size_t l = 0; l < m->L; l++) {
        tfm_decoder_layer_forward(&s->dec[l], u, &s->mem.matrix, mask, &m->w.dec[l], B, m->NH,
                                  m->post_ln);
        u = &s->dec[l].s3.y.matrix;
    }
    tfm_layernorm_forward(&s->z.matrix, s->z_mean, s->z_rstd, u, &m->w.dec_norm);
    /* logits (B·Tt,V) = z (B·Tt,D) · W_outᵀ (D,V) + b_out */
    tfm_linear_forward(&s->logits.matrix, &s->z.matrix, m->w.out_w, m->w.out_b);
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

/* Frees what alloc and reserve allocated; safe on a half-built model (the pointers
 * alloc never reached are NULL). */
static void tfm_free(model *mm)
{
    tfm_model *m = (tfm_model *)mm;
    if (!m)
        return;
    arena_free(&m->base.params);
    free(m->w.enc);
    free(m->g.enc);
    free(m->w.dec);
    free(m->g.dec);
    free(m->s.enc);
    free(m->s.dec);
    free(m->pe);
    free(m->s.block);
    free(m->s.mask_block);
    free(m->s.ids);
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
    m->base.ops = &tfm_ops;
    m->base.cfg = *c;
    m->D = c->d_model;
    m->NH = c->heads;
    m->F = c->d_ff;
    m->L = c->layers;
    m->V = config_vocab(c);
    m->Lmax = c->max_len;
    m->post_ln = c->post_ln != 0;
    m->emb_scale = c->emb_scale;
    parse_pos(c->pos, &m->pos);
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
    if (tfm_walk_build(&m->base.params, visit_model, m) != 0)
        goto fail;
    return &m->base;
fail:
    tfm_free(&m->base);
    return NULL;
}

/* Glorot & Bengio (2010) uniform bound for a (rows, cols) matrix: √(6/(fan_in + fan_out)). */
static void xavier(gsl_matrix *w, const gsl_rng *r)
{
    op_uniform(w->data, w->size1 * w->size2, sqrt(6.0 / (double)(w->size1 + w->size2)), r);
}

/* nn.Linear's default: weight and bias from U(±1/√fan_in). */
static void linear_init(gsl_matrix *w, gsl_matrix *b, const gsl_rng *r)
{
    const double bound = 1.0 / sqrt((double)w->size2);
    op_uniform(w->data, w->size1 * w->size2, bound, r);
    op_uniform(b->data, b->size2, bound, r);
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
    const config *c = &m->base.cfg;
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

/* Allocates one block for every activation of the largest batch, carved again at each
 * batch's sizes; after this, forward, backward and decode never allocate. */
static int tfm_reserve(model *mm, size_t B, size_t Ts, size_t Tt)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    /* positions exist up to Lmax only (the learned table has Lmax rows) */
    if (B == 0 || Ts == 0 || Tt == 0 || Ts > m->Lmax || Tt > m->Lmax)
        return -1;
    if (s->block && B <= s->cap_B && Ts <= s->cap_Ts && Tt <= s->cap_Tt)
        return 0;
    /* grow to cover both the old and the new reservation */
    B = max2(B, s->cap_B);
    Ts = max2(Ts, s->cap_Ts);
    Tt = max2(Tt, s->cap_Tt);
    free(s->block);
    free(s->mask_block);
    free(s->ids);
    s->block = s->mask_block = NULL;
    s->ids = NULL;
    s->cap_B = s->cap_Ts = s->cap_Tt = s->cap_n = 0;
    s->B = s->Ts = s->Tt = 0;
    /* room for the largest batch, and for one example with its weights kept (a trace) */
    const size_t big = state_carve(m, NULL, B, Ts, Tt, tfm_keep_maps(B, Ts, Tt, m->NH, m->L));
    const size_t one = state_carve(m, NULL, 1, Ts, Tt, 1);
    const size_t n = max2(big, one);
    if (n == SIZE_MAX || n > SIZE_MAX / sizeof(double))
        return -1;
    s->block = calloc(n, sizeof(double)); /* zeroed pages cost nothing until touched */
    s->mask_block = malloc(Tt * Tt * sizeof(double));
    s->ids = malloc(max2(B, Tt) * sizeof(int));
    if (!s->block || !s->mask_block || !s->ids) {
        free(s->block);
        free(s->mask_block);
        free(s->ids);
        s->block = s->mask_block = NULL;
        s->ids = NULL;
        return -1;
    }
    /* the causal mask M: 0 where key j ≤ query i, −∞ (not a large negative number) above the
     * diagonal, so a later position gets weight exactly 0 */
    for (size_t i = 0; i < Tt; i++)
        for (size_t j = 0; j < Tt; j++)
            s->mask_block[i * Tt + j] = j <= i ? 0.0 : -INFINITY;
    s->cap_B = B;
    s->cap_Ts = Ts;
    s->cap_Tt = Tt;
    s->cap_n = n;
    return 0;
}

/* Teacher-forced forward of a batch: the loss, the predictions, and (kept in the state)
 * every activation the backward reads. */
static double tfm_forward(model *mm, const batch *b, int *pred)
{
    tfm_model *m = (tfm_model *)mm;
    if (carve_for(m, b->B, b->Ts, b->Tt, 0) != 0)
        return NAN; /* not reserved for this batch */
    encode(m, b->src);
    decode_teacher(m, b->dec_in);
    /* mean over all B·Tt positions; dlogits = (softmax − onehot)/(B·Tt), kept for backward */
    return op_cross_entropy(&m->s.logits.matrix, b->tgt, &m->s.dlogits.matrix, pred);
}

/* The forward's chain read backwards: output layer, decoder from the top, the decoder's
 * embeddings, then the encoder from the top, fed by the memory's gradient that every
 * cross-attention contributed to. Parameter gradients accumulate (+=). */
static int tfm_backward(model *mm, const batch *b)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    const size_t B = s->B, D = m->D, Nt = B * s->Tt, Ns = B * s->Ts;
    assert(b->B == B && b->Ts == s->Ts && b->Tt == s->Tt);
    /* two stream gradients: a layer reads one (∂L/∂output) and adds into the other */
    gsl_matrix_view dt[2] = {gsl_matrix_view_array(s->dstream[0], Nt, D),
                             gsl_matrix_view_array(s->dstream[1], Nt, D)};
    gsl_matrix_view ds[2] = {gsl_matrix_view_array(s->dstream[0], Ns, D),
                             gsl_matrix_view_array(s->dstream[1], Ns, D)};

    /* forward: logits = z · W_outᵀ + b_out
     *   dW_out (V,D) += dlogitsᵀ (V,Nt) · z (Nt,D);  db_out += Σ_rows dlogits
     *   dz (Nt,D) = dlogits (Nt,V) · W_out (V,D) */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &s->dlogits.matrix, &s->z.matrix, 1.0,
                   m->g.out_w);
    tfm_bias_backward(m->g.out_b, &s->dlogits.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &s->dlogits.matrix, m->w.out_w, 0.0,
                   &dt[0].matrix);

    /* forward: z = LN_dec(u_L) */
    const gsl_matrix *uL = &s->dec[m->L - 1].s3.y.matrix;
    gsl_matrix_set_zero(&dt[1].matrix);
    tfm_layernorm_backward(&dt[1].matrix, &m->g.dec_norm, &dt[0].matrix, uL, s->z_mean,
                           s->z_rstd, &m->w.dec_norm);

    /* forward: u_l = DecoderLayer_l(u_{l−1}, mem), from the top; every layer adds its
     * cross-attention share into dmem */
    int cur = 1;
    gsl_matrix_set_zero(&s->dmem.matrix);
    for (size_t l = m->L; l-- > 0;) {
        const gsl_matrix *u_in = l ? &s->dec[l - 1].s3.y.matrix : &s->xt.matrix;
        gsl_matrix_set_zero(&dt[1 - cur].matrix);
        tfm_decoder_layer_backward(&dt[1 - cur].matrix, &s->dmem.matrix, &m->g.dec[l],
                                   &dt[cur].matrix, u_in, &s->mem.matrix, &s->dec[l],
                                   &m->w.dec[l], B, m->NH, m->post_ln, &s->work);
        cur = 1 - cur;
    }
    /* forward: xt = s·E_tgt[y_in] + PE */
    embed_backward(m->g.dec_emb, m->g.pos, &dt[cur].matrix, b->dec_in, s->Tt, m->emb_scale);

    /* forward: mem = LN_enc(h_L) */
    const gsl_matrix *hL = &s->enc[m->L - 1].s2.y.matrix;
    cur = 0;
    gsl_matrix_set_zero(&ds[cur].matrix);
    tfm_layernorm_backward(&ds[cur].matrix, &m->g.enc_norm, &s->dmem.matrix, hL, s->mem_mean,
                           s->mem_rstd, &m->w.enc_norm);
    /* forward: h_l = EncoderLayer_l(h_{l−1}) */
    for (size_t l = m->L; l-- > 0;) {
        const gsl_matrix *h_in = l ? &s->enc[l - 1].s2.y.matrix : &s->xs.matrix;
        gsl_matrix_set_zero(&ds[1 - cur].matrix);
        tfm_encoder_layer_backward(&ds[1 - cur].matrix, &m->g.enc[l], &ds[cur].matrix, h_in,
                                   &s->enc[l], &m->w.enc[l], B, m->NH, m->post_ln, &s->work);
        cur = 1 - cur;
    }
    /* forward: xs = s·E_src[x] + PE */
    embed_backward(m->g.enc_emb, m->g.pos, &ds[cur].matrix, b->src, s->Ts, m->emb_scale);
    return 0;
}


/* One decoder layer l at position t for all B sequences of the step (s->step.x in, out).
 * The new position's key and value join the layer's cache (column t of the transposed
 * keys, row t of the values: st->kt_self, st->v_self), and its query attends to the t + 1
 * cached positions: the cache holds nothing later, so no mask is needed, and the step
 * costs O(t), not a recomputation of the prefix. */
static void decoder_step(tfm_model *m, size_t l, size_t t)
{
    tfm_state *s = &m->s;
    tfm_step *st = &s->step;
    const tfm_dec_layer *p = &m->w.dec[l];
    tfm_dec_act *a = &s->dec[l];
    const size_t B = s->B, D = m->D, NH = m->NH, Ts = s->Ts, Tt = s->Tt;
    const int post = m->post_ln;
    /* x, q, o: (B, D), one row per sequence; the sublayers run in either order exactly
     * as in training, on B rows instead of B·Tt */
    gsl_matrix *x = &st->x.matrix, *q = &st->q.matrix, *o = &st->o.matrix;

    /* masked self-attention over the cache */
    gsl_matrix *acc = tfm_sublayer_open(&st->s[0], x, &p->ln1, post);
    const gsl_matrix *in = tfm_sublayer_input(&st->s[0], x, post);
    tfm_mha_project_q(q, in, &p->self);
    /* [K | V] of position t, written straight into the cache: rows b·Tt + t, b = 0..B−1 */
    const size_t ld = a->self.kv.matrix.tda;
    gsl_matrix_view kv_t = gsl_matrix_view_array_with_tda(a->self.kv.matrix.data + t * ld, B,
                                                          2 * D, Tt * ld);
    tfm_mha_project_kv(&kv_t.matrix, in, &p->self);
    /* and from there into the caches the attention reads: the key, transposed, into
     * column t of sequence b's (D, Tt) block; the value into row t of its (Tt, D) block */
    double *kt = st->kt_self + l * B * D * Tt, *vc = st->v_self + l * B * Tt * D;
    for (size_t b = 0; b < B; b++) {
        const double *kv_bt = gsl_matrix_const_ptr(&kv_t.matrix, b, 0);
        for (size_t f = 0; f < D; f++)
            kt[(b * D + f) * Tt + t] = kv_bt[f];
        memcpy(vc + (b * Tt + t) * D, kv_bt + D, D * sizeof(double));
    }
    /* sequence b attends to its positions 0..t */
    gsl_matrix_const_view V = gsl_matrix_const_view_array(vc, B * Tt, D);
    tfm_attend_cached(o, st->p, q, kt, Tt, D * Tt, &V.matrix, Tt, t + 1, NH);
    tfm_mha_output(acc, o, &p->self);
    tfm_sublayer_close(&st->s[0], &p->ln1, post);

    /* cross-attention on the memory's keys and values, computed once per decode */
    const gsl_matrix *x1 = &st->s[0].y.matrix;
    acc = tfm_sublayer_open(&st->s[1], x1, &p->ln2, post);
    tfm_mha_project_q(q, tfm_sublayer_input(&st->s[1], x1, post), &p->cross);
    gsl_matrix_const_view Vx = gsl_matrix_const_view_array(st->v_cross + l * B * Ts * D,
                                                           B * Ts, D);
    tfm_attend_cached(o, st->p, q, st->kt_cross + l * B * D * Ts, Ts, D * Ts, &Vx.matrix, Ts,
                      Ts, NH);
    tfm_mha_output(acc, o, &p->cross);
    tfm_sublayer_close(&st->s[1], &p->ln2, post);

    /* feed-forward */
    const gsl_matrix *x2 = &st->s[1].y.matrix;
    acc = tfm_sublayer_open(&st->s[2], x2, &p->ln3, post);
    tfm_ffn_forward(acc, &st->h.matrix, tfm_sublayer_input(&st->s[2], x2, post), &p->ff);
    tfm_sublayer_close(&st->s[2], &p->ln3, post);
    gsl_matrix_memcpy(x, &st->s[2].y.matrix); /* the stream goes on to the next layer */
}

/* Greedy decoding with the key/value cache: the encoder once, the memory's keys and
 * values once per layer, then Tt steps of B rows each. */
static int tfm_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    tfm_step *st = &s->step;
    const int bos = config_bos(&m->base.cfg);
    if (carve_for(m, B, Ts, Tt, 0) != 0) { /* not reserved: BOS is never a right answer */
        for (size_t i = 0; i < B * Tt; i++)
            out[i] = bos;
        return -1;
    }
    /* the encoder runs once; so do the memory's keys and values for every decoder layer */
    encode(m, src);
    const size_t D = m->D;
    for (size_t l = 0; l < m->L; l++) {
        const gsl_matrix *kv = &s->dec[l].cross.kv.matrix; /* (B·Ts, 2D) [K | V] */
        tfm_mha_project_kv(&s->dec[l].cross.kv.matrix, &s->mem.matrix, &m->w.dec[l].cross);
        /* copied into the blocks the steps read: sequence b's keys transposed, Kᵀ (D, Ts),
         * and its values (Ts, D) */
        double *kt = st->kt_cross + l * B * D * Ts, *vc = st->v_cross + l * B * Ts * D;
        for (size_t b = 0; b < B; b++)
            for (size_t k = 0; k < Ts; k++) {
                const double *kv_bk = gsl_matrix_const_ptr(kv, b * Ts + k, 0);
                for (size_t f = 0; f < D; f++)
                    kt[(b * D + f) * Ts + k] = kv_bk[f];
                memcpy(vc + (b * Ts + k) * D, kv_bk + D, D * sizeof(double));
            }
    }
    /* each step costs O(t) attention on top of the position-wise work, so Tt steps cost
     * O(Tt²) in all; recomputing the prefix at every step would cost O(Tt³) */
    for (size_t t = 0; t < Tt; t++) {
        /* feed back each sequence's previous prediction (BOS first) */
        for (size_t b = 0; b < B; b++)
            s->ids[b] = t ? out[b * Tt + t - 1] : bos;
        embed_forward(&st->x.matrix, m->w.dec_emb, s->ids, 1, t, m);
        for (size_t l = 0; l < m->L; l++)
            decoder_step(m, l, t);
        tfm_layernorm_forward(&st->z.matrix, st->z_mean, st->z_rstd, &st->x.matrix,
                              &m->w.dec_norm);
        /* logits (B,V) = z (B,D) · W_outᵀ (D,V) + b_out */
        tfm_linear_forward(&st->logits.matrix, &st->z.matrix, m->w.out_w, m->w.out_b);
        for (size_t b = 0; b < B; b++)
            out[b * Tt + t] =
                op_argmax(gsl_matrix_const_ptr(&st->logits.matrix, b, 0), m->V);
    }
    return 0;
}

/* Sends head j of the attention weights P (NH·Tq, Tk) of one sequence to the sink. */
static int send_head(trace_sink sink, void *ctx, const char *kind, size_t l, size_t j,
                     const gsl_matrix *P, size_t Tq, const char *rows, const char *cols)
{
    char name[64]; /* e.g. "cross.l1.h3" */
    snprintf(name, sizeof name, "%s.l%zu.h%zu", kind, l, j);
    gsl_matrix_const_view Pj = gsl_matrix_const_submatrix(P, j * Tq, 0, Tq, P->size2);
    return sink(ctx, name, &Pj.matrix, rows, cols);
}

/* Decodes one example and sends every attention map, head by head: encoder
 * self-attention (src × src), masked decoder self-attention (tgt × tgt, its upper triangle
 * empty) and cross-attention (tgt × src), named kind.l<layer>.h<head>. */
static int tfm_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out,
                     trace_sink sink, void *ctx)
{
    tfm_model *m = (tfm_model *)mm;
    tfm_state *s = &m->s;
    if (carve_for(m, 1, Ts, Tt, 1) != 0)
        return -1;
    tfm_decode(mm, src, 1, Ts, Tt, out);
    /* The maps of a greedy decode are those of a teacher-forced pass on its own outputs
     * (the cache computes the same rows), and that pass keeps them all at once. */
    s->ids[0] = config_bos(&m->base.cfg);
    for (size_t t = 1; t < Tt; t++)
        s->ids[t] = out[t - 1];
    encode(m, src);
    decode_teacher(m, s->ids);
    for (size_t l = 0; l < m->L; l++)
        for (size_t j = 0; j < m->NH; j++)
            if (send_head(sink, ctx, "enc_self", l, j, &s->enc[l].att.p.matrix, Ts, "src",
                          "src") != 0)
                return -1;
    for (size_t l = 0; l < m->L; l++)
        for (size_t j = 0; j < m->NH; j++)
            /* a decoder query at step t reads the token before it: the keys are the
             * decoder's inputs (BOS, then the tokens emitted so far) */
            if (send_head(sink, ctx, "dec_self", l, j, &s->dec[l].self.p.matrix, Tt, "tgt",
                          "tgt_in") != 0)
                return -1;
    for (size_t l = 0; l < m->L; l++)
        for (size_t j = 0; j < m->NH; j++)
            if (send_head(sink, ctx, "cross", l, j, &s->dec[l].cross.p.matrix, Tt, "tgt",
                          "src") != 0)
                return -1;
    return 0;
}

static double tfm_flops(const config *c, size_t Ts, size_t Tt)
{
    const double D = (double)c->d_model, F = (double)c->d_ff, V = (double)config_vocab(c);
    const double S = (double)Ts, T = (double)Tt, L = (double)c->layers;
    /* 2 flops per multiply-add. Per encoder layer: Q, K, V and output projections
     * (2·S·D·4D), scores and weighted values (2·2·S·S·D over all heads), two FFN GEMMs. */
    const double enc = 2 * S * D * 4 * D + 4 * S * S * D + 4 * S * D * F;
    /* Per decoder layer: self-attention as above on T positions (the mask is applied after
     * the full T·T scores are computed); cross-attention with Q and output on T rows, K and
     * V on the S memory rows, T·S scores; the FFN. */
    const double dec = (2 * T * D * 4 * D + 4 * T * T * D) +
                       (2 * T * D * 2 * D + 2 * S * D * 2 * D + 4 * T * S * D) + 4 * T * D * F;
    const double out = 2 * T * D * V;
    /* backward: every product C = A·B needs dA = dC·Bᵀ and dB = Aᵀ·dC, twice the forward */
    return 3.0 * (L * (enc + dec) + out);
}

/* The size of the arena c implies: the same walk as alloc's, on a model head whose
 * per-layer view structs exist but whose arena does not (counting and describing passes
 * only, nothing of the configuration's size is allocated). */
static size_t tfm_n_params(const config *c)
{
    tfm_model m;
    memset(&m, 0, sizeof m);
    m.D = c->d_model;
    m.F = c->d_ff;
    m.L = c->layers;
    m.V = config_vocab(c);
    m.Lmax = c->max_len;
    if (parse_pos(c->pos, &m.pos) != 0)
        return 0;
    m.w.enc = calloc(m.L, sizeof *m.w.enc);
    m.g.enc = calloc(m.L, sizeof *m.g.enc);
    m.w.dec = calloc(m.L, sizeof *m.w.dec);
    m.g.dec = calloc(m.L, sizeof *m.g.dec);
    size_t total = 0;
    if (m.w.enc && m.g.enc && m.w.dec && m.g.dec) {
        tfm_walk count = {0};
        visit_model(&count, &m);
        arena_spec *spec = calloc(count.n ? count.n : 1, sizeof *spec);
        if (spec) {
            tfm_walk describe = {.spec = spec};
            visit_model(&describe, &m);
            for (size_t k = 0; k < describe.n; k++)
                total += spec[k].rows * spec[k].cols;
            free(spec);
        }
    }
    free(m.w.enc);
    free(m.g.enc);
    free(m.w.dec);
    free(m.g.dec);
    return total;
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
static const char *const tfm_variants[] = {"", "post_ln=1", "pos=learned", "pos=none", NULL};

const model_ops tfm_ops = {
    .name = "transformer",
    .about = "encoder-decoder Transformer: multi-head self- and cross-attention, causal mask "
             "(Vaswani et al. 2017)",
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
};
