/* tsv.c — strict reading of TSV files (see tsv.h). */
#include "tsv.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"

int tsv_parse(tsv *t, char *text, size_t len, const char *name, char *err, size_t n)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", name);
    t->buf = text;
    if (memchr(text, '\0', len)) {
        snprintf(err, n, "%s: binary data (a NUL byte): not a TSV file", name);
        return -1;
    }
    /* drop trailing newlines, then count lines and the header's cells */
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    if (len == 0) {
        snprintf(err, n, "%s: empty file", name);
        return -1;
    }
    size_t lines = 1, cols = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    for (size_t i = 0; i < len && text[i] != '\n'; i++)
        cols += text[i] == '\t';
    if (lines > SIZE_MAX / sizeof(char *) / cols) {
        snprintf(err, n, "%s: too many cells", name);
        return -1;
    }
    t->cell = malloc(lines * cols * sizeof *t->cell);
    if (!t->cell) {
        snprintf(err, n, "%s: out of memory", name);
        return -1;
    }
    t->cols = cols;
    t->rows = lines - 1;
    char *p = text;
    for (size_t r = 0; r < lines; r++) {
        char *end = strchr(p, '\n');
        if (end)
            *end = '\0';
        size_t l = strlen(p);
        if (l > 0 && p[l - 1] == '\r')
            p[--l] = '\0';
        size_t c = 0;
        for (char *q = p;; c++) {
            char *tab = strchr(q, '\t');
            if (c < cols)
                t->cell[r * cols + c] = q;
            if (!tab)
                break;
            *tab = '\0';
            q = tab + 1;
        }
        if (c + 1 != cols) {
            snprintf(err, n, "%s line %zu: %zu fields, but the header has %zu", name, r + 1,
                     c + 1, cols);
            return -1;
        }
        p = end ? end + 1 : p + l;
    }
    return 0;
}

int tsv_read(tsv *t, const char *path, char *err, size_t n)
{
    memset(t, 0, sizeof *t);
    size_t size = 0;
    char *buf = infile_read(path, TSV_MAX_BYTES, &size, err, n); /* a FIFO is refused */
    if (!buf)
        return -1;
    if (tsv_parse(t, buf, size, path, err, n) != 0) {
        tsv_free(t);
        return -1;
    }
    return 0;
}

void tsv_free(tsv *t)
{
    free(t->buf);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

long tsv_col(const tsv *t, const char *name)
{
    for (size_t c = 0; c < t->cols; c++)
        if (strcmp(t->cell[c], name) == 0)
            return (long)c;
    return -1;
}

const char *tsv_get(const tsv *t, size_t r, size_t c) { return t->cell[(r + 1) * t->cols + c]; }

int tsv_number(const tsv *t, size_t r, size_t c, double *out, char *err, size_t n)
{
    const char *s = tsv_get(t, r, c);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        snprintf(err, n, "%s line %zu, column %s: '%.40s' is not a number", t->path, r + 2,
                 t->cell[c], s);
        return -1;
    }
    *out = v;
    return 0;
}

int tsv_require(const tsv *t, const char *const *names, long *idx, size_t k, char *err,
                size_t n)
{
    for (size_t i = 0; i < k; i++)
        if ((idx[i] = tsv_col(t, names[i])) < 0) {
            snprintf(err, n, "%s: no column '%s'", t->path, names[i]);
            return -1;
        }
    return 0;
}
