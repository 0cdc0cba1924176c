/* scripts/check-layers on small trees of its own: what it lets through, and that an include up
 * a layer, across to a part it may not see, and a file loop in the link graph (of the engine's
 * libraries, the runtime's, or the Erlang NIF's) each fail it. */
#include "support/harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define CHECK_LAYERS SIFT_SOURCE_DIR "/scripts/check-layers"

/* A tree that keeps the rules: each layer includes the one below, the runtime its coverage
 * map, sift-cc the contract, and two objects of one library, one calling the other. */
#define CLEAN_TREE                                                                                 \
    "mkdir -p src/engine/modes src/engine/campaign src/engine/core src/engine/progress "           \
    "src/engine/contain src/engine/base src/rt/cov src/abi src/cc src/cli include/sift obj && "    \
    "echo '#include \"engine/modes/m.h\"' >src/engine/main.c && "                                  \
    "echo '#include \"engine/core/c.h\"' >src/engine/modes/m.h && "                                \
    "echo '#include \"rt/rt.h\"' >src/engine/campaign/s.c && "                                     \
    "echo '#include \"engine/progress/p.h\"' >src/engine/core/c.h && "                             \
    "echo '#include \"engine/contain/f.h\"' >src/engine/progress/p.h && "                          \
    "echo '#include \"engine/base/b.h\"' >src/engine/contain/f.h && "                              \
    "echo '#include \"sift/covmap.h\"' >src/engine/base/b.h && "                                   \
    "echo '#include \"rt/cov/scan.h\"' >src/rt/rt.h && touch src/rt/cov/scan.h && "                \
    "echo '#include \"abi/values_abi.h\"' >src/cc/x.c && touch src/abi/values_abi.h && "           \
    "echo '#include \"engine/base/b.h\"' >src/cli/show.c && touch include/sift/covmap.h && "       \
    "echo 'int y(void); int x(void) { return y(); }' >>src/cc/x.c && "                             \
    "echo 'int y(void) { return 1; }' >src/cc/y.c && "                                             \
    "mkdir -p obj/src/cc && clang -c src/cc/x.c -Isrc -o obj/src/cc/x.o && "                       \
    "clang -c src/cc/y.c -o obj/src/cc/y.o"

typedef struct {
    char *dir;
    sift_test_proc p;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || !(f->dir = sift_test_scratch())) {
        free(f);
        return -1;
    }
    *state = f;
    return sift_test_sh(&f->p, f->dir, "%s", CLEAN_TREE) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sift_test_rmtree(f->dir);
    free(f);
    return 0;
}

static int check(fixture *f)
{
    return sift_test_sh(&f->p, f->dir, "'%s' . obj", CHECK_LAYERS);
}

/* Adds LINE to FILE of the clean tree; the checker must then fail, saying SAYS. */
static void expect_refused(fixture *f, const char *file, const char *line, const char *says)
{
    assert_int_equal(sift_test_sh(&f->p, f->dir, "echo '%s' >>%s", line, file), 0);
    assert_int_equal(check(f), 1);
    if (!strstr(f->p.out, says)) fail_msg("expected \"%s\" in:\n%s", says, f->p.out);
}

static void clean_tree_passes(void **state)
{
    fixture *f = *state;
    assert_int_equal(check(f), 0);
    assert_string_equal(f->p.out, "");
}

static void include_up_a_layer(void **state)
{
    expect_refused(*state, "src/engine/base/b.h", "#include \"engine/core/c.h\"",
                   "src/engine/base/b.h: #include \"engine/core/c.h\": points up a layer");
}

static void modes_and_campaign(void **state)
{
    fixture *f = *state;
    assert_int_equal(sift_test_sh(&f->p, f->dir, "touch src/engine/campaign/s.h"), 0);
    expect_refused(f, "src/engine/modes/m.h", "#include \"engine/campaign/s.h\"",
                   "modes and campaign never include each other");
}

static void runtime_outside_core(void **state)
{
    expect_refused(*state, "src/engine/progress/p.h", "#include \"rt/rt.h\"",
                   "src/engine/progress/p.h: #include \"rt/rt.h\": only core/, campaign/ and "
                   "modes/trace may include the runtime");
}

static void cc_includes_runtime(void **state)
{
    expect_refused(*state, "src/cc/y.c", "#include \"rt/rt.h\"",
                   "src/cc/y.c: #include \"rt/rt.h\": cc may not include rt");
}

static void file_loop(void **state)
{
    fixture *f = *state;
    assert_int_equal(sift_test_sh(&f->p, f->dir,
                                  "echo 'int x(void); int y(void) { return x(); }' >src/cc/y.c && "
                                  "clang -c src/cc/y.c -o obj/src/cc/y.o"),
                     0);
    assert_int_equal(check(f), 1);
    const char *says = "loop: cc/x.o needs y from cc/y.o, which needs x from it";
    if (!strstr(f->p.out, says)) fail_msg("expected \"%s\" in:\n%s", says, f->p.out);
}

/* Two files of one library under FOLDER (of the tree and of obj/) that call each other. */
static void expect_loop(fixture *f, const char *folder, const char *says)
{
    assert_int_equal(sift_test_sh(&f->p, f->dir,
                                  "mkdir -p %s obj/%s && "
                                  "echo 'int b(void); int a(void) { return b(); }' >%s/a.c && "
                                  "echo 'int a(void); int b(void) { return a(); }' >%s/b.c && "
                                  "clang -c %s/a.c -o obj/%s/a.o && clang -c %s/b.c -o obj/%s/b.o",
                                  folder, folder, folder, folder, folder, folder, folder, folder),
                     0);
    assert_int_equal(check(f), 1);
    if (!strstr(f->p.out, says)) fail_msg("expected \"%s\" in:\n%s", says, f->p.out);
}

static void runtime_loop(void **state)
{
    expect_loop(*state, "src/rt", "loop: rt/a.o needs b from rt/b.o, which needs a from it");
}

static void nif_loop(void **state)
{
    expect_loop(*state, "bindings/erlang/c_src",
                "loop: bindings/erlang/c_src/a.o needs b from bindings/erlang/c_src/b.o, which "
                "needs a from it");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(clean_tree_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(include_up_a_layer, setup, teardown),
        cmocka_unit_test_setup_teardown(modes_and_campaign, setup, teardown),
        cmocka_unit_test_setup_teardown(runtime_outside_core, setup, teardown),
        cmocka_unit_test_setup_teardown(cc_includes_runtime, setup, teardown),
        cmocka_unit_test_setup_teardown(file_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(runtime_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(nif_loop, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
