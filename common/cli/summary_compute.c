/* summary_compute.c — what a comparison cost to train (compute.tsv; see summary_group.h).
 *
 * Design. Each experiment states its compute. A run's build.tsv records its training
 * seconds (train.h: validation left out, a resumed run's seconds added up across its
 * sessions) and config.tsv its BLAS threads, so a run's core-seconds are the two
 * multiplied: an upper bound on the processor time when a thread waits, and wall time on a
 * shared machine, which is what a reader planning the runs needs. compute.tsv puts one
 * line per group (model and setup) and a last line "all": runs, training steps, seconds,
 * core-hours. Validation and the final evaluation are not counted (a few percent of a run
 * on the presets' schedules); the manifest's wall_seconds, when compare wrote one, says how
 * long the whole command took.
 */
#include <math.h>
#include <stdio.h>

#include "summary_group.h"

/* Adds one group's runs to the totals; returns the runs counted. */
static size_t add_group(const model_group *g, double *steps, double *secs, double *core)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const rundir *r = g->runs[i];
        if (!isfinite(r->train_seconds) || !isfinite(r->train_steps))
            continue;
        const double threads = r->cfg.threads ? (double)r->cfg.threads : 1.0;
        *steps += r->train_steps;
        *secs += r->train_seconds;
        *core += r->train_seconds * threads;
        n++;
    }
    return n;
}

static void put_line(FILE *f, const char *name, size_t runs, double steps, double secs,
                     double core)
{
    fprintf(f, "%s\t%zu\t%.0f\t%.1f\t%.3f\n", name, runs, steps, secs, core / 3600.0);
}

int summary_write_compute(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\truns\ttrain_steps\ttrain_seconds\tcore_hours\n");
    size_t all_runs = 0;
    double all_steps = 0, all_secs = 0, all_core = 0;
    for (size_t m = 0; m < c->ng; m++) {
        double steps = 0, secs = 0, core = 0;
        const size_t n = add_group(&c->g[m], &steps, &secs, &core);
        if (!n)
            continue;
        put_line(f, c->g[m].name, n, steps, secs, core);
        all_runs += n;
        all_steps += steps;
        all_secs += secs;
        all_core += core;
    }
    if (all_runs)
        put_line(f, "all", all_runs, all_steps, all_secs, all_core);
    return ferror(f) ? -1 : 0;
}
