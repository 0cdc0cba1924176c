/* Mutations of one input: byte-level operators, splicing, dictionaries, comparison operands. */
#ifndef SIFT_MUTATE_H
#define SIFT_MUTATE_H

#include "engine/core/dict.h"
#include "engine/base/rng.h"
#include "rt/cmp.h"

#include <stdbool.h>
#include <stddef.h>

/* How many of a mutation's comparison operands it keeps for the recommended dictionary. */
#define SIFT_MUT_TOKENS 4

/* Picks another input for crossover; returns NULL when there is none. */
typedef const uint8_t *(*sift_pick_fn)(void *ctx, size_t *len);

typedef struct {
    sift_rng *rng;
    const sift_dict *dict;      /* user dictionary (-dict), may be NULL */
    const sift_cmp_table *cmps; /* recent comparison operands, may be NULL */
    sift_pick_fn pick_other;    /* crossover source, may be NULL */
    void *pick_ctx;
    bool only_ascii;
    unsigned max_depth; /* the most operators stacked on one mutant (-mutate_depth); 0: no cap */
    /* Names of the operators applied by the last sift_mutate call, "-"-separated as libFuzzer
     * prints them after "MS:", e.g. "ChangeByte-CMP-". */
    char trace[256];
    /* The tokens the last sift_mutate call wrote, -dict entries and comparison operands
     * (libFuzzer's dictionary entries of a mutation, its DE:), the first SIFT_MUT_TOKENS: an
     * input the corpus takes recommends them. */
    sift_dict_entry tokens[SIFT_MUT_TOKENS];
    unsigned ntokens;
} sift_mutator;

/* Applies a short random stack of operators to DATA (SIZE bytes, buffer holds MAX_SIZE) and
 * returns the new size (1..MAX_SIZE). Deterministic for a given rng state and inputs. */
size_t sift_mutate(sift_mutator *m, uint8_t *data, size_t size, size_t max_size);

/* Input-to-state on the input that just ran (DATA, SIZE bytes), as RedQueen does it: every
 * integer pair its execution recorded (ring positions from SINCE on) whose one side occurs in
 * DATA, in some encoding, is replaced there by the other side, all in the one mutant, so that
 * checks the program makes together (one branch on several compares) pass together. Returns
 * the new size, or 0 when no pair applied. */
size_t sift_mutate_cmp_again(sift_mutator *m, uint8_t *data, size_t size, size_t max_size,
                             uint32_t since);

#endif
