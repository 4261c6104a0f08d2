/* bleu.h — corpus BLEU-4 (Papineni et al. 2002) from token sequences (prefix: bleu_).
 *
 * BLEU compares a decoded sentence (the hypothesis) with its reference by n-gram
 * precision for n = 1..4, each clipped: an n-gram counts as matched at most as many times
 * as the reference holds it. Over a corpus the matched and total n-grams are summed
 * first, sentence by sentence, and the score is taken once:
 *     p_n  = sum of clipped matches of order n / sum of hypothesis n-grams of order n
 *     BP   = 1 when c > r, else exp(1 - r / c)   (c, r: total hypothesis and reference
 *                                                 lengths)
 *     BLEU = BP * exp((log p_1 + log p_2 + log p_3 + log p_4) / 4)
 * and is 0 when some p_n is 0 (no smoothing) or when nothing was decoded. The sums are
 * kept in a bleu_stats, so that the scores of several groups of sentences (the lengths
 * of one bin, the seeds of one model) merge exactly: BLEU of a union is the score of the
 * summed statistics, never a mean of scores.
 */
#ifndef ATTNLAB_BLEU_H
#define ATTNLAB_BLEU_H

#include <stddef.h>

#define BLEU_N 4 /* the largest n-gram order */

typedef struct bleu_stats {
    size_t match[BLEU_N]; /* clipped matches of order n + 1 */
    size_t total[BLEU_N]; /* hypothesis n-grams of order n + 1 */
    size_t hyp_len, ref_len;
} bleu_stats;

/* Adds one sentence: hypothesis hyp (nh tokens) against its reference ref (nr tokens). */
void bleu_add(bleu_stats *s, const int *hyp, size_t nh, const int *ref, size_t nr);

/* Adds the sums of from into into. */
void bleu_merge(bleu_stats *into, const bleu_stats *from);

/* The score of s, in [0, 1]. */
double bleu_score(const bleu_stats *s);

#endif
