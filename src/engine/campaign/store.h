/* The supervisor's corpus of a -workers campaign: every discovery taken from the log, written
 * to disk before it counts as saved, rated and culled with corpus.c (docs/workers.md). */
#ifndef SIFT_STORE_H
#define SIFT_STORE_H

#include "engine/core/corpus.h"
#include "engine/campaign/dlog.h"
#include "engine/campaign/outdir.h"

#include <stdbool.h>
#include <stdint.h>

/* Where a replayed input is on disk already. */
#define SIFT_ON_QUEUE 1u /* in -out's queue */
#define SIFT_ON_DIR   2u /* in the first corpus folder */
#define SIFT_ON_SEED  4u /* an original seed: never copied into the corpus folder */

typedef struct {
    sift_corpus *corpus; /* features and sizes; inputs live in DATA */
    uint8_t **data;      /* by position: the input while the entry is not evicted */
    long *queue_id;      /* by position: its id in -out's queue, -1 when not there */
    size_t *origin;      /* by position: the replayed item it came from, SIZE_MAX for finds */
    size_t cap;
    sift_corpus *in_queue, *in_dir; /* names on disk, as replay saw them */
    const char *corpus_dir;         /* first corpus folder, NULL for none */
    sift_outdir *out;               /* -out, NULL for none */
    bool pending;                   /* entries added since the last settle */
    uint64_t persist_lag_ns;        /* longest time from publication to saved */
    uint64_t oldest_ns;             /* publication of the oldest find not yet flushed */
    uint64_t last_find_ns;
    sift_corpus *faults; /* names of the crashes and hangs saved */
    /* Files written but not yet synced and renamed into place (sift_store_flush). */
    struct sift_staged *staged;
    size_t nstaged, stagecap;
    bool failed; /* a file could not be written: nothing more is taken */
} sift_store;

int sift_store_init(sift_store *c, const char *corpus_dir, sift_outdir *out);
void sift_store_free(sift_store *c);

/* Takes a live discovery E: adds it and writes it into the corpus folder and the queue (named
 * DESC), to be made durable and visible by sift_store_flush. Returns 1 when taken, 0 when
 * the corpus has it already, -1 when it could not be written (with a message; a file cut short
 * by a full disk is removed, never renamed into place) or when a write failed before (without
 * one: the campaign is ending). */
int sift_store_take(sift_store *c, const sift_dlog_entry *e, const char *desc);

/* Takes a record of replayed item ITEM, which is on disk in the places of WHERE (queue id
 * QUEUE_ID). Nothing is written until sift_store_reconcile. */
void sift_store_replayed(sift_store *c, const sift_dlog_entry *e, size_t item, unsigned where,
                         long queue_id);

/* After a replay: writes every entry into the places it is missing from, the queue name of
 * a replayed item coming from DESCRIBE. Returns how many files it wrote, or -1. */
typedef void (*sift_store_describe_fn)(void *ctx, size_t item, unsigned *where, char *desc,
                                       size_t cap);
long sift_store_reconcile(sift_store *c, sift_store_describe_fn describe, void *ctx);

/* Syncs every file written since the last flush, then renames each into place: one journal
 * commit for a burst of finds rather than one per file. Only then is an entry saved. Returns
 * 0, or -1 with a message. */
int sift_store_flush(sift_store *c);

/* Recomputes favored entries and drops the inputs of evicted ones from memory. */
void sift_store_settle(sift_store *c);

/* Saves a crash or hang input into -out (once per distinct input). Returns 1 when saved, 0
 * when it was saved before, -1 on failure. */
int sift_store_fault(sift_store *c, bool hang, const uint8_t *data, size_t size, const char *desc);

#endif
