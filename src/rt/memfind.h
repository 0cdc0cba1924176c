/* Substring search for the interposed memmem and strstr (rt/interpose) and for the mutator,
 * which looks for comparison operands in inputs of up to megabytes on every input-to-state
 * mutation. Both are linked where libc's memmem is replaced by the interposer, so neither may
 * call memmem itself; memchr, which libc keeps, finds the candidates. Header-only, so that the
 * interposer's library needs no other of sift's to link. */
#ifndef SIFT_RT_MEMFIND_H
#define SIFT_RT_MEMFIND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Rabin-Karp with a rolling hash modulo 2^64: linear whatever the bytes. */
static inline const uint8_t *sift_memfind_hashed(const uint8_t *hay, size_t hay_len,
                                                 const uint8_t *needle, size_t needle_len)
{
    if (needle_len == 0) return hay;
    if (hay_len < needle_len) return NULL;
    const uint64_t base = 0x100000001b3ull;
    uint64_t want = 0, have = 0, top = 1;
    for (size_t i = 0; i < needle_len; i++) {
        want = want * base + needle[i];
        have = have * base + hay[i];
        if (i > 0) top *= base;
    }
    for (size_t i = 0;; i++) {
        if (have == want) {
            size_t k = 0;
            while (k < needle_len && hay[i + k] == needle[k])
                k++;
            if (k == needle_len) return hay + i;
        }
        if (i + needle_len == hay_len) return NULL;
        have = (have - hay[i] * top) * base + hay[i + needle_len];
    }
}

/* Haystacks shorter than this are searched from the needle's first byte: sampling would cost
 * more than the search. */
#define SIFT_MEMFIND_SAMPLE_FROM 1024

/* The needle's byte that memchr looks for: of its first 16, the one seen least often in 64 bytes
 * spread over a long haystack. No fixed choice fits every input: the first byte alone made a
 * candidate of every zero of a font file (zeros begin the big-endian forms of small integers),
 * and the first byte other than 0 and 0xff was slower than it on another font. */
static inline size_t sift_memfind_anchor(const uint8_t *hay, size_t hay_len, const uint8_t *needle,
                                         size_t needle_len)
{
    if (hay_len < SIFT_MEMFIND_SAMPLE_FROM) return 0;
    size_t best = 0, best_seen = SIZE_MAX, stride = hay_len / 64;
    for (size_t i = 0; i < needle_len && i < 16 && best_seen; i++) {
        size_t seen = 0;
        for (size_t at = i; at < hay_len; at += stride)
            seen += hay[at] == needle[i];
        if (seen < best_seen) {
            best_seen = seen;
            best = i;
        }
    }
    return best;
}

/* The first occurrence of NEEDLE in HAY, or NULL, with candidates from memchr on the needle's
 * byte ANCHOR, which skips most of a haystack at vector speed; once verifying candidates has
 * compared more bytes than the haystack holds (a fuzzed "aaaa...a" against "aa...ab"), the
 * rest of the search hashes, so that no input makes it quadratic. */
static inline const uint8_t *sift_memfind_by(const uint8_t *hay, size_t hay_len,
                                             const uint8_t *needle, size_t needle_len,
                                             size_t anchor)
{
    if (needle_len == 0) return hay;
    if (hay_len < needle_len) return NULL;
    const uint8_t *last = hay + (hay_len - needle_len);
    size_t budget = hay_len;
    for (const uint8_t *p = hay; p <= last; p++) {
        const uint8_t *at = memchr(p + anchor, needle[anchor], (size_t)(last - p) + 1);
        if (!at) return NULL;
        p = at - anchor;
        size_t k = 0;
        while (k < needle_len && p[k] == needle[k])
            k++;
        if (k == needle_len) return p;
        if (k >= budget)
            return sift_memfind_hashed(p + 1, (size_t)(hay + hay_len - p) - 1, needle, needle_len);
        budget -= k + 1;
    }
    return NULL;
}

/* The first occurrence of NEEDLE in HAY, or NULL, anchored by sift_memfind_anchor. */
static inline const uint8_t *sift_memfind(const uint8_t *hay, size_t hay_len, const uint8_t *needle,
                                          size_t needle_len)
{
    return sift_memfind_by(hay, hay_len, needle, needle_len,
                           sift_memfind_anchor(hay, hay_len, needle, needle_len));
}

#endif
