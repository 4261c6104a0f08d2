/* trainfiles.h — the files a training run writes as it goes (prefix: trainfiles_): the
 * log held in memory, config.tsv, build.tsv, and the periodic checkpoint set.
 *
 * Design. The log of a run lives in a memory stream and is written whole at every
 * checkpoint, beside the checkpoint it reaches; the set of a checkpoint (train_log.tsv,
 * best.ckpt, checkpoint.ckpt) is staged under temporary names and renamed into place only
 * when every file is whole, checkpoint.ckpt last, so what is on disk is always one
 * consistent set. attnlab train (cmd_train.c) is the only user; the run directory itself
 * (its lock, args.txt, what --resume checks) is traindir.h's.
 */
#ifndef ATTNLAB_TRAINFILES_H
#define ATTNLAB_TRAINFILES_H

#include <stddef.h>
#include <stdio.h>

#include "../core/model.h"
#include "../core/optim.h"
#include "../core/rng.h"
#include "../core/train.h"

/* The log lives in a memory stream; every checkpoint writes it whole to train_log.tsv, so
 * the log on disk always matches the last checkpoint, whatever stops the run. */
typedef struct trainfiles_log {
    FILE *f;
    char *buf;
    size_t len;
} trainfiles_log;

/* The facts of a run besides its configuration: build, BLAS, size, time (build.tsv). */
typedef struct trainfiles_facts {
    const model *m;
    const train_summary *ts;
    const train_best *best;
} trainfiles_facts;

/* The periodic checkpoint: weights, Adam's moments, the three random streams, and the
 * log up to this step. */
typedef struct trainfiles_ckpt {
    model *m;
    rng_streams *r;
    const char *dir;
    trainfiles_log *log;
    train_best *best; /* the best validation so far, its weights in best->w */
    size_t best_saved; /* the step whose best weights best.ckpt holds (0: none) */
    size_t ckpt_step;  /* the step of checkpoint.ckpt on disk (0: none) */
    size_t log_step;   /* the step train_log.tsv on disk is complete to (0: no log) */
} trainfiles_ckpt;

/* Writes the log l holds so far to f (an afile's stream). Returns 0, or -1. */
int trainfiles_write_log(FILE *f, const void *l);

/* Writes the configuration c (a config) to f as config.tsv. Returns 0, or -1. */
int trainfiles_write_config(FILE *f, const void *c);

/* Writes build.tsv to f from a trainfiles_facts: the build and its BLAS (buildinfo.h),
 * the number of parameters, how training ended and the step of the best validation.
 * Returns 0, or -1. */
int trainfiles_write_build(FILE *f, const void *facts);

/* Saves the set of a checkpoint of the trainfiles_ckpt p at step, with Adam's state o:
 * train_log.tsv, best.ckpt (when the best weights changed) and checkpoint.ckpt. All three
 * are written under their temporary names first, and only when every one of them is
 * whole are they renamed into place, the log first and checkpoint.ckpt last: the
 * checkpoint is the commit point, so the log on disk always reaches the step of the
 * checkpoint beside it, and a failure while writing (a full disk) leaves the previous
 * set as it was. Updates p's steps on disk. Returns 0, or -1 after the message. The
 * signature is that of train_hooks' save. */
int trainfiles_save(void *p, size_t step, const optim *o);

#endif
