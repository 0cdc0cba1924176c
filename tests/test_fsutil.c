/* Tests of corpus reading: listings and bounded reads of good and bad paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/sift-fsutil-XXXXXX");
    assert_non_null(mkdtemp(root));
    char path[256];
    snprintf(path, sizeof path, "%s/sub", root);
    mkdir(path, 0755);
    put("a", "aaaa");
    put("sub/b", "bb");
    put("empty", "");
    put(".a.tmp.123.0", "partial"); /* a temporary of an atomic write, cut short */
    put(".state", "x");
    snprintf(path, sizeof path, "%s/sub/loop", root);
    assert_int_equal(symlink("..", path), 0); /* a folder link back up: a loop */
    snprintf(path, sizeof path, "%s/dangling", root);
    assert_int_equal(symlink("/nonexistent/sift", path), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static void lists_files_recursively_once(void **state)
{
    (void)state;
    sift_pathlist l = {0};
    char err[256];
    assert_int_equal(sift_fs_list(&l, root, err, sizeof err), 0);
    /* a, empty and sub/b; the loop is entered once at most, the dangling link and hidden
     * files skipped. */
    size_t a = 0, b = 0, empty = 0;
    for (size_t i = 0; i < l.count; i++) {
        const char *base = strrchr(l.paths[i], '/') + 1;
        a += !strcmp(base, "a");
        b += !strcmp(base, "b");
        empty += !strcmp(base, "empty");
    }
    assert_int_equal(a, 1);
    assert_int_equal(b, 1);
    assert_int_equal(empty, 1);
    assert_int_equal(l.count, 3);
    sift_pathlist_free(&l);
}

static void bad_folders_name_the_path(void **state)
{
    (void)state;
    sift_pathlist l = {0};
    char err[256], path[256];
    assert_int_equal(sift_fs_list(&l, "/nonexistent/sift-corpus", err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/sift-corpus: No such file or directory");
    snprintf(path, sizeof path, "%s/a", root);
    assert_int_equal(sift_fs_list(&l, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "/a: not a folder"));
    assert_int_equal(l.count, 0);
    assert_int_equal(sift_fs_is_dir(root), 1);
    assert_int_equal(sift_fs_is_dir(path), 0);
    assert_int_equal(sift_fs_is_dir("/nonexistent/sift"), -1);
}

static void reads_are_bounded(void **state)
{
    (void)state;
    char err[256], path[256];
    uint8_t *data;
    size_t size;
    bool truncated;
    snprintf(path, sizeof path, "%s/a", root);
    assert_int_equal(sift_fs_read(path, 2, &data, &size, &truncated, err, sizeof err), 0);
    assert_int_equal(size, 2);
    assert_true(truncated);
    assert_memory_equal(data, "aa", 2);
    free(data);
    assert_int_equal(sift_fs_read(path, 100, &data, &size, &truncated, err, sizeof err), 0);
    assert_int_equal(size, 4);
    assert_false(truncated);
    free(data);
    snprintf(path, sizeof path, "%s/empty", root);
    assert_int_equal(sift_fs_read(path, 100, &data, &size, NULL, err, sizeof err), 0);
    assert_int_equal(size, 0);
    assert_non_null(data);
    free(data);
    assert_int_equal(sift_fs_read(root, 100, &data, &size, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a folder, expected a file"));
    assert_int_equal(sift_fs_read("/nonexistent/x", 100, &data, &size, NULL, err, sizeof err),
                     -1);
    assert_string_equal(err, "/nonexistent/x: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_files_recursively_once),
        cmocka_unit_test(bad_folders_name_the_path),
        cmocka_unit_test(reads_are_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
