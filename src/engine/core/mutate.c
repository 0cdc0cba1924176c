/* The mutation engine: a short weighted stack of in-place operators per call, with byte-level
 * operators here and the token and splicing ones in mutate_cmp.c. */
#include "engine/core/mutate.h"
#include "engine/core/mutate_ops.h"

#include <string.h>

typedef size_t (*op_fn)(sift_mutator *m, uint8_t *d, size_t size, size_t max);

/* A width of 1, 2, 4 (or 8 when MAX_LOG is 3) bytes that fits in SIZE. */
static size_t pick_width(sift_mutator *m, size_t size, unsigned max_log)
{
    unsigned n = 0;
    while (n < max_log && ((size_t)2 << n) <= size)
        n++;
    return (size_t)1 << sift_mut_below(m, n + 1);
}

static size_t op_change_bit(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    d[sift_mut_below(m, size)] ^= (uint8_t)(1u << sift_mut_below(m, 8));
    return size;
}

static size_t op_change_byte(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    size_t i = sift_mut_below(m, size);
    /* A nonzero xor, so the byte always changes. */
    d[i] ^= sift_mut_below(m, 4) ? (uint8_t)(1 + sift_mut_below(m, 255)) : 0xff;
    return size;
}

static size_t op_add_sub_int(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    size_t w = pick_width(m, size, 3), off = sift_mut_below(m, size - w + 1);
    bool big = sift_mut_below(m, 2);
    uint64_t delta = 1 + sift_mut_below(m, 35), v = sift_mut_load(d + off, w, big);
    sift_mut_store(d + off, w, sift_mut_below(m, 2) ? v + delta : v - delta, big);
    return size;
}

/* AFL's interesting values: a value of width W draws from its own row and the narrower ones. */
static const int32_t interesting[] = {
    -128,      -1,         0,      1,     16,    32,    64,        100,       127, /* 8-bit */
    -32768,    -129,       128,    255,   256,   512,   1000,      1024,      4096, 32767, /* 16 */
    INT32_MIN, -100663046, -32769, 32768, 65535, 65536, 100663045, INT32_MAX,              /* 32 */
};
static const size_t interesting_upto[] = {9, 19, 27};

static size_t op_interesting_int(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    size_t w = pick_width(m, size, 2), off = sift_mut_below(m, size - w + 1);
    size_t row = w == 1 ? 0 : w == 2 ? 1 : 2;
    int64_t v = interesting[sift_mut_below(m, interesting_upto[row])];
    sift_mut_store(d + off, w, (uint64_t)v, sift_mut_below(m, 2));
    return size;
}

static size_t op_change_bin_int(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    size_t w = pick_width(m, size, 3), off = sift_mut_below(m, size - w + 1);
    bool big = sift_mut_below(m, 2);
    uint64_t v;
    switch (sift_mut_below(m, 3)) {
    case 0: /* a length field counting the bytes that follow it */
        v = size - off - w;
        break;
    case 1:
        v = sift_rng_next(m->rng);
        break;
    default:
        v = -sift_mut_load(d + off, w, big);
        break;
    }
    sift_mut_store(d + off, w, v, big);
    return size;
}

static size_t op_insert_byte(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    if (size >= max) return 0;
    size_t pos = sift_mut_below(m, size + 1);
    memmove(d + pos + 1, d + pos, size - pos);
    d[pos] = (uint8_t)sift_mut_below(m, 256);
    return size + 1;
}

static size_t op_insert_repeated(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    if (size >= max) return 0;
    size_t n = 3 + sift_mut_below(m, 126), pos = sift_mut_below(m, size + 1);
    if (n > max - size) n = max - size;
    uint8_t b = sift_mut_below(m, 2)   ? (uint8_t)sift_mut_below(m, 256)
                : sift_mut_below(m, 2) ? 0xff
                                       : 0;
    memmove(d + pos + n, d + pos, size - pos);
    memset(d + pos, b, n);
    return size + n;
}

static size_t op_erase_bytes(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    if (size < 2) return 0;
    size_t n = 1 + sift_mut_below(m, size / 2), pos = sift_mut_below(m, size - n + 1);
    memmove(d + pos, d + pos + n, size - pos - n);
    return size - n;
}

/* Inserts a copy of d[from, from + n) at TO without scratch memory: after the tail moves up,
 * the part of the source at or past TO has moved with it. */
static void insert_copy(uint8_t *d, size_t size, size_t from, size_t n, size_t to)
{
    memmove(d + to + n, d + to, size - to);
    if (from >= to) {
        memcpy(d + to, d + from + n, n);
    } else if (from + n <= to) {
        memcpy(d + to, d + from, n);
    } else {
        size_t head = to - from;
        memcpy(d + to, d + from, head);
        memcpy(d + to + head, d + to + n, n - head);
    }
}

static size_t op_copy_part(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    if (size < 2) return 0;
    if (size < max && sift_mut_below(m, 2)) {
        size_t room = max - size < size ? max - size : size;
        size_t n = 1 + sift_mut_below(m, room), from = sift_mut_below(m, size - n + 1);
        insert_copy(d, size, from, n, sift_mut_below(m, size + 1));
        return size + n;
    }
    size_t n = 1 + sift_mut_below(m, size - 1), from = sift_mut_below(m, size - n + 1);
    size_t to = sift_mut_below(m, size - n);
    if (to >= from) to++;
    memmove(d + to, d + from, n);
    return size;
}

static size_t op_shuffle_bytes(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    (void)max;
    if (size < 2) return 0;
    size_t n = 2 + sift_mut_below(m, (size < 8 ? size : 8) - 1);
    uint8_t *p = d + sift_mut_below(m, size - n + 1);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = sift_mut_below(m, i + 1);
        uint8_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return size;
}

static size_t op_change_ascii_int(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    size_t start = sift_mut_below(m, size), b = start;
    while (b < size && !sift_mut_is_digit(d[b]))
        b++;
    if (b == size) {
        for (b = 0; b < start && !sift_mut_is_digit(d[b]); b++)
            ;
        if (b == start) return 0;
    }
    while (b > 0 && sift_mut_is_digit(d[b - 1]))
        b--;
    /* 19 digits always fit in 64 bits; longer runs change in their leading part. */
    size_t e = b;
    while (e < size && e - b < 19 && sift_mut_is_digit(d[e]))
        e++;
    uint64_t v = 0;
    for (size_t i = b; i < e; i++)
        v = v * 10 + (d[i] - '0');
    switch (sift_mut_below(m, 5)) {
    case 0:
        v++;
        break;
    case 1:
        v = v ? v - 1 : 1;
        break;
    case 2:
        v /= 2;
        break;
    case 3:
        v *= 2;
        break;
    default:
        v = v <= UINT32_MAX ? sift_mut_below(m, v * v + 1) : sift_rng_next(m->rng);
        break;
    }
    char digits[20];
    size_t n = sift_mut_utoa(v, digits);
    size_t r = sift_mut_replace(d, size, max, b, e - b, digits, n);
    if (r) return r;
    /* No room to grow: keep the width and its low digits, zero-padded. */
    for (size_t i = e; i > b; i--)
        d[i - 1] = (uint8_t)(n ? digits[--n] : '0');
    return size;
}

/* Weights, out of 100. libFuzzer picks uniformly among its mutators and AFL's havoc stacks
 * 2..128 of them; we take the middle road: a stack of 1..5 (geometric, mean about 2) so that
 * most children stay one step from their parent, where coverage feedback can tell which step
 * helped, while the occasional deeper stack jumps further. The byte-level operators share
 * about half the weight. The token operators (dictionary, comparison operands) and crossover
 * get more than a uniform share because they solve what blind bytes practically never do
 * (magic values, keywords, recombining two partial solutions); when one has nothing to work
 * with (no dictionary, no comparisons, no other input) it declines and its share goes to a
 * fresh pick, so plain byte fuzzing loses nothing. Erasing is weighted against the several
 * operators that grow the input, so that lengths drift only as far as max_size lets them. */
static const struct {
    op_fn fn;
    const char *name;
    unsigned weight;
} ops[] = {
    {op_change_bit, "ChangeBit", 7},        {op_change_byte, "ChangeByte", 7},
    {op_add_sub_int, "AddSubInt", 7},       {op_interesting_int, "InterestingInt", 6},
    {op_change_bin_int, "ChangeBinInt", 4}, {op_change_ascii_int, "ChangeASCIIInt", 4},
    {op_insert_byte, "InsertByte", 5},      {op_insert_repeated, "InsertRepeatedBytes", 4},
    {op_erase_bytes, "EraseBytes", 8},      {op_copy_part, "CopyPart", 7},
    {op_shuffle_bytes, "ShuffleBytes", 3},  {sift_mut_crossover, "CrossOver", 10},
    {sift_mut_dict, "ManualDict", 12},      {sift_mut_cmp, "CMP", 16},
};
#define NOPS      (sizeof(ops) / sizeof(ops[0]))
#define MAX_DEPTH 5
/* Picks per stack slot before giving up on it; only tiny inputs at max_size decline often. */
#define MAX_TRIES 8

static size_t pick_op(sift_mutator *m)
{
    unsigned total = 0;
    for (size_t i = 0; i < NOPS; i++)
        total += ops[i].weight;
    unsigned r = (unsigned)sift_mut_below(m, total);
    size_t i = 0;
    while (r >= ops[i].weight)
        r -= ops[i++].weight;
    return i;
}

static void trace_add(sift_mutator *m, size_t *len, const char *name)
{
    size_t n = strlen(name);
    if (*len + n + 2 > sizeof(m->trace)) return;
    memcpy(m->trace + *len, name, n);
    m->trace[*len + n] = '-';
    m->trace[*len + n + 1] = '\0';
    *len += n + 1;
}

/* libFuzzer's ToASCII, except that only \t, \n and \r survive among the control bytes. */
static void to_ascii(uint8_t *d, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        uint8_t c = d[i] & 0x7f;
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) c = ' ';
        d[i] = c;
    }
}

size_t sift_mutate(sift_mutator *m, uint8_t *data, size_t size, size_t max_size)
{
    size_t tlen = 0;
    m->trace[0] = '\0';
    m->ntokens = 0;
    if (!max_size) return 0;
    if (size > max_size) size = max_size;
    /* 1 + trailing zero bits of a random word, capped: 1/2, 1/4, 1/8, 1/16, 1/16. */
    uint64_t r = sift_rng_next(m->rng) | (uint64_t)1 << (MAX_DEPTH - 1);
    unsigned depth = 1 + (unsigned)__builtin_ctzll(r);
    if (m->max_depth && depth > m->max_depth) depth = m->max_depth;
    bool applied = false;
    if (!size) {
        bool repeated = sift_mut_below(m, 2);
        size = repeated ? op_insert_repeated(m, data, 0, max_size)
                        : op_insert_byte(m, data, 0, max_size);
        trace_add(m, &tlen, repeated ? "InsertRepeatedBytes" : "InsertByte");
        applied = true;
        depth--;
    }
    for (unsigned k = 0; k < depth; k++) {
        for (unsigned t = 0; t < MAX_TRIES; t++) {
            size_t i = pick_op(m), n = ops[i].fn(m, data, size, max_size);
            if (n) {
                size = n;
                trace_add(m, &tlen, ops[i].name);
                applied = true;
                break;
            }
        }
    }
    if (!applied) {
        size = op_change_bit(m, data, size, max_size);
        trace_add(m, &tlen, "ChangeBit");
    }
    if (m->only_ascii) to_ascii(data, size);
    return size;
}
