/* The one pass over a domain's touched cache lines, shared by take, export and the snapshots. */
#ifndef SIFT_SCAN_H
#define SIFT_SCAN_H

#include "rt/cov/covmap_impl.h"

#include <stdbool.h>

/* Visits a line of LEN (<= 64) counters starting at domain index FIRST that may hold hits.
 * Returns false to stop the walk. */
typedef bool (*sift_line_fn)(void *ctx, uint8_t *counters, size_t len, size_t first);

/* Calls FN for every line of DOMAIN that was touched (dirty, in a marked function, or found
 * non-zero by a SIMD scan), in index order, each line once. CLEAN clears the dirty bytes of the
 * lines visited (and a function index's marks, 64 functions at a time: FN must not stop a walk
 * with CLEAN). Returns false if FN stopped the walk. */
bool sift_scan_domain(const sift_domain_map *dom, sift_line_fn fn, void *ctx, bool clean);

/* sift_scan_domain with CLEAN for a pass against SEEN (the domain's seen bucket bits, indexed
 * like its counters): a full line whose buckets SEEN already holds is reset on the spot and FN
 * is not called for it; FN gets every other touched line (one with something new, or a short
 * last line) and must reset it itself. */
bool sift_scan_domain_fresh(const sift_domain_map *dom, const uint8_t *seen, sift_line_fn fn,
                            void *ctx);

/* Bucket bits of every counter of a line of LEN bytes, written to OUT. */
void sift_scan_classify(const uint8_t *counters, size_t len, uint8_t *out);

/* Bit i set for each counter i of a line of LEN (<= 64) counters that is not zero. */
uint64_t sift_scan_nonzero(const uint8_t *counters, size_t len);

/* Bits of the classified line that SEEN lacks: nonzero when the line holds anything new. */
bool sift_scan_line_has_new(const uint8_t *counters, const uint8_t *seen, size_t len);

/* The vector code the scans use: the widest the CPU has, at most the limit (tests lower it to
 * cover the narrower paths on a wide machine). */
typedef enum { SIFT_ISA_SCALAR, SIFT_ISA_AVX2 } sift_isa;
sift_isa sift_scan_isa(void);
void sift_scan_limit_isa(sift_isa max);

extern const uint8_t sift_bucket_table[256];

#endif
