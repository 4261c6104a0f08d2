/* test_actstat.c — activations summed over a test set (common/core/actstat.c) and
 * `attnlab eval --activations [--untrained]`.
 *
 * Design. A stand-in model whose trace sends matrices of values the test chooses takes
 * the place of a trained one, so every sum is known in advance: actstat_run must add up
 * only the matrices the model declares activations (not an attention map, not a matrix
 * of no declared kind), count the values at or above 0.95 and at or below 0.05, keep
 * the range, and refuse what it cannot measure. Then the command on two tiny LSTM runs
 * of one seed: untrained, their sums are the same (the weights training started from),
 * trained they differ, and a run that barely moved its weights gives the untrained sums.
 */
#include <check.h>
#include <gsl/gsl_matrix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/core/actstat.h"
#include "../common/core/config.h"
#include "testcli.h"
#include "testreport.h"
#include "testutil.h"

static int fake_reserve(model *m, size_t B, size_t Ts, size_t Tt)
{
    (void)m, (void)B, (void)Ts, (void)Tt;
    return 0;
}

/* Sends "act.g" (Ts x 2: 0.97 in column 0, 0.01 in column 1, 0.5 in row 0), an
 * attention map and a matrix of no declared kind, both filled with 9. */
static int fake_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out,
                      trace_sink sink, void *ctx)
{
    (void)m;
    gsl_matrix *g = gsl_matrix_alloc(Ts, 2), *a = gsl_matrix_alloc(Tt, Ts);
    for (size_t i = 0; i < Ts; i++) {
        gsl_matrix_set(g, i, 0, i == 0 ? 0.5 : 0.97);
        gsl_matrix_set(g, i, 1, i == 0 ? 0.5 : 0.01);
    }
    gsl_matrix_set_all(a, 9.0);
    for (size_t t = 0; t < Tt; t++)
        out[t] = src[t];
    const int rc = sink(ctx, "act.g", g, "src", "unit") || sink(ctx, "map", a, "tgt", "src") ||
                   sink(ctx, "loose", a, "tgt", "src");
    gsl_matrix_free(g);
    gsl_matrix_free(a);
    return rc;
}

static const model_trace_kind fake_kinds[] = {
    {"act.", "gates", MODEL_TRACE_ACTIVATION, 0, NULL, NULL},
    {"map", "attention_rnn", MODEL_TRACE_ATTENTION, 0, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

static const model_ops fake_ops = {.name = "fake", .reserve = fake_reserve,
                                   .trace = fake_trace, .traces = fake_kinds};

START_TEST(only_activations_are_summed)
{
    model m;
    memset(&m, 0, sizeof m);
    m.ops = &fake_ops;
    config_defaults(&m.cfg);
    const size_t lens[] = {5, 8};
    actstat_result r[4];
    size_t nr;
    char err[256];
    ck_assert_int_eq(actstat_run(&m, &task_copy, lens, 2, 3, 1, r, 4, &nr, err, sizeof err), 0);
    ck_assert_uint_eq(nr, 2); /* one matrix per length: the map and "loose" are left out */
    for (size_t k = 0; k < nr; k++) {
        const double L = (double)lens[k];
        ck_assert_str_eq(r[k].name, "act.g");
        ck_assert_uint_eq(r[k].len, lens[k]);
        ck_assert_uint_eq(r[k].examples, 3);
        ck_assert_uint_eq(r[k].values, 3 * 2 * lens[k]);
        ck_assert_uint_eq(r[k].hi, 3 * (lens[k] - 1));
        ck_assert_uint_eq(r[k].lo, 3 * (lens[k] - 1));
        tu_assert_rel(r[k].sum, 3 * (1.0 + (L - 1) * 0.98), 1e-12);
        tu_assert_rel(r[k].min, 0.01, 1e-15);
        tu_assert_rel(r[k].max, 0.97, 1e-15);
    }
    /* the file, for one result: mean and shares */
    char path[] = "/tmp/attnlab-actstat-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w+");
    ck_assert_int_eq(actstat_write_tsv(f, "fake", "trained", r, 1), 0);
    rewind(f);
    char head[256], row[256];
    ck_assert_ptr_nonnull(fgets(head, sizeof head, f));
    ck_assert_ptr_nonnull(fgets(row, sizeof row, f));
    fclose(f);
    remove(path);
    ck_assert_str_eq(head, "model\tweights\tlen\tmatrix\texamples\tvalues\tmean\tsd\tshare_hi"
                           "\tshare_lo\tmin\tmax\n");
    ck_assert_msg(strncmp(row, "fake\ttrained\t5\tact.g\t3\t30\t0.492000\t", 32) == 0 &&
                      strstr(row, "\t0.400000\t0.400000\t0.010000\t0.970000\n"),
                  "row: %s", row);
}
END_TEST

START_TEST(what_cannot_be_summed_is_refused)
{
    model m;
    memset(&m, 0, sizeof m);
    m.ops = &fake_ops;
    config_defaults(&m.cfg);
    actstat_result r[1];
    size_t nr;
    char err[256];
    const size_t too_long[] = {100000}, lens[] = {4, 6};
    ck_assert_int_eq(actstat_run(&m, &task_copy, too_long, 1, 1, 1, r, 1, &nr, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "max_len"));
    ck_assert_int_eq(actstat_run(&m, &task_copy, lens, 2, 1, 1, r, 1, &nr, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "room"));
    model_ops blind = fake_ops;
    blind.trace = NULL;
    m.ops = &blind;
    ck_assert_int_eq(actstat_run(&m, &task_copy, lens, 1, 1, 1, r, 1, &nr, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no trace"));
    run_out o;
    cli_run(&o, NULL, (const char *const[]){"eval", "--checkpoint", "/nonexistent.ckpt",
                                            "--activations", "--input", "-", NULL});
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "--activations sums a test set"));
}
END_TEST

/* The rows of eval --activations on dir/model.ckpt (untrained or not), written into out,
 * with the weights column cut out; allocated. */
static char *sums_of(const char *dir, const char *out, int untrained)
{
    char ck[256], file[256];
    snprintf(ck, sizeof ck, "%s/model.ckpt", dir);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "4,5",
                                            "--samples", "6", "--activations", "--out", out,
                                            untrained ? "--untrained" : NULL, NULL});
    ck_assert_msg(r.status == 0, "eval: %s", r.err);
    snprintf(file, sizeof file, "%s/eval_activations.tsv", out);
    char *s = ru_slurp(file, NULL);
    ck_assert_ptr_nonnull(s);
    const char *word = untrained ? "\tuntrained\t" : "\ttrained\t";
    ck_assert_msg(strstr(s, word) && strstr(s, "enc.gate_f"), "%s", s);
    for (char *p; (p = strstr(s, word));) /* the weights column, cut */
        memmove(p, p + strlen(word) - 1, strlen(p + strlen(word) - 1) + 1);
    return s;
}

START_TEST(untrained_sums_are_where_training_started)
{
    char base[128], a[160], b[160], c[160], out[200];
    snprintf(base, sizeof base, "/tmp/attnlab-actstat-%ld", (long)getpid());
    snprintf(a, sizeof a, "%s/short", base);
    snprintf(b, sizeof b, "%s/long", base);
    snprintf(c, sizeof c, "%s/still", base);
    cli_tiny_lstm_run(a, "10", "0.003");
    cli_tiny_lstm_run(b, "40", "0.003");
    cli_tiny_lstm_run(c, "1", "1e-12");
    char *s[5];
    const char *dirs[5] = {a, b, a, b, c};
    for (int k = 0; k < 5; k++) {
        snprintf(out, sizeof out, "%s/e%d", base, k);
        s[k] = sums_of(dirs[k], out, k < 2);
    }
    ck_assert_msg(strcmp(s[0], s[1]) == 0, "the untrained sums of two runs of one seed differ");
    ck_assert_msg(strcmp(s[2], s[3]) != 0, "10 and 40 steps of training left the same sums");
    /* one step at 1e-12 moves no weight by more than about 1e-12: printed to 6 digits, its
     * trained sums are those of the weights training started from */
    ck_assert_msg(strcmp(s[4], s[0]) == 0, "--untrained is not the model training started from");
    for (int k = 0; k < 5; k++)
        free(s[k]);
    cli_remove(base);
}
END_TEST

Suite *make_actstat_suite(void)
{
    Suite *s = suite_create("actstat");
    TCase *tc = tcase_create("actstat");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, only_activations_are_summed);
    tcase_add_test(tc, what_cannot_be_summed_is_refused);
    tcase_add_test(tc, untrained_sums_are_where_training_started);
    suite_add_tcase(s, tc);
    return s;
}
