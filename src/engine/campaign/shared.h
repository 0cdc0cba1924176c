/* The memory every process of a campaign shares: a stop flag, per-worker counters, the global
 * coverage snapshot and the discovery log, in one anonymous mapping made before fork. */
#ifndef SIFT_SHARED_H
#define SIFT_SHARED_H

#include "engine/campaign/dlog.h"
#include "sift/snapshot.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* Written by one worker, read by the supervisor about once a second. Two cache lines each, so
 * that a worker's stores never touch a line another worker writes (nor its prefetched pair). */
typedef struct {
    _Alignas(128) _Atomic uint64_t execs; /* of the worker process running now */
    _Atomic uint64_t corpus;              /* entries in its corpus */
    _Atomic uint64_t new_units;           /* inputs it found */
    _Atomic uint64_t imported;            /* entries it took from the others */
    _Atomic uint64_t last_new_ns;         /* CLOCK_MONOTONIC of its last find */
    _Atomic uint64_t import_lag_ns;       /* longest time from publication to taking an entry */
    _Atomic uint32_t resync;              /* it fell behind the log: start it again */
} sift_worker_stats;

typedef struct {
    uint64_t magic;
    _Alignas(64) _Atomic int stop; /* workers finish their current input and exit */
} sift_shared_header;

typedef struct {
    void *mem;
    size_t len;
    sift_shared_header *hdr;
    sift_worker_stats *workers;
    unsigned nworkers;
    void *snap_mem;
    size_t snap_len;
    size_t capacity[SIFT_DOMAIN_COUNT];
    sift_dlog log;
} sift_shared;

/* Maps the shared memory for NWORKERS workers, NRINGS discovery-log rings of RING_BYTES and a
 * snapshot of CAPACITY, and sets it up; the supervisor calls it before forking anyone.
 * Returns 0, or -1 with errno set. */
int sift_shared_map(sift_shared *s, unsigned nworkers, unsigned nrings, size_t ring_bytes,
                    const size_t capacity[SIFT_DOMAIN_COUNT]);
void sift_shared_unmap(sift_shared *s);

/* This process's view of the shared snapshot (sift_snapshot_free it). */
int sift_shared_snapshot(const sift_shared *s, sift_snapshot **out);

/* In a child the supervisor (pid PARENT) just forked: dies with the supervisor, and writes its
 * output into LOG_FD (the worker's log). Exits when the supervisor is gone already. */
void sift_shared_child(pid_t parent, int log_fd);

/* Finds in the log LOG_FD, after offset FROM, the path of the last artifact a worker wrote
 * ("Test unit written to PATH"). Returns 0 with PATH filled, -1 when there is none, -2 when
 * the last one could not be written ("ERROR: cannot write artifact ..."). */
int sift_shared_artifact(int log_fd, off_t from, char *path, size_t cap);

/* The last sanitizer or libFuzzer "SUMMARY: " line in LOG_FD after offset FROM, without that
 * word, into LINE: what tells two crashes apart. Returns 0, or -1 when there is none. */
int sift_shared_summary(int log_fd, off_t from, char *line, size_t cap);

void sift_shared_stop(sift_shared *s);
int sift_shared_stopping(const sift_shared *s);

#endif
