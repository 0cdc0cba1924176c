/* What the runtime's own code reads of a snapshot beyond the public API (sift/snapshot.h). */
#ifndef SIFT_SNAPSHOT_IMPL_H
#define SIFT_SNAPSHOT_IMPL_H

#include "sift/snapshot.h"

#include <stddef.h>
#include <stdint.h>

/* SNAP's seen bytes of domain D (bucket bits per counter), when it has room for at least N
 * counters there; else NULL. Read-only: only passes change them. */
const uint8_t *sift_snapshot_seen(const sift_snapshot *snap, sift_domain d, size_t n);

#endif
