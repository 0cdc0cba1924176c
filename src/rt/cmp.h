/* The comparison feedback's table of recent operands, as the process-wide state (rt.h) holds
 * it and the mutator's input-to-state operator reads it: types only, so that the state depends
 * on the comparison feedback's data and the feedback's code (cmp.c) on the state, one way. */
#ifndef SIFT_RT_CMP_H
#define SIFT_RT_CMP_H

#include <stdint.h>

/* Recent comparison operands, for input-to-state mutation: integer pairs and byte strings
 * (memcmp, strcmp, ...). Fixed-size rings, overwritten oldest first; no locks. A comparison site
 * keeps one byte-string entry, refreshed in place (as libFuzzer's table of recent compares keys
 * its entries by site): a site that fails on nearly every execution, as the first check of a
 * harness does on most mutants, would otherwise flush every other site's operands out of the
 * ring, and a deep comparison reached by few inputs would rarely be there to be picked. */
#define SIFT_CMP_INTS    512
#define SIFT_CMP_BYTES   128
#define SIFT_CMP_BYTELEN 64

typedef struct {
    uint64_t a, b;
    uint8_t size; /* operand width in bytes: 1, 2, 4 or 8 */
} sift_cmp_int;

typedef struct {
    uint8_t a[SIFT_CMP_BYTELEN], b[SIFT_CMP_BYTELEN];
    uint8_t len;    /* bytes compared, at most SIFT_CMP_BYTELEN */
    uintptr_t site; /* the comparison's call site */
    /* Where A lies in the input that ran, when it lies there (SIFT_CMP_NOWHERE when not): the
     * place to write B in a mutant of that input, where a search for A would fail as soon as
     * the mutant's bytes there differ from the ones compared. */
    uint32_t at;
} sift_cmp_bytes;

#define SIFT_CMP_NOWHERE UINT32_MAX

#define SIFT_CMP_SITES 256 /* slots of the site index of the byte ring, a power of two */

typedef struct {
    sift_cmp_int ints[SIFT_CMP_INTS];
    sift_cmp_bytes bytes[SIFT_CMP_BYTES];
    uint32_t int_next, byte_next; /* ring positions; grow forever, wrap by mask */
    /* By hash of a site: 1 + the ring position of its entry, or 0; checked against the entry's
     * site, since two sites may share a slot. */
    uint8_t byte_at[SIFT_CMP_SITES];
} sift_cmp_table;

#endif
