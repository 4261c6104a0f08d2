/* afile.h — files that appear whole or not at all, and files read whole (prefix: afile_).
 *
 * Design. Every file the toolkit writes — result tables, figure variables, traces, the
 * web page, checkpoints — goes through one policy:
 *     1. a new temporary file beside the final path, "PATH.tmp.PID" (".K" appended when
 *        a leftover of an earlier process with the same PID holds that name), created
 *        with O_EXCL, so nothing that already exists there, a leftover or a planted
 *        link, is ever written through; mode 0666, so the umask decides the permissions
 *        as for any other new file;
 *     2. afile_commit flushes it (fflush: our buffer; fsync: the kernel's), so the rename
 *        cannot overtake the data, then renames it over PATH and syncs the directory, so
 *        the rename itself survives a crash (best effort: some file systems refuse).
 *
 * Invariant. PATH holds either the previous file or the complete new one, never a
 * mixture: rename(2) replaces it in one step or not at all, and every failure (an
 * unwritable directory, a full disk, a write error seen at any time) removes the
 * temporary file and leaves PATH as it was. Every failure is one line in the caller's
 * buffer, "cannot write PATH: REASON", and a failure after the temporary file was
 * created adds "(nothing was replaced: ...)". A process killed midway can leave a
 * *.tmp.* file behind, which is safe to delete.
 */
#ifndef ATTNLAB_AFILE_H
#define ATTNLAB_AFILE_H

#include <stddef.h>
#include <stdio.h>

#define AFILE_PATH_MAX 4096

typedef struct afile {
    FILE *f;                   /* write here */
    int err_no;                /* errno of a failed write the writer saw itself (0: none);
                                  afile_commit then refuses and reports it */
    char path[AFILE_PATH_MAX]; /* final name */
    char tmp[AFILE_PATH_MAX];  /* temporary name, same directory ("" when none is open) */
} afile;

/* Creates the temporary file for path (step 1 above) and opens a->f on it. Refuses a
 * path that is a directory. Returns 0, or -1 with one line in err (n bytes; err may be
 * NULL when n is 0) and nothing created. */
int afile_open(afile *a, const char *path, char *err, size_t n);

/* The first half of afile_commit: flushes, fsyncs and closes the temporary file, which
 * stays under its temporary name (a->tmp) until afile_publish or afile_abort. Several
 * files written together are finished first, then published one after the other, so a
 * failure while writing any of them replaces none. On failure removes the temporary
 * file, writes one line to err and returns -1. */
int afile_finish(afile *a, char *err, size_t n);

/* The second half: renames the finished temporary file over path and syncs the
 * directory. On failure removes the temporary file, leaves path as it was, writes one
 * line to err and returns -1. */
int afile_publish(afile *a, char *err, size_t n);

/* afile_finish, then afile_publish: flushes, fsyncs, closes and renames the temporary file into place, then syncs the
 * directory. On failure (a->err_no set by the writer, a write error seen at any time, a
 * full disk, a refused rename) removes the temporary file, leaves path as it was,
 * writes one line to err and returns -1. */
int afile_commit(afile *a, char *err, size_t n);

/* Closes and removes the temporary file; path is left as it was. Safe to call twice. */
void afile_abort(afile *a);

/* Writes dir/name whole or not at all: opens it, calls write(f, ctx), which returns 0 or
 * -1 when a write failed, and commits. Returns 0, or -1 with one line in err. */
int afile_write(const char *dir, const char *name, int (*write)(FILE *f, const void *ctx),
                const void *ctx, char *err, size_t n);

/* Reads the regular file at path whole into a new NUL-terminated buffer (free it) and
 * sets *len (when len is not NULL) to its length. NULL when the file is missing, is not
 * a regular file (a FIFO is refused, never waited on), holds more than max bytes, cannot
 * be read, or memory runs out. infile_read (infile.h) does the same and says why. */
char *afile_read(const char *path, size_t max, size_t *len);

/* Creates directory dir (and its parents) unless it exists. Returns 0, or -1 with a line
 * in err (not a directory, no permission). */
int afile_mkdirs(const char *dir, char *err, size_t n);

/* Writes path = dir + "/" + name into buf; returns -1 when it does not fit. */
int afile_join(char *buf, size_t n, const char *dir, const char *name);

#endif
