/* walk.h — one walk over a model's parameters gives their names, shapes, arena offsets,
 * views and count (prefix: walk_).
 *
 * Design. A model writes one visit function that names each of its tensors once, in
 * arena order, with walk_tensor(wk, &w->X, &g->X, prefix, "X", rows, cols). The same
 * function is run in three passes: count the tensors, describe them (the size table
 * arena_alloc takes), and bind the views of the values (w) and the gradients (g). So the
 * order of the arena — of checkpoints and of the optimiser's flat loops (a model's init
 * draws in an order of its own, fixed in its init function) — and every shape are
 * written in exactly one place, and the
 * number of parameters (walk_count) comes from that same walk instead of a second
 * formula.
 *
 * Invariant: the visit function does the same walk in every pass (it may depend on the
 * configuration, never on the pass), and writes *w, *g only through walk_tensor.
 */
#ifndef ATTNLAB_WALK_H
#define ATTNLAB_WALK_H

#include <stddef.h>
#include <gsl/gsl_matrix.h>

#include "tensor.h"

typedef struct walk {
    arena_spec *spec; /* size table being written (pass 2), or NULL */
    arena *a;         /* built arena whose views are handed out (pass 3), or NULL */
    size_t n;         /* tensors visited so far */
    size_t numel;     /* doubles visited so far (SIZE_MAX once that overflows) */
    int failed;       /* a name did not fit ARENA_NAME_MAX */
} walk;

/* What a model hands to walk_build and walk_count: its visit function. */
typedef void (*walk_visit)(walk *wk, void *ctx);

/* Visits the tensor called prefix.name ("name" alone when prefix is "") of shape
 * (rows, cols): counts it, describes it in the size table, or points *w and *g at its
 * value and gradient views, depending on the pass. w and g are written in pass 3 only. */
void walk_tensor(walk *wk, gsl_matrix **w, gsl_matrix **g, const char *prefix,
                 const char *name, size_t rows, size_t cols);

/* out = prefix + "." + part ("enc" + "Wx" → "enc.Wx"; part alone when prefix is ""). A
 * name cut short here is caught by walk_tensor, which sees it does not fit. */
void walk_join(char *out, size_t n, const char *prefix, const char *part);

/* Builds arena a from the tensors visit(wk, ctx) walks: counts them, writes the size
 * table, allocates the arena (zeroed) and walks once more to hand out the views. Returns
 * 0, or -1 when memory runs out or a name is too long (a is then empty). */
int walk_build(arena *a, walk_visit visit, void *ctx);

/* The number of doubles visit(wk, ctx) walks, without allocating anything (a model's
 * n_params), or 0 when a name is too long or the count overflows. */
size_t walk_count(walk_visit visit, void *ctx);

#endif
