/* lstm_model.c — the model `lstm`: embedding → LSTM encoder → its final (h, c) starts the
 * LSTM decoder → linear layer to the vocabulary (Sutskever, Vinyals & Le 2014, without
 * their deep stacks; the PyTorch twin is LSTMSeq2Seq in shared/reference/models.py).
 *
 * Three structs, three concerns: the configuration (struct model's cfg), the weights
 * (lstm_params: views into the arena, once for values and once for gradients) and the
 * run-time state (lstm_state: every activation of a step, reserved once).
 *
 * State layout. All activations are time-major (step, batch, ·) so that one step of the
 * batch is a block of B contiguous rows. Encoder and decoder share one array per kind:
 *     P, dP     (2·(V+1), 4H)      the projection tables embed·Wxᵀ + b of the encoder,
 *                                  then of the decoder (lstm.h): the input part of a step
 *                                  is a row of its table, picked by the token
 *     Act, dPre ((Ts+Tt)·B, 4H)    gates of the Ts encoder steps, then the Tt decoder ones
 *     Hs, Cs, dHs, dCs ((Ts+1+Tt)·B, H)
 *               blocks 0..Ts     encoder states h_0 = 0, h_1 .. h_Ts
 *               blocks Ts..Ts+Tt decoder states: its h_0 IS block Ts
 * The encoder's last state and the decoder's first are one block of memory: forward needs
 * no copy to start the decoder, and in backward the decoder's gradient of its initial state
 * lands directly where the encoder reads the gradient of its last one. That block is the
 * only path from the source to the output — the bottleneck this model exists to show.
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

#include "../common/tensor.h"

/* ---- configuration and the size table ---------------------------------------------- */

/* Every parameter tensor, in arena order. */
enum {
    P_ENC_EMBED, P_ENC_WX, P_ENC_WH, P_ENC_B,
    P_DEC_EMBED, P_DEC_WX, P_DEC_WH, P_DEC_B,
    P_OUT_W, P_OUT_B,
    P_COUNT
};

/* The one place where the parameter shapes are written. */
static void param_table(arena_spec s[P_COUNT], const config *c)
{
    const size_t V = config_vocab(c), E = c->embed, H = c->hidden;
    const struct {
        const char *name;
        size_t rows, cols;
    } t[P_COUNT] = {
        [P_ENC_EMBED] = {"enc.embed", V, E},  [P_ENC_WX] = {"enc.Wx", 4 * H, E},
        [P_ENC_WH] = {"enc.Wh", 4 * H, H},    [P_ENC_B] = {"enc.b", 1, 4 * H},
        [P_DEC_EMBED] = {"dec.embed", V, E},  [P_DEC_WX] = {"dec.Wx", 4 * H, E},
        [P_DEC_WH] = {"dec.Wh", 4 * H, H},    [P_DEC_B] = {"dec.b", 1, 4 * H},
        [P_OUT_W] = {"out.W", V, H},          [P_OUT_B] = {"out.b", 1, V},
    };
    for (size_t k = 0; k < P_COUNT; k++) {
        snprintf(s[k].name, sizeof s[k].name, "%s", t[k].name);
        s[k].rows = t[k].rows;
        s[k].cols = t[k].cols;
    }
}

static void lstm_defaults(config *c)
{
    /* canonical sizes (DESIGN: ~170k parameters, comparable with the other two models) */
    c->embed = 32;
    c->hidden = 128;
    c->forget_bias = 1.0; /* Gers et al. 2000; Jozefowicz et al. 2015 */
    c->emb_init = 1.0;    /* N(0, 1), as PyTorch's nn.Embedding */
    /* the recipe of shared/reference/train_copy.py */
    c->lr = 1e-3;
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

/* Views of every parameter (or of every gradient: same shapes). */
typedef struct lstm_params {
    gsl_matrix *enc_embed; /* (V+1, E) source token embeddings */
    lstm_weights enc;      /* Wx (4H, E), Wh (4H, H), b (1, 4H) */
    gsl_matrix *dec_embed; /* (V+1, E) decoder input embeddings */
    lstm_weights dec;      /* Wx (4H, E), Wh (4H, H), b (1, 4H) */
    gsl_matrix *out_W;     /* (V+1, H) */
    gsl_matrix *out_b;     /* (1, V+1) */
} lstm_params;

/* Every activation of a step; capacities cap_* are what reserve() made room for. */
typedef struct lstm_state {
    size_t cap_B, cap_Ts, cap_Tt;
    size_t B, Ts, Tt; /* sizes of the last forward, what backward differentiates; B = 0
                         when there is none (decode reuses the same arrays) */
    double *mem;      /* one block holding every array below */
    int *imem;        /* one block holding the token arrays */
    double *P, *dP;         /* (2·(V+1), 4H) encoder table, then decoder table */
    double *Act, *dPre;     /* ((Ts+Tt)·B, 4H) */
    double *Hs, *Cs;        /* ((Ts+1+Tt)·B, H) */
    double *dHs, *dCs;      /* ((Ts+1+Tt)·B, H) */
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
    lstm_params g;     /* their gradients */
    lstm_state s;
} lstm_model;

/* Binds p to the arena's values (grad = 0) or gradients (grad = 1). */
static void bind_params(lstm_params *p, arena *a, int grad)
{
    gsl_matrix *(*get)(arena *, size_t) = grad ? arena_g : arena_w;
    p->enc_embed = get(a, P_ENC_EMBED);
    p->enc = (lstm_weights){get(a, P_ENC_WX), get(a, P_ENC_WH), get(a, P_ENC_B)};
    p->dec_embed = get(a, P_DEC_EMBED);
    p->dec = (lstm_weights){get(a, P_DEC_WX), get(a, P_DEC_WH), get(a, P_DEC_B)};
    p->out_W = get(a, P_OUT_W);
    p->out_b = get(a, P_OUT_B);
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
    const size_t H = m->head.cfg.hidden, G = 4 * H;
    const size_t V = config_vocab(&m->head.cfg);
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
    arena_spec spec[P_COUNT];
    param_table(spec, c);
    if (arena_alloc(&m->head.params, spec, P_COUNT) != 0) {
        free(m);
        return NULL;
    }
    bind_params(&m->w, &m->head.params, 0);
    bind_params(&m->g, &m->head.params, 1);
    return &m->head;
}

static void lstm_free(model *mm)
{
    lstm_model *m = (lstm_model *)mm;
    if (!m)
        return;
    arena_free(&m->head.params);
    free(m->s.mem);
    free(m->s.imem);
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

/* *out = a·b; returns -1 when that overflows size_t. */
static int mul_size(size_t *out, size_t a, size_t b)
{
    if (b != 0 && a > SIZE_MAX / b)
        return -1;
    *out = a * b;
    return 0;
}

/* Lays arrays out one after another in one calloc'ed block of doubles: *at[k] gets n[k]
 * of them. Returns the block, or NULL when the total overflows or memory runs out. */
static double *carve(double **const at[], const size_t n[], size_t count)
{
    size_t total = 0;
    for (size_t k = 0; k < count; k++) {
        if (n[k] > SIZE_MAX / sizeof(double) - total)
            return NULL;
        total += n[k];
    }
    double *block = calloc(total, sizeof(double)), *p = block;
    if (!block)
        return NULL;
    for (size_t k = 0; k < count; k++) {
        *at[k] = p;
        p += n[k];
    }
    return block;
}

static int lstm_reserve(model *mm, size_t B, size_t Ts, size_t Tt)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    if (B == 0 || Ts == 0 || Tt == 0)
        return -1;
    if (B <= s->cap_B && Ts <= s->cap_Ts && Tt <= s->cap_Tt)
        return 0;
    /* grow to the largest of each size asked so far: a reservation never shrinks */
    B = B > s->cap_B ? B : s->cap_B;
    Ts = Ts > s->cap_Ts ? Ts : s->cap_Ts;
    Tt = Tt > s->cap_Tt ? Tt : s->cap_Tt;

    /* rows: all steps (Ts+Tt)·B, all states (Ts+1+Tt)·B, decoder outputs Tt·B */
    const size_t H = mm->cfg.hidden, V = config_vocab(&mm->cfg);
    const size_t Tmax = Ts > Tt ? Ts : Tt;
    size_t steps, states, outs, nP, nA, nH, nL, nT;
    if (Ts > SIZE_MAX - 1 - Tt || mul_size(&steps, Ts + Tt, B) ||
        mul_size(&states, Ts + Tt + 1, B) || mul_size(&outs, Tt, B) ||
        mul_size(&nP, 2 * V, 4 * H) || mul_size(&nA, steps, 4 * H) ||
        mul_size(&nH, states, H) ||
        mul_size(&nL, outs, V) || mul_size(&nT, Tmax, H))
        return -1;

    /* The one table of the state arrays and their sizes; filled into a new state that
     * replaces the old one only once both blocks exist, so a failure leaves the old
     * reservation usable. */
    lstm_state n = {0};
    double **const arrays[] = {&n.P,   &n.dP,  &n.Act,    &n.dPre,    &n.Hs,   &n.Cs,
                               &n.dHs, &n.dCs, &n.logits, &n.dlogits, &n.trace};
    const size_t sizes[] = {nP, nP, nA, nA, nH, nH, nH, nH, nL, nL, nT};
    n.mem = carve(arrays, sizes, sizeof sizes / sizeof sizes[0]);
    /* tokens: ids (Ts+Tt)·B, then tgt and pred Tt·B each; outs <= steps, so 3·steps
     * bounds the total */
    if (steps <= SIZE_MAX / sizeof(int) / 3)
        n.imem = calloc(steps + 2 * outs, sizeof(int));
    if (!n.mem || !n.imem) {
        free(n.mem);
        free(n.imem);
        return -1;
    }
    n.ids = n.imem;
    n.tgt = n.ids + steps;
    n.pred = n.tgt + outs;
    free(s->mem);
    free(s->imem);
    *s = n;
    s->cap_B = B;
    s->cap_Ts = Ts;
    s->cap_Tt = Tt;
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

/* The encoder: reads src (B, Ts) and runs the LSTM from h_0 = c_0 = 0, leaving its final
 * state in block Ts of Hs, Cs, where the decoder starts. With keep, Ae holds the gates of
 * every step after (for backward and trace); without, its first block is rewritten by
 * every step. Returns -1 on a bad token. */
static int encode(lstm_model *m, lstm_views *v, const int *src, size_t B, size_t Ts, int keep)
{
    const size_t H = m->head.cfg.hidden;
    if (op_tokens_time_major(m->s.ids, src, B, Ts, config_vocab(&m->head.cfg)) != 0)
        return -1;
    /* the input part of row i of every step is Pe row ids[i], Pe = enc.embed·Wxᵀ + b */
    lstm_table_forward(&v->Pe.matrix, m->w.enc_embed, &m->w.enc);
    memset(m->s.Hs, 0, B * H * sizeof(double)); /* h_0 = 0 */
    memset(m->s.Cs, 0, B * H * sizeof(double)); /* c_0 = 0 */
    gsl_matrix_view act = keep ? v->Ae : lstm_block(&v->Ae.matrix, 0, B);
    lstm_recur_forward_table(&v->He.matrix, &v->Ce.matrix, &act.matrix, m->w.enc.Wh,
                             &v->Pe.matrix, m->s.ids, Ts);
    return 0;
}

/* logits (N, V+1) = Hout (N, H) · out.Wᵀ (H, V+1) + out.b */
static void output_forward(gsl_matrix *logits, const gsl_matrix *Hout, const lstm_params *w)
{
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, Hout, w->out_W, 0.0, logits);
    op_add_bias(logits, w->out_b);
}


/* ---- forward and backward ----------------------------------------------------------- */

/* Reports through GSL's error handler, and returns NaN, when the batch does not fit the
 * reservation or holds a token outside the vocabulary. */
static double lstm_forward(model *mm, const batch *b, int *pred)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt;
    if (!fits(s, B, Ts, Tt))
        GSL_ERROR_VAL("lstm forward: batch sizes outside the reservation", GSL_EBADLEN, NAN);
    lstm_views v;
    make_views(&v, m, B, Ts, Tt);
    s->B = 0; /* until this forward is complete there is nothing to differentiate */

    /* the decoder's tokens to time-major (each checked), then the encoder */
    int *dec_ids = s->ids + Ts * B;
    if (op_tokens_time_major(dec_ids, b->dec_in, B, Tt, config_vocab(&mm->cfg)) != 0 ||
        op_tokens_time_major(s->tgt, b->tgt, B, Tt, config_vocab(&mm->cfg)) != 0 ||
        encode(m, &v, b->src, B, Ts, 1) != 0)
        GSL_ERROR_VAL("lstm forward: token outside the vocabulary", GSL_EDOM, NAN);

    /* decoder, teacher-forced: it reads (BOS, y_1 .. y_{Tt−1}), all known up front, each
     * step's input part a row of its own table */
    lstm_table_forward(&v.Pd.matrix, m->w.dec_embed, &m->w.dec);
    lstm_recur_forward_table(&v.Hd.matrix, &v.Cd.matrix, &v.Ad.matrix, m->w.dec.Wh,
                             &v.Pd.matrix, dec_ids, Tt);

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

/* Reports through GSL's error handler, and does nothing, unless the last call was a
 * forward of a batch of these sizes. */
static int lstm_backward(model *mm, const batch *b)
{
    lstm_model *m = (lstm_model *)mm;
    lstm_state *s = &m->s;
    const size_t B = b->B, Ts = b->Ts, Tt = b->Tt, H = mm->cfg.hidden;
    if (s->B == 0 || B != s->B || Ts != s->Ts || Tt != s->Tt)
        GSL_ERROR_VAL("lstm backward: no forward of this batch to differentiate", GSL_EINVAL, -1);
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

/* Greedy decoding, shared by decode() and trace(). With keep, every step's gates stay in
 * its block of Act, as forward leaves them, for trace() to read; without, each layer
 * rewrites one block, which stays in cache. Reports through GSL's error handler and
 * returns -1 when the sizes do not fit the reservation or src holds a token outside the
 * vocabulary; else 0. */
static int greedy(lstm_model *m, const int *src, size_t B, size_t Ts, size_t Tt, int keep,
                  int *out)
{
    lstm_state *s = &m->s;
    const config *cfg = &m->head.cfg;
    if (!fits(s, B, Ts, Tt))
        GSL_ERROR_VAL("lstm decode: sizes outside the reservation", GSL_EBADLEN, -1);
    const size_t V = config_vocab(cfg);
    lstm_views v;
    make_views(&v, m, B, Ts, Tt);
    s->B = 0; /* the arrays now hold a decode: nothing for backward */

    if (encode(m, &v, src, B, Ts, keep) != 0)
        GSL_ERROR_VAL("lstm decode: token outside the vocabulary", GSL_EDOM, -1);

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
                                m->w.dec.Wh, &v.Pd.matrix, y + (t - 1) * B);
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

static int lstm_decode(model *mm, const int *src, size_t B, size_t Ts, size_t Tt, int *out)
{
    return greedy((lstm_model *)mm, src, B, Ts, Tt, 0, out);
}

/* ---- trace ---------------------------------------------------------------------------- */

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

/* ---- cost ------------------------------------------------------------------------------ */

/* Per sequence, 2 flops per multiply-add of every product (element-wise work ignored):
 * forward, each of the Ts + Tt steps: x·Wxᵀ (2·4H·E) and h·Whᵀ (2·4H·H); each of the Tt
 * decoder steps: h·out.Wᵀ (2·(V+1)·H). Backward forms two products per forward product
 * (the input gradient and the weight gradient) of the same size, so a training step costs
 * 3× the forward — the count shared/reference/bench_torch.py uses. */
static double lstm_flops(const config *c, size_t Ts, size_t Tt)
{
    const double E = (double)c->embed, H = (double)c->hidden, V = (double)config_vocab(c);
    const double fwd = (double)(Ts + Tt) * (2.0 * 4 * H * E + 2.0 * 4 * H * H) +
                       (double)Tt * 2.0 * V * H;
    return 3.0 * fwd;
}

/* The size of the arena c implies, from the one size table. */
static size_t lstm_n_params(const config *c)
{
    arena_spec spec[P_COUNT];
    size_t n = 0;
    param_table(spec, c);
    for (size_t k = 0; k < P_COUNT; k++)
        n += spec[k].rows * spec[k].cols;
    return n;
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
