/* The edge callbacks: instrumented shared objects loaded into this process register their
 * counters, move them when they run, and a snapshot sees the new edges. */
#define _GNU_SOURCE
#include "rt/rt.h"
#include "sift/snapshot.h"
#include "support/harness.h"

#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *end);
void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end);
void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop);
void __sanitizer_cov_trace_pc_guard(uint32_t *guard);
void __sift_fn_dirty_init(uint8_t *start, uint8_t *stop);

#define EDGES      SIFT_DOMAIN_EDGES
#define EDGES_MASK SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES)
#define FIXTURE    SIFT_SOURCE_DIR "/tests/fixtures/branches.c"
#define FUNCTIONS  SIFT_SOURCE_DIR "/tests/fixtures/functions.c"

typedef int (*branch_fn)(const unsigned char *data, size_t len);

typedef struct {
    char *dir;
    /* The fixture built with sift-cc, and with trace-pc-guard. */
    char inline_so[PATH_MAX], guard_so[PATH_MAX];
    /* functions.c with and without a function index. */
    char indexed_so[PATH_MAX], scanned_so[PATH_MAX];
} fixture;

/* Builds DIR/NAME, its path written into OUT, with the command ARGV_TAIL and "-o OUT"; false
 * when that fails. */
static bool build(const char *dir, const char *name, const char *const *argv_tail,
                  char out[PATH_MAX])
{
    snprintf(out, PATH_MAX, "%s/%s", dir, name);
    const char *argv[16];
    size_t n = 0;
    for (; argv_tail[n]; n++)
        argv[n] = argv_tail[n];
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
    sift_test_proc p;
    sift_test_run(&p, argv, NULL);
    if (p.status != 0) print_error("building %s failed (%d): %s\n", name, p.status, p.err);
    return p.status == 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    *state = f;
    if (!f || !(f->dir = sift_test_scratch())) return -1;
    const char *sift_cc[] = {SIFT_BUILD_DIR "/bin/sift-cc",
                             SIFT_TEST_SAN,
                             "-fsanitize=fuzzer-no-link",
                             "-shared",
                             "-fPIC",
                             FIXTURE,
                             NULL};
    /* FIXTURE is one path joined from two literals, not a missing comma. */
    /* NOLINTBEGIN(bugprone-suspicious-missing-comma) */
    const char *guard[] = {"clang",   SIFT_TEST_SAN, "-fsanitize-coverage=trace-pc-guard",
                           "-shared", "-fPIC",       FIXTURE,
                           NULL};
    /* NOLINTEND(bugprone-suspicious-missing-comma) */
    /* sift-instrument adds the function index where it adds value hooks; two objects, so that
     * the linker lays out their dirty bytes and pc tables alike. */
    const char *indexed[] = {SIFT_BUILD_DIR "/bin/sift-cc",
                             SIFT_TEST_SAN,
                             "-O2",
                             "-shared",
                             "-fPIC",
                             FUNCTIONS,
                             FIXTURE,
                             NULL};
    const char *scanned[] = {SIFT_BUILD_DIR "/bin/sift-cc",
                             SIFT_TEST_SAN,
                             "-O2",
                             "-shared",
                             "-fPIC",
                             "-fno-sift-values",
                             FUNCTIONS,
                             FIXTURE,
                             NULL};
    return build(f->dir, "inline.so", sift_cc, f->inline_so) &&
                   build(f->dir, "guard.so", guard, f->guard_so) &&
                   build(f->dir, "indexed.so", indexed, f->indexed_so) &&
                   build(f->dir, "scanned.so", scanned, f->scanned_so)
               ? 0
               : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) sift_test_rmtree(f->dir);
    free(f);
    return 0;
}

/* Modules stay loaded: the runtime keeps their counters for the life of the process. */
static branch_fn load_fn(const char *path, const char *name)
{
    void *handle = dlopen(path, RTLD_NOW);
    if (!handle) fail_msg("dlopen %s: %s", path, dlerror());
    branch_fn fn = (branch_fn)(uintptr_t)dlsym(handle, name);
    assert_non_null(fn);
    return fn;
}

static branch_fn load(const char *path)
{
    return load_fn(path, "sift_fixture_branch");
}

static sift_novelty run_and_check(sift_snapshot *snap, branch_fn fn, const char *input)
{
    fn((const unsigned char *)input, strlen(input));
    sift_novelty novelty;
    assert_int_equal(
        sift_snapshot_check_and_advance(snap, sift_rt()->map, EDGES_MASK, &novelty, NULL), SIFT_OK);
    return novelty;
}

/* A, A again, then B's other branch: new, nothing, new. */
static void check_novelty(branch_fn fn)
{
    sift_rt_state *rt = sift_rt();
    sift_snapshot *snap;
    assert_int_equal(sift_snapshot_for_map(&snap, rt->map, 1), SIFT_OK);
    assert_int_equal(sift_covmap_reset(rt->map, EDGES_MASK), SIFT_OK);
    assert_int_equal(run_and_check(snap, fn, "A"), SIFT_NEW_EDGE);
    assert_int_equal(run_and_check(snap, fn, "A"), SIFT_NOTHING);
    assert_int_equal(run_and_check(snap, fn, "B"), SIFT_NEW_EDGE);
    assert_int_equal(run_and_check(snap, fn, "B"), SIFT_NOTHING);
    sift_snapshot_free(snap);
}

static bool any_set(const uint8_t *counters, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (counters[i]) return true;
    return false;
}

static void test_state(void **state)
{
    (void)state;
    sift_rt_state *rt = sift_rt();
    assert_non_null(rt);
    assert_ptr_equal(sift_rt(), rt);
    assert_int_equal(sift_covmap_size(rt->map, SIFT_DOMAIN_CMP), SIFT_RT_CMP_COUNTERS);
    assert_int_equal(sift_covmap_size(rt->map, SIFT_DOMAIN_VALUES), SIFT_RT_VALUES_COUNTERS);
    assert_int_equal(rt->cmp.len, SIFT_RT_CMP_COUNTERS);
    assert_int_equal(rt->values.len, SIFT_RT_VALUES_COUNTERS);
    assert_non_null(rt->cmp.dirty);
    assert_non_null(rt->values.dirty);
}

static void test_inline_module(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = sift_rt();
    size_t before = sift_covmap_size(rt->map, EDGES), modules = rt->npcs;
    branch_fn fn = load(f->inline_so);
    size_t after = sift_covmap_size(rt->map, EDGES);
    assert_true(after > before);
    assert_int_equal(rt->npcs, modules + 1);
    const sift_rt_pcs *m = &rt->pcs[modules];
    assert_int_equal(m->first, before);
    assert_int_equal(m->len, after - before);
    /* The pc table came with the counters: the first entry opens a function. */
    assert_non_null(m->pcs);
    assert_true(m->pcs[0] != 0);
    assert_int_equal(m->pcs[1] & 1, 1);

    sift_covmap_reset(rt->map, EDGES_MASK);
    assert_false(any_set(m->counters, m->len));
    fn((const unsigned char *)"A", 1);
    assert_true(any_set(m->counters, m->len));
    check_novelty(fn);
}

static void test_same_range_once(void **state)
{
    (void)state;
    static uint8_t counters[100];
    static uintptr_t pcs[2 * 100], short_pcs[4];
    sift_rt_state *rt = sift_rt();
    size_t before = sift_covmap_size(rt->map, EDGES), modules = rt->npcs;

    __sanitizer_cov_8bit_counters_init(counters, counters + 100);
    __sanitizer_cov_8bit_counters_init(counters, counters + 100);
    __sanitizer_cov_8bit_counters_init(counters + 10, counters + 20);
    assert_int_equal(sift_covmap_size(rt->map, EDGES), before + 100);
    assert_int_equal(rt->npcs, modules + 1);

    /* A table that does not match the module's counters is not taken for its. */
    __sanitizer_cov_pcs_init(short_pcs, short_pcs + 4);
    assert_null(rt->pcs[modules].pcs);
    __sanitizer_cov_pcs_init(pcs, pcs + 200);
    __sanitizer_cov_pcs_init(pcs, pcs + 200);
    assert_ptr_equal(rt->pcs[modules].pcs, pcs);
    assert_int_equal(rt->npcs, modules + 1);

    /* A module loaded again by the loader registers its counters again: still once. */
    const sift_rt_pcs *first = &rt->pcs[0];
    __sanitizer_cov_8bit_counters_init((uint8_t *)first->counters,
                                       (uint8_t *)first->counters + first->len);
    assert_int_equal(sift_covmap_size(rt->map, EDGES), before + 100);
    assert_int_equal(rt->npcs, modules + 1);

    /* Hits on attached counters reach the map. */
    sift_snapshot *snap;
    assert_int_equal(sift_snapshot_for_map(&snap, rt->map, 1), SIFT_OK);
    sift_covmap_reset(rt->map, EDGES_MASK);
    counters[42]++;
    sift_novelty novelty;
    size_t features;
    assert_int_equal(
        sift_snapshot_check_and_advance(snap, rt->map, EDGES_MASK, &novelty, &features), SIFT_OK);
    assert_int_equal(novelty, SIFT_NEW_EDGE);
    assert_int_equal(features, 1);
    sift_snapshot_free(snap);
}

/* Whether some function of M ran (a counter of its is set) with its entry counter at 0: the
 * wrapped entry that makes the entry counter useless as a mark. */
static bool wrapped_entry(const sift_rt_pcs *m, const uint8_t *counters)
{
    bool entry_zero = false;
    for (size_t i = 0; i < m->len; i++) {
        if (m->pcs[2 * i + 1] & 1)
            entry_zero = counters[i] == 0;
        else if (entry_zero && counters[i])
            return true;
    }
    return false;
}

/* A module built by sift-cc gets a function index, and the pass through it finds what the
 * counters hold: the same buckets as the same code built without one, which is scanned. */
static void test_function_index(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = sift_rt();
    size_t modules = rt->npcs;
    branch_fn indexed = load_fn(f->indexed_so, "sift_fixture_functions");
    branch_fn scanned = load_fn(f->scanned_so, "sift_fixture_functions");
    assert_int_equal(rt->npcs, modules + 2);
    const sift_rt_pcs *a = &rt->pcs[modules], *b = &rt->pcs[modules + 1];
    assert_non_null(a->fn_dirty);
    assert_null(b->fn_dirty);
    assert_int_equal(a->len, b->len);
    size_t nfns = 0;
    for (size_t i = 0; i < a->len; i++)
        nfns += a->pcs[2 * i + 1] & 1;
    if (nfns < 6) fail_msg("%zu functions flagged in the pc table, expected 6 or more", nfns);

    size_t size = sift_covmap_size(rt->map, EDGES);
    uint8_t *out = malloc(size), *raw = malloc(a->len);
    assert_true(out && raw);
    static const char *const inputs[] = {"", "t", "s", "ttt", "l", "c", "bbbb", "tslcbx", "c"};
    bool wrapped = false;
    for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
        const unsigned char *in = (const unsigned char *)inputs[k];
        assert_int_equal(sift_covmap_reset(rt->map, EDGES_MASK), SIFT_OK);
        assert_int_equal(indexed(in, strlen(inputs[k])), scanned(in, strlen(inputs[k])));
        memcpy(raw, a->counters, a->len);
        assert_int_equal(memcmp(raw, b->counters, a->len), 0);
        /* Every function with a counter set has its own dirty byte set. */
        for (size_t i = 0, fn = 0; i < a->len; i++) {
            fn += i && (a->pcs[2 * i + 1] & 1);
            if (raw[i]) assert_int_equal(a->fn_dirty[fn], 1);
        }
        wrapped |= wrapped_entry(a, raw);
        assert_int_equal(sift_covmap_take(rt->map, EDGES, out, size), SIFT_OK);
        for (size_t i = 0; i < a->len; i++) {
            assert_int_equal(out[a->first + i], sift_bucket(raw[i]));
            assert_int_equal(out[b->first + i], out[a->first + i]);
        }
        assert_false(any_set(a->counters, a->len));
        assert_false(any_set(a->fn_dirty, nfns));
    }
    assert_true(wrapped);
    free(out);
    free(raw);
}

/* The constructor's bytes must match the functions of the module's pc table. */
static void test_function_index_registration(void **state)
{
    (void)state;
    static uint8_t counters[100], dirty[3];
    static uintptr_t pcs[2 * 100];
    pcs[1] = pcs[2 * 10 + 1] = pcs[2 * 50 + 1] = 1; /* functions at 0, 10 and 50 */
    sift_rt_state *rt = sift_rt();
    size_t modules = rt->npcs;
    __sanitizer_cov_8bit_counters_init(counters, counters + 100);
    __sanitizer_cov_pcs_init(pcs, pcs + 200);
    assert_int_equal(rt->npcs, modules + 1);
    __sift_fn_dirty_init(dirty, dirty + 2);
    assert_null(rt->pcs[modules].fn_dirty);
    __sift_fn_dirty_init(dirty, dirty + 3);
    __sift_fn_dirty_init(dirty, dirty + 3);
    assert_ptr_equal(rt->pcs[modules].fn_dirty, dirty);

    sift_snapshot *snap;
    assert_int_equal(sift_snapshot_for_map(&snap, rt->map, 1), SIFT_OK);
    sift_covmap_reset(rt->map, EDGES_MASK);
    counters[10] = counters[49] = counters[99] = 1;
    dirty[1] = 1;
    sift_novelty novelty;
    size_t features;
    assert_int_equal(
        sift_snapshot_check_and_advance(snap, rt->map, EDGES_MASK, &novelty, &features), SIFT_OK);
    assert_int_equal(novelty, SIFT_NEW_EDGE);
    /* Function 1's two counters; function 2 was not marked, so its counter is not read yet. */
    assert_int_equal(features, 2);
    assert_int_equal(counters[99], 1);
    assert_int_equal(dirty[1], 0);
    sift_snapshot_free(snap);
}

static void test_guard_module(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = sift_rt();
    size_t before = sift_covmap_size(rt->map, EDGES), modules = rt->npcs, regions = rt->nguards;
    branch_fn fn = load(f->guard_so);
    assert_true(sift_covmap_size(rt->map, EDGES) > before);
    assert_int_equal(rt->npcs, modules + 1);
    assert_int_equal(rt->nguards, regions + 1);
    assert_int_equal(rt->pcs[modules].first, before);
    assert_null(rt->pcs[modules].pcs);
    check_novelty(fn);
}

static void test_guards(void **state)
{
    (void)state;
    static uint32_t guards[5];
    uint32_t unnumbered = 0;
    sift_rt_state *rt = sift_rt();
    size_t before = sift_covmap_size(rt->map, EDGES);

    __sanitizer_cov_trace_pc_guard(&unnumbered);
    __sanitizer_cov_trace_pc_guard_init(guards, guards + 5);
    __sanitizer_cov_trace_pc_guard_init(guards, guards + 5);
    assert_int_equal(sift_covmap_size(rt->map, EDGES), before + 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(guards[i] & SIFT_RT_GUARD_MAX, i + 1);

    sift_snapshot *snap;
    assert_int_equal(sift_snapshot_for_map(&snap, rt->map, 1), SIFT_OK);
    sift_covmap_reset(rt->map, EDGES_MASK);
    __sanitizer_cov_trace_pc_guard(&guards[3]);
    __sanitizer_cov_trace_pc_guard(&guards[3]);
    sift_novelty novelty;
    assert_int_equal(sift_snapshot_check_and_advance(snap, rt->map, EDGES_MASK, &novelty, NULL),
                     SIFT_OK);
    assert_int_equal(novelty, SIFT_NEW_EDGE);
    /* The hits landed on guard 3's counter: a third one now is only a new count. */
    for (int i = 0; i < 3; i++)
        __sanitizer_cov_trace_pc_guard(&guards[3]);
    assert_int_equal(sift_snapshot_check_and_advance(snap, rt->map, EDGES_MASK, &novelty, NULL),
                     SIFT_OK);
    assert_int_equal(novelty, SIFT_NEW_COUNT);
    sift_snapshot_free(snap);
}

/* A harness built with -fsanitize-coverage=trace-pc builds, and stops at its first edge with
 * libFuzzer's words (LLVM's deprecated-instrumentation test). */
static void test_trace_pc_is_refused_at_run_time(void **state)
{
    fixture *f = *state;
    char exe[PATH_MAX];
    const char *cc[] = {SIFT_BUILD_DIR "/bin/sift-cc",
                        SIFT_TEST_SAN,
                        "-fsanitize=fuzzer",
                        "-fsanitize-coverage=trace-pc",
                        SIFT_SOURCE_DIR "/examples/calc.c",
                        NULL};
    assert_true(build(f->dir, "trace-pc", cc, exe));
    sift_test_proc p;
    sift_test_run(&p, (const char *[]){exe, "-runs=10", NULL}, NULL);
    assert_int_equal(p.status, 1);
    assert_non_null(
        strstr(p.err, "-fsanitize-coverage=trace-pc is no longer supported by libFuzzer.\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state),
        cmocka_unit_test(test_inline_module),
        cmocka_unit_test(test_same_range_once),
        cmocka_unit_test(test_guard_module),
        cmocka_unit_test(test_guards),
        cmocka_unit_test(test_function_index),
        cmocka_unit_test(test_function_index_registration),
        cmocka_unit_test(test_trace_pc_is_refused_at_run_time),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
