/* The discovery log: records round-trip, and forked producers racing one draining reader and
 * lagging readers never hand anyone a torn or lost record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/campaign/dlog.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    void *mem;
    size_t len;
    sift_dlog log;
} shared_log;

static void map_log(shared_log *l, unsigned nrings, size_t ring_bytes)
{
    l->len = sift_dlog_bytes(nrings, ring_bytes);
    assert_true(l->len > 0);
    l->mem = mmap(NULL, l->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(l->mem != MAP_FAILED);
    sift_dlog_init(&l->log, l->mem, nrings, ring_bytes);
}

/* Record SEQ of producer P: its size, bytes and features all derive from (P, SEQ), so that a
 * reader can tell a torn record from a whole one. */
static size_t fill(unsigned p, uint32_t seq, uint8_t *data, sift_feature_id *feats, size_t *nf)
{
    size_t size = 1 + (seq * 7919u + p * 31u) % 900;
    for (size_t i = 0; i < size; i++)
        data[i] = (uint8_t)(seq * 13 + p * 7 + i);
    *nf = seq % 40;
    for (size_t i = 0; i < *nf; i++)
        feats[i] = sift_feature(i % 3, (size_t)seq * 64 + i * 977, (unsigned)(i & 7));
    return size;
}

static bool check(const sift_dlog_entry *e, unsigned p, uint32_t seq)
{
    uint8_t data[1024];
    sift_feature_id feats[64];
    size_t nf;
    size_t size = fill(p, seq, data, feats, &nf);
    return e->origin == seq && e->flags == p && e->size == size && !memcmp(e->data, data, size) &&
           e->nfeatures == nf && (!nf || !memcmp(e->features, feats, nf * sizeof(*feats)));
}

/* In a forked child: a failed assertion in the test must not leave it waiting forever. */
static void die_with_parent(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void produce(shared_log *l, unsigned p, uint32_t from, uint32_t to)
{
    die_with_parent();
    sift_dlog_scratch s = {0};
    uint8_t data[1024];
    sift_feature_id feats[64];
    for (uint32_t seq = from; seq < to; seq++) {
        size_t nf;
        sift_dlog_entry e = {.flags = p, .origin = seq};
        e.size = fill(p, seq, data, feats, &nf);
        e.data = data;
        e.features = feats;
        e.nfeatures = nf;
        snprintf(e.name, sizeof e.name, "%u-%u", p, seq);
        if (sift_dlog_publish(&l->log, p, &e, &s) != 0) _exit(2);
    }
    sift_dlog_scratch_free(&s);
}

static void round_trip(void **state)
{
    (void)state;
    shared_log l;
    map_log(&l, 1, 4096);
    sift_dlog_scratch s = {0};
    static const uint8_t data[] = "PNG\r\n";
    sift_feature_id feats[] = {3, 4, sift_feature(2, 1u << 27, 7), (uint64_t)1 << 42};
    sift_dlog_entry in = {.flags = SIFT_DLOG_KNOWN,
                          .origin = 77,
                          .exec_ns = 1234,
                          .execs = 99,
                          .data = data,
                          .size = 5,
                          .features = feats,
                          .nfeatures = 4};
    strcpy(in.name, "0123456789012345678901234567890123456789");
    strcpy(in.parent, "abc");
    strcpy(in.op, "ChangeByte-CMP");
    assert_int_equal(sift_dlog_publish(&l.log, 0, &in, &s), 0);
    assert_true(in.published_ns > 0);
    assert_int_equal(sift_dlog_generation(&l.log), 1);
    uint64_t cursor = 0;
    sift_dlog_scratch rs = {0};
    sift_dlog_entry out;
    assert_int_equal(sift_dlog_read(&l.log, 0, &cursor, &out, &rs), 1);
    assert_int_equal(cursor, sift_dlog_head(&l.log, 0));
    assert_int_equal(cursor, sift_dlog_record_size(&in));
    assert_int_equal(out.flags, SIFT_DLOG_KNOWN);
    assert_int_equal(out.origin, 77);
    assert_int_equal(out.exec_ns, 1234);
    assert_int_equal(out.execs, 99);
    assert_int_equal(out.published_ns, in.published_ns);
    assert_string_equal(out.name, in.name);
    assert_string_equal(out.parent, "abc");
    assert_string_equal(out.op, "ChangeByte-CMP");
    assert_int_equal(out.size, 5);
    assert_memory_equal(out.data, data, 5);
    assert_int_equal(out.nfeatures, 4);
    assert_memory_equal(out.features, feats, sizeof feats);
    assert_int_equal(sift_dlog_read(&l.log, 0, &cursor, &out, &rs), 0);

    /* Larger than half a ring: refused, nothing published. */
    uint8_t big[3000] = {0};
    sift_dlog_entry huge = {.data = big, .size = sizeof big};
    errno = 0;
    assert_int_equal(sift_dlog_publish(&l.log, 0, &huge, &s), -1);
    assert_int_equal(errno, E2BIG);
    assert_int_equal(sift_dlog_generation(&l.log), 1);
    sift_dlog_scratch_free(&s);
    sift_dlog_scratch_free(&rs);
    munmap(l.mem, l.len);
}

#define PRODUCERS 4
#define RECORDS   3000u

/* A reader that never releases and sleeps now and then: it falls behind and must only ever see
 * whole records or be told it fell behind. Exits 0 when it saw no torn record. */
static void lagging_reader(shared_log *l)
{
    die_with_parent();
    sift_dlog_scratch s = {0};
    uint64_t cursor[PRODUCERS] = {0};
    uint32_t last[PRODUCERS] = {0};
    unsigned reads = 0, torn = 0;
    struct timespec nap = {0, 300000};
    for (;;) {
        bool idle = sift_dlog_generation(&l->log) == (uint64_t)PRODUCERS * RECORDS;
        for (unsigned p = 0; p < PRODUCERS; p++) {
            sift_dlog_entry e;
            int rc = sift_dlog_read(&l->log, p, &cursor[p], &e, &s);
            if (rc == 1) {
                torn += !check(&e, p, e.origin) || (e.origin && e.origin <= last[p]);
                last[p] = e.origin;
            }
            idle &= rc == 0;
        }
        if (idle) break;
        if (++reads % 7 == 0) nanosleep(&nap, NULL);
    }
    _exit(torn ? 3 : 0);
}

static void racing_producers_lose_nothing(void **state)
{
    (void)state;
    shared_log l;
    map_log(&l, PRODUCERS, 16384); /* small rings: they wrap, and producers wait for room */
    pid_t lagger = fork();
    if (lagger == 0) lagging_reader(&l);
    pid_t pids[PRODUCERS];
    for (unsigned p = 0; p < PRODUCERS; p++)
        if ((pids[p] = fork()) == 0) {
            produce(&l, p, 0, RECORDS);
            _exit(0);
        }
    sift_dlog_scratch s = {0};
    uint64_t cursor[PRODUCERS] = {0};
    uint32_t next[PRODUCERS] = {0};
    unsigned done = 0;
    while (done < PRODUCERS) {
        done = 0;
        for (unsigned p = 0; p < PRODUCERS; p++) {
            sift_dlog_entry e;
            int rc;
            while ((rc = sift_dlog_read(&l.log, p, &cursor[p], &e, &s)) == 1) {
                if (e.origin != next[p] || !check(&e, p, next[p]))
                    fail_msg("ring %u: expected record %u, got %u", p, next[p], e.origin);
                next[p]++;
            }
            assert_int_not_equal(rc, -1); /* the draining reader can never fall behind */
            sift_dlog_release(&l.log, p, cursor[p]);
            done += next[p] == RECORDS;
        }
    }
    for (unsigned p = 0; p < PRODUCERS; p++) {
        int status;
        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    int status;
    assert_int_equal(waitpid(lagger, &status, 0), lagger);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(sift_dlog_generation(&l.log), PRODUCERS * RECORDS);
    sift_dlog_scratch_free(&s);
    munmap(l.mem, l.len);
}

static void killed_producer_leaves_whole_records(void **state)
{
    (void)state;
    shared_log l;
    map_log(&l, 1, 16384);
    sift_dlog_scratch s = {0};
    uint64_t cursor = 0;
    uint32_t next = 0;
    /* Producers killed at random moments, each followed by another that goes on from the
     * head: the reader sees a run of whole records, with gaps only where a producer died. */
    for (int round = 0; round < 20; round++) {
        pid_t pid = fork();
        if (pid == 0) {
            uint32_t first = (uint32_t)round * 100000u;
            produce(&l, 0, first, first + 100000u);
            _exit(0);
        }
        struct timespec t = {0, 200000 + (long)(round % 5) * 300000};
        uint64_t until = 0;
        for (int spin = 0; spin < 50; spin++) {
            sift_dlog_entry e;
            while (sift_dlog_read(&l.log, 0, &cursor, &e, &s) == 1) {
                if (!check(&e, 0, e.origin) || (e.origin < next && next))
                    fail_msg("round %d: torn or reordered record %u", round, e.origin);
                next = e.origin + 1;
                until++;
            }
            sift_dlog_release(&l.log, 0, cursor);
            nanosleep(&t, NULL);
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        assert_true(until > 0);
    }
    sift_dlog_entry e;
    while (sift_dlog_read(&l.log, 0, &cursor, &e, &s) == 1)
        assert_true(check(&e, 0, e.origin));
    assert_int_equal(cursor, sift_dlog_head(&l.log, 0));
    sift_dlog_scratch_free(&s);
    munmap(l.mem, l.len);
}

/* A producer runs at most 64 KiB (and one record) ahead of the supervisor's cursor, whatever
 * the ring's size: a stop then has little to save. Closing the log releases a producer waiting
 * for room, which before waited for as long as nobody drained. */
#define BACKLOG ((uint64_t)64 * 1024) /* dlog.c's BACKLOG_BYTES */

static void producers_wait_a_bounded_backlog_until_closed(void **state)
{
    (void)state;
    shared_log l;
    map_log(&l, 1, 1 << 20);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        die_with_parent();
        sift_dlog_scratch s = {0};
        static uint8_t data[1000];
        for (uint32_t seq = 0;; seq++) {
            sift_dlog_entry e = {.origin = seq, .data = data, .size = sizeof data};
            if (sift_dlog_publish(&l.log, 0, &e, &s) != 0) _exit(errno == ECANCELED ? 3 : 2);
        }
    }
    while (sift_dlog_head(&l.log, 0) < BACKLOG - 4096) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    sift_dlog_entry e;
    sift_dlog_scratch s = {0};
    uint64_t cursor = 0;
    assert_int_equal(sift_dlog_read(&l.log, 0, &cursor, &e, &s), 1);
    uint64_t record = cursor;
    struct timespec nap = {0, 50000000};
    nanosleep(&nap, NULL);
    assert_true(sift_dlog_head(&l.log, 0) <= BACKLOG + record);
    /* Released room is taken up again, to the same bound. */
    sift_dlog_release(&l.log, 0, cursor);
    while (sift_dlog_head(&l.log, 0) <= BACKLOG) {
        struct timespec tick = {0, 1000000};
        nanosleep(&tick, NULL);
    }
    nanosleep(&nap, NULL);
    assert_true(sift_dlog_head(&l.log, 0) <= cursor + BACKLOG + record);
    sift_dlog_close(&l.log);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    sift_dlog_scratch_free(&s);
    munmap(l.mem, l.len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(racing_producers_lose_nothing),
        cmocka_unit_test(killed_producer_leaves_whole_records),
        cmocka_unit_test(producers_wait_a_bounded_backlog_until_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
