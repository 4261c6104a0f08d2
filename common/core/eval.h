/* eval.h — per-length evaluation by greedy decoding (prefix: eval_).
 *
 * For each requested length L, eval draws `samples` fresh sources of length L from an
 * evaluation stream of its own, decodes each greedily (exactly Tt steps, the model
 * feeding back its own predictions), and measures:
 *     token_acc   fraction of target tokens decoded right
 *     seq_acc     fraction of sequences decoded entirely right
 *     loss        mean teacher-forced cross-entropy per token (nats)
 *     pos_acc[i]  token accuracy at output position i (where in the sequence it fails)
 * The stream of length L is seeded from (seed, L) alone, so the sequences at a length do
 * not depend on which other lengths are evaluated, nor on anything drawn in training:
 * every model evaluated with the same seed sees exactly the same sequences.
 *
 * A file task (task.h) has fixed examples instead of a generator: eval_data_run decodes
 * every example of one of its sets (validation or test) at each requested source
 * length, bucket by bucket. The targets of one source length may differ in length:
 * tlen is then the longest, token_acc counts over every target token, loss is the mean
 * per target token, and pos_acc[i] is the accuracy at position i among the examples
 * whose target reaches it. samples is the number of examples at that length. Each example
 * is decoded to the length of its own target (there is no end-of-sentence symbol), and
 * its BLEU-4 counts against that target are summed into bleu.
 */
#ifndef ATTNLAB_EVAL_H
#define ATTNLAB_EVAL_H

#include <signal.h>
#include <stdio.h>

#include "bleu.h"
#include "model.h"
#include "task.h"

typedef struct eval_result {
    size_t len;       /* source length L */
    size_t tlen;      /* target length Tt */
    size_t samples;
    double token_acc, seq_acc, loss;
    double *pos_acc;  /* (tlen) accuracy per output position */
    bleu_stats bleu;  /* file tasks: BLEU-4 counts of the decoded targets (bleu.h) */
} eval_result;

/* What eval_run and eval_data_run return besides 0 and -1: *stop was set. */
#define EVAL_STOPPED 1

/* Evaluates m at each of the nl lengths (each at most the model's max_len). out must hold
 * nl results; free them with eval_free. Returns 0; -1 with one line in err; or
 * EVAL_STOPPED when stop is not NULL and *stop became non-zero (a signal handler sets it):
 * the evaluation then ends before its next chunk of sequences, out incomplete. */
int eval_run(model *m, const task *t, const size_t *lens, size_t nl, size_t samples,
             unsigned long seed, const volatile sig_atomic_t *stop, eval_result *out,
             char *err, size_t n);

/* Evaluates m on every example of set s of the file task t whose source length is one
 * of lens (nl of them, each at most max_len and each holding examples of that set), as
 * described above. out must hold nl results; free them with eval_free. Returns as
 * eval_run does (stop likewise). */
int eval_data_run(model *m, const task *t, dataset_set s, const size_t *lens, size_t nl,
                  const volatile sig_atomic_t *stop, eval_result *out, char *err, size_t n);

void eval_free(eval_result *r, size_t nl);

/* Writes the per-length table (header: model len samples token_acc seq_acc loss). */
int eval_write_tsv(FILE *f, const char *model_name, const eval_result *r, size_t nl);

/* Writes the per-position table (header: model len position accuracy); position is
 * 1-based. */
int eval_write_positions_tsv(FILE *f, const char *model_name, const eval_result *r,
                             size_t nl);

/* Writes the BLEU-4 counts of a file task's evaluation as TSV (docs/results-format.md):
 * model, len, samples, hyp_len, ref_len, match1, total1 .. match4, total4, bleu — the
 * counts, so that lengths and runs can be merged exactly. Returns 0, or -1 on a write
 * error. */
int eval_write_bleu_tsv(FILE *f, const char *model_name, const eval_result *r, size_t nl);

/* Prints the per-length table for people. */
void eval_print(FILE *f, const char *model_name, const eval_result *r, size_t nl);

/* The final evaluation of a run when none is asked for (train without --eval-lengths,
 * the page without eval_lengths): up to twice the longest training length, in about 16
 * steps, never beyond max_len, at most max lengths, written into out. Returns the count. */
size_t eval_default_lengths(const config *c, size_t *out, size_t max);

#endif
