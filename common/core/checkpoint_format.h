/* checkpoint_format.h — the bytes of a checkpoint: an encoder and a checked decoder
 * (prefix: ckpt_; used by checkpoint.c only, whose header checkpoint.h is the public
 * contract).
 *
 * Design. The layout (docs/checkpoint-format.md) is walked in file order through a
 * cursor that sees every byte. The writer's cursor counts and checksums what it emits;
 * run with f == NULL it only counts, so ckpt_save learns the total length the header
 * records from the same code that produces the bytes. The reader's cursor checks every
 * length against the bytes that remain before it reads, skips or allocates anything.
 *
 * Invariants. Writer: pos is the offset of the next byte; after the first failed write
 * err_no is set and nothing more is written (pos still counts). Reader: pos <= end,
 * where end is the offset of the file CRC by the header's recorded length, and size (the
 * bytes really in the file) may be below end + 4 when the file was cut short; every
 * failure is one line "checkpoint PATH: ..." in err.
 */
#ifndef ATTNLAB_CHECKPOINT_FORMAT_H
#define ATTNLAB_CHECKPOINT_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"
#include "tensor.h"

#define CKPT_HEADER_SIZE 28 /* magic 8, version 4, flags 4, file length 8, header CRC 4 */
#define CKPT_HEADER_CRC_AT 24
#define CKPT_CRC_SIZE 4
#define CKPT_FLAG_TRAIN_STATE 0x1u /* a training-state section follows the parameters */
#define CKPT_KNOWN_FLAGS CKPT_FLAG_TRAIN_STATE

/* Limits a loader applies before it allocates anything, and a save before it writes.
 * Each is far above what any model here needs and far below what would exhaust memory. */
#define CKPT_CONFIG_TEXT_MAX 65536u /* bytes of configuration text (a full one is ~400) */
#define CKPT_TENSORS_MAX 65536u     /* entries in the tensor table */
#define CKPT_RNG_STATE_MAX 1048576u /* bytes of one generator state (mt19937: ~5 kB) */
/* The smallest tensor-table entry: name length 8, a 1-byte name, rows 8, cols 8. */
#define CKPT_TABLE_ENTRY_MIN 25u

#if defined(__GNUC__)
#define CKPT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CKPT_PRINTF(fmt, args)
#endif

/* Writes "checkpoint PATH: " and the message into err (n bytes; nothing when err is
 * NULL or n is 0). Returns -1, so that a check can end with `return ckpt_fail(...)`. */
int ckpt_fail(char *err, size_t n, const char *path, const char *fmt, ...)
    CKPT_PRINTF(4, 5);

/* Is every byte of s[0..len-1] printable ASCII (0x20 to 0x7E)? Names are stored with
 * their length, so any byte could be in them; this keeps a crafted name from putting
 * control characters into a message on the user's terminal. */
int ckpt_printable(const char *s, size_t len);

/* ---- writing ---------------------------------------------------------------------- */

/* A cursor over the file being produced. */
typedef struct ckpt_writer {
    FILE *f;      /* NULL: a counting pass that writes nothing */
    uint64_t pos; /* bytes produced so far: the offset of the next byte */
    uint32_t crc; /* CRC-32 of those bytes (real pass only) */
    int err_no;   /* errno of the first failed write; later writes are skipped */
} ckpt_writer;

/* Emits the whole file through w, in order: header (with total as the recorded file
 * length; any value in a counting pass), the model name, the configuration text
 * cfg_text (cfg_len bytes), the tensor table and values of arena a, the training state
 * ts when not NULL, and the file CRC. */
void ckpt_encode(ckpt_writer *w, const char *name, const char *cfg_text, size_t cfg_len,
                 const arena *a, const ckpt_train_state *ts, uint64_t total);

/* ---- reading ---------------------------------------------------------------------- */

/* A cursor over the file being read. Invariant: pos <= end. */
typedef struct ckpt_reader {
    FILE *f;
    const char *path;
    uint64_t pos;  /* offset of the next byte */
    uint64_t end;  /* where the body ends and the CRC starts, by the header's length */
    uint64_t size; /* bytes actually in the file: below end + 4 when truncated */
    char *err;
    size_t n;
} ckpt_reader;

/* Reports that the file ends before len bytes of what at the current offset. -1. */
int ckpt_truncated(ckpt_reader *r, uint64_t len, const char *what);

/* Checks that len bytes of what can be read here: within the body as the header sizes
 * it (otherwise the file contradicts itself), and within the file (otherwise it was cut
 * short). Every length is checked here before it is used or allocated. 0 or -1. */
int ckpt_need(ckpt_reader *r, uint64_t len, const char *what);

/* Reads len bytes of what into dst, or skips them when dst is NULL. 0 or -1. */
int ckpt_get(ckpt_reader *r, void *dst, uint64_t len, const char *what);

/* Reads one little-endian u64 into *v. 0 or -1. */
int ckpt_get_u64(ckpt_reader *r, uint64_t *v, const char *what);

/* Reads count doubles (8 bytes each, little-endian bit patterns) into dst, or skips them
 * when dst is NULL. 0 or -1; a value that is not finite is refused, naming what and its
 * index (ckpt_nonfinite). */
int ckpt_get_doubles(ckpt_reader *r, double *dst, uint64_t count, const char *what);

/* Weights and moments are finite: a NaN or an infinity in a checkpoint could only make
 * every later loss NaN. Finds the first of the count values of x that is not finite;
 * returns 0 when there is none, else 1 with "WHAT holds NaN at index I" (or +inf, -inf)
 * in buf. */
int ckpt_nonfinite(const double *x, size_t count, const char *what, char *buf, size_t n);

/* Reads a name (u64 length, then bytes) into buf (max bytes with the NUL): 1 to max-1
 * printable ASCII characters. 0 or -1. */
int ckpt_get_name(ckpt_reader *r, char *buf, size_t max, const char *what);

/* Reads the header from the start of the file: magic, then version, then the header CRC
 * (in that order, so that each kind of damage gets its own message), then the flags and
 * the recorded length. Sets *flags, r->end and r->pos (the first byte after the
 * header). 0 or -1. */
int ckpt_read_header(ckpt_reader *r, uint32_t *flags);

/* Compares the CRC stored at r->end with the CRC of bytes [0, end), then returns to the
 * first byte after the header. The file must be exactly end + 4 bytes long. 0 or -1. */
int ckpt_verify_crc(ckpt_reader *r);

/* Reads the tensor table into a new array *table (*count entries; free it). Before
 * anything is allocated, the count is checked against the bytes left; each shape is
 * then checked against the bytes left for the values, so a huge tensor is refused
 * before its values would be read or stored anywhere. *values receives the total number
 * of doubles. 0 or -1. */
int ckpt_read_table(ckpt_reader *r, arena_spec **table, uint64_t *count, uint64_t *values);

/* Reads the training-state section of a model with P parameters into ts (allocating its
 * arrays, each only after its bytes were found present), or walks over it when ts is
 * NULL. 0 or -1; on failure ts may hold some arrays (ckpt_train_state_free them). */
int ckpt_read_train_state(ckpt_reader *r, uint64_t P, ckpt_train_state *ts);

#endif
