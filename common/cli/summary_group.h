/* summary_group.h — what the tables of a comparison are computed from: the runs grouped
 * by setup, and statistics over a group's seeds (internal to summary: prefix stat_ for
 * the statistics, summary_ for the grouping of summary_group.c and the tables of
 * summary_train.c).
 *
 * summary_group.c reads the runs, groups them by setup, names the groups and gathers the
 * steps and lengths the tables show; summary.c writes the evaluation tables; summary_train.c writes the tables of training (curves, budget,
 * convergence). They share the groups through this header only.
 */
#ifndef ATTNLAB_SUMMARY_GROUP_H
#define ATTNLAB_SUMMARY_GROUP_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"
#include "rundir.h"

/* Room for a group's name: the model and every setting that differs, "name=value" each
 * (about 40 settings, none longer than 80 characters written out). */
#define GROUP_NAME_MAX 4096

/* The token accuracy a length counts as copied at (capacity.tsv's reach). */
#define SUMMARY_REACH_ACC 0.99

/* ---- statistics over seeds ------------------------------------------------------------ */

/* One statistic over the runs of a group, accumulated value by value. */
typedef struct stat_acc {
    size_t n;          /* values added */
    double sum, sumsq; /* Σ v and Σ v² */
    double min, max;   /* extremes (valid once n > 0) */
} stat_acc;

static inline void stat_add(stat_acc *s, double v)
{
    if (s->n == 0 || v < s->min)
        s->min = v;
    if (s->n == 0 || v > s->max)
        s->max = v;
    s->n++;
    s->sum += v;
    s->sumsq += v * v;
}

static inline double stat_mean(const stat_acc *s)
{
    return s->n ? s->sum / (double)s->n : NAN;
}

/* Sample standard deviation (n − 1), 0 for a single run. */
static inline double stat_sd(const stat_acc *s)
{
    if (s->n < 2)
        return 0.0;
    double m = stat_mean(s), var = (s->sumsq - (double)s->n * m * m) / (double)(s->n - 1);
    return var > 0 ? sqrt(var) : 0.0;
}

static inline int stat_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the n > 0 values in v (sorted in place). */
static inline double stat_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, stat_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- the groups ----------------------------------------------------------------------- */

/* The runs of one setup: its seeds, and the keys its tables show. */
typedef struct model_group {
    char name[GROUP_NAME_MAX]; /* as tables and figures show it, one word */
    char label[GROUP_NAME_MAX]; /* the paper's name when its model gives one ("RNNsearch-50":
                                   summary_label_groups), else the name */
    size_t kin; /* the first group (index in the tables' order) of the same setup but for
                   the training lengths: itself, or one trained on other lengths */
    rundir **runs;             /* (n) in the order given; cap allocated */
    size_t n, cap;
    size_t *steps, nsteps;         /* train_log.tsv's steps over its runs, ascending */
    size_t *cost_lens, ncost_lens; /* cost.tsv's lengths over its runs, ascending */
} model_group;

/* The comparison: its groups in table order, and the lengths its tables show. */
typedef struct summary_ctx {
    model_group *g; /* (ng) cap allocated */
    size_t ng, cap;
    size_t *lens, nlens;         /* every evaluated length, all models, ascending */
    size_t sel[4], nsel;         /* lengths for the summary table */
    size_t poslens[3], nposlens; /* lengths of the positions figure */
    double *scratch;             /* 6 · (the most runs of a group): medians over seeds */
    rundir *rd;                  /* (loaded) the run directories read, which g points into */
    size_t loaded;
} summary_ctx;

/* ---- the comparison (summary.c) -------------------------------------------------------- */

/* What summary_load reads of a run directory. */
typedef enum summary_kind {
    SUMMARY_FINISHED, /* a finished run, trained and evaluated (rundir_load) */
    SUMMARY_TRAINING  /* a run still training: its settings and log (rundir_load_training) */
} summary_kind;

/* Reads the run directories runs[0..n-1] into c as kind says (skipping, with one line on
 * stderr, each that the loader refuses), groups them by setup in the registry's order,
 * gathers each group's steps and, for finished runs, chooses the lengths the tables show
 * (summary_load, summary_free: summary_group.c). Returns 0, or -1 with one line in err
 * when no run could be read or memory ran out; call summary_free(c) either way. */
int summary_load(summary_ctx *c, const char *const *runs, size_t n, summary_kind kind,
                 char *err, size_t errn);

/* Frees what summary_load allocated in c (and the runs it read). */
void summary_free(summary_ctx *c);

/* The facts of c for report.h's writers, and the arrays they point into. */
typedef struct summary_facts_buf {
    report_facts fx;
    const char **names; /* (3 · ng) the groups' names, their first runs' folders, their
                           labels */
    size_t *per_group;  /* (3 · ng) their longest training lengths, kin, runs capped */
    const model_ops **ops;
} summary_facts_buf;

/* Fills b from c (which must outlive it). Returns 0, or -1 when memory runs out; call
 * summary_facts_free(b) either way. */
int summary_facts(const summary_ctx *c, summary_facts_buf *b);
void summary_facts_free(summary_facts_buf *b);

/* Writes the comparison's tables into out (created when missing), then the copies of the
 * traces and figure_vars.gp (report.h): everything the figure scripts read. Returns 0,
 * or -1 with one line in err. */
int summary_write_tables(const summary_ctx *c, const report_facts *fx, const char *out,
                         char *err, size_t errn);

/* Prints the summary for people on f: one row per group, accuracy ± sd at the lengths
 * of summary.tsv. */
void summary_print(FILE *f, const summary_ctx *c);

/* ---- grouping runs by setup (summary_group.c) ----------------------------------------- */

/* Adds run r to the group of its setup, opening a group for a new setup; both arrays
 * grow as needed. Returns 0, or -1 when memory runs out. */
int summary_add_run(summary_ctx *c, rundir *r);

/* Names each group by its model; when one model has several setups, every one of them
 * adds the settings in which that model's setups differ (e.g. "MODEL:hidden=64" and
 * "MODEL:hidden=256"), without spaces so the name stays one word for gnuplot. Every value
 * is a registered model name or a setting config_set accepted, so a name holds only
 * letters, digits and _.:=,+- (report_write_vars checks it again). Returns 0, or -1 with
 * a line in err when a name does not fit GROUP_NAME_MAX (it always does: see there). */
int summary_name_groups(summary_ctx *c, char *err, size_t errn);

/* Fills each group's label and kin, once the groups are in the tables' order. A group
 * whose model names the setup it was trained at (model_sweep's label: "RNNsearch" for the
 * attention model with a bidirectional encoder) is labelled after it and its longest training length,
 * as Bahdanau et al. name their models ("RNNsearch-50"); a group whose model names none,
 * or whose label another group would share, keeps its name. */
void summary_label_groups(summary_ctx *c);

/* Where a group stands in the tables: its model's place in the registry. */
size_t summary_group_rank(const model_group *g);

/* Are groups a and b of c setups of one model? */
int summary_same_model(const summary_ctx *c, size_t a, size_t b);

/* How many groups of c are setups of group m's model (m included): above 1, a
 * sweep. */
size_t summary_setups(const summary_ctx *c, size_t m);

/* The analytic FLOPs of one training step on one sequence of source length Ts, from run
 * r's configuration (its model's flops at the task's target length): the count of the
 * program reading the run, whichever program made it. NAN for a file task (its target
 * lengths are the file's) or a model this program does not know. */
double summary_flops(const rundir *r, size_t Ts);

/* ---- the tables of training (summary_train.c) ----------------------------------------- */

/* curves.tsv: per group and logged step, training loss and teacher-forced accuracy and
 * the validation loss over the seeds that logged that step. p is a summary_ctx. */
int summary_write_curves(FILE *f, const void *p);

/* budget.tsv: per group and logged step, the validation scores over seeds against steps
 * and seconds (a run that stopped early is carried at its last validation). */
int summary_write_budget(FILE *f, const void *p);

/* convergence.tsv: per group, how its runs ended and the steps and seconds to their best
 * validation (median and range over seeds). */
int summary_write_convergence(FILE *f, const void *p);

/* One run's budget to a level: the step, training seconds and FLOPs of its first
 * validation at or above it, or, when it never got there, of its last one, marked
 * censored (its budget is more than that). */
typedef struct reach_at {
    double v[3];  /* steps, seconds, FLOPs */
    int censored; /* 1: never reached; v is a lower bound */
} reach_at;

/* Fills x with run r's budget to level of its validation token accuracy (seq 0) or its
 * whole-sequence accuracy at the longest trained length (seq 1). Returns 1, or 0 when
 * r logged no validation (x untouched). */
int summary_reach(const rundir *r, int seq, double level, reach_at *x);

/* Writes the median, min and max of quantity q of the n budgets x (sorted in place: runs
 * that reached the level by their budget, then the others by their bound) as three
 * cells, each "\tN", or "\t> N" when it falls on a censored run. */
void summary_reach_cells(FILE *f, reach_at *x, size_t n, int q);

/* budget_at.tsv: per group, measure (val_token_acc at 0.9, 0.99, 0.999; val_seq_acc_max,
 * the whole-sequence accuracy at the longest trained length, at 0.5 and 0.9) and level,
 * the steps, training seconds and analytic FLOPs to the first validation at or above the
 * level, median and range over seeds; a run that never reached it counts as more than
 * its last validation ("> N"), and a statistic that falls on such a run is written so. */
int summary_write_budget_at(FILE *f, const void *p);

/* ---- the table of a learning-rate sweep (summary_sweep.c) ----------------------------- */

/* sweep.tsv: per group of a model trained at several rates, its rate, how many runs
 * reached 0.99 validation token accuracy, the steps to it (median and range over seeds,
 * "> N" for a run that never did) and the best validation token accuracy of its runs. */
int summary_write_sweep(FILE *f, const void *p);

/* compute.tsv (summary_compute.c): per group and for all runs, the runs, training steps,
 * training seconds and core-hours (seconds times BLAS threads, validation left out). */
int summary_write_compute(FILE *f, const void *p);

/* Does group m's model have a group at another learning rate (a line of sweep.tsv)? */
int summary_swept(const summary_ctx *c, size_t m);

/* How many runs of group g the step cap ended short of their target (censored: the
 * runs convergence.tsv's verdict says "stopped by the cap" of). */
size_t summary_capped(const summary_ctx *c, const model_group *g);

/* ---- the BLEU tables (summary_bleu.c) -------------------------------------------------- */

/* bleu.tsv: for the runs of a file task (eval_bleu.tsv), per group and bin of 5 source
 * lengths, the corpus BLEU-4 of each run over the bin and its mean and range over the
 * runs; the rows "all" pool every length. */
int summary_write_bleu(FILE *f, const void *p);

/* bleu-table.tsv: per group with BLEU counts, ordered by longest training length, then
 * as the tables: its label, training range, runs, runs the cap ended, test sentences and
 * the BLEU-4 of every test sentence (× 100, as papers print it), mean, sd, min and max
 * over its runs (Bahdanau et al. 2015, Table 1, "All"). */
int summary_write_bleu_table(FILE *f, const void *p);

/* Prints bleu-table.tsv for people (nothing when no run has BLEU counts). */
void summary_print_bleu(FILE *f, const summary_ctx *c);

/* Prints the convergence table for people (nothing when no run recorded its stop). */
void summary_print_convergence(FILE *f, const summary_ctx *c);

#endif
