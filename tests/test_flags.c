/* Tests of the flag table: defaults, values accepted and refused, inputs, -features, help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/options.h"
#include "sift/covmap.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SIFT_SOURCE_DIR
#define SIFT_SOURCE_DIR "."
#endif

/* The integer flags as libFuzzer names them, with sift's defaults and bounds. */
static const struct {
    const char *name;
    size_t offset;
    long long def, min, max;
} ints[] = {
#define I(f, d, lo, hi)                                                                            \
    {                                                                                              \
#f, offsetof(sift_options, f), d, lo, hi                                                   \
    }
    I(runs, -1, -1, LLONG_MAX),
    I(max_len, 0, 0, INT_MAX),
    I(len_control, 100, 0, INT_MAX),
    I(seed, 0, INT_MIN, LLONG_MAX),
    I(timeout, 1200, 0, INT_MAX),
    I(rss_limit_mb, 2048, 0, INT_MAX),
    I(malloc_limit_mb, 0, 0, INT_MAX),
    I(max_total_time, 0, 0, INT_MAX),
    I(minimize_crash, 0, 0, 1),
    I(merge, 0, 0, 1),
    I(set_cover_merge, 0, 0, 1),
    I(print_final_stats, 0, 0, 1),
    I(keep_seed, 0, 0, 1),
    I(print_pcs, 0, 0, 1),
    I(print_funcs, 2, 0, INT_MAX),
    I(print_coverage, 0, 0, 1),
    I(print_full_coverage, 0, 0, 1),
    I(report_slow_units, 10, 0, INT_MAX),
    I(only_ascii, 0, 0, 1),
    I(cross_over, 1, 0, 1),
    I(mutate_depth, 5, 1, INT_MAX),
    I(close_fd_mask, 0, 0, 3),
    I(use_value_profile, 0, 0, 2),
    I(values_budget, 6, 0, 100),
    I(use_cmp, 1, 0, 1),
    I(use_memmem, 1, 0, 1),
    I(entropic, 1, 0, 1),
    I(entropic_feature_frequency_threshold, 255, 1, 255),
    I(entropic_number_of_rarest_features, 100, 1, INT_MAX),
    I(entropic_scale_per_exec_time, 0, 0, 1),
    I(detect_leaks, 1, 0, 1),
    I(trace_malloc, 0, 0, 2),
    I(jobs, 0, 0, INT_MAX),
    I(workers, 0, 0, 1024),
    I(fork, 0, 0, 1024),
    I(fork_corpus_groups, 0, 0, 1),
    I(verbosity, 1, 0, INT_MAX),
    I(error_exitcode, 77, 0, 255),
    I(timeout_exitcode, 70, 0, 255),
    I(help, 0, 0, 1),
    I(cleanse_crash, 0, 0, 1),
    I(reduce_inputs, 1, 0, 1),
    I(shrink, 0, 0, 1),
    I(create_missing_dirs, 0, 0, 1),
    I(reload, 1, 0, INT_MAX),
    I(crash_history, 0, 0, 10000),
    I(ignore_remaining_args, 0, 0, 1),
    I(ignore_crashes, 0, 0, 1),
    I(ignore_timeouts, 1, 0, 1),
    I(ignore_ooms, 1, 0, 1),
#undef I
};

static const struct {
    const char *name;
    size_t offset;
    int may_be_empty;
} strings[] = {
    {"dict", offsetof(sift_options, dict), 0},
    {"seed_inputs", offsetof(sift_options, seed_inputs), 1},
    {"artifact_prefix", offsetof(sift_options, artifact_prefix), 1},
    {"exact_artifact_path", offsetof(sift_options, exact_artifact_path), 0},
    {"features_dir", offsetof(sift_options, features_dir), 0},
    {"mutation_graph_file", offsetof(sift_options, mutation_graph_file), 0},
    {"exit_on_src_pos", offsetof(sift_options, exit_on_src_pos), 0},
    {"stats_file", offsetof(sift_options, stats_file), 0},
    {"focus_function", offsetof(sift_options, focus_function), 0},
    {"exit_on_item", offsetof(sift_options, exit_on_item), 0},
    {"out", offsetof(sift_options, out), 0},
    {"sync_dir", offsetof(sift_options, sync_dir), 0},
    {"name", offsetof(sift_options, name), 0},
    {"trace", offsetof(sift_options, trace), 0},
    {"trace_format", offsetof(sift_options, trace_format), 1},
    {"merge_control_file", offsetof(sift_options, merge_control_file), 0},
};

#define NINTS    (sizeof(ints) / sizeof(ints[0]))
#define NSTRINGS (sizeof(strings) / sizeof(strings[0]))

static long long int_field(const sift_options *o, size_t i)
{
    return *(const long long *)((const char *)o + ints[i].offset);
}

static const char *string_field(const sift_options *o, size_t i)
{
    return *(const char *const *)((const char *)o + strings[i].offset);
}

/* Parses the arguments after a program name into fresh defaults. */
static int parse(sift_options *o, char *err, size_t errlen, int n, ...)
{
    char *argv[72] = {"fuzzer"};
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        argv[i + 1] = va_arg(ap, char *);
    va_end(ap);
    sift_options_defaults(o);
    err[0] = 0;
    return sift_options_parse(o, n + 1, argv, err, errlen);
}

static void defaults(void **state)
{
    (void)state;
    sift_options o;
    memset(&o, 0xa5, sizeof(o));
    sift_options_defaults(&o);
    for (size_t i = 0; i < NINTS; i++) {
        if (int_field(&o, i) != ints[i].def)
            fail_msg("-%s defaults to %lld", ints[i].name, int_field(&o, i));
    }
    for (size_t i = 0; i < NSTRINGS; i++)
        assert_null(string_field(&o, i));
    assert_int_equal(o.features,
                     SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES) | SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES));
    assert_int_equal(o.ninputs, 0);
    assert_int_equal(o.status, SIFT_STATUS_AUTO);
}

static void integers_accept_their_range(void **state)
{
    (void)state;
    sift_options o;
    char err[256], arg[128];
    for (size_t i = 0; i < NINTS; i++) {
        long long good[] = {ints[i].min, ints[i].max, ints[i].def, (ints[i].min + ints[i].max) / 2};
        for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
            snprintf(arg, sizeof(arg), "-%s=%lld", ints[i].name, good[k]);
            if (parse(&o, err, sizeof(err), 1, arg)) fail_msg("%s refused: %s", arg, err);
            assert_int_equal(int_field(&o, i), good[k]);
        }
        /* The last of repeated flags wins, as in libFuzzer; nothing after
         * -ignore_remaining_args=1 is read, itself included. */
        if (!strcmp(ints[i].name, "ignore_remaining_args")) continue;
        char first[128];
        snprintf(first, sizeof(first), "-%s=%lld", ints[i].name, ints[i].max);
        snprintf(arg, sizeof(arg), "-%s=%lld", ints[i].name, ints[i].min);
        assert_int_equal(parse(&o, err, sizeof(err), 2, first, arg), 0);
        assert_int_equal(int_field(&o, i), ints[i].min);
    }
}

static void integers_refuse_bad_values(void **state)
{
    (void)state;
    sift_options o;
    char err[256], arg[128], want[256];
    static const char *const junk[] = {"abc",
                                       "",
                                       "99999999999999999999",
                                       "-99999999999999999999",
                                       "1x",
                                       " 1",
                                       "+1",
                                       "1 ",
                                       "0x10",
                                       "1.5",
                                       "-",
                                       "1e3"};
    for (size_t i = 0; i < NINTS; i++) {
        if (ints[i].min == 0 && ints[i].max == 1)
            snprintf(want, sizeof(want), "expected 0 or 1");
        else
            snprintf(want, sizeof(want), "expected an integer from %lld to %lld", ints[i].min,
                     ints[i].max);
        char below[64], above[64];
        snprintf(below, sizeof(below), "%lld", ints[i].min - 1);
        if (ints[i].max == LLONG_MAX)
            snprintf(above, sizeof(above), "9223372036854775808");
        else
            snprintf(above, sizeof(above), "%lld", ints[i].max + 1);
        const char *bad[sizeof(junk) / sizeof(junk[0]) + 2] = {below, above};
        memcpy(bad + 2, junk, sizeof(junk));
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
            snprintf(arg, sizeof(arg), "-%s=%s", ints[i].name, bad[k]);
            assert_int_equal(parse(&o, err, sizeof(err), 1, arg), -1);
            char line[512];
            snprintf(line, sizeof(line), "%s: %s", arg, want);
            assert_string_equal(err, line);
        }
        /* A flag needs "=value", as in libFuzzer. */
        snprintf(arg, sizeof(arg), "-%s", ints[i].name);
        assert_int_equal(parse(&o, err, sizeof(err), 1, arg), -1);
        snprintf(want, sizeof(want), "%s: flags need a value (%s=%s)", arg, arg,
                 ints[i].max == 1 ? "1" : "N");
        assert_string_equal(err, want);
    }
}

static void integer_examples(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    assert_int_equal(parse(&o, err, sizeof(err), 1, "-runs=abc"), -1);
    assert_string_equal(err, "-runs=abc: expected an integer from -1 to 9223372036854775807");
    assert_int_equal(parse(&o, err, sizeof(err), 1, "-close_fd_mask=4"), -1);
    assert_string_equal(err, "-close_fd_mask=4: expected an integer from 0 to 3");
    assert_int_equal(parse(&o, err, sizeof(err), 1, "-detect_leaks=2"), -1);
    assert_string_equal(err, "-detect_leaks=2: expected 0 or 1");
    assert_int_equal(parse(&o, err, sizeof(err), 3, "-runs=1000", "-seed=1", "-max_len=64"), 0);
    assert_int_equal(o.runs, 1000);
    assert_int_equal(o.seed, 1);
    assert_int_equal(o.max_len, 64);
    assert_int_equal(parse(&o, err, sizeof(err), 1, "-runs=-0"), 0);
    assert_int_equal(o.runs, 0);
}

static void strings_point_at_arguments(void **state)
{
    (void)state;
    sift_options o;
    char err[256], arg[128], want[256];
    for (size_t i = 0; i < NSTRINGS; i++) {
        snprintf(arg, sizeof(arg), "-%s=some/path=x", strings[i].name);
        assert_int_equal(parse(&o, err, sizeof(err), 1, arg), 0);
        assert_string_equal(string_field(&o, i), "some/path=x");
        snprintf(arg, sizeof(arg), "-%s=", strings[i].name);
        if (strings[i].may_be_empty) {
            assert_int_equal(parse(&o, err, sizeof(err), 1, arg), 0);
            assert_string_equal(string_field(&o, i), "");
        } else {
            assert_int_equal(parse(&o, err, sizeof(err), 1, arg), -1);
            snprintf(want, sizeof(want), "%s: expected a file name", arg);
            assert_string_equal(err, want);
        }
        snprintf(arg, sizeof(arg), "-%s", strings[i].name);
        assert_int_equal(parse(&o, err, sizeof(err), 1, arg), -1);
        snprintf(want, sizeof(want), "%s: flags need a value (%s=FILE)", arg, arg);
        assert_string_equal(err, want);
    }
}

static void features(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    enum {
        E = SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES),
        C = SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP),
        V = SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES),
    };
    static const struct {
        const char *arg;
        unsigned mask;
    } good[] = {
        {"-features=edges,cmp", E | C},
        {"-features=values", V},
        {"-features=cmp,values,edges", E | C | V},
        {"-features=edges", E},
        {"-features=edges,edges", E},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(parse(&o, err, sizeof(err), 1, good[i].arg), 0);
        assert_int_equal(o.features, good[i].mask);
    }
    static const char *const bad[] = {
        "-features=",        "-features=edge",  "-features=edges,",    "-features=,edges",
        "-features=a,,b",    "-features=EDGES", "-features=edges cmp", "-features=edges,,cmp",
        "-features=values,", "-features=all",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char want[256];
        assert_int_equal(parse(&o, err, sizeof(err), 1, bad[i]), -1);
        snprintf(want, sizeof(want), "%s: expected a comma-separated list of edges, cmp, values",
                 bad[i]);
        assert_string_equal(err, want);
    }
    /* The engine adds cmp for -use_value_profile=1; the options keep what was given. */
    assert_int_equal(parse(&o, err, sizeof(err), 2, "-use_value_profile=1", "-features=edges"), 0);
    assert_int_equal(o.features, E);
    assert_int_equal(o.use_value_profile, 1);
    /* libFuzzer takes 2 as well: any value but 0 turns its value profile on. */
    assert_int_equal(parse(&o, err, sizeof(err), 1, "-use_value_profile=2"), 0);
    assert_int_equal(o.use_value_profile, 2);
}

static void inputs_and_malformed_arguments(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    assert_int_equal(parse(&o, err, sizeof(err), 4, "corpus", "-runs=5", "seeds/", "crash-1"), 0);
    assert_int_equal(o.ninputs, 3);
    assert_string_equal(o.inputs[0], "corpus");
    assert_string_equal(o.inputs[1], "seeds/");
    assert_string_equal(o.inputs[2], "crash-1");
    assert_int_equal(o.runs, 5);

    static const struct {
        const char *arg, *err;
    } bad[] = {
        {"-", "-: expected -flag=value or an input"},
        {"-help", "-help: flags need a value (-help=1)"},
        {"-features", "-features: flags need a value (-features=edges,cmp)"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&o, err, sizeof(err), 1, bad[i].arg), -1);
        assert_string_equal(err, bad[i].err);
    }
    /* A short buffer gets a truncated line, and no buffer at all is allowed. */
    char small[8];
    assert_int_equal(parse(&o, small, sizeof(small), 1, "-runs=abc"), -1);
    assert_string_equal(small, "-runs=a");
    char *argv[] = {"fuzzer", "-runs=abc", NULL};
    assert_int_equal(sift_options_parse(&o, 2, argv, NULL, 0), -1);
    assert_int_equal(sift_options_parse(&o, 0, argv, NULL, 0), 0);
}

static void status_is_one_of_its_choices(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    static const struct {
        const char *arg;
        long long mode;
    } good[] = {
        {"-status=auto", SIFT_STATUS_AUTO},
        {"-status=tty", SIFT_STATUS_TTY},
        {"-status=lines", SIFT_STATUS_LINES},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(parse(&o, err, sizeof(err), 1, good[i].arg), 0);
        assert_int_equal(o.status, good[i].mode);
    }
    static const char *const bad[] = {"-status=",     "-status=TTY",      "-status=tt",
                                      "-status=ttyy", "-status=auto|tty", "-status=1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&o, err, sizeof(err), 1, bad[i]), -1);
        char want[64];
        snprintf(want, sizeof(want), "%s: expected auto|tty|lines", bad[i]);
        assert_string_equal(err, want);
    }
    assert_int_equal(parse(&o, err, sizeof(err), 1, "-status"), -1);
    assert_string_equal(err, "-status: flags need a value (-status=auto)");
}

/* libFuzzer ignores "--" and "--name=value": they are set apart for the driver to mention. */
static void double_dash_flags_are_set_apart(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    assert_int_equal(
        parse(&o, err, sizeof(err), 6, "--", "-runs=5", "c", "--runs=9", "--x", "-seed=2"), 0);
    assert_int_equal(o.runs, 5);
    assert_int_equal(o.seed, 2);
    assert_int_equal(o.ninputs, 1);
    assert_string_equal(o.inputs[0], "c");
    assert_int_equal(o.nignored, 3);
    assert_string_equal(o.ignored[0], "--");
    assert_string_equal(o.ignored[1], "--runs=9");
    assert_string_equal(o.ignored[2], "--x");
    assert_ptr_equal(o.ignored + o.nignored, o.inputs);
    assert_true(sift_options_is_flag("runs"));
    assert_false(sift_options_is_flag("run"));
}

/* libFuzzer warns about a flag it does not know and goes on: .options files and scripts pass
 * flags of other libFuzzer versions. A known flag's bad value stays an error. */
static void unknown_flags_are_set_apart(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    assert_int_equal(parse(&o, err, sizeof(err), 8, "-foo=1", "-runs=5", "-foo", "-runsx=1",
                           "-run=1", "-=1", "-Runs=1", "in"),
                     0);
    assert_int_equal(o.runs, 5);
    assert_int_equal(o.nignored, 6);
    assert_string_equal(o.ignored[0], "-foo=1");
    assert_string_equal(o.ignored[5], "-Runs=1");
    assert_int_equal(o.ninputs, 1);
    assert_int_equal(parse(&o, err, sizeof(err), 2, "-foo=1", "-runs=x"), -1);
    assert_string_equal(err, "-runs=x: expected an integer from -1 to 9223372036854775807");
}

/* After -ignore_remaining_args=1 the arguments are the harness's: neither flags nor inputs,
 * and left where they are. */
static void remaining_args_can_be_left_to_the_harness(void **state)
{
    (void)state;
    sift_options o;
    char err[256];
    char *argv[] = {"fuzzer", "c", "-ignore_remaining_args=1", "-runs=x", "own", "--x", NULL};
    sift_options_defaults(&o);
    assert_int_equal(sift_options_parse(&o, 6, argv, err, sizeof err), 0);
    assert_int_equal(o.ignore_remaining_args, 1);
    assert_int_equal(o.ninputs, 1);
    assert_string_equal(o.inputs[0], "c");
    assert_int_equal(o.nignored, 0);
    assert_string_equal(argv[3], "-runs=x");
    assert_string_equal(argv[4], "own");
    /* The inputs before it stay before it, where a harness that reads its own flags after it
     * (LLVM's FlagsTest) does not see them. */
    char *mixed[] = {"fuzzer", "c", "--own", "-runs=1", "-ignore_remaining_args=1", "--x", NULL};
    sift_options_defaults(&o);
    assert_int_equal(sift_options_parse(&o, 6, mixed, err, sizeof err), 0);
    assert_int_equal(o.ninputs, 1);
    assert_string_equal(o.inputs[0], "c");
    assert_string_equal(mixed[4], "-ignore_remaining_args=1");
    assert_string_equal(mixed[5], "--x");
    /* The first flag that sets it cuts, whatever its spelling, as libFuzzer reads it; one that
     * clears it earlier does not undo the cut. */
    char *reset[] = {"fuzzer", "-ignore_remaining_args=0", "c", "-ignore_remaining_args=01",
                     "d",      "-ignore_remaining_args=0", NULL};
    sift_options_defaults(&o);
    assert_int_equal(sift_options_parse(&o, 6, reset, err, sizeof err), 0);
    assert_int_equal(o.ignore_remaining_args, 1);
    assert_int_equal(o.ninputs, 1);
    assert_string_equal(o.inputs[0], "c");
    assert_string_equal(reset[4], "d");
}

static void any_number_of_inputs_go_last_in_order(void **state)
{
    (void)state;
    enum { N = 1000 };
    static char names[N][16];
    static char *argv[N + 4];
    int argc = 0;
    argv[argc++] = "fuzzer";
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "in%d", i);
        argv[argc++] = names[i];
        if (i == 10) argv[argc++] = "-runs=7";
        if (i == 500) argv[argc++] = "-seed=3";
    }
    sift_options o;
    char err[256];
    sift_options_defaults(&o);
    assert_int_equal(sift_options_parse(&o, argc, argv, err, sizeof(err)), 0);
    assert_int_equal(o.runs, 7);
    assert_int_equal(o.seed, 3);
    assert_int_equal(o.ninputs, N);
    for (int i = 0; i < N; i++)
        assert_string_equal(o.inputs[i], names[i]);
    /* The flags come first, in their order: a second parse of the same argv agrees. */
    assert_string_equal(argv[0], "fuzzer");
    assert_string_equal(argv[1], "-runs=7");
    assert_string_equal(argv[2], "-seed=3");
    sift_options_defaults(&o);
    assert_int_equal(sift_options_parse(&o, argc, argv, err, sizeof(err)), 0);
    assert_int_equal(o.ninputs, N);
    assert_string_equal(o.inputs[N - 1], names[N - 1]);
}

static char *help_text(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    sift_options_help(f, "./fuzzer");
    assert_int_equal(fclose(f), 0);
    return text;
}

/* The line of flag NAME in the help: " name   default  text". */
static const char *help_line(const char *help, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = help; (p = strstr(p, "\n ")); p++)
        if (!strncmp(p + 2, name, n) && p[2 + n] == ' ') return p + 1;
    return NULL;
}

static void help_lists_every_flag(void **state)
{
    (void)state;
    char *help = help_text();
    assert_non_null(strstr(help, "./fuzzer [-flag1=val1"));
    size_t lines = 0;
    for (const char *p = strstr(help, "Flags:"); p && (p = strchr(p, '\n')); p++)
        lines += p[1] == ' ';
    assert_int_equal(lines, NINTS + NSTRINGS + 2);
    size_t column = 0;
    char want[64];
    for (size_t i = 0; i < NINTS + NSTRINGS + 2; i++) {
        const char *name = i < NINTS               ? ints[i].name
                           : i < NINTS + NSTRINGS  ? strings[i - NINTS].name
                           : i == NINTS + NSTRINGS ? "features"
                                                   : "status";
        const char *line = help_line(help, name);
        if (!line) fail_msg("-help=1 lacks -%s", name);
        const char *def = line + 1 + strlen(name) + strspn(line + 1 + strlen(name), " ");
        if (i < NINTS)
            snprintf(want, sizeof(want), "%lld ", ints[i].def);
        else
            snprintf(want, sizeof(want), "%s ",
                     i < NINTS + NSTRINGS    ? "none"
                     : i == NINTS + NSTRINGS ? "edges,values"
                                             : "auto");
        assert_memory_equal(def, want, strlen(want));
        /* Help texts start in one column. */
        const char *text = def + strlen(want) + strspn(def + strlen(want), " ");
        column = column ? column : (size_t)(text - line);
        assert_int_equal((size_t)(text - line), column);
        assert_true(text[0] >= 'A' && text[0] <= 'Z');
    }
    free(help);
}

/* docs/flags.md quotes -help=1 verbatim, so that a change to the table shows in the docs. */
static void docs_match_help(void **state)
{
    (void)state;
    FILE *f = fopen(SIFT_SOURCE_DIR "/docs/flags.md", "r");
    if (!f) fail_msg("cannot open %s", SIFT_SOURCE_DIR "/docs/flags.md");
    char *doc = calloc(1, 1 << 16);
    assert_non_null(doc);
    size_t n = fread(doc, 1, (1 << 16) - 1, f);
    (void)fclose(f);
    doc[n] = 0;
    char *help = help_text();
    const char *flags = strstr(help, "Flags:");
    if (!strstr(doc, flags)) {
        fputs(flags, stderr);
        fail_msg("docs/flags.md is out of date; its block should read as printed above");
    }
    free(help);
    free(doc);
}

/* docs/flags.md's table of libFuzzer's flags agrees with the flag table: a flag marked ignored
 * is one that sift warns about, and one marked same or different is one it has. */
static void docs_libfuzzer_table_matches_the_flags(void **state)
{
    (void)state;
    FILE *f = fopen(SIFT_SOURCE_DIR "/docs/flags.md", "r");
    if (!f) fail_msg("cannot open %s", SIFT_SOURCE_DIR "/docs/flags.md");
    char line[2048];
    bool in_table = false;
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "## ", 3)) in_table = !strcmp(line, "## libFuzzer's flags\n");
        if (!in_table || strncmp(line, "| `-", 4) != 0) continue;
        const char *what = strstr(line, " | ");
        assert_non_null(what);
        bool ignored = !strncmp(what + 3, "ignored", 7);
        if (!ignored && strncmp(what + 3, "same", 4) != 0 && strncmp(what + 3, "different", 9) != 0)
            fail_msg("docs/flags.md: no verdict in %s", line);
        /* Every `-name` before the verdict: a row may name several flags. */
        for (const char *p = line; (p = strstr(p, "`-")) && p < what; p++) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(p + 2, "`"), p + 2);
            if (sift_options_is_flag(name) == ignored)
                fail_msg("docs/flags.md says -%s is %s", name, ignored ? "ignored" : "known");
            rows++;
        }
    }
    (void)fclose(f);
    assert_int_equal(rows, 86); /* all of FuzzerFlags.def */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(integers_accept_their_range),
        cmocka_unit_test(integers_refuse_bad_values),
        cmocka_unit_test(integer_examples),
        cmocka_unit_test(strings_point_at_arguments),
        cmocka_unit_test(features),
        cmocka_unit_test(status_is_one_of_its_choices),
        cmocka_unit_test(inputs_and_malformed_arguments),
        cmocka_unit_test(double_dash_flags_are_set_apart),
        cmocka_unit_test(unknown_flags_are_set_apart),
        cmocka_unit_test(remaining_args_can_be_left_to_the_harness),
        cmocka_unit_test(any_number_of_inputs_go_last_in_order),
        cmocka_unit_test(help_lists_every_flag),
        cmocka_unit_test(docs_match_help),
        cmocka_unit_test(docs_libfuzzer_table_matches_the_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
