/* A worker of a -workers campaign: the in-process fuzzing loop, publishing what it finds into
 * the discovery log and taking in what the others publish (docs/workers.md). */
#ifndef SIFT_WORKER_H
#define SIFT_WORKER_H

#include "engine/core/fuzzer.h"
#include "engine/campaign/shared.h"

/* What a new worker starts from: the supervisor's corpus, inherited through fork. */
typedef struct {
    sift_corpus *corpus;
    uint8_t *const *data;    /* each entry's input, by position; NULL where not held */
    const uint64_t *cursors; /* per ring of the log: how far that corpus has read it */
    size_t max_len;
    long long runs; /* its share of -runs, -1 for no limit */
} sift_worker_seed;

/* Runs worker INDEX (in a child the supervisor forked) on its own copy of OPTS, after the
 * harness's LLVMFuzzerInitialize with the command line ARGC, ARGV, until the
 * supervisor stops the campaign, the budget runs out, or it falls behind the log (it then
 * sets its resync flag). Returns the process exit code. */
int sift_worker_run(const sift_options *opts, sift_shared *sh, unsigned index,
                    const sift_worker_seed *seed, sift_target_fn target, int argc, char **argv)
    SIFT_FRAME(sift_worker_run);

/* Gives fuzzer F the campaign's shared snapshot in place of its own. Returns 0, or -1 with a
 * message. */
int sift_worker_share(sift_fuzzer *f, const sift_shared *sh);

#endif
