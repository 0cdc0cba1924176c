/* Tests of coverage maps: buckets, regions, take, reset, export. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sift/covmap.h"
#include "rt/cov/scan.h"
#include "support/twinmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void bucket_boundaries(void **state)
{
    (void)state;
    static const struct {
        uint8_t count, bucket;
    } cases[] = {
        {0, 0},   {1, 1},   {2, 2},   {3, 4},   {4, 8},    {7, 8},     {8, 16},
        {15, 16}, {16, 32}, {31, 32}, {32, 64}, {127, 64}, {128, 128}, {255, 128},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(sift_bucket(cases[i].count), cases[i].bucket);
    /* Every count falls in exactly one bucket. */
    for (int c = 1; c < 256; c++) {
        uint8_t b = sift_bucket((uint8_t)c);
        assert_true(b && !(b & (b - 1)));
    }
}

static void bad_arguments(void **state)
{
    (void)state;
    uint8_t counters[64], *p;
    sift_covmap *m = sift_covmap_new();
    assert_non_null(m);
    assert_int_equal(sift_covmap_alloc(NULL, SIFT_DOMAIN_EDGES, 64, &p, NULL), SIFT_EINVAL);
    assert_int_equal(sift_covmap_alloc(m, (sift_domain)3, 64, &p, NULL), SIFT_EINVAL);
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_EDGES, 0, &p, NULL), SIFT_EINVAL);
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_EDGES, SIFT_DOMAIN_MAX_LEN + 1, &p, NULL),
                     SIFT_EINVAL);
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, NULL, 64, NULL), SIFT_EINVAL);
    assert_int_equal(sift_covmap_attach(m, (sift_domain)-1, counters, 64, NULL), SIFT_EINVAL);
    assert_int_equal(sift_covmap_take(m, SIFT_DOMAIN_EDGES, NULL, 0), SIFT_EINVAL);
    assert_int_equal(sift_covmap_take(NULL, SIFT_DOMAIN_EDGES, counters, 64), SIFT_EINVAL);
    assert_int_equal(sift_covmap_reset(m, 0x10), SIFT_EINVAL);
    assert_int_equal(sift_covmap_size(NULL, SIFT_DOMAIN_EDGES), 0);
    size_t len;
    assert_int_equal(sift_covmap_export(NULL, SIFT_DOMAINS_ALL, counters, 64, &len), SIFT_EINVAL);
    sift_counters c;
    assert_int_equal(sift_covmap_counters(m, SIFT_DOMAIN_EDGES, 0, &c), SIFT_EINVAL);
    assert_string_equal(sift_strerror(SIFT_ESHAPE),
                        "domain sizes do not match (snapshot or export of another map's shape)");
    assert_string_equal(sift_strerror(12345), "unknown error");
    sift_covmap_free(m);
    sift_covmap_free(NULL);
}

static void regions_append_to_index_space(void **state)
{
    (void)state;
    uint8_t compiled[100] = {0};
    size_t first = 99;
    sift_covmap *m = sift_covmap_new();
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, compiled, 100, &first), SIFT_OK);
    assert_int_equal(first, 0);
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_EDGES, 30, NULL, &first), SIFT_OK);
    assert_int_equal(first, 100);
    assert_int_equal(sift_covmap_size(m, SIFT_DOMAIN_EDGES), 130);
    assert_int_equal(sift_covmap_size(m, SIFT_DOMAIN_CMP), 0);
    sift_counters c;
    assert_int_equal(sift_covmap_counters(m, SIFT_DOMAIN_EDGES, 110, &c), SIFT_OK);
    assert_int_equal(c.len, 30);
    /* Attached arrays have no dirty index to hand out. */
    assert_int_equal(sift_covmap_counters(m, SIFT_DOMAIN_EDGES, 5, &c), SIFT_EINVAL);
    sift_covmap_free(m);
}

static void take_reads_buckets_and_resets(void **state)
{
    (void)state;
    uint8_t compiled[200] = {0}, out[330];
    sift_covmap *m = sift_covmap_new();
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, compiled, 200, NULL), SIFT_OK);
    sift_counters c;
    size_t first;
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_EDGES, 130, NULL, &first), SIFT_OK);
    assert_int_equal(sift_covmap_counters(m, SIFT_DOMAIN_EDGES, first, &c), SIFT_OK);
    compiled[0] = 1;
    compiled[63] = 3;
    compiled[199] = 200; /* in the tail past the last whole line */
    for (int i = 0; i < 9; i++)
        sift_hit(&c, 129);
    sift_hit(&c, 0);
    assert_int_equal(sift_covmap_take(m, SIFT_DOMAIN_EDGES, out, 329), SIFT_ESPACE);
    memset(out, 0xee, sizeof out);
    assert_int_equal(sift_covmap_take(m, SIFT_DOMAIN_EDGES, out, sizeof out), SIFT_OK);
    for (size_t i = 0; i < 330; i++) {
        uint8_t want = i == 0 ? 1 : i == 63 ? 4 : i == 199 ? 128 : i == 200 ? 1 : i == 329 ? 16 : 0;
        assert_int_equal(out[i], want);
    }
    for (size_t i = 0; i < 200; i++)
        assert_int_equal(compiled[i], 0);
    for (size_t i = 0; i < 130; i++)
        assert_int_equal(c.counters[i], 0);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(c.dirty[i], 0);
    sift_covmap_free(m);
}

static void hit_saturates(void **state)
{
    (void)state;
    sift_covmap *m = sift_covmap_new();
    sift_counters c;
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_VALUES, 64, NULL, NULL), SIFT_OK);
    assert_int_equal(sift_covmap_counters(m, SIFT_DOMAIN_VALUES, 0, &c), SIFT_OK);
    for (int i = 0; i < 300; i++)
        sift_hit(&c, 7);
    assert_int_equal(c.counters[7], 255);
    assert_int_equal(sift_covmap_reset(m, SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES)), SIFT_OK);
    assert_int_equal(c.counters[7], 0);
    assert_int_equal(c.dirty[0], 0);
    sift_covmap_free(m);
}

typedef struct {
    size_t n;
    sift_domain domain[8];
    size_t index[8];
    uint8_t buckets[8];
} collected;

static void collect(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    collected *c = ctx;
    assert_true(c->n < 8);
    c->domain[c->n] = domain;
    c->index[c->n] = index;
    c->buckets[c->n++] = buckets;
}

static void export_lists_what_ran(void **state)
{
    (void)state;
    uint8_t compiled[70000] = {0}, buf[64];
    sift_covmap *m = sift_covmap_new();
    sift_counters cmp;
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, compiled, 70000, NULL), SIFT_OK);
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_CMP, 4096, NULL, NULL), SIFT_OK);
    assert_int_equal(sift_covmap_counters(m, SIFT_DOMAIN_CMP, 0, &cmp), SIFT_OK);
    compiled[5] = 2;
    compiled[69999] = 17;
    sift_hit(&cmp, 4095);
    size_t len = 0;
    assert_int_equal(sift_covmap_export(m, SIFT_DOMAINS_ALL, buf, 8, &len), SIFT_ESPACE);
    assert_true(len > 8 && len < 32);
    assert_int_equal(compiled[5], 2); /* untouched when the buffer is too small */
    assert_int_equal(sift_covmap_export(m, SIFT_DOMAINS_ALL, buf, sizeof buf, &len), SIFT_OK);
    assert_int_equal(compiled[5], 0);
    assert_int_equal(compiled[69999], 0);
    assert_int_equal(cmp.counters[4095], 0);

    size_t sizes[SIFT_DOMAIN_COUNT];
    assert_int_equal(sift_export_shape(buf, len, sizes), SIFT_OK);
    assert_int_equal(sizes[SIFT_DOMAIN_EDGES], 70000);
    assert_int_equal(sizes[SIFT_DOMAIN_CMP], 4096);
    assert_int_equal(sizes[SIFT_DOMAIN_VALUES], 0);
    collected got = {0};
    assert_int_equal(sift_export_foreach(buf, len, collect, &got), SIFT_OK);
    assert_int_equal(got.n, 3);
    assert_int_equal(got.index[0], 5);
    assert_int_equal(got.buckets[0], 2);
    assert_int_equal(got.index[1], 69999);
    assert_int_equal(got.buckets[1], 32);
    assert_int_equal(got.domain[2], SIFT_DOMAIN_CMP);
    assert_int_equal(got.index[2], 4095);
    sift_covmap_free(m);
}

static void ignore(void *ctx, sift_domain d, size_t i, uint8_t b)
{
    (void)ctx, (void)d, (void)i, (void)b;
}

static void malformed_exports_are_refused(void **state)
{
    (void)state;
    uint8_t compiled[128] = {0}, buf[64], bad[64];
    sift_covmap *m = sift_covmap_new();
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, compiled, 128, NULL), SIFT_OK);
    compiled[100] = 1;
    size_t len;
    assert_int_equal(sift_covmap_export(m, SIFT_DOMAINS_ALL, buf, sizeof buf, &len), SIFT_OK);
    assert_int_equal(sift_export_foreach(buf, len, ignore, NULL), SIFT_OK);
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(sift_export_foreach(buf, cut, ignore, NULL), SIFT_EFORMAT);
    memcpy(bad, buf, len);
    bad[0] = 'X';
    assert_int_equal(sift_export_foreach(bad, len, ignore, NULL), SIFT_EFORMAT);
    memcpy(bad, buf, len);
    bad[4] = 0x80; /* unknown domain */
    assert_int_equal(sift_export_foreach(bad, len, ignore, NULL), SIFT_EFORMAT);
    memcpy(bad, buf, len);
    bad[len - 3] = 3; /* two bucket bits in one entry */
    assert_int_equal(sift_export_foreach(bad, len, ignore, NULL), SIFT_EFORMAT);
    memcpy(bad, buf, len);
    bad[5] = 0x80 | 50; /* the domain shrinks below the entry's index */
    bad[6] = 0;
    assert_int_equal(sift_export_foreach(bad, len, ignore, NULL), SIFT_EFORMAT);
    assert_int_equal(sift_export_foreach(NULL, len, ignore, NULL), SIFT_EINVAL);
    sift_covmap_free(m);
}

static void function_index_arguments(void **state)
{
    (void)state;
    static const uint32_t starts[] = {0, 10, 10, 99}, backwards[] = {0, 20, 10},
                          beyond[] = {0, 101}, late[] = {5, 10};
    /* Where the region starts, for each case: its first counter, the allocated region's, or one
     * past its first. */
    enum { FIRST, ALLOCATED, FIRST_PLUS_1 };
    /* Only an attached region, from its first counter, and starts that fit it in order; the
     * good case, then the same again (already indexed). */
    static const struct {
        const char *name;
        bool no_map, no_dirty;
        sift_domain domain;
        int from;
        const uint32_t *starts;
        size_t n;
        int want;
    } cases[] = {
        {"no map", true, false, SIFT_DOMAIN_EDGES, FIRST, starts, 4, SIFT_EINVAL},
        {"no marks", false, true, SIFT_DOMAIN_EDGES, FIRST, starts, 4, SIFT_EINVAL},
        {"no functions", false, false, SIFT_DOMAIN_EDGES, FIRST, starts, 0, SIFT_EINVAL},
        {"allocated region", false, false, SIFT_DOMAIN_EDGES, ALLOCATED, starts, 4, SIFT_EINVAL},
        {"not its first", false, false, SIFT_DOMAIN_EDGES, FIRST_PLUS_1, starts, 4, SIFT_EINVAL},
        {"other domain", false, false, SIFT_DOMAIN_CMP, FIRST, starts, 4, SIFT_EINVAL},
        {"late start", false, false, SIFT_DOMAIN_EDGES, FIRST, late, 2, SIFT_EINVAL},
        {"backwards", false, false, SIFT_DOMAIN_EDGES, FIRST, backwards, 3, SIFT_EINVAL},
        {"beyond", false, false, SIFT_DOMAIN_EDGES, FIRST, beyond, 2, SIFT_EINVAL},
        {"good", false, false, SIFT_DOMAIN_EDGES, FIRST, starts, 4, SIFT_OK},
        {"twice", false, false, SIFT_DOMAIN_EDGES, FIRST, starts, 4, SIFT_EINVAL},
    };
    uint8_t compiled[100] = {0}, dirty[4] = {0};
    size_t first, allocated;
    sift_covmap *m = sift_covmap_new();
    assert_int_equal(sift_covmap_alloc(m, SIFT_DOMAIN_EDGES, 64, NULL, &allocated), SIFT_OK);
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, compiled, 100, &first), SIFT_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t from = cases[i].from == ALLOCATED      ? allocated
                      : cases[i].from == FIRST_PLUS_1 ? first + 1
                                                      : first;
        int rc = sift_covmap_index_functions(cases[i].no_map ? NULL : m, cases[i].domain, from,
                                             cases[i].no_dirty ? NULL : dirty, cases[i].starts,
                                             cases[i].n);
        if (rc != cases[i].want)
            fail_msg("case %s: got %d, want %d", cases[i].name, rc, cases[i].want);
    }
    /* Counters are read through the marks: function 3 (99) is marked, function 0 is not. */
    compiled[5] = 1;
    compiled[99] = 2;
    dirty[3] = 1;
    uint8_t out[164];
    assert_int_equal(sift_covmap_take(m, SIFT_DOMAIN_EDGES, out, sizeof out), SIFT_OK);
    assert_int_equal(out[first + 99], 2);
    assert_int_equal(out[first + 5], 0);
    assert_int_equal(compiled[5], 1);
    assert_int_equal(dirty[3], 0);
    sift_covmap_free(m);
}

/* Take and export through a function index give what the full scan gives, and leave the
 * counters and marks clear: every length around a line, functions of 0 and 1 counters, at the
 * start and at the end, sparse executions and one that runs everything. */
static void function_index_reads_like_a_full_scan(void **state)
{
    (void)state;
    static const size_t lens[] = {1, 2, 63, 64, 65, 127, 129, 1000, 5003};
    uint8_t *a = malloc(5003), *b = malloc(5003);
    size_t cap = (size_t)16 * 5003, alen, blen;
    uint8_t *ea = malloc(cap), *eb = malloc(cap);
    assert_true(a && b && ea && eb);
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]) * 2; l++) {
        sift_scan_limit_isa(l % 2 ? SIFT_ISA_SCALAR : SIFT_ISA_AVX2);
        for (unsigned seed = 1; seed <= 8; seed++) {
            sift_test_twin t;
            assert_true(sift_test_twin_new(&t, lens[l / 2], seed));
            for (int round = 0; round < 6; round++) {
                sift_test_twin_run(&t, round == 5);
                assert_int_equal(sift_covmap_take(t.plain_map, SIFT_DOMAIN_EDGES, a, t.len),
                                 SIFT_OK);
                assert_int_equal(sift_covmap_take(t.indexed_map, SIFT_DOMAIN_EDGES, b, t.len),
                                 SIFT_OK);
                assert_memory_equal(a, b, t.len);
                assert_true(sift_test_twin_clean(&t));

                sift_test_twin_run(&t, round == 4);
                /* Too small a buffer leaves counters and marks for the next try. */
                assert_int_equal(sift_covmap_export(t.indexed_map, SIFT_DOMAINS_ALL, eb, 4, &blen),
                                 SIFT_ESPACE);
                assert_int_equal(sift_covmap_export(t.plain_map, SIFT_DOMAINS_ALL, ea, cap, &alen),
                                 SIFT_OK);
                assert_int_equal(
                    sift_covmap_export(t.indexed_map, SIFT_DOMAINS_ALL, eb, cap, &blen), SIFT_OK);
                assert_int_equal(alen, blen);
                assert_memory_equal(ea, eb, alen);
                assert_true(sift_test_twin_clean(&t));
            }
            sift_test_twin_free(&t);
        }
    }
    sift_scan_limit_isa(SIFT_ISA_AVX2);
    free(a);
    free(b);
    free(ea);
    free(eb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bucket_boundaries),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(regions_append_to_index_space),
        cmocka_unit_test(take_reads_buckets_and_resets),
        cmocka_unit_test(hit_saturates),
        cmocka_unit_test(export_lists_what_ran),
        cmocka_unit_test(malformed_exports_are_refused),
        cmocka_unit_test(function_index_arguments),
        cmocka_unit_test(function_index_reads_like_a_full_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
