/* summary_train.c — the tables of training: curves, budget and convergence (see
 * summary_group.h; the evaluation tables are summary.c's).
 *
 * Design. Three questions, three tables, all read from train_log.tsv and build.tsv:
 *   curves.tsv       how each model learns: training loss and teacher-forced accuracy,
 *                    and the validation loss beside them (overfitting shows as the two
 *                    losses parting), at every logged step, mean and range over seeds;
 *   budget.tsv       how much training each model needs: the validation scores at every
 *                    logged step and the seconds it took, median and range over seeds;
 *   convergence.tsv  where each model ended: how its runs stopped, the steps and seconds
 *                    to their best validation (whose weights are the run's model).
 * A run that stopped early (the stopping rule: a plateau or the target reached) has no
 * log lines after its stop; budget.tsv carries it at its last validation from there, at
 * seconds extrapolated at its own pace, since "nothing more to learn" is what the rule
 * concluded; its column `running` counts only the seeds that actually logged the step.
 * A run that ran its whole budget is never carried.
 *
 * Invariant: as in summary.c, every statistic is gathered in the group's run order, so a
 * table is the same bytes whenever the same runs are given in the same order.
 */
#include <math.h>
#include <string.h>

#include "summary_group.h"

/* Writes x as a table cell: "%.6g", or "nan" when no seed had it (gnuplot skips it). */
static void cell(FILE *f, double x) { fprintf(f, isnan(x) ? "\tnan" : "\t%.6g", x); }

int summary_write_curves(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tstep\tseeds\tseconds_mean\tloss_mean\tloss_min\tloss_max\tacc_mean\t"
               "acc_min\tacc_max\tval_loss_mean\tval_loss_min\tval_loss_max\tval_acc_mean\t"
               "val_acc_min\tval_acc_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        for (size_t k = 0; k < g->nsteps; k++) {
            stat_acc sec = {0}, loss = {0}, acc = {0}, vloss = {0}, vacc = {0};
            for (size_t i = 0; i < g->n; i++) {
                const rundir_step *s = rundir_step_at(g->runs[i], g->steps[k]);
                if (!s)
                    continue;
                stat_add(&sec, s->seconds);
                stat_add(&loss, s->loss);
                stat_add(&acc, s->token_acc);
                if (g->runs[i]->has_val && isfinite(s->val_loss)) {
                    stat_add(&vloss, s->val_loss);
                    stat_add(&vacc, s->val_token_acc);
                }
            }
            if (!sec.n)
                continue;
            fprintf(f, "%s\t%zu\t%zu\t%.3f\t%.6g\t%.6g\t%.6g\t%.6f\t%.6f\t%.6f", g->name,
                    g->steps[k], sec.n, stat_mean(&sec), stat_mean(&loss), loss.min,
                    loss.max, stat_mean(&acc), acc.min, acc.max);
            cell(f, stat_mean(&vloss));
            cell(f, vloss.n ? vloss.min : NAN);
            cell(f, vloss.n ? vloss.max : NAN);
            cell(f, stat_mean(&vacc));
            cell(f, vacc.n ? vacc.min : NAN);
            cell(f, vacc.n ? vacc.max : NAN);
            fputc('\n', f);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* Did run r stop before its budget by the stopping rule? */
static int stopped_early(const rundir *r)
{
    return r->end == RUNDIR_END_CONVERGED || r->end == RUNDIR_END_TARGET;
}

/* The validation of run r at step: its own log line (*own = 1), or, past the last line
 * of a run that stopped early, that line carried with seconds at the run's own pace
 * (*own = 0). NULL when the run has no validation there. *secs gets the seconds. */
static const rundir_step *val_at(const rundir *r, size_t step, int *own, double *secs)
{
    if (!r->has_val || r->n_log == 0)
        return NULL;
    const rundir_step *s = rundir_step_at(r, step), *last = &r->log[r->n_log - 1];
    if (s) {
        *own = 1;
        *secs = s->seconds;
        return s;
    }
    if (!stopped_early(r) || step < last->step)
        return NULL;
    *own = 0;
    *secs = last->seconds * (double)step / (double)last->step;
    return last;
}

int summary_write_budget(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tstep\tseeds\trunning\tseconds_median\tseq_median\tseq_min\tseq_max\t"
               "tok_median\ttok_min\ttok_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        double *sec = c->scratch, *seq = sec + g->n, *tok = seq + g->n;
        for (size_t k = 0; k < g->nsteps; k++) {
            size_t cnt = 0, running = 0;
            for (size_t i = 0; i < g->n; i++) {
                int own;
                const rundir_step *s = val_at(g->runs[i], g->steps[k], &own, &sec[cnt]);
                if (!s)
                    continue;
                seq[cnt] = s->val_seq_acc_max;
                tok[cnt] = s->val_token_acc;
                running += (size_t)own;
                cnt++;
            }
            if (!cnt)
                continue;
            const double sec_med = stat_median(sec, cnt), seq_med = stat_median(seq, cnt),
                         tok_med = stat_median(tok, cnt);
            /* sorted by the medians: the extremes are the ends */
            fprintf(f, "%s\t%zu\t%zu\t%zu\t%.3f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n", g->name,
                    g->steps[k], cnt, running, sec_med, seq_med, seq[0], seq[cnt - 1],
                    tok_med, tok[0], tok[cnt - 1]);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* What convergence.tsv and the printed table say of one group. */
typedef struct conv_row {
    size_t runs, ends[4];          /* runs with a recorded stop; by rundir_end */
    double steps[3], best[3], sec[3]; /* median, min, max over those runs */
    double acc[2];                  /* best validation token accuracy: median, min */
} conv_row;

/* Median, min and max of the n values of v into out[3] (NAN when n is 0). */
static void spread(double *v, size_t n, double out[3])
{
    if (n == 0) {
        out[0] = out[1] = out[2] = NAN;
        return;
    }
    out[0] = stat_median(v, n);
    out[1] = v[0];
    out[2] = v[n - 1];
}

/* The convergence of group g, over its runs that recorded their stop and best step. */
static conv_row converge(const summary_ctx *c, const model_group *g)
{
    conv_row row;
    memset(&row, 0, sizeof row);
    double *steps = c->scratch, *best = steps + g->n, *sec = best + g->n, *acc = sec + g->n;
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const rundir *r = g->runs[i];
        row.ends[r->end]++;
        if (r->end == RUNDIR_END_UNKNOWN || isnan(r->best_step) || r->n_log == 0)
            continue;
        const rundir_step *b = rundir_step_at(r, (size_t)r->best_step);
        steps[n] = isnan(r->train_steps) ? (double)r->log[r->n_log - 1].step : r->train_steps;
        best[n] = r->best_step;
        sec[n] = isnan(r->best_seconds) ? (b ? b->seconds : NAN) : r->best_seconds;
        acc[n] = b && r->has_val ? b->val_token_acc : NAN;
        n++;
    }
    row.runs = n;
    spread(steps, n, row.steps);
    spread(best, n, row.best);
    spread(sec, n, row.sec);
    double a[3];
    spread(acc, n, a);
    row.acc[0] = a[0], row.acc[1] = a[1];
    return row;
}

int summary_write_convergence(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tparams\tseeds\tstopped_target\tstopped_converged\tstopped_budget\t"
               "steps_median\tsteps_min\tsteps_max\tbest_step_median\tbest_step_min\t"
               "best_step_max\tbest_seconds_median\tbest_seconds_min\tbest_seconds_max\t"
               "best_val_acc_median\tbest_val_acc_min\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        const conv_row r = converge(c, g);
        if (!r.runs)
            continue;
        fprintf(f, "%s\t%.0f\t%zu\t%zu\t%zu\t%zu", g->name, g->runs[0]->params, r.runs,
                r.ends[RUNDIR_END_TARGET], r.ends[RUNDIR_END_CONVERGED],
                r.ends[RUNDIR_END_BUDGET]);
        for (int j = 0; j < 3; j++)
            cell(f, r.steps[j]);
        for (int j = 0; j < 3; j++)
            cell(f, r.best[j]);
        for (int j = 0; j < 3; j++)
            cell(f, r.sec[j]);
        cell(f, r.acc[0]);
        cell(f, r.acc[1]);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

void summary_print_convergence(FILE *f, const summary_ctx *c)
{
    int any = 0;
    for (size_t m = 0; m < c->ng; m++) {
        const conv_row r = converge(c, &c->g[m]);
        if (!r.runs)
            continue;
        if (!any++)
            fprintf(f, "%-18s %5s  %-22s  %-24s  %-24s  %s\n", "model", "seeds",
                    "stopped (tgt/conv/cap)", "steps to best (med, range)",
                    "seconds to best", "best val acc");
        char ends[32], best[48], sec[48];
        snprintf(ends, sizeof ends, "%zu / %zu / %zu", r.ends[RUNDIR_END_TARGET],
                 r.ends[RUNDIR_END_CONVERGED], r.ends[RUNDIR_END_BUDGET]);
        snprintf(best, sizeof best, "%.0f [%.0f–%.0f]", r.best[0], r.best[1], r.best[2]);
        snprintf(sec, sizeof sec, "%.0f [%.0f–%.0f]", r.sec[0], r.sec[1], r.sec[2]);
        fprintf(f, "%-18s %5zu  %-22s  %-26s  %-26s  %.4f (min %.4f)\n", c->g[m].name, r.runs,
                ends, best, sec, r.acc[0], r.acc[1]);
    }
    if (any)
        fputc('\n', f);
}
