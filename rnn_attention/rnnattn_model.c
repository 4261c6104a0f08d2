/* rnnattn_model.c — the model `rnn_attention` as the harness sees it: its configuration,
 * its parameters, its run-time state and its table of operations (the passes themselves
 * are rnnattn_pass.c, greedy decoding and the trace rnnattn_decode.c; the cells
 * rnnattn_cell.c).
 *
 * Three structs, three concerns: the configuration (struct model's cfg, with the cell it
 * names resolved once into m->cell), the weights (rnnattn_params: views into the arena,
 * once for values and once for gradients) and the run-time state (rnnattn_state: every
 * activation of a step, reserved once).
 *
 * Design. Each is written in one place. The parameters: visit_params() names every tensor with
 * its shape, in arena order (common/core/walk.h); the arena, the views, the checkpoint names
 * and n_params all come from that one walk, and the cell's entry decides the gate count
 * and the biases. The state: state_layout() asks for every run-time array at the reserved
 * sizes (common/core/carve.h); reserve() counts, allocates and takes the views from that one
 * list.
 *
 * Invariant: reserve() sizes every array for the largest (B, Ts, Tt) asked for so far, and
 * a reservation never shrinks; a call with smaller sizes uses the front of each array, so
 * no step ever allocates. A reservation that fails leaves the previous one in place.
 */
#include "rnnattn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/tensor.h"
#include "../common/core/walk.h"

/* ---- the parameters ---------------------------------------------------------------------- */

/* One recurrent layer, whichever the cell: Wx (GH, In), Wh (GH, H), then the cell's
 * biases (1, GH) under their names (GRU bx, bh; LSTM b, whose views go to bx). */
static void visit_rnn(walk *wk, rnnattn_rnn *w, rnnattn_rnn *g, const char *prefix,
                      const rnnattn_cell *cell, size_t In, size_t H)
{
    const size_t GH = cell->gates * H;
    gsl_matrix **wb[2] = {&w->bx, &w->bh}, **gb[2] = {&g->bx, &g->bh};
    walk_tensor(wk, &w->Wx, &g->Wx, prefix, "Wx", GH, In);
    walk_tensor(wk, &w->Wh, &g->Wh, prefix, "Wh", GH, H);
    for (size_t k = 0; k < cell->biases; k++)
        walk_tensor(wk, wb[k], gb[k], prefix, cell->bias[k], 1, GH);
}

/* Every tensor of the model, in arena order (the order of checkpoints, of the optimiser's
 * flat loops and of nothing else: init() draws in its own order). Reads the
 * configuration and the cell of the rnnattn_model ctx; writes its w and g in the walk's
 * last pass only. */
static void visit_params(walk *wk, void *ctx)
{
    rnnattn_model *m = ctx;
    const config *c = &m->head.cfg;
    const size_t V = config_vocab(c), E = c->embed, H = c->hidden, A = c->attn;
    const size_t K = c->bidirectional ? 2 * H : H; /* the width of an annotation */
    rnnattn_params *w = &m->w, *g = &m->g;
    walk_tensor(wk, &w->enc_embed, &g->enc_embed, "enc", "embed", V, E);
    visit_rnn(wk, &w->enc, &g->enc, "enc", m->cell, E, H);
    walk_tensor(wk, &w->dec_embed, &g->dec_embed, "dec", "embed", V, E);
    visit_rnn(wk, &w->dec, &g->dec, "dec", m->cell, E + K, H);
    walk_tensor(wk, &w->attn.Wq, &g->attn.Wq, "attn", "Wq", A, H);
    walk_tensor(wk, &w->attn.Wk, &g->attn.Wk, "attn", "Wk", A, K);
    walk_tensor(wk, &w->attn.bk, &g->attn.bk, "attn", "bk", 1, A);
    walk_tensor(wk, &w->attn.v, &g->attn.v, "attn", "v", 1, A);
    walk_tensor(wk, &w->out_W, &g->out_W, "out", "W", V, H + K);
    walk_tensor(wk, &w->out_b, &g->out_b, "out", "b", 1, V);
    if (c->bidirectional) { /* last: the tensors of the other runs keep their place */
        visit_rnn(wk, &w->bwd, &g->bwd, "bwd", m->cell, E, H);
        walk_tensor(wk, &w->init_W, &g->init_W, "init", "W", H, H);
    }
}

/* The column blocks of dec.Wx and out.W, views of the views the walk handed out; the
 * context's blocks are K = dec.Wx's columns − E wide. */
static void column_views(rnnattn_params *p, size_t E, size_t H)
{
    const size_t GH = p->dec.Wx->size1, V = p->out_W->size1, K = p->dec.Wx->size2 - E;
    p->dec_Wx_emb = gsl_matrix_submatrix(p->dec.Wx, 0, 0, GH, E);
    p->dec_Wx_ctx = gsl_matrix_submatrix(p->dec.Wx, 0, E, GH, K);
    p->out_W_s = gsl_matrix_submatrix(p->out_W, 0, 0, V, H);
    p->out_W_c = gsl_matrix_submatrix(p->out_W, 0, H, V, K);
}

/* ---- configuration ----------------------------------------------------------------------- */

/* The configuration fields this model reads; check() holds them to the ranges of the
 * configuration table, so no range is written twice. */
static const char *const rnnattn_fields[] = {"symbols", "embed", "hidden", "attn",
                                             "forget_bias", "emb_init", "bidirectional"};

static void rnnattn_defaults(config *c)
{
    /* canonical sizes (DESIGN: embed 32 / GRU 128 / attention 128, ~210k parameters) */
    c->embed = 32;
    c->hidden = 128;
    c->attn = 128;
    snprintf(c->cell, sizeof c->cell, "%s", "gru");
    c->forget_bias = 1.0; /* read by the LSTM cell only, as in model lstm */
    c->emb_init = 1.0;    /* N(0, 1), as PyTorch's nn.Embedding */
    /* Adam at 1e-3: the model reaches the target within a few thousand steps at it
     * (docs/compare.md, "Recipes") */
    c->lr = 1e-3;
    c->clip = 1.0;
    c->batch = 32;
}

/* The sizes were range-checked when parsed from flags, but a configuration can also come
 * from a checkpoint, a test or a program that filled the struct itself, so the model
 * checks again what it reads before it sizes an allocation from it. */
static int rnnattn_check(const config *c, char *err, size_t n)
{
    if (!rnnattn_cell_of(c)) {
        snprintf(err, n, "--cell: '%s' is not accepted (accepted: gru, lstm)", c->cell);
        return -1;
    }
    return config_check_fields(c, "rnn_attention", rnnattn_fields,
                               sizeof rnnattn_fields / sizeof rnnattn_fields[0], err, n);
}

/* ---- alloc, free, init ---------------------------------------------------------------- */

/* The parameters live in one arena (values and gradients, zeroed), built by the walk,
 * which hands the views of each tensor out once, into m->w and m->g. Returns NULL for a
 * configuration check() rejects, or when memory runs out. */
static model *rnnattn_alloc(const config *c)
{
    char err[128];
    if (rnnattn_check(c, err, sizeof err) != 0)
        return NULL;
    rnnattn_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->head.ops = &rnnattn_ops;
    m->head.cfg = *c;
    m->cell = rnnattn_cell_of(c);
    if (walk_build(&m->head.params, visit_params, m) != 0) {
        free(m);
        return NULL;
    }
    column_views(&m->w, c->embed, c->hidden);
    column_views(&m->g, c->embed, c->hidden);
    return &m->head;
}

static void rnnattn_free(model *mm)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    if (!m)
        return;
    arena_free(&m->head.params);
    carve_free(&m->s.blk);
    free(m);
}

/* PyTorch's initialisation, so the two start from the same distribution: nn.GRU,
 * nn.GRUCell and nn.LSTM draw every weight and bias from U(−1/√H, 1/√H); nn.Linear from
 * U(−1/√fan_in, 1/√fan_in) (W_q, W_k read H, v reads A, out reads 2H); nn.Embedding
 * N(0, 1) (emb_init is its standard deviation). The LSTM bias is b_ih + b_hh drawn
 * separately, then its forget block [H, 2H) is set to forget_bias, exactly as model lstm
 * does, so the two LSTM variants start alike (the cell's init_bias). */
static void rnnattn_init(model *mm, gsl_rng *r)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    const config *c = &mm->cfg;
    const double kH = 1.0 / sqrt((double)c->hidden), kA = 1.0 / sqrt((double)c->attn);
    const double k2H = 1.0 / sqrt(2.0 * (double)c->hidden);
    rnnattn_params *w = &m->w;
    op_normal(w->enc_embed->data, w->enc_embed->size1 * w->enc_embed->size2, c->emb_init, r);
    op_normal(w->dec_embed->data, w->dec_embed->size1 * w->dec_embed->size2, c->emb_init, r);
    rnnattn_rnn *layers[2] = {&w->enc, &w->dec};
    for (size_t i = 0; i < 2; i++) {
        model_uniform(layers[i]->Wx, kH, r);
        model_uniform(layers[i]->Wh, kH, r);
        m->cell->init_bias(layers[i], kH, c->forget_bias, r);
    }
    /* bidirectional: W_k reads 2H, out.W 3H (nn.Linear's fan-in) */
    const double kK = c->bidirectional ? 1.0 / sqrt(2.0 * (double)c->hidden) : kH;
    const double kout = c->bidirectional ? 1.0 / sqrt(3.0 * (double)c->hidden) : k2H;
    model_uniform(w->attn.Wq, kH, r);
    model_uniform(w->attn.Wk, kK, r);
    model_uniform(w->attn.bk, kK, r);
    model_uniform(w->attn.v, kA, r);
    model_uniform(w->out_W, kout, r);
    model_uniform(w->out_b, kout, r);
    if (c->bidirectional) { /* drawn last: the draws above are those of one direction */
        model_uniform(w->bwd.Wx, kH, r);
        model_uniform(w->bwd.Wh, kH, r);
        m->cell->init_bias(&w->bwd, kH, c->forget_bias, r);
        model_uniform(w->init_W, kH, r);
    }
}

/* ---- the run-time state -------------------------------------------------------------------- */

/* What state_layout lays out: the arrays of s, for the model m, at sizes (B, Ts, Tt). */
typedef struct rnnattn_state_shape {
    rnnattn_state *s;       /* whose array pointers are set (a scratch state when counting) */
    const rnnattn_model *m; /* its configuration and cell decide the widths */
    size_t B;               /* batch size to make room for */
    size_t Ts;              /* source length to make room for */
    size_t Tt;              /* target length to make room for */
} rnnattn_state_shape;

/* rows·cols doubles, seen by each call at its own sizes (rnnattn.c). */
static double *carve_array(carver *c, size_t rows, size_t cols)
{
    return carve_vector(c, carve_mul(c, rows, cols));
}

/* The one place the sizes of the run-time arrays are written, in block order (the shapes
 * are rnnattn_state's). Arrays of one cell only are NULL for the other. */
static void state_layout(carver *c, void *ctx)
{
    const rnnattn_state_shape *l = ctx;
    rnnattn_state *s = l->s;
    const config *cf = &l->m->head.cfg;
    const rnnattn_cell *cell = l->m->cell;
    const size_t E = cf->embed, H = cf->hidden, A = cf->attn, V = config_vocab(cf);
    const size_t GH = cell->gates * H, bi = cf->bidirectional ? 1 : 0, K = (1 + bi) * H;
    if (l->Ts > SIZE_MAX - 1 - bi - l->Tt)
        c->overflow = 1; /* Ts + 1 + Tt (+1) state blocks do not fit in size_t */
    const size_t enc = carve_mul(c, l->Ts, l->B), dec = carve_mul(c, l->Tt, l->B);
    const size_t states = carve_mul(c, l->Ts + 1 + l->Tt + bi, l->B);
    const int P = cell->keeps_recurrent, C = cell->has_cell_state;

    s->Xe = carve_array(c, enc, E);
    s->dXe = carve_array(c, enc, E);
    s->Ae = carve_array(c, enc, GH);
    s->dAe = carve_array(c, enc, GH);
    s->Pe = P ? carve_array(c, enc, GH) : NULL;
    s->dPe = P ? carve_array(c, enc, GH) : NULL;
    s->Hs = carve_array(c, states, H);
    s->dHs = carve_array(c, states, H);
    s->Cs = C ? carve_array(c, states, H) : NULL;
    s->dCs = C ? carve_array(c, states, H) : NULL;
    s->EK = carve_array(c, enc, A);
    s->dK = carve_array(c, enc, A);
    s->Xd = carve_array(c, dec, E + K);
    s->dXd = carve_array(c, dec, E + K);
    s->Ad = carve_array(c, dec, GH);
    s->dAd = carve_array(c, dec, GH);
    s->Pd = P ? carve_array(c, dec, GH) : NULL;
    s->dPd = P ? carve_array(c, dec, GH) : NULL;
    s->EQ = carve_array(c, dec, A);
    s->dQ = carve_array(c, dec, A);
    s->Alpha = carve_array(c, dec, l->Ts);
    s->logits = carve_array(c, dec, V);
    s->dlogits = carve_array(c, dec, V);
    s->ws.e = carve_vector(c, l->Ts);
    s->ws.da = carve_vector(c, l->Ts);
    s->src = carve_ints(c, enc);
    s->din = carve_ints(c, dec);
    s->tgt = carve_ints(c, dec);
    s->pred = carve_ints(c, dec);
    if (bi) { /* after every other array: theirs stay where they were */
        const size_t rstates = carve_mul(c, l->Ts + 1, l->B);
        s->Xr = carve_array(c, enc, E);
        s->dXr = carve_array(c, enc, E);
        s->Ar = carve_array(c, enc, GH);
        s->dAr = carve_array(c, enc, GH);
        s->Pr = P ? carve_array(c, enc, GH) : NULL;
        s->dPr = P ? carve_array(c, enc, GH) : NULL;
        s->Hr = carve_array(c, rstates, H);
        s->dHr = carve_array(c, rstates, H);
        s->Cr = C ? carve_array(c, rstates, H) : NULL;
        s->dCr = C ? carve_array(c, rstates, H) : NULL;
        s->Hann = carve_array(c, enc, K);
        s->dHann = carve_array(c, enc, K);
        s->srcr = carve_ints(c, enc);
    }
}

/* Grows the reservation to the largest of each size asked so far. The count lays the
 * arrays out into a scratch state, so that a reservation that fails (overflow, out of
 * memory) leaves the old block and its views untouched and usable. */
static int rnnattn_reserve(model *mm, size_t B, size_t Ts, size_t Tt)
{
    rnnattn_model *m = (rnnattn_model *)mm;
    rnnattn_state *s = &m->s;
    if (B == 0 || Ts == 0 || Tt == 0)
        return -1;
    if (B <= s->cap.B && Ts <= s->cap.Ts && Tt <= s->cap.Tt)
        return 0;
    /* a reservation never shrinks */
    B = B > s->cap.B ? B : s->cap.B;
    Ts = Ts > s->cap.Ts ? Ts : s->cap.Ts;
    Tt = Tt > s->cap.Tt ? Tt : s->cap.Tt;

    rnnattn_state scratch;
    memset(&scratch, 0, sizeof scratch);
    rnnattn_state_shape l = {&scratch, m, B, Ts, Tt};
    if (carve_reserve(&s->blk, state_layout, &l) != 0)
        return -1;
    l.s = s;
    carver c = carve_start(&s->blk);
    state_layout(&c, &l);
    s->cap = (model_sizes){B, Ts, Tt};
    s->has_forward = 0; /* the arrays are new: there is no forward to differentiate */
    return 0;
}

/* The views of one call (rnnattn.h). */
/* Rows [r0, r0 + n) of the (·, cols) array at p. */
static gsl_matrix_view rows_of(double *p, size_t r0, size_t n, size_t cols)
{
    return gsl_matrix_view_array(p + r0 * cols, n, cols);
}

void rnnattn_make_views(rnnattn_views *v, rnnattn_model *m, size_t B, size_t Ts, size_t Tt)
{
    rnnattn_state *s = &m->s;
    const config *c = &m->head.cfg;
    const size_t E = c->embed, H = c->hidden, A = c->attn, V = config_vocab(c);
    const size_t GH = m->cell->gates * H, enc = Ts * B, dec = Tt * B;
    const int bi = c->bidirectional;
    const size_t K = bi ? 2 * H : H;
    /* the decoder's s_0: the encoder's last block, or a block of its own (bidirectional) */
    const size_t d0 = bi ? enc + B : enc;
    memset(v, 0, sizeof *v);

    v->Xe = rows_of(s->Xe, 0, enc, E);
    v->Ae = rows_of(s->Ae, 0, enc, GH);
    v->He = rows_of(s->Hs, 0, (Ts + 1) * B, H);   /* h_0 .. h_Ts */
    /* h_1 .. h_Ts: keys and values (bidirectional: the annotations [→h_j; ←h_j]) */
    v->Henc = bi ? rows_of(s->Hann, 0, enc, K) : rows_of(s->Hs, B, enc, H);
    v->Hd = rows_of(s->Hs, d0, (Tt + 1) * B, H);  /* s_0 .. s_Tt */
    v->S_prev = rows_of(s->Hs, d0, dec, H);       /* s_0 .. s_{Tt−1} */
    v->S_out = rows_of(s->Hs, d0 + B, dec, H);    /* s_1 .. s_Tt */
    v->EK = rows_of(s->EK, 0, enc, A);
    v->Xd = rows_of(s->Xd, 0, dec, E + K);
    v->Xd_emb = gsl_matrix_submatrix(&v->Xd.matrix, 0, 0, dec, E); /* (Tt·B, E) */
    v->C = gsl_matrix_submatrix(&v->Xd.matrix, 0, E, dec, K);      /* (Tt·B, K) */
    v->Ad = rows_of(s->Ad, 0, dec, GH);
    v->EQ = rows_of(s->EQ, 0, dec, A);
    v->Alpha = rows_of(s->Alpha, 0, dec, Ts);
    v->logits = rows_of(s->logits, 0, dec, V);

    v->dXe = rows_of(s->dXe, 0, enc, E);
    v->dAe = rows_of(s->dAe, 0, enc, GH);
    v->dHe = rows_of(s->dHs, 0, (Ts + 1) * B, H);
    v->dHenc = bi ? rows_of(s->dHann, 0, enc, K) : rows_of(s->dHs, B, enc, H);
    v->dHd = rows_of(s->dHs, d0, (Tt + 1) * B, H);
    v->dS_out = rows_of(s->dHs, d0 + B, dec, H);
    v->dK = rows_of(s->dK, 0, enc, A);
    v->dXd = rows_of(s->dXd, 0, dec, E + K);
    v->dXd_emb = gsl_matrix_submatrix(&v->dXd.matrix, 0, 0, dec, E);
    v->dC = gsl_matrix_submatrix(&v->dXd.matrix, 0, E, dec, K);
    v->dAd = rows_of(s->dAd, 0, dec, GH);
    v->dQ = rows_of(s->dQ, 0, dec, A);
    v->dlogits = rows_of(s->dlogits, 0, dec, V);

    /* arrays of one cell only: a GRU keeps h·Whᵀ + bh, an LSTM its cell states; the other
     * kind's views stay zeroed (empty), and nothing reads them */
    if (m->cell->keeps_recurrent) {
        v->Pe = rows_of(s->Pe, 0, enc, GH);
        v->Pd = rows_of(s->Pd, 0, dec, GH);
        v->dPe = rows_of(s->dPe, 0, enc, GH);
        v->dPd = rows_of(s->dPd, 0, dec, GH);
    }
    if (m->cell->has_cell_state) {
        v->Ce = rows_of(s->Cs, 0, (Ts + 1) * B, H);
        v->Cd = rows_of(s->Cs, d0, (Tt + 1) * B, H);
        v->dCe = rows_of(s->dCs, 0, (Ts + 1) * B, H);
        v->dCd = rows_of(s->dCs, d0, (Tt + 1) * B, H);
    }
    if (bi) { /* the backward encoder, shaped as the forward one */
        v->Xr = rows_of(s->Xr, 0, enc, E);
        v->dXr = rows_of(s->dXr, 0, enc, E);
        v->Ar = rows_of(s->Ar, 0, enc, GH);
        v->dAr = rows_of(s->dAr, 0, enc, GH);
        v->Hr = rows_of(s->Hr, 0, (Ts + 1) * B, H);
        v->dHr = rows_of(s->dHr, 0, (Ts + 1) * B, H);
        if (m->cell->keeps_recurrent) {
            v->Pr = rows_of(s->Pr, 0, enc, GH);
            v->dPr = rows_of(s->dPr, 0, enc, GH);
        }
        if (m->cell->has_cell_state) {
            v->Cr = rows_of(s->Cr, 0, (Ts + 1) * B, H);
            v->dCr = rows_of(s->dCr, 0, (Ts + 1) * B, H);
        }
    }
}

/* ---- sizes and cost ------------------------------------------------------------------------ */

/* The size of the arena c implies, from the walk itself (on a model that is only a
 * configuration: no pass of walk_count writes a view), or 0 for a configuration check()
 * rejects. */
static size_t rnnattn_n_params(const config *c)
{
    rnnattn_model skeleton;
    memset(&skeleton, 0, sizeof skeleton);
    skeleton.head.cfg = *c;
    skeleton.cell = rnnattn_cell_of(c);
    if (!skeleton.cell)
        return 0;
    return walk_count(visit_params, &skeleton);
}

/* Per sequence, by the conventions of MODEL FLOPS (common/core/model.h), from the count
 * of each piece, written out beside it:
 *   the encoder, Ts steps of the cell's layer on the E-wide embeddings
 *             (cell->layer_flops: gru_layer_flops, lstm_layer_flops);
 *   the decoder, Tt steps of the same on [emb; c], E + K wide;
 *   the attention of Tt steps over Ts annotations K wide (addattn_flops: keys, queries,
 *             the scores vᵀ tanh(q + k) with their softmax, the context, and backward);
 *   the output layer over [s; c], H + K wide, and the loss, per target position
 *             (model_output_flops);
 *   the embeddings' gradient rows added into their tables: E per source and target
 *             token;
 * where K = H. Bidirectional (K = 2H): a second encoder layer; s_0 = tanh(←h_1·W_sᵀ),
 * products 6H², element-wise tanh and its backward (1 − s_0²)·ds_0 (4H); the annotations'
 * gradient split back into the two directions (2H per source position); and the second
 * encoder's embedding rows (E per source token). In all, with dirs = 1 or 2 encoders:
 *   dirs·layer(E, H, Ts) + layer(E + K, H, Tt) + addattn_flops(A, H, K, Ts, Tt)
 *   + Tt·model_output_flops(H + K, V) + E·(dirs·Ts + Tt)   [+ 6H² + 4H + 2H·Ts when
 *   bidirectional]
 * The scores and the context make the cost grow with Ts·Tt: attention's price. 0 for a
 * configuration check() rejects. */
static double rnnattn_flops(const config *c, size_t Ts, size_t Tt)
{
    const rnnattn_cell *cell = rnnattn_cell_of(c);
    if (!cell)
        return 0.0;
    const double E = (double)c->embed, H = (double)c->hidden, A = (double)c->attn;
    const double V = (double)config_vocab(c), ts = (double)Ts, tt = (double)Tt;
    const double dirs = c->bidirectional ? 2.0 : 1.0, K = dirs * H;
    double f = dirs * cell->layer_flops(E, H, ts) + cell->layer_flops(E + K, H, tt) +
               addattn_flops(A, H, K, ts, tt) + tt * model_output_flops(H + K, V) +
               E * (dirs * ts + tt);
    if (c->bidirectional)
        f += 6.0 * H * H + 4.0 * H + ts * 2.0 * H;
    return f;
}

/* Small sizes, all different: E = 5, H = 6, A = 7. */
static void rnnattn_gradcheck_sizes(config *c)
{
    c->embed = 5;
    c->hidden = 6;
    c->attn = 7;
}

/* The GRU cell (the default) and the LSTM cell of the controlled experiment. */
/* The GRU cell (the default), the LSTM cell of the controlled experiment, and RNNsearch's
 * bidirectional encoder with each cell. */
/* The control (compare --preset control): the model as it is (GRU cell), and with the
 * LSTM's cell, the arm the plain LSTM widened to equal parameters is set against; and the
 * positions experiment's reference: a model with no positions at all, its order carried
 * by its recurrence. */
static const char *const rnnattn_control[] = {"", "cell=lstm", NULL};
static const char *const rnnattn_positions[] = {"", NULL};

/* Bahdanau et al.'s RNNsearch (compare --preset bahdanau): its encoder reads the source
 * both ways, each annotation the two directions' states side by side. */
static const char *const rnnattn_bahdanau[] = {"bidirectional=1", NULL};

/* The headline (compare --preset full): the rate of the learning-rate sweep with the
 * fewest steps to 0.99 (docs/figures/lrsweep/sweep.tsv), its recipe's own. */
static const char *const rnnattn_full[] = {"lr=0.001", NULL};

static const model_sweep rnnattn_sweeps[] = {
    {"full", rnnattn_full, NULL},
    {"control", rnnattn_control, NULL},
    {"bahdanau", rnnattn_bahdanau, "RNNsearch"},
    {"positions", rnnattn_positions, NULL},
    {NULL, NULL, NULL},
};

static const char *const rnnattn_variants[] = {"", "cell=lstm", "bidirectional=1",
                                               "bidirectional=1 cell=lstm", NULL};

/* What rnnattn_trace sends: the alignment, drawn by plots/attention.gp. */
static const model_trace_kind rnnattn_traces[] = {
    {"alignment", "attention_rnn", MODEL_TRACE_ATTENTION, 0,
     "Additive attention: row t is where output t looked in the source.",
     "加性注意力：第 t 行是写出输出 t 时在源序列中看向哪里。"},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const model_ops rnnattn_ops = {
    .name = "rnn_attention",
    .about = "GRU encoder-decoder with additive attention (Bahdanau et al. 2015); "
             "--cell lstm for the LSTM ablation, --bidirectional for RNNsearch's encoder",
    .title = "RNN with attention",
    .attends = 1,
    .small = "embed=16 hidden=32 attn=32",
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
    .sweeps = rnnattn_sweeps,
    .traces = rnnattn_traces,
};
