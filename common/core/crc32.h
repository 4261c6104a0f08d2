/* crc32.h — the CRC-32 checksum that zlib, gzip, PNG and Ethernet compute
 * (prefix: crc32_).
 *
 * Design. The message is a polynomial over GF(2) and the checksum is its remainder modulo
 * the generator x^32 + x^26 + x^23 + ... + 1, processed least-significant bit first
 * ("reflected"), which turns the generator into the constant 0xEDB88320. The register
 * starts at all ones and is inverted at the end, so leading and trailing zero bytes still
 * change the result. With those conventions the value of "123456789" is 0xCBF43926, the
 * check value every CRC-32 implementation quotes.
 *
 * Invariant: crc32_update carries the finished value from one call to the next, exactly
 * as zlib's crc32() does, so crc32_update(crc32_update(0, a), b) is the CRC of a followed
 * by b.
 * A file can therefore be checksummed while it is written or read, piece by piece.
 */
#ifndef ATTNLAB_CRC32_H
#define ATTNLAB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Returns the CRC-32 of the bytes already summarised by crc (0 for none) followed by the
 * n bytes at buf. Uses a 256-entry table, one lookup per byte. buf may be NULL when
 * n = 0. */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t n);

#endif
