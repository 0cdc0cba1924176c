/* The live status view: its rendering, and real harnesses run under a pseudo-terminal (forkpty),
 * one process and -workers, next to the libFuzzer lines they print everywhere else. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/progress/view.h"
#include "support/harness.h"

#include <errno.h>
#include <pty.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECOND  1000000000ull
#define OUT_CAP (4u << 20)

static char *dir;
static sift_test_proc proc;
static char *tty; /* what the last run_tty saw */

static int build(void **state)
{
    *state = dir = sift_test_scratch();
    tty = malloc(OUT_CAP);
    if (!tty || sift_test_build(dir, "w", "tests/fixtures/workers.c", "") ||
        sift_test_build(dir, "calc", "examples/calc.c", ""))
        return -1;
    return 0;
}

static int cleanup(void **state)
{
    free(tty);
    return sift_test_scratch_teardown(state);
}

/* Runs the shell command CMD in the scratch folder on a new 120 x 30 pseudo-terminal, with
 * TERM set to TERM_VALUE (NULL: unset); what the terminal received goes into tty. Returns the
 * exit status. */
static int run_tty(const char *term_value, const char *cmd)
{
    struct winsize ws = {.ws_row = 30, .ws_col = 120};
    int master;
    fflush(NULL);
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    if (pid < 0) fail_msg("forkpty: %s", strerror(errno));
    if (pid == 0) {
        if (term_value)
            setenv("TERM", term_value, 1);
        else
            unsetenv("TERM");
        if (chdir(dir) != 0) _exit(126);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    size_t n = 0;
    char scratch[4096] = {0};
    for (;;) {
        /* Past the buffer's end the output is read and dropped: the child must not block. */
        bool room = n < OUT_CAP - 1;
        ssize_t r = read(master, room ? tty + n : scratch, room ? OUT_CAP - 1 - n : sizeof scratch);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break; /* EIO: every process holding the terminal is gone */
        if (room) n += (size_t)r;
    }
    tty[n] = '\0';
    close(master);
    int status;
    if (waitpid(pid, &status, 0) != pid) fail_msg("waitpid: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void must_have(const char *text, const char *what)
{
    if (!strstr(text, what)) fail_msg("no \"%s\" in:\n%s", what, text);
}

static void must_not_have(const char *text, const char *what)
{
    if (strstr(text, what)) fail_msg("\"%s\" in:\n%s", what, text);
}

static size_t occurrences(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* The last occurrence of WHAT in TEXT. */
static const char *last(const char *text, const char *what)
{
    const char *found = NULL;
    for (const char *p = text; (p = strstr(p, what)); p++)
        found = p;
    return found;
}

/* --- Rendering --- */

static sift_progress sample(void)
{
    return (sift_progress){
        .target = "./out/harness",
        .run_ns = 3723 * SECOND,
        .execs = 1234567,
        .exec_per_sec = 331,
        .exec_per_sec_now = 9876,
        .cov = 412,
        .ft = 1933,
        .corpus = 87,
        .favored = 23,
        .corpus_bytes = 12345,
        .crashes = 2,
        .timeouts = 1,
        .ooms = 0,
        .found_any = true,
        .since_new_ns = 192 * SECOND,
    };
}

static void renders_every_field(void **state)
{
    (void)state;
    sift_progress st = sample();
    char out[4096];
    assert_int_equal(sift_view_render(&st, 0, 0, out, sizeof out), 3);
    assert_string_equal(out,
                        "sift harness  run time 1:02:03  execs 1,234,567  exec/s 9,876 (avg 331)\n"
                        "coverage 412 edges  features 1,933  corpus 87 (favored 23, 12345b)\n"
                        "crashes 2  timeouts 1  ooms 0  last new coverage 3m12s ago\n");
    st.found_any = false;
    st.done = true;
    st.corpus_bytes = 3u << 20;
    assert_int_equal(sift_view_render(&st, 0, 0, out, sizeof out), 3);
    assert_string_equal(out,
                        "sift harness (done)  run time 1:02:03  execs 1,234,567  exec/s 331 avg\n"
                        "coverage 412 edges  features 1,933  corpus 87 (favored 23, 3072Kb)\n"
                        "crashes 2  timeouts 1  ooms 0  last new coverage none yet\n");
}

static void renders_workers_and_fits_the_terminal(void **state)
{
    (void)state;
    sift_progress_worker w[5] = {
        {.pid = 101, .starts = 1, .exec_per_sec = 2468},
        {.pid = 102, .starts = 3, .exec_per_sec = 2470},
        {.pid = 103, .starts = 1, .stalled_ns = 12 * SECOND},
        {.pid = 0, .starts = 2, .finished = true},
        {.pid = 0, .starts = 4},
    };
    sift_progress st = sample();
    st.nworkers = 5;
    st.workers = w;
    char out[4096];
    assert_int_equal(sift_view_render(&st, 0, 0, out, sizeof out), 9);
    const char *workers = strstr(out, "workers 5  alive 3  stalled 1  restarts 6\n");
    assert_non_null(workers);
    assert_string_equal(strchr(workers, '\n') + 1,
                        "  0   pid 101      exec/s 2,468     alive\n"
                        "  1   pid 102      exec/s 2,470     alive, restarted 2x\n"
                        "  2   pid 103      exec/s 0         stalled 12s\n"
                        "  3   pid -        exec/s 0         done, restarted 1x\n"
                        "  4   pid -        exec/s 0         down, restarted 3x\n");
    /* The final view: averages over the run. */
    w[0].exec_per_sec_avg = 1234;
    st.done = true;
    sift_view_render(&st, 0, 0, out, sizeof out);
    assert_non_null(strstr(out, "  0   pid 101      exec/s 1,234     alive\n"));
    st.done = false;
    /* 7 lines of room: two workers and a line for the rest. */
    assert_int_equal(sift_view_render(&st, 0, 7, out, sizeof out), 7);
    assert_non_null(strstr(out, "  1   pid 102"));
    assert_null(strstr(out, "  2   pid 103"));
    assert_non_null(strstr(out, "\n  ... 3 more workers\n"));
    /* Lines are cut to the width less one column, so that none wraps. */
    assert_int_equal(sift_view_render(&st, 30, 0, out, sizeof out), 9);
    for (const char *p = out; *p; p = strchr(p, '\n') + 1)
        assert_true(strcspn(p, "\n") <= 29);
    assert_true(strncmp(out, "sift harness  run time 1:02:0\n", 30) == 0);
    /* Control characters of a target's name never reach the terminal. */
    st.target = "a\033[2Jb";
    sift_view_render(&st, 0, 0, out, sizeof out);
    assert_true(strncmp(out, "sift a?[2Jb  run", 16) == 0);
    /* A buffer too small gets whole lines only. */
    assert_int_equal(sift_view_render(&st, 0, 0, out, 100), 1);
    assert_int_equal(out[strlen(out) - 1], '\n');
}

/* --- On a terminal --- */

/* What a status line of libFuzzer's looks like, with the supervisor's tail. */
static void check_status_lines(const char *log, size_t *count)
{
    regex_t re;
    assert_int_equal(
        regcomp(&re,
                "^#[0-9]+\t(INITED|NEW   |REDUCE|pulse |DONE  ) cov: [0-9]+ ft: [0-9]+ "
                "corp: [0-9]+/[0-9]+(b|Kb|Mb)( lim: [0-9]+)? exec/s: [0-9]+ "
                "rss: [0-9]+Mb( workers: [0-9]+)?( L: [0-9]+(/[0-9]+ MS: [0-9]+ .*)?)?$",
                REG_EXTENDED | REG_NOSUB),
        0);
    *count = 0;
    for (const char *p = log; *p;) {
        size_t len = strcspn(p, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (line[0] == '#' && line[1] != '#') { /* not the recommended dictionary's banner */
            if (regexec(&re, line, 0, NULL, 0) != 0) fail_msg("not a status line: %s", line);
            (*count)++;
        }
        p += len + (p[len] == '\n');
    }
    regfree(&re);
}

static void one_process_draws_the_view_in_place(void **state)
{
    (void)state;
    assert_int_equal(run_tty("xterm", "mkdir -p c1 && ./w -seed=1 -max_total_time=3 c1"), 0);
    must_have(tty, "INFO: Seed: 1");
    static const char *const fields[] = {"sift w  run time 0:00:0",
                                         "  execs ",
                                         "  exec/s ",
                                         " (avg ",
                                         "coverage ",
                                         " edges  features ",
                                         "  corpus ",
                                         " (favored ",
                                         "crashes 0  timeouts 0  ooms 0  last new coverage ",
                                         " ago\033[K",
                                         "sift w (done)  run time 0:00:03"};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        must_have(tty, fields[i]);
    /* Redrawn in place: the cursor goes back up the view's three lines, about once a second. */
    assert_true(occurrences(tty, "\r\033[3A") >= 2);
    /* No libFuzzer line, and the final view stays, "Done" below it. */
    must_not_have(tty, "INITED");
    must_not_have(tty, "\tNEW ");
    must_not_have(tty, "pulse");
    must_not_have(tty, "\tDONE ");
    const char *final = last(tty, "sift w (done)");
    must_have(final, "last new coverage ");
    must_have(final, "\033[JDone ");
    assert_int_equal(occurrences(final, "\033[3A"), 0);
    must_have(final, " second(s)\r\n");
}

static void workers_get_a_line_each(void **state)
{
    (void)state;
    assert_int_equal(
        run_tty("xterm", "mkdir -p c2 && ./w -workers=2 -seed=1 -max_total_time=3 -out=o2 c2"), 0);
    must_have(tty, "workers 2  alive 2  stalled 0  restarts 0\033[K");
    must_have(tty, "  0   pid ");
    must_have(tty, "  1   pid ");
    must_have(tty, " alive\033[K");
    assert_true(occurrences(tty, "\r\033[6A") >= 2); /* four lines and two workers */
    must_not_have(tty, "INITED");
    must_not_have(tty, "\tNEW ");
    const char *final = last(tty, "sift w (done)");
    assert_non_null(final);
    /* Each slot's average over the run, the workers gone. */
    must_have(final, "  0   pid -        exec/s ");
    must_have(final, " done\033[K");
    must_not_have(final, "exec/s 0  ");
    must_have(final, "\033[JDone ");
}

/* A worker's crash report and the CRASH line appear above the view, which is drawn again
 * below them; with -ignore_crashes=1 the campaign goes on, and the view shows the restarts. */
static void events_print_above_the_view(void **state)
{
    (void)state;
    int rc = run_tty("xterm", "mkdir -p c3 && ./calc -workers=2 -seed=1 -max_total_time=3 "
                              "-ignore_crashes=1 c3");
    assert_int_equal(rc, 77);
    const char *crash = strstr(tty, "CRASH  worker ");
    assert_non_null(crash);
    /* The view, when it was drawn before the crash came (a slow start may crash first), was
     * erased for it (up and clear to the end of the screen); it comes back below. */
    const char *start = crash;
    while (start > tty && start[-1] != '#')
        start--;
    const char *view = "sift calc  run time ";
    if (memmem(tty, (size_t)(start - tty), view, strlen(view))) {
        const char *erase = start - 4;
        assert_true(erase > tty && !strncmp(erase, "\033[J", 3));
    }
    must_have(crash, "\nsift calc  run time ");
    must_have(tty, "Test unit written to ");
    const char *final = last(tty, "sift calc (done)");
    assert_non_null(final);
    assert_null(strstr(final, "crashes 0  "));
    must_have(final, " restarted ");
}

static void lines_when_asked_or_on_a_dumb_terminal(void **state)
{
    (void)state;
    static const struct {
        const char *term, *flags;
    } runs[] = {{"xterm", "-status=lines"}, {"dumb", ""}, {NULL, ""}, {"xterm", "-verbosity=0"}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "mkdir -p c4 && ./w -seed=1 -runs=20000 %s c4", runs[i].flags);
        assert_int_equal(run_tty(runs[i].term, cmd), 0);
        must_not_have(tty, "\033[");
        must_not_have(tty, "run time");
        if (!strstr(runs[i].flags, "verbosity")) must_have(tty, "\tINITED cov: ");
        must_have(tty, "\tDONE   cov: ");
    }
}

/* Where stderr is no terminal, the lines are libFuzzer's, as before; -status=tty forces the
 * view even there. */
static void no_terminal_keeps_the_lines(void **state)
{
    (void)state;
    size_t n;
    assert_int_equal(
        SIFT_TEST_SH("mkdir -p c5 && TERM=xterm ./w -seed=1 -runs=100000 c5 2>log && cat log"), 0);
    must_not_have(proc.out, "\033");
    must_not_have(proc.out, "run time");
    check_status_lines(proc.out, &n);
    assert_true(n >= 3);
    must_have(proc.out, "\tINITED cov: ");
    must_have(proc.out, "\tDONE   cov: ");
    must_have(proc.out, "\nDone 100000 runs in ");
    assert_int_equal(
        SIFT_TEST_SH("mkdir -p c6 && TERM=xterm ./w -workers=2 -seed=1 -runs=100000 c6 2>log "
                     "&& cat log"),
        0);
    must_not_have(proc.out, "\033");
    check_status_lines(proc.out, &n);
    must_have(proc.out, "\tINITED cov: ");
    must_have(proc.out, " workers: 2\n");
    must_have(proc.out, "\tDONE   cov: ");

    assert_int_equal(SIFT_TEST_SH("./w -status=tty -seed=1 -runs=20000 c5 2>log && cat log"), 0);
    must_have(proc.out, "sift w (done)  run time ");
    must_have(proc.out, "\033[J");
    must_not_have(proc.out, "\tDONE ");
    assert_int_equal(SIFT_TEST_SH("./w -status=bogus c5"), 1);
    assert_string_equal(proc.err, "sift: -status=bogus: expected auto|tty|lines\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(renders_every_field),
        cmocka_unit_test(renders_workers_and_fits_the_terminal),
        cmocka_unit_test(one_process_draws_the_view_in_place),
        cmocka_unit_test(workers_get_a_line_each),
        cmocka_unit_test(events_print_above_the_view),
        cmocka_unit_test(lines_when_asked_or_on_a_dumb_terminal),
        cmocka_unit_test(no_terminal_keeps_the_lines),
    };
    return cmocka_run_group_tests(tests, build, cleanup);
}
