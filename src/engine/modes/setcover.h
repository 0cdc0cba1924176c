/* The choice of -set_cover_merge=1: of the inputs offered to a corpus, a small set that owns every
 * feature any of them adds to it, by greedy set cover as libFuzzer's: the input that adds the
 * most features not yet covered comes next, the smaller on a tie. */
#ifndef SIFT_SETCOVER_H
#define SIFT_SETCOVER_H

#include "engine/core/corpus.h"

#include <stddef.h>

typedef struct {
    sift_feature_id *ids; /* its features in any order, repeats allowed; left sorted, less KNOWN */
    size_t n;
    size_t size; /* the input's size in bytes */
} sift_setcover_input;

/* Picks among INPUTS[0..N) what adds to KNOWN[0..NKNOWN) (the corpus's features; sorted in
 * place): their indices go into ORDER (room for N), in the order picked. Inputs of equal size
 * and gain go by index. *NEW_FEATURES receives how many features they add. Returns how many
 * were picked, or (size_t)-1 when out of memory. */
size_t sift_setcover_pick(sift_setcover_input *inputs, size_t n, sift_feature_id *known,
                          size_t nknown, size_t *order, size_t *new_features);

#endif
