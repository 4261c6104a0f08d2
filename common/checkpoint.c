/* checkpoint.c — writing and validating checkpoint files (see checkpoint.h and
 * docs/checkpoint-format.md).
 *
 * Design. The writer and the reader each walk the layout once, in file order, through a
 * cursor that sees every byte: the writer's cursor counts and checksums what it emits,
 * the reader's checks every length against the bytes that remain. The writer runs twice,
 * first counting only, to learn the total length the header records, then for real, so
 * the recorded length is produced by the same code as the bytes and cannot disagree.
 *
 * The reader decides in this order, so that each kind of damage gets its own message:
 *   1. magic, then version: a later version may lay out everything after it differently;
 *   2. the header's own CRC: from here on the recorded total length is trusted;
 *   3. a file shorter than that length is truncated: the body is walked, without
 *      building the model, to name the part where the file ends; a longer one has
 *      trailing bytes;
 *   4. the CRC of the whole file: any flipped bit after the version is corruption;
 *   5. the contents: model name, configuration (which builds the model), tensor table
 *      against the model's, values, training state.
 * Lengths are still checked after the CRC has matched, because a CRC proves that the
 * file is as it was written, not that whoever wrote it wrote sensible sizes.
 */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "crc32.h"

/* The format stores IEEE-754 binary64 values through their 64-bit pattern; a double of
 * another width could not be read back bit-identically. */
_Static_assert(sizeof(double) == sizeof(uint64_t), "doubles must be 64-bit");

static const unsigned char ckpt_magic[8] = {'A', 'T', 'T', 'N', 'C', 'K', 'P', 'T'};

#define HEADER_SIZE 28 /* magic 8, version 4, flags 4, file length 8, header CRC 4 */
#define HEADER_CRC_AT 24
#define CRC_SIZE 4
#define FLAG_TRAIN_STATE 0x1u /* a training-state section follows the parameters */
#define KNOWN_FLAGS FLAG_TRAIN_STATE

/* Limits a loader applies before it allocates anything. Each is far above what any
 * model here needs and far below what would exhaust memory. */
#define CONFIG_TEXT_MAX 65536u /* bytes of configuration text (a full one is ~400) */
#define TENSORS_MAX 65536u     /* entries in the tensor table */
#define RNG_STATE_MAX 1048576u /* bytes of one generator state (mt19937: ~5 kB) */
/* The smallest tensor-table entry: name length 8, a 1-byte name, rows 8, cols 8. */
#define TABLE_ENTRY_MIN 25u

#define DOUBLES_PER_CHUNK 512 /* doubles encoded or decoded per fwrite/fread */

#if defined(__GNUC__)
#define CKPT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CKPT_PRINTF(fmt, args)
#endif

/* ---- messages --------------------------------------------------------------------- */

static int fail(char *err, size_t n, const char *path, const char *fmt, ...)
    CKPT_PRINTF(4, 5);

/* Writes "checkpoint PATH: " and the message into err (n bytes). Returns -1 so that a
 * check can end with `return fail(...)`. */
static int fail(char *err, size_t n, const char *path, const char *fmt, ...)
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
static int printable(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7E)
            return 0;
    return 1;
}

/* ---- little-endian encoding ------------------------------------------------------- */

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

/* ---- writing ---------------------------------------------------------------------- */

/* A cursor over the file being produced. */
typedef struct writer {
    FILE *f;      /* NULL: a counting pass that writes nothing */
    uint64_t pos; /* bytes produced so far: the offset of the next byte */
    uint32_t crc; /* CRC-32 of those bytes (real pass only) */
    int err_no;   /* errno of the first failed write; later writes are skipped */
} writer;

static void put_bytes(writer *w, const void *p, size_t len)
{
    w->pos += len;
    if (!w->f || w->err_no)
        return;
    w->crc = crc32_update(w->crc, p, len);
    errno = 0;
    if (fwrite(p, 1, len, w->f) != len)
        w->err_no = errno ? errno : EIO;
}

static void put_u32(writer *w, uint32_t v)
{
    unsigned char b[4];
    put_le(b, v, 4);
    put_bytes(w, b, 4);
}

static void put_u64(writer *w, uint64_t v)
{
    unsigned char b[8];
    put_le(b, v, 8);
    put_bytes(w, b, 8);
}

/* A name: its length in bytes, then the bytes, no terminating NUL. */
static void put_name(writer *w, const char *s)
{
    size_t len = strlen(s);
    put_u64(w, len);
    put_bytes(w, s, len);
}

/* Doubles x (count) as their 64-bit patterns, least significant byte first. */
static void put_doubles(writer *w, const double *x, size_t count)
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
static void write_file(writer *w, const char *name, const char *cfg_text, size_t cfg_len,
                       const arena *a, const ckpt_train_state *ts, uint64_t total)
{
    unsigned char head[HEADER_CRC_AT];
    memcpy(head, ckpt_magic, sizeof ckpt_magic);
    put_le(head + 8, CKPT_FORMAT_VERSION, 4);
    put_le(head + 12, ts ? FLAG_TRAIN_STATE : 0, 4);
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

/* The configuration as config_write_tsv prints it, with the model field set to the
 * registry name, so the file always names the model it holds. Returns the text (free
 * it) and its length, or NULL when memory runs out. */
static char *config_text(const model *m, size_t *len)
{
    config c = m->cfg;
    snprintf(c.model, sizeof c.model, "%s", m->ops->name);
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    int rc = config_write_tsv(&c, f);
    if (fclose(f) != 0 || rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Refuses what the loader would refuse, so that no save produces an unreadable file. */
static int check_savable(const char *path, const model *m, const ckpt_train_state *ts,
                         char *err, size_t n)
{
    if (!m || !m->ops || !m->ops->name || !m->params.data || m->params.n_tensors == 0)
        return fail(err, n, path, "no model to save (empty parameter block)");
    size_t len = strlen(m->ops->name);
    if (len == 0 || len >= CONFIG_STR_MAX || !printable(m->ops->name, len))
        return fail(err, n, path, "model name '%s' cannot be stored (accepted: 1 to %d "
                    "printable ASCII characters)", m->ops->name, CONFIG_STR_MAX - 1);
    if (m->params.n_tensors > TENSORS_MAX)
        return fail(err, n, path, "model has %zu tensors (the format holds at most %u)",
                    m->params.n_tensors, TENSORS_MAX);
    for (size_t k = 0; k < m->params.n_tensors; k++) {
        const char *t = m->params.spec[k].name;
        len = strnlen(t, ARENA_NAME_MAX);
        if (len == 0 || len >= ARENA_NAME_MAX || !printable(t, len))
            return fail(err, n, path, "tensor %zu has a name the format cannot store "
                        "(accepted: 1 to %d printable ASCII characters)", k,
                        ARENA_NAME_MAX - 1);
    }
    if (!ts)
        return 0;
    if (ts->n != m->params.size)
        return fail(err, n, path, "training state has %zu moments per array but the model "
                    "has %zu parameters", ts->n, m->params.size);
    if (!ts->m || !ts->v)
        return fail(err, n, path, "training state lacks Adam's moment arrays");
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        if (!ts->rng[k])
            return fail(err, n, path, "training state: generator stream %d has no state",
                        k);
        if (ts->rng_size[k] == 0 || ts->rng_size[k] > RNG_STATE_MAX)
            return fail(err, n, path, "training state: generator stream %d has a state of "
                        "%zu bytes (accepted: 1 to %u)", k, ts->rng_size[k], RNG_STATE_MAX);
    }
    return 0;
}

/* Creates a new file next to path, named path.tmp-PID-K, that no one else has open.
 * Mode 0666 lets the umask decide the permissions, as for any other new file (mkstemp
 * would force 0600 on the finished checkpoint). Returns the descriptor and the name
 * (free it), or -1 with errno set. */
static int create_temp(const char *path, char **name)
{
    size_t len = strlen(path) + 48;
    char *tmp = malloc(len);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    for (unsigned k = 0; k < 100; k++) {
        snprintf(tmp, len, "%s.tmp-%ld-%u", path, (long)getpid(), k);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *name = tmp;
            return fd;
        }
        if (errno != EEXIST) /* a leftover of an earlier run with our pid: try the next */
            break;
    }
    int e = errno;
    free(tmp);
    errno = e;
    return -1;
}

/* Makes the rename itself durable: a rename is a change to the directory, which has its
 * own buffers. Best effort: the file is already complete, and some file systems refuse
 * fsync on a directory. */
static void sync_directory(const char *path)
{
    char *dir = strdup(path);
    if (!dir)
        return;
    char *slash = strrchr(dir, '/');
    const char *name = ".";
    if (slash) {
        slash[slash == dir] = '\0'; /* "/x" keeps "/", "a/b/x" becomes "a/b" */
        name = dir;
    }
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int ckpt_save(const char *path, const model *m, const ckpt_train_state *ts, char *err,
              size_t n)
{
    if (!path || !path[0])
        return fail(err, n, path, "no file name given");
    if (check_savable(path, m, ts, err, n) != 0)
        return -1;
    /* Renaming over a directory fails anyway; saying so first gives the clearer line. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fail(err, n, path, "is a directory (give a file name for the checkpoint)");

    size_t cfg_len = 0;
    char *cfg = config_text(m, &cfg_len);
    if (!cfg)
        return fail(err, n, path, "out of memory formatting the configuration");
    if (cfg_len == 0 || cfg_len > CONFIG_TEXT_MAX) {
        free(cfg);
        return fail(err, n, path, "configuration text of %zu bytes cannot be stored "
                    "(accepted: 1 to %u)", cfg_len, CONFIG_TEXT_MAX);
    }

    writer count = {0};
    write_file(&count, m->ops->name, cfg, cfg_len, &m->params, ts, 0);

    char *tmp = NULL;
    int fd = create_temp(path, &tmp);
    if (fd < 0) {
        int e = errno;
        free(cfg);
        return fail(err, n, path, "cannot create a temporary file in its directory (%s)",
                    strerror(e));
    }
    FILE *f = fdopen(fd, "wb");
    int e = 0;
    if (!f) {
        e = errno;
        close(fd);
    } else {
        writer w = {.f = f};
        write_file(&w, m->ops->name, cfg, cfg_len, &m->params, ts, count.pos);
        e = w.err_no;
        /* Data reach the disk only after fflush (our buffer) and fsync (the kernel's);
         * the rename must not be able to overtake them. */
        if (!e && fflush(f) != 0)
            e = errno;
        if (!e && fsync(fileno(f)) != 0)
            e = errno;
        if (fclose(f) != 0 && !e)
            e = errno;
        if (!e && w.pos != count.pos)
            e = EIO;
    }
    free(cfg);
    if (e) {
        unlink(tmp);
        fail(err, n, path, "cannot write the temporary file (%s); any earlier file at "
             "this path is unchanged", strerror(e));
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        free(tmp);
        return fail(err, n, path, "cannot rename the temporary file into place (%s)",
                    strerror(e));
    }
    free(tmp);
    sync_directory(path);
    return 0;
}

/* ---- reading ---------------------------------------------------------------------- */

/* A cursor over the file being read. Invariant: pos <= end. */
typedef struct reader {
    FILE *f;
    const char *path;
    uint64_t pos;  /* offset of the next byte */
    uint64_t end;  /* where the body ends and the CRC starts, by the header's length */
    uint64_t size; /* bytes actually in the file: below end + 4 when truncated */
    char *err;
    size_t n;
} reader;

static int truncated(reader *r, uint64_t len, const char *what)
{
    return fail(r->err, r->n, r->path, "truncated (expected %" PRIu64 " bytes of %s at "
                "offset %" PRIu64 ", file ends at %" PRIu64 ")", len, what, r->pos,
                r->size);
}

/* Checks that len bytes of what can be read here: within the body as the header sizes
 * it (otherwise the file contradicts itself), and within the file (otherwise it was cut
 * short). Every length is checked here before it is used or allocated. */
static int need(reader *r, uint64_t len, const char *what)
{
    if (len > r->end - r->pos)
        return fail(r->err, r->n, r->path, "malformed: %s (%" PRIu64 " bytes at offset %"
                    PRIu64 ") runs past the end of the data at offset %" PRIu64, what, len,
                    r->pos, r->end);
    if (len > r->size - r->pos)
        return truncated(r, len, what);
    return 0;
}

static int read_error(reader *r)
{
    if (ferror(r->f))
        return fail(r->err, r->n, r->path, "cannot read at offset %" PRIu64 " (%s)", r->pos,
                    strerror(errno));
    return fail(r->err, r->n, r->path, "the file changed while it was read (offset %" PRIu64
                ")", r->pos);
}

/* Reads len bytes of what into dst, or skips them when dst is NULL. */
static int get(reader *r, void *dst, uint64_t len, const char *what)
{
    if (need(r, len, what) != 0)
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

static int get_u64(reader *r, uint64_t *v, const char *what)
{
    unsigned char b[8];
    if (get(r, b, 8, what) != 0)
        return -1;
    *v = get_le(b, 8);
    return 0;
}

/* Reads count doubles of what into dst, or skips them when dst is NULL. */
static int get_doubles(reader *r, double *dst, uint64_t count, const char *what)
{
    if (count > UINT64_MAX / 8)
        return fail(r->err, r->n, r->path, "malformed: %s holds %" PRIu64 " values", what,
                    count);
    if (!dst)
        return get(r, NULL, count * 8, what);
    if (need(r, count * 8, what) != 0)
        return -1;
    unsigned char buf[DOUBLES_PER_CHUNK * 8];
    for (uint64_t done = 0; done < count;) {
        size_t k = DOUBLES_PER_CHUNK;
        if (count - done < k)
            k = (size_t)(count - done);
        if (get(r, buf, 8 * k, what) != 0)
            return -1;
        for (size_t i = 0; i < k; i++) {
            uint64_t bits = get_le(buf + 8 * i, 8);
            memcpy(&dst[done + i], &bits, 8);
        }
        done += k;
    }
    return 0;
}

/* Reads a name (length, then bytes) into buf (max bytes with the NUL). */
static int get_name(reader *r, char *buf, size_t max, const char *what)
{
    uint64_t len;
    char len_what[112];
    snprintf(len_what, sizeof len_what, "length of %s", what);
    if (get_u64(r, &len, len_what) != 0)
        return -1;
    if (len == 0 || len >= max)
        return fail(r->err, r->n, r->path, "%s has length %" PRIu64 " (accepted: 1 to %zu)",
                    what, len, max - 1);
    if (get(r, buf, len, what) != 0)
        return -1;
    buf[len] = '\0';
    if (!printable(buf, (size_t)len))
        return fail(r->err, r->n, r->path, "%s is not printable ASCII", what);
    return 0;
}

/* Checks magic, version and the header CRC, and sets flags, end and pos. */
static int read_header(reader *r, uint32_t *flags)
{
    unsigned char h[HEADER_SIZE];
    size_t have = r->size < HEADER_SIZE ? (size_t)r->size : HEADER_SIZE;
    if (fread(h, 1, have, r->f) != have)
        return read_error(r);
    /* Identity first: a file that does not begin with the magic is not a checkpoint,
     * however short; one that begins with part of it is a checkpoint cut short. */
    if (memcmp(h, ckpt_magic, have < 8 ? have : 8) != 0)
        return fail(r->err, r->n, r->path, "not an attnlab checkpoint (bad magic)");
    if (have < 12)
        return truncated(r, HEADER_SIZE, "header");
    uint32_t version = (uint32_t)get_le(h + 8, 4);
    if (version != CKPT_FORMAT_VERSION)
        return fail(r->err, r->n, r->path, "format version %" PRIu32 " is not supported "
                    "(this build reads version %d)", version, CKPT_FORMAT_VERSION);
    if (have < HEADER_SIZE)
        return truncated(r, HEADER_SIZE, "header");
    uint32_t stored = (uint32_t)get_le(h + HEADER_CRC_AT, 4);
    uint32_t computed = crc32_update(0, h, HEADER_CRC_AT);
    if (stored != computed)
        return fail(r->err, r->n, r->path, "CRC mismatch in the header (stored 0x%08" PRIX32
                    ", computed 0x%08" PRIX32 "): the file is corrupt", stored, computed);
    *flags = (uint32_t)get_le(h + 12, 4);
    if (*flags & ~KNOWN_FLAGS)
        return fail(r->err, r->n, r->path, "uses features this build does not know (flags "
                    "0x%" PRIX32 ")", *flags);
    uint64_t length = get_le(h + 16, 8);
    if (length < HEADER_SIZE + CRC_SIZE)
        return fail(r->err, r->n, r->path, "malformed: the header records a length of %"
                    PRIu64 " bytes, shorter than a header and a CRC", length);
    r->pos = HEADER_SIZE;
    r->end = length - CRC_SIZE;
    return 0;
}

/* Compares the CRC stored at end with the CRC of bytes [0, end), then returns to the
 * first byte after the header. The file is exactly end + 4 bytes long here. */
static int verify_crc(reader *r)
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
    if (fread(buf, 1, CRC_SIZE, r->f) != CRC_SIZE)
        return read_error(r);
    uint32_t stored = (uint32_t)get_le(buf, 4);
    if (stored != crc)
        return fail(r->err, r->n, r->path, "CRC mismatch (stored 0x%08" PRIX32 ", computed "
                    "0x%08" PRIX32 "): the file is corrupt", stored, crc);
    if (fseeko(r->f, HEADER_SIZE, SEEK_SET) != 0)
        return read_error(r);
    r->pos = HEADER_SIZE;
    return 0;
}

/* Builds the model the stored configuration describes: generic defaults, the model's
 * own defaults (so a key that an older file lacks gets the value the model would use),
 * then the stored text, then every check a command line would get. */
static int build_model(reader *r, const model_ops *ops, const char *name, const char *text,
                       uint64_t stored_params, model **out)
{
    config c;
    char msg[256];
    config_defaults(&c);
    if (ops->defaults)
        ops->defaults(&c);
    if (config_read_text(&c, text, msg, sizeof msg) != 0)
        return fail(r->err, r->n, r->path, "invalid configuration: %s", msg);
    if (strcmp(c.model, name) != 0)
        return fail(r->err, r->n, r->path, "the header names model '%s' but the "
                    "configuration says '%s'", name, c.model);
    if (config_check(&c, msg, sizeof msg) != 0 ||
        (ops->check && ops->check(&c, msg, sizeof msg) != 0))
        return fail(r->err, r->n, r->path, "invalid configuration: %s", msg);
    /* the file decided the configuration: compare its size with the tensors the file
     * really holds before allocating anything of that size */
    if (ops->n_params && ops->n_params(&c) != stored_params)
        return fail(r->err, r->n, r->path, "the configuration implies %zu parameters but "
                    "the file holds %" PRIu64, ops->n_params(&c), stored_params);
    *out = ops->alloc(&c);
    if (!*out)
        return fail(r->err, r->n, r->path, "out of memory building model '%s'", name);
    return 0;
}

/* Reads the tensor table into a new array (count entries, free it). Before anything is
 * allocated, the count is checked against the bytes left; each shape is then checked
 * against the bytes left for the values, so a huge tensor is refused before its values
 * would be read or stored anywhere. *values receives the total number of doubles. */
static int read_table(reader *r, arena_spec **table, uint64_t *count, uint64_t *values)
{
    if (get_u64(r, count, "tensor count") != 0)
        return -1;
    if (*count == 0 || *count > TENSORS_MAX || *count > (r->end - r->pos) / TABLE_ENTRY_MIN)
        return fail(r->err, r->n, r->path, "malformed: tensor count %" PRIu64 " is "
                    "impossible (at most %u, and the %" PRIu64 " bytes left hold at most %"
                    PRIu64 ")", *count, TENSORS_MAX, r->end - r->pos,
                    (r->end - r->pos) / TABLE_ENTRY_MIN);
    *table = calloc((size_t)*count, sizeof **table);
    if (!*table)
        return fail(r->err, r->n, r->path, "out of memory reading the tensor table");
    uint64_t bytes = 0; /* of values, over the entries read so far */
    for (uint64_t k = 0; k < *count; k++) {
        arena_spec *t = &(*table)[k];
        char what[96];
        snprintf(what, sizeof what, "name of tensor %" PRIu64, k);
        if (get_name(r, t->name, sizeof t->name, what) != 0)
            return -1;
        uint64_t rows, cols;
        snprintf(what, sizeof what, "shape of tensor '%s'", t->name);
        if (get_u64(r, &rows, what) != 0 || get_u64(r, &cols, what) != 0)
            return -1;
        if (rows == 0 || cols == 0)
            return fail(r->err, r->n, r->path, "tensor '%s' has an empty shape (%" PRIu64
                        ", %" PRIu64 ")", t->name, rows, cols);
        /* The values come after the table, so they must fit in what is left after this
         * entry. rows·cols·8 <= left is tested as rows <= left/8/cols: no overflow. */
        uint64_t room = r->end - r->pos;
        uint64_t left = room > bytes ? room - bytes : 0;
        if (rows > left / 8 / cols || rows * cols > SIZE_MAX / sizeof(double))
            return fail(r->err, r->n, r->path, "tensor '%s' has shape (%" PRIu64 ", %"
                        PRIu64 "): more values than the %" PRIu64 " bytes left in the file "
                        "hold", t->name, rows, cols, left);
        t->rows = (size_t)rows;
        t->cols = (size_t)cols;
        bytes += rows * cols * 8;
    }
    *values = bytes / 8;
    return 0;
}

/* The stored table must be the model's own, entry by entry: same names, same order, same
 * shapes. Otherwise the values would land in the wrong tensors. */
static int match_table(reader *r, const arena *a, const arena_spec *table, uint64_t count)
{
    if (count != a->n_tensors)
        return fail(r->err, r->n, r->path, "holds %" PRIu64 " tensors but the "
                    "configuration implies %zu", count, a->n_tensors);
    for (size_t k = 0; k < a->n_tensors; k++) {
        const arena_spec *t = &table[k], *want = &a->spec[k];
        if (strcmp(t->name, want->name) != 0)
            return fail(r->err, r->n, r->path, "tensor %zu is '%s' but the configuration "
                        "implies '%s' there", k, t->name, want->name);
        if (t->rows != want->rows || t->cols != want->cols)
            return fail(r->err, r->n, r->path, "tensor '%s' has shape (%zu, %zu) but the "
                        "configuration implies (%zu, %zu)", t->name, t->rows, t->cols,
                        want->rows, want->cols);
    }
    return 0;
}

/* Reads the optional training-state section of a model with P parameters into ts, or
 * walks over it when ts is NULL. */
static int read_train_state(reader *r, uint64_t P, ckpt_train_state *ts)
{
    uint64_t step, count;
    if (get_u64(r, &step, "training step") != 0 ||
        get_u64(r, &count, "length of the Adam moments") != 0)
        return -1;
    if (step > SIZE_MAX)
        return fail(r->err, r->n, r->path, "training step %" PRIu64 " is too large", step);
    if (count != P)
        return fail(r->err, r->n, r->path, "the training state holds %" PRIu64 " moments "
                    "per array but the model has %" PRIu64 " parameters", count, P);
    double **arrays[2] = {ts ? &ts->m : NULL, ts ? &ts->v : NULL};
    const char *names[2] = {"Adam's first moment m", "Adam's second moment v"};
    for (int k = 0; k < 2; k++) {
        double *x = NULL;
        if (ts) {
            if (need(r, count * 8, names[k]) != 0) /* before the allocation */
                return -1;
            x = *arrays[k] = malloc((size_t)count * sizeof(double));
            if (!x)
                return fail(r->err, r->n, r->path, "out of memory reading %s", names[k]);
        }
        if (get_doubles(r, x, count, names[k]) != 0)
            return -1;
    }
    if (ts) {
        ts->step = (size_t)step;
        ts->n = (size_t)count;
    }
    uint64_t streams;
    if (get_u64(r, &streams, "number of generator streams") != 0)
        return -1;
    if (streams != CKPT_RNG_STREAMS)
        return fail(r->err, r->n, r->path, "the training state has %" PRIu64 " generator "
                    "streams (this build uses %d)", streams, CKPT_RNG_STREAMS);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        char what[64];
        uint64_t size;
        snprintf(what, sizeof what, "length of the state of generator stream %d", k);
        if (get_u64(r, &size, what) != 0)
            return -1;
        snprintf(what, sizeof what, "state of generator stream %d", k);
        if (size == 0 || size > RNG_STATE_MAX)
            return fail(r->err, r->n, r->path, "%s has length %" PRIu64 " (accepted: 1 "
                        "to %u)", what, size, RNG_STATE_MAX);
        unsigned char *bytes = NULL;
        if (ts) {
            if (need(r, size, what) != 0)
                return -1;
            bytes = ts->rng[k] = malloc((size_t)size);
            if (!bytes)
                return fail(r->err, r->n, r->path, "out of memory reading %s", what);
            ts->rng_size[k] = (size_t)size;
        }
        if (get(r, bytes, size, what) != 0)
            return -1;
    }
    return 0;
}

/* Reads everything between the header and the final CRC, in file order. With dry set
 * (a truncated file) it only walks the structure: it looks nothing up, allocates nothing
 * but the tensor table, and stops at the first part the file does not hold. Otherwise it
 * builds the model into *out and fills ts (when not NULL). */
static int read_body(reader *r, uint32_t flags, const model_ops *(*lookup)(const char *),
                     int dry, model **out, ckpt_train_state *ts)
{
    char name[CONFIG_STR_MAX];
    const model_ops *ops = NULL;
    model *m = NULL;
    char *text = NULL;
    arena_spec *table = NULL;
    uint64_t len, count = 0, P = 0;
    int rc = -1;

    if (get_name(r, name, sizeof name, "model name") != 0)
        goto done;
    if (!dry && !(ops = lookup(name))) {
        fail(r->err, r->n, r->path, "model '%s' is not in this build", name);
        goto done;
    }

    if (get_u64(r, &len, "configuration length") != 0)
        goto done;
    if (len == 0 || len > CONFIG_TEXT_MAX) {
        fail(r->err, r->n, r->path, "configuration has length %" PRIu64 " (accepted: 1 "
             "to %u)", len, CONFIG_TEXT_MAX);
        goto done;
    }
    if (dry) {
        if (get(r, NULL, len, "configuration") != 0)
            goto done;
    } else {
        if (need(r, len, "configuration") != 0) /* before the allocation */
            goto done;
        if (!(text = malloc((size_t)len + 1))) {
            fail(r->err, r->n, r->path, "out of memory reading the configuration");
            goto done;
        }
        if (get(r, text, len, "configuration") != 0)
            goto done;
        text[len] = '\0';
        if (strlen(text) != len) {
            fail(r->err, r->n, r->path, "configuration text contains a NUL byte");
            goto done;
        }
    }

    if (read_table(r, &table, &count, &P) != 0)
        goto done;
    if (!dry) {
        if (build_model(r, ops, name, text, P, &m) != 0 || !m)
            goto done;
        if (match_table(r, &m->params, table, count) != 0)
            goto done;
    }
    for (size_t k = 0; k < count; k++) {
        char what[96];
        snprintf(what, sizeof what, "tensor '%s'", table[k].name);
        double *dst = dry ? NULL : m->params.data + m->params.offset[k];
        if (get_doubles(r, dst, (uint64_t)table[k].rows * table[k].cols, what) != 0)
            goto done;
    }

    if ((flags & FLAG_TRAIN_STATE) && read_train_state(r, P, dry ? NULL : ts) != 0)
        goto done;
    if (r->pos != r->end) {
        fail(r->err, r->n, r->path, "malformed: %" PRIu64 " unexpected bytes after the "
             "last section", r->end - r->pos);
        goto done;
    }
    rc = 0;

done:
    if (rc != 0 && m)
        ops->free(m);
    else if (out)
        *out = m;
    free(text);
    free(table);
    return rc;
}

model *ckpt_load_with(const char *path, const model_ops *(*lookup)(const char *name),
                      ckpt_train_state *ts, char *err, size_t n)
{
    if (ts)
        memset(ts, 0, sizeof *ts);
    if (!path || !path[0]) {
        fail(err, n, path, "no file name given");
        return NULL;
    }
    /* O_NONBLOCK so that a FIFO given by mistake is refused below instead of blocking
     * the open; it changes nothing for a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fail(err, n, path, "cannot open (%s)", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fail(err, n, path, "cannot examine (%s)", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (S_ISDIR(st.st_mode))
            fail(err, n, path, "is a directory, not a checkpoint file");
        else
            fail(err, n, path, "is not a regular file (a device, FIFO or socket)");
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        fail(err, n, path, "cannot open (%s)", strerror(errno));
        close(fd);
        return NULL;
    }
    reader r = {.f = f, .path = path, .size = (uint64_t)st.st_size, .err = err, .n = n};
    uint32_t flags = 0;
    model *m = NULL;
    int rc = read_header(&r, &flags);
    if (rc == 0 && r.size < r.end + CRC_SIZE) {
        /* Cut short: walk as far as the file goes to say which part is missing. */
        if (read_body(&r, flags, NULL, 1, NULL, NULL) == 0)
            truncated(&r, CRC_SIZE, "CRC");
        rc = -1;
    } else if (rc == 0 && r.size > r.end + CRC_SIZE) {
        rc = fail(err, n, path, "is %" PRIu64 " bytes long but its header says %" PRIu64
                  ": unexpected bytes after the end", r.size, r.end + CRC_SIZE);
    }
    if (rc == 0)
        rc = verify_crc(&r);
    if (rc == 0)
        rc = read_body(&r, flags, lookup ? lookup : model_lookup, 0, &m, ts);
    fclose(f);
    if (rc != 0 && ts)
        ckpt_train_state_free(ts);
    return rc == 0 ? m : NULL;
}

model *ckpt_load(const char *path, ckpt_train_state *ts, char *err, size_t n)
{
    return ckpt_load_with(path, model_lookup, ts, err, n);
}

void ckpt_train_state_free(ckpt_train_state *ts)
{
    if (!ts)
        return;
    free(ts->m);
    free(ts->v);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++)
        free(ts->rng[k]);
    memset(ts, 0, sizeof *ts);
}
