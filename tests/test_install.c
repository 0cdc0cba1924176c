/* make install and uninstall: the layout, the installed sift-cc building and running a harness
 * from elsewhere, the pkg-config file, and the man page listing every flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/options.h"
#include "sift/version.h"
#include "support/harness.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;        /* scratch folder, symlinks resolved, so that paths compare as sift-cc's */
static char prefix[600]; /* installed into by the group setup */
static sift_test_proc proc;

/* make TARGET in the source tree, on the build this test belongs to. The test may itself run
 * under make check: the outer make's jobserver is not this make's. */
static int make(const char *target, const char *vars)
{
    return SIFT_TEST_SH(
        "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C '%s' %s BUILD='%s' SAN=%d %s",
        SIFT_SOURCE_DIR, target, SIFT_BUILD_DIR, SIFT_TEST_SAN[0] != '\0', vars);
}

static int install_into_prefix(void **state)
{
    char *scratch = sift_test_scratch();
    if (!scratch) return -1;
    *state = dir = realpath(scratch, NULL);
    free(scratch);
    if (!dir) return -1;
    snprintf(prefix, sizeof prefix, "%s/prefix", dir);
    char vars[700];
    snprintf(vars, sizeof vars, "PREFIX='%s'", prefix);
    if (make("install", vars) != 0) {
        fprintf(stderr, "%s%s", proc.out, proc.err);
        return -1;
    }
    return 0;
}

/* Fails unless TEXT holds FORMAT filled in with the install prefix. */
static void expect_prefix(const char *text, const char *format)
{
    char want[PATH_MAX];
    snprintf(want, sizeof want, format, prefix);
    if (!strstr(text, want)) fail_msg("expected '%s' in:\n%s", want, text);
}

static const char *const installed[] = {
    "bin/sift-cc",
    "bin/sift-instrument",
    "bin/sift",
    "lib/libsift-cov.a",
    "lib/libsift-rt.a",
    "lib/libsift-fuzzer.a",
    "lib/libsift-interpose.a",
    "include/sift/covmap.h",
    "include/sift/snapshot.h",
    "include/sift/version.h",
    "lib/pkgconfig/sift.pc",
    "share/man/man1/sift.1",
};

static void assert_installed(const char *root)
{
    char path[PATH_MAX];
    struct stat st;
    for (size_t i = 0; i < sizeof(installed) / sizeof(installed[0]); i++) {
        snprintf(path, sizeof path, "%s/%s", root, installed[i]);
        if (stat(path, &st) || !S_ISREG(st.st_mode)) fail_msg("not installed: %s", path);
    }
    snprintf(path, sizeof path, "%s/bin/sift-cc", root);
    assert_int_equal(access(path, X_OK), 0);
    char target[64];
    snprintf(path, sizeof path, "%s/bin/sift-c++", root);
    ssize_t n = readlink(path, target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_string_equal(target, "sift-cc");
}

static void layout(void **state)
{
    (void)state;
    assert_installed(prefix);
}

/* A harness that needs sift's headers too, as C and as C++. */
static const char harness[] =
    "#include <sift/version.h>\n"
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "#ifdef __cplusplus\n"
    "extern \"C\"\n"
    "#endif\n"
    "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)\n"
    "{\n"
    "    static const char v[] = SIFT_VERSION;\n"
    "    volatile int same = size == sizeof v - 1 && !memcmp(data, v, size);\n"
    "    (void)same;\n"
    "    return 0;\n"
    "}\n";

static void installed_sift_cc_builds_harnesses(void **state)
{
    (void)state;
    char *src = sift_test_write(dir, "harness.c", harness, 0644);
    assert_non_null(src);
    free(src);
    /* From a folder of its own, far from the source tree and its build. */
    assert_int_equal(
        SIFT_TEST_SH("mkdir -p work && cd work && '%s/bin/sift-cc' -g -O1 -fsanitize=fuzzer %s "
                     "../harness.c -o h && '%s/bin/sift-c++' -g -O1 -fsanitize=fuzzer %s -x "
                     "c++ ../harness.c -o hxx",
                     prefix, SIFT_TEST_SAN, prefix, SIFT_TEST_SAN),
        0);
    assert_int_equal(SIFT_TEST_SH("cd work && ./h -seed=1 -runs=2000 && ./hxx -seed=1 -runs=2000"),
                     0);
    assert_non_null(strstr(proc.err, "Done 2000 runs"));

    /* What it compiles against and links is the installed copy. */
    assert_int_equal(SIFT_TEST_SH("'%s/bin/sift-cc' -### -fsanitize=fuzzer %s harness.c -o h",
                                  prefix, SIFT_TEST_SAN),
                     0);
    expect_prefix(proc.err, "\"-idirafter\" \"%s/include\"");
    expect_prefix(proc.err, "\"%s/lib/libsift-fuzzer.a\"");
    expect_prefix(proc.err, "\"%s/lib/libsift-rt.a\"");
}

static const char cov_program[] =
    "#include <sift/snapshot.h>\n"
    "#include <stdio.h>\n"
    "int main(void)\n"
    "{\n"
    "    sift_covmap *map = sift_covmap_new();\n"
    "    sift_counters c;\n"
    "    size_t first;\n"
    "    sift_snapshot *snap;\n"
    "    sift_novelty nov;\n"
    "    if (!map || sift_covmap_alloc(map, SIFT_DOMAIN_EDGES, 64, NULL, &first) ||\n"
    "        sift_covmap_counters(map, SIFT_DOMAIN_EDGES, first, &c) ||\n"
    "        sift_snapshot_for_map(&snap, map, 1))\n"
    "        return 1;\n"
    "    sift_hit(&c, 3);\n"
    "    if (sift_snapshot_check_and_advance(snap, map, SIFT_DOMAINS_ALL, &nov, NULL)) return 1;\n"
    "    printf(\"novelty %d\\n\", (int)nov);\n"
    "    sift_snapshot_free(snap);\n"
    "    sift_covmap_free(map);\n"
    "    return 0;\n"
    "}\n";

static void pkg_config_builds_against_the_coverage_api(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs sift", prefix),
        0);
    expect_prefix(proc.out, "-I%s/include");
    expect_prefix(proc.out, "-L%s/lib -lsift-cov");
    assert_int_equal(
        SIFT_TEST_SH("PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --modversion sift", prefix), 0);
    assert_string_equal(proc.out, SIFT_VERSION "\n");

    char *src = sift_test_write(dir, "cov.c", cov_program, 0644);
    assert_non_null(src);
    free(src);
    assert_int_equal(
        SIFT_TEST_SH("export PKG_CONFIG_PATH='%s/lib/pkgconfig' && "
                     "clang %s $(pkg-config --cflags sift) cov.c $(pkg-config --libs sift) "
                     "-o cov && ./cov",
                     prefix, SIFT_TEST_SAN),
        0);
    assert_string_equal(proc.out, "novelty 2\n");
}

typedef struct {
    const char *page;
    size_t flags;
} man_check;

static void flag_documented(void *ctx, const sift_flag_doc *doc)
{
    man_check *m = ctx;
    char entry[128];
    /* roff writes the flag's dash as \- */
    snprintf(entry, sizeof entry, "\\fB\\-%s=\\fI", doc->name);
    if (!strstr(m->page, entry)) fail_msg("sift.1 does not document -%s", doc->name);
    m->flags++;
}

static void man_page_lists_every_flag(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("cat '%s/share/man/man1/sift.1'", prefix), 0);
    assert_true(strlen(proc.out) < sizeof(proc.out) - 1); /* read whole */
    assert_non_null(strstr(proc.out, ".TH SIFT 1"));
    assert_non_null(strstr(proc.out, "\"sift " SIFT_VERSION "\""));
    man_check m = {proc.out, 0};
    sift_options_foreach(flag_documented, &m);
    assert_true(m.flags > 20);
}

static void destdir_and_uninstall(void **state)
{
    (void)state;
    char vars[700], root[PATH_MAX];
    snprintf(vars, sizeof vars, "DESTDIR='%s/stage' PREFIX=/usr", dir);
    assert_int_equal(make("install", vars), 0);
    snprintf(root, sizeof root, "%s/stage/usr", dir);
    assert_installed(root);
    /* The paths inside name where the files will be, not where they were staged. */
    assert_int_equal(SIFT_TEST_SH("head -1 stage/usr/lib/pkgconfig/sift.pc"), 0);
    assert_string_equal(proc.out, "prefix=/usr\n");

    assert_int_equal(make("uninstall", vars), 0);
    assert_int_equal(SIFT_TEST_SH("find stage ! -type d"), 0);
    assert_string_equal(proc.out, "");
}

/* The install above ran make with BUILD absolute; the suite's own build ran it relative. Each
 * object's dependency rule must match both spellings, or one make never sees the headers the
 * other compiled against and leaves the object stale after a header changes. */
static void dependency_rules_match_the_build_either_way(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("cat '%s/obj/src/engine/driver.d'", SIFT_BUILD_DIR), 0);
    /* The targets, before the colon; the compiler wraps them when the paths are long. */
    char *colon = strchr(proc.out, ':');
    assert_non_null(colon);
    *colon = '\0';
    const char *object = "/obj/src/engine/driver.o";
    char spelled[PATH_MAX + 64];
    snprintf(spelled, sizeof spelled, "%s%s ", SIFT_BUILD_DIR, object);
    assert_non_null(strstr(proc.out, spelled));
    const char *build = SIFT_BUILD_DIR, *source = SIFT_SOURCE_DIR;
    size_t source_len = strlen(source);
    if (strncmp(build, source, source_len) != 0 || build[source_len] != '/') return;
    snprintf(spelled, sizeof spelled, " %s%s", build + source_len + 1, object);
    assert_non_null(strstr(proc.out, spelled));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout),
        cmocka_unit_test(installed_sift_cc_builds_harnesses),
        cmocka_unit_test(pkg_config_builds_against_the_coverage_api),
        cmocka_unit_test(man_page_lists_every_flag),
        cmocka_unit_test(destdir_and_uninstall),
        cmocka_unit_test(dependency_rules_match_the_build_either_way),
    };
    return cmocka_run_group_tests(tests, install_into_prefix, sift_test_scratch_teardown);
}
