/* summary_sweep.c — the table of a learning-rate sweep (sweep.tsv; see summary_group.h).
 *
 * Design. compare --preset lrsweep trains every model at several rates, each rate a group
 * of seeds ("MODEL:lr=0.003"). sweep.tsv puts one line per model and rate: how many of
 * its runs reached 0.99 validation token accuracy, the steps they took (median and range
 * over seeds; a run that never got there counts as more than its last validation and
 * ranks after every run that did, written "> N", as in budget_at.tsv), and the best
 * validation token accuracy each run reached. Only the models trained at more than one
 * rate have lines, so the table of any other comparison is its header alone.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary_group.h"

/* The validation token accuracy sweep.tsv counts steps to. */
#define SWEEP_LEVEL 0.99

/* One run: its steps to the level (or its last validation, censored) and its best. */
typedef struct sweep_run {
    double steps;
    int censored;
    double best;
} sweep_run;

static int sweep_cmp(const void *a, const void *b)
{
    const sweep_run *x = a, *y = b;
    if (x->censored != y->censored)
        return x->censored - y->censored;
    return (x->steps > y->steps) - (x->steps < y->steps);
}

int summary_swept(const summary_ctx *c, size_t m)
{
    for (size_t k = 0; k < c->ng; k++)
        if (k != m && summary_same_model(c, k, m) &&
            c->g[k].runs[0]->cfg.lr != c->g[m].runs[0]->cfg.lr)
            return 1;
    return 0;
}

static void cell(FILE *f, double v, int censored)
{
    fprintf(f, censored ? "\t> %.6g" : "\t%.6g", v);
}

int summary_write_sweep(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tbase\tlr\tseeds\treached\tsteps_median\tsteps_min\tsteps_max\t"
               "best_median\tbest_min\tbest_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        if (!summary_swept(c, m))
            continue;
        sweep_run *x = malloc(g->n * sizeof *x);
        if (!x)
            return -1;
        size_t n = 0, reached = 0;
        for (size_t i = 0; i < g->n; i++) {
            const rundir *r = g->runs[i];
            if (!r->has_val || r->n_log == 0)
                continue;
            size_t j = 0;
            x[n].best = 0;
            for (size_t s = 0; s < r->n_log; s++)
                x[n].best = fmax(x[n].best, r->log[s].val_token_acc);
            while (j < r->n_log && r->log[j].val_token_acc < SWEEP_LEVEL)
                j++;
            x[n].censored = j == r->n_log;
            x[n].steps = (double)r->log[x[n].censored ? r->n_log - 1 : j].step;
            reached += (size_t)!x[n].censored;
            n++;
        }
        if (n) {
            qsort(x, n, sizeof *x, sweep_cmp);
            const sweep_run *lo = &x[(n - 1) / 2], *hi = &x[n / 2];
            fprintf(f, "%s\t%s\t%.6g\t%zu\t%zu", g->name, g->runs[0]->cfg.model,
                    g->runs[0]->cfg.lr, n, reached);
            cell(f, 0.5 * (lo->steps + hi->steps), lo->censored || hi->censored);
            cell(f, x[0].steps, x[0].censored);
            cell(f, x[n - 1].steps, x[n - 1].censored);
            double *best = c->scratch;
            for (size_t i = 0; i < n; i++)
                best[i] = x[i].best;
            const double med = stat_median(best, n);
            fprintf(f, "\t%.6f\t%.6f\t%.6f\n", med, best[0], best[n - 1]);
        }
        free(x);
    }
    return ferror(f) ? -1 : 0;
}
