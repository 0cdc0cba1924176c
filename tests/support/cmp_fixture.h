/* The fixture of the comparison feedback's tests (test_cmp.c, test_interpose.c): a runtime
 * state of their own with a CMP domain, handed to the hooks in place of the process's, and the
 * readers of what the hooks recorded. Included after cmocka.h, by one file of a test binary. */
#ifndef SIFT_TEST_CMP_FIXTURE_H
#define SIFT_TEST_CMP_FIXTURE_H

#include "rt/rt.h"
#include "sift/snapshot.h"

#include <stdlib.h>

#define PC 0x401000u

/* The callbacks and hooks reach their state through sift_rt(). This stand-in hands them the
 * fixture's state; it is weak so that, should the runtime's own definition be linked in, that
 * one serves instead, and the hook tests below therefore work on whatever sift_rt() returns. */
static sift_rt_state *standin;
__attribute__((weak)) sift_rt_state *sift_rt(void)
{
    return standin;
}

typedef struct {
    sift_rt_state *rt;
    sift_snapshot *snap;
} fixture;

static inline int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->rt = calloc(1, sizeof(*f->rt));
    f->rt->map = sift_covmap_new();
    size_t first;
    assert_int_equal(
        sift_covmap_alloc(f->rt->map, SIFT_DOMAIN_CMP, SIFT_RT_CMP_COUNTERS, NULL, &first),
        SIFT_OK);
    assert_int_equal(sift_covmap_counters(f->rt->map, SIFT_DOMAIN_CMP, first, &f->rt->cmp),
                     SIFT_OK);
    assert_int_equal(sift_snapshot_for_map(&f->snap, f->rt->map, 1), SIFT_OK);
    standin = f->rt;
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    fixture *f = *state;
    standin = NULL;
    sift_snapshot_free(f->snap);
    sift_covmap_free(f->rt->map);
    free(f->rt);
    free(f);
    return 0;
}

/* What the CMP domain gained since the last call; folds it into SNAP and resets it. */
static inline sift_novelty advance(sift_snapshot *snap, sift_covmap *map)
{
    sift_novelty n = SIFT_NEW_EDGE + 1;
    assert_int_equal(
        sift_snapshot_check_and_advance(snap, map, SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP), &n, NULL),
        SIFT_OK);
    return n;
}

/* The state the hooks use, with a snapshot of its map whose CMP domain starts out empty. */
static inline sift_rt_state *hook_state(sift_snapshot **snap)
{
    sift_rt_state *rt = sift_rt();
    assert_non_null(rt);
    assert_int_equal(sift_snapshot_for_map(snap, rt->map, 1), SIFT_OK);
    assert_int_equal(sift_covmap_reset(rt->map, SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP)), SIFT_OK);
    return rt;
}

static inline const sift_cmp_int *last_int(const sift_rt_state *rt)
{
    return &rt->cmps.ints[(rt->cmps.int_next - 1) % SIFT_CMP_INTS];
}

static inline const sift_cmp_bytes *last_bytes(const sift_rt_state *rt)
{
    return &rt->cmps.bytes[(rt->cmps.byte_next - 1) % SIFT_CMP_BYTES];
}

static inline void assert_int_pair(const sift_cmp_int *e, uint64_t a, uint64_t b, uint8_t size)
{
    assert_int_equal(e->a, a);
    assert_int_equal(e->b, b);
    assert_int_equal(e->size, size);
}

static inline void assert_bytes_pair(const sift_cmp_bytes *e, const void *a, const void *b,
                                     size_t len)
{
    assert_int_equal(e->len, len);
    assert_memory_equal(e->a, a, len);
    assert_memory_equal(e->b, b, len);
}

#endif
