/* Magma's canary API (MAGMA_LOG and friends, as Magma's bug patches call them), backed by
 * sift's canary runtime (canary.c): each bug records when an execution first reached its site
 * and when its condition first held, in a file every process of a campaign maps. Patched
 * libraries are compiled with `-include bench/bugs/canary.h`. */
#ifndef SIFT_BENCH_CANARY_H
#define SIFT_BENCH_CANARY_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAGMA_LOG(b, c)                                                                            \
    do {                                                                                           \
        magma_log((b), (int)(c));                                                                  \
    } while (0)
#define MAGMA_LOG_V(b, c) (magma_log((b), (int)(c)))
#define MAGMA_AND(a, b)   magma_and((a), (b))
#define MAGMA_OR(a, b)    magma_or((a), (b))

/* BUG's site was reached; CONDITION says whether the bug was triggered there. */
void magma_log(const char *bug, int condition);

/* Conditions combined without a branch: a canary must add no edge the fuzzer could count. */
static inline bool magma_and(bool a, bool b)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__("and %[b], %[a]" : [a] "+r"(a) : [b] "rm"(b));
    return a;
#else
    return (bool)((unsigned)a & (unsigned)b);
#endif
}

static inline bool magma_or(bool a, bool b)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__("or %[b], %[a]" : [a] "+r"(a) : [b] "rm"(b));
    return a;
#else
    return (bool)((unsigned)a | (unsigned)b);
#endif
}

#ifdef __cplusplus
}
#endif
#endif
