/* runlock.c — the lock of a run directory, by fcntl record locks (see runlock.h).
 *
 * Design. The whole file is locked (l_start 0, l_len 0: to the end, however long), for
 * writing, so two holders exclude each other. F_SETLK never waits: a writer that finds
 * the directory taken refuses at once, and says by whom (F_GETLK).
 */
#include "runlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../core/afile.h"

/* The description of a write lock over the whole file. */
static struct flock whole_file(void)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 0;
    return fl;
}

/* The pid of the process holding the lock on the open file fd, or 0. */
static long holder_of(int fd)
{
    struct flock fl = whole_file();
    if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
        return 0;
    return (long)fl.l_pid;
}

int runlock_take(runlock *l, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    l->fd = -1;
    if (afile_join(path, sizeof path, dir, RUNLOCK_NAME) != 0) {
        snprintf(err, n, "%s: path too long for its lock file", dir);
        return -1;
    }
    /* O_NOFOLLOW: a .lock that is a symbolic link (planted, or copied with a directory)
     * would otherwise be opened, or even created, wherever it points */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, n, "cannot lock %s: %s is a symbolic link (remove it: attnlab "
                     "never opens its lock through one)", dir, path);
        else
            snprintf(err, n, "cannot lock %s: cannot open %s (%s)", dir, path,
                     strerror(errno));
        return -1;
    }
    struct flock fl = whole_file();
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        const int e = errno;
        const long pid = holder_of(fd);
        close(fd);
        if (e != EACCES && e != EAGAIN) {
            snprintf(err, n, "cannot lock %s: %s", dir, strerror(e));
            return -1;
        }
        if (pid > 0)
            snprintf(err, n, "%s is in use by another attnlab process (pid %ld)", dir, pid);
        else
            snprintf(err, n, "%s is in use by another attnlab process", dir);
        return RUNLOCK_IN_USE;
    }
    l->fd = fd;
    return 0;
}

long runlock_holder(const char *dir)
{
    char path[AFILE_PATH_MAX];
    if (afile_join(path, sizeof path, dir, RUNLOCK_NAME) != 0)
        return 0;
    /* read-only is enough to ask, and asking must not create the file */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    const long pid = holder_of(fd);
    close(fd); /* the caller holds no lock on this file (see the contract) */
    return pid;
}

void runlock_release(runlock *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
}
