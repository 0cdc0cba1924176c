/* Feature id to dense index table. */
#include "engine/base/featmap.h"

#include <stdlib.h>

/* Feature ids pack small fields into a few bit ranges, so the low bits alone cluster badly:
 * mix every bit into the ones the mask keeps (the murmur3 finaliser). */
static inline size_t slot_of(uint64_t key, size_t mask)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return (size_t)key & mask;
}

void sift_featmap_free(sift_featmap *m)
{
    free(m->keys);
    free(m->vals);
    sift_featmap_init(m);
}

/* At most 3/4 full: linear probing stays short and a miss ends at an empty slot. */
static inline int fits(size_t count, size_t cap)
{
    return count <= cap / 4 * 3;
}

int sift_featmap_reserve(sift_featmap *m, size_t extra)
{
    if (extra > SIZE_MAX / 2 - m->count) return -1;
    size_t need = m->count + extra;
    if (m->cap && fits(need, m->cap)) return 0;
    size_t cap = m->cap ? m->cap : 64;
    while (!fits(need, cap)) {
        if (cap > SIZE_MAX / 2 / sizeof(uint64_t)) return -1;
        cap *= 2;
    }
    uint64_t *keys = malloc(cap * sizeof(*keys));
    uint32_t *vals = malloc(cap * sizeof(*vals));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        vals[i] = SIFT_FEATMAP_NONE;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->vals[i] == SIFT_FEATMAP_NONE) continue;
        size_t s = slot_of(m->keys[i], cap - 1);
        while (vals[s] != SIFT_FEATMAP_NONE)
            s = (s + 1) & (cap - 1);
        keys[s] = m->keys[i];
        vals[s] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

uint32_t sift_featmap_get(const sift_featmap *m, uint64_t key)
{
    if (!m->cap) return SIFT_FEATMAP_NONE;
    size_t mask = m->cap - 1;
    for (size_t s = slot_of(key, mask);; s = (s + 1) & mask) {
        if (m->vals[s] == SIFT_FEATMAP_NONE || m->keys[s] == key) return m->vals[s];
    }
}

uint32_t *sift_featmap_slot(sift_featmap *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t s = slot_of(key, mask);
    while (m->vals[s] != SIFT_FEATMAP_NONE && m->keys[s] != key)
        s = (s + 1) & mask;
    if (m->vals[s] == SIFT_FEATMAP_NONE) {
        m->keys[s] = key;
        m->count++;
    }
    return &m->vals[s];
}
