/* The live status view (-status=tty, or auto on a terminal): a few lines on stderr, redrawn in
 * place about once a second, in place of libFuzzer's scrolling status lines (docs/watching.md).
 * While it runs, what the process prints through stdio to stderr (and to stdout when that is the
 * same terminal) appears above the view, which is redrawn below it. */
#ifndef SIFT_VIEW_H
#define SIFT_VIEW_H

#include "engine/base/options.h"
#include "engine/progress/progress.h"
#include "engine/base/clock.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A worker is stalled when its executions have not moved for this long. */
#define SIFT_VIEW_STALL_NS (5 * SIFT_SECOND_NS)

/* Whether OPTS ask for the view here: -status=tty, or -status=auto with -verbosity of at least 1,
 * stderr a terminal and TERM set and not "dumb". */
bool sift_view_wanted(const sift_options *opts);

/* ST as the view's lines into OUT (NUL-terminated, every line ending in '\n'). Lines are cut to
 * WIDTH - 1 columns and there are at most MAX_LINES of them, the workers' lines summed up in a
 * last one when they do not fit (0: no limit). Returns the number of lines. */
unsigned sift_view_render(const sift_progress *st, unsigned width, unsigned max_lines, char *out,
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
void sift_view_update(sift_view *v, sift_progress *st, uint64_t now_ns);

/* Leaves the view drawn where it is: the next redraw starts below it. For lines the view could
 * not see go by (a signal handler's, written straight to the file descriptor). */
void sift_view_detach(sift_view *v);

/* Draws ST a last time and leaves it on the screen, the cursor on the line below, hands stderr
 * and stdout back (what follows is printed below the final view), closes the streams that stood
 * in for them and frees the view: *VP becomes NULL. */
void sift_view_finish(sift_view **vp, sift_progress *st, uint64_t now_ns);

#endif
