/* Campaign statistics: exec/s, the JSON stats file (-stats_file) and -print_final_stats. */
#ifndef SIFT_STATS_H
#define SIFT_STATS_H

#include "engine/fuzzer.h"

uint64_t sift_stats_exec_per_sec(const sift_stats *s, uint64_t now_ns);

/* Writes the JSON stats of F to PATH atomically; a failure prints one line and returns -1. */
int sift_stats_write(sift_fuzzer *f, const char *path);

/* Draws the live view (view.h) of F's campaign; FINAL leaves it on the screen for good. */
void sift_stats_view(sift_fuzzer *f, bool final);

/* The "stat::" lines libFuzzer prints with -print_final_stats=1, at the end of a campaign and
 * after a fault's report. Async-signal-safe. */
void sift_stats_print_final(const sift_fuzzer *f);

/* libFuzzer's start-up lines on the instrumented modules, "INFO: Loaded N modules   (M inline
 * 8-bit counters): ..." and "INFO: Loaded N PC tables (M PCs): ...", from which ClusterFuzz
 * takes the number of edges and OSS-Fuzz's build check the first module's. Nothing when no
 * module is instrumented, as libFuzzer. */
void sift_stats_print_modules(const sift_rt_state *rt);

#endif
