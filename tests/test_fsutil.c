/* Tests of corpus reading: listings and bounded reads of good and bad paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/fsutil.h"
#include "support/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char root[160];

static void put(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    (void)state;
    char *scratch = sift_test_scratch();
    assert_non_null(scratch);
    assert_true((size_t)snprintf(root, sizeof root, "%s", scratch) < sizeof root);
    free(scratch);
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
    sift_test_rmtree(strdup(root));
    return 0;
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
    assert_int_equal(l.skipped, 2); /* the dangling link, and the link back up */
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
    assert_int_equal(sift_fs_read("/nonexistent/x", 100, &data, &size, NULL, err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/x: No such file or directory");
}

static char *at(const char *rel)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", root, rel);
    return path[k];
}

/* What a hostile corpus folder may hold: each is left out and counted, nothing blocks, and no
 * arrangement of links makes the walk endless or exponential. */
static void odd_entries_are_skipped_and_counted(void **state)
{
    (void)state;
    mkdir(at("odd"), 0755);
    put("odd/file", "x");
    assert_int_equal(mkfifo(at("odd/fifo"), 0644), 0); /* opened, it would block */
    assert_int_equal(symlink("l2", at("odd/l1")), 0);  /* a loop of links: ELOOP */
    assert_int_equal(symlink("l1", at("odd/l2")), 0);
    /* Links that double at each level: 2^24 paths to the last folder, 24 folders. */
    char rel[256];
    for (int i = 0; i < 24; i++) {
        snprintf(rel, sizeof rel, "odd/dag/L%02d", i);
        if (i == 0) mkdir(at("odd/dag"), 0755);
        assert_int_equal(mkdir(at(rel), 0755), 0);
        snprintf(rel, sizeof rel, "odd/dag/L%02d/f", i);
        put(rel, "f");
        for (int k = 0; i < 23 && k < 2; k++) {
            char target[32];
            snprintf(target, sizeof target, "../L%02d", i + 1);
            snprintf(rel, sizeof rel, "odd/dag/L%02d/%c", i, "xy"[k]);
            assert_int_equal(symlink(target, at(rel)), 0);
        }
    }
    /* Nested deeper than a listing goes. */
    size_t n = strlen("odd/deep");
    strcpy(rel, "odd/deep");
    for (int i = 0; i < 40; i++) {
        assert_int_equal(mkdir(at(rel), 0755), 0);
        n += (size_t)snprintf(rel + n, sizeof rel - n, "/d");
    }
    put(rel + 0, "bottom");

    sift_pathlist l = {0};
    char err[256];
    time_t t0 = time(NULL);
    assert_int_equal(sift_fs_list(&l, at("odd"), err, sizeof err), 0);
    assert_true(time(NULL) - t0 < 10);
    /* file and the 24 f: each folder of the DAG was entered once. */
    assert_int_equal(l.count, 25);
    /* fifo, l1, l2, the 46 links into folders listed already, and the folder too deep. */
    assert_int_equal(l.skipped, 50);
    assert_non_null(strstr(l.first_skip, at("odd/")));
    sift_pathlist_free(&l);

    /* Read directly, a FIFO is refused at once, not waited on. */
    uint8_t *data;
    size_t size;
    assert_int_equal(sift_fs_read(at("odd/fifo"), 100, &data, &size, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/odd/fifo: not a regular file"));
    assert_int_equal(sift_fs_read(at("odd/l1"), 100, &data, &size, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/odd/l1: Too many levels of symbolic links"));
}

/* FN's result, run where permission bits bind: here for a user, in a child process that
 * becomes the user 65534 (nobody) for root; the test is skipped when root cannot. */
static int unprivileged(int (*fn)(void))
{
    if (geteuid() != 0) return fn();
    chmod(root, 0755); /* for nobody to reach */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(125);
        _exit(fn());
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 125) skip(); /* no CAP_SETUID */
    return WEXITSTATUS(status);
}

/* 0 when the listing of "closed" skips and counts its unreadable subfolder. */
static int list_closed(void)
{
    sift_pathlist l = {0};
    char err[256];
    int rc = sift_fs_list(&l, at("closed"), err, sizeof err) != 0      ? 1
             : l.count != 1 || l.skipped != 1                          ? 2
             : !strstr(l.first_skip, "/closed/sub: Permission denied") ? 3
                                                                       : 0;
    sift_pathlist_free(&l);
    return rc;
}

/* An unreadable subfolder is skipped and counted. */
static void unreadable_subfolder_is_counted(void **state)
{
    (void)state;
    mkdir(at("closed"), 0755);
    mkdir(at("closed/sub"), 0755);
    put("closed/sub/f", "x");
    put("closed/g", "y");
    assert_int_equal(chmod(at("closed/sub"), 0), 0);
    int rc = unprivileged(list_closed);
    chmod(at("closed/sub"), 0755);
    assert_int_equal(rc, 0);
}

/* 0 when the folder "ro" is found not writable. */
static int check_ro(void)
{
    char err[512];
    return sift_fs_check_writable(at("ro"), err, sizeof err) == -1 && errno == EACCES &&
                   strstr(err, "/ro: Permission denied")
               ? 0
               : 1;
}

/* A 100 MB file (sparse) costs what the caller allows, not 100 MB. */
static void huge_files_are_read_up_to_the_limit(void **state)
{
    (void)state;
    int fd = open(at("huge"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 100 << 20), 0);
    assert_int_equal(pwrite(fd, "head", 4, 0), 4);
    close(fd);
    uint8_t *data;
    size_t size;
    bool truncated;
    char err[256];
    assert_int_equal(sift_fs_read(at("huge"), 4096, &data, &size, &truncated, err, sizeof err), 0);
    assert_int_equal(size, 4096);
    assert_true(truncated);
    assert_memory_equal(data, "head", 4);
    free(data);
    assert_int_equal(
        sift_fs_read(at("huge"), (size_t)-1, &data, &size, &truncated, err, sizeof err), 0);
    assert_int_equal(size, 100 << 20);
    assert_false(truncated);
    free(data);
    unlink(at("huge"));
}

static void writable_folders(void **state)
{
    (void)state;
    char err[512], out[16];
    assert_int_equal(sift_fs_check_writable(root, err, sizeof err), 0);
    assert_int_equal(sift_fs_check_writable(at("a"), err, sizeof err), -1);
    assert_int_equal(errno, ENOTDIR);
    assert_non_null(strstr(err, "/a: not a folder"));
    assert_int_equal(sift_fs_check_writable("/nonexistent/x", err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/x: No such file or directory");
    mkdir(at("ro"), 0555);
    int rc = unprivileged(check_ro);
    rmdir(at("ro"));
    assert_int_equal(rc, 0);

    assert_string_equal(sift_fs_folder_of("a/b", out, sizeof out), "a/");
    assert_string_equal(sift_fs_folder_of("a/", out, sizeof out), "a/");
    assert_string_equal(sift_fs_folder_of("a/crash-", out, sizeof out), "a/");
    assert_string_equal(sift_fs_folder_of("/x", out, sizeof out), "/");
    assert_string_equal(sift_fs_folder_of("crash-", out, sizeof out), ".");
    assert_string_equal(sift_fs_folder_of("", out, sizeof out), ".");
    assert_null(sift_fs_folder_of("0123456789abcdef/x", out, sizeof out));
}

/* A folder's lock: a second holder is refused with the first one's pid, as the kernel knows it
 * (what the file says may be anything), which a closed lock (the kernel's doing when its
 * process dies) no longer stops. */
static void a_locked_folder_names_its_owner(void **state)
{
    (void)state;
    char err[4352], want[256];
    int fd = sift_fs_lock(root, err, sizeof err);
    assert_true(fd >= 0);
    for (int planted = 0; planted < 2; planted++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            /* Written in the child: the parent's own close of the file would drop its lock. */
            if (planted) put(".lock", "\x1b]0;x\x07");
            snprintf(want, sizeof want, "%s: in use by another campaign (pid %ld)", root,
                     (long)getppid());
            _exit(sift_fs_lock(root, err, sizeof err) == -1 && strcmp(err, want) == 0 ? 0 : 1);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    close(fd);
    fd = sift_fs_lock(root, err, sizeof err);
    assert_true(fd >= 0);
    close(fd);
    unlink(at(".lock"));
}

/* A child forked by the holder (a worker, or a process the target leaves behind) does not hold
 * the lock: once the holder has let it go, another campaign takes it while the child lives.
 * With flock(2) the child's inherited descriptor kept the folder locked. */
static void a_child_of_the_holder_does_not_hold_the_lock(void **state)
{
    (void)state;
    char err[4352];
    int done[2];
    assert_int_equal(pipe(done), 0);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        int fd = sift_fs_lock(root, err, sizeof err);
        if (fd < 0) _exit(1);
        if (fork() == 0) { /* lingers with the descriptor until the test is done */
            char c;
            ssize_t got = read(done[0], &c, 1);
            _exit(got < 0);
        }
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(holder, &status, 0), holder);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int fd = sift_fs_lock(root, err, sizeof err);
    if (fd < 0) fail_msg("%s", err);
    close(fd);
    assert_int_equal(write(done[1], "x", 1), 1);
    close(done[0]);
    close(done[1]);
    unlink(at(".lock"));
}

/* A hard link planted as .lock is refused, and the file it shares an inode with is left as it
 * was: the pid used to be written through it. */
static void a_hard_link_as_lock_is_not_written_through(void **state)
{
    (void)state;
    char err[4352], want[4352];
    put("precious", "keep me\n");
    assert_int_equal(link(at("precious"), at(".lock")), 0);
    assert_int_equal(sift_fs_lock(root, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/.lock: not a regular file of its own (remove it)", root);
    assert_string_equal(err, want);
    char buf[64] = "";
    FILE *f = fopen(at("precious"), "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    (void)fclose(f);
    assert_string_equal(buf, "keep me\n");
    unlink(at(".lock"));
    unlink(at("precious"));
}

/* A folder of sift's own is listed without following a link, and must not be one itself. */
static void own_folders_follow_no_link(void **state)
{
    (void)state;
    char err[4352];
    sift_pathlist list = {0};
    mkdir(at("own"), 0755);
    put("own/a", "1");
    assert_int_equal(symlink("../sub", at("own/dirlink")), 0);
    assert_int_equal(symlink("/etc/passwd", at("own/filelink")), 0);
    assert_int_equal(symlink("own", at("ownlink")), 0);
    assert_int_equal(sift_fs_list_own(&list, at("own"), err, sizeof err), 0);
    assert_int_equal(list.count, 1);
    assert_int_equal(list.skipped, 2);
    assert_non_null(strstr(list.first_skip, "link: a symbolic link"));
    sift_pathlist_free(&list);
    assert_int_equal(sift_fs_list_own(&list, at("ownlink"), err, sizeof err), -1);
    assert_non_null(strstr(err, "ownlink: not a folder (or a symbolic link)"));
    sift_pathlist_free(&list);
    unlink(at("ownlink"));
    unlink(at("own/dirlink"));
    unlink(at("own/filelink"));
    unlink(at("own/a"));
    rmdir(at("own"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_files_recursively_once),
        cmocka_unit_test(bad_folders_name_the_path),
        cmocka_unit_test(reads_are_bounded),
        cmocka_unit_test(odd_entries_are_skipped_and_counted),
        cmocka_unit_test(unreadable_subfolder_is_counted),
        cmocka_unit_test(huge_files_are_read_up_to_the_limit),
        cmocka_unit_test(writable_folders),
        cmocka_unit_test(a_locked_folder_names_its_owner),
        cmocka_unit_test(a_child_of_the_holder_does_not_hold_the_lock),
        cmocka_unit_test(a_hard_link_as_lock_is_not_written_through),
        cmocka_unit_test(own_folders_follow_no_link),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
