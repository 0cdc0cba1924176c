/* Sync with other instances (-sync_dir=DIR -name=NAME): this instance's queue is
 * DIR/NAME/queue in AFL++'s layout, and the new entries of every other instance's
 * DIR/OTHER/queue (sift or AFL++ -M/-S) are imported: replayed to learn their coverage and kept
 * when they add some. DIR/NAME/.synced/OTHER holds the next id to import from OTHER, as AFL++
 * keeps it. Everything in DIR is untrusted (docs/workers.md). */
#ifndef SIFT_SYNC_H
#define SIFT_SYNC_H

#include "engine/campaign/replay.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sift_sync sift_sync;

/* Checks NAME and DIR and creates DIR/NAME/.synced. Prints one line and returns NULL when it
 * cannot. Inputs longer than MAX_LEN are not imported. */
sift_sync *sift_sync_open(const char *dir, const char *name, size_t max_len);
void sift_sync_close(sift_sync *s);

/* The folder this instance writes into: DIR/NAME. */
const char *sift_sync_out(const sift_sync *s);

/* Reads the entries the peers added since the last round, safely: returns how many, with
 * *ITEMS pointing at them in memory (valid until sift_sync_commit). 0 when there is nothing
 * new or the last look was less than the sync interval ago (NOW_NS, monotonic). */
size_t sift_sync_scan(sift_sync *s, uint64_t now_ns, const sift_replay_item **items);

/* The queue name part of imported item ITEM ("sync:PEER,src:000012") and where it came from. */
void sift_sync_describe(const sift_sync *s, size_t item, char *desc, size_t cap);
const char *sift_sync_path(const sift_sync *s, size_t item);

/* The round's items have all been replayed and what they added saved: records for each peer
 * the next id to import. Returns 0, or -1 with a message. */
int sift_sync_commit(sift_sync *s);

#endif
