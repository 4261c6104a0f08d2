/* test_task.c — the tasks and batches of common/core/task*.c (suite: task).
 *
 * Design. The copy and reverse tasks are held to their definitions (targets are the
 * source, or the source reversed; decoder input is BOS then the target shifted), their
 * symbols to a uniform draw, and the token-list parser to what it accepts and refuses.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/task.h"
#include "testutil.h"

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

Suite *make_task_suite(void)
{
    Suite *s = suite_create("task");
    TCase *tc = tcase_create("tasks");
    tcase_add_test(tc, copy_and_reverse_targets);
    tcase_add_test(tc, symbols_are_uniform);
    tcase_add_test(tc, token_lines);
    suite_add_tcase(s, tc);
    return s;
}
