/* test_crc32.c — the CRC-32 of common/core/crc32.c (suite: crc32).
 *
 * Design. The table-driven crc32_update is held to the values every CRC-32 quotes and to
 * crc32_update_bitwise, which follows the definition one bit at a time (crc32.h), on
 * random buffers and starting values.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../common/core/crc32.h"
#include "testutil.h"

START_TEST(test_crc32_check_values)
{
    /* The check value every CRC-32 (zlib, PNG, gzip) quotes, and two more well-known
     * values. */
    static const char digits[] = "123456789";
    ck_assert_uint_eq(crc32_update(0, digits, 9), 0xCBF43926u);
    ck_assert_uint_eq(crc32_update(0, NULL, 0), 0u);
    ck_assert_uint_eq(crc32_update(0, "a", 1), 0xE8B7BE43u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    ck_assert_uint_eq(crc32_update(0, fox, strlen(fox)), 0x414FA339u);
    ck_assert_uint_eq(crc32_update_bitwise(0, digits, 9), 0xCBF43926u);
    /* Carried from call to call, any split gives the CRC of the whole. */
    for (size_t cut = 0; cut <= 9; cut++) {
        uint32_t c = crc32_update(0, digits, cut);
        ck_assert_uint_eq(crc32_update(c, &digits[cut], 9 - cut), 0xCBF43926u);
    }
}
END_TEST

START_TEST(test_crc32_table_matches_bitwise)
{
    gsl_rng *r = tu_rng(3);
    unsigned char buf[300];
    for (size_t len = 0; len <= sizeof buf; len += 7) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)gsl_rng_uniform_int(r, 256);
        uint32_t start = (uint32_t)gsl_rng_get(r);
        ck_assert_uint_eq(crc32_update(start, buf, len),
                          crc32_update_bitwise(start, buf, len));
    }
    gsl_rng_free(r);
}
END_TEST

Suite *make_crc32_suite(void)
{
    Suite *s = suite_create("crc32");
    TCase *tc = tcase_create("crc32");
    tcase_add_test(tc, test_crc32_check_values);
    tcase_add_test(tc, test_crc32_table_matches_bitwise);
    suite_add_tcase(s, tc);
    return s;
}
