/* task.c — the task registry, batch generation, and the tasks read from a file (see
 * task.h). */
#include "task.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* Every task; add a new one here after writing its file. */
static const task *const tasks[] = {&task_copy, &task_reverse, NULL};

const task *task_lookup(const char *name)
{
    for (size_t k = 0; tasks[k]; k++)
        if (strcmp(tasks[k]->name, name) == 0)
            return tasks[k];
    return NULL;
}

const char *task_names(void)
{
    static char names[256];
    if (!names[0]) {
        for (size_t k = 0; tasks[k]; k++) {
            strncat(names, tasks[k]->name, sizeof names - strlen(names) - 1);
            strncat(names, ", ", sizeof names - strlen(names) - 1);
        }
        strncat(names, TASK_FILE_PREFIX "PATH", sizeof names - strlen(names) - 1);
    }
    return names;
}

const task *task_at(size_t k)
{
    for (size_t i = 0; tasks[i]; i++)
        if (i == k)
            return tasks[i];
    return NULL;
}

int task_is_file(const char *name)
{
    const size_t k = strlen(TASK_FILE_PREFIX);
    return strncmp(name, TASK_FILE_PREFIX, k) == 0 && name[k] != '\0';
}

int task_known(const char *name) { return task_lookup(name) || task_is_file(name); }

void task_short_name(const char *name, char *buf, size_t n)
{
    if (!task_is_file(name)) {
        snprintf(buf, n, "%s", name);
        return;
    }
    const char *path = name + strlen(TASK_FILE_PREFIX), *slash = strrchr(path, '/');
    const char *base = slash && slash[1] ? slash + 1 : path, *dot = strrchr(base, '.');
    const size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    snprintf(buf, n, "%.*s", (int)len, base);
}

/* A task read from a file: the table and the data it points to, allocated together. */
typedef struct file_task {
    task t;
    dataset d;
    char name[CONFIG_TASK_MAX];
} file_task;

/* task_open and task_open_new: check says whether a file task must be the file of c
 * (its data_crc and symbols) or is read as it is. */
static const task *open_task(const config *c, int check, char *err, size_t n)
{
    if (!task_is_file(c->task)) {
        const task *t = task_lookup(c->task);
        if (!t)
            snprintf(err, n, "unknown task '%s' (accepted: %s)", c->task, task_names());
        return t;
    }
    file_task *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    const char *path = c->task + strlen(TASK_FILE_PREFIX);
    if (dataset_read(&f->d, path, c->max_len, err, n) != 0) {
        free(f);
        return NULL;
    }
    /* every CRC-32 is a real one, 0 too: no value of data_crc turns the check off */
    if (check && (f->d.crc != c->data_crc || f->d.V != c->symbols)) {
        snprintf(err, n, "%.200s has changed since the run was trained (its CRC-32 is %lu, "
                 "the run's --data-crc %lu): put the file the run was trained on back, or "
                 "train again", path, (unsigned long)f->d.crc, c->data_crc);
        dataset_free(&f->d);
        free(f);
        return NULL;
    }
    snprintf(f->name, sizeof f->name, "%s", c->task);
    f->t.name = f->name;
    f->t.about = "your own data: SOURCE<TAB>TARGET lines";
    f->t.data = &f->d;
    return &f->t;
}

const task *task_open(const config *c, char *err, size_t n) { return open_task(c, 1, err, n); }

const task *task_open_new(const config *c, char *err, size_t n)
{
    return open_task(c, 0, err, n);
}

void task_close(const task *t)
{
    if (!t || !t->data)
        return;
    /* t is the first member of its file_task */
    file_task *f = (file_task *)(void *)(uintptr_t)t;
    dataset_free(&f->d);
    free(f);
}

size_t task_target_len(const task *t, size_t Ts)
{
    return t->data ? dataset_target_len(t->data, Ts) : t->target_len(Ts);
}

size_t task_gap(const task *t, size_t Ts, size_t pos)
{
    if (t->data || !t->source_of || pos >= t->target_len(Ts))
        return 0;
    return Ts - t->source_of(Ts, pos) + pos;
}

size_t task_max_target_len(const task *t, size_t lo, size_t hi)
{
    size_t top = 0;
    for (size_t L = lo; L <= hi; L++)
        if (task_target_len(t, L) > top)
            top = task_target_len(t, L);
    return top;
}

int batch_alloc(batch *b, size_t B, size_t Ts, size_t Tt)
{
    b->B = b->Ts = b->Tt = 0;
    b->src = malloc(B * Ts * sizeof(int));
    b->dec_in = malloc(B * Tt * sizeof(int));
    b->tgt = malloc(B * Tt * sizeof(int));
    if (!b->src || !b->dec_in || !b->tgt) {
        batch_free(b);
        return -1;
    }
    return 0;
}

void batch_free(batch *b)
{
    free(b->src);
    free(b->dec_in);
    free(b->tgt);
    b->src = b->dec_in = b->tgt = NULL;
}

void task_complete(const task *t, batch *b, size_t B, size_t Ts, size_t nsym)
{
    const size_t Tt = task_target_len(t, Ts);
    b->B = B;
    b->Ts = Ts;
    b->Tt = Tt;
    for (size_t i = 0; i < B; i++) {
        int *tgt = b->tgt + i * Tt, *din = b->dec_in + i * Tt;
        if (t->data) /* a stand-in of the right shape: the source, repeated */
            for (size_t k = 0; k < Tt; k++)
                tgt[k] = b->src[i * Ts + k % Ts];
        else
            t->target(tgt, b->src + i * Ts, Ts, nsym);
        /* teacher forcing: the decoder reads BOS, y_1, ..., y_{Tt-1} */
        din[0] = (int)nsym;
        for (size_t k = 1; k < Tt; k++)
            din[k] = tgt[k - 1];
    }
}

void task_fill(const task *t, batch *b, size_t B, size_t Ts, size_t nsym, const gsl_rng *r)
{
    for (size_t i = 0; i < B * Ts; i++)
        b->src[i] = (int)gsl_rng_uniform_int(r, (unsigned long)nsym);
    task_complete(t, b, B, Ts, nsym);
}

/* Puts example e of t's data into row i of b (whose Ts and Tt are e's). */
static void put_example(const task *t, batch *b, size_t i, size_t e)
{
    const dataset_example *x = &t->data->ex[e];
    int *tgt = b->tgt + i * b->Tt, *din = b->dec_in + i * b->Tt;
    memcpy(b->src + i * b->Ts, x->src, b->Ts * sizeof *x->src);
    memcpy(tgt, x->tgt, b->Tt * sizeof *x->tgt);
    /* teacher forcing: BOS, y_1, ..., y_{Tt-1} */
    din[0] = (int)t->data->V;
    for (size_t k = 1; k < b->Tt; k++)
        din[k] = tgt[k - 1];
}

void task_fill_examples(const task *t, batch *b, const size_t *idx, size_t B)
{
    b->B = B;
    b->Ts = t->data->ex[idx[0]].Ts;
    b->Tt = t->data->ex[idx[0]].Tt;
    for (size_t i = 0; i < B; i++)
        put_example(t, b, i, idx[i]);
}

void task_train_batch(const task *t, batch *b, size_t B, const config *c, const gsl_rng *r)
{
    if (!t->data) { /* exactly the draws of a generated task, in the same order */
        const size_t L = rng_range(r, c->train_min, c->train_max);
        task_fill(t, b, B, L, c->symbols, r);
        return;
    }
    const dataset_bucket *bk =
        dataset_pick_bucket(t->data, DATASET_TRAIN, c->train_min, c->train_max, r);
    b->B = B;
    b->Ts = bk->Ts;
    b->Tt = bk->Tt;
    for (size_t i = 0; i < B; i++)
        put_example(t, b, i, dataset_draw(bk, r));
}

/* How one word of a line becomes a token: its value, or -1 with one line in err. */
typedef long (*word_token)(const void *ctx, const char *word, size_t len, char *err,
                           size_t n);

/* Splits line at blanks (space, tab, CR, LF) and maps each word with token (ctx passed
 * on) into out, at most max words; accepted says what a line holds, for the message of
 * an empty one. The contract of task_parse_tokens. */
static int parse_words(const char *line, word_token token, const void *ctx,
                       const char *accepted, int *out, size_t max, size_t *count, char *err,
                       size_t n)
{
    size_t k = 0;
    const char *p = line;
    *count = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (*p == '\0')
            break;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
            p++;
        const long tok = token(ctx, start, (size_t)(p - start), err, n);
        if (tok < 0)
            return -1;
        if (k == max) {
            snprintf(err, n, "more than %zu symbols (the model's max_len)", max);
            return -1;
        }
        out[k++] = (int)tok;
    }
    if (k == 0) {
        snprintf(err, n, "empty line (accepted: %s)", accepted);
        return -1;
    }
    *count = k;
    return 0;
}

/* A word of a generated task: a whole number below *(const size_t *)ctx. */
static long number_token(const void *ctx, const char *word, size_t len, char *err, size_t n)
{
    const size_t nsym = *(const size_t *)ctx;
    /* digits only, and few enough that the value cannot overflow */
    size_t value = 0;
    int digits = len <= 9;
    for (size_t i = 0; digits && i < len; i++) {
        if (word[i] < '0' || word[i] > '9')
            digits = 0;
        else
            value = value * 10 + (size_t)(word[i] - '0');
    }
    if (!digits) {
        snprintf(err, n, "'%.*s' is not a symbol (accepted: whole numbers 0..%zu)",
                 (int)(len > 32 ? 32 : len), word, nsym - 1);
        return -1;
    }
    if (value >= nsym) {
        snprintf(err, n, "symbol %zu is out of range (accepted: 0..%zu)", value, nsym - 1);
        return -1;
    }
    return (long)value;
}

/* A word of a file task: one of the vocabulary of the dataset ctx. */
static long vocabulary_token(const void *ctx, const char *word, size_t len, char *err,
                             size_t n)
{
    const dataset *d = ctx;
    const long tok = dataset_word(d, word, len);
    if (tok < 0)
        snprintf(err, n, "'%.*s' is not a symbol of the data's vocabulary (accepted: the %zu "
                 "words of the file, e.g. '%s')", (int)(len > 32 ? 32 : len), word, d->V,
                 d->words[0]);
    return tok;
}

int task_parse_tokens(const char *line, int *out, size_t max, size_t nsym, size_t *count,
                      char *err, size_t n)
{
    char accepted[64];
    snprintf(accepted, sizeof accepted, "symbols 0..%zu separated by spaces", nsym - 1);
    return parse_words(line, number_token, &nsym, accepted, out, max, count, err, n);
}

int task_parse_words(const dataset *d, const char *line, int *out, size_t max,
                     size_t *count, char *err, size_t n)
{
    return parse_words(line, vocabulary_token, d, "words of the data separated by spaces", out,
                       max, count, err, n);
}

int task_parse(const task *t, size_t nsym, const char *line, int *out, size_t max,
               size_t *count, char *err, size_t n)
{
    if (t->data)
        return task_parse_words(t->data, line, out, max, count, err, n);
    return task_parse_tokens(line, out, max, nsym, count, err, n);
}

void task_symbol(const task *t, size_t nsym, int tok, char *buf, size_t n)
{
    if (tok == (int)nsym)
        snprintf(buf, n, "BOS");
    else if (t && t->data && tok >= 0 && (size_t)tok < t->data->V)
        snprintf(buf, n, "%s", t->data->words[tok]);
    else
        snprintf(buf, n, "%d", tok);
}

int task_file_config(config *c, const task_file_given *given, char *err, size_t n)
{
    const task *t = task_open_new(c, err, n); /* read as it is; compared below */
    if (!t)
        return TASK_FILE_UNREADABLE;
    const dataset *d = t->data;
    const dataset_range tr = d->set[DATASET_TRAIN];
    const size_t lo = d->ex[tr.first].Ts, hi = d->ex[tr.first + tr.count - 1].Ts;
    int rc = 0;
    if (given->symbols && c->symbols != d->V) {
        snprintf(err, n, "%s %zu disagrees with the %zu symbols of the vocabulary of %s "
                 "(leave %s out: the file decides it)", given->symbols, c->symbols, d->V,
                 c->task, given->symbols);
        rc = -1;
    } else if (given->data_crc && c->data_crc != d->crc) {
        snprintf(err, n, "%s %lu disagrees with the CRC-32 %lu of %s (the file changed, or "
                 "leave %s out)", given->data_crc, c->data_crc, (unsigned long)d->crc,
                 c->task, given->data_crc);
        rc = -1;
    }
    if (rc == 0) {
        c->symbols = d->V;
        c->data_crc = d->crc;
        if (!given->train_len) {
            c->train_min = lo;
            c->train_max = hi;
        } else if (c->train_min <= c->train_max) {
            for (int s = DATASET_TRAIN; s <= DATASET_VAL && rc == 0; s++)
                if (dataset_within(d, (dataset_set)s, c->train_min, c->train_max).count == 0) {
                    snprintf(err, n, "%s %zu:%zu: no %s example of %s has a source length in "
                             "that range (accepted: a range that holds some; its training "
                             "sources are %zu to %zu symbols long)", given->train_len,
                             c->train_min, c->train_max,
                             s == DATASET_TRAIN ? "training" : "validation", c->task, lo, hi);
                    rc = -1;
                }
        }
    }
    task_close(t);
    return rc;
}
