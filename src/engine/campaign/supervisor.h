/* The supervisor of -workers=N (and -jobs, -fork): forks the workers, saves what they find,
 * replaces those that die, resumes from the folders, syncs with other instances, and prints
 * the campaign's totals. It never runs the target itself (docs/workers.md). */
#ifndef SIFT_SUPERVISOR_H
#define SIFT_SUPERVISOR_H

#include "engine/core/fuzzer.h"

/* The number of workers OPTS asks for (0 for none). */
unsigned sift_super_workers(const sift_options *opts);

/* Runs the campaign, or with -merge=1 a parallel merge; returns the process exit code. */
int sift_super_main(sift_options *opts, int argc, char **argv, sift_target_fn target)
    SIFT_FRAME(sift_super_main);

#endif
