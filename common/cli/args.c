/* args.c — the command line's parsers and its one configuration builder (see
 * args.h).
 *
 * Design. Flags are GNU long options (getopt_long: `--hidden 128` or `--hidden=128`,
 * unambiguous abbreviations accepted). The option table of a command is made at each
 * parse from two tables: config_fields (every setting, spelled with '-' for '_', so the
 * flags, config.tsv and the checkpoints can never disagree on a name or a range) and
 * flag_table below (the flags of the commands themselves). getopt_long returns
 * ARGS_SETTING + k for setting k and the args_flag value for the others, so one switch
 * sorts them. Nothing is converted while parsing: struct args keeps the raw text, and
 * args_config applies the settings once the model (and so its defaults) is known.
 */
#include "args.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/task.h"

/* getopt_long's code of setting k of config_fields: ARGS_SETTING + k, above every
 * args_flag. */
#define ARGS_SETTING 1000
_Static_assert(ARGS_END < ARGS_SETTING, "the codes of flags and settings must not overlap");

/* What kind of value a flag takes, for the checks every command shares. */
typedef enum flag_kind {
    KIND_OTHER, /* the command checks it */
    KIND_PATH,  /* a file or directory: args_path */
    KIND_MODELS, /* a list of models: args_models */
    KIND_LENGTHS /* a list of lengths: the command checks its last value against its own
                  * bounds; an earlier value is checked here against the largest max_len */
} flag_kind;

/* The spelling, argument and kind of each args_flag. */
typedef struct flag_spec {
    const char *name;
    int has_arg;
    args_flag code;
    flag_kind kind;
} flag_spec;

static const flag_spec flag_table[] = {
    {"train-len", required_argument, ARGS_TRAIN_LEN, KIND_OTHER},
    {"out", required_argument, ARGS_OUT, KIND_PATH},
    {"checkpoint", required_argument, ARGS_CHECKPOINT, KIND_PATH},
    {"lengths", required_argument, ARGS_LENGTHS, KIND_LENGTHS},
    {"samples", required_argument, ARGS_SAMPLES, KIND_OTHER},
    {"input", required_argument, ARGS_INPUT, KIND_PATH},
    {"quiet", no_argument, ARGS_QUIET, KIND_OTHER},
    {"stride", required_argument, ARGS_STRIDE, KIND_OTHER},
    {"len", required_argument, ARGS_LEN, KIND_OTHER},
    {"eval-lengths", required_argument, ARGS_EVAL_LENGTHS, KIND_LENGTHS},
    {"models", required_argument, ARGS_MODELS, KIND_MODELS},
    {"reps", required_argument, ARGS_REPS, KIND_OTHER},
    {"trace", required_argument, ARGS_TRACE, KIND_OTHER},
    {"cost-lengths", required_argument, ARGS_COST_LENGTHS, KIND_LENGTHS},
    {"preset", required_argument, ARGS_PRESET, KIND_OTHER},
    {"seeds", required_argument, ARGS_SEEDS, KIND_OTHER},
    {"jobs", required_argument, ARGS_JOBS, KIND_OTHER},
    {"print-jobs", no_argument, ARGS_PRINT_JOBS, KIND_OTHER},
    {"resume", required_argument, ARGS_RESUME, KIND_PATH},
    {"force", no_argument, ARGS_FORCE, KIND_OTHER},
    {"alignment", no_argument, ARGS_ALIGNMENT, KIND_OTHER},
    {"untrained", no_argument, ARGS_UNTRAINED, KIND_OTHER},
    {"activations", no_argument, ARGS_ACTIVATIONS, KIND_OTHER},
};
#define N_FLAGS (sizeof flag_table / sizeof flag_table[0])
_Static_assert(N_FLAGS == ARGS_END - ARGS_FIRST, "every args_flag has one line in flag_table");

/* The line of flag_table of flag f. */
static const flag_spec *spec_of(args_flag f)
{
    for (size_t e = 0; e < N_FLAGS; e++)
        if (flag_table[e].code == f)
            return &flag_table[e];
    return NULL;
}

const char *args_flag_name(args_flag f)
{
    const flag_spec *sp = spec_of(f);
    return sp ? sp->name : "?";
}

/* ---- messages ----------------------------------------------------------------------- */

static char command_name[64] = "attnlab"; /* "attnlab train" etc., for messages */

void args_set_command(const char *name)
{
    snprintf(command_name, sizeof command_name, "%s", name);
}

const char *args_command(void) { return command_name; }

int args_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", command_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", command_name);
    return ARGS_EXIT_USAGE;
}

int args_run_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", command_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return ARGS_EXIT_RUNTIME;
}

/* ---- flags ------------------------------------------------------------------------- */

/* Checks one value of setting f as args_config will apply it: the field's own rules
 * (config_set, on a scratch configuration) and, for --model and --task, the registries.
 * Returns 0, or prints and returns ARGS_EXIT_USAGE. */
static int check_setting(size_t f, const char *text)
{
    char err[ARGS_ERR_MAX];
    config scratch;
    memset(&scratch, 0, sizeof scratch);
    if (config_set(&scratch, &config_fields[f], text, err, sizeof err) != 0)
        return args_usage_error("%s", err);
    if (strcmp(config_fields[f].name, "model") == 0 && !model_lookup(text))
        return args_usage_error("--model: unknown model '%s' (accepted: %s)", text,
                                model_names());
    if (strcmp(config_fields[f].name, "task") == 0 && !task_known(text))
        return args_usage_error("--task: unknown task '%s' (accepted: %s)", text,
                                task_names());
    return 0;
}

/* Checks one value of a flag of a kind every command checks the same way. */
static int check_flag(const flag_spec *sp, const char *text)
{
    const model_ops *list[ARGS_MAX_MODELS];
    size_t n;
    switch (sp->kind) {
    case KIND_PATH:
        return args_path(sp->name, text);
    case KIND_MODELS:
        return args_models(text, list, &n);
    case KIND_LENGTHS:
    case KIND_OTHER:
        break;
    }
    return 0;
}

/* Checks every value of a list of lengths that a later value of the same flag replaced,
 * against the largest --max-len: a command reads only the last one, and some read it
 * alone. Returns 0, or prints and returns ARGS_EXIT_USAGE. */
static int check_earlier_lists(const args_line *a)
{
    static size_t scratch[ARGS_MAX_LENGTHS];
    const config_field *ml = config_find("max_len");
    const size_t top = ml ? (size_t)ml->max : ARGS_MAX_LENGTHS;
    for (size_t i = 0; i < a->n_seen; i++) {
        const flag_spec *sp = spec_of((args_flag)a->seen_code[i]);
        const int last = sp && a->flag[sp->code - ARGS_FIRST] == a->seen_text[i];
        if (!sp || sp->kind != KIND_LENGTHS || last)
            continue; /* not a list, or its last value: the command's to check */
        size_t n;
        if (args_lengths(sp->name, a->seen_text[i], top, scratch, &n))
            return ARGS_EXIT_USAGE;
    }
    return 0;
}

int args_parse(int argc, char **argv, int settings, const args_flag *allowed,
               void (*help)(void), args_line *a)
{
    /* the flag spellings of the settings, made once (getopt_long keeps the pointers) */
    static char names[ARGS_MAX_FIELDS][CONFIG_STR_MAX];
    struct option opts[ARGS_MAX_FIELDS + N_FLAGS + 2];
    size_t k = 0;
    memset(a, 0, sizeof *a);
    if (config_n_fields > ARGS_MAX_FIELDS) /* a build with more settings than room here */
        return args_run_error("%zu settings, more than the %d the parser holds "
                              "(ARGS_MAX_FIELDS)", config_n_fields, ARGS_MAX_FIELDS);
    if (settings)
        for (size_t f = 0; f < config_n_fields; f++) {
            config_flag_name(&config_fields[f], names[f], sizeof names[f]);
            opts[k++] = (struct option){names[f],
                                        config_fields[f].type == CFG_BOOL ? no_argument
                                                                          : required_argument,
                                        NULL, ARGS_SETTING + (int)f};
        }
    for (size_t e = 0; e < N_FLAGS; e++)
        for (const args_flag *p = allowed; *p; p++)
            if (*p == flag_table[e].code)
                opts[k++] = (struct option){flag_table[e].name, flag_table[e].has_arg, NULL,
                                            (int)flag_table[e].code};
    opts[k++] = (struct option){"help", no_argument, NULL, 'h'};
    opts[k] = (struct option){NULL, 0, NULL, 0};

    opterr = 0; /* we print our own one-line messages */
    optind = 0; /* 0, not 1: glibc then also forgets the state of an earlier parse */
    int rc;
    for (;;) {
        int prev = optind;
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1)
            break;
        if (c == 'h') {
            help();
            return ARGS_HELP_SHOWN;
        }
        if (c == '?') {
            const char *bad = argv[optind - 1 >= prev ? optind - 1 : prev];
            return args_usage_error("unknown or ambiguous flag '%s'", bad);
        }
        if (c == ':')
            return args_usage_error("flag '%s' needs a value", argv[optind - 1]);
        if (c >= ARGS_SETTING) {
            /* every value is checked, so a later one wins only over a valid one */
            const size_t f = (size_t)(c - ARGS_SETTING);
            const char *text = config_fields[f].type == CFG_BOOL ? "1" : optarg;
            if ((rc = check_setting(f, text)) != 0)
                return rc;
            if (!a->setting[f])
                a->given[a->n_given++] = (int)f;
            a->setting[f] = text;
        } else {
            const flag_spec *sp = spec_of((args_flag)c);
            const char *text = optarg ? optarg : "1";
            if (a->n_seen == ARGS_MAX_GIVEN)
                return args_usage_error("more than %d flags (the limit of one command line)",
                                        ARGS_MAX_GIVEN);
            if (sp && (rc = check_flag(sp, text)) != 0)
                return rc;
            a->seen_code[a->n_seen] = c;
            a->seen_text[a->n_seen++] = text;
            a->flag[c - ARGS_FIRST] = text;
        }
    }
    if (optind < argc)
        return args_usage_error("unexpected argument '%s' (every setting is a --flag)",
                                argv[optind]);
    return check_earlier_lists(a);
}

const char *args_get(const args_line *a, args_flag f) { return a->flag[f - ARGS_FIRST]; }

const char *args_nth(const args_line *a, args_flag f, size_t k)
{
    for (size_t i = 0; i < a->n_seen; i++)
        if (a->seen_code[i] == (int)f && k-- == 0)
            return a->seen_text[i];
    return NULL;
}

const char *args_setting(const args_line *a, const char *name)
{
    const config_field *f = config_find(name);
    return f ? a->setting[f - config_fields] : NULL;
}

int args_path(const char *flag, const char *text)
{
    const size_t len = strlen(text);
    if (len == 0)
        return args_usage_error("--%s: empty path (accepted: a path of 1 to %d characters)",
                                flag, ARGS_PATH_MAX);
    if (len > ARGS_PATH_MAX)
        return args_usage_error("--%s: the path is %zu characters long (accepted: at most "
                                "%d)", flag, len, ARGS_PATH_MAX);
    if (strchr(text, '\n'))
        return args_usage_error("--%s: the path holds a newline (accepted: a path on one "
                                "line)", flag);
    if (text[0] == '-' && text[1] != '\0')
        return args_usage_error("--%s: '%s' is a flag, not a path (accepted: a path; one "
                                "that starts with '-' is written ./%s)", flag, text, text);
    return 0;
}

/* ---- counts and lists ------------------------------------------------------------------ */

int args_size(const char *flag, const char *text, size_t lo, size_t hi, size_t *out)
{
    char err[ARGS_ERR_MAX];
    unsigned long long v;
    if (config_parse_whole(flag, text, lo, hi, NULL, &v, err, sizeof err) != 0)
        return args_usage_error("%s", err);
    *out = (size_t)v;
    return 0;
}

int args_count(const args_line *a, args_flag f, size_t lo, size_t hi, size_t *out)
{
    const char *text;
    for (size_t k = 0; (text = args_nth(a, f, k)) != NULL; k++)
        if (args_size(args_flag_name(f), text, lo, hi, out))
            return ARGS_EXIT_USAGE;
    return 0;
}

/* Fills out from the range "A:B" or "A:B:S" in buf (text is the value as given, for
 * messages). */
static int lengths_range(const char *flag, const char *text, char *buf, size_t max,
                         size_t *out, size_t *count)
{
    const char *accepted = "A:B:STEP, A:B or A,B,C with lengths 1..";
    char *f[3] = {buf, NULL, NULL};
    size_t nf = 1;
    for (char *c = buf; *c; c++)
        if (*c == ':') {
            if (nf == 3)
                return args_usage_error("--%s: '%s' has too many ':' (accepted: %s%zu)", flag,
                                        text, accepted, max);
            *c = '\0';
            f[nf++] = c + 1;
        }
    size_t from = 0, to = 0, step = 1;
    if (args_size(flag, f[0], 1, max, &from) || args_size(flag, f[1], 1, max, &to) ||
        (nf == 3 && args_size(flag, f[2], 1, max, &step)))
        return ARGS_EXIT_USAGE;
    if (from > to)
        return args_usage_error("--%s: '%s' starts above its end (accepted: %s%zu)", flag,
                                text, accepted, max);
    for (size_t L = from; L <= to; L += step) {
        if (*count == ARGS_MAX_LENGTHS)
            return args_usage_error("--%s: '%s' makes more than %d lengths (the limit of one "
                                    "list)", flag, text, ARGS_MAX_LENGTHS);
        out[(*count)++] = L;
    }
    return 0;
}

/* Fills out from the list "A,B,C" in buf: every item a length, none empty. */
static int lengths_list(const char *flag, const char *text, char *buf, size_t max,
                        size_t *out, size_t *count)
{
    for (char *item = buf;;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (*item == '\0')
            return args_usage_error("--%s: '%s' has an empty item (accepted: A:B:STEP, A:B "
                                    "or A,B,C with lengths 1..%zu)", flag, text, max);
        if (*count == ARGS_MAX_LENGTHS)
            return args_usage_error("--%s: more than %d lengths (the limit of one list)",
                                    flag, ARGS_MAX_LENGTHS);
        if (args_size(flag, item, 1, max, &out[*count]))
            return ARGS_EXIT_USAGE;
        (*count)++;
        if (!comma)
            return 0;
        item = comma + 1;
    }
}

int args_lengths(const char *flag, const char *text, size_t max, size_t *out, size_t *count)
{
    *count = 0;
    char *buf = strdup(text); /* split in place: a copy, as long as the text */
    if (!buf)
        return args_run_error("out of memory");
    int rc = strchr(buf, ':') ? lengths_range(flag, text, buf, max, out, count)
                              : lengths_list(flag, text, buf, max, out, count);
    free(buf);
    return rc;
}

int args_lengths_of(const args_line *a, args_flag f, size_t max, size_t *out, size_t *count)
{
    const char *text;
    *count = 0;
    for (size_t k = 0; (text = args_nth(a, f, k)) != NULL; k++)
        if (args_lengths(args_flag_name(f), text, max, out, count))
            return ARGS_EXIT_USAGE;
    return 0;
}

int args_train_len(const char *text, size_t max_len, size_t *min, size_t *max)
{
    /* split at the first ':' only: "4:5:6" leaves "5:6", refused as not a number */
    char *buf = strdup(text);
    if (!buf)
        return args_run_error("out of memory");
    char *colon = strchr(buf, ':');
    const char *hi = buf;
    if (colon) {
        *colon = '\0';
        hi = colon + 1;
    }
    int rc = args_size("train-len", buf, 1, max_len, min) ||
                     args_size("train-len", hi, 1, max_len, max)
                 ? ARGS_EXIT_USAGE
                 : 0;
    free(buf);
    return rc;
}

int args_models(const char *text, const model_ops **list, size_t *n)
{
    *n = 0;
    if (!text) {
        for (; model_registry[*n]; (*n)++) {
            if (*n == ARGS_MAX_MODELS)
                return args_run_error("more than %d registered models (ARGS_MAX_MODELS)",
                                      ARGS_MAX_MODELS);
            list[*n] = model_registry[*n];
        }
        return 0;
    }
    for (const char *item = text;;) {
        const size_t len = strcspn(item, ",");
        char name[CONFIG_STR_MAX];
        if (len == 0)
            return args_usage_error("--models: %s (accepted: names from %s, separated by ',')",
                                    *text ? "an empty item" : "no model given",
                                    model_names());
        /* a name longer than any registered one is unknown: shown whole, looked up never */
        const model_ops *ops = NULL;
        if (len < sizeof name) {
            memcpy(name, item, len);
            name[len] = '\0';
            ops = model_lookup(name);
        }
        if (!ops)
            return args_usage_error("--models: unknown model '%.*s' (accepted: %s)", (int)len,
                                    item, model_names());
        for (size_t k = 0; k < *n; k++)
            if (list[k] == ops)
                return args_usage_error("--models: '%s' is given twice (accepted: each model "
                                        "once)", ops->name);
        if (*n == ARGS_MAX_MODELS)
            return args_usage_error("--models: more than %d models (the limit of one list)",
                                    ARGS_MAX_MODELS);
        list[(*n)++] = ops;
        if (item[len] == '\0')
            return 0;
        item += len + 1;
    }
}

void args_all_models(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; model_registry[k] && used < n; k++) {
        int w = snprintf(buf + used, n - used, "%s%s", k ? "," : "", model_registry[k]->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int args_join_models(const model_ops *const *list, size_t n, char *buf, size_t n_buf)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n; k++) {
        int w = snprintf(buf + used, n_buf - used, "%s%s", k ? "," : "", list[k]->name);
        if (w < 0 || (size_t)w >= n_buf - used)
            return -1;
        used += (size_t)w;
    }
    return 0;
}

/* ---- the configuration ------------------------------------------------------------------- */

/* A file task (task.h): the file decides symbols, data_crc and, when neither --train-len
 * nor the command (own_range: a preset's) gave one, the training range
 * (task_file_config); a flag that disagrees with it is a usage error. */
static int file_task_config(const args_line *a, config *c, int own_range)
{
    char err[ARGS_ERR_MAX];
    const task_file_given given = {args_setting(a, "symbols") ? "--symbols" : NULL,
                                   args_setting(a, "data_crc") ? "--data-crc" : NULL,
                                   args_get(a, ARGS_TRAIN_LEN) || own_range ? "--train-len"
                                                                            : NULL};
    const int rc = task_file_config(c, &given, err, sizeof err);
    if (rc == TASK_FILE_UNREADABLE)
        return args_usage_error("--task %s: %s", c->task, err);
    return rc ? args_usage_error("%s", err) : 0;
}

int args_config(const args_line *a, const args_plan *p, config *c, const model_ops **ops)
{
    char err[ARGS_ERR_MAX];
    config_defaults(c);
    *ops = NULL;
    if (!p->shared) {
        /* the model first: its defaults come before every flag */
        const char *name = args_setting(a, "model") ? args_setting(a, "model") : c->model;
        *ops = p->ops ? p->ops : model_lookup(name);
        if (!*ops)
            return args_usage_error("--model: unknown model '%s' (accepted: %s)", name,
                                    model_names());
        (*ops)->defaults(c);
        snprintf(c->model, sizeof c->model, "%s", (*ops)->name);
    }
    if (p->overrides)
        p->overrides(c, *ops, p->ctx);
    for (size_t k = 0; k < a->n_given; k++) {
        const int f = a->given[k];
        if (config_set(c, &config_fields[f], a->setting[f], err, sizeof err) != 0)
            return args_usage_error("%s", err);
    }
    if (!task_known(c->task))
        return args_usage_error("--task: unknown task '%s' (accepted: %s)", c->task,
                                task_names());
    const char *tl;
    for (size_t k = 0; (tl = args_nth(a, ARGS_TRAIN_LEN, k)) != NULL; k++)
        if (args_train_len(tl, c->max_len, &c->train_min, &c->train_max))
            return ARGS_EXIT_USAGE;
    int rc;
    if (task_is_file(c->task) && (rc = file_task_config(a, c, p->own_train_range)) != 0)
        return rc;
    if ((!p->no_train_range && config_check(c, err, sizeof err) != 0) ||
        (*ops && (*ops)->check(c, err, sizeof err) != 0))
        return args_usage_error("%s", err);
    return 0;
}
