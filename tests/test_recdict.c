/* The recommended dictionary (engine/core/recdict.c): the comparison operands that made inputs
 * the corpus took, counted, and printed at the end of a run as libFuzzer prints them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/core/recdict.h"
#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sift_dict_entry word(const char *s)
{
    sift_dict_entry e = {.len = (uint8_t)strlen(s)};
    memcpy(e.data, s, e.len);
    return e;
}

/* Each word once, however often it comes, with a count of the inputs it made. */
static void words_are_counted_once_each(void **state)
{
    (void)state;
    sift_recdict r = {0};
    sift_dict_entry both[] = {word("foo"), word("bar")};
    sift_recdict_note(&r, both, 2);
    sift_recdict_note(&r, both + 1, 1);
    for (int i = 0; i < 40; i++) {
        char s[8];
        snprintf(s, sizeof s, "w%d", i);
        sift_dict_entry w = word(s);
        sift_recdict_note(&r, &w, 1);
    }
    assert_int_equal(r.n, 42);
    assert_memory_equal(r.words[1].data, "bar", 3);
    assert_int_equal(r.uses[0], 1);
    assert_int_equal(r.uses[1], 2);
    sift_recdict_free(&r);
}

/* A word is quoted as a -dict file reads it back. */
static void words_are_quoted_as_dictionary_entries(void **state)
{
    (void)state;
    sift_dict_entry w = {.len = 5, .data = {'a', '"', '\\', 0x01, 0xff}};
    char quoted[SIFT_RECDICT_QUOTED];
    assert_int_equal(sift_recdict_quote(&w, quoted, sizeof quoted), 15);
    assert_string_equal(quoted, "\"a\\\"\\\\\\x01\\xff\"");
    char small[6];
    assert_int_equal(sift_recdict_quote(&w, small, sizeof small), 5);
    assert_string_equal(small, "\"a\\\"\\");
}

/* A run prints the block after its DONE line: the words behind the harness's comparisons, a
 * byte that a dictionary file must escape escaped, and none that -dict already gave. */
static void a_run_recommends_what_it_found(void **state)
{
    char *dir = *state;
    sift_test_proc proc;
    assert_int_equal(sift_test_build(dir, "words", "tests/fixtures/words.c", ""), 0);
    assert_int_equal(SIFT_TEST_SH("./words -seed=1 -runs=200000"), 0);
    const char *block = strstr(proc.err, "DONE ");
    assert_non_null(block);
    block = strstr(block, "\n###### Recommended dictionary. ######\n");
    assert_non_null(block);
    assert_non_null(strstr(block, "\n\"foo\" # Uses: "));
    assert_non_null(strstr(block, "\n\"bar\" # Uses: "));
    assert_non_null(strstr(block, "\n\"q\\\"\\x01\" # Uses: "));
    assert_non_null(strstr(block, "\n###### End of recommended dictionary. ######\n"));
    /* The status line of an input that a token made names it, as libFuzzer's DE: does. */
    assert_non_null(strstr(proc.err, " DE: \"foo\"-"));
    assert_int_equal(SIFT_TEST_SH("printf '\"foo\"\\n' > words.dict && "
                                  "./words -seed=1 -runs=200000 -dict=words.dict"),
                     0);
    block = strstr(proc.err, "###### Recommended dictionary. ######");
    assert_non_null(block);
    assert_null(strstr(block, "\"foo\""));
    assert_non_null(strstr(proc.err, " DE: \"foo\"-"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_are_counted_once_each),
        cmocka_unit_test(words_are_quoted_as_dictionary_entries),
        SIFT_TEST_IN_SCRATCH(a_run_recommends_what_it_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
