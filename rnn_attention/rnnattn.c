/* rnnattn.c — the model `rnn_attention`: embedding → GRU encoder (every state kept) →
 * GRU decoder that reads, at each step, an attention-weighted sum of the encoder states →
 * linear layer over [s_t; c_t] (Bahdanau, Cho & Bengio 2015; the PyTorch twin is
 * GRUAttnSeq2Seq in shared/reference/models.py). With cell lstm, both GRUs are LSTMs
 * from lstm/, so the model differs from `lstm` by attention alone.
 *
 * Three structs, three concerns: the configuration (struct model's cfg), the weights
 * (rnnattn_params: views into the arena, once for values and once for gradients) and the
 * run-time state (rnnattn_state: every activation of a step, reserved once).
 *
 * State layout. All activations are time-major (step, batch, ·), so one step of the batch
 * is a block of B contiguous rows:
 *     Xe (Ts·B, E)     embedded source           Xd (Tt·B, E+H)    decoder inputs, row
 *     Ae (Ts·B, GH)    encoder gates                                 [emb(y_{t−1}) | c_t]
 *     Pe (Ts·B, GH)    encoder h·Whᵀ + bh (GRU)  Ad, Pd (Tt·B, GH) decoder, likewise
 *     EK (Ts·B, A)     keys k_j, as e^{2k}       EQ (Tt·B, A)      queries q_t, as e^{2q}
 *     Alpha (Tt·B, Ts) weights α_t               logits (Tt·B, V)
 *     Hs, Cs ((Ts+1+Tt)·B, H)  blocks 0..Ts     encoder states h_0 = 0, h_1 .. h_Ts
 *                              blocks Ts..Ts+Tt decoder states: s_0 IS block Ts
 * Blocks 1..Ts of Hs are the keys' and values' source, Henc. The encoder's last state and
 * the decoder's first are one block of memory, as in lstm/: no copy in forward, and in
 * backward the gradient of s_0 lands where the encoder reads that of h_Ts. Each gradient
 * array (d…) has the shape of its activation.
 * The context c_t lives in the last H columns of Xd, so one GEMM over all steps forms the
 * decoder's input-weight gradient dWx (GH, E+H) += dAdᵀ·Xd, and the output layer reads
 * the same columns as a strided view.
 *
 * Invariant: reserve() sizes every array for the largest (B, Ts, Tt) asked for; a call
 * with smaller sizes uses the front of each array, so no step ever allocates.
 */
#include "rnnattn.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tensor.h"
#include "../lstm/lstm.h"

/* ---- the three structs ------------------------------------------------------------- */

/* Views of every parameter (or of every gradient: same shapes). enc and dec hold a cell's
 * views whichever the cell: for LSTM, Wx is (4H, ·), Wh (4H, H), bx its one bias b
 * (PyTorch's b_ih + b_hh) and bh is NULL; enc_lstm and dec_lstm then hold the same views
 * in lstm/'s struct, for its functions. */
typedef struct rnnattn_params {
    gsl_matrix *enc_embed;      /* (V, E) source token embeddings */
    gru_weights enc;            /* Wx (GH, E), Wh (GH, H), bx, bh (1, GH) */
    gsl_matrix *dec_embed;      /* (V, E) decoder input embeddings */
    gru_weights dec;            /* Wx (GH, E+H), Wh (GH, H), bx, bh (1, GH) */
    addattn_weights attn;       /* Wq (A, H), Wk (A, H), bk (1, A), v (1, A) */
    gsl_matrix *out_W;          /* (V, 2H) reads [s_t; c_t] */
    gsl_matrix *out_b;          /* (1, V) */
    lstm_weights enc_lstm, dec_lstm;
    gsl_matrix_view dec_Wx_emb; /* (GH, E) columns of dec.Wx that read emb(y_{t−1}) */
    gsl_matrix_view dec_Wx_ctx; /* (GH, H) columns of dec.Wx that read c_t */
    gsl_matrix_view out_W_s;    /* (V, H)  columns of out.W that read s_t */
    gsl_matrix_view out_W_c;    /* (V, H)  columns of out.W that read c_t */
} rnnattn_params;

/* Every activation of a step (layout above); cap_* are what reserve() made room for. */
typedef struct rnnattn_state {
    size_t cap_B, cap_Ts, cap_Tt;
    size_t B, Ts, Tt; /* sizes of the last forward, what backward differentiates; B = 0
                         when there is none (decode reuses the same arrays) */
    double *mem;      /* one block holding every array below */
    int *imem;        /* one block holding the token arrays */
    double *Xe, *Ae, *Pe, *Hs, *Cs, *EK, *Xd, *Ad, *Pd, *EQ, *Alpha, *logits;
    double *dXe, *dAe, *dPe, *dHs, *dCs, *dK, *dXd, *dAd, *dPd, *dQ, *dlogits;
    addattn_work ws; /* e (Ts), da (Ts) */
    int *src, *din, *tgt, *pred; /* time-major tokens: (Ts·B), (Tt·B) ×3 */
} rnnattn_state;

typedef struct rnnattn {
    model head;       /* ops, cfg, params: first, so a model * is a rnnattn * */
    int lstm;         /* 0: GRU cells (G = 3 gates), 1: LSTM cells (G = 4) */
    size_t G;
    rnnattn_params w; /* parameter values */
    rnnattn_params g; /* their gradients */
    rnnattn_state s;
} rnnattn;

/* ---- configuration and the size table ---------------------------------------------- */

static int cell_is_lstm(const config *c) { return strcmp(c->cell, "lstm") == 0; }

/* Where a tensor's view goes in rnnattn_params (a byte offset of a gsl_matrix * field). */
#define SLOT(field) offsetof(rnnattn_params, field)

/* The one place where the parameter shapes are written: fills spec and, for each tensor,
 * the slot its views go to; returns the number of tensors (16 for GRU, 14 for LSTM). */
static size_t param_table(arena_spec spec[16], size_t slot[16], const config *c)
{
    const int lstm = cell_is_lstm(c);
    const size_t V = config_vocab(c), E = c->embed, H = c->hidden, A = c->attn;
    const size_t GH = (lstm ? 4 : 3) * H;
    enum { BOTH, GRU_ONLY, LSTM_ONLY };
    const struct {
        const char *name;
        size_t rows, cols, slot;
        int cell;
    } t[] = {
        {"enc.embed", V, E, SLOT(enc_embed), BOTH},
        {"enc.Wx", GH, E, SLOT(enc.Wx), BOTH},
        {"enc.Wh", GH, H, SLOT(enc.Wh), BOTH},
        {"enc.bx", 1, GH, SLOT(enc.bx), GRU_ONLY},
        {"enc.bh", 1, GH, SLOT(enc.bh), GRU_ONLY},
        {"enc.b", 1, GH, SLOT(enc.bx), LSTM_ONLY},
        {"dec.embed", V, E, SLOT(dec_embed), BOTH},
        {"dec.Wx", GH, E + H, SLOT(dec.Wx), BOTH},
        {"dec.Wh", GH, H, SLOT(dec.Wh), BOTH},
        {"dec.bx", 1, GH, SLOT(dec.bx), GRU_ONLY},
        {"dec.bh", 1, GH, SLOT(dec.bh), GRU_ONLY},
        {"dec.b", 1, GH, SLOT(dec.bx), LSTM_ONLY},
        {"attn.Wq", A, H, SLOT(attn.Wq), BOTH},
        {"attn.Wk", A, H, SLOT(attn.Wk), BOTH},
        {"attn.bk", 1, A, SLOT(attn.bk), BOTH},
        {"attn.v", 1, A, SLOT(attn.v), BOTH},
        {"out.W", V, 2 * H, SLOT(out_W), BOTH},
        {"out.b", 1, V, SLOT(out_b), BOTH},
    };
    size_t n = 0;
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        if ((t[k].cell == GRU_ONLY && lstm) || (t[k].cell == LSTM_ONLY && !lstm))
            continue;
        snprintf(spec[n].name, sizeof spec[n].name, "%s", t[k].name);
        spec[n].rows = t[k].rows;
        spec[n].cols = t[k].cols;
        slot[n] = t[k].slot;
        n++;
    }
    return n;
}

/* Hands out the views of arena tensor k to their slot, in the values and the gradients. */
static void set_slot(rnnattn *m, size_t k, size_t slot)
{
    *(gsl_matrix **)((char *)&m->w + slot) = arena_w(&m->head.params, k);
    *(gsl_matrix **)((char *)&m->g + slot) = arena_g(&m->head.params, k);
}

/* The views derived from the slots: the column blocks and lstm/'s structs. */
static void derive_views(rnnattn_params *p, size_t E, size_t H)
{
    const size_t GH = p->dec.Wx->size1;
    p->dec_Wx_emb = gsl_matrix_submatrix(p->dec.Wx, 0, 0, GH, E);
    p->dec_Wx_ctx = gsl_matrix_submatrix(p->dec.Wx, 0, E, GH, H);
    p->out_W_s = gsl_matrix_submatrix(p->out_W, 0, 0, p->out_W->size1, H);
    p->out_W_c = gsl_matrix_submatrix(p->out_W, 0, H, p->out_W->size1, H);
    p->enc_lstm = (lstm_weights){p->enc.Wx, p->enc.Wh, p->enc.bx};
    p->dec_lstm = (lstm_weights){p->dec.Wx, p->dec.Wh, p->dec.bx};
}

/* The configuration fields this model reads; check() holds them to the ranges of the
 * configuration table, so no range is written twice. */
static const char *const rnnattn_fields[] = {"symbols", "embed", "hidden", "attn",
                                             "forget_bias", "emb_init"};

static void rnnattn_defaults(config *c)
{
    /* canonical sizes (DESIGN: embed 32 / GRU 128 / attention 128, ~210k parameters) */
    c->embed = 32;
    c->hidden = 128;
    c->attn = 128;
    snprintf(c->cell, sizeof c->cell, "%s", "gru");
    c->forget_bias = 1.0; /* read by the LSTM cell only, as in model lstm */
    c->emb_init = 1.0;    /* N(0, 1), as PyTorch's nn.Embedding */
    /* the recipe of shared/reference/train_copy.py */
    c->lr = 1e-3;
    c->clip = 1.0;
    c->batch = 32;
}

/* The sizes were range-checked when parsed from flags, but a configuration can also come
 * from a checkpoint, a test or a program that filled the struct itself, so the model
 * checks again what it reads before it sizes an allocation from it. */
static int rnnattn_check(const config *c, char *err, size_t n)
{
    if (strcmp(c->cell, "gru") != 0 && strcmp(c->cell, "lstm") != 0) {
        snprintf(err, n, "--cell: '%s' is not accepted (accepted: gru, lstm)", c->cell);
        return -1;
    }
    return config_check_fields(c, "rnn_attention", rnnattn_fields,
                               sizeof rnnattn_fields / sizeof rnnattn_fields[0], err, n);
}

/* ---- alloc, free, init ---------------------------------------------------------------- */

/* The parameters live in one arena (values and gradients, zeroed); the views of each
 * tensor are handed out once, here, into m->w and m->g. Returns NULL for a configuration
 * check() rejects, or when memory runs out. */
static model *rnnattn_alloc(const config *c)
{
    char err[128];
    if (rnnattn_check(c, err, sizeof err) != 0)
        return NULL;
    rnnattn *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->head.ops = &rnnattn_ops;
    m->head.cfg = *c;
    m->lstm = cell_is_lstm(c);
    m->G = m->lstm ? 4 : 3;
    arena_spec spec[16];
    size_t slot[16];
    const size_t n = param_table(spec, slot, c);
    if (arena_alloc(&m->head.params, spec, n) != 0) {
        free(m);
        return NULL;
    }
    for (size_t k = 0; k < n; k++)
        set_slot(m, k, slot[k]);
    derive_views(&m->w, c->embed, c->hidden);
    derive_views(&m->g, c->embed, c->hidden);
    return &m->head;
}

static void rnnattn_free(model *mm)
{
    rnnattn *m = (rnnattn *)mm;
    if (!m)
        return;
    arena_free(&m->head.params);
    free(m->s.mem);
    free(m->s.imem);
    free(m);
}

static void uniform(gsl_matrix *x, double k, const gsl_rng *r)
{
    op_uniform(x->data, x->size1 * x->size2, k, r);
}

/* PyTorch's initialisation, so the two start from the same distribution: nn.GRU,
 * nn.GRUCell and nn.LSTM draw every weight and bias from U(−1/√H, 1/√H); nn.Linear from
 * U(−1/√fan_in, 1/√fan_in) (W_q, W_k read H, v reads A, out reads 2H); nn.Embedding
 * N(0, 1) (emb_init is its standard deviation). The LSTM bias is b_ih + b_hh drawn
 * separately, then its forget block [H, 2H) is set to forget_bias, exactly as model lstm
 * does, so the two LSTM variants start alike. */
static void rnnattn_init(model *mm, gsl_rng *r)
{
    rnnattn *m = (rnnattn *)mm;
    const config *c = &mm->cfg;
    const double kH = 1.0 / sqrt((double)c->hidden), kA = 1.0 / sqrt((double)c->attn);
    const double k2H = 1.0 / sqrt(2.0 * (double)c->hidden);
    rnnattn_params *w = &m->w;
    op_normal(w->enc_embed->data, w->enc_embed->size1 * w->enc_embed->size2, c->emb_init, r);
    op_normal(w->dec_embed->data, w->dec_embed->size1 * w->dec_embed->size2, c->emb_init, r);
    gru_weights *cells[2] = {&w->enc, &w->dec};
    for (size_t i = 0; i < 2; i++) {
        uniform(cells[i]->Wx, kH, r);
        uniform(cells[i]->Wh, kH, r);
        if (!m->lstm) {
            uniform(cells[i]->bx, kH, r);
            uniform(cells[i]->bh, kH, r);
            continue;
        }
        lstm_init_bias(cells[i]->bx, kH, c->forget_bias, r); /* (1, 4H) */
    }
    uniform(w->attn.Wq, kH, r);
    uniform(w->attn.Wk, kH, r);
    uniform(w->attn.bk, kH, r);
    uniform(w->attn.v, kA, r);
    uniform(w->out_W, k2H, r);
    uniform(w->out_b, k2H, r);
}

/* ---- the reservation --------------------------------------------------------------- */

/* *out = a·b; returns -1 when that overflows size_t. */
static int mul_size(size_t *out, size_t a, size_t b)
{
    if (b != 0 && a > SIZE_MAX / b)
        return -1;
    *out = a * b;
    return 0;
}

/* The one place the sizes of the run-time arrays are written. With base NULL it only
 * counts; otherwise it points each array of s into base. Returns the number of doubles,
 * or 0 when a size overflows. */
static size_t state_layout(rnnattn_state *s, double *base, const rnnattn *m, size_t B,
                           size_t Ts, size_t Tt)
{
    const config *c = &m->head.cfg;
    const size_t E = c->embed, H = c->hidden, A = c->attn, V = config_vocab(c);
    const size_t GH = m->G * H, GRU = m->lstm ? 0 : 1, LSTM = m->lstm ? 1 : 0;
    size_t enc, dec, states;
    if (Ts > SIZE_MAX - Tt - 1 || mul_size(&enc, Ts, B) || mul_size(&dec, Tt, B) ||
        mul_size(&states, Ts + 1 + Tt, B))
        return 0;
    const struct {
        double **at;
        size_t rows, cols;
    } t[] = {
        {&s->Xe, enc, E},           {&s->dXe, enc, E},
        {&s->Ae, enc, GH},          {&s->dAe, enc, GH},
        {&s->Pe, enc, GH * GRU},    {&s->dPe, enc, GH * GRU},
        {&s->Hs, states, H},        {&s->dHs, states, H},
        {&s->Cs, states, H * LSTM}, {&s->dCs, states, H * LSTM},
        {&s->EK, enc, A},            {&s->dK, enc, A},
        {&s->Xd, dec, E + H},       {&s->dXd, dec, E + H},
        {&s->Ad, dec, GH},          {&s->dAd, dec, GH},
        {&s->Pd, dec, GH * GRU},    {&s->dPd, dec, GH * GRU},
        {&s->EQ, dec, A},            {&s->dQ, dec, A},
        {&s->Alpha, dec, Ts},
        {&s->logits, dec, V},       {&s->dlogits, dec, V},
        {&s->ws.e, 1, Ts},
        {&s->ws.da, 1, Ts},
    };
    size_t total = 0;
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        size_t n;
        if (mul_size(&n, t[k].rows, t[k].cols) || n > SIZE_MAX / sizeof(double) - total)
            return 0;
        if (base)
            *t[k].at = base + total;
        total += n;
    }
    return total;
}

static int rnnattn_reserve(model *mm, size_t B, size_t Ts, size_t Tt)
{
    rnnattn *m = (rnnattn *)mm;
    rnnattn_state *s = &m->s;
    if (B == 0 || Ts == 0 || Tt == 0)
        return -1;
    if (B <= s->cap_B && Ts <= s->cap_Ts && Tt <= s->cap_Tt)
        return 0;
    /* grow to the largest of each size asked so far: a reservation never shrinks */
    B = B > s->cap_B ? B : s->cap_B;
    Ts = Ts > s->cap_Ts ? Ts : s->cap_Ts;
    Tt = Tt > s->cap_Tt ? Tt : s->cap_Tt;

    /* Lay the new arrays out in a copy of the state, so that when an allocation fails the
     * old reservation is untouched and still usable. */
    rnnattn_state fresh = *s;
    const size_t total = state_layout(&fresh, NULL, m, B, Ts, Tt);
    size_t enc, dec;
    if (total == 0 || mul_size(&enc, Ts, B) || mul_size(&dec, Tt, B) ||
        dec > (SIZE_MAX / sizeof(int) - enc) / 3)
        return -1;
    double *mem = calloc(total, sizeof(double));
    int *imem = calloc(enc + 3 * dec, sizeof(int));
    if (!mem || !imem) { /* the old reservation stays usable */
        free(mem);
        free(imem);
        return -1;
    }
    state_layout(&fresh, mem, m, B, Ts, Tt);
    free(s->mem);
    free(s->imem);
    *s = fresh;
    s->mem = mem;
    s->imem = imem;
    s->src = imem;
    s->din = imem + enc;
    s->tgt = imem + enc + dec;
    s->pred = imem + enc + 2 * dec;
    s->cap_B = B;
    s->cap_Ts = Ts;
    s->cap_Tt = Tt;
    s->B = 0; /* the arrays are new: there is no forward to differentiate */
    return 0;
}

static int fits(const rnnattn_state *s, size_t B, size_t Ts, size_t Tt)
{
    return B >= 1 && Ts >= 1 && Tt >= 1 && B <= s->cap_B && Ts <= s->cap_Ts &&
           Tt <= s->cap_Tt;
}

/* ---- views of one call's sizes -------------------------------------------------------- */

/* Every matrix of a call, as views of the front of the reserved arrays. */
typedef struct rnnattn_views {
    gsl_matrix_view Xe, Ae, Pe, He, Ce, Henc, EK;       /* encoder */
    gsl_matrix_view Xd, Xd_emb, C, Ad, Pd, Hd, Cd;     /* decoder */
    gsl_matrix_view S_prev, S_out, EQ, Alpha, logits;
    gsl_matrix_view dXe, dAe, dPe, dHe, dCe, dHenc, dK; /* their gradients */
    gsl_matrix_view dXd, dXd_emb, dC, dAd, dPd, dHd, dCd, dS_out, dQ, dlogits;
} rnnattn_views;

/* Rows [r0, r0 + n) of the (·, cols) array at p. */
static gsl_matrix_view rows_of(double *p, size_t r0, size_t n, size_t cols)
{
    return gsl_matrix_view_array(p + r0 * cols, n, cols);
}

static void make_views(rnnattn_views *v, rnnattn *m, size_t B, size_t Ts, size_t Tt)
{
    rnnattn_state *s = &m->s;
    const config *c = &m->head.cfg;
    const size_t E = c->embed, H = c->hidden, A = c->attn, V = config_vocab(c);
    const size_t GH = m->G * H, nP = m->lstm ? 0 : GH, nC = m->lstm ? H : 0;
    const size_t enc = Ts * B, dec = Tt * B;
    memset(v, 0, sizeof *v);

    v->Xe = rows_of(s->Xe, 0, enc, E);
    v->Ae = rows_of(s->Ae, 0, enc, GH);
    v->He = rows_of(s->Hs, 0, (Ts + 1) * B, H);   /* h_0 .. h_Ts */
    v->Henc = rows_of(s->Hs, B, enc, H);          /* h_1 .. h_Ts: keys and values */
    v->Hd = rows_of(s->Hs, enc, (Tt + 1) * B, H); /* s_0 = h_Ts .. s_Tt */
    v->S_prev = rows_of(s->Hs, enc, dec, H);      /* s_0 .. s_{Tt−1}: the queries' source */
    v->S_out = rows_of(s->Hs, enc + B, dec, H);   /* s_1 .. s_Tt: what the output reads */
    v->EK = rows_of(s->EK, 0, enc, A);
    v->Xd = rows_of(s->Xd, 0, dec, E + H);
    v->Xd_emb = gsl_matrix_submatrix(&v->Xd.matrix, 0, 0, dec, E); /* (Tt·B, E) */
    v->C = gsl_matrix_submatrix(&v->Xd.matrix, 0, E, dec, H);      /* (Tt·B, H) */
    v->Ad = rows_of(s->Ad, 0, dec, GH);
    v->EQ = rows_of(s->EQ, 0, dec, A);
    v->Alpha = rows_of(s->Alpha, 0, dec, Ts);
    v->logits = rows_of(s->logits, 0, dec, V);

    v->dXe = rows_of(s->dXe, 0, enc, E);
    v->dAe = rows_of(s->dAe, 0, enc, GH);
    v->dHe = rows_of(s->dHs, 0, (Ts + 1) * B, H);
    v->dHenc = rows_of(s->dHs, B, enc, H);
    v->dHd = rows_of(s->dHs, enc, (Tt + 1) * B, H);
    v->dS_out = rows_of(s->dHs, enc + B, dec, H);
    v->dK = rows_of(s->dK, 0, enc, A);
    v->dXd = rows_of(s->dXd, 0, dec, E + H);
    v->dXd_emb = gsl_matrix_submatrix(&v->dXd.matrix, 0, 0, dec, E);
    v->dC = gsl_matrix_submatrix(&v->dXd.matrix, 0, E, dec, H);
    v->dAd = rows_of(s->dAd, 0, dec, GH);
    v->dQ = rows_of(s->dQ, 0, dec, A);
    v->dlogits = rows_of(s->dlogits, 0, dec, V);

    /* arrays of one cell only: a GRU keeps h·Whᵀ + bh, an LSTM its cell states; the other
     * kind's views stay zeroed (empty), and nothing reads them */
    if (nP) {
        v->Pe = rows_of(s->Pe, 0, enc, nP);
        v->Pd = rows_of(s->Pd, 0, dec, nP);
        v->dPe = rows_of(s->dPe, 0, enc, nP);
        v->dPd = rows_of(s->dPd, 0, dec, nP);
    }
    if (nC) {
        v->Ce = rows_of(s->Cs, 0, (Ts + 1) * B, nC);
        v->Cd = rows_of(s->Cs, enc, (Tt + 1) * B, nC);
        v->dCe = rows_of(s->dCs, 0, (Ts + 1) * B, nC);
        v->dCd = rows_of(s->dCs, enc, (Tt + 1) * B, nC);
    }
}

/* Block k of m: rows [k·B, (k+1)·B), one step of the whole batch, as a view. */
static gsl_matrix_view block(gsl_matrix_view *m, size_t k, size_t B)
{
    return gsl_matrix_submatrix(&m->matrix, k * B, 0, B, m->matrix.size2);
}

/* ---- pieces shared by forward, decode and trace ------------------------------------ */

/* The encoder: embeds the source (already time-major in s->src), runs the cell from
 * h_0 = 0 (and c_0 = 0), leaving h_1..h_Ts in Henc and the final state in block Ts where
 * the decoder starts; then the keys of every source position, once for the sequence. */
static void encode(rnnattn *m, rnnattn_views *v, size_t B, size_t Ts)
{
    const size_t H = m->head.cfg.hidden;
    op_embed(&v->Xe.matrix, m->w.enc_embed, m->s.src, Ts * B);
    memset(m->s.Hs, 0, B * H * sizeof(double)); /* h_0 = 0 */
    if (m->lstm) {
        memset(m->s.Cs, 0, B * H * sizeof(double)); /* c_0 = 0 */
        lstm_layer_forward(&v->He.matrix, &v->Ce.matrix, &v->Ae.matrix, &v->Xe.matrix,
                           &m->w.enc_lstm, Ts);
    } else {
        gru_layer_forward(&v->He.matrix, &v->Ae.matrix, &v->Pe.matrix, &v->Xe.matrix,
                          &m->w.enc, B);
    }
    /* k (Ts·B,A) = Henc (Ts·B,H) · W_kᵀ + b, kept as e^{2k}: the keys do not depend on
     * the decoder */
    addattn_keys_forward(&v->EK.matrix, &v->Henc.matrix, &m->w.attn);
}

/* Decoder step t (1-based) for B rows. On entry Ad block t−1 holds the embedding part
 * emb(y_{t−1})·W_embᵀ + bias of the cell's input; writes q_t, α_t, c_t (into Xd), the
 * gates and s_t (and its cell state for LSTM).
 *     c_t = attention(query s_{t−1}; keys, values h_1..h_Ts)
 *     s_t = cell([emb(y_{t−1}); c_t], s_{t−1}) */
static void decoder_step(rnnattn *m, rnnattn_views *v, size_t t, size_t B)
{
    const rnnattn_params *w = &m->w;
    gsl_matrix_view s_prev = block(&v->Hd, t - 1, B), s = block(&v->Hd, t, B); /* (B,H) */
    gsl_matrix_view eq = block(&v->EQ, t - 1, B);                                /* (B,A) */
    gsl_matrix_view alpha = block(&v->Alpha, t - 1, B);                        /* (B,Ts) */
    gsl_matrix_view c = block(&v->C, t - 1, B);  /* (B,H), row stride E+H */
    gsl_matrix_view a = block(&v->Ad, t - 1, B); /* (B,GH) */

    addattn_step_forward(&c.matrix, &alpha.matrix, &eq.matrix, &s_prev.matrix, &v->EK.matrix,
                         &v->Henc.matrix, &w->attn);
    /* a (B,GH) += c_t (B,H) · W_ctxᵀ (H,GH): the context's part of the input projection,
     * the one part that had to wait for this step */
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &c.matrix, &w->dec_Wx_ctx.matrix, 1.0,
                   &a.matrix);
    if (m->lstm) {
        gsl_matrix_view cs_prev = block(&v->Cd, t - 1, B), cs = block(&v->Cd, t, B);
        lstm_cell_forward(&s.matrix, &cs.matrix, &a.matrix, &s_prev.matrix, &cs_prev.matrix,
                          w->dec.Wh);
    } else {
        gsl_matrix_view p = block(&v->Pd, t - 1, B);
        gru_cell_forward(&s.matrix, &a.matrix, &p.matrix, &s_prev.matrix, w->dec.Wh,
                         w->dec.bh);
    }
}

/* a (N,GH) = X_emb (N,E) · W_embᵀ (E,GH) + bias: the decoder input's embedding part, for
 * all steps at once under teacher forcing, one step at a time when decoding. */
static void decoder_input(gsl_matrix *a, const gsl_matrix *Xemb, const rnnattn_params *w)
{
    for (size_t i = 0; i < a->size1; i++)
        memcpy(gsl_matrix_ptr(a, i, 0), w->dec.bx->data, a->size2 * sizeof(double));
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, Xemb, &w->dec_Wx_emb.matrix, 1.0, a);
}

/* logits (N,V) = S (N,H) · W_sᵀ (H,V) + C (N,H) · W_cᵀ (H,V) + b, that is out.W [s; c] + b
 * with the concatenation left implicit (s and c live in different arrays). */
static void output_forward(gsl_matrix *logits, const gsl_matrix *S, const gsl_matrix *C,
                           const rnnattn_params *w)
{
    for (size_t i = 0; i < logits->size1; i++)
        memcpy(gsl_matrix_ptr(logits, i, 0), w->out_b->data, logits->size2 * sizeof(double));
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, S, &w->out_W_s.matrix, 1.0, logits);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, C, &w->out_W_c.matrix, 1.0, logits);
}


/* ---- forward and backward ----------------------------------------------------------- */

/* Teacher-forced forward of a batch: the encoder, the decoder loop, the output layer for
 * all steps at once, the mean cross-entropy. Tokens are checked on the way to time-major
 * order (an id outside [0, V) would index past an embedding table); the sizes are
 * recorded so backward can refuse a batch it did not see. */
static double rnnattn_forward(model *mm, const batch *b, int *pred)
{
    rnnattn *m = (rnnattn *)mm;
    rnnattn_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, V = config_vocab(&mm->cfg);
    if (!fits(s, B, Ts, Tt))
        GSL_ERROR_VAL("rnn_attention forward: batch sizes outside the reservation",
                      GSL_EBADLEN, NAN);
    s->B = 0;
    if (op_tokens_time_major(s->src, b->src, B, Ts, V) ||
        op_tokens_time_major(s->din, b->dec_in, B, Tt, V) ||
        op_tokens_time_major(s->tgt, b->tgt, B, Tt, V))
        GSL_ERROR_VAL("rnn_attention forward: token outside the vocabulary", GSL_EDOM, NAN);
    rnnattn_views v;
    make_views(&v, m, B, Ts, Tt);

    encode(m, &v, B, Ts);

    /* decoder, teacher-forced: its inputs (BOS, y_1 .. y_{Tt−1}) are known up front, so
     * their part of the input projection is one GEMM over all steps:
     * Ad (Tt·B,GH) = Xd_emb (Tt·B,E) · W_embᵀ (E,GH) + bias */
    op_embed(&v.Xd_emb.matrix, m->w.dec_embed, s->din, Tt * B);
    decoder_input(&v.Ad.matrix, &v.Xd_emb.matrix, &m->w);
    for (size_t t = 1; t <= Tt; t++)
        decoder_step(m, &v, t, B);

    /* logits (Tt·B,V) = out.W [s_t; c_t] + out.b for every step at once */
    output_forward(&v.logits.matrix, &v.S_out.matrix, &v.C.matrix, &m->w);

    /* mean cross-entropy over the B·Tt targets (backward recomputes its gradient) */
    double loss = op_cross_entropy(&v.logits.matrix, s->tgt, NULL, pred ? s->pred : NULL);
    if (pred)
        op_tokens_batch_major(pred, s->pred, B, Tt);
    s->B = B;
    s->Ts = Ts;
    s->Tt = Tt;
    return loss;
}

/* Backward of the last forward, in the reverse order of its lines: the output layer for
 * all steps, the decoder loop from the last step to the first (cell, context, attention),
 * what sums over steps (one GEMM each), then the encoder. Parameter gradients accumulate;
 * activation gradients are written or zeroed first. */
static int rnnattn_backward(model *mm, const batch *b)
{
    rnnattn *m = (rnnattn *)mm;
    rnnattn_state *s = &m->s;
    const rnnattn_params *w = &m->w;
    rnnattn_params *g = &m->g;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, H = mm->cfg.hidden, E = mm->cfg.embed;
    if (s->B == 0 || B != s->B || Ts != s->Ts || Tt != s->Tt)
        GSL_ERROR_VAL("rnn_attention backward: no forward of this batch to differentiate", GSL_EINVAL, -1);
    rnnattn_views v;
    make_views(&v, m, B, Ts, Tt);

    /* forward: loss = mean CE(logits, tgt)   ⇒   dlogits = (softmax − onehot)/(Tt·B) */
    op_cross_entropy(&v.logits.matrix, s->tgt, &v.dlogits.matrix, NULL);

    /* forward: logits = S_out · W_sᵀ + C · W_cᵀ + b
     *   dS_out (Tt·B,H) = dlogits (Tt·B,V) · W_s (V,H)   written: the first gradient of
     *   dC     (Tt·B,H) = dlogits (Tt·B,V) · W_c (V,H)   s_t and c_t from outside
     *   dW_s (V,H) += dlogitsᵀ · S_out,  dW_c (V,H) += dlogitsᵀ · C,  db += Σ_rows dlogits */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &w->out_W_s.matrix,
                   0.0, &v.dS_out.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &w->out_W_c.matrix,
                   0.0, &v.dC.matrix);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &v.S_out.matrix, 1.0,
                   &g->out_W_s.matrix);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &v.C.matrix, 1.0,
                   &g->out_W_c.matrix);
    op_bias_backward(g->out_b, &v.dlogits.matrix);

    /* What accumulates starts at zero: the encoder's state gradients (blocks 0..Ts, the
     * bridge s_0 = h_Ts included), every cell-state gradient, the keys', the inputs'. */
    memset(s->dHs, 0, (Ts + 1) * B * H * sizeof(double));
    if (m->lstm)
        memset(s->dCs, 0, (Ts + 1 + Tt) * B * H * sizeof(double));
    memset(s->dK, 0, Ts * B * mm->cfg.attn * sizeof(double));
    memset(s->dXe, 0, Ts * B * E * sizeof(double));

    /* The decoder, last step first. When step t is reached, block t of dHd holds the whole
     * gradient of s_t (from the output, and from step t+1's cell and query) and block t−1
     * of dC the output's share of dc_t. */
    for (size_t t = Tt; t >= 1; t--) {
        gsl_matrix_view ds = block(&v.dHd, t, B), ds_prev = block(&v.dHd, t - 1, B);
        gsl_matrix_view s_prev = block(&v.Hd, t - 1, B);
        gsl_matrix_view a = block(&v.Ad, t - 1, B), da = block(&v.dAd, t - 1, B);
        gsl_matrix_view dc = block(&v.dC, t - 1, B), dq = block(&v.dQ, t - 1, B);
        gsl_matrix_view eq = block(&v.EQ, t - 1, B), alpha = block(&v.Alpha, t - 1, B);

        /* forward: s_t = cell(a_t, s_{t−1})   ⇒   da_t, and ds_{t−1} += its direct share */
        if (m->lstm) {
            gsl_matrix_view cs = block(&v.Cd, t, B), cs_prev = block(&v.Cd, t - 1, B);
            gsl_matrix_view dcs = block(&v.dCd, t, B), dcs_prev = block(&v.dCd, t - 1, B);
            lstm_cell_backward(&da.matrix, &ds_prev.matrix, &dcs_prev.matrix, &ds.matrix,
                               &dcs.matrix, &a.matrix, &cs.matrix, &cs_prev.matrix, w->dec.Wh);
        } else {
            gsl_matrix_view p = block(&v.Pd, t - 1, B), dp = block(&v.dPd, t - 1, B);
            gru_cell_backward(&da.matrix, &dp.matrix, &ds_prev.matrix, &ds.matrix, &a.matrix,
                              &p.matrix, &s_prev.matrix, w->dec.Wh);
        }

        /* forward: a_t += c_t · W_ctxᵀ   ⇒   dc_t (B,H) += da_t (B,GH) · W_ctx (GH,H) */
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &da.matrix, &w->dec_Wx_ctx.matrix, 1.0,
                       &dc.matrix);

        /* forward: c_t = attention(s_{t−1}, K, Henc)   ⇒   ds_{t−1} += its query share,
         * dq_t, dK, dv */
        addattn_step_backward(&ds_prev.matrix, &dq.matrix, &v.dK.matrix, &g->attn, &dc.matrix,
                              &alpha.matrix, &eq.matrix, &v.EK.matrix, &v.Henc.matrix, &w->attn,
                              &s->ws);
    }

    /* Decoder weights, each one GEMM over all Tt steps:
     *   forward: a = [emb; c] · Wxᵀ + bx   ⇒   dWx (GH,E+H) += dAdᵀ (GH,Tt·B) · Xd (Tt·B,E+H)
     *                                           dbx += Σ_rows dAd
     *   forward: a += s_prev · Whᵀ (+ bh)  ⇒   dWh (GH,H) += dPᵀ (GH,Tt·B) · S_prev (Tt·B,H)
     *   where dP is dAd for the LSTM (its two parts share the gradient) and dPd for the GRU
     *   (whose n third differs, scaled by r), and the GRU's dbh += Σ_rows dPd */
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dAd.matrix, &v.Xd.matrix, 1.0, g->dec.Wx);
    op_bias_backward(g->dec.bx, &v.dAd.matrix);
    if (m->lstm) {
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dAd.matrix, &v.S_prev.matrix, 1.0,
                       g->dec.Wh);
    } else {
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dPd.matrix, &v.S_prev.matrix, 1.0,
                       g->dec.Wh);
        op_bias_backward(g->dec.bh, &v.dPd.matrix);
    }
    /* forward: a = emb · W_embᵀ + ...   ⇒   dX_emb (Tt·B,E) = dAd (Tt·B,GH) · W_emb (GH,E),
     * then the embedding rows: forward X row i = table row ids[i] ⇒ dtable row ids[i] += */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dAd.matrix, &w->dec_Wx_emb.matrix, 0.0,
                   &v.dXd_emb.matrix);
    op_embed_backward(g->dec_embed, &v.dXd_emb.matrix, s->din, Tt * B);

    /* Attention, what sums over steps: dW_q, and the encoder states' two shares (as values,
     * Σ_t α_tj dc_t; as keys, dK·W_k) added to the gradient of h_1..h_Ts */
    addattn_seq_backward(&g->attn, &v.dHenc.matrix, &v.dQ.matrix, &v.dC.matrix, &v.dK.matrix,
                         &v.S_prev.matrix, &v.Alpha.matrix, &v.Henc.matrix, &w->attn, B);

    /* The encoder: block t of dHe now holds all that reaches h_t from outside the layer,
     * the attention's shares and, at t = Ts, the decoder's gradient of s_0. */
    if (m->lstm)
        lstm_layer_backward(&v.dXe.matrix, &g->enc_lstm, &v.dAe.matrix, &v.dHe.matrix,
                            &v.dCe.matrix, &v.Xe.matrix, &v.He.matrix, &v.Ce.matrix,
                            &v.Ae.matrix, &w->enc_lstm, Ts);
    else
        gru_layer_backward(&g->enc, &v.dXe.matrix, &v.dHe.matrix, &v.dAe.matrix, &v.dPe.matrix,
                           &v.Xe.matrix, &v.He.matrix, &v.Ae.matrix, &v.Pe.matrix, &w->enc, B);
    op_embed_backward(g->enc_embed, &v.dXe.matrix, s->src, Ts * B);
    return 0;
}

/* ---- greedy decoding ----------------------------------------------------------------- */

/* Greedy decoding: the same encoder and decoder step as forward, but each step's input is
 * the argmax of the step before (exactly Tt steps, no stopping symbol: the tasks know
 * their target length). Uses the forward arrays, so it invalidates a pending backward. */
static int rnnattn_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    rnnattn *m = (rnnattn *)mm;
    rnnattn_state *s = &m->s;
    const size_t V = config_vocab(&mm->cfg);
    if (!fits(s, B, Ts, Tt))
        GSL_ERROR_VAL("rnn_attention decode: sizes outside the reservation", GSL_EBADLEN, -1);
    s->B = 0; /* the arrays now hold a decode: nothing for backward */
    if (op_tokens_time_major(s->src, src, B, Ts, V))
        GSL_ERROR_VAL("rnn_attention decode: token outside the vocabulary", GSL_EDOM, -1);
    rnnattn_views v;
    make_views(&v, m, B, Ts, Tt);

    encode(m, &v, B, Ts);

    /* The decoder cannot project its inputs up front: input t+1 is the argmax of step t.
     * Each step writes the same blocks forward would, so trace() can read them after. */
    int *y = s->din; /* (Tt·B) block t−1: the input of step t */
    for (size_t i = 0; i < B; i++)
        y[i] = config_bos(&mm->cfg);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view x = block(&v.Xd, t - 1, B); /* (B,E+H) */
        gsl_matrix_view xe = gsl_matrix_submatrix(&x.matrix, 0, 0, B, mm->cfg.embed);
        gsl_matrix_view a = block(&v.Ad, t - 1, B);     /* (B,GH) */
        gsl_matrix_view st = block(&v.S_out, t - 1, B); /* s_t (B,H) */
        gsl_matrix_view ct = block(&v.C, t - 1, B);     /* c_t (B,H) */
        gsl_matrix_view z = block(&v.logits, t - 1, B); /* (B,V) */

        op_embed(&xe.matrix, m->w.dec_embed, y + (t - 1) * B, B);
        decoder_input(&a.matrix, &xe.matrix, &m->w);
        decoder_step(m, &v, t, B);
        output_forward(&z.matrix, &st.matrix, &ct.matrix, &m->w);
        for (size_t i = 0; i < B; i++) {
            const int tok = op_argmax(gsl_matrix_const_ptr(&z.matrix, i, 0), V);
            out[i * Tt + (t - 1)] = tok;
            if (t < Tt)
                y[t * B + i] = tok; /* fed back as the next input */
        }
    }
    return 0;
}

/* ---- trace ---------------------------------------------------------------------------- */

/* With B = 1, Alpha (Tt·1, Ts) is the alignment matrix itself: row t is α_t over the
 * source, the picture of Bahdanau et al.'s figure 3. */
static int rnnattn_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out,
                         trace_sink sink, void *ctx)
{
    rnnattn *m = (rnnattn *)mm;
    if (!fits(&m->s, 1, Ts, Tt))
        GSL_ERROR_VAL("rnn_attention trace: sizes outside the reservation", GSL_EBADLEN, -1);
    for (size_t j = 0; j < Ts; j++)
        if (src[j] < 0 || (size_t)src[j] >= config_vocab(&mm->cfg))
            GSL_ERROR_VAL("rnn_attention trace: token outside the vocabulary", GSL_EDOM, -1);
    rnnattn_decode(mm, src, 1, Ts, Tt, out);
    gsl_matrix_view alignment = gsl_matrix_view_array(m->s.Alpha, Tt, Ts);
    return sink(ctx, "alignment", &alignment.matrix, "tgt", "src") != 0 ? -1 : 0;
}

/* ---- cost ------------------------------------------------------------------------------ */

/* Per sequence, 2 flops per multiply-add of every product (element-wise work ignored),
 * as shared/reference/bench_torch.py counts them. Forward:
 *   each of the Ts encoder steps: x·Wxᵀ (GH·E), h·Whᵀ (GH·H), its key W_k h (A·H);
 *   each of the Tt decoder steps: [emb; c]·Wxᵀ (GH·(E+H)), s·Whᵀ (GH·H), the query W_q s
 *   (A·H), the scores vᵀu over the source (Ts·A), the context Σ α h (Ts·H), the output
 *   (V·2H).
 * Backward forms two products per forward product (an input gradient and a weight
 * gradient; for the scores dv and du, for the context dα and dh) of the same size, so a
 * training step costs 3× the forward. The scores and the context make the cost grow with
 * Ts·Tt: attention's price. */
static double rnnattn_flops(const config *c, size_t Ts, size_t Tt)
{
    const double E = (double)c->embed, H = (double)c->hidden, A = (double)c->attn;
    const double V = (double)config_vocab(c), GH = (cell_is_lstm(c) ? 4.0 : 3.0) * H;
    const double ts = (double)Ts, tt = (double)Tt;
    const double enc = ts * (GH * E + GH * H + A * H);
    const double dec = tt * (GH * (E + H) + GH * H + A * H + ts * A + ts * H + V * 2.0 * H);
    return 3.0 * 2.0 * (enc + dec);
}

/* The size of the arena c implies, from the one size table. */
static size_t rnnattn_n_params(const config *c)
{
    arena_spec spec[16];
    size_t slot[16], total = 0;
    const size_t n = param_table(spec, slot, c);
    for (size_t k = 0; k < n; k++)
        total += spec[k].rows * spec[k].cols;
    return total;
}

/* Small sizes, all different: E = 5, H = 6, A = 7. */
static void rnnattn_gradcheck_sizes(config *c)
{
    c->embed = 5;
    c->hidden = 6;
    c->attn = 7;
}

/* The GRU cell (the default) and the LSTM cell of the controlled experiment. */
static const char *const rnnattn_variants[] = {"", "cell=lstm", NULL};

const model_ops rnnattn_ops = {
    .name = "rnn_attention",
    .about = "GRU encoder-decoder with additive attention (Bahdanau et al. 2015); "
             "--cell lstm for the LSTM ablation",
    .defaults = rnnattn_defaults,
    .check = rnnattn_check,
    .alloc = rnnattn_alloc,
    .free = rnnattn_free,
    .init = rnnattn_init,
    .reserve = rnnattn_reserve,
    .forward = rnnattn_forward,
    .backward = rnnattn_backward,
    .decode = rnnattn_decode,
    .trace = rnnattn_trace,
    .n_params = rnnattn_n_params,
    .flops = rnnattn_flops,
    .gradcheck_sizes = rnnattn_gradcheck_sizes,
    .variants = rnnattn_variants,
};
