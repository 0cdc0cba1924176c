/* sift show: the real binary on the output folder of a real campaign (examples/calc.c under
 * -workers with -out), its plot, its flags, and folders it must refuse in one line; the plot's
 * ticks and plot_data's parser directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/outread.h"
#include "cli/svg.h"
#include "sift/version.h"
#include "support/harness.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dir;
static sift_test_proc proc;

#define SIFT SIFT_BUILD_DIR "/bin/sift"

/* The folder of one short campaign, made once: calc's division by zero gives crashes. */
static int campaign(void **state)
{
    *state = dir = sift_test_scratch();
    if (sift_test_build(dir, "calc", "examples/calc.c", "")) return -1;
    /* Exits with -error_exitcode: it found crashes. */
    SIFT_TEST_SH("mkdir c && ./calc -workers=2 -seed=1 -max_total_time=3 -out=o c 2>log");
    if (SIFT_TEST_SH(
            "test -s o/fuzzer_stats && test -s o/plot_data && ls o/crashes | grep -q id:") != 0) {
        SIFT_TEST_SH("cat log");
        fprintf(stderr, "the campaign left no output folder:\n%s", proc.out);
        return -1;
    }
    return 0;
}

/* The value of KEY in DIR/fuzzer_stats, as text. */
static void stat_value(const char *key, char *out, size_t cap)
{
    assert_int_equal(SIFT_TEST_SH("sed -n 's/^%s *: //p' o/fuzzer_stats", key), 0);
    snprintf(out, cap, "%s", proc.out);
    out[strcspn(out, "\n")] = '\0';
    assert_true(out[0] != '\0');
}

/* V as the summary prints it: 1234567 is "1,234,567". */
static void with_commas(const char *v, char *out)
{
    size_t n = strlen(v);
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0) *out++ = ',';
        *out++ = v[i];
    }
    *out = '\0';
}

/* The numbers of every points="..." of the SVG text lie inside its 800 x 450 view box. */
static size_t check_points(const char *svg)
{
    size_t lines = 0;
    for (const char *p = svg; (p = strstr(p, "<polyline")); p++) {
        const char *pts = strstr(p, "points=\"");
        assert_non_null(pts);
        pts += 8;
        size_t n = 0;
        while (*pts != '"') {
            char *end;
            double x = strtod(pts, &end);
            assert_true(end > pts && *end == ',');
            double y = strtod(end + 1, &end);
            assert_true(isfinite(x) && isfinite(y));
            assert_true(x >= 0 && x <= 800 && y >= 0 && y <= 450);
            n++;
            pts = end + (*end == ' ');
        }
        assert_true(n >= 1);
        lines++;
    }
    return lines;
}

static void summary_and_plot_of_a_real_campaign(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -f o/coverage.svg && " SIFT " show o"), 0);
    char *out = strdup(proc.out); /* proc is the next command's */
    assert_non_null(out);
    assert_string_equal(proc.err, "");
    static const char *const fields[] = {"run time    0:00:0",
                                         "execs       ",
                                         "exec/s      ",
                                         "coverage    ",
                                         " edges of ",
                                         "corpus      ",
                                         " favored",
                                         "crashes     ",
                                         "hangs       ",
                                         "last find   ",
                                         "plot        o/coverage.svg"};
    SIFT_TEST_EXPECT_ALL(out, fields);
    /* The numbers are fuzzer_stats' own. */
    char v[64], want[128], commas[96];
    stat_value("execs_done", v, sizeof v);
    with_commas(v, commas);
    snprintf(want, sizeof want, "execs       %s\n", commas);
    assert_non_null(strstr(out, want));
    stat_value("corpus_count", v, sizeof v);
    with_commas(v, commas);
    snprintf(want, sizeof want, "corpus      %s entries, ", commas);
    assert_non_null(strstr(out, want));
    stat_value("edges_found", v, sizeof v);
    snprintf(want, sizeof want, "coverage    %s edges of ", v);
    assert_non_null(strstr(out, want));
    /* Crashes by path, each one a file. */
    const char *crash = strstr(out, "o/crashes/id:000000,sig:");
    assert_non_null(crash);
    char path[256];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(crash, "\n"), crash);
    assert_int_equal(SIFT_TEST_SH("test -f '%s'", path), 0);
    free(out);

    assert_int_equal(SIFT_TEST_SH("cat o/coverage.svg"), 0);
    const char *svg = proc.out;
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(svg, "</svg>\n"));
    assert_non_null(strstr(svg, "<polyline class=\"left\""));
    assert_non_null(strstr(svg, "<polyline class=\"right\""));
    assert_non_null(strstr(svg, "class=\"axis-time\""));
    assert_non_null(strstr(svg, "class=\"axis-left\""));
    assert_non_null(strstr(svg, "class=\"axis-right\""));
    assert_non_null(strstr(svg, ">time (seconds)</text>"));
    assert_non_null(strstr(svg, ">edges found</text>"));
    assert_non_null(strstr(svg, ">corpus entries</text>"));
    assert_non_null(strstr(svg, ">0</text>"));
    assert_int_equal(check_points(svg), 2);
    if (SIFT_TEST_SH("command -v xmllint") == 0)
        assert_int_equal(SIFT_TEST_SH("xmllint --noout o/coverage.svg"), 0);
    assert_int_equal(SIFT_TEST_SH("ls -a o | grep -q tmp"), 1); /* no temporary left */
}

static void output_path_stdout_and_no_plot(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -f o/coverage.svg && " SIFT " show -o p.svg o && test -s p.svg && "
                     "test ! -e o/coverage.svg && " SIFT " show --output=q.svg o && test -s "
                     "q.svg && " SIFT " show --output r.svg o && cmp -s q.svg r.svg"),
        0);
    assert_non_null(strstr(proc.out, "plot        r.svg ("));
    /* -o -: the plot on stdout, the summary on stderr. */
    assert_int_equal(SIFT_TEST_SH(SIFT " show -o - o"), 0);
    assert_true(strncmp(proc.out, "<?xml", 5) == 0);
    assert_non_null(strstr(proc.err, "corpus      "));
    assert_null(strstr(proc.err, "plot "));
    assert_int_equal(SIFT_TEST_SH(SIFT " show --no-plot o && test ! -e o/coverage.svg"), 0);
    assert_non_null(strstr(proc.out, "execs       "));
    assert_null(strstr(proc.out, "plot "));
    /* A trailing slash does not double in the paths. */
    assert_int_equal(SIFT_TEST_SH(SIFT " show --no-plot o//"), 0);
    assert_non_null(strstr(proc.out, "\n            o/crashes/id:000000,"));
    assert_null(strstr(proc.out, "o//"));
    /* "." names the folder by its own name in the plot's title. */
    assert_int_equal(SIFT_TEST_SH("cd o && " SIFT
                                  " show . && grep -q 'Edge coverage over time: /.*/o<' "
                                  "coverage.svg && rm coverage.svg"),
                     0);
}

static void help_version_and_usage_errors(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH(SIFT " --help"), 0);
    assert_non_null(strstr(proc.out, "Usage: sift COMMAND"));
    assert_non_null(strstr(proc.out, "show [-o FILE] DIR"));
    assert_int_equal(SIFT_TEST_SH(SIFT " -h"), 0);
    assert_int_equal(SIFT_TEST_SH(SIFT " show --help"), 0);
    assert_non_null(strstr(proc.out, "Usage: sift show [-o FILE] [--no-plot] DIR"));
    assert_int_equal(SIFT_TEST_SH(SIFT " help show"), 0);
    assert_non_null(strstr(proc.out, "Usage: sift show"));
    assert_int_equal(SIFT_TEST_SH(SIFT " --version"), 0);
    assert_string_equal(proc.out, "sift " SIFT_VERSION "\n");
    assert_int_equal(SIFT_TEST_SH(SIFT " -V"), 0);
    assert_string_equal(proc.out, "sift " SIFT_VERSION "\n");

    static const struct {
        const char *args, *err;
    } usage[] = {
        {"", "Usage: sift COMMAND"},
        {"bogus", "sift: unknown command bogus (see sift --help)\n"},
        {"show", "sift show: which folder? (sift show [-o FILE] DIR)\n"},
        {"show -x o", "sift show: unknown option -x (see sift show --help)\n"},
        {"show o c", "sift show: one folder at a time (o and c given)\n"},
        {"show -o", "sift show: -o needs a file name (see sift show --help)\n"},
        {"show -o '' o", "sift show: -o needs a file name\n"},
    };
    for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
        const char *args = usage[i].args, *err = usage[i].err;
        assert_int_equal(SIFT_TEST_SH(SIFT " %s", args), 2);
        if (!strstr(proc.err, err)) fail_msg("sift %s: stderr is \"%s\"", args, proc.err);
        assert_string_equal(proc.out, "");
    }
}

/* A copy of the campaign's folder in NAME, changed by the shell command EDIT; then sift show
 * on PATH must exit 1 with exactly the line "sift show: WANT". */
static void refused(const char *name, const char *edit, const char *path, const char *want)
{
    assert_int_equal(SIFT_TEST_SH("rm -rf %s && cp -r o %s && rm -f %s/coverage.svg && %s", name,
                                  name, name, edit),
                     0);
    int rc = SIFT_TEST_SH(SIFT " show %s", path);
    char line[512];
    snprintf(line, sizeof line, "sift show: %s\n", want);
    if (rc != 1 || strcmp(proc.err, line) != 0)
        fail_msg("sift show %s: exit %d, stderr \"%s\"; wanted 1 and \"%s\"", path, rc, proc.err,
                 line);
    assert_string_equal(proc.out, "");
    assert_int_equal(SIFT_TEST_SH("test ! -e %s/coverage.svg", name), 0);
}

static void bad_folders_get_one_line(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH(SIFT " show nope"), 1);
    assert_string_equal(proc.err, "sift show: nope: no such folder\n");
    assert_int_equal(SIFT_TEST_SH("echo x >afile && " SIFT " show afile"), 1);
    assert_string_equal(proc.err,
                        "sift show: afile: not a folder (give the output folder of sift -out)\n");
    assert_int_equal(SIFT_TEST_SH("mkdir -p empty && " SIFT " show empty"), 1);
    assert_string_equal(
        proc.err, "sift show: empty/fuzzer_stats: no such file (is empty an output folder of sift "
                  "-out?)\n");

    /* Each case breaks the copy in b one way; the line says what is wrong, and where. */
    static const struct {
        const char *edit, *want;
    } broken[] = {
        {"rm b/plot_data", "b/plot_data: no such file (is b an output folder of sift -out?)"},
        {"rm b/fuzzer_stats", "b/fuzzer_stats: no such file (is b an output folder of sift -out?)"},
        {": >b/plot_data", "b/plot_data: empty file"},
        {"head -1 o/plot_data >b/plot_data", "b/plot_data: no data lines yet, only the header"},
        {"sed -i 1d b/plot_data",
         "b/plot_data:1: no header line (expected \"# relative_time, ..., edges_found\")"},
        {"sed -i '1s/edges_found/edges/; 1s/map_size/map/' b/plot_data",
         "b/plot_data:1: the header names no edges_found (or map_size) column"},
        {"echo '7, 0, 0' >>b/plot_data",
         "b/plot_data:4: malformed line: 3 fields where the header names 13"},
        {"sed -i '2s/^[0-9]*,/x1,/' b/plot_data",
         "b/plot_data:2: relative_time: \"x1\" is not a number"},
        {"printf '1, 0, 0, 5, 0, 0, 1.00%%, 0, 0, 0, 1.0, 10, 3' >>b/plot_data",
         "b/plot_data:4: truncated line (no newline at the end)"},
        {"printf '1,\\0002\\n' >>b/plot_data", "b/plot_data:4: malformed line (a NUL byte)"},
        {"rm b/plot_data && mkdir b/plot_data", "b/plot_data: not a regular file"},
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++)
        refused("b", broken[i].edit, "b", broken[i].want);
    char want[256];
    assert_int_equal(SIFT_TEST_SH("wc -l <o/fuzzer_stats"), 0);
    snprintf(want, sizeof want,
             "b/fuzzer_stats:%d: malformed line \"garbage\" (expected \"key : value\")",
             (int)strtol(proc.out, NULL, 10) + 1);
    refused("b", "echo garbage >>b/fuzzer_stats", "b", want);
    refused("b", "sed -i '/^execs_done/d' b/fuzzer_stats", "b",
            "b/fuzzer_stats: no execs_done line (not a complete fuzzer_stats)");
    refused("b", "sed -i 's/^execs_done *: .*/execs_done        : 12x/' b/fuzzer_stats", "b",
            "b/fuzzer_stats:7: execs_done: \"12x\" is not a number");
    /* Cut in the middle of a line. */
    assert_int_equal(SIFT_TEST_SH("head -c 200 o/fuzzer_stats | tail -c 1 | grep -q ."), 0);
    assert_int_equal(SIFT_TEST_SH("head -c 200 o/fuzzer_stats | wc -l"), 0);
    snprintf(want, sizeof want, "b/fuzzer_stats:%d: truncated line (no newline at the end)",
             (int)strtol(proc.out, NULL, 10) + 1);
    refused("b", "head -c 200 o/fuzzer_stats >b/fuzzer_stats", "b", want);
    /* A -sync_dir holds instances: the line names one. */
    refused("sync",
            "mkdir sync/main && cp o/fuzzer_stats o/plot_data sync/main/ && rm "
            "sync/fuzzer_stats",
            "sync",
            "sync/fuzzer_stats: no such file; sync holds instances (a -sync_dir?): show sync/main");
    /* The plot goes to a folder that is not there. */
    assert_int_equal(SIFT_TEST_SH(SIFT " show -o nope/p.svg o"), 1);
    assert_string_equal(proc.err,
                        "sift show: cannot write nope/p.svg: No such file or directory\n");
    assert_string_equal(proc.out, "");
}

/* Every prefix of the two files (a campaign killed while writing them, a copy cut short):
 * sift show says one line or shows the folder, and never crashes. */
static void cut_files_never_crash(void **state)
{
    (void)state;
    const char *files[] = {"fuzzer_stats", "plot_data"};
    for (size_t f = 0; f < 2; f++) {
        struct stat st;
        char path[512];
        snprintf(path, sizeof path, "%s/o/%s", dir, files[f]);
        assert_int_equal(stat(path, &st), 0);
        size_t step = (size_t)st.st_size / 40 + 1;
        for (size_t len = 0; len <= (size_t)st.st_size; len += step) {
            int rc = SIFT_TEST_SH("rm -rf cut && cp -r o cut && head -c %zu o/%s >cut/%s && " SIFT
                                  " show --no-plot cut",
                                  len, files[f], files[f]);
            if (rc != 0 && rc != 1) fail_msg("%s cut to %zu bytes: exit %d", files[f], len, rc);
            if (rc == 1) {
                assert_int_equal(strncmp(proc.err, "sift show: cut/", 15), 0);
                assert_non_null(strchr(proc.err, '\n'));
                assert_int_equal(strchr(proc.err, '\n')[1], '\0');
            }
        }
    }
}

static void ticks_are_round(void **state)
{
    (void)state;
    double ticks[16], step, top;
    assert_int_equal(sift_svg_ticks(1480, ticks, 16, &step, &top), 4);
    assert_true(step == 500 && top == 1500 && ticks[3] == 1500);
    assert_int_equal(sift_svg_ticks(1500, ticks, 16, &step, &top), 4);
    assert_true(top == 1500);
    assert_int_equal(sift_svg_ticks(54, ticks, 16, &step, &top), 4);
    assert_true(step == 20 && top == 60);
    assert_int_equal(sift_svg_ticks(0, ticks, 16, &step, &top), 6);
    assert_true(fabs(step - 0.2) < 1e-12 && fabs(top - 1) < 1e-12);
    assert_int_equal(sift_svg_ticks(NAN, ticks, 16, &step, &top), 6);
    assert_int_equal(sift_svg_ticks(7, ticks, 16, &step, &top), 5);
    assert_true(step == 2 && top == 8);
}

/* plot_data of a campaign resumed twice: its times start at 0 again each run. Older AFL++
 * wrote unix_time, paths_total and map_size in percent. */
static void resumed_and_older_plot_data(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -rf r && mkdir r && printf '# relative_time, corpus_count, "
                     "edges_found\\n0, 1, 5\\n5, 2, 9\\n0, 2, 9\\n5, 4, 12\\n0, 4, 12\\n' "
                     ">r/plot_data"),
        0);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/r", dir);
    sift_out_plot pl;
    assert_int_equal(sift_out_read_plot(path, &pl, err, sizeof err), 0);
    assert_int_equal(pl.n, 5);
    assert_int_equal(pl.sessions, 3);
    assert_false(pl.cov_is_percent);
    double want[] = {0, 5, 5, 10, 10};
    for (size_t i = 0; i < 5; i++)
        assert_true(pl.points[i].time == want[i]);
    assert_true(pl.points[3].cov == 12 && pl.points[3].corpus == 4);
    sift_out_plot_free(&pl);

    assert_int_equal(
        SIFT_TEST_SH("printf '# unix_time, cycles_done, cur_path, paths_total, pending_total, "
                     "pending_favs, map_size, unique_crashes, unique_hangs, max_depth, "
                     "execs_per_sec\\n1700000000, 0, 0, 3, 0, 0, 1.50%%%%, 0, 0, 1, 99.5\\n"
                     "1700000060, 0, 0, 7, 0, 0, 2.25%%%%, 0, 0, 1, 99.5\\n' >r/plot_data"),
        0);
    assert_int_equal(sift_out_read_plot(path, &pl, err, sizeof err), 0);
    assert_int_equal(pl.n, 2);
    assert_true(pl.cov_is_percent);
    assert_true(pl.points[1].time == 60 && pl.points[1].cov == 2.25 && pl.points[1].corpus == 7);
    sift_out_plot_free(&pl);
}

/* Names in crashes/ come from the campaign's inputs and from peers: one with a newline would
 * forge a line, one with escape sequences would set the terminal's title and clear it. They
 * are shown escaped. */
static void odd_crash_names_are_shown_escaped(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -rf b && cp -r o b && rm -f b/crashes/* && "
                     ": > \"b/crashes/id:000009,$(printf 'x\\nfuzzer      forged\\033]0;"
                     "pwned\\007\\033[2J')\" && " SIFT " show --no-plot b"),
        0);
    assert_non_null(strstr(proc.out, "b/crashes/id:000009,x\\x0afuzzer      forged\\x1b]0;"
                                     "pwned\\x07\\x1b[2J\n"));
    assert_null(strchr(proc.out, '\033'));
    assert_null(strstr(proc.out, "\nfuzzer      forged"));
}

/* A campaign killed in the middle of a plot_data line, then resumed: the folder still shows. */
static void a_resume_mends_a_torn_plot_line(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -rf t && cp -r o t && printf '9, 0, 0' >> t/plot_data && "
                     "mkdir -p tc && ./calc -workers=1 -runs=100 -out=t tc 2>log; " SIFT
                     " show --no-plot t"),
        0);
    assert_non_null(strstr(proc.out, "run time"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summary_and_plot_of_a_real_campaign),
        cmocka_unit_test(output_path_stdout_and_no_plot),
        cmocka_unit_test(help_version_and_usage_errors),
        cmocka_unit_test(bad_folders_get_one_line),
        cmocka_unit_test(cut_files_never_crash),
        cmocka_unit_test(ticks_are_round),
        cmocka_unit_test(resumed_and_older_plot_data),
        cmocka_unit_test(odd_crash_names_are_shown_escaped),
        cmocka_unit_test(a_resume_mends_a_torn_plot_line),
    };
    return cmocka_run_group_tests(tests, campaign, sift_test_scratch_teardown);
}
