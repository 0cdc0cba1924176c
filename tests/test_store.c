/* Tests of the supervisor's saved-input store: a find counts as saved only once its files are
 * renamed into place, a replay is reconciled with what is on disk, and a full disk or a file
 * that cannot be put in place ends the taking with one line and no file cut short. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/campaign/store.h"
#include "engine/base/files.h"
#include "support/harness.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A scratch folder holding the corpus folder c and the -out folder o, and the store on them. */
typedef struct {
    char *dir;
    char corpus[PATH_MAX];
    sift_outdir out;
    sift_store store;
} fixture;

/* Opens the -out folder o, as a campaign does when it starts or resumes. */
static void open_out(fixture *f)
{
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/o", f->dir);
    assert_int_equal(sift_outdir_open(&f->out, out), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    *state = f;
    sift_test_scratch_sub(&f->dir, "c", f->corpus, NULL);
    open_out(f);
    assert_int_equal(sift_store_init(&f->store, f->corpus, &f->out), 0);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sift_store_free(&f->store);
    sift_outdir_close(&f->out);
    sift_test_rmtree(f->dir);
    free(f);
    return 0;
}

/* Features that make each input its own: a text's first byte picks them. */
static sift_feature_id feats[256][2];

/* The discovery of TEXT as a worker publishes it. */
static sift_dlog_entry entry(const char *text)
{
    sift_dlog_entry e = {.exec_ns = 1000, .published_ns = 1};
    e.data = (const uint8_t *)text;
    e.size = strlen(text);
    sift_sha1_hex(e.data, e.size, e.name);
    unsigned char k = (unsigned char)text[0];
    feats[k][0] = sift_feature(1, k, 0);
    feats[k][1] = sift_feature(1, k, 1);
    e.features = feats[k];
    e.nfeatures = 2;
    return e;
}

static const char *sha1_of(const char *text)
{
    static char name[41];
    sift_sha1_hex((const uint8_t *)text, strlen(text), name);
    return name;
}

/* A find is written to both places, but under its final names only after the flush. */
static void a_find_is_saved_at_the_flush(void **state)
{
    fixture *f = *state;
    sift_dlog_entry e = entry("alpha");
    assert_int_equal(sift_store_take(&f->store, &e, "src:000000"), 1);
    assert_null(sift_test_read(f->dir, "o/queue/id:000000,src:000000"));
    assert_int_equal(sift_test_count_entries(f->dir, "c", "[!.]*"), 0);
    assert_int_equal(sift_test_count_entries(f->dir, "c", ".*.tmp.*"), 1);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", ".*.tmp.*"), 1);
    assert_int_equal(sift_store_flush(&f->store), 0);
    assert_string_equal(sift_test_read(f->dir, "o/queue/id:000000,src:000000"), "alpha");
    char rel[64];
    snprintf(rel, sizeof rel, "c/%s", e.name);
    assert_string_equal(sift_test_read(f->dir, rel), "alpha");
    assert_int_equal(sift_test_count_entries(f->dir, "c", "*"), 1);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", "*"), 1);
    assert_int_equal(f->store.queue_id[0], 0);
    /* The same input again, or one a worker knew already, is not taken. */
    assert_int_equal(sift_store_take(&f->store, &e, "src:000001"), 0);
    sift_dlog_entry known = entry("beta");
    known.flags = SIFT_DLOG_KNOWN;
    assert_int_equal(sift_store_take(&f->store, &known, "src:000002"), 0);
    assert_int_equal(sift_store_flush(&f->store), 0);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", "*"), 1);
    assert_int_equal(sift_corpus_count(f->store.corpus), 1);
}

/* A burst of finds (more than the count synced file by file) is saved whole. */
static void a_burst_is_saved_whole(void **state)
{
    fixture *f = *state;
    static const char *const texts[] = {"a1", "b2", "c3", "d4", "e5", "f6", "g7"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        sift_dlog_entry e = entry(texts[i]);
        assert_int_equal(sift_store_take(&f->store, &e, "op:burst"), 1);
    }
    assert_int_equal(sift_store_flush(&f->store), 0);
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "o/queue/id:%06zu,op:burst", i);
        assert_string_equal(sift_test_read(f->dir, rel), texts[i]);
        snprintf(rel, sizeof rel, "c/%s", sha1_of(texts[i]));
        assert_string_equal(sift_test_read(f->dir, rel), texts[i]);
    }
    assert_int_equal(sift_test_count_entries(f->dir, "c", ".*"), 0);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", ".*"), 0);
}

/* What replay found on disk, item by item, and what reconcile must add. */
typedef struct {
    const char *text;
    unsigned where;
    const char *desc; /* the queue name describe gives */
} replayed;

static const replayed items[] = {
    {"in-both", SIFT_ON_QUEUE | SIFT_ON_DIR, "orig:both"},
    {"queue-only", SIFT_ON_QUEUE, "orig:queue"}, /* killed before the corpus copy */
    {"dir-only", SIFT_ON_DIR, "orig:dir"},       /* a corpus input not yet in -out */
    {"seed-only", SIFT_ON_SEED, "orig:seed"},    /* an original seed: queued, never copied */
};

static void describe(void *ctx, size_t item, unsigned *where, char *desc, size_t cap)
{
    const replayed *list = ctx;
    *where = list[item].where;
    snprintf(desc, cap, "%s", list[item].desc);
}

static void reconcile_writes_only_what_is_missing(void **state)
{
    fixture *f = *state;
    size_t n = sizeof(items) / sizeof(items[0]);
    /* On disk as the replay saw it. */
    char rel[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        if (items[i].where & SIFT_ON_QUEUE) {
            snprintf(rel, sizeof rel, "o/queue/id:%06zu,%s", i, items[i].desc);
            free(sift_test_write(f->dir, rel, items[i].text, 0644));
        }
        if (items[i].where & SIFT_ON_DIR) {
            snprintf(rel, sizeof rel, "c/%s", sha1_of(items[i].text));
            free(sift_test_write(f->dir, rel, items[i].text, 0644));
        }
    }
    sift_outdir_close(&f->out);
    open_out(f);
    assert_int_equal(f->out.next_id, 2);
    for (size_t i = 0; i < n; i++) {
        sift_dlog_entry e = entry(items[i].text);
        sift_store_replayed(&f->store, &e, i, items[i].where,
                            items[i].where & SIFT_ON_QUEUE ? (long)i : -1);
    }
    /* queue-only gets its corpus copy; dir-only and seed-only their queue entries. */
    assert_int_equal(sift_store_reconcile(&f->store, describe, (void *)items), 3);
    snprintf(rel, sizeof rel, "c/%s", sha1_of("queue-only"));
    assert_string_equal(sift_test_read(f->dir, rel), "queue-only");
    assert_string_equal(sift_test_read(f->dir, "o/queue/id:000002,orig:dir"), "dir-only");
    assert_string_equal(sift_test_read(f->dir, "o/queue/id:000003,orig:seed"), "seed-only");
    snprintf(rel, sizeof rel, "c/%s", sha1_of("seed-only"));
    assert_null(sift_test_read(f->dir, rel));
    assert_int_equal(sift_test_count_entries(f->dir, "c", "*"), 3);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", "*"), 4);
    assert_int_equal(f->store.queue_id[0], 0);
    assert_int_equal(f->store.queue_id[1], 1);
    assert_int_equal(f->store.queue_id[2], 2);
    assert_int_equal(f->store.queue_id[3], 3);
    assert_int_equal(sift_test_count_entries(f->dir, "c", ".*"), 0);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", ".*"), 0);
}

/* Crashes and hangs are saved once per distinct input. */
static void faults_are_saved_once_each(void **state)
{
    fixture *f = *state;
    assert_int_equal(sift_store_fault(&f->store, false, (const uint8_t *)"boom", 4, "sig:06"), 1);
    assert_int_equal(sift_store_fault(&f->store, false, (const uint8_t *)"boom", 4, "sig:06"), 0);
    assert_int_equal(sift_store_fault(&f->store, true, (const uint8_t *)"slow", 4, "src:1"), 1);
    assert_string_equal(sift_test_read(f->dir, "o/crashes/id:000000,sig:06"), "boom");
    assert_string_equal(sift_test_read(f->dir, "o/hangs/id:000000,src:1"), "slow");
    assert_int_equal(sift_test_count_entries(f->dir, "o/crashes", "*"), 1);
}

/* A file that cannot be put in place: the flush fails with one line, leaves no temporary, and
 * nothing more is taken. The corpus copy, renamed before, stays: resume mends the queue. */
static void a_failed_rename_ends_the_taking(void **state)
{
    fixture *f = *state;
    sift_dlog_entry e = entry("gamma");
    assert_int_equal(sift_store_take(&f->store, &e, "src:9"), 1);
    /* A folder where the queue entry goes. */
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/o/queue/id:000000,src:9", f->dir);
    assert_int_equal(mkdir(rel, 0755), 0);
    free(sift_test_write(rel, "x", "x", 0644));
    sift_test_capture c;
    sift_test_capture_begin(&c);
    int rc = sift_store_flush(&f->store);
    sift_dlog_entry next = entry("delta");
    int taken = sift_store_take(&f->store, &next, "src:10");
    const char *err = sift_test_capture_end(&c);
    assert_int_equal(rc, -1);
    assert_int_equal(taken, -1);
    char line[PATH_MAX + 64];
    snprintf(line, sizeof line, "sift: cannot save %s: Is a directory\n", rel);
    assert_string_equal(err, line);
    assert_true(f->store.failed);
    snprintf(rel, sizeof rel, "c/%s", e.name);
    assert_string_equal(sift_test_read(f->dir, rel), "gamma");
    assert_int_equal(sift_test_count_entries(f->dir, "c", "*"), 1);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", "*"), 1); /* the folder */
}

/* In a child whose files may not grow past 1 KiB (a full disk): a small find, then one too
 * large to write, then one more, and the flush. Returns a bit per result not as expected. */
static int take_on_a_full_disk(void *ctx)
{
    fixture *f = ctx;
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/log", f->dir);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) return 99;
    static char big[1500];
    memset(big, 'B', sizeof big - 1);
    sift_dlog_entry small = entry("small"), large = entry(big), later = entry("later");
    int bad = 0;
    bad |= (sift_store_take(&f->store, &small, "src:1") != 1) << 0;
    bad |= (sift_store_take(&f->store, &large, "src:2") != -1) << 1;
    bad |= (sift_store_take(&f->store, &later, "src:3") != -1) << 2;
    bad |= (sift_store_flush(&f->store) != 0) << 3;
    return bad;
}

static void a_full_disk_leaves_no_file_cut_short(void **state)
{
    fixture *f = *state;
    sift_test_jail j = {.fsize = 1024};
    assert_int_equal(sift_test_fork_jailed(&j, take_on_a_full_disk, f), 0);
    /* The large find's file was never renamed into place, and its temporary is gone; the small
     * one, staged before, was still saved. */
    char rel[PATH_MAX], line[PATH_MAX + 64];
    snprintf(rel, sizeof rel, "c/%s", sha1_of("small"));
    assert_string_equal(sift_test_read(f->dir, rel), "small");
    assert_string_equal(sift_test_read(f->dir, "o/queue/id:000000,src:1"), "small");
    assert_int_equal(sift_test_count_entries(f->dir, "c", "*"), 1);
    assert_int_equal(sift_test_count_entries(f->dir, "o/queue", "*"), 1);
    char big[1500];
    memset(big, 'B', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    snprintf(line, sizeof line, "sift: cannot save %s/c/%s: File too large\n", f->dir,
             sha1_of(big));
    assert_string_equal(sift_test_read(f->dir, "log"), line);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(a_find_is_saved_at_the_flush),          TEST(a_burst_is_saved_whole),
        TEST(reconcile_writes_only_what_is_missing), TEST(faults_are_saved_once_each),
        TEST(a_failed_rename_ends_the_taking),       TEST(a_full_disk_leaves_no_file_cut_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
