/* The output folder of -out: AFL++'s layout, so that AFL++'s tools and instances read it.
 * DIR/queue/id:NNNNNN,..., DIR/crashes/id:NNNNNN,sig:NN,..., DIR/hangs/, DIR/fuzzer_stats and
 * DIR/plot_data (docs/workers.md). */
#ifndef SIFT_OUTDIR_H
#define SIFT_OUTDIR_H

#include "engine/base/fsutil.h"
#include "engine/base/files.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    char *dir;
    uint32_t next_id, next_crash, next_hang; /* ids continue after those on disk */
    size_t cleaned;                          /* temporaries removed when opened */
    int lock;                                /* held on DIR (sift_fs_lock) while open */
} sift_outdir;

/* What fuzzer_stats and plot_data report. Times are Unix seconds (0: never). */
typedef struct {
    uint64_t start_time, now;
    pid_t pid;
    uint64_t execs;
    double execs_per_sec, execs_ps_last_min;
    uint64_t corpus_count, corpus_favored, corpus_found, corpus_imported;
    uint64_t saved_crashes, saved_hangs;
    uint64_t last_find, last_crash, last_hang, execs_since_crash;
    uint64_t exec_timeout_ms, slowest_exec_ms, peak_rss_mb;
    uint64_t edges_found, total_edges;
    const char *banner, *command_line;
} sift_outdir_stats;

/* Creates DIR and its folders as needed, locks DIR against other campaigns, removes the
 * temporaries that killed writers left, and finds the next ids. Prints one line naming the
 * path (or the campaign that holds DIR) and returns -1 when it cannot. */
int sift_outdir_open(sift_outdir *o, const char *dir);
void sift_outdir_close(sift_outdir *o);

/* Removes the temporaries of sift_write_atomic (".NAME.tmp.PID.N") from DIR; returns how many. */
size_t sift_outdir_clean(const char *dir);

/* The entries of DIR/queue. Returns 0, or -1 with a message. */
int sift_outdir_list_queue(const sift_outdir *o, sift_pathlist *out);

/* Writes DATA atomically as queue/id:NNNNNN,DESC (or crashes/, hangs/ for a fault, whose DESC
 * starts with sig:NN for crashes). Returns the id, or -1 with a message. */
long sift_outdir_queue(sift_outdir *o, const uint8_t *data, size_t size, const char *desc);
long sift_outdir_fault(sift_outdir *o, bool hang, const uint8_t *data, size_t size,
                       const char *desc);

/* Takes the next queue id for an entry named DESC and writes its path into PATH, for a caller
 * that writes the file itself. Returns the id, or -1 with a message. */
long sift_outdir_queue_path(sift_outdir *o, const char *desc, char *path, size_t cap);

/* Replaces the characters of S that have no place in an AFL++ file name part (anything but
 * letters, digits and "._+-") with '_'. */
void sift_outdir_safe(char *s);

/* Rewrites fuzzer_stats (atomically) and appends a line to plot_data. */
int sift_outdir_report(sift_outdir *o, const sift_outdir_stats *st, bool plot);

/* The largest id: the ids are AFL++'s 32-bit ones, and the one after the largest must still
 * fit. */
#define SIFT_OUTDIR_ID_MAX 4294967294L

/* The id in an AFL++ queue name ("id:000042,..." is 42); -1 when NAME has none, or one past
 * SIFT_OUTDIR_ID_MAX (such a name is no entry of ours, and takes no id from ours). */
long sift_outdir_id(const char *name);

#endif
