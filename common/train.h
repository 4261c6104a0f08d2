/* train.h — the training loop (prefix: train_).
 *
 * One step: draw a length L from the training range and a batch of B sequences of that
 * length (training stream), zero the gradients, forward (teacher forcing), backward,
 * clip the global gradient norm, one Adam update at the (warmed-up) learning rate. The
 * loop reports progress on the terminal (a bar when standard error is a terminal, plain
 * lines otherwise) and writes a TSV log with one line every log_every steps, averaged
 * over those steps:
 *     step  seconds  lr  loss  token_acc  seq_acc  grad_norm  seq_per_s
 * token_acc and seq_acc are teacher-forced (argmax of each position given the true
 * prefix), the cheap signal of training; the greedy-decoding accuracy is eval's job.
 */
#ifndef ATTNLAB_TRAIN_H
#define ATTNLAB_TRAIN_H

#include <stdio.h>

#include "model.h"
#include "optim.h"
#include "rng.h"
#include "task.h"

typedef enum { TRAIN_QUIET = 0, TRAIN_BAR = 1, TRAIN_LINES = 2 } train_progress;

typedef struct train_summary {
    size_t steps;      /* steps done */
    double seconds;    /* wall time of the training loop */
    double loss;       /* mean loss of the last log interval */
    double token_acc;  /* teacher-forced token accuracy of the last log interval */
} train_summary;

/* Trains m for c->steps steps on task t, drawing data from r->s[RNG_TRAIN]. Writes the
 * TSV log to log (header included) when log is not NULL. The model must be initialised.
 * Returns 0; or -1 with one line in err when memory runs out or the loss or gradient
 * stops being finite (the line names the step and the hint). */
int train_run(model *m, const task *t, const config *c, rng_streams *r, FILE *log,
              train_progress progress, train_summary *out, char *err, size_t n);

/* Seconds on a monotonic clock. */
double train_now(void);

#endif
