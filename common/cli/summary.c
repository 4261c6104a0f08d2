/* summary.c — merging finished runs into one comparison: statistics over seeds and the
 * tables (see summary.h; grouping the runs by setup is summary_group.c's, reading a run
 * directory rundir.c's, the figures and the page report.c's).
 *
 * Design. rundir_load reads one run directory whole and checks every value in it
 * before anything is computed, so the statistics read typed records without checks and
 * a malformed run is skipped whole (one line on stderr) instead of half-plotted. Runs
 * are grouped by setup: runs whose settings agree except for the seed (and the settings
 * that change nothing computed, is_incidental) are the seeds of one group. A group is
 * named after its model; a second setup of the same model adds the settings in which it
 * differs ("MODEL:hidden=256"). Groups are listed in the registry's order of their models
 * (model_rank), then in order of appearance.
 *
 * No silent limit: the groups, the runs of a group and the lengths and steps the tables
 * show are arrays that grow with the input (a run count is bounded by what the command
 * line collects). Every key of a run is unique (rundir.h), so a statistic over a group
 * at one length or step has exactly one value per run that has that key.
 *
 * Invariant: every statistic over a group at one length or step (stat_acc) is summed in
 * the same order, runs in their group's order, so a table is the same bytes whenever the
 * same runs are given in the same order.
 */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../core/config.h"
#include "../core/model.h"
#include "report.h"
#include "rundir.h"
#include "summary_group.h"
#include "../core/task.h"

/* ---- the tables ---------------------------------------------------------------------- */

/* Mean and sd of one model's token and sequence accuracy at length L (n = 0: none). */
static size_t acc_at(const model_group *g, size_t L, stat_acc *tok, stat_acc *seq)
{
    memset(tok, 0, sizeof *tok);
    memset(seq, 0, sizeof *seq);
    for (size_t i = 0; i < g->n; i++) {
        const rundir_eval *e = rundir_eval_at(g->runs[i], L);
        if (e) {
            stat_add(tok, e->token_acc);
            stat_add(seq, e->seq_acc);
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

/* The accuracy of output position pos at length L over the runs of g that have it. */
static stat_acc pos_acc(const model_group *g, size_t L, size_t pos)
{
    stat_acc a = {0};
    for (size_t i = 0; i < g->n; i++) {
        const rundir_pos *r = rundir_pos_at(g->runs[i], L, pos);
        if (r)
            stat_add(&a, r->acc);
    }
    return a;
}

/* positions.tsv: per model, length and output position (1 up to the task's output
 * length, where any run has it), the accuracy there over seeds. */
static int write_positions(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tlen\tposition\tseeds\tacc_mean\tacc_min\tacc_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        /* checked by rundir_load; NULL for a file task, whose positions go up to max_len
         * (the rows a run does not have are skipped below) */
        const task *t = task_lookup(g->runs[0]->cfg.task);
        for (size_t k = 0; k < c->nlens; k++) {
            const size_t L = c->lens[k];
            const size_t T = t ? task_target_len(t, L) : g->runs[0]->cfg.max_len;
            for (size_t pos = 1; pos <= T; pos++) {
                const stat_acc a = pos_acc(g, L, pos);
                if (a.n)
                    fprintf(f, "%s\t%zu\t%zu\t%zu\t%.6f\t%.6f\t%.6f\n", g->name, L, pos,
                            a.n, stat_mean(&a), a.min, a.max);
            }
        }
    }
    return ferror(f) ? -1 : 0;
}

/* distance.tsv: positions.tsv's accuracies with each position's gap (task_gap: the
 * steps between reading the source symbol it repeats and writing it), for the groups
 * whose task says which source symbol each output repeats. In copy the gap is the
 * length at every position; in reverse it runs from 1 to 2L − 1 within one length, so
 * the two set apart the distance from the amount the model must store. */
static int write_distance(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tlen\tposition\tgap\tseeds\tacc_mean\tacc_min\tacc_max\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        const task *t = task_lookup(g->runs[0]->cfg.task); /* NULL: a file task */
        for (size_t k = 0; t && t->source_of && k < c->nlens; k++) {
            const size_t L = c->lens[k];
            for (size_t pos = 1; pos <= task_target_len(t, L); pos++) {
                const stat_acc a = pos_acc(g, L, pos);
                if (a.n)
                    fprintf(f, "%s\t%zu\t%zu\t%zu\t%zu\t%.6f\t%.6f\t%.6f\n", g->name, L, pos,
                            task_gap(t, L, pos - 1), a.n, stat_mean(&a), a.min, a.max);
            }
        }
    }
    return ferror(f) ? -1 : 0;
}

/* cost.tsv: per model and measured length, the medians over seeds (timings are noisy;
 * one slow run does not move a median). The FLOPs are counted again from each run's
 * configuration (summary_flops), so that runs made by an older program are reported
 * with this program's count; a file task's, which needs the file, are the run's own. */
static int write_cost(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tlen\tseeds\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq\n");
    for (size_t m = 0; m < c->ng; m++) {
        const model_group *g = &c->g[m];
        double *tr = c->scratch, *fl = tr + g->n, *de = fl + g->n;
        for (size_t k = 0; k < g->ncost_lens; k++) {
            size_t cnt = 0;
            for (size_t i = 0; i < g->n; i++) {
                const rundir_cost *r = rundir_cost_at(g->runs[i], g->cost_lens[k]);
                if (r) {
                    tr[cnt] = r->train_ms;
                    const double now = summary_flops(g->runs[i], g->cost_lens[k]);
                    fl[cnt] = isnan(now) ? r->flops : now;
                    de[cnt] = r->decode_ms;
                    cnt++;
                }
            }
            if (cnt)
                fprintf(f, "%s\t%zu\t%zu\t%.6g\t%.6g\t%.6g\n", g->name, g->cost_lens[k], cnt,
                        stat_median(tr, cnt), stat_median(fl, cnt), stat_median(de, cnt));
        }
    }
    return ferror(f) ? -1 : 0;
}

/* The reach of run r: the longest evaluated length from its shortest training length on
 * up to which every evaluated length has a token accuracy of at least SUMMARY_REACH_ACC
 * (0 when the shortest trained length has not). Lengths below the training range are
 * left out: shorter than anything trained is a question of its own (a recurrent model
 * trained on 4:32 can copy 2 symbols worse than 30). */
static double reach(const rundir *r)
{
    size_t L = 0, k = 0;
    while (k < r->n_eval && r->eval[k].len < r->cfg.train_min)
        k++;
    for (; k < r->n_eval && r->eval[k].token_acc >= SUMMARY_REACH_ACC; k++)
        L = r->eval[k].len;
    return (double)L;
}

/* capacity.tsv: per group, its size and how far it copies (the reach over seeds), and
 * its token accuracy at the longest training length; `setups` counts the groups of its
 * model (a sweep when above 1). The setups of one model (neighbours in c->g) are listed
 * from the fewest parameters to the most, whatever the order of the runs, so that the
 * figure joins them along the size axis. */
static int write_capacity(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    size_t *order = malloc(c->ng * sizeof *order);
    if (!order)
        return -1;
    for (size_t m = 0; m < c->ng; m++) {
        size_t j = m; /* insertion: moves only past smaller setups of the same model */
        while (j > 0 && summary_same_model(c, order[j - 1], m) &&
               c->g[order[j - 1]].runs[0]->params > c->g[m].runs[0]->params) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = m;
    }
    fprintf(f, "model\tbase\tsetups\tparams\tseeds\treach_median\treach_min\t"
               "reach_max\ttok_train_max_mean\ttok_train_max_min\ttok_train_max_max\n");
    for (size_t k = 0; k < c->ng; k++) {
        const size_t m = order[k];
        const model_group *g = &c->g[m];
        const config *cfg = &g->runs[0]->cfg;
        const size_t setups = summary_setups(c, m);
        double *v = c->scratch;
        stat_acc tok = {0};
        for (size_t i = 0; i < g->n; i++) {
            v[i] = reach(g->runs[i]);
            const rundir_eval *e = rundir_eval_at(g->runs[i], cfg->train_max);
            if (e)
                stat_add(&tok, e->token_acc);
        }
        const double med = stat_median(v, g->n);
        fprintf(f, "%s\t%s\t%zu\t%.0f\t%zu\t%g\t%g\t%g", g->name, cfg->model, setups,
                g->runs[0]->params, g->n, med, v[0], v[g->n - 1]);
        if (tok.n)
            fprintf(f, "\t%.6f\t%.6f\t%.6f\n", stat_mean(&tok), tok.min, tok.max);
        else
            fprintf(f, "\tnan\tnan\tnan\n");
    }
    free(order);
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

void summary_print(FILE *f, const summary_ctx *c)
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

int summary_facts(const summary_ctx *c, summary_facts_buf *b)
{
    b->names = malloc(3 * c->ng * sizeof *b->names);
    b->per_group = malloc(3 * c->ng * sizeof *b->per_group);
    b->ops = malloc(c->ng * sizeof *b->ops);
    if (!b->names || !b->per_group || !b->ops) {
        summary_facts_free(b);
        return -1;
    }
    const char **runs = b->names + c->ng, **labels = runs + c->ng;
    size_t *trained_to = b->per_group, *kin = trained_to + c->ng, *capped = kin + c->ng;
    b->fx = (report_facts){.cfg = &c->g[0].runs[0]->cfg, .n_models = c->ng,
                           .models = b->names, .runs = runs, .ops = b->ops,
                           .labels = labels, .trained_to = trained_to, .kin = kin,
                           .capped = capped,
                           .position_lengths = c->poslens,
                           .n_position_lengths = c->nposlens,
                           .shortest = c->nlens ? c->lens[0] : 0};
    for (size_t m = 0; m < c->ng; m++) {
        b->names[m] = c->g[m].name;
        b->ops[m] = model_lookup(c->g[m].runs[0]->cfg.model); /* every run's was checked */
        runs[m] = c->g[m].runs[0]->dir; /* the first run's trace stands for the group */
        labels[m] = c->g[m].label;
        trained_to[m] = c->g[m].runs[0]->cfg.train_max;
        kin[m] = c->g[m].kin;
        capped[m] = summary_capped(c, &c->g[m]);
        if (c->g[m].n > b->fx.seeds)
            b->fx.seeds = c->g[m].n;
        b->fx.have_cost |= c->g[m].ncost_lens > 0;
        for (size_t i = 0; i < c->g[m].n; i++)
            b->fx.have_val |= c->g[m].runs[i]->has_val;
        b->fx.have_sweep |= summary_setups(c, m) > 1;
        b->fx.have_lrsweep |= summary_swept(c, m);
        const task *t = task_lookup(c->g[m].runs[0]->cfg.task);
        b->fx.have_distance |= t && t->source_of;
        for (size_t i = 0; i < c->g[m].n; i++)
            b->fx.have_bleu |= c->g[m].runs[i]->n_bleu > 0;
    }
    return 0;
}

void summary_facts_free(summary_facts_buf *b)
{
    free(b->names);
    free(b->per_group);
    free(b->ops);
    b->per_group = NULL;
    b->names = NULL;
    b->ops = NULL;
}

int summary_write_tables(const summary_ctx *c, const report_facts *fx, const char *out,
                         char *err, size_t errn)
{
    if (afile_mkdirs(out, err, errn) != 0 || report_check_out(out, fx, err, errn) != 0 ||
        afile_write(out, "accuracy.tsv", write_accuracy, c, err, errn) ||
        afile_write(out, "positions.tsv", write_positions, c, err, errn) ||
        afile_write(out, "distance.tsv", write_distance, c, err, errn) ||
        afile_write(out, "bleu.tsv", summary_write_bleu, c, err, errn) ||
        afile_write(out, "bleu-table.tsv", summary_write_bleu_table, c, err, errn) ||
        afile_write(out, "curves.tsv", summary_write_curves, c, err, errn) ||
        afile_write(out, "budget.tsv", summary_write_budget, c, err, errn) ||
        afile_write(out, "convergence.tsv", summary_write_convergence, c, err, errn) ||
        afile_write(out, "budget_at.tsv", summary_write_budget_at, c, err, errn) ||
        afile_write(out, "sweep.tsv", summary_write_sweep, c, err, errn) ||
        afile_write(out, "compute.tsv", summary_write_compute, c, err, errn) ||
        afile_write(out, "capacity.tsv", write_capacity, c, err, errn) ||
        afile_write(out, "cost.tsv", write_cost, c, err, errn) ||
        afile_write(out, "summary.tsv", write_summary, c, err, errn) ||
        report_copy_traces(out, fx, err, errn) || report_write_vars(out, fx, err, errn))
        return -1;
    return 0;
}

int summary_merge(const char *const *runs, size_t n, const char *out, char *err, size_t errn)
{
    summary_ctx c;
    summary_facts_buf b = {0};
    int rc = -1;
    if (summary_load(&c, runs, n, SUMMARY_FINISHED, err, errn) == 0) {
        if (summary_facts(&c, &b) != 0)
            snprintf(err, errn, "out of memory");
        else
            rc = summary_write_tables(&c, &b.fx, out, err, errn);
    }
    summary_facts_free(&b);
    summary_free(&c);
    return rc;
}

int summary_merge_training(const char *const *runs, size_t n, const char *out, char *err,
                           size_t errn)
{
    summary_ctx c;
    summary_facts_buf b = {0};
    int rc = -1;
    if (summary_load(&c, runs, n, SUMMARY_TRAINING, err, errn) == 0) {
        if (summary_facts(&c, &b) != 0)
            snprintf(err, errn, "out of memory");
        else if (afile_mkdirs(out, err, errn) == 0 && report_check_out(out, &b.fx, err, errn) == 0 &&
                 afile_write(out, "curves.tsv", summary_write_curves, &c, err, errn) == 0 &&
                 report_write_vars(out, &b.fx, err, errn) == 0)
            rc = 0;
    }
    summary_facts_free(&b);
    summary_free(&c);
    return rc;
}
