/* -trace: the formats, written from records as the rings hold them, and the state-machine
 * example traced as an analyst would, the same in every run and complete up to a crash. */
#define _GNU_SOURCE
#include "engine/modes/trace.h"
#include "rt/values.h"
#include "support/harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define EXAMPLE SIFT_SOURCE_DIR "/examples/statemachine.c"

static void formats(void **state)
{
    (void)state;
    sift_trace_format f;
    assert_int_equal(sift_trace_format_of("out.jsonl", NULL, &f), 0);
    assert_int_equal(f, SIFT_TRACE_JSON);
    assert_int_equal(sift_trace_format_of("out.txt", NULL, &f), 0);
    assert_int_equal(f, SIFT_TRACE_TEXT);
    assert_int_equal(sift_trace_format_of("-", NULL, &f), 0);
    assert_int_equal(f, SIFT_TRACE_TEXT);
    assert_int_equal(sift_trace_format_of("out.jsonl", "text", &f), 0);
    assert_int_equal(f, SIFT_TRACE_TEXT);
    assert_int_equal(sift_trace_format_of("-", "json", &f), 0);
    assert_int_equal(f, SIFT_TRACE_JSON);
    assert_int_equal(sift_trace_format_of("-", "xml", &f), -1);
    assert_int_equal(sift_trace_format_of("-", "", &f), -1);
}

/* A harness entry and a parser with a struct argument, as sift-instrument would describe them. */
static const sift_values_slot entry_slots[] = {
    {"data", 0, 0, SIFT_VALUES_ARG, SIFT_VALUES_POINTER | 8},
    {"size", 0, 0, SIFT_VALUES_ARG, 8},
    {"return", 0, 0, SIFT_VALUES_RETURN, SIFT_VALUES_SIGNED | 4},
};
static const sift_values_slot parse_slots[] = {
    {"p", 0, 0, SIFT_VALUES_ARG, SIFT_VALUES_POINTER | 8},
    {"tag", 0, 0, SIFT_VALUES_ARG, 4},
    {"p->state", 0, 0, SIFT_VALUES_FIELD, SIFT_VALUES_SIGNED | 1},
    {"return", 0, 0, SIFT_VALUES_RETURN, SIFT_VALUES_POINTER | 8},
};
static const sift_values_fn table[] = {
    {0x10, "LLVMFuzzerTestOneInput", "h.c", 7, 2, 3, entry_slots},
    {0x20, "parse", "p.c", 12, 2, 4, parse_slots},
    {0x30, "done", "p.c", 30, 0, 0, NULL},
};

static sift_values_module module;

#define BASE 0x10000ull

static const sift_ring_record records[] = {
    {0x10, BASE, 0, 0, 0, SIFT_RING_ENTRY, 0},
    {0x10, 100, 1, 0, 1, SIFT_RING_ENTRY, 0},
    {0x20, BASE + 4, 2, 0, 0, SIFT_RING_ENTRY, 0},
    {0x20, 0x49484452, 3, 0, 1, SIFT_RING_ENTRY, 0},
    {0x20, 0xff, 4, 0, 2, SIFT_RING_FIELD, 0},
    {0x30, 0, 5, 0, SIFT_RING_NO_SLOT, SIFT_RING_ENTRY, 0},
    {0x30, 0, 6, 0, SIFT_RING_NO_SLOT, SIFT_RING_RETURN, 0},
    {0x20, 0, 7, 0, 3, SIFT_RING_RETURN, 0},
    {0x99, 5, 8, 1, 0, SIFT_RING_ENTRY, 0},
    {0x10, 0xfffffffe, 9, 0, 2, SIFT_RING_RETURN, 0},
};

/* What a trace of RECORDS reads in FORMAT. */
static char *render(sift_trace_format format)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    sift_trace *t = sift_trace_new(fileno(f), format, sift_rt());
    assert_non_null(t);
    for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
        sift_trace_record(t, &records[i]);
    sift_trace_finish(t);
    sift_trace_free(t);
    rewind(f);
    char *out = calloc(1, 4096);
    assert_non_null(out);
    assert_true(fread(out, 1, 4095, f) > 0);
    (void)fclose(f);
    return out;
}

static void text_lines(void **state)
{
    (void)state;
    __sift_values_register(SIFT_VALUES_ABI, table, 3, &module);
    char *out = render(SIFT_TRACE_TEXT);
    assert_string_equal(out,
                        "#0 LLVMFuzzerTestOneInput(data=input+0, size=100)  h.c:7\n"
                        "#2   parse(p=input+4, tag=1229472850 (0x49484452), p->state=-1)  p.c:12\n"
                        "#5     done()  p.c:30\n"
                        "#6     done returned\n"
                        "#7   parse -> null\n"
                        "#8 [1] <function 0x99>(slot0=5)\n"
                        "#9 LLVMFuzzerTestOneInput -> -2\n");
    free(out);
}

static void json_lines(void **state)
{
    (void)state;
    char *out = render(SIFT_TRACE_JSON);
    static const char *const want[] = {
        "{\"seq\":0,\"thread\":0,\"kind\":\"entry\",\"function\":\"LLVMFuzzerTestOneInput\","
        "\"file\":\"h.c\",\"line\":7,\"slot\":\"data\",\"value\":\"input+0\"}\n",
        "{\"seq\":3,\"thread\":0,\"kind\":\"entry\",\"function\":\"parse\",\"file\":\"p.c\","
        "\"line\":12,\"slot\":\"tag\",\"value\":1229472850}\n",
        "{\"seq\":4,\"thread\":0,\"kind\":\"field\",\"function\":\"parse\",\"file\":\"p.c\","
        "\"line\":12,\"slot\":\"p->state\",\"value\":-1}\n",
        "{\"seq\":5,\"thread\":0,\"kind\":\"entry\",\"function\":\"done\",\"file\":\"p.c\","
        "\"line\":30,\"slot\":null,\"value\":null}\n",
        "{\"seq\":7,\"thread\":0,\"kind\":\"return\",\"function\":\"parse\",\"file\":\"p.c\","
        "\"line\":12,\"slot\":\"return\",\"value\":\"null\"}\n",
        "{\"seq\":8,\"thread\":1,\"kind\":\"entry\",\"function\":null,\"id\":\"0x99\",\"slot\":0,"
        "\"value\":5}\n",
    };
    SIFT_TEST_EXPECT_ALL(out, want);
    size_t lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, sizeof(records) / sizeof(records[0]));
    free(out);
}

static char *dir;
static sift_test_proc proc;

static int build_example(void **state)
{
    *state = dir = sift_test_scratch();
    /* The symbols that lead the machine from state 0 to 16, where it crashes. */
    if (!dir || SIFT_TEST_SH("printf '\\005\\002\\007\\001' > short && "
                             "printf '\\005\\002\\007\\001\\004\\000\\006\\003\\002\\007\\001"
                             "\\005\\003\\006\\000\\004' > deep") != 0)
        return -1;
    return sift_test_build(dir, "machine", "examples/statemachine.c", "-fsift-values");
}

/* A source compiled from a folder that shares a parent with it is still named in full (clang
 * splits such a path into the shared folder and the rest). */
static void sources_named_in_full(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("mkdir -p near/src near/build && cp " EXAMPLE
                     " near/src/ && cd near/build && " SIFT_BUILD_DIR
                     "/bin/sift-cc -fsift-values -g %s -fsanitize=fuzzer "
                     "\"$(dirname \"$PWD\")/src/statemachine.c\" -o m && "
                     "./m -trace=t.txt ../../short && head -n 1 t.txt && dirname \"$PWD\"",
                     SIFT_TEST_SAN),
        0);
    char *folder = strrchr(proc.out, '\n');
    assert_non_null(folder);
    *folder = 0;
    folder = strrchr(proc.out, '\n') + 1;
    char want[600];
    snprintf(want, sizeof want, "  %s/src/statemachine.c:", folder);
    if (!strstr(proc.out, want)) fail_msg("no '%s' in:\n%s", want, proc.out);
}

/* Two runs of one input, in text and in JSON: the same bytes each time. */
static void same_records_every_run(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("./machine -trace=a.txt short && ./machine -trace=b.txt short && "
                     "cmp a.txt b.txt && ./machine -trace=a.jsonl short && "
                     "./machine -trace=b.jsonl short && cmp a.jsonl b.jsonl && cat a.txt"),
        0);
    static const char *const want[] = {
        "#0 LLVMFuzzerTestOneInput(data=input+0, size=4)  " EXAMPLE ":",
        "#2   step(m=pointer, byte=5, m->state=0, m->steps=0)  " EXAMPLE ":",
        "#6   step returned\n",
        "#7   step(m=pointer, byte=2, m->state=1, m->steps=1)  ",
        "#12   step(m=pointer, byte=7, m->state=2, m->steps=2)  ",
        "#17   step(m=pointer, byte=1, m->state=3, m->steps=3)  ",
        "#22 LLVMFuzzerTestOneInput -> 0\n",
    };
    SIFT_TEST_EXPECT_ALL(proc.out, want);
    assert_int_equal(SIFT_TEST_SH("grep -c '\"function\":\"step\"' a.jsonl"), 0);
    assert_string_equal(proc.out, "20\n");
    assert_int_equal(SIFT_TEST_SH("./machine -trace=- -trace_format=json short 2>&1 >/dev/null | "
                                  "grep -c '^{\"seq\":'"),
                     0);
    assert_string_equal(proc.out, "23\n");
}

/* The crashing input: every record up to the crash is written, and the crash is reported as
 * in reproduction, which writes no artifact of an input that is a file already. */
static void records_up_to_a_crash(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("./machine -trace=crash.txt -artifact_prefix=art- deep");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "deadly signal") ? proc.err : strstr(proc.err, "SEGV"));
    assert_int_equal(SIFT_TEST_SH("! ls art-* 2>/dev/null && tail -n 1 crash.txt"), 0);
    assert_non_null(strstr(proc.out, "#77   step(m=pointer, byte=4, m->state=15, m->steps=15)  "));
}

static void usage_errors(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("./machine -trace=- short deep"), 1);
    assert_non_null(strstr(proc.err, "sift: -trace takes exactly one input file (got 2 inputs)\n"));
    assert_int_equal(SIFT_TEST_SH("mkdir -p corpus && ./machine -trace=- corpus"), 1);
    assert_non_null(
        strstr(proc.err, "sift: -trace takes exactly one input file (got 1 inputs, a folder)\n"));
    assert_int_equal(SIFT_TEST_SH("./machine -trace=- -trace_format=xml short"), 1);
    assert_non_null(strstr(proc.err, "sift: -trace_format=xml: expected text or json\n"));
    assert_int_equal(SIFT_TEST_SH("./machine -trace=/nonexistent/t.txt short"), 1);
    assert_non_null(strstr(proc.err, "sift: -trace=/nonexistent/t.txt: cannot create: "));
}

int main(void)
{
    const struct CMUnitTest units[] = {
        cmocka_unit_test(formats),
        cmocka_unit_test(text_lines),
        cmocka_unit_test(json_lines),
    };
    const struct CMUnitTest runs[] = {
        cmocka_unit_test(same_records_every_run),
        cmocka_unit_test(sources_named_in_full),
        cmocka_unit_test(records_up_to_a_crash),
        cmocka_unit_test(usage_errors),
    };
    int failed = cmocka_run_group_tests(units, NULL, NULL);
    return failed + cmocka_run_group_tests(runs, build_example, sift_test_scratch_teardown);
}
