/* MemorySanitizer and the engine. A target built with -fsanitize=memory links MSan's runtime;
 * the engine is not instrumented, so what it writes carries no "initialised" shadow, and MSan's
 * interceptors (memcmp, strlen, ...) would report the engine's own calls. As libFuzzer does:
 * the interceptors' checks are off while the engine runs and on while the target runs, and what
 * the engine passes to the target (the input and the arguments) is marked initialised first.
 * Without MSan the weak symbols are null and each call is one predicted branch. */
#ifndef SIFT_MSAN_H
#define SIFT_MSAN_H

#include <stddef.h>

extern void __msan_unpoison(const volatile void *data, size_t size) __attribute__((weak));
extern void __msan_unpoison_param(size_t n) __attribute__((weak));
extern void __msan_scoped_disable_interceptor_checks(void) __attribute__((weak));
extern void __msan_scoped_enable_interceptor_checks(void) __attribute__((weak));

/* Once, before the engine's first call that MSan intercepts. */
static inline void sift_msan_engine_start(void)
{
    if (__msan_scoped_disable_interceptor_checks) __msan_scoped_disable_interceptor_checks();
}

/* Before the engine calls into the target with NPARAMS arguments; DATA, SIZE is one of them. */
static inline void sift_msan_enter_target(const void *data, size_t size, size_t nparams)
{
    if (!__msan_unpoison) return;
    __msan_unpoison(data, size);
    if (__msan_unpoison_param) __msan_unpoison_param(nparams);
    if (__msan_scoped_enable_interceptor_checks) __msan_scoped_enable_interceptor_checks();
}

/* After the target's call returned. */
static inline void sift_msan_leave_target(void)
{
    if (__msan_scoped_disable_interceptor_checks) __msan_scoped_disable_interceptor_checks();
}

/* Marks DATA, SIZE initialised, for a target's callback that reads it. */
static inline void sift_msan_unpoison(const void *data, size_t size)
{
    if (__msan_unpoison) __msan_unpoison(data, size);
}

#endif
