/* test_crc32.c — the CRC-32 of common/core/crc32.c (suite: crc32).
 *
 * Design. The table-driven crc32_update is held to the values every CRC-32 quotes and, on
 * random buffers and starting values, to crc32_bitwise below: a test-only reference that
 * follows the definition of crc32.h one bit at a time (shift the reflected register
 * right, xor 0xEDB88320 in when the bit that fell out was 1), written apart from the
 * table's macros so that a wrong entry cannot agree with it.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../common/core/crc32.h"
#include "testutil.h"

/* The CRC-32 of the n bytes at buf after those crc summarises, bit by bit: the register
 * starts inverted, each byte enters at its low end, bit 0 first, and the result is
 * inverted again. Several times slower than the table, and the shortest statement of
 * the algorithm. */
static uint32_t crc32_bitwise(uint32_t crc, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int bit = 0; bit < 8; bit++)
            c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

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
    ck_assert_uint_eq(crc32_bitwise(0, digits, 9), 0xCBF43926u);
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
                          crc32_bitwise(start, buf, len));
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
