/* layerbench_cmd.c — `attnlab bench --layers`: reads its line, sets the BLAS threads,
 * runs layerbench.c's measurements and writes DIR/layers.tsv, DIR/layers-crossover.tsv and
 * DIR/manifest.tsv (the command and the build that measured them).
 *
 * Design. bench hands its whole line over when it holds --layers, so this command takes
 * none of bench's model settings: only --widths, --lengths, --reps, --threads and --out.
 * The flags are GNU long options, read by getopt_long as every command's are; every value
 * is checked by the parsers of cli_args.c (lists by args_lengths, counts by args_size,
 * paths by args_path), so a bad line stops with one message and status 2 before anything
 * is measured or written. Threads are set with buildinfo_set_threads (OpenBLAS, found at
 * run time); a BLAS without a thread count is measured as it is, and a list asking for
 * more than one thread is then refused (status 1), saying why.
 */
#include "layerbench_cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildinfo.h"
#include "args.h"
#include "cmd.h"
#include "cmd_files.h"
#include "../core/layerbench.h"

#define MAX_WIDTH 4096   /* widths accepted by --widths */
#define MAX_LENGTH 8192  /* lengths accepted by --lengths (n² weights of 8 bytes) */
#define MAX_THREADS 256  /* as the setting --threads of the other commands */
#define MAX_LIST 64      /* items of one list */
#define MIN_SECONDS 0.1  /* each timed repetition lasts at least this long */
#define SEED 1UL         /* weights and inputs: the same every run */

int layerbench_cmd_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--layers") == 0)
            return 1;
        else if (strcmp(argv[i], "--") == 0)
            return 0;
    return 0;
}

void layerbench_cmd_help(void)
{
    printf(
        "\n"
        "Usage: attnlab bench --layers [--widths LIST] [--lengths LIST] [--reps N]\n"
        "                     [--threads LIST] [--out DIR]\n"
        "\n"
        "Measures one layer of each model on its own (Vaswani et al. 2017, Table 1): the\n"
        "recurrent layers and the self-attention sublayer the models register (listed\n"
        "below), each at width d on one sequence (batch 1) of n positions, forward and\n"
        "backward. For each layer, d and n: the analytic FLOPs, the time (median and min-max of --reps repetitions,\n"
        "each at least 0.1 s, after a warm-up), the sequential operations, and the path of\n"
        "the gradient, |u.dy_n/dx_1| (u = ones/sqrt(d)) and its ratio to the mean over all\n"
        "input rows. Then where each recurrent layer and the attention cross, from the\n"
        "FLOP formulas and from the measured times. With --out, writes DIR/layers.tsv,\n"
        "DIR/layers-crossover.tsv and DIR/manifest.tsv (the command and the build).\n"
        "\n"
        "  --widths LIST   d, A,B,C or A:B:STEP, each 1-%d (default 64,128,256)\n"
        "  --lengths LIST  n, each 1-%d (default 8,16,...,2048)\n"
        "  --reps N        repetitions, 1-1000 (default 5)\n"
        "  --threads LIST  BLAS threads, each 1-%d (default 1); e.g. 1,2 reports the\n"
        "                  speedup of each layer (OpenBLAS only)\n"
        "\n"
        "Example:\n"
        "  attnlab bench --layers --widths 64,128,256 --reps 5 --threads 1,2 --out results/layers\n"
        "\n"
        "Layers:\n",
        MAX_WIDTH, MAX_LENGTH, MAX_THREADS);
    for (size_t k = 0; layerbench_registry[k]; k++)
        printf("  %-6s %s\n", layerbench_registry[k]->name, layerbench_registry[k]->about);
}

/* What a --layers line asks for. */
typedef struct request {
    size_t widths[MAX_LIST], nw;
    size_t lengths[MAX_LIST], nl;
    size_t threads[MAX_LIST], nt;
    size_t reps;
    const char *out;
} request;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Parses the list text of --flag into v (at most MAX_LIST items, each in [1, max]), sorted,
 * no item twice. Returns 0 or the usage status after the message. */
static int list_of(const char *flag, const char *text, size_t max, size_t *v, size_t *n)
{
    static size_t all[ARGS_MAX_LENGTHS];
    size_t k = 0;
    if (args_lengths(flag, text, max, all, &k))
        return ARGS_EXIT_USAGE;
    if (k > MAX_LIST)
        return args_usage_error("--%s: %zu values, at most %d are accepted", flag, k,
                                MAX_LIST);
    qsort(all, k, sizeof *all, cmp_size);
    for (size_t i = 1; i < k; i++)
        if (all[i] == all[i - 1])
            return args_usage_error("--%s: %zu given twice (accepted: distinct values)", flag,
                                    all[i]);
    memcpy(v, all, k * sizeof *v);
    *n = k;
    return 0;
}

/* Reads the line into *q. Returns 0, ARGS_HELP_SHOWN, or the usage status. */
static int parse(int argc, char **argv, request *q, void (*help)(void))
{
    enum { O_LAYERS = 1, O_WIDTHS, O_LENGTHS, O_REPS, O_THREADS, O_OUT };
    static const struct option opts[] = {
        {"layers", no_argument, NULL, O_LAYERS},   {"widths", required_argument, NULL, O_WIDTHS},
        {"lengths", required_argument, NULL, O_LENGTHS},
        {"reps", required_argument, NULL, O_REPS}, {"threads", required_argument, NULL, O_THREADS},
        {"out", required_argument, NULL, O_OUT},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(q, 0, sizeof *q);
    q->nw = 3;
    q->widths[0] = 64, q->widths[1] = 128, q->widths[2] = 256;
    for (size_t n = 8; n <= 2048; n *= 2)
        q->lengths[q->nl++] = n;
    q->threads[0] = 1;
    q->nt = 1;
    q->reps = 5;
    opterr = 0;
    optind = 0; /* as args_parse: glibc then forgets any earlier parse */
    for (;;) {
        const int prev = optind;
        const int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1)
            break;
        int rc = 0;
        switch (c) {
        case O_LAYERS:
            break;
        case O_WIDTHS:
            rc = list_of("widths", optarg, MAX_WIDTH, q->widths, &q->nw);
            break;
        case O_LENGTHS:
            rc = list_of("lengths", optarg, MAX_LENGTH, q->lengths, &q->nl);
            break;
        case O_THREADS:
            rc = list_of("threads", optarg, MAX_THREADS, q->threads, &q->nt);
            break;
        case O_REPS:
            rc = args_size("reps", optarg, 1, 1000, &q->reps);
            break;
        case O_OUT:
            rc = args_path("out", optarg);
            q->out = optarg;
            break;
        case 'h':
            help();
            return ARGS_HELP_SHOWN;
        case ':':
            return args_usage_error("flag '%s' needs a value", argv[optind - 1]);
        default:
            return args_usage_error("--layers takes --widths, --lengths, --reps, --threads "
                                    "and --out only, not '%s'",
                                    argv[optind - 1 >= prev ? optind - 1 : prev]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return args_usage_error("unexpected argument '%s'", argv[optind]);
    return 0;
}

typedef struct rows {
    const layerbench_row *r;
    size_t n;
} rows;

static int write_rows(FILE *f, const void *ctx)
{
    const rows *x = ctx;
    return layerbench_write_tsv(f, x->r, x->n);
}

typedef struct crosses {
    const layerbench_cross *c;
    size_t n;
} crosses;

static int write_crosses(FILE *f, const void *ctx)
{
    const crosses *x = ctx;
    return layerbench_write_crossover_tsv(f, x->c, x->n);
}

/* The speedup of every layer, width and length from the first thread count to each
 * other one: the ratio of the median times. */
static void print_speedup(const layerbench_row *r, size_t n, const request *q)
{
    printf("\nSpeedup over %zu BLAS thread%s (median time ratio):\n", q->threads[0],
           q->threads[0] == 1 ? "" : "s");
    printf("%-6s %5s %6s %7s %8s\n", "layer", "d", "n", "threads", "speedup");
    for (size_t i = 0; i < n; i++) {
        if (r[i].threads == q->threads[0])
            continue;
        for (size_t j = 0; j < n; j++)
            if (r[j].threads == q->threads[0] && r[j].ops == r[i].ops && r[j].d == r[i].d &&
                r[j].n == r[i].n)
                printf("%-6s %5zu %6zu %7zu %8.2f\n", r[i].ops->name, r[i].d, r[i].n,
                       r[i].threads, r[j].t_median / r[i].t_median);
    }
}

int layerbench_cmd_run(int argc, char **argv, int check, void (*help)(void))
{
    static request q;
    int rc = parse(argc, argv, &q, help);
    if (rc || check)
        return args_exit(rc);
    size_t nlayers = 0;
    while (layerbench_registry[nlayers])
        nlayers++;
    /* a thread count other than 1 needs a BLAS that can be told: refused before any work */
    const int settable = buildinfo_set_threads(q.threads[0]) == 0;
    if (!settable && (q.nt > 1 || q.threads[0] != 1))
        return args_run_error("--threads: this BLAS has no thread count to set (only "
                              "OpenBLAS's is found at run time): give --threads 1");
    runlock lock = {-1};
    if (q.out && (rc = cmd_claim_out(&lock, q.out, 0, "")) != 0)
        return rc;
    const size_t total = q.nt * nlayers * q.nw * q.nl;
    layerbench_row *res = calloc(total, sizeof *res);
    layerbench_cross *cr = calloc(total ? total : 1, sizeof *cr);
    if (!res || !cr) {
        free(res);
        free(cr);
        runlock_release(&lock);
        return args_run_error("out of memory");
    }
    size_t done = 0;
    for (size_t t = 0; t < q.nt && rc == 0; t++) {
        if (settable)
            buildinfo_set_threads(q.threads[t]);
        for (size_t i = 0; i < nlayers && rc == 0; i++)
            for (size_t w = 0; w < q.nw && rc == 0; w++)
                for (size_t k = 0; k < q.nl && rc == 0; k++) {
                    const layerbench_ops *ops = layerbench_registry[i];
                    fprintf(stderr, "measuring %s at d %zu, n %zu, %zu thread%s ...\n",
                            ops->name, q.widths[w], q.lengths[k], q.threads[t],
                            q.threads[t] == 1 ? "" : "s");
                    if (layerbench_measure(ops, q.widths[w], q.lengths[k], q.reps,
                                           MIN_SECONDS, SEED, q.threads[t], &res[done]) != 0)
                        rc = args_run_error("bench --layers: %s at d %zu, n %zu: out of "
                                            "memory", ops->name, q.widths[w], q.lengths[k]);
                    else
                        done++;
                }
    }
    if (rc == 0) {
        const size_t nc = layerbench_crossovers(res, done, cr, total);
        char path[1024];
        printf("attnlab %s, BLAS %s (%s), batch 1, %zu repetitions%s\n", buildinfo_version(),
               buildinfo_blas(path, sizeof path), buildinfo_blas_core(), q.reps,
               settable ? "" : ", BLAS threads not settable");
        layerbench_print(stdout, res, done);
        printf("\nWhere the FLOPs and the times of a recurrent layer and attention cross:\n");
        layerbench_print_crossover(stdout, cr, nc);
        if (q.nt > 1)
            print_speedup(res, done, &q);
        rows ro = {res, done};
        crosses co = {cr, nc};
        if (q.out && (cmd_write_file(q.out, "layers.tsv", write_rows, &ro) != 0 ||
                      cmd_write_file(q.out, "layers-crossover.tsv", write_crosses, &co) != 0 ||
                      cmd_write_manifest(q.out, argc, argv) != 0))
            rc = ARGS_EXIT_RUNTIME;
    }
    runlock_release(&lock);
    free(res);
    free(cr);
    return rc;
}
