/* crc32.c — table-driven CRC-32 (see crc32.h).
 *
 * Design. Shifting one bit out of the reflected register is
 *     c = (c >> 1) ^ (0xEDB88320 if the bit shifted out was 1, else 0).
 * Eight such steps depend only on the low byte of c (xor the next message byte), so the
 * table holds, for each of the 256 byte values, the result of eight steps from that value;
 * one byte then costs a lookup, a shift and two xors. The table is built by the compiler
 * from the very same step written as a macro, so it cannot disagree with the definition
 * and needs no run-time initialisation (and no lock for threads).
 */
#include "crc32.h"

#define CRC32_POLY 0xEDB88320u

/* One bit of the register: shift right, and xor the polynomial in when the bit that fell
 * out was 1. The mask 0 - (c & 1) is all ones or all zeros, so c appears only twice per
 * step and the eight nested steps below stay small after macro expansion. */
#define CRC32_STEP(c) (((c) >> 1) ^ (CRC32_POLY & (0u - ((c) & 1u))))
#define CRC32_ENTRY(i)                                                                     \
    CRC32_STEP(CRC32_STEP(CRC32_STEP(CRC32_STEP(                                           \
        CRC32_STEP(CRC32_STEP(CRC32_STEP(CRC32_STEP((uint32_t)(i)))))))))
#define CRC32_ROW4(i)                                                                      \
    CRC32_ENTRY(i), CRC32_ENTRY(i + 1), CRC32_ENTRY(i + 2), CRC32_ENTRY(i + 3)
#define CRC32_ROW16(i)                                                                     \
    CRC32_ROW4(i), CRC32_ROW4(i + 4), CRC32_ROW4(i + 8), CRC32_ROW4(i + 12)
#define CRC32_ROW64(i)                                                                     \
    CRC32_ROW16(i), CRC32_ROW16(i + 16), CRC32_ROW16(i + 32), CRC32_ROW16(i + 48)

/* table[b] = eight register steps starting from b: the contribution of one byte. */
static const uint32_t crc32_table[256] = {
    CRC32_ROW64(0), CRC32_ROW64(64), CRC32_ROW64(128), CRC32_ROW64(192),
};

uint32_t crc32_update(uint32_t crc, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    /* The stored value is the inverted register (see crc32.h), so undo that first. */
    uint32_t c = crc ^ 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc32_table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}
