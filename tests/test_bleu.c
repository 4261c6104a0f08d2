/* test_bleu.c — corpus BLEU-4 (common/core/bleu.c) against worked examples: the clipped
 * unigram precision of Papineni et al. (2002, §2.1), a score worked by hand with its
 * brevity penalty, a perfect and a hopeless hypothesis, and the merging of statistics
 * (the score of a corpus is not the mean of its sentences' scores).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/core/bleu.h"
#include "testutil.h"

/* Words as tokens: each distinct word of s (space-separated) gets its own number, shared
 * across calls through dict. Returns the number of tokens written to out. */
static size_t tokens(const char *s, int *out, char dict[][16], size_t *nd)
{
    size_t n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
        size_t k = 0;
        while (k < *nd && strcmp(dict[k], w) != 0)
            k++;
        if (k == *nd)
            snprintf(dict[(*nd)++], 16, "%s", w);
        out[n++] = (int)k;
    }
    return n;
}

/* The statistics of hyp against ref, as words. */
static bleu_stats stats_of(const char *hyp, const char *ref)
{
    static char dict[64][16];
    size_t nd = 0;
    int h[64], r[64];
    const size_t nh = tokens(hyp, h, dict, &nd), nr = tokens(ref, r, dict, &nd);
    bleu_stats s;
    memset(&s, 0, sizeof s);
    bleu_add(&s, h, nh, r, nr);
    return s;
}

START_TEST(matches_are_clipped_by_the_reference)
{
    /* Papineni et al.'s example: seven "the" against a reference holding two */
    const bleu_stats s = stats_of("the the the the the the the", "the cat is on the mat");
    ck_assert_uint_eq(s.match[0], 2);
    ck_assert_uint_eq(s.total[0], 7);
    ck_assert_uint_eq(s.match[1], 0); /* "the the" is not in the reference */
    ck_assert_uint_eq(s.total[1], 6);
    ck_assert(bleu_score(&s) == 0.0);
}
END_TEST

START_TEST(a_score_worked_by_hand)
{
    /* 5 words against 6: p1 = 4/5, p2 = 3/4, p3 = 2/3, p4 = 1/2, BP = exp(1 - 6/5) */
    const bleu_stats s = stats_of("a b c d e", "a b c d f g");
    const size_t match[4] = {4, 3, 2, 1}, total[4] = {5, 4, 3, 2};
    for (int n = 0; n < 4; n++) {
        ck_assert_uint_eq(s.match[n], match[n]);
        ck_assert_uint_eq(s.total[n], total[n]);
    }
    const double want = exp(-0.2) * pow(0.8 * 0.75 * (2.0 / 3.0) * 0.5, 0.25);
    ck_assert_double_eq_tol(bleu_score(&s), want, 1e-15);
    /* longer than its reference: no penalty */
    const bleu_stats l = stats_of("a b c d e f g", "a b c d e f");
    const double lwant = pow((6.0 / 7) * (5.0 / 6) * (4.0 / 5) * (3.0 / 4), 0.25);
    ck_assert_double_eq_tol(bleu_score(&l), lwant, 1e-15);
}
END_TEST

START_TEST(perfect_hopeless_and_empty)
{
    const bleu_stats p = stats_of("x y z x y z", "x y z x y z");
    ck_assert_double_eq_tol(bleu_score(&p), 1.0, 1e-15);
    const bleu_stats h = stats_of("p q r s", "x y z w");
    ck_assert(bleu_score(&h) == 0.0);
    /* a sentence of three words has no 4-gram: alone it scores 0 */
    const bleu_stats t = stats_of("x y z", "x y z");
    ck_assert_uint_eq(t.total[3], 0);
    ck_assert(bleu_score(&t) == 0.0);
    bleu_stats e;
    memset(&e, 0, sizeof e);
    ck_assert(bleu_score(&e) == 0.0);
}
END_TEST

START_TEST(a_corpus_sums_its_sentences)
{
    bleu_stats a = stats_of("a b c d e", "a b c d f g"), b = stats_of("x y z", "x y z");
    bleu_stats both = a;
    bleu_merge(&both, &b);
    for (int n = 0; n < 4; n++) {
        ck_assert_uint_eq(both.match[n], a.match[n] + b.match[n]);
        ck_assert_uint_eq(both.total[n], a.total[n] + b.total[n]);
    }
    ck_assert_uint_eq(both.hyp_len, 8);
    ck_assert_uint_eq(both.ref_len, 9);
    /* p1 = 7/8, p2 = 5/6, p3 = 3/4, p4 = 1/2, BP = exp(1 - 9/8) */
    const double want = exp(-0.125) * pow((7.0 / 8) * (5.0 / 6) * 0.75 * 0.5, 0.25);
    ck_assert_double_eq_tol(bleu_score(&both), want, 1e-15);
    /* not the mean of the two sentences' scores (the second alone scores 0) */
    ck_assert(fabs(bleu_score(&both) - 0.5 * (bleu_score(&a) + bleu_score(&b))) > 0.1);
}
END_TEST

Suite *make_bleu_suite(void)
{
    Suite *s = suite_create("bleu");
    TCase *tc = tcase_create("examples");
    tcase_add_test(tc, matches_are_clipped_by_the_reference);
    tcase_add_test(tc, a_score_worked_by_hand);
    tcase_add_test(tc, perfect_hopeless_and_empty);
    tcase_add_test(tc, a_corpus_sums_its_sentences);
    suite_add_tcase(s, tc);
    return s;
}
