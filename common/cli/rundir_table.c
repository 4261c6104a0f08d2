/* rundir_table.c — the checked reading of one table of a run directory (see
 * rundir_table.h and the design note of rundir.c).
 */
#include "rundir_table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/afile.h"
#include "rundir.h"

/* Parses s as a whole number: decimal digits only, at most 15 of them (10^15 is above
 * every range here and exact in a double). */
static int parse_whole(const char *s, double *v)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 15 || s[n] != '\0')
        return -1;
    *v = (double)strtoull(s, NULL, 10);
    return 0;
}

/* Parses s as a decimal number (digits, sign, point, exponent: no hexadecimal, no
 * "nan", no space); inf only when allow_inf. The result may still be out of range. */
static int parse_real(const char *s, double *v, int allow_inf)
{
    if (allow_inf && strcmp(s, "inf") == 0) {
        *v = INFINITY;
        return 0;
    }
    if (*s == '\0' || s[strspn(s, "0123456789+-.eE")] != '\0')
        return -1;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

/* Checks cell s of column spec c at file line `line`; row holds the values of the row's
 * earlier columns (a position needs its row's len at index len_at). Writes the value to
 * *v. Returns 0, or -1 with one line in err. */
int rundir_check_value(const table_ctx *t, const col_spec *c, const char *s, size_t line,
                       const double *row, long len_at, double *v, char *err, size_t n)
{
    char shown[100], range[160];
    double lo = 0, hi = 0;
    int whole = 0, ok;
    switch (c->k) {
    case K_MODEL:
        if (strcmp(s, t->cfg->model) == 0)
            return *v = 0, 0;
        snprintf(err, n, "%s line %zu, field %s: '%s' is not the run's model (config.tsv: "
                 "%s)", t->path, line, c->name, rundir_printable(s, shown, sizeof shown),
                 t->cfg->model);
        return -1;
    case K_LEN:
        whole = 1, lo = 1, hi = (double)t->cfg->max_len;
        snprintf(range, sizeof range, "a whole number in [1, %zu], the run's max_len",
                 t->cfg->max_len);
        break;
    case K_POSITION: {
        const size_t L = len_at >= 0 ? (size_t)row[len_at] : t->cfg->max_len;
        whole = 1, lo = 1;
        if (!t->task) { /* a file task: its targets are at most max_len long */
            hi = (double)t->cfg->max_len;
            snprintf(range, sizeof range, "a whole number in [1, %zu], the run's max_len",
                     t->cfg->max_len);
            break;
        }
        const size_t T = task_target_len(t->task, L);
        hi = (double)T;
        snprintf(range, sizeof range, "a whole number in [1, %zu], the output length of %s "
                 "at len %zu", T, t->task->name, L);
        break;
    }
    case K_STEP:
        whole = 1, lo = 1, hi = (double)t->cfg->steps;
        snprintf(range, sizeof range, "a whole number in [1, %zu], the run's steps",
                 t->cfg->steps);
        break;
    case K_COUNT:
        whole = 1, lo = 1, hi = 1e12;
        snprintf(range, sizeof range, "a whole number in [1, 10^12]");
        break;
    case K_FRACTION:
        lo = 0, hi = 1;
        snprintf(range, sizeof range, "a number in [0, 1]");
        break;
    case K_AMOUNT:
    case K_LOSS:
        lo = 0, hi = INFINITY; /* parse_real refuses inf unless the kind accepts it */
        snprintf(range, sizeof range, c->k == K_LOSS ? "a number >= 0, or inf"
                                                       : "a finite number >= 0");
        break;
    }
    ok = whole ? parse_whole(s, v) : parse_real(s, v, c->k == K_LOSS);
    if (ok != 0 || !(*v >= lo && *v <= hi)) {
        snprintf(err, n, "%s line %zu, field %s: '%s' is %s (accepted: %s)", t->path, line,
                 c->name, rundir_printable(s, shown, sizeof shown),
                 ok != 0 ? (whole ? "not a whole number" : "not a number") : "out of range",
                 range);
        return -1;
    }
    return 0;
}

/* Every cell of t must be text; names the first that is not, by its column, or in a
 * key/value file by its key. */
int rundir_check_text(const tsv *t, const char *path, char *err, size_t n)
{
    const int kv = t->cols == 2 && strcmp(t->cell[0], "key") == 0;
    for (size_t r = 0; r <= t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cell[r * t->cols + c], *key = t->cell[r * t->cols];
            if (!rundir_is_text(s, NULL)) {
                char shown[100], field[100];
                rundir_printable(kv && r > 0 && c > 0 ? key : t->cell[c], field, sizeof field);
                snprintf(err, n, "%s line %zu, field %s: '%s' holds a control character or "
                         "a byte that is not UTF-8", path, r + 1, field,
                         rundir_printable(s, shown, sizeof shown));
                return -1;
            }
        }
    return 0;
}

/* Reads dir/name and checks it against the k column specs. On success *vals holds
 * rows · k values (NAN for an absent optional column) and *rows the row count; the
 * caller frees *vals. Returns 0, or -1 with one line in err. A missing file is an error
 * unless optional, when it reads as no rows. */
int rundir_read_table(const table_ctx *tc, const char *dir, const char *name,
                      const col_spec *spec, size_t k, int optional, double **vals,
                      size_t *rows, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    *vals = NULL;
    *rows = 0;
    if (afile_join(path, sizeof path, dir, name) != 0) {
        snprintf(err, n, "%s/%s: path too long", dir, name);
        return -1;
    }
    if (optional && access(path, F_OK) != 0)
        return 0;
    tsv t;
    if (tsv_read(&t, path, err, n) != 0)
        return -1;
    table_ctx ctx = *tc;
    ctx.path = path;
    long col[RUNDIR_MAX_COLS], len_at = -1;
    int rc = rundir_check_text(&t, path, err, n);
    for (size_t j = 0; rc == 0 && j < k; j++) {
        col[j] = tsv_col(&t, spec[j].name);
        if (col[j] < 0 && spec[j].required) {
            snprintf(err, n, "%s: no column '%s'", path, spec[j].name);
            rc = -1;
        }
        if (spec[j].k == K_LEN)
            len_at = (long)j;
    }
    double *v = NULL;
    if (rc == 0 && t.rows > 0 && !(v = malloc(t.rows * k * sizeof *v))) {
        snprintf(err, n, "%s: out of memory", path);
        rc = -1;
    }
    for (size_t r = 0; rc == 0 && r < t.rows; r++) {
        double *row = v + r * k;
        for (size_t j = 0; rc == 0 && j < k; j++) {
            row[j] = NAN;
            if (col[j] >= 0)
                rc = rundir_check_value(&ctx, &spec[j], tsv_get(&t, r, (size_t)col[j]), r + 2, row,
                                 len_at, &row[j], err, n);
        }
    }
    if (rc == 0) {
        *vals = v;
        *rows = t.rows;
    } else {
        free(v);
    }
    tsv_free(&t);
    return rc;
}

int rundir_sort_unique(void *recs, size_t nr, size_t sz, size_t line_at,
                       int (*cmp)(const void *, const void *), const char *path,
                       const char *key, char *err, size_t n)
{
    if (nr > 1)
        qsort(recs, nr, sz, cmp);
    const char *p = recs;
    for (size_t i = 1; i < nr; i++)
        if (cmp(p + (i - 1) * sz, p + i * sz) == 0) {
            size_t a, b;
            memcpy(&a, p + (i - 1) * sz + line_at, sizeof a);
            memcpy(&b, p + i * sz + line_at, sizeof b);
            snprintf(err, n, "%s: lines %zu and %zu are rows of the same %s (accepted: one "
                     "row each)", path, a < b ? a : b, a < b ? b : a, key);
            return -1;
        }
    return 0;
}
