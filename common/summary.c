/* summary.c — merging runs into tables, figures and report.html (see summary.h). */
#include "summary.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afile.h"
#include "config.h"
#include "tsv.h"

#define MAX_MODELS 16

/* What one run directory holds. */
typedef struct run_data {
    const char *dir;
    config cfg;
    double params, train_seconds;
    tsv eval, pos, log, cost; /* cost.rows == 0 when the run measured no cost */
    long e_len, e_tok, e_seq, p_len, p_pos, p_acc;
    long l_step, l_sec, l_loss, l_acc;
    long c_len, c_train, c_flops, c_decode;
} run_data;

/* Reads a whole file into a NUL-terminated buffer (NULL on failure). */
static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size > TSV_MAX_BYTES) {
        fclose(f);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!buf || got != (size_t)st.st_size) {
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    if (len)
        *len = got;
    return buf;
}

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

static void run_free(run_data *r)
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

/* Loads run directory dir into r. Returns 0, or -1 with one line in err. */
static int run_load(run_data *r, const char *dir, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    char path[AFILE_PATH_MAX];
    afile_join(path, sizeof path, dir, "config.tsv");
    char *text = read_text(path, NULL);
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
        run_free(r);
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
            run_free(r);
            return -1;
        }
        r->c_len = c[0], r->c_train = c[1], r->c_flops = c[2], r->c_decode = c[3];
    }
    /* every number must parse: a malformed run is refused whole, not half-plotted */
    if (all_numbers(&r->eval, e, 3, err, n) || all_numbers(&r->pos, p, 3, err, n) ||
        all_numbers(&r->log, l, 4, err, n) || all_numbers(&r->cost, c, 4, err, n)) {
        run_free(r);
        return -1;
    }
    return 0;
}

/* Cell (i, col) of t as a number (already validated by run_load). */
static double num(const tsv *t, size_t i, long col) { return atof(tsv_get(t, i, (size_t)col)); }

/* ---- statistics ------------------------------------------------------------------------ */

typedef struct stat_acc {
    size_t n;
    double sum, sumsq, min, max;
} stat_acc;

static void stat_add(stat_acc *s, double v)
{
    if (s->n == 0 || v < s->min)
        s->min = v;
    if (s->n == 0 || v > s->max)
        s->max = v;
    s->n++;
    s->sum += v;
    s->sumsq += v * v;
}

static double stat_mean(const stat_acc *s) { return s->n ? s->sum / (double)s->n : NAN; }

/* Sample standard deviation (n − 1), 0 for a single run. */
static double stat_sd(const stat_acc *s)
{
    if (s->n < 2)
        return 0.0;
    double m = stat_mean(s), var = (s->sumsq - (double)s->n * m * m) / (double)(s->n - 1);
    return var > 0 ? sqrt(var) : 0.0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sorted distinct values of the first column of one table (which: 0 eval.tsv's
 * lengths, 1 train_log.tsv's steps, 2 cost.tsv's lengths) over the runs rs. */
static size_t distinct_values(run_data *const *rs, size_t nr, size_t which, size_t *out,
                              size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        const tsv *t = which == 0 ? &rs[i]->eval : which == 1 ? &rs[i]->log : &rs[i]->cost;
        long col = which == 0 ? rs[i]->e_len : which == 1 ? rs[i]->l_step : rs[i]->c_len;
        for (size_t r = 0; r < t->rows; r++) {
            double v = num(t, r, col);
            if (!(v >= 0 && v < 1e12))
                continue;
            size_t s = (size_t)v, j = 0;
            while (j < k && out[j] != s)
                j++;
            if (j == k && k < max)
                out[k++] = s;
        }
    }
    qsort(out, k, sizeof *out, cmp_size);
    return k;
}

/* ---- the tables ---------------------------------------------------------------------- */

typedef struct model_group {
    char name[CONFIG_STR_MAX];
    run_data *runs[256];
    size_t n;
} model_group;

typedef struct report_ctx {
    model_group g[MAX_MODELS];
    size_t ng;
    size_t lens[4096], nlens; /* every evaluated length, all models */
    size_t sel[4], nsel;      /* lengths for the summary table */
    size_t poslens[3], nposlens;
} report_ctx;

static int write_accuracy(FILE *f, const void *p)
{
    const report_ctx *c = p;
    fprintf(f, "model\tparams\tlen\tseeds\ttoken_mean\ttoken_sd\ttoken_min\ttoken_max\t"
               "seq_mean\tseq_sd\tseq_min\tseq_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        for (size_t k = 0; k < c->nlens; k++) {
            stat_acc tok = {0}, seq = {0};
            for (size_t i = 0; i < g->n; i++) {
                const run_data *r = g->runs[i];
                for (size_t row = 0; row < r->eval.rows; row++)
                    if ((size_t)num(&r->eval, row, r->e_len) == c->lens[k]) {
                        stat_add(&tok, num(&r->eval, row, r->e_tok));
                        stat_add(&seq, num(&r->eval, row, r->e_seq));
                    }
            }
            if (tok.n)
                fprintf(f, "%s\t%.0f\t%zu\t%zu\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n",
                        g->name, g->runs[0]->params, c->lens[k], tok.n, stat_mean(&tok),
                        stat_sd(&tok), tok.min, tok.max, stat_mean(&seq), stat_sd(&seq),
                        seq.min, seq.max);
        }
    }
    return ferror(f) ? -1 : 0;
}

static int write_positions(FILE *f, const void *p)
{
    const report_ctx *c = p;
    fprintf(f, "model\tlen\tposition\tseeds\tacc_mean\tacc_min\tacc_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        for (size_t k = 0; k < c->nlens; k++) {
            const size_t L = c->lens[k];
            for (size_t pos = 1; pos <= 4 * L + 8; pos++) {
                stat_acc a = {0};
                for (size_t i = 0; i < g->n; i++) {
                    const run_data *r = g->runs[i];
                    for (size_t row = 0; row < r->pos.rows; row++)
                        if ((size_t)num(&r->pos, row, r->p_len) == L &&
                            (size_t)num(&r->pos, row, r->p_pos) == pos)
                            stat_add(&a, num(&r->pos, row, r->p_acc));
                }
                if (!a.n)
                    break;
                fprintf(f, "%s\t%zu\t%zu\t%zu\t%.6f\t%.6f\t%.6f\n", g->name, L, pos, a.n,
                        stat_mean(&a), a.min, a.max);
            }
        }
    }
    return ferror(f) ? -1 : 0;
}

static int write_curves(FILE *f, const void *p)
{
    const report_ctx *c = p;
    fprintf(f, "model\tstep\tseeds\tseconds_mean\tloss_mean\tloss_min\tloss_max\tacc_mean\t"
               "acc_min\tacc_max\n");
    static size_t steps[65536];
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        size_t ns = distinct_values(g->runs, g->n, 1, steps, 65536);
        for (size_t k = 0; k < ns; k++) {
            stat_acc sec = {0}, loss = {0}, acc = {0};
            for (size_t i = 0; i < g->n; i++) {
                const run_data *r = g->runs[i];
                for (size_t row = 0; row < r->log.rows; row++)
                    if ((size_t)num(&r->log, row, r->l_step) == steps[k]) {
                        stat_add(&sec, num(&r->log, row, r->l_sec));
                        stat_add(&loss, num(&r->log, row, r->l_loss));
                        stat_add(&acc, num(&r->log, row, r->l_acc));
                    }
            }
            if (sec.n)
                fprintf(f, "%s\t%zu\t%zu\t%.3f\t%.6g\t%.6g\t%.6g\t%.6f\t%.6f\t%.6f\n", g->name,
                        steps[k], sec.n, stat_mean(&sec), stat_mean(&loss), loss.min,
                        loss.max, stat_mean(&acc), acc.min, acc.max);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* Median of the n values in v (sorted in place). */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int write_cost(FILE *f, const void *p)
{
    const report_ctx *c = p;
    fprintf(f, "model\tlen\tseeds\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq\n");
    static size_t lens[4096];
    double tr[256], fl[256], de[256];
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        size_t nl = distinct_values(g->runs, g->n, 2, lens, 4096);
        for (size_t k = 0; k < nl; k++) {
            size_t cnt = 0;
            for (size_t i = 0; i < g->n && cnt < 256; i++) {
                const run_data *r = g->runs[i];
                for (size_t row = 0; row < r->cost.rows && cnt < 256; row++)
                    if ((size_t)num(&r->cost, row, r->c_len) == lens[k]) {
                        tr[cnt] = num(&r->cost, row, r->c_train);
                        fl[cnt] = num(&r->cost, row, r->c_flops);
                        de[cnt] = num(&r->cost, row, r->c_decode);
                        cnt++;
                    }
            }
            if (cnt)
                fprintf(f, "%s\t%zu\t%zu\t%.6g\t%.6g\t%.6g\n", g->name, lens[k], cnt,
                        median(tr, cnt), median(fl, cnt), median(de, cnt));
        }
    }
    return ferror(f) ? -1 : 0;
}

/* Mean and sd of one model's token and sequence accuracy at length L (n = 0: none). */
static size_t acc_at(const model_group *g, size_t L, stat_acc *tok, stat_acc *seq)
{
    memset(tok, 0, sizeof *tok);
    memset(seq, 0, sizeof *seq);
    for (size_t i = 0; i < g->n; i++) {
        const run_data *r = g->runs[i];
        for (size_t row = 0; row < r->eval.rows; row++)
            if ((size_t)num(&r->eval, row, r->e_len) == L) {
                stat_add(tok, num(&r->eval, row, r->e_tok));
                stat_add(seq, num(&r->eval, row, r->e_seq));
            }
    }
    return tok->n;
}

static int write_summary(FILE *f, const void *p)
{
    const report_ctx *c = p;
    fprintf(f, "model\tparams\tseeds\ttrain_seconds_mean\tlen\ttoken_mean\ttoken_sd\tseq_mean\t"
               "seq_sd\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        stat_acc secs = {0};
        for (size_t i = 0; i < g->n; i++)
            if (isfinite(g->runs[i]->train_seconds))
                stat_add(&secs, g->runs[i]->train_seconds);
        for (size_t k = 0; k < c->nsel; k++) {
            stat_acc tok, seq;
            if (acc_at(g, c->sel[k], &tok, &seq))
                fprintf(f, "%s\t%.0f\t%zu\t%.1f\t%zu\t%.4f\t%.4f\t%.4f\t%.4f\n", g->name,
                        g->runs[0]->params, g->n, stat_mean(&secs), c->sel[k],
                        stat_mean(&tok), stat_sd(&tok), stat_mean(&seq), stat_sd(&seq));
        }
    }
    return ferror(f) ? -1 : 0;
}

/* Prints the summary for people: one row per model, accuracy ± sd at selected lengths. */
static void print_summary(FILE *f, const report_ctx *c)
{
    fprintf(f, "\n%-18s %9s %5s %9s", "model", "params", "seeds", "train s");
    for (size_t k = 0; k < c->nsel; k++)
        fprintf(f, "   tok@%-4zu      seq@%-4zu     ", c->sel[k], c->sel[k]);
    fputc('\n', f);
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        stat_acc secs = {0};
        for (size_t i = 0; i < g->n; i++)
            if (isfinite(g->runs[i]->train_seconds))
                stat_add(&secs, g->runs[i]->train_seconds);
        fprintf(f, "%-18s %9.0f %5zu %9.1f", g->name, g->runs[0]->params, g->n,
                stat_mean(&secs));
        for (size_t k = 0; k < c->nsel; k++) {
            stat_acc tok, seq;
            if (acc_at(g, c->sel[k], &tok, &seq))
                fprintf(f, "   %.3f±%.3f   %.3f±%.3f", stat_mean(&tok), stat_sd(&tok),
                        stat_mean(&seq), stat_sd(&seq));
            else
                fprintf(f, "   %11s   %11s", "-", "-");
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

/* ---- figure variables, traces, gnuplot, the page ----------------------------------------- */

static int write_vars(FILE *f, const void *p)
{
    const report_ctx *c = p;
    const config *cfg = &c->g[0].runs[0]->cfg;
    size_t layers = 0, heads = 0, seeds = 0;
    fprintf(f, "# written by attnlab report: the facts the figure scripts need\n");
    fprintf(f, "train_min = %zu\ntrain_max = %zu\n", cfg->train_min, cfg->train_max);
    fprintf(f, "symbols = %zu\nchance = 1.0 / symbols\ntask = \"%s\"\nmodels = \"", cfg->symbols,
            cfg->task);
    for (size_t m = 0; m < c->ng; m++) {
        fprintf(f, m ? " %s" : "%s", c->g[m].name);
        if (c->g[m].n > seeds)
            seeds = c->g[m].n;
        if (strcmp(c->g[m].name, "transformer") == 0) {
            layers = c->g[m].runs[0]->cfg.layers;
            heads = c->g[m].runs[0]->cfg.heads;
        }
    }
    fprintf(f, "\"\nposition_lengths = \"");
    for (size_t k = 0; k < c->nposlens; k++)
        fprintf(f, k ? " %zu" : "%zu", c->poslens[k]);
    fprintf(f, "\"\ntfm_layers = %zu\ntfm_heads = %zu\nseeds = %zu\n", layers, heads, seeds);
    return ferror(f) ? -1 : 0;
}

typedef struct copy_ctx {
    const char *text;
    size_t len;
} copy_ctx;

static int write_copy(FILE *f, const void *p)
{
    const copy_ctx *c = p;
    return fwrite(c->text, 1, c->len, f) == c->len ? 0 : -1;
}

/* Writes dir/name with write(f, ctx), atomically. */
static int put(const char *dir, const char *name, int (*write)(FILE *, const void *),
               const void *ctx, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    afile af;
    if (afile_join(path, sizeof path, dir, name) != 0) {
        snprintf(err, n, "%s/%s: path too long", dir, name);
        return -1;
    }
    if (afile_open(&af, path, err, n) != 0)
        return -1;
    if (write(af.f, ctx) != 0) {
        afile_abort(&af);
        snprintf(err, n, "cannot write %s", path);
        return -1;
    }
    return afile_commit(&af, err, n);
}

/* Copies the trace matrices of run r into out/trace/MODEL/. A run without a trace is
 * fine: the figures of that model are then skipped. */
static int copy_trace(const run_data *r, const char *model, const char *out, char *err,
                      size_t n)
{
    char src[AFILE_PATH_MAX], dst[AFILE_PATH_MAX];
    snprintf(src, sizeof src, "%s/trace", r->dir);
    struct stat st;
    if (stat(src, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(dst, sizeof dst, "%s/trace/%s", out, model);
    if (afile_mkdirs(dst, err, n) != 0)
        return -1;
    DIR *d = opendir(src);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".tsv") != 0)
            continue;
        char from[AFILE_PATH_MAX];
        if (afile_join(from, sizeof from, src, e->d_name) != 0)
            continue;
        size_t len = 0;
        char *text = read_text(from, &len);
        if (!text)
            continue;
        copy_ctx cc = {text, len};
        rc = put(dst, e->d_name, write_copy, &cc, err, n);
        free(text);
    }
    closedir(d);
    return rc;
}

/* Is path an existing regular file? */
static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *summary_plots_dir(void)
{
    static char dir[AFILE_PATH_MAX];
    char probe[AFILE_PATH_MAX + 32];
    const char *env = getenv("ATTNLAB_PLOTS");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    /* next to the program: build/attnlab, build/san/attnlab, PREFIX/bin/attnlab */
    char exe[AFILE_PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return NULL;
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const rel[] = {"/../plots", "/../../plots", "/../share/attnlab/plots"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(dir, sizeof dir, "%s%s", exe, rel[i]);
        snprintf(probe, sizeof probe, "%s/accuracy.gp", dir);
        if (is_file(probe))
            return dir;
    }
    return NULL;
}

/* The figure scripts, each with the sentence the page shows under its figures. */
static const struct figure {
    const char *script;     /* plots/NAME.gp */
    const char *outputs[4]; /* figures it draws (without extension) */
    const char *caption;
} figures[] = {
    {"accuracy", {"accuracy"},
     "Token and whole-sequence accuracy against sequence length (mean over seeds, band: "
     "min-max). The shaded band is the training range; the dashed line is chance. Look "
     "for the LSTM falling as the distance it must carry each symbol grows, while the "
     "attention models stay high inside the training range."},
    {"positions", {"positions"},
     "Accuracy at each output position for a few lengths: where in the sequence each "
     "model fails. Look at how the LSTM's accuracy falls along the output once the "
     "sequence outgrows what its state can hold, while the attention models stay flat "
     "inside the training range."},
    {"curves", {"curves"},
     "Training loss and teacher-forced token accuracy against step and against seconds: "
     "how fast each model learns, per step and per unit of compute time."},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross"},
     "Attention weights for one example. Additive attention: row t is where output t "
     "looked; copying gives a diagonal. Transformer: encoder self-attention (every position "
     "sees every position), masked decoder self-attention (the upper triangle is empty: no "
     "position sees its future) and encoder-decoder attention, per layer and head."},
    {"gates", {"gates"},
     "LSTM gate activations (input, forget, output) and the cell state over the steps of "
     "one example: the LSTM's own, step-by-step way of choosing what to keep."},
    {"cost", {"cost"},
     "Cost against length, log-log: measured training time per sequence and analytic "
     "FLOPs. The recurrence grows like L, attention over all pairs like L squared."},
};
#define N_FIGURES (sizeof figures / sizeof figures[0])

/* Runs gnuplot -e "dir='out'" script. Returns its exit status, or -1 when gnuplot could
 * not be started. */
static int run_gnuplot(const char *plots, const char *script, const char *out)
{
    char path[AFILE_PATH_MAX], expr[AFILE_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s.gp", plots, script);
    snprintf(expr, sizeof expr, "dir='%s'", out);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", "-e", expr, path, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
}

/* Escapes text for HTML. */
static void html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* Writes a TSV file as an HTML table (nothing when it cannot be read). */
static void html_table(FILE *f, const char *path)
{
    tsv t;
    char err[256];
    if (tsv_read(&t, path, err, sizeof err) != 0)
        return;
    fputs("<table>\n<tr>", f);
    for (size_t c = 0; c < t.cols; c++) {
        fputs("<th>", f);
        html_text(f, t.cell[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t r = 0; r < t.rows; r++) {
        fputs("<tr>", f);
        for (size_t c = 0; c < t.cols; c++) {
            fputs("<td>", f);
            html_text(f, tsv_get(&t, r, c));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    tsv_free(&t);
}

typedef struct page_ctx {
    const char *out;
    const char *manifest;
} page_ctx;

/* The self-contained page: figures inline as SVG, the summary, the manifest. */
static int write_page(FILE *f, const void *p)
{
    const page_ctx *c = p;
    char path[AFILE_PATH_MAX];
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>attnlab comparison</title>\n<style>\n"
          "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
          "color:#222}\n"
          "figure{margin:2em 0}figcaption{color:#444;margin-top:.5em}\n"
          "svg{max-width:100%;height:auto}\n"
          "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
          "padding:.2em .5em;text-align:right}th{background:#f4f4f4}\n"
          "</style>\n</head>\n<body>\n<h1>Why attention replaced the LSTM: one comparison</h1>\n"
          "<p>Each model was trained on the same sequences with the same seed, steps and "
          "batch size; accuracy is measured by greedy decoding on fresh sequences at every "
          "length, inside the training range and beyond it.</p>\n<h2>Summary</h2>\n", f);
    afile_join(path, sizeof path, c->out, "summary.tsv");
    html_table(f, path);
    fputs("<h2>Figures</h2>\n", f);
    for (size_t k = 0; k < N_FIGURES; k++) {
        int shown = 0;
        for (size_t o = 0; o < 4 && figures[k].outputs[o]; o++) {
            char name[128];
            snprintf(name, sizeof name, "figures/%s.svg", figures[k].outputs[o]);
            afile_join(path, sizeof path, c->out, name);
            char *svg = read_text(path, NULL);
            if (!svg)
                continue;
            /* inline SVG: drop the XML prolog and doctype, keep the <svg> element */
            const char *start = strstr(svg, "<svg");
            if (start) {
                fputs(shown ? "" : "<figure>\n", f);
                fputs(start, f);
                fputc('\n', f);
                shown = 1;
            }
            free(svg);
        }
        if (shown) {
            fputs("<figcaption>", f);
            html_text(f, figures[k].caption);
            fputs("</figcaption>\n</figure>\n", f);
        }
    }
    if (c->manifest) {
        fputs("<h2>Manifest</h2>\n", f);
        html_table(f, c->manifest);
    }
    fputs("</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
}

/* Settings that do not change what a run computes, or that tell seeds apart. */
static int is_incidental(const char *key)
{
    static const char *const keys[] = {"seed", "threads", "log_every", "checkpoint_every"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strcmp(key, keys[k]) == 0)
            return 1;
    return 0;
}

/* Do two runs differ only in their seed (and incidental settings)? */
static int same_setup(const config *a, const config *b)
{
    char x[128], y[128];
    for (size_t k = 0; k < config_n_fields; k++) {
        if (is_incidental(config_fields[k].name))
            continue;
        config_format(a, &config_fields[k], x, sizeof x);
        config_format(b, &config_fields[k], y, sizeof y);
        if (strcmp(x, y) != 0)
            return 0;
    }
    return 1;
}

/* Names each group by its model; when one model has several setups, the later ones add
 * the settings in which they differ from its first (e.g. "lstm:hidden=256"), without
 * spaces so the name stays one word for gnuplot. */
static void name_groups(report_ctx *c)
{
    for (size_t m = 0; m < c->ng; m++) {
        const config *cfg = &c->g[m].runs[0]->cfg;
        snprintf(c->g[m].name, CONFIG_STR_MAX, "%s", cfg->model);
        size_t first = 0;
        while (first < m && strcmp(c->g[first].runs[0]->cfg.model, cfg->model) != 0)
            first++;
        if (first == m)
            continue;
        const config *base = &c->g[first].runs[0]->cfg;
        char x[128], y[128];
        for (size_t k = 0; k < config_n_fields; k++) {
            if (is_incidental(config_fields[k].name))
                continue;
            config_format(base, &config_fields[k], x, sizeof x);
            config_format(cfg, &config_fields[k], y, sizeof y);
            if (strcmp(x, y) == 0)
                continue;
            size_t len = strlen(c->g[m].name);
            snprintf(c->g[m].name + len, CONFIG_STR_MAX - len, "%s%s=%s",
                     strchr(c->g[m].name, ':') ? "," : ":", config_fields[k].name, y);
        }
        fprintf(stderr, "attnlab report: runs of %s with other settings are shown as %s\n",
                cfg->model, c->g[m].name);
    }
}

/* Orders models as the registry would show them: lstm, rnn_attention, transformer, then
 * any other in order of appearance. */
static int model_rank(const char *name)
{
    static const char *const order[] = {"lstm", "rnn_attention", "transformer"};
    for (int k = 0; k < 3; k++)
        if (strncmp(name, order[k], strlen(order[k])) == 0 &&
            (name[strlen(order[k])] == '\0' || name[strlen(order[k])] == ':'))
            return k;
    return 3;
}

/* The evaluated length closest to target. */
static size_t closest(const size_t *v, size_t n, double target)
{
    size_t best = v[0];
    for (size_t i = 1; i < n; i++)
        if (fabs((double)v[i] - target) < fabs((double)best - target))
            best = v[i];
    return best;
}

/* Adds L to set (n entries, at most max) unless present. */
static void add_unique(size_t *set, size_t *n, size_t max, size_t L)
{
    for (size_t i = 0; i < *n; i++)
        if (set[i] == L)
            return;
    if (*n < max)
        set[(*n)++] = L;
}

int summary_report(const char *const *runs, size_t n, const char *out, FILE *f, char *err,
                   size_t errn)
{
    report_ctx *c = calloc(1, sizeof *c);
    run_data *rd = calloc(n ? n : 1, sizeof *rd);
    int rc = -1;
    size_t loaded = 0;
    if (!c || !rd) {
        snprintf(err, errn, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        char why[512];
        if (run_load(&rd[loaded], runs[i], why, sizeof why) != 0) {
            fprintf(stderr, "attnlab report: skipping %s: %s\n", runs[i], why);
            continue;
        }
        run_data *r = &rd[loaded++];
        /* runs are seeds of one group only when every other setting agrees */
        size_t m = 0;
        while (m < c->ng && !same_setup(&c->g[m].runs[0]->cfg, &r->cfg))
            m++;
        if (m == c->ng) {
            if (c->ng == MAX_MODELS)
                continue;
            c->g[c->ng].n = 0;
            c->ng++;
        }
        if (c->g[m].n < 256)
            c->g[m].runs[c->g[m].n++] = r;
    }
    name_groups(c);
    if (loaded == 0) {
        snprintf(err, errn, "no finished run to report (each needs config.tsv, build.tsv, "
                 "train_log.tsv, eval.tsv and eval_positions.tsv)");
        goto done;
    }
    /* stable order of models for every table and figure */
    for (size_t i = 1; i < c->ng; i++)
        for (size_t j = i; j > 0 && model_rank(c->g[j].name) < model_rank(c->g[j - 1].name);
             j--) {
            model_group tmp = c->g[j];
            c->g[j] = c->g[j - 1];
            c->g[j - 1] = tmp;
        }
    run_data *all[256];
    size_t na = loaded < 256 ? loaded : 256;
    for (size_t i = 0; i < na; i++)
        all[i] = &rd[i];
    c->nlens = distinct_values(all, na, 0, c->lens, 4096);
    if (c->nlens == 0) {
        snprintf(err, errn, "the runs hold no evaluation lengths");
        goto done;
    }
    /* lengths worth a column: the shortest, the longest trained, twice that, the longest */
    const config *cfg = &c->g[0].runs[0]->cfg;
    add_unique(c->sel, &c->nsel, 4, c->lens[0]);
    add_unique(c->sel, &c->nsel, 4, closest(c->lens, c->nlens, (double)cfg->train_max));
    add_unique(c->sel, &c->nsel, 4, closest(c->lens, c->nlens, 2.0 * (double)cfg->train_max));
    add_unique(c->sel, &c->nsel, 4, c->lens[c->nlens - 1]);
    qsort(c->sel, c->nsel, sizeof *c->sel, cmp_size);
    add_unique(c->poslens, &c->nposlens, 3, closest(c->lens, c->nlens, cfg->train_max / 2.0));
    add_unique(c->poslens, &c->nposlens, 3, closest(c->lens, c->nlens, (double)cfg->train_max));
    add_unique(c->poslens, &c->nposlens, 3, c->lens[c->nlens - 1]);

    if (afile_mkdirs(out, err, errn) != 0)
        goto done;
    if (put(out, "accuracy.tsv", write_accuracy, c, err, errn) ||
        put(out, "positions.tsv", write_positions, c, err, errn) ||
        put(out, "curves.tsv", write_curves, c, err, errn) ||
        put(out, "cost.tsv", write_cost, c, err, errn) ||
        put(out, "summary.tsv", write_summary, c, err, errn) ||
        put(out, "figure_vars.gp", write_vars, c, err, errn))
        goto done;
    for (size_t m = 0; m < c->ng; m++)
        if (copy_trace(c->g[m].runs[0], c->g[m].name, out, err, errn) != 0)
            goto done;
    print_summary(f, c);

    /* the figures, when gnuplot is there */
    char figdir[AFILE_PATH_MAX];
    snprintf(figdir, sizeof figdir, "%s/figures", out);
    if (afile_mkdirs(figdir, err, errn) != 0)
        goto done;
    const char *plots = summary_plots_dir();
    if (!plots) {
        fprintf(stderr, "attnlab report: the figure scripts (plots/) were not found; set "
                "ATTNLAB_PLOTS to their directory and run attnlab report again\n");
    } else {
        int missing = 0, drawn[N_FIGURES] = {0};
        int have_cost = 0;
        for (size_t m = 0; m < c->ng && !have_cost; m++)
            for (size_t i = 0; i < c->g[m].n; i++)
                have_cost |= c->g[m].runs[i]->cost.rows > 0;
        for (size_t k = 0; k < N_FIGURES && !missing; k++) {
            if (strcmp(figures[k].script, "cost") == 0 && !have_cost) {
                fprintf(stderr, "attnlab report: no run measured its cost (train "
                        "--cost-lengths): no cost figure\n");
                continue;
            }
            int st = run_gnuplot(plots, figures[k].script, out);
            drawn[k] = st == 0;
            if (st < 0) {
                missing = 1;
                fprintf(stderr, "attnlab report: gnuplot not found: the tables are in %s; "
                        "draw the figures later with: gnuplot -e \"dir='%s'\" %s/NAME.gp "
                        "(one per script)\n", out, out, plots);
            } else if (st != 0) {
                fprintf(stderr, "attnlab report: %s/%s.gp failed (status %d)\n", plots,
                        figures[k].script, st);
            }
        }
        if (!missing) {
            fprintf(f, "figures drawn in %s/figures/ by:", out);
            for (size_t k = 0; k < N_FIGURES; k++)
                if (drawn[k])
                    fprintf(f, " %s.gp", figures[k].script);
            fputc('\n', f);
        }
    }
    char manifest[AFILE_PATH_MAX];
    afile_join(manifest, sizeof manifest, out, "manifest.tsv");
    page_ctx pc = {out, is_file(manifest) ? manifest : NULL};
    if (put(out, "report.html", write_page, &pc, err, errn) != 0)
        goto done;
    fprintf(f, "report:  %s/report.html\n", out);
    rc = 0;
done:
    if (rd)
        for (size_t i = 0; i < loaded; i++)
            run_free(&rd[i]);
    free(rd);
    free(c);
    return rc;
}
