/* rundir.c — reading one finished run directory without trusting it (see rundir.h).
 *
 * Design. Each table is read whole by tsv_read, which refuses a ragged or binary file.
 * Then one pass looks at every cell: each must be text (rundir_is_text: UTF-8, no control
 * character), and each column this program reads is parsed by its kind (the col_spec
 * tables below: a length, a position, a step, a count, a fraction, an amount, the model)
 * against a range taken from the run's own config.tsv — max_len, steps, the task's target
 * length — after config.tsv itself was checked against the registries (model_lookup,
 * task_lookup) and the settings table (config_set line by line, config_check). Columns this
 * program does not read may exist (a newer attnlab may add some) but must be text. The
 * records are then sorted by key and a repeated key is refused, naming both lines, so a
 * duplicated row can never count twice.
 *
 * Invariant: a loaded run holds only values that passed these checks; a refused run
 * holds nothing (every failure frees what was read so far).
 */
#include "rundir.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "model.h"
#include "task.h"
#include "tsv.h"

/* ---- values -------------------------------------------------------------------------- */

/* What a column holds, and so which values it accepts. */
typedef enum {
    K_MODEL,    /* the run's model, as config.tsv names it */
    K_LEN,      /* a sequence length: a whole number in [1, max_len] */
    K_POSITION, /* an output position: a whole number in [1, target length of the row's len] */
    K_STEP,     /* a training step: a whole number in [1, steps] */
    K_COUNT,    /* a count of sequences or parameters: a whole number in [1, 10^12] */
    K_FRACTION, /* an accuracy: a number in [0, 1] */
    K_AMOUNT,   /* a time, loss, rate, norm or FLOP count: a finite number >= 0 */
    K_LOSS,     /* an evaluation loss: as K_AMOUNT, or inf (a probability that became 0) */
} kind;

/* A column a run's table may have. */
typedef struct col_spec {
    const char *name;
    kind k;
    int required; /* a run without it is refused */
} col_spec;

#define MAX_COLS 8 /* the most columns of one table below */

static const col_spec eval_cols[] = {
    {"model", K_MODEL, 0},      {"len", K_LEN, 1},         {"samples", K_COUNT, 0},
    {"token_acc", K_FRACTION, 1}, {"seq_acc", K_FRACTION, 1}, {"loss", K_LOSS, 0},
};
static const col_spec pos_cols[] = {
    {"model", K_MODEL, 0}, {"len", K_LEN, 1}, {"position", K_POSITION, 1},
    {"accuracy", K_FRACTION, 1},
};
static const col_spec log_cols[] = {
    {"step", K_STEP, 1},       {"seconds", K_AMOUNT, 1},   {"lr", K_AMOUNT, 0},
    {"loss", K_AMOUNT, 1},     {"token_acc", K_FRACTION, 1}, {"seq_acc", K_FRACTION, 0},
    {"grad_norm", K_AMOUNT, 0}, {"seq_per_s", K_AMOUNT, 0},
};
static const col_spec cost_cols[] = {
    {"model", K_MODEL, 0},          {"len", K_LEN, 1}, {"train_ms_per_seq", K_AMOUNT, 1},
    {"flops_per_seq", K_AMOUNT, 1}, {"decode_ms_per_seq", K_AMOUNT, 1},
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

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

/* What the checks of one table need to know about the run. */
typedef struct table_ctx {
    const config *cfg;
    const task *task;
    const char *path; /* the file, for messages */
} table_ctx;

/* Checks cell s of column spec c at file line `line`; row holds the values of the row's
 * earlier columns (a position needs its row's len at index len_at). Writes the value to
 * *v. Returns 0, or -1 with one line in err. */
static int check_value(const table_ctx *t, const col_spec *c, const char *s, size_t line,
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
        const size_t T = t->task->target_len(L);
        whole = 1, lo = 1, hi = (double)T;
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
static int check_text(const tsv *t, const char *path, char *err, size_t n)
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
static int read_table(const table_ctx *tc, const char *dir, const char *name,
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
    long col[MAX_COLS], len_at = -1;
    int rc = check_text(&t, path, err, n);
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
                rc = check_value(&ctx, &spec[j], tsv_get(&t, r, (size_t)col[j]), r + 2, row,
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

/* ---- records ------------------------------------------------------------------------- */

static int cmp_eval(const void *a, const void *b)
{
    const rundir_eval *x = a, *y = b;
    return (x->len > y->len) - (x->len < y->len);
}

static int cmp_pos(const void *a, const void *b)
{
    const rundir_pos *x = a, *y = b;
    if (x->len != y->len)
        return (x->len > y->len) - (x->len < y->len);
    return (x->position > y->position) - (x->position < y->position);
}

static int cmp_step(const void *a, const void *b)
{
    const rundir_step *x = a, *y = b;
    return (x->step > y->step) - (x->step < y->step);
}

static int cmp_cost(const void *a, const void *b)
{
    const rundir_cost *x = a, *y = b;
    return (x->len > y->len) - (x->len < y->len);
}

/* Sorts nr records of size sz by cmp and refuses two with one key, naming their lines
 * (each record holds its file line at line_at). */
static int sort_unique(void *recs, size_t nr, size_t sz, size_t line_at,
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

/* ---- the files ----------------------------------------------------------------------- */

/* One line of config.tsv (NUL-terminated, line number `line`): key<TAB>value, both text,
 * a known key not set before (seen[k] is the line that set field k), a value of that
 * setting's kind and range. Sets it in r->cfg. Returns 0, or -1 with one line in err. */
static int config_line(rundir *r, char *p, size_t line, size_t *seen, const char *path,
                       char *err, size_t n)
{
    char shown[100], why[400];
    if (*p == '\0' || strcmp(p, "key\tvalue") == 0)
        return 0; /* a blank line, the header */
    char *tab = strchr(p, '\t');
    if (!tab) {
        snprintf(err, n, "%s line %zu: '%s' has no tab between key and value", path, line,
                 rundir_printable(p, shown, sizeof shown));
        return -1;
    }
    *tab = '\0';
    const char *value = tab + 1;
    if (!rundir_is_text(p, NULL)) {
        snprintf(err, n, "%s line %zu: the key '%s' holds a control character or a byte "
                 "that is not UTF-8", path, line, rundir_printable(p, shown, sizeof shown));
        return -1;
    }
    if (!rundir_is_text(value, NULL)) {
        snprintf(err, n, "%s line %zu, field %.60s: '%s' holds a control character or a "
                 "byte that is not UTF-8", path, line, p,
                 rundir_printable(value, shown, sizeof shown));
        return -1;
    }
    const config_field *f = config_find(p);
    if (!f) {
        snprintf(err, n, "%s line %zu: unknown key '%s'", path, line,
                 rundir_printable(p, shown, sizeof shown));
        return -1;
    }
    const size_t k = (size_t)(f - config_fields);
    if (seen[k]) {
        snprintf(err, n, "%s: lines %zu and %zu both set %s (accepted: one line each)", path,
                 seen[k], line, f->name);
        return -1;
    }
    seen[k] = line;
    if (config_set(&r->cfg, f, value, why, sizeof why) != 0) {
        /* config_set names the flag ("--max-len: ..."); the field is named here */
        const char *colon = strncmp(why, "--", 2) == 0 ? strstr(why, ": ") : NULL;
        const char *said = colon ? colon + 2 : why;
        char whole[sizeof why + 64];
        snprintf(err, n, "%s line %zu, field %s: %s", path, line, f->name,
                 rundir_printable(said, whole, sizeof whole));
        return -1;
    }
    return 0;
}

/* config.tsv: text, known keys each once, values in range, a registered model and task
 * (read here line by line rather than by config_read_text, which lets a later line
 * win and names no line). */
static int load_config(rundir *r, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX], why[512];
    if (afile_join(path, sizeof path, dir, "config.tsv") != 0) {
        snprintf(err, n, "%s: path too long", dir);
        return -1;
    }
    size_t len = 0;
    char *text = afile_read(path, TSV_MAX_BYTES, &len);
    if (!text) {
        snprintf(err, n, "%s: no readable config.tsv (not a finished run directory)", dir);
        return -1;
    }
    size_t *seen = calloc(config_n_fields, sizeof *seen); /* the line setting each field */
    int rc = 0;
    if (!seen) {
        snprintf(err, n, "%s: out of memory", path);
        rc = -1;
    } else if (memchr(text, '\0', len)) {
        snprintf(err, n, "%s: binary data (a NUL byte): not a configuration", path);
        rc = -1;
    }
    config_defaults(&r->cfg);
    size_t line = 1;
    for (char *p = text; rc == 0 && *p; line++) {
        const size_t l = strcspn(p, "\n");
        const char end = p[l];
        p[l] = '\0';
        rc = config_line(r, p, line, seen, path, err, n);
        p += l + (end == '\n');
    }
    free(text);
    if (rc == 0 && (!seen[config_find("model") - config_fields] ||
                    !seen[config_find("task") - config_fields])) {
        snprintf(err, n, "%s: no line for the %s (a run names its model and task)", path,
                 !seen[config_find("model") - config_fields] ? "model" : "task");
        rc = -1;
    }
    free(seen);
    if (rc != 0)
        return -1;
    if (!model_lookup(r->cfg.model)) {
        snprintf(err, n, "%s: model '%s' is not a model of this build (accepted: %s)", path,
                 rundir_printable(r->cfg.model, why, sizeof why), model_names());
        return -1;
    }
    if (!task_lookup(r->cfg.task)) {
        snprintf(err, n, "%s: task '%s' is not a task of this build (accepted: %s)", path,
                 rundir_printable(r->cfg.task, why, sizeof why), task_names());
        return -1;
    }
    if (config_check(&r->cfg, why, sizeof why) != 0) {
        snprintf(err, n, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

/* build.tsv: parameters (required) and train_seconds (optional), each at most once. */
static int load_build(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    static const col_spec params = {"parameters", K_COUNT, 1};
    static const col_spec secs = {"train_seconds", K_AMOUNT, 0};
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "build.tsv");
    tsv t;
    if (tsv_read(&t, path, err, n) != 0)
        return -1;
    table_ctx ctx = *tc;
    ctx.path = path;
    const char *kv[] = {"key", "value"};
    long idx[2];
    size_t line_params = 0, line_secs = 0;
    int rc = check_text(&t, path, err, n) || tsv_require(&t, kv, idx, 2, err, n);
    for (size_t i = 0; rc == 0 && i < t.rows; i++) {
        const char *key = tsv_get(&t, i, (size_t)idx[0]);
        const col_spec *c = strcmp(key, params.name) == 0 ? &params
                            : strcmp(key, secs.name) == 0 ? &secs : NULL;
        if (!c)
            continue; /* the build facts: shown nowhere, read by no one here */
        size_t *seen = c == &params ? &line_params : &line_secs;
        if (*seen) {
            snprintf(err, n, "%s: lines %zu and %zu both give %s (accepted: one line each)",
                     path, *seen, i + 2, key);
            rc = -1;
            break;
        }
        *seen = i + 2;
        rc = check_value(&ctx, c, tsv_get(&t, i, (size_t)idx[1]), i + 2, NULL, -1,
                         c == &params ? &r->params : &r->train_seconds, err, n);
    }
    if (rc == 0 && !line_params) {
        snprintf(err, n, "%s: no line for parameters", path);
        rc = -1;
    }
    tsv_free(&t);
    return rc ? -1 : 0;
}

/* eval.tsv: at least one row, one per length. */
static int load_eval(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "eval.tsv");
    double *v;
    size_t rows, k = N_OF(eval_cols);
    if (read_table(tc, dir, "eval.tsv", eval_cols, k, 0, &v, &rows, err, n) != 0)
        return -1;
    if (rows == 0) {
        snprintf(err, n, "%s has no rows: the run was never evaluated, so it adds nothing",
                 path);
        return -1;
    }
    if (!(r->eval = malloc(rows * sizeof *r->eval))) {
        free(v);
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < rows; i++)
        r->eval[i] = (rundir_eval){(size_t)v[i * k + 1], v[i * k + 3], v[i * k + 4], i + 2};
    r->n_eval = rows;
    free(v);
    return sort_unique(r->eval, rows, sizeof *r->eval, offsetof(rundir_eval, line), cmp_eval,
                       path, "len", err, n);
}

/* eval_positions.tsv: one row per length and position, at lengths eval.tsv has. */
static int load_pos(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "eval_positions.tsv");
    double *v;
    size_t rows, k = N_OF(pos_cols);
    if (read_table(tc, dir, "eval_positions.tsv", pos_cols, k, 0, &v, &rows, err, n) != 0)
        return -1;
    if (rows && !(r->pos = malloc(rows * sizeof *r->pos))) {
        free(v);
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < rows; i++) {
        r->pos[i] = (rundir_pos){(size_t)v[i * k + 1], (size_t)v[i * k + 2], v[i * k + 3],
                                 i + 2};
        if (!rundir_eval_at(r, r->pos[i].len)) {
            snprintf(err, n, "%s line %zu, field len: %zu is not a length of eval.tsv", path,
                     i + 2, r->pos[i].len);
            free(v);
            return -1;
        }
    }
    r->n_pos = rows;
    free(v);
    return sort_unique(r->pos, rows, sizeof *r->pos, offsetof(rundir_pos, line), cmp_pos,
                       path, "len and position", err, n);
}

/* train_log.tsv: one row per step. */
static int load_log(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "train_log.tsv");
    double *v;
    size_t rows, k = N_OF(log_cols);
    if (read_table(tc, dir, "train_log.tsv", log_cols, k, 0, &v, &rows, err, n) != 0)
        return -1;
    if (rows && !(r->log = malloc(rows * sizeof *r->log))) {
        free(v);
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < rows; i++)
        r->log[i] = (rundir_step){(size_t)v[i * k], v[i * k + 1], v[i * k + 3], v[i * k + 4],
                                  i + 2};
    r->n_log = rows;
    free(v);
    return sort_unique(r->log, rows, sizeof *r->log, offsetof(rundir_step, line), cmp_step,
                       path, "step", err, n);
}

/* cost.tsv (optional: runs trained without --cost-lengths have none): one row per length. */
static int load_cost(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "cost.tsv");
    double *v;
    size_t rows, k = N_OF(cost_cols);
    if (read_table(tc, dir, "cost.tsv", cost_cols, k, 1, &v, &rows, err, n) != 0)
        return -1;
    if (rows && !(r->cost = malloc(rows * sizeof *r->cost))) {
        free(v);
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < rows; i++)
        r->cost[i] = (rundir_cost){(size_t)v[i * k + 1], v[i * k + 2], v[i * k + 3],
                                   v[i * k + 4], i + 2};
    r->n_cost = rows;
    free(v);
    return sort_unique(r->cost, rows, sizeof *r->cost, offsetof(rundir_cost, line), cmp_cost,
                       path, "len", err, n);
}

int rundir_load(rundir *r, const char *dir, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->train_seconds = NAN;
    if (load_config(r, dir, err, n) != 0)
        return -1;
    const table_ctx tc = {&r->cfg, task_lookup(r->cfg.task), dir};
    if (load_build(r, &tc, dir, err, n) || load_eval(r, &tc, dir, err, n) ||
        load_pos(r, &tc, dir, err, n) || load_log(r, &tc, dir, err, n) ||
        load_cost(r, &tc, dir, err, n)) {
        rundir_free(r);
        return -1;
    }
    return 0;
}

void rundir_free(rundir *r)
{
    free(r->eval);
    free(r->pos);
    free(r->log);
    free(r->cost);
    r->eval = NULL, r->pos = NULL, r->log = NULL, r->cost = NULL;
    r->n_eval = r->n_pos = r->n_log = r->n_cost = 0;
}

/* ---- look-ups ------------------------------------------------------------------------ */

const rundir_eval *rundir_eval_at(const rundir *r, size_t len)
{
    rundir_eval key = {.len = len};
    return r->n_eval ? bsearch(&key, r->eval, r->n_eval, sizeof key, cmp_eval) : NULL;
}

const rundir_cost *rundir_cost_at(const rundir *r, size_t len)
{
    rundir_cost key = {.len = len};
    return r->n_cost ? bsearch(&key, r->cost, r->n_cost, sizeof key, cmp_cost) : NULL;
}

const rundir_pos *rundir_pos_at(const rundir *r, size_t len, size_t position)
{
    rundir_pos key = {.len = len, .position = position};
    return r->n_pos ? bsearch(&key, r->pos, r->n_pos, sizeof key, cmp_pos) : NULL;
}

const rundir_step *rundir_step_at(const rundir *r, size_t step)
{
    rundir_step key = {.step = step};
    return r->n_log ? bsearch(&key, r->log, r->n_log, sizeof key, cmp_step) : NULL;
}
