/* Tests of the scans at every vector level the CPU has: the per-execution pass, take and export
 * against a plain model, over regions of awkward lengths with dirty indexes and without. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sift/snapshot.h"
#include "rt/cov/scan.h"

#include <stdlib.h>
#include <string.h>

/* Lengths around lines (64 counters) and dirty blocks (64 lines), mixed allocated and attached
 * arrays in one domain. */
static const size_t lengths[] = {1, 63, 64, 65, 200, 4095, 4096, 4096 * 4 + 7, 70000};
#define NREGIONS (sizeof(lengths) / sizeof(lengths[0]))

typedef struct {
    sift_covmap *map;
    sift_snapshot *snap;
    uint8_t *attached[NREGIONS];
    sift_counters alloc[NREGIONS];
    uint8_t *counters[NREGIONS]; /* either kind, as the domain indexes them */
    size_t first[NREGIONS];
    size_t size;
    uint8_t *model_seen; /* bucket bits the model has seen per counter */
} world;

static uint64_t rng;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void world_new(world *w)
{
    memset(w, 0, sizeof(*w));
    w->map = sift_covmap_new();
    for (size_t i = 0; i < NREGIONS; i++) {
        if (i % 2) {
            /* One byte past an aligned block, so that the vector loads are unaligned. */
            uint8_t *block = calloc(lengths[i] + 1, 1);
            w->attached[i] = block;
            w->counters[i] = block + 1;
            assert_int_equal(sift_covmap_attach(w->map, SIFT_DOMAIN_EDGES, w->counters[i],
                                                lengths[i], &w->first[i]),
                             SIFT_OK);
        } else {
            assert_int_equal(sift_covmap_alloc(w->map, SIFT_DOMAIN_EDGES, lengths[i],
                                               &w->counters[i], &w->first[i]),
                             SIFT_OK);
            assert_int_equal(
                sift_covmap_counters(w->map, SIFT_DOMAIN_EDGES, w->first[i], &w->alloc[i]),
                SIFT_OK);
        }
    }
    w->size = sift_covmap_size(w->map, SIFT_DOMAIN_EDGES);
    assert_int_equal(sift_snapshot_for_map(&w->snap, w->map, 1), SIFT_OK);
    w->model_seen = calloc(w->size, 1);
}

static void world_free(world *w)
{
    sift_snapshot_free(w->snap);
    sift_covmap_free(w->map);
    for (size_t i = 0; i < NREGIONS; i++)
        free(w->attached[i]);
    free(w->model_seen);
}

/* One execution: a few runs of counters hit in each region, the allocated ones through
 * sift_hit() as instrumentation would, the attached ones written as compiled code does. Also
 * marks a few allocated lines dirty without a hit. */
static void execute(world *w, unsigned density)
{
    for (size_t i = 0; i < NREGIONS; i++) {
        size_t runs = 1 + lengths[i] * density / 10000;
        for (size_t r = 0; r < runs; r++) {
            size_t at = (size_t)(next_rand() % lengths[i]), len = 1 + next_rand() % 40;
            for (size_t j = at; j < lengths[i] && j < at + len; j++) {
                unsigned hits = (unsigned)(1 + next_rand() % 4);
                if (next_rand() % 8 == 0) hits = (unsigned)(next_rand() % 300);
                for (unsigned h = 0; h < hits; h++) {
                    if (w->alloc[i].counters) {
                        sift_hit(&w->alloc[i], j);
                    } else {
                        uint8_t v = w->counters[i][j];
                        w->counters[i][j] = (uint8_t)(v + (v != 255));
                    }
                }
            }
        }
        if (w->alloc[i].counters && next_rand() % 2)
            w->alloc[i].dirty[next_rand() % ((lengths[i] + 63) / 64)] = 1;
    }
}

/* What the model says of the current counters: novelty, and the bits they would add. */
static sift_novelty model_judge(const world *w, size_t *features, bool advance)
{
    sift_novelty n = SIFT_NOTHING;
    size_t f = 0;
    for (size_t i = 0; i < NREGIONS; i++) {
        for (size_t j = 0; j < lengths[i]; j++) {
            uint8_t b = sift_bucket(w->counters[i][j]);
            size_t k = w->first[i] + j;
            uint8_t fresh = (uint8_t)(b & ~w->model_seen[k]);
            if (!fresh) continue;
            sift_novelty this = w->model_seen[k] ? SIFT_NEW_COUNT : SIFT_NEW_EDGE;
            if (this > n) n = this;
            f += (size_t)__builtin_popcount(fresh);
            if (advance) w->model_seen[k] |= b;
        }
    }
    if (features) *features = f;
    return n;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Every counter and dirty byte is back to 0. */
static void assert_reset(const world *w)
{
    for (size_t i = 0; i < NREGIONS; i++) {
        assert_true(all_zero(w->counters[i], lengths[i]));
        if (w->alloc[i].counters) assert_true(all_zero(w->alloc[i].dirty, (lengths[i] + 63) / 64));
    }
}

/* Runs FN once for each vector level this CPU has, then restores the widest. */
static void each_level(void (*fn)(sift_isa level))
{
    for (sift_isa level = SIFT_ISA_SCALAR; level <= SIFT_ISA_AVX2; level++) {
        sift_scan_limit_isa(level);
        if (sift_scan_isa() != level) break; /* the CPU stops here */
        rng = 0x2545f4914f6cdd1dull + level;
        fn(level);
    }
    sift_scan_limit_isa(SIFT_ISA_AVX2);
}

static void pass_matches_model_at(sift_isa level)
{
    (void)level;
    world w;
    world_new(&w);
    /* Dense executions first (mostly new), then sparse ones repeating a known pattern. */
    static const unsigned density[] = {300, 300, 50, 5, 5, 5, 0, 5};
    for (size_t round = 0; round < 40; round++) {
        execute(&w, density[round % 8]);
        size_t want_features;
        sift_novelty want = model_judge(&w, &want_features, false);
        sift_novelty got;
        assert_int_equal(
            sift_snapshot_has_new(w.snap, w.map, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &got),
            SIFT_OK);
        assert_int_equal(got, want);
        model_judge(&w, NULL, true);
        size_t features;
        assert_int_equal(
            sift_snapshot_check_and_advance(w.snap, w.map, SIFT_DOMAINS_ALL, &got, &features),
            SIFT_OK);
        assert_int_equal(got, want);
        assert_int_equal(features, want_features);
        assert_reset(&w);
    }
    size_t edges, features, model_edges = 0, model_features = 0;
    for (size_t k = 0; k < w.size; k++) {
        model_edges += w.model_seen[k] != 0;
        model_features += (size_t)__builtin_popcount(w.model_seen[k]);
    }
    assert_int_equal(sift_snapshot_count(w.snap, SIFT_DOMAINS_ALL, &edges, &features), SIFT_OK);
    assert_int_equal(edges, model_edges);
    assert_int_equal(features, model_features);
    world_free(&w);
}

static void pass_matches_model(void **state)
{
    (void)state;
    each_level(pass_matches_model_at);
}

/* Every single line, and both ends of every dirty block, judged alone. */
static void each_line_alone_at(sift_isa level)
{
    (void)level;
    world w;
    world_new(&w);
    for (size_t i = 0; i < NREGIONS; i++) {
        for (size_t j = 0; j < lengths[i]; j += j % 64 == 0 ? 63 : 1) {
            if (w.alloc[i].counters)
                sift_hit(&w.alloc[i], j);
            else
                w.counters[i][j] = 1;
            sift_novelty got;
            assert_int_equal(
                sift_snapshot_check_and_advance(w.snap, w.map, SIFT_DOMAINS_ALL, &got, NULL),
                SIFT_OK);
            assert_int_equal(got, SIFT_NEW_EDGE);
            assert_int_equal(w.counters[i][j], 0);
            if (w.alloc[i].counters) {
                sift_hit(&w.alloc[i], j); /* known now: reset without a visit */
                assert_int_equal(
                    sift_snapshot_check_and_advance(w.snap, w.map, SIFT_DOMAINS_ALL, &got, NULL),
                    SIFT_OK);
                assert_int_equal(got, SIFT_NOTHING);
            }
            assert_reset(&w);
        }
    }
    world_free(&w);
}

static void each_line_alone(void **state)
{
    (void)state;
    each_level(each_line_alone_at);
}

static void take_matches_model_at(sift_isa level)
{
    (void)level;
    world w;
    world_new(&w);
    uint8_t *out = malloc(w.size), *want = malloc(w.size);
    for (int round = 0; round < 6; round++) {
        execute(&w, round % 2 ? 300 : 5);
        for (size_t i = 0; i < NREGIONS; i++)
            for (size_t j = 0; j < lengths[i]; j++)
                want[w.first[i] + j] = sift_bucket(w.counters[i][j]);
        memset(out, 0xaa, w.size);
        assert_int_equal(sift_covmap_take(w.map, SIFT_DOMAIN_EDGES, out, w.size), SIFT_OK);
        assert_memory_equal(out, want, w.size);
        assert_reset(&w);
    }
    free(out);
    free(want);
    world_free(&w);
}

static void take_matches_model(void **state)
{
    (void)state;
    each_level(take_matches_model_at);
}

/* The mask of a line's counters that ran, for lines full and short, sparse and dense. */
static void nonzero_matches_model_at(sift_isa level)
{
    (void)level;
    uint8_t line[64];
    for (int round = 0; round < 2000; round++) {
        size_t len = round % 3 ? 64 : 1 + (size_t)(next_rand() % 64);
        unsigned density = (unsigned)(next_rand() % 65);
        uint64_t want = 0;
        for (size_t i = 0; i < 64; i++) {
            line[i] = next_rand() % 64 < density ? (uint8_t)(1 + next_rand() % 255) : 0;
            if (i < len && line[i]) want |= 1ull << i;
        }
        assert_true(sift_scan_nonzero(line, len) == want);
    }
}

static void nonzero_matches_model(void **state)
{
    (void)state;
    each_level(nonzero_matches_model_at);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pass_matches_model),
        cmocka_unit_test(each_line_alone),
        cmocka_unit_test(take_matches_model),
        cmocka_unit_test(nonzero_matches_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
