/* -trace_malloc (engine/contain/mtrace.c): libFuzzer's MallocFreeTracer lines around each
 * input's run, each allocation and free inside it, with stacks at level 2, and a warning where
 * no sanitizer's allocator offers the hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int build_allocs(void **state)
{
    if (sift_test_scratch_setup(state)) return -1;
    return sift_test_build(*state, "allocs", "tests/fixtures/allocs.c",
                           "-fsanitize=address -pthread");
}

/* Runs ./allocs with FLAGS on one file for each of INPUTS' bytes, in order. */
static void run_inputs(sift_test_proc *p, const char *dir, const char *inputs, const char *flags)
{
    char command[512] = "";
    for (size_t i = 0; inputs[i]; i++)
        snprintf(command + strlen(command), sizeof command - strlen(command),
                 "printf %c > in%zu && ", inputs[i], i);
    snprintf(command + strlen(command), sizeof command - strlen(command), "./allocs %s", flags);
    for (size_t i = 0; inputs[i]; i++)
        snprintf(command + strlen(command), sizeof command - strlen(command), " in%zu", i);
    assert_int_equal(sift_test_sh(p, dir, "%s", command), 0);
}

/* The lines of TEXT that start with PREFIX, in order, each with its newline. */
static char *lines_starting(const char *text, const char *prefix)
{
    static char kept[4096];
    kept[0] = '\0';
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line)
        if (!strncmp(line, prefix, strlen(prefix)))
            snprintf(kept + strlen(kept), sizeof kept - strlen(kept), "%.*s",
                     (int)(strcspn(line, "\n") + 1), line);
    return kept;
}

/* One START and one STOP a run, with what it allocated and freed; each line numbered within
 * its run and naming the block. A run that allocated more than it freed runs again for the
 * leak check, traced too, as libFuzzer's does. */
static void each_run_is_framed_and_counted(void **state)
{
    char *dir = *state;
    sift_test_proc proc;
    run_inputs(&proc, dir, "3132", "-trace_malloc=1");
    assert_string_equal(lines_starting(proc.err, "MallocFreeTracer: STOP"),
                        "MallocFreeTracer: STOP 1 0 (DIFFERENT)\n"
                        "MallocFreeTracer: STOP 0 0 (same)\n"
                        "MallocFreeTracer: STOP 0 1 (DIFFERENT)\n"
                        "MallocFreeTracer: STOP 1 0 (DIFFERENT)\n"
                        "MallocFreeTracer: STOP 0 0 (same)\n"
                        "MallocFreeTracer: STOP 1 1 (same)\n");
    const char *want[] = {"MallocFreeTracer: START\nMALLOC[0] 0x",
                          " 4\nMallocFreeTracer: STOP 1 0 (DIFFERENT)\n",
                          "MallocFreeTracer: START\nFREE[0] 0x"};
    SIFT_TEST_EXPECT_ALL(proc.err, want);
    assert_null(strstr(proc.err, "    #0 "));
    run_inputs(&proc, dir, "3", "");
    assert_null(strstr(proc.err, "MallocFreeTracer"));
}

/* At level 2 each line is followed by its stack, whole, though four threads allocate at once. */
static void stacks_stay_with_their_lines(void **state)
{
    char *dir = *state;
    sift_test_proc proc;
    run_inputs(&proc, dir, "t", "-trace_malloc=2 2>trace.log");
    /* The four threads' lines, each with the two lines after it (twice when the run allocated
     * more than it freed, and ran again for the leak check). */
    assert_int_equal(SIFT_TEST_SH("grep -A2 -E '^MALLOC.* (5639|2239|7217|4738)$' trace.log"), 0);
    const char *line = proc.out;
    int records = 0;
    for (; *line; records++) {
        assert_true(!strncmp(line, "MALLOC[", 7));
        for (int frame = 0; frame < 2; frame++) {
            line = strchr(line, '\n') + 1;
            char want[16];
            snprintf(want, sizeof want, "    #%d 0x", frame);
            assert_true(!strncmp(line, want, strlen(want)));
        }
        line = strchr(line, '\n') + 1;
        if (!strncmp(line, "--\n", 3)) line += 3;
    }
    assert_true(records == 4 || records == 8);
}

static void without_a_sanitizer_it_says_so(void **state)
{
    if (SIFT_TEST_SAN[0]) skip(); /* every build of the suite has one */
    char *dir = *state;
    sift_test_proc proc;
    assert_int_equal(sift_test_build(dir, "plain", "tests/fixtures/allocs.c", "-pthread"), 0);
    assert_int_equal(SIFT_TEST_SH("printf 3 > in && ./plain -trace_malloc=1 in"), 0);
    assert_non_null(strstr(proc.err, "WARNING: -trace_malloc needs a sanitizer's allocator"));
    assert_null(strstr(proc.err, "MallocFreeTracer"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_run_is_framed_and_counted),
        cmocka_unit_test(stacks_stay_with_their_lines),
        cmocka_unit_test(without_a_sanitizer_it_says_so),
    };
    return cmocka_run_group_tests(tests, build_allocs, sift_test_scratch_teardown);
}
