/* Record rings: one lock-free single-producer ring per thread, holding the function-boundary
 * records of trace mode, which any thread may drain while the producers run. */
#ifndef SIFT_RING_H
#define SIFT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records one ring holds before a producer that is not drained starts counting drops. */
#define SIFT_RING_CAPACITY ((size_t)1 << 16)

typedef enum {
    SIFT_RING_ENTRY = 0,  /* a call began: one record per argument, or one with no slot */
    SIFT_RING_FIELD = 1,  /* a field of an argument's struct, at entry */
    SIFT_RING_RETURN = 2, /* the call returned: its value, or no slot */
} sift_ring_kind;

/* The slot of a record that carries no value: a call without arguments, a void return. */
#define SIFT_RING_NO_SLOT 0xffff

typedef struct {
    uint64_t fn;     /* the function's id (sift_values_fn.id) */
    uint64_t value;  /* zero-extended, as the hooks received it */
    uint64_t seq;    /* the thread's record number, from 0; dropped records leave gaps */
    uint32_t thread; /* rings are numbered from 0 in the order threads first push */
    uint16_t slot;   /* the slot's index in the function's table, or SIFT_RING_NO_SLOT */
    uint8_t kind;    /* sift_ring_kind */
    uint8_t pad;
} sift_ring_record;

typedef struct sift_ring sift_ring;

/* The calling thread's ring, created and put on the list of rings on first use. NULL when
 * no memory could be mapped for it. */
sift_ring *sift_ring_self(void);

/* Appends a record to R, the calling thread's own ring. Never blocks and never overwrites:
 * when the ring is full the record is counted as dropped. Async-signal-safe. */
void sift_ring_push(sift_ring *r, uint64_t fn, uint16_t slot, uint8_t kind, uint64_t value);

typedef void (*sift_ring_fn)(void *ctx, const sift_ring_record *rec);

/* Takes every record pushed so far out of every ring, oldest first within a ring, and calls
 * FN on each. Any thread may drain while producers push; drains of one ring take turns, each
 * waiting up to WAIT_NS nanoseconds for another to finish (rings still busy then are left
 * for later). Returns the number of records taken. Async-signal-safe when FN is. */
size_t sift_ring_drain(sift_ring_fn fn, void *ctx, uint64_t wait_ns);

/* Records dropped so far, in all rings. */
uint64_t sift_ring_dropped(void);

/* Empties every ring and restarts its numbering and drop count at 0. Only while no thread
 * pushes or drains. */
void sift_ring_reset(void);

#endif
