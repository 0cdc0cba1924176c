/* Tests of the mutation engine: bounds, reproducibility, each operator, and input-to-state. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/core/mutate.h"

#include <stdlib.h>
#include <string.h>

#define BUF 8192

typedef struct {
    const uint8_t *data;
    size_t len;
} other_input;

static const uint8_t *pick_fixed(void *ctx, size_t *len)
{
    const other_input *o = ctx;
    *len = o->len;
    return o->data;
}

static const uint8_t *pick_none(void *ctx, size_t *len)
{
    (void)ctx;
    *len = 0;
    return NULL;
}

static sift_mutator mutator(sift_rng *rng, uint64_t seed)
{
    sift_rng_seed(rng, seed);
    sift_mutator m = {.rng = rng};
    return m;
}

static void add_int(sift_cmp_table *t, uint64_t a, uint64_t b, uint8_t size)
{
    t->ints[t->int_next++ % SIFT_CMP_INTS] = (sift_cmp_int){.a = a, .b = b, .size = size};
}

static void add_bytes(sift_cmp_table *t, const void *a, const void *b, size_t len)
{
    sift_cmp_bytes *e = &t->bytes[t->byte_next++ % SIFT_CMP_BYTES];
    memcpy(e->a, a, len);
    memcpy(e->b, b, len);
    e->len = (uint8_t)len;
}

static uint64_t hash(const uint8_t *d, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 0x100000001b3ull;
    return h ^ n;
}

/* Everything switched on: a dictionary, both comparison rings, another input. */
typedef struct {
    sift_dict_entry entries[2];
    sift_dict dict;
    sift_cmp_table *cmps;
    other_input other;
} fixture;

static void fixture_init(fixture *f)
{
    static const uint8_t other[] = "0123456789ZYXWVUTSRQ";
    memset(f, 0, sizeof(*f));
    memcpy(f->entries[0].data, "keyword", 7);
    f->entries[0].len = 7;
    memcpy(f->entries[1].data, "\xde\xad\xbe\xef", 4);
    f->entries[1].len = 4;
    f->dict = (sift_dict){.entries = f->entries, .count = 2, .cap = 2};
    f->cmps = calloc(1, sizeof(*f->cmps));
    assert_non_null(f->cmps);
    add_int(f->cmps, 0x41424344, 0x46555a5a, 4);
    add_int(f->cmps, 7, 300, 2);
    add_bytes(f->cmps, "hello", "world", 5);
    f->other = (other_input){other, sizeof(other) - 1};
}

static void fixture_attach(fixture *f, sift_mutator *m)
{
    m->dict = &f->dict;
    m->cmps = f->cmps;
    m->pick_other = pick_fixed;
    m->pick_ctx = &f->other;
}

/* One run of N stacked mutations on an evolving input, hashed step by step. */
static void run_sequence(uint64_t seed, uint64_t *hashes, size_t n)
{
    fixture f;
    fixture_init(&f);
    sift_rng rng;
    sift_mutator m = mutator(&rng, seed);
    fixture_attach(&f, &m);
    uint8_t buf[256] = "seed input 123 ABCD hello";
    size_t size = strlen((char *)buf);
    for (size_t i = 0; i < n; i++) {
        size = sift_mutate(&m, buf, size, sizeof(buf));
        hashes[i] = hash(buf, size) ^ hash((const uint8_t *)m.trace, strlen(m.trace)) << 1;
    }
    free(f.cmps);
}

static void same_seed_same_outputs(void **state)
{
    (void)state;
    static uint64_t a[1000], b[1000], c[1000];
    run_sequence(42, a, 1000);
    run_sequence(42, b, 1000);
    run_sequence(43, c, 1000);
    assert_memory_equal(a, b, sizeof(a));
    assert_memory_not_equal(a, c, sizeof(a));
}

static void size_stays_in_bounds(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    /* A dictionary entry longer than small max sizes, and a long other input. */
    memset(f.entries[1].data, 'L', 100);
    f.entries[1].len = 100;
    static uint8_t other[300];
    memset(other, 'O', sizeof(other));
    f.other = (other_input){other, sizeof(other)};
    sift_rng rng, pick;
    sift_mutator m = mutator(&rng, 1);
    fixture_attach(&f, &m);
    sift_rng_seed(&pick, 2);
    static uint8_t buf[BUF + 64];
    size_t size = 0, max = 1;
    for (int i = 0; i < 100000; i++) {
        if (i % 50 == 0) {
            /* Fresh limits: max_size 1 often, otherwise small or up to the buffer. */
            uint64_t k = sift_rng_below(&pick, 4);
            max = k == 0   ? 1
                  : k == 1 ? 1 + sift_rng_below(&pick, 16)
                           : 1 + sift_rng_below(&pick, BUF);
            size = sift_rng_below(&pick, 3) == 0 ? 0 : sift_rng_below(&pick, max + 1);
            for (size_t j = 0; j < size; j++)
                buf[j] = (uint8_t)sift_rng_next(&pick);
        }
        memset(buf + max, 0xa5, 64);
        size = sift_mutate(&m, buf, size, max);
        assert_in_range(size, 1, max);
        for (size_t j = 0; j < 64; j++)
            assert_int_equal(buf[max + j], 0xa5);
    }
    free(f.cmps);
}

static void empty_input_gets_bytes(void **state)
{
    (void)state;
    sift_rng rng;
    sift_mutator m = mutator(&rng, 5);
    uint8_t buf[16];
    for (int i = 0; i < 100; i++) {
        size_t n = sift_mutate(&m, buf, 0, i % 2 ? 1 : sizeof(buf));
        assert_in_range(n, 1, i % 2 ? 1 : sizeof(buf));
        assert_true(strstr(m.trace, "Insert") == m.trace);
    }
    /* An input over the limit is cut to it first. */
    uint8_t big[16] = {0};
    assert_in_range(sift_mutate(&m, big, 16, 4), 1, 4);
}

static void every_operator_runs(void **state)
{
    (void)state;
    static const char *names[] = {
        "ChangeBit-",    "ChangeByte-",
        "AddSubInt-",    "InterestingInt-",
        "ChangeBinInt-", "ChangeASCIIInt-",
        "InsertByte-",   "InsertRepeatedBytes-",
        "EraseBytes-",   "CopyPart-",
        "ShuffleBytes-", "CrossOver-",
        "ManualDict-",   "CMP-",
    };
    size_t n = sizeof(names) / sizeof(names[0]);
    bool seen[sizeof(names) / sizeof(names[0])] = {false};
    fixture f;
    fixture_init(&f);
    sift_rng rng;
    sift_mutator m = mutator(&rng, 7);
    fixture_attach(&f, &m);
    for (int i = 0; i < 5000; i++) {
        uint8_t buf[128] = "value=1234; ABCD hello \x01\x02\x03\x04";
        size_t size = 28;
        sift_mutate(&m, buf, size, sizeof(buf));
        for (size_t j = 0; j < n; j++)
            seen[j] |= strstr(m.trace, names[j]) != NULL;
        assert_true(strlen(m.trace) > 0 && m.trace[strlen(m.trace) - 1] == '-');
    }
    for (size_t j = 0; j < n; j++)
        if (!seen[j]) fail_msg("operator %s never ran", names[j]);
    free(f.cmps);
}

static void only_ascii_output_is_printable(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    sift_rng rng;
    sift_mutator m = mutator(&rng, 9);
    fixture_attach(&f, &m);
    m.only_ascii = true;
    uint8_t buf[512];
    size_t size = 64;
    for (size_t i = 0; i < size; i++)
        buf[i] = (uint8_t)(i * 37 + 128);
    for (int i = 0; i < 10000; i++) {
        size = sift_mutate(&m, buf, size, sizeof(buf));
        for (size_t j = 0; j < size; j++) {
            uint8_t c = buf[j];
            assert_true((c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r');
        }
    }
    free(f.cmps);
}

/* Mutates fresh copies of SEED until NEEDLE shows up; returns the tries it took (or LIMIT). */
static int tries_until(sift_mutator *m, const char *seed, const void *needle, size_t nlen,
                       int limit)
{
    for (int i = 1; i <= limit; i++) {
        uint8_t buf[256];
        size_t size = strlen(seed);
        memcpy(buf, seed, size);
        size = sift_mutate(m, buf, size, sizeof(buf));
        if (memmem(buf, size, needle, nlen)) return i;
    }
    return limit;
}

static void dictionary_entry_appears(void **state)
{
    (void)state;
    sift_dict_entry e = {.data = "MAGICWORD", .len = 9};
    sift_dict d = {.entries = &e, .count = 1, .cap = 1};
    sift_rng rng;
    sift_mutator m = mutator(&rng, 11);
    m.dict = &d;
    assert_true(tries_until(&m, "some plain input", "MAGICWORD", 9, 200) < 200);
}

static void cmp_int_replaced_in_either_endianness(void **state)
{
    (void)state;
    sift_cmp_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    add_int(t, 0x41424344, 0x46555a5a, 4);
    sift_rng rng;
    sift_mutator m = mutator(&rng, 13);
    m.cmps = t;
    /* Big endian in the input, then little endian: the same encoding comes back. */
    assert_true(tries_until(&m, "head:ABCD:tail", "head:FUZZ:tail", 14, 300) < 300);
    assert_true(tries_until(&m, "head:DCBA:tail", "head:ZZUF:tail", 14, 300) < 300);
    /* Decimal text, for values that are parsed before the compare. */
    t->int_next = 0;
    add_int(t, 1234, 987654, 4);
    assert_true(tries_until(&m, "len=1234;", "len=987654;", 11, 300) < 300);
    free(t);
}

static void cmp_bytes_replaced(void **state)
{
    (void)state;
    sift_cmp_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    add_bytes(t, "hello", "world", 5);
    sift_rng rng;
    sift_mutator m = mutator(&rng, 17);
    m.cmps = t;
    assert_true(tries_until(&m, "say hello there", "say world there", 15, 300) < 300);
    /* A compare that read past the input's end: the prefix there is completed. */
    t->byte_next = 0;
    add_bytes(t, "MAG\0", "MAGIC", 5);
    assert_true(tries_until(&m, "xxMAG", "xxMAGIC", 7, 300) < 300);
    free(t);
}

/* A terminated copy of input bytes, compared as a string: the copy's NUL is not in the input,
 * so its bytes are found without it. */
static void cmp_bytes_of_a_copy_found_without_its_terminator(void **state)
{
    (void)state;
    sift_cmp_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    add_bytes(t, "\xfa\xfb\xfc\0", "nin\0", 4);
    t->bytes[0].at = SIFT_CMP_NOWHERE;
    sift_rng rng;
    sift_mutator m = mutator(&rng, 23);
    m.cmps = t;
    assert_true(tries_until(&m, "ab\xfa\xfb\xfc\xfd", "abnin\xfd", 6, 300) < 300);
    free(t);
}

/* Every pair the last execution recorded is applied to its input in one mutant, whatever
 * encoding each lies in; pairs recorded before it are not. */
static void cmp_again_applies_every_pair_of_the_last_run(void **state)
{
    (void)state;
    sift_cmp_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    add_int(t, 0x2d2d2d2d, 0x4f4c4421, 4); /* an older execution's */
    uint32_t since = t->int_next;
    add_int(t, 0x42414141, 0x46555a5a, 4);                       /* little endian */
    add_int(t, 0x42424243, 0x6d696421, 4);                       /* big endian */
    add_int(t, 0x4343, 0x7a7a, 2);                               /* two bytes */
    add_int(t, 0x3132333435363738ull, 0x656e64696e672121ull, 8); /* big endian, 8 bytes */
    sift_rng rng;
    sift_mutator m = mutator(&rng, 29);
    m.cmps = t;
    uint8_t buf[64];
    const char *in = "AAAB----BBBC--CC12345678";
    size_t size = strlen(in);
    memcpy(buf, in, size);
    size = sift_mutate_cmp_again(&m, buf, size, sizeof buf, since);
    assert_int_equal(size, 24);
    assert_memory_equal(buf, "ZZUF----mid!--zzending!!", 24);
    assert_string_equal(m.trace, "CMP-All-");
    /* Nothing recorded since: nothing to apply. */
    assert_int_equal(sift_mutate_cmp_again(&m, buf, size, sizeof buf, t->int_next), 0);
    free(t);
}

/* A pair applies to what an earlier pair of the same mutant wrote, though the input held none
 * of it before: the byte pairs and triples that searches are skipped by learn each
 * replacement's. */
static void cmp_again_finds_what_its_own_replacements_wrote(void **state)
{
    (void)state;
    sift_cmp_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    for (uint32_t i = 0; i < 40; i++) /* operands found nowhere */
        add_int(t, 0x70000000ull + (uint64_t)i * 0x01010101u, 0x11111111ull * (i % 7 + 1), 4);
    add_int(t, 0x41414141, 0x51515151, 4);
    add_int(t, 0x51515151, 0x5a5a5a5a, 4);
    sift_rng rng;
    sift_mutator m = mutator(&rng, 31);
    m.cmps = t;
    uint8_t buf[2048];
    memset(buf, '-', sizeof buf);
    memcpy(buf + 1500, "AAAA", 4);
    assert_int_equal(sift_mutate_cmp_again(&m, buf, sizeof buf, sizeof buf, 0), sizeof buf);
    assert_memory_equal(buf + 1500, "ZZZZ", 4);
    free(t);
}

/* The stack of operators on one mutant (the "-" separated names of its trace): 1 at most with
 * -mutate_depth=1, several at times without a cap. */
static void depth_is_capped(void **state)
{
    (void)state;
    for (unsigned cap = 0; cap <= 1; cap++) {
        sift_rng rng;
        sift_mutator m = mutator(&rng, 21);
        m.max_depth = cap;
        unsigned most = 0;
        for (int i = 0; i < 2000; i++) {
            uint8_t buf[64] = "hello, world";
            sift_mutate(&m, buf, 12, sizeof buf);
            unsigned ops = 0;
            for (const char *c = m.trace; *c; c++)
                ops += *c == '-';
            if (ops > most) most = ops;
        }
        if (cap)
            assert_int_equal(most, 1);
        else
            assert_true(most > 1);
    }
}

static void crossover_uses_other_input(void **state)
{
    (void)state;
    other_input o = {(const uint8_t *)"ZZZZZZZZZZZZ", 12};
    sift_rng rng;
    sift_mutator m = mutator(&rng, 19);
    m.pick_other = pick_fixed;
    m.pick_ctx = &o;
    int crossovers = 0;
    for (int i = 0; i < 3000; i++) {
        uint8_t buf[64];
        memset(buf, 'a', 16);
        size_t size = sift_mutate(&m, buf, 16, sizeof(buf));
        if (strcmp(m.trace, "CrossOver-") != 0) continue;
        crossovers++;
        size_t zs = 0;
        for (size_t j = 0; j < size; j++) {
            assert_true(buf[j] == 'a' || buf[j] == 'Z');
            zs += buf[j] == 'Z';
        }
        assert_true(zs > 0);
    }
    assert_true(crossovers > 50);
    /* A picker with nothing to give makes the operator decline. */
    m.pick_other = pick_none;
    for (int i = 0; i < 3000; i++) {
        uint8_t buf[64] = "abcdefgh";
        sift_mutate(&m, buf, 8, sizeof(buf));
        assert_null(strstr(m.trace, "CrossOver"));
    }
}

static void ascii_int_can_grow(void **state)
{
    (void)state;
    sift_rng rng;
    sift_mutator m = mutator(&rng, 23);
    assert_true(tries_until(&m, "n=99;", "n=100;", 6, 2000) < 2000);
}

#define MAGIC 0x5a5a5546u /* "FUZZ" read as a little-endian 32-bit integer */

/* A target that wants "FUZZ" at offset 4, compared as one integer; a failed compare lands in
 * the ring as the runtime's hook would put it there. */
static bool check_int(const uint8_t *buf, size_t size, sift_cmp_table *t)
{
    if (size < 8) return false;
    uint32_t v;
    memcpy(&v, buf + 4, 4);
    if (v == MAGIC) return true;
    add_int(t, v, MAGIC, 4);
    return false;
}

static bool check_memcmp(const uint8_t *buf, size_t size, sift_cmp_table *t)
{
    if (size < 8) return false;
    if (!memcmp(buf + 3, "FUZ!", 4)) return true;
    add_bytes(t, buf + 3, "FUZ!", 4);
    return false;
}

static int mini_fuzz(bool (*check)(const uint8_t *, size_t, sift_cmp_table *), uint64_t seed)
{
    sift_cmp_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    sift_rng rng;
    sift_mutator m = mutator(&rng, seed);
    m.cmps = t;
    static const char start[] = "hello, world! 12345";
    int i;
    for (i = 1; i <= 10000; i++) {
        uint8_t buf[64];
        memcpy(buf, start, sizeof(start) - 1);
        size_t size = sift_mutate(&m, buf, sizeof(start) - 1, sizeof(buf));
        if (check(buf, size, t)) break;
    }
    free(t);
    return i;
}

static void mini_fuzz_finds_int_magic(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++)
        assert_true(mini_fuzz(check_int, seed) <= 10000);
}

static void mini_fuzz_finds_memcmp_magic(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++)
        assert_true(mini_fuzz(check_memcmp, seed) <= 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_seed_same_outputs),
        cmocka_unit_test(size_stays_in_bounds),
        cmocka_unit_test(empty_input_gets_bytes),
        cmocka_unit_test(every_operator_runs),
        cmocka_unit_test(only_ascii_output_is_printable),
        cmocka_unit_test(dictionary_entry_appears),
        cmocka_unit_test(cmp_int_replaced_in_either_endianness),
        cmocka_unit_test(cmp_bytes_replaced),
        cmocka_unit_test(cmp_bytes_of_a_copy_found_without_its_terminator),
        cmocka_unit_test(cmp_again_applies_every_pair_of_the_last_run),
        cmocka_unit_test(cmp_again_finds_what_its_own_replacements_wrote),
        cmocka_unit_test(crossover_uses_other_input),
        cmocka_unit_test(depth_is_capped),
        cmocka_unit_test(ascii_int_can_grow),
        cmocka_unit_test(mini_fuzz_finds_int_magic),
        cmocka_unit_test(mini_fuzz_finds_memcmp_magic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
