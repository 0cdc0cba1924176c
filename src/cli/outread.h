/* Reading an output folder as sift -out (and AFL++) writes it: fuzzer_stats, plot_data and the
 * crashes/ and hangs/ folders (docs/workers.md). Every problem is one line naming the path. */
#ifndef SIFT_CLI_OUTREAD_H
#define SIFT_CLI_OUTREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fuzzer_stats. Times are Unix seconds (0: never). */
typedef struct {
    uint64_t start_time, last_update, run_time, fuzzer_pid;
    uint64_t execs_done;
    double execs_per_sec;
    uint64_t corpus_count, corpus_favored;
    uint64_t saved_crashes, saved_hangs;
    uint64_t last_find, last_crash, last_hang;
    bool has_edges; /* AFL++ 4 and sift: edges_found and total_edges */
    uint64_t edges_found, total_edges;
    double bitmap_cvg; /* percent of the map */
    char banner[128], version[64];
} sift_out_stats;

/* One line of plot_data. */
typedef struct {
    double time;   /* seconds of fuzzing since the first line's start */
    double cov;    /* edges found, or percent of the map (cov_is_percent) */
    double corpus; /* entries in the queue */
} sift_out_point;

typedef struct {
    sift_out_point *points;
    size_t n;
    bool cov_is_percent; /* an older layout without edges_found: map_size in percent */
    unsigned sessions;   /* runs of the campaign: a resumed one starts its times at 0 again */
} sift_out_plot;

/* Files larger than this are refused rather than read. */
#define SIFT_OUT_MAX_FILE (256u << 20)

/* Checks that DIR is a folder. Returns 0, or -1 with one line in ERR. */
int sift_out_check_dir(const char *dir, char *err, size_t errlen);

/* Parses DIR/fuzzer_stats. Returns 0, or -1 with one line in ERR naming the path (and line). */
int sift_out_read_stats(const char *dir, sift_out_stats *st, char *err, size_t errlen);

/* Parses DIR/plot_data into PLOT (sift_out_plot_free it). Returns 0, or -1 with one line. */
int sift_out_read_plot(const char *dir, sift_out_plot *plot, char *err, size_t errlen);
void sift_out_plot_free(sift_out_plot *plot);

/* The entries of DIR/SUB ("crashes", "hangs") that are inputs: not hidden, not AFL++'s
 * README.txt; sorted by name, as paths (free each and the array). A missing folder has none. */
int sift_out_list(const char *dir, const char *sub, char ***paths, size_t *n, char *err,
                  size_t errlen);
void sift_out_list_free(char **paths, size_t n);

#endif
