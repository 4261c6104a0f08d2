/* checkpoint_format.c — encoding a checkpoint and decoding it without trusting it (see
 * checkpoint_format.h, and docs/checkpoint-format.md for the layout byte by byte).
 *
 * Design. Every integer is composed from, and read into, its value with shifts (put_le,
 * get_le), so the file is the same on any machine; every double goes through its 64-bit
 * pattern, so values come back bit for bit. Doubles are converted DOUBLES_PER_CHUNK at a
 * time through a stack buffer: one fwrite/fread per chunk, no allocation.
 *
 * The reader decides in this order, so that each kind of damage gets its own message
 * (checkpoint.c drives the order; the steps are here):
 *   1. magic, then version: a later version may lay out everything after it differently;
 *   2. the header's own CRC: from here on the recorded total length is trusted;
 *   3. a file shorter than that length is truncated; a longer one has trailing bytes;
 *   4. the CRC of the whole file: any flipped bit after the version is corruption;
 *   5. the contents, each length still checked against the bytes that remain, because
 *      a CRC proves that the file is as it was written, not that whoever wrote it wrote
 *      sensible sizes.
 */
#include "checkpoint_format.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "crc32.h"

#define DOUBLES_PER_CHUNK 512 /* doubles encoded or decoded per fwrite/fread */

/* The format stores IEEE-754 binary64 values through their 64-bit pattern; a double of
 * another width could not be read back bit-identically. */
_Static_assert(sizeof(double) == sizeof(uint64_t), "doubles must be 64-bit");

static const unsigned char ckpt_magic[8] = {'A', 'T', 'T', 'N', 'C', 'K', 'P', 'T'};

/* ---- messages ------------------------------------------------------------------------ */

/* Writes "checkpoint PATH: " and the message into err (n bytes). Returns -1 so that a
 * check can end with `return ckpt_fail(...)`. */
int ckpt_fail(char *err, size_t n, const char *path, const char *fmt, ...)
{
    if (!err || n == 0)
        return -1;
    int k = snprintf(err, n, "checkpoint %s: ", path ? path : "(no path)");
    if (k >= 0 && (size_t)k < n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, n - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Names are stored with their length, so any byte could be in them; allowing only
 * printable ASCII keeps a crafted name from putting control characters into a message
 * on the user's terminal. */
int ckpt_printable(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7E)
            return 0;
    return 1;
}

/* ---- little-endian encoding ---------------------------------------------------------- */

/* Byte i of the field is bits 8i..8i+7 of the value, whatever the machine's own order. */
static void put_le(unsigned char *p, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* ---- writing ------------------------------------------------------------------------- */

static void put_bytes(ckpt_writer *w, const void *p, size_t len)
{
    w->pos += len;
    if (!w->f || w->err_no)
        return;
    w->crc = crc32_update(w->crc, p, len);
    errno = 0;
    if (fwrite(p, 1, len, w->f) != len)
        w->err_no = errno ? errno : EIO;
}

static void put_u32(ckpt_writer *w, uint32_t v)
{
    unsigned char b[4];
    put_le(b, v, 4);
    put_bytes(w, b, 4);
}

static void put_u64(ckpt_writer *w, uint64_t v)
{
    unsigned char b[8];
    put_le(b, v, 8);
    put_bytes(w, b, 8);
}

/* A name: its length in bytes, then the bytes, no terminating NUL. */
static void put_name(ckpt_writer *w, const char *s)
{
    size_t len = strlen(s);
    put_u64(w, len);
    put_bytes(w, s, len);
}

/* Doubles x (count) as their 64-bit patterns, least significant byte first. */
static void put_doubles(ckpt_writer *w, const double *x, size_t count)
{
    if (!w->f) { /* the counting pass needs only the length */
        w->pos += (uint64_t)count * 8;
        return;
    }
    unsigned char buf[DOUBLES_PER_CHUNK * 8];
    for (size_t done = 0; done < count;) {
        size_t k = count - done < DOUBLES_PER_CHUNK ? count - done : DOUBLES_PER_CHUNK;
        for (size_t i = 0; i < k; i++) {
            uint64_t bits;
            memcpy(&bits, &x[done + i], 8);
            put_le(buf + 8 * i, bits, 8);
        }
        put_bytes(w, buf, 8 * k);
        done += k;
    }
}

/* Emits the whole file in order. total is the file length recorded in the header (any
 * value in the counting pass, which only measures). */
void ckpt_encode(ckpt_writer *w, const char *name, const char *cfg_text, size_t cfg_len,
                 const arena *a, const ckpt_train_state *ts, uint64_t total)
{
    unsigned char head[CKPT_HEADER_CRC_AT];
    memcpy(head, ckpt_magic, sizeof ckpt_magic);
    put_le(head + 8, CKPT_FORMAT_VERSION, 4);
    put_le(head + 12, ts ? CKPT_FLAG_TRAIN_STATE : 0, 4);
    put_le(head + 16, total, 8);
    put_bytes(w, head, sizeof head);
    /* The header carries its own CRC so a reader can trust the total length before it
     * has read the rest, and so tell a truncated file from a corrupt one. */
    put_u32(w, crc32_update(0, head, sizeof head));

    put_name(w, name);
    put_u64(w, cfg_len);
    put_bytes(w, cfg_text, cfg_len);

    put_u64(w, a->n_tensors);
    for (size_t k = 0; k < a->n_tensors; k++) {
        put_name(w, a->spec[k].name);
        put_u64(w, a->spec[k].rows);
        put_u64(w, a->spec[k].cols);
    }
    /* The tensors tile the block in table order (tensor.h), so one pass writes them all. */
    put_doubles(w, a->data, a->size);

    if (ts) {
        put_u64(w, ts->step);
        put_u64(w, ts->n);
        put_doubles(w, ts->m, ts->n);
        put_doubles(w, ts->v, ts->n);
        put_u64(w, CKPT_RNG_STREAMS);
        for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
            put_u64(w, ts->rng_size[k]);
            put_bytes(w, ts->rng[k], ts->rng_size[k]);
        }
    }
    put_u32(w, w->crc); /* covers every byte before it, the header included */
}


/* ---- reading ------------------------------------------------------------------------- */

int ckpt_truncated(ckpt_reader *r, uint64_t len, const char *what)
{
    return ckpt_fail(r->err, r->n, r->path,
                     "truncated (expected %" PRIu64 " bytes of %s at "
                     "offset %" PRIu64 ", file ends at %" PRIu64 ")",
                     len, what, r->pos, r->size);
}

/* Checks that len bytes of what can be read here: within the body as the header sizes
 * it (otherwise the file contradicts itself), and within the file (otherwise it was cut
 * short). Every length is checked here before it is used or allocated. */
int ckpt_need(ckpt_reader *r, uint64_t len, const char *what)
{
    if (len > r->end - r->pos)
        return ckpt_fail(r->err, r->n, r->path,
                         "malformed: %s (%" PRIu64 " bytes at offset %" PRIu64
                         ") runs past the end of the data at offset %" PRIu64,
                         what, len, r->pos, r->end);
    if (len > r->size - r->pos)
        return ckpt_truncated(r, len, what);
    return 0;
}

static int read_error(ckpt_reader *r)
{
    if (ferror(r->f))
        return ckpt_fail(r->err, r->n, r->path, "cannot read at offset %" PRIu64 " (%s)",
                         r->pos, strerror(errno));
    return ckpt_fail(r->err, r->n, r->path,
                     "the file changed while it was read (offset %" PRIu64 ")", r->pos);
}

/* Reads len bytes of what into dst, or skips them when dst is NULL. */
int ckpt_get(ckpt_reader *r, void *dst, uint64_t len, const char *what)
{
    if (ckpt_need(r, len, what) != 0)
        return -1;
    if (dst) {
        if (fread(dst, 1, (size_t)len, r->f) != len)
            return read_error(r);
    } else if (fseeko(r->f, (off_t)len, SEEK_CUR) != 0) {
        return read_error(r);
    }
    r->pos += len;
    return 0;
}

int ckpt_get_u64(ckpt_reader *r, uint64_t *v, const char *what)
{
    unsigned char b[8];
    if (ckpt_get(r, b, 8, what) != 0)
        return -1;
    *v = get_le(b, 8);
    return 0;
}

/* Reads count doubles of what into dst, or skips them when dst is NULL. */
int ckpt_get_doubles(ckpt_reader *r, double *dst, uint64_t count, const char *what)
{
    if (count > UINT64_MAX / 8)
        return ckpt_fail(r->err, r->n, r->path, "malformed: %s holds %" PRIu64 " values",
                         what, count);
    if (!dst)
        return ckpt_get(r, NULL, count * 8, what);
    if (ckpt_need(r, count * 8, what) != 0)
        return -1;
    unsigned char buf[DOUBLES_PER_CHUNK * 8];
    for (uint64_t done = 0; done < count;) {
        size_t k = DOUBLES_PER_CHUNK;
        if (count - done < k)
            k = (size_t)(count - done);
        if (ckpt_get(r, buf, 8 * k, what) != 0)
            return -1;
        for (size_t i = 0; i < k; i++) {
            uint64_t bits = get_le(buf + 8 * i, 8);
            memcpy(&dst[done + i], &bits, 8);
        }
        done += k;
    }
    char why[160];
    if (ckpt_nonfinite(dst, (size_t)count, what, why, sizeof why))
        return ckpt_fail(r->err, r->n, r->path, "%s (accepted: finite numbers only)", why);
    return 0;
}

int ckpt_nonfinite(const double *x, size_t count, const char *what, char *buf, size_t n)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) {
            snprintf(buf, n, "%s holds %s at index %zu", what,
                     isnan(x[i]) ? "NaN" : x[i] > 0 ? "+inf" : "-inf", i);
            return 1;
        }
    return 0;
}

/* Reads a name (length, then bytes) into buf (max bytes with the NUL). */
int ckpt_get_name(ckpt_reader *r, char *buf, size_t max, const char *what)
{
    uint64_t len;
    char len_what[112];
    snprintf(len_what, sizeof len_what, "length of %s", what);
    if (ckpt_get_u64(r, &len, len_what) != 0)
        return -1;
    if (len == 0 || len >= max)
        return ckpt_fail(r->err, r->n, r->path,
                         "%s has length %" PRIu64 " (accepted: 1 to %zu)", what, len,
                         max - 1);
    if (ckpt_get(r, buf, len, what) != 0)
        return -1;
    buf[len] = '\0';
    if (!ckpt_printable(buf, (size_t)len))
        return ckpt_fail(r->err, r->n, r->path, "%s is not printable ASCII", what);
    return 0;
}

/* Checks magic, version and the header CRC, and sets flags, end and pos. */
int ckpt_read_header(ckpt_reader *r, uint32_t *flags)
{
    unsigned char h[CKPT_HEADER_SIZE];
    size_t have = r->size < CKPT_HEADER_SIZE ? (size_t)r->size : CKPT_HEADER_SIZE;
    if (fread(h, 1, have, r->f) != have)
        return read_error(r);
    /* Identity first: a file that does not begin with the magic is not a checkpoint,
     * however short; one that begins with part of it is a checkpoint cut short. */
    if (memcmp(h, ckpt_magic, have < 8 ? have : 8) != 0)
        return ckpt_fail(r->err, r->n, r->path, "not an attnlab checkpoint (bad magic)");
    if (have < 12)
        return ckpt_truncated(r, CKPT_HEADER_SIZE, "header");
    uint32_t version = (uint32_t)get_le(h + 8, 4);
    if (version != CKPT_FORMAT_VERSION)
        return ckpt_fail(r->err, r->n, r->path,
                         "format version %" PRIu32 " is not supported "
                         "(this build reads version %d)",
                         version, CKPT_FORMAT_VERSION);
    if (have < CKPT_HEADER_SIZE)
        return ckpt_truncated(r, CKPT_HEADER_SIZE, "header");
    uint32_t stored = (uint32_t)get_le(h + CKPT_HEADER_CRC_AT, 4);
    uint32_t computed = crc32_update(0, h, CKPT_HEADER_CRC_AT);
    if (stored != computed)
        return ckpt_fail(r->err, r->n, r->path,
                         "CRC mismatch in the header (stored 0x%08" PRIX32
                         ", computed 0x%08" PRIX32 "): the file is corrupt",
                         stored, computed);
    *flags = (uint32_t)get_le(h + 12, 4);
    if (*flags & ~CKPT_KNOWN_FLAGS)
        return ckpt_fail(r->err, r->n, r->path,
                         "uses features this build does not know (flags "
                         "0x%" PRIX32 ")",
                         *flags);
    uint64_t length = get_le(h + 16, 8);
    if (length < CKPT_HEADER_SIZE + CKPT_CRC_SIZE)
        return ckpt_fail(r->err, r->n, r->path,
                         "malformed: the header records a length of %" PRIu64
                         " bytes, shorter than a header and a CRC",
                         length);
    r->pos = CKPT_HEADER_SIZE;
    r->end = length - CKPT_CRC_SIZE;
    return 0;
}

/* Compares the CRC stored at end with the CRC of bytes [0, end), then returns to the
 * first byte after the header. The file is exactly end + 4 bytes long here. */
int ckpt_verify_crc(ckpt_reader *r)
{
    if (fseeko(r->f, 0, SEEK_SET) != 0)
        return read_error(r);
    unsigned char buf[16384];
    uint32_t crc = 0;
    for (r->pos = 0; r->pos < r->end;) {
        uint64_t left = r->end - r->pos;
        size_t k = left < sizeof buf ? (size_t)left : sizeof buf;
        if (fread(buf, 1, k, r->f) != k)
            return read_error(r);
        crc = crc32_update(crc, buf, k);
        r->pos += k;
    }
    if (fread(buf, 1, CKPT_CRC_SIZE, r->f) != CKPT_CRC_SIZE)
        return read_error(r);
    uint32_t stored = (uint32_t)get_le(buf, 4);
    if (stored != crc)
        return ckpt_fail(r->err, r->n, r->path,
                         "CRC mismatch (stored 0x%08" PRIX32 ", computed "
                         "0x%08" PRIX32 "): the file is corrupt",
                         stored, crc);
    if (fseeko(r->f, CKPT_HEADER_SIZE, SEEK_SET) != 0)
        return read_error(r);
    r->pos = CKPT_HEADER_SIZE;
    return 0;
}

/* Reads the tensor table into a new array (count entries, free it). Before anything is
 * allocated, the count is checked against the bytes left; each shape is then checked
 * against the bytes left for the values, so a huge tensor is refused before its values
 * would be read or stored anywhere. *values receives the total number of doubles. */
int ckpt_read_table(ckpt_reader *r, arena_spec **table, uint64_t *count, uint64_t *values)
{
    if (ckpt_get_u64(r, count, "tensor count") != 0)
        return -1;
    if (*count == 0 || *count > CKPT_TENSORS_MAX ||
        *count > (r->end - r->pos) / CKPT_TABLE_ENTRY_MIN)
        return ckpt_fail(r->err, r->n, r->path,
                         "malformed: tensor count %" PRIu64 " is "
                         "impossible (at most %u, and the %" PRIu64
                         " bytes left hold at most %" PRIu64 ")",
                         *count, CKPT_TENSORS_MAX, r->end - r->pos,
                         (r->end - r->pos) / CKPT_TABLE_ENTRY_MIN);
    *table = calloc((size_t)*count, sizeof **table);
    if (!*table)
        return ckpt_fail(r->err, r->n, r->path, "out of memory reading the tensor table");
    uint64_t bytes = 0; /* of values, over the entries read so far */
    for (uint64_t k = 0; k < *count; k++) {
        arena_spec *t = &(*table)[k];
        char what[96];
        snprintf(what, sizeof what, "name of tensor %" PRIu64, k);
        if (ckpt_get_name(r, t->name, sizeof t->name, what) != 0)
            return -1;
        uint64_t rows, cols;
        snprintf(what, sizeof what, "shape of tensor '%s'", t->name);
        if (ckpt_get_u64(r, &rows, what) != 0 || ckpt_get_u64(r, &cols, what) != 0)
            return -1;
        if (rows == 0 || cols == 0)
            return ckpt_fail(r->err, r->n, r->path,
                             "tensor '%s' has an empty shape (%" PRIu64 ", %" PRIu64 ")",
                             t->name, rows, cols);
        /* The values come after the table, so they must fit in what is left after this
         * entry. rows·cols·8 <= left is tested as rows <= left/8/cols: no overflow. */
        uint64_t room = r->end - r->pos;
        uint64_t left = room > bytes ? room - bytes : 0;
        if (rows > left / 8 / cols || rows * cols > SIZE_MAX / sizeof(double))
            return ckpt_fail(r->err, r->n, r->path,
                             "tensor '%s' has shape (%" PRIu64 ", %" PRIu64
                             "): more values than the %" PRIu64 " bytes left in the file "
                             "hold",
                             t->name, rows, cols, left);
        t->rows = (size_t)rows;
        t->cols = (size_t)cols;
        bytes += rows * cols * 8;
    }
    *values = bytes / 8;
    return 0;
}

/* Reads the optional training-state section of a model with P parameters into ts, or
 * walks over it when ts is NULL. */
int ckpt_read_train_state(ckpt_reader *r, uint64_t P, ckpt_train_state *ts)
{
    uint64_t step, count;
    if (ckpt_get_u64(r, &step, "training step") != 0 ||
        ckpt_get_u64(r, &count, "length of the Adam moments") != 0)
        return -1;
    if (step > SIZE_MAX)
        return ckpt_fail(r->err, r->n, r->path, "training step %" PRIu64 " is too large",
                         step);
    if (count != P)
        return ckpt_fail(r->err, r->n, r->path,
                         "the training state holds %" PRIu64 " moments "
                         "per array but the model has %" PRIu64 " parameters",
                         count, P);
    double **arrays[2] = {ts ? &ts->m : NULL, ts ? &ts->v : NULL};
    const char *names[2] = {"Adam's first moment m", "Adam's second moment v"};
    for (int k = 0; k < 2; k++) {
        double *x = NULL;
        if (ts) {
            if (ckpt_need(r, count * 8, names[k]) != 0) /* before the allocation */
                return -1;
            x = *arrays[k] = malloc((size_t)count * sizeof(double));
            if (!x)
                return ckpt_fail(r->err, r->n, r->path, "out of memory reading %s",
                                 names[k]);
        }
        if (ckpt_get_doubles(r, x, count, names[k]) != 0)
            return -1;
    }
    if (ts) {
        ts->step = (size_t)step;
        ts->n = (size_t)count;
    }
    uint64_t streams;
    if (ckpt_get_u64(r, &streams, "number of generator streams") != 0)
        return -1;
    if (streams != CKPT_RNG_STREAMS)
        return ckpt_fail(r->err, r->n, r->path,
                         "the training state has %" PRIu64 " generator "
                         "streams (this build uses %d)",
                         streams, CKPT_RNG_STREAMS);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        char what[64];
        uint64_t size;
        snprintf(what, sizeof what, "length of the state of generator stream %d", k);
        if (ckpt_get_u64(r, &size, what) != 0)
            return -1;
        snprintf(what, sizeof what, "state of generator stream %d", k);
        if (size == 0 || size > CKPT_RNG_STATE_MAX)
            return ckpt_fail(r->err, r->n, r->path,
                             "%s has length %" PRIu64 " (accepted: 1 "
                             "to %u)",
                             what, size, CKPT_RNG_STATE_MAX);
        unsigned char *bytes = NULL;
        if (ts) {
            if (ckpt_need(r, size, what) != 0)
                return -1;
            bytes = ts->rng[k] = malloc((size_t)size);
            if (!bytes)
                return ckpt_fail(r->err, r->n, r->path, "out of memory reading %s", what);
            ts->rng_size[k] = (size_t)size;
        }
        if (ckpt_get(r, bytes, size, what) != 0)
            return -1;
    }
    return 0;
}
