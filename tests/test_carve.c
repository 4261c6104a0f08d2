/* test_carve.c — the workspace carver of common/core/carve.c (suite: carve).
 *
 * Design. A small layout of its own (a matrix, ints, a vector, a second matrix, sizes
 * taken from its context) stands in for a model's state_layout, so each promise of
 * carve.h is tested apart from any model: counting hands out nothing and only adds up
 * the sizes; carve_reserve allocates exactly what the count gave, zeroed; the views cut
 * from a block follow one another from its start, each a plain (rows, cols) matrix;
 * every size product is checked, and a carver marked by an overflow hands out nothing
 * more and is refused by carve_reserve, which then leaves the block it was given as it
 * was.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../common/core/carve.h"
#include "testutil.h"

/* The sizes the test layout carves at, and the views it took last. */
typedef struct lay {
    size_t r1, c1, ni, nv, r2, c2;
    gsl_matrix_view m1, m2;
    int *ints;
    double *vec;
} lay;

static void test_layout(carver *c, void *ctx)
{
    lay *l = ctx;
    l->m1 = carve_matrix(c, l->r1, l->c1);
    l->ints = carve_ints(c, l->ni);
    l->vec = carve_vector(c, l->nv);
    l->m2 = carve_matrix(c, l->r2, l->c2);
}

/* A layout whose first size product does not fit in size_t. */
static void huge_layout(carver *c, void *ctx)
{
    (void)ctx;
    (void)carve_matrix(c, SIZE_MAX / 2, 3);
    (void)carve_vector(c, 4);
}

/* Counting (no block) hands out empty views and NULL, and adds up every size. */
START_TEST(test_carve_counts_without_block)
{
    lay l = {.r1 = 3, .c1 = 4, .ni = 5, .nv = 7, .r2 = 2, .c2 = 6};
    carver c = {0};
    test_layout(&c, &l);
    ck_assert_ptr_null(l.m1.matrix.data);
    ck_assert_uint_eq(l.m1.matrix.size1, 0);
    ck_assert_uint_eq(l.m1.matrix.size2, 0);
    ck_assert_ptr_null(l.m2.matrix.data);
    ck_assert_ptr_null(l.ints);
    ck_assert_ptr_null(l.vec);
    ck_assert_uint_eq(c.used, 3 * 4 + 7 + 2 * 6);
    ck_assert_uint_eq(c.iused, 5);
    ck_assert_int_eq(c.overflow, 0);
}
END_TEST

/* carve_reserve allocates what the count gave, zeroed; the layout run on a carver over
 * the block gets views that follow one another from its start and end at its end. */
START_TEST(test_carve_reserve_and_views)
{
    lay l = {.r1 = 3, .c1 = 4, .ni = 5, .nv = 7, .r2 = 2, .c2 = 6};
    carve_block blk = {0};
    ck_assert_int_eq(carve_reserve(&blk, test_layout, &l), 0);
    ck_assert_uint_eq(blk.nd, 12 + 7 + 12);
    ck_assert_uint_eq(blk.ni, 5);
    ck_assert_ptr_nonnull(blk.d);
    ck_assert_ptr_nonnull(blk.i);
    for (size_t k = 0; k < blk.nd; k++)
        ck_assert(blk.d[k] == 0.0);
    for (size_t k = 0; k < blk.ni; k++)
        ck_assert_int_eq(blk.i[k], 0);

    carver c = carve_start(&blk);
    test_layout(&c, &l);
    ck_assert_int_eq(c.overflow, 0);
    ck_assert_ptr_eq(l.m1.matrix.data, blk.d);
    ck_assert_uint_eq(l.m1.matrix.size1, 3);
    ck_assert_uint_eq(l.m1.matrix.size2, 4);
    ck_assert_uint_eq(l.m1.matrix.tda, 4); /* a plain view: rows one after the other */
    ck_assert_ptr_eq(l.ints, blk.i);
    ck_assert_ptr_eq(l.vec, blk.d + 12);
    ck_assert_ptr_eq(l.m2.matrix.data, blk.d + 19);
    ck_assert_uint_eq(l.m2.matrix.size1, 2);
    ck_assert_uint_eq(l.m2.matrix.size2, 6);
    ck_assert_uint_eq(l.m2.matrix.tda, 6);
    ck_assert_uint_eq(c.used, blk.nd);
    ck_assert_uint_eq(c.iused, blk.ni);

    /* At smaller sizes the same layout needs less and stays inside the block. */
    lay small = {.r1 = 1, .c1 = 4, .ni = 2, .nv = 3, .r2 = 1, .c2 = 6};
    c = carve_start(&blk);
    test_layout(&c, &small);
    ck_assert_ptr_eq(small.m1.matrix.data, blk.d);
    ck_assert_ptr_eq(small.vec, blk.d + 4);
    ck_assert_ptr_eq(small.m2.matrix.data, blk.d + 7);
    ck_assert_uint_le(c.used, blk.nd);
    ck_assert_uint_le(c.iused, blk.ni);
    carve_free(&blk);
    ck_assert_ptr_null(blk.d);
    ck_assert_ptr_null(blk.i);
    ck_assert_uint_eq(blk.nd, 0);
    ck_assert_uint_eq(blk.ni, 0);
    carve_free(&blk); /* safe on an empty block */
}
END_TEST

/* A second reserve replaces the block with one of the new size; a layout that carves
 * nothing still gets a block (calloc(0) may give NULL, which would read as a failure). */
START_TEST(test_carve_reserve_again)
{
    lay l = {.r1 = 2, .c1 = 2, .ni = 1, .nv = 1, .r2 = 1, .c2 = 1};
    carve_block blk = {0};
    ck_assert_int_eq(carve_reserve(&blk, test_layout, &l), 0);
    ck_assert_uint_eq(blk.nd, 6);
    blk.d[0] = 5.0; /* the new block is zeroed, whatever the old one held */
    l.r2 = 10;
    l.c2 = 10;
    ck_assert_int_eq(carve_reserve(&blk, test_layout, &l), 0);
    ck_assert_uint_eq(blk.nd, 4 + 1 + 100);
    ck_assert(blk.d[0] == 0.0);
    lay none = {0};
    ck_assert_int_eq(carve_reserve(&blk, test_layout, &none), 0);
    ck_assert_uint_eq(blk.nd, 0);
    ck_assert_uint_eq(blk.ni, 0);
    ck_assert_ptr_nonnull(blk.d);
    ck_assert_ptr_nonnull(blk.i);
    carve_free(&blk);
}
END_TEST

/* Every size product is checked: an overflow marks the carver, which then hands out
 * nothing (even over a block), and carve_reserve refuses it, the block left as it was. */
START_TEST(test_carve_overflow)
{
    carver c = {0};
    ck_assert_uint_eq(carve_mul(&c, 6, 7), 42);
    ck_assert_uint_eq(carve_mul(&c, SIZE_MAX, 0), 0);
    ck_assert_int_eq(c.overflow, 0);
    ck_assert_uint_eq(carve_mul(&c, SIZE_MAX / 2 + 1, 2), SIZE_MAX);
    ck_assert_int_eq(c.overflow, 1);

    /* doubles: a count that could not be allocated in bytes is an overflow too */
    c = (carver){0};
    ck_assert_ptr_null(carve_vector(&c, SIZE_MAX / sizeof(double) + 1));
    ck_assert_int_eq(c.overflow, 1);
    c = (carver){0};
    (void)carve_vector(&c, 10);
    ck_assert_ptr_null(carve_vector(&c, SIZE_MAX / sizeof(double) - 9));
    ck_assert_int_eq(c.overflow, 1);
    c = (carver){0};
    ck_assert_ptr_null(carve_ints(&c, SIZE_MAX / sizeof(int) + 1));
    ck_assert_int_eq(c.overflow, 1);
    c = (carver){0};
    gsl_matrix_view v = carve_matrix(&c, SIZE_MAX / 4, 8);
    ck_assert_ptr_null(v.matrix.data);
    ck_assert_uint_eq(v.matrix.size1, 0);
    ck_assert_int_eq(c.overflow, 1);

    /* once marked, a carver over a real block hands out nothing more */
    double d[4];
    int i[4];
    carve_block blk = {.d = d, .i = i, .nd = 4, .ni = 4};
    c = carve_start(&blk);
    ck_assert_ptr_eq(carve_vector(&c, 1), d);
    (void)carve_mul(&c, SIZE_MAX, 2);
    ck_assert_ptr_null(carve_vector(&c, 1));
    ck_assert_ptr_null(carve_ints(&c, 1));
    ck_assert_ptr_null(carve_matrix(&c, 1, 1).matrix.data);

    /* carve_reserve refuses an overflowing layout and keeps the block it was given */
    lay l = {.r1 = 2, .c1 = 3, .ni = 1, .nv = 1, .r2 = 1, .c2 = 1};
    carve_block held = {0};
    ck_assert_int_eq(carve_reserve(&held, test_layout, &l), 0);
    const carve_block before = held;
    held.d[1] = 2.5;
    ck_assert_int_eq(carve_reserve(&held, huge_layout, NULL), -1);
    ck_assert_ptr_eq(held.d, before.d);
    ck_assert_ptr_eq(held.i, before.i);
    ck_assert_uint_eq(held.nd, before.nd);
    ck_assert_uint_eq(held.ni, before.ni);
    ck_assert(held.d[1] == 2.5);
    carve_free(&held);
}
END_TEST

Suite *make_carve_suite(void)
{
    Suite *s = suite_create("carve");
    TCase *tc = tcase_create("carve");
    tcase_add_test(tc, test_carve_counts_without_block);
    tcase_add_test(tc, test_carve_reserve_and_views);
    tcase_add_test(tc, test_carve_reserve_again);
    tcase_add_test(tc, test_carve_overflow);
    suite_add_tcase(s, tc);
    return s;
}
