/* infile.h — opening and reading the files the toolkit reads, without ever blocking and
 * without taking a failure for the end of the input (prefix: infile_).
 *
 * Design. Every file read — checkpoints, data files of file tasks, the tables of a run
 * directory, a comparison's manifest and commands, `eval --input` — is opened here:
 *     1. open(2) with O_NONBLOCK, so that a FIFO nobody writes to (or a device that
 *        waits) cannot hold the open; for a regular file the flag changes nothing;
 *     2. fstat(2) on the open descriptor, not on the name, so what is checked is what is
 *        read; anything but a regular file is refused, with one line naming the path and
 *        what it is (a directory, a FIFO, a device, a socket);
 *     3. O_NONBLOCK cleared again, so that reading is ordinary blocking reading.
 * Standard input ("-", where a command takes it) is the one exception: a pipe is what
 * it is for.
 *
 * Invariant. Reading ends only at the end of the file. A read error, memory running out
 * or a line beyond its limit is reported as such (one line in the caller's buffer) and
 * never returned as if the input had ended: the caller stops with an error instead of
 * going on with half the file.
 */
#ifndef ATTNLAB_INFILE_H
#define ATTNLAB_INFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What the mode of a file that is not a regular one says it is, as a phrase for a
 * message: "a directory", "a FIFO" (a named pipe), "a character device", "a block
 * device", "a socket", or "not a regular file". */
const char *infile_kind(mode_t mode);

/* Opens path for reading by steps 1 to 3 above and fills *st from the open descriptor.
 * Returns the descriptor (close-on-exec); or -1 with *st zeroed when the open or fstat
 * failed (errno kept; err "cannot read PATH: REASON"); or -2 with *st filled when path
 * is not a regular file (err "cannot read PATH: it is a directory, not a regular file").
 * err may be NULL when n is 0. */
int infile_open_fd(const char *path, struct stat *st, char *err, size_t n);

/* Opens path as a stream for reading (infile_open_fd); "-" is standard input when
 * stdin_ok is set, whatever kind of file it is. Returns the stream, or NULL with one
 * line in err. A stream of this function is closed with fclose unless it is stdin. */
FILE *infile_open(const char *path, int stdin_ok, char *err, size_t n);

/* Reads the regular file at path whole into a new buffer of its length plus a NUL
 * (free it) and sets *len (when len is not NULL) to that length. Returns NULL with one
 * line in err when the file cannot be opened or is not a regular file, holds more than
 * max bytes ("PATH holds N bytes (accepted: at most MAX)"), cannot be read to its end
 * ("cannot read PATH: REASON") or memory runs out ("PATH: out of memory"). */
char *infile_read(const char *path, size_t max, size_t *len, char *err, size_t n);

/* What infile_getline returns instead of a length. */
#define INFILE_END (-1)  /* the end of the input: no more lines */
#define INFILE_FAIL (-2) /* a read error or memory ran out: stop reading (err says which) */
#define INFILE_LONG (-3) /* the line holds more than max bytes: reading stopped inside
                          * it (err says so); stop reading too */

/* Reads the next line of f (called name in messages) into *line, grown as needed (free
 * it; *cap is its size), with its newline when it has one and a NUL after it, so that a
 * NUL byte inside the line is seen by the length. Returns the line's length (at least
 * 1), or INFILE_END, INFILE_FAIL or INFILE_LONG with one line in err for the last two.
 * max bounds the bytes kept of one line (the newline included), so an endless line costs
 * at most max bytes of memory. */
ssize_t infile_getline(char **line, size_t *cap, size_t max, FILE *f, const char *name,
                       char *err, size_t n);

#endif
