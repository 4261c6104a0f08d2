/* lstm_model.c — the model `lstm`: embedding → LSTM encoder → its final (h, c) starts the
 * LSTM decoder → linear layer to the vocabulary (Sutskever, Vinyals & Le 2014, without
 * their deep stacks; the PyTorch twin is Lstm in tests/pytorch/twin.py).
 *
 * Three structs, three concerns: the configuration (struct model's cfg), the weights
 * (lstm_params: views into the arena, once for values w and once for gradients g) and
 * the run-time state (lstm_state: every activation of a step, reserved once).
 *
 * Parameters. One visit function (visit_params, over common/walk.h) names every tensor
 * once: walk_build builds the arena from it and hands out the views, walk_count counts
 * them without allocating. Arena order, the order of checkpoints:
 *     enc.embed enc.Wx enc.Wh enc.b  dec.embed dec.Wx dec.Wh dec.b  out.W out.b
 *
 * State layout. One layout function (layout_state) asks common/carve.h for every array,
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
 * The encoder's last state and the decoder's first are one block of memory: forward needs
 * no copy to start the decoder, and in backward the decoder's gradient of its initial state
 * lands directly where the encoder reads the gradient of its last one. That block is the
 * only path from the source to the output — the bottleneck this model exists to show.
 *
 * Errors (common/model.h). Every entry point checks its sizes against the reservation and
 * every token it will read (source, decoder input, target) before it writes anything;
 * a refusal goes through GSL_ERROR and returns NaN (forward) or -1 (backward, decode,
 * trace). Only a forward that completed leaves something for backward (s.B ≠ 0).
 *
 * Invariant: reserve() sizes every array for the largest (B, Ts, Tt) asked for; a call
 * with smaller sizes uses the front of each array, so no step ever allocates.
 */
#include "lstm.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/carve.h"
#include "../common/tensor.h"
#include "../common/walk.h"

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
                                          "emb_init"};

/* Holds every setting this model reads to the range of its line in the configuration
 * table (config.c), so no range is written twice. */
static int lstm_check(const config *c, char *err, size_t n)
{
    return config_check_fields(c, "lstm", lstm_fields,
                               sizeof lstm_fields / sizeof lstm_fields[0], err, n);
}

/* ---- the three structs --------------------------------------------------------------- */

/* Views of every parameter (or of every gradient: same shapes), in arena order. */
typedef struct lstm_params {
    gsl_matrix *enc_embed; /* (V+1, E) source token embeddings */
    lstm_weights enc;      /* Wx (4H, E), Wh (4H, H), b (1, 4H) of the encoder */
    gsl_matrix *dec_embed; /* (V+1, E) decoder input embeddings */
    lstm_weights dec;      /* Wx (4H, E), Wh (4H, H), b (1, 4H) of the decoder */
    gsl_matrix *out_W;     /* (V+1, H) output layer */
    gsl_matrix *out_b;     /* (1, V+1) its bias */
} lstm_params;

/* Every activation of a step, cut from blk at the capacity (cap_B, cap_Ts, cap_Tt). */
typedef struct lstm_state {
    carve_block blk;        /* the two blocks every array below lies in */
    size_t cap_B, cap_Ts, cap_Tt; /* the largest batch and lengths reserved for */
    size_t B, Ts, Tt;       /* sizes of the last forward, what backward differentiates;
                               B = 0 when there is none (decode reuses the same arrays) */
    double *P, *dP;         /* (2·(V+1), 4H) encoder table, then decoder table */
    double *Act, *dPre;     /* ((Ts+Tt)·B, 4H) gates, gradients of the pre-activations */
    double *Hs, *Cs;        /* ((Ts+1+Tt)·B, H) hidden and cell states */
    double *dHs, *dCs;      /* ((Ts+1+Tt)·B, H) their gradients */
    double *logits;         /* (Tt·B, V+1) */
    double *dlogits;        /* (Tt·B, V+1) written by forward, read by backward */
    double *trace;          /* (max(Ts, Tt), H) one gate matrix, contiguous, for trace() */
    int *ids;               /* ((Ts+Tt)·B) source then decoder-input tokens, time-major */
    int *tgt;               /* (Tt·B) targets, time-major */
    int *pred;              /* (Tt·B) argmax tokens, time-major */
} lstm_state;

typedef struct lstm_model {
    struct model head; /* first: a lstm_model * is a model * */
    lstm_params w;     /* parameter values */
    lstm_params g;     /* their gradients (same shapes) */
    lstm_state s;      /* run-time state */
} lstm_model;

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
}

/* ---- the state layout ---------------------------------------------------------------- */

/* What layout_state lays out: the sizes, and the state whose pointers it sets (a scratch
 * one while carve_reserve counts: a refused reservation leaves the live one as it was). */
typedef struct lstm_plan {
    lstm_state *s; /* receives the arrays */
    size_t V, H;   /* V+1 tokens (config_vocab), hidden size */
    size_t B, Ts, Tt; /* the capacity: batch, source and target lengths */
} lstm_plan;

/* The one table of the state arrays and their sizes, in block order. */
static void layout_state(carver *c, void *ctx)
{
    const lstm_plan *p = ctx;
    lstm_state *s = p->s;
    const size_t G = 4 * p->H, Tmax = p->Ts > p->Tt ? p->Ts : p->Tt;
    if (p->Tt == SIZE_MAX || p->Ts > SIZE_MAX - 1 - p->Tt)
        c->overflow = 1; /* Ts + Tt + 1 does not fit: carve_reserve refuses */
    /* rows: all steps (Ts+Tt)·B, all states (Ts+1+Tt)·B, decoder outputs Tt·B */
    const size_t steps = carve_mul(c, p->Ts + p->Tt, p->B);
    const size_t states = carve_mul(c, p->Ts + p->Tt + 1, p->B);
    const size_t outs = carve_mul(c, p->Tt, p->B);
    const size_t nP = carve_mul(c, 2 * p->V, G), nA = carve_mul(c, steps, G);
    const size_t nH = carve_mul(c, states, p->H), nL = carve_mul(c, outs, p->V);
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
    s->trace = carve_vector(c, carve_mul(c, Tmax, p->H));
    s->ids = carve_ints(c, steps);
    s->tgt = carve_ints(c, outs);
    s->pred = carve_ints(c, outs);
}

/* The workspace seen at one batch's sizes: views into the front of each state array. */
typedef struct lstm_views {
    gsl_matrix_view Pe, Pd, dPe, dPd; /* (V+1, 4H) projection tables and their gradients */
    gsl_matrix_view Ae, Ad, dAe, dAd; /* (Ts·B, 4H), (Tt·B, 4H) gates, d pre-activations */
    gsl_matrix_view He, Ce, dHe, dCe; /* ((Ts+1)·B, H) encoder h_0..h_Ts */
    gsl_matrix_view Hd, Cd, dHd, dCd; /* ((Tt+1)·B, H) decoder h_0..h_Tt, h_0 = enc h_Ts */
    gsl_matrix_view Hout, dHout;      /* (Tt·B, H) decoder h_1..h_Tt: the output's input */
    gsl_matrix_view logits, dlogits;  /* (Tt·B, V+1) */
} lstm_views;

static void make_views(lstm_views *v, const lstm_model *m, size_t B, size_t Ts, size_t Tt)
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

void lstm_init_bias(gsl_matrix *b, double k, double forget_bias, const gsl_rng *r)
{
    const size_t G = b->size2, H = G / 4;
    for (size_t j = 0; j < G; j++) {
        double b_ih = k * (2.0 * gsl_rng_uniform(r) - 1.0);
        double b_hh = k * (2.0 * gsl_rng_uniform(r) - 1.0);
        b->data[j] = b_ih + b_hh;
    }
    for (size_t j = H; j < 2 * H; j++)
        b->data[j] = forget_bias;
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
        op_uniform(uniform[i]->data, uniform[i]->size1 * uniform[i]->size2, k, r);
    lstm_init_bias(m->w.enc.b, k, c->forget_bias, r);
    lstm_init_bias(m->w.dec.b, k, c->forget_bias, r);
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
    if (B <= s->cap_B && Ts <= s->cap_Ts && Tt <= s->cap_Tt)
        return 0;
    lstm_state counted = {0}; /* what the counting pass writes: only NULLs */
    lstm_plan p = {&counted, config_vocab(&mm->cfg), mm->cfg.hidden,
                   B > s->cap_B ? B : s->cap_B, Ts > s->cap_Ts ? Ts : s->cap_Ts,
                   Tt > s->cap_Tt ? Tt : s->cap_Tt};
    if (carve_reserve(&s->blk, layout_state, &p) != 0)
        return -1;
    p.s = s; /* the new blocks exist: take the views */
    carver c = carve_start(&s->blk);
    layout_state(&c, &p);
    s->cap_B = p.B;
    s->cap_Ts = p.Ts;
    s->cap_Tt = p.Tt;
    s->B = 0; /* the arrays are new: there is no forward to differentiate */
    return 0;
}

/* ---- pieces shared by forward, decode and trace ------------------------------------ */

/* Does the reservation hold a call of these sizes (all at least 1)? */
static int fits(const lstm_state *s, size_t B, size_t Ts, size_t Tt)
{
    return B >= 1 && Ts >= 1 && Tt >= 1 && B <= s->cap_B && Ts <= s->cap_Ts &&
           Tt <= s->cap_Tt;
}

/* The encoder: reads src (B, Ts), its tokens already checked, and runs the LSTM from
 * h_0 = c_0 = 0, leaving its final state in block Ts of Hs, Cs, where the decoder starts.
 * With keep, Ae holds the gates of every step after (for backward and trace); without,
 * its first block is rewritten by every step. */
static void encode(lstm_model *m, lstm_views *v, const int *src, size_t B, size_t Ts,
                   int keep)
{
    const size_t H = m->head.cfg.hidden;
    (void)op_tokens_time_major(m->s.ids, src, B, Ts, config_vocab(&m->head.cfg));
    /* the input part of row i of every step is Pe row ids[i], Pe = enc.embed·Wxᵀ + b */
    lstm_table_forward(&v->Pe.matrix, m->w.enc_embed, &m->w.enc);
    memset(m->s.Hs, 0, B * H * sizeof(double)); /* h_0 = 0 */
    memset(m->s.Cs, 0, B * H * sizeof(double)); /* c_0 = 0 */
    gsl_matrix_view act = keep ? v->Ae : lstm_block(&v->Ae.matrix, 0, B);
    lstm_recur_forward_table(&v->He.matrix, &v->Ce.matrix, &act.matrix, &v->Pe.matrix,
                             m->s.ids, m->w.enc.Wh, Ts);
}

/* logits (N,V+1) = Hout (N,H) · out.Wᵀ (H,V+1), then + out.b (why: lstm_input_forward) */
static void output_forward(gsl_matrix *logits, const gsl_matrix *Hout, const lstm_params *w)
{
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, Hout, w->out_W, 0.0, logits);
    op_add_bias(logits, w->out_b);
}

/* ---- forward and backward ----------------------------------------------------------- */

/* Refuses (GSL error, NaN), before writing anything, a batch that does not fit the
 * reservation or holds a token outside the vocabulary: then backward has nothing. */
static double lstm_forward(model *mm, const batch *b, int *pred)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, V = config_vocab(&mm->cfg);
    s->B = 0; /* until this forward is complete there is nothing to differentiate */
    if (!fits(s, B, Ts, Tt))
        GSL_ERROR_VAL("lstm forward: batch sizes outside the reservation", GSL_EBADLEN, NAN);
    if (op_tokens_check(b->src, B * Ts, V) != 0)
        GSL_ERROR_VAL("lstm forward: source token outside the vocabulary", GSL_EDOM, NAN);
    if (op_tokens_check(b->dec_in, B * Tt, V) != 0)
        GSL_ERROR_VAL("lstm forward: decoder input token outside the vocabulary", GSL_EDOM,
                      NAN);
    if (op_tokens_check(b->tgt, B * Tt, V) != 0)
        GSL_ERROR_VAL("lstm forward: target token outside the vocabulary", GSL_EDOM, NAN);
    lstm_views v;
    make_views(&v, m, B, Ts, Tt);

    /* the decoder's tokens to time-major (checked above), then the encoder */
    int *dec_ids = s->ids + Ts * B;
    (void)op_tokens_time_major(dec_ids, b->dec_in, B, Tt, V);
    (void)op_tokens_time_major(s->tgt, b->tgt, B, Tt, V);
    encode(m, &v, b->src, B, Ts, 1);

    /* decoder, teacher-forced: it reads (BOS, y_1 .. y_{Tt−1}), all known up front, each
     * step's input part a row of its own table */
    lstm_table_forward(&v.Pd.matrix, m->w.dec_embed, &m->w.dec);
    lstm_recur_forward_table(&v.Hd.matrix, &v.Cd.matrix, &v.Ad.matrix, &v.Pd.matrix,
                             dec_ids, m->w.dec.Wh, Tt);

    /* logits (Tt·B, V+1) = [h_1 .. h_Tt] (Tt·B, H) · out.Wᵀ + out.b, all steps at once */
    output_forward(&v.logits.matrix, &v.Hout.matrix, &m->w);

    /* mean cross-entropy over the B·Tt targets; its gradient (softmax − onehot)/(B·Tt)
     * is formed here, while the exponentials are at hand, and kept for backward */
    double loss = op_cross_entropy(&v.logits.matrix, s->tgt, &v.dlogits.matrix,
                                   pred ? s->pred : NULL);
    if (pred)
        op_tokens_batch_major(pred, s->pred, B, Tt);
    s->B = B;
    s->Ts = Ts;
    s->Tt = Tt;
    return loss;
}

/* Refuses (GSL error, -1), writing no gradient, unless the last call was a forward that
 * completed on a batch of these sizes. */
static int lstm_backward(model *mm, const batch *b)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, H = mm->cfg.hidden;
    if (s->B == 0 || B != s->B || Ts != s->Ts || Tt != s->Tt)
        GSL_ERROR_VAL("lstm backward: no forward of this batch to differentiate", GSL_EINVAL,
                      -1);
    lstm_views v;
    make_views(&v, m, B, Ts, Tt);

    /* forward: logits = Hout · out.Wᵀ + out.b
     *   dHout  (Tt·B,H) = dlogits (Tt·B,V+1) · out.W (V+1,H)
     *   dout.W (V+1,H) += dlogitsᵀ (V+1,Tt·B) · Hout (Tt·B,H)
     *   dout.b (1,V+1) += Σ_rows dlogits
     * dHout is written, not accumulated: it is the only gradient that reaches the decoder
     * states from outside the decoder, and the layer's backward starts from it. */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, m->w.out_W, 0.0,
                   &v.dHout.matrix);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &v.dlogits.matrix, &v.Hout.matrix, 1.0,
                   m->g.out_W);
    op_bias_backward(m->g.out_b, &v.dlogits.matrix);

    /* Gradients reaching the states from outside the layers: none for the encoder's
     * states (blocks 0..Ts of dHs, the bridge included — the decoder will add its part),
     * none for any cell state (the loss reads only h). */
    memset(s->dHs, 0, (Ts + 1) * B * H * sizeof(double));
    memset(s->dCs, 0, (Ts + Tt + 1) * B * H * sizeof(double));

    /* Decoder first: it leaves in the bridge block the gradient of its initial state,
     * which is the encoder's upstream gradient of h_Ts and c_Ts. */
    lstm_recur_backward(m->g.dec.Wh, &v.dAd.matrix, &v.dHd.matrix, &v.dCd.matrix,
                        &v.Hd.matrix, &v.Cd.matrix, &v.Ad.matrix, m->w.dec.Wh, Tt);
    lstm_recur_backward(m->g.enc.Wh, &v.dAe.matrix, &v.dHe.matrix, &v.dCe.matrix,
                        &v.He.matrix, &v.Ce.matrix, &v.Ae.matrix, m->w.enc.Wh, Ts);

    /* forward: A row i = P row ids[i], P = embed·Wxᵀ + b   ⇒   dP = the rows of dA
     * added up by token, then dWx, db and dembed from dP (V rows, not T·B) */
    lstm_table_backward(m->g.dec_embed, &m->g.dec, &v.dPd.matrix, &v.dAd.matrix,
                        s->ids + Ts * B, m->w.dec_embed, &m->w.dec);
    lstm_table_backward(m->g.enc_embed, &m->g.enc, &v.dPe.matrix, &v.dAe.matrix, s->ids,
                        m->w.enc_embed, &m->w.enc);
    return 0;
}

/* ---- greedy decoding ----------------------------------------------------------------- */

/* Greedy decoding, shared by decode() and trace() (keep says which). With keep, every
 * step's gates stay in its block of Act, as forward leaves them, for trace() to read;
 * without, each layer rewrites one block, which stays in cache. Refuses (GSL error, -1),
 * before writing anything, sizes that do not fit the reservation and a source token
 * outside the vocabulary; else 0. */
static int greedy(lstm_model *m, const int *src, size_t B, size_t Ts, size_t Tt, int keep,
                  int *out)
{
    lstm_state *s = &m->s;
    const config *cfg = &m->head.cfg;
    const size_t V = config_vocab(cfg);
    s->B = 0; /* the arrays will hold a decode: nothing for backward */
    if (!fits(s, B, Ts, Tt))
        GSL_ERROR_VAL(keep ? "lstm trace: sizes outside the reservation"
                           : "lstm decode: sizes outside the reservation", GSL_EBADLEN, -1);
    if (op_tokens_check(src, B * Ts, V) != 0)
        GSL_ERROR_VAL(keep ? "lstm trace: source token outside the vocabulary"
                           : "lstm decode: source token outside the vocabulary",
                      GSL_EDOM, -1);
    lstm_views v;
    make_views(&v, m, B, Ts, Tt);
    encode(m, &v, src, B, Ts, keep);

    /* The decoder cannot know its inputs up front: input t+1 is the argmax of step t.
     * Its table is ready, though: each step reads B rows of it. The states and the
     * logits of each step go to the blocks forward would use. */
    lstm_table_forward(&v.Pd.matrix, m->w.dec_embed, &m->w.dec);
    int *y = s->ids + Ts * B; /* (Tt·B) block t−1: the input of step t */
    for (size_t i = 0; i < B; i++)
        y[i] = config_bos(cfg);
    for (size_t t = 1; t <= Tt; t++) {
        gsl_matrix_view a = lstm_block(&v.Ad.matrix, keep ? t - 1 : 0, B); /* (B,4H) */
        gsl_matrix_view h = lstm_block(&v.Hd.matrix, t, B);         /* (B,H) */
        gsl_matrix_view c = lstm_block(&v.Cd.matrix, t, B);
        gsl_matrix_view hp = lstm_block(&v.Hd.matrix, t - 1, B);
        gsl_matrix_view cp = lstm_block(&v.Cd.matrix, t - 1, B);
        gsl_matrix_view z = lstm_block(&v.logits.matrix, t - 1, B); /* (B,V+1) */

        lstm_cell_forward_table(&h.matrix, &c.matrix, &a.matrix, &hp.matrix, &cp.matrix,
                                &v.Pd.matrix, y + (t - 1) * B, m->w.dec.Wh);
        output_forward(&z.matrix, &h.matrix, &m->w);
        for (size_t i = 0; i < B; i++) {
            int tok = op_argmax(gsl_matrix_const_ptr(&z.matrix, i, 0), V);
            out[i * Tt + (t - 1)] = tok;
            if (t < Tt)
                y[t * B + i] = tok; /* fed back as the next input */
        }
    }
    return 0;
}

/* Returns greedy's status: 0, or -1 after a GSL error (the error contract). */
static int lstm_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    return greedy((lstm_model *)mm, src, B, Ts, Tt, 0, out);
}

/* ---- trace -------------------------------------------------------------------------- */

/* Decodes src (1, Ts) and sends the gates i, f, o and the cells of every step (lstm.h
 * names them). Returns 0, or -1 when greedy refused the call or the sink said stop. */
static int lstm_trace(model *mm, const int *src, size_t Ts, size_t Tt, int *out,
                      trace_sink sink, void *ctx)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t H = mm->cfg.hidden;
    if (greedy(m, src, 1, Ts, Tt, 1, out) != 0)
        return -1;

    /* With B = 1 a block is one row: Act rows 0..Ts−1 are the encoder's steps and rows
     * Ts..Ts+Tt−1 the decoder's; Cs rows 1..Ts and Ts+1..Ts+Tt their cell states. */
    const struct {
        const char *prefix, *rows;
        size_t first, n; /* first Act row, number of steps */
    } part[2] = {{"enc", "src", 0, Ts}, {"dec", "tgt", Ts, Tt}};
    static const struct {
        const char *name;
        size_t block; /* position in [i f g o] */
    } gate[3] = {{"gate_i", 0}, {"gate_f", 1}, {"gate_o", 3}};
    gsl_matrix_view act = gsl_matrix_view_array(s->Act, Ts + Tt, 4 * H);
    char name[ARENA_NAME_MAX];
    for (size_t p = 0; p < 2; p++) {
        /* a gate is a strided column block of Act; the sink gets a contiguous copy */
        gsl_matrix_view buf = gsl_matrix_view_array(s->trace, part[p].n, H);
        for (size_t k = 0; k < 3; k++) {
            gsl_matrix_const_view g = gsl_matrix_const_submatrix(
                &act.matrix, part[p].first, gate[k].block * H, part[p].n, H);
            gsl_matrix_memcpy(&buf.matrix, &g.matrix);
            snprintf(name, sizeof name, "%s.%s", part[p].prefix, gate[k].name);
            if (sink(ctx, name, &buf.matrix, part[p].rows, "unit") != 0)
                return -1;
        }
        gsl_matrix_const_view cell =
            gsl_matrix_const_view_array(s->Cs + (part[p].first + 1) * H, part[p].n, H);
        snprintf(name, sizeof name, "%s.cell", part[p].prefix);
        if (sink(ctx, name, &cell.matrix, part[p].rows, "unit") != 0)
            return -1;
    }
    return 0;
}

/* ---- cost and size ------------------------------------------------------------------ */

/* Per sequence, 2 flops per multiply-add of every product (element-wise work ignored):
 * forward, each of the Ts + Tt steps: x·Wxᵀ (2·4H·E) and h·Whᵀ (2·4H·H); each of the Tt
 * decoder steps: h·out.Wᵀ (2·(V+1)·H). Backward forms two products per forward product
 * (the input gradient and the weight gradient) of the same size, so a training step costs
 * 3× the forward. */
static double lstm_flops(const config *c, size_t Ts, size_t Tt)
{
    const double E = (double)c->embed, H = (double)c->hidden, V = (double)config_vocab(c);
    const double fwd = (double)(Ts + Tt) * (2.0 * 4 * H * E + 2.0 * 4 * H * H) +
                       (double)Tt * 2.0 * V * H;
    return 3.0 * fwd;
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

static const char *const lstm_variants[] = {"", NULL};

const model_ops lstm_ops = {
    .name = "lstm",
    .about = "LSTM encoder-decoder: one fixed-size state carries the whole source",
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
};
