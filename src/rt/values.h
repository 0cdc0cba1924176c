/* Function-boundary values: what the hooks of sift-instrument's code do with the arguments,
 * fields and return values they receive. See docs/values.md. */
#ifndef SIFT_VALUES_H
#define SIFT_VALUES_H

#include "rt/rt.h"
#include "abi/values_abi.h"
#include "sift/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sets what the hooks do: SIFT_VALUES_FEATURES, SIFT_VALUES_RECORD or both (values_abi.h), or
 * 0, as until the engine says otherwise, so that a program no engine drives skips its hooks. A
 * mode other than 0 first puts sift_peek's fault handler in front of those in place (so call it
 * after the engine installed its own). */
void sift_values_set_mode(sift_rt_state *rt, unsigned mode);

/* Leaves values out of the features of the runs to come (PAUSED), or counts them again, in
 * RT's mode while it counts them; without set_mode's system calls, for one run in many. */
void sift_values_pause(sift_rt_state *rt, bool paused);

/* Whether RT's mode counts values as features: then instrumented code marks them, skipping
 * those that sift_values_skip_known's snapshot has seen. */
bool sift_values_counted(const sift_rt_state *rt);

/* Points the inline features at what SNAP has seen of the VALUES domain: a value whose counter
 * SNAP has seen is not marked again, so that a pass only visits lines that hold something new.
 * NULL (as at start) marks every value, for a run whose features are listed. */
void sift_values_skip_known(sift_rt_state *rt, const sift_snapshot *snap);

/* The bucket of VALUE in a slot of type TYPE (SIFT_VALUES_WIDTH and flags):
 *   0..32    the values -16..16, one each
 *   33..46   larger positive values, by magnitude: 33 + floor(log2(v)) - 4 up to 2^16, then
 *            one bucket up to 2^31 - 1 and one from 2^31
 *   47..60   smaller negative values (signed types only), the same way
 *   61, 62   a null and a non-null pointer */
unsigned sift_values_bucket(uint64_t value, uint8_t type);

/* VALUE as its slot's type reads it: sign-extended from the width when signed, else cut to
 * the width. */
int64_t sift_values_signed(uint64_t value, uint8_t type);

/* The counter of the VALUES domain that slot SLOT of the function with id FN hits with a
 * value of bucket BUCKET. */
size_t sift_values_feature(uint64_t fn, unsigned slot, unsigned bucket);

/* The registered function with id ID, or NULL. */
const sift_values_fn *sift_values_lookup(const sift_rt_state *rt, uint64_t id);

/* Number of functions in the registered tables. */
size_t sift_values_count(const sift_rt_state *rt);

#endif
