/* afile.c — atomic writes by temporary file and rename, and whole-file reads (see
 * afile.h for the policy and its invariant).
 *
 * Design. One afile holds the final name and the temporary one; tmp[0] != '\0' exactly
 * while a temporary file exists that this afile must either rename or remove, so
 * afile_abort and every failure path can clean up without remembering how far they got.
 */
#include "afile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"

#if defined(__GNUC__)
#define AFILE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define AFILE_PRINTF(fmt, args)
#endif

static int say(char *err, size_t n, const char *fmt, ...) AFILE_PRINTF(3, 4);

/* Writes one message line into err (n bytes; nothing when there is no buffer). Returns
 * -1 so that a failure can end with `return say(...)`. */
static int say(char *err, size_t n, const char *fmt, ...)
{
    if (!err || n == 0)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Creates a->tmp for a->path with O_EXCL: "PATH.tmp.PID", or "PATH.tmp.PID.K" when a
 * leftover of an earlier process with our PID holds the plain name. Returns the
 * descriptor, or -1 with errno set (ENAMETOOLONG when the name does not fit). */
static int create_temp(afile *a)
{
    const long pid = (long)getpid();
    for (unsigned k = 0; k < 100; k++) {
        int len = k == 0
                      ? snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", a->path, pid)
                      : snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld.%u", a->path, pid, k);
        if (len < 0 || (size_t)len >= sizeof a->tmp) {
            errno = ENAMETOOLONG;
            break;
        }
        int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    a->tmp[0] = '\0';
    return -1;
}

int afile_open(afile *a, const char *path, char *err, size_t n)
{
    a->f = NULL;
    a->err_no = 0;
    a->tmp[0] = '\0';
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path)
        return say(err, n, "cannot write %s: the path is too long", path);
    /* Renaming over a directory would fail at the end; saying so first is clearer. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return say(err, n, "cannot write %s: it is a directory (give a file name)", path);
    int fd = create_temp(a);
    if (fd < 0)
        return say(err, n, "cannot write %s: cannot create a temporary file in its "
                   "directory (%s)", path, strerror(errno));
    a->f = fdopen(fd, "wb");
    if (!a->f) {
        int e = errno;
        close(fd);
        afile_abort(a);
        return say(err, n, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

/* Makes a rename durable: a rename changes the directory, which has buffers of its own.
 * Best effort: the file itself is complete, and some file systems refuse to fsync a
 * directory. */
static void sync_directory(const char *path)
{
    char dir[AFILE_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
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
}

int afile_finish(afile *a, char *err, size_t n)
{
    if (!a->f)
        return say(err, n, "cannot write %s: not open", a->path);
    /* The first failure decides the message: what the writer saw, then our buffer, a
     * write error stdio kept (errno of it lost: EIO), the kernel's buffers, the close. */
    int e = a->err_no;
    if (fflush(a->f) != 0 && !e)
        e = errno ? errno : EIO;
    if (ferror(a->f) && !e)
        e = EIO;
    if (!e && fsync(fileno(a->f)) != 0)
        e = errno;
    if (fclose(a->f) != 0 && !e)
        e = errno;
    a->f = NULL;
    if (e) {
        afile_abort(a);
        return say(err, n, "cannot write %s: %s (nothing was replaced: any earlier file "
                   "at this path is unchanged)", a->path, strerror(e));
    }
    return 0;
}

int afile_publish(afile *a, char *err, size_t n)
{
    if (a->f || !a->tmp[0])
        return say(err, n, "cannot write %s: not finished", a->path);
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        afile_abort(a);
        return say(err, n, "cannot write %s: cannot rename the temporary file into place "
                   "(%s; nothing was replaced: any earlier file at this path is "
                   "unchanged)", a->path, strerror(e));
    }
    a->tmp[0] = '\0';
    sync_directory(a->path);
    return 0;
}

int afile_commit(afile *a, char *err, size_t n)
{
    return afile_finish(a, err, n) != 0 ? -1 : afile_publish(a, err, n);
}

void afile_abort(afile *a)
{
    if (a->f) {
        fclose(a->f);
        a->f = NULL;
    }
    if (a->tmp[0]) {
        unlink(a->tmp);
        a->tmp[0] = '\0';
    }
}

int afile_write(const char *dir, const char *name, int (*write)(FILE *f, const void *ctx),
                const void *ctx, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile a;
    if (afile_join(path, sizeof path, dir, name) != 0)
        return say(err, n, "cannot write %s/%s: the path is too long", dir, name);
    if (afile_open(&a, path, err, n) != 0)
        return -1;
    /* a writer fails only on a write error; when stdio kept none, the reason is lost */
    if (write(a.f, ctx) != 0 && !ferror(a.f))
        a.err_no = EIO;
    return afile_commit(&a, err, n);
}

char *afile_read(const char *path, size_t max, size_t *len)
{
    return infile_read(path, max, len, NULL, 0); /* never blocks on a FIFO (infile.h) */
}

int afile_mkdirs(const char *dir, char *err, size_t n)
{
    char buf[AFILE_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return say(err, n, "%s: path too long", dir);
    /* create each prefix in turn: a/ then a/b/ then a/b/c */
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return say(err, n, "cannot create directory %s: %s", buf, strerror(errno));
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return say(err, n, "%s exists and is not a directory", dir);
    return 0;
}

int afile_join(char *buf, size_t n, const char *dir, const char *name)
{
    int k = snprintf(buf, n, "%s/%s", dir, name);
    return (k < 0 || (size_t)k >= n) ? -1 : 0;
}
