/* Record rings. Each thread writes only its own ring, so a push is a load of the consumer's
 * position, a copy and a release store: no lock and no read-modify-write on the hot path.
 * Consumers of one ring take turns through a flag, so any thread may drain, the crash path
 * included. Rings live in memory mapped for them (a target's own malloc may be what is being
 * traced) and are never freed: a thread that exits leaves its records to be drained. */
#include "rt/ring.h"
#include "rt/rt.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>

#define RING_MASK ((uint64_t)SIFT_RING_CAPACITY - 1)
_Static_assert((SIFT_RING_CAPACITY & RING_MASK) == 0, "ring capacity must be a power of two");

/* Positions grow forever and wrap by mask. The producer's and the consumers' fields sit on
 * cache lines of their own, so that neither side's stores slow the other's loads. */
struct sift_ring {
    _Alignas(64) _Atomic uint64_t head; /* records written; only the producer stores it */
    _Atomic uint64_t dropped;           /* records not written for lack of room; producer */
    _Alignas(64) _Atomic uint64_t tail; /* records taken; only the draining consumer stores */
    atomic_int draining;                /* 1 while a consumer holds this ring */
    _Alignas(64) uint32_t thread;       /* set before the ring is published, then constant */
    sift_ring *next;
    sift_ring_record recs[SIFT_RING_CAPACITY];
};

/* Every thread's ring, newest first. Besides sift_rt()'s state, the runtime's one global: a
 * consumer must find rings that threads create on their own, and no context reaches the hooks
 * that create them. */
static _Atomic(sift_ring *) sift_ring_list;

static __thread sift_ring *ring_self;
static __thread bool ring_failed;

SIFT_RT_NOINSTR sift_ring *sift_ring_self(void)
{
    if (ring_self || ring_failed) return ring_self;
    sift_ring *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        ring_failed = true;
        return NULL;
    }
    sift_ring *old = atomic_load_explicit(&sift_ring_list, memory_order_relaxed);
    do {
        r->thread = old ? old->thread + 1 : 0;
        r->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&sift_ring_list, &old, r, memory_order_release,
                                                    memory_order_relaxed));
    ring_self = r;
    return r;
}

SIFT_RT_NOINSTR void sift_ring_push(sift_ring *r, uint64_t fn, uint16_t slot, uint8_t kind,
                                    uint64_t value)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t dropped = atomic_load_explicit(&r->dropped, memory_order_relaxed);
    /* Acquire: the consumer has finished reading the records it has given back. */
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail >= SIFT_RING_CAPACITY) {
        atomic_store_explicit(&r->dropped, dropped + 1, memory_order_relaxed);
        return;
    }
    r->recs[head & RING_MASK] = (sift_ring_record){
        .fn = fn,
        .value = value,
        .seq = head + dropped,
        .thread = r->thread,
        .slot = slot,
        .kind = kind,
    };
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

SIFT_RT_NOINSTR static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

SIFT_RT_NOINSTR static bool take_turn(sift_ring *r, uint64_t wait_ns)
{
    uint64_t deadline = 0;
    for (;;) {
        int idle = 0;
        if (atomic_compare_exchange_strong_explicit(&r->draining, &idle, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return true;
        uint64_t now = now_ns();
        if (!deadline) deadline = now + wait_ns;
        if (now >= deadline) return false;
        sched_yield();
    }
}

/* Gives records back in batches, so that a long drain lets the producer go on meanwhile. */
#define GIVE_BACK_EVERY 1024

SIFT_RT_NOINSTR size_t sift_ring_drain(sift_ring_fn fn, void *ctx, uint64_t wait_ns)
{
    size_t taken = 0;
    for (sift_ring *r = atomic_load_explicit(&sift_ring_list, memory_order_acquire); r;
         r = r->next) {
        if (!take_turn(r, wait_ns)) continue;
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        /* Acquire: the records before head are completely written. */
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        while (tail != head) {
            fn(ctx, &r->recs[tail & RING_MASK]);
            tail++;
            taken++;
            if (tail % GIVE_BACK_EVERY == 0)
                atomic_store_explicit(&r->tail, tail, memory_order_release);
        }
        atomic_store_explicit(&r->tail, tail, memory_order_release);
        atomic_store_explicit(&r->draining, 0, memory_order_release);
    }
    return taken;
}

SIFT_RT_NOINSTR uint64_t sift_ring_dropped(void)
{
    uint64_t n = 0;
    for (sift_ring *r = atomic_load_explicit(&sift_ring_list, memory_order_acquire); r; r = r->next)
        n += atomic_load_explicit(&r->dropped, memory_order_relaxed);
    return n;
}

SIFT_RT_NOINSTR void sift_ring_reset(void)
{
    for (sift_ring *r = atomic_load_explicit(&sift_ring_list, memory_order_acquire); r;
         r = r->next) {
        atomic_store_explicit(&r->head, 0, memory_order_relaxed);
        atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dropped, 0, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_seq_cst);
}
