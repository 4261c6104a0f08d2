/* test_common.c — the shared machinery: arenas, small ops, tasks, randomness, Adam,
 * clipping, configuration parsing, token parsing and atomic files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/core/afile.h"
#include "../common/cli/buildinfo.h"
#include "../common/core/config.h"
#include "../common/core/optim.h"
#include "../common/core/rng.h"
#include "../common/core/task.h"
#include "../common/core/tensor.h"
#include "testutil.h"

/* ---- arena --------------------------------------------------------------------------- */

START_TEST(arena_layout)
{
    const arena_spec spec[] = {{"a", 2, 3}, {"b", 1, 4}, {"c", 5, 1}};
    arena a;
    ck_assert_int_eq(arena_alloc(&a, spec, 3), 0);
    ck_assert_uint_eq(a.size, 6 + 4 + 5);
    ck_assert_uint_eq(a.offset[1], 6);
    ck_assert_uint_eq(a.offset[2], 10);
    ck_assert_int_eq(arena_find(&a, "b"), 1);
    ck_assert_int_eq(arena_find(&a, "nope"), -1);
    /* views point into the one block, in table order, without gaps */
    gsl_matrix *b = arena_w(&a, 1);
    ck_assert_ptr_eq(b->data, a.data + 6);
    ck_assert_uint_eq(b->size1, 1);
    ck_assert_uint_eq(b->size2, 4);
    gsl_matrix_set(arena_w(&a, 2), 4, 0, 7.5);
    ck_assert(a.data[14] == 7.5);
    ck_assert_ptr_eq(arena_g(&a, 2)->data, a.grad + 10);
    arena_free(&a);
    ck_assert_ptr_null(a.data);
}
END_TEST

START_TEST(arena_zero_grad_all)
{
    const arena_spec spec[] = {{"x", 3, 3}, {"y", 2, 2}};
    arena a;
    ck_assert_int_eq(arena_alloc(&a, spec, 2), 0);
    for (size_t i = 0; i < a.size; i++) {
        a.grad[i] = (double)i + 1;
        a.data[i] = 2.0;
    }
    arena_zero_grad(&a);
    for (size_t i = 0; i < a.size; i++) {
        ck_assert(a.grad[i] == 0.0);
        ck_assert(a.data[i] == 2.0); /* parameters untouched */
    }
    arena_free(&a);
}
END_TEST

START_TEST(arena_rejects_bad_tables)
{
    arena a;
    const arena_spec dup[] = {{"w", 2, 2}, {"w", 1, 1}};
    ck_assert_int_eq(arena_alloc(&a, dup, 2), -1);
    const arena_spec empty_side[] = {{"w", 0, 2}};
    ck_assert_int_eq(arena_alloc(&a, empty_side, 1), -1);
    const arena_spec noname[] = {{"", 1, 1}};
    ck_assert_int_eq(arena_alloc(&a, noname, 1), -1);
    const arena_spec huge[] = {{"w", (size_t)1 << 40, (size_t)1 << 40}};
    ck_assert_int_eq(arena_alloc(&a, huge, 1), -1);
    arena_free(&a); /* safe on the empty arena a failed alloc leaves */
}
END_TEST

/* ---- softmax and cross-entropy ------------------------------------------------------- */

START_TEST(softmax_sums_to_one_and_is_stable)
{
    double x[4] = {1000.0, 1001.0, 999.0, -1000.0}; /* exp(1000) overflows without the max */
    op_softmax_row(x, 4);
    double s = 0;
    for (int i = 0; i < 4; i++) {
        ck_assert(isfinite(x[i]) && x[i] >= 0.0);
        s += x[i];
    }
    tu_assert_rel(s, 1.0, 1e-15);
    tu_assert_rel(x[1] / x[0], exp(1.0), 1e-12);
}
END_TEST

START_TEST(softmax_masks)
{
    double x[3] = {0.5, -INFINITY, 0.5};
    op_softmax_row(x, 3);
    ck_assert(x[1] == 0.0); /* masked entries are exactly zero */
    ck_assert(x[0] == 0.5 && x[2] == 0.5);
    double y[3] = {-INFINITY, -INFINITY, -INFINITY};
    op_softmax_row(y, 3);
    for (int i = 0; i < 3; i++)
        ck_assert(y[i] == 0.0); /* a fully masked row is zeros, not NaN */
    double z[3] = {0.5, NAN, -INFINITY};
    op_softmax_row(z, 3);
    for (int i = 0; i < 3; i++)
        ck_assert(isnan(z[i])); /* a NaN is not mistaken for a masked row */
}
END_TEST

typedef struct softmax_ctx {
    double x[5], y[5], r[5];
} softmax_ctx;

static double softmax_loss(void *p)
{
    softmax_ctx *c = p;
    memcpy(c->y, c->x, sizeof c->x);
    op_softmax_row(c->y, 5);
    double s = 0;
    for (int i = 0; i < 5; i++)
        s += c->y[i] * c->r[i];
    return s;
}

START_TEST(softmax_backward_gradcheck)
{
    gsl_rng *r = tu_rng(11);
    softmax_ctx c;
    for (int i = 0; i < 5; i++) {
        c.x[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
        c.r[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
    }
    softmax_loss(&c);
    double dx[5] = {0};
    op_softmax_row_backward(dx, c.r, c.y, 5);
    double err = gradcheck_array(softmax_loss, &c, c.x, dx, 5, GRADCHECK_H, 1, NULL);
    ck_assert_msg(err < GRADCHECK_TOL, "softmax backward relative error %g", err);
    gsl_rng_free(r);
}
END_TEST


/* Σ r_i · relu(x_i): a loss with kinks, for the finite-difference checker itself. */
typedef struct relu_ctx {
    double x[6], r[6];
} relu_ctx;

static double relu_loss(void *p)
{
    const relu_ctx *c = p;
    double s = 0;
    for (int i = 0; i < 6; i++)
        s += c->r[i] * (c->x[i] > 0 ? c->x[i] : 0.0);
    return s;
}

START_TEST(gradcheck_steps_over_kinks_but_not_errors)
{
    /* some points sit within a step of the kink at 0, on either side */
    relu_ctx c = {{0.7, -0.4, 2e-5, -3e-6, 1e-9, 0.25}, {0.3, -1.1, 0.8, 0.5, -0.6, 1.7}};
    double g[6];
    for (int i = 0; i < 6; i++)
        g[i] = c.x[i] > 0 ? c.r[i] : 0.0; /* the true gradient */
    double err = gradcheck_array(relu_loss, &c, c.x, g, 6, GRADCHECK_H, 1, NULL);
    ck_assert_msg(err < GRADCHECK_TOL, "a kink near the point passed for an error: %g", err);
    /* a gradient wrong by 1% at one entry, even next to a kink, must still fail */
    for (int bad = 0; bad < 6; bad++) {
        double h[6];
        memcpy(h, g, sizeof h);
        h[bad] = h[bad] == 0.0 ? 1e-3 : 1.01 * h[bad];
        size_t worst = 99;
        err = gradcheck_array(relu_loss, &c, c.x, h, 6, GRADCHECK_H, 1, &worst);
        ck_assert_msg(err > GRADCHECK_TOL && worst == (size_t)bad,
                      "a wrong gradient at %d was not caught (error %g at %zu)", bad, err,
                      worst);
    }
}
END_TEST

typedef struct ce_ctx {
    gsl_matrix *z;
    int t[3];
} ce_ctx;

static double ce_loss(void *p)
{
    ce_ctx *c = p;
    return op_cross_entropy(c->z, c->t, NULL, NULL);
}

START_TEST(cross_entropy_value_and_gradient)
{
    gsl_rng *r = tu_rng(5);
    ce_ctx c = {gsl_matrix_alloc(3, 4), {2, 0, 3}};
    tu_fill(c.z, 3.0, r);
    gsl_matrix *dz = gsl_matrix_alloc(3, 4);
    int pred[3];
    double loss = op_cross_entropy(c.z, c.t, dz, pred);
    /* the value against the definition −log softmax(z)_t, row by row */
    double want = 0;
    for (size_t i = 0; i < 3; i++) {
        double s = 0;
        size_t arg = 0;
        for (size_t v = 0; v < 4; v++) {
            s += exp(gsl_matrix_get(c.z, i, v));
            if (gsl_matrix_get(c.z, i, v) > gsl_matrix_get(c.z, i, arg))
                arg = v;
        }
        want += -log(exp(gsl_matrix_get(c.z, i, (size_t)c.t[i])) / s) / 3.0;
        ck_assert_int_eq(pred[i], (int)arg);
    }
    tu_assert_rel(loss, want, 1e-13);
    tu_gradcheck("cross-entropy logits", ce_loss, &c, c.z, dz);
    /* huge logits: the log-sum-exp form must not overflow */
    gsl_matrix_set_all(c.z, 0.0);
    gsl_matrix_set(c.z, 0, 2, 800.0);
    ck_assert(isfinite(op_cross_entropy(c.z, c.t, dz, NULL)));
    gsl_matrix_free(c.z);
    gsl_matrix_free(dz);
    gsl_rng_free(r);
}
END_TEST

START_TEST(embed_gathers_and_scatters)
{
    gsl_matrix *table = gsl_matrix_alloc(4, 3), *out = gsl_matrix_alloc(3, 3);
    gsl_matrix *dtable = gsl_matrix_calloc(4, 3), *dout = gsl_matrix_alloc(3, 3);
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            gsl_matrix_set(table, i, j, 10.0 * (double)i + (double)j);
    const int ids[3] = {2, 0, 2};
    op_embed(out, table, ids, 3);
    ck_assert(gsl_matrix_get(out, 0, 1) == 21.0 && gsl_matrix_get(out, 1, 2) == 2.0);
    gsl_matrix_set_all(dout, 1.0);
    op_embed_backward(dtable, dout, ids, 3);
    ck_assert(gsl_matrix_get(dtable, 2, 0) == 2.0); /* row 2 used twice: accumulated */
    ck_assert(gsl_matrix_get(dtable, 0, 0) == 1.0);
    ck_assert(gsl_matrix_get(dtable, 1, 0) == 0.0);
    gsl_matrix_free(table);
    gsl_matrix_free(out);
    gsl_matrix_free(dtable);
    gsl_matrix_free(dout);
}
END_TEST

/* ---- tasks and randomness ------------------------------------------------------------ */

START_TEST(copy_and_reverse_targets)
{
    batch b;
    ck_assert_int_eq(batch_alloc(&b, 2, 5, 5), 0);
    gsl_rng *r = tu_rng(3);
    task_fill(&task_copy, &b, 2, 5, 7, r);
    for (size_t i = 0; i < 10; i++) {
        ck_assert(b.src[i] >= 0 && b.src[i] < 7);
        ck_assert_int_eq(b.tgt[i], b.src[i]);
    }
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(b.dec_in[i * 5], 7); /* BOS = number of symbols */
        for (size_t t = 1; t < 5; t++)
            ck_assert_int_eq(b.dec_in[i * 5 + t], b.tgt[i * 5 + t - 1]);
    }
    task_fill(&task_reverse, &b, 2, 5, 7, r);
    for (size_t i = 0; i < 2; i++)
        for (size_t t = 0; t < 5; t++)
            ck_assert_int_eq(b.tgt[i * 5 + t], b.src[i * 5 + 4 - t]);
    ck_assert_ptr_eq(task_lookup("copy"), &task_copy);
    ck_assert_ptr_null(task_lookup("sort"));
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

START_TEST(symbols_are_uniform)
{
    /* every symbol appears, each near 1/V of the time */
    batch b;
    ck_assert_int_eq(batch_alloc(&b, 100, 50, 50), 0);
    gsl_rng *r = tu_rng(9);
    task_fill(&task_copy, &b, 100, 50, 10, r);
    size_t count[10] = {0};
    for (size_t i = 0; i < 5000; i++)
        count[b.src[i]]++;
    for (int v = 0; v < 10; v++)
        ck_assert_msg(count[v] > 400 && count[v] < 600, "symbol %d drawn %zu times", v,
                      count[v]);
    batch_free(&b);
    gsl_rng_free(r);
}
END_TEST

START_TEST(rng_streams_reproducible_and_distinct)
{
    rng_streams a, b, c;
    ck_assert_int_eq(rng_open(&a, 42), 0);
    ck_assert_int_eq(rng_open(&b, 42), 0);
    ck_assert_int_eq(rng_open(&c, 43), 0);
    for (int k = 0; k < 100; k++)
        for (int s = 0; s < RNG_N_STREAMS; s++)
            ck_assert_uint_eq(gsl_rng_get(a.s[s]), gsl_rng_get(b.s[s]));
    /* the streams of one seed differ from each other and from another seed's */
    unsigned long x = gsl_rng_get(a.s[RNG_INIT]), y = gsl_rng_get(a.s[RNG_TRAIN]);
    unsigned long z = gsl_rng_get(a.s[RNG_EVAL]);
    ck_assert(x != y && y != z && x != z);
    gsl_rng_set(b.s[RNG_TRAIN], rng_stream_seed(42, RNG_TRAIN));
    ck_assert_uint_ne(gsl_rng_get(b.s[RNG_TRAIN]), gsl_rng_get(c.s[RNG_TRAIN]));
    ck_assert_uint_ne(rng_stream_seed(1, RNG_TRAIN), rng_stream_seed(1, RNG_EVAL));
    for (int k = 0; k < 1000; k++) {
        size_t v = rng_range(a.s[RNG_TRAIN], 4, 8);
        ck_assert(v >= 4 && v <= 8);
    }
    rng_close(&a);
    rng_close(&b);
    rng_close(&c);
}
END_TEST

START_TEST(token_lines)
{
    int x[4];
    size_t n;
    char err[256];
    ck_assert_int_eq(task_parse_tokens("3 1\t4 1\n", x, 4, 10, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 4);
    ck_assert(x[0] == 3 && x[1] == 1 && x[2] == 4 && x[3] == 1);
    static const char *const bad[] = {"", "   \n", "3 x 4", "3 10", "-1", "3 1 4 1 5",
                                      "2.5", "99999999999999999999", "4a"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = '\0';
        ck_assert_msg(task_parse_tokens(bad[k], x, 4, 10, &n, err, sizeof err) == -1,
                      "accepted '%s'", bad[k]);
        ck_assert_msg(strlen(err) > 0, "no message for '%s'", bad[k]);
    }
    task_parse_tokens("3 12", x, 4, 10, &n, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "12"));
    ck_assert_ptr_nonnull(strstr(err, "0..9"));
}
END_TEST

/* ---- optimiser ------------------------------------------------------------------------ */

START_TEST(adam_minimises_a_quadratic)
{
    /* f(w) = Σ a_i (w_i − c_i)², minimum at c */
    const double a[3] = {1.0, 10.0, 0.1}, c[3] = {3.0, -2.0, 0.5};
    double w[3] = {0, 0, 0}, g[3];
    optim o;
    ck_assert_int_eq(optim_alloc(&o, 3, 0.9, 0.999, 1e-8), 0);
    for (int step = 1; step <= 5000; step++) {
        for (int i = 0; i < 3; i++)
            g[i] = 2.0 * a[i] * (w[i] - c[i]);
        optim_adam_step(&o, w, g, optim_lr(0.05, 100, (size_t)step));
    }
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(w[i] - c[i]) < 1e-3, "w[%d] = %g, want %g", i, w[i], c[i]);
    optim_free(&o);
}
END_TEST

START_TEST(adam_first_step_is_lr_times_sign)
{
    /* with bias correction, the first step moves every weight by lr (up to ε) */
    double w[2] = {1.0, 1.0}, g[2] = {1e-3, -50.0};
    optim o;
    ck_assert_int_eq(optim_alloc(&o, 2, 0.9, 0.999, 1e-12), 0);
    optim_adam_step(&o, w, g, 0.01);
    tu_assert_rel(w[0], 0.99, 1e-8);
    tu_assert_rel(w[1], 1.01, 1e-8);
    optim_free(&o);
}
END_TEST

START_TEST(clipping_keeps_direction)
{
    double g[4] = {3.0, 4.0, 0.0, 0.0};
    double norm = optim_clip(g, 4, 1.0);
    tu_assert_rel(norm, 5.0, 1e-15);
    tu_assert_rel(g[0], 0.6, 1e-15);
    tu_assert_rel(g[1], 0.8, 1e-15);
    double h[2] = {0.3, 0.4};
    optim_clip(h, 2, 1.0); /* below the bound: untouched */
    ck_assert(h[0] == 0.3 && h[1] == 0.4);
    double big[2] = {1e200, 1e200}; /* the norm itself must not overflow */
    tu_assert_rel(optim_norm(big, 2), sqrt(2.0) * 1e200, 1e-14);
    double off[2] = {30.0, 40.0};
    optim_clip(off, 2, 0.0); /* 0 disables */
    ck_assert(off[0] == 30.0);
}
END_TEST

START_TEST(warmup_ramps_linearly)
{
    tu_assert_rel(optim_lr(1e-3, 100, 1), 1e-5, 1e-12);
    tu_assert_rel(optim_lr(1e-3, 100, 50), 5e-4, 1e-12);
    ck_assert(optim_lr(1e-3, 100, 100) == 1e-3);
    ck_assert(optim_lr(1e-3, 0, 1) == 1e-3);
}
END_TEST

/* ---- configuration --------------------------------------------------------------------- */

/* A value and whether config_set must accept it. */
typedef struct set_case {
    const char *field, *value;
    int ok;
    const char *in_message; /* a word the error must contain */
} set_case;

static const set_case set_cases[] = {
    {"steps", "100", 1, NULL},
    {"steps", "abc", 0, "steps"},
    {"steps", "12abc", 0, "12abc"},
    {"steps", "", 0, "steps"},
    {"steps", "-5", 0, "-5"},
    {"steps", "0", 0, "out of range"},
    {"steps", "99999999999999999999999", 0, "out of range"},
    {"batch", "0", 0, "batch"},
    {"batch", "65536", 1, NULL},
    {"batch", "65537", 0, "65536"},
    {"hidden", " 12", 0, "hidden"},
    {"lr", "1e-3", 1, NULL},
    {"lr", "0.001x", 0, "lr"},
    {"lr", "nan", 0, "lr"},
    {"lr", "inf", 0, "lr"},
    {"lr", "-1", 0, "out of range"},
    {"lr", "1e999", 0, "lr"},
    {"forget_bias", "-2.5", 1, NULL},
    {"cell", "lstm", 1, NULL},
    {"cell", "rnn", 0, "gru,lstm"},
    {"pos", "learned", 1, NULL},
    {"pos", "rotary", 0, "sinusoidal"},
    {"seed", "4294967295", 1, NULL},
    {"seed", "4294967296", 0, "seed"},
    {"post_ln", "2", 0, "0 or 1"},
    /* one grammar of numbers (config.h): decimal, a sign, point and exponent for reals */
    {"lr", "2.5E-2", 1, NULL},
    {"forget_bias", "-2.5e+1", 1, NULL},
    {"lr", "0x1p-3", 0, "not a number"},
    {"lr", " 0.001", 0, "not a number"},
    {"lr", "0.001 ", 0, "not a number"},
    {"lr", "+0.001", 0, "not a number"},
    {"lr", ".001", 0, "not a number"},
    {"lr", "1.", 0, "not a number"},
    {"lr", "1e", 0, "not a number"},
    {"lr", "INF", 0, "not a number"},
    {"lr", "NaN", 0, "not a number"},
    {"lr", "infinity", 0, "not a number"},
    {"steps", "0x10", 0, "not a whole number"},
    {"steps", "+5", 0, "not a whole number"},
    {"steps", "1e3", 0, "not a whole number"},
};

START_TEST(config_set_table)
{
    const set_case *sc = &set_cases[_i];
    config c;
    char err[256] = "";
    config_defaults(&c);
    const config_field *f = config_find(sc->field);
    ck_assert_ptr_nonnull(f);
    int rc = config_set(&c, f, sc->value, err, sizeof err);
    ck_assert_msg((rc == 0) == sc->ok, "--%s '%s': rc %d, message '%s'", sc->field, sc->value,
                  rc, err);
    if (!sc->ok)
        ck_assert_msg(strstr(err, sc->in_message), "message '%s' lacks '%s'", err,
                      sc->in_message);
}
END_TEST

START_TEST(config_round_trip)
{
    config c, d;
    config_defaults(&c);
    c.hidden = 77;
    c.lr = 0.1 + 0.2; /* needs all 17 digits to come back exact */
    c.post_ln = 1;
    strcpy(c.pos, "none");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(config_write_tsv(&c, f), 0);
    fclose(f);
    char err[256];
    config_defaults(&d);
    ck_assert_int_eq(config_read_text(&d, buf, err, sizeof err), 0);
    ck_assert_int_eq(memcmp(&c, &d, sizeof c), 0);
    /* doubles in their shortest exact form: the defaults read as typed */
    ck_assert_ptr_nonnull(strstr(buf, "\nlr\t0.30000000000000004\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nbeta1\t0.9\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\neps\t1e-08\n"));
    ck_assert_int_eq(config_read_text(&d, "nonsense\t3\n", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "nonsense"));
    ck_assert_int_eq(config_read_text(&d, "hidden 3\n", err, sizeof err), -1);
    free(buf);
    ck_assert_ptr_nonnull(config_find("forget-bias")); /* the flag spelling */
    ck_assert_ptr_null(config_find("forget"));
}
END_TEST

START_TEST(config_relations)
{
    config c;
    char err[256];
    config_defaults(&c);
    c.train_min = 9;
    c.train_max = 8;
    ck_assert_int_eq(config_check(&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--train-len"));
    c.train_min = 4;
    c.train_max = c.max_len + 1;
    ck_assert_int_eq(config_check(&c, err, sizeof err), -1);
    c.train_max = c.max_len;
    ck_assert_int_eq(config_check(&c, err, sizeof err), 0);
}
END_TEST

/* ---- atomic files ---------------------------------------------------------------------- */

START_TEST(afile_replaces_whole_or_not_at_all)
{
    char dir[] = "/tmp/attnlab-afile-XXXXXX", path[256], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.tsv", dir);
    afile a;
    ck_assert_int_eq(afile_open(&a, path, err, sizeof err), 0);
    fputs("first\n", a.f);
    ck_assert(access(path, F_OK) != 0); /* nothing at the path until commit */
    ck_assert_int_eq(afile_commit(&a, err, sizeof err), 0);
    ck_assert_int_eq(afile_open(&a, path, err, sizeof err), 0);
    fputs("second, abandoned half-way", a.f);
    afile_abort(&a);
    FILE *f = fopen(path, "r");
    char line[64] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "first\n"); /* the earlier file survives an abort */
    /* a path under a regular file cannot be opened, even by root */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/x.tsv", path);
    ck_assert_int_eq(afile_open(&a, bad, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot write"));
    ck_assert_int_eq(afile_mkdirs(path, err, sizeof err), -1);
    snprintf(bad, sizeof bad, "%s/a/b/c", dir);
    ck_assert_int_eq(afile_mkdirs(bad, err, sizeof err), 0);
    unlink(path);
    rmdir(bad);
    snprintf(bad, sizeof bad, "%s/a/b", dir);
    rmdir(bad);
    snprintf(bad, sizeof bad, "%s/a", dir);
    rmdir(bad);
    ck_assert_int_eq(rmdir(dir), 0); /* no temporary file left behind */
}
END_TEST

/* The program finds itself without /proc: from argv[0] as a path (relative to the
 * working directory) or as a bare name searched along PATH, made absolute by realpath. */
START_TEST(test_self_path_from_argv0)
{
    const char *prog = getenv("ATTNLAB");
    ck_assert_msg(prog && *prog, "ATTNLAB is not set");
    char want[4096], got[4096];
    ck_assert_ptr_nonnull(realpath(prog, want));
    ck_assert_int_eq(buildinfo_path_from_argv0(prog, got, sizeof got), 0);
    ck_assert_str_eq(got, want);
    /* a bare name: found in the PATH entry that holds it, not in the others */
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s", want);
    *strrchr(dir, '/') = '\0';
    const char *base = strrchr(want, '/') + 1;
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    snprintf(path, sizeof path, "/nonexistent-dir::%s", dir);
    setenv("PATH", path, 1);
    ck_assert_int_eq(buildinfo_path_from_argv0(base, got, sizeof got), 0);
    ck_assert_str_eq(got, want);
    setenv("PATH", "/nonexistent-dir", 1);
    ck_assert_int_eq(buildinfo_path_from_argv0(base, got, sizeof got), -1);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    /* nothing that does not exist, nothing that does not fit */
    ck_assert_int_eq(buildinfo_path_from_argv0("./no/such/program", got, sizeof got), -1);
    ck_assert_int_eq(buildinfo_path_from_argv0(prog, got, 4), -1);
    ck_assert_int_eq(buildinfo_path_from_argv0("", got, sizeof got), -1);
    /* and the whole lookup agrees with the fallback on this system */
    buildinfo_set_argv0(prog);
    ck_assert_int_eq(buildinfo_self_path(got, sizeof got), 0);
}
END_TEST

/* op_normal draws from N(0, sd²): its mean, variance, fourth moment and two-sided tail
 * beyond 2 sd agree with the Gaussian's within five standard errors over 200,000 draws
 * (a sampler with a wrong scale, a wrong transform or a dropped half fails one of them),
 * and the same generator state gives the same draws. */
START_TEST(normal_draws_have_the_moments_of_a_gaussian)
{
    enum { N = 200000 };
    const double sd = 0.5;
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937), *r2 = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    gsl_rng_set(r2, 7);
    op_normal(x, N, sd, r);
    op_normal(y, N, sd, r2);
    ck_assert_int_eq(memcmp(x, y, N * sizeof *x), 0);
    double m1 = 0, m2 = 0, m4 = 0, tail = 0;
    for (size_t i = 0; i < N; i++) {
        const double z = x[i] / sd;
        m1 += z;
        m2 += z * z;
        m4 += z * z * z * z;
        tail += fabs(z) > 2.0;
    }
    m1 /= N;
    m2 /= N;
    m4 /= N;
    tail /= N;
    const double p2 = 0.04550026389635842; /* P(|Z| > 2) */
    ck_assert_msg(fabs(m1) < 5.0 / sqrt(N), "mean %g sd", m1);
    ck_assert_msg(fabs(m2 - 1.0) < 5.0 * sqrt(2.0 / N), "variance %g sd²", m2);
    ck_assert_msg(fabs(m4 - 3.0) < 5.0 * sqrt(96.0 / N), "fourth moment %g sd⁴", m4);
    ck_assert_msg(fabs(tail - p2) < 5.0 * sqrt(p2 * (1 - p2) / N), "tail %g", tail);
    gsl_rng_free(r);
    gsl_rng_free(r2);
    free(x);
    free(y);
}
END_TEST

Suite *make_common_suite(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, arena_layout);
    tcase_add_test(tc, arena_zero_grad_all);
    tcase_add_test(tc, arena_rejects_bad_tables);
    suite_add_tcase(s, tc);
    tc = tcase_create("ops");
    tcase_add_test(tc, softmax_sums_to_one_and_is_stable);
    tcase_add_test(tc, softmax_masks);
    tcase_add_test(tc, softmax_backward_gradcheck);
    tcase_add_test(tc, gradcheck_steps_over_kinks_but_not_errors);
    tcase_add_test(tc, cross_entropy_value_and_gradient);
    tcase_add_test(tc, embed_gathers_and_scatters);
    tcase_add_test(tc, normal_draws_have_the_moments_of_a_gaussian);
    suite_add_tcase(s, tc);
    tc = tcase_create("tasks");
    tcase_add_test(tc, copy_and_reverse_targets);
    tcase_add_test(tc, symbols_are_uniform);
    tcase_add_test(tc, rng_streams_reproducible_and_distinct);
    tcase_add_test(tc, token_lines);
    suite_add_tcase(s, tc);
    tc = tcase_create("optim");
    tcase_add_test(tc, adam_minimises_a_quadratic);
    tcase_add_test(tc, adam_first_step_is_lr_times_sign);
    tcase_add_test(tc, clipping_keeps_direction);
    tcase_add_test(tc, warmup_ramps_linearly);
    suite_add_tcase(s, tc);
    tc = tcase_create("buildinfo");
    tcase_add_test(tc, test_self_path_from_argv0);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_loop_test(tc, config_set_table, 0, (int)(sizeof set_cases / sizeof set_cases[0]));
    tcase_add_test(tc, config_round_trip);
    tcase_add_test(tc, config_relations);
    tcase_add_test(tc, afile_replaces_whole_or_not_at_all);
    suite_add_tcase(s, tc);
    return s;
}
