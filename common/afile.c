/* afile.c — atomic writes by temporary file and rename (see afile.h). */
#include "afile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int afile_open(afile *a, const char *path, char *err, size_t n)
{
    a->f = NULL;
    a->tmp[0] = '\0';
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path ||
        snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid()) >=
            (int)sizeof a->tmp) {
        snprintf(err, n, "%s: path too long", path);
        a->tmp[0] = '\0';
        return -1;
    }
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno));
        a->tmp[0] = '\0';
        return -1;
    }
    return 0;
}

int afile_commit(afile *a, char *err, size_t n)
{
    if (!a->f) {
        snprintf(err, n, "cannot write %s: not open", a->path);
        return -1;
    }
    int bad = ferror(a->f) || fflush(a->f) != 0;
    int saved = errno;
    if (!bad && fsync(fileno(a->f)) != 0) {
        bad = 1;
        saved = errno;
    }
    if (fclose(a->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    a->f = NULL;
    if (!bad && rename(a->tmp, a->path) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        snprintf(err, n, "cannot write %s: %s (nothing was replaced)", a->path,
                 saved ? strerror(saved) : "write error");
        unlink(a->tmp);
        a->tmp[0] = '\0';
        return -1;
    }
    a->tmp[0] = '\0';
    return 0;
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

int afile_mkdirs(const char *dir, char *err, size_t n)
{
    char buf[AFILE_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        snprintf(err, n, "%s: path too long", dir);
        return -1;
    }
    /* create each prefix in turn: a/ then a/b/ then a/b/c */
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                snprintf(err, n, "cannot create directory %s: %s", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, n, "%s exists and is not a directory", dir);
        return -1;
    }
    return 0;
}

int afile_join(char *buf, size_t n, const char *dir, const char *name)
{
    int k = snprintf(buf, n, "%s/%s", dir, name);
    return (k < 0 || (size_t)k >= n) ? -1 : 0;
}
