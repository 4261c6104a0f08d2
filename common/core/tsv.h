/* tsv.h — reading the TSV files the toolkit wrote, without trusting them (prefix: tsv_).
 *
 * A file is read whole (up to TSV_MAX_BYTES), split into lines and tab-separated cells;
 * the first line names the columns. Every line must have as many cells as the header,
 * numbers are parsed whole (no trailing junk, finite), and a file that breaks a rule is
 * rejected with one line naming the file, the line and what was wrong — never a crash,
 * whatever the bytes: `attnlab report` reads files that people copied, merged or edited.
 */
#ifndef ATTNLAB_TSV_H
#define ATTNLAB_TSV_H

#include <stddef.h>

#define TSV_MAX_BYTES ((size_t)256 << 20) /* 256 MiB: far above any file attnlab writes */

typedef struct tsv {
    char *buf;     /* the file's bytes, cut into NUL-terminated cells in place */
    char **cell;   /* ((rows + 1) · cols) pointers into buf; row 0 is the header */
    size_t rows;   /* data lines, header excluded */
    size_t cols;
    char path[256];
} tsv;

/* Reads and splits path. Returns 0, or -1 with one line in err. Blank lines at the end
 * are ignored; a blank line elsewhere is an error. */
int tsv_read(tsv *t, const char *path, char *err, size_t n);

/* Splits text (taken over: freed by tsv_free) the same way; name labels messages. */
int tsv_parse(tsv *t, char *text, size_t len, const char *name, char *err, size_t n);

void tsv_free(tsv *t);

/* The index of column name, or -1. */
long tsv_col(const tsv *t, const char *name);

/* Cell of data row r (0-based, header excluded) and column c. */
const char *tsv_get(const tsv *t, size_t r, size_t c);

/* Parses cell (r, c) as a finite number. Returns 0, or -1 with one line in err. */
int tsv_number(const tsv *t, size_t r, size_t c, double *out, char *err, size_t n);

/* Looks up columns names[0..k-1]; returns 0, or -1 with a line naming the missing one. */
int tsv_require(const tsv *t, const char *const *names, long *idx, size_t k, char *err,
                size_t n);

#endif
