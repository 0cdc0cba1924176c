/* sift-instrument through sift-cc: small programs built with value instrumentation at every
 * optimisation level, in C and C++, with and without debug information; the values each
 * function received and returned, as -trace records them; and the compile commands sift-cc
 * splits (several sources, compile and link in one, dependency files) or leaves to clang. */
#define _GNU_SOURCE
#include "support/harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SIFT_CC  SIFT_BUILD_DIR "/bin/sift-cc"
#define SIFT_CXX SIFT_BUILD_DIR "/bin/sift-c++"
#define FIXTURES SIFT_SOURCE_DIR "/tests/fixtures"

static char *dir; /* scratch folder: programs, the input "AB", traces */
static sift_test_proc proc;

static int setup(void **state)
{
    *state = dir = sift_test_scratch();
    char *input = dir ? sift_test_write(dir, "ab", "AB", 0644) : NULL;
    free(input);
    return input ? 0 : -1;
}

/* Builds NAME from the fixture SOURCE with sift-cc (or sift-c++) and FLAGS. */
static void build(const char *name, const char *compiler, const char *source, const char *flags)
{
    if (SIFT_TEST_SH("%s -fsift-values %s -fsanitize=fuzzer %s %s -o %s", compiler, SIFT_TEST_SAN,
                     flags, source, name) != 0)
        fail_msg("building %s with %s failed (%d): %s", name, flags, proc.status, proc.err);
}

/* The JSON-lines trace of PROGRAM running the input "AB", which must succeed. */
static char *trace(const char *program)
{
    if (SIFT_TEST_SH("./%s -trace=t.jsonl ab && cat t.jsonl", program) != 0)
        fail_msg("%s -trace failed (%d): %s", program, proc.status, proc.err);
    char *out = strdup(proc.out);
    assert_non_null(out);
    return out;
}

/* Whether TRACE has a line for the record (KIND, FN, SLOT, VALUE as JSON writes it). */
static bool has(const char *trace, const char *kind, const char *fn, const char *slot,
                const char *value)
{
    char head[256], tail[256];
    snprintf(head, sizeof head, "\"kind\":\"%s\",\"function\":\"%s\",", kind, fn);
    snprintf(tail, sizeof tail, ",\"slot\":\"%s\",\"value\":%s}\n", slot, value);
    for (const char *line = trace; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        const char *h = memmem(line, len, head, strlen(head));
        const char *t = memmem(line, len, tail, strlen(tail));
        if (h && t && t > h) return true;
        line += len;
    }
    return false;
}

static size_t count(const char *trace, const char *text)
{
    size_t n = 0;
    for (const char *p = trace; (p = strstr(p, text)); p++)
        n++;
    return n;
}

#define EXPECT(trace, kind, fn, slot, value)                                                       \
    do {                                                                                           \
        if (!has(trace, kind, fn, slot, value))                                                    \
            fail_msg("no %s record %s %s=%s in:\n%s", kind, fn, slot, value, trace);               \
    } while (0)

/* One record a trace must hold: its kind, function, slot and value as the trace writes them. */
typedef struct {
    const char *kind, *fn, *slot, *value;
} record;

static void expect_records(const char *t, const record *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        EXPECT(t, r[i].kind, r[i].fn, r[i].slot, r[i].value);
}

#define EXPECT_ALL(trace, records)                                                                 \
    expect_records(trace, records, sizeof(records) / sizeof((records)[0]))

static void check_c_values(const char *t)
{
    static const record records[] = {
        {"entry", "LLVMFuzzerTestOneInput", "data", "\"input+0\""},
        {"entry", "LLVMFuzzerTestOneInput", "size", "2"},
        {"entry", "add", "a", "65"},
        {"entry", "add", "b", "66"},
        {"return", "add", "return", "131"},
        {"return", "negate", "return", "-2"},
        {"entry", "low", "v", "4660"},
        {"return", "low", "return", "52"},
        {"entry", "is_big", "n", "5000"},
        {"return", "is_big", "return", "1"},
    };
    EXPECT_ALL(t, records);
    /* Fields of the struct an argument points to, nested ones included. */
    static const record fields[] = {
        {"entry", "conn_step", "c", "\"pointer\""},   {"field", "conn_step", "c->state", "0"},
        {"field", "conn_step", "c->port", "8080"},    {"field", "conn_step", "c->tag", "-3"},
        {"field", "conn_step", "c->hdr.len", "1000"}, {"field", "conn_step", "c->hdr.kind", "2"},
        {"field", "conn_step", "c->total", "0"},      {"return", "conn_step", "return", "2"},
    };
    EXPECT_ALL(t, fields);
    /* A null struct pointer gives no fields, and neither do unmapped or made-up ones. */
    EXPECT(t, "entry", "conn_step", "c", "\"null\"");
    EXPECT(t, "return", "conn_step", "return", "-1");
    assert_int_equal(count(t, "\"kind\":\"field\",\"function\":\"conn_step\""), 6);
    assert_int_equal(count(t, "\"kind\":\"field\",\"function\":\"is_set\""), 0);
    assert_int_equal(count(t, "\"kind\":\"entry\",\"function\":\"is_set\""), 2);
    /* Variadic: the fixed arguments. */
    EXPECT(t, "entry", "sum", "n", "3");
    EXPECT(t, "return", "sum", "return", "6");
    /* Recursion: every level enters and returns. */
    for (int n = 1; n <= 5; n++) {
        char v[4];
        snprintf(v, sizeof v, "%d", n);
        EXPECT(t, "entry", "fact", "n", v);
    }
    EXPECT(t, "return", "fact", "return", "120");
    assert_int_equal(count(t, "\"kind\":\"entry\",\"function\":\"fact\""), 5);
    /* An inlined function has no boundary of its own: its caller's values tell. */
    EXPECT(t, "entry", "quad", "x", "66");
    EXPECT(t, "return", "quad", "return", "264");
    assert_null(strstr(t, "\"function\":\"twice\""));
    /* Pointers into the input are offsets, the same in every run. */
    EXPECT(t, "entry", "skip", "p", "\"input+0\"");
    EXPECT(t, "return", "skip", "return", "\"input+1\"");
    assert_non_null(strstr(t, "\"kind\":\"entry\",\"function\":\"nothing\""));
    assert_non_null(strstr(t, "\"kind\":\"return\",\"function\":\"nothing\""));
}

/* The same values at every optimisation level; the program's own checks pass. */
static void c_at_every_level(void **state)
{
    (void)state;
    static const char *const levels[] = {"-O0", "-O1", "-O2", "-O3"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        char flags[32], name[32];
        snprintf(flags, sizeof flags, "-g %s", levels[i]);
        snprintf(name, sizeof name, "values%s", levels[i]);
        build(name, SIFT_CC, FIXTURES "/values.c", flags);
        assert_int_equal(SIFT_TEST_SH("./%s ab", name), 0);
        char *t = trace(name);
        check_c_values(t);
        assert_non_null(strstr(t, "values.c\",\"line\":26,"));
        free(t);
    }
}

/* UBSan's checks at -O0 with the stack-depth coverage that splits each entry block: the
 * arguments' spills land after the split, and the fields are still found through them. */
static void fields_after_a_split_entry_block(void **state)
{
    (void)state;
    build("split", SIFT_CC, FIXTURES "/values.c", "-g -O0 -fsanitize=undefined");
    char *t = trace("split");
    assert_int_equal(count(t, "\"kind\":\"field\",\"function\":\"conn_step\""), 6);
    EXPECT(t, "field", "conn_step", "c->hdr.len", "1000");
    free(t);
}

/* Builds the fixture SOURCE, a program with its own main that reads the runtime's state, with
 * values, FLAGS and the optimisation LEVEL, and runs it, which must succeed: its output is left
 * in proc.out. */
static void run_own_main(const char *source, const char *flags, const char *level)
{
    if (SIFT_TEST_SH("%s -fsift-values %s %s -g %s -I%s/src -I%s/include %s/%s -o own_main",
                     SIFT_CC, flags, SIFT_TEST_SAN, level, SIFT_SOURCE_DIR, SIFT_SOURCE_DIR,
                     FIXTURES, source) != 0)
        fail_msg("building %s %s failed (%d): %s", source, level, proc.status, proc.err);
    if (SIFT_TEST_SH("./own_main") != 0)
        fail_msg("%s %s (%d): %s%s", source, level, proc.status, proc.out, proc.err);
}

/* While fuzzing the code computes its features itself, the hooks only for a trace: the
 * fixture compares the VALUES counters and dirty bytes both set for calls of every slot type
 * with the values at the edges of the buckets, at every optimisation level. */
static void inline_features_match_hooks(void **state)
{
    (void)state;
    static const char *const levels[] = {"-O0", "-O1", "-O2", "-O3"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        run_own_main("values_inline.c", "", levels[i]);
        /* 14 functions, each with 208 values; the features of different values differ. */
        char *end;
        assert_int_equal(strncmp(proc.out, "compared ", 9), 0);
        unsigned long calls = strtoul(proc.out + 9, &end, 10);
        assert_int_equal(strncmp(end, " calls, ", 8), 0);
        unsigned long features = strtoul(end + 8, &end, 10);
        assert_int_equal(strncmp(end, " features", 9), 0);
        assert_int_equal(calls, 14 * 208);
        assert_true(features > calls);
    }
}

/* Under sanitizer coverage, an argument that every call passes as a constant and a return of a
 * constant chosen by the block it comes from are no features (the edges tell them), but still
 * traced; varying ones stay features (the fixture checks both ways). */
static void values_the_edges_tell(void **state)
{
    (void)state;
    static const char *const levels[] = {"-O1", "-O2"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        run_own_main("values_implied.c", "-fsanitize=fuzzer-no-link", levels[i]);
        assert_string_equal(proc.out, "ok\n");
    }
}

/* Each comparison callback runs only when the runtime's gate asks for it, and the block splits
 * that the gates take keep every result right (the fixture checks both), at every level. */
static void comparison_callbacks_behind_the_gate(void **state)
{
    (void)state;
    static const char *const levels[] = {"-O0", "-O1", "-O2", "-O3"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        run_own_main("cmp_gate.c", "-fsanitize=fuzzer-no-link", levels[i]);
        assert_string_equal(proc.out, "ok\n");
    }
}

/* Without -g, names come from symbols and positions. */
static void names_without_debug_info(void **state)
{
    (void)state;
    build("nodebug", SIFT_CC, FIXTURES "/values.c", "-O1");
    char *t = trace("nodebug");
    static const record records[] = {
        {"entry", "add", "arg0", "65"},
        {"entry", "add", "arg1", "66"},
        {"field", "conn_step", "arg0->field0", "0"},
        {"field", "conn_step", "arg0->field1", "8080"},
        {"field", "conn_step", "arg0->field3.0", "1000"},
        {"return", "conn_step", "return", "2"},
    };
    EXPECT_ALL(t, records);
    assert_non_null(strstr(t, "\"line\":0,"));
    free(t);
}

static void cxx(void **state)
{
    (void)state;
    build("values_cc", SIFT_CXX, FIXTURES "/values.cc", "-g -O1");
    char *t = trace("values_cc");
    static const record records[] = {
        {"entry", "net::Conn::step", "this", "\"pointer\""},
        {"entry", "net::Conn::step", "ev", "65"},
        {"field", "net::Conn::step", "this->state", "1"},
        {"return", "net::Conn::step", "return", "66"},
        {"entry", "larger<long>", "a", "3"},
        {"entry", "larger<long>", "b", "9"},
        {"return", "larger<long>", "return", "9"},
        {"return", "doubled", "return", "132"},
    };
    EXPECT_ALL(t, records);
    free(t);
}

/* Argument names by parameter number where ASan's frame at -O0 hides the spill slots, an
 * argument's own name where a local takes its value in a later block, and returns after tail
 * calls: a musttail call's goes unrecorded (nothing may come between), a plain one's not. */
static void args_and_tail_calls(void **state)
{
    (void)state;
    static const char *const levels[] = {"-g -O0 -fsanitize=address", "-g -O2"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        char name[32];
        snprintf(name, sizeof name, "args%zu", i);
        build(name, SIFT_CC, FIXTURES "/values_args.c", levels[i]);
        char *t = trace(name);
        static const record records[] = {
            {"entry", "third", "a", "1"},         {"entry", "third", "b", "2"},
            {"entry", "third", "c", "3"},         {"entry", "copies", "p", "\"pointer\""},
            {"entry", "copies", "n", "2"},        {"entry", "must", "x", "65"},
            {"return", "target", "return", "66"}, {"entry", "plain", "x", "66"},
            {"return", "plain", "return", "68"},
        };
        EXPECT_ALL(t, records);
        assert_int_equal(count(t, "\"kind\":\"return\",\"function\":\"must\""), 0);
        free(t);
    }
}

/* -fsift-values-max-struct=0 reads no fields; the arguments are still there. */
static void struct_limit(void **state)
{
    (void)state;
    build("nofields", SIFT_CC, FIXTURES "/values.c", "-g -O1 -fsift-values-max-struct=0");
    char *t = trace("nofields");
    EXPECT(t, "entry", "conn_step", "ev", "2");
    assert_int_equal(count(t, "\"kind\":\"field\""), 0);
    free(t);
}

static const char lib_c[] = "__attribute__((noinline)) int triple(int x) { return 3 * x; }\n";
static const char main_c[] =
    "#include <stddef.h>\n#include <stdint.h>\nint triple(int x);\n"
    "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return n ? triple(d[0]) - 195 : "
    "0; }\n";

static void write_sources(void)
{
    char *paths[] = {sift_test_write(dir, "lib.c", lib_c, 0644),
                     sift_test_write(dir, "main.c", main_c, 0644),
                     sift_test_write(dir, "lib.txt", lib_c, 0644)};
    for (size_t i = 0; i < 3; i++) {
        assert_non_null(paths[i]);
        free(paths[i]);
    }
}

static void expect_triple(const char *program)
{
    char *t = trace(program);
    EXPECT(t, "entry", "triple", "x", "65");
    EXPECT(t, "return", "triple", "return", "195");
    free(t);
}

/* The shapes of compile commands that build systems use. */
static void compile_shapes(void **state)
{
    (void)state;
    write_sources();
    /* Several sources compiled at once, each to its object in the current folder. */
    assert_int_equal(SIFT_TEST_SH("rm -f lib.o main.o && " SIFT_CC
                                  " -fsift-values %s -g -c lib.c main.c && " SIFT_CC
                                  " %s -fsanitize=fuzzer lib.o main.o -o two",
                                  SIFT_TEST_SAN, SIFT_TEST_SAN),
                     0);
    expect_triple("two");
    /* Compile and link in one command; a language set with -x applies to sources only. */
    assert_int_equal(SIFT_TEST_SH(SIFT_CC
                                  " -fsift-values %s -g -fsanitize=fuzzer -x c lib.txt -x none "
                                  "main.c -o one",
                                  SIFT_TEST_SAN),
                     0);
    expect_triple("one");
    /* -c -o with a dependency file named, and naming its target, as clang would. */
    assert_int_equal(SIFT_TEST_SH("mkdir -p sub && " SIFT_CC
                                  " -fsift-values %s -MD -c lib.c -o sub/x.o && "
                                  "test -f sub/x.o && head -c 9 sub/x.d",
                                  SIFT_TEST_SAN),
                     0);
    assert_string_equal(proc.out, "sub/x.o: ");
    /* Preprocessing and assembly output stay clang's own. */
    assert_int_equal(SIFT_TEST_SH(SIFT_CC " -fsift-values -E lib.c"), 0);
    assert_non_null(strstr(proc.out, "triple"));
    assert_int_equal(
        SIFT_TEST_SH(SIFT_CC " -fsift-values -S lib.c -o lib.s && ! grep -q sift_values lib.s"), 0);
    /* A compile error reads as clang's own, once. */
    assert_int_not_equal(SIFT_TEST_SH("clang -c lib.c -include nonexistent.h"), 0);
    char *direct = strdup(proc.err);
    assert_non_null(direct);
    assert_int_not_equal(SIFT_TEST_SH(SIFT_CC " -fsift-values -c lib.c -include nonexistent.h"), 0);
    assert_string_equal(proc.err, direct);
    free(direct);
}

static void switches(void **state)
{
    (void)state;
    write_sources();
    /* Off: the program has no value tables, and -trace says so in one line. */
    assert_int_equal(SIFT_TEST_SH(SIFT_CC
                                  " -fno-sift-values %s -fsanitize=fuzzer lib.c main.c -o off",
                                  SIFT_TEST_SAN),
                     0);
    assert_int_equal(SIFT_TEST_SH("./off -trace=- ab"), 1);
    assert_non_null(strstr(proc.err, "sift: -trace: this program has no value instrumentation"));
    /* SIFT_VALUES sets the default; the flags win over it. */
    assert_int_equal(SIFT_TEST_SH("SIFT_VALUES=1 " SIFT_CC
                                  " %s -g -fsanitize=fuzzer lib.c main.c -o env_on",
                                  SIFT_TEST_SAN),
                     0);
    expect_triple("env_on");
    assert_int_equal(SIFT_TEST_SH("SIFT_VALUES=1 " SIFT_CC
                                  " -fno-sift-values %s -fsanitize=fuzzer lib.c "
                                  "main.c -o env_off && ./env_off -trace=- ab",
                                  SIFT_TEST_SAN),
                     1);
    assert_int_equal(SIFT_TEST_SH("SIFT_VALUES=yes " SIFT_CC " -c lib.c"), 1);
    assert_string_equal(proc.err, "sift-cc: SIFT_VALUES=yes: expected 0 or 1\n");
    assert_int_equal(SIFT_TEST_SH("echo -fsift-values > rsp && " SIFT_CC " @rsp -c lib.c"), 1);
    assert_non_null(strstr(proc.err, "not in a response file"));
    assert_int_equal(SIFT_TEST_SH(SIFT_CC " -fsift-values-max-struct=-1 -c lib.c"), 1);
    assert_string_equal(proc.err,
                        "sift-cc: -fsift-values-max-struct=-1: expected a number of bytes\n");
}

/* The harness's own arguments give no features (every input has a size, and a feature per size
 * bucket kept inputs that differ only in length), but traces still show them. */
static void harness_arguments_are_no_features(void **state)
{
    (void)state;
    static const char empty[] = "#include <stddef.h>\n#include <stdint.h>\n"
                                "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)\n"
                                "{ (void)d; (void)n; return 0; }\n";
    char *src = sift_test_write(dir, "empty.c", empty, 0644);
    assert_non_null(src);
    free(src);
    build("empty", SIFT_CC, "empty.c", "-g");
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && ./empty -seed=1 -runs=20000 c"), 0);
    assert_non_null(strstr(proc.err, "\tDONE   cov: "));
    assert_non_null(strstr(proc.err, " corp: 1/"));
    char *t = trace("empty");
    assert_true(has(t, "entry", "LLVMFuzzerTestOneInput", "n", "2"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(c_at_every_level),
        cmocka_unit_test(fields_after_a_split_entry_block),
        cmocka_unit_test(inline_features_match_hooks),
        cmocka_unit_test(values_the_edges_tell),
        cmocka_unit_test(comparison_callbacks_behind_the_gate),
        cmocka_unit_test(names_without_debug_info),
        cmocka_unit_test(cxx),
        cmocka_unit_test(args_and_tail_calls),
        cmocka_unit_test(struct_limit),
        cmocka_unit_test(compile_shapes),
        cmocka_unit_test(switches),
        cmocka_unit_test(harness_arguments_are_no_features),
    };
    return cmocka_run_group_tests(tests, setup, sift_test_scratch_teardown);
}
