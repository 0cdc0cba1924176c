/* bench/novelty's setup (novelty.h): patterns and maps, none of it timed. */
#include "novelty.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const method_name[M_COUNT] = {
    "byte loop",      "word loop",     "word loop (1/br)", "sift dirty-index",
    "sift SIMD-scan", "sift fn-index", "memcpy",           "read"};

static uint64_t next_rand(uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return *rng;
}

static double uniform(uint64_t *rng)
{
    return (double)(next_rand(rng) >> 11) / 9007199254740992.0;
}

/* Most counters of a real execution are hit once or a few times, a few are hit in loops:
 * 255^(u^3) puts 55% of them at 1-2 and 4% at 128 or more. */
static uint8_t hit_value(uint64_t *rng)
{
    double u = uniform(rng);
    long v = lround(pow(255.0, u * u * u));
    return (uint8_t)(v < 1 ? 1 : v > 255 ? 255 : v);
}

pattern make_pattern(size_t size, size_t touched, bool clustered, uint64_t seed)
{
    uint64_t rng = seed;
    uint8_t *mark = calloc(size, 1);
    size_t have = 0;
    while (have < touched) {
        size_t at = (size_t)(next_rand(&rng) % size);
        size_t run = clustered ? 8 + (size_t)(next_rand(&rng) % 57) : 1;
        for (size_t i = at; i < size && i < at + run && have < touched; i++) {
            have += !mark[i];
            mark[i] = 1;
        }
    }
    pattern p = {malloc(touched * sizeof(size_t)), malloc(touched), touched};
    for (size_t i = 0, k = 0; i < size; i++) {
        if (mark[i]) {
            p.idx[k] = i;
            p.val[k++] = hit_value(&rng);
        }
    }
    free(mark);
    return p;
}

void touch(const pattern *p, uint8_t *counters)
{
    for (size_t k = 0; k < p->n; k++)
        counters[p->idx[k]] = p->val[k];
}

void touch_dirty(const pattern *p, const sift_counters *c)
{
    for (size_t k = 0; k < p->n; k++) {
        c->counters[p->idx[k]] = p->val[k];
        c->dirty[p->idx[k] >> SIFT_DIRTY_SHIFT] = 1;
    }
}

static void *zalloc(size_t n)
{
    void *p = aligned_alloc(64, n);
    if (!p) {
        perror("aligned_alloc");
        exit(1);
    }
    memset(p, 0, n);
    return p;
}

void check(int rc, const char *what)
{
    if (rc != SIFT_OK) {
        fprintf(stderr, "%s: %s\n", what, sift_strerror(rc));
        exit(1);
    }
}

/* Splits SIZE counters into functions of 4 to 64 counters (clang gives a function one counter
 * per basic block it instruments), the same layout every time: the index of each function's
 * first counter into STARTS, the function of each counter into FN_OF. Returns their number. */
static size_t layout_functions(size_t size, uint32_t *starts, uint32_t *fn_of)
{
    uint64_t state = 0x2545f4914f6cdd1du;
    size_t n = 0;
    for (size_t at = 0; at < size; n++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        size_t len = 4 + (size_t)(state % 61);
        starts[n] = (uint32_t)at;
        for (size_t i = at; i < size && i < at + len; i++)
            fn_of[i] = (uint32_t)n;
        at += len;
    }
    return n;
}

method method_new(int kind, size_t size)
{
    method m = {.kind = kind, .size = size};
    switch (kind) {
    case M_BYTE:
    case M_WORD:
    case M_WORD1:
    case M_MEMCPY:
    case M_READ:
        m.map = zalloc(size);
        m.virgin = zalloc(size);
        memset(m.virgin, 0xff, size);
        break;
    case M_DIRTY: {
        size_t first;
        m.cov = sift_covmap_new();
        check(sift_covmap_alloc(m.cov, SIFT_DOMAIN_EDGES, size, NULL, &first), "alloc");
        check(sift_covmap_counters(m.cov, SIFT_DOMAIN_EDGES, first, &m.counters), "counters");
        check(sift_snapshot_for_map(&m.snap, m.cov, 1), "snapshot");
        break;
    }
    case M_SCAN:
        m.cov = sift_covmap_new();
        m.attached = zalloc(size);
        check(sift_covmap_attach(m.cov, SIFT_DOMAIN_EDGES, m.attached, size, NULL), "attach");
        check(sift_snapshot_for_map(&m.snap, m.cov, 1), "snapshot");
        break;
    case M_FUNC: {
        size_t first;
        uint32_t *starts = malloc(size / 4 * sizeof(uint32_t));
        m.fn_of = malloc(size * sizeof(uint32_t));
        if (!starts || !m.fn_of) {
            perror("malloc");
            exit(1);
        }
        m.nfns = layout_functions(size, starts, m.fn_of);
        m.cov = sift_covmap_new();
        m.attached = zalloc(size);
        m.fn_dirty = zalloc(m.nfns);
        check(sift_covmap_attach(m.cov, SIFT_DOMAIN_EDGES, m.attached, size, &first), "attach");
        check(sift_covmap_index_functions(m.cov, SIFT_DOMAIN_EDGES, first, m.fn_dirty, starts,
                                          m.nfns),
              "index functions");
        check(sift_snapshot_for_map(&m.snap, m.cov, 1), "snapshot");
        free(starts);
        break;
    }
    }
    return m;
}

void method_free(method *m)
{
    free(m->map);
    free(m->virgin);
    free(m->attached);
    free(m->fn_dirty);
    free(m->fn_of);
    sift_snapshot_free(m->snap);
    sift_covmap_free(m->cov);
}
