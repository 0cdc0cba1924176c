/* The inputs a process ran last. A crash can depend on them: an input that writes out of bounds
 * corrupts the heap, and the allocator's check aborts on a later input, which then crashes
 * nowhere alone. Written beside the crash's artifact, they replay the sequence in one process. */
#ifndef SIFT_HISTORY_H
#define SIFT_HISTORY_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t size, cap;
} sift_history_slot;

typedef struct {
    sift_history_slot *slots; /* a ring of n copies; NULL when none are kept */
    size_t n;
    uint64_t added; /* inputs added so far: the newest is slots[(added - 1) % n] */
} sift_history;

/* Keeps the last N inputs (none for N = 0). Returns 0, or -1 when out of memory. */
int sift_history_init(sift_history *h, size_t n);
void sift_history_free(sift_history *h);

/* Copies DATA as the newest input, in place of the oldest once N are kept. An input whose copy
 * cannot be allocated is kept as an empty one. */
void sift_history_add(sift_history *h, const uint8_t *data, size_t size);

/* Writes the kept inputs, oldest first, as 000001, 000002, ... into the new folder PATH
 * (relative to the pinned working folder), which appears whole or not at all; a folder of that
 * name that exists already is left as it is. Prints one line on the report descriptor either
 * way, naming ARGV0 for the command that replays them. Async-signal-safe. Returns 0, or -1 with
 * errno set. */
int sift_history_write(const sift_history *h, const char *path, const char *argv0);

#endif
