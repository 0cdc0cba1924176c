/* The in-process runtime: the coverage state that compiled instrumentation writes into. */
#ifndef SIFT_RT_H
#define SIFT_RT_H

#include "abi/values_abi.h"
#include "rt/cmp.h"
#include "sift/covmap.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Counters of the comparison and value domains (sift writes them, so they carry dirty
 * indexes). Powers of two so that a hash maps onto them with a mask. */
#define SIFT_RT_CMP_COUNTERS    (1u << 16)
#define SIFT_RT_VALUES_COUNTERS (1u << 18)

/* A compiled module's edge counters and pc table (from __sanitizer_cov_pcs_init): one pc
 * entry per counter. */
typedef struct {
    const uintptr_t *pcs;    /* pairs: pc, flags (1 = function entry); NULL without pc-table */
    const uint8_t *counters; /* inline counters, or the sift-allocated array for pc guards */
    size_t first;            /* index of its first counter in the edges domain */
    size_t len;
    const uint8_t *fn_dirty; /* its function index's dirty bytes (fn_dirty_abi.h), or NULL */
} sift_rt_pcs;

#define SIFT_RT_MAX_MODULES 256

/* A trace-pc-guard guard holds (region << SIFT_RT_GUARD_SHIFT) | (counter + 1); 0 means not
 * counted. The region picks one of rt->guards, so the hook needs no search. */
#define SIFT_RT_GUARD_SHIFT   24
#define SIFT_RT_GUARD_REGIONS 256
#define SIFT_RT_GUARD_MAX     ((1u << SIFT_RT_GUARD_SHIFT) - 1) /* counters per region */

/* For runtime code that instrumented code calls: instrumented itself, it would feed its own
 * edges back into the map (and the guard callback would call itself). */
#define SIFT_RT_NOINSTR __attribute__((no_sanitize("coverage")))

/* A module's table of instrumented functions (values.c), sorted by id. */
typedef struct {
    const sift_values_fn *fns;
    size_t n;
} sift_rt_values_table;

typedef struct {
    sift_covmap *map;
    sift_counters cmp, values; /* allocated domains, hit through sift_hit() */
    sift_cmp_table cmps;
    bool tracing; /* whether hooks record anything (off while not fuzzing) */
    /* Set by the engine on most executions: integer comparisons then stay out of the operand
     * ring. A decoder compares integers in its innermost loops, and filling the ring on every
     * execution took half of a zlib campaign's time, while the mutator reads a few entries per
     * mutant and a ring refilled every few executions serves it as well. */
    bool int_ring_paused;
    /* The input the target runs on while tracing, so that a byte comparison can say where in
     * it an operand lies. */
    const uint8_t *input;
    size_t input_size;
    /* Set when nobody counts the CMP domain: the comparison hooks then only feed the operand
     * rings, and skip hashing distances that were half of a comparison-heavy target's time. */
    bool cmp_features_off;
    /* Set by -use_memmem=0: a failed search then only counts its features. */
    bool search_hints_off;
    sift_rt_pcs pcs[SIFT_RT_MAX_MODULES]; /* every registered module, in load order */
    size_t npcs;
    sift_counters guards[SIFT_RT_GUARD_REGIONS]; /* edges regions of trace-pc-guard modules */
    size_t nguards;
    unsigned values_mode; /* SIFT_VALUES_FEATURES, SIFT_VALUES_RECORD (values_abi.h); 0 = off */
    const uint64_t *values_known; /* bits of the counters the inline features skip
                                   * (sift_values_skip_known) */
    sift_rt_values_table values_tables[SIFT_RT_MAX_MODULES]; /* in load order */
    size_t nvalues_tables;
    /* The SIGSEGV and SIGBUS handlers that sift_peek's handler passes other faults to. */
    struct sigaction peek_prev[2];
    bool peek_ready;
} sift_rt_state;

/* The process's coverage state. The sanitizer-coverage callbacks carry no context pointer, so
 * this one global is forced on the runtime; everything else takes its state explicitly.
 * Initialised on first use (module constructors run before main). NULL only when out of
 * memory at start-up, in which case every hook does nothing. */
sift_rt_state *sift_rt(void);

/* The state once sift_rt() has set it up (NULL before): the same global, read inline by the
 * comparison hooks, which run on every comparison of the target and cannot afford a call. */
extern sift_rt_state *sift_rt_ready;

static inline sift_rt_state *sift_rt_fast(void)
{
    sift_rt_state *rt = __atomic_load_n(&sift_rt_ready, __ATOMIC_ACQUIRE);
    return rt ? rt : sift_rt();
}

/* How many libFuzzer extra counters (the __libfuzzer_extra_counters section) the program has. */
size_t sift_rt_extra_counters(void);

/* Stack depth of one run (depth.c): _begin, just before the target is called, starts the
 * lowest frame at its own and returns where it started; _end, once the target returned,
 * counts the depth reached as a feature of RT's VALUES domain. */
uintptr_t sift_rt_depth_begin(void);
void sift_rt_depth_end(sift_rt_state *rt, uintptr_t top);

/* The comparison feedback (cmp.c) over this state: the state holds its table (cmp.h), and only
 * cmp.c records into it. */

/* Records a comparison of two integers of SIZE bytes at call site PC (hooks and tests). */
void sift_rt_cmp(sift_rt_state *rt, uintptr_t pc, uint64_t a, uint64_t b, uint8_t size);
/* Opens the gates of compiled comparison callbacks (abi/cmp_gate_abi.h) to what RT's
 * cmp_features_off, tracing and int_ring_paused ask of them: to be called after each change. */
void sift_rt_cmp_gate_update(const sift_rt_state *rt);

/* Records a comparison of two byte strings of LEN bytes at call site PC. */
void sift_rt_cmp_bytes(sift_rt_state *rt, uintptr_t pc, const void *a, const void *b, size_t len);

#endif
