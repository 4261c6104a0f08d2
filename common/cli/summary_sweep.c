/* summary_sweep.c — the table of a learning-rate sweep (sweep.tsv; see summary_group.h).
 *
 * Design. compare --preset lrsweep trains every model at several rates, each rate a group
 * of seeds ("MODEL:lr=0.003"). sweep.tsv puts one line per model and rate: how many of
 * its runs reached 0.99 validation token accuracy, the steps they took (median and range
 * over seeds; a run that never got there counts as more than its last validation and
 * ranks after every run that did, written "> N": budget_at.tsv's summary_reach), and the best
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

int summary_swept(const summary_ctx *c, size_t m)
{
    for (size_t k = 0; k < c->ng; k++)
        if (k != m && summary_same_model(c, k, m) &&
            c->g[k].runs[0]->cfg.lr != c->g[m].runs[0]->cfg.lr)
            return 1;
    return 0;
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
        reach_at *x = malloc(g->n * sizeof *x);
        if (!x)
            return -1;
        double *best = c->scratch;
        size_t n = 0, reached = 0;
        for (size_t i = 0; i < g->n; i++) {
            const rundir *r = g->runs[i];
            if (!summary_reach(r, 0, SWEEP_LEVEL, &x[n]))
                continue;
            reached += (size_t)!x[n].censored;
            best[n] = 0;
            for (size_t s = 0; s < r->n_log; s++)
                best[n] = fmax(best[n], r->log[s].val_token_acc);
            n++;
        }
        if (n) {
            fprintf(f, "%s\t%s\t%.6g\t%zu\t%zu", g->name, g->runs[0]->cfg.model,
                    g->runs[0]->cfg.lr, n, reached);
            summary_reach_cells(f, x, n, 0);
            const double med = stat_median(best, n);
            fprintf(f, "\t%.6f\t%.6f\t%.6f\n", med, best[0], best[n - 1]);
        }
        free(x);
    }
    return ferror(f) ? -1 : 0;
}
