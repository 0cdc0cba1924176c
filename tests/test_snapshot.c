/* Tests of snapshots: novelty, advancing, import, shared claims, shapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sift/snapshot.h"
#include "rt/cov/scan.h"
#include "support/twinmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* A map with compiled-style counters (SIMD scan) and allocated ones (dirty index). */
typedef struct {
    sift_covmap *map;
    uint8_t compiled[1000];
    sift_counters cmp;
    sift_snapshot *snap;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->map = sift_covmap_new();
    assert_int_equal(sift_covmap_attach(f->map, SIFT_DOMAIN_EDGES, f->compiled, 1000, NULL),
                     SIFT_OK);
    assert_int_equal(sift_covmap_alloc(f->map, SIFT_DOMAIN_CMP, 4096, NULL, NULL), SIFT_OK);
    assert_int_equal(sift_covmap_counters(f->map, SIFT_DOMAIN_CMP, 0, &f->cmp), SIFT_OK);
    assert_int_equal(sift_snapshot_for_map(&f->snap, f->map, 1), SIFT_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sift_snapshot_free(f->snap);
    sift_covmap_free(f->map);
    free(f);
    return 0;
}

static sift_novelty advance(fixture *f, size_t *new_features)
{
    sift_novelty n = SIFT_NEW_EDGE + 1;
    assert_int_equal(
        sift_snapshot_check_and_advance(f->snap, f->map, SIFT_DOMAINS_ALL, &n, new_features),
        SIFT_OK);
    return n;
}

static sift_novelty query(fixture *f)
{
    sift_novelty n = SIFT_NEW_EDGE + 1;
    assert_int_equal(sift_snapshot_has_new(f->snap, f->map, SIFT_DOMAINS_ALL, &n), SIFT_OK);
    return n;
}

static void new_edge_then_nothing_then_new_count(void **state)
{
    fixture *f = *state;
    size_t nf;
    f->compiled[999] = 1; /* tail beyond the last whole line */
    f->compiled[10] = 1;
    assert_int_equal(query(f), SIFT_NEW_EDGE);
    assert_int_equal(query(f), SIFT_NEW_EDGE); /* a query changes nothing */
    assert_int_equal(advance(f, &nf), SIFT_NEW_EDGE);
    assert_int_equal(nf, 2);
    assert_int_equal(f->compiled[10], 0);
    assert_int_equal(f->compiled[999], 0);

    f->compiled[10] = 1; /* the same execution again */
    assert_int_equal(query(f), SIFT_NOTHING);
    assert_int_equal(advance(f, &nf), SIFT_NOTHING);
    assert_int_equal(nf, 0);

    f->compiled[10] = 5; /* the same edge, another hit-count bucket */
    assert_int_equal(query(f), SIFT_NEW_COUNT);
    assert_int_equal(advance(f, &nf), SIFT_NEW_COUNT);
    assert_int_equal(nf, 1);
    f->compiled[10] = 6; /* same bucket as 5 */
    assert_int_equal(advance(f, NULL), SIFT_NOTHING);
    assert_int_equal(advance(f, NULL), SIFT_NOTHING); /* nothing ran */
}

static void dirty_lines_are_judged(void **state)
{
    fixture *f = *state;
    sift_hit(&f->cmp, 4000);
    assert_int_equal(advance(f, NULL), SIFT_NEW_EDGE);
    assert_int_equal(f->cmp.counters[4000], 0);
    assert_int_equal(f->cmp.dirty[4000 >> SIFT_DIRTY_SHIFT], 0);
    sift_hit(&f->cmp, 4000);
    sift_hit(&f->cmp, 4000);
    assert_int_equal(advance(f, NULL), SIFT_NEW_COUNT);
    sift_hit(&f->cmp, 4001);
    sift_hit(&f->cmp, 4000);
    assert_int_equal(advance(f, NULL), SIFT_NEW_EDGE);
    size_t edges, features;
    assert_int_equal(sift_snapshot_count(f->snap, SIFT_DOMAINS_ALL, &edges, &features), SIFT_OK);
    assert_int_equal(edges, 2);
    assert_int_equal(features, 3);
}

static void mask_selects_domains(void **state)
{
    fixture *f = *state;
    sift_novelty n;
    sift_hit(&f->cmp, 1);
    assert_int_equal(sift_snapshot_check_and_advance(f->snap, f->map,
                                                     SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &n, NULL),
                     SIFT_OK);
    assert_int_equal(n, SIFT_NOTHING);
    assert_int_equal(f->cmp.counters[1], 1); /* another domain's counters are left alone */
    assert_int_equal(advance(f, NULL), SIFT_NEW_EDGE);
}

static void every_position_of_a_long_map(void **state)
{
    (void)state;
    enum { N = 64 * 1024 + 37 };
    uint8_t *compiled = calloc(N, 1);
    sift_covmap *m = sift_covmap_new();
    sift_snapshot *s;
    assert_int_equal(sift_covmap_attach(m, SIFT_DOMAIN_EDGES, compiled + 1, N - 1, NULL),
                     SIFT_OK); /* unaligned on purpose */
    assert_int_equal(sift_snapshot_for_map(&s, m, 2), SIFT_OK);
    assert_int_equal(sift_snapshot_capacity(s, SIFT_DOMAIN_EDGES), 2 * (N - 1));
    for (size_t i = 1; i < N; i += 97) {
        sift_novelty n;
        compiled[i] = (uint8_t)(i | 1);
        assert_int_equal(sift_snapshot_check_and_advance(s, m, SIFT_DOMAINS_ALL, &n, NULL),
                         SIFT_OK);
        assert_int_equal(n, SIFT_NEW_EDGE);
        assert_int_equal(compiled[i], 0);
    }
    sift_snapshot_free(s);
    sift_covmap_free(m);
    free(compiled);
}

static void export_import_round_trip(void **state)
{
    fixture *f = *state;
    uint8_t buf[256];
    size_t len;
    sift_snapshot *other;
    assert_int_equal(sift_snapshot_for_map(&other, f->map, 1), SIFT_OK);
    f->compiled[3] = 1;
    f->compiled[700] = 40;
    sift_hit(&f->cmp, 9);
    assert_int_equal(sift_covmap_export(f->map, SIFT_DOMAINS_ALL, buf, sizeof buf, &len), SIFT_OK);
    sift_novelty n;
    assert_int_equal(sift_snapshot_import(other, buf, len, &n), SIFT_OK);
    assert_int_equal(n, SIFT_NEW_EDGE);
    assert_int_equal(sift_snapshot_import(other, buf, len, &n), SIFT_OK);
    assert_int_equal(n, SIFT_NOTHING);
    size_t edges, features;
    assert_int_equal(sift_snapshot_count(other, SIFT_DOMAINS_ALL, &edges, &features), SIFT_OK);
    assert_int_equal(edges, 3);
    assert_int_equal(features, 3);

    /* What was imported is no longer new to the importer. */
    f->compiled[700] = 33;
    assert_int_equal(sift_snapshot_has_new(other, f->map, SIFT_DOMAINS_ALL, &n), SIFT_OK);
    assert_int_equal(n, SIFT_NOTHING);
    f->compiled[700] = 0;

    buf[len - 3] ^= 0x7f; /* corrupt a bucket: nothing may be folded in */
    sift_snapshot *third;
    assert_int_equal(sift_snapshot_for_map(&third, f->map, 1), SIFT_OK);
    assert_int_equal(sift_snapshot_import(third, buf, len, &n), SIFT_EFORMAT);
    assert_int_equal(sift_snapshot_count(third, SIFT_DOMAINS_ALL, &edges, NULL), SIFT_OK);
    assert_int_equal(edges, 0);
    sift_snapshot_free(third);
    sift_snapshot_free(other);
}

typedef struct {
    size_t n;
    size_t index[8];
    uint8_t buckets[8];
    sift_domain domain[8];
} listed;

static void list_entry(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    listed *l = ctx;
    assert_true(l->n < 8);
    l->domain[l->n] = domain;
    l->index[l->n] = index;
    l->buckets[l->n++] = buckets;
}

/* The one-pass list judges as check_and_advance does and lists what an export would hold. */
static void check_and_list_matches_export(void **state)
{
    fixture *f = *state;
    f->compiled[3] = 1;
    f->compiled[700] = 40;
    sift_hit(&f->cmp, 9);
    sift_hit(&f->cmp, 9);
    listed from_export = {0}, from_pass = {0};
    uint8_t buf[256];
    size_t len;
    assert_int_equal(sift_covmap_export(f->map, SIFT_DOMAINS_ALL, buf, sizeof buf, &len), SIFT_OK);
    assert_int_equal(sift_export_foreach(buf, len, list_entry, &from_export), SIFT_OK);
    f->compiled[3] = 1;
    f->compiled[700] = 40;
    sift_hit(&f->cmp, 9);
    sift_hit(&f->cmp, 9);
    sift_novelty n = SIFT_NOTHING;
    assert_int_equal(
        sift_snapshot_check_and_list(f->snap, f->map, SIFT_DOMAINS_ALL, &n, list_entry, &from_pass),
        SIFT_OK);
    assert_int_equal(n, SIFT_NEW_EDGE);
    assert_int_equal(from_pass.n, 3);
    assert_memory_equal(&from_pass, &from_export, sizeof from_pass);
    /* Folded in and reset: the same execution again is nothing new, and still listed. */
    assert_int_equal(query(f), SIFT_NOTHING);
    f->compiled[700] = 40;
    from_pass.n = 0;
    assert_int_equal(
        sift_snapshot_check_and_list(f->snap, f->map, SIFT_DOMAINS_ALL, &n, list_entry, &from_pass),
        SIFT_OK);
    assert_int_equal(n, SIFT_NOTHING);
    assert_int_equal(from_pass.n, 1);
    assert_int_equal(from_pass.index[0], 700);
    /* A higher bucket of a known counter is a new count. */
    f->compiled[700] = 200;
    assert_int_equal(
        sift_snapshot_check_and_list(f->snap, f->map, SIFT_DOMAINS_ALL, &n, list_entry, &from_pass),
        SIFT_OK);
    assert_int_equal(n, SIFT_NEW_COUNT);
    assert_int_equal(
        sift_snapshot_check_and_list(f->snap, f->map, SIFT_DOMAINS_ALL, &n, NULL, NULL),
        SIFT_EINVAL);
}

/* The bucket bits each counter was listed with, by index: 0 for none. */
static void mark_entry(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    uint8_t *marks = ctx;
    assert_int_equal(domain, SIFT_DOMAIN_EDGES);
    assert_true(index < 1000);
    assert_int_equal(marks[index], 0);
    marks[index] = buckets;
}

static void set_counters(fixture *f)
{
    /* Lone counters at the ends of words and lines, a full line, the short last line. */
    static const size_t lone[] = {0, 7, 8, 63, 200, 255, 960, 967, 968, 999};
    for (size_t i = 0; i < sizeof lone / sizeof lone[0]; i++)
        f->compiled[lone[i]] = (uint8_t)(3 * i + 1);
    for (size_t i = 64; i < 128; i++)
        f->compiled[i] = (uint8_t)i;
}

/* Every counter that ran is listed once, with what an export says of it, wherever it lies in
 * its line, and every counter is reset. */
static void check_and_list_lists_every_position(void **state)
{
    fixture *f = *state;
    uint8_t from_export[1000] = {0}, from_pass[1000] = {0}, buf[4096];
    size_t len;
    unsigned edges = SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES);
    set_counters(f);
    assert_int_equal(sift_covmap_export(f->map, edges, buf, sizeof buf, &len), SIFT_OK);
    assert_int_equal(sift_export_foreach(buf, len, mark_entry, from_export), SIFT_OK);
    set_counters(f);
    sift_novelty n = SIFT_NOTHING;
    assert_int_equal(
        sift_snapshot_check_and_list(f->snap, f->map, edges, &n, mark_entry, from_pass), SIFT_OK);
    assert_int_equal(n, SIFT_NEW_EDGE);
    assert_memory_equal(from_pass, from_export, sizeof from_pass);
    size_t listed_count = 0;
    for (size_t i = 0; i < 1000; i++) {
        listed_count += from_pass[i] != 0;
        assert_int_equal(f->compiled[i], 0);
    }
    assert_int_equal(listed_count, 10 + 64);
}

static void shapes_must_match(void **state)
{
    fixture *f = *state;
    sift_novelty n;
    sift_snapshot *small;
    size_t cap[SIFT_DOMAIN_COUNT] = {999, 4096, 0};
    assert_int_equal(sift_snapshot_create(&small, cap, NULL, 0), SIFT_OK);
    assert_int_equal(sift_snapshot_check_and_advance(small, f->map, SIFT_DOMAINS_ALL, &n, NULL),
                     SIFT_ESHAPE);
    assert_int_equal(sift_snapshot_has_new(small, f->map, SIFT_DOMAINS_ALL, &n), SIFT_ESHAPE);
    uint8_t buf[64];
    size_t len;
    f->compiled[1] = 1;
    assert_int_equal(sift_covmap_export(f->map, SIFT_DOMAINS_ALL, buf, sizeof buf, &len), SIFT_OK);
    assert_int_equal(sift_snapshot_import(small, buf, len, &n), SIFT_ESHAPE);
    sift_snapshot_free(small);

    size_t huge[SIFT_DOMAIN_COUNT] = {SIFT_DOMAIN_MAX_LEN + 1, 0, 0};
    assert_int_equal(sift_snapshot_bytes(huge), 0);
    assert_int_equal(sift_snapshot_create(&small, huge, NULL, 0), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_create(NULL, cap, NULL, 0), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_has_new(NULL, f->map, SIFT_DOMAINS_ALL, &n), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_has_new(f->snap, NULL, SIFT_DOMAINS_ALL, &n), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_for_map(&small, NULL, 1), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_import(f->snap, NULL, 0, &n), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_count(NULL, SIFT_DOMAINS_ALL, NULL, NULL), SIFT_EINVAL);
}

static void shared_memory_claims_once(void **state)
{
    fixture *f = *state;
    size_t cap[SIFT_DOMAIN_COUNT] = {1000, 4096, 0};
    size_t bytes = sift_snapshot_bytes(cap);
    void *shm = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(shm != MAP_FAILED);
    sift_snapshot *a, *b;
    assert_int_equal(sift_snapshot_create(&a, cap, shm, bytes - 1), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_create(&a, cap, (char *)shm + 8, bytes), SIFT_EINVAL);
    assert_int_equal(sift_snapshot_create(&a, cap, shm, bytes), SIFT_OK);
    size_t other_cap[SIFT_DOMAIN_COUNT] = {1000, 2048, 0};
    assert_int_equal(sift_snapshot_create(&b, other_cap, shm, bytes), SIFT_ESHAPE);

    /* Two processes race for the same 200 new counters: each must be claimed exactly once. */
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        sift_snapshot *mine;
        size_t nf = 0;
        if (sift_snapshot_create(&mine, cap, shm, bytes) != SIFT_OK) _exit(2);
        for (int i = 0; i < 200; i++) {
            size_t one = 0;
            f->compiled[(size_t)i * 5] = 1;
            sift_snapshot_check_and_advance(mine, f->map, SIFT_DOMAINS_ALL, NULL, &one);
            nf += one;
        }
        _exit(write(pipefd[1], &nf, sizeof nf) == sizeof nf ? 0 : 3);
    }
    size_t mine = 0, theirs = 0;
    for (int i = 0; i < 200; i++) {
        size_t one = 0;
        f->compiled[(size_t)i * 5] = 1;
        assert_int_equal(sift_snapshot_check_and_advance(a, f->map, SIFT_DOMAINS_ALL, NULL, &one),
                         SIFT_OK);
        mine += one;
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(read(pipefd[0], &theirs, sizeof theirs), sizeof theirs);
    assert_int_equal(mine + theirs, 200);
    size_t edges;
    assert_int_equal(sift_snapshot_count(a, SIFT_DOMAINS_ALL, &edges, NULL), SIFT_OK);
    assert_int_equal(edges, 200);
    close(pipefd[0]);
    close(pipefd[1]);
    sift_snapshot_free(a);
    munmap(shm, bytes);
}

static sift_novelty twin_query(sift_snapshot *snap, sift_covmap *map)
{
    sift_novelty n = SIFT_NEW_EDGE + 1;
    assert_int_equal(sift_snapshot_has_new(snap, map, SIFT_DOMAINS_ALL, &n), SIFT_OK);
    return n;
}

static sift_novelty twin_advance(sift_snapshot *snap, sift_covmap *map, size_t *features)
{
    sift_novelty n = SIFT_NEW_EDGE + 1;
    assert_int_equal(sift_snapshot_check_and_advance(snap, map, SIFT_DOMAINS_ALL, &n, features),
                     SIFT_OK);
    return n;
}

/* A pass over a function index judges every execution as the full scan does, at each vector
 * level: the query (which may stop early and must leave the marks) and the advancing pass. */
static void function_index_judges_like_a_full_scan(void **state)
{
    (void)state;
    static const size_t lens[] = {1, 64, 65, 1000, 5003};
    for (int level = SIFT_ISA_SCALAR; level <= SIFT_ISA_AVX2; level++) {
        sift_scan_limit_isa((sift_isa)level);
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
            for (unsigned seed = 1; seed <= 6; seed++) {
                sift_test_twin t;
                sift_snapshot *sa, *sb;
                assert_true(sift_test_twin_new(&t, lens[l], seed));
                assert_int_equal(sift_snapshot_for_map(&sa, t.plain_map, 1), SIFT_OK);
                assert_int_equal(sift_snapshot_for_map(&sb, t.indexed_map, 1), SIFT_OK);
                int news = 0;
                for (int round = 0; round < 12; round++) {
                    sift_test_twin_run(&t, round == 11);
                    assert_int_equal(twin_query(sa, t.plain_map), twin_query(sb, t.indexed_map));
                    size_t fa, fb;
                    sift_novelty na = twin_advance(sa, t.plain_map, &fa);
                    assert_int_equal(na, twin_advance(sb, t.indexed_map, &fb));
                    assert_int_equal(fa, fb);
                    assert_true(sift_test_twin_clean(&t));
                    news += na != SIFT_NOTHING;
                }
                assert_true(news > 0);
                size_t ea, eb, fa, fb;
                assert_int_equal(sift_snapshot_count(sa, SIFT_DOMAINS_ALL, &ea, &fa), SIFT_OK);
                assert_int_equal(sift_snapshot_count(sb, SIFT_DOMAINS_ALL, &eb, &fb), SIFT_OK);
                assert_int_equal(ea, eb);
                assert_int_equal(fa, fb);
                sift_snapshot_free(sa);
                sift_snapshot_free(sb);
                sift_test_twin_free(&t);
            }
        }
    }
    sift_scan_limit_isa(SIFT_ISA_AVX2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_edge_then_nothing_then_new_count, setup, teardown),
        cmocka_unit_test_setup_teardown(dirty_lines_are_judged, setup, teardown),
        cmocka_unit_test_setup_teardown(mask_selects_domains, setup, teardown),
        cmocka_unit_test(every_position_of_a_long_map),
        cmocka_unit_test_setup_teardown(export_import_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(check_and_list_matches_export, setup, teardown),
        cmocka_unit_test_setup_teardown(check_and_list_lists_every_position, setup, teardown),
        cmocka_unit_test_setup_teardown(shapes_must_match, setup, teardown),
        cmocka_unit_test_setup_teardown(shared_memory_claims_once, setup, teardown),
        cmocka_unit_test(function_index_judges_like_a_full_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
