/* cmd_bench.c — attnlab bench: the command around the measurements of bench.c.
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
#include "args.h"
#include "cmd.h"
#include "cmd_files.h"
#include "layerbench_cmd.h"
#include "../core/config.h"
#include "../core/model.h"

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
        "process of its own. With --out, writes DIR/bench.tsv and DIR/manifest.tsv (the\n"
        "command and the build: commit, compiler, BLAS and its kernel).\n"
        "\n"
        "  --models LIST   comma-separated (default: every model)\n"
        "  --lengths SPEC  A:B:STEP, A:B or A,B,C (default 16,32,64,128)\n"
        "\n"
        "Examples:\n"
        "  attnlab bench\n"
        "  attnlab bench --models %s --lengths 32,128 --reps 9 --out results/bench\n",
        model_registry[0]->name);
    layerbench_cmd_help();
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

/* What a bench command line asks for (parse_bench). */
typedef struct bench_request {
    args_line a;
    size_t nm;                       /* models, in the order of --models */
    const model_ops *ops[ARGS_MAX_MODELS];
    config c[ARGS_MAX_MODELS];       /* each at its canonical sizes, then the flags */
    size_t lens[ARGS_MAX_LENGTHS];
    size_t nl, reps;
} bench_request;

/* Reads and checks bench's command line into *q: --models, --lengths, --reps, the
 * refused --model, then each model's configuration and every length against its
 * --max-len, so that a bad line stops before anything is measured. Returns 0,
 * ARGS_HELP_SHOWN, or the exit status after the message. */
static int parse_bench(int argc, char **argv, bench_request *q)
{
    static const args_flag allowed[] = {ARGS_MODELS, ARGS_LENGTHS, ARGS_REPS, ARGS_OUT, 0};
    int rc = args_parse(argc, argv, 1, allowed, cmd_bench_help, &q->a);
    if (rc)
        return rc;
    const model_ops *list[ARGS_MAX_MODELS];
    q->nm = 0;
    if (args_models(args_get(&q->a, ARGS_MODELS), list, &q->nm))
        return ARGS_EXIT_USAGE;
    q->nl = 4;
    q->reps = 5;
    q->lens[0] = 16, q->lens[1] = 32, q->lens[2] = 64, q->lens[3] = 128;
    if (args_get(&q->a, ARGS_LENGTHS) &&
        args_lengths("lengths", args_get(&q->a, ARGS_LENGTHS), 4096, q->lens, &q->nl))
        return ARGS_EXIT_USAGE;
    if (args_count(&q->a, ARGS_REPS, 1, 1000, &q->reps))
        return ARGS_EXIT_USAGE;
    if (args_setting(&q->a, "model"))
        return args_usage_error("--model: bench takes --models LIST");
    for (size_t i = 0; i < q->nm; i++) {
        const args_plan plan = {.ops = list[i], .no_train_range = 1};
        if ((rc = args_config(&q->a, &plan, &q->c[i], &q->ops[i])) != 0)
            return rc;
        for (size_t k = 0; k < q->nl; k++)
            if (q->lens[k] > q->c[i].max_len)
                return args_usage_error("--lengths: %zu is above --max-len %zu", q->lens[k],
                                        q->c[i].max_len);
    }
    return 0;
}

int cmd_bench_check(int argc, char **argv)
{
    if (layerbench_cmd_wanted(argc, argv)) /* one layer at a time: layerbench_cmd.c */
        return layerbench_cmd_run(argc, argv, 1, cmd_bench_help);
    static bench_request q;
    return args_exit(parse_bench(argc, argv, &q));
}

int cmd_bench(int argc, char **argv)
{
    if (layerbench_cmd_wanted(argc, argv))
        return layerbench_cmd_run(argc, argv, 0, cmd_bench_help);
    static bench_request q;
    int rc = parse_bench(argc, argv, &q);
    if (rc)
        return args_exit(rc);
    const args_line *const a = &q.a;
    const size_t nm = q.nm, nl = q.nl, reps = q.reps;
    const size_t *const lens = q.lens;
    /* --out is claimed (made and locked) before the first measurement, not after it */
    const char *dir = args_get(a, ARGS_OUT);
    runlock lock = {-1};
    if (dir && (rc = cmd_claim_out(&lock, dir, 0, "")) != 0)
        return rc;
    bench_result *res = calloc(nm * nl, sizeof *res);
    if (!res) {
        runlock_release(&lock);
        return args_run_error("out of memory");
    }
    size_t done = 0;
    char err[ARGS_ERR_MAX];
    for (size_t i = 0; i < nm && rc == 0; i++) {
        buildinfo_set_threads(q.c[i].threads);
        for (size_t k = 0; k < nl && rc == 0; k++) {
            fprintf(stderr, "measuring %s at length %zu ...\n", q.ops[i]->name, lens[k]);
            if (bench_model(q.ops[i], &q.c[i], lens[k], reps, &res[done], err, sizeof err) != 0)
                rc = args_run_error("%s", err);
            else
                done++;
        }
    }
    if (rc == 0) {
        const config *c = &q.c[nm - 1];
        const double dgemm = bench_dgemm(256, reps);
        printf("attnlab %s, BLAS threads %zu, batch %zu, %zu repetitions\n",
               buildinfo_version(), c->threads, c->batch, reps);
        bench_print(stdout, res, done, dgemm);
        bench_out bo = {res, done, dgemm};
        if (dir && (cmd_write_file(dir, "bench.tsv", write_bench, &bo) != 0 ||
                    cmd_write_manifest(dir, argc, argv) != 0))
            rc = ARGS_EXIT_RUNTIME;
    }
    runlock_release(&lock);
    free(res);
    return rc;
}
