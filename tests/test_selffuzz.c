/* sift fuzzing its own parsers: each harness of fuzz/ runs for $SIFT_SELFFUZZ_SECONDS (default
 * 10) through fuzz/run, and must end without a finding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/subprocess.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One test each; a harness added to fuzz/ without one here fails every_harness_is_run. */
#define HARNESSES(X) X(flags) X(dict) X(export) X(names)
#define NAME(h)      #h,
static const char *const harnesses[] = {HARNESSES(NAME)};

static sift_test_proc proc;

static void run_harness(const char *name)
{
    const char *seconds = getenv("SIFT_SELFFUZZ_SECONDS");
    char harness[512];
    snprintf(harness, sizeof harness, "%s/fuzz/bin/%s", SIFT_BUILD_DIR, name);
    const char *argv[] = {SIFT_SOURCE_DIR "/fuzz/run", SIFT_BUILD_DIR "/fuzz/out",
                          seconds && *seconds ? seconds : "10", harness, NULL};
    sift_test_run(&proc, argv, NULL);
    /* The summary line, or the report of what was found and where it was saved. */
    print_message("%s", proc.out);
    assert_int_equal(proc.status, 0);
    assert_non_null(strstr(proc.out, "no finding"));
}

#define TEST_FN(h)                                                                                 \
    static void h##_finds_nothing(void **state)                                                    \
    {                                                                                              \
        (void)state;                                                                               \
        run_harness(#h);                                                                           \
    }
HARNESSES(TEST_FN)

static void every_harness_is_run(void **state)
{
    (void)state;
    DIR *d = opendir(SIFT_SOURCE_DIR "/fuzz");
    assert_non_null(d);
    struct dirent *e;
    size_t found = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0) continue;
        size_t i = 0;
        while (i < sizeof(harnesses) / sizeof(harnesses[0]) &&
               (strlen(harnesses[i]) != len - 2 || strncmp(harnesses[i], e->d_name, len - 2) != 0))
            i++;
        if (i == sizeof(harnesses) / sizeof(harnesses[0]))
            fail_msg("fuzz/%s has no test in test_selffuzz.c", e->d_name);
        found++;
    }
    closedir(d);
    assert_int_equal(found, sizeof(harnesses) / sizeof(harnesses[0]));
}

#define TEST(h) cmocka_unit_test(h##_finds_nothing),

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_harness_is_run), HARNESSES(TEST)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
