/* The live status view (-status=tty, or auto on a terminal): a few lines on stderr, redrawn in
 * place about once a second, in place of libFuzzer's scrolling status lines (docs/watching.md).
 * While it runs, what the process prints through stdio to stderr (and to stdout when that is the
 * same terminal) appears above the view, which is redrawn below it. */
#ifndef SIFT_VIEW_H
#define SIFT_VIEW_H

#include "engine/base/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One worker slot of a -workers campaign. */
typedef struct {
    int pid;                   /* of the worker running in the slot; 0 while none runs */
    uint64_t execs;            /* of the slot, its earlier workers' included */
    unsigned starts;           /* workers started in the slot: more than 1 means restarted */
    bool finished;             /* its worker ran out of budget and exited */
    uint64_t exec_per_sec_avg; /* over the time its workers ran: the final view's figure */
    /* Filled by sift_view_update from the slot's history: */
    uint64_t exec_per_sec; /* since the last update */
    uint64_t stalled_ns;   /* how long its executions have not moved (0: they move) */
} sift_view_worker;

typedef struct {
    const char *target; /* the harness as run (argv[0]); NULL for none */
    uint64_t run_ns;    /* since the campaign started */
    uint64_t execs;
    uint64_t exec_per_sec;     /* the average over the run */
    uint64_t exec_per_sec_now; /* since the last update (sift_view_update fills it) */
    size_t cov, ft;            /* edges, features of every counted domain */
    size_t corpus, favored, corpus_bytes;
    uint64_t crashes, timeouts, ooms;
    bool found_any;        /* whether anything new was found yet */
    uint64_t since_new_ns; /* since the last find */
    bool done;             /* the campaign is over: the final view */
    unsigned nworkers;     /* 0 for a single process */
    sift_view_worker *workers;
} sift_view_stats;

/* A worker is stalled when its executions have not moved for this long. */
#define SIFT_VIEW_STALL_NS (5 * 1000000000ull)

/* Whether OPTS ask for the view here: -status=tty, or -status=auto with -verbosity of at least 1,
 * stderr a terminal and TERM set and not "dumb". */
bool sift_view_wanted(const sift_options *opts);

/* ST as the view's lines into OUT (NUL-terminated, every line ending in '\n'). Lines are cut to
 * WIDTH - 1 columns and there are at most MAX_LINES of them, the workers' lines summed up in a
 * last one when they do not fit (0: no limit). Returns the number of lines. */
unsigned sift_view_render(const sift_view_stats *st, unsigned width, unsigned max_lines, char *out,
                          size_t cap);

/* The view of one process, which owns its stderr while it runs. */
typedef struct sift_view sift_view;

/* Starts the view on stderr; from now on stdio output of this process appears above it. Returns
 * NULL, changing nothing, when it cannot (the caller prints status lines then). */
sift_view *sift_view_start(void);

/* Whether V (NULL: none) runs in this process (never in a child forked after its start). */
bool sift_view_active(const sift_view *v);

/* Whether a redraw is due at NOW_NS (monotonic): about once a second. */
bool sift_view_due(const sift_view *v, uint64_t now_ns);

/* Redraws the view from ST at NOW_NS, filling in the rates since the last update. */
void sift_view_update(sift_view *v, sift_view_stats *st, uint64_t now_ns);

/* Leaves the view drawn where it is: the next redraw starts below it. For lines the view could
 * not see go by (a signal handler's, written straight to the file descriptor). */
void sift_view_detach(sift_view *v);

/* Draws ST a last time and leaves it on the screen, the cursor on the line below, hands stderr
 * and stdout back (what follows is printed below the final view), closes the streams that stood
 * in for them and frees the view: *VP becomes NULL. */
void sift_view_finish(sift_view **vp, sift_view_stats *st, uint64_t now_ns);

#endif
