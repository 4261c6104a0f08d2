/* rnnattn_cell.c — the two cells of `rnn_attention`, the GRU (gru.h) and the LSTM
 * (lstm/lstm.h), behind one table (rnnattn_cell in rnnattn.h).
 *
 * Design. The model's passes are written once: wherever the cell matters they call an
 * entry of the table the model chose when it was allocated, and the entry calls the
 * cell's own functions. Each entry is a thin adapter: it takes the blocks of one step, or
 * builds the cell's weight struct from the layer's views (rnnattn_rnn holds the same
 * matrices gru_weights and lstm_weights point to), and makes exactly the calls the cell's
 * module makes, in the same order, so the choice of cell costs nothing and changes no
 * result. The differences between the two cells are all here:
 *     GRU  — 3 gates; two biases bx, bh; keeps hp = h·Whᵀ + bh per step (HP), whose n
 *            third backward needs, so its recurrent gradients (dHP) differ from dAct;
 *     LSTM — 4 gates; one bias b; a cell state c beside h (Cs); the input and recurrent
 *            parts share one pre-activation, so dAct serves both.
 *
 * Invariant: an entry reads and writes only the arrays its cell keeps; the others (HP
 * for the LSTM, Cs for the GRU) arrive as empty matrices and are never touched.
 */
#include "rnnattn.h"

#include <gsl/gsl_blas.h>
#include <string.h>

#include "../common/core/tensor.h"
#include "../lstm/lstm.h"
#include "gru.h"

/* ---- GRU ------------------------------------------------------------------------------ */

static gru_weights gru_of(const rnnattn_rnn *w)
{
    return (gru_weights){w->Wx, w->Wh, w->bx, w->bh};
}

/* nn.GRU's initialisation: b_i, then b_h, each from U(−k, k). */
static void gru_init_bias(rnnattn_rnn *w, double k, double forget_bias, const gsl_rng *r)
{
    (void)forget_bias; /* a GRU has no forget gate */
    model_uniform(w->bx, k, r);
    model_uniform(w->bh, k, r);
}

static void gru_entry_layer_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act,
                                    gsl_matrix *HP, const gsl_matrix *X, const rnnattn_rnn *w,
                                    size_t B)
{
    (void)Cs;
    const gru_weights gw = gru_of(w);
    gru_layer_forward(Hs, Act, HP, X, &gw, B);
}

static void gru_entry_layer_backward(gsl_matrix *dX, rnnattn_rnn *dw, gsl_matrix *dAct,
                                     gsl_matrix *dHP, gsl_matrix *dHs, gsl_matrix *dCs,
                                     const gsl_matrix *X, const gsl_matrix *Hs,
                                     const gsl_matrix *Cs, const gsl_matrix *Act,
                                     const gsl_matrix *HP, const rnnattn_rnn *w, size_t B)
{
    (void)dCs, (void)Cs;
    gru_weights gdw = gru_of(dw);
    const gru_weights gw = gru_of(w);
    gru_layer_backward(dX, &gdw, dAct, dHP, dHs, X, Hs, Act, HP, &gw, B);
}

/* s_t = GRU(a_t, s_{t−1}): a_t (block t−1 of Act) becomes the gates, hp_t goes to HP. */
static void gru_entry_step_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act,
                                   gsl_matrix *HP, const rnnattn_rnn *w, size_t t, size_t B)
{
    (void)Cs;
    gsl_matrix_view s_prev = model_block(Hs, t - 1, B), s = model_block(Hs, t, B); /* (B,H) */
    gsl_matrix_view a = model_block(Act, t - 1, B), p = model_block(HP, t - 1, B); /* (B,3H) */
    gru_cell_forward(&s.matrix, &a.matrix, &p.matrix, &s_prev.matrix, w->Wh, w->bh);
}

static void gru_entry_step_backward(gsl_matrix *dAct, gsl_matrix *dHP, gsl_matrix *dHs,
                                    gsl_matrix *dCs, const gsl_matrix *Hs,
                                    const gsl_matrix *Cs, const gsl_matrix *Act,
                                    const gsl_matrix *HP, const rnnattn_rnn *w, size_t t,
                                    size_t B)
{
    (void)dCs, (void)Cs;
    gsl_matrix_view da = model_block(dAct, t - 1, B), dp = model_block(dHP, t - 1, B); /* (B,3H) */
    gsl_matrix_view ds = model_block(dHs, t, B), ds_prev = model_block(dHs, t - 1, B); /* (B,H) */
    _gsl_matrix_const_view a = model_const_block(Act, t - 1, B);
    _gsl_matrix_const_view p = model_const_block(HP, t - 1, B);
    _gsl_matrix_const_view s_prev = model_const_block(Hs, t - 1, B);
    gru_cell_backward(&da.matrix, &dp.matrix, &ds_prev.matrix, &ds.matrix, &a.matrix,
                      &p.matrix, &s_prev.matrix, w->Wh);
}

/* forward: a = x·Wxᵀ + bx,  hp = h_prev·Whᵀ + bh (every step)
 *   dWx (3H,In) += dActᵀ (3H,T·B) · X (T·B,In),      dbx += Σ_rows dAct
 *   dWh (3H,H)  += dHPᵀ (3H,T·B) · Hprev (T·B,H),    dbh += Σ_rows dHP
 * (dHP, not dAct: the n third of hp is scaled by r, so its gradient differs) */
static void gru_entry_weights_backward(rnnattn_rnn *dw, const gsl_matrix *dAct,
                                       const gsl_matrix *dHP, const gsl_matrix *X,
                                       const gsl_matrix *Hprev)
{
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dAct, X, 1.0, dw->Wx);
    op_bias_backward(dw->bx, dAct);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dHP, Hprev, 1.0, dw->Wh);
    op_bias_backward(dw->bh, dHP);
}

const rnnattn_cell rnnattn_cell_gru = {
    .name = "gru",
    .gates = 3,
    .biases = 2,
    .bias = {"bx", "bh"},
    .keeps_recurrent = 1,
    .has_cell_state = 0,
    .init_bias = gru_init_bias,
    .layer_forward = gru_entry_layer_forward,
    .layer_backward = gru_entry_layer_backward,
    .step_forward = gru_entry_step_forward,
    .step_backward = gru_entry_step_backward,
    .weights_backward = gru_entry_weights_backward,
    .layer_flops = gru_layer_flops,
};

/* ---- LSTM ------------------------------------------------------------------------------ */

static lstm_weights lstm_of(const rnnattn_rnn *w)
{
    return (lstm_weights){w->Wx, w->Wh, w->bx};
}

/* nn.LSTM's b_ih + b_hh, with the forget block at forget_bias, exactly as model lstm. */
static void lstm_entry_init_bias(rnnattn_rnn *w, double k, double forget_bias,
                                 const gsl_rng *r)
{
    lstm_init_bias(w->bx, k, forget_bias, r); /* (1, 4H) */
}

static void lstm_entry_layer_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act,
                                     gsl_matrix *HP, const gsl_matrix *X,
                                     const rnnattn_rnn *w, size_t B)
{
    (void)HP;
    const lstm_weights lw = lstm_of(w);
    lstm_layer_forward(Hs, Cs, Act, X, &lw, B);
}

static void lstm_entry_layer_backward(gsl_matrix *dX, rnnattn_rnn *dw, gsl_matrix *dAct,
                                      gsl_matrix *dHP, gsl_matrix *dHs, gsl_matrix *dCs,
                                      const gsl_matrix *X, const gsl_matrix *Hs,
                                      const gsl_matrix *Cs, const gsl_matrix *Act,
                                      const gsl_matrix *HP, const rnnattn_rnn *w, size_t B)
{
    (void)dHP, (void)HP;
    lstm_weights ldw = lstm_of(dw);
    const lstm_weights lw = lstm_of(w);
    lstm_layer_backward(dX, &ldw, dAct, dHs, dCs, X, Hs, Cs, Act, &lw, B);
}

/* (s_t, c_t) = LSTM(a_t, s_{t−1}, c_{t−1}): a_t (block t−1 of Act) becomes the gates. */
static void lstm_entry_step_forward(gsl_matrix *Hs, gsl_matrix *Cs, gsl_matrix *Act,
                                    gsl_matrix *HP, const rnnattn_rnn *w, size_t t, size_t B)
{
    (void)HP;
    gsl_matrix_view s_prev = model_block(Hs, t - 1, B), s = model_block(Hs, t, B);    /* (B,H) */
    gsl_matrix_view cs_prev = model_block(Cs, t - 1, B), cs = model_block(Cs, t, B); /* (B,H) */
    gsl_matrix_view a = model_block(Act, t - 1, B);                             /* (B,4H) */
    lstm_cell_forward(&s.matrix, &cs.matrix, &a.matrix, &s_prev.matrix, &cs_prev.matrix,
                      w->Wh);
}

static void lstm_entry_step_backward(gsl_matrix *dAct, gsl_matrix *dHP, gsl_matrix *dHs,
                                     gsl_matrix *dCs, const gsl_matrix *Hs,
                                     const gsl_matrix *Cs, const gsl_matrix *Act,
                                     const gsl_matrix *HP, const rnnattn_rnn *w, size_t t,
                                     size_t B)
{
    (void)dHP, (void)HP, (void)Hs; /* the LSTM's derivatives go through its gates and c */
    gsl_matrix_view da = model_block(dAct, t - 1, B);                              /* (B,4H) */
    gsl_matrix_view ds = model_block(dHs, t, B), ds_prev = model_block(dHs, t - 1, B);   /* (B,H) */
    gsl_matrix_view dcs = model_block(dCs, t, B), dcs_prev = model_block(dCs, t - 1, B); /* (B,H) */
    _gsl_matrix_const_view a = model_const_block(Act, t - 1, B);
    _gsl_matrix_const_view cs = model_const_block(Cs, t, B);
    _gsl_matrix_const_view cs_prev = model_const_block(Cs, t - 1, B);
    lstm_cell_backward(&da.matrix, &ds_prev.matrix, &dcs_prev.matrix, &ds.matrix,
                       &dcs.matrix, &a.matrix, &cs.matrix, &cs_prev.matrix, w->Wh);
}

/* forward: pre = x·Wxᵀ + h_prev·Whᵀ + b (every step): the two parts share dAct
 *   dWx (4H,In) += dActᵀ (4H,T·B) · X (T·B,In),      db += Σ_rows dAct
 *   dWh (4H,H)  += dActᵀ (4H,T·B) · Hprev (T·B,H) */
static void lstm_entry_weights_backward(rnnattn_rnn *dw, const gsl_matrix *dAct,
                                        const gsl_matrix *dHP, const gsl_matrix *X,
                                        const gsl_matrix *Hprev)
{
    (void)dHP;
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dAct, X, 1.0, dw->Wx);
    op_bias_backward(dw->bx, dAct);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dAct, Hprev, 1.0, dw->Wh);
}

const rnnattn_cell rnnattn_cell_lstm = {
    .name = "lstm",
    .gates = 4,
    .biases = 1,
    .bias = {"b", NULL},
    .keeps_recurrent = 0,
    .has_cell_state = 1,
    .init_bias = lstm_entry_init_bias,
    .layer_forward = lstm_entry_layer_forward,
    .layer_backward = lstm_entry_layer_backward,
    .step_forward = lstm_entry_step_forward,
    .step_backward = lstm_entry_step_backward,
    .weights_backward = lstm_entry_weights_backward,
    .layer_flops = lstm_layer_flops,
};

/* ---- the choice ---------------------------------------------------------------------- */

const rnnattn_cell *rnnattn_cell_of(const config *c)
{
    static const rnnattn_cell *const cells[] = {&rnnattn_cell_gru, &rnnattn_cell_lstm};
    for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++)
        if (strcmp(c->cell, cells[k]->name) == 0)
            return cells[k];
    return NULL;
}
