/* The per-execution pass (classify hit counts, compare with the global state, reset the
 * counters) as sift does it, side by side with a plain byte loop, an AFL-style word loop and
 * the memcpy of the map. Only the pass is timed: writing the execution's counters before each
 * pass is setup. Usage: novelty [REPS] [-p PASSES] [-i scalar|avx2]. */
#include "novelty.h"
#include "rt/cov/scan.h" /* only to report and limit the vector code sift uses */

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

/* ---- timing ---------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Passes of a few hundred ns are below clock_gettime's useful resolution, so passes are timed
 * with the TSC (constant rate on every CPU this runs on) and converted to ns. The fences keep
 * the setup's stores and loads out of the interval. */
/* End selects rdtscp (waits for the interval's work) over fenced rdtsc; always inlined with a
 * constant, so neither timestamp pays for the choice. */
static inline __attribute__((always_inline)) uint64_t ticks_read(bool end)
{
    __asm__ volatile("" ::: "memory");
#ifdef HAVE_TSC
    uint64_t t;
    if (end) {
        unsigned aux;
        t = __rdtscp(&aux);
    } else {
        _mm_mfence();
        _mm_lfence();
        t = __rdtsc();
    }
    _mm_lfence();
#else
    (void)end;
    uint64_t t = now_ns();
#endif
    __asm__ volatile("" ::: "memory");
    return t;
}

static inline uint64_t ticks_begin(void)
{
    return ticks_read(false);
}

static inline uint64_t ticks_end(void)
{
    return ticks_read(true);
}

static double ns_per_tick = 1.0;
static double overhead_ns;   /* an empty interval, subtracted from every sample */
static double resolution_ns; /* the smallest step the timer takes */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void calibrate(void)
{
#ifdef HAVE_TSC
    uint64_t t0 = now_ns(), c0 = ticks_begin(), t1, c1;
    do {
        t1 = now_ns();
        c1 = ticks_end();
    } while (t1 - t0 < 50000000u);
    ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
    /* Some CPUs (and hypervisors) advance the TSC in steps of many ticks: the usual step. */
    double steps[63];
    for (int i = 0; i < 63; i++) {
        uint64_t a = __rdtsc(), b;
        while ((b = __rdtsc()) == a)
            ;
        steps[i] = (double)(b - a);
    }
    double step = median(steps, 63);
    resolution_ns = (double)step * ns_per_tick;
#else
    resolution_ns = 1;
#endif
    double v[1001];
    for (size_t i = 0; i < 1001; i++) {
        uint64_t a = ticks_begin();
        uint64_t b = ticks_end();
        v[i] = (double)(b - a) * ns_per_tick;
    }
    overhead_ns = median(v, 1001);
}

/* ---- the references ---------------------------------------------------------------------- */

/* Buckets as sift_bucket() defines them, built here so the references do not call into sift. */
static uint8_t bucket8[256];
/* Two counters at once, as AFL's count_class_lookup16. */
static uint16_t bucket16[65536];

static void init_tables(void)
{
    for (int c = 0; c < 256; c++) {
        uint8_t b = 0;
        if (c == 1 || c == 2)
            b = (uint8_t)c;
        else if (c == 3)
            b = 4;
        else if (c >= 4 && c <= 7)
            b = 8;
        else if (c >= 8 && c <= 15)
            b = 16;
        else if (c >= 16 && c <= 31)
            b = 32;
        else if (c >= 32 && c <= 127)
            b = 64;
        else if (c >= 128)
            b = 128;
        bucket8[c] = b;
    }
    for (int i = 0; i < 65536; i++)
        bucket16[i] = (uint16_t)(bucket8[i & 0xff] | bucket8[i >> 8] << 8);
}

/* Both references keep AFL's virgin map: a byte starts at 0xff and loses the bits seen.
 * They return 2 for a new counter, 1 for only a new bucket, 0 for nothing. */

/* (a) One byte at a time. */
__attribute__((noinline)) static int byte_pass(uint8_t *restrict map, uint8_t *restrict virgin,
                                               size_t n)
{
    int ret = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = map[i];
        if (!c) continue;
        uint8_t b = bucket8[c], v = virgin[i];
        if (b & v) {
            int r = v == 0xff ? 2 : 1;
            ret = r > ret ? r : ret;
            virgin[i] = (uint8_t)(v & ~b);
        }
        map[i] = 0;
    }
    return ret;
}

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline void store64(uint8_t *p, uint64_t w)
{
    memcpy(p, &w, 8);
}

static inline uint64_t classify_word(uint64_t w)
{
    return (uint64_t)bucket16[w & 0xffff] | (uint64_t)bucket16[(w >> 16) & 0xffff] << 16 |
           (uint64_t)bucket16[(w >> 32) & 0xffff] << 32 | (uint64_t)bucket16[w >> 48] << 48;
}

/* AFL's classify_counts + has_new_bits on one word, and the reset, fused. */
static inline int word_step(uint8_t *map, uint8_t *virgin, uint64_t w, int ret)
{
    uint64_t c = classify_word(w), v = load64(virgin);
    if (__builtin_expect((c & v) != 0, 0)) {
        if (ret < 2) {
            /* A counter the virgin map still has whole is new; otherwise only a bucket is. */
            ret = 1;
            for (int k = 0; k < 8; k++)
                if (((w >> (8 * k)) & 0xff) && ((v >> (8 * k)) & 0xff) == 0xff) ret = 2;
        }
        store64(virgin, v & ~c);
    }
    store64(map, 0);
    return ret;
}

/* (b) 64-bit words, zero words skipped. Words are tested four at a time, as AFL++'s skim()
 * does: one branch per 32 counters while the map is empty, which measured faster here than a
 * branch per word. */
__attribute__((noinline)) static int word_pass(uint8_t *restrict map, uint8_t *restrict virgin,
                                               size_t n)
{
    int ret = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w0 = load64(map + i), w1 = load64(map + i + 8);
        uint64_t w2 = load64(map + i + 16), w3 = load64(map + i + 24);
        if (__builtin_expect((w0 | w1 | w2 | w3) == 0, 1)) continue;
        if (w0) ret = word_step(map + i, virgin + i, w0, ret);
        if (w1) ret = word_step(map + i + 8, virgin + i + 8, w1, ret);
        if (w2) ret = word_step(map + i + 16, virgin + i + 16, w2, ret);
        if (w3) ret = word_step(map + i + 24, virgin + i + 24, w3, ret);
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t w = load64(map + i);
        if (w) ret = word_step(map + i, virgin + i, w, ret);
    }
    return ret;
}

/* The same loop with one branch per word, as AFL's classify_counts() walks the map. */
__attribute__((noinline)) static int word1_pass(uint8_t *restrict map, uint8_t *restrict virgin,
                                                size_t n)
{
    int ret = 0;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w = load64(map + i);
        if (__builtin_expect(w != 0, 0)) ret = word_step(map + i, virgin + i, w, ret);
    }
    return ret;
}

/* The floor of any pass that reads the whole map: OR all of it together with the widest
 * vectors the CPU has, doing nothing else. */
#ifdef HAVE_TSC
__attribute__((noinline, target("avx512bw"))) static uint64_t read_avx512(const uint8_t *p,
                                                                          size_t n)
{
    __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t i = 0; i + 256 <= n; i += 256) {
        acc0 = _mm512_or_si512(acc0, _mm512_loadu_si512(p + i));
        acc1 = _mm512_or_si512(acc1, _mm512_loadu_si512(p + i + 64));
        acc2 = _mm512_or_si512(acc2, _mm512_loadu_si512(p + i + 128));
        acc3 = _mm512_or_si512(acc3, _mm512_loadu_si512(p + i + 192));
    }
    acc0 = _mm512_or_si512(_mm512_or_si512(acc0, acc1), _mm512_or_si512(acc2, acc3));
    return _mm512_test_epi8_mask(acc0, acc0);
}

__attribute__((noinline, target("avx2"))) static uint64_t read_avx2(const uint8_t *p, size_t n)
{
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t i = 0; i + 128 <= n; i += 128) {
        acc0 = _mm256_or_si256(acc0, _mm256_loadu_si256((const __m256i *)(p + i)));
        acc1 = _mm256_or_si256(acc1, _mm256_loadu_si256((const __m256i *)(p + i + 32)));
        acc2 = _mm256_or_si256(acc2, _mm256_loadu_si256((const __m256i *)(p + i + 64)));
        acc3 = _mm256_or_si256(acc3, _mm256_loadu_si256((const __m256i *)(p + i + 96)));
    }
    acc0 = _mm256_or_si256(_mm256_or_si256(acc0, acc1), _mm256_or_si256(acc2, acc3));
    return (uint64_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(acc0, _mm256_setzero_si256()));
}
#endif

__attribute__((noinline)) static uint64_t read_words(const uint8_t *p, size_t n)
{
    uint64_t acc = 0;
    for (size_t i = 0; i + 8 <= n; i += 8)
        acc |= load64(p + i);
    return acc;
}

static uint64_t read_pass(const uint8_t *p, size_t n)
{
#ifdef HAVE_TSC
    if (__builtin_cpu_supports("avx512bw")) return read_avx512(p, n);
    if (__builtin_cpu_supports("avx2")) return read_avx2(p, n);
#endif
    return read_words(p, n);
}

/* ---- the methods ------------------------------------------------------------------------- */

static void setup(method *m, const pattern *p)
{
    switch (m->kind) {
    case M_DIRTY:
        touch_dirty(p, &m->counters);
        break;
    case M_SCAN:
        touch(p, m->attached);
        break;
    case M_FUNC:
        /* What the compiled code leaves: the counts, and the dirty byte of each function that
         * ran. */
        touch(p, m->attached);
        for (size_t k = 0; k < p->n; k++)
            m->fn_dirty[m->fn_of[p->idx[k]]] = 1;
        break;
    default:
        touch(p, m->map);
    }
}

static volatile int sink;

/* Runs one pass; returns its novelty (0, 1, 2) and the pass time in ns through *NS. */
static int run_pass(method *m, double *ns)
{
    int ret = 0;
    uint64_t t0 = 0, t1 = 0;
    sift_novelty nov = SIFT_NOTHING;
    switch (m->kind) {
    case M_BYTE:
        t0 = ticks_begin();
        ret = byte_pass(m->map, m->virgin, m->size);
        t1 = ticks_end();
        break;
    case M_WORD:
        t0 = ticks_begin();
        ret = word_pass(m->map, m->virgin, m->size);
        t1 = ticks_end();
        break;
    case M_WORD1:
        t0 = ticks_begin();
        ret = word1_pass(m->map, m->virgin, m->size);
        t1 = ticks_end();
        break;
    case M_DIRTY:
    case M_SCAN:
    case M_FUNC:
        t0 = ticks_begin();
        sift_snapshot_check_and_advance(m->snap, m->cov, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &nov,
                                        NULL);
        t1 = ticks_end();
        ret = (int)nov;
        break;
    case M_MEMCPY:
        t0 = ticks_begin();
        memcpy(m->virgin, m->map, m->size);
        t1 = ticks_end();
        ret = m->virgin[m->size / 2];
        break;
    case M_READ:
        t0 = ticks_begin();
        ret = read_pass(m->map, m->size) != 0;
        t1 = ticks_end();
        break;
    }
    if (ns) *ns = (double)(t1 - t0) * ns_per_tick - overhead_ns;
    return ret;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Edges (counters seen) and features (bucket bits seen) a method's global state holds. */
static void known(const method *m, size_t *edges, size_t *features)
{
    if (m->snap) {
        check(sift_snapshot_count(m->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), edges, features),
              "count");
        return;
    }
    *edges = *features = 0;
    for (size_t i = 0; i < m->size; i++) {
        uint8_t seen = (uint8_t)~m->virgin[i];
        *edges += seen != 0;
        *features += (size_t)__builtin_popcount(seen);
    }
}

/* Brings a method to the steady state of a campaign (the pattern already known) and checks on
 * the way that it agrees with the byte loop: new edges first, nothing after, counters reset. */
static void warm(method *m, const pattern *p, size_t want_edges, size_t want_features)
{
    for (int round = 0; round < 3; round++) {
        setup(m, p);
        int ret = run_pass(m, NULL);
        if (m->kind == M_MEMCPY || m->kind == M_READ) continue;
        int want = round == 0 ? SIFT_NEW_EDGE : SIFT_NOTHING;
        const uint8_t *c = m->kind == M_DIRTY                       ? m->counters.counters
                           : m->kind == M_SCAN || m->kind == M_FUNC ? m->attached
                                                                    : m->map;
        if (ret != want || !all_zero(c, m->size)) {
            fprintf(stderr, "%s: pass %d said %d (want %d) or left counters set\n",
                    method_name[m->kind], round, ret, want);
            exit(1);
        }
        if (m->kind == M_DIRTY && !all_zero(m->counters.dirty, (m->size + 63) / 64)) {
            fprintf(stderr, "%s: dirty index not cleaned\n", method_name[m->kind]);
            exit(1);
        }
        if (m->kind == M_FUNC && !all_zero(m->fn_dirty, m->nfns)) {
            fprintf(stderr, "%s: function dirty bytes not cleaned\n", method_name[m->kind]);
            exit(1);
        }
    }
    if (m->kind == M_MEMCPY || m->kind == M_READ) return;
    size_t e, f;
    known(m, &e, &f);
    if (e != want_edges || f != want_features) {
        fprintf(stderr, "%s: knows %zu edges, %zu features; want %zu, %zu\n", method_name[m->kind],
                e, f, want_edges, want_features);
        exit(1);
    }
}

/* ---- the table --------------------------------------------------------------------------- */

typedef struct {
    size_t size;
    double touched; /* fraction of counters */
    bool clustered;
} config;

static void fmt_size(char *buf, size_t cap, size_t size)
{
    if (size >= (1u << 20))
        snprintf(buf, cap, "%zu MiB", size >> 20);
    else
        snprintf(buf, cap, "%zu KiB", size >> 10);
}

static const char *const isa_name[] = {"scalar", "avx2"};

/* REPS and PASSES from the command line, the vector code limited as -i says; false on a usage
 * error. */
static bool parse_args(int argc, char **argv, int *reps, int *passes)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc) {
            *passes = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
            const char *want = argv[++i];
            int level = -1;
            for (int k = 0; k < 2; k++)
                if (!strcmp(want, isa_name[k])) level = k;
            if (level < 0) return false;
            sift_scan_limit_isa((sift_isa)level);
        } else {
            *reps = atoi(argv[i]);
        }
    }
    return *reps >= 1 && *passes >= 0;
}

static void print_header(int reps)
{
#ifdef HAVE_TSC
    printf("CPU: avx2 %s, avx512bw %s; sift's scans use: %s\ntimer: TSC at %.3f GHz, steps of "
           "%.0f ns, %.0f ns of overhead subtracted from each sample\n",
           __builtin_cpu_supports("avx2") ? "yes" : "no",
           __builtin_cpu_supports("avx512bw") ? "yes" : "no", isa_name[sift_scan_isa()],
           1.0 / ns_per_tick, resolution_ns, overhead_ns);
#else
    printf("sift's scans use: %s\ntimer: clock_gettime, %.0f ns of overhead subtracted from each "
           "sample\n",
           isa_name[sift_scan_isa()], overhead_ns);
#endif
    printf("Median ns per pass (median of %d repetitions, each the median of its passes); the "
           "global state\nalready knows the execution's counters, as in a steady campaign.\n\n",
           reps);
    printf("%-6s %5s %-9s |%8s %8s %8s %8s %8s %8s %8s %8s |%7s %7s %7s %6s %6s %6s\n", "map",
           "touch", "layout", "byte", "word", "word/br", "sift-dir", "sift-scn", "sift-fn",
           "memcpy", "read", "w/dir", "w/scn", "w/fn", "b/dir", "b/scn", "b/fn");
}

/* Each method's median ns per pass on configuration CF (the CI-th), into RES. */
static void measure(const config *cf, size_t ci, int reps, int passes, double res[M_COUNT])
{
    size_t touched = (size_t)((double)cf->size * cf->touched + 0.5);
    pattern p = make_pattern(cf->size, touched, cf->clustered,
                             0x9e3779b97f4a7c15u ^ (ci * 0x632be59bd9b4e019u));
    size_t want_edges = p.n, want_features = 0;
    for (size_t k = 0; k < p.n; k++)
        want_features += (size_t)__builtin_popcount(bucket8[p.val[k]]);
    method ms[M_COUNT];
    for (int k = 0; k < M_COUNT; k++) {
        ms[k] = method_new(k, cf->size);
        warm(&ms[k], &p, want_edges, want_features);
    }
    /* At most about 60 ms of passes per method and repetition (the byte loop at 1 MiB). */
    int n = passes ? passes : cf->size > (256u << 10) ? 100 : 400;
    double *samples = malloc((size_t)n * sizeof(double));
    double *rep_med[M_COUNT];
    for (int k = 0; k < M_COUNT; k++)
        rep_med[k] = malloc((size_t)reps * sizeof(double));
    for (int r = 0; r < reps; r++) {
        /* Methods in a rotating order, each for a block of passes, so that drift in the
         * machine's speed does not land on one of them. */
        for (int j = 0; j < M_COUNT; j++) {
            int k = (j + r) % M_COUNT;
            for (int i = 0; i < n; i++) {
                setup(&ms[k], &p);
                sink += run_pass(&ms[k], &samples[i]);
            }
            rep_med[k][r] = median(samples, (size_t)n);
        }
    }
    for (int k = 0; k < M_COUNT; k++) {
        res[k] = median(rep_med[k], (size_t)reps);
        free(rep_med[k]);
        method_free(&ms[k]);
    }
    free(samples);
    free(p.idx);
    free(p.val);
}

static void print_row(const config *cf, const double *res)
{
    char sz[16];
    fmt_size(sz, sizeof(sz), cf->size);
    printf("%-6s %4.1f%% %-9s |%8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f |%6.1fx %6.1fx "
           "%6.1fx %5.0fx %5.0fx %5.0fx\n",
           sz, cf->touched * 100, cf->clustered ? "clustered" : "scattered", res[M_BYTE],
           res[M_WORD], res[M_WORD1], res[M_DIRTY], res[M_SCAN], res[M_FUNC], res[M_MEMCPY],
           res[M_READ], res[M_WORD] / res[M_DIRTY], res[M_WORD] / res[M_SCAN],
           res[M_WORD] / res[M_FUNC], res[M_BYTE] / res[M_DIRTY], res[M_BYTE] / res[M_SCAN],
           res[M_BYTE] / res[M_FUNC]);
    fflush(stdout);
}

/* The goals, stated against the faster of the two word loops; how many were missed. */
static int print_goals(const config *configs, size_t nconfigs, double (*results)[M_COUNT])
{
    printf("\nGoals (against the faster word loop):\n");
    int missed = 0;
    for (size_t ci = 0; ci < nconfigs; ci++) {
        const config *cf = &configs[ci];
        double want = 0;
        if (cf->touched == 0.01 && cf->clustered)
            want = cf->size == ((size_t)1 << 20) ? 5.0 : 2.0;
        else if (cf->touched == 0.10)
            want = 1.0;
        if (want == 0) continue;
        double word =
            results[ci][M_WORD] < results[ci][M_WORD1] ? results[ci][M_WORD] : results[ci][M_WORD1];
        char sz[16];
        fmt_size(sz, sizeof(sz), cf->size);
        for (int k = M_DIRTY; k <= M_FUNC; k++) {
            double ratio = word / results[ci][k];
            bool ok = ratio >= want;
            missed += !ok;
            printf("  %-7s %4.1f%% %-9s %-16s %5.1fx (goal >= %.0fx) %s\n", sz, cf->touched * 100,
                   cf->clustered ? "clustered" : "scattered", method_name[k], ratio, want,
                   ok ? "met" : "MISSED");
        }
    }
    printf("%s\n", missed ? "Some goals missed." : "All goals met.");
    return missed;
}

int main(int argc, char **argv)
{
    int reps = 5, passes = 0; /* passes 0: sized per map */
    if (!parse_args(argc, argv, &reps, &passes)) {
        fprintf(stderr, "usage: %s [REPS] [-p PASSES] [-i scalar|avx2]\n", argv[0]);
        return 2;
    }
    init_tables();
    for (int c = 0; c < 256; c++) {
        if (bucket8[c] != sift_bucket((uint8_t)c)) {
            fprintf(stderr, "reference bucket of %d differs from sift's\n", c);
            return 1;
        }
    }
    calibrate();
    static const size_t sizes[] = {(size_t)64 << 10, (size_t)1 << 20};
    static const double fractions[] = {0.001, 0.01, 0.10};
    config configs[12];
    size_t nconfigs = 0;
    for (size_t s = 0; s < 2; s++)
        for (size_t f = 0; f < 3; f++)
            for (int c = 1; c >= 0; c--)
                configs[nconfigs++] = (config){sizes[s], fractions[f], c};
    print_header(reps);
    double results[12][M_COUNT];
    for (size_t ci = 0; ci < nconfigs; ci++) {
        measure(&configs[ci], ci, reps, passes, results[ci]);
        print_row(&configs[ci], results[ci]);
    }
    printf("\nbyte: byte loop; word: word loop, four words per branch; word/br: the same with a "
           "branch per word;\nsift-dir: sift dirty-index; sift-scn: sift SIMD-scan; sift-fn: sift "
           "function index (functions of\n4-64 counters, a dirty byte each); memcpy: copying the "
           "map; read: OR-ing the whole map together\nwith the widest vectors (the floor of any "
           "pass that reads it all); w/dir = word / sift-dir, and so on.\n");
    print_goals(configs, nconfigs, results);
    return 0;
}
