/* lstm_model.c — the model `lstm` as the harness sees it: its configuration, its
 * parameters, its run-time state and its table of operations (the passes are
 * lstm_pass.c, greedy decoding and the trace lstm_decode.c; the layer lstm_layer.c, the
 * cell lstm_cell.c). The model: embedding → LSTM encoder → its final (h, c) starts the
 * LSTM decoder → linear layer to the vocabulary (Sutskever, Vinyals & Le 2014, without
 * their deep stacks; the PyTorch twin is Lstm in tests/pytorch/twin.py).
 *
 * Three structs, three concerns (lstm.h): the configuration (struct model's cfg), the
 * weights (lstm_params: views into the arena, once for values w and once for gradients g)
 * and the run-time state (lstm_state: every activation of a step, reserved once).
 *
 * Parameters. One visit function (visit_params, over common/core/walk.h) names every tensor
 * once: walk_build builds the arena from it and hands out the views, walk_count counts
 * them without allocating. Arena order, the order of checkpoints:
 *     enc.embed enc.Wx enc.Wh enc.b  dec.embed dec.Wx dec.Wh dec.b  out.W out.b
 * and, with feed_context, dec.Wc last (the tensors of the other runs keep their place).
 *
 * State layout. One layout function (state_layout) asks common/core/carve.h for every array,
 * doubles and token ints, at the reserved sizes; carve_reserve allocates the two blocks
 * and keeps the old ones when it cannot. All activations are time-major (step, batch, ·)
 * so that one step of the batch is a block of B contiguous rows. Encoder and decoder
 * share one array per kind:
 *     P, dP     (2·(V+1), 4H)      the tables embed·Wxᵀ + b of the encoder, then of the
 *                                  decoder (lstm.h): a step's input part is a row of one
 *                                  picked by the token
 *     Act, dPre ((Ts+Tt)·B, 4H)    gates of the Ts encoder steps, then the Tt decoder ones
 *     Hs, Cs, dHs, dCs ((Ts+1+Tt)·B, H)
 *               blocks 0..Ts     encoder states h_0 = 0, h_1 .. h_Ts
 *               blocks Ts..Ts+Tt decoder states: its h_0 IS block Ts
 *     Kc, dKc   (B, 4H)            feed_context only, after the rest: h_Ts·Wcᵀ
 * The encoder's last state and the decoder's first are one block of memory: forward needs
 * no copy to start the decoder, and in backward the decoder's gradient of its initial state
 * lands directly where the encoder reads the gradient of its last one. That block is the
 * only path from the source to the output — the bottleneck this model exists to show.
 *
 * Invariant: reserve() sizes every array for the largest (B, Ts, Tt) asked for; a call
 * with smaller sizes uses the front of each array, so no step ever allocates.
 */
#include "lstm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/carve.h"
#include "../common/core/tensor.h"
#include "../common/core/walk.h"

/* ---- configuration ------------------------------------------------------------------ */

static void lstm_defaults(config *c)
{
    /* canonical sizes (DESIGN: ~170k parameters, comparable with the other two models) */
    c->embed = 32;
    c->hidden = 128;
    c->forget_bias = 1.0; /* Gers et al. 2000; Jozefowicz et al. 2015 */
    c->emb_init = 1.0;    /* N(0, 1), as PyTorch's nn.Embedding */
    /* Adam at 3e-3: the fastest of 1e-3, 3e-3, 5e-3 and 1e-2 on copy 4:32 (seed 1:
     * validation token accuracy 0.80 at 10,000 steps with 1e-3, 0.93 with 3e-3 and 0.95
     * with 5e-3, 0.97 at 17,000 with 3e-3; docs/compare.md, "Recipes") */
    c->lr = 3e-3;
    c->clip = 1.0;
    c->batch = 32;
}

/* The settings this model reads. */
static const char *const lstm_fields[] = {"symbols", "embed", "hidden", "forget_bias",
                                          "emb_init", "feed_context"};

/* Holds every setting this model reads to the range of its line in the configuration
 * table (config.c), so no range is written twice. */
static int lstm_check(const config *c, char *err, size_t n)
{
    return config_check_fields(c, "lstm", lstm_fields,
                               sizeof lstm_fields / sizeof lstm_fields[0], err, n);
}

/* ---- the parameter walk -------------------------------------------------------------- */

/* One LSTM layer's Wx (4H, E), Wh (4H, H), b (1, 4H), called prefix.Wx, ... */
static void visit_layer(walk *wk, lstm_weights *w, lstm_weights *g, const char *prefix,
                        size_t E, size_t H)
{
    walk_tensor(wk, &w->Wx, &g->Wx, prefix, "Wx", 4 * H, E);
    walk_tensor(wk, &w->Wh, &g->Wh, prefix, "Wh", 4 * H, H);
    walk_tensor(wk, &w->b, &g->b, prefix, "b", 1, 4 * H);
}

/* The one place where the parameters are named and shaped, in arena order (lstm_init
 * draws in an order of its own). ctx is the lstm_model; passes 1, 2 read only its cfg. */
static void visit_params(walk *wk, void *ctx)
{
    lstm_model *m = ctx;
    const config *c = &m->head.cfg;
    const size_t V = config_vocab(c), E = c->embed, H = c->hidden;
    walk_tensor(wk, &m->w.enc_embed, &m->g.enc_embed, "enc", "embed", V, E);
    visit_layer(wk, &m->w.enc, &m->g.enc, "enc", E, H);
    walk_tensor(wk, &m->w.dec_embed, &m->g.dec_embed, "dec", "embed", V, E);
    visit_layer(wk, &m->w.dec, &m->g.dec, "dec", E, H);
    walk_tensor(wk, &m->w.out_W, &m->g.out_W, "out", "W", V, H);
    walk_tensor(wk, &m->w.out_b, &m->g.out_b, "out", "b", 1, V);
    if (c->feed_context) /* c·Wcᵀ: the summary's part of every decoder step */
        walk_tensor(wk, &m->w.dec_Wc, &m->g.dec_Wc, "dec", "Wc", 4 * H, H);
}

/* ---- the state layout ---------------------------------------------------------------- */

/* What state_layout lays out: the arrays of s, for the model m, at sizes (B, Ts, Tt) (a
 * scratch state while carve_reserve counts: a refused reservation leaves the live one as
 * it was). */
typedef struct lstm_state_shape {
    lstm_state *s;       /* whose array pointers are set */
    const lstm_model *m; /* its configuration decides the widths */
    size_t B, Ts, Tt;    /* the capacity: batch, source and target lengths */
} lstm_state_shape;

/* The one table of the state arrays and their sizes, in block order. */
static void state_layout(carver *c, void *ctx)
{
    const lstm_state_shape *p = ctx;
    lstm_state *s = p->s;
    const size_t V = config_vocab(&p->m->head.cfg), H = p->m->head.cfg.hidden;
    const size_t G = 4 * H, Tmax = p->Ts > p->Tt ? p->Ts : p->Tt;
    if (p->Tt == SIZE_MAX || p->Ts > SIZE_MAX - 1 - p->Tt)
        c->overflow = 1; /* Ts + Tt + 1 does not fit: carve_reserve refuses */
    /* rows: all steps (Ts+Tt)·B, all states (Ts+1+Tt)·B, decoder outputs Tt·B */
    const size_t steps = carve_mul(c, p->Ts + p->Tt, p->B);
    const size_t states = carve_mul(c, p->Ts + p->Tt + 1, p->B);
    const size_t outs = carve_mul(c, p->Tt, p->B);
    const size_t nP = carve_mul(c, 2 * V, G), nA = carve_mul(c, steps, G);
    const size_t nH = carve_mul(c, states, H), nL = carve_mul(c, outs, V);
    s->P = carve_vector(c, nP);
    s->dP = carve_vector(c, nP);
    s->Act = carve_vector(c, nA);
    s->dPre = carve_vector(c, nA);
    s->Hs = carve_vector(c, nH);
    s->Cs = carve_vector(c, nH);
    s->dHs = carve_vector(c, nH);
    s->dCs = carve_vector(c, nH);
    s->logits = carve_vector(c, nL);
    s->dlogits = carve_vector(c, nL);
    s->trace = carve_vector(c, carve_mul(c, Tmax, H));
    s->ids = carve_ints(c, steps);
    s->tgt = carve_ints(c, outs);
    s->pred = carve_ints(c, outs);
    if (p->m->head.cfg.feed_context) { /* after every other array: theirs stay in place */
        s->Kc = carve_vector(c, carve_mul(c, p->B, G));
        s->dKc = carve_vector(c, carve_mul(c, p->B, G));
    }
}

void lstm_make_views(lstm_views *v, const lstm_model *m, size_t B, size_t Ts, size_t Tt)
{
    const lstm_state *s = &m->s;
    const size_t H = m->head.cfg.hidden, G = 4 * H, V = config_vocab(&m->head.cfg);
    const size_t es = Ts * B, ds = Tt * B; /* rows of encoder, decoder steps */
    v->Pe = gsl_matrix_view_array(s->P, V, G);
    v->Pd = gsl_matrix_view_array(s->P + V * G, V, G);
    v->dPe = gsl_matrix_view_array(s->dP, V, G);
    v->dPd = gsl_matrix_view_array(s->dP + V * G, V, G);
    v->Ae = gsl_matrix_view_array(s->Act, es, G);
    v->Ad = gsl_matrix_view_array(s->Act + es * G, ds, G);
    v->dAe = gsl_matrix_view_array(s->dPre, es, G);
    v->dAd = gsl_matrix_view_array(s->dPre + es * G, ds, G);
    /* the decoder's state arrays start at encoder block Ts: the shared bridge block */
    v->He = gsl_matrix_view_array(s->Hs, es + B, H);
    v->Ce = gsl_matrix_view_array(s->Cs, es + B, H);
    v->dHe = gsl_matrix_view_array(s->dHs, es + B, H);
    v->dCe = gsl_matrix_view_array(s->dCs, es + B, H);
    v->Hd = gsl_matrix_view_array(s->Hs + es * H, ds + B, H);
    v->Cd = gsl_matrix_view_array(s->Cs + es * H, ds + B, H);
    v->dHd = gsl_matrix_view_array(s->dHs + es * H, ds + B, H);
    v->dCd = gsl_matrix_view_array(s->dCs + es * H, ds + B, H);
    v->Hout = gsl_matrix_view_array(s->Hs + (es + B) * H, ds, H);
    v->dHout = gsl_matrix_view_array(s->dHs + (es + B) * H, ds, H);
    v->logits = gsl_matrix_view_array(s->logits, ds, V);
    v->dlogits = gsl_matrix_view_array(s->dlogits, ds, V);
    if (m->head.cfg.feed_context) {
        v->Kc = gsl_matrix_view_array(s->Kc, B, G);
        v->dKc = gsl_matrix_view_array(s->dKc, B, G);
    }
}

/* ---- alloc, free, init, reserve ------------------------------------------------------ */

/* The walk builds the arena (values and gradients, zeroed) and points m->w, m->g into it.
 * NULL for a configuration check() rejects, or when memory runs out. */
static model *lstm_alloc(const config *c)
{
    char err[160];
    if (lstm_check(c, err, sizeof err) != 0)
        return NULL;
    lstm_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->head.ops = &lstm_ops;
    m->head.cfg = *c;
    if (walk_build(&m->head.params, visit_params, m) != 0) {
        free(m);
        return NULL;
    }
    return &m->head;
}

static void lstm_free(model *mm)
{
    lstm_model *m = (lstm_model *)mm;
    if (!m)
        return;
    arena_free(&m->head.params);
    carve_free(&m->s.blk);
    free(m);
}

static void lstm_init(model *mm, gsl_rng *r)
{
    lstm_model *m = (lstm_model *)mm;
    const config *c = &mm->cfg;
    /* PyTorch's nn.LSTM and nn.Linear: U(−1/√H, 1/√H), H the fan-in of the recurrent
     * and output weights (nn.LSTM uses 1/√H for Wx too). nn.Embedding: N(0, 1). */
    const double k = 1.0 / sqrt((double)c->hidden);
    gsl_matrix *normal[] = {m->w.enc_embed, m->w.dec_embed};
    gsl_matrix *uniform[] = {m->w.enc.Wx, m->w.enc.Wh, m->w.dec.Wx, m->w.dec.Wh,
                             m->w.out_W, m->w.out_b};
    for (size_t i = 0; i < 2; i++)
        op_normal(normal[i]->data, normal[i]->size1 * normal[i]->size2, c->emb_init, r);
    for (size_t i = 0; i < 6; i++)
        model_uniform(uniform[i], k, r);
    lstm_init_bias(m->w.enc.b, k, c->forget_bias, r);
    lstm_init_bias(m->w.dec.b, k, c->forget_bias, r);
    /* drawn last, so that every other tensor gets the draws it gets without it */
    if (c->feed_context)
        model_uniform(m->w.dec_Wc, k, r);
}

/* Grows the state to the largest of each size asked so far (it never shrinks). The new
 * blocks replace the old only once both exist: on failure (a size that overflows, no
 * memory) the old reservation, and the last forward in it, stay usable. */
static int lstm_reserve(model *mm, size_t B, size_t Ts, size_t Tt)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    if (B == 0 || Ts == 0 || Tt == 0)
        return -1;
    if (B <= s->cap.B && Ts <= s->cap.Ts && Tt <= s->cap.Tt)
        return 0;
    lstm_state counted = {0}; /* what the counting pass writes: only NULLs */
    lstm_state_shape p = {&counted, m, B > s->cap.B ? B : s->cap.B,
                          Ts > s->cap.Ts ? Ts : s->cap.Ts, Tt > s->cap.Tt ? Tt : s->cap.Tt};
    if (carve_reserve(&s->blk, state_layout, &p) != 0)
        return -1;
    p.s = s; /* the new blocks exist: take the views */
    carver c = carve_start(&s->blk);
    state_layout(&c, &p);
    s->cap = (model_sizes){p.B, p.Ts, p.Tt};
    s->has_forward = 0; /* the arrays are new: there is no forward to differentiate */
    return 0;
}

/* ---- cost and size ------------------------------------------------------------------ */

/* Per sequence, by the conventions of MODEL FLOPS (common/core/model.h):
 *   the encoder, Ts steps of the layer on E-wide inputs, and the decoder, Tt steps
 *             (lstm_layer_flops, lstm.h: T·(24H·(E + H) + 41H) each);
 *   the output layer and the loss, per target position (model_output_flops:
 *             6·H·V + 9V + 5);
 *   with feed_context, h_Ts·Wcᵀ once per sequence with its two gradients (6·4H·H) and
 *             its gradient summed over the Tt steps (4H per step).
 * The passes read each step's input part x·Wxᵀ + b from a table of V rows
 * (lstm_table_forward): its products and its bias are work of the batch, not of a
 * sequence, so each step is counted as the layer does it, which is the same count per
 * step for what the table leaves: 4 additions per unit (the table's row added in
 * instead of the bias) and 4 in backward (the row scattered into dP instead of summed
 * into db). */
static double lstm_flops(const config *c, size_t Ts, size_t Tt)
{
    const double E = (double)c->embed, H = (double)c->hidden, V = (double)config_vocab(c);
    const double tt = (double)Tt;
    double f = lstm_layer_flops(E, H, (double)Ts) + lstm_layer_flops(E, H, tt) +
               tt * model_output_flops(H, V);
    if (c->feed_context)
        f += 6.0 * 4 * H * H + tt * 4 * H;
    return f;
}

/* The size of the arena c implies, from the same walk that builds it, run on a model
 * skeleton on the stack (only its cfg is read; nothing is allocated). */
static size_t lstm_n_params(const config *c)
{
    lstm_model skeleton = {.head.cfg = *c};
    return walk_count(visit_params, &skeleton);
}

/* Small sizes, all different: E = 5, H = 6 (4H = 24). */
static void lstm_gradcheck_sizes(config *c)
{
    c->embed = 5;
    c->hidden = 6;
}

/* The defaults (the summary starts the decoder) and Cho et al.'s feed_context (the summary
 * is also an input of every decoder step). */
static const char *const lstm_variants[] = {"", "feed_context=1", NULL};

/* What lstm_trace sends: the gates and cells of the encoder (enc.*) and of the decoder
 * (dec.*), drawn by plots/gates.gp. */
static const model_trace_kind lstm_traces[] = {
    {"enc.", "gates", MODEL_TRACE_ACTIVATION, 0,
     "The LSTM has no attention: its gates are its own, step-by-step way of choosing what "
     "to keep.",
     "LSTM 没有注意力：它靠自己的门一步一步地决定保留什么。"},
    {"dec.", "gates", MODEL_TRACE_ACTIVATION, 0, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* The trace's unit axis: the H units of the state. */
static size_t lstm_trace_units(const config *c) { return c->hidden; }

/* The capacity sweep: the state from a quarter to twice its canonical width (at 512 a
 * step costs about 12 times one at 128: hours per seed on lengths 4:32). */
static const char *const lstm_capacity[] = {"hidden=32", "hidden=64", "hidden=128",
                                            "hidden=256", NULL};

/* The control: the plain LSTM as it is, and widened to 166 units, where it has the
 * parameters of rnn_attention with an LSTM cell (266,813 against 266,955; a test holds
 * the arms of every model's control within 5% of each other), so that the attention
 * model's lead is not a lead in parameters. */
static const char *const lstm_control[] = {"", "hidden=166", NULL};

/* Bahdanau et al.'s RNNencdec (compare --preset bahdanau): the decoder reads the
 * encoder's summary at every step, as Cho et al. 2014's decoder does. */
static const char *const lstm_bahdanau[] = {"feed_context=1", NULL};

/* The headline (compare --preset full): the rate of the learning-rate sweep with the
 * fewest steps to 0.99 (docs/figures/lrsweep/sweep.tsv), its recipe's own. */
static const char *const lstm_full[] = {"lr=0.003", NULL};

static const model_sweep lstm_sweeps[] = {
    {"full", lstm_full, NULL},
    {"capacity", lstm_capacity, NULL},
    {"control", lstm_control, NULL},
    {"bahdanau", lstm_bahdanau, "RNNencdec"},
    {NULL, NULL, NULL},
};

const model_ops lstm_ops = {
    .name = "lstm",
    .about = "LSTM encoder-decoder: one fixed-size state carries the whole source; "
             "--feed-context gives it to every decoder step",
    .title = "LSTM",
    .attends = 0,
    .small = "embed=16 hidden=64",
    .defaults = lstm_defaults,
    .check = lstm_check,
    .alloc = lstm_alloc,
    .free = lstm_free,
    .init = lstm_init,
    .reserve = lstm_reserve,
    .forward = lstm_forward,
    .backward = lstm_backward,
    .decode = lstm_decode,
    .trace = lstm_trace,
    .n_params = lstm_n_params,
    .flops = lstm_flops,
    .gradcheck_sizes = lstm_gradcheck_sizes,
    .variants = lstm_variants,
    .traces = lstm_traces,
    .trace_units = lstm_trace_units,
    .sweeps = lstm_sweeps,
};
