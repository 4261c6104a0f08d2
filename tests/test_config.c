/* test_config.c — the settings table of common/core/config.c (suite: config).
 *
 * Design. Table-driven: each row of set_cases gives one setting and one value, and
 * whether config_set must accept it; then a configuration written as TSV and read back
 * is the same, and the relations between settings are enforced.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/config.h"
#include "testutil.h"

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

Suite *make_config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_loop_test(tc, config_set_table, 0, (int)(sizeof set_cases / sizeof set_cases[0]));
    tcase_add_test(tc, config_round_trip);
    tcase_add_test(tc, config_relations);
    suite_add_tcase(s, tc);
    return s;
}
