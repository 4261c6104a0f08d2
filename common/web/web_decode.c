/* web_decode.c — the page's decoding of one input: the output, its target when known,
 * and every matrix of the model's trace written under the run's trace/ (prefix: page_).
 *
 * Design. The same labels and files as `attnlab attention`, written by the same code
 * (common/core/tracefile.h), so the page's figure scripts and a downloaded run read them
 * alike. Part of the page's
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
#include "../core/tracefile.h"
#include "web_page.h"
#include "web_run.h"

/* ---- decoding an input ------------------------------------------------------------------ */

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
    tracefile c;
    memset(&c, 0, sizeof c);
    char *text = NULL;
    size_t text_len = 0;
    const size_t Tmax = task_max_target_len(t, 1, Lmax);
    char tdir[AFILE_PATH_MAX];
    if (batch_alloc(&b, 1, Lmax, Tmax) != 0 || !(out = malloc(Tmax * sizeof *out))) {
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
    afile_join(tdir, sizeof tdir, p->dir, "trace");
    if (tracefile_init(&c, m, t, b.src, Ts, out, Tt, tdir) != 0) {
        snprintf(page_err, sizeof page_err, "out of memory");
        goto done;
    }
    if (m->ops->trace) {
        int *again = malloc(Tt * sizeof *again);
        if (!again || afile_mkdirs(tdir, page_err, sizeof page_err) != 0 ||
            model_trace(m, b.src, Ts, Tt, again, tracefile_sink, &c) != 0 || c.failed) {
            if (c.failed)
                snprintf(page_err, sizeof page_err, "%s", c.err[0] ? c.err
                         : "the trace sent a matrix whose axes have no labels");
            else if (again)
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
    tracefile_free(&c);
    return rc;
}
