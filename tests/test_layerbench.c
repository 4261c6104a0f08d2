/* test_layerbench.c — the layer benchmark (common/core/layerbench.h) and `attnlab bench
 * --layers`: every registered layer's backward against finite differences, the growth
 * of the FLOP formulas with n and their crossing, the path of the gradient against n,
 * and the command's refusals and files. No time is asserted. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/core/gradcheck.h"
#include "../common/core/layerbench.h"
#include "testcli.h"
#include "testutil.h"

static size_t n_layers(void)
{
    size_t k = 0;
    while (layerbench_registry[k])
        k++;
    return k;
}

static const layerbench_ops *find_kind(const char *kind, size_t which)
{
    for (size_t k = 0; layerbench_registry[k]; k++)
        if (strcmp(layerbench_registry[k]->kind, kind) == 0 && which-- == 0)
            return layerbench_registry[k];
    return NULL;
}

static layerbench_layer *make(const layerbench_ops *ops, size_t d, size_t n,
                              unsigned long seed)
{
    gsl_rng *r = tu_rng(seed);
    layerbench_layer *l = ops->create(d, n, r);
    gsl_rng_free(r);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_eq(l->ops, ops);
    return l;
}

/* ---- the gradients: backward against central differences of forward ---------------- */

/* The loss Σ Y ⊙ R of one forward. */
typedef struct fd_ctx {
    layerbench_layer *l;
    gsl_matrix *X, *Y, *R;
} fd_ctx;

static double fd_loss(void *p)
{
    fd_ctx *c = p;
    c->l->ops->forward(c->l, c->Y, c->X);
    return tu_dot(c->Y, c->R);
}

/* Small sizes, all different from n: one head of width 6, then two of width 18 (the
 * Transformer's default head width 16 gives 36 / 16 = 2 heads). */
static const size_t gc_sizes[][2] = {{6, 5}, {36, 3}};
#define GC_SIZES (sizeof gc_sizes / sizeof gc_sizes[0])

START_TEST(test_layer_gradcheck)
{
    const layerbench_ops *ops = layerbench_registry[_i / GC_SIZES];
    const size_t d = gc_sizes[_i % GC_SIZES][0], n = gc_sizes[_i % GC_SIZES][1];
    layerbench_layer *l = make(ops, d, n, 7);
    gsl_rng *r = tu_rng(11);
    fd_ctx c = {l, gsl_matrix_alloc(n, d), gsl_matrix_alloc(n, d), gsl_matrix_alloc(n, d)};
    gsl_matrix *dX = gsl_matrix_alloc(n, d), *dX2 = gsl_matrix_alloc(n, d);
    tu_fill(c.X, 1.0, r);
    tu_fill(c.R, 1.0, r);
    /* weights off their initial values, so that no gradient is 0 by symmetry (the
     * attention's biases start at 0) */
    for (size_t k = 0; k < l->params.size; k++)
        l->params.data[k] += 0.1 * (2.0 * gsl_rng_uniform(r) - 1.0);

    arena_zero_grad(&l->params);
    ops->forward(l, c.Y, c.X);
    ops->backward(l, dX, c.R);
    double *g = malloc(l->params.size * sizeof *g);
    memcpy(g, l->params.grad, l->params.size * sizeof *g);

    /* a second backward writes dX again and adds the weight gradients a second time (to
     * rounding: the key bias's gradient is 0 up to rounding, a softmax being blind to a
     * shift shared by all its scores, so the tolerance is relative to the largest) */
    ops->backward(l, dX2, c.R);
    for (size_t k = 0; k < n * d; k++)
        ck_assert_double_eq(dX2->data[k], dX->data[k]);
    double gmax = 0;
    for (size_t k = 0; k < l->params.size; k++)
        gmax = fmax(gmax, fabs(g[k]));
    for (size_t k = 0; k < l->params.size; k++)
        ck_assert_msg(fabs(l->params.grad[k] - 2.0 * g[k]) <= 1e-12 * gmax,
                      "%s: weight gradient %zu is %g after two backwards, %g after one",
                      ops->name, k, l->params.grad[k], g[k]);

    char what[64];
    snprintf(what, sizeof what, "%s d %zu n %zu: dX", ops->name, d, n);
    tu_gradcheck(what, fd_loss, &c, c.X, dX);
    size_t worst = 0;
    const double err = gradcheck_array(fd_loss, &c, l->params.data, g, l->params.size,
                                       GRADCHECK_H, 1, &worst);
    ck_assert_msg(err < GRADCHECK_TOL, "%s d %zu n %zu: weight gradient %zu off by %.3g",
                  ops->name, d, n, worst, err);
    free(g);
    gsl_matrix_free(c.X);
    gsl_matrix_free(c.Y);
    gsl_matrix_free(c.R);
    gsl_matrix_free(dX);
    gsl_matrix_free(dX2);
    gsl_rng_free(r);
    ops->destroy(l);
}
END_TEST

/* ---- the formulas -------------------------------------------------------------------- */

/* Doubling n doubles a recurrent layer's FLOPs at every n; it doubles attention's while
 * n ≪ d (its projections) and quadruples them once n ≫ d (its n² scores). Sequential
 * operations double with n for a recurrent layer and do not move for attention. */
START_TEST(test_flops_growth)
{
    const size_t d = 64;
    for (size_t k = 0; layerbench_registry[k]; k++) {
        const layerbench_ops *ops = layerbench_registry[k];
        const double small = ops->flops(d, 2.0) / ops->flops(d, 1.0);
        const double large = ops->flops(d, 2.0 * 1048576) / ops->flops(d, 1048576);
        const double seq = ops->sequential_ops(d, 2048) / ops->sequential_ops(d, 1024);
        if (strcmp(ops->kind, LAYERBENCH_RECURRENT) == 0) {
            tu_assert_rel(small, 2.0, 1e-12);
            tu_assert_rel(large, 2.0, 1e-12);
            tu_assert_rel(seq, 2.0, 0.01);
        } else {
            ck_assert_str_eq(ops->kind, LAYERBENCH_ATTENTION);
            tu_assert_rel(small, 2.0, 0.05);
            tu_assert_rel(large, 4.0, 0.01);
            ck_assert_double_eq(seq, 1.0);
        }
    }
}
END_TEST

/* The crossing solved from the formulas is where they are equal, recurrent above before
 * it and attention above after it. */
START_TEST(test_flops_crossover)
{
    const layerbench_ops *att = find_kind(LAYERBENCH_ATTENTION, 0);
    ck_assert_ptr_nonnull(att);
    for (size_t which = 0; find_kind(LAYERBENCH_RECURRENT, which); which++) {
        const layerbench_ops *rec = find_kind(LAYERBENCH_RECURRENT, which);
        for (size_t d = 16; d <= 256; d *= 2) {
            const double n = layerbench_flops_crossover(rec, att, d);
            ck_assert_msg(isfinite(n) && n > 1, "%s d %zu: %g", rec->name, d, n);
            tu_assert_rel(rec->flops(d, n), att->flops(d, n), 1e-9);
            ck_assert(rec->flops(d, 0.9 * n) > att->flops(d, 0.9 * n));
            ck_assert(rec->flops(d, 1.1 * n) < att->flops(d, 1.1 * n));
        }
    }
}
END_TEST

/* The measured crossing, on made-up times: log(t_rec/t_att) goes 1 → −1 between 8 and
 * 32, so it meets 0 halfway in log n, at 16. */
START_TEST(test_time_crossover)
{
    const size_t n[] = {4, 8, 32, 64};
    const double rec[] = {4 * M_E, M_E, 1.0 / M_E, 0.1};
    const double att[] = {1, 1, 1, 1};
    tu_assert_rel(layerbench_time_crossover(n, rec, att, 4), 16.0, 1e-12);
    const double never[] = {2, 2, 2, 2};
    ck_assert(isnan(layerbench_time_crossover(n, never, att, 4)));
}
END_TEST

/* ---- the path of the gradient ------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* At d = 32 and n = 8 .. 64, the median over five fixed seeds (weights and input) of the
 * path: attention's first input counts about as much as any other at every n (path_rel
 * within a factor 2 of 1; one seed alone scatters more, as the query is a different row
 * at every n), while a recurrent layer's first input fades with n (path_norm and
 * path_rel fall a hundredfold from 8 to 64). */
#define PATH_SEEDS 5
START_TEST(test_path_against_n)
{
    const size_t d = 32, lens[] = {8, 16, 32, 64}, nl = 4;
    for (size_t k = 0; layerbench_registry[k]; k++) {
        const layerbench_ops *ops = layerbench_registry[k];
        double norm[4], rel[4];
        for (size_t i = 0; i < nl; i++) {
            double a[PATH_SEEDS], b[PATH_SEEDS];
            for (size_t s = 0; s < PATH_SEEDS; s++) {
                layerbench_layer *l = make(ops, d, lens[i], 1 + s);
                layerbench_path(l, 101 + s, &a[s], &b[s]);
                ops->destroy(l);
                ck_assert(isfinite(a[s]) && a[s] > 0);
            }
            qsort(a, PATH_SEEDS, sizeof *a, cmp_double);
            qsort(b, PATH_SEEDS, sizeof *b, cmp_double);
            norm[i] = a[PATH_SEEDS / 2];
            rel[i] = b[PATH_SEEDS / 2];
        }
        if (strcmp(ops->kind, LAYERBENCH_ATTENTION) == 0) {
            for (size_t i = 0; i < nl; i++)
                ck_assert_msg(rel[i] > 0.5 && rel[i] < 2.0, "%s n %zu: path_rel %g",
                              ops->name, lens[i], rel[i]);
        } else {
            ck_assert_msg(norm[nl - 1] < 0.01 * norm[0], "%s: %g at n 64, %g at n 8",
                          ops->name, norm[nl - 1], norm[0]);
            ck_assert_msg(rel[nl - 1] < 0.01 * rel[0], "%s: rel %g at n 64, %g at n 8",
                          ops->name, rel[nl - 1], rel[0]);
        }
    }
}
END_TEST

/* The input rows do not depend on how many follow them: x_1 is the same at every n. */
START_TEST(test_input_prefix)
{
    gsl_matrix *a = gsl_matrix_alloc(3, 7), *b = gsl_matrix_alloc(9, 7);
    layerbench_input(a, 42);
    layerbench_input(b, 42);
    for (size_t i = 0; i < 3 * 7; i++)
        ck_assert_double_eq(a->data[i], b->data[i]);
    gsl_matrix_free(a);
    gsl_matrix_free(b);
}
END_TEST

/* ---- the command ----------------------------------------------------------------------- */

typedef struct bad_line {
    const char *args[8];
    const char *must_say;
} bad_line;

static const bad_line bad_lines[] = {
    {{"bench", "--layers", "--widths", "0", NULL}, "--widths"},
    {{"bench", "--layers", "--widths", "abc", NULL}, "--widths"},
    {{"bench", "--layers", "--widths", "8,,16", NULL}, "--widths"},
    {{"bench", "--layers", "--widths", "8,8", NULL}, "--widths"},
    {{"bench", "--layers", "--widths", "99999", NULL}, "--widths"},
    {{"bench", "--layers", "--lengths", "0", NULL}, "--lengths"},
    {{"bench", "--layers", "--lengths", "", NULL}, "--lengths"},
    {{"bench", "--layers", "--lengths", "4:2", NULL}, "--lengths"},
    {{"bench", "--layers", "--lengths", "1000000", NULL}, "--lengths"},
    {{"bench", "--layers", "--reps", "0", NULL}, "--reps"},
    {{"bench", "--layers", "--threads", "0", NULL}, "--threads"},
    {{"bench", "--layers", "--models", "lstm", NULL}, "--models"},
};

START_TEST(test_cmd_refuses)
{
    const bad_line *b = &bad_lines[_i];
    char out[128], args_out[160];
    snprintf(out, sizeof out, "/tmp/attnlab-layers-bad-%ld", (long)getpid());
    const char *args[12];
    size_t k = 0;
    for (; b->args[k]; k++)
        args[k] = b->args[k];
    args[k++] = "--out";
    snprintf(args_out, sizeof args_out, "%s", out);
    args[k++] = args_out;
    args[k] = NULL;
    run_out r;
    cli_run(&r, NULL, args);
    ck_assert_int_eq(r.status, 2);
    const char *nl = strchr(r.err, '\n');
    ck_assert_ptr_nonnull(nl);
    char first[512];
    snprintf(first, sizeof first, "%.*s", (int)(nl - r.err), r.err);
    ck_assert_msg(strstr(first, b->must_say), "'%s' does not name %s", first, b->must_say);
    ck_assert_msg(strstr(nl + 1, "--help"), "no hint after '%s'", first);
    ck_assert_int_ne(access(out, F_OK), 0); /* nothing made or written */
}
END_TEST

/* Counts the tab-separated fields of line (up to its newline). */
static size_t fields(const char *line)
{
    size_t k = 1;
    for (; *line && *line != '\n'; line++)
        k += *line == '\t';
    return k;
}

START_TEST(test_cmd_tiny_run)
{
    char dir[128], path[192];
    snprintf(dir, sizeof dir, "/tmp/attnlab-layers-%ld", (long)getpid());
    run_out r;
    cli_run(&r, NULL,
            (const char *const[]){"bench", "--layers", "--widths", "8", "--lengths", "4,8",
                                  "--reps", "1", "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "path norm"));

    static char buf[16384];
    snprintf(path, sizeof path, "%s/layers.tsv", dir);
    cli_slurp(path, buf, sizeof buf);
    ck_assert_uint_eq(cli_count_lines(buf), 1 + n_layers() * 2);
    const size_t nf = fields(buf);
    ck_assert_uint_eq(nf, 13);
    ck_assert(strncmp(buf, "layer\tkind\td\tn\tthreads\tflops\t", 28) == 0);
    size_t rows = 0;
    for (const char *line = strchr(buf, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        ck_assert_uint_eq(fields(line), nf);
        /* layer, kind, then numbers: d 8, n 4 or 8, threads 1, the rest finite */
        const char *p = strchr(strchr(line, '\t') + 1, '\t') + 1;
        for (size_t f = 2; f < nf; f++) {
            char *end;
            const double v = strtod(p, &end);
            ck_assert_msg(end != p && isfinite(v) && v >= 0, "field %zu of row %zu", f, rows);
            if (f == 2)
                ck_assert_double_eq(v, 8);
            if (f == 3)
                ck_assert(v == 4 || v == 8);
            p = end + 1;
        }
        rows++;
    }
    ck_assert_uint_eq(rows, n_layers() * 2);

    snprintf(path, sizeof path, "%s/layers-crossover.tsv", dir);
    cli_slurp(path, buf, sizeof buf);
    ck_assert(strncmp(buf, "recurrent\tattention\td\tthreads\tn_flops\tn_time\n", 44) == 0);
    size_t pairs = 0;
    for (size_t k = 0; layerbench_registry[k]; k++)
        pairs += strcmp(layerbench_registry[k]->kind, LAYERBENCH_RECURRENT) == 0;
    ck_assert_uint_eq(cli_count_lines(buf), 1 + pairs);

    /* the manifest names the command as typed and the build that measured */
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    cli_slurp(path, buf, sizeof buf);
    ck_assert(strncmp(buf, "key\tvalue\ncommand\tattnlab bench --layers --widths 8 ", 51) == 0);
    ck_assert_ptr_nonnull(strstr(buf, "\ncommit\t"));
    ck_assert_ptr_nonnull(strstr(buf, "\nblas_core\t"));
    ck_assert(!cli_has_temporary(dir));
    cli_remove(dir);
}
END_TEST

/* Two thread counts: every layer at each, or, with a BLAS that cannot be told, a refusal
 * naming --threads before anything is measured. */
START_TEST(test_cmd_threads)
{
    run_out r;
    cli_run(&r, NULL,
            (const char *const[]){"bench", "--layers", "--widths", "8", "--lengths", "4",
                                  "--reps", "1", "--threads", "1,2", NULL});
    if (r.status == 1) {
        ck_assert_ptr_nonnull(strstr(r.err, "--threads"));
        return;
    }
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "Speedup"));
}
END_TEST

/* bench of whole models writes its manifest beside bench.tsv too: the command, quoted
 * where a shell needs it, and the commit of the build. */
START_TEST(test_cmd_bench_manifest)
{
    char dir[128], path[192];
    snprintf(dir, sizeof dir, "/tmp/attnlab-bench manifest-%ld", (long)getpid());
    run_out r;
    cli_run(&r, NULL,
            (const char *const[]){"bench", "--models", "lstm", "--lengths", "4", "--reps", "1",
                                  "--hidden", "8", "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    static char buf[8192];
    snprintf(path, sizeof path, "%s/bench.tsv", dir);
    cli_slurp(path, buf, sizeof buf);
    ck_assert_uint_eq(cli_count_lines(buf), 2);
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    cli_slurp(path, buf, sizeof buf);
    char want[512];
    snprintf(want, sizeof want, "key\tvalue\ncommand\tattnlab bench --models lstm --lengths 4 "
             "--reps 1 --hidden 8 --out '%s'\n", dir);
    ck_assert_msg(strncmp(buf, want, strlen(want)) == 0, "manifest: %s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "\ncommit\t"));
    ck_assert(!cli_has_temporary(dir));
    cli_remove(dir);
}
END_TEST

Suite *make_layerbench_suite(void)
{
    Suite *s = suite_create("layerbench");
    TCase *t = tcase_create("layers");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_layer_gradcheck, 0, (int)(n_layers() * GC_SIZES));
    tcase_add_test(t, test_flops_growth);
    tcase_add_test(t, test_flops_crossover);
    tcase_add_test(t, test_time_crossover);
    tcase_add_test(t, test_path_against_n);
    tcase_add_test(t, test_input_prefix);
    suite_add_tcase(s, t);
    TCase *c = tcase_create("command");
    tcase_set_timeout(c, 120);
    tcase_add_loop_test(c, test_cmd_refuses, 0,
                        (int)(sizeof bad_lines / sizeof bad_lines[0]));
    tcase_add_test(c, test_cmd_tiny_run);
    tcase_add_test(c, test_cmd_threads);
    tcase_add_test(c, test_cmd_bench_manifest);
    suite_add_tcase(s, c);
    return s;
}
