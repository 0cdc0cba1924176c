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

/* First line at or after P (a multiple of 64 bytes before END) with a non-zero byte; reads 256
 * bytes per branch while the map is empty. */
__attribute__((target("avx2"))) static const uint8_t *find_line_avx2(const uint8_t *p,
                                                                     const uint8_t *end)
{
    while (p + 256 <= end) {
        const __m256i *v = (const __m256i *)p;
        __m256i x = _mm256_or_si256(
            _mm256_or_si256(_mm256_or_si256(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1)),
                            _mm256_or_si256(_mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 3))),
            _mm256_or_si256(_mm256_or_si256(_mm256_loadu_si256(v + 4), _mm256_loadu_si256(v + 5)),
                            _mm256_or_si256(_mm256_loadu_si256(v + 6), _mm256_loadu_si256(v + 7))));
        if (!_mm256_testz_si256(x, x)) break;
        p += 256;
    }
    while (p + SIFT_LINE <= end) {
        __m256i x = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)p),
                                    _mm256_loadu_si256((const __m256i *)(p + 32)));
        if (!_mm256_testz_si256(x, x)) return p;
        p += SIFT_LINE;
    }
    return p;
}

static bool have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#else
static bool have_avx2(void)
{
    return false;
}
#endif

bool sift_scan_line_has_new(const uint8_t *counters, const uint8_t *seen, size_t len)
{
#ifdef SIFT_X86
    if (len == SIFT_LINE && have_avx2()) return line_has_new_avx2(counters, seen);
#endif
    return line_has_new_scalar(counters, seen, len);
}

static const uint8_t *find_line(const uint8_t *p, const uint8_t *end, bool avx2)
{
#ifdef SIFT_X86
    if (avx2) return find_line_avx2(p, end);
#endif
    (void)avx2;
    const uint8_t *hit = skip_zero_words(p, end);
    return p + (size_t)(hit - p) / SIFT_LINE * SIFT_LINE;
}

static bool walk_dirty(const sift_region *r, sift_line_fn fn, void *ctx, bool clean)
{
    size_t lines = (r->len + SIFT_LINE - 1) / SIFT_LINE;
    const uint8_t *d = r->dirty, *end = r->dirty + lines;
    for (d = skip_zero_words(d, end); d < end; d = skip_zero_words(d + 1, end)) {
        if (!*d) continue;
        size_t line = (size_t)(d - r->dirty), off = line * SIFT_LINE;
        size_t len = r->len - off < SIFT_LINE ? r->len - off : SIFT_LINE;
        if (clean) r->dirty[line] = 0;
        if (!fn(ctx, r->counters + off, len, r->first + off)) return false;
    }
    return true;
}

static bool walk_scan(const sift_region *r, sift_line_fn fn, void *ctx, bool avx2)
{
    const uint8_t *base = r->counters, *full_end = base + r->len / SIFT_LINE * SIFT_LINE;
    for (const uint8_t *p = find_line(base, full_end, avx2); p < full_end;
         p = find_line(p + SIFT_LINE, full_end, avx2)) {
        if (!fn(ctx, (uint8_t *)p, SIFT_LINE, r->first + (size_t)(p - base))) return false;
    }
    size_t tail = r->len % SIFT_LINE;
    if (tail && skip_zero_words(full_end, full_end + tail) < full_end + tail)
        return fn(ctx, (uint8_t *)full_end, tail, r->first + (size_t)(full_end - base));
    return true;
}

bool sift_scan_domain(const sift_domain_map *dom, sift_line_fn fn, void *ctx, bool clean)
{
    bool avx2 = have_avx2();
    for (size_t i = 0; i < dom->nregions; i++) {
        const sift_region *r = &dom->regions[i];
        bool more = r->dirty ? walk_dirty(r, fn, ctx, clean) : walk_scan(r, fn, ctx, avx2);
        if (!more) return false;
    }
    return true;
}
