/* Reads of memory that may not be mapped: a field behind a pointer argument that may dangle. */
#ifndef SIFT_PEEK_H
#define SIFT_PEEK_H

#include "rt/rt.h"

#include <stdbool.h>
#include <stdint.h>

/* Puts the fault handler that sift_peek recovers with in front of the SIGSEGV and SIGBUS
 * handlers in place now; any other fault goes on to them. Call it after whatever else installs
 * handlers for these signals (the engine's, a sanitizer's); a second call puts it in front
 * again. Returns whether sift_peek may be used. */
bool sift_peek_install(void);

/* Reads WIDTH (1, 2, 4 or 8) bytes at ADDR into *OUT, zero-extended. Returns false, without
 * side effects, when they are not readable or sift_peek_install has not succeeded for RT. */
bool sift_peek(const sift_rt_state *rt, uintptr_t addr, unsigned width, uint64_t *out);

/* Whether a peek from LO up to HI may be tried: the first page is never mapped for a reason,
 * and no user address lies this high, so a signal round trip would only confirm it. */
static inline bool sift_peek_may(const sift_rt_state *rt, uintptr_t lo, uintptr_t hi)
{
    return __atomic_load_n(&rt->peek_ready, __ATOMIC_ACQUIRE) && lo >= 4096 &&
           hi <= (uintptr_t)1 << 56;
}

/* 0 when the bytes at FIRST and LAST are both readable, else 1: two loads, either of which
 * may fault (peek.c). */
int sift_peek_ends(uintptr_t first, uintptr_t last);

/* sift_peek_span for spans longer than a page: a peek per page. */
bool sift_peek_pages(const sift_rt_state *rt, uintptr_t lo, uintptr_t hi);

/* Whether the bytes from LO up to HI are all readable now. Memory is mapped in pages of at
 * least 4 KiB: one byte of each page tells for all, and the first and the last byte of a span
 * of up to a page touch each of its (at most two) pages. Inline: instrumented code asks about
 * the fields of a struct on every call it samples (a thousand spans per harfbuzz execution),
 * and the frame of an out-of-line check, its registers saved, cost more than the loads. */
static inline bool sift_peek_span(const sift_rt_state *rt, uintptr_t lo, uintptr_t hi)
{
    if (lo >= hi || !sift_peek_may(rt, lo, hi)) return false;
    if (hi - lo <= 4096) return sift_peek_ends(lo, hi - 1) == 0;
    return sift_peek_pages(rt, lo, hi);
}

/* Reads WIDTH (1, 2, 4 or 8) bytes at ADDR, zero-extended, where sift_peek_span has just found
 * them readable: a plain load, which the memory a sanitizer has poisoned must not stop. The
 * memory could only have gone meanwhile if another thread unmapped it, which the target would
 * be about to use after its release anyway. */
__attribute__((no_sanitize("address", "hwaddress", "memory", "thread"))) static inline uint64_t
sift_peek_read(uintptr_t addr, unsigned width)
{
    const void *p = (const void *)addr;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (width) {
    case 1:
        __builtin_memcpy(&u8, p, 1);
        return u8;
    case 2:
        __builtin_memcpy(&u16, p, 2);
        return u16;
    case 4:
        __builtin_memcpy(&u32, p, 4);
        return u32;
    default:
        __builtin_memcpy(&u64, p, 8);
        return u64;
    }
}

#endif
