/* What crash triage reads from a harness's output: the lines of libFuzzer's that ClusterFuzz's
 * libFuzzer engine (stats.py, engine.py) and OSS-Fuzz's scripts (bad_build_check) match, on
 * real harnesses built with sift-cc. The patterns checked are theirs, restated here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dir; /* scratch folder shared by the tests; harnesses are built once */
static sift_test_proc proc;

static int build_harnesses(void **state)
{
    *state = dir = sift_test_scratch();
    /* faults fails in a different way for each leading byte, so it is never fuzzed: campaigns
     * run on tlv. plain is tlv compiled by clang alone: the engine without instrumentation. */
    if (sift_test_build(dir, "faults", "tests/fixtures/faults.c", "") != 0 ||
        sift_test_build(dir, "tlv", "examples/tlv.c", "") != 0)
        return -1;
    if (SIFT_TEST_SH("clang %s -c " SIFT_SOURCE_DIR "/examples/tlv.c -o plain.o && " SIFT_BUILD_DIR
                     "/bin/sift-cc -g -O1 -fsanitize=fuzzer %s plain.o -o plain",
                     SIFT_TEST_SAN, SIFT_TEST_SAN) != 0) {
        fprintf(stderr, "%s%s", proc.out, proc.err);
        return -1;
    }
    return 0;
}

/* The value of "stat::NAME:" in TEXT, which must be digits as ClusterFuzz's parse_log_stats
 * wants them; -1 when missing or not a number. */
static long long stat_value(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\nstat::%s:", name);
    const char *p = strstr(text, key);
    if (!p) return -1;
    p += strlen(key);
    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p)) return -1;
    char *end;
    long long v = strtoll(p, &end, 10);
    return *end == '\n' ? v : -1;
}

static void expect_final_stats(const char *what)
{
    static const char *const names[] = {"number_of_executed_units", "average_exec_per_sec",
                                        "new_units_added", "slowest_unit_time_sec", "peak_rss_mb"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (stat_value(proc.err, names[i]) < 0)
            fail_msg("%s: no stat::%s line with a number in:\n%s", what, names[i], proc.err);
}

/* libFuzzer prints its final stats after every fault's report when -print_final_stats=1, the
 * flag ClusterFuzz always passes. */
static void final_stats_follow_every_fault(void **state)
{
    (void)state;
    static const struct {
        const char *input, *flags, *kind;
        bool needs_sanitizer;
    } cases[] = {
        {"A", "", "crash", false},
        {"S", "", "crash", false},
        {"H", "-timeout=1", "timeout", false},
        {"M", "-malloc_limit_mb=100", "oom", false},
        {"L", "", "leak", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].needs_sanitizer && !SIFT_TEST_SAN[0]) continue;
        int rc = SIFT_TEST_SH(
            "rm -rf a c && mkdir a c && printf %s > c/in && ./faults -runs=0 -print_final_stats=1 "
            "%s -artifact_prefix=a/ c",
            cases[i].input, cases[i].flags);
        assert_int_not_equal(rc, 0);
        char written[64];
        snprintf(written, sizeof written, "Test unit written to a/%s-", cases[i].kind);
        if (!strstr(proc.err, written))
            fail_msg("%s: no artifact line:\n%s", cases[i].kind, proc.err);
        expect_final_stats(cases[i].kind);
        /* Without the flag, none. */
        SIFT_TEST_SH("printf %s > in && ./faults %s -artifact_prefix=a/ in", cases[i].input,
                     cases[i].flags);
        assert_null(strstr(proc.err, "stat::"));
    }
    /* And at the end of a campaign, with its count. */
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && ./tlv -runs=300 -print_final_stats=1 c"),
                     0);
    expect_final_stats("end");
    assert_int_equal(stat_value(proc.err, "number_of_executed_units"), 300);
    /* And after running files, as libFuzzer prints them after its NOTE. */
    assert_int_equal(SIFT_TEST_SH("printf x > f && ./tlv -runs=5 -print_final_stats=1 f f"), 0);
    expect_final_stats("files");
    assert_int_equal(stat_value(proc.err, "number_of_executed_units"), 10);
    assert_non_null(strstr(proc.err, "inputs.\n***\nstat::number_of_executed_units:"));
}

/* The number right after the first PREFIX in TEXT, as the tools' (\\d+) reads it; fails the
 * test when there is none. */
static size_t number_after(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    if (!p || !isdigit((unsigned char)p[strlen(prefix)]))
        fail_msg("no number after \"%s\" in:\n%s", prefix, text);
    return (size_t)strtoull(p + strlen(prefix), NULL, 10);
}

/* "INFO: Loaded N modules (M inline 8-bit counters): M [...)," gives ClusterFuzz edges_total
 * and OSS-Fuzz's build check its edge count; -max_len's default is read from its INFO line;
 * "INFO: seed corpus: files: N ... rss: NMb" tells a seed crash from a startup crash. */
static void start_up_lines(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && printf x > c/seed && ./tlv -runs=10 c"),
                     0);
    const char *modules = strstr(proc.err, "\nINFO: Loaded ");
    assert_non_null(modules);
    assert_true(number_after(modules, "INFO: Loaded ") >= 1);
    size_t counters = number_after(modules, " modules   (");
    assert_non_null(strstr(modules, " inline 8-bit counters): "));
    size_t first = number_after(modules, " inline 8-bit counters): ");
    assert_true(counters > 0 && first > 0 && first <= counters);
    const char *tables = strstr(proc.err, "\nINFO: Loaded 1 PC tables (");
    assert_non_null(tables);
    size_t pcs = number_after(tables, "PC tables (");
    assert_true(pcs > 0 && pcs <= counters);
    assert_non_null(strstr(proc.err, "INFO: -max_len is not provided; libFuzzer will not generate "
                                     "inputs larger than 4096 bytes\n"));
    const char *seeds = strstr(proc.err, "INFO: seed corpus: files: ");
    assert_non_null(seeds);
    assert_int_equal(number_after(seeds, "files: "), 1);
    const char *eol = strchr(seeds, '\n'), *rss = strstr(seeds, " rss: ");
    assert_true(rss && eol && rss < eol);
    number_after(rss, " rss: ");
    /* A given -max_len has no such line: ClusterFuzz takes it from the flag. */
    assert_int_equal(SIFT_TEST_SH("./tlv -runs=10 -max_len=64 c"), 0);
    assert_null(strstr(proc.err, "-max_len is not provided"));
    /* Nor does libFuzzer's -fork parent print one; sift's -workers does. */
    assert_int_equal(SIFT_TEST_SH("./tlv -fork=1 -runs=10 c"), 0);
    assert_null(strstr(proc.err, "-max_len is not provided"));
    assert_int_equal(SIFT_TEST_SH("./tlv -workers=1 -runs=10 c"), 0);
    assert_non_null(strstr(proc.err, "-max_len is not provided"));
}

/* ClusterFuzz logs "Dictionary parsing failed" when the output matches libFuzzer's
 * "ParseDictionaryFile: error in line N"; it counts dict_used from "Dictionary: N entries",
 * under -fork as well. */
static void dictionary_lines(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("printf 'a=\"x\"\\nbad\\n' > bad.dict && printf 'a=\"x\"\\n' > ok.dict"), 0);
    assert_int_equal(SIFT_TEST_SH("./tlv -dict=bad.dict -runs=10"), 1);
    sift_test_one_line(&proc, "malformed dictionary",
                       "sift: bad.dict:2: missing opening quote (ParseDictionaryFile: error in "
                       "line 2)");
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && ./tlv -fork=1 -dict=bad.dict c"), 1);
    assert_non_null(strstr(proc.err, "ParseDictionaryFile: error in line 2"));
    assert_int_equal(SIFT_TEST_SH("./tlv -dict=ok.dict -runs=10"), 0);
    assert_non_null(strstr(proc.err, "\nDictionary: 1 entries\n"));
    assert_int_equal(SIFT_TEST_SH("./tlv -fork=1 -dict=ok.dict -runs=10 c"), 0);
    assert_non_null(strstr(proc.err, "\nDictionary: 1 entries\n"));
    assert_non_null(strstr(proc.err, "\nINFO: Loaded 1 modules"));
}

/* A harness without coverage instrumentation finds nothing: libFuzzer says so and exits 1,
 * which OSS-Fuzz's bad_build_check ("ERROR: no interesting inputs were found. Is the code
 * instrumented") and ClusterFuzz's bad_instrumentation (".*ERROR:.*Is the code instrumented
 * for coverage.*") look for. */
static void uninstrumented_target_is_reported(void **state)
{
    (void)state;
    static const char line[] =
        "\nERROR: no interesting inputs were found. Is the code instrumented for coverage? "
        "Exiting.\n";
    assert_int_equal(SIFT_TEST_SH("./plain -seed=1337 -runs=4"), 1);
    assert_non_null(strstr(proc.err, line));
    /* libFuzzer's INITED line comes first, without the fields that would read zero. */
    const char *inited = strstr(proc.err, "#2\tINITED exec/s: ");
    assert_non_null(inited);
    assert_true(inited < strstr(proc.err, line));
    assert_null(strstr(proc.err, "INFO: Loaded"));
    assert_int_equal(
        SIFT_TEST_SH("rm -rf c && mkdir c && printf abc > c/seed && ./plain -runs=100 c"), 1);
    assert_non_null(strstr(proc.err, line));
    /* -runs=0 only runs the seeds, and an instrumented harness never says it. */
    assert_int_equal(SIFT_TEST_SH("./plain -runs=0 c"), 0);
    assert_null(strstr(proc.err, "no interesting inputs"));
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && ./tlv -seed=1337 -runs=4 c"), 0);
    assert_null(strstr(proc.err, "no interesting inputs"));
}

/* Engine functions that can be on the stack of a report: those with external linkage, and
 * handlers whose address is taken, which keep a symbol whatever the optimiser inlines. */
static const char *const engine_frames[] = {
    "sift_driver_main",    "sift_fuzzer_run", "sift_fuzzer_try",  "sift_fuzzer_execute",
    "sift_minimize_crash", "sift_merge",      "sift_trace_run",   "sift_worker_run",
    "sift_super_main",     "on_alarm",        "on_deadly_signal",
};

/* Runs "./faults FLAGS in" on INPUT and checks that each frame of the sanitizer's report that
 * is sift's (by its source file) is named fuzzer::; returns how many there were, or -1 when
 * the report is not symbolized. */
static int sift_frames_of_report(const char *input, const char *flags)
{
    assert_int_not_equal(SIFT_TEST_SH("printf %s > in && ./faults %s in", input, flags), 0);
    if (!strstr(proc.err, " in LLVMFuzzerTestOneInput ")) return -1;
    int n = 0;
    for (const char *line = proc.err; (line = strstr(line, "\n    #")); line++) {
        char name[256], path[1024];
        const char *in = strstr(line, " in ");
        const char *eol = strchr(line + 1, '\n');
        if (!in || (eol && in > eol) || sscanf(in, " in %255s %1023s", name, path) != 2)
            continue; /* unsymbolized: a module and offset */
        if (strncmp(path, SIFT_SOURCE_DIR "/src/", strlen(SIFT_SOURCE_DIR "/src/")) != 0) continue;
        if (strncmp(name, "fuzzer::", 8) != 0)
            fail_msg("sift's frame %s (%s) would enter the crash state:\n%s", name, path, proc.err);
        n++;
    }
    return n;
}

/* ClusterFuzz's crash state is the top three frames its stack analyzer does not skip.
 * libFuzzer's own frames (fuzzer::Fuzzer::ExecuteCallback, fuzzer::RunOneTest, ..., and its
 * alarm handler's) are all skipped, so a fault one or two frames below the harness has only
 * the harness's frames in its state: sift's frames must be skipped too, or the same bug found
 * by both becomes two testcases. Their symbol names are checked with nm; the frames of a
 * sanitizer report only where a symbolizer named them. */
static void engine_frames_are_skipped_by_crash_triage(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(engine_frames) / sizeof(engine_frames[0]); i++) {
        if (SIFT_TEST_SH("nm faults | grep -qx '[0-9a-f]* [Tt] fuzzer::%s'", engine_frames[i]) != 0)
            fail_msg("no symbol fuzzer::%s in the harness", engine_frames[i]);
        if (SIFT_TEST_SH("nm faults | grep -q ' [Tt] %s$'", engine_frames[i]) == 0)
            fail_msg("the symbol %s is not in the fuzzer:: namespace", engine_frames[i]);
    }
    if (!SIFT_TEST_SAN[0]) return; /* the reports below are a sanitizer's */
    int crash = sift_frames_of_report("S", ""), timeout = sift_frames_of_report("H", "-timeout=1");
    if (crash < 0 || timeout < 0) {
        fprintf(stderr, "skipped: the sanitizer report is not symbolized\n");
        return;
    }
    /* At least run_target and its caller below the harness; the alarm handler above it. */
    assert_true(crash >= 2);
    assert_true(timeout >= 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(final_stats_follow_every_fault),
        cmocka_unit_test(start_up_lines),
        cmocka_unit_test(dictionary_lines),
        cmocka_unit_test(uninstrumented_target_is_reported),
        cmocka_unit_test(engine_frames_are_skipped_by_crash_triage),
    };
    return cmocka_run_group_tests(tests, build_harnesses, sift_test_scratch_teardown);
}
