/* summary_train.c — the tables of training: curves, budget and convergence (see
 * summary_group.h; the evaluation tables are summary.c's).
 *
 * Design. Four questions, four tables, all read from train_log.tsv and build.tsv:
 *   curves.tsv       how each model learns: training loss and teacher-forced accuracy,
 *                    and the validation loss beside them (overfitting shows as the two
 *                    losses parting), at every logged step, mean and range over seeds;
 *   budget.tsv       how much training each model needs: the validation scores at every
 *                    logged step and the seconds it took, median and range over seeds;
 *   convergence.tsv  where each model ended: how its runs stopped, the steps and seconds
 *                    to their best validation (whose weights are the run's model), and
 *                    whether they reached the target: a run the cap ended is censored,
 *                    and is said to have not reached the target within the cap, never
 *                    to have converged;
 *   budget_at.tsv    what each model needs for a fixed accuracy: steps, seconds and FLOPs
 *                    to the first validation at 0.9, 0.99, 0.999 token accuracy and 0.5,
 *                    0.9 whole sequences at the longest trained length, a run that never
 *                    got there counted as more than its last validation (censored).
 * A run that stopped early (the stopping rule: a plateau or the target reached) has no
 * log lines after its stop; budget.tsv carries it at its last validation from there, at
 * seconds extrapolated at its own pace, since "nothing more to learn" is what the rule
 * concluded; its column `running` counts only the seeds that actually logged the step.
 * A run that ran its whole budget is never carried; budget.tsv's `capped` counts the runs
 * whose last validation, at the cap, is at that step (the figure marks them).
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

/* Is step the last of run r, which the cap ended (it ran every step: censored)? */
static int ends_at_cap(const rundir *r, size_t step)
{
    return r->end == RUNDIR_END_BUDGET && r->n_log > 0 && r->log[r->n_log - 1].step == step;
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
               "tok_median\ttok_min\ttok_max\tcapped\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        double *sec = c->scratch, *seq = sec + g->n, *tok = seq + g->n;
        for (size_t k = 0; k < g->nsteps; k++) {
            size_t cnt = 0, running = 0, capped = 0;
            for (size_t i = 0; i < g->n; i++) {
                int own;
                const rundir_step *s = val_at(g->runs[i], g->steps[k], &own, &sec[cnt]);
                if (!s)
                    continue;
                seq[cnt] = s->val_seq_acc_max;
                tok[cnt] = s->val_token_acc;
                running += (size_t)own;
                capped += own && ends_at_cap(g->runs[i], g->steps[k]);
                cnt++;
            }
            if (!cnt)
                continue;
            const double sec_med = stat_median(sec, cnt), seq_med = stat_median(seq, cnt),
                         tok_med = stat_median(tok, cnt);
            /* sorted by the medians: the extremes are the ends */
            fprintf(f, "%s\t%zu\t%zu\t%zu\t%.3f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%zu\n",
                    g->name, g->steps[k], cnt, running, sec_med, seq_med, seq[0],
                    seq[cnt - 1], tok_med, tok[0], tok[cnt - 1], capped);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* What convergence.tsv and the printed table say of one group. */
typedef struct conv_row {
    size_t runs, ends[4];          /* runs with a recorded stop; by rundir_end */
    double steps[3], best[3], sec[3]; /* median, min, max over those runs */
    double acc[2];                  /* best validation token accuracy: median, min */
    double target;                  /* the runs' stop_acc (0: none) */
    size_t cap;                     /* their --steps: a run that ran them all is censored */
    size_t reached;                 /* runs whose best validation reached the target */
    size_t capped_below, plateau_below; /* runs that ended at the cap, or at a plateau,
                                         * short of the target */
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
    /* one setup: every run of the group has the same target and cap */
    row.target = g->runs[0]->cfg.stop_acc;
    row.cap = g->runs[0]->cfg.steps;
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
        const int reached = row.target > 0 && acc[n] >= row.target;
        row.reached += (size_t)reached;
        row.capped_below += r->end == RUNDIR_END_BUDGET && !reached;
        row.plateau_below += r->end == RUNDIR_END_CONVERGED && !reached;
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

size_t summary_capped(const summary_ctx *c, const model_group *g)
{
    const conv_row r = converge(c, g);
    return r.target > 0 ? r.capped_below : 0; /* without a target every run runs its cap */
}

/* Writes into buf what the runs of r say of their target, for people, in English (zh 0:
 * "every run reached 0.999", or which did not and why: "3 of 3 did not reach 0.999
 * within 3000 steps (stopped by the cap)", "1 of 5 stopped at a plateau below 0.999")
 * or in Chinese (zh 1, the same facts in the glossary's terms); never "converged" of a
 * run the cap ended. */
static void verdict(const conv_row *r, int zh, char *buf, size_t n)
{
    if (r->target <= 0) {
        if (zh)
            snprintf(buf, n, "没有目标；%zu 次运行中有 %zu 次跑完了全部 %zu 步", r->runs,
                     r->ends[RUNDIR_END_BUDGET], r->cap);
        else
            snprintf(buf, n, "no target; %zu of %zu ran all %zu steps",
                     r->ends[RUNDIR_END_BUDGET], r->runs, r->cap);
        return;
    }
    if (r->reached == r->runs) {
        snprintf(buf, n, zh ? "每次运行都达到了 %g" : "every run reached %g", r->target);
        return;
    }
    size_t at = 0;
    buf[0] = '\0';
    if (r->capped_below && zh)
        at += (size_t)snprintf(buf, n, "%zu 次运行中有 %zu 次在 %zu 步内没有达到 %g（被上限停止）",
                               r->runs, r->capped_below, r->cap, r->target);
    else if (r->capped_below)
        at += (size_t)snprintf(buf, n, "%zu of %zu did not reach %g within %zu steps (stopped "
                               "by the cap)", r->capped_below, r->runs, r->target, r->cap);
    if (r->plateau_below && at < n && zh)
        snprintf(buf + at, n - at, "%s%zu 次运行中有 %zu 次停在低于 %g 的平台期", at ? "；" : "",
                 r->runs, r->plateau_below, r->target);
    else if (r->plateau_below && at < n)
        snprintf(buf + at, n - at, "%s%zu of %zu stopped at a plateau below %g",
                 at ? "; " : "", r->plateau_below, r->runs, r->target);
}

int summary_write_convergence(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tparams\tseeds\tstopped_target\tstopped_converged\tstopped_budget\t"
               "steps_median\tsteps_min\tsteps_max\tbest_step_median\tbest_step_min\t"
               "best_step_max\tbest_seconds_median\tbest_seconds_min\tbest_seconds_max\t"
               "best_val_acc_median\tbest_val_acc_min\ttarget\tcap\treached_target\t"
               "verdict\tverdict_zh\n");
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
        char says[256], says_zh[512];
        verdict(&r, 0, says, sizeof says);
        verdict(&r, 1, says_zh, sizeof says_zh);
        fprintf(f, "\t%g\t%zu\t%zu\t%s\t%s\n", r.target, r.cap, r.reached, says, says_zh);
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
                    "ended (tgt/plateau/cap)", "steps to best (med, range)",
                    "seconds to best", "best val acc");
        char ends[32], best[48], sec[48];
        snprintf(ends, sizeof ends, "%zu / %zu / %zu", r.ends[RUNDIR_END_TARGET],
                 r.ends[RUNDIR_END_CONVERGED], r.ends[RUNDIR_END_BUDGET]);
        snprintf(best, sizeof best, "%.0f [%.0f–%.0f]", r.best[0], r.best[1], r.best[2]);
        snprintf(sec, sizeof sec, "%.0f [%.0f–%.0f]", r.sec[0], r.sec[1], r.sec[2]);
        fprintf(f, "%-18s %5zu  %-22s  %-26s  %-26s  %.4f (min %.4f)\n", c->g[m].name, r.runs,
                ends, best, sec, r.acc[0], r.acc[1]);
    }
    /* what a run the cap ended means: its numbers are those of a model cut short */
    for (size_t m = 0; m < c->ng; m++) {
        const conv_row r = converge(c, &c->g[m]);
        char says[256];
        if (!r.runs || r.target <= 0 || r.reached == r.runs)
            continue;
        verdict(&r, 0, says, sizeof says);
        fprintf(f, "%s: %s%s\n", c->g[m].name, says,
                r.capped_below ? ": the accuracies of those runs are those of models cut "
                                 "short, not of what the model can learn"
                               : "");
    }
    if (any)
        fputc('\n', f);
}

/* ---- budgets at fixed accuracies (budget_at.tsv) ---------------------------------------- */

/* The accuracies budget_at.tsv asks about: which validation column, and the levels. */
static const struct {
    const char *measure; /* the column of train_log.tsv */
    double level;
} budget_levels[] = {
    {"val_token_acc", 0.9},   {"val_token_acc", 0.99}, {"val_token_acc", 0.999},
    {"val_seq_acc_max", 0.5}, {"val_seq_acc_max", 0.9},
};
#define N_BUDGET_LEVELS (sizeof budget_levels / sizeof budget_levels[0])

/* The expected analytic FLOPs of one training step of run r: the batch times the mean,
 * over the training lengths (each drawn with the same chance), of the model's FLOPs for
 * one sequence. NAN for a file task, whose lengths are drawn by the file's buckets. */
static double flops_per_step(const rundir *r)
{
    const config *c = &r->cfg;
    double sum = 0;
    for (size_t L = c->train_min; L <= c->train_max; L++)
        sum += summary_flops(r, L);
    return (double)c->batch * sum / (double)(c->train_max - c->train_min + 1);
}

/* Orders runs that reached the level by their budget, then those that never did, by the
 * bound (a run that gave up or was cut short counts as slower than any that got there). */
static int reach_cmp(const reach_at *a, const reach_at *b, int k)
{
    if (a->censored != b->censored)
        return a->censored - b->censored;
    return (a->v[k] > b->v[k]) - (a->v[k] < b->v[k]);
}

/* Sorts the n values of x by their quantity k (insertion: a handful of seeds). */
static void reach_sort(reach_at *x, size_t n, int k)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && reach_cmp(&x[j], &x[j - 1], k) < 0; j--) {
            const reach_at t = x[j];
            x[j] = x[j - 1];
            x[j - 1] = t;
        }
}

/* Writes one quantity as a cell: the number, or "> N" when it is a bound (%.6g). */
static void bound_cell(FILE *f, double v, int censored)
{
    if (isnan(v))
        fputs("\tnan", f);
    else
        fprintf(f, censored ? "\t> %.6g" : "\t%.6g", v);
}

int summary_reach(const rundir *r, int seq, double level, reach_at *x)
{
    if (!r->has_val || r->n_log == 0)
        return 0;
    size_t j = 0;
    while (j < r->n_log && (seq ? r->log[j].val_seq_acc_max : r->log[j].val_token_acc) < level)
        j++;
    x->censored = j == r->n_log;
    const rundir_step *s = &r->log[x->censored ? r->n_log - 1 : j];
    x->v[0] = (double)s->step;
    x->v[1] = s->seconds;
    x->v[2] = (double)s->step * flops_per_step(r);
    return 1;
}

void summary_reach_cells(FILE *f, reach_at *x, size_t n, int q)
{
    reach_sort(x, n, q);
    /* the median: the middle run, or the mean of the two middle ones, a bound when either
     * is (a censored budget is more than its value) */
    const reach_at *lo = &x[(n - 1) / 2], *hi = &x[n / 2];
    bound_cell(f, 0.5 * (lo->v[q] + hi->v[q]), lo->censored || hi->censored);
    bound_cell(f, x[0].v[q], x[0].censored);
    bound_cell(f, x[n - 1].v[q], x[n - 1].censored);
}

int summary_write_budget_at(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tmeasure\tlevel\tseeds\treached\tsteps_median\tsteps_min\tsteps_max\t"
               "seconds_median\tseconds_min\tseconds_max\tflops_median\tflops_min\t"
               "flops_max\n");
    size_t most = 1;
    for (size_t m = 0; m < c->ng; m++)
        most = c->g[m].n > most ? c->g[m].n : most;
    reach_at *x = malloc(most * sizeof *x);
    if (!x)
        return -1;
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        for (size_t k = 0; k < N_BUDGET_LEVELS; k++) {
            const int seq = strcmp(budget_levels[k].measure, "val_seq_acc_max") == 0;
            const double level = budget_levels[k].level;
            size_t n = 0, reached = 0;
            for (size_t i = 0; i < g->n; i++)
                if (summary_reach(g->runs[i], seq, level, &x[n]))
                    reached += (size_t)!x[n++].censored;
            if (!n)
                continue;
            fprintf(f, "%s\t%s\t%g\t%zu\t%zu", g->name, budget_levels[k].measure, level, n,
                    reached);
            for (int q = 0; q < 3; q++)
                summary_reach_cells(f, x, n, q);
            fputc('\n', f);
        }
    }
    free(x);
    return ferror(f) ? -1 : 0;
}
