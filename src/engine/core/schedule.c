/* The corpus's scheduler: each entry's weight (the rarity of its features, favored or not, its
 * speed and its energy; docs/scheduling.md) and the draw of an entry by weight, over a Fenwick
 * tree of the weights. */
#include "engine/core/corpus_impl.h"

#include <math.h>

#define FAVORED_BOOST 10.0
/* -focus_function: libFuzzer weighs an input that runs the focus function 1000 times another. */
#define FOCUS_BOOST 1000.0
#define NEW_BOOST   8.0    /* energy of an entry never chosen */
#define NEW_FADE    4.0    /* mutants made that halve the extra energy of a new entry */
#define STALE_PICKS 2048.0 /* mutants made without a find that halve an entry's energy */
#define STALE_FLOOR 0.125  /* keeps the rarity of an old entry's features counting */
/* Each choice adds a delta to the Fenwick sums, and the rounding errors add up: rebuild them
 * from the exact weights this often. */
#define REBUILD_PICKS 65536
/* Speed: an entry's weight is scaled by the corpus's mean work over its own (sift_sched_work),
 * within these bounds (AFL's perf_score spans 10 to 300, the same 30 times). */
#define SPEED_MIN 0.1
#define SPEED_MAX 3.0
/* An entry whose execution took more than this many times the campaign's mean execution is
 * picked less: see time_factor. */
#define TIME_SLACK 2.0

static double fen_prefix(const sift_corpus *c, size_t k)
{
    double s = 0;
    for (; k; k -= k & -k)
        s += c->fen[k];
    return s;
}

/* An execution's cost, measured without a clock: the edges it ran, each counted as the fewest
 * hits its bucket holds (1, 2, 3, 4, 8, 16, 32, 128). It follows the time a target spends in
 * instrumented code, and unlike a time it is the same on every run, so that a seeded campaign
 * schedules alike and timing noise never reorders the corpus. */
double sift_sched_work(const sift_feature_id *features, size_t n)
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

static double energy(const sift_corpus *c, const struct node *nd)
{
    double over = time_over(c, nd);
    double chosen = (double)nd->e.times_chosen * over;
    double fresh = 1.0 + (NEW_BOOST - 1.0) / (1.0 + chosen / NEW_FADE);
    double idle = (double)(nd->e.times_chosen - nd->found_at) * over;
    double stale = STALE_PICKS / (STALE_PICKS + idle);
    return fresh * (stale > STALE_FLOOR ? stale : STALE_FLOOR);
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
    return share * (favored ? FAVORED_BOOST : 1.0) * (nd->e.focus ? FOCUS_BOOST : 1.0) *
           speed(c, nd);
}

/* Schedules the new last entry before the next update: weighted as an update would weigh it,
 * by the current frequencies of its features, favored when one of them is its alone. */
void sift_sched_append(sift_corpus *c, struct node *nd)
{
    if (c->fen_n + 1 != c->n) return; /* the tree waits for an update anyway */
    double rarity = 0;
    sift_fidlist_reader r = sift_fidlist_read(sift_corpus_packed(nd));
    for (size_t j = 0; j < nd->e.nfeatures; j++)
        rarity += 1.0 / c->feats[sift_fidlist_next(&r)].freq;
    nd->base = base_of(c, nd, rarity, nd->alone > 0);
    nd->e.weight = nd->base * energy(c, nd);
    size_t i = ++c->fen_n;
    c->fen[i] = nd->e.weight + fen_prefix(c, i - 1) - fen_prefix(c, i - (i & -i));
    c->fen_sum += nd->e.weight;
    c->nactive += nd->base > 0;
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

void sift_sched_reweigh(sift_corpus *c, size_t i)
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
        sift_fidlist_reader r = sift_fidlist_read(sift_corpus_packed(nd));
        for (size_t j = 0; j < nd->e.nfeatures; j++)
            c->cover[sift_fidlist_next(&r)]++;
    }
    for (size_t pos = c->n; pos--;) {
        struct node *nd = c->nodes[c->by_cost[pos]];
        /* The only holder of a feature is favored and covers it alone: it stays. */
        if (!nd->e.favored || nd->alone) continue;
        size_t j = 0;
        sift_fidlist_reader r = sift_fidlist_read(sift_corpus_packed(nd));
        while (j < nd->e.nfeatures && c->cover[sift_fidlist_next(&r)] > 1)
            j++;
        if (j < nd->e.nfeatures) continue;
        nd->e.favored = false;
        r = sift_fidlist_read(sift_corpus_packed(nd));
        for (j = 0; j < nd->e.nfeatures; j++)
            c->cover[sift_fidlist_next(&r)]--;
    }
}

void sift_sched_rebuild(sift_corpus *c)
{
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
            sift_fidlist_reader r = sift_fidlist_read(sift_corpus_packed(nd));
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
    c->update_paid = 0;
}

/* One draw by weight. */
static size_t draw(const sift_corpus *c, sift_rng *rng)
{
    double r = (double)(sift_rng_next(rng) >> 11) * 0x1p-53 * c->fen_sum;
    size_t i = fen_find(c, r);
    /* Rounding can land past the end or on a weightless entry at a span's edge: take the
     * nearest weighted entry, which exists because every active entry weighs more than 0. */
    if (i >= c->fen_n) i = c->fen_n - 1;
    for (size_t d = 0; !(c->nodes[i]->e.weight > 0); d++) {
        if (i >= d && c->nodes[i - d]->e.weight > 0) return i - d;
        if (i + d < c->fen_n && c->nodes[i + d]->e.weight > 0) return i + d;
    }
    return i;
}

static bool in_band(const sift_corpus *c, size_t i)
{
    size_t size = c->nodes[i]->e.size;
    return size >= c->band_min && size <= c->band_max;
}

/* Draws until an entry of the band comes up: a band that holds a twelfth of the corpus takes
 * about twelve draws. When its entries weigh so little that the tries run out, the first
 * weighted entry of the band from a random place on is taken; with none, the last draw. */
#define BAND_TRIES 128

static size_t draw_in_band(const sift_corpus *c, sift_rng *rng)
{
    size_t i = draw(c, rng);
    for (int t = 1; t < BAND_TRIES && !in_band(c, i); t++)
        i = draw(c, rng);
    if (in_band(c, i)) return i;
    size_t from = (size_t)sift_rng_below(rng, c->fen_n);
    for (size_t k = 0; k < c->fen_n; k++) {
        size_t j = (from + k) % c->fen_n;
        if (c->nodes[j]->e.weight > 0 && in_band(c, j)) return j;
    }
    return i;
}

size_t sift_sched_pick(sift_corpus *c, sift_rng *rng)
{
    if (c->picks >= REBUILD_PICKS) fen_rebuild(c);
    size_t i = c->band_min == 0 && c->band_max == SIZE_MAX ? draw(c, rng) : draw_in_band(c, rng);
    c->nodes[i]->e.times_chosen++;
    sift_sched_reweigh(c, i);
    c->picks++;
    return i;
}
