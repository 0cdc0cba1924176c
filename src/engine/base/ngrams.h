/* The byte pairs and triples that an input holds, as sets of bits: a search for a needle with a
 * pair or a triple the sets lack cannot succeed. Input-to-state mutation applies every operand
 * pair of one execution to one input, and most operands occur nowhere in it: searching the
 * whole input for each of them, in three encodings, was a tenth of a harfbuzz campaign. */
#ifndef SIFT_NGRAMS_H
#define SIFT_NGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Triples are hashed into this many bits: a 64 KB input sets at most a quarter of them. */
#define SIFT_NGRAMS_TRIPLE_BITS 18

typedef struct {
    uint64_t pairs[(1u << 16) / 64];                        /* bit a | b << 8 */
    uint64_t triples[(1u << SIFT_NGRAMS_TRIPLE_BITS) / 64]; /* bit sift_ngrams_triple() */
} sift_ngrams;

static inline unsigned sift_ngrams_pair(const uint8_t *p)
{
    return p[0] | (unsigned)p[1] << 8;
}

/* Fibonacci hashing of the three bytes: its high bits are the well-mixed ones. */
static inline unsigned sift_ngrams_triple(const uint8_t *p)
{
    uint32_t t = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    return (t * 0x9E3779B1u) >> (32 - SIFT_NGRAMS_TRIPLE_BITS);
}

static inline bool sift_ngrams_bit(const uint64_t *bits, unsigned i)
{
    return bits[i / 64] >> (i % 64) & 1;
}

/* Makes G the pairs and triples of the SIZE bytes at D. */
void sift_ngrams_of(sift_ngrams *g, const uint8_t *d, size_t size);

/* Adds the pairs and triples of D (SIZE bytes) that start from FROM up to TO, after those bytes
 * changed. The sets may then also hold some that are gone: a search they let through may still
 * fail. */
void sift_ngrams_add(sift_ngrams *g, const uint8_t *d, size_t size, size_t from, size_t to);

/* False when the N bytes of NEEDLE cannot occur in the input G was made of. */
static inline bool sift_ngrams_may_hold(const sift_ngrams *g, const uint8_t *needle, size_t n)
{
    if (n == 2) return sift_ngrams_bit(g->pairs, sift_ngrams_pair(needle));
    for (size_t i = 0; i + 2 < n; i++)
        if (!sift_ngrams_bit(g->triples, sift_ngrams_triple(needle + i))) return false;
    return true;
}

#endif
