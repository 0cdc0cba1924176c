/* Tests of the -out folder: AFL++'s layout made or resumed, temporaries of killed writers
 * removed, ids that continue after those on disk, entry names, the reports AFL++'s tools read,
 * paths it must refuse in one line, ids that never repeat whatever names the queue holds, and a
 * plot_data that a kill left torn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/campaign/outdir.h"
#include "support/harness.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* DIR/REL, in a static buffer (one at a time). */
static const char *at(const char *dir, const char *rel)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return path;
}

static void put(const char *dir, const char *rel, const char *text)
{
    char *path = sift_test_write(dir, rel, text, 0644);
    assert_non_null(path);
    free(path);
}

static void a_new_folder_gets_the_afl_layout(void **state)
{
    const char *dir = *state;
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, at(dir, "o")), 0);
    struct stat st;
    static const char *const subs[] = {"o/queue", "o/crashes", "o/hangs"};
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        assert_int_equal(stat(at(dir, subs[i]), &st), 0);
        assert_true(S_ISDIR(st.st_mode));
    }
    assert_int_equal(o.next_id, 0);
    assert_int_equal(o.next_crash, 0);
    assert_int_equal(o.next_hang, 0);
    assert_int_equal(o.cleaned, 0);
    sift_outdir_close(&o);
    assert_null(o.dir);
}

/* A resumed folder: ids continue after the largest on disk, whatever else is there, and the
 * temporaries that killed writers left are gone; other hidden files stay. */
static void a_resumed_folder_continues_its_ids(void **state)
{
    const char *dir = *state;
    assert_int_equal(mkdir(at(dir, "o"), 0755), 0);
    assert_int_equal(mkdir(at(dir, "o/queue"), 0755), 0);
    assert_int_equal(mkdir(at(dir, "o/crashes"), 0755), 0);
    put(dir, "o/queue/id:000000,orig:a", "a");
    put(dir, "o/queue/id:000007,src:000000", "b");
    put(dir, "o/queue/notanid", "c");
    put(dir, "o/queue/id:12x", "d");
    put(dir, "o/queue/.id:000099,src:1.tmp.123.0", "cut short");
    put(dir, "o/queue/.state", "kept");
    put(dir, "o/crashes/id:000003,sig:06", "e");
    put(dir, "o/.fuzzer_stats.tmp.9.1", "cut short");
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, at(dir, "o")), 0);
    assert_int_equal(o.next_id, 8);
    assert_int_equal(o.next_crash, 4);
    assert_int_equal(o.next_hang, 0);
    assert_int_equal(o.cleaned, 2);
    assert_int_equal(sift_test_count_entries(dir, "o/queue", ".*"), 1);
    /* Only the campaign's lock is hidden there now. */
    assert_int_equal(sift_test_count_entries(dir, "o", ".*"), 1);
    assert_int_equal(sift_test_count_entries(dir, "o", ".lock"), 1);
    assert_int_equal(sift_test_count_entries(dir, "o/queue", "*"), 5);
    sift_pathlist l = {0};
    assert_int_equal(sift_outdir_list_queue(&o, &l), 0);
    assert_int_equal(l.count, 4); /* hidden files are not entries */
    sift_pathlist_free(&l);
    sift_outdir_close(&o);
}

static void entries_are_named_and_numbered_like_afl(void **state)
{
    const char *dir = *state;
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, at(dir, "o")), 0);
    assert_int_equal(sift_outdir_queue(&o, (const uint8_t *)"one", 3, "orig:seed"), 0);
    assert_int_equal(sift_outdir_queue(&o, (const uint8_t *)"two", 3, ""), 1);
    assert_int_equal(sift_outdir_queue(&o, (const uint8_t *)"three", 5, NULL), 2);
    assert_string_equal(sift_test_read(dir, "o/queue/id:000000,orig:seed"), "one");
    assert_string_equal(sift_test_read(dir, "o/queue/id:000001"), "two");
    assert_string_equal(sift_test_read(dir, "o/queue/id:000002"), "three");
    assert_int_equal(sift_outdir_fault(&o, false, (const uint8_t *)"X", 1, "sig:06,src:000001"), 0);
    assert_int_equal(sift_outdir_fault(&o, false, (const uint8_t *)"Y", 1, "sig:11"), 1);
    assert_int_equal(sift_outdir_fault(&o, true, (const uint8_t *)"H", 1, "src:000002"), 0);
    assert_string_equal(sift_test_read(dir, "o/crashes/id:000000,sig:06,src:000001"), "X");
    assert_string_equal(sift_test_read(dir, "o/crashes/id:000001,sig:11"), "Y");
    assert_string_equal(sift_test_read(dir, "o/hangs/id:000000,src:000002"), "H");
    /* A caller that writes the file itself takes the next id and its path. */
    char path[PATH_MAX];
    assert_int_equal(sift_outdir_queue_path(&o, "sync:peer", path, sizeof path), 3);
    assert_string_equal(path, at(dir, "o/queue/id:000003,sync:peer"));
    assert_int_equal(o.next_id, 4);
    /* No temporaries are left behind. */
    assert_int_equal(sift_test_count_entries(dir, "o/queue", ".*"), 0);
    sift_outdir_close(&o);
}

/* A file name has at most 255 bytes: the description is cut, never the id. */
static void long_descriptions_are_cut_not_the_id(void **state)
{
    const char *dir = *state;
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, at(dir, "o")), 0);
    char desc[400];
    memset(desc, 'd', sizeof desc - 1);
    desc[sizeof desc - 1] = '\0';
    assert_int_equal(sift_outdir_queue(&o, (const uint8_t *)"x", 1, desc), 0);
    char want[256];
    snprintf(want, sizeof want, "o/queue/id:000000,%.*s", 200 - 10, desc);
    assert_int_equal(strlen(want), strlen("o/queue/") + 200);
    assert_string_equal(sift_test_read(dir, want), "x");
    /* A path that cannot hold even the id is refused in one line. */
    char path[32];
    sift_test_capture c;
    sift_test_capture_begin(&c);
    long id = sift_outdir_queue_path(&o, "x", path, sizeof path);
    const char *err = sift_test_capture_end(&c);
    assert_int_equal(id, -1);
    char line[PATH_MAX + 64];
    snprintf(line, sizeof line, "sift: -out: the path %s/queue/id:000001,... is too long\n", o.dir);
    assert_string_equal(err, line);
    assert_int_equal(o.next_id, 1);
    sift_outdir_close(&o);
}

static void ids_are_read_from_afl_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        long id;
    } cases[] = {
        {"id:000042,src:1", 42},
        {"id:7", 7},
        {"id:000000", 0},
        {"id:999999999", 999999999},
        {"id:4294967294", 4294967294},
        {"id:4294967295", -1},
        {"id:", -1},
        {"id:,x", -1},
        {"id:12x", -1},
        {"xid:1", -1},
        {"ID:000001", -1},
        {"", -1},
        {"id:-1", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (sift_outdir_id(cases[i].name) != cases[i].id)
            fail_msg("%s: %ld, expected %ld", cases[i].name, sift_outdir_id(cases[i].name),
                     cases[i].id);
}

static void odd_characters_leave_file_names(void **state)
{
    (void)state;
    char s[] = "a b/c:d,e\xc3\xa9._+-Z9\n";
    sift_outdir_safe(s);
    assert_string_equal(s, "a_b_c_d_e__._+-Z9_");
}

/* fuzzer_stats is rewritten whole with AFL++'s keys; plot_data gets its header once. */
static void reports_are_what_afl_tools_read(void **state)
{
    const char *dir = *state;
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, at(dir, "o")), 0);
    sift_outdir_stats st = {.start_time = 1000,
                            .now = 1060,
                            .pid = 4242,
                            .execs = 123456,
                            .execs_per_sec = 2057.6,
                            .corpus_count = 17,
                            .saved_crashes = 2,
                            .edges_found = 25,
                            .total_edges = 100,
                            .banner = "calc",
                            .command_line = "./calc -workers=2 c"};
    assert_int_equal(sift_outdir_report(&o, &st, true), 0);
    st.now = 1120;
    st.execs = 234567;
    assert_int_equal(sift_outdir_report(&o, &st, true), 0);
    assert_int_equal(sift_outdir_report(&o, &st, false), 0);
    const char *stats = sift_test_read(dir, "o/fuzzer_stats");
    static const char *const want[] = {
        "start_time        : 1000\n",   "last_update       : 1120\n",
        "run_time          : 120\n",    "fuzzer_pid        : 4242\n",
        "execs_done        : 234567\n", "execs_per_sec     : 2057.60\n",
        "corpus_count      : 17\n",     "saved_crashes     : 2\n",
        "bitmap_cvg        : 25.00%\n", "edges_found       : 25\n",
        "afl_banner        : calc\n",   "command_line      : ./calc -workers=2 c\n",
    };
    SIFT_TEST_EXPECT_ALL(stats, want);
    const char *plot = sift_test_read(dir, "o/plot_data");
    assert_int_equal(strncmp(plot, "# relative_time, cycles_done,", 29), 0);
    const char *rows = strchr(plot, '\n') + 1;
    assert_string_equal(rows, "60, 0, 0, 17, 0, 0, 25.00%, 2, 0, 0, 2057.60, 123456, 25\n"
                              "120, 0, 0, 17, 0, 0, 25.00%, 2, 0, 0, 2057.60, 234567, 25\n");
    assert_int_equal(sift_test_count_entries(dir, "o", ".*"), 1); /* the lock, no temporary */
    sift_outdir_close(&o);
}

/* Paths it cannot use: one line naming the path and the problem, and no folder made. */
static void unusable_paths_get_one_line(void **state)
{
    const char *dir = *state;
    put(dir, "file", "x");
    assert_int_equal(mkdir(at(dir, "o"), 0755), 0);
    put(dir, "o/queue", "not a folder");
    static const struct {
        const char *rel, *line;
    } cases[] = {
        {"file", "sift: -out: cannot create the folder %s/file: Not a directory\n"},
        {"file/o", "sift: -out: cannot create the folder %s/file/o: Not a directory\n"},
        {"o", "sift: -out: cannot create the folder %s/o/queue: Not a directory\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sift_outdir o;
        sift_test_capture c;
        sift_test_capture_begin(&c);
        int rc = sift_outdir_open(&o, at(dir, cases[i].rel));
        const char *err = sift_test_capture_end(&c);
        char line[PATH_MAX + 128];
        snprintf(line, sizeof line, cases[i].line, dir);
        assert_int_equal(rc, -1);
        assert_string_equal(err, line);
        assert_null(o.dir);
    }
    assert_int_equal(sift_test_count_entries(dir, "o", "[!.]*"), 1);
}

/* A queue folder gone after opening: the write fails with a message, nothing is left. */
static void a_failed_write_says_which_file(void **state)
{
    const char *dir = *state;
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, at(dir, "o")), 0);
    assert_int_equal(rmdir(at(dir, "o/queue")), 0);
    sift_test_capture c;
    sift_test_capture_begin(&c);
    long id = sift_outdir_queue(&o, (const uint8_t *)"x", 1, "src:1");
    sift_pathlist l = {0};
    int listed = sift_outdir_list_queue(&o, &l);
    const char *err = sift_test_capture_end(&c);
    assert_int_equal(id, -1);
    assert_int_equal(listed, -1);
    sift_pathlist_free(&l);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof want,
             "sift: -out: cannot write %s/o/queue/id:000000,src:1: No such file or directory\n",
             dir);
    assert_int_equal(strncmp(err, want, strlen(want)), 0);
    assert_non_null(strstr(err + strlen(want), "sift: -out: "));
    sift_outdir_close(&o);
}

/* Queues N entries through a freshly opened O on DIR. */
static void queue_some(const char *dir, int n)
{
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, dir), 0);
    for (int i = 0; i < n; i++)
        assert_true(sift_outdir_queue(&o, (const uint8_t *)"x", 1, "t") >= 0);
    sift_outdir_close(&o);
}

/* The ids of DIR/queue; fails on a repeated one. Returns how many. */
static size_t distinct_ids(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/queue", dir);
    DIR *d = opendir(path);
    assert_non_null(d);
    long ids[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long id = sift_outdir_id(e->d_name);
        if (id < 0) continue;
        for (size_t i = 0; i < n; i++)
            if (ids[i] == id) fail_msg("id %ld is used twice", id);
        assert_true(n < 64);
        ids[n++] = id;
    }
    closedir(d);
    return n;
}

/* An entry named with the largest id AFL++'s six digits allow, or more, made every later start
 * hand out the ids after it again, since it could not read back the names it had written. */
static void ids_never_repeat_after_a_huge_one(void **state)
{
    const char *dir = *state;
    sift_test_proc *proc = malloc(sizeof(*proc));
    assert_non_null(proc);
    assert_int_equal(sift_test_sh(proc, dir,
                                  "mkdir -p o/queue && : > o/queue/id:999999999,planted && "
                                  ": > o/queue/id:99999999999,past"),
                     0);
    char out[512];
    snprintf(out, sizeof out, "%s/o", dir);
    for (int start = 0; start < 3; start++)
        queue_some(out, 4);
    assert_int_equal(distinct_ids(out), 13);
    assert_int_equal(sift_outdir_id("id:1000000011,t"), 1000000011);
    assert_int_equal(sift_outdir_id("id:4294967295,x"), -1); /* past the largest */
    assert_int_equal(sift_outdir_id("id:99999999999999999999999,x"), -1);

    /* After the largest id there is none left: one line, never a name reused. */
    assert_int_equal(sift_test_sh(proc, dir, "mkdir -p e/queue && : > e/queue/id:4294967294,last"),
                     0);
    snprintf(out, sizeof out, "%s/e", dir);
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, out), 0);
    assert_int_equal(sift_outdir_queue(&o, (const uint8_t *)"x", 1, "t"), -1);
    sift_outdir_close(&o);
    free(proc);
}

static void report_once(const char *dir, uint64_t now)
{
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, dir), 0);
    sift_outdir_stats st = {.start_time = 100, .now = now, .banner = "b", .command_line = "c"};
    assert_int_equal(sift_outdir_report(&o, &st, true), 0);
    sift_outdir_close(&o);
}

/* A kill in the middle of a line of plot_data, then a resume: the torn line is cut, and every
 * line is whole again. */
static void a_torn_plot_line_is_cut_on_resume(void **state)
{
    const char *dir = *state;
    sift_test_proc *proc = malloc(sizeof(*proc));
    assert_non_null(proc);
    char out[512];
    snprintf(out, sizeof out, "%s/o", dir);
    report_once(out, 101);
    assert_int_equal(sift_test_sh(proc, dir, "printf '2, 0, 0, 7' >> o/plot_data"), 0);
    report_once(out, 103);
    assert_int_equal(sift_test_sh(proc, dir, "cut -d, -f1 o/plot_data | tr '\\n' ' '"), 0);
    assert_string_equal(proc->out, "# relative_time 1 3 ");
    /* A file with no whole line at all. */
    assert_int_equal(sift_test_sh(proc, dir, "printf '# relat' > o/plot_data"), 0);
    report_once(out, 104);
    assert_int_equal(sift_test_sh(proc, dir, "cut -d, -f1 o/plot_data | tr '\\n' ' '"), 0);
    assert_string_equal(proc->out, "# relative_time 4 ");
    free(proc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SIFT_TEST_IN_SCRATCH(a_new_folder_gets_the_afl_layout),
        SIFT_TEST_IN_SCRATCH(a_resumed_folder_continues_its_ids),
        SIFT_TEST_IN_SCRATCH(entries_are_named_and_numbered_like_afl),
        SIFT_TEST_IN_SCRATCH(long_descriptions_are_cut_not_the_id),
        cmocka_unit_test(ids_are_read_from_afl_names),
        cmocka_unit_test(odd_characters_leave_file_names),
        SIFT_TEST_IN_SCRATCH(reports_are_what_afl_tools_read),
        SIFT_TEST_IN_SCRATCH(unusable_paths_get_one_line),
        SIFT_TEST_IN_SCRATCH(a_failed_write_says_which_file),
        SIFT_TEST_IN_SCRATCH(ids_never_repeat_after_a_huge_one),
        SIFT_TEST_IN_SCRATCH(a_torn_plot_line_is_cut_on_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
