/* summary.c — merging finished runs into one comparison: grouping run directories by
 * setup, statistics over seeds, and the tables (see summary.h; reading a run directory
 * is rundir.c's, the figures and the page are report.c's).
 *
 * Design. rundir_load reads one run directory whole and checks every number in it
 * before anything is computed, so the statistics read cells without checks (num) and a
 * malformed run is skipped whole instead of half-plotted. Runs are grouped by setup:
 * runs whose settings agree except for the seed (and the settings that change nothing
 * computed, is_incidental) are the seeds of one group. A group is named after its model;
 * a second setup of the same model adds the settings in which it differs
 * ("lstm:hidden=256"). Groups are listed in the registry's order of their models
 * (model_rank), then in order of appearance.
 *
 * Invariant: every statistic over a group at one length or step (stat_acc) is summed in
 * the same order, runs in their group's order and rows in file order, so a table is the
 * same bytes whenever the same runs are given in the same order.
 */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "config.h"
#include "model.h"
#include "report.h"
#include "rundir.h"
#include "tsv.h"

#define MAX_MODELS 16 /* groups in one comparison */
#define MAX_RUNS 256  /* runs in one group */

/* Cell (i, col) of t as a number (checked by rundir_load). */
static double num(const tsv *t, size_t i, long col) { return atof(tsv_get(t, i, (size_t)col)); }

/* ---- statistics ---------------------------------------------------------------------- */

/* One statistic over the runs of a group, accumulated value by value. */
typedef struct stat_acc {
    size_t n;               /* values added */
    double sum, sumsq;      /* Σ v and Σ v² */
    double min, max;        /* extremes (valid once n > 0) */
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
static size_t distinct_values(rundir *const *rs, size_t nr, size_t which, size_t *out,
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

/* ---- grouping runs by setup ---------------------------------------------------------- */

/* The runs of one setup: its seeds. */
typedef struct model_group {
    char name[CONFIG_STR_MAX]; /* as tables and figures show it, one word */
    rundir *runs[MAX_RUNS];
    size_t n;
} model_group;

/* The comparison: its groups in table order, and the lengths its tables show. */
typedef struct summary_ctx {
    model_group g[MAX_MODELS];
    size_t ng;
    size_t lens[4096], nlens; /* every evaluated length, all models */
    size_t sel[4], nsel;      /* lengths for the summary table */
    size_t poslens[3], nposlens; /* lengths of the positions figure */
} summary_ctx;

/* Settings that do not change what a run computes, or that tell seeds apart. */
static int is_incidental(const char *key)
{
    static const char *const keys[] = {"seed", "threads", "log_every", "checkpoint_every"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strcmp(key, keys[k]) == 0)
            return 1;
    return 0;
}

/* Does setting k matter and differ between a and b? Writes its value in b to y. */
static int differs(const config *a, const config *b, size_t k, char y[static 128])
{
    char x[128];
    if (is_incidental(config_fields[k].name))
        return 0;
    config_format(a, &config_fields[k], x, sizeof x);
    config_format(b, &config_fields[k], y, 128);
    return strcmp(x, y) != 0;
}

/* Do two runs differ only in their seed (and incidental settings)? */
static int same_setup(const config *a, const config *b)
{
    char y[128];
    for (size_t k = 0; k < config_n_fields; k++)
        if (differs(a, b, k, y))
            return 0;
    return 1;
}

/* Names each group by its model; when one model has several setups, the later ones add
 * the settings in which they differ from its first (e.g. "lstm:hidden=256"), without
 * spaces so the name stays one word for gnuplot. */
static void name_groups(summary_ctx *c)
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
        char y[128];
        for (size_t k = 0; k < config_n_fields; k++) {
            if (!differs(base, cfg, k, y))
                continue;
            size_t len = strlen(c->g[m].name);
            snprintf(c->g[m].name + len, CONFIG_STR_MAX - len, "%s%s=%s",
                     strchr(c->g[m].name, ':') ? "," : ":", config_fields[k].name, y);
        }
        fprintf(stderr, "attnlab report: runs of %s with other settings are shown as %s\n",
                cfg->model, c->g[m].name);
    }
}

/* Where a group stands in the tables: its model's place in the registry (a model this
 * build lacks comes after every registered one). */
static size_t group_rank(const model_group *g) { return model_rank(g->runs[0]->cfg.model); }

/* Adds run r to the group of its setup, opening a group for a new setup; r is left out
 * when all MAX_MODELS groups are taken, or its group holds MAX_RUNS runs. */
static void add_to_group(summary_ctx *c, rundir *r)
{
    /* runs are seeds of one group only when every other setting agrees */
    size_t m = 0;
    while (m < c->ng && !same_setup(&c->g[m].runs[0]->cfg, &r->cfg))
        m++;
    if (m == c->ng) {
        if (c->ng == MAX_MODELS)
            return;
        c->g[c->ng].n = 0;
        c->ng++;
    }
    if (c->g[m].n < MAX_RUNS)
        c->g[m].runs[c->g[m].n++] = r;
}

/* ---- the tables ---------------------------------------------------------------------- */

/* Mean and sd of one model's token and sequence accuracy at length L (n = 0: none). */
static size_t acc_at(const model_group *g, size_t L, stat_acc *tok, stat_acc *seq)
{
    memset(tok, 0, sizeof *tok);
    memset(seq, 0, sizeof *seq);
    for (size_t i = 0; i < g->n; i++) {
        const rundir *r = g->runs[i];
        for (size_t row = 0; row < r->eval.rows; row++)
            if ((size_t)num(&r->eval, row, r->e_len) == L) {
                stat_add(tok, num(&r->eval, row, r->e_tok));
                stat_add(seq, num(&r->eval, row, r->e_seq));
            }
    }
    return tok->n;
}

/* Training seconds of a group's runs (those that recorded them). */
static stat_acc train_seconds(const model_group *g)
{
    stat_acc secs = {0};
    for (size_t i = 0; i < g->n; i++)
        if (isfinite(g->runs[i]->train_seconds))
            stat_add(&secs, g->runs[i]->train_seconds);
    return secs;
}

/* accuracy.tsv: per model and evaluated length, token and sequence accuracy over seeds. */
static int write_accuracy(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tparams\tlen\tseeds\ttoken_mean\ttoken_sd\ttoken_min\ttoken_max\t"
               "seq_mean\tseq_sd\tseq_min\tseq_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        for (size_t k = 0; k < c->nlens; k++) {
            stat_acc tok, seq;
            if (acc_at(g, c->lens[k], &tok, &seq))
                fprintf(f, "%s\t%.0f\t%zu\t%zu\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n",
                        g->name, g->runs[0]->params, c->lens[k], tok.n, stat_mean(&tok),
                        stat_sd(&tok), tok.min, tok.max, stat_mean(&seq), stat_sd(&seq),
                        seq.min, seq.max);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* positions.tsv: per model, length and output position (1, 2, ... while any run has
 * it), the accuracy there over seeds. */
static int write_positions(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tlen\tposition\tseeds\tacc_mean\tacc_min\tacc_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        for (size_t k = 0; k < c->nlens; k++) {
            const size_t L = c->lens[k];
            for (size_t pos = 1; pos <= 4 * L + 8; pos++) {
                stat_acc a = {0};
                for (size_t i = 0; i < g->n; i++) {
                    const rundir *r = g->runs[i];
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

/* curves.tsv: per model and logged step, seconds, loss and accuracy over seeds. */
static int write_curves(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tstep\tseeds\tseconds_mean\tloss_mean\tloss_min\tloss_max\tacc_mean\t"
               "acc_min\tacc_max\n");
    static size_t steps[65536];
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        size_t ns = distinct_values(g->runs, g->n, 1, steps, 65536);
        for (size_t k = 0; k < ns; k++) {
            stat_acc sec = {0}, loss = {0}, acc = {0};
            for (size_t i = 0; i < g->n; i++) {
                const rundir *r = g->runs[i];
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

/* cost.tsv: per model and measured length, the medians over seeds (timings are noisy;
 * one slow run does not move a median). */
static int write_cost(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tlen\tseeds\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq\n");
    static size_t lens[4096];
    double tr[256], fl[256], de[256];
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        size_t nl = distinct_values(g->runs, g->n, 2, lens, 4096);
        for (size_t k = 0; k < nl; k++) {
            size_t cnt = 0;
            for (size_t i = 0; i < g->n && cnt < 256; i++) {
                const rundir *r = g->runs[i];
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

/* summary.tsv: per model and selected length (choose_lengths), the headline numbers. */
static int write_summary(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tparams\tseeds\ttrain_seconds_mean\tlen\ttoken_mean\ttoken_sd\tseq_mean\t"
               "seq_sd\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        stat_acc secs = train_seconds(g);
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
static void print_summary(FILE *f, const summary_ctx *c)
{
    fprintf(f, "\n%-18s %9s %5s %9s", "model", "params", "seeds", "train s");
    for (size_t k = 0; k < c->nsel; k++)
        fprintf(f, "   tok@%-4zu      seq@%-4zu     ", c->sel[k], c->sel[k]);
    fputc('\n', f);
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        stat_acc secs = train_seconds(g);
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

/* Chooses the lengths the summary table and the positions figure show, from the
 * evaluated lengths and the training range of the first run. */
static void choose_lengths(summary_ctx *c)
{
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
}

/* Writes the tables, then hands the figures and the page to report.c. */
static int write_outputs(const summary_ctx *c, const char *out, FILE *f, char *err,
                         size_t errn)
{
    const char *names[MAX_MODELS], *runs[MAX_MODELS];
    report_facts fx = {.cfg = &c->g[0].runs[0]->cfg, .n_models = c->ng, .models = names,
                       .runs = runs, .position_lengths = c->poslens,
                       .n_position_lengths = c->nposlens};
    for (size_t m = 0; m < c->ng; m++) {
        names[m] = c->g[m].name;
        runs[m] = c->g[m].runs[0]->dir; /* the first run's trace stands for the group */
        if (c->g[m].n > fx.seeds)
            fx.seeds = c->g[m].n;
        for (size_t i = 0; i < c->g[m].n; i++)
            fx.have_cost |= c->g[m].runs[i]->cost.rows > 0;
    }
    if (afile_mkdirs(out, err, errn) != 0)
        return -1;
    if (afile_write(out, "accuracy.tsv", write_accuracy, c, err, errn) ||
        afile_write(out, "positions.tsv", write_positions, c, err, errn) ||
        afile_write(out, "curves.tsv", write_curves, c, err, errn) ||
        afile_write(out, "cost.tsv", write_cost, c, err, errn) ||
        afile_write(out, "summary.tsv", write_summary, c, err, errn) ||
        report_write_vars(out, &fx, err, errn) || report_copy_traces(out, &fx, err, errn))
        return -1;
    print_summary(f, c);
    if (report_draw(out, &fx, f, err, errn) != 0 || report_write_page(out, err, errn) != 0)
        return -1;
    fprintf(f, "report:  %s/report.html\n", out);
    return 0;
}

int summary_report(const char *const *runs, size_t n, const char *out, FILE *f, char *err,
                   size_t errn)
{
    summary_ctx *c = calloc(1, sizeof *c);
    rundir *rd = calloc(n ? n : 1, sizeof *rd);
    int rc = -1;
    size_t loaded = 0;
    if (!c || !rd) {
        snprintf(err, errn, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        char why[512];
        if (rundir_load(&rd[loaded], runs[i], why, sizeof why) != 0) {
            fprintf(stderr, "attnlab report: skipping %s: %s\n", runs[i], why);
            continue;
        }
        add_to_group(c, &rd[loaded++]);
    }
    name_groups(c);
    if (loaded == 0) {
        snprintf(err, errn, "no finished run to report (each needs config.tsv, build.tsv, "
                 "train_log.tsv, eval.tsv and eval_positions.tsv)");
        goto done;
    }
    /* stable order of models for every table and figure */
    for (size_t i = 1; i < c->ng; i++)
        for (size_t j = i; j > 0 && group_rank(&c->g[j]) < group_rank(&c->g[j - 1]); j--) {
            model_group tmp = c->g[j];
            c->g[j] = c->g[j - 1];
            c->g[j - 1] = tmp;
        }
    rundir *all[MAX_RUNS];
    size_t na = loaded < MAX_RUNS ? loaded : MAX_RUNS;
    for (size_t i = 0; i < na; i++)
        all[i] = &rd[i];
    c->nlens = distinct_values(all, na, 0, c->lens, 4096);
    if (c->nlens == 0) {
        snprintf(err, errn, "the runs hold no evaluation lengths");
        goto done;
    }
    choose_lengths(c);
    rc = write_outputs(c, out, f, err, errn);
done:
    if (rd)
        for (size_t i = 0; i < loaded; i++)
            rundir_free(&rd[i]);
    free(rd);
    free(c);
    return rc;
}

const char *summary_plots_dir(void)
{
    return report_plots_dir();
}
