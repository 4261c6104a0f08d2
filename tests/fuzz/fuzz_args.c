/* fuzz_args.c — libFuzzer harness for the command line of every command: train, eval,
 * compare, report, bench, attention, gradcheck, and the args.txt that train --resume
 * reads back. Each line must be accepted or refused with one usage message (status 2),
 * never crash; nothing is trained, written or started.
 *
 * Input. The first byte picks the command: 't' train, 'e' eval, 'c' compare, 'r' report,
 * 'b' bench, 'a' attention, 'g' gradcheck, 'f' an args.txt file; any other byte picks
 * entry (byte % 8) of the table below. The rest is split at NUL bytes into the
 * arguments of the command (at most FUZZ_ARGS_MAX), or, for 'f', is the file itself.
 *
 * How each command is parsed without running it:
 *   train      cli_check_train_args, the parse-only entry of cmd_train.
 *   compare    cmd_compare itself with --print-jobs first: it parses, builds the job list
 *              and prints it, and returns before any directory or process is made
 *              (--print-jobs comes first so no flag can take it as its value).
 *   report     cmd_report itself, each argument that is not a flag placed under
 *              /dev/null/ so no path names a directory: every flag is read, and the
 *              command ends at its first stat, before anything is merged or written.
 *   args.txt   cmd_train --resume DIR, where DIR (made here, empty but for args.txt)
 *              holds no checkpoint.ckpt: read_args and parse_train read the file, and the
 *              command ends at the missing checkpoint, status 1, before any write.
 *   eval, attention, bench, gradcheck have no parse-only entry and run the model, a
 *              checkpoint or the benchmark as soon as their flags are read, so the
 *              functions below make, in the same order, the same calls their commands
 *              make (common/cmd_inspect.c, common/bench_cmd.c) and stop where the work
 *              starts. They must follow those commands when they change.
 * Standard output (the help texts, compare's job list) goes to /dev/null meanwhile.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/cli.h"
#include "../../common/cli_args.h"
#include "../../common/cli_cmd.h"
#include "../../common/config.h"
#include "../../common/model.h"
#include "../../common/task.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ARGS_MAX 512 /* arguments taken from one input (above report's 256 paths) */
#define FUZZ_ARGS_SKIP (-1) /* the harness itself could not run the input (memory, /tmp) */

/* ---- the commands without a parse-only entry ---------------------------------------- */

/* cmd_eval up to ckpt_load: the flags, the settings it refuses, --samples, --seed and
 * --threads, --lengths. */
static int fuzz_args_eval(int argc, char **argv)
{
    static const args_flag allowed[] = {ARGS_CHECKPOINT, ARGS_LENGTHS, ARGS_SAMPLES,
                                        ARGS_OUT,        ARGS_INPUT,   0};
    args_line a;
    int rc = args_parse(argc, argv, 1, allowed, cmd_eval_help, &a);
    if (rc)
        return args_exit(rc);
    for (size_t k = 0; k < a.n_given; k++) {
        const char *name = config_fields[a.given[k]].name;
        if (strcmp(name, "seed") != 0 && strcmp(name, "threads") != 0)
            return args_usage_error("--%s is a training setting", name);
    }
    if (!args_get(&a, ARGS_CHECKPOINT))
        return args_usage_error("--checkpoint FILE is required");
    size_t samples = 512;
    if (args_count(&a, ARGS_SAMPLES, 1, 1000000, &samples))
        return ARGS_EXIT_USAGE;
    config opt;
    const model_ops *none;
    const args_plan shared = {.shared = 1};
    if ((rc = args_config(&a, &shared, &opt, &none)))
        return rc;
    static size_t lens[ARGS_MAX_LENGTHS];
    size_t nl = 0;
    if (args_get(&a, ARGS_LENGTHS) &&
        args_lengths("lengths", args_get(&a, ARGS_LENGTHS), 4096, lens, &nl))
        return ARGS_EXIT_USAGE;
    return 0;
}

/* cmd_attention up to ckpt_load, then its parse of --input as a model of the generic
 * defaults (max_len, symbols) would see it. */
static int fuzz_args_attention(int argc, char **argv)
{
    static const args_flag allowed[] = {ARGS_CHECKPOINT, ARGS_INPUT, ARGS_OUT, 0};
    args_line a;
    int rc = args_parse(argc, argv, 0, allowed, cmd_attention_help, &a);
    if (rc)
        return args_exit(rc);
    const char *input = args_get(&a, ARGS_INPUT);
    if (!args_get(&a, ARGS_CHECKPOINT))
        return args_usage_error("--checkpoint FILE is required");
    if (!input)
        return args_usage_error("--input \"SYMBOLS\" is required");
    config c;
    config_defaults(&c);
    int *src = malloc(c.max_len * sizeof *src);
    size_t Ts = 0;
    char err[ARGS_ERR_MAX];
    if (!src)
        return FUZZ_ARGS_SKIP;
    if (task_parse_tokens(input, src, c.max_len, c.symbols, &Ts, err, sizeof err) != 0)
        rc = args_usage_error("--input: %s", err);
    else if (Ts == 0 || Ts > c.max_len)
        abort(); /* a parse that succeeded gives 1 to max_len symbols ... */
    else
        for (size_t i = 0; i < Ts; i++)
            if (src[i] < 0 || (size_t)src[i] >= c.symbols)
                abort(); /* ... each one of the vocabulary */
    free(src);
    return rc;
}

/* The sizes cmd_gradcheck puts between the model's defaults and the flags (its
 * gradcheck_sizes). */
static void fuzz_args_gradcheck_sizes(config *c, const model_ops *ops, const void *ctx)
{
    (void)ctx;
    c->symbols = 5;
    c->batch = 2;
    c->max_len = 16;
    c->train_min = 1;
    c->train_max = 16;
    ops->gradcheck_sizes(c);
}

/* cmd_gradcheck up to rng_open: the flags, the configuration, --len and --stride. */
static int fuzz_args_gradcheck(int argc, char **argv)
{
    static const args_flag allowed[] = {ARGS_LEN, ARGS_STRIDE, 0};
    args_line a;
    config c;
    const model_ops *ops;
    int rc = args_parse(argc, argv, 1, allowed, cmd_gradcheck_help, &a);
    if (rc)
        return args_exit(rc);
    const args_plan plan = {.overrides = fuzz_args_gradcheck_sizes};
    if ((rc = args_config(&a, &plan, &c, &ops)))
        return rc;
    size_t L = 4, stride = 1;
    if (args_count(&a, ARGS_LEN, 1, c.max_len, &L) ||
        args_count(&a, ARGS_STRIDE, 1, 1000000, &stride))
        return ARGS_EXIT_USAGE;
    return 0;
}

/* cmd_bench up to bench_model: --models, --lengths, --reps, the refused --model, then
 * each model's configuration and every length against its --max-len. */
static int fuzz_args_bench(int argc, char **argv)
{
    static const args_flag allowed[] = {ARGS_MODELS, ARGS_LENGTHS, ARGS_REPS, ARGS_OUT, 0};
    args_line a;
    int rc = args_parse(argc, argv, 1, allowed, cmd_bench_help, &a);
    if (rc)
        return args_exit(rc);
    const model_ops *list[ARGS_MAX_MODELS];
    size_t nm = 0;
    if (args_models(args_get(&a, ARGS_MODELS), list, &nm))
        return ARGS_EXIT_USAGE;
    static size_t lens[ARGS_MAX_LENGTHS];
    size_t nl = 4, reps = 5;
    lens[0] = 16, lens[1] = 32, lens[2] = 64, lens[3] = 128;
    if (args_get(&a, ARGS_LENGTHS) &&
        args_lengths("lengths", args_get(&a, ARGS_LENGTHS), 4096, lens, &nl))
        return ARGS_EXIT_USAGE;
    if (args_count(&a, ARGS_REPS, 1, 1000, &reps))
        return ARGS_EXIT_USAGE;
    if (args_setting(&a, "model"))
        return args_usage_error("--model: bench takes --models LIST");
    if (nm == 0 || nm > ARGS_MAX_MODELS)
        abort(); /* args_models accepted a list: 1 to ARGS_MAX_MODELS models */
    for (size_t i = 0; i < nm; i++) {
        config c;
        const model_ops *ops;
        const args_plan plan = {.ops = list[i], .no_train_range = 1};
        if ((rc = args_config(&a, &plan, &c, &ops)) != 0)
            return rc;
        for (size_t k = 0; k < nl; k++)
            if (lens[k] > c.max_len)
                return args_usage_error("--lengths: %zu is above --max-len %zu", lens[k],
                                        c.max_len);
    }
    return 0;
}

/* ---- the commands run as themselves --------------------------------------------------- */

/* cmd_compare with --print-jobs first (see the design above). */
static int fuzz_args_compare(int argc, char **argv)
{
    static char print_jobs[] = "--print-jobs";
    char **v = malloc(((size_t)argc + 2) * sizeof *v);
    if (!v)
        return FUZZ_ARGS_SKIP;
    v[0] = argv[0];
    v[1] = print_jobs;
    memcpy(v + 2, argv + 1, (size_t)argc * sizeof *v); /* argv[1..argc-1] and the NULL */
    int rc = cmd_compare(argc + 1, v);
    free(v);
    return rc;
}

/* cmd_report with every operand under /dev/null/, which no path can resolve through:
 * stat fails on each, so the command never reaches the merge. */
static int fuzz_args_report(int argc, char **argv)
{
    static const char prefix[] = "/dev/null/";
    char **v = calloc((size_t)argc + 1, sizeof *v);
    int rc = FUZZ_ARGS_SKIP;
    if (!v)
        return FUZZ_ARGS_SKIP;
    v[0] = argv[0];
    int k = 1;
    for (; k < argc; k++) {
        if (argv[k][0] == '-') {
            v[k] = argv[k];
            continue;
        }
        v[k] = malloc(sizeof prefix + strlen(argv[k]));
        if (!v[k])
            goto done;
        strcpy(v[k], prefix);
        strcat(v[k], argv[k]);
    }
    rc = cmd_report(argc, v); /* 1 (no operand is a directory), 2, or 0 after --help */
done:
    for (int i = 1; i < k; i++)
        if (v[i] != argv[i])
            free(v[i]);
    free(v);
    return rc;
}

/* The directory holding the args.txt of 'f' inputs (one per process, removed at exit). */
static char fuzz_args_dir[256];
static char fuzz_args_file[300];

static void fuzz_args_remove_dir(void)
{
    unlink(fuzz_args_file);
    rmdir(fuzz_args_dir);
}

/* cmd_train --resume DIR with text (n bytes) as DIR/args.txt. */
static int fuzz_args_resume(const uint8_t *text, size_t n)
{
    if (!fuzz_args_dir[0]) {
        snprintf(fuzz_args_dir, sizeof fuzz_args_dir, "%s/attnlab-fuzz-args-XXXXXX",
                 fuzz_scratch_dir());
        if (!mkdtemp(fuzz_args_dir)) {
            fuzz_args_dir[0] = '\0';
            return FUZZ_ARGS_SKIP;
        }
        snprintf(fuzz_args_file, sizeof fuzz_args_file, "%s/args.txt", fuzz_args_dir);
        atexit(fuzz_args_remove_dir);
    }
    FILE *f = fopen(fuzz_args_file, "wb");
    if (!f)
        return FUZZ_ARGS_SKIP;
    fwrite(text, 1, n, f);
    fclose(f);
    static char train[] = "train", resume[] = "--resume";
    char *v[] = {train, resume, fuzz_args_dir, NULL};
    return cmd_train(3, v); /* no checkpoint.ckpt beside it: 1, or 2 for args.txt */
}

/* ---- the input -------------------------------------------------------------------------- */

typedef int (*fuzz_args_command)(int argc, char **argv);

/* The commands in the order byte % 8 picks them; 'f' (args.txt) is the last. */
static const struct {
    char key;
    const char *name;
    fuzz_args_command parse; /* NULL: the args.txt of --resume */
    unsigned statuses;       /* bit s set: status s is a right answer */
} fuzz_args_commands[] = {
    /* parsing alone: valid or --help (0), or a usage error (2) */
    {'t', "train", cli_check_train_args, 1u << 0 | 1u << 2},
    {'e', "eval", fuzz_args_eval, 1u << 0 | 1u << 2},
    {'c', "compare", fuzz_args_compare, 1u << 0 | 1u << 2},
    /* ends at a path that is not a directory (1), or --help (0), or a usage error (2) */
    {'r', "report", fuzz_args_report, 1u << 0 | 1u << 1 | 1u << 2},
    {'b', "bench", fuzz_args_bench, 1u << 0 | 1u << 2},
    {'a', "attention", fuzz_args_attention, 1u << 0 | 1u << 2},
    {'g', "gradcheck", fuzz_args_gradcheck, 1u << 0 | 1u << 2},
    /* ends at the missing checkpoint.ckpt (1; also --help in args.txt), or 2 */
    {'f', "train", NULL, 1u << 1 | 1u << 2},
};
#define FUZZ_ARGS_N_COMMANDS (sizeof fuzz_args_commands / sizeof fuzz_args_commands[0])

/* Runs the command picked by the first byte on the rest. Returns its status, and in
 * *statuses the ones it may give. */
static int fuzz_args_run(const uint8_t *data, size_t size, unsigned *statuses)
{
    size_t pick = data[0] % FUZZ_ARGS_N_COMMANDS;
    for (size_t k = 0; k < FUZZ_ARGS_N_COMMANDS; k++)
        if (data[0] == (uint8_t)fuzz_args_commands[k].key)
            pick = k;
    char name[64];
    snprintf(name, sizeof name, "attnlab %s", fuzz_args_commands[pick].name);
    args_set_command(name);
    *statuses = fuzz_args_commands[pick].statuses;
    data++, size--;
    if (!fuzz_args_commands[pick].parse)
        return fuzz_args_resume(data, size);

    char *copy = malloc(size + 1), *argv[FUZZ_ARGS_MAX + 2];
    if (!copy)
        return FUZZ_ARGS_SKIP;
    memcpy(copy, data, size);
    copy[size] = '\0';
    int argc = 0;
    static char word[16];
    snprintf(word, sizeof word, "%s", fuzz_args_commands[pick].name);
    argv[argc++] = word;
    for (size_t i = 0; size > 0 && i <= size && argc <= FUZZ_ARGS_MAX;) {
        argv[argc++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    argv[argc] = NULL;
    const int rc = fuzz_args_commands[pick].parse(argc, argv);
    free(copy);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* the help texts and compare's job list: printed, but not onto the terminal */
    fflush(stdout);
    const int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, STDOUT_FILENO);
    unsigned statuses = 0;
    const int rc = fuzz_args_run(data, size, &statuses);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    if (null >= 0)
        close(null);
    if (rc != FUZZ_ARGS_SKIP && (rc < 0 || rc > 2 || !(statuses >> rc & 1u)))
        abort(); /* a status the command does not promise for a command line */
    return 0;
}
