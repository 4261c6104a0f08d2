/* runlock.h — one writer per directory: the lock a run (or a comparison) holds on its
 * directory while it writes there (prefix: runlock_).
 *
 * Design. The lock is a POSIX record lock (fcntl F_SETLK, a write lock over the whole
 * file) on DIR/.lock, an empty file created on first use and never removed, and never
 * opened through a symbolic link (O_NOFOLLOW: a link there is refused). The kernel
 * holds it for the process and drops it whenever the process ends, however it ends
 * (exit, a crash, SIGKILL), so a stale lock cannot outlive its writer and there is
 * nothing to clean up. The same call works on Linux and macOS. F_GETLK tells who holds
 * it, so a refusal can name the process.
 *
 * Invariant. A record lock belongs to the process and is released when the process
 * closes ANY descriptor of the file: nothing else in the program opens DIR/.lock, and
 * the descriptor is close-on-exec, so the lock is the holder's alone and never passes
 * to a program it starts.
 */
#ifndef ATTNLAB_RUNLOCK_H
#define ATTNLAB_RUNLOCK_H

#include <stddef.h>

#define RUNLOCK_NAME ".lock" /* the file in the directory */
#define RUNLOCK_IN_USE 1      /* runlock_take: another process holds the lock */

typedef struct runlock {
    int fd; /* the open DIR/.lock while held; -1 when not held */
} runlock;

/* Takes the lock of directory dir (which must exist) for this process, without waiting.
 * Returns 0 with l holding it; RUNLOCK_IN_USE with one line in err (n bytes), "DIR is in
 * use by another attnlab process (pid N)", when another process holds it; or -1 with
 * one line saying why DIR/.lock could not be opened or locked. l->fd is -1 after a
 * failure. */
int runlock_take(runlock *l, const char *dir, char *err, size_t n);

/* The process that holds the lock of dir: its pid, or 0 when no other process holds it
 * (or dir has no lock file). Never takes the lock. Not for a directory this process
 * has locked itself: closing the descriptor it opens to ask would release that lock. */
long runlock_holder(const char *dir);

/* Releases a lock taken by runlock_take (closing DIR/.lock). Safe on a lock not held. */
void runlock_release(runlock *l);

#endif
