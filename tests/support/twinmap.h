/* Two maps of the same compiled-style counters, to compare a pass over a function index with
 * the full scan: one region attached plain, the other with a random function index. */
#ifndef SIFT_TEST_TWINMAP_H
#define SIFT_TEST_TWINMAP_H

#include "sift/covmap.h"

#include <stdbool.h>

typedef struct {
    size_t len, nfns;
    uint8_t *plain, *indexed; /* the counters of each map */
    uint8_t *dirty;           /* one byte per function of the indexed map */
    uint32_t *starts;
    sift_covmap *plain_map, *indexed_map;
    unsigned seed; /* rand_r state: layouts and executions repeat */
} sift_test_twin;

/* LEN counters split into functions of 0 to 100 counters (a fifth of them empty or of one
 * counter), in EDGES of both maps. False when out of memory or refused. */
bool sift_test_twin_new(sift_test_twin *t, size_t len, unsigned seed);
void sift_test_twin_free(sift_test_twin *t);

/* Writes one execution into both maps: random counts in some functions (their first, last
 * and middle counters included), their dirty bytes set, and some functions marked that
 * changed nothing. ALL marks and runs every function. */
void sift_test_twin_run(sift_test_twin *t, bool all);

/* Whether a region's counters (and the dirty bytes) are all zero. */
bool sift_test_twin_clean(const sift_test_twin *t);

#endif
