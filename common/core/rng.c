/* rng.c — three independent mt19937 streams per run seed (see rng.h). */
#include "rng.h"

#include <stdint.h>

unsigned long rng_stream_seed(uint64_t seed, rng_stream which)
{
    /* splitmix64 (Steele, Lea & Flood 2014): a bijective mixer, so distinct (seed, stream)
     * pairs give unrelated mt19937 seeds. mt19937 takes 32 bits of seed. */
    uint64_t z = (uint64_t)seed * 4u + (uint64_t)which + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    unsigned long s = (unsigned long)(z & 0xFFFFFFFFu);
    return s ? s : 1;
}

int rng_open(rng_streams *r, unsigned long seed)
{
    for (int k = 0; k < RNG_N_STREAMS; k++)
        r->s[k] = NULL;
    for (int k = 0; k < RNG_N_STREAMS; k++) {
        r->s[k] = gsl_rng_alloc(gsl_rng_mt19937);
        if (!r->s[k]) {
            rng_close(r);
            return -1;
        }
        gsl_rng_set(r->s[k], rng_stream_seed(seed, (rng_stream)k));
    }
    return 0;
}

void rng_close(rng_streams *r)
{
    for (int k = 0; k < RNG_N_STREAMS; k++) {
        if (r->s[k])
            gsl_rng_free(r->s[k]);
        r->s[k] = NULL;
    }
}

size_t rng_range(const gsl_rng *r, size_t lo, size_t hi)
{
    return lo + (size_t)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}
