/* Coverage exports from anywhere (another process, a file): sift_export_foreach,
 * sift_export_shape and sift_snapshot_import on any bytes. A valid export must decode to
 * ordered single-bucket entries, import into private and shared snapshots alike, add nothing
 * the second time, come out of a map holding those counters as the same entries, and be judged
 * by the per-execution pass over that map as the import judged them. */
#include "rt/cov/scan.h"
#include "sift/snapshot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Domains up to this size are imported and rebuilt; larger ones only decoded. */
#define CAP 4096

typedef struct {
    uint8_t domain, buckets;
    size_t index;
} entry;

typedef struct {
    entry *e;
    size_t n, cap;
} entries;

static void collect(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    entries *l = ctx;
    if (l->n == l->cap) __builtin_trap(); /* every entry takes two bytes at least */
    l->e[l->n++] = (entry){(uint8_t)domain, buckets, index};
}

static int same(const entries *a, const entries *b)
{
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].domain != b->e[i].domain || a->e[i].index != b->e[i].index ||
            a->e[i].buckets != b->e[i].buckets)
            return 0;
    return 1;
}

static void check_order(const entries *l, const size_t sizes[SIFT_DOMAIN_COUNT])
{
    for (size_t i = 0; i < l->n; i++) {
        const entry *e = &l->e[i];
        if (e->domain >= SIFT_DOMAIN_COUNT || e->index >= sizes[e->domain] || !e->buckets ||
            (e->buckets & (e->buckets - 1)))
            __builtin_trap();
        if (i &&
            (e->domain < e[-1].domain || (e->domain == e[-1].domain && e->index <= e[-1].index)))
            __builtin_trap();
    }
}

/* Imports BUF twice into SNAP: the first time says what the entries add to an empty snapshot,
 * the second that nothing is left. */
static void import_twice(sift_snapshot *snap, const uint8_t *buf, size_t len, size_t n)
{
    sift_novelty nov;
    if (sift_snapshot_import(snap, buf, len, &nov) != SIFT_OK) __builtin_trap();
    if (nov != (n ? SIFT_NEW_EDGE : SIFT_NOTHING)) __builtin_trap();
    size_t edges, features;
    if (sift_snapshot_count(snap, SIFT_DOMAINS_ALL, &edges, &features) != SIFT_OK || edges != n ||
        features != n)
        __builtin_trap();
    if (sift_snapshot_import(snap, buf, len, &nov) != SIFT_OK || nov != SIFT_NOTHING)
        __builtin_trap();
}

/* A map shaped as the export says, each domain in two regions split at SPLIT[d] (none when
 * 0): the edges attached, as a module's compiled counters are, the others allocated with a dirty
 * index, as the runtime's hooks use them. */
typedef struct {
    sift_covmap *map;
    uint8_t *edges[2];
    size_t split[SIFT_DOMAIN_COUNT];
} shaped;

static int shape_map(shaped *m, const size_t sizes[SIFT_DOMAIN_COUNT], unsigned present)
{
    if (!(m->map = sift_covmap_new())) return -1;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (!(present & SIFT_DOMAIN_BIT(d))) continue;
        size_t split = m->split[d],
               len[2] = {split ? split : sizes[d], split ? sizes[d] - split : 0};
        for (int k = 0; k < 2 && len[k]; k++) {
            int rc;
            if (d == SIFT_DOMAIN_EDGES) {
                /* Exactly as long as the region, so that a read past it is seen. */
                if (!(m->edges[k] = calloc(len[k], 1))) return -1;
                rc = sift_covmap_attach(m->map, SIFT_DOMAIN_EDGES, m->edges[k], len[k], NULL);
            } else {
                rc = sift_covmap_alloc(m->map, (sift_domain)d, len[k], NULL, NULL);
            }
            if (rc != SIFT_OK) __builtin_trap();
        }
    }
    return 0;
}

/* Counts in the map a hit count in each entry's bucket. */
static void fill(shaped *m, const entries *l)
{
    static const uint8_t count_of_bit[8] = {1, 2, 3, 4, 8, 16, 32, 128};
    for (size_t i = 0; i < l->n; i++) {
        const entry *e = &l->e[i];
        uint8_t count = count_of_bit[__builtin_ctz(e->buckets)];
        if (sift_bucket(count) != e->buckets) __builtin_trap();
        size_t split = m->split[e->domain], k = split && e->index >= split;
        size_t at = e->index - (k ? split : 0);
        if (e->domain == SIFT_DOMAIN_EDGES) {
            m->edges[k][at] = count;
            continue;
        }
        sift_counters c;
        if (sift_covmap_counters(m->map, (sift_domain)e->domain, e->index, &c) != SIFT_OK)
            __builtin_trap();
        for (uint8_t n = 0; n < count; n++)
            sift_hit(&c, at);
    }
}

/* The map holding the entries must export them again, and the per-execution pass over it must
 * judge them as the import did. */
static void rebuild(const entries *l, const size_t sizes[SIFT_DOMAIN_COUNT], unsigned present,
                    uint8_t split)
{
    static const size_t cap[SIFT_DOMAIN_COUNT] = {CAP, CAP, CAP};
    shaped m = {0};
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        m.split[d] = sizes[d] * split / 256;
    sift_snapshot *snap = NULL;
    size_t len;
    uint8_t *out = NULL;
    entries again = {0};
    if (shape_map(&m, sizes, present) || sift_snapshot_create(&snap, cap, NULL, 0) != SIFT_OK)
        goto done;
    fill(&m, l);

    sift_novelty nov, want = l->n ? SIFT_NEW_EDGE : SIFT_NOTHING;
    if (sift_snapshot_has_new(snap, m.map, SIFT_DOMAINS_ALL, &nov) != SIFT_OK || nov != want)
        __builtin_trap();
    if (sift_covmap_export(m.map, SIFT_DOMAINS_ALL, NULL, 0, &len) != SIFT_ESPACE) __builtin_trap();
    out = malloc(len);
    again = (entries){malloc(len / 2 * sizeof(entry) + 1), 0, len / 2};
    size_t again_sizes[SIFT_DOMAIN_COUNT];
    if (!out || !again.e) goto done;
    if (sift_covmap_export(m.map, SIFT_DOMAINS_ALL, out, len, &len) != SIFT_OK ||
        sift_export_shape(out, len, again_sizes) != SIFT_OK ||
        memcmp(again_sizes, sizes, sizeof again_sizes) != 0 ||
        sift_export_foreach(out, len, collect, &again) != SIFT_OK || !same(l, &again))
        __builtin_trap();

    /* Export reset the counters: the same execution once more, through the pass. */
    fill(&m, l);
    size_t added, edges, features;
    if (sift_snapshot_check_and_advance(snap, m.map, SIFT_DOMAINS_ALL, &nov, &added) != SIFT_OK ||
        nov != want || added != l->n ||
        sift_snapshot_count(snap, SIFT_DOMAINS_ALL, &edges, &features) != SIFT_OK ||
        edges != l->n || features != l->n)
        __builtin_trap();
    fill(&m, l);
    if (sift_snapshot_check_and_advance(snap, m.map, SIFT_DOMAINS_ALL, &nov, &added) != SIFT_OK ||
        nov != SIFT_NOTHING || added != 0)
        __builtin_trap();
done:
    free(again.e);
    free(out);
    sift_snapshot_free(snap);
    sift_covmap_free(m.map);
    free(m.edges[0]);
    free(m.edges[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of the exact size, so that a read past the end is an overflow the sanitizer sees. */
    uint8_t *buf = malloc(size ? size : 1);
    entries l = {malloc(size / 2 * sizeof(entry) + 1), 0, size / 2};
    if (!buf || !l.e) goto done;
    memcpy(buf, data, size);

    size_t sizes[SIFT_DOMAIN_COUNT];
    int shape = sift_export_shape(buf, size, sizes);
    int rc = sift_export_foreach(buf, size, collect, &l);
    if (rc != SIFT_OK && rc != SIFT_EFORMAT) __builtin_trap();
    if (rc == SIFT_OK && shape != SIFT_OK) __builtin_trap();

    static const size_t cap[SIFT_DOMAIN_COUNT] = {CAP, CAP, CAP};
    sift_snapshot *snap;
    if (sift_snapshot_create(&snap, cap, NULL, 0) != SIFT_OK) goto done;
    sift_novelty nov;
    int imported = sift_snapshot_import(snap, buf, size, &nov);
    sift_snapshot_free(snap);
    int fits = shape == SIFT_OK && sizes[0] <= CAP && sizes[1] <= CAP && sizes[2] <= CAP;
    /* The shape is checked against the snapshot before the entries are read. */
    if (imported != (shape != SIFT_OK ? shape : !fits ? SIFT_ESHAPE : rc)) __builtin_trap();
    if (imported != SIFT_OK) goto done;
    check_order(&l, sizes);

    if (sift_snapshot_create(&snap, cap, NULL, 0) != SIFT_OK) goto done;
    import_twice(snap, buf, size, l.n);
    sift_snapshot_free(snap);
    size_t shared_len = sift_snapshot_bytes(cap);
    void *shared = aligned_alloc(64, shared_len);
    if (shared) {
        memset(shared, 0, shared_len);
        if (sift_snapshot_create(&snap, cap, shared, shared_len) != SIFT_OK) __builtin_trap();
        import_twice(snap, buf, size, l.n);
        sift_snapshot_free(snap);
        free(shared);
    }
    /* The header's domain byte, and where the last byte says to split each domain. */
    /* Through the vector code this CPU runs and through the scalar code, which other CPUs run. */
    for (int isa = SIFT_ISA_SCALAR; isa <= SIFT_ISA_AVX2; isa++) {
        sift_scan_limit_isa((sift_isa)isa);
        rebuild(&l, sizes, buf[4], buf[size - 1]);
    }
done:
    free(l.e);
    free(buf);
    return 0;
}
