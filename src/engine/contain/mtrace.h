/* -trace_malloc: libFuzzer's MallocFreeTracer. Each input's run is framed by
 * "MallocFreeTracer: START" and "MallocFreeTracer: STOP M F (same|DIFFERENT)" lines, and every
 * allocation and free inside it prints "MALLOC[N] PTR SIZE" or "FREE[N] PTR", with its stack at
 * level 2 (lib/fuzzer/scripts/unbalanced_allocs.py reads these lines). The lines come from the
 * sanitizer's malloc hooks (fault.c), so a build without a sanitizer prints only the frames. */
#ifndef SIFT_MTRACE_H
#define SIFT_MTRACE_H

#include <stdbool.h>
#include <stddef.h>

/* LEVEL 0 traces nothing; 1 the lines; 2 the lines with stacks. Returns false when LEVEL asks
 * for lines that this program's allocator cannot give (no hooks, or a sanitizer that keeps
 * glibc's malloc): then nothing is traced. */
bool sift_mtrace_set(long long level, bool hooks_installed);
void sift_mtrace_start(void);
void sift_mtrace_stop(size_t mallocs, size_t frees);

/* Called from the malloc hooks with the number of the allocation (free) within the run. */
void sift_mtrace_malloc(size_t n, const volatile void *ptr, size_t size);
void sift_mtrace_free(size_t n, const volatile void *ptr);

#endif
