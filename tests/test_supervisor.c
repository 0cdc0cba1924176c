/* Integration tests of -workers: real harnesses built with sift-cc, run by a supervisor with
 * workers, killed and resumed as a user (or the kernel) would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *dir;
static sift_test_proc proc;

/* Entries of the scratch folder's SUB that match GLOB. */
#define entries(sub, glob) sift_test_count_entries(dir, sub, glob)

/* The shell command line FMT in the scratch folder in jail J; its status. */
static int sh_jailed(const sift_test_jail *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int sh_jailed(const sift_test_jail *j, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return sift_test_sh_jailed(&proc, j, dir, "%s", cmd);
}

/* Expects LINE (which starts with "sift: ") to be the one line of sift's own in the last
 * command's stderr. */
#define one_line(what, line) sift_test_one_line(&proc, what, line)
#define intact_files(sub)    sift_test_intact_files(&proc, dir, sub)

static int build(void **state)
{
    *state = dir = sift_test_scratch();
    if (sift_test_build(dir, "w", "tests/fixtures/workers.c", "") ||
        sift_test_build(dir, "calc", "examples/calc.c", "") ||
        sift_test_build(dir, "hostile", "tests/fixtures/hostile.c", ""))
        return -1;
    return 0;
}

static void discoveries_reach_every_worker_and_the_disk(void **state)
{
    (void)state;
    int rc =
        SIFT_TEST_SH("rm -rf c o && mkdir c && ./w -workers=2 -seed=1 -max_total_time=4 -out=o "
                     "-stats_file=s.json c 2>log; echo rc=$?; cat s.json; grep -c NEW log");
    assert_non_null(strstr(proc.out, "rc=0"));
    assert_int_equal(rc, 0);
    const char *w0 = strstr(proc.out, "\"workers\": [");
    assert_non_null(w0);
    const char *w1 = strstr(w0, "}, {");
    assert_non_null(w1);
    /* Each worker took in the other's finds, and the lags were measured. How long they are
     * depends on the machine's load (a second and more on a starved CPU), which no test may
     * depend on: they are only bounded by the run. */
    assert_true(sift_test_json_num(w0, "imported") > 0);
    assert_true(sift_test_json_num(w1, "imported") > 0);
    double run_ms = 1000 * sift_test_json_num(proc.out, "elapsed_sec");
    assert_true(sift_test_json_num(w0, "import_lag_ms") >= 0 &&
                sift_test_json_num(w0, "import_lag_ms") <= run_ms);
    assert_true(sift_test_json_num(w1, "import_lag_ms") >= 0 &&
                sift_test_json_num(w1, "import_lag_ms") <= run_ms);
    assert_true(sift_test_json_num(proc.out, "persist_lag_ms") >= 0 &&
                sift_test_json_num(proc.out, "persist_lag_ms") <= run_ms);
    double corpus = sift_test_json_num(proc.out, "corpus");
    assert_true(corpus > 5);
    /* Every entry is in the queue (the newline start included) and in the corpus folder. */
    assert_int_equal(entries("o/queue", "id:*"), (size_t)corpus);
    assert_int_equal(entries("c", "[!.]*"), (size_t)corpus - 1);
    assert_int_equal(entries("o/queue", ".*"), 0);
    assert_int_equal(
        SIFT_TEST_SH("grep -q 'workers: 2' log && grep -q '^execs_done' o/fuzzer_stats && "
                     "grep -q '^# relative_time' o/plot_data"),
        0);
    /* AFL++'s summary tool reads the folder (-d: the campaign has ended). */
    if (SIFT_TEST_SH("command -v afl-whatsup") == 0) {
        assert_int_equal(SIFT_TEST_SH("afl-whatsup -s -d . 2>&1"), 0);
        assert_non_null(strstr(proc.out, "(included in stats)"));
        assert_null(strstr(proc.out, "Total execs : 0 thousands"));
    }
}

/* libFuzzer's rule, for -fork, -jobs and -workers alike: the campaign ends at the first crash
 * unless -ignore_crashes=1; then each distinct crash is reported once and it goes on, however
 * often replacement workers find the same one. */
static void crashes_and_hangs_are_saved_and_the_campaign_goes_on(void **state)
{
    (void)state;
    /* From "CRASH" the crash is one byte away; short inputs keep the fuzzer near it, about once
     * in 500,000 executions. A count of executions, not a time, bounds the campaign, so that a
     * loaded machine still sees it found again. */
    int rc = SIFT_TEST_SH("rm -rf c o a && mkdir c a && printf CRASH > c/seed && ./w -workers=2 "
                          "-len_control=0 -max_len=6 -runs=8000000 -max_total_time=600 -out=o "
                          "-artifact_prefix=a/ -ignore_crashes=1 -stats_file=s.json c 2>log; "
                          "echo rc=$?; cat s.json");
    assert_int_not_equal(rc, -1);
    assert_non_null(strstr(proc.out, "rc=77"));
    assert_true(sift_test_json_num(proc.out, "crashes") >= 1);
    assert_true(entries("o/crashes", "id:000000,sig:06,*") == 1);
    assert_true(entries("a", "crash-*") >= 1);
    assert_int_equal(
        SIFT_TEST_SH("grep -q 'CRASH  worker' log && grep -q 'DONE ' log && "
                     "grep -q 'starting another' log && grep -q '(seen before)' log && "
                     "! grep -q 'workers died' log && head -c 2 o/crashes/id:000000*"),
        0);
    assert_string_equal(proc.out, "CR");
    /* "HANG!" is as far from its seed: the first hang ends the campaign, and a count of
     * executions, not a time, bounds the search for it. */
    SIFT_TEST_SH("rm -rf c o a && mkdir c a && printf HANG > c/seed && ./w -workers=1 -timeout=1 "
                 "-len_control=0 -max_len=5 -runs=8000000 -max_total_time=600 -out=o "
                 "-artifact_prefix=a/ c 2>log; echo rc=$?");
    assert_non_null(strstr(proc.out, "rc=70"));
    assert_true(entries("o/hangs", "id:*") >= 1);
    assert_true(entries("a", "timeout-*") >= 1);
}

/* Without -ignore_crashes the first crash ends the campaign, whether it was asked for as
 * -workers, -jobs or -fork (with corpus groups or without); -fork keeps its logs out of the
 * working folder, as libFuzzer's does, while -jobs (and -workers) write fuzz-N.log there, as
 * libFuzzer's -jobs does. */
static void first_crash_ends_the_campaign(void **state)
{
    (void)state;
    static const char *const modes[] = {"-workers=2", "-jobs=2", "-fork=2",
                                        "-fork=2 -fork_corpus_groups=1"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        int rc = SIFT_TEST_SH(
            "rm -rf c a f t && mkdir c a f t && printf CRASH > c/seed && cd f && "
            "TMPDIR=$PWD/../t ../w %s "
            "-len_control=0 -max_len=6 -max_total_time=600 -artifact_prefix=../a/ ../c",
            modes[i]);
        if (rc != 77) fail_msg("%s: exit %d\n%s", modes[i], rc, proc.err);
        assert_non_null(strstr(proc.err, "CRASH  worker "));
        assert_non_null(strstr(proc.err, "; campaign ending\n"));
        assert_null(strstr(proc.err, "starting another"));
        assert_true(entries("a", "crash-*") >= 1);
        assert_int_equal(entries("f", "fuzz-*"), i >= 2 ? 0 : 2);
        assert_int_equal(sift_test_count_entries(dir, "t", "*"),
                         0); /* -fork's logs are gone with it */
    }
}

/* Children of PID, from /proc. */
static size_t children(long pid, long *out, size_t cap)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
    FILE *f = fopen(path, "r");
    size_t n = 0;
    if (!f) return 0;
    if (fgets(buf, sizeof buf, f))
        for (char *p = strtok(buf, " \n"); p && n < cap; p = strtok(NULL, " \n"))
            out[n++] = strtol(p, NULL, 10);
    (void)fclose(f);
    return n;
}

#define MAX_SAVED 4096

typedef struct {
    char name[256];
    char *data;
    size_t len;
} saved_file;

static saved_file saved[MAX_SAVED];
static size_t nsaved;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 16);
    *len = buf ? fread(buf, 1, 1 << 16, f) : 0;
    (void)fclose(f);
    return buf;
}

/* Remembers every entry the queue reports as saved now. */
static void remember_queue(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/o/queue", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) && nsaved < MAX_SAVED) {
        if (e->d_name[0] == '.') continue;
        bool known = false;
        for (size_t i = 0; i < nsaved && !known; i++)
            known = !strcmp(saved[i].name, e->d_name);
        if (known) continue;
        char file[1024];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        snprintf(saved[nsaved].name, sizeof saved[nsaved].name, "%s", e->d_name);
        saved[nsaved].data = slurp(file, &saved[nsaved].len);
        if (saved[nsaved].data) nsaved++;
    }
    if (d) closedir(d);
}

static void saved_entries_are_intact(void)
{
    for (size_t i = 0; i < nsaved; i++) {
        char file[1024];
        size_t len;
        snprintf(file, sizeof file, "%s/o/queue/%s", dir, saved[i].name);
        char *now = slurp(file, &len);
        if (!now) fail_msg("saved entry %s was lost", saved[i].name);
        if (len != saved[i].len || memcmp(now, saved[i].data, len) != 0)
            fail_msg("saved entry %s changed", saved[i].name);
        free(now);
    }
}

static void kills_of_workers_and_supervisor_lose_nothing(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf c o && mkdir c"), 0);
    for (int cycle = 0; cycle < 10; cycle++) {
        assert_int_equal(SIFT_TEST_SH("./w -workers=2 -out=o c >>log 2>&1 & echo $!"), 0);
        long sup = strtol(proc.out, NULL, 10);
        long before = entries("o/queue", "id:*");
        uint64_t t0 = sift_test_now_ms();
        long kids[8] = {0};
        while (sift_test_now_ms() - t0 < 8000 &&
               (children(sup, kids, 8) < 2 || entries("o/queue", "id:*") < before + 2))
            sift_test_nap_ms(20);
        if (sift_test_now_ms() - t0 >= 8000 && cycle < 3)
            fail_msg("cycle %d: the queue did not grow", cycle);
        remember_queue();
        /* A worker dies: the supervisor starts another in its place. */
        assert_true(children(sup, kids, 8) >= 2);
        long victim = kids[0];
        kill((pid_t)victim, SIGKILL);
        t0 = sift_test_now_ms();
        while (sift_test_now_ms() - t0 < 8000 &&
               !(children(sup, kids, 8) == 2 && kids[0] != victim && kids[1] != victim))
            sift_test_nap_ms(20);
        assert_true(sift_test_now_ms() - t0 < 8000);
        sift_test_nap_ms(50 + (cycle * 37) % 200);
        remember_queue();
        /* Then the supervisor, at an arbitrary moment: its workers go with it. */
        kill((pid_t)sup, SIGKILL);
        t0 = sift_test_now_ms();
        while (sift_test_now_ms() - t0 < 8000 &&
               (sift_test_alive(sup) || sift_test_alive(kids[0]) || sift_test_alive(kids[1])))
            sift_test_nap_ms(20);
        assert_false(sift_test_alive(kids[0]) || sift_test_alive(kids[1]));
        saved_entries_are_intact();
    }
    /* The resumed campaign cleans what the kills cut short, and lost nothing. */
    SIFT_TEST_SH("./w -workers=2 -out=o -max_total_time=2 c 2>log2; echo rc=$?; "
                 "grep -E 'INFO: replayed|partial files' log2");
    assert_non_null(strstr(proc.out, "rc=0"));
    assert_non_null(strstr(proc.out, "INFO: replayed "));
    saved_entries_are_intact();
    assert_int_equal(entries("o/queue", ".*"), 0);
    assert_int_equal(entries("c", ".*"), entries("c", ".lock")); /* only the lock */
    /* Every find is in both folders: a kill between the two writes is mended on resume. */
    assert_int_equal(
        SIFT_TEST_SH("for f in o/queue/id:*; do case $f in *orig:newline) continue;; esac; "
                     "test -e c/$(sha1sum < \"$f\" | cut -c1-40) || echo missing $f; done"),
        0);
    assert_string_equal(proc.out, "");
    for (size_t i = 0; i < nsaved; i++)
        free(saved[i].data);
    nsaved = 0;
}

static void resume_reports_inputs_that_now_fail(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf c o && mkdir -p c o/queue && printf 'ab[cd]' > 'o/queue/id:000000,orig:x'"
        " && printf 'CRASH!' > 'o/queue/id:000001,src:000000,time:1,execs:2,op:havoc' && "
        "printf 'partial' > 'o/queue/.id:000002.tmp.99.0' && "
        "./w -workers=2 -out=o -max_total_time=2 c 2>log; echo rc=$?; "
        "grep -E '^INFO|^sift|DONE' log");
    assert_int_not_equal(rc, -1);
    assert_non_null(strstr(proc.out, "rc=0"));
    assert_non_null(strstr(proc.out, "INFO: removed 1 partial files"));
    assert_non_null(strstr(proc.out, "sift: replay: o/queue/id:000001,src:000000,time:1,execs:2,"
                                     "op:havoc crashes the target"));
    assert_non_null(strstr(proc.out, "1 failed and skipped"));
    assert_non_null(strstr(proc.out, "DONE "));
    /* The failing entry stays where it was; new entries continue the ids. */
    assert_int_equal(entries("o/queue", "id:000001,*"), 1);
    assert_int_equal(entries("o/queue", "id:000002,*"), 1);
}

static void merge_with_workers_keeps_a_covering_set(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf into from && mkdir into from && printf 1+1 > into/a && "
        "printf 1+1 > from/dup && printf '(2*3)' > from/paren && printf 9-4 > from/minus "
        "&& printf 1/7 > from/crash && ./calc -merge=1 -workers=2 into from");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: 2 new files"));
    assert_non_null(strstr(proc.err, "from/crash crashes the target"));
    assert_int_equal(entries("into", "[!.]*"), 3);
}

static void bad_arguments_get_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"-workers=2 c/x", "sift: c/x: not a folder"},
        {"-workers=2 -sync_dir=s c", "sift: -sync_dir needs -name=NAME"},
        {"-workers=2 -sync_dir=s -name=../x c", "sift: -name=../x: expected"},
        {"-workers=2 -out=c/x c", "sift: -out: cannot create the folder c/x"},
        {"-workers=2 -out=o -sync_dir=s -name=n c", "sift: -out=o: with -sync_dir"},
        {"-out=o c", "sift: -out, -sync_dir and -name go with -workers=N"},
        {"-workers=2000 c", "sift: -workers=2000: expected an integer from 0 to 1024"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = SIFT_TEST_SH("rm -rf c o s && mkdir c && printf x > c/x && ./w -runs=10 %s",
                              cases[i].args);
        assert_int_not_equal(rc, 0);
        const char *line = strstr(proc.err, cases[i].message);
        if (!line) fail_msg("%s: expected '%s' in:\n%s", cases[i].args, cases[i].message, proc.err);
        assert_null(strstr(line + 1, "sift: "));
    }
}

/* Folders the campaign writes into, not writable: it stops before any worker starts, with one
 * line (not one per find). Run as a user whom permission bits bind (65534 for root). */
static void unwritable_folders_stop_the_campaign_before_it_starts(void **state)
{
    (void)state;
    sift_test_jail j;
    const char *why = NULL;
    if (sift_test_unprivileged(&j, dir, &why) != 0) {
        fprintf(stderr, "skipped: %s\n", why);
        skip();
    }
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"../ro", "sift: corpus folder: cannot write into ../ro: Permission denied"},
        {"-out=../ro/o .", "sift: -out: cannot create the folder ../ro/o: Permission denied"},
        {"-out=o .", "sift: -out: cannot write into o/queue: Permission denied"},
        {"-artifact_prefix=../ro/ .",
         "sift: -artifact_prefix=../ro/: cannot write into ../ro/: Permission denied"},
        {"-stats_file=../ro/s.json .",
         "sift: -stats_file=../ro/s.json: cannot write into ../ro/: Permission denied"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(SIFT_TEST_SH("rm -rf ro rw && mkdir ro rw rw/o rw/o/queue && chmod 555 ro "
                                      "rw/o/queue && chmod 777 rw rw/o"),
                         0);
        int rc = sh_jailed(&j, "cd rw && ../w -workers=2 -runs=1000000 %s", cases[i].args);
        if (rc != 1) fail_msg("%s: exit code %d:\n%s", cases[i].args, rc, proc.err);
        one_line(cases[i].args, cases[i].message);
        assert_null(strstr(proc.err, "INITED"));
        assert_int_equal(SIFT_TEST_SH("ls -A ro rw/o/queue | wc -l"), 0);
        assert_string_equal(proc.out, "3\n"); /* two names and an empty line: nothing in them */
    }
    assert_int_equal(SIFT_TEST_SH("chmod 755 ro rw/o/queue"), 0);
}

/* A full disk, simulated with RLIMIT_FSIZE (a write past it fails with EFBIG, as one on a
 * full disk fails with ENOSPC): a find, a statistics file or a crash that cannot be saved
 * stop the campaign with one line and exit code 1, and no file is left cut short. */
static void full_disk_stops_the_campaign_and_leaves_no_partial_file(void **state)
{
    (void)state;
    /* Finds grown from a long seed cannot be saved (workers.c gives nearly every mutant of a
     * long uniform seed a branch of its own); those saved before stay whole. Saved in a
     * campaign of their own first: with two workers, a find grown from the long seed may be
     * the first one of a campaign that has it from the start. A file cut short used to be
     * renamed into place under its final name. */
    assert_int_equal(
        SIFT_TEST_SH("rm -rf c s && mkdir c s && printf sift-seed > s/a && printf '[ab]' > s/b"),
        0);
    sift_test_jail j = {.fsize = 65536};
    int rc = sh_jailed(&j, "./w -workers=2 -seed=1 -verbosity=0 -runs=20000 c s");
    assert_int_equal(rc, 0);
    assert_true(intact_files("c") >= 1);
    assert_int_equal(SIFT_TEST_SH("head -c 70000 /dev/zero | tr '\\0' a > s/big"), 0);
    /* Quiet: NEW lines would push the one line past what the test keeps of stderr. */
    rc = sh_jailed(&j, "./w -workers=2 -seed=1 -verbosity=0 -max_total_time=60 c s");
    assert_int_equal(rc, 1);
    one_line("corpus", "sift: cannot save c/");
    assert_non_null(strstr(strstr(proc.err, "sift: cannot save c/"), ": File too large\n"));
    long saved = intact_files("c");
    if (saved < 1) fail_msg("no whole find left in c/: %s", proc.out);

    /* The statistics, written as the campaign starts (its finds are shorter than them). */
    j.fsize = 256;
    rc = sh_jailed(&j, "rm -rf st && mkdir st && ./w -workers=2 -max_len=64 -max_total_time=60 "
                       "-stats_file=st/s.json");
    assert_int_equal(rc, 1);
    one_line("stats", "sift: cannot write stats file st/s.json: File too large");
    assert_int_equal(SIFT_TEST_SH("ls -A st | wc -l"), 0);
    assert_string_equal(proc.out, "0\n");
    j.fsize = 512; /* fuzzer_stats holds more from the start */
    rc = sh_jailed(&j, "rm -rf o && ./w -workers=2 -max_len=64 -max_total_time=60 -out=o");
    assert_int_equal(rc, 1);
    one_line("fuzzer_stats", "sift: -out: cannot write o/fuzzer_stats: File too large");
    assert_int_equal(SIFT_TEST_SH("ls -A o | grep -c tmp"), 1);
    assert_string_equal(proc.out, "0\n");
}

/* A 100 MB input (sparse) in a corpus folder costs 1 MiB, as in one process (and libFuzzer). */
static void huge_inputs_cost_at_most_max_len(void **state)
{
    (void)state;
    int rc =
        SIFT_TEST_SH("rm -rf c h && mkdir c h && truncate -s 100M h/big && printf x > h/small && "
                     "./w -workers=2 -runs=20000 -max_total_time=60 c h");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "not generate inputs larger than 1048576 bytes"));
    assert_non_null(strstr(proc.err, "INFO: replayed 2 inputs: 2 kept"));
    assert_non_null(strstr(proc.err, "Done "));
    assert_int_equal(SIFT_TEST_SH("stat -c %%s h/big"), 0);
    assert_string_equal(proc.out, "104857600\n");
}

/* A worker's crash whose artifact cannot be written (here a name too long for the file
 * system) is reported with the worker's report, and the campaign ends rather than going on
 * without it. */
static void unsaved_crash_ends_the_campaign(void **state)
{
    (void)state;
    char prefix[240];
    memset(prefix, 'p', sizeof prefix - 1);
    prefix[sizeof prefix - 1] = '\0';
    int rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf CRASH > c/seed && ./w -workers=2 "
                          "-len_control=0 -max_len=6 -max_total_time=60 -artifact_prefix=a/%s c",
                          prefix);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(proc.err, "ERROR: cannot write artifact a/ppp"));
    assert_non_null(strstr(proc.err, ": File name too long\nBase64: Q1JBU0gh\n"));
    assert_non_null(strstr(proc.err, "CRASH  worker "));
    assert_non_null(strstr(proc.err, "; campaign ending\n"));
    assert_null(strstr(proc.err, "starting another"));
    assert_int_equal(entries("a", "*"), 0);
}

/* Two campaigns on one -out folder, or on one corpus folder, would delete each other's files
 * in flight and hand out the same queue ids: the second is refused with one line naming the
 * folder and the first one's pid, and a kill -9 of the first frees the folders. */
static void a_busy_folder_refuses_a_second_campaign(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH(
            "rm -rf c c2 o o2 && mkdir c c2 && { ./w -workers=1 -max_total_time=120 -out=o c 2>log "
            "& "
            "echo $!; } && for i in $(seq 1200); do grep -q . o/.lock 2>/dev/null && break; "
            "sleep 0.05; done"),
        0);
    long first = strtol(proc.out, NULL, 10);
    char line[256];
    assert_int_equal(SIFT_TEST_SH("./w -workers=1 -runs=100 -out=o c2"), 1);
    snprintf(line, sizeof line, "sift: -out: o: in use by another campaign (pid %ld)", first);
    one_line("-out", line);
    assert_int_equal(SIFT_TEST_SH("./w -workers=1 -runs=100 -out=o2 c"), 1);
    snprintf(line, sizeof line, "sift: corpus folder c: in use by another campaign (pid %ld)",
             first);
    one_line("corpus", line);
    assert_int_equal(sift_test_count_entries(dir, "o2/queue", "*"),
                     0); /* stopped before replaying anything */
    assert_int_equal(
        SIFT_TEST_SH("kill -9 %ld; while kill -0 %ld 2>/dev/null; do sleep 0.05; done; "
                     "./w -workers=1 -runs=100 -out=o c",
                     first, first),
        0);
}

/* A target that moves to another folder before it crashes, in the replay of the saved seed
 * (and in a worker, when one finds a crash of its own before the run ends, which the exit code
 * says): the artifact is where the campaign's paths pointed at the start, and -out keeps its
 * copy in crashes/. */
static void a_target_that_changes_folder_loses_no_crash(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c o sub crash-* && mkdir c sub && printf C > c/seed && "
                          "./hostile -workers=1 -runs=200 -out=o c");
    assert_true(rc == 0 || rc == 77);
    assert_non_null(strstr(proc.err, "sift: replay: c/seed crashes the target"));
    assert_true(entries("o/crashes", "id:*") >= 1);
    assert_true(sift_test_count_entries(dir, NULL, "crash-*") >= 1);
    assert_int_equal(sift_test_count_entries(dir, "sub", "*"), 0);
}

/* A target that forks a child which outlives the campaign (without exec; here while the saved
 * seed is replayed): the next campaign on the same folders starts at once. The child used to
 * inherit the lock, and the start was refused as "in use by another campaign" with the pid of the
 * dead supervisor. */
static void a_child_the_target_leaves_behind_holds_no_lock(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c o && mkdir c && printf L > c/seed && "
                          "./hostile -workers=1 -runs=0 -out=o c 2>log && "
                          "./hostile -workers=1 -runs=0 -out=o c 2>log2; echo rc=$?; "
                          "grep -h 'in use' log log2");
    assert_int_not_equal(rc, -1);
    assert_string_equal(proc.out, "rc=0\n");
}

/* A target that closes stdout and stderr before it crashes, under -workers: the artifact's
 * name still reaches the supervisor, which reports it and keeps its copy in crashes/. It used
 * to be lost with stderr (the supervisor reads it from the worker's log). */
static void a_target_without_stderr_loses_no_artifact(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c o crash-* && mkdir c && printf O > c/seed && "
                          "./hostile -workers=1 -max_total_time=60 -out=o c");
    assert_int_equal(rc, 77);
    const char *crash = strstr(proc.err, "CRASH  worker 0 ");
    assert_non_null(crash);
    assert_non_null(strstr(crash, ", artifact ./crash-"));
    assert_int_equal(entries("o/crashes", "id:*"), 1);
    assert_int_equal(sift_test_count_entries(dir, NULL, "crash-*"), 1);
}

/* A crash in a process the target forks, under -workers (here in the replay of the saved
 * seed): its report reaches the worker's log, where the supervisor reads the artifact's name and
 * keeps a copy in crashes/. The sanitizer used to open a report file of its own in the child,
 * named after its pid, in the campaign's folder. */
static void a_crash_in_a_forked_child_reaches_the_log(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c o crash-* .[0-9]* && mkdir c && printf F > c/seed && "
                          "./hostile -workers=1 -runs=0 -out=o c");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "sift: replay: c/seed crashes the target, artifact ./crash-"));
    assert_int_equal(entries("o/crashes", "id:*"), 1);
    assert_int_equal(sift_test_count_entries(dir, NULL, ".[0-9]*"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(discoveries_reach_every_worker_and_the_disk),
        cmocka_unit_test(crashes_and_hangs_are_saved_and_the_campaign_goes_on),
        cmocka_unit_test(first_crash_ends_the_campaign),
        cmocka_unit_test(kills_of_workers_and_supervisor_lose_nothing),
        cmocka_unit_test(resume_reports_inputs_that_now_fail),
        cmocka_unit_test(merge_with_workers_keeps_a_covering_set),
        cmocka_unit_test(bad_arguments_get_one_line),
        cmocka_unit_test(unwritable_folders_stop_the_campaign_before_it_starts),
        cmocka_unit_test(full_disk_stops_the_campaign_and_leaves_no_partial_file),
        cmocka_unit_test(unsaved_crash_ends_the_campaign),
        cmocka_unit_test(huge_inputs_cost_at_most_max_len),
        cmocka_unit_test(a_busy_folder_refuses_a_second_campaign),
        cmocka_unit_test(a_target_that_changes_folder_loses_no_crash),
        cmocka_unit_test(a_child_the_target_leaves_behind_holds_no_lock),
        cmocka_unit_test(a_target_without_stderr_loses_no_artifact),
        cmocka_unit_test(a_crash_in_a_forked_child_reaches_the_log),
    };
    return cmocka_run_group_tests(tests, build, sift_test_scratch_teardown);
}
