/* Greedy set cover, lazily: an input's gain only falls as others are picked, so the gain a heap
 * holds is a bound, and only the input on top is counted again before it is picked. A corpus of
 * thousands of inputs is chosen in about as many counts as it picks, where counting every input
 * for every pick (libFuzzer's loop) takes their product. */
#include "engine/modes/setcover.h"

#include <stdbool.h>
#include <stdlib.h>

static int by_id(const void *a, const void *b)
{
    sift_feature_id x = *(const sift_feature_id *)a, y = *(const sift_feature_id *)b;
    return (x > y) - (x < y);
}

/* Sorts IDS[0..N) and drops repeats; returns how many are left. */
static size_t sort_unique(sift_feature_id *ids, size_t n)
{
    if (!n) return 0;
    qsort(ids, n, sizeof(*ids), by_id);
    size_t kept = 1;
    for (size_t i = 1; i < n; i++)
        if (ids[i] != ids[kept - 1]) ids[kept++] = ids[i];
    return kept;
}

/* Drops from sorted IDS[0..N) those in sorted OUT[0..NOUT); returns how many are left. */
static size_t drop_sorted(sift_feature_id *ids, size_t n, const sift_feature_id *out, size_t nout)
{
    size_t kept = 0, j = 0;
    for (size_t i = 0; i < n; i++) {
        while (j < nout && out[j] < ids[i])
            j++;
        if (j == nout || out[j] != ids[i]) ids[kept++] = ids[i];
    }
    return kept;
}

/* Where ID lies in sorted ALL[0..N), which holds it. */
static size_t position(const sift_feature_id *all, size_t n, sift_feature_id id)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (all[mid] <= id)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

typedef struct {
    size_t gain; /* when last counted: never below what it is now */
    size_t index;
} candidate;

typedef struct {
    candidate *items;
    size_t n;
    const sift_setcover_input *inputs;
} heap;

/* Whether A goes before B: more gain, then smaller, then first. */
static bool before(const heap *h, candidate a, candidate b)
{
    if (a.gain != b.gain) return a.gain > b.gain;
    size_t sa = h->inputs[a.index].size, sb = h->inputs[b.index].size;
    if (sa != sb) return sa < sb;
    return a.index < b.index;
}

static void heap_down(heap *h, size_t i)
{
    for (;;) {
        size_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < h->n && before(h, h->items[l], h->items[best])) best = l;
        if (r < h->n && before(h, h->items[r], h->items[best])) best = r;
        if (best == i) return;
        candidate t = h->items[i];
        h->items[i] = h->items[best];
        h->items[best] = t;
        i = best;
    }
}

static candidate heap_pop(heap *h)
{
    candidate top = h->items[0];
    h->items[0] = h->items[--h->n];
    heap_down(h, 0);
    return top;
}

static void heap_push(heap *h, candidate c)
{
    size_t i = h->n++;
    h->items[i] = c;
    while (i && before(h, h->items[i], h->items[(i - 1) / 2])) {
        candidate t = h->items[i];
        h->items[i] = h->items[(i - 1) / 2];
        h->items[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

/* The features of IN that COVERED does not hold yet, ALL[0..NALL) indexing it. */
static size_t gain_of(const sift_setcover_input *in, const sift_feature_id *all, size_t nall,
                      const bool *covered)
{
    size_t gain = 0;
    for (size_t i = 0; i < in->n; i++)
        gain += !covered[position(all, nall, in->ids[i])];
    return gain;
}

size_t sift_setcover_pick(sift_setcover_input *inputs, size_t n, sift_feature_id *known,
                          size_t nknown, size_t *order, size_t *new_features)
{
    *new_features = 0;
    nknown = sort_unique(known, nknown);
    size_t nall = 0;
    for (size_t i = 0; i < n; i++) {
        inputs[i].n = sort_unique(inputs[i].ids, inputs[i].n);
        inputs[i].n = drop_sorted(inputs[i].ids, inputs[i].n, known, nknown);
        nall += inputs[i].n;
    }
    sift_feature_id *all = malloc((nall ? nall : 1) * sizeof(*all));
    bool *covered = calloc(nall ? nall : 1, sizeof(*covered));
    heap h = {.items = malloc((n ? n : 1) * sizeof(candidate)), .inputs = inputs};
    size_t picked = (size_t)-1;
    if (!all || !covered || !h.items) goto out;
    nall = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < inputs[i].n; j++)
            all[nall++] = inputs[i].ids[j];
        if (inputs[i].n) heap_push(&h, (candidate){.gain = inputs[i].n, .index = i});
    }
    nall = sort_unique(all, nall);
    picked = 0;
    while (h.n) {
        candidate c = heap_pop(&h);
        c.gain = gain_of(&inputs[c.index], all, nall, covered);
        if (!c.gain) continue;
        if (h.n && before(&h, h.items[0], c)) {
            heap_push(&h, c);
            continue;
        }
        order[picked++] = c.index;
        *new_features += c.gain;
        const sift_setcover_input *in = &inputs[c.index];
        for (size_t j = 0; j < in->n; j++)
            covered[position(all, nall, in->ids[j])] = true;
    }
out:
    free(all);
    free(covered);
    free(h.items);
    return picked;
}
