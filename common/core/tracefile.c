/* tracefile.c — a model's trace written as labelled matrices, one file each (see
 * tracefile.h).
 *
 * Design. The front-ends decode an example and hand tracefile_sink to model_trace; the
 * labels of every axis are made once, before the trace, from the tokens of the example,
 * so the sink only looks them up by the axis kind the model names. Nothing is printed
 * here: a front-end that shows the matrices sets the show hook.
 */
#include "tracefile.h"

#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "dataset.h"

int tracefile_write_matrix(FILE *f, const gsl_matrix *m, const char (*rows)[16],
                           const char (*cols)[16], const char *corner)
{
    fprintf(f, "%s", corner);
    for (size_t j = 0; j < m->size2; j++)
        fprintf(f, "\t%s", cols[j]);
    fputc('\n', f);
    for (size_t i = 0; i < m->size1; i++) {
        fprintf(f, "%s", rows[i]);
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, "\t%.6g", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

void tracefile_label(const task *t, size_t nsym, int tok, char lab[16])
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

int tracefile_init(tracefile *tf, const model *m, const task *t, const int *src, size_t Ts,
                   const int *out, size_t Tt, const char *dir)
{
    memset(tf, 0, sizeof *tf);
    const size_t V = m->cfg.symbols;
    /* labels for every axis a model may use: tokens, units (as many as its ops say its
     * trace sends), or steps of an encoder and a decoder */
    size_t nidx = m->ops->trace_units ? m->ops->trace_units(&m->cfg) : 0;
    nidx = (nidx > Ts + Tt ? nidx : Ts + Tt) + 2;
    tf->dir = dir;
    tf->src = malloc((Ts ? Ts : 1) * sizeof *tf->src);
    tf->tgt = malloc((Tt ? Tt : 1) * sizeof *tf->tgt);
    tf->tgt_in = malloc((Tt ? Tt : 1) * sizeof *tf->tgt_in);
    tf->index = malloc(nidx * sizeof *tf->index);
    if (!tf->src || !tf->tgt || !tf->tgt_in || !tf->index)
        return -1;
    tf->n_index = nidx;
    for (size_t i = 0; i < Ts; i++)
        tracefile_label(t, V, src[i], tf->src[i]);
    for (size_t i = 0; i < Tt; i++) {
        tracefile_label(t, V, out[i], tf->tgt[i]);
        tracefile_label(t, V, i == 0 ? (int)V : out[i - 1], tf->tgt_in[i]); /* BOS first */
    }
    for (size_t i = 0; i < nidx; i++)
        snprintf(tf->index[i], 16, "%u", (unsigned)i);
    return 0;
}

void tracefile_free(tracefile *tf)
{
    free(tf->src);
    free(tf->tgt);
    free(tf->tgt_in);
    free(tf->index);
    tf->src = tf->tgt = tf->tgt_in = tf->index = NULL;
}

/* The labels of an axis of kind "src", "tgt", "tgt_in" or any other (numbered), or NULL
 * when n numbers are more than were made. */
static char (*axis_labels(tracefile *tf, const char *kind, size_t n))[16]
{
    if (strcmp(kind, "src") == 0)
        return tf->src;
    if (strcmp(kind, "tgt") == 0)
        return tf->tgt;
    if (strcmp(kind, "tgt_in") == 0)
        return tf->tgt_in;
    return n <= tf->n_index ? tf->index : NULL;
}

/* One matrix and its labels, for afile_write. */
typedef struct labelled {
    const gsl_matrix *m;
    const char (*rows)[16], (*cols)[16];
    const char *corner;
} labelled;

static int write_labelled(FILE *f, const void *ctx)
{
    const labelled *x = ctx;
    return tracefile_write_matrix(f, x->m, x->rows, x->cols, x->corner);
}

int tracefile_sink(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                   const char *cols)
{
    tracefile *tf = ctx;
    char(*rl)[16] = axis_labels(tf, rows, m->size1);
    char(*cl)[16] = axis_labels(tf, cols, m->size2);
    if (!rl || !cl) {
        tf->failed = 1;
        return -1;
    }
    if (tf->show)
        tf->show(tf->show_ctx, name, m, (const char(*)[16])rl, (const char(*)[16])cl);
    char file[128], corner[64];
    snprintf(file, sizeof file, "%s.tsv", name);
    snprintf(corner, sizeof corner, "%s\\%s", rows, cols);
    labelled x = {m, (const char(*)[16])rl, (const char(*)[16])cl, corner};
    if (afile_write(tf->dir, file, write_labelled, &x, tf->err, sizeof tf->err) != 0) {
        tf->failed = 1;
        return -1;
    }
    return 0;
}
