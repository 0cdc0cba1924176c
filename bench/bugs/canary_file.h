/* The canary file: what canary.c writes and canary_tool.c creates and reads. One per campaign,
 * mapped shared by every process that runs the target, so that a record survives the crash
 * that usually follows a trigger. */
#ifndef SIFT_BENCH_CANARY_FILE_H
#define SIFT_BENCH_CANARY_FILE_H

#include <stdatomic.h>
#include <stdint.h>

#define SIFT_CANARY_MAGIC 0x59524e4143544653ull /* "SFTCANRY" */
#define SIFT_CANARY_SLOTS 256                   /* Magma's targets have at most some dozens */
#define SIFT_CANARY_NAME  24

/* One bug. KEY (a hash of its name, never 0) claims the slot; the times are CLOCK_REALTIME
 * nanoseconds of the first reach and the first trigger, 0 for never. */
typedef struct {
    _Atomic uint64_t key;
    _Atomic uint64_t reached_ns, triggered_ns;
    char name[SIFT_CANARY_NAME];
} sift_canary_slot;

typedef struct {
    uint64_t magic;
    uint64_t start_ns; /* the campaign's start, CLOCK_REALTIME */
    sift_canary_slot slots[SIFT_CANARY_SLOTS];
} sift_canary_file;

/* FNV-1a of NAME, never 0: the slot's key. */
static inline uint64_t sift_canary_key(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    return h ? h : 1;
}

#endif
