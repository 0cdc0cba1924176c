/* What the runtime's own code reads of a snapshot beyond the public API (sift/snapshot.h). */
#ifndef SIFT_SNAPSHOT_IMPL_H
#define SIFT_SNAPSHOT_IMPL_H

#include "sift/snapshot.h"

#include <stddef.h>
#include <stdint.h>

/* SNAP's known bits of domain D (bit i % 64 of word i / 64 is set once counter i has been
 * seen), when it has room for at least N counters there; else NULL. Read-only: only passes
 * change them. */
const uint64_t *sift_snapshot_known(const sift_snapshot *snap, sift_domain d, size_t n);

#endif
