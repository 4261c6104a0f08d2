/* infile.c — files opened for reading without blocking, read whole or line by line with
 * every failure reported (see infile.h for the policy and its invariant).
 *
 * Design. One function opens (infile_open_fd); the stream, the whole-file and the line
 * readers are built on it, so the refusal of a FIFO or a directory is written once. The
 * line reader keeps a line of at most max bytes and stops at a longer one, so its
 * memory and its time are bounded whatever the input (an endless line too); it tells the end of the input from a read
 * error by the stream's error indicator, which getline(3) leaves to the caller (and
 * does not set at all when memory runs out).
 */
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__)
#define INFILE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define INFILE_PRINTF(fmt, args)
#endif

static void say(char *err, size_t n, const char *fmt, ...) INFILE_PRINTF(3, 4);

/* Writes one message line into err (n bytes; nothing when there is no buffer). */
static void say(char *err, size_t n, const char *fmt, ...)
{
    if (!err || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

const char *infile_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

int infile_open_fd(const char *path, struct stat *st, char *err, size_t n)
{
    memset(st, 0, sizeof *st);
    /* 1. O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        say(err, n, "cannot read %s: %s", path, strerror(e));
        errno = e; /* for a caller that words the message itself */
        return -1;
    }
    /* 2. what was opened, not what the name points to now */
    if (fstat(fd, st) != 0) {
        const int e = errno;
        say(err, n, "cannot read %s: %s", path, strerror(e));
        close(fd);
        memset(st, 0, sizeof *st);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        const char *kind = infile_kind(st->st_mode);
        say(err, n, "cannot read %s: it is %s%s", path, kind,
            strcmp(kind, "not a regular file") == 0 ? "" : ", not a regular file");
        close(fd);
        return -2;
    }
    /* 3. back to blocking reads */
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        const int e = errno;
        say(err, n, "cannot read %s: %s", path, strerror(e));
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

FILE *infile_open(const char *path, int stdin_ok, char *err, size_t n)
{
    if (stdin_ok && strcmp(path, "-") == 0)
        return stdin;
    struct stat st;
    const int fd = infile_open_fd(path, &st, err, n);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        say(err, n, "cannot read %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

char *infile_read(const char *path, size_t max, size_t *len, char *err, size_t n)
{
    struct stat st;
    const int fd = infile_open_fd(path, &st, err, n);
    if (fd < 0)
        return NULL;
    if (st.st_size < 0 || (unsigned long long)st.st_size > (unsigned long long)max) {
        say(err, n, "%s holds %lld bytes (accepted: at most %zu)", path,
            (long long)st.st_size, max);
        close(fd);
        return NULL;
    }
    const size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        say(err, n, "%s: out of memory (%zu bytes)", path, size + 1);
        close(fd);
        return NULL;
    }
    /* read(2) may return less than asked: loop to the size fstat gave; a file that grew
     * meanwhile is read as it was, one that shrank is an error */
    size_t got = 0;
    while (got < size) {
        const ssize_t k = read(fd, buf + got, size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k < 0)
                say(err, n, "cannot read %s: %s", path, strerror(errno));
            else
                say(err, n, "cannot read %s: it ended after %zu of its %zu bytes (was it "
                    "being written?)", path, got, size);
            free(buf);
            close(fd);
            return NULL;
        }
        got += (size_t)k;
    }
    close(fd);
    buf[size] = '\0';
    if (len)
        *len = size;
    return buf;
}

ssize_t infile_getline(char **line, size_t *cap, size_t max, FILE *f, const char *name,
                       char *err, size_t n)
{
    size_t len = 0;
    int c = EOF, long_line = 0;
    errno = 0; /* so that a read error's own errno is the one reported */
    /* the bytes of one line, at most max of them kept (the NUL after them aside) */
    while ((c = getc(f)) != EOF) {
        if (len >= max) {
            long_line = 1; /* stop here: an endless line would never end otherwise */
            break;
        }
        if (len + 2 > *cap) {
            size_t want = *cap ? 2 * *cap : 256;
            if (want > max + 1)
                want = max + 1;
            if (want < len + 2)
                want = len + 2;
            char *p = realloc(*line, want);
            if (!p) {
                say(err, n, "%s: out of memory (a line of %zu bytes)", name, len);
                return INFILE_FAIL;
            }
            *line = p;
            *cap = want;
        }
        (*line)[len++] = (char)c;
        if (c == '\n')
            break;
    }
    if (c == EOF && ferror(f)) {
        say(err, n, "cannot read %s: %s", name, errno ? strerror(errno) : "a read error");
        return INFILE_FAIL;
    }
    if (long_line) {
        say(err, n, "the line holds more than %zu bytes", max);
        return INFILE_LONG;
    }
    if (len == 0)
        return INFILE_END;
    (*line)[len] = '\0';
    return (ssize_t)len;
}
