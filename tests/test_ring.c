/* Record rings: order and numbering in one thread, drops when nobody drains, and several
 * producers with one or two consumers draining while they push. */
#include "rt/ring.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PRODUCERS  4
#define PER_THREAD 200000u

/* What a drain saw, record by record, from the producers of one test. The producers put
 * their number in fn (from 1; 0 is what earlier tests' threads used) and a counter in value. */
typedef struct {
    uint64_t base; /* fn of producer 0 */
    atomic_uint_fast64_t seen[PRODUCERS];
    atomic_uint_fast64_t next_value[PRODUCERS]; /* the value the next record must carry */
    atomic_int out_of_order;
    atomic_int foreign;
} tally;

static void count(void *ctx, const sift_ring_record *r)
{
    tally *t = ctx;
    uint64_t p = r->fn - t->base;
    if (p >= PRODUCERS) {
        atomic_fetch_add(&t->foreign, 1);
        return;
    }
    if (r->value != atomic_load(&t->next_value[p])) atomic_fetch_add(&t->out_of_order, 1);
    atomic_store(&t->next_value[p], r->value + 1);
    atomic_fetch_add(&t->seen[p], 1);
}

typedef struct {
    tally *t;
    unsigned index;
    bool wait_for_consumer; /* keep at most half a ring ahead of the drains */
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    /* cmocka's checks may only fail on the test's own thread. */
    sift_ring *r = sift_ring_self();
    if (!r) return p;
    uint64_t fn = p->t->base + p->index;
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        while (p->wait_for_consumer &&
               i - atomic_load(&p->t->seen[p->index]) > SIFT_RING_CAPACITY / 2)
            sched_yield();
        sift_ring_push(r, fn, (uint16_t)(i & 0xff), SIFT_RING_ENTRY, i);
    }
    return NULL;
}

typedef struct {
    tally *t;
    atomic_bool *done;
} consumer;

static void *consume(void *arg)
{
    consumer *c = arg;
    for (;;) {
        bool done = atomic_load(c->done);
        size_t n = sift_ring_drain(count, c->t, 1000000000ull);
        if (done && n == 0) return NULL;
    }
}

static uint64_t next_base = 1;

static void run(unsigned consumers, bool wait_for_consumer, tally *t)
{
    memset(t, 0, sizeof(*t));
    t->base = next_base;
    next_base += PRODUCERS;
    atomic_bool done = false;
    pthread_t prod[PRODUCERS], cons[2];
    producer ps[PRODUCERS];
    consumer c = {t, &done};
    for (unsigned i = 0; i < consumers; i++)
        assert_int_equal(pthread_create(&cons[i], NULL, consume, &c), 0);
    for (unsigned i = 0; i < PRODUCERS; i++) {
        ps[i] = (producer){.t = t, .index = i, .wait_for_consumer = wait_for_consumer};
        assert_int_equal(pthread_create(&prod[i], NULL, produce, &ps[i]), 0);
    }
    for (unsigned i = 0; i < PRODUCERS; i++) {
        void *failed;
        assert_int_equal(pthread_join(prod[i], &failed), 0);
        assert_null(failed);
    }
    atomic_store(&done, true);
    for (unsigned i = 0; i < consumers; i++)
        assert_int_equal(pthread_join(cons[i], NULL), 0);
}

/* Collects up to 8 records of the calling thread's ring. */
typedef struct {
    sift_ring_record rec[8];
    size_t n;
    uint64_t fn;
} sink;

static void collect(void *ctx, const sift_ring_record *r)
{
    sink *s = ctx;
    if (r->fn == s->fn && s->n < 8) s->rec[s->n++] = *r;
}

static void order_and_numbering(void **state)
{
    (void)state;
    sift_ring_reset();
    sift_ring *r = sift_ring_self();
    assert_non_null(r);
    assert_ptr_equal(sift_ring_self(), r);
    sift_ring_push(r, 7, 0, SIFT_RING_ENTRY, 1);
    sift_ring_push(r, 7, 1, SIFT_RING_FIELD, 2);
    sift_ring_push(r, 7, SIFT_RING_NO_SLOT, SIFT_RING_RETURN, 3);
    sink s = {.fn = 7};
    assert_int_equal(sift_ring_drain(collect, &s, 1000000), 3);
    assert_int_equal(s.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(s.rec[i].seq, i);
        assert_int_equal(s.rec[i].value, i + 1);
        assert_int_equal(s.rec[i].thread, s.rec[0].thread);
    }
    assert_int_equal(s.rec[0].kind, SIFT_RING_ENTRY);
    assert_int_equal(s.rec[1].kind, SIFT_RING_FIELD);
    assert_int_equal(s.rec[1].slot, 1);
    assert_int_equal(s.rec[2].kind, SIFT_RING_RETURN);
    assert_int_equal(s.rec[2].slot, SIFT_RING_NO_SLOT);
    /* Drained records are gone; the numbering goes on until a reset. */
    assert_int_equal(sift_ring_drain(collect, &s, 1000000), 0);
    sift_ring_push(r, 7, 0, SIFT_RING_ENTRY, 4);
    s.n = 0;
    sift_ring_drain(collect, &s, 1000000);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.rec[0].seq, 3);
    sift_ring_reset();
    sift_ring_push(r, 7, 0, SIFT_RING_ENTRY, 5);
    s.n = 0;
    sift_ring_drain(collect, &s, 1000000);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.rec[0].seq, 0);
}

/* Counts the calling thread's records: the first and last sequence numbers seen. */
typedef struct {
    uint64_t n, first, last;
} span;

static void measure(void *ctx, const sift_ring_record *r)
{
    span *s = ctx;
    if (r->fn != 9) return;
    if (!s->n++) s->first = r->seq;
    s->last = r->seq;
}

/* Nobody drains: the ring keeps the oldest records, counts the rest, and never blocks. */
static void full_ring_counts_drops(void **state)
{
    (void)state;
    sift_ring_reset();
    sift_ring *r = sift_ring_self();
    for (uint64_t i = 0; i < SIFT_RING_CAPACITY + 100; i++)
        sift_ring_push(r, 9, 0, SIFT_RING_ENTRY, i);
    assert_int_equal(sift_ring_dropped(), 100);
    span s = {0};
    sift_ring_drain(measure, &s, 1000000);
    assert_int_equal(s.n, SIFT_RING_CAPACITY);
    assert_int_equal(s.first, 0);
    assert_int_equal(s.last, SIFT_RING_CAPACITY - 1);
    /* Room again; the dropped records leave a gap in the numbering. */
    sift_ring_push(r, 9, 0, SIFT_RING_ENTRY, 0);
    s = (span){0};
    sift_ring_drain(measure, &s, 1000000);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.first, SIFT_RING_CAPACITY + 100);
    sift_ring_reset();
    assert_int_equal(sift_ring_dropped(), 0);
}

static void check_complete(tally *t)
{
    for (unsigned i = 0; i < PRODUCERS; i++)
        assert_int_equal(atomic_load(&t->seen[i]), PER_THREAD);
    assert_int_equal(atomic_load(&t->out_of_order), 0);
    assert_int_equal(atomic_load(&t->foreign), 0);
}

/* Producers that stay within reach of the consumer lose nothing, in any thread. */
static void consumer_keeps_up(void **state)
{
    (void)state;
    sift_ring_reset();
    tally t;
    run(1, true, &t);
    check_complete(&t);
    assert_int_equal(sift_ring_dropped(), 0);
}

/* Two consumers take turns on each ring: every record is delivered once, in order. */
static void consumers_take_turns(void **state)
{
    (void)state;
    sift_ring_reset();
    tally t;
    run(2, true, &t);
    check_complete(&t);
    assert_int_equal(sift_ring_dropped(), 0);
}

/* Without a consumer each producer's ring fills and the rest of its records are counted. */
static void no_consumer_drops(void **state)
{
    (void)state;
    sift_ring_reset();
    tally t;
    run(0, false, &t);
    assert_int_equal(sift_ring_dropped(), PRODUCERS * (PER_THREAD - SIFT_RING_CAPACITY));
    sift_ring_drain(count, &t, 1000000);
    for (unsigned i = 0; i < PRODUCERS; i++)
        assert_int_equal(atomic_load(&t.seen[i]), SIFT_RING_CAPACITY);
    assert_int_equal(atomic_load(&t.out_of_order), 0);
    sift_ring_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_and_numbering), cmocka_unit_test(full_ring_counts_drops),
        cmocka_unit_test(consumer_keeps_up),   cmocka_unit_test(consumers_take_turns),
        cmocka_unit_test(no_consumer_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
