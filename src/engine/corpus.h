/* The in-memory corpus: entries, the features they own, and the scheduler that picks among them. */
#ifndef SIFT_CORPUS_H
#define SIFT_CORPUS_H

#include "engine/rng.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A feature: (domain, counter index, bucket bit number) packed as domain << 40 | index << 3 |
 * bit. Built from a coverage export with sift_feature(). */
typedef uint64_t sift_feature_id;

static inline sift_feature_id sift_feature(unsigned domain, size_t index, unsigned bucket_bit)
{
    return (uint64_t)domain << 40 | (uint64_t)index << 3 | bucket_bit;
}

typedef struct {
    uint8_t *data;
    size_t size;
    sift_feature_id *features; /* sorted, unique */
    size_t nfeatures;
    uint64_t exec_ns;          /* time of one execution */
    uint64_t times_chosen;
    uint64_t added_at;         /* execution count when added */
    char name[41];             /* hex SHA-1 of the data: its file name in the corpus folder */
    bool favored;              /* top-rated for at least one feature (minimal covering set) */
    bool evicted;              /* dropped from scheduling */
    double weight;
} sift_entry;

typedef struct sift_corpus sift_corpus;

sift_corpus *sift_corpus_new(void);
void sift_corpus_free(sift_corpus *c);

/* Adds a copy of DATA with its features (any order; copied). NAME is the hex SHA-1. Returns
 * the new entry, or NULL when out of memory or when an entry with the same NAME exists. */
sift_entry *sift_corpus_add(sift_corpus *c, const uint8_t *data, size_t size,
                            const sift_feature_id *features, size_t nfeatures, uint64_t exec_ns,
                            const char *name, uint64_t now_execs);

/* Picks the next entry to mutate: weighted by the rarity of the features it owns, favoring the
 * minimal covering set, with energy for new entries that fades as they are chosen. NULL when
 * the corpus is empty. */
sift_entry *sift_corpus_pick(sift_corpus *c, sift_rng *rng);

/* Recomputes favored entries and weights; cheap enough to call after every addition. */
void sift_corpus_update(sift_corpus *c);

size_t sift_corpus_count(const sift_corpus *c);
size_t sift_corpus_favored(const sift_corpus *c);
size_t sift_corpus_bytes(const sift_corpus *c);
sift_entry *sift_corpus_at(sift_corpus *c, size_t i);
/* Distinct features owned by the corpus. */
size_t sift_corpus_features(const sift_corpus *c);

#endif
