/* web_decode.c — the page's decoding of one input: the output, its target when known,
 * and every matrix of the model's trace written under the run's trace/ (prefix: page_).
 *
 * Design. The same labels and files as `attnlab attention` (docs/results-format.md),
 * so the page's figure scripts and a downloaded run read them alike. Part of the page's
 * entry point (web_run.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../core/config.h"
#include "../core/dataset.h"
#include "../core/model.h"
#include "../core/task.h"
#include "web_page.h"
#include "web_run.h"

/* ---- decoding an input ------------------------------------------------------------------ */

/* What a trace writes: the directory and the labels of each axis. */
typedef struct page_trace {
    const char *dir;
    char (*src)[16], (*tgt)[16], (*tgt_in)[16], (*index)[16];
    size_t n_index;
    int failed;
} page_trace;

/* One labelled matrix in the layout of docs/results-format.md (the one report.c's
 * report_write_matrix writes). */
typedef struct page_matrix {
    const gsl_matrix *m;
    const char (*rows)[16], (*cols)[16];
    const char *corner;
} page_matrix;

static int page_write_matrix(FILE *f, const void *ctx)
{
    const page_matrix *x = ctx;
    fprintf(f, "%s", x->corner);
    for (size_t j = 0; j < x->m->size2; j++)
        fprintf(f, "\t%s", x->cols[j]);
    fputc('\n', f);
    for (size_t i = 0; i < x->m->size1; i++) {
        fprintf(f, "%s", x->rows[i]);
        for (size_t j = 0; j < x->m->size2; j++)
            fprintf(f, "\t%.6g", gsl_matrix_get(x->m, i, j));
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

static char (*page_axis(page_trace *c, const char *kind, size_t n))[16]
{
    if (strcmp(kind, "src") == 0)
        return c->src;
    if (strcmp(kind, "tgt") == 0)
        return c->tgt;
    if (strcmp(kind, "tgt_in") == 0)
        return c->tgt_in;
    return n <= c->n_index ? c->index : NULL;
}

/* The trace_sink: writes the matrix as dir/NAME.tsv. */
static int page_trace_sink(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                           const char *cols)
{
    page_trace *c = ctx;
    char(*rl)[16] = page_axis(c, rows, m->size1);
    char(*cl)[16] = page_axis(c, cols, m->size2);
    char file[128], corner[64];
    if (!rl || !cl) {
        c->failed = 1;
        return -1;
    }
    snprintf(file, sizeof file, "%s.tsv", name);
    snprintf(corner, sizeof corner, "%s\\%s", rows, cols);
    page_matrix x = {m, (const char(*)[16])rl, (const char(*)[16])cl, corner};
    if (afile_write(c->dir, file, page_write_matrix, &x, page_err, sizeof page_err) != 0) {
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* The label of token tok: as task_symbol shows it, cut to 15 bytes at a UTF-8 character. */
static void page_label(const task *t, size_t nsym, int tok, char lab[16])
{
    char word[DATASET_WORD_MAX + 8];
    task_symbol(t, nsym, tok, word, sizeof word);
    size_t len = strlen(word);
    if (len > 15) {
        len = 15;
        while (len > 0 && ((unsigned char)word[len] & 0xc0) == 0x80)
            len--;
    }
    memcpy(lab, word, len);
    lab[len] = '\0';
}

/* Appends the words of tokens x (n) to f, separated by spaces. */
static void page_words(FILE *f, const task *t, size_t nsym, const int *x, size_t n)
{
    char word[DATASET_WORD_MAX + 8];
    for (size_t i = 0; i < n; i++) {
        task_symbol(t, nsym, x[i], word, sizeof word);
        fprintf(f, "%s%s", i ? " " : "", word);
    }
}

/* Decodes input, a line of symbols of run h's task (numbers below symbols for copy and
 * reverse, words of the vocabulary for a data file), greedily, at the target length the
 * task gives it; writes the model's trace of it (attention maps, gates: the matrices
 * of docs/results-format.md) as dir/trace/NAME.tsv, and the decoded words, the target and
 * how many match in page_text(). Returns 0, or -1 with page_error(). */
int page_decode(int h, const char *input)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    model *m = p->m;
    const size_t V = m->cfg.symbols, Lmax = m->cfg.max_len;
    const task *t = task_open(&m->cfg, page_err, sizeof page_err);
    if (!t)
        return -1;
    int rc = -1;
    size_t Ts = 0;
    batch b = {0};
    int *out = NULL;
    page_trace c = {0};
    char *text = NULL;
    size_t text_len = 0;
    const size_t Tmax = task_max_target_len(t, 1, Lmax);
    size_t nidx = m->cfg.hidden > m->cfg.d_model ? m->cfg.hidden : m->cfg.d_model;
    nidx = (nidx > Lmax + Tmax ? nidx : Lmax + Tmax) + 2;
    char tdir[AFILE_PATH_MAX];
    if (batch_alloc(&b, 1, Lmax, Tmax) != 0 || !(out = malloc(Tmax * sizeof *out)) ||
        !(c.src = malloc(Lmax * sizeof *c.src)) || !(c.tgt = malloc(Tmax * sizeof *c.tgt)) ||
        !(c.tgt_in = malloc(Tmax * sizeof *c.tgt_in)) ||
        !(c.index = malloc(nidx * sizeof *c.index))) {
        snprintf(page_err, sizeof page_err, "out of memory");
        goto done;
    }
    if (task_parse(t, V, input, b.src, Lmax, &Ts, page_err, sizeof page_err) != 0)
        goto done;
    /* the target: the task's; for a data file the file's, when it holds this source */
    const long e = t->data ? dataset_find(t->data, b.src, Ts) : -1;
    const int known = !t->data || e >= 0;
    if (e >= 0) {
        const size_t idx = (size_t)e;
        task_fill_examples(t, &b, &idx, 1);
    } else {
        task_complete(t, &b, 1, Ts, V); /* a data file: only the target's length is used */
    }
    const size_t Tt = b.Tt;
    if (m->ops->reserve(m, 1, Ts, Tt) != 0) {
        snprintf(page_err, sizeof page_err, "out of memory");
        goto done;
    }
    if (model_decode(m, b.src, 1, Ts, Tt, out) != 0) {
        snprintf(page_err, sizeof page_err, "%s decode failed: %s", m->ops->name,
                 model_last_error());
        goto done;
    }
    for (size_t i = 0; i < Ts; i++)
        page_label(t, V, b.src[i], c.src[i]);
    for (size_t i = 0; i < Tt; i++) {
        page_label(t, V, out[i], c.tgt[i]);
        page_label(t, V, i == 0 ? (int)V : out[i - 1], c.tgt_in[i]); /* BOS first */
    }
    for (size_t i = 0; i < nidx; i++)
        snprintf(c.index[i], 16, "%u", (unsigned)i);
    c.n_index = nidx;
    afile_join(tdir, sizeof tdir, p->dir, "trace");
    c.dir = tdir;
    if (m->ops->trace) {
        int *again = malloc(Tt * sizeof *again);
        if (!again || afile_mkdirs(tdir, page_err, sizeof page_err) != 0 ||
            model_trace(m, b.src, Ts, Tt, again, page_trace_sink, &c) != 0 || c.failed) {
            if (!c.failed && again)
                snprintf(page_err, sizeof page_err, "%s trace failed: %s", m->ops->name,
                         model_last_error());
            free(again);
            goto done;
        }
        free(again);
    }
    FILE *f = open_memstream(&text, &text_len);
    if (!f) {
        snprintf(page_err, sizeof page_err, "out of memory");
        goto done;
    }
    fprintf(f, "decoded\t");
    page_words(f, t, V, out, Tt);
    if (known) {
        size_t ok = 0;
        for (size_t i = 0; i < Tt; i++)
            ok += out[i] == b.tgt[i];
        fprintf(f, "\ntarget\t");
        page_words(f, t, V, b.tgt, Tt);
        fprintf(f, "\ncorrect\t%zu/%zu", ok, Tt);
    }
    fputc('\n', f);
    fclose(f);
    page_set_text(text);
    rc = 0;
done:
    task_close(t);
    batch_free(&b);
    free(out);
    free(c.src);
    free(c.tgt);
    free(c.tgt_in);
    free(c.index);
    return rc;
}
