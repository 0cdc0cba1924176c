/* Tests of containment: each fault happens in a child process, which must leave the input as
 * an artifact, libFuzzer's lines on stderr and libFuzzer's exit code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/files.h"
#include "engine/contain/fault.h"
#include "engine/contain/report.h"
#include "support/harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Under ASan its own handlers report SIGSEGV, SIGBUS and SIGFPE, exit with its exit code, and
 * the artifact comes from the death callback. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WITH_ASAN 1
#endif
#endif
#ifndef WITH_ASAN
#define WITH_ASAN 0
#endif
#define ASAN_EXIT 1

typedef struct {
    char *scratch;         /* holds the two below */
    char dir[PATH_MAX];    /* where artifacts go */
    char prefix[PATH_MAX]; /* dir with the trailing slash */
    char log[PATH_MAX];
    char *out; /* the child's stderr */
    pid_t pid;
    int status;
    sift_options opts;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    sift_test_scratch_sub(&f->scratch, "a", f->dir, f->prefix);
    snprintf(f->log, sizeof(f->log), "%s/log", f->scratch);
    f->opts.error_exitcode = 77;
    f->opts.timeout_exitcode = 70;
    f->opts.detect_leaks = 1;
    f->opts.artifact_prefix = f->prefix;
    *state = f;
    return 0;
}

static void clear_artifacts(fixture *f)
{
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof(path), "%s/%s", f->dir, e->d_name);
            unlink(path);
        }
    closedir(d);
}

static int teardown(void **state)
{
    fixture *f = *state;
    sift_test_rmtree(f->scratch);
    free(f->out);
    free(f);
    return 0;
}

/* cmocka puts its own crash handlers in place while a test runs; a child gets back those the
 * process started with (a sanitizer's, or none), as a fuzzer's process has them. */
static const int deadly[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
static struct sigaction original[sizeof(deadly) / sizeof(deadly[0])];

/* The child's state: the handlers keep a pointer to it for the life of the process. */
static sift_fault child;

static void start(sift_options *opts, const char *input)
{
    child.opts = opts;
    if (sift_fault_install(&child) < 0) _exit(98);
    if (input) sift_fault_begin(&child, (const uint8_t *)input, strlen(input));
}

/* Runs BODY in a child whose stderr goes to the log; keeps its status and output. */
static void run(fixture *f, void (*body)(sift_options *))
{
    fflush(NULL);
    f->pid = fork();
    assert_true(f->pid >= 0);
    if (f->pid == 0) {
        int fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(97);
        close(fd);
        for (size_t i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++)
            sigaction(deadly[i], &original[i], NULL);
        body(&f->opts);
        _exit(96);
    }
    /* A child that hangs is a failure, not a suite that never ends. */
    struct timespec tick = {0, 10L * 1000 * 1000};
    pid_t done = 0;
    for (int i = 0; i < 6000 && !(done = waitpid(f->pid, &f->status, WNOHANG)); i++)
        nanosleep(&tick, NULL);
    if (!done) {
        kill(f->pid, SIGKILL);
        waitpid(f->pid, &f->status, 0);
        fail_msg("the child still ran after 60 s");
    }
    assert_int_equal(done, f->pid);
    FILE *in = fopen(f->log, "rb");
    assert_non_null(in);
    free(f->out);
    f->out = calloc(1, 1 << 20);
    size_t n = fread(f->out, 1, (1 << 20) - 1, in);
    f->out[n] = '\0';
    (void)fclose(in);
}

static void expect_exit(fixture *f, int code)
{
    if (!WIFEXITED(f->status) || WEXITSTATUS(f->status) != code)
        fprintf(stderr, "child status %#x, output:\n%s\n", f->status, f->out);
    assert_true(WIFEXITED(f->status));
    assert_int_equal(WEXITSTATUS(f->status), code);
}

static void expect_line(fixture *f, const char *text)
{
    if (!strstr(f->out, text)) fprintf(stderr, "missing \"%s\" in:\n%s\n", text, f->out);
    assert_non_null(strstr(f->out, text));
}

/* A line that starts with the child's "==PID== ". */
static void expect_pid_line(fixture *f, const char *text)
{
    char line[256];
    snprintf(line, sizeof(line), "==%d== %s", (int)f->pid, text);
    expect_line(f, line);
}

#define count_artifacts(f) sift_test_count_entries((f)->dir, NULL, "*")

/* The artifact PATH holds INPUT, is the only one, and the child said where it wrote it. */
/* PATH holds INPUT and is the only artifact. */
static void expect_saved(fixture *f, const char *path, const char *input)
{
    char buf[64];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    assert_int_equal(n, strlen(input));
    assert_memory_equal(buf, input, strlen(input));
    assert_int_equal(count_artifacts(f), 1);
}

static void expect_file(fixture *f, const char *path, const char *input)
{
    char line[PATH_MAX * 2];
    snprintf(line, sizeof(line), "artifact_prefix='%s'; Test unit written to %s\n", f->prefix,
             path);
    expect_line(f, line);
    expect_saved(f, path, input);
}

static void artifact_path(const fixture *f, const char *kind, const char *input,
                          char path[PATH_MAX])
{
    char sha[41];
    sift_sha1_hex((const uint8_t *)input, strlen(input), sha);
    snprintf(path, PATH_MAX, "%s%s-%s", f->prefix, kind, sha);
}

static void expect_artifact(fixture *f, const char *kind, const char *input)
{
    char path[PATH_MAX];
    artifact_path(f, kind, input, path);
    expect_file(f, path, input);
}

static void expect_deadly_signal_report(fixture *f)
{
    expect_pid_line(f, "ERROR: libFuzzer: deadly signal\n");
    expect_line(f, "\nSUMMARY: libFuzzer: deadly signal\n");
}

static void segv_body(sift_options *o)
{
    start(o, "FUZ");
    /* The fault under test. */
    /* cppcheck-suppress nullPointer */
    *(volatile int *volatile)NULL = 1; /* NOLINT(clang-analyzer-core.NullDereference) */
}

static void segv_writes_the_crash_artifact(void **state)
{
    fixture *f = *state;
    run(f, segv_body);
    if (WITH_ASAN) {
        expect_exit(f, ASAN_EXIT);
        expect_line(f, "ERROR: AddressSanitizer: SEGV");
    } else {
        expect_exit(f, 77);
        expect_deadly_signal_report(f);
    }
    expect_line(f, "0x46,0x55,0x5a,\nFUZ\n");
    expect_line(f, "\nBase64: RlVa\n");
    expect_artifact(f, "crash", "FUZ");
}

static void abort_body(sift_options *o)
{
    start(o, "ab");
    abort();
}

static void abort_exits_with_the_error_exitcode(void **state)
{
    fixture *f = *state;
    f->opts.error_exitcode = 33;
    run(f, abort_body);
    expect_exit(f, 33);
    expect_deadly_signal_report(f);
    expect_artifact(f, "crash", "ab");
}

static void bus_body(sift_options *o)
{
    start(o, "bus");
    (void)raise(SIGBUS);
}

static void sigbus_writes_the_crash_artifact(void **state)
{
    fixture *f = *state;
    run(f, bus_body);
    if (WITH_ASAN) {
        expect_exit(f, ASAN_EXIT);
    } else {
        expect_exit(f, 77);
        expect_deadly_signal_report(f);
    }
    expect_artifact(f, "crash", "bus");
}

static void ill_body(sift_options *o)
{
    start(o, "ill");
    (void)raise(SIGILL);
}

static void exact_artifact_path_takes_the_crash(void **state)
{
    fixture *f = *state;
    char exact[PATH_MAX];
    snprintf(exact, sizeof(exact), "%sthe-crash", f->prefix);
    f->opts.exact_artifact_path = exact;
    run(f, ill_body);
    expect_exit(f, 77);
    expect_deadly_signal_report(f);
    expect_file(f, exact, "ill");
}

/* Frames that stay frames: the buffer is used after the call, so no tail call. */
static volatile int depth_limit = 1 << 30;

static int recurse(int depth)
{
    volatile char frame[512];
    frame[depth % 512] = (char)depth;
    if (depth >= depth_limit) return 0;
    return recurse(depth + 1) + frame[depth % 512];
}

static void overflow_body(sift_options *o)
{
    start(o, "deep");
    recurse(0);
}

static void stack_overflow_is_caught(void **state)
{
    fixture *f = *state;
    run(f, overflow_body);
    if (WITH_ASAN) {
        expect_exit(f, ASAN_EXIT);
        expect_line(f, "stack-overflow");
    } else {
        expect_exit(f, 77);
        expect_deadly_signal_report(f);
    }
    expect_artifact(f, "crash", "deep");
}

static void init_crash_body(sift_options *o)
{
    start(o, NULL);
    abort();
}

static void crash_outside_an_input_reports_without_artifact(void **state)
{
    fixture *f = *state;
    run(f, init_crash_body);
    expect_exit(f, 77);
    expect_deadly_signal_report(f);
    assert_null(strstr(f->out, "Test unit written"));
    assert_int_equal(count_artifacts(f), 0);
}

static void spin_forever(void)
{
    for (volatile unsigned long n = 0;; n++)
        ;
}

static void hang_body(sift_options *o)
{
    /* The input starts before the alarm does, so the first tick already finds it over time. */
    child.opts = o;
    sift_fault_begin(&child, (const uint8_t *)"hi", 2);
    start(o, NULL);
    spin_forever();
}

static void timeout_writes_the_timeout_artifact(void **state)
{
    fixture *f = *state;
    f->opts.timeout = 1;
    run(f, hang_body);
    expect_exit(f, 70);
    expect_line(f, "ALARM: working on the last Unit for ");
    expect_line(f, " seconds\n       and the timeout value is 1 (use -timeout=N to change)\n");
    expect_pid_line(f, "ERROR: libFuzzer: timeout after ");
    expect_line(f, "\nSUMMARY: libFuzzer: timeout\n");
    assert_true(strstr(f->out, "Test unit written") < strstr(f->out, "ERROR: libFuzzer: timeout"));
    expect_artifact(f, "timeout", "hi");
}

/* The report of the timeout stalls at its first line, as it does when the alarm lands while
 * the target holds malloc's lock: here its descriptor is a full pipe that nobody reads. */
static void stalled_report_body(sift_options *o)
{
    int fds[2];
    if (pipe(fds) != 0 || fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) _exit(95);
    static const uint8_t block[4096];
    while (write(fds[1], block, sizeof block) > 0)
        ;
    if (fcntl(fds[1], F_SETFL, 0) != 0) _exit(95);
    sift_report_set_fd(fds[1]);
    hang_body(o);
}

static void a_stalled_report_still_ends_with_the_input_saved(void **state)
{
    fixture *f = *state;
    f->opts.timeout = 1;
    run(f, stalled_report_body);
    expect_exit(f, 70);
    char path[PATH_MAX];
    artifact_path(f, "timeout", "hi", path);
    expect_saved(f, path, "hi");
}

static void finished_input_body(sift_options *o)
{
    start(o, "quick");
    sift_fault_end(&child);
    struct timespec left = {1, 300L * 1000 * 1000};
    while (nanosleep(&left, &left) < 0)
        ;
    _exit(0);
}

static void alarm_ignores_a_finished_input(void **state)
{
    fixture *f = *state;
    f->opts.timeout = 1;
    run(f, finished_input_body);
    expect_exit(f, 0);
    assert_string_equal(f->out, "");
    assert_int_equal(count_artifacts(f), 0);
}

static void grow_body(sift_options *o)
{
    start(o, "om");
    /* Small blocks, so that only the resident size, never one malloc, passes the limit. */
    static char *blocks[256];
    for (size_t i = 0; i < 256; i++) {
        blocks[i] = malloc(1 << 20);
        memset(blocks[i], 1, 1 << 20);
    }
    for (;;)
        pause();
}

static void rss_limit_writes_the_oom_artifact(void **state)
{
    fixture *f = *state;
    f->opts.rss_limit_mb = 64;
    run(f, grow_body);
    expect_exit(f, SIFT_EXIT_OOM);
    expect_pid_line(f, "ERROR: libFuzzer: out-of-memory (used: ");
    expect_line(f,
                "Mb; limit: 64Mb)\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n");
    expect_line(f, "\nSUMMARY: libFuzzer: out-of-memory\n");
    expect_artifact(f, "oom", "om");
}

static void big_malloc_body(sift_options *o)
{
    start(o, "big");
    volatile char *p = malloc(32 << 20);
    p[0] = 1;
    free((void *)p);
    _exit(0);
}

/* A sanitizer's allocator tells the engine of each malloc, and so do sift-cc's wraps of a
 * program's allocations (test_alloc); this test links the engine itself, without them, and
 * there the RSS limit remains. */
static void malloc_limit_needs_hooks(void **state)
{
    fixture *f = *state;
    f->opts.malloc_limit_mb = 16;
    run(f, big_malloc_body);
    if (!WITH_ASAN) {
        expect_exit(f, 0);
        return;
    }
    expect_exit(f, SIFT_EXIT_OOM);
    expect_pid_line(f, "ERROR: libFuzzer: out-of-memory (malloc(33554432))\n");
    expect_line(f, "\nSUMMARY: libFuzzer: out-of-memory\n");
    expect_artifact(f, "oom", "big");

    /* Without -malloc_limit_mb the RSS limit bounds single allocations. */
    clear_artifacts(f);
    f->opts.malloc_limit_mb = 0;
    f->opts.rss_limit_mb = 16;
    run(f, big_malloc_body);
    expect_exit(f, SIFT_EXIT_OOM);
    expect_artifact(f, "oom", "big");
}

static void *volatile leaked;

static __attribute__((noinline)) void leak_memory(void)
{
    leaked = malloc(64);
    leaked = NULL;
}

static void leak_body(sift_options *o)
{
    start(o, "leak");
    leak_memory();
    sift_fault_end(&child);
    if (!sift_fault_can_check_leaks(&child)) _exit(95);
    sift_fault_check_leaks(&child, (const uint8_t *)"leak", 4);
    _exit(0);
}

static void balanced_body(sift_options *o)
{
    start(o, "fine");
    free(malloc(64));
    sift_fault_end(&child);
    sift_fault_check_leaks(&child, (const uint8_t *)"fine", 4);
    _exit(0);
}

static void leaks_need_leak_sanitizer(void **state)
{
    fixture *f = *state;
    sift_fault plain = {.opts = &f->opts};
    if (!WITH_ASAN) {
        assert_false(sift_fault_can_check_leaks(&plain));
        return;
    }
    assert_true(sift_fault_can_check_leaks(&plain));
    f->opts.detect_leaks = 0;
    assert_false(sift_fault_can_check_leaks(&plain));
    f->opts.detect_leaks = 1;

    run(f, leak_body);
    expect_exit(f, 77);
    expect_line(f, "ERROR: LeakSanitizer: detected memory leaks");
    expect_line(f, "INFO: to ignore leaks on libFuzzer side use -detect_leaks=0.\n\n");
    expect_artifact(f, "leak", "leak");

    run(f, balanced_body);
    expect_exit(f, 0);
    assert_null(strstr(f->out, "LeakSanitizer"));
}

static void interrupt_body(sift_options *o)
{
    start(o, NULL);
    (void)raise(SIGINT);
    if (!child.stop_requested) _exit(5);
    (void)raise(SIGTERM);
    _exit(6);
}

static void interrupt_stops_then_exits(void **state)
{
    fixture *f = *state;
    run(f, interrupt_body);
    expect_exit(f, 0);
    char want[128];
    snprintf(want, sizeof(want),
             "INFO: signal received, trying to exit gracefully\n"
             "==%d== libFuzzer: run interrupted; exiting\n",
             (int)f->pid);
    assert_string_equal(f->out, want);
}

static void graceful_body(sift_options *o)
{
    start(o, NULL);
    (void)raise(SIGUSR1);
    if (child.stop_requested != SIFT_STOP_GRACEFUL) _exit(5);
    (void)raise(SIGUSR2);
    sift_fault_say_stop(child.stop_requested);
    /* SIGINT outranks it: its second one leaves at once. */
    (void)raise(SIGINT);
    if (child.stop_requested != SIFT_STOP_INTERRUPT) _exit(6);
    (void)raise(SIGINT);
    _exit(7);
}

/* SIGUSR1 and SIGUSR2 ask for libFuzzer's graceful exit, which a later SIGINT overrides. */
static void sigusr_asks_for_a_graceful_exit(void **state)
{
    fixture *f = *state;
    run(f, graceful_body);
    expect_exit(f, 0);
    char want[320];
    snprintf(want, sizeof(want),
             "INFO: signal received, trying to exit gracefully\n"
             "INFO: signal received, trying to exit gracefully\n"
             "==%d== INFO: libFuzzer: exiting as requested\n"
             "INFO: signal received, trying to exit gracefully\n"
             "==%d== libFuzzer: run interrupted; exiting\n",
             (int)f->pid, (int)f->pid);
    assert_string_equal(f->out, want);
}

static void exit_body(sift_options *o)
{
    start(o, "ex");
    exit(3);
}

static void exit_during_an_input_is_a_crash(void **state)
{
    fixture *f = *state;
    run(f, exit_body);
    expect_exit(f, 77);
    expect_pid_line(f, "ERROR: libFuzzer: fuzz target exited\n");
    expect_line(f, "\nSUMMARY: libFuzzer: fuzz target exited\n");
    expect_artifact(f, "crash", "ex");
}

static void twice_body(sift_options *o)
{
    start(o, NULL);
    _exit(sift_fault_install(&child) == -1 ? 0 : 5);
}

static void install_happens_once(void **state)
{
    fixture *f = *state;
    run(f, twice_body);
    expect_exit(f, 0);
    expect_line(f, "already installed");
}

static void rss_is_reported_in_mb(void **state)
{
    (void)state;
    size_t mb = sift_fault_rss_mb();
    assert_true(mb > 0 && mb < 1 << 20);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    for (size_t i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++)
        sigaction(deadly[i], NULL, &original[i]);
    const struct CMUnitTest tests[] = {
        TEST(segv_writes_the_crash_artifact),
        TEST(abort_exits_with_the_error_exitcode),
        TEST(sigbus_writes_the_crash_artifact),
        TEST(exact_artifact_path_takes_the_crash),
        TEST(stack_overflow_is_caught),
        TEST(crash_outside_an_input_reports_without_artifact),
        TEST(timeout_writes_the_timeout_artifact),
        TEST(a_stalled_report_still_ends_with_the_input_saved),
        TEST(alarm_ignores_a_finished_input),
        TEST(rss_limit_writes_the_oom_artifact),
        TEST(malloc_limit_needs_hooks),
        TEST(leaks_need_leak_sanitizer),
        TEST(interrupt_stops_then_exits),
        TEST(sigusr_asks_for_a_graceful_exit),
        TEST(exit_during_an_input_is_a_crash),
        TEST(install_happens_once),
        cmocka_unit_test(rss_is_reported_in_mb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
