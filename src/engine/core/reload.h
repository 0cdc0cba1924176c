/* -reload=N: one fuzzing process reads its corpus folder again every N seconds and takes in
 * what other processes saved there, as libFuzzer's -reload does. The fuzzer decides what to do
 * with each new file. */
#ifndef SIFT_RELOAD_H
#define SIFT_RELOAD_H

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *dir; /* NULL: reloading is off */
    char **seen;     /* the paths listed so far, sorted */
    size_t nseen;
    uint64_t period_ns, next_ns;
} sift_reload;

/* Sets R up to watch DIR (NULL: reloading is off) every PERIOD_S seconds, taking what is there
 * now as seen. */
void sift_reload_start(sift_reload *r, const char *dir, long long period_s);

/* When due at NOW_NS, calls TAKE(CTX, PATH) on each file of the folder not seen before; returns
 * how many of those calls said the file was taken. */
size_t sift_reload_poll(sift_reload *r, uint64_t now_ns, bool (*take)(void *ctx, const char *path),
                        void *ctx);

void sift_reload_free(sift_reload *r);

#endif
