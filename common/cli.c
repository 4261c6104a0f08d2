/* cli.c — the attnlab command line: train, eval, gradcheck, attention, help, --version.
 *
 * Parsing. Flags are GNU long options (getopt_long: `--hidden 128` or `--hidden=128`,
 * unambiguous abbreviations accepted). Every setting of struct config is a flag of the
 * same name ('-' for '_'), generated from the field table in config.c, so the flags, the
 * configuration files and the checkpoints can never disagree on a name or a range.
 * Values are collected first and applied after the model is known, because the model's
 * own defaults (its canonical sizes and recipe) come between the generic defaults and
 * what the user typed.
 *
 * Errors. A usage error prints one line naming the flag and what is accepted, then the
 * hint "Try 'attnlab CMD --help'.", and exits 2. A runtime error prints one line saying
 * what failed and what to do, and exits 1. Nothing already written is touched: every
 * file is written to a temporary name and renamed into place (afile.h).
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "afile.h"
#include "bench.h"
#include "buildinfo.h"
#include "checkpoint.h"
#include "config.h"
#include "eval.h"
#include "gradcheck.h"
#include "model.h"
#include "report.h"
#include "summary.h"
#include "rng.h"
#include "task.h"
#include "train.h"

#define EXIT_USAGE 2
#define EXIT_RUNTIME 1
#define ERR_MAX 512
#define MAX_LENGTHS 4096

/* ---- messages ----------------------------------------------------------------------- */

static const char *current_cmd = "attnlab"; /* "attnlab train" etc., for messages */

/* Prints "attnlab CMD: message" and the help hint; returns the usage exit status. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", current_cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", current_cmd);
    return EXIT_USAGE;
}

/* Prints "attnlab CMD: message"; returns the runtime exit status. */
__attribute__((format(printf, 1, 2))) static int run_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", current_cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_RUNTIME;
}

/* ---- option parsing ------------------------------------------------------------------ */

/* Flags that are not settings of struct config. */
enum {
    OPT_HELP = 'h',
    OPT_FIRST_EXTRA = 256,
    OPT_TRAIN_LEN = OPT_FIRST_EXTRA,
    OPT_OUT,
    OPT_CHECKPOINT,
    OPT_LENGTHS,
    OPT_SAMPLES,
    OPT_INPUT,
    OPT_QUIET,
    OPT_STRIDE,
    OPT_LEN,
    OPT_EVAL_LENGTHS,
    OPT_MODELS,
    OPT_REPS,
    OPT_TRACE,
    OPT_COST_LENGTHS,
    OPT_PRESET,
    OPT_SEEDS,
    OPT_JOBS,
    OPT_PRINT_JOBS,
    OPT_RESUME,
    OPT_END_EXTRA,
    OPT_CONFIG = 1000 /* OPT_CONFIG + k is field k of config_fields */
};

typedef struct extra_flag {
    const char *name;
    int has_arg;
    int code;
} extra_flag;

static const extra_flag extra_flags[] = {
    {"train-len", required_argument, OPT_TRAIN_LEN},
    {"out", required_argument, OPT_OUT},
    {"checkpoint", required_argument, OPT_CHECKPOINT},
    {"lengths", required_argument, OPT_LENGTHS},
    {"samples", required_argument, OPT_SAMPLES},
    {"input", required_argument, OPT_INPUT},
    {"quiet", no_argument, OPT_QUIET},
    {"stride", required_argument, OPT_STRIDE},
    {"len", required_argument, OPT_LEN},
    {"eval-lengths", required_argument, OPT_EVAL_LENGTHS},
    {"models", required_argument, OPT_MODELS},
    {"reps", required_argument, OPT_REPS},
    {"trace", required_argument, OPT_TRACE},
    {"cost-lengths", required_argument, OPT_COST_LENGTHS},
    {"preset", required_argument, OPT_PRESET},
    {"seeds", required_argument, OPT_SEEDS},
    {"jobs", required_argument, OPT_JOBS},
    {"print-jobs", no_argument, OPT_PRINT_JOBS},
    {"resume", required_argument, OPT_RESUME},
};
#define N_EXTRA (sizeof extra_flags / sizeof extra_flags[0])

/* What one command line said: the raw text of each flag given (NULL when absent). */
typedef struct args {
    const char *config[64];                     /* by config field index */
    const char *extra[OPT_END_EXTRA - OPT_FIRST_EXTRA]; /* by extra code */
    int given_order[64];                        /* config fields in the order given */
    size_t n_given;
} args;

static const char *extra(const args *a, int code) { return a->extra[code - OPT_FIRST_EXTRA]; }

/* Parses argv into a. with_config: the command takes the settings of struct config.
 * allowed: the extra flags it takes (terminated by 0). Returns 0, 1 when --help was
 * printed (exit 0), or EXIT_USAGE after printing the error. */
static int parse_args(int argc, char **argv, int with_config, const int *allowed,
                      void (*help)(void), args *a)
{
    static char names[64][CONFIG_STR_MAX];
    struct option opts[64 + N_EXTRA + 2];
    size_t k = 0;
    memset(a, 0, sizeof *a);
    if (with_config)
        for (size_t f = 0; f < config_n_fields && f < 64; f++) {
            /* the flag spelling of a field: '-' where the key has '_' */
            snprintf(names[f], sizeof names[f], "%s", config_fields[f].name);
            for (char *c = names[f]; *c; c++)
                if (*c == '_')
                    *c = '-';
            opts[k++] = (struct option){names[f],
                                        config_fields[f].type == CFG_BOOL ? no_argument
                                                                          : required_argument,
                                        NULL, OPT_CONFIG + (int)f};
        }
    for (size_t e = 0; e < N_EXTRA; e++)
        for (const int *p = allowed; *p; p++)
            if (*p == extra_flags[e].code)
                opts[k++] = (struct option){extra_flags[e].name, extra_flags[e].has_arg, NULL,
                                            extra_flags[e].code};
    opts[k++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    opts[k] = (struct option){NULL, 0, NULL, 0};

    opterr = 0; /* we print our own one-line messages */
    optind = 0; /* 0, not 1: glibc then also forgets the state of an earlier parse */
    for (;;) {
        int prev = optind;
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1)
            break;
        if (c == OPT_HELP) {
            help();
            return 1;
        }
        if (c == '?') {
            const char *bad = argv[optind - 1 >= prev ? optind - 1 : prev];
            return usage_error("unknown or ambiguous flag '%s'", bad);
        }
        if (c == ':')
            return usage_error("flag '%s' needs a value", argv[optind - 1]);
        if (c >= OPT_CONFIG) {
            const config_field *f = &config_fields[c - OPT_CONFIG];
            a->config[c - OPT_CONFIG] = f->type == CFG_BOOL ? "1" : optarg;
            if (a->n_given < 64)
                a->given_order[a->n_given++] = c - OPT_CONFIG;
        } else {
            a->extra[c - OPT_FIRST_EXTRA] = optarg ? optarg : "1";
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s' (every setting is a --flag)", argv[optind]);
    return 0;
}

/* Parses text as a whole number in [lo, hi] for flag. Returns 0, or prints and returns
 * EXIT_USAGE. */
static int parse_size(const char *flag, const char *text, size_t lo, size_t hi, size_t *out)
{
    const char *p = text;
    unsigned long long v = 0;
    if (*p == '\0')
        return usage_error("--%s: empty value (accepted: an integer in [%zu, %zu])", flag, lo,
                           hi);
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return usage_error("--%s: '%s' is not a whole number (accepted: an integer in "
                               "[%zu, %zu])", flag, text, lo, hi);
        if (v > (unsigned long long)hi)
            break; /* already out of range: stop before it can overflow */
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (*p != '\0' || v < lo || v > hi)
        return usage_error("--%s: %s is out of range (accepted: an integer in [%zu, %zu])",
                           flag, text, lo, hi);
    *out = (size_t)v;
    return 0;
}

/* Parses a list of lengths: "A:B:S" (A to B in steps of S), "A:B" (step 1), or
 * "A,B,C", each between 1 and max. Returns 0, or prints and returns EXIT_USAGE. */
static int parse_lengths(const char *flag, const char *text, size_t max, size_t *out,
                         size_t *count)
{
    char buf[256];
    *count = 0;
    if (strlen(text) >= sizeof buf)
        return usage_error("--%s: value too long", flag);
    strcpy(buf, text);
    const char *accepted = "A:B:STEP, A:B or A,B,C with lengths 1..";
    if (strchr(buf, ':')) {
        char *f[3] = {buf, NULL, NULL};
        size_t nf = 1;
        for (char *c = buf; *c; c++)
            if (*c == ':') {
                if (nf == 3)
                    return usage_error("--%s: '%s' has too many ':' (accepted: %s%zu)", flag,
                                       text, accepted, max);
                *c = '\0';
                f[nf++] = c + 1;
            }
        size_t a, b, s = 1;
        if (parse_size(flag, f[0], 1, max, &a) || parse_size(flag, f[1], 1, max, &b) ||
            (nf == 3 && parse_size(flag, f[2], 1, max, &s)))
            return EXIT_USAGE;
        if (a > b)
            return usage_error("--%s: '%s' starts above its end (accepted: %s%zu)", flag,
                               text, accepted, max);
        for (size_t L = a; L <= b && *count < MAX_LENGTHS; L += s)
            out[(*count)++] = L;
        return 0;
    }
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (*count == MAX_LENGTHS)
            return usage_error("--%s: more than %d lengths", flag, MAX_LENGTHS);
        if (parse_size(flag, tok, 1, max, &out[*count]))
            return EXIT_USAGE;
        (*count)++;
    }
    if (*count == 0)
        return usage_error("--%s: no length given (accepted: %s%zu)", flag, accepted, max);
    return 0;
}

/* Builds the configuration of a command: generic defaults, the model's defaults, then
 * every config flag in the order given, then --train-len, then the checks. overrides, when
 * not NULL, runs between the model's defaults and the flags (gradcheck's small sizes).
 * Returns 0 or EXIT_USAGE (printed). */
static int build_config(const args *a, config *c, const model_ops **ops,
                        void (*overrides)(config *))
{
    char err[ERR_MAX];
    config_defaults(c);
    const int model_idx = (int)(config_find("model") - config_fields);
    const char *name = a->config[model_idx] ? a->config[model_idx] : c->model;
    *ops = model_lookup(name);
    if (!*ops)
        return usage_error("--model: unknown model '%s' (accepted: %s)", name, model_names());
    (*ops)->defaults(c);
    strcpy(c->model, (*ops)->name);
    if (overrides)
        overrides(c);
    for (size_t k = 0; k < a->n_given; k++) {
        const int f = a->given_order[k];
        if (config_set(c, &config_fields[f], a->config[f], err, sizeof err) != 0)
            return usage_error("%s", err);
    }
    if (!task_lookup(c->task))
        return usage_error("--task: unknown task '%s' (accepted: %s)", c->task, task_names());
    const char *tl = extra(a, OPT_TRAIN_LEN);
    if (tl) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", tl);
        char *colon = strchr(buf, ':');
        const char *lo = buf, *hi = buf;
        if (colon) {
            *colon = '\0';
            hi = colon + 1;
        }
        if (parse_size("train-len", lo, 1, c->max_len, &c->train_min) ||
            parse_size("train-len", hi, 1, c->max_len, &c->train_max))
            return EXIT_USAGE;
    }
    if (config_check(c, err, sizeof err) != 0 || (*ops)->check(c, err, sizeof err) != 0)
        return usage_error("%s", err);
    return 0;
}

/* Sets the BLAS threads from --threads (when the BLAS has threads). */
static void apply_threads(const config *c) { buildinfo_set_threads(c->threads); }

static int write_trace(model *m, const int *src, size_t Ts, const char *dir, int print);
static int exists_in(const char *dir, const char *name);

/* ---- writing files --------------------------------------------------------------------- */

/* Writes dir/name atomically with write(f, ctx). Returns 0, or prints and returns -1. */
static int write_file(const char *dir, const char *name, int (*write)(FILE *, const void *),
                      const void *ctx)
{
    char path[AFILE_PATH_MAX], err[ERR_MAX];
    afile af;
    if (afile_join(path, sizeof path, dir, name) != 0) {
        run_error("%s/%s: path too long", dir, name);
        return -1;
    }
    if (afile_open(&af, path, err, sizeof err) != 0) {
        run_error("%s", err);
        return -1;
    }
    if (write(af.f, ctx) != 0) {
        afile_abort(&af);
        run_error("cannot write %s", path);
        return -1;
    }
    if (afile_commit(&af, err, sizeof err) != 0) {
        run_error("%s", err);
        return -1;
    }
    return 0;
}

static int write_config(FILE *f, const void *c) { return config_write_tsv(c, f); }

/* The facts of a run besides its configuration: build, BLAS, size, time. */
typedef struct run_facts {
    const model *m;
    const train_summary *ts;
} run_facts;

static int write_build(FILE *f, const void *ctx)
{
    const run_facts *rf = ctx;
    fprintf(f, "key\tvalue\n");
    buildinfo_write_tsv(f);
    fprintf(f, "parameters\t%zu\n", rf->m->params.size);
    if (rf->ts) {
        fprintf(f, "train_steps\t%zu\n", rf->ts->steps);
        fprintf(f, "train_seconds\t%.3f\n", rf->ts->seconds);
    }
    return ferror(f) ? -1 : 0;
}

typedef struct eval_out {
    const char *model;
    const eval_result *r;
    size_t n;
} eval_out;

static int write_eval(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_tsv(f, e->model, e->r, e->n);
}

static int write_positions(FILE *f, const void *ctx)
{
    const eval_out *e = ctx;
    return eval_write_positions_tsv(f, e->model, e->r, e->n);
}

/* Evaluates m at lens, prints the table when print is set and, when dir is not NULL,
 * writes eval.tsv and eval_positions.tsv into dir. Returns the exit status. */
static int evaluate(model *m, const size_t *lens, size_t nl, size_t samples,
                    unsigned long seed, const char *dir, int print)
{
    char err[ERR_MAX];
    eval_result *r = calloc(nl, sizeof *r);
    if (!r)
        return run_error("out of memory");
    const task *t = task_lookup(m->cfg.task);
    if (eval_run(m, t, lens, nl, samples, seed, r, err, sizeof err) != 0) {
        eval_free(r, nl);
        free(r);
        return run_error("%s", err);
    }
    if (print)
        eval_print(stdout, m->ops->name, r, nl);
    int rc = 0;
    eval_out eo = {m->ops->name, r, nl};
    if (dir && (write_file(dir, "eval.tsv", write_eval, &eo) != 0 ||
                write_file(dir, "eval_positions.tsv", write_positions, &eo) != 0))
        rc = EXIT_RUNTIME;
    eval_free(r, nl);
    free(r);
    return rc;
}

/* The cost of each requested length (cost.tsv). */
typedef struct cost_out {
    model *m;
    const size_t *lens;
    size_t n;
    const gsl_rng *r;
    int failed;
} cost_out;

static int write_cost(FILE *f, const void *ctx)
{
    const cost_out *c = ctx;
    const task *t = task_lookup(c->m->cfg.task);
    fprintf(f, "model\tlen\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq\n");
    for (size_t k = 0; k < c->n; k++) {
        double tr, de;
        const size_t L = c->lens[k];
        if (bench_cost(c->m, t, L, c->m->cfg.batch, 3, c->r, &tr, &de) != 0)
            return -1;
        fprintf(f, "%s\t%zu\t%.6g\t%.6g\t%.6g\n", c->m->ops->name, L, tr,
                c->m->ops->flops(&c->m->cfg, L, t->target_len(L)), de);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- attnlab train --------------------------------------------------------------------- */

static void help_train(void)
{
    printf(
        "Usage: attnlab train [--model NAME] [--task NAME] [--train-len MIN:MAX] [--steps N]\n"
        "                     [--batch N] [--lr X] [--seed S] [--out DIR] [SETTINGS...]\n"
        "\n"
        "Trains one model on one task and writes into DIR (default results/MODEL-TASK-sSEED):\n"
        "  config.tsv           every setting of the run (the same keys as the flags)\n"
        "  build.tsv            version, compiler, flags, BLAS in use, parameter count, time\n"
        "  train_log.tsv        step seconds lr loss token_acc seq_acc grad_norm seq_per_s\n"
        "  model.ckpt           the trained weights (docs/checkpoint-format.md)\n"
        "  eval.tsv             greedy-decoding accuracy per length (see attnlab eval)\n"
        "  eval_positions.tsv   accuracy per output position at each length\n"
        "\n"
        "Run options:\n"
        "  --train-len MIN:MAX  training lengths, one drawn per batch (or one length N)\n"
        "  --eval-lengths SPEC  final evaluation lengths, A:B:STEP or A,B,C\n"
        "                       (default: up to twice the longest training length)\n"
        "  --samples N          sequences per evaluation length (default 256)\n"
        "  --trace \"SYMBOLS\"    also write the attention maps (or gates) of this example\n"
        "                       into DIR/trace/ (see attnlab attention)\n"
        "  --cost-lengths SPEC  also measure the time of a training step and of decoding\n"
        "                       per sequence at these lengths into DIR/cost.tsv\n"
        "  --out DIR            run directory (created when missing)\n"
        "  --quiet              print nothing but errors (no progress, no table)\n"
        "  --resume DIR         continue the stopped run in DIR from its checkpoint.ckpt\n"
        "                       (its settings come from DIR; only --quiet, --threads)\n"
        "\n"
        "Settings (each also a key of config.tsv), with their defaults; every model reads\n"
        "the sizes it needs and ignores the others:\n");
    config d;
    config_defaults(&d);
    for (size_t k = 0; k < config_n_fields; k++) {
        char flag[64], value[64];
        snprintf(flag, sizeof flag, "%s", config_fields[k].name);
        for (char *c = flag; *c; c++)
            if (*c == '_')
                *c = '-';
        if (config_fields[k].type == CFG_BOOL)
            snprintf(value, sizeof value, "off");
        else
            config_format(&d, &config_fields[k], value, sizeof value);
        printf("  --%-18s %s (default %s)\n", flag, config_fields[k].help, value);
    }
    printf("\nModels: %s.  Tasks: %s.\n"
           "\nExamples:\n"
           "  attnlab train --model lstm --task copy --train-len 4:8 --steps 3000 --out runs/lstm\n"
           "  attnlab train --model lstm --hidden 256 --forget-bias 0 --seed 2 --out runs/fb0\n",
           model_names(), task_names());
}

/* The default final evaluation: up to twice the longest training length, in about 16
 * steps, never beyond max_len. */
static size_t default_eval_lengths(const config *c, size_t *out)
{
    size_t top = 2 * c->train_max < c->max_len ? 2 * c->train_max : c->max_len;
    size_t step = top / 16 ? top / 16 : 1, n = 0;
    for (size_t L = step; L <= top; L += step)
        out[n++] = L;
    return n;
}

/* ---- signals: stop cleanly, save, resume later ----------------------------------------- */

/* Set by SIGINT/SIGTERM: the training loop finishes its step, then the run is saved. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

/* Installs the handlers (without SA_RESTART: a wait() in compare returns at once). */
static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The exit status of a run stopped by signal sig: 128 + sig, as shells report it. */
static int stopped_status(void) { return 128 + (int)stop_signal; }

/* ---- the training log, kept whole in memory and written atomically ------------------------ */

/* The log lives in a memory stream; every checkpoint writes it whole to train_log.tsv, so
 * the log on disk always matches the last checkpoint, whatever stops the run. */
typedef struct run_log {
    FILE *f;
    char *buf;
    size_t len;
} run_log;

static int write_log(FILE *f, const void *ctx)
{
    const run_log *l = ctx;
    fflush(l->f);
    return fwrite(l->buf, 1, l->len, f) == l->len ? 0 : -1;
}

/* ---- attnlab train ---------------------------------------------------------------------- */

/* Everything a train command decided before training: kept so --resume can rebuild it. */
typedef struct train_job {
    config c;
    const model_ops *ops;
    size_t lens[MAX_LENGTHS], nl, samples;
    size_t cost_lens[MAX_LENGTHS], ncost;
    int trace_src[4096];
    size_t trace_len;
    char dir[AFILE_PATH_MAX / 2];
    int quiet;
} train_job;

/* The periodic checkpoint: weights, Adam's moments, the three random streams. */
typedef struct ckpt_ctx {
    model *m;
    rng_streams *r;
    const char *dir;
    run_log *log;
} ckpt_ctx;

static int save_resumable(void *p, size_t step, const optim *o)
{
    ckpt_ctx *c = p;
    char path[AFILE_PATH_MAX], err[ERR_MAX];
    ckpt_train_state ts = {.step = step, .n = o->n, .m = o->m, .v = o->v};
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        ts.rng[k] = gsl_rng_state(c->r->s[k]);
        ts.rng_size[k] = gsl_rng_size(c->r->s[k]);
    }
    afile_join(path, sizeof path, c->dir, "checkpoint.ckpt");
    if (ckpt_save(path, c->m, &ts, err, sizeof err) != 0) {
        run_error("%s", err);
        return -1;
    }
    return write_file(c->dir, "train_log.tsv", write_log, c->log);
}

/* Parses a train command line into j (everything but resuming). Returns 0, 1 after
 * --help, or EXIT_USAGE after printing the error. */
static int parse_train(int argc, char **argv, train_job *j, const char **resume)
{
    static const int allowed[] = {OPT_TRAIN_LEN, OPT_OUT,   OPT_EVAL_LENGTHS, OPT_SAMPLES,
                                  OPT_QUIET,     OPT_TRACE, OPT_COST_LENGTHS, OPT_RESUME, 0};
    args a;
    int rc = parse_args(argc, argv, 1, allowed, help_train, &a);
    if (rc)
        return rc;
    *resume = extra(&a, OPT_RESUME);
    j->quiet = extra(&a, OPT_QUIET) != NULL;
    if (*resume) {
        /* a resumed run takes every setting from its directory */
        for (int k = OPT_FIRST_EXTRA; k < OPT_END_EXTRA; k++)
            if (a.extra[k - OPT_FIRST_EXTRA] && k != OPT_RESUME && k != OPT_QUIET)
                return usage_error("--resume DIR takes its settings from DIR (accepted with "
                                   "it: --quiet, --threads)");
        for (size_t k = 0; k < a.n_given; k++)
            if (strcmp(config_fields[a.given_order[k]].name, "threads") != 0)
                return usage_error("--resume DIR takes its settings from DIR; --%s is not "
                                   "accepted with it (accepted: --quiet, --threads)",
                                   config_fields[a.given_order[k]].name);
        const int ti = (int)(config_find("threads") - config_fields);
        size_t th = 1;
        if (a.config[ti] && parse_size("threads", a.config[ti], 1, 256, &th))
            return EXIT_USAGE;
        buildinfo_set_threads(th);
        return 0;
    }
    if ((rc = build_config(&a, &j->c, &j->ops, NULL)))
        return rc;
    j->samples = 256;
    if (extra(&a, OPT_EVAL_LENGTHS)) {
        if (parse_lengths("eval-lengths", extra(&a, OPT_EVAL_LENGTHS), j->c.max_len, j->lens,
                          &j->nl))
            return EXIT_USAGE;
    } else {
        j->nl = default_eval_lengths(&j->c, j->lens);
    }
    if (extra(&a, OPT_SAMPLES) &&
        parse_size("samples", extra(&a, OPT_SAMPLES), 1, 1000000, &j->samples))
        return EXIT_USAGE;
    if (extra(&a, OPT_COST_LENGTHS) &&
        parse_lengths("cost-lengths", extra(&a, OPT_COST_LENGTHS), j->c.max_len, j->cost_lens,
                      &j->ncost))
        return EXIT_USAGE;
    char err[ERR_MAX];
    if (extra(&a, OPT_TRACE) &&
        task_parse_tokens(extra(&a, OPT_TRACE), j->trace_src, j->c.max_len, j->c.symbols,
                          &j->trace_len, err, sizeof err) != 0)
        return usage_error("--trace: %s", err);
    if (extra(&a, OPT_OUT))
        snprintf(j->dir, sizeof j->dir, "%s", extra(&a, OPT_OUT));
    else
        snprintf(j->dir, sizeof j->dir, "results/%s-%s-s%lu", j->c.model, j->c.task,
                 j->c.seed);
    apply_threads(&j->c);
    return 0;
}

/* The arguments of a train command, one per line (args.txt), so --resume can parse the
 * very same command again. */
typedef struct args_text {
    int argc;
    char **argv;
} args_text;

static int write_args(FILE *f, const void *ctx)
{
    const args_text *t = ctx;
    for (int i = 1; i < t->argc; i++)
        fprintf(f, "%s\n", t->argv[i]);
    return ferror(f) ? -1 : 0;
}

/* Reads DIR/args.txt back into an argument vector (argv[0] = "train"); the strings live in
 * *text (free it). Returns the count, or -1. */
static int read_args(const char *dir, char ***argv_out, char **text)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "args.txt");
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t cap = 0;
    *text = NULL;
    ssize_t got = getdelim(text, &cap, '\0', f);
    fclose(f);
    if (got < 0)
        return -1;
    int n = 1;
    for (ssize_t i = 0; i < got; i++)
        n += (*text)[i] == '\n';
    char **v = calloc((size_t)n + 2, sizeof *v);
    if (!v)
        return -1;
    int k = 0;
    static char train_word[] = "train";
    v[k++] = train_word;
    for (char *p = *text, *nl; *p && k <= n; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        v[k++] = p;
    }
    v[k] = NULL;
    *argv_out = v;
    return k;
}

/* Copies the lines of the log at path whose step is at most `step` into log and returns
 * the seconds column of the last one (0 when none). */
static double restore_log(const char *path, size_t step, FILE *log)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    double seconds = 0;
    int first = 1;
    while (f && getline(&line, &cap, f) > 0) {
        if (first) { /* the header: already written */
            first = 0;
            continue;
        }
        unsigned long long s;
        double sec;
        if (sscanf(line, "%llu\t%lf", &s, &sec) != 2 || s > step)
            break;
        fputs(line, log);
        seconds = sec;
    }
    free(line);
    if (f)
        fclose(f);
    return seconds;
}

int cli_check_train_args(int argc, char **argv)
{
    static train_job j;
    const char *resume = NULL;
    memset(&j, 0, sizeof j);
    current_cmd = "attnlab train";
    int rc = parse_train(argc, argv, &j, &resume);
    return rc == 1 ? 0 : rc;
}

static int cmd_train(int argc, char **argv)
{
    static train_job j;
    memset(&j, 0, sizeof j);
    const char *resume = NULL;
    int rc = parse_train(argc, argv, &j, &resume);
    if (rc)
        return rc == 1 ? 0 : rc;
    char err[ERR_MAX], path[AFILE_PATH_MAX];
    char **rargv = NULL, *rtext = NULL;
    ckpt_train_state st = {0};
    model *m = NULL;
    if (resume) {
        /* rebuild the command from the directory, then continue from its checkpoint */
        const int quiet = j.quiet;
        int rargc = read_args(resume, &rargv, &rtext);
        if (rargc < 0)
            return run_error("--resume: %s holds no args.txt: not a run directory written by "
                             "attnlab train", resume);
        const char *again = NULL;
        rc = parse_train(rargc, rargv, &j, &again);
        if (rc || again) {
            free(rargv);
            free(rtext);
            return rc ? rc : run_error("--resume: %s/args.txt is not a train command", resume);
        }
        j.quiet = quiet;
        snprintf(j.dir, sizeof j.dir, "%s", resume);
        if (exists_in(j.dir, "eval.tsv")) {
            free(rargv);
            free(rtext);
            return run_error("--resume: the run in %s has already finished", j.dir);
        }
        afile_join(path, sizeof path, j.dir, "checkpoint.ckpt");
        m = ckpt_load(path, &st, err, sizeof err);
        if (!m) {
            free(rargv);
            free(rtext);
            return run_error("--resume: %s", err);
        }
        if (!st.m || strcmp(m->ops->name, j.c.model) != 0 || st.n != m->params.size) {
            m->ops->free(m);
            ckpt_train_state_free(&st);
            free(rargv);
            free(rtext);
            return run_error("--resume: %s holds no training state of this run", path);
        }
    }
    config *c = &j.c;
    const model_ops *ops = j.ops;
    if (afile_mkdirs(j.dir, err, sizeof err) != 0) {
        rc = run_error("--out: %s", err);
        goto out;
    }
    args_text at = {argc, argv};
    if (!resume && (write_file(j.dir, "args.txt", write_args, &at) != 0 ||
                    write_file(j.dir, "config.tsv", write_config, c) != 0)) {
        rc = EXIT_RUNTIME;
        goto out;
    }

    rng_streams r;
    optim o;
    size_t first = 1;
    memset(&o, 0, sizeof o);
    if (rng_open(&r, c->seed) != 0 || (!m && !(m = ops->alloc(c))) ||
        optim_alloc(&o, m->params.size, c->beta1, c->beta2, c->eps) != 0) {
        rc = run_error("out of memory building %s", c->model);
        goto done;
    }
    if (resume) {
        for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
            if (st.rng_size[k] != gsl_rng_size(r.s[k])) {
                rc = run_error("--resume: the random-number state in the checkpoint comes from "
                               "another platform (size %zu, here %zu)", st.rng_size[k],
                               gsl_rng_size(r.s[k]));
                goto done;
            }
            memcpy(gsl_rng_state(r.s[k]), st.rng[k], st.rng_size[k]);
        }
        memcpy(o.m, st.m, o.n * sizeof *o.m);
        memcpy(o.v, st.v, o.n * sizeof *o.v);
        o.t = st.step;
        first = st.step + 1;
    } else {
        ops->init(m, r.s[RNG_INIT]);
    }
    if (!j.quiet)
        fprintf(stderr, "%s: %zu parameters, task %s, lengths %zu..%zu, %zu steps of %zu%s\n",
                c->model, m->params.size, c->task, c->train_min, c->train_max, c->steps,
                c->batch, resume ? " (resumed)" : "");
    if (resume && !j.quiet)
        fprintf(stderr, "resuming %s after step %zu\n", j.dir, st.step);

    run_log log = {0};
    train_summary ts;
    log.f = open_memstream(&log.buf, &log.len);
    if (!log.f) {
        rc = run_error("out of memory");
        goto done;
    }
    train_log_header(log.f);
    ckpt_ctx cc = {m, &r, j.dir, &log};
    train_hooks hooks = {&stop_signal, c->checkpoint_every, save_resumable, &cc, 0};
    if (resume) {
        afile_join(path, sizeof path, j.dir, "train_log.tsv");
        hooks.seconds_offset = restore_log(path, st.step, log.f);
    }
    catch_stop_signals();
    train_progress progress = j.quiet ? TRAIN_QUIET : isatty(2) ? TRAIN_BAR : TRAIN_LINES;
    int tr = train_run(m, task_lookup(c->task), c, &r, &o, first, log.f, progress, &hooks, &ts,
                       err, sizeof err);
    if (tr == TRAIN_STOPPED) {
        /* save where we are, so --resume continues exactly from here */
        if (ts.steps >= first && save_resumable(&cc, ts.steps, &o) != 0) {
            rc = EXIT_RUNTIME;
        } else {
            fprintf(stderr, "%s: stopped by signal %d after step %zu; resume with: attnlab "
                    "train --resume %s\n", current_cmd, (int)stop_signal, ts.steps, j.dir);
            rc = stopped_status();
        }
        goto close_log;
    }
    if (tr == TRAIN_FAILED) {
        /* keep the log up to the last good step beside the last good checkpoint */
        write_file(j.dir, "train_log.tsv", write_log, &log);
        afile_join(path, sizeof path, j.dir, "checkpoint.ckpt");
        if (access(path, F_OK) == 0)
            rc = run_error("%s; the log and the last good checkpoint (%s) are kept", err,
                           path);
        else
            rc = run_error("%s; the log is kept in %s", err, j.dir);
        goto close_log;
    }
    if (write_file(j.dir, "train_log.tsv", write_log, &log) != 0) {
        rc = EXIT_RUNTIME;
        goto close_log;
    }
    afile_join(path, sizeof path, j.dir, "model.ckpt");
    if (ckpt_save(path, m, NULL, err, sizeof err) != 0) {
        rc = run_error("%s", err);
        goto close_log;
    }
    run_facts rf = {m, &ts};
    if (write_file(j.dir, "build.tsv", write_build, &rf) != 0) {
        rc = EXIT_RUNTIME;
        goto close_log;
    }
    if (j.trace_len) {
        char tdir[AFILE_PATH_MAX];
        afile_join(tdir, sizeof tdir, j.dir, "trace");
        if ((rc = write_trace(m, j.trace_src, j.trace_len, tdir, 0)) != 0)
            goto close_log;
    }
    if (j.ncost) {
        cost_out co = {m, j.cost_lens, j.ncost, r.s[RNG_EVAL], 0};
        if (write_file(j.dir, "cost.tsv", write_cost, &co) != 0) {
            rc = EXIT_RUNTIME;
            goto close_log;
        }
    }
    if (!j.quiet)
        fprintf(stderr, "trained in %.1f s; evaluating %zu lengths x %zu sequences\n",
                ts.seconds, j.nl, j.samples);
    /* eval.tsv is written last: its presence marks a finished run (compare resumes on it) */
    rc = evaluate(m, j.lens, j.nl, j.samples, c->seed, j.dir, !j.quiet);
    if (rc == 0 && !j.quiet)
        fprintf(stderr, "wrote %s/{config,build,train_log,eval,eval_positions}.tsv and "
                "%s/model.ckpt\n", j.dir, j.dir);
close_log:
    fclose(log.f);
    free(log.buf);
done:
    optim_free(&o);
    rng_close(&r);
out:
    if (m)
        m->ops->free(m);
    ckpt_train_state_free(&st);
    free(rargv);
    free(rtext);
    return rc;
}

/* ---- attnlab eval ---------------------------------------------------------------------- */

static void help_eval(void)
{
    printf(
        "Usage: attnlab eval --checkpoint FILE [--lengths SPEC] [--samples N] [--seed S]\n"
        "                    [--out DIR]\n"
        "       attnlab eval --checkpoint FILE --input FILE\n"
        "\n"
        "Evaluates a trained model by greedy decoding: at each length it draws fresh\n"
        "sequences (from an evaluation stream that training never uses), lets the model\n"
        "decode them feeding back its own predictions, and reports token accuracy,\n"
        "whole-sequence accuracy and the teacher-forced loss. With --out it also writes\n"
        "eval.tsv and eval_positions.tsv (accuracy at each output position).\n"
        "\n"
        "  --checkpoint FILE  a model.ckpt written by attnlab train\n"
        "  --lengths SPEC     A:B:STEP, A:B or A,B,C (default 4:64:4, capped at max_len)\n"
        "  --samples N        sequences per length (default 512)\n"
        "  --seed S           evaluation seed (default: the training seed)\n"
        "  --input FILE       one source sequence per line (symbols separated by spaces;\n"
        "                     '-' reads standard input): prints the task's target, the\n"
        "                     greedy prediction and the teacher-forced mean loss\n"
        "  --threads N        BLAS threads\n"
        "\n"
        "Examples:\n"
        "  attnlab eval --checkpoint runs/lstm/model.ckpt --lengths 4:64:4 --samples 512\n"
        "  echo '3 1 4 1 5 9 2 6' | attnlab eval --checkpoint runs/lstm/model.ckpt --input -\n");
}

/* Prints n tokens separated by spaces. */
static void print_tokens(FILE *f, const int *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, i ? " %d" : "%d", x[i]);
}

/* attnlab eval --input: one sequence per line. Malformed lines are reported with their
 * number and skipped; the status is 1 when any line was malformed. */
static int eval_input(model *m, const char *file)
{
    FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
    if (!in)
        return run_error("--input: cannot read %s: %s", file, strerror(errno));
    const task *t = task_lookup(m->cfg.task);
    const size_t Lmax = m->cfg.max_len, Tmax = t->target_len(Lmax);
    batch b;
    int *pred = malloc(Tmax * sizeof *pred);
    if (!pred || batch_alloc(&b, 1, Lmax, Tmax) != 0) {
        free(pred);
        if (in != stdin)
            fclose(in);
        return run_error("out of memory");
    }
    char *line = NULL, err[ERR_MAX];
    size_t cap = 0, lineno = 0, bad = 0;
    int rc = 0;
    while (getline(&line, &cap, in) != -1) {
        size_t Ts;
        lineno++;
        if (task_parse_tokens(line, b.src, Lmax, m->cfg.symbols, &Ts, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --input %s line %zu: %s\n", current_cmd, file, lineno, err);
            bad++;
            continue;
        }
        task_complete(t, &b, 1, Ts, m->cfg.symbols);
        if (m->ops->reserve(m, 1, Ts, b.Tt) != 0) {
            rc = run_error("out of memory");
            break;
        }
        m->ops->decode(m, b.src, 1, Ts, b.Tt, pred);
        double loss = m->ops->forward(m, &b, NULL);
        size_t ok = 0;
        for (size_t i = 0; i < b.Tt; i++)
            ok += pred[i] == b.tgt[i];
        printf("line %zu\n  source:    ", lineno);
        print_tokens(stdout, b.src, Ts);
        printf("\n  target:    ");
        print_tokens(stdout, b.tgt, b.Tt);
        printf("\n  predicted: ");
        print_tokens(stdout, pred, b.Tt);
        printf("   (%zu/%zu correct)\n  loss:      %.10g\n", ok, b.Tt, loss);
    }
    if (ferror(in))
        rc = run_error("--input: error reading %s", file);
    free(line);
    free(pred);
    batch_free(&b);
    if (in != stdin)
        fclose(in);
    if (rc == 0 && bad)
        rc = EXIT_RUNTIME;
    return rc;
}

static int cmd_eval(int argc, char **argv)
{
    static const int allowed[] = {OPT_CHECKPOINT, OPT_LENGTHS, OPT_SAMPLES, OPT_OUT,
                                  OPT_INPUT, 0};
    args a;
    int rc = parse_args(argc, argv, 1, allowed, help_eval, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    /* of the settings, only these two make sense for a trained model */
    for (size_t k = 0; k < a.n_given; k++) {
        const char *name = config_fields[a.given_order[k]].name;
        if (strcmp(name, "seed") != 0 && strcmp(name, "threads") != 0)
            return usage_error("--%s is a training setting; eval takes it from the "
                               "checkpoint (accepted here: --seed, --threads)", name);
    }
    const char *ck = extra(&a, OPT_CHECKPOINT);
    if (!ck)
        return usage_error("--checkpoint FILE is required");
    char err[ERR_MAX];
    size_t samples = 512;
    if (extra(&a, OPT_SAMPLES) &&
        parse_size("samples", extra(&a, OPT_SAMPLES), 1, 1000000, &samples))
        return EXIT_USAGE;
    config opt; /* parse --seed and --threads with the table's own rules */
    config_defaults(&opt);
    for (size_t k = 0; k < a.n_given; k++) {
        const int f = a.given_order[k];
        if (config_set(&opt, &config_fields[f], a.config[f], err, sizeof err) != 0)
            return usage_error("%s", err);
    }
    static size_t lens[MAX_LENGTHS];
    size_t nl = 0;
    if (extra(&a, OPT_LENGTHS)) {
        /* the model's max_len is checked by the evaluation once the model is loaded */
        if (parse_lengths("lengths", extra(&a, OPT_LENGTHS), 4096, lens, &nl))
            return EXIT_USAGE;
    }
    apply_threads(&opt);
    model *m = ckpt_load(ck, NULL, err, sizeof err);
    if (!m)
        return run_error("%s", err);
    const int seed_idx = (int)(config_find("seed") - config_fields);
    const unsigned long seed = a.config[seed_idx] ? opt.seed : m->cfg.seed;
    if (extra(&a, OPT_INPUT)) {
        rc = eval_input(m, extra(&a, OPT_INPUT));
    } else {
        if (nl == 0)
            for (size_t L = 4; L <= 64 && L <= m->cfg.max_len; L += 4)
                lens[nl++] = L;
        const char *dir = extra(&a, OPT_OUT);
        if (rc == 0 && dir && afile_mkdirs(dir, err, sizeof err) != 0)
            rc = run_error("--out: %s", err);
        if (rc == 0)
            rc = evaluate(m, lens, nl, samples, seed, dir, 1);
    }
    m->ops->free(m);
    return rc;
}

/* ---- attnlab gradcheck ----------------------------------------------------------------- */

static void help_gradcheck(void)
{
    printf(
        "Usage: attnlab gradcheck --model NAME [--len N] [--stride N] [--seed S] [SETTINGS...]\n"
        "\n"
        "Checks the hand-written backward pass of a model: for every parameter tensor it\n"
        "compares the analytic gradient of the loss with fourth-order central differences\n"
        "(8(L(w+h) - L(w-h)) - (L(w+2h) - L(w-2h))) / 12h, h = %g, on a small random\n"
        "batch, and prints the largest relative error |a - n| / max(|a| + |n|, %g) of\n"
        "each tensor. The token inputs are discrete; their gradient is that of the\n"
        "embedding rows, checked with the rest.\n"
        "The last line is 'max relative error: X'; the status is 1 when X >= %g.\n"
        "\n"
        "The model is built small (sizes all different, so a transposed index cannot hide):\n"
        "symbols 5, embed 5, hidden 6, attn 7, d-model 8, heads 2, d-ff 12, layers 2,\n"
        "batch 2; any setting flag of 'attnlab train' overrides them.\n"
        "  --len N      source length of the batch (default 4; at most --max-len, which\n"
        "               gradcheck sets to 16)\n"
        "  --stride N   check every N-th entry of each tensor (default 1: all)\n"
        "\n"
        "Examples:\n"
        "  attnlab gradcheck --model lstm\n"
        "  attnlab gradcheck --model rnn_attention --cell lstm\n"
        "  attnlab gradcheck --model transformer --post-ln --pos learned\n",
        GRADCHECK_H, GRADCHECK_TINY, GRADCHECK_TOL);
}

/* The small sizes of a gradient check: the harness's here, the model's from its ops. */
static void gradcheck_sizes(config *c)
{
    c->symbols = 5;
    c->batch = 2;
    c->max_len = 16;
    c->train_min = 1;
    c->train_max = 16;
    model_lookup(c->model)->gradcheck_sizes(c);
}

static void print_tensor_error(void *ctx, const char *tensor, double err, size_t row,
                               size_t col)
{
    const arena *a = ctx;
    long k = arena_find(a, tensor);
    printf("%-28s (%4zu, %4zu)  %10.3e  at (%zu, %zu)%s\n", tensor, a->spec[k].rows,
           a->spec[k].cols, err, row, col, err < GRADCHECK_TOL ? "" : "  <-- FAIL");
}

static int cmd_gradcheck(int argc, char **argv)
{
    static const int allowed[] = {OPT_LEN, OPT_STRIDE, 0};
    args a;
    config c;
    const model_ops *ops;
    int rc = parse_args(argc, argv, 1, allowed, help_gradcheck, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = build_config(&a, &c, &ops, gradcheck_sizes)))
        return rc;
    size_t L = 4, stride = 1;
    if ((extra(&a, OPT_LEN) && parse_size("len", extra(&a, OPT_LEN), 1, c.max_len, &L)) ||
        (extra(&a, OPT_STRIDE) &&
         parse_size("stride", extra(&a, OPT_STRIDE), 1, 1000000, &stride)))
        return EXIT_USAGE;
    apply_threads(&c);
    const task *t = task_lookup(c.task);
    const size_t Tt = t->target_len(L);
    rng_streams r;
    batch b;
    model *m = NULL;
    if (rng_open(&r, c.seed) != 0 || batch_alloc(&b, c.batch, L, Tt) != 0 ||
        !(m = ops->alloc(&c)) || ops->reserve(m, c.batch, L, Tt) != 0) {
        if (m)
            ops->free(m);
        rng_close(&r);
        return run_error("out of memory");
    }
    ops->init(m, r.s[RNG_INIT]);
    task_fill(t, &b, c.batch, L, c.symbols, r.s[RNG_TRAIN]);
    printf("gradient check of %s: %zu parameters, batch %zu, source length %zu, task %s\n",
           c.model, m->params.size, c.batch, L, c.task);
    printf("%-28s %12s  %10s\n", "tensor", "shape", "max rel err");
    double worst = gradcheck_model(m, &b, stride, print_tensor_error, &m->params);
    printf("max relative error: %.3e\n", worst);
    rc = worst < GRADCHECK_TOL ? 0 : EXIT_RUNTIME;
    if (rc)
        fprintf(stderr, "%s: the gradient check failed (tolerance %g)\n", current_cmd,
                GRADCHECK_TOL);
    ops->free(m);
    batch_free(&b);
    rng_close(&r);
    return rc;
}

/* ---- attnlab attention ----------------------------------------------------------------- */

static void help_attention(void)
{
    printf(
        "Usage: attnlab attention --checkpoint FILE --input \"3 1 4 1 5 9 2 6\" [--out DIR]\n"
        "\n"
        "Decodes one source sequence greedily and prints what the model looked at:\n"
        "  rnn_attention  the alignment α (target steps x source steps): row t is the\n"
        "                 softmax over the encoder states when emitting output t\n"
        "  transformer    every layer and head of encoder self-attention, masked decoder\n"
        "                 self-attention and encoder-decoder (cross) attention\n"
        "  lstm           no attention: its gates (input, forget, output) and cell state\n"
        "                 over the steps, the LSTM's own way of choosing what to keep\n"
        "Each matrix is also written as DIR/NAME.tsv (default DIR: trace/ beside the\n"
        "checkpoint), labelled with tokens, ready for plots/attention.gp.\n"
        "\n"
        "Example:\n"
        "  attnlab attention --checkpoint runs/attn/model.ckpt --input \"3 1 4 1 5 9 2 6\"\n");
}

/* State of one trace: labels of each axis and where the files go. */
typedef struct trace_ctx {
    const char *dir;
    char (*src)[16];    /* (Ts) source tokens */
    char (*tgt)[16];    /* (Tt) decoded tokens */
    char (*tgt_in)[16]; /* (Tt) decoder inputs: BOS then the decoded tokens */
    char (*index)[16];  /* (max) 0, 1, 2, ... */
    size_t n_index;
    int print;          /* also print each matrix as a table */
    int failed;
} trace_ctx;

static char (*axis_labels(trace_ctx *c, const char *kind, size_t n))[16]
{
    if (strcmp(kind, "src") == 0)
        return c->src;
    if (strcmp(kind, "tgt") == 0)
        return c->tgt;
    if (strcmp(kind, "tgt_in") == 0)
        return c->tgt_in;
    return n <= c->n_index ? c->index : NULL;
}

static int trace_to_files(void *ctx, const char *name, const gsl_matrix *m, const char *rows,
                          const char *cols)
{
    trace_ctx *c = ctx;
    char(*rl)[16] = axis_labels(c, rows, m->size1);
    char(*cl)[16] = axis_labels(c, cols, m->size2);
    if (!rl || !cl)
        return -1;
    if (c->print)
        report_print_matrix(stdout, name, m, (const char(*)[16])rl, (const char(*)[16])cl);
    char path[AFILE_PATH_MAX], file[128], err[ERR_MAX], corner[64];
    snprintf(file, sizeof file, "%s.tsv", name);
    snprintf(corner, sizeof corner, "%s\\%s", rows, cols);
    afile af;
    if (afile_join(path, sizeof path, c->dir, file) != 0 ||
        afile_open(&af, path, err, sizeof err) != 0) {
        c->failed = 1;
        return -1;
    }
    report_write_matrix(af.f, m, (const char(*)[16])rl, (const char(*)[16])cl, corner);
    if (afile_commit(&af, err, sizeof err) != 0) {
        run_error("%s", err);
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* Decodes src (Ts symbols) with m, then sends every traced matrix to dir/NAME.tsv,
 * printing each as a table when print is set. Returns 0, or the exit status after
 * printing the error. */
static int write_trace(model *m, const int *src, size_t Ts, const char *dir, int print)
{
    const task *t = task_lookup(m->cfg.task);
    const size_t Tt = t->target_len(Ts);
    char err[ERR_MAX];
    if (!m->ops->trace)
        return run_error("model %s records no trace", m->ops->name);
    /* labels for every axis a model may use: tokens, units (up to the widest state),
     * or steps of an encoder and a decoder */
    size_t nidx = m->cfg.hidden > m->cfg.d_model ? m->cfg.hidden : m->cfg.d_model;
    nidx = (nidx > Ts + Tt ? nidx : Ts + Tt) + 2;
    int *out = malloc(Tt * sizeof *out);
    trace_ctx c = {0};
    c.src = malloc(Ts * sizeof *c.src);
    c.tgt = malloc(Tt * sizeof *c.tgt);
    c.tgt_in = malloc(Tt * sizeof *c.tgt_in);
    c.index = malloc(nidx * sizeof *c.index);
    c.n_index = nidx;
    c.dir = dir;
    c.print = print;
    int rc = 0;
    if (!out || !c.src || !c.tgt || !c.tgt_in || !c.index) {
        rc = run_error("out of memory");
        goto done;
    }
    if (afile_mkdirs(dir, err, sizeof err) != 0) {
        rc = run_error("--out: %s", err);
        goto done;
    }
    if (m->ops->reserve(m, 1, Ts, Tt) != 0) {
        rc = run_error("out of memory");
        goto done;
    }
    /* decode first so the target axis can be labelled with what the model emitted */
    m->ops->decode(m, src, 1, Ts, Tt, out);
    for (size_t i = 0; i < Ts; i++)
        snprintf(c.src[i], 16, "%d", src[i]);
    for (size_t i = 0; i < Tt; i++) {
        snprintf(c.tgt[i], 16, "%d", out[i]);
        if (i == 0)
            snprintf(c.tgt_in[i], 16, "BOS");
        else
            snprintf(c.tgt_in[i], 16, "%d", out[i - 1]);
    }
    for (size_t i = 0; i < nidx; i++)
        snprintf(c.index[i], 16, "%u", (unsigned)i);
    if (print) {
        printf("source:  ");
        print_tokens(stdout, src, Ts);
        printf("\ndecoded: ");
        print_tokens(stdout, out, Tt);
        printf("\n\n");
    }
    if (m->ops->trace(m, src, Ts, Tt, out, trace_to_files, &c) != 0 || c.failed)
        rc = run_error("could not write the trace into %s", dir);
done:
    free(out);
    free(c.src);
    free(c.tgt);
    free(c.tgt_in);
    free(c.index);
    return rc;
}

static int cmd_attention(int argc, char **argv)
{
    static const int allowed[] = {OPT_CHECKPOINT, OPT_INPUT, OPT_OUT, 0};
    args a;
    int rc = parse_args(argc, argv, 0, allowed, help_attention, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    const char *ck = extra(&a, OPT_CHECKPOINT), *input = extra(&a, OPT_INPUT);
    if (!ck)
        return usage_error("--checkpoint FILE is required");
    if (!input)
        return usage_error("--input \"SYMBOLS\" is required (e.g. --input \"3 1 4 1 5\")");
    char err[ERR_MAX], dir[AFILE_PATH_MAX / 2];
    model *m = ckpt_load(ck, NULL, err, sizeof err);
    if (!m)
        return run_error("%s", err);
    int *src = malloc(m->cfg.max_len * sizeof *src);
    size_t Ts = 0;
    if (!src) {
        rc = run_error("out of memory");
    } else if (task_parse_tokens(input, src, m->cfg.max_len, m->cfg.symbols, &Ts, err,
                                 sizeof err) != 0) {
        rc = usage_error("--input: %s", err);
    } else {
        if (extra(&a, OPT_OUT)) {
            snprintf(dir, sizeof dir, "%s", extra(&a, OPT_OUT));
        } else {
            const char *slash = strrchr(ck, '/');
            snprintf(dir, sizeof dir, "%.*s/trace", slash ? (int)(slash - ck) : 1,
                     slash ? ck : ".");
        }
        rc = write_trace(m, src, Ts, dir, 1);
        if (rc == 0)
            fprintf(stderr, "wrote the matrices above as %s/NAME.tsv\n", dir);
    }
    free(src);
    m->ops->free(m);
    return rc;
}

/* ---- attnlab compare and attnlab report --------------------------------------------------- */

/* The experiment presets. Steps and lengths were chosen from measured runs (see
 * docs/compare.md): quick shows the effect in about five minutes on two cores; full is
 * the publication run. */
typedef struct preset {
    const char *name;
    size_t seeds, steps, train_min, train_max, samples;
    const char *eval_lengths, *cost_lengths;
    const char *about;
} preset;

static const preset presets[] = {
    {"smoke", 1, 40, 4, 8, 32, "2:16:2", "4,8,16",
     "under a minute: every model, every figure, nothing learned (a test of the pipeline)"},
    {"quick", 3, 3000, 4, 16, 128, "2:40:2", "8,16,32,64",
     "about 4 minutes on 2 cores: the LSTM already falls off, attention holds"},
    {"full", 5, 4000, 4, 32, 256, "2:96:2", "8,16,32,64,128",
     "about an hour on 2 cores: 5 seeds, lengths to 96, the figures of docs/figures/"},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

static void help_compare(void)
{
    printf(
        "Usage: attnlab compare [--preset smoke|quick|full] [--task NAME] [--models LIST]\n"
        "                       [--seeds N] [--train-len MIN:MAX] [--eval-lengths SPEC]\n"
        "                       [--steps N] [--batch N] [--samples N] [--jobs N]\n"
        "                       [--out DIR] [--print-jobs]\n"
        "\n"
        "Trains every model x seed as an independent run (the same training sequences for\n"
        "every model of a seed: same seed, steps and batch size; each model with its own\n"
        "documented optimiser recipe), evaluates each at every length inside the training\n"
        "range and beyond it, then merges the runs (attnlab report): tables, figures and\n"
        "DIR/report.html. Runs go in parallel processes. A rerun with the same arguments\n"
        "skips the runs already finished, so an interrupted compare resumes.\n"
        "\n"
        "Presets (flags given after override them):\n");
    for (size_t k = 0; k < N_PRESETS; k++)
        printf("  %-6s %zu seed(s), %zu steps, train %zu:%zu, eval %s: %s\n", presets[k].name,
               presets[k].seeds, presets[k].steps, presets[k].train_min, presets[k].train_max,
               presets[k].eval_lengths, presets[k].about);
    printf(
        "\n"
        "The default preset is quick. Sequences per evaluation length (--samples): smoke 32,\n"
        "quick 128, full 256.\n"
        "\n"
        "  --models LIST   comma-separated (default: lstm,rnn_attention,transformer)\n"
        "  --seeds N       seeds 1..N\n"
        "  --jobs N        runs at once (default: the number of cores)\n"
        "  --out DIR       comparison directory (default results/compare)\n"
        "  --task, --steps, --batch, --symbols, --threads, --log-every: as for train (the\n"
        "                  same for every model; sizes stay each model's own)\n"
        "  --print-jobs    print one self-contained 'attnlab train' command per run and\n"
        "                  stop, to spread the runs with GNU parallel or job arrays; then\n"
        "                  merge them with 'attnlab report DIR'\n"
        "\n"
        "Examples:\n"
        "  attnlab compare --preset quick --out results/demo\n"
        "  attnlab compare --preset full --jobs 2 --out results/full\n"
        "  attnlab compare --preset full --print-jobs --out /shared/full | parallel -j 16\n"
        "  attnlab report /shared/full\n");
}

static void help_report(void)
{
    printf(
        "Usage: attnlab report [--out DIR] PATH...\n"
        "\n"
        "Merges finished runs and draws the figures. Each PATH is a comparison directory\n"
        "(its runs/ are taken) or a run directory written by 'attnlab train'. Writes into\n"
        "DIR (default: the first PATH when it is a comparison directory) the tables\n"
        "accuracy, positions, curves, cost and summary (.tsv), the figures (figures/, by\n"
        "gnuplot with plots/NAME.gp) and report.html, one self-contained page.\n"
        "\n"
        "Examples:\n"
        "  attnlab report results/demo\n"
        "  attnlab report --out results/merged runs/lstm-s1 runs/lstm-s2 runs/tfm-s1\n");
}

/* Is dir/name an existing file? */
static int exists_in(const char *dir, const char *name)
{
    char path[AFILE_PATH_MAX];
    return afile_join(path, sizeof path, dir, name) == 0 && access(path, F_OK) == 0;
}

/* Appends the run directories under path (a comparison directory's runs/, or path itself
 * when it is a run) to list. Returns the number added. */
static size_t collect_runs(const char *path, char (*list)[AFILE_PATH_MAX], size_t max,
                           size_t have)
{
    char runs[AFILE_PATH_MAX];
    size_t added = 0;
    if (afile_join(runs, sizeof runs, path, "runs") == 0 && access(runs, F_OK) == 0) {
        DIR *d = opendir(runs);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL && have + added < max) {
            if (e->d_name[0] == '.')
                continue;
            char *slot = list[have + added];
            if (afile_join(slot, AFILE_PATH_MAX, runs, e->d_name) == 0 &&
                exists_in(slot, "config.tsv"))
                added++;
        }
        if (d)
            closedir(d);
        /* readdir order is arbitrary: sort so tables come out the same every time */
        qsort(list + have, added, sizeof *list, (int (*)(const void *, const void *))strcmp);
    } else if (have < max) {
        snprintf(list[have], AFILE_PATH_MAX, "%s", path);
        added = 1;
    }
    return added;
}

static int cmd_report(int argc, char **argv)
{
    /* the paths are operands mixed with one flag: a plain loop reads them in order */
    int k = 1;
    const char *out = NULL;
    const char *paths[256];
    size_t np = 0;
    for (; k < argc; k++) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            help_report();
            return 0;
        }
        if (strcmp(argv[k], "--out") == 0 || strncmp(argv[k], "--out=", 6) == 0) {
            if (argv[k][5] == '=')
                out = argv[k] + 6;
            else if (k + 1 < argc)
                out = argv[++k];
            else
                return usage_error("flag '--out' needs a value");
            continue;
        }
        if (argv[k][0] == '-')
            return usage_error("unknown flag '%s' (accepted: --out DIR, --help)", argv[k]);
        if (np == 256)
            return usage_error("more than 256 paths");
        paths[np++] = argv[k];
    }
    if (np == 0)
        return usage_error("no PATH given (a comparison directory or run directories)");
    static char list[4096][AFILE_PATH_MAX];
    size_t nr = 0;
    for (size_t i = 0; i < np; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode))
            return run_error("%s is not a directory", paths[i]);
        nr += collect_runs(paths[i], list, 4096, nr);
    }
    if (!out) {
        if (!exists_in(paths[0], "runs"))
            return usage_error("--out DIR is required when merging run directories");
        out = paths[0];
    }
    const char *ptr[4096];
    for (size_t i = 0; i < nr; i++)
        ptr[i] = list[i];
    char err[ERR_MAX];
    if (summary_report(ptr, nr, out, stdout, err, sizeof err) != 0)
        return run_error("%s", err);
    return 0;
}

/* One run of a comparison. */
typedef struct job {
    char model[CONFIG_STR_MAX];
    unsigned long seed;
    char dir[AFILE_PATH_MAX];
    char *argv[40];     /* the self-contained train command */
    char buf[40][256];  /* storage of its arguments */
    int argc;
    pid_t pid;
    double start, seconds;
    int state;          /* 0 waiting, 1 running, 2 done, 3 failed, 4 skipped, 5 stopped */
} job;

__attribute__((format(printf, 2, 3))) static void job_arg(job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->buf[j->argc], sizeof j->buf[0], fmt, ap);
    va_end(ap);
    j->argv[j->argc] = j->buf[j->argc];
    j->argc++;
    j->argv[j->argc] = NULL;
}

/* Prints a job as a shell command (arguments quoted when they need it). */
static void print_job(FILE *f, const job *j)
{
    for (int i = 0; i < j->argc; i++) {
        const char *s = j->argv[i];
        int plain = *s != '\0';
        for (const char *p = s; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,=",
                        *p))
                plain = 0;
        fprintf(f, plain ? "%s%s" : "%s'%s'", i ? " " : "", s);
    }
    fputc('\n', f);
}

/* The command text of a job, as written to DIR/command.txt and compared on resume. */
static int write_command(FILE *f, const void *ctx)
{
    const job *j = ctx;
    for (int i = 1; i < j->argc; i++) /* without the program path: it may move */
        fprintf(f, "%s%s", i > 1 ? " " : "", j->argv[i]);
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

/* Did an earlier invocation start job j with the same command (DIR/command.txt)? */
static int same_command(const job *j)
{
    char path[AFILE_PATH_MAX], *text = NULL, want[8192];
    size_t cap = 0;
    if (afile_join(path, sizeof path, j->dir, "command.txt") != 0)
        return 0;
    FILE *f = fopen(path, "r"), *mem = fmemopen(want, sizeof want, "w");
    if (!f || !mem) {
        if (f)
            fclose(f);
        if (mem)
            fclose(mem);
        return 0;
    }
    write_command(mem, j);
    fclose(mem);
    ssize_t got = getline(&text, &cap, f);
    fclose(f);
    int same = got > 0 && strcmp(text, want) == 0;
    free(text);
    return same;
}

/* Has job j finished in an earlier invocation with the same command? */
static int job_finished(const job *j) { return exists_in(j->dir, "eval.tsv") && same_command(j); }

/* Was job j stopped part-way with its state saved? Then it resumes instead of restarting. */
static int job_resumable(const job *j)
{
    return !exists_in(j->dir, "eval.tsv") && exists_in(j->dir, "checkpoint.ckpt") &&
           exists_in(j->dir, "args.txt") && same_command(j);
}

typedef struct manifest_ctx {
    const config *c;
    const char *preset, *models, *eval_lengths, *command;
    size_t seeds, jobs, samples;
    const job *jobs_list;
    size_t njobs;
    double wall;
    const char *started, *finished;
} manifest_ctx;

static int write_manifest(FILE *f, const void *p)
{
    const manifest_ctx *m = p;
    fprintf(f, "key\tvalue\n");
    fprintf(f, "command\t%s\n", m->command);
    buildinfo_write_tsv(f);
    fprintf(f, "preset\t%s\nmodels\t%s\nseeds\t%zu\ntask\t%s\ntrain_len\t%zu:%zu\n", m->preset,
            m->models, m->seeds, m->c->task, m->c->train_min, m->c->train_max);
    fprintf(f, "steps\t%zu\nbatch\t%zu\neval_lengths\t%s\nsamples\t%zu\njobs\t%zu\n",
            m->c->steps, m->c->batch, m->eval_lengths, m->samples, m->jobs);
    fprintf(f, "started\t%s\nfinished\t%s\nwall_seconds\t%.1f\n", m->started, m->finished,
            m->wall);
    for (size_t k = 0; k < m->njobs; k++) {
        const job *j = &m->jobs_list[k];
        fprintf(f, "wall_seconds.%s.s%lu\t", j->model, j->seed);
        if (j->state == 4)
            fprintf(f, "finished earlier\n");
        else if (j->state == 2)
            fprintf(f, "%.1f\n", j->seconds);
        else if (j->state == 5)
            fprintf(f, "stopped after %.1f s (resumable)\n", j->seconds);
        else if (j->state == 3)
            fprintf(f, "failed\n");
        else
            fprintf(f, "not started\n");
    }
    return ferror(f) ? -1 : 0;
}

static void now_text(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int cmd_compare(int argc, char **argv)
{
    static const int allowed[] = {OPT_PRESET,  OPT_MODELS,  OPT_SEEDS, OPT_TRAIN_LEN,
                                  OPT_EVAL_LENGTHS, OPT_SAMPLES, OPT_JOBS, OPT_OUT,
                                  OPT_PRINT_JOBS, 0};
    args a;
    int rc = parse_args(argc, argv, 1, allowed, help_compare, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    /* the settings a comparison may change; sizes stay each model's canonical ones */
    static const char *const ok_fields[] = {"task", "steps", "batch", "symbols", "threads",
                                            "log_every", NULL};
    for (size_t k = 0; k < a.n_given; k++) {
        const char *name = config_fields[a.given_order[k]].name;
        size_t i = 0;
        while (ok_fields[i] && strcmp(ok_fields[i], name) != 0)
            i++;
        if (!ok_fields[i])
            return usage_error("--%s: compare trains each model with its own defaults "
                               "(accepted here: --task, --steps, --batch, --symbols, "
                               "--threads, --log-every; train one model with attnlab "
                               "train to change its sizes)", name);
    }
    const preset *ps = &presets[1];
    if (extra(&a, OPT_PRESET)) {
        ps = NULL;
        for (size_t k = 0; k < N_PRESETS; k++)
            if (strcmp(presets[k].name, extra(&a, OPT_PRESET)) == 0)
                ps = &presets[k];
        if (!ps)
            return usage_error("--preset: unknown preset '%s' (accepted: smoke, quick, full)",
                               extra(&a, OPT_PRESET));
    }
    config c;
    char err[ERR_MAX];
    config_defaults(&c);
    c.steps = ps->steps;
    c.train_min = ps->train_min;
    c.train_max = ps->train_max;
    for (size_t k = 0; k < a.n_given; k++) {
        const int f = a.given_order[k];
        if (config_set(&c, &config_fields[f], a.config[f], err, sizeof err) != 0)
            return usage_error("%s", err);
    }
    if (!task_lookup(c.task))
        return usage_error("--task: unknown task '%s' (accepted: %s)", c.task, task_names());
    if (extra(&a, OPT_TRAIN_LEN)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", extra(&a, OPT_TRAIN_LEN));
        char *colon = strchr(buf, ':');
        const char *hi = colon ? colon + 1 : buf;
        if (colon)
            *colon = '\0';
        if (parse_size("train-len", buf, 1, c.max_len, &c.train_min) ||
            parse_size("train-len", hi, 1, c.max_len, &c.train_max))
            return EXIT_USAGE;
    }
    if (config_check(&c, err, sizeof err) != 0)
        return usage_error("%s", err);
    size_t seeds = ps->seeds, samples = ps->samples, jobs = (size_t)sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs < 1)
        jobs = 1;
    if ((extra(&a, OPT_SEEDS) && parse_size("seeds", extra(&a, OPT_SEEDS), 1, 1000, &seeds)) ||
        (extra(&a, OPT_SAMPLES) &&
         parse_size("samples", extra(&a, OPT_SAMPLES), 1, 1000000, &samples)) ||
        (extra(&a, OPT_JOBS) && parse_size("jobs", extra(&a, OPT_JOBS), 1, 256, &jobs)))
        return EXIT_USAGE;
    const char *eval_spec = extra(&a, OPT_EVAL_LENGTHS) ? extra(&a, OPT_EVAL_LENGTHS)
                                                        : ps->eval_lengths;
    static size_t lens[MAX_LENGTHS];
    size_t nl;
    if (parse_lengths("eval-lengths", eval_spec, c.max_len, lens, &nl))
        return EXIT_USAGE;
    char models[256];
    snprintf(models, sizeof models, "%s",
             extra(&a, OPT_MODELS) ? extra(&a, OPT_MODELS) : "lstm,rnn_attention,transformer");
    const model_ops *list[16];
    size_t nm = 0;
    {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", models);
        for (char *tok = strtok(buf, ","); tok && nm < 16; tok = strtok(NULL, ",")) {
            if (!(list[nm] = model_lookup(tok)))
                return usage_error("--models: unknown model '%s' (accepted: %s)", tok,
                                   model_names());
            nm++;
        }
        if (nm == 0)
            return usage_error("--models: no model given (accepted: %s)", model_names());
    }
    const char *out = extra(&a, OPT_OUT) ? extra(&a, OPT_OUT) : "results/compare";
    char exe[AFILE_PATH_MAX];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el <= 0)
        return run_error("cannot find the program's own path (/proc/self/exe)");
    exe[el] = '\0';

    /* the trace example: the first digits of pi, cut to the training range */
    static const int pi[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
    char trace[128] = "";
    size_t tl = c.train_max < 12 ? c.train_max : 12;
    for (size_t i = 0; i < tl; i++) {
        char w[8];
        snprintf(w, sizeof w, i ? " %d" : "%d", pi[i] % (int)c.symbols);
        strcat(trace, w);
    }
    const size_t njobs = nm * seeds;
    job *jl = calloc(njobs, sizeof *jl);
    if (!jl)
        return run_error("out of memory");
    for (size_t s = 0; s < seeds; s++)
        for (size_t m = 0; m < nm; m++) {
            job *j = &jl[s * nm + m];
            snprintf(j->model, sizeof j->model, "%s", list[m]->name);
            j->seed = s + 1;
            snprintf(j->dir, sizeof j->dir, "%s/runs/%s-s%lu", out, j->model, j->seed);
            job_arg(j, "%s", exe);
            job_arg(j, "train");
            job_arg(j, "--model=%s", j->model);
            job_arg(j, "--task=%s", c.task);
            job_arg(j, "--symbols=%zu", c.symbols);
            job_arg(j, "--train-len=%zu:%zu", c.train_min, c.train_max);
            job_arg(j, "--steps=%zu", c.steps);
            job_arg(j, "--batch=%zu", c.batch);
            job_arg(j, "--seed=%lu", j->seed);
            job_arg(j, "--threads=%zu", c.threads);
            job_arg(j, "--log-every=%zu", c.log_every);
            job_arg(j, "--eval-lengths=%s", eval_spec);
            job_arg(j, "--samples=%zu", samples);
            job_arg(j, "--cost-lengths=%s", ps->cost_lengths);
            job_arg(j, "--trace=%s", trace);
            job_arg(j, "--out=%s", j->dir);
            job_arg(j, "--quiet");
        }
    if (extra(&a, OPT_PRINT_JOBS)) {
        for (size_t k = 0; k < njobs; k++)
            print_job(stdout, &jl[k]);
        free(jl);
        return 0;
    }
    if (afile_mkdirs(out, err, sizeof err) != 0) {
        free(jl);
        return run_error("--out: %s", err);
    }
    char started[32], finished[32];
    now_text(started, sizeof started);
    const double t0 = train_now();
    size_t todo = 0, running = 0, done_count = 0, failed = 0;
    for (size_t k = 0; k < njobs; k++) {
        if (job_finished(&jl[k])) {
            jl[k].state = 4;
            fprintf(stderr, "%s %s seed %lu: finished earlier, skipped\n", current_cmd,
                    jl[k].model, jl[k].seed);
        } else {
            todo++;
        }
    }
    fprintf(stderr, "%s: %zu runs (%zu models x %zu seeds), %zu to do, %zu at a time, "
            "into %s\n", current_cmd, njobs, nm, seeds, todo, jobs, out);
    size_t next = 0;
    int forwarded = 0;
    catch_stop_signals();
    while (done_count < todo) {
        /* a stop signal: no new run starts; the running ones get the signal (when it was
         * sent to this process alone), save their state and exit; then this one does */
        if (stop_signal && !forwarded) {
            for (size_t k = 0; k < njobs; k++)
                if (jl[k].state == 1)
                    kill(jl[k].pid, (int)stop_signal);
            forwarded = 1;
        }
        while (!stop_signal && running < jobs && next < njobs) {
            job *j = &jl[next++];
            if (j->state == 4)
                continue;
            const int resume = job_resumable(j);
            if (!resume && (afile_mkdirs(j->dir, err, sizeof err) != 0 ||
                            write_file(j->dir, "command.txt", write_command, j) != 0)) {
                j->state = 3;
                failed++;
                done_count++;
                continue;
            }
            if (resume)
                fprintf(stderr, "%s %s seed %lu: resuming from its checkpoint\n", current_cmd,
                        j->model, j->seed);
            fflush(NULL);
            j->pid = fork();
            if (j->pid == 0) {
                static char train_w[] = "train", resume_w[] = "--resume", quiet_w[] = "--quiet";
                char *again[] = {j->argv[0], train_w, resume_w, j->dir, quiet_w, NULL};
                execv(exe, resume ? again : j->argv);
                _exit(127);
            }
            if (j->pid < 0) {
                j->state = 3;
                failed++;
                done_count++;
                continue;
            }
            j->state = 1;
            j->start = train_now();
            running++;
        }
        if (running == 0)
            break;
        int st;
        pid_t pid = wait(&st);
        if (pid < 0) {
            if (errno == EINTR)
                continue; /* a signal: handled at the top of the loop */
            break;
        }
        for (size_t k = 0; k < njobs; k++)
            if (jl[k].state == 1 && jl[k].pid == pid) {
                job *j = &jl[k];
                j->seconds = train_now() - j->start;
                const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                j->state = code == 0 ? 2 : 3;
                running--;
                done_count++;
                if (code == 130 || code == 143) {
                    j->state = 5; /* stopped with its state saved: resumable */
                    fprintf(stderr, "[%zu/%zu] %s seed %lu: stopped after %.1f s, state "
                            "saved\n", done_count, todo, j->model, j->seed, j->seconds);
                    continue;
                }
                failed += j->state == 3;
                fprintf(stderr, "[%zu/%zu] %s seed %lu: %s in %.1f s\n", done_count, todo,
                        j->model, j->seed, j->state == 2 ? "done" : "FAILED", j->seconds);
            }
        if (stop_signal && running == 0)
            break;
    }
    now_text(finished, sizeof finished);
    char command[2048] = "attnlab";
    for (int i = 0; i < argc; i++) {
        strncat(command, " ", sizeof command - strlen(command) - 1);
        strncat(command, argv[i], sizeof command - strlen(command) - 1);
    }
    manifest_ctx mc = {&c,   ps->name, models, eval_spec, command,      seeds,   jobs,
                       samples, jl,    njobs,  train_now() - t0, started, finished};
    if (write_file(out, "manifest.tsv", write_manifest, &mc) != 0) {
        free(jl);
        return EXIT_RUNTIME;
    }
    free(jl);
    if (stop_signal) {
        fprintf(stderr, "%s: stopped by signal %d; the finished runs are kept and the "
                "stopped ones saved their state: run the same command again to resume\n",
                current_cmd, (int)stop_signal);
        return stopped_status();
    }
    static char runs[4096][AFILE_PATH_MAX];
    size_t nr = collect_runs(out, runs, 4096, 0);
    const char *ptr[4096];
    for (size_t i = 0; i < nr; i++)
        ptr[i] = runs[i];
    if (summary_report(ptr, nr, out, stdout, err, sizeof err) != 0)
        return run_error("%s", err);
    if (failed)
        return run_error("%zu of %zu runs failed (their messages are above); rerun the same "
                         "command to retry them", failed, njobs);
    return 0;
}

/* ---- attnlab bench ---------------------------------------------------------------------- */

static void help_bench(void)
{
    printf(
        "Usage: attnlab bench [--models LIST] [--lengths SPEC] [--reps N] [--threads N]\n"
        "                     [--out DIR] [SETTINGS...]\n"
        "\n"
        "Measures, for each model at its canonical sizes and each length (copy task,\n"
        "batch 32 unless --batch says otherwise):\n"
        "  train seq/s    full training steps (forward, backward, clipping, Adam)\n"
        "  decode seq/s   greedy decoding of the whole batch\n"
        "  GFLOP/s        analytic FLOPs of a step / median step time, and its ratio to\n"
        "                 the DGEMM rate of this machine measured in the same run\n"
        "  peak MiB       the peak resident memory of the process that measured it\n"
        "Each figure is the median of --reps repetitions (default 5, each at least 0.25 s)\n"
        "after warm-up, with the spread (minimum-maximum). Each (model, length) runs in a\n"
        "process of its own. With --out, writes DIR/bench.tsv.\n"
        "\n"
        "  --models LIST   comma-separated (default: every model)\n"
        "  --lengths SPEC  A:B:STEP, A:B or A,B,C (default 16,32,64,128)\n"
        "\n"
        "Examples:\n"
        "  attnlab bench\n"
        "  attnlab bench --models transformer --lengths 32,128 --reps 9 --out results/bench\n");
}

typedef struct bench_out {
    const bench_result *r;
    size_t n;
    double dgemm;
} bench_out;

static int write_bench(FILE *f, const void *ctx)
{
    const bench_out *b = ctx;
    return bench_write_tsv(f, b->r, b->n, b->dgemm);
}

static int cmd_bench(int argc, char **argv)
{
    static const int allowed[] = {OPT_MODELS, OPT_LENGTHS, OPT_REPS, OPT_OUT, 0};
    args a;
    int rc = parse_args(argc, argv, 1, allowed, help_bench, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    const model_ops *list[16];
    size_t nm = 0;
    if (extra(&a, OPT_MODELS)) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", extra(&a, OPT_MODELS));
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (!(list[nm] = model_lookup(tok)))
                return usage_error("--models: unknown model '%s' (accepted: %s)", tok,
                                   model_names());
            if (++nm == 16)
                break;
        }
        if (nm == 0)
            return usage_error("--models: no model given (accepted: %s)", model_names());
    } else {
        for (; model_registry[nm] && nm < 16; nm++)
            list[nm] = model_registry[nm];
    }
    static size_t lens[MAX_LENGTHS];
    size_t nl = 4, reps = 5;
    lens[0] = 16, lens[1] = 32, lens[2] = 64, lens[3] = 128;
    if (extra(&a, OPT_LENGTHS) &&
        parse_lengths("lengths", extra(&a, OPT_LENGTHS), 4096, lens, &nl))
        return EXIT_USAGE;
    if (extra(&a, OPT_REPS) && parse_size("reps", extra(&a, OPT_REPS), 1, 1000, &reps))
        return EXIT_USAGE;
    const int model_idx = (int)(config_find("model") - config_fields);
    if (a.config[model_idx])
        return usage_error("--model: bench takes --models LIST");
    bench_result *res = calloc(nm * nl, sizeof *res);
    if (!res)
        return run_error("out of memory");
    size_t done = 0;
    config c;
    char err[ERR_MAX];
    for (size_t i = 0; i < nm && rc == 0; i++) {
        /* each model at its own canonical sizes, then the flags given */
        config_defaults(&c);
        list[i]->defaults(&c);
        snprintf(c.model, sizeof c.model, "%s", list[i]->name);
        for (size_t k = 0; k < a.n_given; k++) {
            const int f = a.given_order[k];
            if (config_set(&c, &config_fields[f], a.config[f], err, sizeof err) != 0) {
                rc = usage_error("%s", err);
                break;
            }
        }
        if (rc == 0 && list[i]->check(&c, err, sizeof err) != 0)
            rc = usage_error("%s", err);
        apply_threads(&c);
        for (size_t k = 0; k < nl && rc == 0; k++) {
            if (lens[k] > c.max_len) {
                rc = usage_error("--lengths: %zu is above --max-len %zu", lens[k], c.max_len);
                break;
            }
            fprintf(stderr, "measuring %s at length %zu ...\n", list[i]->name, lens[k]);
            if (bench_model(list[i], &c, lens[k], reps, &res[done], err, sizeof err) != 0)
                rc = run_error("%s", err);
            else
                done++;
        }
    }
    if (rc == 0) {
        const double dgemm = bench_dgemm(256, reps);
        printf("attnlab %s, BLAS threads %zu, batch %zu, %zu repetitions\n",
               buildinfo_version(), c.threads, c.batch, reps);
        bench_print(stdout, res, done, dgemm);
        bench_out bo = {res, done, dgemm};
        const char *dir = extra(&a, OPT_OUT);
        if (dir && afile_mkdirs(dir, err, sizeof err) != 0)
            rc = run_error("--out: %s", err);
        else if (dir && write_file(dir, "bench.tsv", write_bench, &bo) != 0)
            rc = EXIT_RUNTIME;
    }
    free(res);
    return rc;
}

/* ---- help and version ------------------------------------------------------------------ */

static void help_main(void)
{
    printf(
        "attnlab — why attention replaced the LSTM, in C you can read next to the equations\n"
        "\n"
        "Usage: attnlab COMMAND [FLAGS]   (attnlab COMMAND --help for each)\n"
        "\n"
        "Commands:\n"
        "  train       train one model on one task; writes a run directory\n"
        "  eval        greedy-decoding accuracy of a checkpoint per length, or on your input\n"
        "  gradcheck   compare a model's backward pass with finite differences\n"
        "  attention   print and save the attention maps (or LSTM gates) of one example\n"
        "  compare     train every model x seed on one task, then tables and figures\n"
        "  report      merge finished runs: tables, figures, report.html\n"
        "  bench       training and decoding speed, FLOP rate and memory of each model\n"
        "  help        this text; 'attnlab help models' and 'attnlab help tasks'\n"
        "  --version   version, compiler flags and the BLAS in use\n"
        "\n"
        "Models: %s\nTasks:  %s\n"
        "\n"
        "Examples:\n"
        "  attnlab train --model lstm --task copy --train-len 4:8 --steps 3000 --out runs/lstm\n"
        "  attnlab eval --checkpoint runs/lstm/model.ckpt --lengths 4:32:4\n"
        "  attnlab gradcheck --model lstm\n"
        "\n"
        "Exit status: 0 success, 1 runtime error, 2 usage error.\n",
        model_names(), task_names());
}

static int cmd_help(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "models") == 0) {
        for (size_t k = 0; model_registry[k]; k++)
            printf("%-14s %s\n", model_registry[k]->name, model_registry[k]->about);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "tasks") == 0) {
        const char *names = task_names();
        char buf[256];
        snprintf(buf, sizeof buf, "%s", names);
        for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", "))
            printf("%-14s %s\n", tok, task_lookup(tok)->about);
        return 0;
    }
    if (argc >= 2) {
        const char *topic = argv[1];
        if (strcmp(topic, "train") == 0)
            help_train();
        else if (strcmp(topic, "eval") == 0)
            help_eval();
        else if (strcmp(topic, "gradcheck") == 0)
            help_gradcheck();
        else if (strcmp(topic, "attention") == 0)
            help_attention();
        else if (strcmp(topic, "bench") == 0)
            help_bench();
        else if (strcmp(topic, "compare") == 0)
            help_compare();
        else if (strcmp(topic, "report") == 0)
            help_report();
        else
            return usage_error("no help on '%s' (accepted: train, eval, gradcheck, attention, "
                               "compare, report, bench, models, tasks)", topic);
        return 0;
    }
    help_main();
    return 0;
}

static int cmd_version(void)
{
    char path[1024];
    const char *blas = buildinfo_blas(path, sizeof path);
    printf("attnlab %s\n", buildinfo_version());
    printf("compiler: %s\n", buildinfo_compiler());
    printf("flags:    %s\n", buildinfo_cflags());
    printf("BLAS:     %s%s%s%s\n", blas, path[0] ? " (" : "", path, path[0] ? ")" : "");
    return 0;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"train", cmd_train},         {"eval", cmd_eval},   {"gradcheck", cmd_gradcheck},
    {"attention", cmd_attention}, {"compare", cmd_compare}, {"report", cmd_report},
    {"bench", cmd_bench},         {"help", cmd_help},
};

int cli_main(int argc, char **argv)
{
    static char name[64];
    /* one BLAS thread unless --threads says otherwise: runs side by side beat threads */
    buildinfo_set_threads(1);
    /* a model's report of bad input becomes a runtime error, never an abort */
    model_catch_errors();
    if (argc < 2) {
        help_main();
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0)
        return cmd_version();
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        help_main();
        return 0;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (strcmp(cmd, commands[k].name) == 0) {
            snprintf(name, sizeof name, "attnlab %s", cmd);
            current_cmd = name;
            return commands[k].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "attnlab: unknown command '%s' (accepted: train, eval, gradcheck, "
            "attention, compare, report, bench, help, --version)\nTry 'attnlab --help'.\n", cmd);
    return EXIT_USAGE;
}
