/* The corpus's inside, shared by its two halves: corpus.c keeps the entries, their names and
 * features and each feature's top-rated entry (eviction, REDUCE's rule); schedule.c weighs the
 * entries and picks among them. corpus.c calls schedule.c, never the other way. */
#ifndef SIFT_CORPUS_IMPL_H
#define SIFT_CORPUS_IMPL_H

#include "engine/base/featmap.h"
#include "engine/base/fidlist.h"
#include "engine/core/corpus.h"

#define NONE SIFT_FEATMAP_NONE

struct node {
    sift_entry e;
    /* One allocation: the input (when the entry holds one), then what the entry keeps of its
     * features, their dense indices (the ids are in feats) packed (fidlist.h; sift_corpus_packed).
     * An execution of a large target has thousands of features, so these lists are most of a
     * corpus's memory. */
    uint8_t *block;
    uint32_t idx;      /* position in the corpus */
    uint32_t owned;    /* features this entry is top-rated for */
    uint32_t alone;    /* features no other entry has */
    uint64_t found_at; /* times_chosen when it last led to a new entry */
    double base;       /* weight before the energy, which changes with every choice */
    double work;       /* edge hits of one execution, counted from its buckets: its cost */
};

struct feat {
    sift_feature_id id;
    uint32_t freq; /* entries having the feature */
    uint32_t top;  /* index of the top-rated entry */
    /* The top's cost, kept here because a smaller mutant's check reads it for every feature
     * of its run: through the node, that was two cache misses per feature. */
    unsigned __int128 top_cost;
};

struct sift_corpus {
    struct node **nodes;
    double *fen;       /* Fenwick tree over the entries' weights, 1-based */
    uint32_t *by_cost; /* entry indices by cost, then index: the order of pruning */
    size_t n, cap;
    struct feat *feats; /* by dense index, in order of discovery */
    /* Also by dense index, apart from feats: an update reads one of them per feature of every
     * entry, and denser arrays keep more of those reads in cache. */
    double *inv;     /* 1 / freq as of the last update */
    uint32_t *cover; /* during an update: favored entries having it */
    size_t nfeats, featcap;
    sift_featmap fmap;
    uint32_t *names; /* entry indices by name, open addressing; NONE when empty */
    size_t namecap;
    size_t nfavored, nactive, nfocus, bytes, max_size;
    size_t band_min, band_max; /* sizes that picks prefer (sift_corpus_set_band) */
    size_t entry_feats;        /* features of all entries, with repeats: what an update reads */
    uint64_t picks;            /* since the Fenwick tree was rebuilt */
    sift_feature_id *ids;      /* scratch: an added entry's features sorted, or an entry's listed */
    uint32_t *dense;           /* scratch: an added entry's dense indices */
    sift_feature_id *ids_tmp;  /* scratch for sorting each of the two */
    uint32_t *dense_tmp;
    size_t idscap;      /* of all four */
    double update_paid; /* reads the picks since the last update have paid for */
    size_t fen_n;       /* entries in the Fenwick tree: those added later wait for an update */
    double fen_sum;     /* the total weight in it, kept as weights change */
    double mean_work;   /* mean work of the live entries at the last update */
    double mean_run;    /* the campaign's mean execution time, 0 when not known */
    bool dirty;         /* entries were added since the last update */
};

/* The packed dense indices of ND's features (fidlist.h), after its input. */
static inline const uint8_t *sift_corpus_packed(const struct node *nd)
{
    return nd->block + (nd->e.data ? nd->e.size : 0);
}

/* An execution's cost without a clock, from its features (schedule.c says how). */
double sift_sched_work(const sift_feature_id *features, size_t n);
/* Schedules ND, the new last entry, before the next update. */
void sift_sched_append(sift_corpus *c, struct node *nd);
/* Sets the weight of entry I from its base and current energy. */
void sift_sched_reweigh(sift_corpus *c, size_t i);
/* An update's weighing, once the entries that own nothing are evicted: favored entries, bases,
 * weights and the tree of their sums, all from the current features. */
void sift_sched_rebuild(sift_corpus *c);
/* The index of an entry drawn by weight, its pick counted; the corpus has an active entry. */
size_t sift_sched_pick(sift_corpus *c, sift_rng *rng);

#endif
