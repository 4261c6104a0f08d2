/* args.h — reading a command line of attnlab: flags, counts, lists of lengths and
 * models, the configuration, and the one-line messages (prefix: args_).
 *
 * Design. Every kind of value is parsed in one place, whichever command takes it:
 *   args_parse      the flags: every setting of struct config (generated from the table
 *                   in config.c) and the command's own flags (args_flag), by getopt_long
 *   args_size       a count within a range (strict: config_parse_whole)
 *   args_lengths    a list of lengths, A:B:STEP, A:B or A,B,C (--eval-lengths, --lengths,
 *                   --cost-lengths)
 *   args_train_len  --train-len MIN:MAX (or one length N)
 *   args_models     --models a,b,c (default: every registered model)
 *   args_config     the configuration: generic defaults → the model's defaults →
 *                   the command's overrides → the flags in the order given → --train-len
 *                   → the checks. Every command builds its configuration with it.
 * The values are collected first and applied only in args_config, because the model's
 * own defaults come between the generic ones and what the user typed.
 *
 * A flag given twice. The last value wins, but only when every value given is valid:
 * `--steps abc --steps 2` is refused as `--steps abc` would be. Each value of a setting
 * is checked as it is read (args_parse); each value of a command's own flag by the
 * function that reads that flag (args_count, args_lengths_of, ...), which walks every
 * value given (args_nth), not only the last.
 *
 * Limits. Nothing is cut to fit: a path longer than ARGS_PATH_MAX, more than
 * ARGS_MAX_GIVEN flags, a list of more than ARGS_MAX_LENGTHS lengths or ARGS_MAX_MODELS
 * models is refused with a message naming the limit.
 *
 * Messages. A usage error prints "attnlab CMD: message" and the hint "Try 'attnlab CMD
 * --help'." and gives status 2 (args_usage_error); a runtime error prints the one line
 * and gives status 1 (args_run_error). Every function here that can refuse its input
 * prints its own message and returns the status.
 */
#ifndef ATTNLAB_ARGS_H
#define ATTNLAB_ARGS_H

#include <stddef.h>

#include "../core/config.h"
#include "../core/model.h"

#define ARGS_EXIT_RUNTIME 1
#define ARGS_EXIT_USAGE 2
#define ARGS_HELP_SHOWN (-1) /* args_parse printed --help: the command exits 0 */
#define ARGS_ERR_MAX 512     /* room for one message */
#define ARGS_MAX_LENGTHS 4096 /* lengths in one list */
#define ARGS_MAX_FIELDS 64   /* settings of struct config the parser can take */
#define ARGS_MAX_MODELS 16   /* models in one --models list */
#define ARGS_MAX_GIVEN 256   /* flags (not settings) on one command line */
#define ARGS_PATH_MAX 3072   /* characters of a path given as a flag's value: room is left
                              * below AFILE_PATH_MAX for the names written inside it */

/* The flags that are not settings of struct config. A command lists the ones it takes. */
typedef enum args_flag {
    ARGS_FIRST = 256, /* above every character getopt_long may return */
    ARGS_TRAIN_LEN = ARGS_FIRST,
    ARGS_OUT,
    ARGS_CHECKPOINT,
    ARGS_LENGTHS,
    ARGS_SAMPLES,
    ARGS_INPUT,
    ARGS_QUIET,
    ARGS_STRIDE,
    ARGS_LEN,
    ARGS_EVAL_LENGTHS,
    ARGS_MODELS,
    ARGS_REPS,
    ARGS_TRACE,
    ARGS_COST_LENGTHS,
    ARGS_PRESET,
    ARGS_SEEDS,
    ARGS_JOBS,
    ARGS_PRINT_JOBS,
    ARGS_RESUME,
    ARGS_FORCE,
    ARGS_ALIGNMENT,
    ARGS_UNTRAINED,
    ARGS_ACTIVATIONS,
    ARGS_END
} args_flag;

/* What one command line said: the raw text of each flag given (NULL when absent; "1"
 * for a flag without a value), the last one when it was given more than once. */
typedef struct args_line {
    const char *setting[ARGS_MAX_FIELDS];  /* by index into config_fields: the last value */
    const char *flag[ARGS_END - ARGS_FIRST]; /* by args_flag - ARGS_FIRST: the last value */
    int given[ARGS_MAX_FIELDS];            /* settings in the order first given, once each */
    size_t n_given;
    int seen_code[ARGS_MAX_GIVEN];         /* every flag (not setting) in the order given */
    const char *seen_text[ARGS_MAX_GIVEN]; /* and its value */
    size_t n_seen;
} args_line;

/* Parses argv (argv[0] is the command word) into a. settings: the command takes the
 * settings of struct config as flags. allowed: the args_flag values it takes, ended by
 * 0. help prints the command's --help. Checks every value of every setting (its type,
 * range or choices; --model and --task against the registries), every path (--out,
 * --checkpoint, --input, --resume: not empty, at most ARGS_PATH_MAX characters, on one
 * line) and every --models list (args_models); the values of a command's other flags
 * are the command's to check, every one of them (args_nth). Returns 0; ARGS_HELP_SHOWN
 * after printing the help; or ARGS_EXIT_USAGE after printing the error (an unknown or
 * ambiguous flag, a missing value, a value refused, an argument that is not a flag,
 * more than ARGS_MAX_GIVEN flags). */
int args_parse(int argc, char **argv, int settings, const args_flag *allowed,
               void (*help)(void), args_line *a);

/* The text of the k-th value given to flag f (k from 0, in the order given), or NULL
 * when f was given k times or fewer. The last one is args_get's. */
const char *args_nth(const args_line *a, args_flag f, size_t k);

/* The spelling of flag f without its dashes ("eval-lengths"). */
const char *args_flag_name(args_flag f);

/* Checks text, the value of --flag, as a path: not empty, at most ARGS_PATH_MAX
 * characters, no newline (args.txt keeps one argument per line), and not starting with
 * '-' unless it is "-" alone (standard input for --input): getopt takes the word after
 * --out as its value whatever it is, so `--out --force` would otherwise make a directory
 * called --force. A path that does start with '-' is written ./-NAME. Returns 0, or
 * prints and returns ARGS_EXIT_USAGE. */
int args_path(const char *flag, const char *text);

/* The status a command returns for a result of args_parse or args_config that is not 0:
 * 0 after --help, else the result itself. */
static inline int args_exit(int rc) { return rc == ARGS_HELP_SHOWN ? 0 : rc; }

/* The text given to flag f, or NULL. */
const char *args_get(const args_line *a, args_flag f);

/* The text given to the setting called name (a key of config_fields), or NULL. */
const char *args_setting(const args_line *a, const char *name);

/* Parses text, the value of --flag, as a whole number in [lo, hi] into *out. Returns 0,
 * or prints and returns ARGS_EXIT_USAGE. */
int args_size(const char *flag, const char *text, size_t lo, size_t hi, size_t *out);

/* args_size on every value given to flag f, the last one into *out; *out keeps its
 * default when f was not given. */
int args_count(const args_line *a, args_flag f, size_t lo, size_t hi, size_t *out);

/* Parses a list of lengths, each in [1, max], into out (room for ARGS_MAX_LENGTHS):
 * "A:B:S" (A to B in steps of S), "A:B" (step 1) or "A,B,C" (no empty item). Returns 0,
 * or prints and returns ARGS_EXIT_USAGE (also for a list of more than ARGS_MAX_LENGTHS
 * lengths, naming the limit). */
int args_lengths(const char *flag, const char *text, size_t max, size_t *out, size_t *count);

/* args_lengths on every value given to flag f, the last one into out and *count; *count
 * is 0 when f was not given. */
int args_lengths_of(const args_line *a, args_flag f, size_t max, size_t *out,
                    size_t *count);

/* Parses --train-len: "MIN:MAX" or one length "N" (MIN = MAX = N), each in
 * [1, max_len]. Whether MIN <= MAX is config_check's to say. Returns 0, or prints and
 * returns ARGS_EXIT_USAGE. */
int args_train_len(const char *text, size_t max_len, size_t *min, size_t *max);

/* Parses --models: comma-separated registry names, each at most once, at most
 * ARGS_MAX_MODELS; text NULL means every registered model, in registry order. Fills list
 * (room for ARGS_MAX_MODELS) and *n. Returns 0, or prints and returns ARGS_EXIT_USAGE
 * (an unknown name, an empty item or list, a name given twice, too many names). */
int args_models(const char *text, const model_ops **list, size_t *n);

/* Writes every registered model's name into buf, in registry order, joined by ','
 * ("A,B,C"): the default of --models. */
void args_all_models(char *buf, size_t n);

/* Writes the names of the n models of list into buf, joined by ','. Returns 0, or -1
 * when they do not fit in n_buf bytes. */
int args_join_models(const model_ops *const *list, size_t n, char *buf, size_t n_buf);

/* How a command builds its configuration (args_config). Zeroed, it means: the model
 * --model names (or the first registered one), nothing between its defaults and the
 * flags, every check. */
typedef struct args_plan {
    const model_ops *ops; /* the model to configure; NULL: --model's, else the first */
    int shared;           /* 1: settings every model shares (compare, eval): no model's
                           * defaults and no model's check */
    /* Sets the command's own values between the model's defaults and the flags (ops is
     * NULL when shared); NULL when the command has none. */
    void (*overrides)(config *c, const model_ops *ops, const void *ctx);
    const void *ctx;
    int no_train_range;   /* 1: the command trains nothing (bench): the training range
                           * is not checked against --max-len */
    int own_train_range;  /* 1: overrides set the training range, which a file task then
                           * keeps as if --train-len had given it (a preset's range) */
} args_plan;

/* Builds the configuration c of a command from what it parsed: config_defaults; the
 * model's defaults (and c->model set to its name); p->overrides; every setting flag in
 * the order given (its last value); the task looked up; --train-len when the command
 * takes it (every value given checked, the last applied);
 * config_check; the model's check. *ops receives the model (NULL when shared). Returns
 * 0, or prints and returns ARGS_EXIT_USAGE (the first value refused). */
int args_config(const args_line *a, const args_plan *p, config *c, const model_ops **ops);

/* Sets the command named in every message ("attnlab train"). */
void args_set_command(const char *name);

/* The command named in messages ("attnlab" before one is known). */
const char *args_command(void);

/* Prints "attnlab CMD: message" and the help hint; returns ARGS_EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int args_usage_error(const char *fmt, ...);

/* Prints "attnlab CMD: message"; returns ARGS_EXIT_RUNTIME. */
__attribute__((format(printf, 1, 2))) int args_run_error(const char *fmt, ...);

#endif
