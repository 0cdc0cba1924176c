/* The fixture of tests that build harnesses or write files: scratch folders, sift-cc builds, one
 * shell helper, and the reading back of what was left (folder entries, JSON numbers, files,
 * expected lines, stderr). */
#ifndef SIFT_TEST_HARNESS_H
#define SIFT_TEST_HARNESS_H

#include "support/subprocess.h"

#include <stdbool.h>

/* Runs a shell command line (printf-style) in the test file's scratch folder and returns its
 * status. A test file that runs commands keeps them in two variables named for this helper:
 * `char *dir` (the folder, made by its group setup) and `sift_test_proc proc` (what the last
 * command printed). */
#define SIFT_TEST_SH(...) sift_test_sh(&proc, dir, __VA_ARGS__)

/* Like sift_test_sh, with the size of any file the command writes limited to FSIZE bytes when
 * not 0 and, when UNPRIVILEGED, as a user whom permission bits bind (65534 when the test runs
 * as root); skips the test, saying why, when root cannot become that user. */
int sift_test_sh_limited(sift_test_proc *p, const char *dir, unsigned long long fsize,
                         bool unprivileged, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A fresh empty folder under $TMPDIR or /tmp, open to others (0755) so that the unprivileged
 * user of sift_test_unprivileged reaches what it holds; NULL on failure. */
char *sift_test_scratch(void);

/* For code that writes into a folder of its own: *SCRATCH becomes a fresh scratch folder, DIR
 * (PATH_MAX bytes) the path of its new empty subfolder SUB (mode 0700), and PREFIX (PATH_MAX
 * bytes, or NULL) DIR with a trailing slash, the form of -artifact_prefix. Fails the test when
 * it cannot. */
void sift_test_scratch_sub(char **scratch, const char *sub, char *dir, char *prefix);

/* As cmocka setup (of a test or a group): *STATE becomes a fresh scratch folder (char *).
 * As teardown: the folder *STATE names is removed with all it holds. */
int sift_test_scratch_setup(void **state);
int sift_test_scratch_teardown(void **state);
/* A test that gets a fresh scratch folder as its *state. */
#define SIFT_TEST_IN_SCRATCH(test)                                                                 \
    cmocka_unit_test_setup_teardown(test, sift_test_scratch_setup, sift_test_scratch_teardown)

/* Builds SOURCE (a path in the source tree) into DIR/NAME with sift-cc -g -O1
 * -fsanitize=fuzzer, the sanitizers the test was built with and FLAGS. Returns 0, or -1 after
 * printing what the compiler said (or when DIR is NULL: a setup that failed before). */
int sift_test_build(const char *dir, const char *name, const char *source, const char *flags);

/* How many entries of folder DIR/SUB (DIR alone when SUB is NULL) have names that match the
 * shell pattern GLOB ("*" matches hidden names too; "." and ".." never count). A folder that
 * is not there (yet) holds none; -1 when it cannot be read. */
long sift_test_count_entries(const char *dir, const char *sub, const char *glob);

/* The number after "KEY": in the JSON text S (as sift writes it), -1 when absent. */
double sift_test_json_num(const char *s, const char *key);

/* Fails the test unless TEXT holds each of the N strings of WANT; the message names the first
 * one missing. SIFT_TEST_EXPECT_ALL takes the count from WANT, an array. */
void sift_test_expect_all(const char *text, const char *const *want, size_t n);
#define SIFT_TEST_EXPECT_ALL(text, want)                                                           \
    sift_test_expect_all(text, want, sizeof(want) / sizeof((want)[0]))

/* What the file DIR/REL holds (NUL-terminated, static, cut at SIFT_TEST_OUT_CAP), or NULL
 * when it cannot be read. */
const char *sift_test_read(const char *dir, const char *rel);

/* What this process writes to stderr between sift_test_capture_begin and _end goes into a
 * temporary file instead; _end puts stderr back and returns that text (NUL-terminated, static,
 * cut at SIFT_TEST_OUT_CAP), for checking the messages of code that a test calls directly. */
typedef struct {
    int saved, file;
} sift_test_capture;
void sift_test_capture_begin(sift_test_capture *c);
const char *sift_test_capture_end(sift_test_capture *c);

#endif
