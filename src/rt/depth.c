/* Stack depth as coverage, as libFuzzer counts it: sift-cc builds with
 * -fsanitize-coverage=stack-depth, which makes each instrumented function that calls others
 * lower __sancov_lowest_stack to its frame. A run that reaches deeper than any before (a
 * recursion that one more matching byte takes one call further) is new even where every edge
 * it took is old and their hit counts have long stopped growing. */
#include "rt/rt.h"

/* The compiler's instrumentation names this variable and reads it as initial-exec TLS; weak,
 * as the sanitizer runtimes that define it too make theirs. The one global the instrumented
 * code forces on the runtime. */
__attribute__((weak, tls_model("initial-exec"))) __thread uintptr_t __sancov_lowest_stack;

/* A fixed site of the VALUES domain, far from where one function's slots land. */
#define DEPTH_SITE 0x5354414b44455054ull

SIFT_RT_NOINSTR __attribute__((noinline)) uintptr_t sift_rt_depth_begin(void)
{
    uintptr_t top = (uintptr_t)__builtin_frame_address(0);
    __sancov_lowest_stack = top;
    return top;
}

/* libFuzzer's step function of the depth in words: exact up to 8, then 8 steps per doubling. */
SIFT_RT_NOINSTR static size_t depth_step(uintptr_t words)
{
    if (words < 8) return words;
    unsigned log = (unsigned)(63 - __builtin_clzll(words)) - 3;
    return (size_t)(log + 1) * 8 + ((words >> log) & 7);
}

SIFT_RT_NOINSTR void sift_rt_depth_end(sift_rt_state *rt, uintptr_t top)
{
    uintptr_t low = __sancov_lowest_stack;
    if (low >= top || !rt->values.counters) return;
    size_t step = depth_step((top - low) / sizeof(void *));
    uint64_t key = DEPTH_SITE ^ step;
    sift_hit(&rt->values,
             (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (SIFT_RT_VALUES_COUNTERS - 1));
}
