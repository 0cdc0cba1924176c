/* Which mutants' runs count function-boundary values as features. Computing a value's bucket
 * and looking up its known bit costs little per call, but a target made of many short calls
 * (a shaper's setup, a parser's accessors) pays it on every one: harfbuzz ran a fifth slower
 * with values than without on the same inputs. A fork server's answer is to run the costly
 * feedback in a stage of its own (AFL++'s CmpLog); here the costly kind runs on a share of the
 * mutants, chosen so that what values add to the campaign's mean execution stays within a
 * budget, measured as the campaign goes. A target whose values cost less than the budget keeps
 * them on nearly every run, and so does one where values find and nothing else does. */
#ifndef SIFT_VALUES_SHARE_H
#define SIFT_VALUES_SHARE_H

#include "engine/base/rng.h"

#include <stdbool.h>
#include <stdint.h>

/* Shares are in 1/SIFT_VALUES_SHARE_ONE. */
#define SIFT_VALUES_SHARE_ONE 1024u

typedef struct {
    unsigned budget; /* what values may add to the mean run, in 1/SHARE_ONE of a run */
    unsigned share;  /* of the mutants whose runs count values now */
    /* Mutants come in blocks with values on or off, drawn for each block from a stream of
     * its own: a fixed pattern would fall in step with the engine's (the comparison ring
     * fills on every eighth run, a slower one), and the mutator's stream stays as it was. */
    sift_rng rng;
    unsigned block_left; /* mutants left in the current block */
    bool block_on;
    /* Since the last estimate, runs with values and without: their count and nanoseconds;
     * finds that values alone made (in runs with them), and finds of edges or comparisons (in
     * either kind). */
    uint64_t on_runs, off_runs, on_ns, off_ns;
    uint64_t value_finds, other_finds;
    bool values_lead; /* as the last estimate that saw a find judged (values_share.c) */
    uint64_t mean_ns; /* of the last estimate's runs, bounding each run's weight */
} sift_values_share;

/* Starts with values on nearly every run, spending at most BUDGET (in 1/SHARE_ONE of a run;
 * SHARE_ONE or more: values on every run) once measured; SEED seeds its draws. */
void sift_values_share_init(sift_values_share *s, unsigned budget, uint64_t seed);

/* Whether the next mutant's run counts values. */
bool sift_values_share_next(sift_values_share *s);

/* Takes a find of the run that just ended: VALUES_ONLY when nothing but its value features
 * was new (which only a run with values can find). */
void sift_values_share_found(sift_values_share *s, bool values_only);

/* Takes the run that just ended, with values (ON) or not, and NS long; sets the share anew once
 * enough runs of both kinds have been seen. */
void sift_values_share_took(sift_values_share *s, bool on, uint64_t ns);

#endif
