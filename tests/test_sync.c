/* Sync with other instances: hostile sync folders are refused entry by entry, with one line
 * each and no crash; imports are tracked per peer across restarts; and a sift instance and an
 * AFL++ instance on the same folder each take in what only the other has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *dir;
static sift_test_proc proc;

/* Entries of the scratch folder's SUB whose names contain PART, hidden ones left out. */
#define entries(sub, part) sift_test_count_entries(dir, sub, "[!.]*" part "*")

static int build(void **state)
{
    *state = dir = sift_test_scratch();
    return sift_test_build(dir, "w", "tests/fixtures/workers.c", "");
}

static void hostile_sync_folders_are_refused_cleanly(void **state)
{
    (void)state;
    /* A peer whose queue holds one good entry (a branch only its seed reaches) among every kind
     * of trouble, and folders that are not peers at all. */
    int rc = SIFT_TEST_SH(
        "rm -rf S && mkdir -p S/evil/queue/id:000005,dir 'S/bad name/queue' S/stranger && "
        "cd S/evil/queue && printf 'afl++seed' > id:000000,ok && : > id:000001,empty && "
        "ln -s /etc/passwd id:000002,link && head -c 100 /dev/zero > id:000003,big && "
        "mkfifo id:000004,fifo && printf 'CRASH!' > id:000006,crash && printf x > notanid"
        " && touch -h -d '1 minute ago' * && cd ../.. && ln -s evil link && cd .. && "
        "./w -workers=1 -sync_dir=S -name=me -max_len=64 -max_total_time=3 2>log; "
        "echo rc=$?; grep '^sift: sync' log");
    assert_int_equal(rc, 0);
    static const char *const lines[] = {
        "S/evil/queue/id:000001,empty: empty; skipped",
        "S/evil/queue/id:000002,link: a symbolic link; skipped",
        "S/evil/queue/id:000003,big: 100 bytes, more than -max_len=64; skipped",
        "S/evil/queue/id:000004,fifo: not a regular file; skipped",
        "S/evil/queue/id:000005,dir: not a regular file; skipped",
        "S/evil/queue/notanid: not an AFL++ queue entry",
        "S/link: not a folder (or a link to one); skipped",
        "S: an instance name with odd characters; skipped",
        "S/evil/queue/id:000006,crash crashes the target; skipped",
    };
    SIFT_TEST_EXPECT_ALL(proc.out, lines);
    /* The crash is kept with the instance's own; the good entry was imported once. */
    assert_non_null(strstr(proc.out, "rc=77"));
    assert_int_equal(entries("S/me/crashes", "sync:evil,src:000006"), 1);
    assert_int_equal(entries("S/me/queue", "sync:evil,src:000000"), 1);
    assert_int_equal(SIFT_TEST_SH("od -An -tu4 S/me/.synced/evil"), 0);
    assert_int_equal(strtol(proc.out, NULL, 10), 7);

    /* A restart imports nothing again and meets the crash no more. */
    SIFT_TEST_SH("./w -workers=1 -sync_dir=S -name=me -max_len=64 -max_total_time=2 2>log; "
                 "echo rc=$?; grep -c 'crashes the target' log");
    assert_non_null(strstr(proc.out, "rc=0"));
    assert_non_null(strstr(proc.out, "\n0\n"));
    assert_int_equal(entries("S/me/queue", "sync:evil"), 1);

    /* An AFL++ peer that started again (its cmdline is newer than our record) may have begun a
     * new queue: its entries are imported again; the one already here is not saved twice. */
    SIFT_TEST_SH("touch -d '1 minute' S/evil/cmdline && ./w -workers=1 -sync_dir=S -name=me "
                 "-max_len=64 -max_total_time=2 2>log; grep 'restarted since' log");
    assert_non_null(strstr(proc.out, "S/evil: restarted since the last sync; importing its queue "
                                     "again"));
    assert_int_equal(entries("S/me/queue", "sync:evil"), 1);
}

/* Links planted in the instance's own folder (DIR/NAME) are never followed: neither logs nor
 * plot_data truncate a file elsewhere, a queue/ or logs/ that is a link is refused before
 * anything is written or removed in it, and a link inside the queue is not read on resume. */
static void links_in_its_own_folder_are_not_followed(void **state)
{
    (void)state;
    static const struct {
        const char *plant, *line;
    } cases[] = {
        {"mkdir -p S/me/logs && ln -s ../../../victim S/me/logs/worker-0.log",
         "sift: cannot create the log S/me/logs/worker-0.log: Too many levels of symbolic links"},
        {"mkdir -p S/me && ln -s ../../victim S/me/plot_data",
         "sift: -out: cannot write S/me/plot_data: Too many levels of symbolic links"},
        {"mkdir -p S/me && ln -s ../../away S/me/queue",
         "sift: -out: S/me/queue: a symbolic link, not a folder"},
        {"mkdir -p S/me && ln -s ../../away S/me/logs",
         "sift: -out: S/me/logs: not a folder (or a symbolic link)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc =
            SIFT_TEST_SH("rm -rf S away && mkdir away && printf precious > victim && "
                         "printf x > away/.x.tmp.1.1 && %s && ./w -workers=1 -sync_dir=S -name=me "
                         "-max_total_time=2",
                         cases[i].plant);
        if (rc != 1) fail_msg("%s: exit code %d:\n%s", cases[i].plant, rc, proc.err);
        sift_test_one_line(&proc, cases[i].plant, cases[i].line);
        assert_int_equal(SIFT_TEST_SH("cat victim; ls -A away"), 0);
        assert_string_equal(proc.out, "precious.x.tmp.1.1\n");
    }
    /* A link in the queue, to a file outside, on resume. */
    int rc = SIFT_TEST_SH(
        "rm -rf S c && mkdir c && ./w -workers=1 -sync_dir=S -name=me -runs=10 c && "
        "ln -s ../../../victim S/me/queue/id:000100,evil && ./w -workers=1 -sync_dir=S "
        "-name=me -runs=1000 c");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "S/me/queue/id:000100,evil: a symbolic link"));
    assert_int_equal(SIFT_TEST_SH("find S c -type f ! -name victim -exec grep -l precious {} +"),
                     1);
}

/* A peer's entry names go into messages escaped: a newline cannot forge a line, an escape
 * sequence cannot reach the terminal. */
static void odd_peer_names_are_printed_escaped(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf S && mkdir -p S/peer/queue && "
        ": > \"S/peer/queue/id:000000,$(printf 'x\\nsift: sync: forged\\033]0;t\\007')\" && "
        "touch -d '1 minute ago' S/peer/queue/* && "
        "./w -workers=1 -sync_dir=S -name=me -max_total_time=2");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "sift: sync: S/peer/queue/id:000000,x\\x0asift: sync: "
                                     "forged\\x1b]0;t\\x07: empty; skipped\n"));
    assert_null(strchr(proc.err, '\033'));
    assert_null(strstr(proc.err, "\nsift: sync: forged"));
}

static void sift_and_afl_import_each_other(void **state)
{
    (void)state;
    if (SIFT_TEST_SH("command -v afl-fuzz && command -v afl-clang-fast") != 0) skip();
    assert_int_equal(
        SIFT_TEST_SH("AFL_QUIET=1 afl-clang-fast -g -O1 -fsanitize=fuzzer " SIFT_SOURCE_DIR
                     "/tests/fixtures/workers.c -o w_afl 2>&1"),
        0);
    /* Each instance starts from a seed that reaches a branch the other cannot find. */
    assert_int_equal(SIFT_TEST_SH("rm -rf S ss sa && mkdir ss sa && printf sift-seed > ss/s && "
                                  "printf 'afl++seed' > sa/a && touch -d '1 minute ago' ss/s sa/a"),
                     0);
    assert_int_equal(SIFT_TEST_SH("./w -workers=1 -sync_dir=S -name=sift -max_total_time=40 ss "
                                  ">sift.log 2>&1 & echo $!"),
                     0);
    pid_t sift = (pid_t)strtol(proc.out, NULL, 10);
    uint64_t t0 = sift_test_now_ms();
    while (sift_test_now_ms() - t0 < 10000 && entries("S/sift/queue", "id:") == 0)
        usleep(20000);
    assert_int_equal(
        SIFT_TEST_SH("AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 "
                     "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_IMPORT_FIRST=1 "
                     "afl-fuzz -i sa -o S -M afl -V 40 -- ./w_afl >afl.log 2>&1 & echo $!"),
        0);
    pid_t afl = (pid_t)strtol(proc.out, NULL, 10);
    t0 = sift_test_now_ms();
    while (sift_test_now_ms() - t0 < 30000 &&
           (entries("S/afl/queue", "sync:sift") == 0 || entries("S/sift/queue", "sync:afl") == 0))
        usleep(50000);
    kill(sift, SIGTERM);
    kill(afl, SIGTERM);
    if (entries("S/afl/queue", "sync:sift") == 0 || entries("S/sift/queue", "sync:afl") == 0) {
        SIFT_TEST_SH("tail -5 afl.log sift.log; ls S/*/queue");
        fail_msg("no exchange within 30 s:\n%s", proc.out);
    }
    /* Both stop cleanly on SIGTERM. */
    t0 = sift_test_now_ms();
    while (sift_test_now_ms() - t0 < 15000 && (kill(sift, 0) == 0 || kill(afl, 0) == 0) &&
           SIFT_TEST_SH("ps -o stat= -p %d -p %d | grep -qv Z", (int)sift, (int)afl) == 0)
        usleep(50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_sync_folders_are_refused_cleanly),
        cmocka_unit_test(links_in_its_own_folder_are_not_followed),
        cmocka_unit_test(odd_peer_names_are_printed_escaped),
        cmocka_unit_test(sift_and_afl_import_each_other),
    };
    return cmocka_run_group_tests(tests, build, sift_test_scratch_teardown);
}
