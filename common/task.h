/* task.h — the toy tasks (prefix: task_).
 *
 * A task maps a source sequence of data symbols to a target sequence. Sources are drawn
 * uniformly from the V data symbols; the task only says what the answer is, so adding a
 * task is one small file with one function (see task_copy.c) and a line in task.c.
 *
 * In `copy`, output i is produced Tt steps after input i was read, so the sequence length
 * is the distance the information must be carried: the quantity the experiment varies.
 */
#ifndef ATTNLAB_TASK_H
#define ATTNLAB_TASK_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "model.h"

typedef struct task {
    const char *name;
    const char *about; /* one line for help */
    /* Target length for a source of length Ts. */
    size_t (*target_len)(size_t Ts);
    /* Writes the target of src (Ts symbols in 0..nsym-1) into tgt (target_len(Ts)). */
    void (*target)(int *tgt, const int *src, size_t Ts, size_t nsym);
} task;

extern const task task_copy;
extern const task task_reverse;

/* The task called name, or NULL. */
const task *task_lookup(const char *name);
/* Comma-separated names of every task (for messages). */
const char *task_names(void);

/* Allocates token storage for batches of up to B sequences of lengths up to Ts, Tt. */
int batch_alloc(batch *b, size_t B, size_t Ts, size_t Tt);
void batch_free(batch *b);

/* Fills b with B examples whose sources have length Ts, drawn from r: the source, the
 * task's target, and the decoder input (BOS, then the target shifted right by one). */
void task_fill(const task *t, batch *b, size_t B, size_t Ts, size_t nsym, const gsl_rng *r);

/* Completes b from sources already in b->src (B, Ts): targets and decoder inputs. */
void task_complete(const task *t, batch *b, size_t B, size_t Ts, size_t nsym);


/* Parses a line of whitespace-separated data symbols (each a whole number in
 * 0..nsym-1) into out, at most max of them, and sets *count. Returns 0; or -1 with one
 * line in err naming the offending word (not a number, out of range), an empty line, or a
 * line with more than max symbols. */
int task_parse_tokens(const char *line, int *out, size_t max, size_t nsym, size_t *count,
                      char *err, size_t n);

#endif
