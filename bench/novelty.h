/* bench/novelty's setup, apart from what it times (novelty.c): the executions' patterns of
 * counters and the methods' maps. */
#ifndef SIFT_BENCH_NOVELTY_H
#define SIFT_BENCH_NOVELTY_H

#include "sift/covmap.h"
#include "sift/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t *idx; /* touched counters, ascending */
    uint8_t *val;
    size_t n;
} pattern;

/* TOUCHED distinct counters of SIZE, either in runs of 8-64 consecutive counters (the blocks
 * of a function that ran) or each at a uniform random position, drawn from SEED. */
pattern make_pattern(size_t size, size_t touched, bool clustered, uint64_t seed);
void touch(const pattern *p, uint8_t *counters);
/* What p->val[k] calls of sift_hit() leave behind: the count, and the line marked dirty. */
void touch_dirty(const pattern *p, const sift_counters *c);

enum { M_BYTE, M_WORD, M_WORD1, M_DIRTY, M_SCAN, M_FUNC, M_MEMCPY, M_READ, M_COUNT };
extern const char *const method_name[M_COUNT];

typedef struct {
    int kind;
    size_t size;
    uint8_t *map, *virgin;  /* references; memcpy's source and destination */
    sift_covmap *cov;       /* sift */
    sift_counters counters; /* dirty-index mode: the allocated array */
    uint8_t *attached;      /* SIMD-scan and fn-index modes: the array the "compiler" owns */
    uint8_t *fn_dirty;      /* fn-index mode: one byte per function, set at its entry */
    uint32_t *fn_of;        /* fn-index mode: the function of each counter */
    size_t nfns;
    sift_snapshot *snap;
} method;

/* A method's maps for SIZE counters, its global state empty; exits on failure. */
method method_new(int kind, size_t size);
void method_free(method *m);
/* Exits with a line naming WHAT when RC is not SIFT_OK. */
void check(int rc, const char *what);

#endif
