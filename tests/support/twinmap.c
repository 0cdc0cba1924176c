#include "twinmap.h"

#include <stdlib.h>
#include <string.h>

static size_t draw(sift_test_twin *t, size_t n)
{
    return (size_t)rand_r(&t->seed) % n;
}

bool sift_test_twin_new(sift_test_twin *t, size_t len, unsigned seed)
{
    memset(t, 0, sizeof(*t));
    t->len = len;
    t->seed = seed;
    t->plain = calloc(len, 1);
    t->indexed = calloc(len, 1);
    /* At most one function per counter, and as many empty ones again. */
    t->starts = calloc(2 * len + 1, sizeof(*t->starts));
    t->dirty = calloc(2 * len + 1, 1);
    t->plain_map = sift_covmap_new();
    t->indexed_map = sift_covmap_new();
    if (!t->plain || !t->indexed || !t->starts || !t->dirty || !t->plain_map || !t->indexed_map)
        return false;
    for (size_t at = 0; at < len || t->nfns == 0;) {
        size_t roll = draw(t, 10);
        size_t size = roll == 0 && t->nfns < len ? 0 : roll <= 1 ? 1 : 2 + draw(t, 99);
        if (size > len - at) size = len - at;
        t->starts[t->nfns++] = (uint32_t)at;
        at += size;
    }
    if (draw(t, 2)) t->starts[t->nfns++] = (uint32_t)len; /* an empty function at the end */
    size_t first;
    return sift_covmap_attach(t->plain_map, SIFT_DOMAIN_EDGES, t->plain, len, NULL) == SIFT_OK &&
           sift_covmap_attach(t->indexed_map, SIFT_DOMAIN_EDGES, t->indexed, len, &first) ==
               SIFT_OK &&
           sift_covmap_index_functions(t->indexed_map, SIFT_DOMAIN_EDGES, first, t->dirty,
                                       t->starts, t->nfns) == SIFT_OK;
}

void sift_test_twin_free(sift_test_twin *t)
{
    sift_covmap_free(t->plain_map);
    sift_covmap_free(t->indexed_map);
    free(t->plain);
    free(t->indexed);
    free(t->starts);
    free(t->dirty);
}

static void set(sift_test_twin *t, size_t i, uint8_t count)
{
    t->plain[i] = t->indexed[i] = count;
}

void sift_test_twin_run(sift_test_twin *t, bool all)
{
    for (size_t k = 0; k < t->nfns; k++) {
        if (!all && draw(t, 4) != 0) continue;
        t->dirty[k] = 1;
        size_t lo = t->starts[k], hi = k + 1 < t->nfns ? t->starts[k + 1] : t->len;
        if (lo == hi || (!all && draw(t, 5) == 0)) continue;
        /* The counts that matter most: 1, the bucket edges, and 255. */
        static const uint8_t counts[] = {1, 2, 3, 4, 7, 8, 16, 127, 128, 255};
        set(t, lo, counts[draw(t, sizeof(counts))]);
        set(t, hi - 1, counts[draw(t, sizeof(counts))]);
        for (size_t i = lo + 1; i + 1 < hi; i++)
            if (all || draw(t, 3) == 0) set(t, i, (uint8_t)(1 + draw(t, 255)));
    }
}

bool sift_test_twin_clean(const sift_test_twin *t)
{
    for (size_t i = 0; i < t->len; i++)
        if (t->plain[i] || t->indexed[i]) return false;
    for (size_t k = 0; k < t->nfns; k++)
        if (t->dirty[k]) return false;
    return true;
}
