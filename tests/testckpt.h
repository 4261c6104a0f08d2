/* testckpt.h — what the checkpoint test files share (prefix: tk_): a model with
 * parameters only, scratch directories, whole-file reads and writes, and a reading of
 * the file layout that is independent of checkpoint_format.c.
 *
 * Design. The tests need a model but must not depend on which real models are built, so
 * they use a model "fake" that has only a parameter arena, with shapes taken from
 * cfg.hidden (H) and cfg.embed (E), and load through ckpt_load_with and a lookup that
 * knows it (tk_fake_lookup). H = 4 and E = 5 differ, so a transposed shape cannot pass
 * unnoticed.
 *
 * To provoke a rejection, a test saves a good file, edits bytes at offsets found by
 * walking the layout of docs/checkpoint-format.md (tk_walk: its own reading of the
 * documented format, not the loader's), and, where the edit must get past the checksums,
 * recomputes the header CRC, the recorded length and the final CRC (tk_reseal), so the
 * check under test is the one that fires. Every rejection must be one line starting
 * "checkpoint PATH: " (tk_load_fails).
 */
#ifndef ATTNLAB_TESTCKPT_H
#define ATTNLAB_TESTCKPT_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/core/checkpoint.h"
#include "../common/core/model.h"

/* The fake model: enc.Wx (H, E), enc.b (1, H), dec.Wx (E, H); 44 parameters. */
#define FAKE_TENSORS 3
#define FAKE_H 4
#define FAKE_E 5

extern const model_ops tk_fake_ops;

/* The lookup that knows "fake" only (ckpt_load_with). */
const model_ops *tk_fake_lookup(const char *name);

/* A fake model of the default sizes with non-round parameters drawn from seed, and a
 * learning rate and seed that are not the defaults (to see them come back). */
model *tk_fake_model(unsigned long seed);

void tk_fake_free(model *m);

/* A training state for m: step 12345, random moments (v positive), and the states of
 * three mt19937 streams that have drawn a few numbers each, as a training run would
 * leave them. The streams are left open in streams[] for the caller to compare with;
 * tk_train_state_free frees both. */
void tk_fake_train_state(ckpt_train_state *ts, const model *m, gsl_rng *streams[3]);
void tk_train_state_free(ckpt_train_state *ts, gsl_rng *streams[3]);

/* A fresh directory for one test, and the checkpoint path inside it. */
typedef struct tk_scratch {
    char dir[64];
    char path[128];
} tk_scratch;

void tk_scratch_open(tk_scratch *s);

/* Removes the directory and everything under it (read-only folders included). */
void tk_scratch_close(tk_scratch *s);

/* Number of entries in dir besides . and .. (to see that no temporary file is left). */
size_t tk_count_entries(const char *dir);

/* The whole file at path (malloc'd; its length in *len); fails the test if unreadable. */
unsigned char *tk_read_all(const char *path, size_t *len);

/* Writes len bytes to path, replacing it; fails the test on any error. */
void tk_write_all(const char *path, const void *buf, size_t len);

/* Saves m (and ts, may be NULL) to path; fails the test with the message if it fails. */
void tk_save_ok(const char *path, const model *m, const ckpt_train_state *ts);

/* Loads path through tk_fake_lookup, which must be refused with a message containing
 * expect, one line starting "checkpoint PATH: ", leaving no training state. what names
 * the case in a failure; tk_load_fails names it by the path. */
void tk_load_fails_as(const char *what, const char *path, const char *expect);
void tk_load_fails(const char *path, const char *expect);

/* Both models hold the same tensors (names, shapes) and the same bits. */
void tk_assert_same_params(const model *a, const model *b);

/* Every setting of config_fields formats the same in a and b. */
void tk_assert_same_config(const config *a, const config *b);

/* ---- the layout, read independently of checkpoint_format.c ---- */

/* Little-endian integers at p. */
uint64_t tk_rd64(const unsigned char *p);
void tk_wr64(unsigned char *p, uint64_t v);
void tk_wr32(unsigned char *p, uint32_t v);

/* Offsets of the fields the tests edit, in a file of the fake model. */
typedef struct tk_layout {
    size_t name_at;                /* length of the model name; the name follows */
    size_t cfg_at, cfg_len;        /* length of the configuration; the text follows */
    size_t count_at;               /* tensor count */
    size_t entry_at[FAKE_TENSORS]; /* name length of each table entry */
    size_t data_at;                /* first parameter value */
    size_t train_at;               /* training step; 0 when there is no training state */
    size_t rng_at;                 /* number of generator streams */
    size_t crc_at;                 /* final CRC */
} tk_layout;

/* Walks a well-formed file of the fake model (len bytes at b) as
 * docs/checkpoint-format.md describes it; fails the test if the parts do not add up to
 * len. */
tk_layout tk_walk(const unsigned char *b, size_t len);

/* The first occurrence of needle (k bytes) in hay (n bytes), or NULL. */
unsigned char *tk_find(unsigned char *hay, size_t n, const char *needle, size_t k);

/* Makes an edited file consistent again: the recorded length, the header CRC and the
 * final CRC, so that only the edited content can be what a loader objects to. */
void tk_reseal(unsigned char *b, size_t len);

/* Replaces the first occurrence of from in the configuration text of a fake model's file
 * by to (lengths may differ), updates the configuration length, and reseals. */
void tk_edit_config(unsigned char **b, size_t *len, const char *from, const char *to);

#endif
