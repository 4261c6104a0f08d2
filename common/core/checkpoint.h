/* checkpoint.h — saving a model to a file and loading it back, checked at every step
 * (prefix: ckpt_).
 *
 * Design. A checkpoint is one binary file (the layout, byte by byte, is in
 * docs/checkpoint-format.md; checkpoint_format.c encodes and decodes it):
 *     fixed header   magic "ATTNCKPT", format version, flags, total file length, and a
 *                    CRC-32 of those 24 bytes
 *     model          the registry name
 *     configuration  the full config as "key<TAB>value" lines (readable with `strings`)
 *     tensor table   name, rows and cols of every tensor, in arena order
 *     parameters     the parameter block, little-endian IEEE-754 doubles
 *     training state optional: step, Adam's m and v, the state bytes of three gsl_rng
 *     CRC-32         of every byte before it
 * Every integer is little-endian and every double is written byte by byte from its bit
 * pattern, so a file is read back bit-identically on any machine.
 *
 * Invariants. A save writes a temporary file in the same directory, flushes it to disk
 * and renames it over the path (afile.h, the one policy of every file the toolkit
 * writes): the path holds either the previous file or the complete new one, never a
 * mixture, whatever happens during the save. A load trusts nothing in the file: each
 * length is checked against the bytes that remain before anything is allocated, the
 * whole file is checked against its CRC before any value is used, and the tensor table
 * must equal the one the stored configuration builds, so a model never runs on weights
 * of another shape. Every failure is one line in the caller's error buffer: "checkpoint
 * PATH: ..." for what the format refuses, "cannot write PATH: ..." for a failed write.
 */
#ifndef ATTNLAB_CHECKPOINT_H
#define ATTNLAB_CHECKPOINT_H

#include <stddef.h>

#include "afile.h"
#include "model.h"

#define CKPT_FORMAT_VERSION 1 /* the only version this build writes and reads */
#define CKPT_RNG_STREAMS 3    /* generator streams in a training state (see rng.h) */

/* What training needs beyond the weights to continue exactly where it stopped. The load
 * allocates m, v and rng[k]; ckpt_train_state_free releases them. */
typedef struct ckpt_train_state {
    size_t step;    /* optimiser steps taken (Adam's bias correction counts from here) */
    size_t n;       /* length of m and v: the model's parameter count (arena size) */
    double *m;      /* (n) Adam's first moment, same layout as the parameter block */
    double *v;      /* (n) Adam's second moment */
    /* The bytes of gsl_rng_state() of the init, train and eval streams, rng_size[k] =
     * gsl_rng_size() of each. They are the generator's memory image, so they restore
     * only into the same generator type on a machine with the same C types (the resuming
     * code compares rng_size[k] with gsl_rng_size of its own stream). */
    unsigned char *rng[CKPT_RNG_STREAMS];
    size_t rng_size[CKPT_RNG_STREAMS];
} ckpt_train_state;

/* Writes model m (its registry name, configuration, tensor table and parameters) to
 * path, with the training state ts when ts is not NULL (ts->n must equal the model's
 * parameter count and every array must be present). The file is written under a
 * temporary name in the same directory, synced, and renamed to path, so an earlier file
 * at path stays intact unless the save succeeds. Returns 0, or -1 with one line in err
 * (n bytes): an unwritable directory, a full disk, a path that is a directory. */
int ckpt_save(const char *path, const model *m, const ckpt_train_state *ts, char *err,
              size_t n);

/* ckpt_save without its last step: writes the checkpoint into af's temporary file
 * beside path and finishes it (afile_finish), so that afile_publish(af) puts it in place
 * and afile_abort(af) drops it. Returns 0, or -1 with one line in err and nothing left
 * behind. */
int ckpt_stage(afile *af, const char *path, const model *m, const ckpt_train_state *ts,
               char *err, size_t n);

/* Reads the checkpoint at path and returns the model it holds: built by the registered
 * model of the stored name (model_lookup) from the stored configuration, with its
 * parameters filled and its gradients zero (free it with m->ops->free). When ts is not
 * NULL it receives the training state, or all zeros (ts->m == NULL) when the file holds
 * none. Returns NULL with one line in err (n bytes) when the file is missing, not a
 * checkpoint, of another format version, truncated, corrupt (CRC mismatch), of a model
 * this build lacks, or when its configuration or tensor shapes are inconsistent; ts is
 * then left empty. */
model *ckpt_load(const char *path, ckpt_train_state *ts, char *err, size_t n);

/* The same as ckpt_load, with lookup in place of model_lookup to find the model's table
 * by name (a test can load a model that is not in the registry). */
model *ckpt_load_with(const char *path, const model_ops *(*lookup)(const char *name),
                      ckpt_train_state *ts, char *err, size_t n);

/* Frees the arrays of a training state filled by ckpt_load and zeroes it. Safe on a
 * zeroed state. */
void ckpt_train_state_free(ckpt_train_state *ts);

#endif
