/* -fork_corpus_groups: libFuzzer's corpus groups for sift's workers. libFuzzer's fork parent
 * hands each short-lived job a subset of the corpus as its seeds; with groups, job J draws them
 * from group (J - 1) mod G of the corpus sorted by size, with G from 12 to 80 as the corpus
 * grows, and runs for min(300, J) seconds. sift's workers are long-lived and share one corpus,
 * so each runs such jobs in turn: its picks prefer the sizes of the current job's group
 * (sift_corpus_set_band), and at the job's end the next job, numbered as libFuzzer would number
 * it, takes its group from the corpus as it is then. */
#ifndef SIFT_GROUPS_H
#define SIFT_GROUPS_H

#include "engine/core/corpus.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    unsigned index, nworkers; /* this worker's, and how many take jobs */
    uint64_t jobs;            /* this worker's jobs so far */
    uint64_t job_end_ns;      /* 0 before the first */
    uint64_t *sizes, *tmp;    /* scratch: the entries' sizes, sorted */
    size_t cap;
} sift_groups;

/* A worker INDEX of NWORKERS, before its first job. */
void sift_groups_init(sift_groups *g, unsigned index, unsigned nworkers);
void sift_groups_free(sift_groups *g);

/* After each execution: at NOW_NS past the current job's end (and at the first call), starts
 * the next job, setting C's band to its group. Out of memory, the job prefers no sizes. */
void sift_groups_tick(sift_groups *g, sift_corpus *c, uint64_t now_ns);

/* libFuzzer's job J: its group among G of a corpus of N entries sorted by size, as the range of
 * positions [*FIRST, *LAST] (clamped to the corpus); and G for N entries; and J's length. */
void sift_groups_range(uint64_t job, size_t n, size_t *first, size_t *last);
size_t sift_groups_count(size_t n);
uint64_t sift_groups_job_seconds(uint64_t job);

#endif
