/* Replay: runs a list of inputs in child processes against the campaign's shared snapshot and
 * publishes what each adds into the discovery log, so that the supervisor learns their
 * coverage without running the target itself. A child that crashes or hangs costs the one
 * input it was running: a new child goes on after it. Resume, sync imports and parallel
 * merges all replay (docs/workers.md). */
#ifndef SIFT_REPLAY_H
#define SIFT_REPLAY_H

#include "engine/core/fuzzer.h"
#include "engine/campaign/shared.h"

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    const char *path;    /* read from this file, or */
    const uint8_t *data; /* run from memory when PATH is NULL */
    size_t size;
} sift_replay_item;

typedef enum { SIFT_REPLAY_CRASH, SIFT_REPLAY_HANG, SIFT_REPLAY_UNREADABLE } sift_replay_failure;

/* Item ITEM failed; ARTIFACT is the path the child's containment wrote ("" when none), STATUS
 * its wait status. */
typedef void (*sift_replay_fail_fn)(void *ctx, size_t item, sift_replay_failure why, int status,
                                    const char *artifact);

typedef struct {
    pid_t pid;
    int notes; /* read end of the child's progress pipe */
    long long running;
    size_t next;
    uint64_t note_ns;
    off_t log_from;
    bool done;
} sift_replay_child;

typedef struct {
    /* Set by the caller. */
    const sift_options *opts;
    sift_shared *sh;
    sift_target_fn target;
    const char *argv0;
    const sift_replay_item *items;
    size_t n;
    unsigned nchildren;  /* child K runs items K, K + nchildren, ... */
    unsigned first_ring; /* child K publishes into ring first_ring + K */
    const int *log_fds;  /* child K writes its output into log_fds[K] */
    bool announce_known; /* also publish a KNOWN record for inputs that add nothing */
    sift_replay_fail_fn on_fail;
    void *ctx;
    /* Kept by replay. */
    sift_replay_child *kids;
    size_t failed;
} sift_replay;

/* Starts the children. Returns 0, or -1 with a message. */
int sift_replay_start(sift_replay *rp) SIFT_FRAME(sift_replay_start);

/* Waits up to WAIT_MS for progress, reports failed items and replaces their children. Returns
 * how many children are still running. */
unsigned sift_replay_poll(sift_replay *rp, int wait_ms) SIFT_FRAME(sift_replay_poll);

/* Kills and reaps every child still running, and frees what replay holds. */
void sift_replay_end(sift_replay *rp);

#endif
