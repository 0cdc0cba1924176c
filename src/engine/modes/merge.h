/* Corpus merging (-merge=1). */
#ifndef SIFT_MERGE_H
#define SIFT_MERGE_H

#include "engine/core/fuzzer.h"

/* Adds to the first corpus folder the inputs of the others that bring new coverage, smallest
 * first. An input that crashes or hangs (silent past -timeout), in any folder, is skipped and
 * the merge goes on in a new child that shares the coverage found so far. Returns the exit
 * code. */
int sift_merge(sift_fuzzer *f) SIFT_FRAME(sift_merge);

#endif
