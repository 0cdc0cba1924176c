/* The in-memory corpus: its entries, their names and features, each feature's top-rated entry
 * and the eviction of entries that are top for nothing; the weighing and picking is schedule.c's
 * (docs/scheduling.md). */
#include "engine/core/corpus_impl.h"
#include "engine/base/radix.h"
#include "sift/covmap.h"

#include <stdlib.h>
#include <string.h>

/* An update reads every feature of every entry. It waits until the picks since the last one
 * have paid for its reads, each UPDATE_READS_PER_PICK (a few tens of nanoseconds of bookkeeping
 * per pick at most) or, for a parent of much work, UPDATE_READS_PER_WORK a unit of its work
 * (sift_sched_work): on libxml2's and harfbuzz's harnesses a unit took about 10 ns of the
 * campaign's mean run (7,502 units in 79 us, 11,692 in 131 us), so a pick pays 0.2% of its run at
 * 2 ns a read (an update of a libxml2 corpus read 10 to 13 million features in about 19 ms).
 * Work and not the measured time, so that a seeded campaign updates at the same picks on every
 * run. By picks alone, a 60-s libxml2 campaign (10 million reads, 600,000 picks' worth, at
 * 2,500 executions a second) was never updated: no favored set, no weighing by speed,
 * rarities as they were when each entry came; bench/results/corpus-update-2026-12-08. */
#define UPDATE_READS_PER_PICK 16.0
#define UPDATE_READS_PER_WORK 0.01

sift_corpus *sift_corpus_new(void)
{
    sift_corpus *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    sift_featmap_init(&c->fmap);
    c->band_max = SIZE_MAX;
    return c;
}

void sift_corpus_set_band(sift_corpus *c, size_t min_size, size_t max_size)
{
    c->band_min = min_size;
    c->band_max = max_size;
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
    free(c->ids_tmp);
    free(c->dense_tmp);
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

/* An entry that lost its last top rating is never picked again: at once, not at the next
 * update, so that a campaign that keeps finding smaller inputs stops fuzzing the big ones.
 * Its input and features go too (a campaign evicts most of what it ever added); the features'
 * frequencies then count live entries only, as libFuzzer's do. */
static void evict(sift_corpus *c, struct node *nd)
{
    if (nd->e.evicted || nd->e.pinned) return;
    sift_fidlist_reader r = sift_fidlist_read(sift_corpus_packed(nd));
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
    c->nfocus -= nd->e.focus;
    if (nd->base > 0) c->nactive--;
    nd->base = 0;
    if (nd->idx < c->fen_n) sift_sched_reweigh(c, nd->idx);
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
    ids = realloc(c->ids_tmp, cap * sizeof(*ids));
    if (!ids) return -1;
    c->ids_tmp = ids;
    dense = realloc(c->dense_tmp, cap * sizeof(*dense));
    if (!dense) return -1;
    c->dense_tmp = dense;
    c->idscap = cap;
    return 0;
}

/* FEATURES sorted and without repeats into the scratch list; their number. */
static size_t distinct_features(sift_corpus *c, const sift_feature_id *features, size_t n)
{
    sift_feature_id *feats = c->ids;
    size_t k = 0;
    if (!n) return 0;
    memcpy(feats, features, n * sizeof(*feats));
    sift_radix_sort64(feats, c->ids_tmp, n);
    for (size_t j = 0; j < n; j++)
        if (!k || feats[j] != feats[k - 1]) feats[k++] = feats[j];
    return k;
}

/* The node, then the block of its input and packed feature indices, which goes when the entry
 * is evicted: allocated for the longest packing before the corpus changes, so that running out
 * of memory leaves it as it was. The input is copied first: DATA may belong to an entry that
 * this one evicts. */
static struct node *node_new(sift_corpus *c, const uint8_t *data, size_t size, size_t k,
                             uint64_t exec_ns, const char *name, uint64_t now_execs)
{
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
        .work = sift_sched_work(c->ids, k),
    };
    memcpy(nd->e.name, name, strlen(name) + 1); /* it fits: the caller checked */
    return nd;
}

/* Counts ND, in place as the last entry, among the holders of its K features (the scratch
 * list), making it top-rated where it costs less than the top; an entry that so loses its last
 * top rating is evicted. Each feature's dense index goes to the scratch DENSE. */
static void rate_features(sift_corpus *c, struct node *nd, size_t k)
{
    unsigned __int128 mine = cost(&nd->e);
    for (size_t j = 0; j < k; j++) {
        sift_feature_id id = c->ids[j];
        uint32_t *slot = sift_featmap_slot(&c->fmap, id);
        if (*slot == NONE) {
            *slot = (uint32_t)c->nfeats;
            c->feats[c->nfeats++] = (struct feat){.id = id, .top = NONE};
        }
        struct feat *f = &c->feats[*slot];
        c->dense[j] = *slot;
        /* The only holder of a feature is its top-rated entry. */
        if (f->freq == 1) c->nodes[f->top]->alone--;
        nd->alone += f->freq == 0;
        f->freq++;
        if (f->top != NONE && mine >= f->top_cost) continue;
        uint32_t was = f->top;
        unsigned d = sift_feature_domain(id);
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

/* ND's place in the order of pruning: after every entry of the same cost or less, so that ties
 * rank by index. */
static void insert_by_cost(sift_corpus *c, const struct node *nd)
{
    unsigned __int128 mine = cost(&nd->e);
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
    size_t k = distinct_features(c, features, nfeatures);
    struct node *nd = node_new(c, data, size, k, exec_ns, name, now_execs);
    if (!nd) return NULL;
    /* In place before its features are rated: an entry it evicts may share one whose top it
     * already is. */
    c->nodes[c->n] = nd;
    rate_features(c, nd, k);
    size_t at = data ? size : 0, len = sift_fidlist_pack(c->dense, k, c->dense_tmp, nd->block + at);
    /* A fresh block of the final size, not the first one shrunk in place: shrunk, each block
     * sat where a request for the longest packing had fitted, and the hole an evicted entry
     * left was too small for the next such request; a harfbuzz campaign's heap was a third
     * free. A failure keeps the first block, longer. */
    uint8_t *cut = malloc(at + len + 1);
    if (cut) {
        memcpy(cut, nd->block, at + len);
        free(nd->block);
        nd->block = cut;
        nd->e.data = data ? cut : NULL;
    }
    insert_by_cost(c, nd);
    c->n++;
    c->names[name_slot(c, name)] = nd->idx;
    c->bytes += size;
    c->entry_feats += k;
    if (size > c->max_size) c->max_size = size;
    c->dirty = true;
    sift_sched_append(c, nd);
    return &nd->e;
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
    sift_sched_rebuild(c);
}

sift_entry *sift_corpus_pick(sift_corpus *c, sift_rng *rng)
{
    if (!c || !rng) return NULL;
    /* An update reads every feature of every entry: when inputs pour in, one per pick would
     * turn fuzzing into bookkeeping. Amortised over the picks, it costs a small fixed share;
     * new entries are picked meanwhile with the weight they were added with. */
    double reads = (double)(c->n + c->entry_feats);
    if (c->dirty && (c->update_paid >= reads || !c->nactive)) sift_corpus_update(c);
    if (!c->nactive) return NULL;
    struct node *nd = c->nodes[sift_sched_pick(c, rng)];
    double paid = nd->work * UPDATE_READS_PER_WORK;
    c->update_paid += paid > UPDATE_READS_PER_PICK ? paid : UPDATE_READS_PER_PICK;
    return &nd->e;
}

void sift_corpus_found(sift_corpus *c, sift_entry *parent)
{
    if (!c || !parent) return;
    struct node *nd = (struct node *)parent; /* the entry is the node's first member */
    nd->found_at = parent->times_chosen;
    /* An entry added since the last update is not in the tree yet; the update weighs it. */
    if (nd->idx < c->fen_n) sift_sched_reweigh(c, nd->idx);
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

void sift_corpus_mark_focus(sift_corpus *c, sift_entry *e)
{
    if (e->focus || e->evicted) return;
    e->focus = true;
    c->nfocus++;
    c->dirty = true;
}

size_t sift_corpus_focus(const sift_corpus *c)
{
    return c ? c->nfocus : 0;
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
    sift_fidlist_reader r = sift_fidlist_read(sift_corpus_packed(nd));
    for (size_t j = 0; j < e->nfeatures; j++)
        c->ids[j] = c->feats[sift_fidlist_next(&r)].id;
    sift_radix_sort64(c->ids, c->ids_tmp, e->nfeatures);
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
