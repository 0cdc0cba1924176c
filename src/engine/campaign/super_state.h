/* The supervisor's state, shared by its loop (supervisor.c), its setup (setup.c) and its
 * reports (report.c). */
#ifndef SIFT_SUPER_STATE_H
#define SIFT_SUPER_STATE_H

#include "engine/campaign/outdir.h"
#include "engine/campaign/replay.h"
#include "engine/campaign/shared.h"
#include "engine/campaign/store.h"
#include "engine/campaign/sync.h"
#include "engine/core/fuzzer.h"

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;      /* 0 while none runs */
    off_t log_from; /* where the running worker's output starts in its log */
    uint64_t started_ns;
    uint64_t execs_before; /* executions of the slot's earlier workers */
    uint64_t alive_before; /* nanoseconds they ran */
    unsigned starts;
    bool finished; /* its worker ran out of budget */
} sift_super_slot;

/* A saved input to replay: where it is on disk (SIFT_ON_*), its queue id, its file name. */
typedef struct {
    unsigned where;
    long queue_id;
    const char *base;
} sift_super_item;

typedef struct {
    sift_options *o;
    sift_target_fn target;
    int argc;
    char **argv;
    unsigned n; /* workers; ring n is the sync ring */
    sift_shared sh;
    sift_snapshot *snap;    /* the supervisor's view, for counts */
    struct sift_view *view; /* the live view while it runs (view.h), else NULL */
    sift_super_slot *slots;
    int *logs; /* per slot, then one for sync children */
    uint64_t *cursors;
    sift_dlog_scratch rd;
    sift_store camp;
    sift_outdir out;
    bool has_out;
    int corpus_lock; /* held on the first corpus folder (sift_fs_lock), -1 for none */
    sift_sync *sync;
    sift_replay sync_rp;
    bool syncing, replaying, stopping;
    bool unsaved; /* a file could not be written: the campaign ends, and writes no more */
    int exit_code;
    sift_pathlist paths; /* the saved inputs */
    sift_replay_item *items;
    sift_super_item *info;
    size_t nitems;
    size_t max_len;
    uint64_t start_ns, start_unix, fuzz_start_ns;
    uint64_t interrupted_ns; /* when the first SIGINT or SIGTERM was seen, 0 before */
    uint64_t found, imported, crashes, hangs, replay_failed;
    uint64_t ooms; /* of the crashes, those out of memory */
    uint64_t last_crash_unix, last_hang_unix, execs_at_crash;
    unsigned quick_deaths;
    char **faults_seen; /* SUMMARY lines of the faults reported, under -ignore_crashes & co */
    size_t nfaults_seen;
    char tmp_logdir[4096]; /* -fork's logs, removed at the end ("" for none) */
    size_t cov, ft;
    uint64_t counted_ns, next_pulse, next_stats_ns, next_plot_ns;
    uint64_t minute_execs, minute_ns; /* for execs_ps_last_min */
    struct sift_super_find *finds;    /* taken in this drain, reported once saved */
    size_t nfinds, findcap;
} sift_super;

#endif
