/* task_copy.c — the copy task: the target is the source, symbol for symbol. */
#include "task.h"

static size_t copy_len(size_t Ts) { return Ts; }

static void copy_target(int *tgt, const int *src, size_t Ts, size_t nsym)
{
    (void)nsym;
    for (size_t t = 0; t < Ts; t++)
        tgt[t] = src[t];
}

static size_t copy_source(size_t Ts, size_t t)
{
    (void)Ts;
    return t;
}

const task task_copy = {
    .name = "copy",
    .about = "repeat the source sequence",
    .target_len = copy_len,
    .source_of = copy_source,
    .target = copy_target,
};
