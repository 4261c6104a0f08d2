/* rundir.c — reading one finished run directory without trusting it (see rundir.h).
 *
 * Design. Each table is read whole by tsv_read, which rejects a ragged or binary file;
 * tsv_require finds the columns by name, so a file with added columns still reads;
 * then every cell of those columns is parsed once (all_numbers) before the run is
 * accepted. A failure frees what was read so far: a loaded run holds four tables, a
 * refused one holds nothing.
 */
#include "rundir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"

/* Reads name in dir as a TSV with the given columns. */
static int read_table(tsv *t, const char *dir, const char *name, const char *const *cols,
                      long *idx, size_t k, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    if (afile_join(path, sizeof path, dir, name) != 0) {
        snprintf(err, n, "%s: path too long", dir);
        return -1;
    }
    if (tsv_read(t, path, err, n) != 0)
        return -1;
    if (tsv_require(t, cols, idx, k, err, n) != 0) {
        tsv_free(t);
        return -1;
    }
    return 0;
}

/* The value of key in a key/value TSV, or NAN. */
static double kv_number(const tsv *t, const char *key)
{
    for (size_t r = 0; r < t->rows; r++)
        if (strcmp(tsv_get(t, r, 0), key) == 0) {
            char *end;
            double v = strtod(tsv_get(t, r, 1), &end);
            return *end == '\0' ? v : NAN;
        }
    return NAN;
}

void rundir_free(rundir *r)
{
    tsv_free(&r->eval);
    tsv_free(&r->pos);
    tsv_free(&r->log);
    tsv_free(&r->cost);
}

/* Do the columns cols[0..k-1] of every row of t hold numbers? (An empty table does.) */
static int all_numbers(const tsv *t, const long *cols, size_t k, char *err, size_t n)
{
    double v;
    for (size_t i = 0; i < t->rows; i++)
        for (size_t j = 0; j < k; j++)
            if (tsv_number(t, i, (size_t)cols[j], &v, err, n) != 0)
                return -1;
    return 0;
}

int rundir_load(rundir *r, const char *dir, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "config.tsv");
    char *text = afile_read(path, TSV_MAX_BYTES, NULL);
    if (!text) {
        snprintf(err, n, "%s: no readable config.tsv (not a finished run directory)", dir);
        return -1;
    }
    config_defaults(&r->cfg);
    int bad = config_read_text(&r->cfg, text, err, n);
    free(text);
    if (bad)
        return -1;
    tsv build;
    const char *kv[] = {"key", "value"};
    long kvi[2];
    if (read_table(&build, dir, "build.tsv", kv, kvi, 2, err, n) != 0)
        return -1;
    r->params = kv_number(&build, "parameters");
    r->train_seconds = kv_number(&build, "train_seconds");
    tsv_free(&build);
    const char *ec[] = {"len", "token_acc", "seq_acc"};
    const char *pc[] = {"len", "position", "accuracy"};
    const char *lc[] = {"step", "seconds", "loss", "token_acc"};
    long e[3], p[3], l[4];
    if (read_table(&r->eval, dir, "eval.tsv", ec, e, 3, err, n) ||
        read_table(&r->pos, dir, "eval_positions.tsv", pc, p, 3, err, n) ||
        read_table(&r->log, dir, "train_log.tsv", lc, l, 4, err, n)) {
        rundir_free(r);
        return -1;
    }
    r->e_len = e[0], r->e_tok = e[1], r->e_seq = e[2];
    r->p_len = p[0], r->p_pos = p[1], r->p_acc = p[2];
    r->l_step = l[0], r->l_sec = l[1], r->l_loss = l[2], r->l_acc = l[3];
    /* cost.tsv is optional: runs trained without --cost-lengths have none */
    const char *cc[] = {"len", "train_ms_per_seq", "flops_per_seq", "decode_ms_per_seq"};
    long c[4] = {0, 0, 0, 0};
    afile_join(path, sizeof path, dir, "cost.tsv");
    if (access(path, F_OK) == 0) {
        if (read_table(&r->cost, dir, "cost.tsv", cc, c, 4, err, n)) {
            rundir_free(r);
            return -1;
        }
        r->c_len = c[0], r->c_train = c[1], r->c_flops = c[2], r->c_decode = c[3];
    }
    /* every number must parse: a malformed run is refused whole, not half-plotted */
    if (all_numbers(&r->eval, e, 3, err, n) || all_numbers(&r->pos, p, 3, err, n) ||
        all_numbers(&r->log, l, 4, err, n) || all_numbers(&r->cost, c, 4, err, n)) {
        rundir_free(r);
        return -1;
    }
    return 0;
}
