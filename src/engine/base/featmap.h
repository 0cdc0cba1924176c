/* A hash table from 64-bit feature ids to dense 32-bit indices (open addressing, linear
 * probing). Room is reserved ahead of insertion, so inserts and lookups never allocate. */
#ifndef SIFT_FEATMAP_H
#define SIFT_FEATMAP_H

#include <stddef.h>
#include <stdint.h>

/* The value of an empty slot; never a valid dense index. */
#define SIFT_FEATMAP_NONE UINT32_MAX

typedef struct {
    uint64_t *keys;
    uint32_t *vals; /* SIFT_FEATMAP_NONE marks an empty slot, so every key value is usable */
    size_t cap;     /* power of two, or 0 before the first reservation */
    size_t count;
} sift_featmap;

/* Zero-initialised storage is an empty map; this just says so. */
static inline void sift_featmap_init(sift_featmap *m)
{
    *m = (sift_featmap){0};
}

void sift_featmap_free(sift_featmap *m);

/* Makes room for EXTRA more keys. 0, or -1 when out of memory (the map is unchanged). */
int sift_featmap_reserve(sift_featmap *m, size_t extra);

/* The value stored for KEY, or SIFT_FEATMAP_NONE. */
uint32_t sift_featmap_get(const sift_featmap *m, uint64_t key);

/* The value slot of KEY, inserted holding SIFT_FEATMAP_NONE when absent: the caller stores the
 * value. Room must have been reserved. */
uint32_t *sift_featmap_slot(sift_featmap *m, uint64_t key);

#endif
