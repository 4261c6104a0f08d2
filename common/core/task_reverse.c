/* task_reverse.c — the reverse task: the target is the source read backwards.
 * The first output needs the last input, so the distance between an input and its
 * output is short for late inputs and long for early ones (the source-reversal trick
 * of Sutskever et al. 2014, seen from the other side). */
#include "task.h"

static size_t reverse_len(size_t Ts) { return Ts; }

static void reverse_target(int *tgt, const int *src, size_t Ts, size_t nsym)
{
    (void)nsym;
    for (size_t t = 0; t < Ts; t++)
        tgt[t] = src[Ts - 1 - t];
}

static size_t reverse_source(size_t Ts, size_t t)
{
    return Ts - 1 - t;
}

const task task_reverse = {
    .name = "reverse",
    .about = "repeat the source sequence backwards",
    .target_len = reverse_len,
    .source_of = reverse_source,
    .target = reverse_target,
};
