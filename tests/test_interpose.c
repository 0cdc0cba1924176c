/* Tests of the interposed libc comparisons (rt/interpose): they agree with libc and record
 * their operands; under ASan, where the sanitizer's interceptors compare instead, that those
 * call the hooks with the operands. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/cmp_fixture.h"

#include <dlfcn.h>
#include <string.h>
#include <strings.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
/* Comparisons and searches, on which the functions that sift-cc may link must agree with
 * libc. The sign of a comparison is the contract; its magnitude varies between libc's own
 * implementations. */
typedef struct {
    const char *a, *b;
    size_t alen, blen, n;
} pair;

static const pair pairs[] = {
    {"", "", 0, 0, 0},
    {"abc", "abd", 3, 3, 3},
    {"abd", "abc", 3, 3, 3},
    {"abd", "abc", 3, 3, 2},
    {"\x80", "\x01", 1, 1, 1},
    {"a", "", 1, 0, 1},
    {"", "a", 0, 1, 1},
    {"abc", "abcd", 3, 4, 4},
    {"Zebra", "apple", 5, 5, 5},
    {"HELLO", "hello", 5, 5, 5},
    {"a[", "A{", 2, 2, 2},
    {"abcdefghij_1", "abcdefghij_2", 12, 12, 12},
    {"abcdefghijklmnopqrstuvwxyz0123456789ABCD", "abcdefghijklmnopqrstuvwxyz0123456789ABCd", 40, 40,
     40},
    {"abcdefghijklmnopqrstuvwxyz0123456789ABCD", "abcdefghijklmnopqrstuvwxyz0123456789ABCd", 40, 40,
     39},
    {"a\0b\0c", "\0c", 5, 2, 2},
    {"aaaaab", "aab", 6, 3, 3},
    {"abcabd", "abd", 6, 3, 3},
    {"hello world", "world", 11, 5, 5},
    {"hello", "", 5, 0, 0},
    {"abc", "abcd", 3, 4, 3},
};

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

#define SAME(i, fn, got, want)                                                                     \
    do {                                                                                           \
        if ((got) != (want)) fail_msg("%s disagrees with libc on pair %zu", fn, i);                \
    } while (0)

static void *libc(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    assert_non_null(fn);
    return fn;
}

static void test_interposed_match_libc(void **state)
{
    (void)state;
    int (*volatile my_memcmp)(const void *, const void *, size_t) = memcmp;
    int (*volatile my_bcmp)(const void *, const void *, size_t) = bcmp;
    int (*volatile my_strcmp)(const char *, const char *) = strcmp;
    int (*volatile my_strncmp)(const char *, const char *, size_t) = strncmp;
    int (*volatile my_strcasecmp)(const char *, const char *) = strcasecmp;
    int (*volatile my_strncasecmp)(const char *, const char *, size_t) = strncasecmp;
    char *(*volatile my_strstr)(const char *, const char *) = strstr;
    char *(*volatile my_strcasestr)(const char *, const char *) = strcasestr;
    void *(*volatile my_memmem)(const void *, size_t, const void *, size_t) = memmem;
    int (*lc_memcmp)(const void *, const void *, size_t) = libc("memcmp");
    int (*lc_strcmp)(const char *, const char *) = libc("strcmp");
    int (*lc_strncmp)(const char *, const char *, size_t) = libc("strncmp");
    int (*lc_strcasecmp)(const char *, const char *) = libc("strcasecmp");
    int (*lc_strncasecmp)(const char *, const char *, size_t) = libc("strncasecmp");
    char *(*lc_strstr)(const char *, const char *) = libc("strstr");
    char *(*lc_strcasestr)(const char *, const char *) = libc("strcasestr");
    void *(*lc_memmem)(const void *, size_t, const void *, size_t) = libc("memmem");
    assert_ptr_not_equal(my_memcmp, lc_memcmp);
    assert_ptr_not_equal(my_strstr, lc_strstr);
    assert_ptr_not_equal(my_strcasestr, lc_strcasestr);

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        const pair *p = &pairs[i];
        if (p->n <= p->alen && p->n <= p->blen) {
            int want = sign(lc_memcmp(p->a, p->b, p->n));
            SAME(i, "memcmp", sign(my_memcmp(p->a, p->b, p->n)), want);
            SAME(i, "bcmp", my_bcmp(p->a, p->b, p->n) != 0, want != 0);
        }
        SAME(i, "strcmp", sign(my_strcmp(p->a, p->b)), sign(lc_strcmp(p->a, p->b)));
        SAME(i, "strncmp", sign(my_strncmp(p->a, p->b, p->n)), sign(lc_strncmp(p->a, p->b, p->n)));
        SAME(i, "strcasecmp", sign(my_strcasecmp(p->a, p->b)), sign(lc_strcasecmp(p->a, p->b)));
        SAME(i, "strncasecmp", sign(my_strncasecmp(p->a, p->b, p->n)),
             sign(lc_strncasecmp(p->a, p->b, p->n)));
        SAME(i, "strstr", my_strstr(p->a, p->b), lc_strstr(p->a, p->b));
        SAME(i, "strcasestr", my_strcasestr(p->a, p->b), lc_strcasestr(p->a, p->b));
        SAME(i, "memmem", my_memmem(p->a, p->alen, p->b, p->blen),
             lc_memmem(p->a, p->alen, p->b, p->blen));
    }
}

static void test_interposed_record(void **state)
{
    (void)state;
    int (*volatile my_strcmp)(const char *, const char *) = strcmp;
    char *(*volatile my_strcasestr)(const char *, const char *) = strcasestr;
    void *(*volatile my_memmem)(const void *, size_t, const void *, size_t) = memmem;
    static const char hay[] = "Haystack";
    sift_snapshot *snap;
    sift_rt_state *rt = hook_state(&snap);
    uint32_t n = rt->cmps.byte_next;
    assert_true(my_strcmp("fuzz", "fuzy") > 0);
    assert_int_equal(rt->cmps.byte_next, n);
    rt->tracing = true;
    int r = my_strcmp("fuzz", "fuzy");
    uint32_t before_search = rt->cmps.byte_next;
    char *folded = my_strcasestr(hay, "STACK");
    char *missed = my_strcasestr(hay, "stick");
    uint32_t after_search = rt->cmps.byte_next;
    void *found = my_memmem("needle", 6, "dlx", 3);
    rt->tracing = false;
    assert_true(r > 0);
    assert_ptr_equal(folded, hay + 3);
    assert_null(missed);
    assert_null(found);
    /* The failed strcasestr offers its needle, as a failed strstr or memmem does. */
    assert_true(after_search > before_search);
    assert_bytes_pair(&rt->cmps.bytes[n % SIFT_CMP_BYTES], "fuzz", "fuzy", 5);
    assert_bytes_pair(last_bytes(rt), "dle", "dlx", 3);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    sift_snapshot_free(snap);
}
#else
/* Under ASan the interceptors compare, and call the hooks with the operands. */
static void test_sanitizer_calls_hooks(void **state)
{
    (void)state;
    int (*volatile f_memcmp)(const void *, const void *, size_t) = memcmp;
    int (*volatile f_strcmp)(const char *, const char *) = strcmp;
    int (*volatile f_strncasecmp)(const char *, const char *, size_t) = strncasecmp;
    char *(*volatile f_strstr)(const char *, const char *) = strstr;
    void *(*volatile f_memmem)(const void *, size_t, const void *, size_t) = memmem;
    sift_snapshot *snap;
    sift_rt_state *rt = hook_state(&snap);
    uint32_t n = rt->cmps.byte_next;
    rt->tracing = true;
    int r1 = f_memcmp("fuzzing!", "fuzzable", 8);
    int r2 = f_strcmp("alpha", "alpine");
    int r3 = f_strncasecmp("GAMMA", "gamut", 5);
    char *r4 = f_strstr("a tokem here", "token");
    void *r5 = f_memmem("\1\2\3", 3, "\2\4", 2);
    rt->tracing = false;
    assert_true(r1 > 0 && r2 < 0 && r3 < 0 && !r4 && !r5);
    assert_int_equal(rt->cmps.byte_next, n + 5);
    assert_bytes_pair(&rt->cmps.bytes[n % SIFT_CMP_BYTES], "fuzzing!", "fuzzable", 8);
    assert_bytes_pair(&rt->cmps.bytes[(n + 1) % SIFT_CMP_BYTES], "alpha", "alpine", 6);
    assert_bytes_pair(&rt->cmps.bytes[(n + 2) % SIFT_CMP_BYTES], "GAMMA", "gamut", 5);
    assert_bytes_pair(&rt->cmps.bytes[(n + 3) % SIFT_CMP_BYTES], "tokem", "token", 5);
    assert_bytes_pair(last_bytes(rt), "\2\3", "\2\4", 2);
    assert_int_equal(advance(snap, rt->map), SIFT_NEW_EDGE);
    sift_snapshot_free(snap);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifndef UNDER_ASAN
        cmocka_unit_test_setup_teardown(test_interposed_match_libc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interposed_record, setup, teardown),
#else
        cmocka_unit_test_setup_teardown(test_sanitizer_calls_hooks, setup, teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
