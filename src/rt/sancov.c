/* Sanitizer-coverage edge callbacks: every instrumented module (the executable and each shared
 * object, including those loaded later by dlopen) registers its counters here from its
 * constructor. The dynamic loader runs constructors one at a time, so registration takes no
 * lock. Modules are never unregistered: a module must not be unloaded while sift runs. */
#include "rt/rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

SIFT_RT_NOINSTR static bool module_room(sift_rt_state *rt)
{
    if (rt->npcs < SIFT_RT_MAX_MODULES) return true;
    fprintf(stderr, "sift: more than %d instrumented modules; ignoring the coverage of another\n",
            SIFT_RT_MAX_MODULES);
    return false;
}

/* The compiler passes the bounds of the module's __sancov_cntrs section. */
SIFT_RT_NOINSTR void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *end)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || start >= end) return;
    /* A module whose objects each carry the constructor reports the same section more than
     * once; attaching it twice would count every hit twice. */
    uintptr_t lo = (uintptr_t)start, hi = (uintptr_t)end;
    for (size_t i = 0; i < rt->npcs; i++) {
        uintptr_t m = (uintptr_t)rt->pcs[i].counters;
        if (lo < m + rt->pcs[i].len && m < hi) return;
    }
    if (!module_room(rt)) return;
    size_t len = (size_t)(end - start), first;
    if (sift_covmap_attach(rt->map, SIFT_DOMAIN_EDGES, start, len, &first) != SIFT_OK) return;
    rt->pcs[rt->npcs++] = (sift_rt_pcs){.counters = start, .first = first, .len = len};
}

/* Called right after the counters (or guards) of the same module were registered. */
SIFT_RT_NOINSTR void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || beg >= end || rt->npcs == 0) return;
    for (size_t i = 0; i < rt->npcs; i++)
        if (rt->pcs[i].pcs == beg) return;
    sift_rt_pcs *m = &rt->pcs[rt->npcs - 1];
    /* A table of another length belongs to a module whose counters were not registered. */
    if (!m->pcs && m->len == (size_t)(end - beg) / 2) m->pcs = beg;
}

/* sift-instrument's constructor (fn_dirty_abi.h), after the module registered its counters and
 * pc table: one dirty byte per function the pc table opens. The pass then reads these bytes
 * instead of every counter. A module that does not match keeps its SIMD scan. */
SIFT_RT_NOINSTR void __sift_fn_dirty_init(uint8_t *start, uint8_t *stop)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || start >= stop) return;
    sift_rt_pcs *m = NULL;
    for (size_t i = rt->npcs; i-- > 0 && !m;) {
        if (rt->pcs[i].fn_dirty == start) return; /* another object's copy of the constructor */
        if (rt->pcs[i].pcs && !rt->pcs[i].fn_dirty) m = &rt->pcs[i];
    }
    size_t n = (size_t)(stop - start), k = 0;
    uint32_t *starts = m ? malloc(n * sizeof(*starts)) : NULL;
    if (!starts) return;
    for (size_t i = 0; i < m->len && k <= n; i++)
        if (m->pcs[2 * i + 1] & 1) {
            if (k < n) starts[k] = (uint32_t)i;
            k++;
        }
    if (k == n && starts[0] == 0 &&
        sift_covmap_index_functions(rt->map, SIFT_DOMAIN_EDGES, m->first, start, starts, n) ==
            SIFT_OK)
        m->fn_dirty = start;
    else
        fprintf(stderr,
                "sift: %zu function dirty bytes for %zu functions of a module; its counters are "
                "scanned instead\n",
                n, k);
    free(starts);
}

/* Guards are numbered into sift-allocated edges regions, so these modules get dirty indexes
 * and share every pass with inline counters. */
SIFT_RT_NOINSTR void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
{
    sift_rt_state *rt = sift_rt();
    /* A numbered first guard means this module was registered already. */
    if (!rt || start >= stop || *start || !module_room(rt)) return;
    size_t n = (size_t)(stop - start), done = 0, first = 0;
    const uint8_t *counters = NULL;
    while (done < n) {
        if (rt->nguards == SIFT_RT_GUARD_REGIONS) {
            fprintf(stderr, "sift: out of trace-pc-guard regions; %zu guards left uncounted\n",
                    n - done);
            break;
        }
        size_t len = n - done < SIFT_RT_GUARD_MAX ? n - done : SIFT_RT_GUARD_MAX, at;
        sift_counters *region = &rt->guards[rt->nguards];
        if (sift_covmap_alloc(rt->map, SIFT_DOMAIN_EDGES, len, NULL, &at) != SIFT_OK ||
            sift_covmap_counters(rt->map, SIFT_DOMAIN_EDGES, at, region) != SIFT_OK)
            break;
        if (done == 0) {
            first = at;
            counters = region->counters;
        }
        uint32_t tag = (uint32_t)rt->nguards << SIFT_RT_GUARD_SHIFT;
        for (size_t i = 0; i < len; i++)
            start[done + i] = tag | (uint32_t)(i + 1);
        rt->nguards++;
        done += len;
    }
    /* Regions allocated back to back are contiguous in the domain: one module entry. */
    if (done)
        rt->pcs[rt->npcs++] = (sift_rt_pcs){.counters = counters, .first = first, .len = done};
}

SIFT_RT_NOINSTR void __sanitizer_cov_trace_pc_guard(uint32_t *guard)
{
    uint32_t g = *guard;
    if (!g) return;
    /* Only an existing state numbers guards, so sift_rt() is not NULL here. */
    sift_hit(&sift_rt()->guards[g >> SIFT_RT_GUARD_SHIFT], (g & SIFT_RT_GUARD_MAX) - 1);
}

/* -fsanitize-coverage=trace-pc: a call per edge, with no counter to keep, which libFuzzer has
 * dropped as well. A program built with it stops at its first edge with libFuzzer's words, so
 * that a build that looks fine is not fuzzed blind. */
SIFT_RT_NOINSTR void __sanitizer_cov_trace_pc(void)
{
    fputs("-fsanitize-coverage=trace-pc is no longer supported by libFuzzer.\n"
          "Please either migrate to a compiler that supports -fsanitize=fuzzer\n"
          "or use an older version of libFuzzer\n",
          stderr);
    /* Not exit(): the engine would take that for the target's own exit, a crash. */
    _exit(1);
}
