/* Tests of artifacts: SHA-1 names, libFuzzer's lines, atomic replacement, unwritable paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/contain/artifact.h"
#include "engine/base/files.h"
#include "engine/contain/report.h"
#include "support/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A fresh folder per test, and a log outside it that receives the reports, both in a scratch
 * folder. */
typedef struct {
    char *scratch;
    char dir[PATH_MAX];
    char prefix[PATH_MAX]; /* dir with the trailing slash */
    int logfd;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    sift_test_scratch_sub(&f->scratch, "a", f->dir, f->prefix);
    char log[PATH_MAX];
    snprintf(log, sizeof(log), "%s/log", f->scratch);
    f->logfd = open(log, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(f->logfd >= 0);
    sift_report_set_fd(f->logfd);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sift_report_set_fd(2);
    close(f->logfd);
    chmod(f->dir, 0755);
    sift_test_rmtree(f->scratch);
    free(f);
    return 0;
}

/* Everything reported so far (NUL-terminated, static), then an empty log for the next step. */
static const char *take_log(fixture *f)
{
    static char buf[8192];
    ssize_t n = pread(f->logfd, buf, sizeof(buf) - 1, 0);
    assert_true(n >= 0);
    buf[n] = '\0';
    assert_int_equal(ftruncate(f->logfd, 0), 0);
    assert_int_equal(lseek(f->logfd, 0, SEEK_SET), 0);
    return buf;
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, cap);
    assert_true(n >= 0);
    close(fd);
    return (size_t)n;
}

#define count_entries(dir) sift_test_count_entries(dir, NULL, "*")

static const char *sha1_of(const char *s)
{
    static char hex[41];
    sift_sha1_hex((const uint8_t *)s, strlen(s), hex);
    return hex;
}

static void sha1_known_vectors(void **state)
{
    (void)state;
    assert_string_equal(sha1_of(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert_string_equal(sha1_of("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_string_equal(sha1_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    static uint8_t million[1000000];
    memset(million, 'a', sizeof(million));
    char hex[41];
    sift_sha1_hex(million, sizeof(million), hex);
    assert_string_equal(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

static void crash_artifact_named_by_sha1(void **state)
{
    fixture *f = *state;
    char path[PATH_MAX], want[PATH_MAX * 2], buf[16];
    assert_int_equal(sift_artifact_write(f->prefix, NULL, "crash", (const uint8_t *)"FUZ", 3, path,
                                         sizeof(path)),
                     0);
    snprintf(want, sizeof(want), "%scrash-0eb8e4ed029b774d80f2b66408203801cb982a60", f->prefix);
    assert_string_equal(path, want);
    assert_int_equal(read_file(path, buf, sizeof(buf)), 3);
    assert_memory_equal(buf, "FUZ", 3);
    assert_int_equal(count_entries(f->dir), 1); /* no temporary left behind */
    snprintf(want, sizeof(want), "artifact_prefix='%s'; Test unit written to %s\nBase64: RlVa\n",
             f->prefix, path);
    assert_string_equal(take_log(f), want);
}

static void prefix_may_end_in_a_file_name(void **state)
{
    fixture *f = *state;
    char prefix[PATH_MAX], path[PATH_MAX], want[PATH_MAX];
    snprintf(prefix, sizeof(prefix), "%sfuzz-", f->prefix);
    assert_int_equal(
        sift_artifact_write(prefix, NULL, "timeout", (const uint8_t *)"hi", 2, path, sizeof(path)),
        0);
    snprintf(want, sizeof(want), "%stimeout-%s", prefix, sha1_of("hi"));
    assert_string_equal(path, want);
    assert_non_null(strstr(take_log(f), "artifact_prefix='"));
}

static void every_kind_is_named_like_libfuzzer(void **state)
{
    fixture *f = *state;
    static const char *kinds[] = {"crash", "timeout", "oom", "leak", "slow-unit", "minimized-from"};
    char path[PATH_MAX], want[PATH_MAX];
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        assert_int_equal(sift_artifact_write(f->prefix, NULL, kinds[i], (const uint8_t *)"x", 1,
                                             path, sizeof(path)),
                         0);
        snprintf(want, sizeof(want), "%s%s-%s", f->prefix, kinds[i], sha1_of("x"));
        assert_string_equal(path, want);
        assert_int_equal(access(path, F_OK), 0);
    }
    assert_int_equal(count_entries(f->dir), 6);
}

static void no_prefix_means_the_working_folder(void **state)
{
    fixture *f = *state;
    char cwd[PATH_MAX], path[PATH_MAX], want[PATH_MAX * 2];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(f->dir), 0);
    int rc = sift_artifact_write(NULL, NULL, "crash", (const uint8_t *)"", 0, path, sizeof(path));
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_string_equal(path, "./crash-da39a3ee5e6b4b0d3255bfef95601890afd80709");
    snprintf(want, sizeof(want), "%scrash-da39a3ee5e6b4b0d3255bfef95601890afd80709", f->prefix);
    char buf[4];
    assert_int_equal(read_file(want, buf, sizeof(buf)), 0);
    assert_string_equal(take_log(f), "artifact_prefix='./'; Test unit written to "
                                     "./crash-da39a3ee5e6b4b0d3255bfef95601890afd80709\n"
                                     "Base64: \n");
}

static void exact_path_overrides_the_prefix(void **state)
{
    fixture *f = *state;
    char exact[PATH_MAX], path[PATH_MAX], want[PATH_MAX * 2], buf[16];
    snprintf(exact, sizeof(exact), "%sthe-crash", f->prefix);
    assert_int_equal(sift_artifact_write(f->prefix, exact, "crash", (const uint8_t *)"abc", 3, path,
                                         sizeof(path)),
                     0);
    assert_string_equal(path, exact);
    assert_int_equal(read_file(exact, buf, sizeof(buf)), 3);
    assert_int_equal(count_entries(f->dir), 1);
    snprintf(want, sizeof(want), "artifact_prefix='%s'; Test unit written to %s\nBase64: YWJj\n",
             f->prefix, exact);
    assert_string_equal(take_log(f), want);
}

static const char *base64_line_of(fixture *f, const uint8_t *data, size_t size)
{
    assert_int_equal(sift_artifact_write(f->prefix, NULL, "crash", data, size, NULL, 0), 0);
    const char *log = take_log(f);
    const char *line = strstr(log, "Base64: ");
    return line ? line + strlen("Base64: ") : NULL;
}

static void base64_padding_and_size_limit(void **state)
{
    fixture *f = *state;
    assert_string_equal(base64_line_of(f, (const uint8_t *)"a", 1), "YQ==\n");
    assert_string_equal(base64_line_of(f, (const uint8_t *)"ab", 2), "YWI=\n");
    assert_string_equal(base64_line_of(f, (const uint8_t *)"\xff\xfe\x00", 3), "//4A\n");
    static uint8_t big[1025];
    memset(big, 0xfb, sizeof(big));
    const char *line = base64_line_of(f, big, 1024);
    assert_non_null(line);
    assert_int_equal(strlen(line), 1368 + 1);
    assert_memory_equal(line, "+/v7", 4);
    assert_null(base64_line_of(f, big, 1025));
}

static void atomic_write_replaces_the_whole_file(void **state)
{
    fixture *f = *state;
    char path[PATH_MAX], buf[64];
    snprintf(path, sizeof(path), "%sunit", f->prefix);
    assert_int_equal(sift_write_atomic(path, (const uint8_t *)"a long first version", 20), 0);
    assert_int_equal(sift_write_atomic(path, (const uint8_t *)"second", 6), 0);
    assert_int_equal(read_file(path, buf, sizeof(buf)), 6);
    assert_memory_equal(buf, "second", 6);
    assert_int_equal(count_entries(f->dir), 1);

    /* Without a folder part the temporary goes into the working folder too. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(f->dir), 0);
    int rc = sift_write_atomic("unit", (const uint8_t *)"third", 5);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(read_file(path, buf, sizeof(buf)), 5);
    assert_int_equal(count_entries(f->dir), 1);
}

static void atomic_write_into_a_missing_folder(void **state)
{
    fixture *f = *state;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%snope/unit", f->prefix);
    errno = 0;
    assert_int_equal(sift_write_atomic(path, (const uint8_t *)"x", 1), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(count_entries(f->dir), 0);
}

static void missing_folder_is_reported_with_the_path(void **state)
{
    fixture *f = *state;
    char prefix[PATH_MAX], path[PATH_MAX], want[PATH_MAX * 2];
    snprintf(prefix, sizeof(prefix), "%snope/", f->prefix);
    errno = 0;
    assert_int_equal(
        sift_artifact_write(prefix, NULL, "crash", (const uint8_t *)"FUZ", 3, path, sizeof(path)),
        -1);
    assert_int_equal(errno, ENOENT);
    snprintf(want, sizeof(want),
             "ERROR: cannot write artifact %scrash-%s: No such file or directory\nBase64: RlVa\n",
             prefix, sha1_of("FUZ"));
    assert_string_equal(take_log(f), want);
}

static void folder_that_is_a_file_is_reported(void **state)
{
    fixture *f = *state;
    char file[PATH_MAX], prefix[PATH_MAX + 1], want[PATH_MAX * 2];
    snprintf(file, sizeof(file), "%sfile", f->prefix);
    assert_int_equal(sift_write_atomic(file, (const uint8_t *)"x", 1), 0);
    snprintf(prefix, sizeof(prefix), "%s/", file);
    assert_int_equal(sift_artifact_write(prefix, NULL, "oom", (const uint8_t *)"x", 1, NULL, 0),
                     -1);
    assert_int_equal(errno, ENOTDIR);
    snprintf(want, sizeof(want), "ERROR: cannot write artifact %soom-%s: Not a directory\n", prefix,
             sha1_of("x"));
    assert_memory_equal(take_log(f), want, strlen(want));
}

/* Runs FN(F) in a child process, as the user 65534 (nobody) when ROOT (permission bits do not
 * bind root) and with files limited to FSIZE bytes when not 0 (SIGXFSZ ignored, so that a
 * write past it fails with EFBIG, as one on a full disk with ENOSPC). Returns FN's result,
 * or 125 when the child could not become that user. */
static int in_child(fixture *f, bool root, rlim_t fsize, int (*fn)(fixture *))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (root && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
            _exit(125);
        if (fsize) {
            struct rlimit r = {fsize, fsize};
            if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR || setrlimit(RLIMIT_FSIZE, &r) != 0) _exit(124);
        }
        _exit(fn(f));
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* 0 when the write failed with EACCES. */
static int write_x_denied(fixture *f)
{
    int rc = sift_artifact_write(f->prefix, NULL, "crash", (const uint8_t *)"x", 1, NULL, 0);
    return rc == -1 && errno == EACCES ? 0 : 1;
}

static void read_only_folder_is_reported(void **state)
{
    fixture *f = *state;
    char want[PATH_MAX * 2];
    assert_int_equal(chmod(f->dir, 0555), 0);
    int rc = in_child(f, geteuid() == 0, 0, write_x_denied);
    if (rc == 125) skip(); /* root here cannot become nobody */
    assert_int_equal(rc, 0);
    assert_int_equal(count_entries(f->dir), 0);
    snprintf(want, sizeof(want), "ERROR: cannot write artifact %scrash-%s: Permission denied\n",
             f->prefix, sha1_of("x"));
    assert_memory_equal(take_log(f), want, strlen(want));
}

/* 0 when a write of 1100 bytes over the file "unit", and an artifact of them, failed with
 * EFBIG. */
static int write_1100_too_large(fixture *f)
{
    static uint8_t big[1100];
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%sunit", f->prefix);
    if (sift_write_atomic(path, big, sizeof(big)) != -1 || errno != EFBIG) return 1;
    if (sift_artifact_write(f->prefix, NULL, "crash", big, sizeof(big), NULL, 0) != -1 ||
        errno != EFBIG)
        return 1;
    return 0;
}

/* A full disk cuts the temporary short: the write fails, the temporary goes, and the file it
 * was to replace stays whole. */
static void full_disk_leaves_the_old_file_and_no_temporary(void **state)
{
    fixture *f = *state;
    char path[PATH_MAX], buf[64], want[PATH_MAX * 2];
    snprintf(path, sizeof(path), "%sunit", f->prefix);
    assert_int_equal(sift_write_atomic(path, (const uint8_t *)"old", 3), 0);
    assert_int_equal(in_child(f, false, 512, write_1100_too_large), 0);
    assert_int_equal(read_file(path, buf, sizeof(buf)), 3);
    assert_memory_equal(buf, "old", 3);
    assert_int_equal(count_entries(f->dir), 1);
    static const uint8_t zeros[1100];
    char sha[41];
    sift_sha1_hex(zeros, sizeof(zeros), sha);
    snprintf(want, sizeof(want), "ERROR: cannot write artifact %scrash-%s: File too large\n",
             f->prefix, sha);
    assert_string_equal(take_log(f), want); /* no Base64 line: 1100 bytes is too long for one */
}

static void overlong_path_is_refused(void **state)
{
    fixture *f = *state;
    static char prefix[PATH_MAX + 16];
    memset(prefix, 'p', sizeof(prefix) - 1);
    char path[PATH_MAX];
    assert_int_equal(
        sift_artifact_write(prefix, NULL, "crash", (const uint8_t *)"x", 1, path, sizeof(path)),
        -1);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_string_equal(path, "");
    assert_non_null(strstr(take_log(f), ": path too long\n"));
}

static void units_print_as_hex_and_escaped_ascii(void **state)
{
    fixture *f = *state;
    sift_report_unit((const uint8_t *)"F\0\\\"\xff~", 6);
    assert_string_equal(take_log(f), "0x46,0x0,0x5c,0x22,0xff,0x7e,\nF\\000\\\\\\\"\\377~\n");
    static uint8_t big[257];
    sift_report_unit(big, sizeof(big));
    assert_string_equal(take_log(f), "");
}

static void long_output_is_flushed_in_pieces(void **state)
{
    fixture *f = *state;
    sift_report o;
    o.len = 0;
    for (int i = 0; i < 500; i++)
        sift_report_str(&o, "abcd");
    sift_report_u64(&o, 18446744073709551615u);
    sift_report_u64(&o, 0);
    sift_report_flush(&o);
    const char *log = take_log(f);
    assert_int_equal(strlen(log), 2000 + 20 + 1);
    assert_string_equal(log + 2000, "184467440737095516150");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha1_known_vectors),
        cmocka_unit_test_setup_teardown(crash_artifact_named_by_sha1, setup, teardown),
        cmocka_unit_test_setup_teardown(prefix_may_end_in_a_file_name, setup, teardown),
        cmocka_unit_test_setup_teardown(every_kind_is_named_like_libfuzzer, setup, teardown),
        cmocka_unit_test_setup_teardown(no_prefix_means_the_working_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(exact_path_overrides_the_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(base64_padding_and_size_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(atomic_write_replaces_the_whole_file, setup, teardown),
        cmocka_unit_test_setup_teardown(atomic_write_into_a_missing_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_folder_is_reported_with_the_path, setup, teardown),
        cmocka_unit_test_setup_teardown(folder_that_is_a_file_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(read_only_folder_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(full_disk_leaves_the_old_file_and_no_temporary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(overlong_path_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(units_print_as_hex_and_escaped_ascii, setup, teardown),
        cmocka_unit_test_setup_teardown(long_output_is_flushed_in_pieces, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
