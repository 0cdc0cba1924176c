/* Byte pair and triple sets of inputs. */
#include "engine/base/ngrams.h"

#include <string.h>

void sift_ngrams_add(sift_ngrams *g, const uint8_t *d, size_t size, size_t from, size_t to)
{
    for (size_t i = from; i < to && i + 1 < size; i++) {
        unsigned pair = sift_ngrams_pair(d + i);
        g->pairs[pair / 64] |= 1ull << (pair % 64);
        if (i + 2 >= size) continue;
        unsigned triple = sift_ngrams_triple(d + i);
        g->triples[triple / 64] |= 1ull << (triple % 64);
    }
}

void sift_ngrams_of(sift_ngrams *g, const uint8_t *d, size_t size)
{
    memset(g, 0, sizeof *g);
    sift_ngrams_add(g, d, size, 0, size);
}
