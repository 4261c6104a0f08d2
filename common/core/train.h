/* train.h — the training loop (prefix: train_).
 *
 * One step: draw a length L from the training range and a batch of B sequences of that
 * length (training stream), zero the gradients, forward (teacher forcing), backward,
 * clip the global gradient norm, one Adam update at the (warmed-up) learning rate. The
 * loop hands its progress to the caller (train_hooks' progress: the command line draws
 * a bar or plain lines; the loop prints nothing itself) and writes a TSV log with one
 * line every log_every steps, averaged over those steps:
 *     step  seconds  lr  loss  token_acc  seq_acc  grad_norm  seq_per_s
 *     val_loss  val_token_acc  val_seq_acc  val_seq_acc_max
 * token_acc and seq_acc are teacher-forced (argmax of each position given the true
 * prefix), the cheap signal of training.
 *
 * Validation and the stopping rule. At every log line the model is also evaluated by
 * greedy decoding on a validation set: val_samples fresh sequences spread over at most
 * TRAIN_VAL_LENGTHS lengths inside the training range (both ends included), drawn from
 * an evaluation stream of their own (the seed mixed with TRAIN_VAL_SEED), so they are
 * never the sequences of a training batch (beyond the chance repeats of a small space)
 * nor those of the final evaluation. val_* are its mean teacher-forced loss, token and
 * sequence accuracy over those lengths, and val_seq_acc_max the sequence accuracy at
 * the longest trained length (the budget figure reads it). Validation reads the weights
 * and its own stream only: a run takes the same training steps with or without it.
 * The best validation so far (highest token accuracy; an improvement must add at least
 * min_delta) is remembered with its weights, which the run keeps as its model. The run
 * stops early at the first validation whose token accuracy reaches stop_acc (the
 * target: nothing is left to learn), or after `patience` validations in a row in which
 * the mean of the last val_window validations did not rise by min_delta (converged: a
 * plateau; the mean keeps one lucky validation from passing for progress), else at
 * `steps` (the budget).
 *
 * When to validate. By default at every multiple of log_every and at the last step. With
 * val_first > 0, also on a log-spaced schedule from val_first on: each next validation
 * 10% further than the last (at least one step), never past the next multiple of
 * log_every, so that a model that learns in a few hundred steps is resolved to 10%, and
 * from 10·log_every on the schedule is the multiples of log_every alone. The plateau test
 * then counts only the validations at multiples of log_every (patience keeps its meaning
 * in steps); every validation may be the best and may reach the target.
 *
 * The learning rate. optim_lr_at over a decay that ends at train_decay_end: by default
 * `steps` (the cosine reaches its floor at the cap, the schedule of every earlier run),
 * or warmup + decay_steps when decay_steps > 0 (a horizon that does not depend on the
 * cap; after it the rate stays at the floor).
 */
#ifndef ATTNLAB_TRAIN_H
#define ATTNLAB_TRAIN_H

#include <signal.h>
#include <stdio.h>

#include "model.h"
#include "optim.h"
#include "rng.h"
#include "task.h"

/* How the caller wants progress shown: not at all (the progress hook is never called),
 * as a bar rewritten in place, or as one line per validation. The loop only passes it on
 * to the hook. */
typedef enum { TRAIN_QUIET = 0, TRAIN_BAR = 1, TRAIN_LINES = 2 } train_progress;

/* What the loop reports at every validation, and once more when it ends (done set, step
 * the last step run, the rest 0), for the caller to show. */
typedef struct train_tick {
    const char *model;  /* the model's name (ops->name) */
    size_t step, steps; /* the step just run, of c->steps */
    double loss;        /* mean training loss since the last validation */
    double token_acc;   /* mean teacher-forced token accuracy over the same steps */
    double steps_per_s; /* steps since the last validation per second of that interval */
    double seq_per_s;   /* sequences per second over the same interval (0: no time) */
    int done;           /* the loop has ended: the last report */
} train_tick;

/* A mean cross-entropy above this many nats per token means the weights have run away:
 * the model gives the right answers a probability below e^-10000, far beyond anything
 * training passes through (it starts near log V, about 2.4). Adam moves every weight by
 * about lr per step whatever the gradient, so saturating models (gates, a
 * softmax) can run away to absurd but finite losses that never become NaN; the run is
 * stopped there as if they had. */
#define TRAIN_LOSS_RUNAWAY 1e4

/* What train_run returns. */
enum { TRAIN_DONE = 0, TRAIN_STOPPED = 1, TRAIN_FAILED = -1 };

/* The longest window of validations the plateau test averages (val_window). */
#define TRAIN_WINDOW_MAX CONFIG_VAL_WINDOW_MAX

/* At most this many validation lengths, spread evenly over the training range. */
#define TRAIN_VAL_LENGTHS 4
/* Mixed into the run seed for the validation set's stream: other sequences than the
 * final evaluation's (which uses the seed itself), whatever the seed. */
#define TRAIN_VAL_SEED 0x5eed7a11ul

typedef struct train_summary {
    size_t steps;      /* the last step completed (counted from 1 across resumes) */
    double seconds;    /* wall time of this call's training loop */
    double loss;       /* mean loss of the last log interval */
    double token_acc;  /* teacher-forced token accuracy of the last log interval */
    int early;         /* why the stopping rule ended the run before `steps`: TRAIN_PLATEAU
                        * or TRAIN_TARGET; TRAIN_GO_ON (0) when it ran every step */
} train_summary;

/* The best validation of a run so far: in and out of train_run, so that a resumed run
 * goes on from what it had (its caller rebuilds it from the log and the saved weights). */
typedef struct train_best {
    size_t step;      /* the step of the best validation; 0: none yet */
    double token_acc; /* its validation token accuracy (the criterion) */
    double loss;      /* its validation loss */
    double seconds;   /* the run's seconds at that step (as the log counts them) */
    double recent[TRAIN_WINDOW_MAX]; /* the last validations' token accuracies (a ring) */
    size_t seen;      /* validations so far (recent holds the last min(seen, 64)) */
    double mean;      /* the best mean of val_window validations in a row so far */
    size_t since;     /* validations since that mean, none better by min_delta */
    double *w;        /* (n_params) its weights, kept by the loop; NULL: not kept */
} train_best;

/* The validation lengths of c: at most TRAIN_VAL_LENGTHS, evenly spread from train_min
 * to train_max, both included, each once. Returns how many (written into lens). */
size_t train_val_lengths(const config *c, size_t *lens);

/* Is step one of c's validations (and log lines)? The multiples of log_every, the last
 * step, and with val_first > 0 the log-spaced schedule above. */
int train_validates_at(const config *c, size_t step);

/* The step at which c's learning-rate decay reaches its floor: warmup + decay_steps, or
 * steps when decay_steps is 0. */
size_t train_decay_end(const config *c);

/* The verdicts of the stopping rule. */
enum {
    TRAIN_GO_ON = 0,   /* train on */
    TRAIN_PLATEAU = 1, /* patience > 0 validations in a row without an improvement */
    TRAIN_TARGET = 2   /* the validation token accuracy reached stop_acc > 0 */
};

/* Feeds one validation to the stopping rule: updates best (copying the weights w of n
 * doubles into best->w when this one is better: at least min_delta more token accuracy
 * than the best so far, the first, or one reaching stop_acc > 0, which every earlier
 * one fell short of) and returns the verdict: TRAIN_TARGET when this validation's token
 * accuracy reaches stop_acc > 0 (it is then the best); TRAIN_PLATEAU after
 * patience > 0 validations in a row in which the mean token accuracy of the last
 * val_window validations never rose min_delta above its best; else TRAIN_GO_ON. With
 * val_window 1 the mean is the validation itself. */
int train_val_update(train_best *best, const config *c, size_t step, double seconds,
                     double token_acc, double loss, const double *w, size_t n);

/* Ways for the caller to take part in a run; every field may be 0/NULL. */
typedef struct train_hooks {
    volatile sig_atomic_t *stop; /* set (by a signal handler): stop after the current step */
    size_t every;                /* call checkpoint after every this many steps; 0: never */
    /* Saves the state after step `step` (weights in m, moments in o, streams in r).
     * Returns 0, or -1 with its own message printed: the run then stops as failed. */
    int (*checkpoint)(void *ctx, size_t step, const optim *o);
    void *ctx;
    double seconds_offset;       /* added to the log's seconds (the time of earlier sessions) */
    /* Shows a report of the loop (train_tick) in the style asked for; called only when
     * that style is not TRAIN_QUIET. Never changes what the loop computes. */
    void (*progress)(void *progress_ctx, train_progress style, const train_tick *tick);
    void *progress_ctx;
} train_hooks;

/* Trains m on task t from step `first` (1 for a new run, k+1 to resume after step k)
 * to c->steps, drawing data from r->s[RNG_TRAIN] and updating the Adam moments in o (the
 * caller allocates o, zeroed for a new run or restored for a resumed one), validating at
 * every log line and stopping early by the rule above; best (may be NULL: not kept) holds
 * the best validation so far, zeroed for a new run. Writes one TSV
 * log line every c->log_every steps to log when it is not NULL (the caller writes the
 * header). Returns TRAIN_DONE; TRAIN_STOPPED when hooks->stop was set (out->steps says
 * after which step); or TRAIN_FAILED with one line in err when memory runs out, a
 * checkpoint hook fails, or the loss or a gradient stops being finite or the loss runs
 * away beyond TRAIN_LOSS_RUNAWAY (the line names
 * the model, the first tensor whose gradient is not finite, the step and the hint; the
 * weights are left as they were after the last good step). */
int train_run(model *m, const task *t, const config *c, rng_streams *r, optim *o,
              size_t first, FILE *log, train_progress progress, const train_hooks *hooks,
              train_best *best, train_summary *out, char *err, size_t n);

/* The header line of the training log. */
void train_log_header(FILE *log);

/* Seconds on a monotonic clock. */
double train_now(void);

/* Writes a run's build.tsv on f, as every front-end writes it: the header "key value",
 * the lines build(f) writes (the program's build facts: buildinfo_write_tsv), then
 * parameters, and when ts is not NULL train_steps, train_seconds and how the run stopped
 * ("converged": a plateau; "target": its validation reached stop_acc; "budget": it ran
 * every step), and when best has a step, the best validation's step, seconds, token
 * accuracy and loss (the weights of model.ckpt). Returns 0, or -1 on a write error. */
int train_write_build(FILE *f, void (*build)(FILE *f), size_t params,
                      const train_summary *ts, const train_best *best);

#endif
