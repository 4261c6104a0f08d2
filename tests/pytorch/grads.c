/* grads.c — what attnlab computes on one batch, written out for the PyTorch twin to check:
 * the teacher-forced loss, the gradient of every parameter tensor, the forward's argmax
 * tokens and greedy decoding (the program twin-grads, built by `make check-pytorch`).
 *
 * Usage: twin-grads CHECKPOINT BATCH OUT
 *
 * Design. The program is the model interface of common/core/model.h driven by hand, nothing
 * more: ckpt_load builds the model from its file, reserve sizes it for the batch,
 * arena_zero_grad, forward and backward give the loss and the gradients, decode the
 * greedy tokens. No command of the attnlab program is involved, so what the twin is
 * compared with is exactly what a training step and an evaluation compute.
 *
 * BATCH is a TSV file (header `what rows cols tokens`) of three lines, `src` (B, Ts),
 * `dec_in` (B, Tt) and `tgt` (B, Tt), each row-major with its tokens separated by spaces
 * (tests/pytorch/check.py writes it). OUT is a TSV file, header `what name rows cols
 * values`, values separated by spaces, every double printed with 17 significant digits
 * so that it reads back bit for bit:
 *     loss    mean        1  1   the mean cross-entropy over the B·Tt targets
 *     grad    enc.Wx      R  C   the gradient of each tensor, in arena order, row-major
 *     pred    forward     B  Tt  the argmax token of each position of the forward
 *     decode  greedy      B  Tt  greedy decoding of the sources, Tt steps
 * OUT is written to a temporary name and renamed into place (common/core/afile.h): it is whole
 * or absent. Errors: a usage error prints one line and the usage, exit status 2; a file
 * that cannot be read, a malformed batch or a refused model call prints one line naming
 * what was wrong (and what is accepted), exit status 1, and OUT is left as it was.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/core/afile.h"
#include "../../common/cli/buildinfo.h"
#include "../../common/core/checkpoint.h"
#include "../../common/core/model.h"
#include "../../common/core/tsv.h"

#define ERR_LEN 512
#define MAX_SIDE 4096 /* longest sequence or largest batch a BATCH file may give */

static const char usage[] = "usage: twin-grads CHECKPOINT BATCH OUT\n"
                            "  CHECKPOINT  a model.ckpt written by attnlab\n"
                            "  BATCH       TSV: what rows cols tokens; lines src, dec_in, tgt\n"
                            "  OUT         TSV written here: loss, every gradient, the forward's\n"
                            "              argmax tokens, greedy decoding\n";

/* ---- the batch file ------------------------------------------------------------------ */

/* The three token matrices of a batch, as read, before their sizes are known to agree. */
typedef struct batch_file {
    size_t rows[3], cols[3]; /* src (B, Ts), dec_in (B, Tt), tgt (B, Tt) */
    int *tok[3];             /* row-major, each rows·cols tokens */
} batch_file;

static const char *const batch_parts[3] = {"src", "dec_in", "tgt"};

/* Parses a size cell: a whole number in 1..MAX_SIDE. Returns 0, or -1 with one line. */
static int parse_side(size_t *out, const char *cell, const char *what, const char *path,
                      char *err, size_t n)
{
    char *end;
    errno = 0;
    long v = strtol(cell, &end, 10);
    if (errno != 0 || end == cell || *end != '\0' || v < 1 || v > MAX_SIDE) {
        snprintf(err, n, "%s: %s '%s' is not accepted (accepted: a whole number 1 to %d)",
                 path, what, cell, MAX_SIDE);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* Parses count tokens separated by spaces from cell into out, each a whole number in
 * [0, V). Returns 0, or -1 with one line naming the line, the token and the range. */
static int parse_tokens(int *out, size_t count, const char *cell, size_t V, const char *what,
                        const char *path, char *err, size_t n)
{
    const char *p = cell;
    for (size_t i = 0; i < count; i++) {
        while (*p == ' ')
            p++;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (*p == '\0') {
            snprintf(err, n, "%s: %s holds %zu tokens where rows·cols = %zu are needed", path,
                     what, i, count);
            return -1;
        }
        const int whole = end != p && (*end == ' ' || *end == '\0');
        if (!whole || errno != 0 || v < 0 || (size_t)v >= V) {
            const size_t word = strcspn(p, " "); /* the whole offending word */
            snprintf(err, n, "%s: %s token %zu '%.*s' is not accepted (accepted: a whole "
                     "number 0 to %zu)", path, what, i, (int)(word < 32 ? word : 32), p, V - 1);
            return -1;
        }
        out[i] = (int)v;
        p = end;
    }
    while (*p == ' ')
        p++;
    if (*p != '\0') {
        snprintf(err, n, "%s: %s holds more than rows·cols = %zu tokens", path, what, count);
        return -1;
    }
    return 0;
}

static void batch_file_free(batch_file *bf)
{
    for (size_t k = 0; k < 3; k++)
        free(bf->tok[k]);
    memset(bf, 0, sizeof *bf);
}

/* Reads path into bf: each of src, dec_in, tgt exactly once, every token in [0, V).
 * Returns 0, or -1 with one line in err (bf then holds nothing). */
static int batch_file_read(batch_file *bf, const char *path, size_t V, char *err, size_t n)
{
    static const char *const cols[4] = {"what", "rows", "cols", "tokens"};
    memset(bf, 0, sizeof *bf);
    tsv t;
    long idx[4];
    if (tsv_read(&t, path, err, n) != 0)
        return -1;
    if (tsv_require(&t, cols, idx, 4, err, n) != 0)
        goto fail;
    for (size_t r = 0; r < t.rows; r++) {
        const char *what = tsv_get(&t, r, (size_t)idx[0]);
        size_t k = 0;
        while (k < 3 && strcmp(what, batch_parts[k]) != 0)
            k++;
        if (k == 3) {
            snprintf(err, n, "%s: line %zu: '%s' is not accepted (accepted: src, dec_in, tgt)",
                     path, r + 2, what);
            goto fail;
        }
        if (bf->tok[k]) {
            snprintf(err, n, "%s: %s is given twice (accepted: each of src, dec_in, tgt once)",
                     path, what);
            goto fail;
        }
        if (parse_side(&bf->rows[k], tsv_get(&t, r, (size_t)idx[1]), "rows", path, err, n) ||
            parse_side(&bf->cols[k], tsv_get(&t, r, (size_t)idx[2]), "cols", path, err, n))
            goto fail;
        const size_t count = bf->rows[k] * bf->cols[k]; /* ≤ 4096² : no overflow */
        bf->tok[k] = malloc(count * sizeof(int));
        if (!bf->tok[k]) {
            snprintf(err, n, "%s: out of memory", path);
            goto fail;
        }
        if (parse_tokens(bf->tok[k], count, tsv_get(&t, r, (size_t)idx[3]), V, what, path, err,
                         n) != 0)
            goto fail;
    }
    for (size_t k = 0; k < 3; k++)
        if (!bf->tok[k]) {
            snprintf(err, n, "%s: no %s line (accepted: one line each of src, dec_in, tgt)",
                     path, batch_parts[k]);
            goto fail;
        }
    if (bf->rows[1] != bf->rows[0] || bf->rows[2] != bf->rows[0] || bf->cols[2] != bf->cols[1]) {
        snprintf(err, n, "%s: shapes src (%zu, %zu), dec_in (%zu, %zu), tgt (%zu, %zu) do not "
                 "agree (accepted: src (B, Ts), dec_in and tgt (B, Tt))", path, bf->rows[0],
                 bf->cols[0], bf->rows[1], bf->cols[1], bf->rows[2], bf->cols[2]);
        goto fail;
    }
    tsv_free(&t);
    return 0;
fail:
    tsv_free(&t);
    batch_file_free(bf);
    return -1;
}

/* ---- the output file ------------------------------------------------------------------ */

/* What the model computed, for write_out. */
typedef struct results {
    const model *m;      /* its arena holds the gradients */
    double loss;         /* mean cross-entropy */
    size_t B, Tt;        /* sizes of pred and dec */
    const int *pred;     /* (B, Tt) argmax of the forward */
    const int *dec;      /* (B, Tt) greedy decoding */
} results;

static void write_ints(FILE *f, const char *what, const char *name, const int *x, size_t B,
                       size_t T)
{
    fprintf(f, "%s\t%s\t%zu\t%zu\t", what, name, B, T);
    for (size_t i = 0; i < B * T; i++)
        fprintf(f, i ? " %d" : "%d", x[i]);
    fputc('\n', f);
}

/* The whole file; afile_commit reports a write error the stream saw. */
static int write_out(FILE *f, const results *r)
{
    const arena *a = &r->m->params;
    fprintf(f, "what\tname\trows\tcols\tvalues\n");
    fprintf(f, "loss\tmean\t1\t1\t%.17g\n", r->loss);
    for (size_t k = 0; k < a->n_tensors; k++) {
        const arena_spec *s = &a->spec[k];
        const double *g = a->grad + a->offset[k];
        fprintf(f, "grad\t%s\t%zu\t%zu\t", s->name, s->rows, s->cols);
        for (size_t i = 0; i < s->rows * s->cols; i++)
            fprintf(f, i ? " %.17g" : "%.17g", g[i]);
        fputc('\n', f);
    }
    write_ints(f, "pred", "forward", r->pred, r->B, r->Tt);
    write_ints(f, "decode", "greedy", r->dec, r->B, r->Tt);
    return ferror(f) ? -1 : 0;
}

/* ---- main ----------------------------------------------------------------------------- */

/* One line on stderr, "twin-grads: ...", then the exit status 1. */
static int fail(const char *msg)
{
    fprintf(stderr, "twin-grads: %s\n", msg);
    return 1;
}

/* Loads the model, runs forward, backward and decode on the batch, writes OUT. */
static int run(const char *ckpt, const char *batch_path, const char *out)
{
    char err[ERR_LEN], msg[ERR_LEN + 64];
    model *m = ckpt_load(ckpt, NULL, err, sizeof err);
    if (!m)
        return fail(err);
    int status = 1;
    int *pred = NULL, *dec = NULL;
    batch_file bf;
    if (batch_file_read(&bf, batch_path, config_vocab(&m->cfg), err, sizeof err) != 0) {
        fail(err);
        goto done;
    }
    const size_t B = bf.rows[0], Ts = bf.cols[0], Tt = bf.cols[1];
    batch b = {B, Ts, Tt, bf.tok[0], bf.tok[1], bf.tok[2]};
    pred = malloc(B * Tt * sizeof(int));
    dec = malloc(B * Tt * sizeof(int));
    if (!pred || !dec) {
        fail("out of memory");
        goto done;
    }
    if (m->ops->reserve(m, B, Ts, Tt) != 0) {
        snprintf(msg, sizeof msg, "%s: the model cannot reserve B = %zu, Ts = %zu, Tt = %zu "
                 "(accepted: lengths up to the model's max_len %zu)", batch_path, B, Ts, Tt,
                 m->cfg.max_len);
        fail(msg);
        goto done;
    }
    /* a training step's order: zero the gradients, forward, backward */
    arena_zero_grad(&m->params);
    results r = {m, m->ops->forward(m, &b, pred), B, Tt, pred, dec};
    if (r.loss != r.loss || m->ops->backward(m, &b) != 0 ||
        m->ops->decode(m, b.src, B, Ts, Tt, dec) != 0) {
        snprintf(msg, sizeof msg, "the model refused the batch: %s", model_last_error());
        fail(msg);
        goto done;
    }
    afile f;
    if (afile_open(&f, out, err, sizeof err) != 0) {
        fail(err);
        goto done;
    }
    if (write_out(f.f, &r) != 0)
        f.err_no = errno ? errno : EIO;
    if (afile_commit(&f, err, sizeof err) != 0) {
        fail(err);
        goto done;
    }
    status = 0;
done:
    free(pred);
    free(dec);
    batch_file_free(&bf);
    m->ops->free(m);
    return status;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "twin-grads: %d arguments given (accepted: exactly 3, CHECKPOINT "
                "BATCH OUT)\n%s", argc - 1, usage);
        return 2;
    }
    model_catch_errors();        /* a refused call returns its error value, never aborts */
    (void)buildinfo_set_threads(1); /* one BLAS thread, as every run of attnlab by default */
    return run(argv[1], argv[2], argv[3]);
}
