/* Tests of comparison feedback: CMP features, operand rings, sanitizer-coverage callbacks and
 * sanitizer hooks (the interposed libc comparisons: test_interpose.c). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/cmp_fixture.h"

#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <string.h>

void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b);
void __sanitizer_cov_trace_cmp2(uint16_t a, uint16_t b);
void __sanitizer_cov_trace_cmp4(uint32_t a, uint32_t b);
void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b);
void __sanitizer_cov_trace_const_cmp1(uint8_t constant, uint8_t a);
void __sanitizer_cov_trace_const_cmp2(uint16_t constant, uint16_t a);
void __sanitizer_cov_trace_const_cmp4(uint32_t constant, uint32_t a);
void __sanitizer_cov_trace_const_cmp8(uint64_t constant, uint64_t a);
void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases);
void __sanitizer_cov_trace_div4(uint32_t val);
void __sanitizer_cov_trace_div8(uint64_t val);
void __sanitizer_cov_trace_gep(uintptr_t idx);

static void test_int_closer_is_new(void **state)
{
    fixture *f = *state;
    const uint64_t target = 0x41424344;
    const uint64_t steps[] = {0, 0x44, 0x4344, 0x424344, 0x41424344};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        sift_rt_cmp(f->rt, PC, steps[i], target, 4);
        assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
        sift_rt_cmp(f->rt, PC, steps[i], target, 4);
        assert_int_equal(advance(f->snap, f->rt->map), SIFT_NOTHING);
    }
    /* The same distance at another site is another feature. */
    sift_rt_cmp(f->rt, PC + 4, 0, target, 4);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
    /* Operands count only within their width: these are equal bytes. */
    sift_rt_cmp(f->rt, PC + 8, 0x41, 0x41, 1);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
    sift_rt_cmp(f->rt, PC + 8, 0xffffff41, 0x41, 1);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NOTHING);
    /* Repeating a comparison within one execution is a new hit count. */
    sift_rt_cmp(f->rt, PC, 0, target, 4);
    sift_rt_cmp(f->rt, PC, 0, target, 4);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_COUNT);
    /* Closer in value alone is new too (libFuzzer's absolute distance): 0x01 and 0x83 both
     * differ from 0x80 in two bits of one byte, but 0x83 is 3 away where 0x01 is 127. */
    sift_rt_cmp(f->rt, PC + 12, 0x01, 0x80, 4);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
    sift_rt_cmp(f->rt, PC + 12, 0x83, 0x80, 4);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
}

/* With nobody counting the CMP domain, comparisons still feed the rings, but touch no counter. */
static void test_features_off_keeps_rings(void **state)
{
    fixture *f = *state;
    f->rt->cmp_features_off = true;
    f->rt->tracing = true;
    uint32_t ints = f->rt->cmps.int_next, bytes = f->rt->cmps.byte_next;
    sift_rt_cmp(f->rt, PC, 0x1234, 0x41424344, 4);
    sift_rt_cmp_bytes(f->rt, PC + 4, "abcd", "abzz", 4);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NOTHING);
    assert_int_equal(f->rt->cmps.int_next, ints + 1);
    assert_int_equal(f->rt->cmps.byte_next, bytes + 1);
    assert_int_pair(last_int(f->rt), 0x1234, 0x41424344, 4);
    f->rt->cmp_features_off = false;
    sift_rt_cmp(f->rt, PC, 0x1234, 0x41424344, 4);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
}

static void test_int_ring(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = f->rt;
    rt->tracing = true;
    sift_rt_cmp(rt, PC, 0x1234, 0x5678, 2);
    assert_int_equal(rt->cmps.int_next, 1);
    assert_int_pair(last_int(rt), 0x1234, 0x5678, 2);
    /* A comparison repeated in a loop is kept once. */
    sift_rt_cmp(rt, PC, 0x1234, 0x5678, 2);
    assert_int_equal(rt->cmps.int_next, 1);
    /* Equal operands, and pairs of 0, 1 and all-ones, are left out. */
    sift_rt_cmp(rt, PC, 7, 7, 4);
    sift_rt_cmp(rt, PC, 0, 1, 4);
    sift_rt_cmp(rt, PC, 1, 0, 1);
    sift_rt_cmp(rt, PC, 0xff, 0, 1);
    sift_rt_cmp(rt, PC, 0xffffffff, 1, 4);
    sift_rt_cmp(rt, PC, 0, UINT64_MAX, 8);
    sift_rt_cmp(rt, PC, 0x100, 0x100, 8);
    assert_int_equal(rt->cmps.int_next, 1);
    /* One distinctive side is enough; operands are stored within their width. */
    sift_rt_cmp(rt, PC, 0, 2, 4);
    assert_int_pair(last_int(rt), 0, 2, 4);
    sift_rt_cmp(rt, PC, 0xabcd0000ffff4242, 0x43, 2);
    assert_int_pair(last_int(rt), 0x4242, 0x43, 2);
    /* One-byte pairs count as features but stay out of the ring. */
    sift_rt_cmp(rt, PC + 16, 0x41, 0x42, 1);
    assert_int_equal(rt->cmps.int_next, 3);
    advance(f->snap, rt->map);
    /* Without tracing, features still count but the ring stays as it is. */
    rt->tracing = false;
    sift_rt_cmp(rt, PC + 12, 0x99, 0x98, 4);
    assert_int_equal(rt->cmps.int_next, 3);
    assert_int_equal(advance(f->snap, rt->map), SIFT_NEW_EDGE);
}

static void test_int_ring_wraps(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = f->rt;
    rt->tracing = true;
    for (uint64_t i = 0; i < 600; i++)
        sift_rt_cmp(rt, PC, 1000 + i, 5, 4);
    assert_int_equal(rt->cmps.int_next, 600);
    for (uint32_t k = 0; k < SIFT_CMP_INTS; k++)
        assert_int_pair(&rt->cmps.ints[(600 - 1 - k) % SIFT_CMP_INTS], 1000 + 599 - k, 5, 4);
    /* The position wraps around 2^32, a multiple of the ring size, without a gap. */
    rt->cmps.int_next = UINT32_MAX - 1;
    sift_rt_cmp(rt, PC, 0x1111, 5, 4);
    sift_rt_cmp(rt, PC, 0x2222, 5, 4);
    sift_rt_cmp(rt, PC, 0x3333, 5, 4);
    assert_int_equal(rt->cmps.int_next, 1);
    assert_int_pair(&rt->cmps.ints[SIFT_CMP_INTS - 2], 0x1111, 5, 4);
    assert_int_pair(&rt->cmps.ints[SIFT_CMP_INTS - 1], 0x2222, 5, 4);
    assert_int_pair(&rt->cmps.ints[0], 0x3333, 5, 4);
}

static void test_bytes_closer_is_new(void **state)
{
    fixture *f = *state;
    const char *target = "MAGICWORD";
    const char *steps[] = {"XXXXXXXXX", "MXXXXXXXX", "MAGXXXXXX", "MAGICWORX", "MAGICWORD"};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        sift_rt_cmp_bytes(f->rt, PC, steps[i], target, 9);
        assert_int_equal(advance(f->snap, f->rt->map), SIFT_NEW_EDGE);
        sift_rt_cmp_bytes(f->rt, PC, steps[i], target, 9);
        assert_int_equal(advance(f->snap, f->rt->map), SIFT_NOTHING);
    }
}

static void test_bytes_ring(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = f->rt;
    uint8_t a[100], b[100];
    for (size_t i = 0; i < sizeof(a); i++)
        a[i] = b[i] = (uint8_t)i;
    rt->tracing = true;
    sift_rt_cmp_bytes(rt, PC, a, b, sizeof(a));
    assert_int_equal(rt->cmps.byte_next, 0);
    /* A difference past what an entry holds leaves nothing to substitute. */
    b[70] = 0xee;
    sift_rt_cmp_bytes(rt, PC, a, b, sizeof(a));
    assert_int_equal(rt->cmps.byte_next, 0);
    b[10] = 0xee;
    sift_rt_cmp_bytes(rt, PC, a, b, sizeof(a));
    assert_int_equal(rt->cmps.byte_next, 1);
    assert_bytes_pair(last_bytes(rt), a, b, SIFT_CMP_BYTELEN);
    sift_rt_cmp_bytes(rt, PC, a, b, sizeof(a));
    assert_int_equal(rt->cmps.byte_next, 1);
    sift_rt_cmp_bytes(rt, PC, "abcde", "abXde", 5);
    assert_bytes_pair(last_bytes(rt), "abcde", "abXde", 5);
    /* Two other sites append, wrapping around the ring. */
    rt->cmps.byte_next = UINT32_MAX;
    sift_rt_cmp_bytes(rt, PC + 8, "one", "two", 3);
    sift_rt_cmp_bytes(rt, PC + 16, "six", "ten", 3);
    assert_int_equal(rt->cmps.byte_next, 1);
    assert_bytes_pair(&rt->cmps.bytes[SIFT_CMP_BYTES - 1], "one", "two", 3);
    assert_bytes_pair(&rt->cmps.bytes[0], "six", "ten", 3);
    rt->tracing = false;
    sift_rt_cmp_bytes(rt, PC, "seven", "eight", 5);
    assert_int_equal(rt->cmps.byte_next, 1);
}

/* A site keeps one entry, refreshed in place: a comparison that fails on every execution cannot
 * flush out the operands of one that few inputs reach. */
static void test_bytes_keyed_by_site(void **state)
{
    fixture *f = *state;
    sift_rt_state *rt = f->rt;
    rt->tracing = true;
    uint32_t n = rt->cmps.byte_next;
    sift_rt_cmp_bytes(rt, PC + 64, "STx", "STU", 3);
    for (unsigned i = 0; i < 10 * SIFT_CMP_BYTES; i++) {
        char hot[8];
        snprintf(hot, sizeof hot, "%07u", i);
        sift_rt_cmp_bytes(rt, PC, hot, "1234567", 7);
    }
    rt->tracing = false;
    assert_int_equal(rt->cmps.byte_next, n + 2);
    assert_bytes_pair(&rt->cmps.bytes[n % SIFT_CMP_BYTES], "STx", "STU", 3);
    assert_bytes_pair(last_bytes(rt), "0001279", "1234567", 7);
}

/* One call site, so that repeated calls come from the same pc; the empty asm keeps the call
 * out of tail position, where it would return straight to the varying caller. */
__attribute__((noinline)) static void trace_switch(uint64_t val, uint64_t *cases)
{
    __sanitizer_cov_trace_switch(val, cases);
    __asm__ volatile("");
}

static void test_switch_hook(void **state)
{
    (void)state;
    sift_snapshot *snap;
    sift_rt_state *rt = hook_state(&snap);
    uint64_t cases[] = {3, 32, 1000, 2000, 3000};
    rt->tracing = true;
    uint32_t n = rt->cmps.int_next;
    trace_switch(1500, cases);
    assert_int_equal(rt->cmps.int_next, n + 2);
    assert_int_pair(&rt->cmps.ints[n % SIFT_CMP_INTS], 1500, 1000, 4);
    assert_int_pair(&rt->cmps.ints[(n + 1) % SIFT_CMP_INTS], 1500, 2000, 4);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    trace_switch(1500, cases);
    assert_int_equal(advance(snap, rt->map), SIFT_NOTHING);
    n = rt->cmps.int_next;
    /* A taken case is compared with its neighbours; an outer value with its one neighbour. */
    trace_switch(2000, cases);
    assert_int_pair(&rt->cmps.ints[n % SIFT_CMP_INTS], 2000, 1000, 4);
    assert_int_pair(last_int(rt), 2000, 3000, 4);
    trace_switch(5000, cases);
    assert_int_pair(last_int(rt), 5000, 3000, 4);
    trace_switch(500, cases);
    assert_int_pair(last_int(rt), 500, 1000, 4);
    assert_int_equal(rt->cmps.int_next, n + 4);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    /* Small values and small switches are left to byte mutations. */
    uint64_t small[] = {3, 16, 1, 2, 200};
    trace_switch(100, cases);
    trace_switch(1000, small);
    assert_int_equal(rt->cmps.int_next, n + 4);
    assert_int_equal(advance(snap, rt->map), SIFT_NOTHING);
    uint64_t wide[] = {2, 64, 0x100000000, 0x7fffffffffffffff};
    trace_switch(0x100000001, wide);
    assert_int_pair(&rt->cmps.ints[(n + 4) % SIFT_CMP_INTS], 0x100000001, 0x100000000, 8);
    assert_int_pair(last_int(rt), 0x100000001, 0x7fffffffffffffff, 8);
    rt->tracing = false;
    sift_snapshot_free(snap);
}

static void test_cmp_hooks(void **state)
{
    (void)state;
    sift_snapshot *snap;
    sift_rt_state *rt = hook_state(&snap);
    rt->tracing = true;
    uint32_t before = rt->cmps.int_next;
    __sanitizer_cov_trace_cmp1(0x41, 0x42);
    __sanitizer_cov_trace_const_cmp1('Z', 'a');
    assert_int_equal(rt->cmps.int_next, before); /* one-byte pairs: features only */
    /* Each hook records its operands with their width; a constant, first in the call, is second
     * in the ring, and a divisor is compared with zero. One hook of the five set per case. */
    static const struct {
        const char *name;
        uint64_t a, b, want_a, want_b;
        uint8_t size;
        void (*h16)(uint16_t, uint16_t);
        void (*h32)(uint32_t, uint32_t);
        void (*h64)(uint64_t, uint64_t);
        void (*div32)(uint32_t);
        void (*div64)(uint64_t);
    } hooks[] = {
        {"cmp2", 0x1234, 0x4321, 0x1234, 0x4321, 2, .h16 = __sanitizer_cov_trace_cmp2},
        {"cmp4", 0x12345678, 0x87654321, 0x12345678, 0x87654321, 4,
         .h32 = __sanitizer_cov_trace_cmp4},
        {"cmp8", 0x123456789abcdef0, 42, 0x123456789abcdef0, 42, 8,
         .h64 = __sanitizer_cov_trace_cmp8},
        {"const_cmp2", 0xbeef, 0x1234, 0x1234, 0xbeef, 2, .h16 = __sanitizer_cov_trace_const_cmp2},
        {"const_cmp4", 0xdeadbeef, 0x1234, 0x1234, 0xdeadbeef, 4,
         .h32 = __sanitizer_cov_trace_const_cmp4},
        {"const_cmp8", 0xfeedfacecafe, 7, 7, 0xfeedfacecafe, 8,
         .h64 = __sanitizer_cov_trace_const_cmp8},
        {"div4", 77, 0, 77, 0, 4, .div32 = __sanitizer_cov_trace_div4},
        {"div8", 1ull << 40, 0, 1ull << 40, 0, 8, .div64 = __sanitizer_cov_trace_div8},
    };
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        uint64_t a = hooks[i].a, b = hooks[i].b;
        if (hooks[i].h16) hooks[i].h16((uint16_t)a, (uint16_t)b);
        if (hooks[i].h32) hooks[i].h32((uint32_t)a, (uint32_t)b);
        if (hooks[i].h64) hooks[i].h64(a, b);
        if (hooks[i].div32) hooks[i].div32((uint32_t)a);
        if (hooks[i].div64) hooks[i].div64(a);
        const sift_cmp_int *e = last_int(rt);
        if (e->a != hooks[i].want_a || e->b != hooks[i].want_b || e->size != hooks[i].size)
            fail_msg("__sanitizer_cov_trace_%s: recorded %#llx, %#llx (%u bytes)", hooks[i].name,
                     (unsigned long long)e->a, (unsigned long long)e->b, (unsigned)e->size);
    }
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    /* An index is a feature but no ring entry. */
    uint32_t n = rt->cmps.int_next;
    __sanitizer_cov_trace_gep(12345);
    assert_int_equal(rt->cmps.int_next, n);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    rt->tracing = false;
    __sanitizer_cov_trace_cmp4(5, 6);
    assert_int_equal(rt->cmps.int_next, n);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    sift_snapshot_free(snap);
}

/* Without a state every callback and hook does nothing. */
static void test_hooks_without_state(void **state)
{
    fixture *f = *state;
    f->rt->tracing = true;
    standin = NULL;
    uint64_t cases[] = {1, 32, 1000};
    __sanitizer_cov_trace_cmp4(1, 2);
    __sanitizer_cov_trace_const_cmp8(1, 2);
    __sanitizer_cov_trace_switch(2000, cases);
    __sanitizer_cov_trace_div4(3);
    __sanitizer_cov_trace_gep(4);
    __sanitizer_weak_hook_memcmp((void *)PC, "ab", "ac", 2, -1);
    __sanitizer_weak_hook_strstr((void *)PC, "hay", "needle", NULL);
    standin = f->rt;
    assert_int_equal(f->rt->cmps.int_next, 0);
    assert_int_equal(f->rt->cmps.byte_next, 0);
    assert_int_equal(advance(f->snap, f->rt->map), SIFT_NOTHING);
}

static void test_weak_hooks(void **state)
{
    (void)state;
    sift_snapshot *snap;
    sift_rt_state *rt = hook_state(&snap);
    void *pc = (void *)PC;
    /* Not tracing: the hooks see the engine's own comparisons too, so they record nothing. */
    uint32_t n = rt->cmps.byte_next;
    __sanitizer_weak_hook_memcmp(pc, "abcd", "abxd", 4, -1);
    __sanitizer_weak_hook_strcmp(pc, "abc", "abd", -1);
    assert_int_equal(rt->cmps.byte_next, n);
    assert_int_equal(advance(snap, rt->map), SIFT_NOTHING);

    rt->tracing = true;
    __sanitizer_weak_hook_memcmp(pc, "abcd", "abxd", 4, -1);
    assert_bytes_pair(last_bytes(rt), "abcd", "abxd", 4);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    /* Strings are taken up to the shorter one's terminator. */
    __sanitizer_weak_hook_strcmp(pc, "hello", "help", 1);
    assert_bytes_pair(last_bytes(rt), "hello", "help", 5);
    __sanitizer_weak_hook_strncmp(pc, "abcdef", "abcxyz", 5, -1);
    assert_bytes_pair(last_bytes(rt), "abcde", "abcxy", 5);
    __sanitizer_weak_hook_strncasecmp(pc, "KEYword", "keyWORX", 7, -1);
    assert_bytes_pair(last_bytes(rt), "KEYword", "keyWORX", 7);
    /* Successful comparisons leave the ring alone, but reaching equality is a feature. */
    n = rt->cmps.byte_next;
    advance(snap, rt->map);
    __sanitizer_weak_hook_strcmp(pc, "same", "same", 0);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    __sanitizer_weak_hook_strncmp(pc, "abcdef", "abcxyz", 3, 0);
    __sanitizer_weak_hook_strcasecmp(pc, "HeLLo", "hello", 0);
    __sanitizer_weak_hook_strstr(pc, "a password!", "password", (char *)"password!");
    __sanitizer_weak_hook_strcasestr(pc, "a PASSWORD", "password", (char *)"PASSWORD");
    __sanitizer_weak_hook_memmem(pc, "xyz", 3, "y", 1, (void *)"yz");
    assert_int_equal(rt->cmps.byte_next, n);
    /* A failed search offers the haystack at the needle's longest partial match. */
    __sanitizer_weak_hook_strstr(pc, "xx--pasXword--", "password", NULL);
    assert_bytes_pair(last_bytes(rt), "pasXword", "password", 8);
    __sanitizer_weak_hook_strcasestr(pc, "xxPASSwd", "password", NULL);
    assert_bytes_pair(last_bytes(rt), "PASSwd", "passwo", 6);
    __sanitizer_weak_hook_memmem(pc, "\1\2\3\4\5", 5, "\3\4\0", 3, NULL);
    assert_bytes_pair(last_bytes(rt), "\3\4\5", "\3\4\0", 3);
    /* A partial match cut off by the haystack's end leaves nothing to substitute. */
    n = rt->cmps.byte_next;
    __sanitizer_weak_hook_memmem(pc, "abcpa", 5, "pass", 4, NULL);
    assert_int_equal(rt->cmps.byte_next, n);
    /* Nothing of the needle anywhere: the offer is to append it after the haystack, when the
     * haystack is the input, rather than to overwrite fields at its start. */
    static const uint8_t input[] = "Arena:nine9";
    rt->input = input;
    rt->input_size = 11;
    __sanitizer_weak_hook_memmem(pc, input, 11, "HEAP", 4, NULL);
    assert_bytes_pair(last_bytes(rt), "ine9", "HEAP", 4);
    assert_int_equal(last_bytes(rt)->at, 11);
    /* -use_memmem=0: a failed search still counts, but offers nothing. */
    rt->search_hints_off = true;
    n = rt->cmps.byte_next;
    advance(snap, rt->map);
    __sanitizer_weak_hook_memmem((void *)(PC + 64), input, 11, "ZZ", 2, NULL);
    __sanitizer_weak_hook_strstr((void *)(PC + 64), "xx--pasXword--", "password", NULL);
    assert_int_equal(rt->cmps.byte_next, n);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    rt->search_hints_off = false;
    rt->input = NULL;
    rt->input_size = 0;
    rt->tracing = false;
    sift_snapshot_free(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_int_closer_is_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_features_off_keeps_rings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_ring_wraps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_closer_is_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_keyed_by_site, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_switch_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmp_hooks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hooks_without_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_weak_hooks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
