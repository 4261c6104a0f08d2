/* task.c — the task registry and batch generation (see task.h). */
#include "task.h"

#include <stdlib.h>
#include <string.h>

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
    if (!names[0])
        for (size_t k = 0; tasks[k]; k++) {
            if (k)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, tasks[k]->name, sizeof names - strlen(names) - 1);
        }
    return names;
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
    const size_t Tt = t->target_len(Ts);
    b->B = B;
    b->Ts = Ts;
    b->Tt = Tt;
    for (size_t i = 0; i < B; i++) {
        int *tgt = b->tgt + i * Tt, *din = b->dec_in + i * Tt;
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

int task_parse_tokens(const char *line, int *out, size_t max, size_t nsym, size_t *count,
                      char *err, size_t n)
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
        const size_t len = (size_t)(p - start);
        /* digits only, and few enough that the value cannot overflow */
        size_t value = 0;
        int digits = len <= 9;
        for (size_t i = 0; digits && i < len; i++) {
            if (start[i] < '0' || start[i] > '9')
                digits = 0;
            else
                value = value * 10 + (size_t)(start[i] - '0');
        }
        if (!digits) {
            snprintf(err, n, "'%.*s' is not a symbol (accepted: whole numbers 0..%zu)",
                     (int)(len > 32 ? 32 : len), start, nsym - 1);
            return -1;
        }
        if (value >= nsym) {
            snprintf(err, n, "symbol %zu is out of range (accepted: 0..%zu)", value, nsym - 1);
            return -1;
        }
        if (k == max) {
            snprintf(err, n, "more than %zu symbols (the model's max_len)", max);
            return -1;
        }
        out[k++] = (int)value;
    }
    if (k == 0) {
        snprintf(err, n, "empty line (accepted: symbols 0..%zu separated by spaces)", nsym - 1);
        return -1;
    }
    *count = k;
    return 0;
}
