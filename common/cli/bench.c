/* bench.c — training and decoding throughput, FLOP rates and peak memory (see bench.h). */
#include "bench.h"

#include <errno.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/optim.h"
#include "../core/rng.h"
#include "../core/task.h"
#include "../core/train.h"

/* Each timed repetition lasts at least this long, so timer resolution and scheduling
 * noise stay small beside it. */
#define BENCH_MIN_SECONDS 0.25

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v (n), which is sorted in place. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_dgemm(size_t side, size_t reps)
{
    gsl_matrix *a = gsl_matrix_alloc(side, side), *b = gsl_matrix_alloc(side, side);
    gsl_matrix *c = gsl_matrix_calloc(side, side);
    double *rate = malloc(reps * sizeof *rate);
    if (!a || !b || !c || !rate) {
        gsl_matrix_free(a);
        gsl_matrix_free(b);
        gsl_matrix_free(c);
        free(rate);
        return 0;
    }
    gsl_matrix_set_all(a, 0.5);
    gsl_matrix_set_all(b, 0.25);
    const double flops = 2.0 * (double)side * (double)side * (double)side;
    /* warm-up; the timed calls repeat this product on the same matrices, so its status
     * is theirs */
    double m = 0;
    if (gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, a, b, 0.0, c) == GSL_SUCCESS) {
        for (size_t r = 0; r < reps; r++) {
            size_t k = 0;
            double t0 = train_now(), dt;
            do {
                gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, a, b, 0.0, c);
                k++;
                dt = train_now() - t0;
            } while (dt < BENCH_MIN_SECONDS);
            rate[r] = flops * (double)k / dt * 1e-9;
        }
        m = median(rate, reps);
    }
    gsl_matrix_free(a);
    gsl_matrix_free(b);
    gsl_matrix_free(c);
    free(rate);
    return m;
}

/* The measurement itself, run in the child. Returns 0, or -1: out of memory (err left
 * empty), or the model refused a backward or decode (err holds model_last_error()). */
static int measure(const model_ops *ops, const config *c, size_t L, size_t reps,
                   bench_result *out, char *err, size_t n)
{
    char why[256];
    const task *t = task_open(c, why, sizeof why); /* the child exits: never closed */
    if (!t)
        return -1;
    const size_t B = c->batch, Tt = task_target_len(t, L);
    rng_streams r;
    batch b;
    optim o;
    model *m = NULL;
    int *pred = malloc(B * Tt * sizeof *pred);
    double *rate = malloc(reps * sizeof *rate), *drate = malloc(reps * sizeof *drate);
    if (!pred || !rate || !drate || rng_open(&r, c->seed) != 0)
        return -1;
    if (batch_alloc(&b, B, L, Tt) != 0 || !(m = ops->alloc(c)) ||
        ops->reserve(m, B, L, Tt) != 0 ||
        optim_alloc(&o, m->params.size, c->beta1, c->beta2, c->eps) != 0)
        return -1;
    ops->init(m, r.s[RNG_INIT]);
    task_fill(t, &b, B, L, c->symbols, r.s[RNG_TRAIN]);
    arena *p = &m->params;
    /* one full training step, exactly as train_run does it; a backward the model refuses
     * ends the measurement (the child exits: nothing to free) */
#define TRAIN_STEP()                                                                      \
    do {                                                                                  \
        arena_zero_grad(p);                                                               \
        if ((isnan(model_forward(m, &b, pred)) && model_last_error()[0]) ||               \
            model_backward(m, &b) != 0)                                                   \
            goto refused;                                                                 \
        optim_clip(p->grad, p->size, c->clip);                                            \
        optim_adam_step(&o, p->data, p->grad, c->lr);                                     \
    } while (0)
    for (int w = 0; w < 3; w++)
        TRAIN_STEP();
    for (size_t k = 0; k < reps; k++) {
        size_t steps = 0;
        double t0 = train_now(), dt;
        do {
            TRAIN_STEP();
            steps++;
            dt = train_now() - t0;
        } while (dt < BENCH_MIN_SECONDS);
        rate[k] = (double)(steps * B) / dt;
    }
#undef TRAIN_STEP
    if (model_decode(m, b.src, B, L, Tt, pred) != 0) /* warm-up */
        goto refused;
    for (size_t k = 0; k < reps; k++) {
        size_t calls = 0;
        double t0 = train_now(), dt;
        do {
            if (model_decode(m, b.src, B, L, Tt, pred) != 0)
                goto refused;
            calls++;
            dt = train_now() - t0;
        } while (dt < BENCH_MIN_SECONDS);
        drate[k] = (double)(calls * B) / dt;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", ops->name);
    out->len = L;
    out->batch = B;
    out->params = p->size;
    out->train_seq_s = median(rate, reps); /* sorts: min and max are the ends */
    out->train_min = rate[0];
    out->train_max = rate[reps - 1];
    out->decode_seq_s = median(drate, reps);
    out->decode_min = drate[0];
    out->decode_max = drate[reps - 1];
    out->flops_step = ops->flops(c, L, Tt) * (double)B;
    out->gflops = out->flops_step * out->train_seq_s / (double)B * 1e-9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
#if defined(__APPLE__)
    out->peak_mib = (double)ru.ru_maxrss / (1024.0 * 1024.0); /* macOS reports bytes */
#else
    out->peak_mib = (double)ru.ru_maxrss / 1024.0; /* Linux and the BSDs report KiB */
#endif
    return 0;
refused:
    snprintf(err, n, "%s", model_last_error());
    return -1;
}

/* What the child sends back through the pipe: the result, or why it failed. */
typedef struct bench_reply {
    int ok;
    char err[256];
    bench_result r;
} bench_reply;

int bench_model(const model_ops *ops, const config *c, size_t L, size_t reps,
                bench_result *out, char *err, size_t n)
{
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(err, n, "bench: pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, n, "bench: fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        bench_reply rep;
        memset(&rep, 0, sizeof rep);
        rep.ok = measure(ops, c, L, reps, &rep.r, rep.err, sizeof rep.err) == 0;
        int sent = write(fd[1], &rep, sizeof rep) == (ssize_t)sizeof rep;
        _exit(rep.ok && sent ? 0 : 1);
    }
    close(fd[1]);
    bench_reply rep;
    ssize_t got = 0, k;
    while (got < (ssize_t)sizeof rep &&
           (k = read(fd[0], (char *)&rep + got, sizeof rep - (size_t)got)) > 0)
        got += k;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got == (ssize_t)sizeof rep && !rep.ok && rep.err[0]) {
        rep.err[sizeof rep.err - 1] = '\0';
        snprintf(err, n, "bench: measuring %s at length %zu failed: %s", ops->name, L,
                 rep.err);
        return -1;
    }
    if (got != (ssize_t)sizeof rep || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, n, "bench: measuring %s at length %zu failed (out of memory?)",
                 ops->name, L);
        return -1;
    }
    *out = rep.r;
    return 0;
}

int bench_write_tsv(FILE *f, const bench_result *r, size_t n, double dgemm_gflops)
{
    fprintf(f, "model\tlen\tbatch\tparams\ttrain_seq_s\ttrain_min\ttrain_max\tdecode_seq_s\t"
               "decode_min\tdecode_max\tflops_step\tgflops\tdgemm_gflops\tefficiency\t"
               "peak_mib\n");
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s\t%zu\t%zu\t%zu\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.6g\t%.3f\t%.3f\t"
                   "%.4f\t%.1f\n",
                r[k].model, r[k].len, r[k].batch, r[k].params, r[k].train_seq_s,
                r[k].train_min, r[k].train_max, r[k].decode_seq_s, r[k].decode_min,
                r[k].decode_max, r[k].flops_step, r[k].gflops, dgemm_gflops,
                dgemm_gflops > 0 ? r[k].gflops / dgemm_gflops : 0, r[k].peak_mib);
    return ferror(f) ? -1 : 0;
}

void bench_print(FILE *f, const bench_result *r, size_t n, double dgemm_gflops)
{
    fprintf(f, "DGEMM on this machine: %.1f GFLOP/s (median)\n\n", dgemm_gflops);
    fprintf(f, "%-14s %5s %8s %21s %21s %8s %6s %8s\n", "model", "len", "params",
            "train seq/s (spread)", "decode seq/s (spread)", "GFLOP/s", "eff.", "peak MiB");
    for (size_t k = 0; k < n; k++) {
        char tr[32], de[32];
        snprintf(tr, sizeof tr, "%.0f (%.0f-%.0f)", r[k].train_seq_s, r[k].train_min,
                 r[k].train_max);
        snprintf(de, sizeof de, "%.0f (%.0f-%.0f)", r[k].decode_seq_s, r[k].decode_min,
                 r[k].decode_max);
        fprintf(f, "%-14s %5zu %8zu %21s %21s %8.2f %5.1f%% %8.1f\n", r[k].model, r[k].len,
                r[k].params, tr, de, r[k].gflops,
                dgemm_gflops > 0 ? 100.0 * r[k].gflops / dgemm_gflops : 0, r[k].peak_mib);
    }
}

int bench_cost(model *m, const task *t, size_t L, size_t B, size_t reps, const gsl_rng *r,
               double *train_ms, double *decode_ms)
{
    const size_t Tt = task_target_len(t, L);
    batch b;
    int *pred = malloc(B * Tt * sizeof *pred);
    double *tr = malloc(reps * sizeof *tr), *de = malloc(reps * sizeof *de);
    int rc = -1;
    if (!pred || !tr || !de || batch_alloc(&b, B, L, Tt) != 0) {
        free(pred);
        free(tr);
        free(de);
        return -1;
    }
    if (m->ops->reserve(m, B, L, Tt) != 0)
        goto done;
    task_fill(t, &b, B, L, m->cfg.symbols, r);
    /* warm-up: caches, page faults of a new reservation */
    if ((isnan(model_forward(m, &b, pred)) && model_last_error()[0]) ||
        model_backward(m, &b) != 0)
        goto refused;
    for (size_t k = 0; k < reps; k++) {
        size_t calls = 0;
        double t0 = train_now(), dt;
        do {
            if ((isnan(model_forward(m, &b, pred)) && model_last_error()[0]) ||
                model_backward(m, &b) != 0)
                goto refused;
            calls++;
            dt = train_now() - t0;
        } while (dt < BENCH_MIN_SECONDS / 5);
        tr[k] = 1e3 * dt / (double)(calls * B);
        calls = 0;
        t0 = train_now();
        do {
            if (model_decode(m, b.src, B, L, Tt, pred) != 0)
                goto refused;
            calls++;
            dt = train_now() - t0;
        } while (dt < BENCH_MIN_SECONDS / 5);
        de[k] = 1e3 * dt / (double)(calls * B);
    }
    arena_zero_grad(&m->params);
    *train_ms = median(tr, reps);
    *decode_ms = median(de, reps);
    rc = 0;
    goto done;
refused:
    arena_zero_grad(&m->params); /* no half-made gradient is left behind */
done:
    batch_free(&b);
    free(pred);
    free(tr);
    free(de);
    return rc;
}
