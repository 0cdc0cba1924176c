/* The private layout of a coverage map (struct sift_covmap): per domain, the counter regions
 * in index order. Shared by the maps (covmap.c), the pass (scan.c) and the snapshots. */
#ifndef SIFT_COVMAP_IMPL_H
#define SIFT_COVMAP_IMPL_H

#include "sift/covmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIFT_LINE 64

/* One contiguous counter array inside a domain's index space. */
typedef struct {
    uint8_t *counters;
    uint8_t *dirty; /* one byte per line; NULL when the compiler writes the counters */
    size_t len;
    size_t first; /* index of counters[0] in the domain */
    bool owned;
    /* A function index (attached regions only): fn_dirty[k] marks function k, which owns
     * counters fn_start[k] up to fn_start[k + 1]; fn_start has nfns + 1 entries, the last
     * one len. */
    uint8_t *fn_dirty;
    uint32_t *fn_start;
    size_t nfns;
} sift_region;

typedef struct {
    sift_region *regions;
    size_t nregions, cap;
    size_t size;
} sift_domain_map;

struct sift_covmap {
    sift_domain_map domains[SIFT_DOMAIN_COUNT];
};

#endif
