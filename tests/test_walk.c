/* test_walk.c — the parameter walk of common/core/walk.c (suite: walk).
 *
 * Design. A visit function of its own (three tensors, two under a prefix and one
 * without, shapes taken from its context) stands in for a model's visit_params, so each
 * promise of walk.h is tested apart from any model: walk_build gives an arena whose names,
 * shapes and order are the visit's, zeroed, with every view bound where the arena keeps
 * it; walk_count gives the same number of doubles without allocating; a name that does
 * not fit ARENA_NAME_MAX or a count that overflows is refused (-1, or a count of 0), the
 * arena left empty and no view handed out.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../common/core/walk.h"
#include "testutil.h"

/* What the test visit walks, and the views it was handed. */
typedef struct params {
    size_t h, e;          /* enc.Wx (h, e), enc.b (1, h), emb (e, h) */
    const char *name;     /* the last tensor's name ("emb" unless a test changes it) */
    int passes;           /* passes seen */
    gsl_matrix *Wx, *b, *emb;
    gsl_matrix *gWx, *gb, *gemb;
} params;

static void visit(walk *wk, void *ctx)
{
    params *p = ctx;
    walk_tensor(wk, &p->Wx, &p->gWx, "enc", "Wx", p->h, p->e);
    walk_tensor(wk, &p->b, &p->gb, "enc", "b", 1, p->h);
    walk_tensor(wk, &p->emb, &p->gemb, "", p->name, p->e, p->h);
    p->passes++;
}

static params params_of(size_t h, size_t e)
{
    params p;
    memset(&p, 0, sizeof p);
    p.h = h;
    p.e = e;
    p.name = "emb";
    return p;
}

/* Names, shapes, order and offsets are the visit's; the views are the arena's own. */
START_TEST(test_walk_build_layout)
{
    params p = params_of(3, 2);
    arena a;
    ck_assert_int_eq(walk_build(&a, visit, &p), 0);
    ck_assert_uint_eq(a.n_tensors, 3);
    ck_assert_str_eq(a.spec[0].name, "enc.Wx");
    ck_assert_str_eq(a.spec[1].name, "enc.b");
    ck_assert_str_eq(a.spec[2].name, "emb");
    ck_assert_uint_eq(a.spec[0].rows, 3);
    ck_assert_uint_eq(a.spec[0].cols, 2);
    ck_assert_uint_eq(a.spec[1].rows, 1);
    ck_assert_uint_eq(a.spec[1].cols, 3);
    ck_assert_uint_eq(a.spec[2].rows, 2);
    ck_assert_uint_eq(a.spec[2].cols, 3);
    ck_assert_uint_eq(a.size, 6 + 3 + 6);
    /* arena order: each tensor right after the one visited before it */
    ck_assert_ptr_eq(p.Wx->data, a.data);
    ck_assert_ptr_eq(p.b->data, a.data + 6);
    ck_assert_ptr_eq(p.emb->data, a.data + 9);
    ck_assert_ptr_eq(p.gWx->data, a.grad);
    ck_assert_ptr_eq(p.gb->data, a.grad + 6);
    ck_assert_ptr_eq(p.gemb->data, a.grad + 9);
    ck_assert_ptr_eq(p.Wx, arena_w(&a, 0));
    ck_assert_ptr_eq(p.gemb, arena_g(&a, 2));
    ck_assert_uint_eq(p.emb->size1, 2);
    ck_assert_uint_eq(p.emb->size2, 3);
    for (size_t k = 0; k < a.size; k++)
        ck_assert(a.data[k] == 0.0 && a.grad[k] == 0.0);
    ck_assert_int_eq(p.passes, 3);
    arena_free(&a);
}
END_TEST

/* walk_count gives the doubles walk_build allocates, and writes no view. */
START_TEST(test_walk_count)
{
    for (size_t h = 1; h <= 4; h++) {
        params p = params_of(h, h + 2);
        ck_assert_uint_eq(walk_count(visit, &p), h * (h + 2) + h + (h + 2) * h);
        ck_assert_ptr_null(p.Wx);
        ck_assert_ptr_null(p.gemb);
        arena a;
        ck_assert_int_eq(walk_build(&a, visit, &p), 0);
        ck_assert_uint_eq(a.size, walk_count(visit, &p));
        arena_free(&a);
    }
}
END_TEST

/* A name fits when prefix.name has at most ARENA_NAME_MAX - 1 characters; one more is
 * refused by walk_build (the arena left empty) and walk_count (0), never cut short. */
START_TEST(test_walk_long_name)
{
    char name[ARENA_NAME_MAX + 1];
    memset(name, 'n', ARENA_NAME_MAX - 1);
    name[ARENA_NAME_MAX - 1] = '\0'; /* 47 characters: fits */
    params p = params_of(2, 2);
    p.name = name;
    arena a;
    ck_assert_int_eq(walk_build(&a, visit, &p), 0);
    ck_assert_str_eq(a.spec[2].name, name);
    arena_free(&a);
    ck_assert_uint_eq(walk_count(visit, &p), 4 + 2 + 4);

    name[ARENA_NAME_MAX - 1] = 'n'; /* 48: does not fit */
    name[ARENA_NAME_MAX] = '\0';
    p = params_of(2, 2);
    p.name = name;
    memset(&a, 0x5A, sizeof a);
    ck_assert_int_eq(walk_build(&a, visit, &p), -1);
    ck_assert_uint_eq(a.n_tensors, 0);
    ck_assert_ptr_null(a.data);
    ck_assert_ptr_null(p.Wx); /* no view handed out */
    ck_assert_uint_eq(walk_count(visit, &p), 0);
    arena_free(&a); /* safe on the empty arena */
}
END_TEST

/* A count that does not fit in size_t is refused, not wrapped. */
START_TEST(test_walk_overflow)
{
    params p = params_of(SIZE_MAX / 2, 3);
    ck_assert_uint_eq(walk_count(visit, &p), 0);
    arena a;
    ck_assert_int_eq(walk_build(&a, visit, &p), -1);
    ck_assert_uint_eq(a.n_tensors, 0);
    ck_assert_ptr_null(a.data);
    /* each shape fits, their sum does not */
    p = params_of(1, SIZE_MAX / 2);
    ck_assert_uint_eq(walk_count(visit, &p), 0);
}
END_TEST

/* walk_join writes prefix.part, part alone under an empty prefix, cut to the buffer. */
START_TEST(test_walk_join)
{
    char out[16];
    walk_join(out, sizeof out, "enc", "Wx");
    ck_assert_str_eq(out, "enc.Wx");
    walk_join(out, sizeof out, "", "Wx");
    ck_assert_str_eq(out, "Wx");
    walk_join(out, sizeof out, "dec.0", "attn");
    ck_assert_str_eq(out, "dec.0.attn");
    walk_join(out, 6, "layer", "Wq");
    ck_assert_str_eq(out, "layer");
}
END_TEST

Suite *make_walk_suite(void)
{
    Suite *s = suite_create("walk");
    TCase *tc = tcase_create("walk");
    tcase_add_test(tc, test_walk_build_layout);
    tcase_add_test(tc, test_walk_count);
    tcase_add_test(tc, test_walk_long_name);
    tcase_add_test(tc, test_walk_overflow);
    tcase_add_test(tc, test_walk_join);
    suite_add_tcase(s, tc);
    return s;
}
