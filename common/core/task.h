/* task.h — the toy tasks (prefix: task_).
 *
 * A task maps a source sequence of data symbols to a target sequence. Sources are drawn
 * uniformly from the V data symbols; the task only says what the answer is, so adding a
 * task is one small file with one function (see task_copy.c) and a line in task.c.
 *
 * In `copy`, output i is produced Tt steps after input i was read, so the sequence length
 * is the distance the information must be carried: the quantity the experiment varies.
 *
 * Your own data. The task "file:PATH" reads its examples from a file of SOURCE<TAB>TARGET
 * lines (dataset.h): the vocabulary, and so `symbols`, comes from the file, and the
 * examples are split once (by a hash of their text, not by the seed) into training,
 * validation and test sets. Such a task is opened (task_open) rather than looked up, and
 * carries its data set; the functions below that take a task work for both kinds, so the
 * rest of the harness asks a task, never its kind, how long a target is
 * (task_target_len), how to read or show a symbol (task_parse, task_symbol) and where a
 * training batch comes from (task_train_batch). A generated task keeps exactly its old
 * draws: its batches, and so every result of copy and reverse, are bit for bit those of
 * before file tasks existed.
 */
#ifndef ATTNLAB_TASK_H
#define ATTNLAB_TASK_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "config.h"
#include "dataset.h"
#include "model.h"

/* The prefix of a task read from a file: "file:PATH". */
#define TASK_FILE_PREFIX "file:"

typedef struct task {
    const char *name;
    const char *about; /* one line for help */
    /* Target length for a source of length Ts (generated tasks; see task_target_len). */
    size_t (*target_len)(size_t Ts);
    /* Writes the target of src (Ts symbols in 0..nsym-1) into tgt (target_len(Ts)). */
    void (*target)(int *tgt, const int *src, size_t Ts, size_t nsym);
    /* The source position (0-based) whose symbol output t (0-based) of a source of Ts
     * symbols repeats; NULL for a task whose outputs are not each one source symbol. */
    size_t (*source_of)(size_t Ts, size_t t);
    /* A file task's examples and vocabulary; NULL for a generated task. */
    const dataset *data;
} task;

extern const task task_copy;
extern const task task_reverse;

/* The task called name, or NULL. */
const task *task_lookup(const char *name);
/* Comma-separated names of every task, file:PATH last (for messages). */
const char *task_names(void);

/* The generated task at position k of the registry, or NULL past the last one. */
const task *task_at(size_t k);

/* Does name say "file:PATH" (with a path after the prefix)? */
int task_is_file(const char *name);

/* Is name a task this build knows: a generated one, or file:PATH (not opened here)? */
int task_known(const char *name);

/* Writes a short name of the task for directory names into buf: the task's name, or for
 * file:PATH the file's name without its directory and extension ("dates"). */
void task_short_name(const char *name, char *buf, size_t n);

/* Opens the task of configuration c: a generated task is looked up (nothing allocated);
 * file:PATH is read with c->max_len as the longest side, and must have the CRC-32
 * c->data_crc and c->symbols symbols (every value of data_crc is a CRC to check, 0
 * included). Returns the task (close it with task_close), or NULL with one line in err:
 * an unknown task, the file's own error (dataset_read), or a file that changed since
 * the run. */
const task *task_open(const config *c, char *err, size_t n);

/* As task_open, but a file task is read as it is, for a new run whose data_crc and
 * symbols the file is about to decide (args_config): nothing is compared. */
const task *task_open_new(const config *c, char *err, size_t n);

/* How a front-end names, in its messages, the settings a user gave that a data file
 * also decides; NULL for a setting not given. */
typedef struct task_file_given {
    const char *symbols;   /* e.g. "--symbols" */
    const char *data_crc;  /* e.g. "--data-crc" */
    const char *train_len; /* e.g. "--train-len" (train_min and train_max) */
} task_file_given;

/* A new run on a file task (task_is_file(c->task)): reads the file now, so that a bad
 * line is refused before anything runs, and sets what the file decides: c->symbols (its
 * vocabulary), c->data_crc (its CRC-32), and, unless given, the training range (the
 * source lengths of its training set). A symbols or data_crc given that disagrees with
 * the file, or a training range given that holds no training or no validation example,
 * is refused. Returns 0; TASK_FILE_UNREADABLE with the file's own error in err (the
 * caller names the task); or -1 with one line in err naming the setting as given names
 * it. */
#define TASK_FILE_UNREADABLE (-2)
int task_file_config(config *c, const task_file_given *given, char *err, size_t n);

/* Releases a task of task_open (nothing for a generated one; NULL is allowed). */
void task_close(const task *t);

/* The target length of a source of Ts symbols: target_len(Ts) for a generated task;
 * for a file task the longest target of that source length in the file (of the nearest
 * length the file holds when it has none). */
size_t task_target_len(const task *t, size_t Ts);

/* The gap of output t (0-based) of a source of Ts symbols: how many steps of an
 * encoder-decoder lie between reading the source symbol it repeats, at encoder step i,
 * and writing it, at decoder step t: (Ts − i) + t, the rest of the source and the outputs
 * before it. Copy's gap is Ts at every position; reverse's is 2t + 1. Returns 0 for a
 * task without source_of (a file task) or t past the target. */
size_t task_gap(const task *t, size_t Ts, size_t pos);

/* The longest task_target_len of the source lengths lo..hi. */
size_t task_max_target_len(const task *t, size_t lo, size_t hi);

/* Allocates token storage for batches of up to B sequences of lengths up to Ts, Tt. */
int batch_alloc(batch *b, size_t B, size_t Ts, size_t Tt);
void batch_free(batch *b);

/* Fills b with B examples whose sources have length Ts, drawn from r: the source, the
 * task's target, and the decoder input (BOS, then the target shifted right by one). */
void task_fill(const task *t, batch *b, size_t B, size_t Ts, size_t nsym, const gsl_rng *r);

/* Completes b from sources already in b->src (B, Ts): targets and decoder inputs. For a
 * file task, whose target is not a function of its source, the target repeats the
 * source to the length task_target_len gives: a stand-in of the right shape for timing
 * and gradient checks, not an example. */
void task_complete(const task *t, batch *b, size_t B, size_t Ts, size_t nsym);

/* Fills b with one training batch of B sequences, drawn from r: a generated task draws a
 * length from c's training range and then task_fill's sequences; a file task draws from
 * its training set, source lengths within the training range (dataset_draw). b must
 * have room for the longest of either (task_max_target_len). */
void task_train_batch(const task *t, batch *b, size_t B, const config *c, const gsl_rng *r);

/* Fills b with the examples idx[0..B) of t's data (all of one bucket): sources,
 * targets and decoder inputs. */
void task_fill_examples(const task *t, batch *b, const size_t *idx, size_t B);


/* Parses a line of whitespace-separated data symbols (each a whole number in
 * 0..nsym-1) into out, at most max of them, and sets *count. Returns 0; or -1 with one
 * line in err naming the offending word (not a number, out of range), an empty line, or a
 * line with more than max symbols. */
int task_parse_tokens(const char *line, int *out, size_t max, size_t nsym, size_t *count,
                      char *err, size_t n);

/* Parses a line of words separated by spaces into tokens of d's vocabulary (out, at
 * most max). Returns 0 and sets *count; or -1 with one line in err: a word that is not
 * in the vocabulary, an empty line, more than max words. */
int task_parse_words(const dataset *d, const char *line, int *out, size_t max,
                     size_t *count, char *err, size_t n);

/* Parses a line of symbols of task t: whole numbers below nsym for a generated task
 * (task_parse_tokens), words of the vocabulary for a file task (task_parse_words).
 * Same contract as task_parse_tokens. */
int task_parse(const task *t, size_t nsym, const char *line, int *out, size_t max,
               size_t *count, char *err, size_t n);

/* Writes how token tok is shown into buf: "BOS" for nsym, the word of a file task's
 * vocabulary, else the number. */
void task_symbol(const task *t, size_t nsym, int tok, char *buf, size_t n);

#endif
