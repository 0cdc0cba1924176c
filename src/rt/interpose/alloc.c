/* -malloc_limit_mb where no sanitizer's allocator offers malloc hooks: sift-cc links the
 * program with --wrap for each function below (sift_cc_alloc_wraps in src/cc/sift-cc.c), so
 * that the program's calls reach these, which hand a request of the limit or more to the
 * engine before it is made. Without this only the memory watcher sees such a request, once
 * the target has touched the limit's worth of pages: a libwebp input that asks for 10 GB took
 * 21 s to get there (docs/containment.md), on every such input a campaign met.
 *
 * --wrap rather than a definition of malloc: __real_malloc is whatever the link resolves malloc
 * to (glibc's, or jemalloc's where the program links it), so the program keeps its allocator,
 * and its free matches. The same holds for static links. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_reallocarray(void *ptr, size_t count, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
void *__real_memalign(size_t alignment, size_t size);
int __real_posix_memalign(void **out, size_t alignment, size_t size);

/* Globals forced by the wrapping: an allocation carries no context that could lead to the
 * engine's state. SIZE_MAX and no callback until the engine sets a limit, so that a program
 * that no engine drives (a configure check, the project's own tools) allocates as before. */
static size_t limit_bytes = SIZE_MAX;
static void (*over_limit)(size_t size);

/* Called by the engine once, before any input runs (sift_fault_install). EXCEEDED reports the
 * request and ends the process; it is not expected to return. */
void __sift_malloc_limit(size_t bytes, void (*exceeded)(size_t size))
{
    __atomic_store_n(&over_limit, exceeded, __ATOMIC_RELAXED);
    __atomic_store_n(&limit_bytes, bytes, __ATOMIC_RELEASE);
}

static inline void check(size_t size)
{
    if (__builtin_expect(size >= __atomic_load_n(&limit_bytes, __ATOMIC_ACQUIRE), 0))
        __atomic_load_n(&over_limit, __ATOMIC_RELAXED)(size);
}

/* The same check for alloc_cxx.c's operator new. */
void __sift_malloc_check(size_t size);
void __sift_malloc_check(size_t size)
{
    check(size);
}

/* COUNT * SIZE, or 0 when it overflows: the allocator returns NULL for that, which a program
 * may well handle, and nothing was asked of memory. */
static inline size_t product(size_t count, size_t size)
{
    size_t total;
    return __builtin_mul_overflow(count, size, &total) ? 0 : total;
}

void *__wrap_malloc(size_t size)
{
    check(size);
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    check(product(count, size));
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
    check(size);
    return __real_realloc(ptr, size);
}

void *__wrap_reallocarray(void *ptr, size_t count, size_t size)
{
    check(product(count, size));
    return __real_reallocarray(ptr, count, size);
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    check(size);
    return __real_aligned_alloc(alignment, size);
}

void *__wrap_memalign(size_t alignment, size_t size)
{
    check(size);
    return __real_memalign(alignment, size);
}

int __wrap_posix_memalign(void **out, size_t alignment, size_t size)
{
    check(size);
    return __real_posix_memalign(out, alignment, size);
}
