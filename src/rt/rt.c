/* The runtime's process-wide state, created on first use. */
#include "rt/rt.h"

#include <pthread.h>

/* Static storage, so that only the coverage map itself can fail to allocate. */
static sift_rt_state state;
sift_rt_state *sift_rt_ready; /* &state once complete, NULL before or after a failed start */
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Set while this thread sets the state up: start() allocates, and a target that defines its own
 * malloc may compare (or call an interposed memcmp) inside it, which calls back here. Waiting on
 * the once there would wait on itself; the hooks of such calls get NULL and record nothing. */
static __thread bool starting;

SIFT_RT_NOINSTR static int alloc_domain(sift_covmap *map, sift_domain domain, size_t len,
                                        sift_counters *out)
{
    size_t first;
    int rc = sift_covmap_alloc(map, domain, len, NULL, &first);
    return rc != SIFT_OK ? rc : sift_covmap_counters(map, domain, first, out);
}

/* libFuzzer's extra counters: a harness may count features of its own into this section (a
 * table lookup, say, which no edge tells apart); they count as edges. The linker defines the
 * bounds when an object has the section; weak, so they are NULL when none has. */
extern uint8_t __start___libfuzzer_extra_counters[] __attribute__((weak));
extern uint8_t __stop___libfuzzer_extra_counters[] __attribute__((weak));

SIFT_RT_NOINSTR size_t sift_rt_extra_counters(void)
{
    uintptr_t lo = (uintptr_t)__start___libfuzzer_extra_counters;
    uintptr_t hi = (uintptr_t)__stop___libfuzzer_extra_counters;
    return lo && lo < hi ? hi - lo : 0;
}

SIFT_RT_NOINSTR static void start(void)
{
    sift_covmap *map = sift_covmap_new();
    if (!map) return;
    if (alloc_domain(map, SIFT_DOMAIN_CMP, SIFT_RT_CMP_COUNTERS, &state.cmp) != SIFT_OK ||
        alloc_domain(map, SIFT_DOMAIN_VALUES, SIFT_RT_VALUES_COUNTERS, &state.values) != SIFT_OK) {
        sift_covmap_free(map);
        return;
    }
    size_t first, extra = sift_rt_extra_counters();
    if (extra && sift_covmap_attach(map, SIFT_DOMAIN_EDGES, __start___libfuzzer_extra_counters,
                                    extra, &first) != SIFT_OK) {
        sift_covmap_free(map);
        return;
    }
    state.map = map;
    __atomic_store_n(&sift_rt_ready, &state, __ATOMIC_RELEASE);
}

/* The first callers are module constructors, which may run before anything else in the
 * process, so the state cannot be set up by a constructor of its own. */
SIFT_RT_NOINSTR sift_rt_state *sift_rt(void)
{
    sift_rt_state *rt = __atomic_load_n(&sift_rt_ready, __ATOMIC_ACQUIRE);
    if (rt || starting) return rt;
    starting = true;
    pthread_once(&once, start);
    starting = false;
    return __atomic_load_n(&sift_rt_ready, __ATOMIC_ACQUIRE);
}
