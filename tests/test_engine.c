/* Integration tests of the engine: real harnesses built with sift-cc, driven as a user would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir; /* scratch folder shared by the tests; harnesses are built once */
static sift_test_proc proc;

/* Entries of the scratch folder's SUB that match GLOB. */
#define entries(sub, glob) sift_test_count_entries(dir, sub, glob)

/* A shell command line limited to files of FSIZE bytes, as a user whom permission bits bind
 * when UNPRIVILEGED (sift_test_sh_limited). */
#define sh_jailed(fsize, unprivileged, ...)                                                        \
    sift_test_sh_limited(&proc, dir, fsize, unprivileged, __VA_ARGS__)

/* Expects LINE (which starts with "sift: ") to be the one line of sift's own in what the last
 * command printed to stderr. */
#define one_line(what, line) sift_test_one_line(&proc, what, line)
#define intact_files(sub)    sift_test_intact_files(&proc, dir, sub)

static int build_harnesses(void **state)
{
    *state = dir = sift_test_scratch();
    /* The magic example's overflow needs ASan to be seen, in either build. */
    if (sift_test_build(dir, "magic", "examples/magic.c", "-fsanitize=address") ||
        sift_test_build(dir, "faults", "tests/fixtures/faults.c", "") ||
        sift_test_build(dir, "custom", "tests/fixtures/custom.c", "") ||
        sift_test_build(dir, "calc", "examples/calc.c", "") ||
        sift_test_build(dir, "tlv", "examples/tlv.c", "") ||
        sift_test_build(dir, "length", "tests/fixtures/length.c", "") ||
        sift_test_build(dir, "middle", "tests/fixtures/middle.c", "") ||
        sift_test_build(dir, "slow", "tests/fixtures/slow.c", "") ||
        sift_test_build(dir, "heap", "tests/fixtures/heap.c", "") ||
        sift_test_build(dir, "accumulate", "tests/fixtures/accumulate.c", "-fsanitize=address") ||
        sift_test_build(dir, "cover", "tests/fixtures/cover.c", "") ||
        sift_test_build(dir, "depth", "tests/fixtures/depth.c", "") ||
        sift_test_build(dir, "machine", "examples/statemachine.c", "") ||
        sift_test_build(dir, "cover_startup", "tests/fixtures/cover.c", "-DSTARTUP_EDGE"))
        return -1;
    return 0;
}

/* An input slower than -report_slow_units seconds is kept as a slow-unit artifact, with
 * libFuzzer's line; a faster one is not. */
static void slow_inputs_become_slow_unit_artifacts(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf Z >c/z && "
                          "./faults -seed=1 -runs=3 -report_slow_units=1 -artifact_prefix=a/ c");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Slowest unit: 1 s:\n"));
    assert_non_null(strstr(proc.err, "Test unit written to a/slow-unit-"
                                     "909f99a779adb66a76fc53ab56c7dd1caf35d0fd"));
    assert_int_equal(entries("a", "slow-unit-*"), 1);
    rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf Z >c/z && ./faults -seed=1 -runs=3 "
                      "-artifact_prefix=a/ c");
    assert_int_equal(rc, 0);
    assert_null(strstr(proc.err, "Slowest unit"));
    assert_int_equal(entries("a", "slow-unit-*"), 0);
}

/* Fuzzes slow from the seed "a" for 1000 runs, with ENV before the command: *SLOW gets the
 * stats file's slow_finds_not_kept, *KEPT how many corpus inputs start with FIRST. The count is
 * not among the stat:: lines, whose keys tools that parse libFuzzer take as libFuzzer's. */
static void slow_campaign(const char *env, char first, unsigned long *slow, unsigned long *kept)
{
    int rc =
        SIFT_TEST_SH("rm -rf c && mkdir c && printf a >c/a && %s ./slow -seed=1 -runs=1000 "
                     "-stats_file=s.json -print_final_stats=1 c 2>&1 | grep -c stat::slow_finds; "
                     "sed -n 's/.*\"slow_finds_not_kept\": \\([0-9]*\\).*/\\1/p' s.json"
                     "; for f in c/*; do head -c1 $f; echo; done | grep -c %c || true",
                     env, first);
    assert_int_equal(rc, 0);
    char *end;
    assert_int_equal(strtoul(proc.out, &end, 10), 0); /* not a stat:: line: libFuzzer has none */
    char *next = end;
    *slow = strtoul(next, &end, 10);
    assert_true(end != next);
    *kept = strtoul(end, NULL, 10);
}

/* A mutant that reaches something new but runs a hundred times the mean execution (and over
 * 10 ms) is not kept, and the final stats count it; a fast find beside it is kept. The first
 * slow mutant comes while every execution before it took microseconds. */
static void slow_finds_are_not_kept(void **state)
{
    (void)state;
    unsigned long slow, fast_kept;
    slow_campaign("", 'y', &slow, &fast_kept);
    assert_true(slow >= 1);
    assert_true(fast_kept >= 1);
}

/* A find whose first run took a second or more is not run again to confirm that it is slow, so
 * it is dropped even where (as here) a second run would have been fast. */
static void a_find_slow_by_a_second_is_not_run_again(void **state)
{
    (void)state;
    unsigned long slow, slow_kept;
    slow_campaign("SLOW_ONCE=1", 'z', &slow, &slow_kept);
    assert_true(slow == 1);
    assert_int_equal(slow_kept, 0); /* no input of the slow path was kept */
}

/* Memory a harness frees stays with the process, so that the next execution does not fault
 * it in again: the fixture aborts on its first run if the heap shrank. ASan's allocator is its
 * own, and mallinfo2 does not describe it. */
static void freed_memory_stays_for_the_next_execution(void **state)
{
    (void)state;
    if (SIFT_TEST_SAN[0]) skip();
    int rc = SIFT_TEST_SH("rm -rf c && mkdir c && ./heap -seed=1 -runs=100 c");
    assert_int_equal(rc, 0);
}

static void finds_the_magic_bug_from_nothing(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf c a && mkdir c a && ./magic -seed=1 -max_total_time=120 -artifact_prefix=a/"
        " c 2>log; echo rc=$?; grep -m1 'INFO: Seed' log; grep -m1 INITED log; grep -m1 NEW log;"
        " grep -E 'ERROR: AddressSanitizer|Test unit written' log");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.out, "INFO: Seed: 1"));
    assert_non_null(strstr(proc.out, "INITED cov: "));
    assert_non_null(strstr(proc.out, "NEW    cov: "));
    assert_non_null(strstr(proc.out, "ERROR: AddressSanitizer: stack-buffer-overflow"));
    assert_non_null(strstr(proc.out, "Test unit written to a/crash-"));
    assert_null(strstr(proc.out, "rc=0"));
    assert_int_equal(entries("a", "crash-*"), 1);
    assert_true(entries("c", "[!.]*") > 2); /* new inputs were saved into the corpus */

    /* Reproduction from the artifact. */
    rc = SIFT_TEST_SH("./magic a/crash-*");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Running: a/crash-"));
    assert_non_null(strstr(proc.err, "SUMMARY: AddressSanitizer: stack-buffer-overflow"));

    /* A saved corpus input reproduces cleanly. */
    rc = SIFT_TEST_SH("for f in c/*; do ./magic \"$f\" || exit 1; done");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "NOTE: fuzzing was not performed"));
}

static void runs_limit_and_stats(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf c && mkdir c && ./tlv -seed=3 -runs=2000 -max_len=8 -stats_file=s.json "
        "-print_final_stats=1 c 2>&1 | grep -E 'DONE|Done|stat::number' ; cat s.json");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.out, "DONE   cov: "));
    assert_non_null(strstr(proc.out, "Done 2000 runs in "));
    assert_non_null(strstr(proc.out, "stat::number_of_executed_units: 2000"));
    assert_non_null(strstr(proc.out, "\"execs\": 2000"));
}

static void smaller_inputs_replace_larger_ones(void **state)
{
    (void)state;
    /* Whether a given seed reduces in time depends on the build's code: try a few. */
    int rc = SIFT_TEST_SH(
        "for seed in 3 4 5 6 7; do rm -rf c && mkdir c && "
        "./tlv -seed=$seed -runs=60000 c 2>&1 | grep -m1 REDUCE && exit 0; done; exit 1");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.out, "REDUCE cov: "));
    assert_non_null(strstr(proc.out, " L: "));
}

/* A campaign that reduced leaves a corpus folder that reaches all it reached: each
 * replacement written, and only what it replaced removed. */
static void the_corpus_folder_reaches_what_the_campaign_reached(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "for seed in 3 4 5 6 7; do rm -rf c && mkdir c && "
        "./tlv -seed=$seed -runs=60000 c 2>run.txt; grep -q REDUCE run.txt && break; done && "
        "grep -q REDUCE run.txt && grep -o 'DONE   cov: [0-9]* ft: [0-9]*' run.txt | cut -c8- && "
        "./tlv -runs=0 c 2>&1 | grep -o 'INITED cov: [0-9]* ft: [0-9]*' | cut -c8-");
    assert_int_equal(rc, 0);
    char *second = strchr(proc.out, '\n');
    assert_non_null(second);
    *second++ = 0;
    second[strcspn(second, "\n")] = 0;
    assert_non_null(strstr(proc.out, "cov: "));
    assert_string_equal(second, proc.out);
}

/* The scheduler sees times in steps of 100 us, so that noise does not change its picks; an
 * execution preempted for longer on a loaded machine still can. A seed whose campaigns differ
 * in three pairs out of three is not deterministic; one pair that differs may have met such a
 * preemption. */
static void same_seed_same_campaign(void **state)
{
    (void)state;
    int rc =
        SIFT_TEST_SH("for try in 1 2 3; do for i in 1 2; do rm -rf c$i && mkdir c$i && "
                     "./tlv -seed=7 -runs=3000 -max_len=16 c$i 2>/dev/null; ls c$i > l$i; done; "
                     "cmp -s l1 l2 && break; done; cmp l1 l2 && wc -l < l1");
    assert_int_equal(rc, 0);
    assert_true(strtol(proc.out, NULL, 10) > 1);
}

/* Each fault of an input run from a corpus folder leaves that input as its artifact. Run from
 * a file, the same fault is reported alike but writes nothing, neither in the artifact folder
 * nor in the working one, and prints no unit: libFuzzer has no unit to dump outside its
 * fuzzing loop, and crash triage reproduces in folders it expects to find as it left them. */
static void timeouts_ooms_and_signals_leave_artifacts(void **state)
{
    (void)state;
    static const struct {
        const char *input, *flags, *kind, *line; /* KIND: the artifact's name, a pattern */
        int exit_code;
    } cases[] = {
        {"H", "-timeout=1", "timeout-*", "ERROR: libFuzzer: timeout after", 70},
        {"O", "-rss_limit_mb=300", "oom-*", "ERROR: libFuzzer: out-of-memory (used: ", 71},
        {"A", "", "crash-*", "SUMMARY: ", -1},
        {"S", "", "crash-*", "SUMMARY: ", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int from_file = 0; from_file < 2; from_file++) {
            int rc = SIFT_TEST_SH("rm -rf a c r && mkdir a c r && printf %s > c/in && cd r && "
                                  "../faults -runs=0 %s -artifact_prefix=../a/ %s",
                                  cases[i].input, cases[i].flags, from_file ? "../c/in" : "../c");
            if (cases[i].exit_code >= 0)
                assert_int_equal(rc, cases[i].exit_code);
            else
                assert_int_not_equal(rc, 0);
            assert_non_null(strstr(proc.err, cases[i].line));
            assert_null(strstr(proc.err, "; base unit: ")); /* a seed is no mutant */
            /* Under ASan, what holds the memory, as libFuzzer prints it. */
            if (cases[i].input[0] == 'O' && SIFT_TEST_SAN[0] != '\0')
                assert_non_null(strstr(proc.err, "Live Heap Allocations"));
            assert_int_equal(entries("r", "*"), 0);
            if (from_file) {
                assert_null(strstr(proc.err, "Test unit written"));
                char unit[16];
                snprintf(unit, sizeof unit, "0x%x,\n", cases[i].input[0]);
                assert_null(strstr(proc.err, unit));
                assert_int_equal(entries("a", "*"), 0);
                continue;
            }
            assert_non_null(strstr(proc.err, "Test unit written to ../a/"));
            assert_int_equal(entries("a", cases[i].kind), 1);
            assert_int_equal(SIFT_TEST_SH("cmp c/in a/%s", cases[i].kind), 0);
        }
    }
}

static void silenced_target_still_reports_its_crash(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf a c && mkdir a c && printf A > c/in && "
                          "./faults -runs=0 -close_fd_mask=3 -exact_artifact_path=a/the-crash c");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Test unit written to a/the-crash"));
    assert_int_equal(SIFT_TEST_SH("cmp c/in a/the-crash"), 0);
}

/* In every build: through a sanitizer's malloc hooks, or else sift-cc's wraps (test_alloc). */
static void malloc_limit_stops_at_the_allocation(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf a c && mkdir a c && printf M > c/in && ./faults -runs=0 "
                          "-malloc_limit_mb=100 -artifact_prefix=a/ c");
    assert_int_equal(rc, 71);
    assert_non_null(strstr(proc.err, "out-of-memory (malloc("));
    assert_int_equal(entries("a", "oom-*"), 1);
}

/* A leak is reported from a corpus folder with its artifact, and from a file without one, as
 * every other fault (timeouts_ooms_and_signals_leave_artifacts); both are libFuzzer's initial
 * corpus, which its report names. A file run many times is checked after its first run, as
 * libFuzzer checks it, not once all ran (by then it may have run out of memory). */
static void leaks_need_a_sanitizer(void **state)
{
    (void)state;
    if (!SIFT_TEST_SAN[0]) skip(); /* leak checks come with the sanitizers */
    for (int from_file = 0; from_file < 2; from_file++) {
        int rc = SIFT_TEST_SH("rm -rf a c && mkdir a c && printf L > c/in && ./faults -runs=0 "
                              "-artifact_prefix=a/ %s",
                              from_file ? "c/in" : "c");
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(proc.err, "detected memory leaks"));
        assert_non_null(strstr(proc.err, "INFO: a leak has been found in the initial corpus."));
        assert_int_equal(entries("a", "leak-*"), from_file ? 0 : 1);
    }
    assert_int_not_equal(SIFT_TEST_SH("./faults -runs=100000000 c/in"), 0);
    assert_non_null(strstr(proc.err, "detected memory leaks"));
    assert_null(strstr(proc.err, "Executed c/in"));
}

/* A run that allocates more than it frees is checked for leaks after every mutation, not only
 * after those that add coverage, as libFuzzer checks: a target that keeps its allocations in
 * global state makes 1000 such checks find nothing, and then leak detection stops, saying so. */
static void leaks_are_checked_after_every_mutation(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("./accumulate -seed=1 -runs=3000 -detect_leaks=1"), 0);
    assert_non_null(strstr(proc.err, "INFO: libFuzzer disabled leak detection after every "
                                     "mutation.\n"));
    assert_null(strstr(proc.err, "detected memory leaks"));
}

static void bad_flags_and_paths_get_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"-runs=abc", "sift: -runs=abc"},
        {"-features=edges,bogus", "sift: -features=edges,bogus"},
        {"/nonexistent/corpus",
         "ERROR: The required directory \"/nonexistent/corpus\" does not exist"},
        {"''", "ERROR: Provided directory path is an empty string"},
        {"-dict=bad.dict c", "sift: bad.dict:2: "},
        {"-dict=/nonexistent/d c", "sift: /nonexistent/d"},
        {"-merge=1 c", "sift: -merge=1 needs at least two corpus folders"},
        {"-minimize_crash=1 c", "sift: -minimize_crash=1 takes exactly one input file"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc =
            SIFT_TEST_SH("rm -rf c && mkdir c && printf '\"ok\"\\n\"bad\\\\q\"\\n' > bad.dict && "
                         "./calc -runs=10 %s",
                         cases[i].args);
        assert_int_not_equal(rc, 0);
        const char *line = strstr(proc.err, cases[i].message);
        if (!line) fail_msg("%s: expected '%s' in:\n%s", cases[i].args, cases[i].message, proc.err);
        assert_null(strstr(line + 1, "sift: ")); /* one error line, not a cascade */
    }
    assert_int_equal(SIFT_TEST_SH("./calc -help=1"), 0);
    assert_non_null(strstr(proc.out, "-max_total_time"));
}

static void merge_keeps_what_adds_coverage_and_skips_crashes(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf into from && mkdir into from && printf 1+1 > into/a && "
        "printf 1+1 > from/dup && printf '(2*3)' > from/paren && printf 9-4 > from/minus && "
        "printf 1/7 > from/crash && ./calc -merge=1 into from");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: "));
    assert_non_null(strstr(proc.err, "crashed or hung the target; skipping it"));
    assert_int_equal(entries("into", "[!.]*"), 3); /* a, paren and minus, not dup or crash */
}

/* libFuzzer's set_cover_merge test: -set_cover_merge=1 keeps the one input that adds five
 * features and the one that adds the sixth, the smaller of two alike; -merge=1, smallest first,
 * keeps six. */
static void set_cover_merge_keeps_the_fewest(void **state)
{
    (void)state;
    static const char setup[] =
        "rm -rf t1 t2 t3 && mkdir t1 t2 t3 && printf ...... > t1/1 && printf F..... > t2/a && "
        "printf .U.... > t2/b && printf ..Z... > t2/c && printf ...Z.. > t3/1 && "
        "printf ....E. > t3/2 && printf .....R > t3/3 && printf .UZZER. > t3/a && "
        "printf .UZZER.. > t3/b && printf ...... > t3/c && ";
    assert_int_equal(SIFT_TEST_SH("%s./cover -set_cover_merge=1 t1 t2 t3", setup), 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: 2 new files with 6 new features added"));
    assert_int_equal(entries("t1", "[!.]*"), 3);
    assert_int_equal(SIFT_TEST_SH("for f in t1/*; do cat $f; echo; done | LC_ALL=C sort"), 0);
    assert_string_equal(proc.out, "......\n.UZZER.\nF.....\n");
    assert_int_equal(SIFT_TEST_SH("%s./cover -merge=1 t1 t2 t3", setup), 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: 6 new files with 6 new features added"));
}

/* What a constructor ran before the first input is no input's coverage: a merge credits each
 * build's inputs with the same edges, as libFuzzer's does. */
static void startup_coverage_is_no_inputs(void **state)
{
    (void)state;
    char edges[2][128];
    const char *const builds[] = {"cover", "cover_startup"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(SIFT_TEST_SH("rm -rf into from && mkdir into from && "
                                      "printf F > from/f && ./%s -merge=1 into from",
                                      builds[i]),
                         0);
        const char *line = strstr(proc.err, "new features added; ");
        assert_non_null(line);
        snprintf(edges[i], sizeof edges[i], "%.*s", (int)strcspn(line, "\n"), line);
    }
    assert_string_equal(edges[0], edges[1]);
}

/* Value features count on a share of the mutants' runs (-values_budget): the share shows in the
 * final stats, which start it at 15 runs in 16; at 100 they count on every run, and a campaign
 * without values has no share. */
static void values_count_on_a_share_of_runs(void **state)
{
    (void)state;
    static const struct {
        const char *flags, *share;
    } cases[] = {{"", "stat::values_share_percent: 93\n"},
                 {"-values_budget=0", "stat::values_share_percent: 3\n"},
                 {"-values_budget=100", NULL},
                 {"-features=edges", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = SIFT_TEST_SH("rm -rf c && mkdir c && ./tlv -seed=1 -runs=2000 "
                              "-print_final_stats=1 %s c 2>&1 | grep stat::",
                              cases[i].flags);
        assert_int_equal(rc, 0);
        const char *share = strstr(proc.out, "stat::values_share");
        if (cases[i].share ? !share || strcmp(share, cases[i].share) != 0 : share != NULL)
            fail_msg("'%s': %s", cases[i].flags, proc.out);
    }
}

/* Where only values find (the state machine's states run the same code), they count on 63
 * runs in 64 whatever they cost: at a budget of 1% the share would be the least, 3%. The length
 * is fixed, so that the edges' hit counts (the loop's, which grow with the inputs under
 * -len_control) stop finding early and values lead from the first estimates on. */
static void values_that_lead_count_on_the_most_runs(void **state)
{
    (void)state;
    for (int seed = 1; seed <= 2; seed++) {
        int rc = SIFT_TEST_SH("rm -rf c && mkdir c && ./machine -seed=%d -runs=100000 "
                              "-max_len=24 -len_control=0 -values_budget=1 -print_final_stats=1 "
                              "-artifact_prefix=./ c 2>&1 | grep stat::values",
                              seed);
        assert_int_equal(rc, 0);
        if (strcmp(proc.out, "stat::values_share_percent: 98\n") != 0)
            fail_msg("seed %d: %s", seed, proc.out);
    }
}

/* An input found by a run that left values out is taken in with the values of the run that
 * lists its features, and those reach the campaign's coverage too: else a later mutant that
 * only repeats one of them was taken in as new (3 or 4 such inputs in 20,000 runs of each seed
 * here before). Without REDUCE, every input the campaign takes brings a feature of its own. */
static void inputs_found_without_values_bring_their_values(void **state)
{
    (void)state;
    for (int seed = 1; seed <= 3; seed++) {
        int rc = SIFT_TEST_SH(
            "rm -rf c fd g && mkdir c fd && ./depth -seed=%d -runs=20000 -reduce_inputs=0 "
            "-values_budget=0 -features_dir=fd -mutation_graph_file=g c 2>/dev/null && : > seen && "
            "for h in $(grep -o '^\"[0-9a-f]*\"$' g | tr -d '\"'); do "
            "od -An -tu4 -v fd/$h | tr -s ' ' '\\n' | grep . | sort -u > cur; "
            "[ -n \"$(comm -23 cur seen)\" ] || echo \"nothing new: $h\"; "
            "sort -u -o seen seen cur; echo taken; done",
            seed);
        assert_int_equal(rc, 0);
        if (strstr(proc.out, "nothing new") || !strstr(proc.out, "taken\ntaken\ntaken"))
            fail_msg("seed %d:\n%s", seed, proc.out);
    }
}

/* A merge counts edges, as libFuzzer's counts its counters: "1" and "7" take the same edges
 * through calc and differ only in the values its functions return, so one of them is enough;
 * asked for values alone, it keeps both. */
static void merge_keeps_inputs_for_edges_not_values(void **state)
{
    (void)state;
    static const struct {
        const char *flags;
        long kept;
    } cases[] = {{"", 1}, {"-features=edges,values", 1}, {"-features=values", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = SIFT_TEST_SH("rm -rf into from && mkdir into from && printf 1 > from/one && "
                              "printf 7 > from/seven && ./calc -merge=1 %s into from",
                              cases[i].flags);
        assert_int_equal(rc, 0);
        if (entries("into", "[!.]*") != cases[i].kept)
            fail_msg("'%s': kept %ld, not %ld", cases[i].flags, entries("into", "[!.]*"),
                     cases[i].kept);
    }
}

/* ClusterFuzz prunes corpora with -merge=1: a hanging input must cost that input only (the
 * engine's periodic alarm once turned the wait for it into a blocking read), and so must a
 * crashing one, in the first folder as in the others. Each leaves its artifact, as in
 * libFuzzer's merge, where corpus pruning finds the units to quarantine: the hang's timeout
 * artifact comes from the merge process's own alarm, which a fork does not inherit. */
static void merge_skips_hanging_and_crashing_inputs(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf into from a && mkdir into from a && printf S > into/segv && "
                          "printf H > from/hang && printf A > from/abort && printf x > from/x && "
                          "./faults -timeout=1 -merge=1 -artifact_prefix=a/ into from");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: into/segv crashed or hung the target"));
    assert_non_null(strstr(proc.err, "MERGE-OUTER: from/hang crashed or hung the target"));
    assert_non_null(strstr(proc.err, "MERGE-OUTER: from/abort crashed or hung the target"));
    assert_non_null(strstr(proc.err, "ERROR: libFuzzer: timeout after"));
    assert_non_null(strstr(proc.err, "MERGE-OUTER: 1 new files"));
    assert_int_equal(entries("into", "[!.]*"), 2); /* segv, and x */
    assert_int_equal(entries("a", "crash-*"), 2);
    assert_int_equal(entries("a", "timeout-*"), 1);
    assert_int_equal(SIFT_TEST_SH("cat a/timeout-*"), 0);
    assert_string_equal(proc.out, "H");
}

static void minimize_crash_shrinks_and_keeps_the_crash(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf a && mkdir a && printf '1+2+3+4+5+6+7+8/7+9' > big && "
                          "./calc -minimize_crash=1 -runs=500 -artifact_prefix=a/ big");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "CRASH_MIN: failed to minimize beyond a/minimized-from-"));
    assert_int_equal(entries("a", "minimized-from-*"), 1);
    /* Through cat: sh expands no glob after <. */
    assert_int_equal(SIFT_TEST_SH("cat a/minimized-from-* | wc -c"), 0);
    assert_true(strtol(proc.out, NULL, 10) <= 3); /* "8/7" or shorter */
    assert_int_not_equal(SIFT_TEST_SH("./calc a/minimized-from-*"), 0);
    assert_int_equal(SIFT_TEST_SH("printf 1 > ok && ./calc -minimize_crash=1 ok"), 1);
    assert_non_null(strstr(proc.err, "does not crash the target"));
}

/* A crash guarded by a length byte: chunk removal alone stops at 101 bytes, as the length
 * still says 100; lowering the length byte lets it go down to the 5 bytes the bug needs. */
static void minimize_crash_lowers_a_length_byte(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf a && mkdir a && { printf '\\144'; head -c 123 /dev/zero | tr '\\0' x; "
        "} > long && ./length -minimize_crash=1 -runs=2000 -exact_artifact_path=a/min long");
    assert_int_equal(rc, 0);
    assert_int_equal(SIFT_TEST_SH("wc -c < long && wc -c < a/min && od -An -tu1 a/min"), 0);
    char *p;
    assert_int_equal(strtol(proc.out, &p, 10), 124);
    assert_int_equal(strtol(p, &p, 10), 5);
    assert_int_equal(strtol(p, &p, 10), 4); /* the length byte, as low as the bug allows */
    assert_int_not_equal(SIFT_TEST_SH("./length a/min"), 0);
    assert_non_null(strstr(proc.err, "SUMMARY: "));
}

/* Cuts that move the crashing byte's place need passes until one cuts nothing: 'abcd*xyz' goes
 * to '*'. Each smaller crash replaces the exact artifact as it is found, as libFuzzer's rounds
 * write theirs, and a one-byte crash ends the search with its line. */
static void minimize_crash_cuts_until_nothing_more_goes(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf a && mkdir a && printf 'abcd*xyz' > mid && "
                          "./middle -minimize_crash=1 -exact_artifact_path=a/min mid");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "INFO: The input is small enough, exiting\n"
                                     "CRASH_MIN: failed to minimize beyond a/min (1 bytes)"));
    const char *first = strstr(proc.err, "Test unit written to a/min");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, "Test unit written to a/min"));
    assert_int_equal(SIFT_TEST_SH("cat a/min"), 0);
    assert_string_equal(proc.out, "*");
}

/* As libFuzzer: a custom mutator turns -len_control off unless the command line sets it (the
 * limit is then -max_len, printed as "lim:"), and a custom mutation's status line names the
 * operators of its LLVMFuzzerMutate calls, as does the crash report, with the entry it came
 * from. -verbosity=2 lists the flags given. */
static void custom_mutator_and_initialize_are_used(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf a c && mkdir a c && ./custom -seed=5 -max_total_time=60 "
                          "-verbosity=2 -artifact_prefix=a/ c");
    assert_int_not_equal(rc, 0);
    assert_int_equal(entries("a", "crash-*"), 1);
    assert_non_null(strstr(proc.err, "Flag: verbosity 2\nFlag: artifact_prefix a/\n"));
    assert_non_null(strstr(proc.err, "INFO: found LLVMFuzzerCustomMutator (0x"));
    assert_non_null(strstr(proc.err, "corp: 1/1b lim: 4096 exec/s: "));
    assert_non_null(strstr(proc.err, " MS: "));
    assert_null(strstr(proc.err, " MS: 1 Custom-"));
    const char *ms = strstr(proc.err, "\nMS: ");
    assert_non_null(ms);
    const char *base = strstr(ms, "; base unit: ");
    assert_non_null(base);
    assert_int_equal(strspn(base + strlen("; base unit: "), "0123456789abcdef"), 40);
    assert_int_equal(SIFT_TEST_SH("head -c 2 a/crash-*"), 0);
    assert_string_equal(proc.out, "#!");
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && ./custom -runs=10 -len_control=100 c"),
                     0);
    assert_non_null(strstr(proc.err, " lim: 4 "));
    assert_null(strstr(proc.err, "Flag: "));
}

static void oss_fuzz_style_build(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "CC=" SIFT_BUILD_DIR "/bin/sift-cc; CFLAGS='-fsanitize=fuzzer-no-link %s';"
        "printf 'int lib_parse(const unsigned char *d, unsigned long n)"
        "{ return n > 2 && d[0] == 0x42 ? d[1] : 0; }\\n' > lib.c && "
        "printf '#include <stdint.h>\\n#include <stddef.h>\\n"
        "int lib_parse(const unsigned char *, unsigned long);\\n"
        "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)"
        "{ lib_parse(d, n); return 0; }\\n' > fuzz.c && "
        "$CC $CFLAGS -c lib.c -o lib.o && ar rcs lib.a lib.o && "
        "$CC $CFLAGS -c fuzz.c -o fuzz.o && $CC -fsanitize=fuzzer %s fuzz.o lib.a -o oss && "
        "rm -rf c && mkdir c && ./oss -runs=500 c",
        SIFT_TEST_SAN, SIFT_TEST_SAN);
    if (rc != 0 || !strstr(proc.err, "Done 500 runs")) fail_msg("exit code %d:\n%s", rc, proc.err);
}

/* Folders sift writes into, not writable: each stops the campaign before it starts, with one
 * line naming the folder and the problem, and leaves nothing behind. Reading does not need
 * them: -runs=0 over a read-only corpus and reproducing from a read-only folder go on. */
static void unwritable_outputs_stop_before_fuzzing(void **state)
{
    (void)state;
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"../ro", "sift: corpus folder: cannot write into ../ro: Permission denied"},
        {"-artifact_prefix=../ro/ .",
         "sift: -artifact_prefix=../ro/: cannot write into ../ro/: Permission denied"},
        {"-artifact_prefix=../ro/crash- .",
         "sift: -artifact_prefix=../ro/crash-: cannot write into ../ro/: Permission denied"},
        {"-exact_artifact_path=../ro/the-crash .",
         "sift: -exact_artifact_path=../ro/the-crash: cannot write into ../ro/: Permission denied"},
        {"-exact_artifact_path=../ro .", "sift: -exact_artifact_path=../ro: is a folder"},
        {"-artifact_prefix=../none/ .",
         "ERROR: The required directory \"../none/\" does not exist"},
        {"-features_dir=../none .", "ERROR: The required directory \"../none\" does not exist"},
        {"-features_dir=../ro .",
         "sift: -features_dir=../ro: cannot write into ../ro: Permission denied"},
        {"-artifact_prefix=../ro/seed/ .",
         "sift: -artifact_prefix=../ro/seed/: cannot write into ../ro/seed/: not a folder"},
        {"-stats_file=../ro/s.json .",
         "sift: -stats_file=../ro/s.json: cannot write into ../ro/: Permission denied"},
        {"-stats_file=../ro .", "sift: -stats_file=../ro: is a folder"},
        {"-merge=1 ../ro .", "sift: corpus folder: cannot write into ../ro: Permission denied"},
        {"-minimize_crash=1 -artifact_prefix=../ro/ ../ro/seed",
         "sift: -artifact_prefix=../ro/: cannot write into ../ro/: Permission denied"},
    };
    assert_int_equal(
        SIFT_TEST_SH("rm -rf ro rw && mkdir ro rw && printf 1+1 > ro/seed && chmod 555 ro && "
                     "chmod 777 rw && printf 1/7 > crash17"),
        0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = sh_jailed(0, true, "cd rw && ../calc -runs=100000 %s", cases[i].args);
        if (rc != 1) fail_msg("%s: exit code %d:\n%s", cases[i].args, rc, proc.err);
        one_line(cases[i].args, cases[i].message);
        assert_null(strstr(proc.err, "INITED")); /* stopped before anything ran */
    }
    /* Nothing was written anywhere: ro holds its seed alone, rw nothing. */
    assert_int_equal(SIFT_TEST_SH("ls -A ro rw | tr '\\n' ' '"), 0);
    assert_string_equal(proc.out, "ro: seed  rw: ");

    /* Running the seeds of a read-only corpus, and reproducing from a read-only folder, write
     * nothing of their own: both go on. A crash among the seeds, whose artifact cannot be
     * written, is printed in Base64 instead. */
    assert_int_equal(sh_jailed(0, true, "cd ro && ../calc -runs=0 ."), 0);
    assert_non_null(strstr(proc.err, "Done "));
    assert_int_not_equal(sh_jailed(0, true, "cd ro && ../calc ../crash17"), 0); /* a crash */
    assert_non_null(strstr(proc.err, "Running: ../crash17"));
    assert_null(strstr(proc.err, "artifact"));
    assert_int_equal(SIFT_TEST_SH("mkdir -p c17 && cp crash17 c17/"), 0);
    assert_int_not_equal(sh_jailed(0, true, "cd ro && ../calc -runs=0 ../c17"), 0);
    assert_non_null(strstr(proc.err, "ERROR: cannot write artifact ./crash-"));
    assert_non_null(strstr(proc.err, "Base64: MS83"));
    assert_int_equal(SIFT_TEST_SH("ls -A ro && chmod 755 ro"), 0);
    assert_string_equal(proc.out, "seed\n");

    /* A read-only mount stops root too, where this test may mount one (root, in a mount
     * namespace of its own; a user may not even make the namespace). */
    int rc = SIFT_TEST_SH("mkdir -p rom && { unshare -m true 2>/dev/null || exit 99; } && "
                          "unshare -m sh -c 'mount -t tmpfs t rom 2>/dev/null || exit 99; "
                          "mkdir rom/c && mount -o remount,ro rom && ./calc -runs=100 rom/c'");
    if (rc != 99) {
        assert_int_equal(rc, 1);
        one_line("read-only mount", "sift: corpus folder: cannot write into rom/c: Read-only "
                                    "file system");
    }
}

/* A full disk, simulated with RLIMIT_FSIZE (writes past it fail with EFBIG, as ENOSPC on a
 * full disk): a find, a crash artifact or statistics that cannot be saved are reported with
 * one line naming the file, the campaign stops with a non-zero exit, and no file is left cut
 * short under its final name or as a temporary. What was saved before is whole. */
static void full_disk_stops_the_campaign_and_leaves_no_partial_file(void **state)
{
    (void)state;
    /* Inputs found early are short; the first over 24 bytes cannot be saved. */
    int rc = sh_jailed(24, false, "rm -rf c && mkdir c && ./tlv -seed=1 -runs=10000000 c");
    assert_int_equal(rc, 1);
    const char *line = strstr(proc.err, "sift: cannot save c/");
    assert_non_null(line);
    one_line("corpus", "sift: cannot save c/");
    assert_non_null(strstr(line, ": File too large\n"));
    assert_null(strstr(proc.err, "DONE")); /* it stopped at once */
    char name[41];
    assert_int_equal(sscanf(line, "sift: cannot save c/%40[0-9a-f]:", name), 1);
    long saved = intact_files("c");
    assert_true(saved >= 1); /* the short finds before it */
    assert_int_not_equal(SIFT_TEST_SH("test -e c/%s", name), 0);

    /* A crash whose artifact does not fit. Its input is printed in Base64 instead. */
    assert_int_equal(
        SIFT_TEST_SH("rm -rf a b && mkdir a b && (printf A; head -c 600 /dev/zero) > b/crash"), 0);
    rc = sh_jailed(512, false, "./faults -runs=0 -artifact_prefix=a/ b");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "ERROR: cannot write artifact a/crash-"));
    assert_non_null(strstr(proc.err, ": File too large\nBase64: QQAAAA"));
    assert_int_equal(intact_files("a"), 0);

    /* A real full disk, where this test may mount a small tmpfs (root, in a mount namespace
     * of its own, which goes with the shell): ENOSPC, the same line. */
    rc = SIFT_TEST_SH(
        "mkdir -p m && unshare -m sh -c 'mount -t tmpfs -o size=64k t m 2>/dev/null || "
        "exit 99; cd m && mkdir c && ../tlv -seed=1 -runs=10000000 -len_control=0 c; "
        "echo rc=$?; for f in c/* c/.[!.]*; do [ -e \"$f\" ] || continue; "
        "[ \"$(sha1sum < \"$f\" | cut -c1-40)\" = \"${f#c/}\" ] || echo \"bad $f\"; done'");
    if (rc == 0) {
        one_line("tmpfs", "sift: cannot save c/");
        assert_non_null(strstr(proc.err, ": No space left on device\n"));
        assert_non_null(strstr(proc.out, "rc=1\n"));
        assert_null(strstr(proc.out, "bad "));
    } else {
        fprintf(stderr, "note: no tmpfs could be mounted here; RLIMIT_FSIZE stands in for it\n");
    }

    /* Statistics: written at the start, so that the campaign stops at once. */
    rc =
        sh_jailed(64, false, "rm -rf st && mkdir st && ./tlv -runs=10000000 -stats_file=st/s.json");
    assert_int_equal(rc, 1);
    one_line("stats", "sift: cannot write stats file st/s.json: File too large");
    assert_null(strstr(proc.err, "Done 10000000 runs"));
    assert_int_equal(SIFT_TEST_SH("ls -A st | wc -l"), 0);
    assert_int_equal(strtol(proc.out, NULL, 10), 0);
}

/* A file where a folder is expected, and the other way round: one line each. */
static void files_and_folders_swapped_get_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"c f", "sift: c: is a folder, expected a file"},
        {"-merge=1 c f", "sift: corpus folder f: not a folder"},
        {"-dict=d c", "sift: d: cannot read: Is a directory"},
        {"-minimize_crash=1 d",
         "sift: -minimize_crash=1 takes exactly one input file (got 1 inputs, a folder)"},
        {"-trace=- d", "sift: -trace takes exactly one input file (got 1 inputs, a folder)"},
        {"-trace=d f", "sift: -trace=d: cannot create: Is a directory"},
        {"-artifact_prefix=f/ c", "sift: -artifact_prefix=f/: cannot write into f/: not a folder"},
        {"-stats_file=d c", "sift: -stats_file=d: is a folder"},
        {"p", "sift: p: not a regular file"}, /* a FIFO, refused without waiting on it */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = SIFT_TEST_SH("rm -rf c d f p && mkdir c d && printf 1 > f && mkfifo p && "
                              "timeout 60 ./calc -runs=100 %s",
                              cases[i].args);
        if (rc != 1) fail_msg("%s: exit code %d:\n%s", cases[i].args, rc, proc.err);
        one_line(cases[i].args, cases[i].message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_the_magic_bug_from_nothing),
        cmocka_unit_test(runs_limit_and_stats),
        cmocka_unit_test(smaller_inputs_replace_larger_ones),
        cmocka_unit_test(the_corpus_folder_reaches_what_the_campaign_reached),
        cmocka_unit_test(same_seed_same_campaign),
        cmocka_unit_test(timeouts_ooms_and_signals_leave_artifacts),
        cmocka_unit_test(silenced_target_still_reports_its_crash),
        cmocka_unit_test(malloc_limit_stops_at_the_allocation),
        cmocka_unit_test(leaks_need_a_sanitizer),
        cmocka_unit_test(leaks_are_checked_after_every_mutation),
        cmocka_unit_test(set_cover_merge_keeps_the_fewest),
        cmocka_unit_test(startup_coverage_is_no_inputs),
        cmocka_unit_test(bad_flags_and_paths_get_one_line),
        cmocka_unit_test(merge_keeps_what_adds_coverage_and_skips_crashes),
        cmocka_unit_test(merge_skips_hanging_and_crashing_inputs),
        cmocka_unit_test(merge_keeps_inputs_for_edges_not_values),
        cmocka_unit_test(values_count_on_a_share_of_runs),
        cmocka_unit_test(values_that_lead_count_on_the_most_runs),
        cmocka_unit_test(inputs_found_without_values_bring_their_values),
        cmocka_unit_test(minimize_crash_shrinks_and_keeps_the_crash),
        cmocka_unit_test(minimize_crash_cuts_until_nothing_more_goes),
        cmocka_unit_test(minimize_crash_lowers_a_length_byte),
        cmocka_unit_test(custom_mutator_and_initialize_are_used),
        cmocka_unit_test(oss_fuzz_style_build),
        cmocka_unit_test(unwritable_outputs_stop_before_fuzzing),
        cmocka_unit_test(full_disk_stops_the_campaign_and_leaves_no_partial_file),
        cmocka_unit_test(files_and_folders_swapped_get_one_line),
        cmocka_unit_test(slow_inputs_become_slow_unit_artifacts),
        cmocka_unit_test(slow_finds_are_not_kept),
        cmocka_unit_test(a_find_slow_by_a_second_is_not_run_again),
        cmocka_unit_test(freed_memory_stays_for_the_next_execution),
    };
    return cmocka_run_group_tests(tests, build_harnesses, sift_test_scratch_teardown);
}
