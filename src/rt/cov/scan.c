/* Finding touched lines fast: dirty indexes where sift writes the counters, SIMD zero scans
 * where the compiler does. */
#include "rt/cov/scan.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define SIFT_X86 1
#endif

#define B4_7   0x08
#define B8_15  0x10
#define B16_31 0x20
#define B32_   0x40
#define B128_  0x80
#define R4(x)  x, x, x, x
#define R8(x)  R4(x), R4(x)
#define R16(x) R8(x), R8(x)
#define R32(x) R16(x), R16(x)

const uint8_t sift_bucket_table[256] = {
    0,         1,         2,         4,          R4(B4_7),   R8(B8_15),  R16(B16_31),
    R32(B32_), R32(B32_), R32(B32_), R32(B128_), R32(B128_), R32(B128_), R32(B128_),
};

uint8_t sift_bucket(uint8_t count)
{
    return sift_bucket_table[count];
}

void sift_scan_classify(const uint8_t *counters, size_t len, uint8_t *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = sift_bucket_table[counters[i]];
}

static bool line_has_new_scalar(const uint8_t *counters, const uint8_t *seen, size_t len)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < len; i++)
        acc |= (uint8_t)(sift_bucket_table[counters[i]] & ~seen[i]);
    return acc != 0;
}

/* Index of the first non-zero 8-byte word at or after P, for the tails SIMD cannot take. */
static const uint8_t *skip_zero_words(const uint8_t *p, const uint8_t *end)
{
    while (p + 8 <= end) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (w) return p;
        p += 8;
    }
    while (p < end && *p == 0)
        p++;
    return p;
}

/* Bit i set for each non-zero byte i of the LEN (<= 64) at P. */
static uint64_t nonzero_scalar(const uint8_t *p, size_t len)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < len; i++)
        mask |= (uint64_t)(p[i] != 0) << i;
    return mask;
}

static sift_isa isa_limit = SIFT_ISA_AVX2;

void sift_scan_limit_isa(sift_isa max)
{
    isa_limit = max;
}

/* The widest vector code this CPU runs, within the limit. */
static sift_isa isa(void)
{
    sift_isa have = SIFT_ISA_SCALAR;
#ifdef SIFT_X86
    if (__builtin_cpu_supports("avx2")) have = SIFT_ISA_AVX2;
#endif
    return have < isa_limit ? have : isa_limit;
}

sift_isa sift_scan_isa(void)
{
    return isa();
}

#ifdef SIFT_X86
/* Buckets of 32 counters at once: the low nibble decides below 16, the high nibble above. */
__attribute__((target("avx2"))) static inline __m256i classify_avx2(__m256i c)
{
    const __m256i lo_table = _mm256_setr_epi8(
        0, 1, 2, 4, B4_7, B4_7, B4_7, B4_7, B8_15, B8_15, B8_15, B8_15, B8_15, B8_15, B8_15, B8_15,
        0, 1, 2, 4, B4_7, B4_7, B4_7, B4_7, B8_15, B8_15, B8_15, B8_15, B8_15, B8_15, B8_15, B8_15);
    const __m256i hi_table = _mm256_setr_epi8(
        0, B16_31, B32_, B32_, B32_, B32_, B32_, B32_, (char)B128_, (char)B128_, (char)B128_,
        (char)B128_, (char)B128_, (char)B128_, (char)B128_, (char)B128_, 0, B16_31, B32_, B32_,
        B32_, B32_, B32_, B32_, (char)B128_, (char)B128_, (char)B128_, (char)B128_, (char)B128_,
        (char)B128_, (char)B128_, (char)B128_);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    __m256i lo = _mm256_and_si256(c, nibble);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
    __m256i hi_zero = _mm256_cmpeq_epi8(hi, _mm256_setzero_si256());
    return _mm256_or_si256(_mm256_shuffle_epi8(hi_table, hi),
                           _mm256_and_si256(hi_zero, _mm256_shuffle_epi8(lo_table, lo)));
}

__attribute__((target("avx2"))) static bool line_has_new_avx2(const uint8_t *counters,
                                                              const uint8_t *seen)
{
    __m256i a = classify_avx2(_mm256_loadu_si256((const __m256i *)counters));
    __m256i b = classify_avx2(_mm256_loadu_si256((const __m256i *)(counters + 32)));
    a = _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)seen), a);
    b = _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)(seen + 32)), b);
    __m256i any = _mm256_or_si256(a, b);
    return !_mm256_testz_si256(any, any);
}

__attribute__((target("avx2"))) static bool line_has_new_or_reset_avx2(uint8_t *counters,
                                                                       const uint8_t *seen)
{
    if (line_has_new_avx2(counters, seen)) return true;
    _mm256_storeu_si256((__m256i *)counters, _mm256_setzero_si256());
    _mm256_storeu_si256((__m256i *)(counters + 32), _mm256_setzero_si256());
    return false;
}

/* Whether the 256 bytes at P are all zero: one branch for four cache lines. */
__attribute__((target("avx2"))) static inline bool zero256_avx2(const uint8_t *p)
{
    const __m256i *v = (const __m256i *)p;
    __m256i x = _mm256_or_si256(
        _mm256_or_si256(_mm256_or_si256(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1)),
                        _mm256_or_si256(_mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 3))),
        _mm256_or_si256(_mm256_or_si256(_mm256_loadu_si256(v + 4), _mm256_loadu_si256(v + 5)),
                        _mm256_or_si256(_mm256_loadu_si256(v + 6), _mm256_loadu_si256(v + 7))));
    return _mm256_testz_si256(x, x);
}

/* First line at or after P (a multiple of 64 bytes before END) with a non-zero byte: lines one
 * by one to the end of the 256-byte block P is in (counted from BASE), so that a run of touched
 * lines costs a load each, then 256 bytes per branch while the map is empty. */
__attribute__((target("avx2"))) static const uint8_t *
find_line_avx2(const uint8_t *base, const uint8_t *p, const uint8_t *end)
{
    for (; p + SIFT_LINE <= end && ((size_t)(p - base) & 255); p += SIFT_LINE) {
        __m256i x = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)p),
                                    _mm256_loadu_si256((const __m256i *)(p + 32)));
        if (!_mm256_testz_si256(x, x)) return p;
    }
    while (p + 256 <= end) {
        if (!zero256_avx2(p)) break;
        p += 256;
    }
    for (; p + SIFT_LINE <= end; p += SIFT_LINE) {
        __m256i x = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)p),
                                    _mm256_loadu_si256((const __m256i *)(p + 32)));
        if (!_mm256_testz_si256(x, x)) return p;
    }
    return p;
}

/* Bit i set for each non-zero byte i of the 64 at P. */
__attribute__((target("avx2"))) static inline uint64_t nonzero_mask_avx2(const uint8_t *p)
{
    const __m256i zero = _mm256_setzero_si256();
    uint32_t lo = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), zero));
    uint32_t hi = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 32)), zero));
    return ~((uint64_t)hi << 32 | lo);
}

/* First 64-byte block at or after P, before END, with a non-zero byte, and the mask of its
 * non-zero bytes; reads 256 bytes (16 Ki counters of dirty index) per branch while clean. */
__attribute__((target("avx2"))) static const uint8_t *
next_dirty_avx2(const uint8_t *p, const uint8_t *end, uint64_t *mask)
{
    while (p + 256 <= end) {
        if (!zero256_avx2(p)) break;
        p += 256;
    }
    for (; p + 64 <= end; p += 64) {
        uint64_t m = nonzero_mask_avx2(p);
        if (m) {
            *mask = m;
            return p;
        }
    }
    return p;
}
#endif

uint64_t sift_scan_nonzero(const uint8_t *counters, size_t len)
{
#ifdef SIFT_X86
    if (len == SIFT_LINE && isa() == SIFT_ISA_AVX2) return nonzero_mask_avx2(counters);
#endif
    return nonzero_scalar(counters, len);
}

bool sift_scan_line_has_new(const uint8_t *counters, const uint8_t *seen, size_t len)
{
#ifdef SIFT_X86
    if (len == SIFT_LINE && isa() == SIFT_ISA_AVX2) return line_has_new_avx2(counters, seen);
#endif
    return line_has_new_scalar(counters, seen, len);
}

static inline const uint8_t *find_line(const uint8_t *base, const uint8_t *p, const uint8_t *end,
                                       sift_isa level)
{
#ifdef SIFT_X86
    if (level == SIFT_ISA_AVX2) return find_line_avx2(base, p, end);
#endif
    (void)level;
    const uint8_t *hit = skip_zero_words(p, end);
    return p + (size_t)(hit - p) / SIFT_LINE * SIFT_LINE;
}

/* First block of up to 64 dirty bytes at or after P (a multiple of 64 bytes from the start of
 * the index) with a non-zero byte, and in *MASK the bits of its non-zero bytes; END if none. */
static inline const uint8_t *next_dirty(const uint8_t *p, const uint8_t *end, uint64_t *mask,
                                        sift_isa level)
{
#ifdef SIFT_X86
    /* The vector code stops at a dirty block or before a short last one. */
    if (level == SIFT_ISA_AVX2) {
        p = next_dirty_avx2(p, end, mask);
        if (p + 64 <= end) return p;
    }
#endif
    (void)level;
    for (; p < end; p += 64) {
        const uint8_t *stop = end - p < 64 ? end : p + 64;
        if (skip_zero_words(p, stop) == stop) continue;
        *mask = nonzero_scalar(p, (size_t)(stop - p));
        return p;
    }
    return end;
}

/* A walk's visitor. With SEEN (a pass's seen bits), full lines holding nothing new are reset
 * and not handed to FN. */
typedef struct {
    sift_line_fn fn;
    void *ctx;
    const uint8_t *seen;
    bool clean;
} walk;

/* One touched line. Inlined with LEVEL constant into each walker below, so that the usual line
 * of a pass (nothing new) costs a vector test and a store, not calls. */
static inline __attribute__((always_inline)) bool visit(const walk *w, uint8_t *counters,
                                                        size_t len, size_t first, sift_isa level)
{
    if (w->seen && len == SIFT_LINE) {
#ifdef SIFT_X86
        if (level == SIFT_ISA_AVX2 && !line_has_new_or_reset_avx2(counters, w->seen + first))
            return true;
#endif
        if (level == SIFT_ISA_SCALAR && !line_has_new_scalar(counters, w->seen + first, len)) {
            memset(counters, 0, len);
            return true;
        }
    }
    return w->fn(w->ctx, counters, len, first);
}

static inline __attribute__((always_inline)) bool walk_dirty(const sift_region *r, const walk *w,
                                                             sift_isa level)
{
    size_t lines = (r->len + SIFT_LINE - 1) / SIFT_LINE;
    const uint8_t *end = r->dirty + lines;
    uint64_t mask;
    for (const uint8_t *d = next_dirty(r->dirty, end, &mask, level); d < end;
         d = next_dirty(d + 64, end, &mask, level)) {
        for (; mask; mask &= mask - 1) {
            size_t line = (size_t)(d - r->dirty) + (size_t)__builtin_ctzll(mask);
            size_t off = line * SIFT_LINE;
            size_t len = r->len - off < SIFT_LINE ? r->len - off : SIFT_LINE;
            if (w->clean) r->dirty[line] = 0;
            if (!visit(w, r->counters + off, len, r->first + off, level)) return false;
        }
    }
    return true;
}

/* Lines FROM up to TO of an indexed region. */
static inline __attribute__((always_inline)) bool
visit_lines(const sift_region *r, const walk *w, size_t from, size_t to, sift_isa level)
{
    for (size_t line = from; line < to; line++) {
        size_t off = line * SIFT_LINE;
        size_t len = r->len - off < SIFT_LINE ? r->len - off : SIFT_LINE;
        if (!visit(w, r->counters + off, len, r->first + off, level)) return false;
    }
    return true;
}

/* The lines of the functions whose dirty byte is set, found like dirty lines. Functions need
 * not start on a line, so marked functions next to each other are merged into one run of
 * lines: each line is visited once, and whole (the counters of an unmarked function in it are
 * zero). Runs of marked functions are taken at once, as runs of set bits, so that a pass where
 * most functions ran costs little more per function than per line. */
static inline __attribute__((always_inline)) bool walk_functions(const sift_region *r,
                                                                 const walk *w, sift_isa level)
{
    const uint8_t *end = r->fn_dirty + r->nfns;
    size_t from = 0, to = 0; /* the run of lines not visited yet */
    uint64_t mask;
    for (const uint8_t *d = next_dirty(r->fn_dirty, end, &mask, level); d < end;
         d = next_dirty(d + 64, end, &mask, level)) {
        /* MASK holds the block's marks: clear them all at once. */
        if (w->clean) memset((uint8_t *)d, 0, end - d < 64 ? (size_t)(end - d) : 64);
        while (mask) {
            /* A run of marked functions at once: N set bits from bit B. */
            unsigned b = (unsigned)__builtin_ctzll(mask);
            uint64_t unset = ~(mask >> b);
            unsigned n = unset ? (unsigned)__builtin_ctzll(unset) : 64;
            mask = b + n < 64 ? mask & (~0ull << (b + n)) : 0;
            size_t fn = (size_t)(d - r->fn_dirty) + b;
            size_t first = r->fn_start[fn] / SIFT_LINE;
            size_t last = (r->fn_start[fn + n] + SIFT_LINE - 1) / SIFT_LINE;
            if (first > to) {
                if (!visit_lines(r, w, from, to, level)) return false;
                from = first;
            }
            if (last > to) to = last;
        }
    }
    return visit_lines(r, w, from, to, level);
}

static inline __attribute__((always_inline)) bool walk_scan(const sift_region *r, const walk *w,
                                                            sift_isa level)
{
    uint8_t *base = r->counters, *full_end = base + r->len / SIFT_LINE * SIFT_LINE;
    for (uint8_t *p = (uint8_t *)find_line(base, base, full_end, level); p < full_end;
         p = (uint8_t *)find_line(base, p + SIFT_LINE, full_end, level)) {
        if (!visit(w, p, SIFT_LINE, r->first + (size_t)(p - base), level)) return false;
    }
    size_t tail = r->len % SIFT_LINE;
    if (tail && skip_zero_words(full_end, full_end + tail) < full_end + tail)
        return visit(w, full_end, tail, r->first + (size_t)(full_end - base), level);
    return true;
}

static inline __attribute__((always_inline)) bool walk_domain(const sift_domain_map *dom,
                                                              const walk *w, sift_isa level)
{
    for (size_t i = 0; i < dom->nregions; i++) {
        const sift_region *r = &dom->regions[i];
        bool more = r->dirty      ? walk_dirty(r, w, level)
                    : r->fn_dirty ? walk_functions(r, w, level)
                                  : walk_scan(r, w, level);
        if (!more) return false;
    }
    return true;
}

#ifdef SIFT_X86
__attribute__((target("avx2"))) static bool walk_domain_avx2(const sift_domain_map *dom,
                                                             const walk *w)
{
    return walk_domain(dom, w, SIFT_ISA_AVX2);
}
#endif

static bool walk_any(const sift_domain_map *dom, const walk *w)
{
#ifdef SIFT_X86
    if (isa() == SIFT_ISA_AVX2) return walk_domain_avx2(dom, w);
#endif
    return walk_domain(dom, w, SIFT_ISA_SCALAR);
}

bool sift_scan_domain(const sift_domain_map *dom, sift_line_fn fn, void *ctx, bool clean)
{
    walk w = {.fn = fn, .ctx = ctx, .clean = clean};
    return walk_any(dom, &w);
}

bool sift_scan_domain_fresh(const sift_domain_map *dom, const uint8_t *seen, sift_line_fn fn,
                            void *ctx)
{
    walk w = {.fn = fn, .ctx = ctx, .seen = seen, .clean = true};
    return walk_any(dom, &w);
}
