/* Comparison feedback: value-profile features in the CMP domain, and the operand rings that
 * input-to-state mutation reads. Every function here runs on the target's hot path: no locks,
 * no allocation, and no call into a libc function that the interposed comparisons or the
 * sanitizer hooks would route back here. */
#include "rt/rt.h"
#include "abi/cmp_gate_abi.h"

#include <sanitizer/common_interface_defs.h>
#include <string.h>

#define CMP_MASK ((size_t)SIFT_RT_CMP_COUNTERS - 1)
#define CMP_BITS __builtin_ctz(SIFT_RT_CMP_COUNTERS)

_Static_assert((SIFT_RT_CMP_COUNTERS & CMP_MASK) == 0, "CMP domain size must be a power of two");
_Static_assert((SIFT_CMP_INTS & (SIFT_CMP_INTS - 1)) == 0, "int ring must be a power of two");
_Static_assert((SIFT_CMP_BYTES & (SIFT_CMP_BYTES - 1)) == 0, "byte ring must be a power of two");
_Static_assert(SIFT_CMP_BYTELEN <= 255, "byte ring entries store their length in a byte");

/* Slots of one comparison site. The site's base index is followed by one counter per distance
 * value: the number of differing bits of two integers (0..64), then the number of differing
 * bytes (0..8), then the bit length of their numeric distance (0..64). A byte-string site uses the
 * slots for the number of leading equal bytes, and FOUND_SLOT when a search (strstr, memmem)
 * succeeded. */
#define BYTE_DIST_SLOT 65
#define NUM_DIST_SLOT  74
#define FOUND_SLOT     (SIFT_CMP_BYTELEN + 1)

/* The ELF header of the module that holds the runtime, normally the executable. A site is its
 * pc relative to this load address, so that it keeps its index across processes despite ASLR:
 * runs with the same seed replay the same campaign, and processes sharing a snapshot agree on
 * what is new. (Sites in other shared objects still move with those objects' bases.) */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* Fibonacci hashing: call sites are distinct but cluster in a few low bits of one code
 * segment, and a single multiply spreads them over the whole domain (the high bits of the
 * product are the well-mixed ones). A stronger hash would buy nothing here: the keys are not
 * chosen by an adversary, and this runs on every comparison. */
SIFT_RT_NOINSTR static inline size_t site(uintptr_t pc)
{
    uint64_t offset = (uint64_t)(pc - (uintptr_t)__ehdr_start);
    return (size_t)((offset * 0x9E3779B97F4A7C15ull) >> (64 - CMP_BITS));
}

SIFT_RT_NOINSTR static inline void hit(sift_rt_state *rt, uintptr_t pc, size_t slot)
{
    if (!rt->cmp_features_off) sift_hit(&rt->cmp, (site(pc) + slot) & CMP_MASK);
}

SIFT_RT_NOINSTR static inline uint64_t width_mask(uint8_t size)
{
    return size >= 8 ? ~0ull : (1ull << (size * 8)) - 1;
}

/* Three features per comparison, so that operands approaching each other bit by bit, byte by
 * byte (in whichever order the input's bytes reach them) or in value, as libFuzzer's absolute
 * distance, each reach a counter never hit before: a value the program computes from several
 * input bytes (a sum, a product) comes closer in value long before its bits line up. Operands
 * are already masked to their width. */
SIFT_RT_NOINSTR static inline void int_features(sift_rt_state *rt, uintptr_t pc, uint64_t a,
                                                uint64_t b)
{
    if (rt->cmp_features_off) return;
    uint64_t x = a ^ b;
    uint64_t nonzero = x | x >> 4;
    nonzero |= nonzero >> 2;
    nonzero |= nonzero >> 1;
    hit(rt, pc, (size_t)__builtin_popcountll(x));
    hit(rt, pc, BYTE_DIST_SLOT + (size_t)__builtin_popcountll(nonzero & 0x0101010101010101ull));
    uint64_t gap = a > b ? a - b : b - a;
    hit(rt, pc, NUM_DIST_SLOT + (gap ? 64 - (size_t)__builtin_clzll(gap) : 0));
}

/* A pair teaches input-to-state nothing when the operands are equal (the comparison already
 * succeeds) or when both are 0, 1 or all ones: such flag and error-code tests match too many
 * input bytes to say where to write, and plain bit flips reach them anyway. */
SIFT_RT_NOINSTR static inline bool trivial(uint64_t a, uint64_t b, uint64_t mask)
{
    return a == b || ((a <= 1 || a == mask) && (b <= 1 || b == mask));
}

/* Consecutive duplicates are dropped so that one comparison in a loop cannot flush the ring.
 * Concurrent threads may race on the position: a lost or torn entry only costs a mutation
 * hint, and the mask keeps every write inside the ring. */
SIFT_RT_NOINSTR static inline void push_int(sift_cmp_table *t, uint64_t a, uint64_t b, uint8_t size)
{
    uint32_t n = t->int_next;
    const sift_cmp_int *last = &t->ints[(n - 1) & (SIFT_CMP_INTS - 1)];
    if (last->a == a && last->b == b && last->size == size) return;
    t->ints[n & (SIFT_CMP_INTS - 1)] = (sift_cmp_int){.a = a, .b = b, .size = size};
    t->int_next = n + 1;
}

SIFT_RT_NOINSTR static inline size_t site_slot(uintptr_t pc)
{
    return (size_t)(((uint64_t)pc * 0x9E3779B97F4A7C15ull) >> 56) & (SIFT_CMP_SITES - 1);
}

/* The entry of site PC takes the operands in place; a site without one appends to the ring. */
SIFT_RT_NOINSTR static void push_bytes(sift_cmp_table *t, uintptr_t pc, const uint8_t *a,
                                       const uint8_t *b, size_t len, uint32_t at)
{
    uint8_t *slot = &t->byte_at[site_slot(pc)];
    sift_cmp_bytes *e = *slot ? &t->bytes[*slot - 1] : NULL;
    if (!e || e->site != pc) {
        uint32_t n = t->byte_next;
        e = &t->bytes[n & (SIFT_CMP_BYTES - 1)];
        /* The site whose entry this was loses it. */
        uint8_t *old = &t->byte_at[site_slot(e->site)];
        if (e->len && *old == (n & (SIFT_CMP_BYTES - 1)) + 1) *old = 0;
        *slot = (uint8_t)((n & (SIFT_CMP_BYTES - 1)) + 1);
        e->site = pc;
        t->byte_next = n + 1;
    }
    for (size_t i = 0; i < len; i++) {
        e->a[i] = a[i];
        e->b[i] = b[i];
    }
    e->len = (uint8_t)len;
    e->at = at;
}

/* Where LEN bytes at P lie in the input that runs, or SIFT_CMP_NOWHERE. */
SIFT_RT_NOINSTR static uint32_t input_offset(const sift_rt_state *rt, const uint8_t *p, size_t len)
{
    uintptr_t from = (uintptr_t)rt->input, x = (uintptr_t)p;
    if (!rt->input || x < from || x - from > rt->input_size || len > rt->input_size - (x - from) ||
        x - from >= SIFT_CMP_NOWHERE)
        return SIFT_CMP_NOWHERE;
    return (uint32_t)(x - from);
}

SIFT_RT_NOINSTR static inline uint8_t fold_ascii(uint8_t c)
{
    return c >= 'A' && c <= 'Z' ? c | 0x20 : c;
}

SIFT_RT_NOINSTR static size_t equal_prefix(const uint8_t *a, const uint8_t *b, size_t len,
                                           bool fold)
{
    size_t i = 0;
    if (fold)
        while (i < len && fold_ascii(a[i]) == fold_ascii(b[i]))
            i++;
    else
        while (i < len && a[i] == b[i])
            i++;
    return i;
}

SIFT_RT_NOINSTR static inline size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Only the first SIFT_CMP_BYTELEN bytes go to the ring; when they are all equal the difference
 * lies beyond what an entry can carry, and the entry is left out. */
SIFT_RT_NOINSTR static void record_bytes(sift_rt_state *rt, uintptr_t pc, const uint8_t *a,
                                         const uint8_t *b, size_t len, bool fold)
{
    size_t eq = equal_prefix(a, b, len, fold);
    hit(rt, pc, eq);
    size_t keep = min_size(len, SIFT_CMP_BYTELEN);
    if (!rt->tracing || eq >= keep) return;
    /* The input's side goes first, as in the integer ring. */
    uint32_t at = input_offset(rt, a, keep);
    if (at == SIFT_CMP_NOWHERE && (at = input_offset(rt, b, keep)) != SIFT_CMP_NOWHERE) {
        const uint8_t *t = a;
        a = b;
        b = t;
    }
    push_bytes(&rt->cmps, pc, a, b, keep, at);
}

/* A failed search scores the longest prefix of the needle (up to SIFT_CMP_BYTELEN bytes) found
 * anywhere in the haystack, and offers the haystack bytes at that spot for replacement by the
 * needle, which is where the fewest input bytes have to change. */
SIFT_RT_NOINSTR static void record_search(sift_rt_state *rt, uintptr_t pc, const uint8_t *hay,
                                          size_t hay_len, const uint8_t *needle, size_t needle_len,
                                          bool found, bool fold)
{
    if (found) {
        hit(rt, pc, FOUND_SLOT);
        return;
    }
    size_t cap = min_size(needle_len, SIFT_CMP_BYTELEN), best = 0, at = 0;
    for (size_t i = 0; i < hay_len && best < cap; i++) {
        size_t k = equal_prefix(hay + i, needle, min_size(cap, hay_len - i), fold);
        if (k > best) {
            best = k;
            at = i;
        }
    }
    hit(rt, pc, best);
    if (rt->search_hints_off) return;
    size_t keep = min_size(cap, hay_len - at);
    if (!best && hay_len >= cap && cap) {
        /* Nothing of the needle anywhere: written over the start it would break whatever the
         * input holds there (fields the program checked before searching), so the offer is the
         * haystack's end, where the needle is appended. */
        push_bytes(&rt->cmps, pc, hay + hay_len - cap, needle, cap,
                   input_offset(rt, hay + hay_len, 0));
        return;
    }
    if (best < keep)
        push_bytes(&rt->cmps, pc, hay + at, needle, keep, input_offset(rt, hay + at, keep));
}

/* One-byte operands stay out of the ring, as libFuzzer and AFL++'s cmplog leave them out: a
 * byte mutation finds any of them in 256 tries, while decoders compare bytes in their
 * innermost loops and would flush the useful pairs. */
SIFT_RT_NOINSTR static inline bool ring_takes(const sift_rt_state *rt, uint8_t size)
{
    return size > 1 && rt->tracing && !rt->int_ring_paused;
}

/* The global that sift-instrument's gates read before each comparison callback
 * (abi/cmp_gate_abi.h): compiled code reaches it by name, with no runtime state at hand. All
 * open until the engine sets it up, so that code no engine drives sees every callback, as
 * code built without the gates does. */
unsigned char __sift_cmp_gate = SIFT_CMP_GATE_ALL;

SIFT_RT_NOINSTR void sift_rt_cmp_gate_update(const sift_rt_state *rt)
{
    unsigned gate = (rt->cmp_features_off ? 0 : SIFT_CMP_GATE_FEATURES) |
                    (ring_takes(rt, 2) ? SIFT_CMP_GATE_RING : 0);
    __atomic_store_n(&__sift_cmp_gate, (unsigned char)gate, __ATOMIC_RELAXED);
}

/* Out of line: the callbacks reach it only when they count or record (or before the runtime
 * is ready, RT NULL). */
SIFT_RT_NOINSTR __attribute__((noinline)) static void
record_int(sift_rt_state *rt, uintptr_t pc, uint64_t a, uint64_t b, uint8_t size)
{
    if (!rt && !(rt = sift_rt())) return;
    uint64_t mask = width_mask(size);
    a &= mask;
    b &= mask;
    int_features(rt, pc, a, b);
    if (ring_takes(rt, size) && !trivial(a, b, mask)) push_int(&rt->cmps, a, b, size);
}

/* Inlined into every callback: a comparison-heavy target calls them millions of times a
 * second, and on most executions of a default campaign (no CMP features, the ring paused)
 * they have nothing to do: they return after four loads, before setting up a stack frame.
 * With the work inline, saving registers at their entry was most of their cost (a quarter of
 * a zlib campaign's samples were in __sanitizer_cov_trace_const_cmp4). Filling the ring
 * without the features, as a default campaign's one execution in eight does, stays inline
 * too: it needs no more registers than a call clobbers, where the call to record_int saved
 * five (harfbuzz: 6-8% of a campaign's samples in record_int, all on those executions). */
SIFT_RT_NOINSTR static inline __attribute__((always_inline)) void cmp_int(uintptr_t pc, uint64_t a,
                                                                          uint64_t b, uint8_t size)
{
    sift_rt_state *rt = __atomic_load_n(&sift_rt_ready, __ATOMIC_ACQUIRE);
    if (rt && rt->cmp_features_off) {
        if (!ring_takes(rt, size)) return;
        uint64_t mask = width_mask(size);
        a &= mask;
        b &= mask;
        if (!trivial(a, b, mask)) push_int(&rt->cmps, a, b, size);
        return;
    }
    record_int(rt, pc, a, b, size);
}

SIFT_RT_NOINSTR void sift_rt_cmp(sift_rt_state *rt, uintptr_t pc, uint64_t a, uint64_t b,
                                 uint8_t size)
{
    record_int(rt, pc, a, b, size);
}

SIFT_RT_NOINSTR void sift_rt_cmp_bytes(sift_rt_state *rt, uintptr_t pc, const void *a,
                                       const void *b, size_t len)
{
    record_bytes(rt, pc, a, b, len, false);
}

/* Sanitizer-coverage callbacks. Compiled code calls them only from instrumented target code,
 * so their features count whether or not the engine is tracing; the engine resets the domain
 * before each execution, as it does the compiled edge counters. */

#define CALLER_PC() ((uintptr_t)__builtin_return_address(0))

/* In const_cmp the constant comes first; the ring keeps the input's side first. */
#define TRACE_CMP(bytes, type)                                                                     \
    SIFT_RT_NOINSTR void __sanitizer_cov_trace_cmp##bytes(type a, type b)                          \
    {                                                                                              \
        cmp_int(CALLER_PC(), a, b, bytes);                                                         \
    }                                                                                              \
    SIFT_RT_NOINSTR void __sanitizer_cov_trace_const_cmp##bytes(type constant, type a)             \
    {                                                                                              \
        cmp_int(CALLER_PC(), a, constant, bytes);                                                  \
    }

TRACE_CMP(1, uint8_t)
TRACE_CMP(2, uint16_t)
TRACE_CMP(4, uint32_t)
TRACE_CMP(8, uint64_t)

/* CASES holds the number of cases, the operand width in bits, then the case values, sorted
 * and zero-extended as VAL is. As libFuzzer does, VAL is compared with the two cases around
 * it, with the position between them as part of the site, so that approaching the next case
 * up or down gives features and the ring offers exactly the neighbours to jump to. Switches
 * whose cases, or value, are all below 256 are left out: byte mutations reach those directly,
 * and their distances would only add noise. */
SIFT_RT_NOINSTR __attribute__((noinline)) static void switch_wide(sift_rt_state *rt, uintptr_t pc,
                                                                  uint64_t val, uint64_t *cases)
{
    uint64_t n = cases[0];
    const uint64_t *values = cases + 2;
    uint8_t size = cases[1] <= 16 ? 2 : cases[1] <= 32 ? 4 : 8;
    uint64_t i = 0;
    while (i < n && values[i] <= val)
        i++;
    /* Case values are distinct, so only values[i - 1] may equal VAL (a taken case). */
    uint64_t below = i > 0 && values[i - 1] == val ? i - 1 : i;
    int_features(rt, pc + 2 * i, val, below ? values[below - 1] : 0);
    int_features(rt, pc + 2 * i + 1, val, i < n ? values[i] : width_mask(size));
    if (!rt->tracing || rt->int_ring_paused) return;
    if (below) push_int(&rt->cmps, val, values[below - 1], size);
    if (i < n) push_int(&rt->cmps, val, values[i], size);
}

/* Most switches of a parser are over bytes and leave here, before any stack frame is set up:
 * the rest is out of line. */
SIFT_RT_NOINSTR void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases)
{
    if (cases[0] == 0 || val < 256 || cases[2 + cases[0] - 1] < 256) return;
    sift_rt_state *rt = sift_rt_fast();
    if (rt) switch_wide(rt, CALLER_PC(), val, cases);
}

/* A divisor is compared with zero: the ring then offers the mutation that divides by zero. */
SIFT_RT_NOINSTR void __sanitizer_cov_trace_div4(uint32_t val)
{
    sift_rt_state *rt = sift_rt_fast();
    if (rt) sift_rt_cmp(rt, CALLER_PC(), val, 0, 4);
}

SIFT_RT_NOINSTR void __sanitizer_cov_trace_div8(uint64_t val)
{
    sift_rt_state *rt = sift_rt_fast();
    if (rt) sift_rt_cmp(rt, CALLER_PC(), val, 0, 8);
}

/* An array index's distance from zero is a feature, but it stays out of the ring: indexes
 * change on every loop iteration and would flush it, and they are rarely input bytes. */
SIFT_RT_NOINSTR void __sanitizer_cov_trace_gep(uintptr_t idx)
{
    sift_rt_state *rt = sift_rt_fast();
    if (rt) int_features(rt, CALLER_PC(), idx, 0);
}

/* Hooks that sanitizer interceptors call after each string or memory comparison (and that the
 * interposed functions of libsift-interpose.a call too). Unlike the callbacks above they see
 * every caller in the process, the engine included, so they record only while tracing. */

SIFT_RT_NOINSTR static sift_rt_state *tracing_rt(void)
{
    sift_rt_state *rt = sift_rt_fast();
    return rt && rt->tracing ? rt : NULL;
}

/* The bytes a string comparison of at most N bytes looks at: up to the shorter string's
 * terminator, included so that a missing or extra tail shows as a difference. */
SIFT_RT_NOINSTR static size_t str_span(const sift_rt_state *rt, const char *s1, const char *s2,
                                       size_t n)
{
    size_t i = 0;
    while (i < n && s1[i] && s2[i])
        i++;
    size_t span = i < n ? i + 1 : n;
    /* When the side that ended first lies in the input, the bytes after its terminator are the
     * input's too: the other string, whole, is what to write there, not one byte of it. */
    for (int side = 0; side < 2; side++) {
        const char *in = side ? s2 : s1, *other = side ? s1 : s2;
        uint32_t at = input_offset(rt, (const uint8_t *)in, span);
        if (at == SIFT_CMP_NOWHERE || other[span - 1] == 0) continue;
        size_t room = min_size(rt->input_size - at, SIFT_CMP_BYTELEN);
        while (span < n && span < room && other[span - 1])
            span++;
        break;
    }
    return span;
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_memcmp(void *called_pc, const void *s1, const void *s2,
                                                  size_t n, int result)
{
    (void)result;
    sift_rt_state *rt = tracing_rt();
    if (rt) record_bytes(rt, (uintptr_t)called_pc, s1, s2, n, false);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_strncmp(void *called_pc, const char *s1, const char *s2,
                                                   size_t n, int result)
{
    (void)result;
    sift_rt_state *rt = tracing_rt();
    if (rt)
        record_bytes(rt, (uintptr_t)called_pc, (const uint8_t *)s1, (const uint8_t *)s2,
                     str_span(rt, s1, s2, n), false);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_strncasecmp(void *called_pc, const char *s1,
                                                       const char *s2, size_t n, int result)
{
    (void)result;
    sift_rt_state *rt = tracing_rt();
    if (rt)
        record_bytes(rt, (uintptr_t)called_pc, (const uint8_t *)s1, (const uint8_t *)s2,
                     str_span(rt, s1, s2, n), true);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_strcmp(void *called_pc, const char *s1, const char *s2,
                                                  int result)
{
    __sanitizer_weak_hook_strncmp(called_pc, s1, s2, SIZE_MAX, result);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_strcasecmp(void *called_pc, const char *s1,
                                                      const char *s2, int result)
{
    __sanitizer_weak_hook_strncasecmp(called_pc, s1, s2, SIZE_MAX, result);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_strstr(void *called_pc, const char *s1, const char *s2,
                                                  char *result)
{
    sift_rt_state *rt = tracing_rt();
    if (rt)
        record_search(rt, (uintptr_t)called_pc, (const uint8_t *)s1, strlen(s1),
                      (const uint8_t *)s2, strlen(s2), result != NULL, false);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_strcasestr(void *called_pc, const char *s1,
                                                      const char *s2, char *result)
{
    sift_rt_state *rt = tracing_rt();
    if (rt)
        record_search(rt, (uintptr_t)called_pc, (const uint8_t *)s1, strlen(s1),
                      (const uint8_t *)s2, strlen(s2), result != NULL, true);
}

SIFT_RT_NOINSTR void __sanitizer_weak_hook_memmem(void *called_pc, const void *s1, size_t len1,
                                                  const void *s2, size_t len2, void *result)
{
    sift_rt_state *rt = tracing_rt();
    if (rt) record_search(rt, (uintptr_t)called_pc, s1, len1, s2, len2, result != NULL, false);
}
