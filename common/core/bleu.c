/* bleu.c — corpus BLEU-4: clipped n-gram matches summed over sentences, scored once.
 *
 * Design. Sentences here are short (at most max_len tokens), so the clipped count of each
 * distinct hypothesis n-gram is found by direct comparison: O(nh * (nh + nr) * n) per
 * sentence, no hashing, no allocation. The score uses the project's own exp and log
 * (fastmath.h), as every number the program writes does, so it is the same bits on every
 * processor.
 */
#include "bleu.h"

#include <string.h>

#include "fastmath.h"

/* Occurrences of the n-gram g (n tokens) in x (nx tokens). */
static size_t bleu_count(const int *g, size_t n, const int *x, size_t nx)
{
    size_t c = 0;
    for (size_t i = 0; i + n <= nx; i++)
        c += memcmp(g, x + i, n * sizeof *g) == 0;
    return c;
}

void bleu_add(bleu_stats *s, const int *hyp, size_t nh, const int *ref, size_t nr)
{
    s->hyp_len += nh;
    s->ref_len += nr;
    for (size_t n = 1; n <= BLEU_N && n <= nh; n++) {
        s->total[n - 1] += nh - n + 1;
        for (size_t i = 0; i + n <= nh; i++) {
            /* each distinct n-gram once, at its first occurrence */
            if (bleu_count(hyp + i, n, hyp, i + n - 1) > 0)
                continue;
            const size_t in_hyp = bleu_count(hyp + i, n, hyp, nh);
            const size_t in_ref = bleu_count(hyp + i, n, ref, nr);
            s->match[n - 1] += in_hyp < in_ref ? in_hyp : in_ref;
        }
    }
}

void bleu_merge(bleu_stats *into, const bleu_stats *from)
{
    for (size_t n = 0; n < BLEU_N; n++) {
        into->match[n] += from->match[n];
        into->total[n] += from->total[n];
    }
    into->hyp_len += from->hyp_len;
    into->ref_len += from->ref_len;
}

double bleu_score(const bleu_stats *s)
{
    if (s->hyp_len == 0)
        return 0.0;
    double logp = 0.0;
    for (size_t n = 0; n < BLEU_N; n++) {
        if (s->match[n] == 0)
            return 0.0;
        logp += fm_log((double)s->match[n] / (double)s->total[n]);
    }
    const double c = (double)s->hyp_len, r = (double)s->ref_len;
    const double bp = c > r ? 0.0 : 1.0 - r / c; /* log of the brevity penalty */
    return fm_exp(bp + logp / BLEU_N);
}
