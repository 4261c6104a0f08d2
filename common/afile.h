/* afile.h — files that appear whole or not at all (prefix: afile_).
 *
 * Every result the toolkit writes goes first to a temporary name beside its final path
 * ("PATH.tmp.PID"); afile_commit flushes it, fsyncs it and renames it into place. A run
 * that is interrupted, or a write that fails (a full disk, an unwritable directory),
 * therefore never leaves a half-written file, and never damages an earlier file at the
 * same path: rename(2) replaces it atomically or not at all.
 */
#ifndef ATTNLAB_AFILE_H
#define ATTNLAB_AFILE_H

#include <stdio.h>

#define AFILE_PATH_MAX 4096

typedef struct afile {
    FILE *f;                      /* write here */
    char path[AFILE_PATH_MAX];    /* final name */
    char tmp[AFILE_PATH_MAX];     /* temporary name, same directory */
} afile;

/* Opens a temporary file for path. On failure writes one line to err and returns -1. */
int afile_open(afile *a, const char *path, char *err, size_t n);

/* Flushes, fsyncs, closes and renames the temporary file into place. On failure (a write
 * error seen at any time, a full disk) removes the temporary file, leaves path as it
 * was, writes one line to err and returns -1. */
int afile_commit(afile *a, char *err, size_t n);

/* Closes and removes the temporary file; path is left as it was. Safe to call twice. */
void afile_abort(afile *a);

/* Creates directory dir (and its parents) unless it exists. Returns 0, or -1 with a line
 * in err (not a directory, no permission). */
int afile_mkdirs(const char *dir, char *err, size_t n);

/* Writes path = dir + "/" + name into buf; returns -1 when it does not fit. */
int afile_join(char *buf, size_t n, const char *dir, const char *name);

#endif
