/* Function-boundary values in the runtime: bucketing, the features and records the hooks make
 * from a table like the instrumenter's, fault-safe field reads, and the registry. */
#define _GNU_SOURCE
#include "rt/peek.h"
#include "rt/ring.h"
#include "rt/values.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define S8  (SIFT_VALUES_SIGNED | 1)
#define S32 (SIFT_VALUES_SIGNED | 4)
#define S64 (SIFT_VALUES_SIGNED | 8)
#define U8  1
#define U16 2
#define U64 8
#define PTR (SIFT_VALUES_POINTER | 8)

static void small_values_are_exact(void **state)
{
    (void)state;
    for (int v = -16; v <= 16; v++)
        assert_int_equal(sift_values_bucket((uint64_t)(int64_t)v, S64), (unsigned)(v + 16));
    for (unsigned v = 0; v <= 16; v++)
        assert_int_equal(sift_values_bucket(v, U64), v + 16);
}

static void large_values_group_by_magnitude(void **state)
{
    (void)state;
    /* len=1 and len=1000 differ, but not every length is its own bucket. */
    assert_int_not_equal(sift_values_bucket(1, U64), sift_values_bucket(1000, U64));
    assert_int_equal(sift_values_bucket(1000, U64), sift_values_bucket(1023, U64));
    assert_int_not_equal(sift_values_bucket(1023, U64), sift_values_bucket(1024, U64));
    assert_int_equal(sift_values_bucket(17, U64), 33);
    assert_int_equal(sift_values_bucket(31, U64), 33);
    assert_int_equal(sift_values_bucket(32, U64), 34);
    /* Up to 2^16 each doubling counts; from there to 2^31 one bucket, and from 2^31 on the
     * next: asking for ever larger sizes is no progress. */
    assert_int_equal(sift_values_bucket(65535, U64), 44);
    assert_int_equal(sift_values_bucket(65536, U64), 45);
    assert_int_equal(sift_values_bucket((1u << 31) - 1, U64), 45);
    assert_int_equal(sift_values_bucket(1u << 31, U64), 46);
    assert_int_equal(sift_values_bucket(UINT64_MAX, U64), 46);
    /* Negative values only exist for signed slots, and mirror the positive ones. */
    assert_int_equal(sift_values_bucket((uint64_t)-17, S64), 47);
    assert_int_equal(sift_values_bucket((uint64_t)-65536, S64), 59);
    assert_int_equal(sift_values_bucket((uint64_t)INT64_MIN, S64), 60);
    assert_int_not_equal(sift_values_bucket((uint64_t)-1000, S64), sift_values_bucket(1000, S64));
    assert_int_equal(sift_values_bucket((uint64_t)-1, U64), 46);
}

/* Every bucket of one slot, both signs and the pointer's two included, has a counter of its
 * own, and all of them lie in one line: a slot that ran dirties one line. */
static void a_slot_owns_one_line(void **state)
{
    (void)state;
    static const uint64_t fns[] = {0, 1, 0xcbf29ce484222325ull, UINT64_MAX};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        for (unsigned slot = 0; slot < 66; slot += 13) {
            uint64_t used = 0;
            size_t line = sift_values_feature(fns[f], slot, 0) >> SIFT_DIRTY_SHIFT;
            for (unsigned b = 0; b <= SIFT_VALUES_NULL_BUCKET + 1; b++) {
                size_t idx = sift_values_feature(fns[f], slot, b);
                assert_true(idx < SIFT_RT_VALUES_COUNTERS);
                assert_int_equal(idx >> SIFT_DIRTY_SHIFT, line);
                assert_false(used >> (idx & 63) & 1);
                used |= 1ull << (idx & 63);
            }
        }
    }
    /* Slots of one function go to different lines (these do, with this hash). */
    assert_int_not_equal(sift_values_feature(1, 0, 0) >> SIFT_DIRTY_SHIFT,
                         sift_values_feature(1, 1, 0) >> SIFT_DIRTY_SHIFT);
}

static void widths_and_signs(void **state)
{
    (void)state;
    /* A byte of all ones is -1 signed, 255 unsigned; bits above the width do not count. */
    assert_int_equal(sift_values_signed(0xff, S8), -1);
    assert_int_equal(sift_values_signed(0xff, U8), 255);
    assert_int_equal(sift_values_signed(0x1ff, U8), 255);
    assert_int_equal(sift_values_signed(0xffffffff, S32), -1);
    assert_int_equal(sift_values_bucket(0xff, S8), 15);
    assert_int_equal(sift_values_bucket(0xff, U8), sift_values_bucket(200, U64));
    assert_int_equal(sift_values_bucket(0x10005, U16), 21);
    /* Addresses only say whether they are null. */
    assert_int_equal(sift_values_bucket(0, PTR), 61);
    assert_int_equal(sift_values_bucket(0x7fff1234, PTR), 62);
    assert_int_equal(sift_values_bucket(0x1000, PTR), 62);
}

/* A table as sift-instrument emits it, for int conn_step(struct conn *c, size_t len) and
 * void tick(void). */
struct conn {
    int32_t state;
    uint16_t port;
    int8_t tag;
    uint64_t total;
};

static const sift_values_slot conn_slots[] = {
    {"c", 0, 0, SIFT_VALUES_ARG, PTR},
    {"len", 0, 0, SIFT_VALUES_ARG, U64},
    {"c->state", offsetof(struct conn, state), 0, SIFT_VALUES_FIELD, S32},
    {"c->port", offsetof(struct conn, port), 0, SIFT_VALUES_FIELD, U16},
    {"c->tag", offsetof(struct conn, tag), 0, SIFT_VALUES_FIELD, S8},
    {"c->total", offsetof(struct conn, total), 0, SIFT_VALUES_FIELD, U64},
    {"return", 0, 0, SIFT_VALUES_RETURN, S32},
};

static const sift_values_fn table[] = {
    {0x1111, "conn_step", "conn.c", 3, 2, 7, conn_slots},
    {0x2222, "tick", "conn.c", 9, 0, 0, NULL},
};

/* What registration fills in: the runtime's mode word, the VALUES counters and dirty bytes. */
static sift_values_module module;

#define CONN (&table[0])
#define TICK (&table[1])

static int setup(void **state)
{
    (void)state;
    __sift_values_register(SIFT_VALUES_ABI, table, 2, &module);
    return sift_rt() ? 0 : -1;
}

static void reset_values(void)
{
    sift_covmap_reset(sift_rt()->map, SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES));
}

static size_t hits(void)
{
    const sift_counters *c = &sift_rt()->values;
    size_t n = 0;
    for (size_t i = 0; i < c->len; i++)
        n += c->counters[i] != 0;
    return n;
}

static bool hit(unsigned slot, unsigned bucket)
{
    return sift_rt()->values.counters[sift_values_feature(CONN->id, slot, bucket)] != 0;
}

static void call_conn(struct conn *c, uint64_t len, int32_t ret)
{
    uint64_t args[] = {(uint64_t)(uintptr_t)c, len};
    __sift_values_enter(module.mode, CONN, args);
    __sift_values_return(module.mode, CONN, (uint32_t)ret);
}

static void features_of_a_call(void **state)
{
    (void)state;
    sift_rt_state *rt = sift_rt();
    struct conn c = {.state = 3, .port = 8080, .tag = -2, .total = 1u << 20};
    sift_values_set_mode(rt, 0);
    reset_values();
    call_conn(&c, 1000, -1);
    assert_int_equal(hits(), 0);

    sift_values_set_mode(rt, SIFT_VALUES_FEATURES);
    call_conn(&c, 1000, -1);
    /* A non-null pointer is no feature; a null one is (below). */
    assert_false(hit(0, 62));
    assert_true(hit(1, sift_values_bucket(1000, U64)));
    assert_true(hit(2, 16 + 3));
    assert_true(hit(3, sift_values_bucket(8080, U16)));
    assert_true(hit(4, 16 - 2));
    assert_true(hit(5, sift_values_bucket(1u << 20, U64)));
    assert_true(hit(6, 16 - 1));
    assert_int_equal(hits(), 6);

    /* The same call again adds nothing new, and features are not counted, only marked. */
    call_conn(&c, 1000, -1);
    assert_int_equal(hits(), 6);
    assert_int_equal(sift_rt()->values.counters[sift_values_feature(CONN->id, 2, 16 + 3)], 1);
    /* One state further is one new feature. */
    c.state = 4;
    call_conn(&c, 1000, -1);
    assert_int_equal(hits(), 7);
    /* So is a length of another magnitude, but not one of the same. */
    call_conn(&c, 1001, -1);
    assert_int_equal(hits(), 7);
    call_conn(&c, 1, -1);
    assert_int_equal(hits(), 8);
    sift_values_set_mode(rt, 0);
}

static void unreadable_fields_are_skipped(void **state)
{
    (void)state;
    sift_rt_state *rt = sift_rt();
    long page = sysconf(_SC_PAGESIZE);
    /* A readable page followed by an inaccessible one, a struct across the boundary and one
     * just before it. */
    char *mem =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    assert_int_equal(mprotect(mem + page, (size_t)page, PROT_NONE), 0);
    struct conn *edge = (struct conn *)(mem + page - offsetof(struct conn, total));
    struct conn *inside = (struct conn *)(mem + page - sizeof(struct conn));

    sift_values_set_mode(rt, SIFT_VALUES_FEATURES);
    reset_values();
    call_conn(NULL, 0, 0);
    assert_true(hit(0, 61));
    assert_int_equal(hits(), 3); /* c, len and the return value */
    /* The fields of one argument are read together or not at all. */
    static struct conn *const unreadable[] = {(struct conn *)(uintptr_t)0xdead0000,
                                              (struct conn *)(uintptr_t)16, NULL};
    for (size_t i = 0; i < 3; i++) {
        reset_values();
        call_conn(i < 2 ? unreadable[i] : edge, 0, 0);
        assert_int_equal(hits(), 2);
    }
    *inside = (struct conn){.state = 5, .port = 7, .tag = 1, .total = 9};
    reset_values();
    call_conn(inside, 0, 0);
    assert_true(hit(2, 16 + 5));
    assert_true(hit(3, 16 + 7));
    assert_true(hit(4, 16 + 1));
    assert_true(hit(5, 16 + 9));
    assert_int_equal(hits(), 6);
    /* The check that inline code makes before it loads fields, on the same spans. */
    uintptr_t at = (uintptr_t)inside, end = (uintptr_t)(inside + 1);
    assert_int_equal(__sift_values_readable(module.mode, at, end), 1);
    assert_int_equal(__sift_values_readable(module.mode, (uintptr_t)edge, (uintptr_t)(edge + 1)),
                     0);
    assert_int_equal(__sift_values_readable(module.mode, 16, 24), 0);
    assert_int_equal(__sift_values_readable(module.mode, 0xdead0000, 0xdead0008), 0);
    sift_values_set_mode(rt, 0);
    munmap(mem, 2 * (size_t)page);
}

typedef struct {
    sift_ring_record rec[16];
    size_t n;
} sink;

static void collect(void *ctx, const sift_ring_record *r)
{
    sink *s = ctx;
    if ((r->fn == CONN->id || r->fn == TICK->id) && s->n < 16) s->rec[s->n++] = *r;
}

static void records_in_trace_mode(void **state)
{
    (void)state;
    sift_rt_state *rt = sift_rt();
    sink s = {.n = 0};
    sift_ring_reset();
    sift_values_set_mode(rt, SIFT_VALUES_RECORD);
    struct conn c = {.state = -7, .port = 1, .tag = 0, .total = 2};
    call_conn(&c, 42, 9);
    __sift_values_enter(module.mode, TICK, NULL);
    __sift_values_return(module.mode, TICK, 0);
    sift_values_set_mode(rt, 0);
    call_conn(&c, 42, 9); /* off: not recorded */
    sift_ring_drain(collect, &s, 1000000);
    assert_int_equal(s.n, 9);
    static const struct {
        uint8_t kind;
        uint16_t slot;
        uint64_t value;
    } want[] = {
        {SIFT_RING_ENTRY, 1, 42},
        {SIFT_RING_FIELD, 2, (uint32_t)-7},
        {SIFT_RING_FIELD, 3, 1},
        {SIFT_RING_FIELD, 4, 0},
        {SIFT_RING_FIELD, 5, 2},
        {SIFT_RING_RETURN, 6, 9},
        {SIFT_RING_ENTRY, SIFT_RING_NO_SLOT, 0},
        {SIFT_RING_RETURN, SIFT_RING_NO_SLOT, 0},
    };
    assert_int_equal(s.rec[0].kind, SIFT_RING_ENTRY);
    assert_int_equal(s.rec[0].slot, 0);
    assert_int_equal(s.rec[0].value, (uint64_t)(uintptr_t)&c);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_int_equal(s.rec[i + 1].seq, i + 1);
        assert_int_equal(s.rec[i + 1].kind, want[i].kind);
        assert_int_equal(s.rec[i + 1].slot, want[i].slot);
        assert_int_equal(s.rec[i + 1].value & 0xffffffff, want[i].value & 0xffffffff);
    }
    assert_int_equal(s.rec[7].fn, TICK->id);
}

static void registry(void **state)
{
    (void)state;
    sift_rt_state *rt = sift_rt();
    assert_ptr_equal(module.mode, &rt->values_mode);
    assert_ptr_equal(module.counters, rt->values.counters);
    assert_ptr_equal(module.dirty, rt->values.dirty);
    assert_ptr_equal(sift_values_lookup(rt, 0x1111), CONN);
    assert_ptr_equal(sift_values_lookup(rt, 0x2222), TICK);
    assert_null(sift_values_lookup(rt, 0x3333));
    size_t n = sift_values_count(rt);
    /* A table registered twice counts once; one of another layout is left out. */
    __sift_values_register(SIFT_VALUES_ABI, table, 2, &module);
    static const sift_values_fn other[] = {{0x3333, "other", "x.c", 1, 0, 0, NULL}};
    sift_values_module untouched = {0};
    __sift_values_register(SIFT_VALUES_ABI + 1, other, 1, &untouched);
    assert_null(untouched.mode);
    assert_null(untouched.counters);
    assert_int_equal(sift_values_count(rt), n);
    assert_null(sift_values_lookup(rt, 0x3333));
}

static void peek_reads_or_declines(void **state)
{
    (void)state;
    const sift_rt_state *rt = sift_rt();
    assert_true(sift_peek_install());
    uint64_t word = 0x8877665544332211ull, out = 0;
    const char *bytes = (const char *)&word;
    assert_true(sift_peek(rt, (uintptr_t)bytes, 1, &out));
    assert_int_equal(out, 0x11);
    assert_true(sift_peek(rt, (uintptr_t)bytes + 1, 2, &out));
    assert_int_equal(out, 0x3322);
    assert_true(sift_peek(rt, (uintptr_t)bytes + 1, 4, &out));
    assert_int_equal(out, 0x55443322);
    assert_true(sift_peek(rt, (uintptr_t)bytes, 8, &out));
    assert_int_equal(out, word);
    assert_false(sift_peek(rt, (uintptr_t)bytes, 3, &out));
    assert_false(sift_peek(rt, 0, 4, &out));
    assert_false(sift_peek(rt, 8, 4, &out));
    char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    out = 5;
    assert_false(sift_peek(rt, (uintptr_t)page + 16, 8, &out));
    assert_int_equal(out, 5);
    munmap(page, 4096);
    assert_false(sift_peek(rt, (uintptr_t)page, 1, &out));
}

/* A span is readable when every page it touches is: within a page, across two (either one
 * inaccessible), and longer than a page with a hole in the middle. */
static void spans_are_readable_page_by_page(void **state)
{
    (void)state;
    enum { PAGE = 4096 };
    const sift_rt_state *rt = sift_rt();
    assert_true(sift_peek_install());
    char *mem = mmap(NULL, (size_t)4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    uintptr_t at = (uintptr_t)mem;
    assert_true(sift_peek_span(rt, at + 8, at + 16));
    assert_true(sift_peek_span(rt, at + 4000, at + 4200));
    assert_true(sift_peek_span(rt, at, at + (size_t)4 * PAGE));
    assert_false(sift_peek_span(rt, at + 16, at + 16));
    assert_int_equal(mprotect(mem + PAGE, PAGE, PROT_NONE), 0);
    assert_false(sift_peek_span(rt, at + 4000, at + 4200));            /* the last byte */
    assert_false(sift_peek_span(rt, at + 8000, at + 8400));            /* the first byte */
    assert_false(sift_peek_span(rt, at + 100, at + (size_t)3 * PAGE)); /* a page in the middle */
    assert_true(sift_peek_span(rt, at + (size_t)2 * PAGE, at + (size_t)4 * PAGE));
    munmap(mem, (size_t)4 * PAGE);
}

static void exit_42(int sig)
{
    (void)sig;
    _exit(42);
}

/* Runs a child that installs HANDLER (or the default action) for SIGSEGV, then sift_peek's,
 * then faults outside any peek; returns its status as the test runner reports it. */
static int fault_in_child(void (*handler)(int))
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = handler ? handler : SIG_DFL;
        sigaction(SIGSEGV, &sa, NULL);
        if (!sift_peek_install()) _exit(3);
        uint64_t out;
        if (sift_peek(sift_rt(), 16, 8, &out) || sift_peek(sift_rt(), 0xdead0000, 8, &out))
            _exit(4);
        *(volatile int *)(uintptr_t)sysconf(_SC_PAGESIZE) = 1;
        _exit(5);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Faults that are not the peek's own reach the handler that was there, or kill as before. */
static void other_faults_pass_on(void **state)
{
    (void)state;
    assert_int_equal(fault_in_child(exit_42), 42);
    assert_int_equal(fault_in_child(NULL), 128 + SIGSEGV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_values_are_exact), cmocka_unit_test(large_values_group_by_magnitude),
        cmocka_unit_test(a_slot_owns_one_line),   cmocka_unit_test(widths_and_signs),
        cmocka_unit_test(features_of_a_call),     cmocka_unit_test(unreadable_fields_are_skipped),
        cmocka_unit_test(records_in_trace_mode),  cmocka_unit_test(registry),
        cmocka_unit_test(peek_reads_or_declines), cmocka_unit_test(spans_are_readable_page_by_page),
        cmocka_unit_test(other_faults_pass_on),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
