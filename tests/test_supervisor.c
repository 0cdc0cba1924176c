/* Integration tests of -workers: real harnesses built with sift-cc, run by a supervisor with
 * workers, killed and resumed as a user (or the kernel) would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/subprocess.h"

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

/* A shell command line in the scratch folder; its status. */
#define sh(...) sift_test_sh(&proc, dir, __VA_ARGS__)

/* Entries of DIR/SUB whose names start with PREFIX; hidden ones count only when HIDDEN. */
static size_t count(const char *sub, const char *prefix, bool hidden)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (hidden || e->d_name[0] != '.') &&
            !strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    if (d) closedir(d);
    return n;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* The number after "KEY": in the JSON text S (after FROM), -1 when absent. */
static double json_num(const char *s, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(s, pat);
    return p ? atof(p + strlen(pat)) : -1;
}

static int build(void **state)
{
    (void)state;
    dir = sift_test_tmpdir();
    assert_non_null(dir);
    if (sh(SIFT_BUILD_DIR "/bin/sift-cc -g -O1 -fsanitize=fuzzer %s " SIFT_SOURCE_DIR
                          "/tests/fixtures/workers.c -o w && " SIFT_BUILD_DIR
                          "/bin/sift-cc -g -O1 -fsanitize=fuzzer %s " SIFT_SOURCE_DIR
                          "/examples/calc.c -o calc",
           SIFT_TEST_SAN, SIFT_TEST_SAN) != 0) {
        fprintf(stderr, "%s%s", proc.out, proc.err);
        return -1;
    }
    return 0;
}

static int cleanup(void **state)
{
    (void)state;
    sift_test_rmtree(dir);
    return 0;
}

static void discoveries_reach_every_worker_and_the_disk_within_a_second(void **state)
{
    (void)state;
    int rc = sh("rm -rf c o && mkdir c && ./w -workers=2 -seed=1 -max_total_time=4 -out=o "
                "-stats_file=s.json c 2>log; echo rc=$?; cat s.json; grep -c NEW log");
    assert_non_null(strstr(proc.out, "rc=0"));
    assert_int_equal(rc, 0);
    const char *w0 = strstr(proc.out, "\"workers\": [");
    assert_non_null(w0);
    const char *w1 = strstr(w0, "}, {");
    assert_non_null(w1);
    /* Each worker took in the other's finds, and none waited a second for them. */
    assert_true(json_num(w0, "imported") > 0);
    assert_true(json_num(w1, "imported") > 0);
    assert_true(json_num(w0, "import_lag_ms") < 1000);
    assert_true(json_num(w1, "import_lag_ms") < 1000);
    assert_true(json_num(proc.out, "persist_lag_ms") < 1000);
    double corpus = json_num(proc.out, "corpus");
    assert_true(corpus > 5);
    /* Every entry is in the queue (the newline start included) and in the corpus folder. */
    assert_int_equal(count("o/queue", "id:", false), (size_t)corpus);
    assert_int_equal(count("c", "", false), (size_t)corpus - 1);
    assert_int_equal(count("o/queue", ".", true), 0);
    assert_int_equal(sh("grep -q 'workers: 2' log && grep -q '^execs_done' o/fuzzer_stats && "
                        "grep -q '^# relative_time' o/plot_data"),
                     0);
    /* AFL++'s summary tool reads the folder (-d: the campaign has ended). */
    if (sh("command -v afl-whatsup") == 0) {
        assert_int_equal(sh("afl-whatsup -s -d . 2>&1"), 0);
        assert_non_null(strstr(proc.out, "(included in stats)"));
        assert_null(strstr(proc.out, "Total execs : 0 thousands"));
    }
}

static void crashes_and_hangs_are_saved_and_the_campaign_goes_on(void **state)
{
    (void)state;
    /* From "CRASH" the crash is one byte away; short inputs keep the fuzzer near it. */
    int rc = sh("rm -rf c o a && mkdir c a && printf CRASH > c/seed && ./w -workers=2 "
                "-len_control=0 -max_len=6 -max_total_time=6 -out=o -artifact_prefix=a/ "
                "-stats_file=s.json c 2>log; echo rc=$?; cat s.json");
    assert_int_not_equal(rc, -1);
    assert_non_null(strstr(proc.out, "rc=77"));
    assert_true(json_num(proc.out, "crashes") >= 1);
    assert_true(count("o/crashes", "id:000000,sig:06,", false) == 1);
    assert_true(count("a", "crash-", false) >= 1);
    assert_int_equal(sh("grep -q 'CRASH  worker' log && grep -q 'DONE ' log && "
                        "grep -q 'starting another' log && head -c 2 o/crashes/id:000000*"),
                     0);
    assert_string_equal(proc.out, "CR");
    rc = sh("rm -rf c o a && mkdir c a && printf HANG > c/seed && ./w -workers=1 -timeout=1 "
            "-len_control=0 -max_len=5 -max_total_time=8 -out=o -artifact_prefix=a/ c 2>log; "
            "echo rc=$?");
    assert_non_null(strstr(proc.out, "rc=70"));
    assert_true(count("o/hangs", "id:", false) >= 1);
    assert_true(count("a", "timeout-", false) >= 1);
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
            out[n++] = atol(p);
    fclose(f);
    return n;
}

static bool alive(long pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool zombie = fgets(buf, sizeof buf, f) && strstr(buf, ") Z");
    fclose(f);
    return !zombie;
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
    fclose(f);
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
        if (len != saved[i].len || memcmp(now, saved[i].data, len))
            fail_msg("saved entry %s changed", saved[i].name);
        free(now);
    }
}

static void kills_of_workers_and_supervisor_lose_nothing(void **state)
{
    (void)state;
    assert_int_equal(sh("rm -rf c o && mkdir c"), 0);
    for (int cycle = 0; cycle < 10; cycle++) {
        assert_int_equal(sh("./w -workers=2 -out=o c >>log 2>&1 & echo $!"), 0);
        long sup = atol(proc.out);
        size_t before = count("o/queue", "id:", false);
        uint64_t t0 = now_ms();
        long kids[8];
        while (now_ms() - t0 < 8000 &&
               (children(sup, kids, 8) < 2 || count("o/queue", "id:", false) < before + 2))
            nap_ms(20);
        if (now_ms() - t0 >= 8000 && cycle < 3) fail_msg("cycle %d: the queue did not grow", cycle);
        remember_queue();
        /* A worker dies: the supervisor starts another in its place. */
        assert_true(children(sup, kids, 8) >= 2);
        long victim = kids[0];
        kill((pid_t)victim, SIGKILL);
        t0 = now_ms();
        size_t n;
        while (now_ms() - t0 < 8000 &&
               !((n = children(sup, kids, 8)) == 2 && kids[0] != victim && kids[1] != victim))
            nap_ms(20);
        assert_true(now_ms() - t0 < 8000);
        nap_ms(50 + (cycle * 37) % 200);
        remember_queue();
        /* Then the supervisor, at an arbitrary moment: its workers go with it. */
        kill((pid_t)sup, SIGKILL);
        t0 = now_ms();
        while (now_ms() - t0 < 8000 && (alive(sup) || alive(kids[0]) || alive(kids[1])))
            nap_ms(20);
        assert_false(alive(kids[0]) || alive(kids[1]));
        saved_entries_are_intact();
    }
    /* The resumed campaign cleans what the kills cut short, and lost nothing. */
    sh("./w -workers=2 -out=o -max_total_time=2 c 2>log2; echo rc=$?; "
       "grep -E 'INFO: replayed|partial files' log2");
    assert_non_null(strstr(proc.out, "rc=0"));
    assert_non_null(strstr(proc.out, "INFO: replayed "));
    saved_entries_are_intact();
    assert_int_equal(count("o/queue", ".", true), 0);
    assert_int_equal(count("c", ".", true), 0);
    /* Every find is in both folders: a kill between the two writes is mended on resume. */
    assert_int_equal(sh("for f in o/queue/id:*; do case $f in *orig:newline) continue;; esac; "
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
    int rc = sh("rm -rf c o && mkdir -p c o/queue && printf 'ab[cd]' > 'o/queue/id:000000,orig:x'"
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
    assert_int_equal(count("o/queue", "id:000001,", false), 1);
    assert_int_equal(count("o/queue", "id:000002,", false), 1);
}

static void merge_with_workers_keeps_a_covering_set(void **state)
{
    (void)state;
    int rc = sh("rm -rf into from && mkdir into from && printf 1+1 > into/a && "
                "printf 1+1 > from/dup && printf '(2*3)' > from/paren && printf 9-4 > from/minus "
                "&& printf 1/7 > from/crash && ./calc -merge=1 -workers=2 into from");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: 2 new files"));
    assert_non_null(strstr(proc.err, "from/crash crashes the target"));
    assert_int_equal(count("into", "", false), 3);
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
        int rc = sh("rm -rf c o s && mkdir c && printf x > c/x && ./w -runs=10 %s", cases[i].args);
        assert_int_not_equal(rc, 0);
        const char *line = strstr(proc.err, cases[i].message);
        if (!line) fail_msg("%s: expected '%s' in:\n%s", cases[i].args, cases[i].message, proc.err);
        assert_null(strstr(line + 1, "sift: "));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(discoveries_reach_every_worker_and_the_disk_within_a_second),
        cmocka_unit_test(crashes_and_hangs_are_saved_and_the_campaign_goes_on),
        cmocka_unit_test(kills_of_workers_and_supervisor_lose_nothing),
        cmocka_unit_test(resume_reports_inputs_that_now_fail),
        cmocka_unit_test(merge_with_workers_keeps_a_covering_set),
        cmocka_unit_test(bad_arguments_get_one_line),
    };
    return cmocka_run_group_tests(tests, build, cleanup);
}
