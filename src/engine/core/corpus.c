/* The in-memory corpus and its scheduler. The weighting is explained in docs/scheduling.md. */
#include "engine/core/corpus.h"
#include "engine/base/featmap.h"
#include "engine/base/fidlist.h"
#include "sift/covmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIFT_FEATMAP_NONE

#define FAVORED_BOOST 10.0
#define NEW_BOOST     8.0    /* energy of an entry never chosen */
#define NEW_FADE      4.0    /* mutants made that halve the extra energy of a new entry */
#define STALE_PICKS   2048.0 /* mutants made without a find that halve an entry's energy */
#define STALE_FLOOR   0.125  /* keeps the rarity of an old entry's features counting */
/* Each choice adds a delta to the Fenwick sums, and the rounding errors add up: rebuild them
 * from the exact weights this often. */
#define REBUILD_PICKS 65536
/* An update reads every feature of every entry. It waits until the picks since the last one
 * number its reads over this: a few hundred nanoseconds of bookkeeping per pick at most. */
#define UPDATE_READS_PER_PICK 16.0
/* Speed: an entry's weight is scaled by the corpus's mean work over its own (work_of), within
 * these bounds (AFL's perf_score spans 10 to 300, the same 30 times). */
#define SPEED_MIN 0.1
#define SPEED_MAX 3.0
/* An entry whose execution took more than this many times the campaign's mean execution is
 * picked less: see time_factor. */
#define TIME_SLACK 2.0

struct node {
    sift_entry e;
    /* One allocation: the input (when the entry holds one), then what the entry keeps of its
     * features, their dense indices (the ids are in feats) packed (fidlist.h; packed_of). An
     * execution of a large target has thousands of features, so these lists are most of a
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
    size_t nfavored, nactive, bytes, max_size;
    size_t entry_feats;   /* features of all entries, with repeats: what an update reads */
    uint64_t picks;       /* since the Fenwick tree was rebuilt */
    sift_feature_id *ids; /* scratch: an added entry's features sorted, or an entry's listed */
    uint32_t *dense;      /* scratch: an added entry's dense indices */
    size_t idscap;        /* of both */
    uint64_t picks_since_update;
    size_t fen_n;     /* entries in the Fenwick tree: those added later wait for an update */
    double fen_sum;   /* the total weight in it, kept as weights change */
    double mean_work; /* mean work of the live entries at the last update */
    double mean_run;  /* the campaign's mean execution time, 0 when not known */
    bool dirty;       /* entries were added since the last update */
};

sift_corpus *sift_corpus_new(void)
{
    sift_corpus *c = calloc(1, sizeof(*c));
    if (c) sift_featmap_init(&c->fmap);
    return c;
}

void sift_corpus_free(sift_corpus *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->nodes[i]->block); /* its input and feature indices */
        free(c->nodes[i]);
    }
    free(c->nodes);
    free(c->fen);
    free(c->by_cost);
    free(c->feats);
    free(c->inv);
    free(c->cover);
    free(c->ids);
    free(c->dense);
    free(c->names);
    sift_featmap_free(&c->fmap);
    free(c);
}

/* Zero size or time would make every such entry tie, so each factor counts as at least 1. */
static unsigned __int128 cost(const sift_entry *e)
{
    return (unsigned __int128)(e->size ? e->size : 1) * (e->exec_ns ? e->exec_ns : 1);
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h ^ h >> 32;
}

/* The slot holding NAME, or the empty slot where it belongs. */
static size_t name_slot(const sift_corpus *c, const char *name)
{
    size_t mask = c->namecap - 1;
    size_t s = name_hash(name) & mask;
    while (c->names[s] != NONE && strcmp(c->nodes[c->names[s]]->e.name, name) != 0)
        s = (s + 1) & mask;
    return s;
}

static int reserve_names(sift_corpus *c, size_t count)
{
    if (c->namecap && count <= c->namecap / 2) return 0;
    size_t cap = c->namecap ? c->namecap * 2 : 64;
    while (count > cap / 2)
        cap *= 2;
    uint32_t *names = malloc(cap * sizeof(*names));
    if (!names) return -1;
    for (size_t i = 0; i < cap; i++)
        names[i] = NONE;
    free(c->names);
    c->names = names;
    c->namecap = cap;
    for (size_t i = 0; i < c->n; i++)
        c->names[name_slot(c, c->nodes[i]->e.name)] = (uint32_t)i;
    return 0;
}

/* Entry indices are 32-bit and NONE is reserved, hence the limit. A partial failure leaves the
 * arrays that did grow larger than cap, which is harmless. */
static int reserve_entries(sift_corpus *c, size_t count)
{
    if (count <= c->cap) return 0;
    if (count >= NONE) return -1;
    size_t cap = c->cap ? c->cap * 2 : 64;
    if (cap >= NONE) cap = NONE - 1;
    struct node **nodes = realloc(c->nodes, cap * sizeof(struct node *));
    if (!nodes) return -1;
    c->nodes = nodes;
    double *fen = realloc(c->fen, (cap + 1) * sizeof(*fen));
    if (!fen) return -1;
    c->fen = fen;
    uint32_t *by_cost = realloc(c->by_cost, cap * sizeof(*by_cost));
    if (!by_cost) return -1;
    c->by_cost = by_cost;
    c->cap = cap;
    return 0;
}

static int reserve_feats(sift_corpus *c, size_t extra)
{
    if (extra >= NONE - c->nfeats) return -1;
    size_t need = c->nfeats + extra;
    if (need <= c->featcap) return 0;
    size_t cap = c->featcap ? c->featcap : 256;
    while (cap < need)
        cap *= 2;
    struct feat *feats = realloc(c->feats, cap * sizeof(*feats));
    if (!feats) return -1;
    c->feats = feats;
    double *inv = realloc(c->inv, cap * sizeof(*inv));
    if (!inv) return -1;
    c->inv = inv;
    uint32_t *cover = realloc(c->cover, cap * sizeof(*cover));
    if (!cover) return -1;
    c->cover = cover;
    c->featcap = cap;
    return 0;
}

static double fen_prefix(const sift_corpus *c, size_t k)
{
    double s = 0;
    for (; k; k -= k & -k)
        s += c->fen[k];
    return s;
}

static double energy(const sift_corpus *c, const struct node *nd);

/* An execution's cost, measured without a clock: the edges it ran, each counted as the fewest
 * hits its bucket holds (1, 2, 3, 4, 8, 16, 32, 128). It follows the time a target spends in
 * instrumented code, and unlike a time it is the same on every run, so that a seeded campaign
 * schedules alike and timing noise never reorders the corpus. */
static double work_of(const sift_feature_id *features, size_t n)
{
    static const double fewest[8] = {1, 2, 3, 4, 8, 16, 32, 128};
    double work = 1;
    for (size_t j = 0; j < n; j++)
        if (sift_feature_domain(features[j]) == SIFT_DOMAIN_EDGES) work += fewest[features[j] & 7];
    return work;
}

/* Work cannot see past a bucket of 128 hits: a loop run 200 times and one run a million times
 * weigh alike. On bench/execs's zlib round trip the median entry runs in a microsecond, and an
 * input that inflates to tens or hundreds of kilobytes in hundreds of microseconds or more; the
 * defaults, whose value features bucket lengths and match offsets, kept 52 to 78 entries of 0.1
 * to 1 ms (timed in a plain build) in five 3-minute corpora, -features=edges 30 to 41. An entry
 * that runs K times TIME_SLACK times the campaign's mean execution (K > 1) is picked 1 / K^2 as
 * often, and each of its picks counts K times against its energy: it gets 1/K of the campaign
 * time of one at that limit. Entry times come in steps of 100 us (fuzzer.c), so a campaign whose
 * entries all run faster schedules without a clock. */
static double time_over(const sift_corpus *c, const struct node *nd)
{
    double over = c->mean_run > 0 ? (double)nd->e.exec_ns / (TIME_SLACK * c->mean_run) : 0;
    return over > 1 ? over : 1;
}

/* Picks falling only as the time (each slow entry getting the time of one at the limit) fed on
 * itself: the mean counts the slow entries' mutants, so the limit rose with them, and a corpus of
 * N fast entries and M slow ones ran N / (N - TIME_SLACK M) times its fast entries' cost, without
 * bound as M neared N / 2 (a 3-minute zlib corpus held 215 entries of over 100 us among 973, timed
 * in a plain build). Worse, slow entries, seldom picked, kept the energy of new ones while the fast
 * went stale. */
static double time_factor(const sift_corpus *c, const struct node *nd)
{
    double over = time_over(c, nd);
    return 1 / (over * over);
}

static double speed(const sift_corpus *c, const struct node *nd)
{
    if (c->mean_work <= 0) return 1.0;
    double s = c->mean_work / nd->work;
    s = s < SPEED_MIN ? SPEED_MIN : s > SPEED_MAX ? SPEED_MAX : s;
    return s * time_factor(c, nd);
}

/* The weight before energy of ND, whose features' rarities (1 / frequency each) add up to
 * RARITY: see docs/scheduling.md. A corpus without any feature weighs every entry alike. */
static double base_of(const sift_corpus *c, const struct node *nd, double rarity, bool favored)
{
    double share = c->nfeats ? rarity : 1;
    if (nd->e.nfeatures) share /= sqrt((double)nd->e.nfeatures);
    return share * (favored ? FAVORED_BOOST : 1.0) * speed(c, nd);
}

static const uint8_t *packed_of(const struct node *nd)
{
    return nd->block + (nd->e.data ? nd->e.size : 0);
}

/* Sets the weight of entry I from its base and current energy. */
static void reweigh(sift_corpus *c, size_t i);

/* An entry that lost its last top rating is never picked again: at once, not at the next
 * update, so that a campaign that keeps finding smaller inputs stops fuzzing the big ones.
 * Its input and features go too (a campaign evicts most of what it ever added); the features'
 * frequencies then count live entries only, as libFuzzer's do. */
static void evict(sift_corpus *c, struct node *nd)
{
    if (nd->e.evicted) return;
    sift_fidlist_reader r = sift_fidlist_read(packed_of(nd));
    for (size_t j = 0; j < nd->e.nfeatures; j++) {
        struct feat *f = &c->feats[sift_fidlist_next(&r)];
        /* The other holder left is the top-rated one: an evicted entry is top for nothing. */
        if (--f->freq == 1) c->nodes[f->top]->alone++;
    }
    c->entry_feats -= nd->e.nfeatures;
    c->bytes -= nd->e.size;
    free(nd->block);
    nd->e.nfeatures = 0;
    nd->block = NULL;
    nd->e.data = NULL;
    nd->e.evicted = true;
    c->nfavored -= nd->e.favored;
    nd->e.favored = false;
    if (nd->base > 0) c->nactive--;
    nd->base = 0;
    if (nd->idx < c->fen_n) reweigh(c, nd->idx);
}

/* Schedules the new last entry before the next update: weighted as an update would weigh it,
 * by the current frequencies of its features, favored when one of them is its alone. */
static void fen_append(sift_corpus *c, struct node *nd)
{
    if (c->fen_n + 1 != c->n) return; /* the tree waits for an update anyway */
    double rarity = 0;
    sift_fidlist_reader r = sift_fidlist_read(packed_of(nd));
    for (size_t j = 0; j < nd->e.nfeatures; j++)
        rarity += 1.0 / c->feats[sift_fidlist_next(&r)].freq;
    nd->base = base_of(c, nd, rarity, nd->alone > 0);
    nd->e.weight = nd->base * energy(c, nd);
    size_t i = ++c->fen_n;
    c->fen[i] = nd->e.weight + fen_prefix(c, i - 1) - fen_prefix(c, i - (i & -i));
    c->fen_sum += nd->e.weight;
    c->nactive += nd->base > 0;
}

static int by_id(const void *a, const void *b)
{
    sift_feature_id x = *(const sift_feature_id *)a, y = *(const sift_feature_id *)b;
    return (x > y) - (x < y);
}

/* Scratch for N features. A partial failure leaves one array larger than idscap: harmless. */
static int reserve_ids(sift_corpus *c, size_t n)
{
    if (n <= c->idscap) return 0;
    size_t cap = c->idscap ? c->idscap : 1024;
    while (cap < n)
        cap *= 2;
    sift_feature_id *ids = realloc(c->ids, cap * sizeof(*ids));
    if (!ids) return -1;
    c->ids = ids;
    uint32_t *dense = realloc(c->dense, cap * sizeof(*dense));
    if (!dense) return -1;
    c->dense = dense;
    c->idscap = cap;
    return 0;
}

sift_entry *sift_corpus_add(sift_corpus *c, const uint8_t *data, size_t size,
                            const sift_feature_id *features, size_t nfeatures, uint64_t exec_ns,
                            const char *name, uint64_t now_execs)
{
    if (!c || !name || strlen(name) >= sizeof(((sift_entry *)0)->name) || (nfeatures && !features))
        return NULL;
    if (reserve_names(c, c->n + 1) || c->names[name_slot(c, name)] != NONE) return NULL;
    if (size > SIZE_MAX / 2 || nfeatures > (SIZE_MAX / 2 - size) / sift_fidlist_bound(1))
        return NULL;
    if (reserve_entries(c, c->n + 1) || reserve_feats(c, nfeatures) ||
        sift_featmap_reserve(&c->fmap, nfeatures) || reserve_ids(c, nfeatures))
        return NULL;
    sift_feature_id *feats = c->ids;
    size_t k = 0;
    if (nfeatures) {
        memcpy(feats, features, nfeatures * sizeof(*feats));
        qsort(feats, nfeatures, sizeof(*feats), by_id);
        for (size_t j = 0; j < nfeatures; j++)
            if (!k || feats[j] != feats[k - 1]) feats[k++] = feats[j];
    }
    /* The node, then the block of its input and packed feature indices, which goes when the
     * entry is evicted: allocated for the longest packing before the corpus changes, so that
     * running out of memory leaves it as it was, and cut to size once packed. The input is
     * copied first: DATA may belong to an entry that this one evicts. */
    size_t at = data ? size : 0;
    struct node *nd = malloc(sizeof(*nd));
    uint8_t *block = malloc(at + sift_fidlist_bound(k) + 1);
    if (!nd || !block) {
        free(nd);
        free(block);
        return NULL;
    }
    if (at) memcpy(block, data, at);
    *nd = (struct node){
        .e = {.data = data ? block : NULL,
              .size = size,
              .nfeatures = k,
              .exec_ns = exec_ns,
              .added_at = now_execs},
        .block = block,
        .idx = (uint32_t)c->n,
        .work = work_of(feats, k),
    };
    memcpy(nd->e.name, name, strlen(name) + 1); /* it fits: checked above */

    unsigned __int128 mine = cost(&nd->e);
    /* In place before its features are rated: an entry it evicts may share one whose top it
     * already is. */
    c->nodes[c->n] = nd;
    for (size_t j = 0; j < k; j++) {
        uint32_t *slot = sift_featmap_slot(&c->fmap, feats[j]);
        if (*slot == NONE) {
            *slot = (uint32_t)c->nfeats;
            c->feats[c->nfeats++] = (struct feat){.id = feats[j], .top = NONE};
        }
        struct feat *f = &c->feats[*slot];
        c->dense[j] = *slot;
        /* The only holder of a feature is its top-rated entry. */
        if (f->freq == 1) c->nodes[f->top]->alone--;
        nd->alone += f->freq == 0;
        f->freq++;
        if (f->top == NONE || mine < f->top_cost) {
            uint32_t was = f->top;
            unsigned d = sift_feature_domain(feats[j]);
            /* The new top first: the eviction of the old one counts the feature's holders. */
            f->top = nd->idx;
            f->top_cost = mine;
            nd->owned++;
            if (d < SIFT_DOMAIN_COUNT) nd->e.tops[d]++;
            if (was == NONE) continue;
            if (d < SIFT_DOMAIN_COUNT) c->nodes[was]->e.tops[d]--;
            if (--c->nodes[was]->owned == 0) evict(c, c->nodes[was]);
        }
    }
    size_t len = sift_fidlist_pack(c->dense, k, block + at);
    uint8_t *cut = realloc(block, at + len + 1);
    if (cut) { /* a failure keeps the block as it was, longer */
        nd->block = cut;
        nd->e.data = data ? cut : NULL;
    }
    /* After every entry of the same cost or less: ties rank by index. */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cost(&c->nodes[c->by_cost[mid]]->e) <= mine)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(c->by_cost + lo + 1, c->by_cost + lo, (c->n - lo) * sizeof(*c->by_cost));
    c->by_cost[lo] = nd->idx;
    c->n++;
    c->names[name_slot(c, name)] = nd->idx;
    c->bytes += size;
    c->entry_feats += k;
    if (size > c->max_size) c->max_size = size;
    c->dirty = true;
    fen_append(c, nd);
    return &nd->e;
}

static double energy(const sift_corpus *c, const struct node *nd)
{
    double over = time_over(c, nd);
    double chosen = (double)nd->e.times_chosen * over;
    double fresh = 1.0 + (NEW_BOOST - 1.0) / (1.0 + chosen / NEW_FADE);
    double idle = (double)(nd->e.times_chosen - nd->found_at) * over;
    double stale = STALE_PICKS / (STALE_PICKS + idle);
    return fresh * (stale > STALE_FLOOR ? stale : STALE_FLOOR);
}

static void fen_rebuild(sift_corpus *c)
{
    double *t = c->fen;
    c->fen_n = c->n;
    for (size_t i = 1; i <= c->fen_n; i++)
        t[i] = c->nodes[i - 1]->e.weight;
    for (size_t i = 1; i <= c->fen_n; i++) {
        size_t j = i + (i & -i);
        if (j <= c->fen_n) t[j] += t[i];
    }
    c->fen_sum = fen_prefix(c, c->fen_n);
    c->picks = 0;
}

/* The entry whose span of the cumulative weights holds R. */
static size_t fen_find(const sift_corpus *c, double r)
{
    size_t pos = 0, step = 1;
    while (step * 2 <= c->fen_n)
        step *= 2;
    for (; step; step /= 2) {
        if (pos + step <= c->fen_n && c->fen[pos + step] <= r) {
            pos += step;
            r -= c->fen[pos];
        }
    }
    return pos;
}

static void reweigh(sift_corpus *c, size_t i)
{
    sift_entry *e = &c->nodes[i]->e;
    double w = c->nodes[i]->base * energy(c, c->nodes[i]);
    double delta = w - e->weight;
    e->weight = w;
    c->fen_sum += delta;
    for (size_t j = i + 1; j <= c->fen_n; j += j & -j)
        c->fen[j] += delta;
}

/* The minimal covering set. Greedy like AFL's cull_queue: in order of discovery, each feature
 * not yet covered makes its top-rated entry favored, covering all of that entry's features.
 * Greedy picks can be made redundant by later ones, so a second pass drops, costliest first,
 * every favored entry whose features all have another favored holder. COVER starts at zero. */
static void choose_favored(sift_corpus *c)
{
    /* An entry is picked at most once (its features are all covered then), so counting here
     * leaves in COVER the number of favored entries having each feature. */
    for (size_t f = 0; f < c->nfeats; f++) {
        if (c->cover[f]) continue;
        struct node *nd = c->nodes[c->feats[f].top];
        nd->e.favored = true;
        sift_fidlist_reader r = sift_fidlist_read(packed_of(nd));
        for (size_t j = 0; j < nd->e.nfeatures; j++)
            c->cover[sift_fidlist_next(&r)]++;
    }
    for (size_t pos = c->n; pos--;) {
        struct node *nd = c->nodes[c->by_cost[pos]];
        /* The only holder of a feature is favored and covers it alone: it stays. */
        if (!nd->e.favored || nd->alone) continue;
        size_t j = 0;
        sift_fidlist_reader r = sift_fidlist_read(packed_of(nd));
        while (j < nd->e.nfeatures && c->cover[sift_fidlist_next(&r)] > 1)
            j++;
        if (j < nd->e.nfeatures) continue;
        nd->e.favored = false;
        r = sift_fidlist_read(packed_of(nd));
        for (j = 0; j < nd->e.nfeatures; j++)
            c->cover[sift_fidlist_next(&r)]--;
    }
}

void sift_corpus_set_mean_run(sift_corpus *c, uint64_t ns)
{
    c->mean_run = (double)ns;
}

void sift_corpus_update(sift_corpus *c)
{
    if (!c || !c->dirty) return;
    /* Nobody loses a top rating back to an older entry, so eviction is for good. A corpus
     * without any feature evicts nothing, so that featureless seeds still get fuzzed. */
    for (size_t i = 0; i < c->n; i++) {
        struct node *nd = c->nodes[i];
        nd->e.favored = false;
        if (c->nfeats && !nd->owned) evict(c, nd);
    }
    for (size_t f = 0; f < c->nfeats; f++) {
        c->cover[f] = 0;
        c->inv[f] = 1.0 / c->feats[f].freq;
    }
    choose_favored(c);
    double total = 0;
    size_t live = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->nodes[i]->e.evicted) continue;
        total += c->nodes[i]->work;
        live++;
    }
    c->mean_work = live ? total / (double)live : 0;
    c->nfavored = c->nactive = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct node *nd = c->nodes[i];
        nd->base = 0;
        if (!nd->e.evicted) {
            /* Four sums, so that the additions do not wait on one another: the loop runs over
             * every feature of every live entry. */
            double part[4] = {0, 0, 0, 0};
            size_t j = 0, n = nd->e.nfeatures;
            sift_fidlist_reader r = sift_fidlist_read(packed_of(nd));
            for (; j + 4 <= n; j += 4)
                for (size_t k = 0; k < 4; k++)
                    part[k] += c->inv[sift_fidlist_next(&r)];
            for (; j < n; j++)
                part[0] += c->inv[sift_fidlist_next(&r)];
            double rarity = (part[0] + part[1]) + (part[2] + part[3]);
            nd->base = base_of(c, nd, rarity, nd->e.favored);
            c->nactive++;
            c->nfavored += nd->e.favored;
        }
        nd->e.weight = nd->base * energy(c, nd);
    }
    fen_rebuild(c);
    c->dirty = false;
    c->picks_since_update = 0;
}

sift_entry *sift_corpus_pick(sift_corpus *c, sift_rng *rng)
{
    if (!c || !rng) return NULL;
    /* An update reads every feature of every entry: when inputs pour in, one per pick would
     * turn fuzzing into bookkeeping. Amortised over the picks, it costs a small fixed share;
     * new entries are picked meanwhile with the weight they were added with. */
    double reads = (double)(c->n + c->entry_feats);
    if (c->dirty && ((double)c->picks_since_update * UPDATE_READS_PER_PICK >= reads || !c->nactive))
        sift_corpus_update(c);
    if (!c->nactive) return NULL;
    c->picks_since_update++;
    if (c->picks >= REBUILD_PICKS) fen_rebuild(c);
    double r = (double)(sift_rng_next(rng) >> 11) * 0x1p-53 * c->fen_sum;
    size_t i = fen_find(c, r);
    /* Rounding can land past the end or on a weightless entry at a span's edge: take the
     * nearest weighted entry, which exists because every active entry weighs more than 0. */
    if (i >= c->fen_n) i = c->fen_n - 1;
    for (size_t d = 0; !(c->nodes[i]->e.weight > 0); d++) {
        if (i >= d && c->nodes[i - d]->e.weight > 0) {
            i -= d;
            break;
        }
        if (i + d < c->fen_n && c->nodes[i + d]->e.weight > 0) {
            i += d;
            break;
        }
    }
    c->nodes[i]->e.times_chosen++;
    reweigh(c, i);
    c->picks++;
    return &c->nodes[i]->e;
}

void sift_corpus_found(sift_corpus *c, sift_entry *parent)
{
    if (!c || !parent) return;
    struct node *nd = (struct node *)parent; /* the entry is the node's first member */
    nd->found_at = parent->times_chosen;
    /* An entry added since the last update is not in the tree yet; the update weighs it. */
    if (nd->idx < c->fen_n) reweigh(c, nd->idx);
}

size_t sift_corpus_count(const sift_corpus *c)
{
    return c ? c->n : 0;
}

size_t sift_corpus_favored(const sift_corpus *c)
{
    return c ? c->nfavored : 0;
}

size_t sift_corpus_active(const sift_corpus *c)
{
    return c ? c->nactive : 0;
}

size_t sift_corpus_bytes(const sift_corpus *c)
{
    return c ? c->bytes : 0;
}

size_t sift_corpus_max_size(const sift_corpus *c)
{
    return c ? c->max_size : 0;
}

sift_entry *sift_corpus_at(sift_corpus *c, size_t i)
{
    return c && i < c->n ? &c->nodes[i]->e : NULL;
}

long long sift_corpus_find(const sift_corpus *c, const char *name)
{
    if (!c || !name || !c->namecap) return -1;
    uint32_t i = c->names[name_slot(c, name)];
    return i == NONE ? -1 : (long long)i;
}

const sift_feature_id *sift_corpus_entry_features(sift_corpus *c, const sift_entry *e)
{
    const struct node *nd = (const struct node *)e; /* e is the node's first member */
    if (!c || !e->nfeatures || reserve_ids(c, e->nfeatures)) return NULL;
    sift_fidlist_reader r = sift_fidlist_read(packed_of(nd));
    for (size_t j = 0; j < e->nfeatures; j++)
        c->ids[j] = c->feats[sift_fidlist_next(&r)].id;
    qsort(c->ids, e->nfeatures, sizeof(*c->ids), by_id);
    return c->ids;
}

size_t sift_corpus_features(const sift_corpus *c)
{
    return c ? c->nfeats : 0;
}

size_t sift_corpus_frequency(const sift_corpus *c, sift_feature_id feature)
{
    uint32_t f = c ? sift_featmap_get(&c->fmap, feature) : NONE;
    return f == NONE ? 0 : c->feats[f].freq;
}

sift_entry *sift_corpus_top(sift_corpus *c, sift_feature_id feature)
{
    uint32_t f = c ? sift_featmap_get(&c->fmap, feature) : NONE;
    return f == NONE ? NULL : &c->nodes[c->feats[f].top]->e;
}

bool sift_corpus_outranks(sift_corpus *c, const sift_feature_id *features, size_t nfeatures,
                          size_t size, uint64_t exec_ns, sift_entry **tops, size_t *ntops)
{
    size_t max_tops = *ntops;
    *ntops = 0;
    if (!c) return false;
    sift_entry probe = {.size = size, .exec_ns = exec_ns};
    unsigned __int128 mine = cost(&probe);
    bool outranks = false;
    for (size_t j = 0; j < nfeatures; j++) {
        uint32_t f = sift_featmap_get(&c->fmap, features[j]);
        if (f == NONE) return true; /* a feature nobody has: not a question of size */
        if (mine >= c->feats[f].top_cost) continue;
        sift_entry *top = &c->nodes[c->feats[f].top]->e;
        outranks = true;
        size_t k = 0;
        while (k < *ntops && tops[k] != top)
            k++;
        if (k == *ntops && k < max_tops) tops[(*ntops)++] = top;
    }
    return outranks;
}
