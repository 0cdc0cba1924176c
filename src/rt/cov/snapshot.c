/* Snapshots: the bucket bits seen so far per counter, private or shared between processes. */
#include "sift/snapshot.h"
#include "rt/cov/scan.h"
#include "rt/cov/snapshot_impl.h"

#include <stdlib.h>
#include <string.h>

#define SNAP_MAGIC 0x32504e5354464953ull /* "SIFTSNP2" */

/* What lives at the start of shared memory; the seen arrays follow, each line-aligned, then
 * the known bitmaps. */
typedef struct {
    uint64_t magic;
    uint64_t capacity[SIFT_DOMAIN_COUNT];
} shm_header;

struct sift_snapshot {
    uint8_t *seen[SIFT_DOMAIN_COUNT]; /* one byte of bucket bits per counter */
    /* One bit per counter, set once its seen byte is not 0: instrumented code that skips the
     * values the campaign has seen loads a word of 64 counters' bits, where a load of the seen
     * byte itself touched a line of 64 bytes for each slot (docs/values.md). */
    uint64_t *known[SIFT_DOMAIN_COUNT];
    size_t capacity[SIFT_DOMAIN_COUNT];
    bool shared;
    void *own; /* private storage, freed with the snapshot */
    /* A private snapshot changes only through judge(), which keeps these up to date, so that
     * the fuzzer may ask for its counts after every new input. A shared one also gains bits
     * from other processes and is counted by reading it. */
    size_t counters_seen[SIFT_DOMAIN_COUNT], bits_seen[SIFT_DOMAIN_COUNT];
};

static size_t round_line(size_t n)
{
    return (n + SIFT_LINE - 1) / SIFT_LINE * SIFT_LINE;
}

static size_t known_bytes(size_t capacity)
{
    return round_line((capacity + 63) / 64 * sizeof(uint64_t));
}

size_t sift_snapshot_bytes(const size_t capacity[SIFT_DOMAIN_COUNT])
{
    if (!capacity) return 0;
    size_t total = round_line(sizeof(shm_header));
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (capacity[d] > SIFT_DOMAIN_MAX_LEN) return 0;
        total += round_line(capacity[d]) + known_bytes(capacity[d]);
    }
    return total;
}

int sift_snapshot_create(sift_snapshot **out, const size_t capacity[SIFT_DOMAIN_COUNT],
                         void *shared, size_t shared_len)
{
    size_t bytes = sift_snapshot_bytes(capacity);
    if (!out || bytes == 0 || ((uintptr_t)shared % SIFT_LINE) || (shared && shared_len < bytes))
        return SIFT_EINVAL;
    sift_snapshot *s = calloc(1, sizeof(*s));
    if (!s) return SIFT_ENOMEM;
    uint8_t *mem = shared;
    if (!mem) {
        mem = s->own = aligned_alloc(SIFT_LINE, bytes);
        if (!mem) {
            free(s);
            return SIFT_ENOMEM;
        }
        memset(mem, 0, bytes);
    }
    shm_header *h = (shm_header *)mem;
    uint64_t magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
    if (magic == 0) {
        for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
            h->capacity[d] = capacity[d];
        __atomic_store_n(&h->magic, SNAP_MAGIC, __ATOMIC_RELEASE);
    } else if (magic != SNAP_MAGIC ||
               memcmp(h->capacity, (uint64_t[]){capacity[0], capacity[1], capacity[2]},
                      sizeof(h->capacity)) != 0) {
        free(s);
        return SIFT_ESHAPE;
    }
    s->shared = shared != NULL;
    uint8_t *p = mem + round_line(sizeof(shm_header));
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        s->capacity[d] = capacity[d];
        s->seen[d] = p;
        p += round_line(capacity[d]);
    }
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        s->known[d] = (uint64_t *)(void *)p;
        p += known_bytes(capacity[d]);
    }
    *out = s;
    return SIFT_OK;
}

int sift_snapshot_for_map(sift_snapshot **out, const sift_covmap *map, unsigned headroom)
{
    if (!map || headroom == 0) return SIFT_EINVAL;
    size_t cap[SIFT_DOMAIN_COUNT];
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        size_t size = map->domains[d].size;
        cap[d] = size > SIFT_DOMAIN_MAX_LEN / headroom ? SIFT_DOMAIN_MAX_LEN : size * headroom;
    }
    return sift_snapshot_create(out, cap, NULL, 0);
}

void sift_snapshot_free(sift_snapshot *snap)
{
    if (!snap) return;
    free(snap->own);
    free(snap);
}

size_t sift_snapshot_capacity(const sift_snapshot *snap, sift_domain domain)
{
    return snap && (unsigned)domain < SIFT_DOMAIN_COUNT ? snap->capacity[domain] : 0;
}

/* Every domain of MASK that MAP fills must fit in SNAP. */
static int check_shape(const sift_snapshot *snap, const sift_covmap *map, unsigned mask)
{
    if (!snap || !map || (mask & ~SIFT_DOMAINS_ALL)) return SIFT_EINVAL;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        if ((mask & SIFT_DOMAIN_BIT(d)) && map->domains[d].size > snap->capacity[d])
            return SIFT_ESHAPE;
    return SIFT_OK;
}

typedef struct {
    uint8_t *seen;
    uint64_t *known;
    size_t *counters_seen, *bits_seen; /* the domain's counts; NULL in queries and when shared */
    bool shared, advance;
    sift_novelty novelty;
    size_t new_features;
} pass_ctx;

/* Records bucket bits B of counter I as seen (or only judges them when not advancing). A
 * shared snapshot claims with an atomic OR: a bit another process set first is not new. */
static void judge(pass_ctx *p, size_t i, uint8_t b)
{
    uint8_t old = p->shared ? __atomic_load_n(&p->seen[i], __ATOMIC_RELAXED) : p->seen[i];
    if (!(b & ~old)) return;
    if (p->advance) {
        if (p->shared)
            old = __atomic_fetch_or(&p->seen[i], b, __ATOMIC_RELAXED);
        else
            p->seen[i] = old | b;
        if (!(b & ~old)) return;
        if (!old) {
            uint64_t bit = 1ull << (i % 64);
            if (p->shared)
                __atomic_fetch_or(&p->known[i / 64], bit, __ATOMIC_RELAXED);
            else
                p->known[i / 64] |= bit;
        }
        size_t bits = (size_t)__builtin_popcount(b & ~old);
        p->new_features += bits;
        if (p->counters_seen) {
            *p->counters_seen += old == 0;
            *p->bits_seen += bits;
        }
    }
    sift_novelty n = old ? SIFT_NEW_COUNT : SIFT_NEW_EDGE;
    if (n > p->novelty) p->novelty = n;
}

static bool pass_line(void *ctx, uint8_t *counters, size_t len, size_t first)
{
    pass_ctx *p = ctx;
    /* The vector test reads seen without atomics: a stale byte only sends the line to judge(). */
    if (sift_scan_line_has_new(counters, p->seen + first, len)) {
        for (size_t i = 0; i < len; i++)
            if (counters[i]) judge(p, first + i, sift_bucket_table[counters[i]]);
    }
    if (p->advance) memset(counters, 0, len);
    /* A query can stop at the first new edge; nothing can outrank it. */
    return p->advance || p->novelty != SIFT_NEW_EDGE;
}

/* Points judge() at the bits of domain D of SNAP, and at its counts when WRITABLE is SNAP
 * (NULL: a query, which changes nothing). */
static void count_into(pass_ctx *p, const sift_snapshot *snap, sift_snapshot *writable, int d)
{
    p->seen = snap->seen[d];
    p->known = snap->known[d];
    bool counted = writable && !writable->shared;
    p->counters_seen = counted ? &writable->counters_seen[d] : NULL;
    p->bits_seen = counted ? &writable->bits_seen[d] : NULL;
}

/* WRITABLE is SNAP for a pass that advances it, NULL for a query. */
static int pass(const sift_snapshot *snap, sift_snapshot *writable, const sift_covmap *map,
                unsigned mask, sift_novelty *novelty, size_t *new_features)
{
    int rc = check_shape(snap, map, mask);
    if (rc != SIFT_OK) return rc;
    bool advance = writable != NULL;
    pass_ctx p = {.shared = snap->shared, .advance = advance};
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (!(mask & SIFT_DOMAIN_BIT(d)) || !map->domains[d].size) continue;
        count_into(&p, snap, writable, d);
        bool more = advance ? sift_scan_domain_fresh(&map->domains[d], p.seen, pass_line, &p)
                            : sift_scan_domain(&map->domains[d], pass_line, &p, false);
        if (!more) break;
    }
    if (novelty) *novelty = p.novelty;
    if (new_features) *new_features = p.new_features;
    return SIFT_OK;
}

int sift_snapshot_has_new(const sift_snapshot *snap, const sift_covmap *map, unsigned mask,
                          sift_novelty *novelty)
{
    return pass(snap, NULL, map, mask, novelty, NULL);
}

int sift_snapshot_check_and_advance(sift_snapshot *snap, sift_covmap *map, unsigned mask,
                                    sift_novelty *novelty, size_t *new_features)
{
    return pass(snap, snap, map, mask, novelty, new_features);
}

typedef struct {
    pass_ctx pass;
    sift_domain domain;
    sift_export_fn fn;
    void *ctx;
} list_ctx;

/* Only the counters that ran, found by one vector compare: a line of a hashed domain
 * (comparisons) or a slot's line of values mostly holds one or two. */
static bool list_line(void *ctx, uint8_t *counters, size_t len, size_t first)
{
    list_ctx *l = ctx;
    for (uint64_t ran = sift_scan_nonzero(counters, len); ran; ran &= ran - 1) {
        size_t i = (size_t)__builtin_ctzll(ran);
        uint8_t b = sift_bucket_table[counters[i]];
        judge(&l->pass, first + i, b);
        l->fn(l->ctx, l->domain, first + i, b);
    }
    memset(counters, 0, len);
    return true;
}

int sift_snapshot_check_and_list(sift_snapshot *snap, sift_covmap *map, unsigned mask,
                                 sift_novelty *novelty, sift_export_fn fn, void *ctx)
{
    if (!fn) return SIFT_EINVAL;
    int rc = check_shape(snap, map, mask);
    if (rc != SIFT_OK) return rc;
    list_ctx l = {.pass = {.shared = snap->shared, .advance = true}, .fn = fn, .ctx = ctx};
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (!(mask & SIFT_DOMAIN_BIT(d)) || !map->domains[d].size) continue;
        l.domain = (sift_domain)d;
        count_into(&l.pass, snap, snap, d);
        sift_scan_domain(&map->domains[d], list_line, &l, true);
    }
    if (novelty) *novelty = l.pass.novelty;
    return SIFT_OK;
}

typedef struct {
    sift_snapshot *snap;
    pass_ctx pass;
} import_ctx;

static void import_entry(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    import_ctx *im = ctx;
    count_into(&im->pass, im->snap, im->snap, domain);
    judge(&im->pass, index, buckets);
}

static void ignore_entry(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    (void)ctx, (void)domain, (void)index, (void)buckets;
}

int sift_snapshot_import(sift_snapshot *snap, const uint8_t *buf, size_t len, sift_novelty *novelty)
{
    size_t sizes[SIFT_DOMAIN_COUNT];
    if (!snap) return SIFT_EINVAL;
    int rc = sift_export_shape(buf, len, sizes);
    if (rc != SIFT_OK) return rc;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        if (sizes[d] > snap->capacity[d]) return SIFT_ESHAPE;
    /* Validate the whole export before folding any of it in. */
    rc = sift_export_foreach(buf, len, ignore_entry, NULL);
    if (rc != SIFT_OK) return rc;
    import_ctx im = {.snap = snap, .pass = {.shared = snap->shared, .advance = true}};
    sift_export_foreach(buf, len, import_entry, &im);
    if (novelty) *novelty = im.pass.novelty;
    return SIFT_OK;
}

const uint64_t *sift_snapshot_known(const sift_snapshot *snap, sift_domain d, size_t n)
{
    if (!snap || (unsigned)d >= SIFT_DOMAIN_COUNT || snap->capacity[d] < n) return NULL;
    return snap->known[d];
}

int sift_snapshot_count(const sift_snapshot *snap, unsigned mask, size_t *edges, size_t *features)
{
    if (!snap || (mask & ~SIFT_DOMAINS_ALL)) return SIFT_EINVAL;
    size_t e = 0, f = 0;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (!(mask & SIFT_DOMAIN_BIT(d))) continue;
        if (!snap->shared) {
            e += snap->counters_seen[d];
            f += snap->bits_seen[d];
            continue;
        }
        const uint8_t *seen = snap->seen[d];
        for (size_t i = 0; i < snap->capacity[d]; i++) {
            uint8_t b = __atomic_load_n(&seen[i], __ATOMIC_RELAXED);
            e += b != 0;
            f += (size_t)__builtin_popcount(b);
        }
    }
    if (edges) *edges = e;
    if (features) *features = f;
    return SIFT_OK;
}
