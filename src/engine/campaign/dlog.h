/* The discovery log: what one process of a campaign found, for every other process to take
 * without re-running it. It lives in shared memory and takes no lock (docs/workers.md). */
#ifndef SIFT_DLOG_H
#define SIFT_DLOG_H

#include "engine/core/corpus.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A record that only names an input its producer ran: it added no coverage. */
#define SIFT_DLOG_KNOWN 1u

/* One discovery as a producer publishes it and a reader gets it back. */
typedef struct {
    uint32_t flags;
    uint32_t origin; /* producer-defined: which input of a replay or sync list */
    uint64_t exec_ns;
    uint64_t published_ns; /* CLOCK_MONOTONIC, stamped by sift_dlog_publish */
    uint64_t execs;        /* the producer's executions when it found it */
    char name[41];         /* hex SHA-1 of the data */
    char parent[41];       /* the entry it was mutated from, "" for none */
    char op[48];           /* how it was made (mutation operators), "" for none */
    const uint8_t *data;
    size_t size;
    const sift_feature_id *features; /* sorted, unique */
    size_t nfeatures;
} sift_dlog_entry;

/* One ring per producer: only that producer writes it. HEAD counts bytes published, RESERVE
 * the end of the record being written, DRAINED what the supervisor has taken (a producer never
 * overwrites beyond it). Each on its own cache line. */
typedef struct {
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t reserve;
    _Alignas(64) _Atomic uint64_t drained;
} sift_dlog_ring;

typedef struct {
    uint64_t magic;
    uint32_t nrings;
    uint64_t ring_bytes;
    /* Set when the campaign stops: a producer waiting for room gives up rather than wait for a
     * supervisor that no longer drains. */
    _Atomic uint32_t closed;
    /* Bumped after every publication: a reader tests this one word to see whether any ring
     * holds something new. */
    _Alignas(64) _Atomic uint64_t published;
} sift_dlog_header;

/* A process's view of a log (the mapping is shared, the view is not). */
typedef struct {
    sift_dlog_header *hdr;
    uint8_t *base; /* the rings: each a sift_dlog_ring, then ring_bytes of records */
    unsigned nrings;
    size_t ring_bytes;
} sift_dlog;

/* Scratch a process keeps for encoding and decoding records. */
typedef struct {
    uint8_t *buf;
    size_t cap;
    sift_feature_id *features;
    size_t fcap;
} sift_dlog_scratch;

/* Bytes of shared memory for NRINGS rings of RING_BYTES (a power of two, at least 4096);
 * 0 when that does not fit in memory. */
size_t sift_dlog_bytes(unsigned nrings, size_t ring_bytes);

/* Formats MEM (zero-filled, 64-byte aligned, sift_dlog_bytes long) as an empty log. */
void sift_dlog_init(sift_dlog *log, void *mem, unsigned nrings, size_t ring_bytes);

/* The largest encoded record a ring takes: half of it. */
size_t sift_dlog_max_record(const sift_dlog *log);
/* The encoded size of E. */
size_t sift_dlog_record_size(const sift_dlog_entry *e);

/* Appends E to RING, which only this process writes, stamping published_ns. Waits while the
 * supervisor has not drained the room it needs. Returns 0, or -1 (ENOMEM, E2BIG: larger than
 * sift_dlog_max_record; ECANCELED: the log was closed while it waited) with nothing published. */
int sift_dlog_publish(sift_dlog *log, unsigned ring, sift_dlog_entry *e, sift_dlog_scratch *s);

/* Reads the record of RING at *CURSOR into E (pointing into S) and advances *CURSOR.
 * Returns 1 for a record, 0 when there is none yet, -1 when the producer overwrote it before
 * this reader got to it (the reader fell behind: *CURSOR moves to the head). */
int sift_dlog_read(const sift_dlog *log, unsigned ring, uint64_t *cursor, sift_dlog_entry *e,
                   sift_dlog_scratch *s);

/* The supervisor took everything of RING before CURSOR: the producer may reuse that room. */
void sift_dlog_release(sift_dlog *log, unsigned ring, uint64_t cursor);

/* No more room will be made: producers waiting for it, and later ones, give up. */
void sift_dlog_close(sift_dlog *log);

uint64_t sift_dlog_head(const sift_dlog *log, unsigned ring);
/* The publication count (sift_dlog_header.published). */
uint64_t sift_dlog_generation(const sift_dlog *log);

void sift_dlog_scratch_free(sift_dlog_scratch *s);

#endif
