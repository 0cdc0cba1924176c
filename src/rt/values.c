/* Function-boundary values: the hooks that sift-instrument's code calls at every instrumented
 * function's entry and return, and the tables that name what they receive. While fuzzing each
 * value is a feature of the VALUES domain, bucketed so that a state variable's every value
 * counts but a length counts only by its order of magnitude (up to 2^16); in trace mode each value
 * is a record in the thread's ring. Like the comparison hooks they run on the target's hot path: no
 * locks, no allocation. */
#include "rt/values.h"
#include "rt/peek.h"
#include "rt/ring.h"
#include "rt/cov/snapshot_impl.h"

#include <stdio.h>

/* Instrumented code computes features with the ABI's constants: the domain must match them.
 * (Two definitions that must agree, which is why both sides read alike.) */
/* NOLINTNEXTLINE(misc-redundant-expression) */
_Static_assert(SIFT_RT_VALUES_COUNTERS == 1u << SIFT_VALUES_FEATURE_BITS,
               "the VALUES domain has 1 << SIFT_VALUES_FEATURE_BITS counters");
_Static_assert(SIFT_DIRTY_SHIFT == SIFT_VALUES_DIRTY_SHIFT,
               "instrumented code marks the covmap's dirty bytes");

#define INLINE SIFT_RT_NOINSTR static inline __attribute__((always_inline))

/* What the inline features skip when every value is to be marked: nothing. */
static uint64_t nothing_known[SIFT_RT_VALUES_COUNTERS / 64];

INLINE int64_t signed_value(uint64_t value, uint8_t type)
{
    unsigned bits = 8 * (type & SIFT_VALUES_WIDTH);
    if (type & SIFT_VALUES_POINTER || bits >= 64 || bits == 0) return (int64_t)value;
    uint64_t mask = (1ull << bits) - 1;
    value &= mask;
    if (type & SIFT_VALUES_SIGNED && value >> (bits - 1)) value |= ~mask;
    return (int64_t)value;
}

INLINE unsigned bucket_of(uint64_t value, uint8_t type)
{
    if (type & SIFT_VALUES_POINTER) return SIFT_VALUES_NULL_BUCKET + (value != 0);
    int64_t v = signed_value(value, type);
    bool negative = type & SIFT_VALUES_SIGNED && v < 0;
    uint64_t magnitude = negative ? -(uint64_t)v : (uint64_t)v;
    if (magnitude <= SIFT_VALUES_SMALL)
        return (unsigned)(negative ? SIFT_VALUES_SMALL - magnitude : SIFT_VALUES_SMALL + magnitude);
    unsigned log = (unsigned)(63 - __builtin_clzll(magnitude));
    if (log >= SIFT_VALUES_LOG_LARGE)
        log = log >= SIFT_VALUES_LOG_HUGE ? SIFT_VALUES_LOG_LARGE + 1 : SIFT_VALUES_LOG_LARGE;
    return (negative ? SIFT_VALUES_NEGATIVE_FIRST : SIFT_VALUES_POSITIVE_FIRST) + log -
           SIFT_VALUES_LOG_FIRST;
}

/* The slot's line (values_abi.h), the bucket rotated within it. */
INLINE size_t feature_of(uint64_t fn, unsigned slot, unsigned bucket)
{
    size_t base = sift_values_slot_base(fn, slot), line = (size_t)1 << SIFT_VALUES_DIRTY_SHIFT;
    return (base & ~(line - 1)) | ((base + bucket) & (line - 1));
}

SIFT_RT_NOINSTR int64_t sift_values_signed(uint64_t value, uint8_t type)
{
    return signed_value(value, type);
}

SIFT_RT_NOINSTR unsigned sift_values_bucket(uint64_t value, uint8_t type)
{
    return bucket_of(value, type);
}

SIFT_RT_NOINSTR size_t sift_values_feature(uint64_t fn, unsigned slot, unsigned bucket)
{
    return feature_of(fn, slot, bucket);
}

/* Where one hook call's values go: the VALUES counters while fuzzing (NULL otherwise), the
 * thread's ring in trace mode (NULL otherwise). Held in locals, so that the byte stores into
 * the counters do not make the compiler reload them for every value. */
typedef struct {
    uint8_t *counters, *dirty;
    sift_ring *ring;
    const sift_values_fn *fn;
} sink;

/* A value marks its counter as hit without counting: a value seen once or a thousand times in
 * one execution is the same feature. Counts would make each repetition count (a loop's
 * iterations times each value) and flood the corpus, and a store costs less on the hot path
 * than an increment, whose load misses the cache as often as not. */
INLINE void take(const sink *k, unsigned slot, uint8_t kind, uint64_t value)
{
    uint8_t type = k->fn->slots[slot].type;
    /* A non-null pointer is every call's usual case; only a null one tells something. */
    if (k->counters && !(type & SIFT_VALUES_POINTER && value)) {
        size_t idx = feature_of(k->fn->id, slot, bucket_of(value, type));
        k->counters[idx] = 1;
        k->dirty[idx >> SIFT_DIRTY_SHIFT] = 1;
    }
    if (k->ring) sift_ring_push(k->ring, k->fn->id, (uint16_t)slot, kind, value);
}

/* The sink for RT's mode; false when the hooks do nothing (the mode changed since the caller's
 * test, or a caller other than instrumented code). */
INLINE bool sink_for(sift_rt_state *rt, const sift_values_fn *fn, sink *k)
{
    unsigned mode = __atomic_load_n(&rt->values_mode, __ATOMIC_RELAXED);
    if (!mode) return false;
    bool features = mode & SIFT_VALUES_FEATURES;
    *k = (sink){
        .counters = features ? rt->values.counters : NULL,
        .dirty = features ? rt->values.dirty : NULL,
        .ring = mode & SIFT_VALUES_RECORD ? sift_ring_self() : NULL,
        .fn = fn,
    };
    return true;
}

/* The state the mode word lies in. */
INLINE sift_rt_state *state_of(const unsigned *mode)
{
    return (sift_rt_state *)((uintptr_t)mode - offsetof(sift_rt_state, values_mode));
}

SIFT_RT_NOINSTR void __sift_values_enter(const unsigned *mode, const sift_values_fn *fn,
                                         const uint64_t *args)
{
    sift_rt_state *rt = state_of(mode);
    sink k;
    if (!sink_for(rt, fn, &k)) return;
    if (k.ring && fn->nargs == 0)
        sift_ring_push(k.ring, fn->id, SIFT_RING_NO_SLOT, SIFT_RING_ENTRY, 0);
    unsigned slot = 0, nargs = fn->nargs, nslots = fn->nslots;
    for (; slot < nargs; slot++)
        take(&k, slot, SIFT_RING_ENTRY, args[slot]);
    /* The fields of one argument come together and in order: one check that the span from the
     * first to the end of the last is readable, then plain loads. */
    while (slot < nslots && fn->slots[slot].kind == SIFT_VALUES_FIELD) {
        const sift_values_slot *first = &fn->slots[slot];
        unsigned end = slot + 1;
        while (end < nslots && fn->slots[end].kind == SIFT_VALUES_FIELD &&
               fn->slots[end].arg == first->arg)
            end++;
        const sift_values_slot *last = &fn->slots[end - 1];
        uintptr_t base = (uintptr_t)args[first->arg];
        if (sift_peek_span(rt, base + first->offset,
                           base + last->offset + (last->type & SIFT_VALUES_WIDTH)))
            for (; slot < end; slot++)
                take(&k, slot, SIFT_RING_FIELD,
                     sift_peek_read(base + fn->slots[slot].offset,
                                    fn->slots[slot].type & SIFT_VALUES_WIDTH));
        slot = end;
    }
}

SIFT_RT_NOINSTR void __sift_values_return(const unsigned *mode, const sift_values_fn *fn,
                                          uint64_t value)
{
    sink k;
    if (!sink_for(state_of(mode), fn, &k)) return;
    unsigned last = fn->nslots - 1u;
    if (fn->nslots && fn->slots[last].kind == SIFT_VALUES_RETURN)
        take(&k, last, SIFT_RING_RETURN, value);
    else if (k.ring)
        sift_ring_push(k.ring, fn->id, SIFT_RING_NO_SLOT, SIFT_RING_RETURN, 0);
}

SIFT_RT_NOINSTR int __sift_values_readable(const unsigned *mode, uintptr_t lo, uintptr_t hi)
{
    return sift_peek_span(state_of(mode), lo, hi);
}

/* Constructors run one at a time, so registration takes no lock. */
SIFT_RT_NOINSTR void __sift_values_register(uint32_t abi, const sift_values_fn *fns, size_t n,
                                            sift_values_module *module)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || n == 0) return;
    if (abi != SIFT_VALUES_ABI) {
        fprintf(stderr,
                "sift: a module was instrumented for values ABI %u, this runtime reads %u; "
                "ignoring its table\n",
                abi, (unsigned)SIFT_VALUES_ABI);
        return;
    }
    module->counters = rt->values.counters;
    module->dirty = rt->values.dirty;
    module->known = &rt->values_known;
    if (!rt->values_known) rt->values_known = nothing_known;
    module->mode = &rt->values_mode;
    for (size_t i = 0; i < rt->nvalues_tables; i++)
        if (rt->values_tables[i].fns == fns) return;
    if (rt->nvalues_tables == SIFT_RT_MAX_MODULES) {
        fprintf(stderr, "sift: more than %d modules with value tables; ignoring another\n",
                SIFT_RT_MAX_MODULES);
        return;
    }
    rt->values_tables[rt->nvalues_tables++] = (sift_rt_values_table){.fns = fns, .n = n};
}

SIFT_RT_NOINSTR void sift_values_skip_known(sift_rt_state *rt, const sift_snapshot *snap)
{
    const uint64_t *known = sift_snapshot_known(snap, SIFT_DOMAIN_VALUES, SIFT_RT_VALUES_COUNTERS);
    rt->values_known = known ? known : nothing_known;
}

SIFT_RT_NOINSTR void sift_values_set_mode(sift_rt_state *rt, unsigned mode)
{
    if (mode) sift_peek_install();
    __atomic_store_n(&rt->values_mode, mode, __ATOMIC_RELEASE);
}

SIFT_RT_NOINSTR void sift_values_pause(sift_rt_state *rt, bool paused)
{
    unsigned mode = __atomic_load_n(&rt->values_mode, __ATOMIC_RELAXED);
    mode = paused ? mode & ~SIFT_VALUES_FEATURES : mode | SIFT_VALUES_FEATURES;
    __atomic_store_n(&rt->values_mode, mode, __ATOMIC_RELEASE);
}

SIFT_RT_NOINSTR bool sift_values_counted(const sift_rt_state *rt)
{
    return __atomic_load_n(&rt->values_mode, __ATOMIC_RELAXED) & SIFT_VALUES_FEATURES;
}

SIFT_RT_NOINSTR const sift_values_fn *sift_values_lookup(const sift_rt_state *rt, uint64_t id)
{
    for (size_t t = 0; t < rt->nvalues_tables; t++) {
        const sift_values_fn *fns = rt->values_tables[t].fns;
        size_t lo = 0, hi = rt->values_tables[t].n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (fns[mid].id == id) return &fns[mid];
            if (fns[mid].id < id)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return NULL;
}

SIFT_RT_NOINSTR size_t sift_values_count(const sift_rt_state *rt)
{
    size_t n = 0;
    for (size_t t = 0; t < rt->nvalues_tables; t++)
        n += rt->values_tables[t].n;
    return n;
}
