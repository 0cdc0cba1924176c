/* sift snapshots: the opaque global state that answers "did this execution find anything new?". */
#ifndef SIFT_SNAPSHOT_H
#define SIFT_SNAPSHOT_H

#include "sift/covmap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sift_snapshot sift_snapshot;

/* Bytes of memory a snapshot with these per-domain capacities needs when it lives in caller
 * memory (0 for a bad capacity). A capacity of 0 leaves the domain out. */
size_t sift_snapshot_bytes(const size_t capacity[SIFT_DOMAIN_COUNT]);

/* Creates a snapshot that can hold CAPACITY[d] counters of each domain d.
 * With SHARED == NULL its state is private. Otherwise SHARED (SHARED_LEN bytes, at least
 * sift_snapshot_bytes(), 64-byte aligned) holds it: zero-filled memory is initialised, memory
 * initialised before by another process is joined (SIFT_ESHAPE if its capacities differ), and
 * new bits are then claimed with atomic OR, so that exactly one process sees each one as new. */
int sift_snapshot_create(sift_snapshot **out, const size_t capacity[SIFT_DOMAIN_COUNT],
                         void *shared, size_t shared_len);

/* A private snapshot with room for every domain of MAP as large as it is now, times HEADROOM
 * (>= 1) for modules loaded later. */
int sift_snapshot_for_map(sift_snapshot **out, const sift_covmap *map, unsigned headroom);

void sift_snapshot_free(sift_snapshot *snap);

size_t sift_snapshot_capacity(const sift_snapshot *snap, sift_domain domain);

/* Whether MAP's current execution holds anything beyond SNAP, in the domains of MASK. Reads
 * only: the counters and the snapshot are left as they are. */
int sift_snapshot_has_new(const sift_snapshot *snap, const sift_covmap *map, unsigned mask,
                          sift_novelty *novelty);

/* The fuzzer's per-execution question, in one pass over what ran: classifies MAP's counters in
 * the domains of MASK, says whether they hold a new edge, only a new bucket, or nothing, folds
 * them into SNAP, and resets them. NEW_FEATURES (may be NULL) receives how many (counter,
 * bucket) bits this call claimed. */
int sift_snapshot_check_and_advance(sift_snapshot *snap, sift_covmap *map, unsigned mask,
                                    sift_novelty *novelty, size_t *new_features);

/* sift_snapshot_check_and_advance that also calls FN for every counter that ran, with its
 * bucket bits, in index order per domain: the execution's whole feature list from the same pass,
 * where an export and an import would take three. Slower than the plain check (every counter
 * that ran is visited, not only the lines with something new): for the executions whose
 * features are wanted. */
int sift_snapshot_check_and_list(sift_snapshot *snap, sift_covmap *map, unsigned mask,
                                 sift_novelty *novelty, sift_export_fn fn, void *ctx);

/* Folds another party's export (sift_covmap_export) into SNAP, saying what it added. */
int sift_snapshot_import(sift_snapshot *snap, const uint8_t *buf, size_t len,
                         sift_novelty *novelty);

/* Counters ever covered (EDGES, "cov") and (counter, bucket) bits seen (FEATURES, "ft") in the
 * domains of MASK. Kept as it changes for a private snapshot; a shared one costs a pass over
 * the snapshot (other processes add to it): for stats, not for every execution. */
int sift_snapshot_count(const sift_snapshot *snap, unsigned mask, size_t *edges, size_t *features);

#ifdef __cplusplus
}
#endif
#endif
