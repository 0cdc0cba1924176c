/* Which mutants' runs count function-boundary values (values_share.h). */
#include "engine/core/values_share.h"

/* One mutant in 16 runs without values even where they cost nothing, so that their cost is
 * still measured when it grows (a corpus that moves into code of many short calls); one in 32
 * runs with them however much they cost, so that no value feature is out of reach. */
#define MOST_SHARE (SIFT_VALUES_SHARE_ONE - SIFT_VALUES_SHARE_ONE / 16)
/* Where values lead (judge_lead), one in 64 without them: blind runs cost more than their
 * number there, and on examples/statemachine.c one block in 16 without values took 1.5 times
 * the executions to the bug (medians of 30 seeds), one in 64 none more. Not the most share
 * everywhere: at one in 64 an estimate waits for 32,768 runs, more than lcms2's first minute. */
#define LEAD_SHARE  (SIFT_VALUES_SHARE_ONE - SIFT_VALUES_SHARE_ONE / 64)
#define LEAST_SHARE (SIFT_VALUES_SHARE_ONE / 32)

/* Mutants in a block. One run without values among many with them (or the other way) costs
 * more than either: each of the target's branches on the mode word goes the other way than it
 * went before, and mispredicts. In blocks the predictor learns each mode, and a run measures
 * its mode's cost, not the switch's. */
#define BLOCK_RUNS 64

/* Runs of each kind an estimate needs: run times spread over orders of magnitude (an input
 * that takes a slow path), and a few hundred of each keep one such run from deciding. */
#define ESTIMATE_RUNS 512

/* No run weighs more than this many times the last estimate's mean run: a hang-like input in
 * one kind would otherwise pass for the cost of values, or hide it. */
#define RUN_WEIGHT_CAP 8

void sift_values_share_init(sift_values_share *s, unsigned budget, uint64_t seed)
{
    /* Nothing to measure at either end: values on every run, or on the least share. */
    unsigned share = budget >= SIFT_VALUES_SHARE_ONE ? SIFT_VALUES_SHARE_ONE
                     : budget == 0                   ? LEAST_SHARE
                                                     : MOST_SHARE;
    *s = (sift_values_share){.budget = budget, .share = share};
    sift_rng_seed(&s->rng, sift_rng_splitmix(&seed));
}

bool sift_values_share_next(sift_values_share *s)
{
    if (!s->block_left) {
        s->block_left = BLOCK_RUNS;
        s->block_on = sift_rng_below(&s->rng, SIFT_VALUES_SHARE_ONE) < s->share;
    }
    s->block_left--;
    return s->block_on;
}

/* Whether progress is in values alone: since the last estimates (each halves what came
 * before), runs with values found through them, and nothing else found anything; while nothing
 * finds at all, the last verdict stands, the last progress having been values'. The budget
 * prices values by time alone, which starves a target whose progress is only in values (a state
 * machine whose every state runs the same code, where each deeper state is a find of its own,
 * thousands of runs apart): values get the lead share there, whatever the budget (but 0, which
 * asks for the least), and where edges stop finding on any target, until they find again.
 * Counting each find alike instead (values leading where their finds per run outnumber the
 * rest) had them leading at the end of 60-s campaigns on all eleven targets of bench/execs'
 * untuned set that made an estimate in the minute: a value feature is finer than an edge (every
 * order of magnitude of a length), and late in a campaign finds through values alone come in
 * numbers and each brings less (bench/results/values-lead-2026-12-07). */
static bool judge_lead(sift_values_share *s)
{
    if (s->other_finds)
        s->values_lead = false;
    else if (s->value_finds)
        s->values_lead = true;
    return s->values_lead;
}

/* The share that keeps what values add within the budget, from the runs since the last
 * estimate: COST is how much longer a run with values took than one without, in
 * 1/SHARE_ONE of the latter. */
static unsigned share_for(const sift_values_share *s, uint64_t on_mean, uint64_t off_mean)
{
    if (on_mean <= off_mean || off_mean == 0) return MOST_SHARE;
    uint64_t cost = (on_mean - off_mean) * SIFT_VALUES_SHARE_ONE / off_mean;
    if (cost == 0) return MOST_SHARE;
    uint64_t share = (uint64_t)s->budget * SIFT_VALUES_SHARE_ONE / cost;
    if (share > MOST_SHARE) return MOST_SHARE;
    return share < LEAST_SHARE ? LEAST_SHARE : (unsigned)share;
}

void sift_values_share_found(sift_values_share *s, bool values_only)
{
    if (values_only)
        s->value_finds++;
    else
        s->other_finds++;
}

void sift_values_share_took(sift_values_share *s, bool on, uint64_t ns)
{
    if (s->share == SIFT_VALUES_SHARE_ONE || s->budget == 0) return;
    uint64_t cap = s->mean_ns * RUN_WEIGHT_CAP;
    if (cap && ns > cap) ns = cap;
    if (on) {
        s->on_runs++;
        s->on_ns += ns;
    } else {
        s->off_runs++;
        s->off_ns += ns;
    }
    if (s->on_runs < ESTIMATE_RUNS || s->off_runs < ESTIMATE_RUNS) return;
    uint64_t on_mean = s->on_ns / s->on_runs, off_mean = s->off_ns / s->off_runs;
    s->share = judge_lead(s) ? LEAD_SHARE : share_for(s, on_mean, off_mean);
    s->mean_ns = (s->on_ns + s->off_ns) / (s->on_runs + s->off_runs);
    /* Half of what was seen stays for the next estimate: a share that follows the corpus
     * without swinging with each window's few slow inputs. */
    s->on_runs /= 2;
    s->off_runs /= 2;
    s->on_ns /= 2;
    s->off_ns /= 2;
    s->value_finds /= 2;
    s->other_finds /= 2;
}
