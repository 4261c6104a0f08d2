/* bench_cmd.c — attnlab bench: the command around the measurements of bench.c.
 *
 * Design. Each model is configured as train would configure it (its canonical sizes,
 * then the setting flags), but by args_config with that model fixed, so --models picks
 * the models and --model is refused. The training range is not checked: bench measures
 * at its own --lengths, each checked against --max-len. The measurements themselves, each
 * in a child process, and the table and TSV they make are bench.c's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "buildinfo.h"
#include "cli_args.h"
#include "cli_cmd.h"
#include "config.h"
#include "model.h"

void cmd_bench_help(void)
{
    printf(
        "Usage: attnlab bench [--models LIST] [--lengths SPEC] [--reps N] [--threads N]\n"
        "                     [--out DIR] [SETTINGS...]\n"
        "\n"
        "Measures, for each model at its canonical sizes and each length (copy task,\n"
        "batch 32 unless --batch or --task says otherwise; a file task's sequences have\n"
        "the target length its examples of that source length have):\n"
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

int cmd_bench(int argc, char **argv)
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
    bench_result *res = calloc(nm * nl, sizeof *res);
    if (!res)
        return args_run_error("out of memory");
    size_t done = 0;
    config c;
    char err[ARGS_ERR_MAX];
    for (size_t i = 0; i < nm && rc == 0; i++) {
        /* each model at its own canonical sizes, then the flags given */
        const model_ops *ops;
        const args_plan plan = {.ops = list[i], .no_train_range = 1};
        if ((rc = args_config(&a, &plan, &c, &ops)) != 0)
            break;
        buildinfo_set_threads(c.threads);
        for (size_t k = 0; k < nl && rc == 0; k++) {
            if (lens[k] > c.max_len) {
                rc = args_usage_error("--lengths: %zu is above --max-len %zu", lens[k],
                                      c.max_len);
                break;
            }
            fprintf(stderr, "measuring %s at length %zu ...\n", ops->name, lens[k]);
            if (bench_model(ops, &c, lens[k], reps, &res[done], err, sizeof err) != 0)
                rc = args_run_error("%s", err);
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
        const char *dir = args_get(&a, ARGS_OUT);
        if (dir && afile_mkdirs(dir, err, sizeof err) != 0)
            rc = args_run_error("--out: %s", err);
        else if (dir && cmd_write_file(dir, "bench.tsv", write_bench, &bo) != 0)
            rc = ARGS_EXIT_RUNTIME;
    }
    free(res);
    return rc;
}
