/* A campaign's progress as one plain record, filled by the fuzzer of one process or by the
 * supervisor of -workers, and turned here into what people and tools read: libFuzzer's status
 * lines, the -stats_file JSON and the final "stat::" lines. The live view (view.h) draws the same
 * record. Nothing here sees a fuzzer or a corpus. */
#ifndef SIFT_PROGRESS_H
#define SIFT_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One worker slot of a -workers campaign. */
typedef struct {
    int pid;                   /* of the worker running in the slot; 0 while none runs */
    uint64_t execs;            /* of the slot, its earlier workers' included */
    unsigned starts;           /* workers started in the slot: more than 1 means restarted */
    bool finished;             /* its worker ran out of budget and exited */
    uint64_t exec_per_sec_avg; /* over the time its workers ran */
    uint64_t corpus, new_units, imported;
    uint64_t import_lag_ns; /* longest from a peer's publication to its import */
    bool found_any;         /* whether its running worker found anything yet */
    uint64_t since_new_ns;  /* since that worker's last find */
    /* Filled by sift_view_update from the slot's history: */
    uint64_t exec_per_sec; /* since the last update */
    uint64_t stalled_ns;   /* how long its executions have not moved (0: they move) */
} sift_progress_worker;

typedef struct {
    const char *target; /* the harness as run (argv[0]); NULL for none */
    uint64_t run_ns;    /* since the campaign started */
    uint64_t execs;
    uint64_t exec_per_sec;     /* the average over the run */
    uint64_t exec_per_sec_now; /* since the last view update (sift_view_update fills it) */
    size_t cov, ft;            /* edges, features of every counted domain */
    size_t corpus, favored, corpus_bytes;
    size_t focus;     /* corpus entries that run -focus_function */
    size_t len_limit; /* -len_control's current limit; 0 for none */
    uint64_t new_units, imported;
    uint64_t crashes, timeouts, ooms, replay_failed;
    bool found_any;          /* whether anything new was found yet */
    uint64_t since_new_ns;   /* since the last find */
    uint64_t slowest_ns;     /* the slowest execution */
    uint64_t slow_finds;     /* mutants that reached something new, too slow to keep */
    uint64_t persist_lag_ns; /* longest from a worker's find to its files being in place */
    size_t rss_mb;           /* peak resident memory */
    bool values_shared;      /* value features count on a share of mutants' runs, */
    unsigned values_share;   /* this percent of them */
    long long seed;
    bool done;         /* the campaign is over: the final view */
    unsigned nworkers; /* 0 for a single process */
    sift_progress_worker *workers;
} sift_progress;

/* Executions per second of EXECS over NS, 0 before the first whole millisecond. */
uint64_t sift_progress_rate(uint64_t execs, uint64_t ns);

/* A libFuzzer status line ("#N\tNEW    cov: ... exec/s: ... rss: ...") with WHAT and EXTRA
 * (may be NULL) on stderr; a campaign's line names its workers. */
void sift_progress_line(const sift_progress *p, const char *what, const char *extra);

/* Writes P as the -stats_file JSON to PATH atomically; a failure prints one line naming PATH
 * and returns -1. */
int sift_progress_write_json(const sift_progress *p, const char *path);

/* The "stat::" lines libFuzzer prints with -print_final_stats=1, at the end of a campaign and
 * after a fault's report. Async-signal-safe. */
void sift_progress_print_final(const sift_progress *p);

#endif
