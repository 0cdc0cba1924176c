/* Worker-local pseudo-random numbers (xoshiro256**): fast, seedable, reproducible. */
#ifndef SIFT_RNG_H
#define SIFT_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} sift_rng;

static inline uint64_t sift_rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void sift_rng_seed(sift_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = sift_rng_splitmix(&seed);
}

static inline uint64_t sift_rng_next(sift_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3] << 45 | s[3] >> 19;
    return result;
}

/* Uniform in [0, n); n must be > 0. */
static inline uint64_t sift_rng_below(sift_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)sift_rng_next(r) * n) >> 64);
}

#endif
