/* summary_group.c — the runs of a comparison read, grouped by setup, and the groups'
 * names and keys (see summary_group.h).
 *
 * Design. Runs whose settings agree except for the seed (and the settings that change
 * nothing computed, is_incidental) are the seeds of one group. A group is named after its
 * model; a second setup of the same model adds the settings in which it differs
 * ("MODEL:hidden=256"). The arrays of groups and of a group's runs grow with the input:
 * no silent limit.
 */
#include "summary_group.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../core/config.h"
#include "../core/model.h"
#include "../core/task.h"
#include "rundir.h"

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

int summary_same_model(const summary_ctx *c, size_t a, size_t b)
{
    return strcmp(c->g[a].runs[0]->cfg.model, c->g[b].runs[0]->cfg.model) == 0;
}

size_t summary_setups(const summary_ctx *c, size_t m)
{
    size_t n = 0;
    for (size_t o = 0; o < c->ng; o++)
        n += summary_same_model(c, o, m);
    return n;
}

int summary_name_groups(summary_ctx *c, char *err, size_t errn)
{
    for (size_t m = 0; m < c->ng; m++) {
        const config *cfg = &c->g[m].runs[0]->cfg;
        snprintf(c->g[m].name, GROUP_NAME_MAX, "%s", cfg->model);
        char y[128];
        for (size_t k = 0; k < config_n_fields; k++) {
            /* does field k tell this model's setups apart? */
            int tells = 0;
            for (size_t o = 0; o < c->ng && !tells; o++)
                tells = o != m && summary_same_model(c, o, m) &&
                        differs(&c->g[o].runs[0]->cfg, cfg, k, y);
            if (!tells)
                continue;
            config_format(cfg, &config_fields[k], y, sizeof y);
            size_t len = strlen(c->g[m].name);
            int w = snprintf(c->g[m].name + len, GROUP_NAME_MAX - len, "%s%s=%s",
                             strchr(c->g[m].name, ':') ? "," : ":", config_fields[k].name, y);
            if (w < 0 || (size_t)w >= GROUP_NAME_MAX - len) {
                snprintf(err, errn, "the runs of %s in %s differ in too many settings to "
                         "name them (more than %d characters)", cfg->model,
                         c->g[m].runs[0]->dir, GROUP_NAME_MAX - 1);
                return -1;
            }
        }
        if (strchr(c->g[m].name, ':'))
            fprintf(stderr, "attnlab report: runs of %s with other settings are shown as %s\n",
                    cfg->model, c->g[m].name);
    }
    return 0;
}

/* Are a and b one setup but for their training lengths (and incidental settings)? */
static int same_but_lengths(const config *a, const config *b)
{
    char y[128];
    for (size_t k = 0; k < config_n_fields; k++)
        if (strcmp(config_fields[k].name, "train_min") != 0 &&
            strcmp(config_fields[k].name, "train_max") != 0 && differs(a, b, k, y))
            return 0;
    return 1;
}

/* Does cfg hold the setting "key=value" (a model_sweep entry)? It does when setting it
 * again changes nothing: config_format compares the two as the tables write them. */
static int holds_setting(const config *cfg, const char *setting)
{
    const char *eq = strchr(setting, '=');
    char key[64], before[128], after[128], err[256];
    if (!eq || (size_t)(eq - setting) >= sizeof key)
        return 0;
    memcpy(key, setting, (size_t)(eq - setting));
    key[eq - setting] = '\0';
    const config_field *f = config_find(key);
    config again = *cfg;
    if (!f || config_set(&again, f, eq + 1, err, sizeof err) != 0)
        return 0;
    config_format(cfg, f, before, sizeof before);
    config_format(&again, f, after, sizeof after);
    return strcmp(before, after) == 0;
}

/* The name a paper gives the setup of cfg (model_sweep's label), or NULL. */
static const char *paper_name(const config *cfg)
{
    const model_ops *ops = model_lookup(cfg->model);
    for (const model_sweep *w = ops ? ops->sweeps : NULL; w && w->preset; w++)
        for (const char *const *s = w->settings; w->label && *s; s++)
            if (**s && holds_setting(cfg, *s))
                return w->label;
    return NULL;
}

/* Writes into buf (GROUP_NAME_MAX bytes) the label group g would take alone: its
 * paper's name and longest training length, else its name. */
static void label_alone(const model_group *g, char *buf)
{
    const config *cfg = &g->runs[0]->cfg;
    const char *paper = paper_name(cfg);
    if (paper)
        snprintf(buf, GROUP_NAME_MAX, "%s-%zu", paper, cfg->train_max);
    else
        snprintf(buf, GROUP_NAME_MAX, "%s", g->name);
}

void summary_label_groups(summary_ctx *c)
{
    static char other[GROUP_NAME_MAX];
    for (size_t m = 0; m < c->ng; m++) {
        model_group *g = &c->g[m];
        label_alone(g, g->label);
        /* two groups under one label (two sizes of RNNsearch-50) would be one line of a
         * legend: each keeps its name, which always differ */
        for (size_t o = 0; o < c->ng; o++) {
            if (o == m)
                continue;
            label_alone(&c->g[o], other);
            if (strcmp(other, g->label) == 0) {
                snprintf(g->label, GROUP_NAME_MAX, "%s", g->name);
                break;
            }
        }
        g->kin = m;
        for (size_t o = 0; o < m && g->kin == m; o++)
            if (same_but_lengths(&c->g[o].runs[0]->cfg, &g->runs[0]->cfg))
                g->kin = o;
    }
}

size_t summary_group_rank(const model_group *g) { return model_rank(g->runs[0]->cfg.model); }

int summary_add_run(summary_ctx *c, rundir *r)
{
    /* runs are seeds of one group only when every other setting agrees */
    size_t m = 0;
    while (m < c->ng && !same_setup(&c->g[m].runs[0]->cfg, &r->cfg))
        m++;
    if (m == c->ng) {
        if (c->ng == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 4;
            model_group *g = realloc(c->g, cap * sizeof *g);
            if (!g)
                return -1;
            c->g = g, c->cap = cap;
        }
        memset(&c->g[c->ng], 0, sizeof c->g[c->ng]);
        c->ng++;
    }
    model_group *g = &c->g[m];
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        rundir **runs = realloc(g->runs, cap * sizeof *runs);
        if (!runs)
            return -1;
        g->runs = runs, g->cap = cap;
    }
    g->runs[g->n++] = r;
    return 0;
}

double summary_flops(const rundir *r, size_t Ts)
{
    const task *t = task_lookup(r->cfg.task);
    const model_ops *ops = model_lookup(r->cfg.model);
    if (!t || !ops || !ops->flops)
        return NAN;
    return ops->flops(&r->cfg, Ts, task_target_len(t, Ts));
}

/* ---- reading the runs ------------------------------------------------------------------ */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Which key distinct_values gathers. */
typedef enum { KEY_EVAL_LEN, KEY_STEP, KEY_COST_LEN } key_kind;

/* Sets *out (allocated; free it) to the sorted distinct values of one key over the runs
 * rs: eval.tsv's lengths, train_log.tsv's steps or cost.tsv's lengths. Returns their
 * number, or (size_t)-1 when memory runs out. */
static size_t distinct_values(rundir *const *rs, size_t nr, key_kind which, size_t **out)
{
    size_t total = 0, k = 0;
    for (size_t i = 0; i < nr; i++)
        total += which == KEY_EVAL_LEN ? rs[i]->n_eval
                 : which == KEY_STEP   ? rs[i]->n_log
                                       : rs[i]->n_cost;
    size_t *v = malloc((total ? total : 1) * sizeof *v);
    if (!(*out = v))
        return (size_t)-1;
    for (size_t i = 0; i < nr; i++) {
        const rundir *r = rs[i];
        if (which == KEY_EVAL_LEN)
            for (size_t j = 0; j < r->n_eval; j++)
                v[k++] = r->eval[j].len;
        else if (which == KEY_STEP)
            for (size_t j = 0; j < r->n_log; j++)
                v[k++] = r->log[j].step;
        else
            for (size_t j = 0; j < r->n_cost; j++)
                v[k++] = r->cost[j].len;
    }
    qsort(v, k, sizeof *v, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    return u;
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

/* Prints "attnlab report: skipping DIR: WHY" on stderr, both made printable. */
static void say_skipped(const char *dir, const char *why)
{
    static char a[AFILE_PATH_MAX], b[2 * AFILE_PATH_MAX];
    fprintf(stderr, "attnlab report: skipping %s: %s\n", rundir_printable(dir, a, sizeof a),
            rundir_printable(why, b, sizeof b));
}

/* Gathers what the tables show: every evaluated length, each group's steps and cost
 * lengths, and room for the cost medians. Returns 0, or -1 when memory runs out. */
static int gather_keys(summary_ctx *c, rundir *rd, size_t loaded)
{
    rundir **all = malloc(loaded * sizeof *all);
    if (!all)
        return -1;
    for (size_t i = 0; i < loaded; i++)
        all[i] = &rd[i];
    c->nlens = distinct_values(all, loaded, KEY_EVAL_LEN, &c->lens);
    free(all);
    if (c->nlens == (size_t)-1)
        return -1;
    size_t most = 1;
    for (size_t m = 0; m < c->ng; m++) {
        model_group *g = &c->g[m];
        g->nsteps = distinct_values(g->runs, g->n, KEY_STEP, &g->steps);
        g->ncost_lens = distinct_values(g->runs, g->n, KEY_COST_LEN, &g->cost_lens);
        if (g->nsteps == (size_t)-1 || g->ncost_lens == (size_t)-1)
            return -1;
        most = g->n > most ? g->n : most;
    }
    c->scratch = malloc(6 * most * sizeof *c->scratch);
    return c->scratch ? 0 : -1;
}

/* Were the n runs of rd trained on one task (and, for a file task, on the same bytes of
 * its file: one test set)? Returns 0, or -1 with one line in err naming the first run
 * that was not and the first run's. A comparison of runs on different tasks would set
 * side by side scores of different questions. */
static int one_task(const rundir *rd, size_t n, char *err, size_t errn)
{
    static char a[AFILE_PATH_MAX], b[AFILE_PATH_MAX], ta[CONFIG_TASK_MAX], tb[CONFIG_TASK_MAX];
    for (size_t i = 1; i < n; i++) {
        const config *x = &rd[0].cfg, *y = &rd[i].cfg;
        const int file = task_is_file(x->task);
        if (strcmp(x->task, y->task) == 0 && (!file || x->data_crc == y->data_crc))
            continue;
        rundir_printable(rd[0].dir, a, sizeof a);
        rundir_printable(rd[i].dir, b, sizeof b);
        rundir_printable(x->task, ta, sizeof ta);
        rundir_printable(y->task, tb, sizeof tb);
        if (strcmp(x->task, y->task) != 0)
            snprintf(err, errn, "%s was trained on task %s, %s on %s: a report compares "
                     "runs of one task (accepted: runs of one task; report each task "
                     "with its own --out)", b, tb, a, ta);
        else
            snprintf(err, errn, "%s and %s were trained on different contents of %s "
                     "(CRC-32 %08lx and %08lx): a report compares runs of one test set "
                     "(accepted: runs of one data file; the file changed between them)", b,
                     a, ta, y->data_crc, x->data_crc);
        return -1;
    }
    return 0;
}

int summary_load(summary_ctx *c, const char *const *runs, size_t n, summary_kind kind,
                 char *err, size_t errn)
{
    memset(c, 0, sizeof *c);
    rundir *rd = c->rd = calloc(n ? n : 1, sizeof *rd);
    if (!rd)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        char why[1024];
        if ((kind == SUMMARY_TRAINING
                 ? rundir_load_training(&rd[c->loaded], runs[i], why, sizeof why)
                 : rundir_load(&rd[c->loaded], runs[i], why, sizeof why)) != 0) {
            say_skipped(runs[i], why);
            continue;
        }
        if (summary_add_run(c, &rd[c->loaded++]) != 0)
            goto oom;
    }
    if (c->loaded == 0) {
        snprintf(err, errn, kind == SUMMARY_TRAINING
                 ? "no run to show (each needs config.tsv and train_log.tsv)"
                 : "no finished run to report (each needs config.tsv, build.tsv, "
                   "train_log.tsv, eval.tsv with at least one row and eval_positions.tsv)");
        return -1;
    }
    if (one_task(rd, c->loaded, err, errn) != 0)
        return -1;
    if (summary_name_groups(c, err, errn) != 0)
        return -1;
    /* stable order of models for every table and figure */
    for (size_t i = 1; i < c->ng; i++)
        for (size_t j = i; j > 0 && summary_group_rank(&c->g[j]) < summary_group_rank(&c->g[j - 1]); j--) {
            model_group tmp = c->g[j];
            c->g[j] = c->g[j - 1];
            c->g[j - 1] = tmp;
        }
    summary_label_groups(c);
    if (gather_keys(c, rd, c->loaded) != 0)
        goto oom;
    if (kind == SUMMARY_TRAINING)
        return 0; /* no evaluation yet: no lengths to choose */
    if (c->nlens == 0) {
        snprintf(err, errn, "the runs hold no evaluation lengths");
        return -1;
    }
    choose_lengths(c);
    return 0;
oom:
    snprintf(err, errn, "out of memory");
    return -1;
}

void summary_free(summary_ctx *c)
{
    for (size_t m = 0; m < c->ng; m++) {
        free(c->g[m].runs);
        free(c->g[m].steps);
        free(c->g[m].cost_lens);
    }
    free(c->g);
    free(c->lens);
    free(c->scratch);
    if (c->rd)
        for (size_t i = 0; i < c->loaded; i++)
            rundir_free(&c->rd[i]);
    free(c->rd);
    memset(c, 0, sizeof *c);
}
