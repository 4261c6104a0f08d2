/* cmd_inspect.c — the commands that look into a model: eval (accuracy per length, or the
 * answers to your own input), gradcheck (the backward pass against finite differences)
 * and attention (the matrices of one example); train reuses the evaluation, the trace
 * and the measurement of the cost (cost.tsv).
 *
 * Design. eval and attention read a checkpoint, so the model's settings come from the
 * file and only the evaluation's own flags (and --seed, --threads) are taken; gradcheck
 * builds a small model from the settings like train, with the sizes of
 * ops->gradcheck_sizes between the model's defaults and the flags. A model reports bad
 * input by the error contract of model.h: decode and trace return -1 and
 * model_last_error() says why; here that becomes a runtime error quoting it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "bench.h"
#include "buildinfo.h"
#include "checkpoint.h"
#include "cli_args.h"
#include "cli_cmd.h"
#include "config.h"
#include "eval.h"
#include "gradcheck.h"
#include "infile.h"
#include "model.h"
#include "report.h"
#include "rng.h"
#include "safedir.h"
#include "task.h"

/* Prints n tokens of task t separated by spaces: numbers, or a file task's words. */
static void print_tokens(FILE *f, const task *t, size_t nsym, const int *x, size_t n)
{
    char word[DATASET_WORD_MAX + 1];
    for (size_t i = 0; i < n; i++) {
        task_symbol(t, nsym, x[i], word, sizeof word);
        fprintf(f, i ? " %s" : "%s", word);
    }
}

int cmd_data_lengths(const task *t, const char *flag, size_t *lens, size_t *nl)
{
    const dataset *d = t->data;
    size_t *all = malloc((d->max_Ts + 1) * sizeof *all);
    if (!all)
        return args_run_error("out of memory");
    const size_t na = dataset_lengths(d, DATASET_TEST, 1, d->max_Ts, all);
    int rc = 0;
    for (size_t k = 0; k < *nl && rc == 0; k++) {
        size_t i = 0;
        while (i < na && all[i] != lens[k])
            i++;
        if (i == na)
            rc = args_usage_error("%s: the test set of %s holds no source of length %zu "
                                  "(accepted: lengths from %zu to %zu that it holds; leave "
                                  "%s out for all of them)", flag, t->name, lens[k], all[0],
                                  all[na - 1], flag);
    }
    if (*nl == 0) {
        *nl = na < ARGS_MAX_LENGTHS ? na : ARGS_MAX_LENGTHS;
        memcpy(lens, all, *nl * sizeof *lens);
    }
    free(all);
    return rc;
}

/* ---- the evaluation (eval, and train at its end) ------------------------------------------ */

typedef struct eval_out {
    const char *model;
    const eval_result *r;
    size_t n;
} eval_out;

static int write_eval(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_tsv(f, e->model, e->r, e->n);
}

static int write_positions(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_positions_tsv(f, e->model, e->r, e->n);
}

int cmd_evaluate(model *m, const size_t *lens, size_t nl, size_t samples,
                 unsigned long seed, const char *dir, int print)
{
    char err[ARGS_ERR_MAX];
    eval_result *r = calloc(nl, sizeof *r);
    if (!r)
        return args_run_error("out of memory");
    const task *t = task_open(&m->cfg, err, sizeof err);
    const volatile sig_atomic_t *stop = &cmd_stop_signal;
    const int got = !t ? -1
                  : t->data ? eval_data_run(m, t, DATASET_TEST, lens, nl, stop, r, err,
                                            sizeof err)
                            : eval_run(m, t, lens, nl, samples, seed, stop, r, err, sizeof err);
    if (got != 0) {
        task_close(t);
        eval_free(r, nl);
        free(r);
        return got == EVAL_STOPPED ? cmd_stopped_status() : args_run_error("%s", err);
    }
    task_close(t);
    if (print)
        eval_print(stdout, m->ops->name, r, nl);
    int rc = 0;
    eval_out eo = {m->ops->name, r, nl};
    if (dir && (cmd_write_file(dir, "eval.tsv", write_eval, &eo) != 0 ||
                cmd_write_file(dir, "eval_positions.tsv", write_positions, &eo) != 0))
        rc = ARGS_EXIT_RUNTIME;
    eval_free(r, nl);
    free(r);
    return rc;
}

/* ---- attnlab eval ---------------------------------------------------------------------- */

/* Why eval --out refuses a run directory. */
#define EVAL_FILES "the run's own eval.tsv and eval_positions.tsv would be replaced"

void cmd_eval_help(void)
{
    printf(
        "Usage: attnlab eval --checkpoint FILE [--lengths SPEC] [--samples N] [--seed S]\n"
        "                    [--out DIR]\n"
        "       attnlab eval --checkpoint FILE --input FILE\n"
        "\n"
        "Evaluates a trained model by greedy decoding: at each length it draws fresh\n"
        "sequences (from an evaluation stream that training never uses), lets the model\n"
        "decode them feeding back its own predictions, and reports token accuracy,\n"
        "whole-sequence accuracy and the teacher-forced loss. With --out it also writes\n"
        "eval.tsv and eval_positions.tsv (accuracy at each output position) into DIR,\n"
        "which must not hold a run of attnlab train: the run's own eval.tsv stays.\n"
        "\n"
        "  --checkpoint FILE  a model.ckpt written by attnlab train\n"
        "  --lengths SPEC     A:B:STEP, A:B or A,B,C (default 4:64:4, capped at max_len)\n"
        "  --samples N        sequences per length (default 512)\n"
        "  --seed S           evaluation seed (default: the training seed)\n"
        "  --input FILE       one source sequence per line (symbols separated by spaces;\n"
        "                     '-' reads standard input): prints the task's target, the\n"
        "                     greedy prediction and the teacher-forced mean loss\n"
        "  --threads N        BLAS threads\n"
        "\n"
        "A model trained on --task file:PATH reads that file again (it must not have\n"
        "changed: its CRC-32 is in the checkpoint) and is evaluated on every example of\n"
        "its test set, at each source length it holds (--lengths picks some; --samples\n"
        "does not apply). Its --input lines are words of the file's vocabulary; the\n"
        "target is shown when the file holds that source.\n"
        "\n"
        "Examples:\n"
        "  attnlab eval --checkpoint runs/lstm/model.ckpt --lengths 4:64:4 --samples 512\n"
        "  echo '3 1 4 1 5 9 2 6' | attnlab eval --checkpoint runs/lstm/model.ckpt --input -\n");
}

/* The longest --input line read: far beyond max_len symbols of 64 bytes each. A longer
 * line stops the reading with an error, so an endless line costs no more. */
#define INPUT_LINE_MAX (1 << 20)

/* attnlab eval --input: one sequence per line. Malformed lines are reported with their
 * number and skipped; the status is 1 when any line was malformed. A line is read whole
 * by its length, not as a C string, so a NUL byte in it is reported, never taken for
 * its end; a UTF-8 byte-order mark before the first line is skipped. A read error or
 * memory running out stops the reading with status 1, never as if the input had ended;
 * a FIFO or a directory given by name is refused (standard input, "-", may be a pipe). */
static int eval_input(model *m, const char *file)
{
    char err[ARGS_ERR_MAX];
    const task *t = task_open(&m->cfg, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    FILE *in = infile_open(file, 1, err, sizeof err); /* "-", or a regular file */
    if (!in) {
        task_close(t);
        return args_run_error("--input: %s (accepted: a regular file, or - for standard "
                              "input)", err);
    }
    const size_t V = m->cfg.symbols, Lmax = m->cfg.max_len;
    const size_t Tmax = task_max_target_len(t, 1, Lmax);
    batch b;
    int *pred = malloc(Tmax * sizeof *pred);
    if (!pred || batch_alloc(&b, 1, Lmax, Tmax) != 0) {
        free(pred);
        if (in != stdin)
            fclose(in);
        task_close(t);
        return args_run_error("out of memory");
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, bad = 0;
    ssize_t got;
    int rc = 0;
    const char *name = in == stdin ? "standard input" : file;
    while ((got = infile_getline(&line, &cap, INPUT_LINE_MAX, in, name, err, sizeof err)) !=
           INFILE_END) {
        size_t Ts;
        lineno++;
        if (got == INFILE_FAIL) { /* never taken for the end of the input */
            rc = args_run_error("--input: %s (after %zu lines); nothing more was read", err,
                                lineno - 1);
            break;
        }
        if (got == INFILE_LONG) { /* an endless line would never end: stop */
            rc = args_run_error("--input %s line %zu: %s, more than a line of symbols "
                                "can be; nothing more was read", name, lineno, err);
            break;
        }
        char *text = line;
        if (lineno == 1 && (size_t)got >= 3 && memcmp(line, DATASET_BOM, 3) == 0) {
            text += 3; /* a UTF-8 byte-order mark, which some editors write first */
            got -= 3;
        }
        const char *nul = memchr(text, '\0', (size_t)got);
        if (nul) {
            fprintf(stderr, "%s: --input %s line %zu: a NUL byte at column %zu (accepted: "
                    "symbols separated by spaces)\n", args_command(), file, lineno,
                    (size_t)(nul - text) + 1);
            bad++;
            continue;
        }
        if (task_parse(t, V, text, b.src, Lmax, &Ts, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --input %s line %zu: %s\n", args_command(), file, lineno,
                    err);
            bad++;
            continue;
        }
        /* the target: the task's; for a file task the file's, when it holds this source */
        const long e = t->data ? dataset_find(t->data, b.src, Ts) : -1;
        const int known = !t->data || e >= 0;
        if (e >= 0) {
            const size_t idx = (size_t)e;
            task_fill_examples(t, &b, &idx, 1);
        } else {
            task_complete(t, &b, 1, Ts, V); /* a file task: only the shape is used */
        }
        if (m->ops->reserve(m, 1, Ts, b.Tt) != 0) {
            rc = args_run_error("out of memory");
            break;
        }
        if (model_decode(m, b.src, 1, Ts, b.Tt, pred) != 0) {
            rc = args_run_error("%s decode failed on --input line %zu: %s", m->ops->name,
                                lineno, model_last_error());
            break;
        }
        printf("line %zu\n  source:    ", lineno);
        print_tokens(stdout, t, V, b.src, Ts);
        if (!known) {
            printf("\n  target:    (not in %s)\n  predicted: ", t->name);
            print_tokens(stdout, t, V, pred, b.Tt);
            printf("\n");
            continue;
        }
        double loss = model_forward(m, &b, NULL);
        if (isnan(loss) && model_last_error()[0]) {
            rc = args_run_error("%s forward failed on --input line %zu: %s", m->ops->name,
                                lineno, model_last_error());
            break;
        }
        size_t ok = 0;
        for (size_t i = 0; i < b.Tt; i++)
            ok += pred[i] == b.tgt[i];
        printf("\n  target:    ");
        print_tokens(stdout, t, V, b.tgt, b.Tt);
        printf("\n  predicted: ");
        print_tokens(stdout, t, V, pred, b.Tt);
        printf("   (%zu/%zu correct)\n  loss:      %.10g\n", ok, b.Tt, loss);
    }
    free(line);
    free(pred);
    batch_free(&b);
    if (in != stdin)
        fclose(in);
    task_close(t);
    if (rc == 0 && bad)
        rc = ARGS_EXIT_RUNTIME;
    return rc;
}

/* What an eval command line asks for (parse_eval). */
typedef struct eval_request {
    args_line a;
    size_t samples;
    config opt; /* --seed and --threads, read by the table's own rules */
    size_t lens[ARGS_MAX_LENGTHS];
    size_t nl;
} eval_request;

/* Reads and checks eval's command line into *q: everything the command refuses before it
 * loads the checkpoint. Returns 0, ARGS_HELP_SHOWN, or the exit status after the
 * message. */
static int parse_eval(int argc, char **argv, eval_request *q)
{
    static const args_flag allowed[] = {ARGS_CHECKPOINT, ARGS_LENGTHS, ARGS_SAMPLES,
                                        ARGS_OUT,        ARGS_INPUT,   0};
    int rc = args_parse(argc, argv, 1, allowed, cmd_eval_help, &q->a);
    if (rc)
        return rc;
    /* of the settings, only these two make sense for a trained model */
    for (size_t k = 0; k < q->a.n_given; k++) {
        const char *name = config_fields[q->a.given[k]].name;
        if (strcmp(name, "seed") != 0 && strcmp(name, "threads") != 0)
            return args_usage_error("--%s is a training setting; eval takes it from the "
                                    "checkpoint (accepted here: --seed, --threads)", name);
    }
    if (!args_get(&q->a, ARGS_CHECKPOINT))
        return args_usage_error("--checkpoint FILE is required");
    q->samples = 512;
    if (args_count(&q->a, ARGS_SAMPLES, 1, 1000000, &q->samples))
        return ARGS_EXIT_USAGE;
    const model_ops *none;
    const args_plan shared = {.shared = 1};
    if ((rc = args_config(&q->a, &shared, &q->opt, &none)))
        return rc;
    q->nl = 0;
    /* the model's max_len is checked by the evaluation once the model is loaded */
    if (args_lengths_of(&q->a, ARGS_LENGTHS, 4096, q->lens, &q->nl))
        return ARGS_EXIT_USAGE;
    return 0;
}

int cmd_eval_check(int argc, char **argv)
{
    static eval_request q;
    return args_exit(parse_eval(argc, argv, &q));
}

int cmd_eval(int argc, char **argv)
{
    static eval_request q;
    int rc = parse_eval(argc, argv, &q);
    if (rc)
        return args_exit(rc);
    const args_line *const a = &q.a;
    const char *ck = args_get(a, ARGS_CHECKPOINT);
    const size_t samples = q.samples;
    size_t *const lens = q.lens;
    size_t nl = q.nl;
    const config *const opt = &q.opt;
    char err[ARGS_ERR_MAX];
    buildinfo_set_threads(opt->threads);
    model *m = ckpt_load(ck, NULL, err, sizeof err);
    if (!m)
        return args_run_error("%s", err);
    const unsigned long seed = args_setting(a, "seed") ? opt->seed : m->cfg.seed;
    runlock lock = {-1}; /* of --out, while eval writes there */
    if (args_get(a, ARGS_INPUT)) {
        rc = eval_input(m, args_get(a, ARGS_INPUT));
    } else if (task_is_file(m->cfg.task)) {
        /* a file task: its test set, at the lengths given or at all of its lengths */
        const task *t = task_open(&m->cfg, err, sizeof err);
        if (!t)
            rc = args_run_error("%s", err);
        else
            rc = cmd_data_lengths(t, "--lengths", lens, &nl);
        task_close(t);
        const char *dir = args_get(a, ARGS_OUT);
        if (rc == 0 && dir)
            rc = cmd_claim_out(&lock, dir, 2, EVAL_FILES);
        if (rc == 0)
            rc = cmd_evaluate(m, lens, nl, samples, seed, dir, 1);
    } else {
        if (nl == 0)
            for (size_t L = 4; L <= 64 && L <= m->cfg.max_len; L += 4)
                lens[nl++] = L;
        const char *dir = args_get(a, ARGS_OUT);
        if (dir)
            rc = cmd_claim_out(&lock, dir, 2, EVAL_FILES);
        if (rc == 0)
            rc = cmd_evaluate(m, lens, nl, samples, seed, dir, 1);
    }
    runlock_release(&lock);
    m->ops->free(m);
    return rc;
}

/* ---- attnlab gradcheck ----------------------------------------------------------------- */

void cmd_gradcheck_help(void)
{
    printf(
        "Usage: attnlab gradcheck --model NAME [--len N] [--stride N] [--seed S] [SETTINGS...]\n"
        "\n"
        "Checks the hand-written backward pass of a model: for every parameter tensor it\n"
        "compares the analytic gradient of the loss with fourth-order central differences\n"
        "(8(L(w+h) - L(w-h)) - (L(w+2h) - L(w-2h))) / 12h, h = %g, on a small random\n"
        "batch, and prints the largest relative error |a - n| / max(|a| + |n|, %g) of\n"
        "each tensor. The token inputs are discrete; their gradient is that of the\n"
        "embedding rows, checked with the rest.\n"
        "The last line is 'max relative error: X'; the status is 1 when X >= %g.\n"
        "\n"
        "The model is built small (sizes all different, so a transposed index cannot hide):\n"
        "symbols 5, embed 5, hidden 6, attn 7, d-model 8, heads 2, d-ff 12, layers 2,\n"
        "batch 2; any setting flag of 'attnlab train' overrides them.\n"
        "  --len N      source length of the batch (default 4; at most --max-len, which\n"
        "               gradcheck sets to 16)\n"
        "  --stride N   check every N-th entry of each tensor (default 1: all)\n"
        "\n"
        "Examples:\n"
        "  attnlab gradcheck --model lstm\n"
        "  attnlab gradcheck --model rnn_attention --cell lstm\n"
        "  attnlab gradcheck --model transformer --post-ln --pos learned\n",
        GRADCHECK_H, GRADCHECK_TINY, GRADCHECK_TOL);
}

/* The small sizes of a gradient check: the harness's here, the model's from its ops. */
static void gradcheck_sizes(config *c, const model_ops *ops, const void *ctx)
{
    (void)ctx;
    c->symbols = 5;
    c->batch = 2;
    c->max_len = 16;
    c->train_min = 1;
    c->train_max = 16;
    ops->gradcheck_sizes(c);
}

static void print_tensor_error(void *ctx, const char *tensor, double err, size_t row,
                               size_t col)
{
    const arena *a = ctx;
    long k = arena_find(a, tensor);
    printf("%-28s (%4zu, %4zu)  %10.3e  at (%zu, %zu)%s\n", tensor, a->spec[k].rows,
           a->spec[k].cols, err, row, col, err < GRADCHECK_TOL ? "" : "  <-- FAIL");
}

/* What a gradcheck command line asks for (parse_gradcheck). */
typedef struct gradcheck_request {
    config c;
    const model_ops *ops;
    size_t L, stride;
} gradcheck_request;

/* Reads and checks gradcheck's command line into *q: the model at the sizes of a
 * gradient check, then the flags; --len and --stride. Returns 0, ARGS_HELP_SHOWN, or the
 * exit status after the message. */
static int parse_gradcheck(int argc, char **argv, gradcheck_request *q)
{
    static const args_flag allowed[] = {ARGS_LEN, ARGS_STRIDE, 0};
    args_line a;
    int rc = args_parse(argc, argv, 1, allowed, cmd_gradcheck_help, &a);
    if (rc)
        return rc;
    const args_plan plan = {.overrides = gradcheck_sizes};
    if ((rc = args_config(&a, &plan, &q->c, &q->ops)))
        return rc;
    q->L = 4;
    q->stride = 1;
    if (args_count(&a, ARGS_LEN, 1, q->c.max_len, &q->L) ||
        args_count(&a, ARGS_STRIDE, 1, 1000000, &q->stride))
        return ARGS_EXIT_USAGE;
    return 0;
}

int cmd_gradcheck_check(int argc, char **argv)
{
    static gradcheck_request q;
    return args_exit(parse_gradcheck(argc, argv, &q));
}

int cmd_gradcheck(int argc, char **argv)
{
    static gradcheck_request q;
    int rc = parse_gradcheck(argc, argv, &q);
    if (rc)
        return args_exit(rc);
    const config *const c = &q.c;
    const model_ops *ops = q.ops;
    const size_t L = q.L, stride = q.stride;
    buildinfo_set_threads(c->threads);
    char err[ARGS_ERR_MAX];
    const task *t = task_open(c, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    const size_t Tt = task_target_len(t, L);
    rng_streams r;
    batch b;
    model *m = NULL;
    if (rng_open(&r, c->seed) != 0 || batch_alloc(&b, c->batch, L, Tt) != 0 ||
        !(m = ops->alloc(c)) || ops->reserve(m, c->batch, L, Tt) != 0) {
        if (m)
            ops->free(m);
        rng_close(&r);
        task_close(t);
        return args_run_error("out of memory");
    }
    ops->init(m, r.s[RNG_INIT]);
    task_fill(t, &b, c->batch, L, c->symbols, r.s[RNG_TRAIN]);
    printf("gradient check of %s: %zu parameters, batch %zu, source length %zu, task %s\n",
           c->model, m->params.size, c->batch, L, c->task);
    printf("%-28s %12s  %10s\n", "tensor", "shape", "max rel err");
    double worst = gradcheck_model(m, &b, stride, print_tensor_error, &m->params);
    printf("max relative error: %.3e\n", worst);
    rc = worst < GRADCHECK_TOL ? 0 : ARGS_EXIT_RUNTIME;
    if (rc)
        fprintf(stderr, "%s: the gradient check failed (tolerance %g)\n", args_command(),
                GRADCHECK_TOL);
    ops->free(m);
    batch_free(&b);
    rng_close(&r);
    task_close(t);
    return rc;
}

/* ---- attnlab attention ----------------------------------------------------------------- */

void cmd_attention_help(void)
{
    printf(
        "Usage: attnlab attention --checkpoint FILE --input \"3 1 4 1 5 9 2 6\" [--out DIR]\n"
        "\n"
        "Decodes one source sequence greedily and prints what the model looked at:\n"
        "  rnn_attention  the alignment α (target steps x source steps): row t is the\n"
        "                 softmax over the encoder states when emitting output t\n"
        "  transformer    every layer and head of encoder self-attention, masked decoder\n"
        "                 self-attention and encoder-decoder (cross) attention\n"
        "  lstm           no attention: its gates (input, forget, output) and cell state\n"
        "                 over the steps, the LSTM's own way of choosing what to keep\n"
        "Each matrix is also written as DIR/NAME.tsv (default DIR: trace/ beside the\n"
        "checkpoint), labelled with tokens, and all of them as DIR/trace_vars.gp, ready\n"
        "for plots/attention.gp and plots/gates.gp, which draw into DIR/figures/. A model\n"
        "trained\n"
        "on --task file:PATH takes words of that file's vocabulary (\"3 march 2021\"), and\n"
        "its matrices are labelled with them. A DIR that holds a run of attnlab train is\n"
        "refused (give its trace/ folder); a run's trace/ is written under the run's lock.\n"
        "\n"
        "Example:\n"
        "  attnlab attention --checkpoint runs/attn/model.ckpt --input \"3 1 4 1 5 9 2 6\"\n");
}

/* State of one trace: labels of each axis and where the files go. */
typedef struct trace_ctx {
    const char *dir;
    char (*src)[16];    /* (Ts) source tokens */
    char (*tgt)[16];    /* (Tt) decoded tokens */
    char (*tgt_in)[16]; /* (Tt) decoder inputs: BOS then the decoded tokens */
    char (*index)[16];  /* (n_index) 0, 1, 2, ... */
    size_t n_index;
    int print;          /* also print each matrix as a table */
    int failed;         /* the sink refused a matrix or could not write it */
} trace_ctx;

/* The labels of an axis of kind "src", "tgt", "tgt_in" or any other (numbered), or NULL
 * when n numbers are more than were made. */
static char (*axis_labels(trace_ctx *c, const char *kind, size_t n))[16]
{
    if (strcmp(kind, "src") == 0)
        return c->src;
    if (strcmp(kind, "tgt") == 0)
        return c->tgt;
    if (strcmp(kind, "tgt_in") == 0)
        return c->tgt_in;
    return n <= c->n_index ? c->index : NULL;
}

/* The trace_sink: prints the matrix (when asked) and writes it as dir/NAME.tsv. */
static int trace_to_files(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                          const char *cols)
{
    trace_ctx *c = ctx;
    char(*rl)[16] = axis_labels(c, rows, m->size1);
    char(*cl)[16] = axis_labels(c, cols, m->size2);
    if (!rl || !cl) {
        c->failed = 1;
        return -1;
    }
    if (c->print)
        report_print_matrix(stdout, name, m, (const char(*)[16])rl, (const char(*)[16])cl);
    char path[AFILE_PATH_MAX], file[128], err[ARGS_ERR_MAX], corner[64];
    snprintf(file, sizeof file, "%s.tsv", name);
    snprintf(corner, sizeof corner, "%s\\%s", rows, cols);
    afile af;
    if (afile_join(path, sizeof path, c->dir, file) != 0 ||
        afile_open(&af, path, err, sizeof err) != 0) {
        c->failed = 1;
        return -1;
    }
    report_write_matrix(af.f, m, (const char(*)[16])rl, (const char(*)[16])cl, corner);
    if (afile_commit(&af, err, sizeof err) != 0) {
        args_run_error("%s", err);
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* Writes the label of token tok into lab: as task_symbol shows it, cut to the 15 bytes a
 * label holds at the start of a UTF-8 character (a long word loses its end). */
static void label_of(const task *t, size_t nsym, int tok, char lab[16])
{
    char word[DATASET_WORD_MAX + 8];
    task_symbol(t, nsym, tok, word, sizeof word);
    size_t len = strlen(word);
    if (len > 15) {
        len = 15;
        while (len > 0 && ((unsigned char)word[len] & 0xc0) == 0x80)
            len--; /* word[len] continues a character: cut before that character */
    }
    memcpy(lab, word, len);
    lab[len] = '\0';
}

int cmd_write_trace(model *m, const int *src, size_t Ts, const char *dir, int print)
{
    char err[ARGS_ERR_MAX];
    if (!m->ops->trace)
        return args_run_error("model %s records no trace", m->ops->name);
    const task *t = task_open(&m->cfg, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    const size_t Tt = task_target_len(t, Ts), V = m->cfg.symbols;
    /* labels for every axis a model may use: tokens, units (up to the widest state),
     * or steps of an encoder and a decoder */
    size_t nidx = m->cfg.hidden > m->cfg.d_model ? m->cfg.hidden : m->cfg.d_model;
    nidx = (nidx > Ts + Tt ? nidx : Ts + Tt) + 2;
    int *out = malloc(Tt * sizeof *out);
    trace_ctx c = {0};
    c.src = malloc(Ts * sizeof *c.src);
    c.tgt = malloc(Tt * sizeof *c.tgt);
    c.tgt_in = malloc(Tt * sizeof *c.tgt_in);
    c.index = malloc(nidx * sizeof *c.index);
    c.n_index = nidx;
    c.dir = dir;
    c.print = print;
    int rc = 0;
    char fig_dir[AFILE_PATH_MAX];
    if (!out || !c.src || !c.tgt || !c.tgt_in || !c.index) {
        rc = args_run_error("out of memory");
        goto done;
    }
    if (afile_mkdirs(dir, err, sizeof err) != 0) {
        rc = args_run_error("--out: %s", err);
        goto done;
    }
    if (m->ops->reserve(m, 1, Ts, Tt) != 0) {
        rc = args_run_error("out of memory");
        goto done;
    }
    /* decode first so the target axis can be labelled with what the model emitted */
    if (model_decode(m, src, 1, Ts, Tt, out) != 0) {
        rc = args_run_error("%s decode failed: %s", m->ops->name, model_last_error());
        goto done;
    }
    for (size_t i = 0; i < Ts; i++)
        label_of(t, V, src[i], c.src[i]);
    for (size_t i = 0; i < Tt; i++) {
        label_of(t, V, out[i], c.tgt[i]);
        label_of(t, V, i == 0 ? (int)V : out[i - 1], c.tgt_in[i]); /* BOS first */
    }
    for (size_t i = 0; i < nidx; i++)
        snprintf(c.index[i], 16, "%u", (unsigned)i);
    if (print) {
        printf("source:  ");
        print_tokens(stdout, t, V, src, Ts);
        printf("\ndecoded: ");
        print_tokens(stdout, t, V, out, Tt);
        printf("\n\n");
    }
    /* a refusal of the sink is a file that could not be written; any other failure is
     * the model's report (error contract) */
    if (model_trace(m, src, Ts, Tt, out, trace_to_files, &c) != 0 || c.failed)
        rc = c.failed ? args_run_error("could not write the trace into %s", dir)
                      : args_run_error("%s trace failed: %s", m->ops->name,
                                       model_last_error());
    /* the labels and numbers as gnuplot variables, and DIR/figures/ for the figures
     * (gnuplot -e "dir='DIR'; trace='DIR'" plots/attention.gp): the scripts make no
     * folder, they start no shell */
    else if (report_write_trace_vars(dir, err, sizeof err) != 0 ||
             safedir_enter(dir, "figures", fig_dir, sizeof fig_dir, err, sizeof err) != 0)
        rc = args_run_error("%s", err);
done:
    task_close(t);
    free(out);
    free(c.src);
    free(c.tgt);
    free(c.tgt_in);
    free(c.index);
    return rc;
}

/* Reads and checks attention's command line into *a: --checkpoint and --input given
 * (the symbols of --input are read once the model, and so its task, is loaded). Returns
 * 0, ARGS_HELP_SHOWN, or the exit status after the message. */
static int parse_attention(int argc, char **argv, args_line *a)
{
    static const args_flag allowed[] = {ARGS_CHECKPOINT, ARGS_INPUT, ARGS_OUT, 0};
    const int rc = args_parse(argc, argv, 0, allowed, cmd_attention_help, a);
    if (rc)
        return rc;
    if (!args_get(a, ARGS_CHECKPOINT))
        return args_usage_error("--checkpoint FILE is required");
    if (!args_get(a, ARGS_INPUT))
        return args_usage_error("--input \"SYMBOLS\" is required (e.g. --input \"3 1 4 1 5\")");
    return 0;
}

int cmd_attention_check(int argc, char **argv)
{
    static args_line a;
    return args_exit(parse_attention(argc, argv, &a));
}

/* Takes the lock that guards dir, where attention writes its matrices (AFILE_PATH_MAX
 * bytes; rewritten as the path entered). When dir is the trace/ folder of a run
 * directory RUN (the default, trace/ beside the checkpoint), it is the run's: RUN's lock
 * is taken, as train holds it while it writes that folder, and RUN/trace must be a real
 * directory, not a symbolic link (safedir.h). Any other dir takes its own lock, and one
 * holding a run is refused: the matrices go into its trace/ folder or beside it. Returns
 * 0 with l held, or the exit status after one line. */
static int claim_trace_dir(char *dir, runlock *l)
{
    char run[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    const char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : dir;
    l->fd = -1;
    snprintf(run, sizeof run, "%.*s", slash ? (int)(slash - dir) + (slash == dir) : 1,
             slash ? dir : ".");
    if (strcmp(base, "trace") != 0 || !cmd_holds_run(run))
        return cmd_claim_out(l, dir, 1, "its matrices go into its trace/ folder (--out "
                             "RUN/trace) or beside the run");
    const int rc = runlock_take(l, run, err, sizeof err);
    if (rc != 0)
        return args_run_error(rc == RUNLOCK_IN_USE ? "%s; wait for it to end, or choose "
                              "another --out" : "--out: %s", err);
    if (safedir_enter(run, "trace", dir, AFILE_PATH_MAX, err, sizeof err) != 0) {
        runlock_release(l);
        return args_run_error("%s", err);
    }
    return 0;
}

int cmd_attention(int argc, char **argv)
{
    static args_line a;
    int rc = parse_attention(argc, argv, &a);
    if (rc)
        return args_exit(rc);
    const char *ck = args_get(&a, ARGS_CHECKPOINT), *input = args_get(&a, ARGS_INPUT);
    char err[ARGS_ERR_MAX], dir[AFILE_PATH_MAX]; /* --out: at most ARGS_PATH_MAX */
    model *m = ckpt_load(ck, NULL, err, sizeof err);
    if (!m)
        return args_run_error("%s", err);
    int *src = malloc(m->cfg.max_len * sizeof *src);
    size_t Ts = 0;
    const task *t = NULL;
    if (!src) {
        rc = args_run_error("out of memory");
    } else if (!(t = task_open(&m->cfg, err, sizeof err))) {
        rc = args_run_error("%s", err);
    } else if (task_parse(t, m->cfg.symbols, input, src, m->cfg.max_len, &Ts, err,
                          sizeof err) != 0) {
        rc = args_usage_error("--input: %s", err);
    } else {
        if (args_get(&a, ARGS_OUT)) {
            snprintf(dir, sizeof dir, "%s", args_get(&a, ARGS_OUT));
        } else {
            const char *slash = strrchr(ck, '/');
            snprintf(dir, sizeof dir, "%.*s/trace", slash ? (int)(slash - ck) : 1,
                     slash ? ck : ".");
        }
        runlock lock = {-1};
        rc = claim_trace_dir(dir, &lock);
        if (rc == 0)
            rc = cmd_write_trace(m, src, Ts, dir, 1);
        if (rc == 0)
            fprintf(stderr, "wrote the matrices above as %s/NAME.tsv\n", dir);
        runlock_release(&lock);
    }
    task_close(t);
    free(src);
    m->ops->free(m);
    return rc;
}

/* ---- the cost of a trained model ---------------------------------------------------- */

/* The cost of each requested length (cost.tsv): measured first, then written. */
typedef struct cost_rows {
    const char *model;
    const size_t *lens;
    size_t n;
    double *train_ms, *flops, *decode_ms; /* (n) each */
} cost_rows;

static int write_cost(FILE *f, const void *ctx)
{
    const cost_rows *c = ctx;
    fprintf(f, "model\tlen\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq\n");
    for (size_t k = 0; k < c->n; k++)
        fprintf(f, "%s\t%zu\t%.6g\t%.6g\t%.6g\n", c->model, c->lens[k], c->train_ms[k],
                c->flops[k], c->decode_ms[k]);
    return ferror(f) ? -1 : 0;
}

int cmd_measure_cost(model *m, const size_t *lens, size_t n, const gsl_rng *r,
                        const char *dir)
{
    char err[ARGS_ERR_MAX];
    const task *t = task_open(&m->cfg, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    double *v = malloc(3 * n * sizeof *v);
    if (!v) {
        task_close(t);
        return args_run_error("out of memory");
    }
    cost_rows c = {m->ops->name, lens, n, v, v + n, v + 2 * n};
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        const size_t L = lens[k];
        if (bench_cost(m, t, L, m->cfg.batch, 3, r, &c.train_ms[k], &c.decode_ms[k]) != 0)
            rc = args_run_error("measuring the cost at length %zu failed: %s", L,
                                model_last_error()[0] ? model_last_error() : "out of memory");
        else
            c.flops[k] = m->ops->flops(&m->cfg, L, task_target_len(t, L));
    }
    if (rc == 0 && cmd_write_file(dir, "cost.tsv", write_cost, &c) != 0)
        rc = ARGS_EXIT_RUNTIME;
    task_close(t);
    free(v);
    return rc;
}
