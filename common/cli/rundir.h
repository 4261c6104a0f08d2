/* rundir.h — one finished run directory, read whole and checked (prefix: rundir_).
 *
 * A run directory is what `attnlab train --out DIR` leaves behind (columns in
 * docs/results-format.md):
 *     config.tsv          every setting, key<TAB>value
 *     build.tsv           build facts and run totals, key<TAB>value ("parameters",
 *                         "train_seconds", "train_steps", "best_step", "best_seconds",
 *                         "stopped" are read here)
 *     train_log.tsv       step, seconds, lr, loss, token_acc, seq_acc, grad_norm, seq_per_s,
 *                         val_loss, val_token_acc, val_seq_acc, val_seq_acc_max
 *     eval.tsv            model, len, samples, token_acc, seq_acc, loss
 *     eval_positions.tsv  model, len, position, accuracy
 *     cost.tsv            only when the run measured its cost (train --cost-lengths)
 *     eval_bleu.tsv       only for a file task: model, len, samples, hyp_len, ref_len,
 *                         match1, total1 .. match4, total4, bleu
 * Nothing is trusted: people copy, merge and edit these files, and a shared folder holds
 * files anybody wrote. rundir_load checks every value against what this program knows
 * before anything is computed — the model and the task against the registries, every
 * number against its range, one row per length (per length and position, per step) — and
 * refuses a malformed run whole, with one line naming the file, the line and the field.
 * What a loaded run holds is typed records, sorted by their key, that need no further
 * checks.
 */
#ifndef ATTNLAB_RUNDIR_H
#define ATTNLAB_RUNDIR_H

#include <stddef.h>

#include "../core/config.h"

/* One row of eval.tsv: greedy-decoding accuracy at one length. */
typedef struct rundir_eval {
    size_t len;                /* in [1, max_len] */
    double token_acc, seq_acc; /* in [0, 1] */
    size_t line;               /* the line of eval.tsv it was read from */
} rundir_eval;

/* One row of eval_positions.tsv: accuracy at one output position of one length. */
typedef struct rundir_pos {
    size_t len, position; /* len one of eval.tsv's; position in [1, target length] */
    double acc;           /* in [0, 1] */
    size_t line;          /* the line of eval_positions.tsv it was read from */
} rundir_pos;

/* One row of train_log.tsv. The validation columns are NAN in a log that has none (a
 * run of an attnlab before validation); in a log that has them, every row has them. */
typedef struct rundir_step {
    size_t step;                       /* in [1, steps] */
    double seconds, loss, token_acc;   /* >= 0, >= 0, in [0, 1] */
    double val_loss;                   /* >= 0 or inf */
    double val_token_acc, val_seq_acc_max; /* in [0, 1] */
    size_t line;                       /* the line of train_log.tsv it was read from */
} rundir_step;

/* How a run ended (build.tsv: stopped). */
typedef enum rundir_end {
    RUNDIR_END_UNKNOWN = 0, /* not recorded (a run of an attnlab before the stopping rule) */
    RUNDIR_END_BUDGET,      /* "budget": it ran every step */
    RUNDIR_END_CONVERGED,   /* "converged": patience validations without an improvement */
    RUNDIR_END_TARGET       /* "target": its validation token accuracy reached stop_acc */
} rundir_end;

/* One row of cost.tsv. */
typedef struct rundir_cost {
    size_t len;                        /* in [1, max_len] */
    double train_ms, flops, decode_ms; /* >= 0 */
    size_t line;                       /* the line of cost.tsv it was read from */
} rundir_cost;

/* One row of eval_bleu.tsv: the BLEU-4 counts of the test set's examples of one source
 * length (bleu.h), so that lengths and runs are pooled exactly. */
typedef struct rundir_bleu {
    size_t len;                  /* one of eval.tsv's */
    size_t samples;              /* the examples of that length, >= 1 */
    double hyp_len, ref_len;     /* whole numbers >= 0 */
    double match[4], total[4];   /* whole numbers, 0 <= match <= total */
    size_t line;                 /* the line of eval_bleu.tsv it was read from */
} rundir_bleu;

/* What one run directory holds. Each array is sorted by its key (len; len then
 * position; step) and holds one record per key; eval holds at least one. */
typedef struct rundir {
    const char *dir;              /* the directory (the caller's string, not copied) */
    config cfg;                   /* config.tsv over the generic defaults; a registered
                                     model and task, every setting within its range */
    double params;                /* build.tsv: parameters, a whole number >= 1 */
    double train_seconds;         /* build.tsv: train_seconds >= 0, NAN when absent */
    double train_steps;           /* build.tsv: train_steps in [1, steps], NAN when absent */
    double best_step;             /* build.tsv: best_step in [1, steps], NAN when absent */
    double best_seconds;          /* build.tsv: best_seconds >= 0, NAN when absent */
    rundir_end end;               /* build.tsv: stopped */
    int has_val;                  /* train_log.tsv has the validation columns */
    rundir_eval *eval;
    size_t n_eval;
    rundir_pos *pos;
    size_t n_pos;
    rundir_step *log;
    size_t n_log;
    rundir_cost *cost;            /* n_cost == 0 when there is no cost.tsv */
    size_t n_cost;
    rundir_bleu *bleu;            /* n_bleu == 0 when there is no eval_bleu.tsv */
    size_t n_bleu;
} rundir;

/* Loads run directory dir into r. Returns 0, or -1 with one line in err (n bytes) and
 * nothing held: a missing file, a missing column, a value that is not of its kind or
 * out of its range, a second row for one key, an eval.tsv without rows, a byte that is
 * not text. Values quoted in err are made printable (rundir_printable). */
int rundir_load(rundir *r, const char *dir, char *err, size_t n);

/* Loads what a run still training has written into dir: config.tsv and train_log.tsv,
 * checked as rundir_load checks them. Nothing else is read: params and the build.tsv
 * totals are NAN, end RUNDIR_END_UNKNOWN, and there is no evaluation (n_eval = 0), no
 * cost and no BLEU. Returns 0, or -1 with one line in err and nothing held. */
int rundir_load_training(rundir *r, const char *dir, char *err, size_t n);

/* Frees what rundir_load or rundir_load_training filled. Safe on a zeroed or freed run. */
void rundir_free(rundir *r);

/* The record of length len in r's eval (or cost), or NULL. O(log n). */
const rundir_eval *rundir_eval_at(const rundir *r, size_t len);
const rundir_cost *rundir_cost_at(const rundir *r, size_t len);

/* The BLEU counts of length len, or NULL (none, or no eval_bleu.tsv). O(log n). */
const rundir_bleu *rundir_bleu_at(const rundir *r, size_t len);
/* The record of output position position at length len, or NULL. O(log n). */
const rundir_pos *rundir_pos_at(const rundir *r, size_t len, size_t position);

/* The log record of step step, or NULL. O(log n). */
const rundir_step *rundir_step_at(const rundir *r, size_t step);

/* Is s text a person can read: valid UTF-8 (no overlong form, no surrogate, nothing
 * above U+10FFFF) without a control character (C0, DEL, C1)? Returns 1 or 0; for 0,
 * *bad (when not NULL) is the offset of the first offending byte. */
int rundir_is_text(const char *s, size_t *bad);

/* Copies s into buf (n bytes) so that it prints as one line of text: valid UTF-8 is
 * kept, every control character and every byte that is not UTF-8 becomes \xNN, and what
 * does not fit ends in "...". Returns buf. */
const char *rundir_printable(const char *s, char *buf, size_t n);

#endif
