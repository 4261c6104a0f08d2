/* summary_bleu.c — a comparison's BLEU tables: the score per bin of source lengths
 * (bleu.tsv, the curves of Bahdanau et al. 2015, Fig. 2) and on every test sentence
 * (bleu-table.tsv, their Table 1), printed for people too (see summary_group.h).
 *
 * Design. A run's eval_bleu.tsv holds the BLEU counts of the test sentences of each
 * source length (bleu.h), so a run's score over any range of lengths is the score of its
 * summed counts, never a mean of the lengths' scores. A group's number is a statistic
 * over its runs, each run one value: the mean and the range (worst to best seed), as
 * every other table of a comparison shows seeds. Every run of a file task decodes the
 * same test set (summary_load refuses runs of different data), so the sentences a bin
 * holds are counted from one run.
 *
 * Invariant: a group's runs are summed in their group's order, so the same runs give
 * the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/bleu.h"
#include "rundir.h"
#include "summary_group.h"

/* The width of bleu.tsv's bins of source lengths (Bahdanau et al. 2015, Fig. 2, bin
 * their test sentences by length in the same way; one length alone holds too few test
 * sentences for a steady BLEU). */
#define SUMMARY_BLEU_BIN 5

/* Sums into s the BLEU counts of run r at the source lengths a..b, and into *sentences
 * the test sentences they hold. Returns the number of lengths found (0: r has no count
 * there, and s is untouched). */
static size_t run_counts(const rundir *r, size_t a, size_t b, bleu_stats *s,
                         size_t *sentences)
{
    size_t seen = 0;
    for (size_t k = 0; k < r->n_bleu; k++) {
        const rundir_bleu *e = &r->bleu[k];
        if (e->len < a || e->len > b)
            continue;
        for (int q = 0; q < BLEU_N; q++) {
            s->match[q] += (size_t)e->match[q];
            s->total[q] += (size_t)e->total[q];
        }
        s->hyp_len += (size_t)e->hyp_len;
        s->ref_len += (size_t)e->ref_len;
        *sentences += e->samples;
        seen++;
    }
    return seen;
}

/* The BLEU of each run of g over the lengths a..b, gathered in *score; the test
 * sentences there (of the first run that has any) into *sentences. */
static void group_bleu(const model_group *g, size_t a, size_t b, stat_acc *score,
                       size_t *sentences)
{
    memset(score, 0, sizeof *score);
    *sentences = 0;
    for (size_t i = 0; i < g->n; i++) {
        bleu_stats s = {0};
        size_t held = 0;
        if (run_counts(g->runs[i], a, b, &s, &held) == 0)
            continue;
        if (score->n == 0) /* every run decodes the same test set */
            *sentences = held;
        stat_add(score, bleu_score(&s));
    }
}

/* The shortest and longest length at which any run of g has BLEU counts, into *a and *b.
 * Returns 0, or -1 when none has any. */
static int bleu_lengths(const model_group *g, size_t *a, size_t *b)
{
    int any = 0;
    for (size_t i = 0; i < g->n; i++) {
        const rundir *r = g->runs[i];
        if (r->n_bleu == 0) /* rows sorted by length (rundir.h) */
            continue;
        if (!any || r->bleu[0].len < *a)
            *a = r->bleu[0].len;
        if (!any || r->bleu[r->n_bleu - 1].len > *b)
            *b = r->bleu[r->n_bleu - 1].len;
        any = 1;
    }
    return any ? 0 : -1;
}

int summary_write_bleu(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    fprintf(f, "model\tlen_min\tlen_max\tseeds\tsentences\tbleu_mean\tbleu_min\tbleu_max\n");
    for (size_t m = 0; m < c->ng && c->nlens; m++) {
        const model_group *g = &c->g[m];
        const size_t first = c->lens[0], last = c->lens[c->nlens - 1];
        for (size_t lo = first; lo <= last + SUMMARY_BLEU_BIN; lo += SUMMARY_BLEU_BIN) {
            const int all = lo > last; /* the last pass pools every length */
            const size_t a = all ? first : lo, b = all ? last : lo + SUMMARY_BLEU_BIN - 1;
            stat_acc score;
            size_t sentences;
            group_bleu(g, a, b, &score, &sentences);
            if (score.n == 0)
                continue;
            if (all)
                fprintf(f, "%s\tall\tall", g->name);
            else
                fprintf(f, "%s\t%zu\t%zu", g->name, a, b);
            fprintf(f, "\t%zu\t%zu\t%.6f\t%.6f\t%.6f\n", score.n, sentences,
                    stat_mean(&score), score.min, score.max);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* One row of bleu-table.tsv: a group's score on every test sentence. */
typedef struct table_row {
    const model_group *g;
    size_t len_min, len_max; /* the test lengths pooled */
    size_t sentences, capped;
    stat_acc score;          /* over the runs, on a 0-1 scale */
} table_row;

/* The rows of bleu-table.tsv into *rows (allocated; free it), ordered by the groups'
 * longest training length, then in the tables' order. Returns their number (0: none, or
 * no memory, and *rows is NULL). */
static size_t table_rows(const summary_ctx *c, table_row **rows)
{
    table_row *t = *rows = malloc((c->ng ? c->ng : 1) * sizeof *t);
    size_t n = 0;
    for (size_t m = 0; t && m < c->ng; m++) {
        table_row r = {.g = &c->g[m]};
        if (bleu_lengths(r.g, &r.len_min, &r.len_max) != 0)
            continue;
        group_bleu(r.g, r.len_min, r.len_max, &r.score, &r.sentences);
        r.capped = summary_capped(c, r.g);
        /* insertion: stable, so groups of one training length keep the tables' order */
        size_t j = n++;
        while (j > 0 && t[j - 1].g->runs[0]->cfg.train_max > r.g->runs[0]->cfg.train_max) {
            t[j] = t[j - 1];
            j--;
        }
        t[j] = r;
    }
    if (n == 0) {
        free(t);
        *rows = NULL;
    }
    return n;
}

int summary_write_bleu_table(FILE *f, const void *p)
{
    const summary_ctx *c = p;
    table_row *t;
    const size_t n = table_rows(c, &t);
    fprintf(f, "label\tmodel\ttrain_min\ttrain_max\tseeds\tcapped\tlen_min\tlen_max\t"
               "sentences\tbleu100_mean\tbleu100_sd\tbleu100_min\tbleu100_max\n");
    for (size_t k = 0; k < n; k++) {
        const config *cfg = &t[k].g->runs[0]->cfg;
        const stat_acc *s = &t[k].score;
        fprintf(f, "%s\t%s\t%zu\t%zu\t%zu\t%zu\t%zu\t%zu\t%zu\t%.4f\t%.4f\t%.4f\t%.4f\n",
                t[k].g->label, t[k].g->name, cfg->train_min, cfg->train_max, s->n,
                t[k].capped, t[k].len_min, t[k].len_max, t[k].sentences,
                100 * stat_mean(s), 100 * stat_sd(s), 100 * s->min, 100 * s->max);
    }
    free(t);
    return ferror(f) ? -1 : 0;
}

void summary_print_bleu(FILE *f, const summary_ctx *c)
{
    table_row *t;
    const size_t n = table_rows(c, &t);
    if (n == 0)
        return;
    fprintf(f, "BLEU-4 of every test sentence (x 100; mean [worst-best] over seeds; "
               "bleu-table.tsv):\n%-18s %-9s %5s  %-24s %s\n", "label", "trained", "seeds",
            "BLEU", "ended");
    for (size_t k = 0; k < n; k++) {
        const config *cfg = &t[k].g->runs[0]->cfg;
        char range[48], score[64], ended[64];
        snprintf(range, sizeof range, "%zu-%zu", cfg->train_min, cfg->train_max);
        snprintf(score, sizeof score, "%.2f [%.2f-%.2f]", 100 * stat_mean(&t[k].score),
                 100 * t[k].score.min, 100 * t[k].score.max);
        if (t[k].capped)
            snprintf(ended, sizeof ended, "%zu of %zu stopped by the cap (censored)",
                     t[k].capped, t[k].g->n);
        else
            snprintf(ended, sizeof ended, "-");
        fprintf(f, "%-18s %-9s %5zu  %-24s %s\n", t[k].g->label, range, t[k].score.n, score,
                ended);
    }
    fputc('\n', f);
    free(t);
}
