/* test_align.c — attention's alignment scored over a test set (common/core/align.c) and
 * `attnlab eval --alignment`.
 *
 * Design. A stand-in model whose trace sends maps the test chooses (the right diagonal,
 * its mirror, a map of another shape, a map over its own outputs) takes the place of a
 * trained one, so each score is known in advance: align_run must find the hits and the
 * weight the maps put on the source symbol each output repeats, ignore what is not a
 * map of outputs over the source, and refuse a task without a right place to attend.
 */
#include <check.h>
#include <gsl/gsl_matrix.h>
#include <string.h>

#include "../common/core/align.h"
#include "../common/core/config.h"
#include "testcli.h"
#include "testutil.h"

/* How the stand-in's "alignment" map is drawn: weight w on the source position of
 * copy's answer (t), or on reverse's (L-1-t), the rest spread evenly. */
enum { DIAGONAL, MIRROR };
static int fake_shape;
static const double fake_w = 0.7;

static int fake_reserve(model *m, size_t B, size_t Ts, size_t Tt)
{
    (void)m, (void)B, (void)Ts, (void)Tt;
    return 0;
}

static int fake_trace(model *m, const int *src, size_t Ts, size_t Tt, int *out,
                      trace_sink sink, void *ctx)
{
    (void)m;
    gsl_matrix *a = gsl_matrix_alloc(Tt, Ts), *self = gsl_matrix_alloc(Tt, Tt);
    gsl_matrix_set_all(a, (1 - fake_w) / (double)(Ts - 1));
    gsl_matrix_set_all(self, 1.0 / (double)Tt);
    for (size_t t = 0; t < Tt; t++) {
        gsl_matrix_set(a, t, fake_shape == DIAGONAL ? t : Ts - 1 - t, fake_w);
        out[t] = src[t];
    }
    int rc = sink(ctx, "alignment", a, "tgt", "src") ||
             sink(ctx, "dec_self", self, "tgt", "tgt_in") || /* not over the source */
             sink(ctx, "alignment.T", a, "src", "tgt");      /* nor the other way */
    gsl_matrix_free(a);
    gsl_matrix_free(self);
    return rc;
}

static const model_ops fake_ops = {.name = "fake", .reserve = fake_reserve,
                                   .trace = fake_trace};

static void fake_model(model *m)
{
    memset(m, 0, sizeof *m);
    m->ops = &fake_ops;
    config_defaults(&m->cfg);
}

START_TEST(a_diagonal_map_is_right_on_copy_and_wrong_on_reverse)
{
    model m;
    fake_model(&m);
    const size_t lens[] = {5, 8};
    align_result r[8];
    size_t nr;
    char err[256];
    fake_shape = DIAGONAL;
    ck_assert_int_eq(align_run(&m, &task_copy, lens, 2, 7, 1, r, 8, &nr, err, sizeof err), 0);
    ck_assert_uint_eq(nr, 2); /* one map per length: the others are not outputs × source */
    for (size_t k = 0; k < nr; k++) {
        ck_assert_str_eq(r[k].name, "alignment");
        ck_assert_uint_eq(r[k].len, lens[k]);
        ck_assert_uint_eq(r[k].examples, 7);
        ck_assert_uint_eq(r[k].rows, 7 * lens[k]);
        ck_assert_uint_eq(r[k].hits, r[k].rows);
        tu_assert_rel(r[k].weight, fake_w * (double)r[k].rows, 1e-12);
    }
    /* on reverse the diagonal is right only at the middle of an odd length */
    ck_assert_int_eq(align_run(&m, &task_reverse, lens, 2, 7, 1, r, 8, &nr, err, sizeof err), 0);
    ck_assert_uint_eq(nr, 2);
    ck_assert_uint_eq(r[0].hits, 7);
    ck_assert_uint_eq(r[1].hits, 0);
    fake_shape = MIRROR;
    ck_assert_int_eq(align_run(&m, &task_reverse, lens, 2, 3, 1, r, 8, &nr, err, sizeof err), 0);
    ck_assert_uint_eq(r[1].hits, r[1].rows);
}
END_TEST

START_TEST(what_cannot_be_scored_is_refused)
{
    model m;
    fake_model(&m);
    align_result r[1];
    size_t nr;
    char err[256];
    const size_t too_long[] = {100000};
    ck_assert_int_eq(align_run(&m, &task_copy, too_long, 1, 1, 1, r, 1, &nr, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "max_len"));
    /* two lengths, one map each, room for one */
    const size_t lens[] = {4, 6};
    fake_shape = DIAGONAL;
    ck_assert_int_eq(align_run(&m, &task_copy, lens, 2, 1, 1, r, 1, &nr, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "room"));
    /* a task whose outputs are not each one source symbol */
    task none = task_copy;
    none.source_of = NULL;
    ck_assert_int_eq(align_run(&m, &none, lens, 1, 1, 1, r, 1, &nr, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "accepted: copy, reverse"));
}
END_TEST

START_TEST(eval_refuses_alignment_with_input)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", "/nonexistent.ckpt",
                                            "--alignment", "--input", "-", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--alignment scores a test set"));
}
END_TEST

Suite *make_align_suite(void)
{
    Suite *s = suite_create("align");
    TCase *tc = tcase_create("align");
    tcase_add_test(tc, a_diagonal_map_is_right_on_copy_and_wrong_on_reverse);
    tcase_add_test(tc, what_cannot_be_scored_is_refused);
    tcase_add_test(tc, eval_refuses_alignment_with_input);
    suite_add_tcase(s, tc);
    return s;
}
