/* sift coverage maps: domains of 8-bit hit counters, read and reset in one pass. */
#ifndef SIFT_COVMAP_H
#define SIFT_COVMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A feedback domain. Each is an independent index space of counters. */
typedef enum {
    SIFT_DOMAIN_EDGES = 0,  /* control-flow edges (compiled counters) */
    SIFT_DOMAIN_CMP = 1,    /* comparison operand distances */
    SIFT_DOMAIN_VALUES = 2, /* function-boundary values */
} sift_domain;

#define SIFT_DOMAIN_COUNT  3
#define SIFT_DOMAIN_BIT(d) (1u << (d))
#define SIFT_DOMAINS_ALL   ((1u << SIFT_DOMAIN_COUNT) - 1)
/* Largest number of counters a domain may hold (256 Mi). */
#define SIFT_DOMAIN_MAX_LEN ((size_t)1 << 28)
/* One dirty byte covers this many counters: one cache line. */
#define SIFT_DIRTY_SHIFT 6

typedef enum {
    SIFT_OK = 0,
    SIFT_EINVAL = -1, /* null pointer, unknown domain, bad length */
    SIFT_ESHAPE = -2, /* map and snapshot (or export) disagree on domain sizes */
    SIFT_ENOMEM = -3,
    SIFT_ESPACE = -4, /* output buffer too small */
    SIFT_EFORMAT = -5 /* malformed export */
} sift_status;

/* What one execution added, from least to most. */
typedef enum {
    SIFT_NOTHING = 0,
    SIFT_NEW_COUNT = 1, /* only a new hit-count bucket of a known counter */
    SIFT_NEW_EDGE = 2   /* a counter never seen before */
} sift_novelty;

/* One-line English text for a status. Never NULL. */
const char *sift_strerror(int status);

/* Bucket of a hit count, one bit each: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+. 0 stays 0. */
uint8_t sift_bucket(uint8_t count);

typedef struct sift_covmap sift_covmap;

/* Creates an empty map (no domain has counters yet). NULL when out of memory. */
sift_covmap *sift_covmap_new(void);
void sift_covmap_free(sift_covmap *map);

/* Allocates LEN zeroed counters at the end of DOMAIN, with a dirty index, so that a pass
 * visits only the cache lines that sift_hit() touched. *COUNTERS receives the array, *FIRST its
 * first index in the domain (either may be NULL). */
int sift_covmap_alloc(sift_covmap *map, sift_domain domain, size_t len, uint8_t **counters,
                      size_t *first);

/* Appends an array the caller (or the compiler) owns and writes directly: a compiled module's
 * inline counters. Without a dirty index the pass skips untouched lines by a SIMD scan. */
int sift_covmap_attach(sift_covmap *map, sift_domain domain, uint8_t *counters, size_t len,
                       size_t *first);

/* Gives the region attached at index FIRST of DOMAIN a function index, so that a pass reads
 * one byte per function rather than every counter: function k owns counters STARTS[k] up to
 * STARTS[k+1] (the last one up to the region's end) and DIRTY[k] is set non-zero whenever any
 * of them changes (compiled code stores it at the function's entry). A pass visits the cache
 * lines of marked functions only, and clears their marks. STARTS (copied) begins at 0 and
 * never decreases; DIRTY (N bytes) stays the caller's. SIFT_EINVAL when no attached region
 * without an index begins at FIRST, or STARTS does not fit it. */
int sift_covmap_index_functions(sift_covmap *map, sift_domain domain, size_t first, uint8_t *dirty,
                                const uint32_t *starts, size_t n);

/* Number of counters in DOMAIN (0 for a bad map or domain). */
size_t sift_covmap_size(const sift_covmap *map, sift_domain domain);

/* Direct access for hooks on the hot path: counters and dirty index of an allocated array. */
typedef struct {
    uint8_t *counters;
    uint8_t *dirty;
    size_t len;
} sift_counters;

/* The array allocated by sift_covmap_alloc that holds index FIRST of DOMAIN. */
int sift_covmap_counters(sift_covmap *map, sift_domain domain, size_t first, sift_counters *out);

/* Counts one hit of counter IDX (saturating at 255) and marks its line dirty. */
static inline void sift_hit(const sift_counters *c, size_t idx)
{
    uint8_t v = c->counters[idx];
    c->counters[idx] = (uint8_t)(v + (v != 255));
    c->dirty[idx >> SIFT_DIRTY_SHIFT] = 1;
}

/* Reads the current execution's counters of DOMAIN as bucket bits into OUT (CAP bytes, at
 * least the domain size) and resets them, in one pass. */
int sift_covmap_take(sift_covmap *map, sift_domain domain, uint8_t *out, size_t cap);

/* Resets every counter of the domains in MASK without reading them. */
int sift_covmap_reset(sift_covmap *map, unsigned mask);

/* Writes what the current execution covered in the domains of MASK as a compact export (a
 * sparse list of bucketed counters, see docs/coverage-api.md) into BUF and resets those
 * counters. *LEN receives the bytes written; SIFT_ESPACE (with *LEN the size needed, and the
 * counters left as they were) when CAP is too small. */
int sift_covmap_export(sift_covmap *map, unsigned mask, uint8_t *buf, size_t cap, size_t *len);

/* Calls FN for every (domain, index, bucket bits) entry of an export, in order. Returns
 * SIFT_EFORMAT for a malformed or truncated export. */
typedef void (*sift_export_fn)(void *ctx, sift_domain domain, size_t index, uint8_t buckets);
int sift_export_foreach(const uint8_t *buf, size_t len, sift_export_fn fn, void *ctx);

/* The size of each domain of the map an export came from (0 for a domain it does not hold). */
int sift_export_shape(const uint8_t *buf, size_t len, size_t sizes[SIFT_DOMAIN_COUNT]);

#ifdef __cplusplus
}
#endif
#endif
