/* Tests of dictionaries: the AFL/libFuzzer format, its errors, files, and robustness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/core/dict.h"
#include "engine/base/rng.h"
#include "support/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Parses a C string (its length from strlen, or LEN bytes when not 0) as file "t.dict". */
static int parse(sift_dict *d, const char *text, size_t len, char *err, size_t errlen)
{
    return sift_dict_parse(d, "t.dict", text, len ? len : strlen(text), err, errlen);
}

static void assert_entry(const sift_dict *d, size_t i, const void *data, size_t len)
{
    assert_true(i < d->count);
    assert_int_equal(d->entries[i].len, len);
    assert_memory_equal(d->entries[i].data, data, len);
}

static void good_file(void **state)
{
    (void)state;
    static const char text[] = "# A comment, then a blank line.\n"
                               "\n"
                               "\"GET \"\n"
                               "  header_host = \"Host: \"  \n"
                               "kw1@2=\"\\x00\\x01\\xfF\\\\\\\"\"\r\n"
                               "\t# indented comment \"with quotes\n"
                               "dup=\"GET \"\n"
                               "other-name.x=\"a=b # not a comment\"\n"
                               "=\"nameless\"\n"
                               "   \t \n"
                               "last=\"no newline\"";
    sift_dict d = {0};
    char err[256] = "";
    assert_int_equal(parse(&d, text, 0, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_int_equal(d.count, 6);
    assert_entry(&d, 0, "GET ", 4);
    assert_entry(&d, 1, "Host: ", 6);
    assert_entry(&d, 2, "\x00\x01\xff\\\"", 5);
    assert_entry(&d, 3, "a=b # not a comment", 19);
    assert_entry(&d, 4, "nameless", 8);
    assert_entry(&d, 5, "no newline", 10);
    /* A second file adds only what is new. */
    assert_int_equal(parse(&d, "\"GET \"\n\"new\"\n", 0, err, sizeof(err)), 0);
    assert_int_equal(d.count, 7);
    assert_entry(&d, 6, "new", 3);
    sift_dict_free(&d);
    assert_null(d.entries);
    assert_int_equal(d.count, 0);
    sift_dict_free(&d);
    sift_dict_free(NULL);
}

static void longest_value(void **state)
{
    (void)state;
    char text[4 * SIFT_DICT_MAX_ENTRY + 8], *p = text;
    *p++ = '"';
    for (int i = 0; i < SIFT_DICT_MAX_ENTRY; i++)
        p += i % 2 ? sprintf(p, "\\x%02x", i) : sprintf(p, "%c", 'a' + i % 26);
    memcpy(p, "\"\n", sizeof("\"\n"));
    sift_dict d = {0};
    char err[256] = "";
    assert_int_equal(parse(&d, text, 0, err, sizeof(err)), 0);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.entries[0].len, SIFT_DICT_MAX_ENTRY);
    assert_int_equal(d.entries[0].data[SIFT_DICT_MAX_ENTRY - 1], SIFT_DICT_MAX_ENTRY - 1);
    /* One byte more is an error. */
    memcpy(p, "z\"\n", sizeof("z\"\n"));
    assert_int_equal(parse(&d, text, 0, err, sizeof(err)), -1);
    assert_string_equal(err, "t.dict:1: value longer than 128 bytes");
    sift_dict_free(&d);
}

/* libFuzzer and AFL++ read a value from the line's first quote to its last, so that AFL++'s
 * regexp.dict, whose line 150 is "a?)"xyz{93}", loads in both: a quote inside is the value's. */
static void bare_quotes_inside_a_value(void **state)
{
    (void)state;
    sift_dict d = {0};
    char err[256] = "";
    assert_int_equal(parse(&d, "\"a?)\"xyz{93}\"\n\"abc\"\"\nname=\"\"\"\"\n", 0, err, sizeof(err)),
                     0);
    assert_string_equal(err, "");
    assert_int_equal(d.count, 3);
    assert_entry(&d, 0, "a?)\"xyz{93}", 11);
    assert_entry(&d, 1, "abc\"", 4);
    assert_entry(&d, 2, "\"\"", 2);
    sift_dict_free(&d);
}

static void malformed_lines(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t len; /* 0: strlen */
        const char *err;
    } cases[] = {
        {"abc\n", 0, "t.dict:1: missing opening quote"},
        {"\"ok\"\nname=abc\n", 0, "t.dict:2: missing opening quote"},
        {"name=\n", 0, "t.dict:1: missing opening quote"},
        {"name\n", 0, "t.dict:1: missing opening quote"},
        {"name \"x\"\n", 0, "t.dict:1: missing '=' after the name"},
        {"foo bar=\"x\"\n", 0, "t.dict:1: missing '=' after the name"},
        {"name@=\"x\"\n", 0, "t.dict:1: expected a level (digits) after '@'"},
        {"na@me=\"x\"\n", 0, "t.dict:1: expected a level (digits) after '@'"},
        {"\"abc\n", 0, "t.dict:1: unterminated string"},
        {"\"abc", 0, "t.dict:1: unterminated string"},
        {"\"abc\\\"\n", 0, "t.dict:1: unterminated string"},
        {"\"abc\\", 0, "t.dict:1: unterminated string"},
        {"\n\n\"\\q\"\n", 0, "t.dict:3: bad escape \\q (expected \\\\, \\\" or \\xNN)"},
        {"\"\\n\"\n", 0, "t.dict:1: bad escape \\n (expected \\\\, \\\" or \\xNN)"},
        {"\"\\x4\"\n", 0, "t.dict:1: bad escape \\x4 (expected \\xNN, two hex digits)"},
        {"\"\\xZZ\"\n", 0, "t.dict:1: bad escape \\xZZ (expected \\xNN, two hex digits)"},
        {"\"\\x\"\n", 0, "t.dict:1: bad escape \\x (expected \\xNN, two hex digits)"},
        {"\"\\x4", 0, "t.dict:1: unterminated string"},
        {"\"\\x\n", 0, "t.dict:1: unterminated string"},
        {"\"a\tb\"\n", 0, "t.dict:1: non-printable byte 0x09 in the value (write it as \\x09)"},
        {"\"a\x80\"\n", 0, "t.dict:1: non-printable byte 0x80 in the value (write it as \\x80)"},
        {"\"a\\\x01\"\n", 0, "t.dict:1: non-printable byte 0x01 in the value (write it as \\x01)"},
        {"\"a\0b\"\n", 6, "t.dict:1: non-printable byte 0x00 in the value (write it as \\x00)"},
        {"na\0me=\"x\"\n", 10, "t.dict:1: non-printable byte 0x00 outside the quotes"},
        {"\0\n", 2, "t.dict:1: non-printable byte 0x00 outside the quotes"},
        {"\"abc\" x\n", 0, "t.dict:1: trailing garbage after the closing quote"},
        {"\"abc\" # comment\n", 0, "t.dict:1: trailing garbage after the closing quote"},
        {"\"\"\n", 0, "t.dict:1: empty value"},
        {"name=\"\"\n", 0, "t.dict:1: empty value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sift_dict d = {0};
        char err[256] = "";
        /* An exact-size copy, so that a read past the end shows under ASan. */
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
        char *text = malloc(len);
        memcpy(text, cases[i].text, len);
        if (sift_dict_parse(&d, "t.dict", text, len, err, sizeof(err)) != -1)
            fail_msg("case %zu parsed", i);
        if (strcmp(err, cases[i].err) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, cases[i].err);
        free(text);
        sift_dict_free(&d);
    }
}

static void error_stops_parsing_and_keeps_entries(void **state)
{
    (void)state;
    sift_dict d = {0};
    char err[256];
    assert_int_equal(parse(&d, "\"one\"\n\"two\"\nbad\n\"three\"\n", 0, err, sizeof(err)), -1);
    assert_string_equal(err, "t.dict:3: missing opening quote");
    assert_int_equal(d.count, 2);
    /* No error buffer, or a short one, is fine. */
    assert_int_equal(parse(&d, "bad\n", 0, NULL, 0), -1);
    char small[6];
    assert_int_equal(parse(&d, "bad\n", 0, small, sizeof(small)), -1);
    assert_string_equal(small, "t.dic");
    assert_int_equal(sift_dict_parse(&d, NULL, "bad", 3, err, sizeof(err)), -1);
    assert_string_equal(err, "<dictionary>:1: missing opening quote");
    assert_int_equal(sift_dict_parse(&d, "empty", NULL, 0, err, sizeof(err)), 0);
    assert_int_equal(d.count, 2);
    sift_dict_free(&d);
}

static void add_dedups_and_checks_lengths(void **state)
{
    (void)state;
    sift_dict d = {0};
    uint8_t big[SIFT_DICT_MAX_ENTRY + 1] = {0};
    assert_int_equal(sift_dict_add(&d, (const uint8_t *)"ab", 2), 0);
    assert_int_equal(sift_dict_add(&d, (const uint8_t *)"ab", 2), 0);
    assert_int_equal(sift_dict_add(&d, (const uint8_t *)"ab", 1), 0);
    assert_int_equal(sift_dict_add(&d, big, SIFT_DICT_MAX_ENTRY), 0);
    assert_int_equal(d.count, 3);
    assert_int_equal(sift_dict_add(&d, big, SIFT_DICT_MAX_ENTRY + 1), -1);
    assert_int_equal(sift_dict_add(&d, big, 0), -1);
    assert_int_equal(sift_dict_add(&d, NULL, 1), -1);
    assert_int_equal(sift_dict_add(NULL, big, 1), -1);
    assert_int_equal(d.count, 3);
    /* Entries added one by one are seen by a later parse. */
    char err[256];
    assert_int_equal(parse(&d, "\"ab\"\n\"a\"\n\"abc\"\n", 0, err, sizeof(err)), 0);
    assert_int_equal(d.count, 4);
    assert_entry(&d, 3, "abc", 3);
    sift_dict_free(&d);
}

static void many_entries(void **state)
{
    (void)state;
    enum { N = 50000 };
    size_t cap = (size_t)N * 2 * 16, len = 0;
    char *text = malloc(cap);
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < N; i++)
            len += (size_t)snprintf(text + len, cap - len, "k%d=\"v%d\"\n", i, (i * 7919) % N);
    sift_dict d = {0};
    char err[256] = "";
    assert_int_equal(sift_dict_parse(&d, "big", text, len, err, sizeof(err)), 0);
    assert_int_equal(d.count, N);
    assert_entry(&d, 1, "v7919", 5);
    free(text);
    sift_dict_free(&d);
}

/* DIR/NAME, written with TEXT; its path, to free. */
static char *dict_file(const char *dir, const char *name, const char *text)
{
    char *path = sift_test_write(dir, name, text, 0644);
    assert_non_null(path);
    return path;
}

static void files(void **state)
{
    const char *dir = *state;
    sift_dict d = {0};
    char err[512], want[512];
    char *path = dict_file(dir, "tokens.dict", "# tokens\n\"<a>\"\n\"</a>\"\n");
    assert_int_equal(sift_dict_load(&d, path, err, sizeof(err)), 0);
    assert_int_equal(d.count, 2);
    free(path);

    path = dict_file(dir, "bad.dict", "\"ok\"\n\"bad\n");
    assert_int_equal(sift_dict_load(&d, path, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s:2: unterminated string", path);
    assert_string_equal(err, want);
    assert_int_equal(d.count, 3);
    assert_entry(&d, 2, "ok", 2);

    /* A path under a regular file fails even for root. */
    char under[512];
    snprintf(under, sizeof(under), "%s/x.dict", path);
    assert_int_equal(sift_dict_load(&d, under, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s: cannot read: Not a directory", under);
    assert_string_equal(err, want);
    free(path);

    path = dict_file(dir, "empty.dict", "");
    assert_int_equal(sift_dict_load(&d, path, err, sizeof(err)), 0);
    assert_int_equal(d.count, 3);
    free(path);

    assert_int_equal(sift_dict_load(&d, "/nonexistent/sift.dict", err, sizeof(err)), -1);
    assert_string_equal(err, "/nonexistent/sift.dict: cannot read: No such file or directory");
    assert_int_equal(sift_dict_load(&d, dir, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s: cannot read: Is a directory", dir);
    assert_string_equal(err, want);
    assert_int_equal(sift_dict_load(&d, dir, NULL, 0), -1);
    assert_int_equal(d.count, 3);
    sift_dict_free(&d);
}

static void unreadable_file(void **state)
{
    const char *dir = *state;
    sift_dict d = {0};
    char err[512], want[512];
    /* Opens, then fails to read, even for root: a read error rather than an open error. */
    assert_int_equal(sift_dict_load(&d, "/proc/self/mem", err, sizeof(err)), -1);
    assert_string_equal(err, "/proc/self/mem: cannot read: Input/output error");
    if (geteuid() != 0) {
        char *path = dict_file(dir, "closed.dict", "\"x\"\n");
        assert_int_equal(chmod(path, 0), 0);
        assert_int_equal(sift_dict_load(&d, path, err, sizeof(err)), -1);
        snprintf(want, sizeof(want), "%s: cannot read: Permission denied", path);
        assert_string_equal(err, want);
        free(path);
    }
    assert_int_equal(d.count, 0);
}

static void too_large_file(void **state)
{
    char *path = dict_file(*state, "large.dict", "");
    assert_int_equal(truncate(path, (16 << 20) + 1), 0);
    sift_dict d = {0};
    char err[512], want[512];
    assert_int_equal(sift_dict_load(&d, path, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s: larger than 16 MiB, not a dictionary", path);
    assert_string_equal(err, want);
    /* Exactly 16 MiB is read (and here refused for its NUL bytes, on line 1). */
    assert_int_equal(truncate(path, 16 << 20), 0);
    assert_int_equal(sift_dict_load(&d, path, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s:1: non-printable byte 0x00 outside the quotes", path);
    assert_string_equal(err, want);
    free(path);
}

/* Well-formed lines with random content, one in a hundred spoiled by a random byte, so that
 * parsing gets past the first line and deep into the grammar. */
static void fill_lines(sift_rng *rng, char *text, size_t len)
{
    static const char *const escapes[] = {"\\\\", "\\\"", "\\x7f", "\\x0A"};
    size_t i = 0;
    while (i < len) {
        char line[256];
        int n = 0;
        if (sift_rng_below(rng, 2))
            n += sprintf(line, "k%d@%d = ", (int)sift_rng_below(rng, 100),
                         (int)sift_rng_below(rng, 3));
        line[n++] = '"';
        for (int k = (int)sift_rng_below(rng, 40); k >= 0; k--) {
            if (sift_rng_below(rng, 8) == 0) {
                n += sprintf(line + n, "%s", escapes[sift_rng_below(rng, 4)]);
            } else {
                char c = (char)('#' + sift_rng_below(rng, '~' + 1 - '#'));
                line[n++] = c == '\\' ? 'b' : c;
            }
        }
        line[n++] = '"';
        line[n++] = '\n';
        if (sift_rng_below(rng, 100) == 0)
            line[sift_rng_below(rng, (uint64_t)n)] = (char)sift_rng_next(rng);
        for (int k = 0; k < n && i < len; k++)
            text[i++] = line[k];
    }
}

/* Random buffers, uniform, from the format's own bytes, and of well-formed lines: parsing
 * returns 0 or -1 with a "name:line: " message and never reads past LEN (ASan checks the
 * exact-size allocation). */
static void random_text_never_crashes(void **state)
{
    (void)state;
    static const char alphabet[] = "\"\"\"\\\\\\xxaF0 9=@#\n\n\t\r";
    enum { LEN = 100 * 1024 };
    sift_rng rng;
    sift_rng_seed(&rng, 20260101);
    size_t added = 0, deepest = 0;
    for (int iter = 0; iter < 300; iter++) {
        size_t len = iter < 3 ? LEN : (size_t)sift_rng_below(&rng, LEN + 1);
        char *text = malloc(len ? len : 1);
        if (iter % 3 == 2) {
            fill_lines(&rng, text, len);
        } else {
            for (size_t i = 0; i < len; i++) {
                uint64_t r = sift_rng_next(&rng);
                text[i] = iter % 3 ? alphabet[r % (sizeof(alphabet) - 1)] : (char)r;
            }
        }
        sift_dict d = {0};
        char err[256] = "";
        int rc = sift_dict_parse(&d, "r", text, len, err, sizeof(err));
        assert_true(rc == 0 || (rc == -1 && !strncmp(err, "r:", 2)));
        if (rc)
            deepest = strtoul(err + 2, NULL, 10) > deepest ? strtoul(err + 2, NULL, 10) : deepest;
        for (size_t i = 0; i < d.count; i++)
            assert_true(d.entries[i].len >= 1 && d.entries[i].len <= SIFT_DICT_MAX_ENTRY);
        added += d.count;
        free(text);
        sift_dict_free(&d);
    }
    /* The well-formed lines load by the hundred before a spoiled one stops them. */
    assert_true(added > 1000);
    assert_true(deepest > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_file),
        cmocka_unit_test(longest_value),
        cmocka_unit_test(bare_quotes_inside_a_value),
        cmocka_unit_test(malformed_lines),
        cmocka_unit_test(error_stops_parsing_and_keeps_entries),
        cmocka_unit_test(add_dedups_and_checks_lengths),
        cmocka_unit_test(many_entries),
        SIFT_TEST_IN_SCRATCH(files),
        cmocka_unit_test_setup_teardown(unreadable_file, sift_test_scratch_setup,
                                        sift_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(too_large_file, sift_test_scratch_setup,
                                        sift_test_scratch_teardown),
        cmocka_unit_test(random_text_never_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
