/* safedir.c — folders inside an output directory, never reached through a symbolic link
 * (see safedir.h for the rule).
 *
 * Design. Checking walks the components with lstat, which looks at a link instead of
 * through it, so a refusal can say which entry is the link. Emptying then opens the
 * folder with O_DIRECTORY | O_NOFOLLOW and does everything else relative to that
 * descriptor: fstatat(AT_SYMLINK_NOFOLLOW) to see what an entry is, openat(O_NOFOLLOW)
 * to go one level down, unlinkat to remove. An entry is removed by its name in a folder
 * that is known to be the real one, so no path is ever resolved through a link.
 */
#include "safedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/afile.h"

/* Writes the refusal of path, which lstat described as st, into err. Returns -1. */
static int refuse(const char *path, const struct stat *st, char *err, size_t n)
{
    if (S_ISLNK(st->st_mode))
        snprintf(err, n, "%s is a symbolic link: attnlab never writes or deletes through "
                 "one (remove the link, or choose another directory)", path);
    else
        snprintf(err, n, "%s is not a directory (move it away, or choose another "
                 "directory)", path);
    return -1;
}

int safedir_check(const char *dir, const char *sub, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    int at = snprintf(path, sizeof path, "%s", dir);
    for (const char *p = sub; at >= 0 && (size_t)at < sizeof path && *p;) {
        const size_t len = strcspn(p, "/");
        at += snprintf(path + at, sizeof path - (size_t)at, "/%.*s", (int)len, p);
        if ((size_t)at >= sizeof path)
            break;
        struct stat st;
        if (lstat(path, &st) != 0) {
            if (errno == ENOENT)
                return 0; /* the rest does not exist yet: nothing to follow */
            snprintf(err, n, "cannot look at %s: %s", path, strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) /* a link to a directory is S_ISLNK under lstat */
            return refuse(path, &st, err, n);
        p += len;
        p += *p == '/';
    }
    if (at < 0 || (size_t)at >= sizeof path) {
        snprintf(err, n, "%s/%s: path too long", dir, sub);
        return -1;
    }
    return 0;
}

int safedir_enter(const char *dir, const char *name, char *path, size_t pn, char *err,
                  size_t n)
{
    if (afile_join(path, pn, dir, name) != 0) {
        snprintf(err, n, "%s/%s: path too long", dir, name);
        return -1;
    }
    if (safedir_check(dir, name, err, n) != 0)
        return -1;
    /* mkdir never follows a link at its last component: one planted meanwhile is EEXIST */
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        snprintf(err, n, "cannot make %s: %s", path, strerror(errno));
        return -1;
    }
    return safedir_check(dir, name, err, n);
}

/* Does name end with suffix (and hold more than it)? */
static int ends_with(const char *name, const char *suffix)
{
    const size_t l = strlen(name), s = strlen(suffix);
    return l > s && strcmp(name + l - s, suffix) == 0;
}

/* Empties the open folder fd (shown as path in messages) as safedir_clear describes. */
static int clear_fd(int fd, const char *path, int depth, const char *suffix, char *err,
                    size_t n)
{
    const int own = dup(fd); /* fdopendir takes its descriptor over; fd stays the caller's */
    DIR *d = own >= 0 ? fdopendir(own) : NULL;
    if (!d) {
        if (own >= 0)
            close(own);
        snprintf(err, n, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        struct stat st;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
            fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile: nothing to remove */
        if (depth > 0) {
            if (name[0] == '.' || !S_ISDIR(st.st_mode))
                continue;
            const int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                continue; /* replaced by a link since fstatat: not ours to enter */
            char below[AFILE_PATH_MAX];
            if (afile_join(below, sizeof below, path, name) != 0)
                snprintf(below, sizeof below, "%s", name);
            rc = clear_fd(sub, below, depth - 1, suffix, err, n);
            close(sub);
            if (rc == 0)
                (void)unlinkat(fd, name, AT_REMOVEDIR); /* fails, harmlessly, unless empty */
        } else if (!S_ISDIR(st.st_mode) && ends_with(name, suffix)) {
            if (unlinkat(fd, name, 0) != 0 && errno != ENOENT) {
                snprintf(err, n, "cannot remove %s/%s: %s", path, name, strerror(errno));
                rc = -1;
            }
        }
    }
    closedir(d);
    return rc;
}

int safedir_clear(const char *dir, const char *sub, int depth, const char *suffix, char *err,
                  size_t n)
{
    char path[AFILE_PATH_MAX];
    if (afile_join(path, sizeof path, dir, sub) != 0) {
        snprintf(err, n, "%s/%s: path too long", dir, sub);
        return -1;
    }
    if (safedir_check(dir, sub, err, n) != 0)
        return -1;
    const int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, n, "cannot open %s: %s (nothing was removed)", path, strerror(errno));
        return -1;
    }
    const int rc = clear_fd(fd, path, depth, suffix, err, n);
    close(fd);
    return rc;
}

/* Writes into out (n bytes) where path is or will be: realpath of the longest part of it
 * that exists, then the names of the rest, "." dropped and ".." going one up. Returns 0,
 * or -1 when no part of it resolves or it does not fit. */
static int resolve(const char *path, char *out, size_t n)
{
    char head[AFILE_PATH_MAX];
    size_t end = strlen(path);
    if (end >= sizeof head)
        return -1;
    memcpy(head, path, end + 1);
    char *real = NULL;
    for (;;) {
        while (end > 1 && head[end - 1] == '/')
            head[--end] = '\0';
        real = realpath(end ? head : ".", NULL);
        if (real || errno != ENOENT || end == 0)
            break;
        char *slash = strrchr(head, '/');
        end = !slash ? 0 : slash == head ? 1 : (size_t)(slash - head);
        head[end] = '\0';
    }
    if (!real)
        return -1;
    int at = snprintf(out, n, "%s", real);
    free(real);
    for (const char *p = path + end; at >= 0 && (size_t)at < n && *p;) {
        const size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            char *slash = strrchr(out, '/');
            at = slash && slash != out ? (int)(slash - out) : 1;
            out[at] = '\0';
        } else if (len > 0 && !(len == 1 && p[0] == '.')) {
            at += snprintf(out + at, n - (size_t)at, "%s%.*s",
                           strcmp(out, "/") == 0 ? "" : "/", (int)len, p);
        }
        p += len;
        p += *p == '/';
    }
    return at >= 0 && (size_t)at < n ? 0 : -1;
}

int safedir_within(const char *path, const char *dir)
{
    char where[2 * AFILE_PATH_MAX];
    char *real = realpath(dir, NULL);
    if (!real)
        return 0;
    const size_t l = strlen(real);
    const int inside = resolve(path, where, sizeof where) == 0 &&
                       strncmp(where, real, l) == 0 &&
                       (where[l] == '\0' || where[l] == '/' || strcmp(real, "/") == 0);
    free(real);
    return inside;
}
