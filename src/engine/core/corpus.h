/* The in-memory corpus: entries, the features they own, and the scheduler that picks among them. */
#ifndef SIFT_CORPUS_H
#define SIFT_CORPUS_H

#include "engine/base/rng.h"
#include "sift/covmap.h"

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

static inline unsigned sift_feature_domain(sift_feature_id feature)
{
    return (unsigned)(feature >> 40);
}

typedef struct {
    uint8_t *data;
    size_t size;
    size_t nfeatures;      /* distinct features (sift_corpus_entry_features lists them) */
    uint64_t exec_ns;      /* time of one execution */
    uint64_t times_chosen; /* picks, each of which makes one mutant */
    uint64_t added_at;     /* execution count when added */
    char name[41];         /* hex SHA-1 of the data: its file name in the corpus folder */
    bool favored;          /* top-rated for at least one feature (minimal covering set) */
    bool evicted;          /* dropped from scheduling for good; the name is kept, data is NULL */
    bool pinned;           /* never evicted, top-rated or not (-keep_seed's seeds); set by the
                              caller right after sift_corpus_add */
    bool focus;            /* runs -focus_function; set by sift_corpus_mark_focus */
    double weight;         /* current scheduling weight (docs/scheduling.md), 0 if evicted */
    uint32_t tops[SIFT_DOMAIN_COUNT]; /* features of each domain it is top-rated for */
} sift_entry;

typedef struct sift_corpus sift_corpus;

sift_corpus *sift_corpus_new(void);
void sift_corpus_free(sift_corpus *c);

/* Adds a copy of DATA with its features (any order, duplicates allowed; copied; not the buffer
 * of C's own sift_corpus_entry_features). With DATA
 * NULL the entry holds no input (its SIZE still rates it): for a corpus whose inputs are kept
 * elsewhere, which must then never pick it for mutation. NAME is the hex SHA-1. Returns the new
 * entry, or NULL when out of memory, when NAME is NULL or longer than 40 characters, or when an
 * entry with the same NAME exists. The entry can be picked at once; entries it leaves without a
 * top rating are evicted at once (their input and features freed). Entry pointers stay valid
 * until sift_corpus_free. */
sift_entry *sift_corpus_add(sift_corpus *c, const uint8_t *data, size_t size,
                            const sift_feature_id *features, size_t nfeatures, uint64_t exec_ns,
                            const char *name, uint64_t now_execs);

/* Picks the next entry to mutate: weighted by the rarity of the features it owns, favoring the
 * minimal covering set, with energy for new entries that fades as they are chosen. Counts the
 * choice in times_chosen. Never an evicted entry; NULL when the corpus is empty. */
sift_entry *sift_corpus_pick(sift_corpus *c, sift_rng *rng);

/* Makes picks prefer entries of MIN_SIZE to MAX_SIZE bytes, as far as a few draws find one
 * (-fork_corpus_groups); 0 and SIZE_MAX, as at first, prefer none. */
void sift_corpus_set_band(sift_corpus *c, size_t min_size, size_t max_size);

/* Records that an input mutated from PARENT was added to the corpus: PARENT stops fading for
 * having found nothing (see docs/scheduling.md). */
void sift_corpus_found(sift_corpus *c, sift_entry *parent);

/* The campaign's mean execution time, with which the weights compare each entry's own (see
 * docs/scheduling.md); 0, as at first, leaves time out of them. Counts from the next update or
 * added entry on. */
void sift_corpus_set_mean_run(sift_corpus *c, uint64_t ns);

/* Recomputes favored entries, evictions and weights; O(features of all entries). Picks run it
 * when their number pays for it (docs/scheduling.md). Does nothing when no entry was added
 * since the last one. */
void sift_corpus_update(sift_corpus *c);

size_t sift_corpus_count(const sift_corpus *c);
/* Favored entries as of the last update, and entries that can be picked. */
size_t sift_corpus_favored(const sift_corpus *c);
size_t sift_corpus_active(const sift_corpus *c);
/* -focus_function: entry E runs the focus function, so that the scheduler picks it 1000 times
 * as often as it would otherwise, as libFuzzer weighs such inputs. */
void sift_corpus_mark_focus(sift_corpus *c, sift_entry *e);
/* Live entries that run the focus function. */
size_t sift_corpus_focus(const sift_corpus *c);
/* Input bytes held: evicted entries hold none. */
size_t sift_corpus_bytes(const sift_corpus *c);
/* Size of the largest entry ever added (entries are never removed, only evicted). */
size_t sift_corpus_max_size(const sift_corpus *c);
/* Entry I in order of addition; NULL when out of range. */
sift_entry *sift_corpus_at(sift_corpus *c, size_t i);
/* Position of the entry named NAME, in order of addition; -1 when there is none. */
long long sift_corpus_find(const sift_corpus *c, const char *name);
/* The features of entry E of C, sorted: E->nfeatures of them, in a buffer of C that the next
 * call or sift_corpus_add overwrites. NULL when E has none (evicted entries have none) or when
 * out of memory. */
const sift_feature_id *sift_corpus_entry_features(sift_corpus *c, const sift_entry *e);

/* Distinct features owned by the corpus. */
size_t sift_corpus_features(const sift_corpus *c);
/* Entries that have FEATURE. */
size_t sift_corpus_frequency(const sift_corpus *c, sift_feature_id feature);
/* The entry with FEATURE of smallest size * exec_ns (the earliest on a tie); NULL if none. */
sift_entry *sift_corpus_top(sift_corpus *c, sift_feature_id feature);

/* Whether an input of SIZE and EXEC_NS having FEATURES would take the top rating of at least one
 * of them: libFuzzer's rule for keeping a smaller input that finds nothing new. The entries it
 * would outrank go to TOPS, at most *NTOPS of them on entry; *NTOPS is their count on return. */
bool sift_corpus_outranks(sift_corpus *c, const sift_feature_id *features, size_t nfeatures,
                          size_t size, uint64_t exec_ns, sift_entry **tops, size_t *ntops);

#endif
