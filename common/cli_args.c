/* cli_args.c — the command line's parsers and its one configuration builder (see
 * cli_args.h).
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
#include "cli_args.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "task.h"

/* getopt_long's code of setting k of config_fields: ARGS_SETTING + k, above every
 * args_flag. */
#define ARGS_SETTING 1000
_Static_assert(ARGS_END < ARGS_SETTING, "the codes of flags and settings must not overlap");

/* The spelling and argument of each args_flag. */
typedef struct flag_spec {
    const char *name;
    int has_arg;
    args_flag code;
} flag_spec;

static const flag_spec flag_table[] = {
    {"train-len", required_argument, ARGS_TRAIN_LEN},
    {"out", required_argument, ARGS_OUT},
    {"checkpoint", required_argument, ARGS_CHECKPOINT},
    {"lengths", required_argument, ARGS_LENGTHS},
    {"samples", required_argument, ARGS_SAMPLES},
    {"input", required_argument, ARGS_INPUT},
    {"quiet", no_argument, ARGS_QUIET},
    {"stride", required_argument, ARGS_STRIDE},
    {"len", required_argument, ARGS_LEN},
    {"eval-lengths", required_argument, ARGS_EVAL_LENGTHS},
    {"models", required_argument, ARGS_MODELS},
    {"reps", required_argument, ARGS_REPS},
    {"trace", required_argument, ARGS_TRACE},
    {"cost-lengths", required_argument, ARGS_COST_LENGTHS},
    {"preset", required_argument, ARGS_PRESET},
    {"seeds", required_argument, ARGS_SEEDS},
    {"jobs", required_argument, ARGS_JOBS},
    {"print-jobs", no_argument, ARGS_PRINT_JOBS},
    {"resume", required_argument, ARGS_RESUME},
};
#define N_FLAGS (sizeof flag_table / sizeof flag_table[0])

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

int args_parse(int argc, char **argv, int settings, const args_flag *allowed,
               void (*help)(void), args_line *a)
{
    /* the flag spellings of the settings, made once (getopt_long keeps the pointers) */
    static char names[ARGS_MAX_FIELDS][CONFIG_STR_MAX];
    struct option opts[ARGS_MAX_FIELDS + N_FLAGS + 2];
    size_t k = 0;
    memset(a, 0, sizeof *a);
    if (settings)
        for (size_t f = 0; f < config_n_fields && f < ARGS_MAX_FIELDS; f++) {
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
            const int f = c - ARGS_SETTING;
            a->setting[f] = config_fields[f].type == CFG_BOOL ? "1" : optarg;
            if (a->n_given < ARGS_MAX_FIELDS)
                a->given[a->n_given++] = f;
        } else {
            a->flag[c - ARGS_FIRST] = optarg ? optarg : "1";
        }
    }
    if (optind < argc)
        return args_usage_error("unexpected argument '%s' (every setting is a --flag)",
                                argv[optind]);
    return 0;
}

const char *args_get(const args_line *a, args_flag f) { return a->flag[f - ARGS_FIRST]; }

const char *args_setting(const args_line *a, const char *name)
{
    const config_field *f = config_find(name);
    return f ? a->setting[f - config_fields] : NULL;
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
    const char *text = args_get(a, f);
    if (!text)
        return 0;
    for (size_t e = 0; e < N_FLAGS; e++)
        if (flag_table[e].code == f)
            return args_size(flag_table[e].name, text, lo, hi, out);
    return 0;
}

int args_lengths(const char *flag, const char *text, size_t max, size_t *out, size_t *count)
{
    char buf[256];
    *count = 0;
    if (strlen(text) >= sizeof buf)
        return args_usage_error("--%s: value too long", flag);
    strcpy(buf, text);
    const char *accepted = "A:B:STEP, A:B or A,B,C with lengths 1..";
    if (strchr(buf, ':')) {
        /* a range: up to three fields separated by ':' */
        char *f[3] = {buf, NULL, NULL};
        size_t nf = 1;
        for (char *c = buf; *c; c++)
            if (*c == ':') {
                if (nf == 3)
                    return args_usage_error("--%s: '%s' has too many ':' (accepted: %s%zu)",
                                            flag, text, accepted, max);
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
        for (size_t L = from; L <= to && *count < ARGS_MAX_LENGTHS; L += step)
            out[(*count)++] = L;
        return 0;
    }
    /* a list: lengths separated by ',' (empty items are skipped) */
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (*count == ARGS_MAX_LENGTHS)
            return args_usage_error("--%s: more than %d lengths", flag, ARGS_MAX_LENGTHS);
        if (args_size(flag, tok, 1, max, &out[*count]))
            return ARGS_EXIT_USAGE;
        (*count)++;
    }
    if (*count == 0)
        return args_usage_error("--%s: no length given (accepted: %s%zu)", flag, accepted,
                                max);
    return 0;
}

int args_train_len(const char *text, size_t max_len, size_t *min, size_t *max)
{
    /* split at the first ':' only: "4:5:6" leaves "5:6", refused as not a number */
    char buf[64];
    snprintf(buf, sizeof buf, "%s", text);
    char *colon = strchr(buf, ':');
    const char *hi = buf;
    if (colon) {
        *colon = '\0';
        hi = colon + 1;
    }
    if (args_size("train-len", buf, 1, max_len, min) ||
        args_size("train-len", hi, 1, max_len, max))
        return ARGS_EXIT_USAGE;
    return 0;
}

int args_models(const char *text, const model_ops **list, size_t *n)
{
    *n = 0;
    if (!text) {
        for (; model_registry[*n] && *n < ARGS_MAX_MODELS; (*n)++)
            list[*n] = model_registry[*n];
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok && *n < ARGS_MAX_MODELS; tok = strtok(NULL, ",")) {
        if (!(list[*n] = model_lookup(tok)))
            return args_usage_error("--models: unknown model '%s' (accepted: %s)", tok,
                                    model_names());
        (*n)++;
    }
    if (*n == 0)
        return args_usage_error("--models: no model given (accepted: %s)", model_names());
    return 0;
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

/* ---- the configuration ------------------------------------------------------------------- */

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
    if (!task_lookup(c->task))
        return args_usage_error("--task: unknown task '%s' (accepted: %s)", c->task,
                                task_names());
    const char *tl = args_get(a, ARGS_TRAIN_LEN);
    if (tl && args_train_len(tl, c->max_len, &c->train_min, &c->train_max))
        return ARGS_EXIT_USAGE;
    if ((!p->no_train_range && config_check(c, err, sizeof err) != 0) ||
        (*ops && (*ops)->check(c, err, sizeof err) != 0))
        return args_usage_error("%s", err);
    return 0;
}
