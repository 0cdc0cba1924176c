/* sift-cc end to end: the flags it adds and passes on, what it links, clang's errors and exit
 * codes, and a harness it builds that tells new coverage from old. */
#define _GNU_SOURCE
#include "sift/version.h"
#include "support/harness.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SIFT_CC  SIFT_BUILD_DIR "/bin/sift-cc"
#define SIFT_CXX SIFT_BUILD_DIR "/bin/sift-c++"
#define FIXTURES SIFT_SOURCE_DIR "/tests/fixtures"
#define COVERAGE "-fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp,stack-depth"
#define MAX_ARGS 32
/* The fake compiler writes no files, so commands it runs take the one-step path that leaves
 * out value instrumentation (test_instrument.c covers the other). */
#define ONE_STEP "SIFT_VALUES=0"

typedef struct {
    char *dir;
    char *fake;     /* a compiler that prints its arguments, one a line */
    char *fake_env; /* SIFT_CLANG=fake */
    char *include;  /* the folder sift-cc adds with -idirafter */
    char *rt_lib, *fuzzer_lib;
    bool in_tree; /* the build folder is a folder of the source tree */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f) return -1;
    if (!(f->dir = sift_test_scratch())) {
        free(f);
        return -1;
    }
    *state = f;
    f->fake = sift_test_write(f->dir, "fake-clang",
                              "#!/bin/sh\nprintf '%s\\n' \"$@\"\nexit ${FAKE_RC:-0}\n", 0755);
    /* sift-cc names them with links resolved. */
    f->include = realpath(SIFT_SOURCE_DIR "/include", NULL);
    f->rt_lib = realpath(SIFT_BUILD_DIR "/lib/libsift-rt.a", NULL);
    f->fuzzer_lib = realpath(SIFT_BUILD_DIR "/lib/libsift-fuzzer.a", NULL);
    char *parent = realpath(SIFT_BUILD_DIR "/..", NULL);
    f->in_tree = parent && f->include && !strncmp(f->include, parent, strlen(parent)) &&
                 !strcmp(f->include + strlen(parent), "/include");
    free(parent);
    if (!f->fake || !f->include || !f->rt_lib || !f->fuzzer_lib ||
        asprintf(&f->fake_env, "SIFT_CLANG=%s", f->fake) < 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f) return 0;
    free(f->fake);
    free(f->fake_env);
    free(f->include);
    free(f->rt_lib);
    free(f->fuzzer_lib);
    sift_test_rmtree(f->dir);
    free(f);
    return 0;
}

/* Runs sift-cc with ARGS (NULL-terminated) on the fake compiler: P receives the arguments it
 * was given, one a line. */
static void fake_run(fixture *f, sift_test_proc *p, const char *const *args)
{
    const char *argv[MAX_ARGS] = {SIFT_CC};
    for (size_t i = 0; args[i]; i++)
        argv[i + 1] = args[i];
    const char *env[] = {f->fake_env, ONE_STEP, NULL};
    sift_test_run(p, argv, env);
    if (p->status != 0) fail_msg("sift-cc exited with %d: %s", p->status, p->err);
}

static bool has_line(const char *out, const char *line)
{
    size_t len = strlen(line);
    for (const char *p = out; (p = strstr(p, line)); p++)
        if ((p == out || p[-1] == '\n') && p[len] == '\n') return true;
    return false;
}

static bool has_text(const char *out, const char *text)
{
    return strstr(out, text) != NULL;
}

/* Whether the clang driver got TEXT (in a line of OUT) other than in the front end's
 * "-Xclang -fsanitize=fuzzer-no-link" that sift-cc passes on every compile. */
static bool driver_has(const char *out, const char *text)
{
    static const char front_end[] = "-Xclang\n-fsanitize=fuzzer-no-link\n";
    for (const char *p = out; (p = strstr(p, text)); p++) {
        const char *line = p;
        while (line > out && line[-1] != '\n')
            line--;
        size_t before = sizeof "-Xclang\n" - 1;
        if (line - out < (ptrdiff_t)before ||
            strncmp(line - before, front_end, sizeof front_end - 1) != 0)
            return true;
    }
    return false;
}

static void test_version(void **state)
{
    (void)state;
    sift_test_proc p;
    const char *env[] = {"SIFT_CLANG=clang", "SIFT_CLANGXX=clang++", NULL};
    sift_test_run(&p, (const char *[]){SIFT_CC, "--version", NULL}, env);
    assert_int_equal(p.status, 0);
    assert_true(!strncmp(p.out, "sift-cc " SIFT_VERSION " (clang: clang)\n",
                         strlen("sift-cc " SIFT_VERSION " (clang: clang)\n")));
    assert_true(has_text(p.out, "clang version"));

    sift_test_run(&p, (const char *[]){SIFT_CXX, "--version", NULL}, env);
    assert_int_equal(p.status, 0);
    assert_true(!strncmp(p.out, "sift-c++ " SIFT_VERSION " (clang: clang++)\n",
                         strlen("sift-c++ " SIFT_VERSION " (clang: clang++)\n")));
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* Everything the user gives reaches clang unchanged and in order, after sift's flags. */
static void test_passthrough(void **state)
{
    fixture *f = *state;
    sift_test_proc p;
    fake_run(f, &p,
             (const char *[]){"-c", "a.c", "-o", "a.o", "-DNAME=a b", "-O2", "-Wall", "-###", "-x",
                              "c", "-I", "inc", NULL});
    assert_true(!strncmp(p.out, COVERAGE "\n", strlen(COVERAGE "\n")));
    assert_true(
        ends_with(p.out, "\n-c\na.c\n-o\na.o\n-DNAME=a b\n-O2\n-Wall\n-###\n-x\nc\n-I\ninc\n"));
    /* In a build folder of the source tree, the sift headers come last in the search. */
    char *include;
    assert_true(asprintf(&include, "\n-idirafter\n%s\n", f->include) > 0);
    assert_int_equal(has_text(p.out, include), f->in_tree);
    free(include);
}

static void expect_libs(fixture *f, const char *const *args, bool rt, bool fuzzer)
{
    sift_test_proc p;
    fake_run(f, &p, args);
    if (has_line(p.out, f->rt_lib) != rt || has_line(p.out, f->fuzzer_lib) != fuzzer)
        fail_msg("sift-cc %s ...: expected%s%s, clang got:\n%s", args[0], rt ? " rt" : "",
                 fuzzer ? " fuzzer" : "", p.out);
    assert_int_equal(has_text(p.out, "\n-x\nnone\n-Wl,--whole-archive\n"), rt);
    assert_int_equal(has_line(p.out, "-lpthread"), rt);
    assert_false(driver_has(p.out, "fuzzer\n"));
    assert_false(driver_has(p.out, "fuzzer-no-link"));
}

static void test_links(void **state)
{
    fixture *f = *state;
    /* An executable gets the runtime; with -fsanitize=fuzzer the engine too. */
    expect_libs(f, (const char *[]){"a.c", "-o", "a", NULL}, true, false);
    expect_libs(f, (const char *[]){"-MD", "a.o", "b.o", NULL}, true, false);
    expect_libs(f, (const char *[]){"-x", "c", "-", NULL}, true, false);
    expect_libs(f, (const char *[]){"-x", "c++", "a.c", NULL}, true, false);
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer", "a.c", NULL}, true, true);
    expect_libs(f, (const char *[]){"-fsanitize=address,fuzzer", "a.c", NULL}, true, true);
    /* Nothing of sift's is linked when nothing links, or into shared objects. */
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer-no-link", "-shared", "a.c", NULL}, false,
                false);
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer", "-c", "a.c", NULL}, false, false);
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer", "-shared", "-fPIC", "a.c", NULL}, false,
                false);
    /* Instrumented objects call the runtime, so whatever links them gets it, as clang links a
     * sanitizer runtime with weak callbacks under -fsanitize=fuzzer-no-link. */
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer-no-link", "a.c", NULL}, true, false);
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer-no-link", "-c", "a.c", NULL}, false, false);
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer,fuzzer-no-link", "a.c", NULL}, true, true);
    expect_libs(f, (const char *[]){"-fsanitize=fuzzer", "-fno-sanitize=fuzzer", "a.c", NULL}, true,
                false);
    static const char *const stops[] = {"-c", "-S", "-E", "-M", "-MM", "-fsyntax-only"};
    for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
        expect_libs(f, (const char *[]){stops[i], "a.c", NULL}, false, false);
    /* No input: clang only prints something. A flag's value is no input. */
    expect_libs(f, (const char *[]){"-dumpversion", NULL}, false, false);
    expect_libs(f, (const char *[]){"-o", "out", "-MF", "deps", NULL}, false, false);
}

static void test_response_file(void **state)
{
    fixture *f = *state;
    char *compile = sift_test_write(f->dir, "compile.rsp", "-c 'my file.c' -o \"x.o\"\n", 0644);
    char *san = sift_test_write(f->dir, "san.rsp", "-c a.c -fsanitize=fuzzer\n", 0644);
    assert_non_null(compile);
    assert_non_null(san);
    char *arg;
    assert_true(asprintf(&arg, "@%s", compile) > 0);
    expect_libs(f, (const char *[]){arg, NULL}, false, false);
    free(arg);

    /* sift-cc cannot take fuzzer out of a file clang reads itself. */
    assert_true(asprintf(&arg, "@%s", san) > 0);
    sift_test_proc p;
    const char *env[] = {f->fake_env, NULL};
    sift_test_run(&p, (const char *[]){SIFT_CC, arg, NULL}, env);
    assert_int_equal(p.status, 1);
    assert_true(has_text(p.err, "response file"));
    free(arg);
    free(compile);
    free(san);
}

static void test_sanitizer_list(void **state)
{
    fixture *f = *state;
    sift_test_proc p;
    fake_run(f, &p, (const char *[]){"-fsanitize=address,fuzzer-no-link", "-c", "a.c", NULL});
    assert_true(has_line(p.out, "-fsanitize=address"));
    fake_run(f, &p, (const char *[]){"-fsanitize=fuzzer,undefined,address", "a.c", NULL});
    assert_true(has_line(p.out, "-fsanitize=undefined,address"));
    fake_run(f, &p, (const char *[]){"-fsanitize=fuzzer", "-c", "a.c", NULL});
    assert_false(driver_has(p.out, "-fsanitize="));
}

/* memcmp and friends are interposed only where no sanitizer intercepts them already. */
static void test_interposers(void **state)
{
    fixture *f = *state;
    sift_test_proc p;
    static const struct {
        const char *flags[4];
        bool interposed;
    } cases[] = {
        {{"a.c", NULL}, true},
        {{"-fsanitize=fuzzer,undefined", "a.c", NULL}, true},
        {{"-fsanitize=fuzzer,address", "a.c", NULL}, false},
        {{"-fsanitize=thread", "a.c", NULL}, false},
        {{"-fsanitize=address", "-fno-sanitize=address", "a.c", NULL}, true},
        {{"-fsanitize=memory", "-fno-sanitize=all", "a.c", NULL}, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fake_run(f, &p, cases[i].flags);
        assert_int_equal(has_text(p.out, "libsift-interpose.a\n"), cases[i].interposed);
        assert_true(has_line(p.out, "-fno-builtin-memcmp"));
    }
}

static void test_user_coverage(void **state)
{
    fixture *f = *state;
    sift_test_proc p;
    /* The user's counter kind replaces sift's; features only add to sift's. */
    fake_run(f, &p, (const char *[]){"-fsanitize-coverage=trace-pc-guard", "-c", "a.c", NULL});
    assert_false(has_line(p.out, COVERAGE));
    assert_true(has_line(p.out, "-fsanitize-coverage=trace-pc-guard"));
    fake_run(f, &p, (const char *[]){"-fsanitize-coverage=trace-div", "-c", "a.c", NULL});
    assert_true(has_line(p.out, COVERAGE));
    assert_true(has_line(p.out, "-fsanitize-coverage=trace-div"));

    const char *env[] = {f->fake_env, NULL};
    sift_test_run(
        &p, (const char *[]){SIFT_CC, "-fsanitize-coverage=inline-bool-flag", "a.c", NULL}, env);
    assert_int_equal(p.status, 1);
    assert_string_equal(p.out, "");
    assert_non_null(strstr(p.err, "inline-bool-flag"));
    assert_ptr_equal(strchr(p.err, '\n'), p.err + strlen(p.err) - 1);
}

static void test_cxx_driver(void **state)
{
    fixture *f = *state;
    char *env_cxx;
    assert_true(asprintf(&env_cxx, "SIFT_CLANGXX=%s", f->fake) > 0);
    const char *env[] = {"SIFT_CLANG=/nonexistent/clang", env_cxx, ONE_STEP, NULL};
    sift_test_proc p;
    sift_test_run(&p, (const char *[]){SIFT_CXX, "-c", "a.cc", NULL}, env);
    assert_int_equal(p.status, 0);
    assert_true(has_line(p.out, "a.cc"));
    free(env_cxx);
}

static void test_exit_codes(void **state)
{
    fixture *f = *state;
    sift_test_proc p;
    const char *fake_rc[] = {f->fake_env, "FAKE_RC=42", NULL};
    sift_test_run(&p, (const char *[]){SIFT_CC, "a.c", NULL}, fake_rc);
    assert_int_equal(p.status, 42);

    const char *missing[] = {"SIFT_CLANG=/nonexistent/clang", NULL};
    sift_test_run(&p, (const char *[]){SIFT_CC, "-c", "a.c", NULL}, missing);
    assert_int_equal(p.status, 127);
    assert_true(has_text(p.err, "sift-cc: cannot run /nonexistent/clang"));

    /* A compile error reads and ends exactly as clang's own. */
    char *bad = sift_test_write(f->dir, "bad.c", "int main(void) { return nope; }\n", 0644);
    char *obj;
    assert_non_null(bad);
    assert_true(asprintf(&obj, "%s/bad.o", f->dir) > 0);
    sift_test_proc direct;
    const char *clang[] = {"SIFT_CLANG=clang", NULL};
    sift_test_run(&direct, (const char *[]){"clang", "-c", bad, "-o", obj, NULL}, NULL);
    /* SIFT_CC is one path joined from two literals, not a missing comma. */
    /* NOLINTNEXTLINE(bugprone-suspicious-missing-comma) */
    sift_test_run(&p, (const char *[]){SIFT_CC, "-c", bad, "-o", obj, NULL}, clang);
    assert_int_not_equal(direct.status, 0);
    assert_int_equal(p.status, direct.status);
    assert_true(has_text(p.err, "error: use of undeclared identifier 'nope'"));
    free(bad);
    free(obj);
}

/* Builds DIR/NAME with sift-cc on the real clang and ARGS (NULL-terminated, at most 16);
 * returns its path (to free), failing the test when the build fails. */
static char *build_real(const fixture *f, const char *name, const char *const *args)
{
    char *out;
    assert_true(asprintf(&out, "%s/%s", f->dir, name) > 0);
    const char *argv[20] = {SIFT_CC};
    size_t n = 1;
    for (; *args && n < 17; args++)
        argv[n++] = *args;
    argv[n++] = "-o";
    argv[n++] = out;
    const char *env[] = {"SIFT_CLANG=clang", NULL};
    sift_test_proc p;
    sift_test_run(&p, argv, env);
    if (p.status != 0) fail_msg("building %s failed (%d): %s", name, p.status, p.err);
    return out;
}

/* A harness built by sift-cc with the runtime: A is new, A again is not, B's branch is. */
static void test_harness(void **state)
{
    char *harness =
        build_real(*state, "harness",
                   (const char *[]){SIFT_TEST_SAN, "-I" SIFT_SOURCE_DIR "/src",
                                    "-I" SIFT_SOURCE_DIR "/include", FIXTURES "/harness.c",
                                    FIXTURES "/branches.c", NULL});
    sift_test_proc p;
    /* Never driven by an engine, the program runs as it would uninstrumented. */
    sift_test_run(&p, (const char *[]){harness, NULL}, NULL);
    assert_int_equal(p.status, 0);
    sift_test_run(&p, (const char *[]){harness, "A", "A", "B", "xyz", "Cat", NULL}, NULL);
    assert_int_equal(p.status, 0);
    assert_string_equal(p.out, "new\nnone\nnew\nnew\nnone\n");
    free(harness);
}

/* The harness in an archive named before the engine, as OSS-Fuzz builds pcre2's: the link
 * takes it out of the archive, as clang -fsanitize=fuzzer's does. */
static void test_harness_in_an_archive(void **state)
{
    fixture *f = *state;
    char *obj, *lib;
    assert_true(asprintf(&obj, "%s/empty.o", f->dir) > 0);
    assert_true(asprintf(&lib, "%s/libharness.a", f->dir) > 0);
    const char *env[] = {"SIFT_CLANG=clang", NULL};
    sift_test_proc p;
    sift_test_run(&p,
                  (const char *[]){SIFT_CC, SIFT_TEST_SAN, "-fsanitize=fuzzer-no-link", "-c",
                                   FIXTURES "/empty.c", "-o", obj, NULL},
                  env);
    assert_int_equal(p.status, 0);
    sift_test_run(&p, (const char *[]){"ar", "rcs", lib, obj, NULL}, NULL);
    assert_int_equal(p.status, 0);
    char *harness =
        build_real(f, "archived", (const char *[]){SIFT_TEST_SAN, "-fsanitize=fuzzer", lib, NULL});
    /* The empty input is the fixture's bug: the engine ran the archive's harness. */
    char *prefix;
    assert_true(asprintf(&prefix, "-artifact_prefix=%s/", f->dir) > 0);
    sift_test_run(&p, (const char *[]){harness, "-runs=10", prefix, NULL}, NULL);
    assert_int_not_equal(p.status, 0);
    assert_non_null(strstr(p.err, "SEGV"));
    free(prefix);
    free(harness);
    free(lib);
    free(obj);
}

/* Sanitizers the user names stay on: the object holds both ASan's checks and sift's counters. */
/* The size of OBJ's section of edge counters, by binutils' size. */
static long counters_of(const char *obj)
{
    sift_test_proc p;
    sift_test_run(&p, (const char *[]){"size", "-A", obj, NULL}, NULL);
    assert_int_equal(p.status, 0);
    const char *line = strstr(p.out, "__sancov_cntrs");
    assert_non_null(line);
    return strtol(line + strlen("__sancov_cntrs"), NULL, 10);
}

/* sift-cc's optimiser keeps the branches that clang's -fsanitize=fuzzer-no-link keeps (its
 * optforfuzzing attribute), so that a sift build has libFuzzer's edges: one counter per branch
 * of the fixture, where a plain coverage build turns two of them into selects. */
static void test_edges_as_libfuzzer(void **state)
{
    fixture *f = *state;
    const char *source = FIXTURES "/branches.c";
    char *sift = build_real(f, "edges-sift.o", (const char *[]){"-O2", "-c", source, NULL});
    char *clang;
    assert_true(asprintf(&clang, "%s/edges-clang.o", f->dir) > 0);
    sift_test_proc p;
    sift_test_run(&p,
                  (const char *[]){"clang", "-O2", "-fsanitize=fuzzer-no-link", "-c", source, "-o",
                                   clang, NULL},
                  NULL);
    assert_int_equal(p.status, 0);
    assert_int_equal(counters_of(sift), counters_of(clang));
    assert_int_equal(counters_of(sift), 5);
    free(sift);
    free(clang);
}

static void test_address_kept(void **state)
{
    char *obj = build_real(
        *state, "asan.o",
        (const char *[]){"-fsanitize=address,fuzzer-no-link", "-c", FIXTURES "/branches.c", NULL});
    FILE *in = fopen(obj, "rb");
    assert_non_null(in);
    static char bytes[1 << 16];
    size_t n = fread(bytes, 1, sizeof(bytes), in);
    (void)fclose(in);
    assert_non_null(memmem(bytes, n, "__asan_", 7));
    assert_non_null(memmem(bytes, n, "__sanitizer_cov_8bit_counters_init", 34));
    free(obj);
}

/* A configure's first check: a bare main built with CFLAGS that hold fuzzer-no-link links and
 * runs, with and without a sanitizer, C and C++ (with the sanitizers the runtime was built
 * with, which SIFT_TEST_SAN names). */
static void test_fuzzer_no_link_executables(void **state)
{
    fixture *f = *state;
    char *c = sift_test_write(f->dir, "conftest.c", "int main(void) { return 0; }\n", 0644);
    char *cc = sift_test_write(f->dir, "conftest.cc", "int main() { return 0; }\n", 0644);
    char *exe;
    assert_true(c && cc && asprintf(&exe, "%s/conftest", f->dir) > 0);
    static const char *const flags[] = {"-fsanitize=fuzzer-no-link",
                                        "-fsanitize=address,fuzzer-no-link"};
    const char *env[] = {"SIFT_CLANG=clang", "SIFT_CLANGXX=clang++", NULL};
    for (size_t i = 0; i < 2 * sizeof(flags) / sizeof(flags[0]); i++) {
        bool cxx = i % 2;
        sift_test_proc p;
        sift_test_run(&p,
                      (const char *[]){cxx ? SIFT_CXX : SIFT_CC, "-O1", "-g", SIFT_TEST_SAN,
                                       flags[i / 2], cxx ? cc : c, "-o", exe, NULL},
                      env);
        if (p.status != 0)
            fail_msg("%s %s failed (%d): %s", cxx ? "sift-c++" : "sift-cc", flags[i / 2], p.status,
                     p.err);
        sift_test_run(&p, (const char *[]){exe, NULL}, NULL);
        if (p.status != 0) fail_msg("%s: conftest exited %d: %s", flags[i / 2], p.status, p.err);
    }
    free(c);
    free(cc);
    free(exe);
}

/* OSS-Fuzz's flags for an ASan build (infra/base-images/base-builder). */
#define OSS_FUZZ_ENV                                                                               \
    "CC=" SIFT_CC " CXX=" SIFT_CXX " LIB_FUZZING_ENGINE=-fsanitize=fuzzer "                        \
    "CFLAGS='-O1 -fno-omit-frame-pointer -gline-tables-only "                                      \
    "-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address "                               \
    "-fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link' "

/* The project's tool runs as a plain program, and its fuzzer fuzzes. */
static void expect_project_built(sift_test_proc *p, const char *dir, const char *how)
{
    if (sift_test_sh(p, dir, "./tool PJx") != 0 || strcmp(p->out, "tool: 120\n") != 0)
        fail_msg("%s: the tool failed (%d): %s%s", how, p->status, p->out, p->err);
    if (sift_test_sh(p, dir, "mkdir -p corpus && ./fuzz -runs=200 corpus") != 0 ||
        !has_text(p->err, "Done 200 runs"))
        fail_msg("%s: the fuzzer failed (%d): %s", how, p->status, p->err);
}

/* Builds the project in F's folder Name with Script (given FIXTURES for its %s) and fuzzes what
 * it built; What names the build step in a failure. */
static void build_project(fixture *f, const char *name, const char *what, const char *script)
{
    sift_test_proc p;
    if (sift_test_sh(&p, f->dir, script, FIXTURES) != 0)
        fail_msg("%s failed (%d): %s%s", what, p.status, p.out, p.err);
    char *dir;
    assert_true(asprintf(&dir, "%s/%s", f->dir, name) > 0);
    expect_project_built(&p, dir, name);
    free(dir);
}

static void test_autotools_project(void **state)
{
    build_project(*state, "autotools", "configure or make",
                  "mkdir autotools && cd autotools && " OSS_FUZZ_ENV
                  "%s/project/configure && make");
}

static void test_cmake_project(void **state)
{
    build_project(*state, "cmake", "cmake",
                  OSS_FUZZ_ENV "cmake -S %s/project -B cmake >/dev/null && "
                               "cmake --build cmake >/dev/null");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_passthrough),
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_response_file),
        cmocka_unit_test(test_sanitizer_list),
        cmocka_unit_test(test_user_coverage),
        cmocka_unit_test(test_cxx_driver),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_harness),
        cmocka_unit_test(test_harness_in_an_archive),
        cmocka_unit_test(test_address_kept),
        cmocka_unit_test(test_edges_as_libfuzzer),
        cmocka_unit_test(test_interposers),
        cmocka_unit_test(test_fuzzer_no_link_executables),
        cmocka_unit_test(test_autotools_project),
        cmocka_unit_test(test_cmake_project),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
