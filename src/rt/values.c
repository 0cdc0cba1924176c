/* Function-boundary values: the hooks that sift-instrument's code calls at every instrumented
 * function's entry and return, and the tables that name what they receive. While fuzzing each
 * value is a feature of the VALUES domain, bucketed so that a state variable's every value
 * counts but a length counts only by its order of magnitude; in trace mode each value is a
 * record in the thread's ring. Like the comparison hooks they run on the target's hot path:
 * no locks, no allocation. */
#include "rt/values.h"
#include "rt/peek.h"
#include "rt/ring.h"

#include <stdio.h>

#define VALUES_MASK ((size_t)SIFT_RT_VALUES_COUNTERS - 1)
#define VALUES_BITS __builtin_ctz(SIFT_RT_VALUES_COUNTERS)
_Static_assert((SIFT_RT_VALUES_COUNTERS & VALUES_MASK) == 0,
               "VALUES domain size must be a power of two");

/* Values from -SMALL to SMALL are their own buckets: enough for the states, kinds, flags and
 * short lengths that steer a program, and few enough that a slot cannot add more than
 * 2 * SMALL + 1 exact features. */
#define SMALL          16
#define LOG_FIRST      4 /* floor(log2(SMALL + 1)) */
#define POSITIVE_FIRST (2 * SMALL + 1)
#define NEGATIVE_FIRST (POSITIVE_FIRST + 64 - LOG_FIRST)
#define NULL_BUCKET    (NEGATIVE_FIRST + 64 - LOG_FIRST)

SIFT_RT_NOINSTR int64_t sift_values_signed(uint64_t value, uint8_t type)
{
    unsigned bits = 8 * (type & SIFT_VALUES_WIDTH);
    if (type & SIFT_VALUES_POINTER || bits >= 64 || bits == 0) return (int64_t)value;
    uint64_t mask = (1ull << bits) - 1;
    value &= mask;
    if (type & SIFT_VALUES_SIGNED && value >> (bits - 1)) value |= ~mask;
    return (int64_t)value;
}

SIFT_RT_NOINSTR unsigned sift_values_bucket(uint64_t value, uint8_t type)
{
    if (type & SIFT_VALUES_POINTER) return NULL_BUCKET + (value != 0);
    int64_t v = sift_values_signed(value, type);
    bool negative = type & SIFT_VALUES_SIGNED && v < 0;
    uint64_t magnitude = negative ? -(uint64_t)v : (uint64_t)v;
    if (magnitude <= SMALL) return (unsigned)(negative ? SMALL - magnitude : SMALL + magnitude);
    unsigned log = (unsigned)(63 - __builtin_clzll(magnitude)) - LOG_FIRST;
    return (negative ? NEGATIVE_FIRST : POSITIVE_FIRST) + log;
}

/* Fibonacci hashing of the function's id with the slot and bucket folded into its low bits:
 * the id is a hash already, and the multiply carries every low-bit difference into the high
 * bits that pick the counter. */
SIFT_RT_NOINSTR size_t sift_values_feature(uint64_t fn, unsigned slot, unsigned bucket)
{
    uint64_t key = fn ^ ((uint64_t)slot << 8 | bucket);
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - VALUES_BITS));
}

SIFT_RT_NOINSTR static void take(sift_rt_state *rt, sift_ring *ring, const sift_values_fn *fn,
                                 unsigned slot, uint8_t kind, uint64_t value)
{
    if (rt->values_mode & SIFT_VALUES_FEATURES)
        sift_hit(&rt->values, sift_values_feature(fn->id, slot,
                                                  sift_values_bucket(value, fn->slots[slot].type)));
    if (ring) sift_ring_push(ring, fn->id, (uint16_t)slot, kind, value);
}

SIFT_RT_NOINSTR static sift_ring *ring_of(const sift_rt_state *rt)
{
    return rt->values_mode & SIFT_VALUES_RECORD ? sift_ring_self() : NULL;
}

SIFT_RT_NOINSTR void __sift_values_enter(const sift_values_fn *fn, const uint64_t *args)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || !rt->values_mode) return;
    sift_ring *ring = ring_of(rt);
    if (ring && fn->nargs == 0) sift_ring_push(ring, fn->id, SIFT_RING_NO_SLOT, SIFT_RING_ENTRY, 0);
    unsigned slot = 0;
    for (; slot < fn->nargs; slot++)
        take(rt, ring, fn, slot, SIFT_RING_ENTRY, args[slot]);
    for (; slot < fn->nslots && fn->slots[slot].kind == SIFT_VALUES_FIELD; slot++) {
        const sift_values_slot *s = &fn->slots[slot];
        uint64_t value;
        if (sift_peek((uintptr_t)args[s->arg] + s->offset, s->type & SIFT_VALUES_WIDTH, &value))
            take(rt, ring, fn, slot, SIFT_RING_FIELD, value);
    }
}

SIFT_RT_NOINSTR void __sift_values_return(const sift_values_fn *fn, uint64_t value)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || !rt->values_mode) return;
    unsigned last = fn->nslots - 1u;
    if (fn->nslots && fn->slots[last].kind == SIFT_VALUES_RETURN) {
        take(rt, ring_of(rt), fn, last, SIFT_RING_RETURN, value);
        return;
    }
    sift_ring *ring = ring_of(rt);
    if (ring) sift_ring_push(ring, fn->id, SIFT_RING_NO_SLOT, SIFT_RING_RETURN, 0);
}

/* Constructors run one at a time, so registration takes no lock. */
SIFT_RT_NOINSTR void __sift_values_register(uint32_t abi, const sift_values_fn *fns, size_t n)
{
    sift_rt_state *rt = sift_rt();
    if (!rt || n == 0) return;
    if (abi != SIFT_VALUES_ABI) {
        fprintf(stderr,
                "sift: a module was instrumented for values ABI %u, this runtime reads %u; "
                "ignoring its table\n",
                abi, SIFT_VALUES_ABI);
        return;
    }
    for (size_t i = 0; i < rt->nvalues_tables; i++)
        if (rt->values_tables[i].fns == fns) return;
    if (rt->nvalues_tables == SIFT_RT_MAX_MODULES) {
        fprintf(stderr, "sift: more than %d modules with value tables; ignoring another\n",
                SIFT_RT_MAX_MODULES);
        return;
    }
    rt->values_tables[rt->nvalues_tables++] = (sift_rt_values_table){.fns = fns, .n = n};
}

SIFT_RT_NOINSTR void sift_values_set_mode(sift_rt_state *rt, unsigned mode)
{
    if (mode) sift_peek_install();
    __atomic_store_n(&rt->values_mode, mode, __ATOMIC_RELEASE);
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
