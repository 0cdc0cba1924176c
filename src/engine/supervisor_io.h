/* The supervisor's state, and what it reads and writes: its setup from the command line and
 * the folders, status lines, statistics, fault copies and names (supervisor_io.c). */
#ifndef SIFT_SUPERVISOR_IO_H
#define SIFT_SUPERVISOR_IO_H

#include "engine/campaign.h"
#include "engine/fuzzer.h"
#include "engine/outdir.h"
#include "engine/replay.h"
#include "engine/shared.h"
#include "engine/sync.h"

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
    sift_campaign camp;
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
    uint64_t found, imported, crashes, hangs, replay_failed;
    uint64_t ooms; /* of the crashes, those out of memory */
    uint64_t last_crash_unix, last_hang_unix, execs_at_crash;
    unsigned quick_deaths;
    size_t cov, ft;
    uint64_t counted_ns, next_pulse, next_stats_ns, next_plot_ns;
    uint64_t minute_execs, minute_ns; /* for execs_ps_last_min */
    struct sift_super_find *finds;    /* taken in this drain, reported once saved */
    size_t nfinds, findcap;
} sift_super;

/* Checks the flags and folders, lists the saved inputs, maps the shared memory and opens the
 * logs. Prints one line and returns non-zero when it cannot go on. */
int sift_super_setup(sift_super *s);

/* Total executions of every worker so far. */
uint64_t sift_super_execs(const sift_super *s);

/* Remembers a find of SIZE bytes (from a peer when SYNCED) until it is saved. */
int sift_super_note_find(sift_super *s, size_t size, bool synced);
/* Counts and reports (NEW or SYNC lines) the finds noted since the last call. */
void sift_super_report_finds(sift_super *s);

/* A libFuzzer-style status line with the campaign's totals. */
void sift_super_status(sift_super *s, const char *what, size_t size);

/* The stats file (-stats_file), -out's fuzzer_stats and plot_data, and pulse lines; FINAL
 * writes them all now. */
void sift_super_report(sift_super *s, uint64_t now_ns, bool final);

/* Draws the live view (view.h) of the campaign; FINAL leaves it on the screen for good. */
void sift_super_view(sift_super *s, uint64_t now_ns, bool final);

/* A file could not be written (its line is printed): the campaign stops, exit code 1. */
void sift_super_unsaved(sift_super *s);

/* Copies the report of slot K's dead worker from its log to stderr. */
void sift_super_echo_log(sift_super *s, unsigned k);

/* Keeps the input at ARTIFACT in -out's crashes/ or hangs/. */
void sift_super_save_fault(sift_super *s, bool hang, int status, const char *artifact);

/* The queue name part of a worker's find ("src:000003,time:...,execs:...,op:..."). */
void sift_super_describe_find(sift_super *s, const sift_dlog_entry *e, char *desc, size_t cap);

/* A peer's entry crashed or hung the sync child. */
void sift_super_sync_failed(void *ctx, size_t item, sift_replay_failure why, int status,
                            const char *artifact);

/* -merge=1 with workers: the covering set of the inputs, found in parallel. */
int sift_super_merge(sift_super *s);

#endif
