/* rundir.c — reading one finished run directory without trusting it (see rundir.h).
 *
 * Design. Each table is read whole by tsv_read (rundir_table.c), which refuses a ragged or binary file.
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

#include "../core/afile.h"
#include "../core/infile.h"
#include "../core/model.h"
#include "rundir_table.h"
#include "../core/task.h"
#include "../core/tsv.h"

/* ---- the columns --------------------------------------------------------------------- */

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
    {"grad_norm", K_AMOUNT, 0}, {"seq_per_s", K_AMOUNT, 0}, {"val_loss", K_LOSS, 0},
    {"val_token_acc", K_FRACTION, 0}, {"val_seq_acc", K_FRACTION, 0},
    {"val_seq_acc_max", K_FRACTION, 0},
};
/* The validation columns of log_cols: all or none. */
enum { LOG_VAL_FIRST = 8, LOG_VAL_N = 4 };
static const col_spec cost_cols[] = {
    {"model", K_MODEL, 0},          {"len", K_LEN, 1}, {"train_ms_per_seq", K_AMOUNT, 1},
    {"flops_per_seq", K_AMOUNT, 1}, {"decode_ms_per_seq", K_AMOUNT, 1},
};
static const col_spec bleu_cols[] = {
    {"model", K_MODEL, 0},    {"len", K_LEN, 1},        {"samples", K_COUNT, 1},
    {"hyp_len", K_AMOUNT, 1}, {"ref_len", K_AMOUNT, 1}, {"match1", K_AMOUNT, 1},
    {"total1", K_AMOUNT, 1},  {"match2", K_AMOUNT, 1},  {"total2", K_AMOUNT, 1},
    {"match3", K_AMOUNT, 1},  {"total3", K_AMOUNT, 1},  {"match4", K_AMOUNT, 1},
    {"total4", K_AMOUNT, 1},  {"bleu", K_AMOUNT, 0},
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))


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
    char *text = infile_read(path, TSV_MAX_BYTES, &len, why, sizeof why);
    if (!text && access(path, F_OK) != 0) {
        snprintf(err, n, "%s: no readable config.tsv (not a finished run directory)", dir);
        return -1;
    }
    if (!text) { /* there, but a FIFO, a directory, too large, a read error */
        snprintf(err, n, "%s", why);
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
    if (!task_known(r->cfg.task)) {
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

/* The keys of build.tsv read here, each at most once: parameters (required), the run's
 * totals and its best validation. stopped is a word, the others numbers. */
typedef struct build_key {
    col_spec spec;
    size_t at; /* offset of its double in struct rundir */
} build_key;
static const build_key build_keys[] = {
    {{"parameters", K_COUNT, 1}, offsetof(rundir, params)},
    {{"train_seconds", K_AMOUNT, 0}, offsetof(rundir, train_seconds)},
    {{"train_steps", K_STEP, 0}, offsetof(rundir, train_steps)},
    {{"best_step", K_STEP, 0}, offsetof(rundir, best_step)},
    {{"best_seconds", K_AMOUNT, 0}, offsetof(rundir, best_seconds)},
    {{"stopped", K_AMOUNT, 0}, 0},
};
#define N_BUILD_KEYS N_OF(build_keys)
static const char *const end_words[] = {"", "budget", "converged", "target"};

/* build.tsv's line i (key key, value s) for build key b into r. */
static int build_value(rundir *r, const table_ctx *ctx, const build_key *b, const char *s,
                       size_t line, char *err, size_t n)
{
    if (strcmp(b->spec.name, "stopped") != 0)
        return rundir_check_value(ctx, &b->spec, s, line, NULL, -1,
                                  (double *)((char *)r + b->at), err, n);
    for (size_t w = 1; w < N_OF(end_words); w++)
        if (strcmp(s, end_words[w]) == 0) {
            r->end = (rundir_end)w;
            return 0;
        }
    char shown[100];
    snprintf(err, n, "%s line %zu, field stopped: '%s' is not a way a run ends (accepted: "
             "budget, converged, target)", ctx->path, line,
             rundir_printable(s, shown, sizeof shown));
    return -1;
}

static int load_build(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "build.tsv");
    tsv t;
    if (tsv_read(&t, path, err, n) != 0)
        return -1;
    table_ctx ctx = *tc;
    ctx.path = path;
    const char *kv[] = {"key", "value"};
    long idx[2];
    size_t seen[N_BUILD_KEYS] = {0}; /* the line of each key */
    int rc = rundir_check_text(&t, path, err, n) || tsv_require(&t, kv, idx, 2, err, n);
    for (size_t i = 0; rc == 0 && i < t.rows; i++) {
        const char *key = tsv_get(&t, i, (size_t)idx[0]);
        size_t b = 0;
        while (b < N_BUILD_KEYS && strcmp(key, build_keys[b].spec.name) != 0)
            b++;
        if (b == N_BUILD_KEYS)
            continue; /* the build facts: shown nowhere, read by no one here */
        if (seen[b]) {
            snprintf(err, n, "%s: lines %zu and %zu both give %s (accepted: one line each)",
                     path, seen[b], i + 2, key);
            rc = -1;
            break;
        }
        seen[b] = i + 2;
        rc = build_value(r, &ctx, &build_keys[b], tsv_get(&t, i, (size_t)idx[1]), i + 2, err,
                         n);
    }
    if (rc == 0 && !seen[0]) {
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
    if (rundir_read_table(tc, dir, "eval.tsv", eval_cols, k, 0, &v, &rows, err, n) != 0)
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
    return rundir_sort_unique(r->eval, rows, sizeof *r->eval, offsetof(rundir_eval, line), cmp_eval,
                       path, "len", err, n);
}

/* eval_positions.tsv: one row per length and position, at lengths eval.tsv has. */
static int load_pos(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "eval_positions.tsv");
    double *v;
    size_t rows, k = N_OF(pos_cols);
    if (rundir_read_table(tc, dir, "eval_positions.tsv", pos_cols, k, 0, &v, &rows, err, n) != 0)
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
    return rundir_sort_unique(r->pos, rows, sizeof *r->pos, offsetof(rundir_pos, line), cmp_pos,
                       path, "len and position", err, n);
}

/* train_log.tsv: one row per step. */
static int load_log(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "train_log.tsv");
    double *v;
    size_t rows, k = N_OF(log_cols);
    if (rundir_read_table(tc, dir, "train_log.tsv", log_cols, k, 0, &v, &rows, err, n) != 0)
        return -1;
    if (rows && !(r->log = malloc(rows * sizeof *r->log))) {
        free(v);
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    size_t val_cols = 0; /* validation columns the log has (every row alike) */
    for (size_t j = 0; rows && j < LOG_VAL_N; j++)
        val_cols += !isnan(v[LOG_VAL_FIRST + j]);
    if (val_cols != 0 && val_cols != LOG_VAL_N) {
        free(v);
        snprintf(err, n, "%s: some validation columns and not others (accepted: all of "
                 "val_loss, val_token_acc, val_seq_acc, val_seq_acc_max, or none)", path);
        return -1;
    }
    r->has_val = rows && val_cols == LOG_VAL_N;
    for (size_t i = 0; i < rows; i++) {
        const double *row = v + i * k;
        r->log[i] = (rundir_step){(size_t)row[0], row[1], row[3], row[4], row[8], row[9],
                                  row[11], i + 2};
    }
    r->n_log = rows;
    free(v);
    return rundir_sort_unique(r->log, rows, sizeof *r->log, offsetof(rundir_step, line), cmp_step,
                       path, "step", err, n);
}

/* cost.tsv (optional: runs trained without --cost-lengths have none): one row per length. */
static int load_cost(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "cost.tsv");
    double *v;
    size_t rows, k = N_OF(cost_cols);
    if (rundir_read_table(tc, dir, "cost.tsv", cost_cols, k, 1, &v, &rows, err, n) != 0)
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
    return rundir_sort_unique(r->cost, rows, sizeof *r->cost, offsetof(rundir_cost, line), cmp_cost,
                       path, "len", err, n);
}

static int cmp_bleu(const void *a, const void *b)
{
    const rundir_bleu *x = a, *y = b;
    return (x->len > y->len) - (x->len < y->len);
}

/* eval_bleu.tsv (optional): one row per length, at lengths eval.tsv has; every count a
 * whole number, no n-gram matched more often than it was written. */
static int load_bleu(rundir *r, const table_ctx *tc, const char *dir, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "eval_bleu.tsv");
    double *v;
    size_t rows, k = N_OF(bleu_cols);
    if (rundir_read_table(tc, dir, "eval_bleu.tsv", bleu_cols, k, 1, &v, &rows, err, n) != 0)
        return -1;
    if (rows && !(r->bleu = malloc(rows * sizeof *r->bleu))) {
        free(v);
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < rows; i++) {
        const double *row = v + i * k;
        rundir_bleu *b = &r->bleu[i];
        *b = (rundir_bleu){.len = (size_t)row[1], .samples = (size_t)row[2], .hyp_len = row[3], .ref_len = row[4],
                           .line = i + 2};
        const char *bad = !rundir_eval_at(r, b->len) ? "len: not a length of eval.tsv" : NULL;
        for (int g = 0; g < 4; g++) {
            b->match[g] = row[5 + 2 * g];
            b->total[g] = row[6 + 2 * g];
            if (b->match[g] > b->total[g])
                bad = "a match count above its total";
        }
        for (size_t c = 3; c < 13; c++)
            if (row[c] != floor(row[c]))
                bad = "a count that is not a whole number";
        if (bad) {
            snprintf(err, n, "%s line %zu: %s", path, i + 2, bad);
            free(v);
            return -1;
        }
    }
    r->n_bleu = rows;
    free(v);
    return rundir_sort_unique(r->bleu, rows, sizeof *r->bleu, offsetof(rundir_bleu, line),
                              cmp_bleu, path, "len", err, n);
}

const rundir_bleu *rundir_bleu_at(const rundir *r, size_t len)
{
    const rundir_bleu key = {.len = len};
    return r->n_bleu ? bsearch(&key, r->bleu, r->n_bleu, sizeof key, cmp_bleu) : NULL;
}

int rundir_load(rundir *r, const char *dir, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->train_seconds = r->train_steps = r->best_step = r->best_seconds = NAN;
    if (load_config(r, dir, err, n) != 0)
        return -1;
    const table_ctx tc = {&r->cfg, task_lookup(r->cfg.task), dir};
    if (load_build(r, &tc, dir, err, n) || load_eval(r, &tc, dir, err, n) ||
        load_pos(r, &tc, dir, err, n) || load_log(r, &tc, dir, err, n) ||
        load_cost(r, &tc, dir, err, n) || load_bleu(r, &tc, dir, err, n)) {
        rundir_free(r);
        return -1;
    }
    return 0;
}

int rundir_load_training(rundir *r, const char *dir, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->params = r->train_seconds = r->train_steps = r->best_step = r->best_seconds = NAN;
    if (load_config(r, dir, err, n) != 0)
        return -1;
    const table_ctx tc = {&r->cfg, task_lookup(r->cfg.task), dir};
    if (load_log(r, &tc, dir, err, n) != 0) {
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
    free(r->bleu);
    r->eval = NULL, r->pos = NULL, r->log = NULL, r->cost = NULL, r->bleu = NULL;
    r->n_eval = r->n_pos = r->n_log = r->n_cost = r->n_bleu = 0;
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
