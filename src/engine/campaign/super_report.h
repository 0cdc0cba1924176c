/* What the supervisor reports: totals, status lines, statistics, the live view, fault copies and
 * the names of finds. */
#ifndef SIFT_SUPER_REPORT_H
#define SIFT_SUPER_REPORT_H

#include "engine/campaign/super_state.h"

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

#endif
