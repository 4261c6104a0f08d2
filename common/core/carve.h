/* carve.h — a model's run-time state cut out of one block of doubles and one of ints
 * (prefix: carve_).
 *
 * Design. A model lists its activations once, in a layout function that asks a carver
 * for each array in turn (carve_matrix, carve_vector, carve_ints) at the sizes of a
 * batch. Run on a carver without blocks, it only counts; carve_reserve does that at the
 * largest sizes, allocates both blocks (zeroed), and the model then runs the same layout
 * on the blocks to get its views — once in reserve (recurrent models, whose views are
 * taken at the capacity), or again at every batch's sizes (a model that wants a
 * matrix of N rows to be always a plain (N, cols) view). Every size product is checked: an
 * overflow marks the carver, and carve_reserve refuses it.
 *
 * Invariant: the layout carves the same arrays in the same order whatever the block; at
 * sizes within those it was reserved for it needs no more than the block holds.
 */
#ifndef ATTNLAB_CARVE_H
#define ATTNLAB_CARVE_H

#include <stddef.h>
#include <gsl/gsl_matrix.h>

typedef struct carver {
    double *base; /* block of doubles being cut, or NULL to count only */
    int *ibase;   /* block of ints being cut, or NULL to count only */
    size_t used;  /* doubles handed out so far */
    size_t iused; /* ints handed out so far */
    int overflow; /* a size did not fit in size_t */
} carver;

/* The next rows·cols doubles as a (rows, cols) matrix view; an empty view (data NULL,
 * sizes 0) when counting or on overflow. */
gsl_matrix_view carve_matrix(carver *c, size_t rows, size_t cols);

/* The next n doubles (NULL when counting or on overflow). */
double *carve_vector(carver *c, size_t n);

/* The next n ints (NULL when counting or on overflow). */
int *carve_ints(carver *c, size_t n);

/* a·b, or SIZE_MAX (and the carver marked) when it overflows: for sizes a layout
 * multiplies before it carves. */
size_t carve_mul(carver *c, size_t a, size_t b);

/* The two blocks of a state. */
typedef struct carve_block {
    double *d; /* (nd) doubles */
    int *i;    /* (ni) ints */
    size_t nd, ni;
} carve_block;

/* What a model lays out: its arrays at the sizes its ctx holds. */
typedef void (*carve_layout)(carver *c, void *ctx);

/* Counts what layout(c, ctx) carves, and allocates a block of that size (zeroed) into
 * *blk, freeing the block blk held only once the new one exists: on failure *blk is left
 * as it was, still usable. Returns 0, or -1 on overflow or when memory runs out. The
 * caller then runs its layout on a carver over blk to take its views. */
int carve_reserve(carve_block *blk, carve_layout layout, void *ctx);

/* A carver that cuts blk from its start. */
carver carve_start(const carve_block *blk);

/* Frees both blocks; blk is left empty. Safe on an empty block. */
void carve_free(carve_block *blk);

#endif
