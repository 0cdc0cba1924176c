/* -reload=N: one fuzzing process reads its corpus folder again every N seconds and takes in
 * what other processes saved there, as libFuzzer's -reload does. */
#ifndef SIFT_RELOAD_H
#define SIFT_RELOAD_H

#include "engine/fuzzer.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *dir; /* NULL: reloading is off */
    char **seen;     /* the paths listed so far, sorted */
    size_t nseen;
    uint64_t period_ns, next_ns;
} sift_reload;

/* Sets R up for F's first corpus folder, taking what is there now as seen: on with -reload=N
 * (N > 0), a folder to save into, and not as a worker of -workers (which share their finds in
 * memory). */
void sift_reload_start(sift_reload *r, sift_fuzzer *f);

/* When due (by F's last execution end), runs each file of the folder not seen before, taking
 * those that add coverage into the corpus; prints a RELOAD status line when any did. */
void sift_reload_poll(sift_reload *r, sift_fuzzer *f);

void sift_reload_free(sift_reload *r);

#endif
