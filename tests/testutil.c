/* testutil.c — helpers shared by the test files (see testutil.h). */
#include "testutil.h"

#include "../common/core/task.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

gsl_rng *tu_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_ptr_nonnull(r);
    gsl_rng_set(r, seed);
    return r;
}

void tu_fill(gsl_matrix *m, double scale, const gsl_rng *r)
{
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < m->size2; j++)
            gsl_matrix_set(m, i, j, scale * (2.0 * gsl_rng_uniform(r) - 1.0));
}

double tu_dot(const gsl_matrix *a, const gsl_matrix *b)
{
    ck_assert(a->size1 == b->size1 && a->size2 == b->size2);
    double s = 0.0;
    for (size_t i = 0; i < a->size1; i++)
        for (size_t j = 0; j < a->size2; j++)
            s += gsl_matrix_get(a, i, j) * gsl_matrix_get(b, i, j);
    return s;
}

double tu_sigmoid_ref(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

double tu_gradcheck(const char *what, gradcheck_loss loss, void *ctx, gsl_matrix *x,
                    const gsl_matrix *g)
{
    ck_assert(x->size1 == g->size1 && x->size2 == g->size2);
    ck_assert_msg(x->tda == x->size2 && g->tda == g->size2, "%s: not contiguous", what);
    size_t worst = 0;
    double err = gradcheck_array(loss, ctx, x->data, g->data, x->size1 * x->size2,
                                 GRADCHECK_H, 1, &worst);
    ck_assert_msg(err < GRADCHECK_TOL, "%s: relative error %.3g at (%zu, %zu)", what, err,
                  worst / x->size2, worst % x->size2);
    return err;
}

gsl_matrix *tu_pool_new(tu_pool *p, size_t rows, size_t cols, double scale, const gsl_rng *r)
{
    ck_assert_uint_lt(p->n, sizeof p->m / sizeof p->m[0]);
    gsl_matrix *m = gsl_matrix_calloc(rows, cols);
    ck_assert_ptr_nonnull(m);
    if (scale > 0)
        tu_fill(m, scale, r);
    p->m[p->n++] = m;
    return m;
}

void tu_pool_free(tu_pool *p)
{
    for (size_t k = 0; k < p->n; k++)
        gsl_matrix_free(p->m[k]);
    p->n = 0;
}

gsl_matrix *tu_rand_matrix(size_t rows, size_t cols, double scale, const gsl_rng *r)
{
    gsl_matrix *m = gsl_matrix_alloc(rows, cols);
    ck_assert_ptr_nonnull(m);
    tu_fill(m, scale, r);
    return m;
}

gsl_matrix *tu_zero_matrix(size_t rows, size_t cols)
{
    gsl_matrix *m = gsl_matrix_calloc(rows, cols);
    ck_assert_ptr_nonnull(m);
    return m;
}

gsl_matrix_view tu_step_block(gsl_matrix *m, size_t k, size_t B)
{
    return gsl_matrix_submatrix(m, k * B, 0, B, m->size2);
}

void tu_report_max(const char *prefix, const char *what, double err)
{
    printf("%s gradcheck %-22s max relative error %.2e\n", prefix, what, err);
}

const char *tu_program(void)
{
    const char *p = getenv("ATTNLAB");
    return p && *p ? p : "build/attnlab";
}

const char *tu_chromium(void)
{
    const char *c = getenv("CHROMIUM");
    if (c && *c)
        return c;
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char sh[128];
        snprintf(sh, sizeof sh, "command -v %s > /dev/null 2>&1", names[k]);
        if (system(sh) == 0)
            return names[k];
    }
    return NULL;
}

int tu_run_quiet(const char *const *args, char *err, size_t n)
{
    char errp[] = "/tmp/attnlab-tu-err-XXXXXX";
    int fe = mkstemp(errp);
    ck_assert(fe >= 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(fe, 2);
        /* execv takes char *const[]: copies of the arguments, not a cast */
        char *argv[64];
        size_t k = 0;
        argv[k++] = strdup(tu_program());
        for (; args[k - 1] && k < 63; k++)
            argv[k] = strdup(args[k - 1]);
        argv[k] = NULL;
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ssize_t got = n ? pread(fe, err, n - 1, 0) : 0;
    if (n)
        err[got > 0 ? got : 0] = '\0';
    close(fe);
    unlink(errp);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

model *tu_new_model(const model_ops *ops, const config *c, unsigned long seed)
{
    model *m = ops->alloc(c);
    ck_assert_msg(m != NULL, "%s: alloc failed", ops->name);
    gsl_rng *r = tu_rng(seed);
    ops->init(m, r);
    gsl_rng_free(r);
    return m;
}

void tu_random_batch(batch *b, size_t B, size_t Ts, size_t Tt, const config *c,
                     const gsl_rng *r)
{
    ck_assert_int_eq(batch_alloc(b, B, Ts, Tt), 0);
    b->B = B;
    b->Ts = Ts;
    b->Tt = Tt;
    for (size_t i = 0; i < B * Ts; i++)
        b->src[i] = (int)gsl_rng_uniform_int(r, c->symbols);
    for (size_t i = 0; i < B; i++)
        for (size_t t = 0; t < Tt; t++) {
            b->tgt[i * Tt + t] = (int)gsl_rng_uniform_int(r, c->symbols);
            b->dec_in[i * Tt + t] = t ? b->tgt[i * Tt + t - 1] : config_bos(c);
        }
}

int tu_errors;
char tu_reason[200];

void tu_count_error(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)file, (void)line, (void)gsl_errno;
    tu_errors++;
    snprintf(tu_reason, sizeof tu_reason, "%s", reason ? reason : "");
}
