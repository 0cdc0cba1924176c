/* -trace_malloc (mtrace.h). */
#include "engine/contain/mtrace.h"
#include "engine/contain/report.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

extern void __sanitizer_print_stack_trace(void) __attribute__((weak));
/* The sanitizers that replace malloc, and so call the hooks; UBSan's runtime offers the hook
 * interface too, but its program keeps glibc's malloc, which never calls them. */
extern void __asan_init(void) __attribute__((weak));
extern void __msan_init(void) __attribute__((weak));
extern void __tsan_init(void) __attribute__((weak));
extern void __hwasan_init(void) __attribute__((weak));
extern void __lsan_init(void) __attribute__((weak));

/* Globals forced by the malloc hooks, which carry no context: the level, and the lock that
 * keeps a line and its stack together when threads allocate at once. */
static int g_level;
static bool g_running;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set while this thread prints: what printing allocates is not the target's, and taking the
 * lock again would deadlock. */
static __thread bool t_printing;

bool sift_mtrace_set(long long level, bool hooks_installed)
{
    bool hooked = hooks_installed &&
                  (__asan_init || __msan_init || __tsan_init || __hwasan_init || __lsan_init);
    g_level = hooked ? (int)level : 0;
    return hooked || !level;
}

void sift_mtrace_start(void)
{
    if (!g_level) return;
    sift_report o = {.len = 0};
    sift_report_str(&o, "MallocFreeTracer: START\n");
    sift_report_flush(&o);
    __atomic_store_n(&g_running, true, __ATOMIC_RELEASE);
}

void sift_mtrace_stop(size_t mallocs, size_t frees)
{
    if (!g_level) return;
    __atomic_store_n(&g_running, false, __ATOMIC_RELEASE);
    /* A thread of the target may still be printing its last line. */
    pthread_mutex_lock(&g_lock);
    sift_report o = {.len = 0};
    sift_report_str(&o, "MallocFreeTracer: STOP ");
    sift_report_u64(&o, mallocs);
    sift_report_str(&o, " ");
    sift_report_u64(&o, frees);
    sift_report_str(&o, mallocs == frees ? " (same)\n" : " (DIFFERENT)\n");
    sift_report_flush(&o);
    pthread_mutex_unlock(&g_lock);
}

static void print(const char *what, size_t n, const volatile void *ptr, const size_t *size)
{
    if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE) || t_printing) return;
    t_printing = true;
    pthread_mutex_lock(&g_lock);
    char line[96];
    if (size)
        snprintf(line, sizeof line, "%s[%zu] %p %zu\n", what, n, (const void *)ptr, *size);
    else
        snprintf(line, sizeof line, "%s[%zu] %p\n", what, n, (const void *)ptr);
    sift_report o = {.len = 0};
    sift_report_str(&o, line);
    sift_report_flush(&o);
    if (g_level >= 2 && __sanitizer_print_stack_trace) __sanitizer_print_stack_trace();
    pthread_mutex_unlock(&g_lock);
    t_printing = false;
}

void sift_mtrace_malloc(size_t n, const volatile void *ptr, size_t size)
{
    print("MALLOC", n, ptr, &size);
}

void sift_mtrace_free(size_t n, const volatile void *ptr)
{
    print("FREE", n, ptr, NULL);
}
