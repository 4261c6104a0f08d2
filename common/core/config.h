/* config.h — the configuration of one run: which model, its sizes, the task and the
 * training recipe (prefix: config_).
 *
 * Design. One plain struct holds every setting, and one table (config.c) describes each
 * field once: its name (the same word as the command-line flag and the key in config.tsv
 * and in checkpoints), its type, its accepted range and a line of help. Parsing flags,
 * printing the configuration, saving it in a checkpoint and reading it back all walk that
 * table, so a setting's name and range are written in exactly one place.
 *
 * Defaults are applied in two layers: config_defaults() sets the generic ones, then the
 * model's own ops->defaults() sets its canonical sizes and optimiser recipe; flags given
 * on the command line override both. A model's sizes are written only in its defaults():
 * config_defaults() takes them from every registered model (model.h), so a
 * configuration always holds a value for every field, even those its model ignores.
 */
#ifndef ATTNLAB_CONFIG_H
#define ATTNLAB_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#define CONFIG_STR_MAX 64
/* Bytes of the task field: "file:PATH" names a data file (task.h), so it holds a path. */
#define CONFIG_TASK_MAX 256
/* Room for the text of any field as config_format writes it (the task is the longest). */
#define CONFIG_VALUE_MAX (CONFIG_TASK_MAX + 64)

/* The most validations the plateau test may average (val_window). */
#define CONFIG_VAL_WINDOW_MAX 64

typedef struct config {
    /* what is trained */
    char model[CONFIG_STR_MAX]; /* registry name (model_registry in model.h) */
    char task[CONFIG_TASK_MAX]; /* copy, reverse, or file:PATH (your own data, task.h) */
    size_t symbols;             /* V data symbols 0..V-1; the vocabulary adds BOS = V */
    unsigned long data_crc;     /* file:PATH: the CRC-32 of the file (any value, 0 too) */
    size_t max_len;             /* longest source/target sequence the model accepts */

    /* model sizes (each model reads the ones it needs) */
    size_t embed;             /* E   token embedding width (recurrent models) */
    size_t hidden;            /* H   recurrent state width */
    size_t attn;              /* A   additive-attention width */
    char cell[CONFIG_STR_MAX]; /* recurrent cell, where a model offers a choice */
    double forget_bias;       /* initial forget-gate bias */
    int feed_context;         /* the encoder's summary is an input of every decoder step
                               * (1), not only its initial state (0), where offered */
    int bidirectional;        /* a forward and a backward encoder (1), where offered */
    size_t d_model;           /* D   model width of attention-only layers */
    size_t heads;             /* NH  attention heads */
    size_t d_ff;              /* feed-forward width */
    size_t layers;            /* encoder layers = decoder layers */
    char pos[CONFIG_STR_MAX]; /* positions: sinusoidal, learned, none */
    int post_ln;              /* 1: post-LN (the paper's order); 0: pre-LN */
    double emb_scale;         /* embeddings are multiplied by this before positions */
    double emb_init;          /* std. dev. of the embedding initialisation */

    /* training recipe */
    size_t train_min, train_max; /* training lengths, one drawn per batch */
    size_t steps;
    size_t batch;
    double lr;
    double beta1, beta2, eps; /* Adam */
    double clip;              /* global gradient-norm bound; 0 disables */
    size_t warmup;            /* linear learning-rate warm-up steps; 0 disables */
    unsigned long seed;
    size_t threads;           /* BLAS threads */
    size_t log_every;         /* steps between log lines, each with a validation */
    size_t val_samples;       /* validation sequences (fresh, lengths in the training range) */
    size_t patience;          /* validations without improvement before stopping; 0: never */
    double min_delta;         /* the validation token accuracy an improvement must add */
    double stop_acc;          /* stop once the validation token accuracy reaches it; 0: never */
    size_t val_window;        /* validations the plateau test averages; 1: each alone */
    char lr_schedule[CONFIG_STR_MAX]; /* after warm-up: constant or cosine */
    double lr_floor;          /* cosine: the last step's rate, as a fraction of lr */
    size_t decay_steps;       /* cosine: steps from the warm-up's end to the floor, after
                               * which the rate stays there; 0: to `steps` (the cap) */
    size_t val_first;         /* first validation on the log-spaced schedule; 0: none, every
                               * log_every steps (train_validates_at) */
    size_t checkpoint_every;  /* steps between resumable checkpoints; 0: only at the end */
} config;

typedef enum { CFG_SIZE, CFG_DOUBLE, CFG_STRING, CFG_BOOL, CFG_ULONG } config_type;

/* One field of struct config, described once. */
typedef struct config_field {
    const char *name;     /* flag (--name, with '_' written '-') and key */
    config_type type;
    size_t offset;        /* offsetof(config, field) */
    double min, max;      /* accepted range of numbers, inclusive */
    const char *choices;  /* accepted strings, comma-separated; NULL means any */
    const char *help;
    size_t size;          /* strings: bytes of the field, NUL included (0: CONFIG_STR_MAX) */
    int optional;         /* CFG_FILE_TASK_ONLY: a file task's own field, which
                           * config_write_tsv writes only for a file task (task
                           * file:PATH); CFG_UNLESS_ZERO: a setting added later, written
                           * only when not 0 (its old behaviour); either way the files of
                           * the other runs stay as they were */
} config_field;

/* Values of config_field.optional (0: always written). */
enum { CFG_FILE_TASK_ONLY = 1, CFG_UNLESS_ZERO = 2 };

extern const config_field config_fields[];
extern const size_t config_n_fields;

/* Sets the defaults of every field: first each registered model's defaults() in
 * registry order (the sizes of every model; a size two models read keeps the later
 * one's value), then the generic settings and recipe over them; the model is the first
 * registered one. A command then applies its model's defaults() again, so its own recipe
 * wins. */
void config_defaults(config *c);

/* Field whose name (or flag spelling, '-' for '_') is name, or NULL. */
const config_field *config_find(const char *name);

/* Writes the flag spelling of field f into buf: its name with '-' for '_' ("d-model"). */
void config_flag_name(const config_field *f, char *buf, size_t n);

/* The grammar of numbers, one for every setting, flag and file: a number is written in
 * decimal, as digits, and a real setting also takes a leading minus sign, a decimal
 * point with digits on both sides, and an exponent (0.001, -2.5, 1e-3, 2.5E+2). Nothing
 * else: no spaces, no '+' in front, no hexadecimal, no inf or nan.
 *
 * Parses text as a whole number in [lo, hi]: decimal digits only (no sign, no space,
 * nothing after), refused as out of range before it could overflow. On failure writes
 * one line to err naming --flag and the text, with what is accepted (accepted when it is
 * not NULL, else "an integer in [lo, hi]"), and returns -1. The one parser of counts:
 * the integer settings and the command line's own counts both use it. */
int config_parse_whole(const char *flag, const char *text, unsigned long long lo,
                       unsigned long long hi, const char *accepted, unsigned long long *out,
                       char *err, size_t n);

/* Parses text as the value of field f into c. The whole text must be a number of the
 * field's type within its range (or one of its choices). On failure writes one line to
 * err naming the field, the value and what is accepted, and returns -1. */
int config_set(config *c, const config_field *f, const char *text, char *err, size_t n);

/* Writes the value of field f into buf (round-trips exactly through config_set). */
void config_format(const config *c, const config_field *f, char *buf, size_t n);

/* Writes every field as "name<TAB>value" lines, with a header line "key<TAB>value"; a
 * file task's own field (data_crc) is written only for a file task, whatever its value,
 * and a CFG_UNLESS_ZERO field (decay_steps, val_first) only when it is not 0. A
 * missing key reads back as 0: the files of earlier versions, which left data_crc out
 * while it was 0, read back as they were written. */
int config_write_tsv(const config *c, FILE *out);

/* Reads "name<TAB>value" lines written by config_write_tsv (or the same text held in a
 * string by a checkpoint) into c. Unknown keys and bad values are errors. */
int config_read_text(config *c, const char *text, char *err, size_t n);

/* Checks that each of the n fields named in names (the ones a model reads) holds a value
 * within the range of the settings table, as a model's check() needs after a
 * configuration was read from a file. On failure writes one line naming the flag, its
 * value and the accepted range ("--hidden: 0 is out of range (accepted: [1, 4096])") and
 * returns -1; a name that is not a field is reported as the model's own error. */
int config_check_fields(const config *c, const char *model_name, const char *const *names,
                        size_t n, char *err, size_t errn);

/* Checks the relations between fields (train_min <= train_max <= max_len, ...). */
int config_check(const config *c, char *err, size_t n);

/* Vocabulary size: the data symbols plus BOS. */
static inline size_t config_vocab(const config *c) { return c->symbols + 1; }
/* The BOS token id. */
static inline int config_bos(const config *c) { return (int)c->symbols; }

#endif
