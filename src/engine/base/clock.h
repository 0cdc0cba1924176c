/* The engine's one clock: CLOCK_MONOTONIC in nanoseconds, for budgets, rates and timeouts. */
#ifndef SIFT_CLOCK_H
#define SIFT_CLOCK_H

#include <stdint.h>

#define SIFT_SECOND_NS 1000000000ull
#define SIFT_MS_NS     1000000ull

/* Now, on the monotonic clock. Async-signal-safe (clock_gettime is). */
uint64_t sift_now_ns(void);

#endif
