/* rng.h — seeded randomness with separate streams (prefix: rng_).
 *
 * One seed gives three independent gsl_rng (mt19937) streams: one for initial weights,
 * one for training data (lengths and sequences), one for evaluation data. Because the
 * streams never share draws, adding an evaluation, changing its size or evaluating more
 * lengths changes neither the initial weights nor a single training batch, and the
 * evaluation sequences are never drawn from the training stream. Each stream's seed is
 * derived from the run seed by a fixed mixing function (splitmix64), so a run is
 * bit-for-bit reproducible from its seed alone.
 */
#ifndef ATTNLAB_RNG_H
#define ATTNLAB_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

typedef enum { RNG_INIT = 0, RNG_TRAIN = 1, RNG_EVAL = 2, RNG_N_STREAMS = 3 } rng_stream;

typedef struct rng_streams {
    gsl_rng *s[RNG_N_STREAMS];
} rng_streams;

/* Opens the three streams for seed. Returns 0, or -1 when out of memory. */
int rng_open(rng_streams *r, unsigned long seed);
void rng_close(rng_streams *r);

/* A stream's own seed: splitmix64 of (seed, stream), never 0. The seed is 64 bits wide
 * everywhere (unsigned long has 32 in WebAssembly), so that a seed made by arithmetic, as
 * the evaluation's per-length ones are, gives every build the same stream. */
unsigned long rng_stream_seed(uint64_t seed, rng_stream which);

/* Uniform integer in [lo, hi] inclusive. */
size_t rng_range(const gsl_rng *r, size_t lo, size_t hi);

#endif
