/* test_rng.c — the three seeded streams of common/core/rng.c (suite: rng).
 *
 * Design. The same seed gives the same draws; the streams of one seed differ from each
 * other and from those of another seed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/rng.h"
#include "testutil.h"

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

Suite *make_rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("tasks");
    tcase_add_test(tc, rng_streams_reproducible_and_distinct);
    suite_add_tcase(s, tc);
    return s;
}
