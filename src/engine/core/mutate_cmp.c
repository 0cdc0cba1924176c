/* Operators that bring in bytes from elsewhere: another corpus input (crossover), the user's
 * dictionary, and the operands of recent comparisons (input-to-state replacement). */
#include "engine/base/ngrams.h"
#include "engine/core/mutate_ops.h"
#include "rt/memfind.h"

#include <stdio.h>
#include <string.h>

#define NOT_FOUND SIZE_MAX

/* Writes TOK (N bytes) at a random place, inserting or overwriting. An overwrite may run past
 * the end of a short input, since a token cut to fit would be worthless. */
static size_t place(sift_mutator *m, uint8_t *d, size_t size, size_t max, const void *tok, size_t n)
{
    if (!n || n > max) return 0;
    if (size + n <= max && (n > size || sift_mut_below(m, 2))) {
        size_t pos = sift_mut_below(m, size + 1);
        memmove(d + pos + n, d + pos, size - pos);
        memcpy(d + pos, tok, n);
        return size + n;
    }
    size_t last = n <= size ? size - n : (max - n < size ? max - n : size);
    size_t pos = sift_mut_below(m, last + 1);
    memcpy(d + pos, tok, n);
    return pos + n > size ? pos + n : size;
}

/* Keeps the token TOK (N bytes) that a mutation wrote: the status line's DE: and the recommended
 * dictionary. */
static void note_token(sift_mutator *m, const uint8_t *tok, size_t n)
{
    if (m->ntokens >= SIFT_MUT_TOKENS || !n || n > SIFT_DICT_MAX_ENTRY) return;
    memcpy(m->tokens[m->ntokens].data, tok, n);
    m->tokens[m->ntokens++].len = (uint8_t)n;
}

/* First occurrence of NEEDLE (N bytes) at or after START, wrapping around to the beginning, so
 * that repeated calls do not always hit the first copy. */
static size_t find(const uint8_t *d, size_t size, const void *needle, size_t n, size_t start)
{
    if (!n || n > size) return NOT_FOUND;
    const uint8_t *hit = sift_memfind(d + start, size - start, needle, n);
    if (!hit) {
        size_t end = start + n - 1 < size ? start + n - 1 : size;
        hit = sift_memfind(d, end, needle, n);
    }
    return hit ? (size_t)(hit - d) : NOT_FOUND;
}

size_t sift_mut_dict(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    if (!m->dict || !m->dict->count) return 0;
    const sift_dict_entry *e = &m->dict->entries[sift_mut_below(m, m->dict->count)];
    size_t placed = place(m, d, size, max, e->data, e->len);
    if (placed) note_token(m, e->data, e->len);
    return placed;
}

size_t sift_mut_crossover(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    size_t len = 0;
    const uint8_t *o = m->pick_other ? m->pick_other(m->pick_ctx, &len) : NULL;
    if (!o || !len) return 0;
    switch (sift_mut_below(m, 3)) {
    case 0: {
        /* Our head, then the other's tail; at the same offset half of the time, which keeps
         * fields aligned when both inputs share a layout. */
        size_t p = 1 + sift_mut_below(m, size);
        size_t q = p < len && sift_mut_below(m, 2) ? p : sift_mut_below(m, len);
        size_t n = len - q < max - p ? len - q : max - p;
        if (!n) return 0;
        memmove(d + p, o + q, n);
        return p + n;
    }
    case 1: {
        if (size >= max) return 0;
        size_t n = 1 + sift_mut_below(m, len < max - size ? len : max - size);
        size_t from = sift_mut_below(m, len - n + 1), to = sift_mut_below(m, size + 1);
        memmove(d + to + n, d + to, size - to);
        memcpy(d + to, o + from, n);
        return size + n;
    }
    default: {
        size_t n = 1 + sift_mut_below(m, len < size ? len : size);
        size_t from = sift_mut_below(m, len - n + 1), to = sift_mut_below(m, size - n + 1);
        memmove(d + to, o + from, n);
        return size;
    }
    }
}

static uint64_t width_mask(size_t w)
{
    return w == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * w)) - 1;
}

/* Decimal text of V at width W, signed when its top bit is set (atoi and friends). */
static size_t decimal(uint64_t v, size_t w, char out[21])
{
    uint64_t mask = width_mask(w), sign = mask ^ (mask >> 1);
    v &= mask;
    if (!(v & sign)) return sift_mut_utoa(v, out);
    out[0] = '-';
    return 1 + sift_mut_utoa(-v & mask, out + 1);
}

/* Whether V (width W) survives a round trip through N bytes, zero- or sign-extended. */
static bool fits(uint64_t v, size_t n, size_t w)
{
    unsigned drop = 64 - 8 * (unsigned)n;
    uint64_t sext = (uint64_t)((int64_t)(v << drop) >> drop);
    return (v & ~width_mask(n)) == 0 || (sext & width_mask(w)) == v;
}

/* First whole-number occurrence of the text S (N bytes): "5" inside "150" is another value. */
static size_t find_number(const uint8_t *d, size_t size, const char *s, size_t n)
{
    for (const uint8_t *p = d; (p = sift_memfind(p, (size_t)(d + size - p), (const uint8_t *)s, n));
         p++) {
        size_t pos = (size_t)(p - d);
        bool before = pos > 0 && sift_mut_is_digit(d[pos - 1]);
        bool after = pos + n < size && sift_mut_is_digit(d[pos + n]);
        if (!before && !after) return pos;
    }
    return NOT_FOUND;
}

/* Replaces one encoding of FROM in the input with the same encoding of TO: little endian, big
 * endian, or decimal text. 0 when no encoding of FROM occurs. GRAMS, when not NULL, holds the
 * byte pairs and triples of the input: searches they rule out are skipped, and they learn the
 * replacement's. */
static size_t replace_int(sift_mutator *m, uint8_t *d, size_t size, size_t max, uint64_t from,
                          uint64_t to, size_t w, sift_ngrams *grams)
{
    /* A single byte has one binary form, and its decimal form matches far too much text. */
    unsigned nenc = w == 1 ? 1 : 3, first = (unsigned)sift_mut_below(m, nenc);
    size_t start = sift_mut_below(m, size);
    for (unsigned k = 0; k < nenc; k++) {
        unsigned enc = (first + k) % nenc;
        char f[21], t[21];
        size_t fn = w, tn = w, pos;
        if (enc < 2) {
            sift_mut_store((uint8_t *)f, w, from, enc);
            sift_mut_store((uint8_t *)t, w, to, enc);
        } else {
            fn = decimal(from, w, f);
            tn = decimal(to, w, t);
        }
        if (grams && !sift_ngrams_may_hold(grams, (const uint8_t *)f, fn)) continue;
        pos = enc < 2 ? find(d, size, f, fn, start) : find_number(d, size, f, fn);
        if (pos != NOT_FOUND) {
            size_t r = sift_mut_replace(d, size, max, pos, fn, t, tn);
            if (r) {
                if (grams) sift_ngrams_add(grams, d, r, pos >= 2 ? pos - 2 : 0, pos + tn);
                note_token(m, (const uint8_t *)t, tn);
                return r;
            }
        }
    }
    return 0;
}

static size_t cmp_int(sift_mutator *m, uint8_t *d, size_t size, size_t max, sift_cmp_int e)
{
    size_t w = e.size;
    uint64_t mask = width_mask(w), x = e.a & mask, y = e.b & mask;
    if (sift_mut_below(m, 2)) {
        uint64_t t = x;
        x = y;
        y = t;
    }
    /* Inputs often hold a value in fewer bytes than the program compares it in. */
    size_t n = w;
    while (n > 1 && fits(x, n / 2, w) && fits(y, n / 2, w))
        n /= 2;
    if (n < w && sift_mut_below(m, 2)) {
        w = n;
        mask = width_mask(n);
    }
    /* SHIFT: the program may compare a value derived from the input by +-1 (a loop bound, a
     * "< N" written as "<= N - 1"); NUDGE: for an ordering compare, the far side of it. */
    uint64_t shift = sift_mut_below(m, 4) ? 0 : sift_mut_below(m, 2) ? 1 : (uint64_t)-1;
    uint64_t nudge = sift_mut_below(m, 4) ? 0 : sift_mut_below(m, 2) ? 1 : (uint64_t)-1;
    for (int pass = 0; pass < 2; pass++) {
        size_t r =
            replace_int(m, d, size, max, (x + shift) & mask, (y + shift + nudge) & mask, w, NULL);
        if (r) return r;
        uint64_t t = x;
        x = y;
        y = t;
    }
    /* Nowhere to put it in place: add it as a token, as libFuzzer's CMP dictionary does. */
    char tok[21];
    size_t tn = w;
    if (w > 1 && !sift_mut_below(m, 4))
        tn = decimal(y + nudge, w, tok);
    else
        sift_mut_store((uint8_t *)tok, w, y + nudge, sift_mut_below(m, 2));
    size_t placed = place(m, d, size, max, tok, tn);
    if (placed) note_token(m, (const uint8_t *)tok, tn);
    return placed;
}

/* A string compare reports its terminator too, which belongs in the input only when the string
 * has to end there: TRIM drops trailing NULs. */
static size_t token_len(const uint8_t *s, size_t n, bool trim)
{
    while (trim && n > 1 && !s[n - 1])
        n--;
    return n;
}

static size_t cmp_bytes(sift_mutator *m, uint8_t *d, size_t size, size_t max,
                        const sift_cmp_bytes *e)
{
    const uint8_t *x = e->a, *y = e->b;
    size_t n = e->len;
    /* Where the input's operand was, in the input that ran: most mutants keep its place. At
     * the input's end, the other operand is appended (a search that found nothing). */
    if (e->at != SIFT_CMP_NOWHERE && e->at <= size && sift_mut_below(m, 4)) {
        size_t yn = token_len(y, n, sift_mut_below(m, 2));
        if (e->at + yn <= max) {
            memcpy(d + e->at, y, yn);
            note_token(m, y, yn);
            return e->at + yn > size ? e->at + yn : size;
        }
    }
    if (sift_mut_below(m, 2)) {
        const uint8_t *t = x;
        x = y;
        y = t;
    }
    bool trim = sift_mut_below(m, 2);
    for (int pass = 0; pass < 2; pass++) {
        /* A terminated copy of input bytes ends in a NUL that the input does not hold. */
        size_t xn = token_len(x, n, trim), yn = token_len(y, n, trim);
        size_t pos = find(d, size, x, xn, sift_mut_below(m, size));
        if (pos == NOT_FOUND) {
            /* The compare may have read past the input's end (its copy, or a terminator). */
            for (size_t k = xn - 1 < size ? xn - 1 : size; k > 0 && pos == NOT_FOUND; k--)
                if (!memcmp(d + size - k, x, k)) pos = size - k;
        }
        if (pos != NOT_FOUND && pos + yn <= max) {
            memcpy(d + pos, y, yn);
            note_token(m, y, yn);
            return pos + yn > size ? pos + yn : size;
        }
        const uint8_t *t = x;
        x = y;
        y = t;
    }
    size_t placed = place(m, d, size, max, y, token_len(y, n, trim));
    if (placed) note_token(m, y, token_len(y, n, trim));
    return placed;
}

size_t sift_mut_cmp(sift_mutator *m, uint8_t *d, size_t size, size_t max)
{
    const sift_cmp_table *t = m->cmps;
    if (!t) return 0;
    size_t ni = t->int_next < SIFT_CMP_INTS ? t->int_next : SIFT_CMP_INTS;
    size_t nb = t->byte_next < SIFT_CMP_BYTES ? t->byte_next : SIFT_CMP_BYTES;
    if (!ni && !nb) return 0;
    bool ints = ni && (!nb || sift_mut_below(m, 2));
    /* A few draws, since a ring can hold entries that say nothing (equal operands). */
    for (int tries = 0; tries < 4; tries++) {
        if (ints) {
            sift_cmp_int e = t->ints[sift_mut_below(m, ni)];
            bool width_ok = e.size == 1 || e.size == 2 || e.size == 4 || e.size == 8;
            if (width_ok && ((e.a ^ e.b) & width_mask(e.size))) return cmp_int(m, d, size, max, e);
        } else {
            const sift_cmp_bytes *e = &t->bytes[sift_mut_below(m, nb)];
            if (e->len && e->len <= SIFT_CMP_BYTELEN && memcmp(e->a, e->b, e->len) != 0)
                return cmp_bytes(m, d, size, max, e);
        }
    }
    return 0;
}

/* One integer pair of the input that ran, applied to that input: the input's side (either one,
 * in any encoding or the narrower width both values fit) replaced by the other. */
static size_t apply_pair(sift_mutator *m, uint8_t *d, size_t size, size_t max, sift_cmp_int e,
                         sift_ngrams *grams)
{
    size_t w = e.size;
    if (w != 2 && w != 4 && w != 8) return 0;
    uint64_t mask = width_mask(w), x = e.a & mask, y = e.b & mask;
    if (x == y) return 0;
    size_t n = w;
    while (n > 1 && fits(x, n / 2, w) && fits(y, n / 2, w))
        n /= 2;
    for (size_t width = w;; width = n) {
        uint64_t wm = width_mask(width);
        size_t r = replace_int(m, d, size, max, x & wm, y & wm, width, grams);
        if (!r) r = replace_int(m, d, size, max, y & wm, x & wm, width, grams);
        if (r || width == n) return r;
    }
}

#define AGAIN_SLOT_BITS 8
#define AGAIN_SLOTS     (1u << AGAIN_SLOT_BITS)

size_t sift_mutate_cmp_again(sift_mutator *m, uint8_t *data, size_t size, size_t max_size,
                             uint32_t since)
{
    const sift_cmp_table *t = m->cmps;
    if (!t || !size || size > max_size) return 0;
    uint32_t end = t->int_next, count = end - since;
    if (!count) return 0;
    if (count > SIFT_CMP_INTS) since = end - SIFT_CMP_INTS;
    bool applied = false;
    /* One input's compares repeat (a loop compares each record with the same constant), and a
     * pair's every search costs several scans of the input: each pair is applied once. A pair
     * that evicts another from its slot may let that one be applied twice, which is harmless. */
    uint64_t done[AGAIN_SLOTS] = {0};
    sift_ngrams grams;
    sift_ngrams_of(&grams, data, size);
    for (uint32_t k = since; k != end; k++) {
        sift_cmp_int e = t->ints[k & (SIFT_CMP_INTS - 1)];
        uint64_t key = ((e.a * 0x9E3779B97F4A7C15ull) ^ e.b) * 0xC2B2AE3D27D4EB4Full + e.size;
        uint64_t *slot = &done[key >> (64 - AGAIN_SLOT_BITS)];
        if (*slot == (key | 1)) continue;
        *slot = key | 1;
        size_t r = apply_pair(m, data, size, max_size, e, &grams);
        if (r) {
            size = r;
            applied = true;
        }
    }
    if (!applied) return 0;
    snprintf(m->trace, sizeof m->trace, "CMP-All-");
    return size;
}
