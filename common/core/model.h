/* model.h — the interface every model implements (prefix: model_).
 *
 * A model is a table of function pointers (model_ops) plus a common head (struct model)
 * that each implementation embeds as its first member, so a pointer to the
 * implementation's struct is also a pointer to its struct model. The harness (training,
 * evaluation, checkpoints, traces, the command line) reaches a model only through this
 * table; it never includes a model's own header. A registry (model_registry) maps names
 * to tables.
 *
 * Data. Token ids are ints: 0..V-1 data symbols, V = BOS (config_bos). Every batch has
 * one source length Ts and one target length Tt (no padding). The decoder reads
 * dec_in = (BOS, y_1, ..., y_{Tt-1}) under teacher forcing and must predict tgt =
 * (y_1, ..., y_Tt). Matrices of tokens are row-major (B, T): entry b*T + t.
 *
 * Call order. alloc → init (or load weights) → reserve(B, Ts, Tt) → any number of
 * forward [→ backward] or decode calls with sizes within the reservation. All memory of
 * a step is allocated in reserve, so forward, backward and decode never allocate.
 *
 * Error contract (every model keeps it; tests/test_models.c holds each one to it).
 *   - A token outside [0, V) in a source, a decoder input or a target, sizes outside the
 *     reservation, or a backward without its forward is the caller's input, not a bug:
 *     the model reports it with GSL_ERROR (a message naming what was wrong) and returns
 *     its error value — NaN from forward, -1 from backward, decode and trace — having
 *     read nothing out of bounds and written no gradient. Nothing on such a path asserts.
 *   - GSL's default handler would abort the process on that report. The program and the
 *     tests install model_error_handler instead (model_catch_errors), which keeps the
 *     message for model_last_error(); the caller turns the error value into a runtime
 *     error (exit status 1) that quotes it.
 *   - A GSL routine inside a pass reports through the same handler: gsl_blas_dgemm given
 *     matrices whose shapes do not agree calls it and returns GSL_EBADLEN without
 *     computing anything. The passes do not test the status of each product (a pass
 *     would then be more error plumbing than algebra); instead the harness calls a model
 *     only through model_forward, model_backward, model_decode and model_trace, and each
 *     of them is one operation: it clears the last error, makes the call, and when
 *     anything reported an error during it, the call fails with its error value even if
 *     the pass itself returned normally, and model_last_error() names the routine's
 *     reason. Such an error is a bug of the pass, never an input, so it is checked once
 *     per call instead of once per product: the partial results of that call are thrown
 *     away (a training step that hit it stops before the update).
 *   - A NaN from model_forward with model_last_error() empty is the arithmetic's own (a
 *     weight or an activation is not finite): nothing was refused. model_failure()
 *     words both cases for a message.
 *   - assert() is kept for invariants no input can reach (a size table that disagrees
 *     with itself), and only in debug builds matters.
 */
#ifndef ATTNLAB_MODEL_H
#define ATTNLAB_MODEL_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#include "config.h"
#include "tensor.h"

typedef struct batch {
    size_t B, Ts, Tt;
    int *src;    /* (B, Ts) source tokens */
    int *dec_in; /* (B, Tt) decoder input: BOS then the target shifted right */
    int *tgt;    /* (B, Tt) target tokens */
} batch;

/* Where a model sends the matrices it records for visualisation. name says what the
 * matrix is (e.g. "alignment", "enc_self.l0.h1", "gate_f"); rows and cols say which axis
 * carries which tokens: "src" (source tokens), "tgt" (decoded tokens), "unit" (hidden
 * units) so the writer can label them. Returns 0, or -1 to stop. */
typedef int (*trace_sink)(void *ctx, const char *name, const gsl_matrix *m,
                          const char *rows, const char *cols);

typedef struct model model;

/* What a kind of matrix a model's trace sends is, for a report (model_ops.traces): the
 * matrices whose names begin with prefix feed the figure called figure (plots/FIGURE.gp
 * draws it from the trace folder); an attention map is shown with its weights as tables
 * under the figure, an activation (a gate, a cell state) as the heat map only. about and
 * about_zh, when not NULL, are a sentence the page adds to the figure's caption (in
 * English and in Chinese): what this model's matrices show there. */
typedef enum { MODEL_TRACE_ATTENTION, MODEL_TRACE_ACTIVATION } model_trace_what;
typedef struct model_trace_kind {
    const char *prefix;  /* the start of the matrices' names, e.g. "alignment", "enc_self." */
    const char *figure;  /* the figure they feed, e.g. "attention_rnn" */
    model_trace_what what;
    int masked;          /* 1: a causal mask hides the keys after each query */
    const char *about, *about_zh;
} model_trace_kind;

/* A model's setups in one of compare's sweeping presets: settings in the form of variants
 * ("" the defaults), each at most one key=value away from the defaults. */
typedef struct model_sweep {
    const char *preset;          /* the preset that trains them: "capacity", "control" ... */
    const char *const *settings; /* NULL-terminated */
    /* The name a paper gives a model trained at one of these settings, e.g. "RNNsearch"
     * for Bahdanau et al.'s (letters and digits only), or NULL: a report names such a
     * model's runs after it and their longest training length ("RNNsearch-50"). */
    const char *label;
} model_sweep;

typedef struct model_ops {
    const char *name;  /* registry name, as --model takes it */
    const char *about; /* one line for help */
    const char *title; /* the name prose gives it, e.g. in a page's headline */
    /* 1 when the decoder attends to the encoder's states at every step (an attention
     * model); 0 when one fixed-size state carries the whole source to it. */
    int attends;

    /* Sets this model's canonical sizes and default optimiser recipe in c. */
    void (*defaults)(config *c);
    /* Validates the sizes this model reads; on error writes one line naming the flag and
     * the accepted values and returns -1. */
    int (*check)(const config *c, char *err, size_t n);
    /* Allocates the model with its parameter arena (zeroed) and fills the head: ops (this
     * table) and cfg (a copy of c). NULL when out of memory. */
    model *(*alloc)(const config *c);
    void (*free)(model *m);
    /* Draws initial weights from r. */
    void (*init)(model *m, gsl_rng *r);
    /* Makes the workspace large enough for batches of up to B sequences of lengths up to
     * Ts and Tt (forward/backward and decode); a reservation never shrinks (smaller sizes
     * keep the larger workspace). Returns 0, or -1 when out of memory or when the sizes
     * overflow; the reservation before a failed one stays usable. */
    int (*reserve)(model *m, size_t B, size_t Ts, size_t Tt);
    /* Teacher-forced forward pass: returns the mean cross-entropy over the B·Tt target
     * tokens and, when pred is not NULL, writes the argmax token of each position (B, Tt).
     * Keeps what backward needs. */
    double (*forward)(model *m, const batch *b, int *pred);
    /* Backward pass of the last forward on the same batch: accumulates (+=) the gradient
     * of the mean loss into the gradient arena. Returns 0, or -1 (error contract) when the
     * last forward, decode or trace call was not a successful forward of a batch of these
     * sizes: a refused forward, a decode or a trace leaves nothing to differentiate. A
     * second backward after one forward accumulates the same gradient again. */
    int (*backward)(model *m, const batch *b);
    /* Greedy decoding of Tt tokens for each of B sources (B, Ts), feeding back its own
     * predictions; writes out (B, Tt). Returns 0, or -1 (error contract). */
    int (*decode)(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out);
    /* Decodes one example greedily (Tt tokens into out) and sends the matrices worth
     * seeing (attention maps, gates) to sink. NULL when the model records nothing. */
    int (*trace)(model *m, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
                 void *ctx);
    /* The number of parameters the configuration c implies, found from the model's size
     * table without allocating anything: a checkpoint loader compares it with the file
     * before it would allocate a model whose size an untrusted file decides. */
    size_t (*n_params)(const config *c);
    /* Analytic floating-point operations of one training step (forward and backward) for
     * one sequence of lengths Ts, Tt, counted by the conventions below (MODEL FLOPS). */
    double (*flops)(const config *c, size_t Ts, size_t Tt);
    /* Sets in c the sizes of a gradient check: small, and all different from each other
     * (a transposed index cannot hide behind equal sides), every other setting as
     * defaults() left it. */
    void (*gradcheck_sizes)(config *c);
    /* The variants a test or a gradient check should cover: a NULL-terminated list of
     * settings, each a space-separated list of key=value (config.h's keys); the first
     * is "" (the defaults), then e.g. "post_ln=1". */
    const char *const *variants;
    /* The kinds of matrix trace sends, ended by one whose prefix is NULL; NULL when it
     * sends none. */
    const model_trace_kind *traces;
    /* The longest axis of numbered labels (an axis "unit" of trace_sink) the trace sends
     * for configuration c; NULL when it sends none. */
    size_t (*trace_units)(const config *c);
    /* The model's setups in compare's sweeping presets (capacity: its sizes; control:
     * the arms of the experiment at equal parameters; positions: the position schemes),
     * ended by one whose preset is NULL; NULL when it sweeps nothing (compare then trains
     * it once at its defaults, or leaves it out: docs/compare.md). */
    const model_sweep *sweeps;
    /* Settings (key=value words) of a small model of this kind, a few thousand parameters
     * that learn copy at lengths up to 8 in seconds: the page's "small" preset; NULL: the
     * model offers none (its defaults are used). */
    const char *small;
} model_ops;

/* The head every model embeds first. */
struct model {
    const model_ops *ops;
    config cfg;    /* the configuration it was built from */
    arena params;  /* parameters and gradients */
};

/* The registry: a NULL-terminated list of every model, defined next to main(). */
extern const model_ops *const model_registry[];

/* The table called name, or NULL. */
const model_ops *model_lookup(const char *name);

/* The settings model ops trains under compare's preset called preset (model_sweep), or
 * NULL when it lists none for it. */
const char *const *model_sweep_of(const model_ops *ops, const char *preset);

/* Comma-separated names of every registered model (for messages). */
const char *model_names(void);

/* Position of the model called name in the registry (the order tables and figures list
 * models in), or the number of registered models when there is none of that name. */
size_t model_rank(const char *name);

/* A GSL error handler that never aborts: it keeps "reason (file:line)" for
 * model_last_error() (see the error contract above). */
void model_error_handler(const char *reason, const char *file, int line, int gsl_errno);

/* Installs model_error_handler as GSL's error handler. */
void model_catch_errors(void);

/* The message of the last error reported through GSL since the current operation began
 * (model_forward and its siblings, or model_clear_error), or "" when none was. */
const char *model_last_error(void);

/* ---- what the models share (the models call these; the harness does not) -------------- */

/* Sizes of a batch or of a reservation: B sequences, source length Ts, target length Tt. */
typedef struct model_sizes {
    size_t B, Ts, Tt;
} model_sizes;

/* Block k of a time-major matrix m (row t·B + b holds sequence b at step t): rows
 * [k·B, (k+1)·B), one step of the whole batch, as a view of B rows and m's columns. */
static inline gsl_matrix_view model_block(gsl_matrix *m, size_t k, size_t B)
{
    return gsl_matrix_submatrix(m, k * B, 0, B, m->size2);
}

/* The same block of a const matrix (GSL's const view type is const-qualified; its
 * functions return the bare struct). */
static inline _gsl_matrix_const_view model_const_block(const gsl_matrix *m, size_t k, size_t B)
{
    return gsl_matrix_const_submatrix(m, k * B, 0, B, m->size2);
}

/* 1 when a call of sizes (B, Ts, Tt), each at least 1, fits the reservation cap; else 0. */
int model_fits(model_sizes cap, size_t B, size_t Ts, size_t Tt);

/* The opening of every forward, decode and trace (the error contract above). Ends the
 * forward backward could differentiate (*has_forward = 0: the call is about to overwrite
 * it), then refuses, in this order, sizes call = (B, Ts, Tt) outside the reservation cap
 * and a token outside [0, V) in src (B·Ts), dec_in and tgt (B·Tt); dec_in and tgt may be
 * NULL (decode and trace read a source only). A refusal goes through GSL_ERROR with a
 * message that begins with who (the model and the call) and names what was wrong, and
 * returns -1; else 0. No token is read before the sizes are known to fit. */
int model_open_call(const char *who, int *has_forward, model_sizes cap, model_sizes call,
                    size_t V, const int *src, const int *dec_in, const int *tgt);

/* The opening of every backward: refuses (GSL_ERROR naming who, -1) unless the state holds
 * a whole forward (has_forward) of b's sizes (last: the sizes of that forward) and b's
 * source and decoder-input tokens lie in [0, V) (they name the rows of the embeddings'
 * gradients); else 0. */
int model_open_backward(const char *who, int has_forward, model_sizes last, size_t V,
                        const batch *b);

/* The close of every forward whose rows are time-major (row t·B + b): the mean
 * cross-entropy of logits (Tt·B, V) against the targets tgt (Tt·B), its gradient
 * (softmax − onehot)/(Tt·B) written into dlogits (Tt·B, V) for backward, and, when pred
 * is not NULL, the argmax of each row into pred_tm (Tt·B) and from there into pred
 * (B, Tt) batch-major. Then records call as the sizes of the last forward (*last) and
 * marks it whole (*has_forward = 1): backward may differentiate it. Returns the loss. */
double model_close_forward(const gsl_matrix *logits, const int *tgt, gsl_matrix *dlogits,
                           int *pred_tm, int *pred, model_sizes call, model_sizes *last,
                           int *has_forward);

/* MODEL FLOPS. The conventions of every analytic count (model_ops.flops, and the one
 * layer of layerbench.h): 2 per multiply-add of a matrix product (its accumulation into
 * an output that already holds a sum, beta = 1, counts nothing more); 1 per addition,
 * subtraction, multiplication, division or comparison of the element-wise work; 1 per
 * evaluation of exp, log, sqrt, tanh or σ; a sum or a maximum over n terms counts n. The
 * element-wise work is counted as the passes do it: biases, gates, the attention's
 * scores, scalings, masks and softmaxes and their backward, layer norms, ReLUs, the
 * loss. A backward product is counted as two products of its forward's size (the
 * input's gradient and the weight's), so the products of a step are 3× the forward's.
 * Left out: the work of a batch that is not the work of its sequences (the optimizer,
 * the mean of the loss, a table of V rows shared by the batch), and copies and zeroing. */

/* The output layer of one target position, forward and backward: logits = x·Wᵀ + b over
 * V classes from x of `in` features, and the cross-entropy of op_cross_entropy (tensor.h)
 * with its gradient:
 *   products  x·Wᵀ, dx = dz·W, dW += dzᵀ·x                          → 6·in·V
 *   element-wise  the bias and its gradient (2V); the loss: maximum (V − 1), z − max,
 *             exp and sum (3V), log and + max (2), lse − z_target into the total (2);
 *             its gradient: exp(z − lse)/N (3V), − 1/N at the target (2)  → 9V + 5 */
double model_output_flops(double in, double V);

/* Fills the (rows, cols) matrix x, row by row, with draws from U(−k, k) (op_uniform): the
 * initialisation of PyTorch's recurrent and linear layers. x must be contiguous (an arena
 * view is). */
void model_uniform(gsl_matrix *x, double k, const gsl_rng *r);

/* Forgets the last error: a new operation begins. */
void model_clear_error(void);

/* Why the last operation failed, for a message: model_last_error(), or, when it is empty
 * (a forward whose loss came out NaN with nothing refused), a sentence saying so. */
const char *model_failure(void);

/* The four calls of a model, each one operation (error contract above): the last error
 * is cleared, m->ops->NAME is called with the same arguments, and the result is its
 * error value (NaN, -1) when the model refused or when a GSL routine reported an error
 * while it ran. model_trace returns -1 when the model has no trace. */
double model_forward(model *m, const batch *b, int *pred);
int model_backward(model *m, const batch *b);
int model_decode(model *m, const int *src, size_t B, size_t Ts, size_t Tt, int *out);
int model_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out, trace_sink sink,
                void *ctx);

#endif
