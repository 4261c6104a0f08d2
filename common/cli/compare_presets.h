/* compare_presets.h — the experiments `attnlab compare --preset NAME` runs (prefix:
 * compare_): their steps, lengths, seeds, stopping rule and setups.
 */
#ifndef ATTNLAB_COMPARE_PRESETS_H
#define ATTNLAB_COMPARE_PRESETS_H

#include <stddef.h>

/* The experiment presets. Every run validates at each log line and stops when it has
 * converged (patience validations without an improvement: docs/compare.md, "Training to
 * convergence") or when its validation token accuracy reaches stop_acc (nothing left to
 * learn); steps is then the budget cap, and a run that reaches it is censored: it did not
 * reach the target within the cap, and the report says so. Smoke has no patience: it
 * tests the pipeline, not learning. The others decay the learning rate by a cosine over
 * decay_steps, a horizon of its own (the cap plays no part in the schedule, so a ratio
 * of budgets does not move with it), then hold the floor, and validate on a log-spaced
 * schedule from val_first on, so that a model that learns in a few hundred steps is
 * resolved to 10% rather than to the next multiple of log_every. */
typedef struct compare_preset {
    const char *name;
    size_t seeds, steps, train_min, train_max, samples;
    const char *eval_lengths, *cost_lengths;
    size_t log_every, patience; /* validation interval; validations without improvement */
    size_t val_window;          /* validations the plateau test averages */
    double stop_acc;            /* validation token accuracy that ends a run (0: none) */
    size_t decay_steps;         /* cosine horizon after the warm-up (0: to the cap) */
    size_t val_first;           /* first validation of the log-spaced schedule (0: none) */
    const char *task;           /* the task (NULL: copy, or --task) */
    const char *about;
    /* The setups to train, for each model of --models in turn: the model once at its
     * defaults (SWEEP_NONE), each setting its ops list for the preset (SWEEP_OPS:
     * model_sweep_of), or once at each rate of lr_rates (SWEEP_LR). */
    enum { SWEEP_NONE, SWEEP_OPS, SWEEP_LR } sweep;
    /* SWEEP_OPS: 1 trains a model that lists nothing once at its defaults; 0 leaves it out
     * unless --models names it. */
    int others;
} compare_preset;

/* Every preset, in the order the help lists them. */
extern const compare_preset compare_presets[];
extern const size_t compare_n_presets;

/* The rates of the learning-rate sweep (SWEEP_LR), "lr=R" each, NULL-terminated. */
extern const char *const compare_lr_rates[];

/* The preset called name, or NULL. */
const compare_preset *compare_preset_named(const char *name);

#endif
