/* The engine's one clock. */
#include "engine/base/clock.h"

#include <time.h>

uint64_t sift_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SIFT_SECOND_NS + (uint64_t)ts.tv_nsec;
}
