/* String and memory comparisons that replace libc's in targets built without a sanitizer, so
 * that their operands reach the comparison feedback as the sanitizer interceptors' hooks do in
 * sanitized builds. Never link this with ASan, MSan or TSan: their interceptors are weak
 * aliases of these names, and a strong definition here would silently disable their checks.
 *
 * Built with -fno-builtin so that the compiler neither turns these loops back into calls to
 * the functions being defined nor assumes libc semantics for them. Each one computes its
 * result itself, as reaching libc's through dlsym(RTLD_NEXT) would need a lazily resolved
 * pointer on every call and fails in static links, then hands the operands to the hook, which
 * records them only while the engine is tracing. */
#define _GNU_SOURCE
#include "rt/memfind.h"

#include <ctype.h>
#include <sanitizer/common_interface_defs.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define CALLER_PC() __builtin_return_address(0)

static int compare_mem(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    /* Word steps find the first differing word; the byte loop then orders it. */
    for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
        uint64_t x, y;
        __builtin_memcpy(&x, a + i, sizeof(x));
        __builtin_memcpy(&y, b + i, sizeof(y));
        if (x != y) break;
    }
    for (; i < n; i++)
        if (a[i] != b[i]) return a[i] - b[i];
    return 0;
}

static int compare_str(const unsigned char *a, const unsigned char *b, size_t n, bool fold)
{
    for (size_t i = 0; i < n; i++) {
        int x = fold ? tolower(a[i]) : a[i];
        int y = fold ? tolower(b[i]) : b[i];
        if (x != y || x == 0) return x - y;
    }
    return 0;
}

int memcmp(const void *s1, const void *s2, size_t n)
{
    int r = compare_mem(s1, s2, n);
    __sanitizer_weak_hook_memcmp(CALLER_PC(), s1, s2, n, r);
    return r;
}

/* Compilers turn `memcmp(...) == 0` into bcmp, which would otherwise bypass the hook. */
int bcmp(const void *s1, const void *s2, size_t n)
{
    int r = compare_mem(s1, s2, n);
    __sanitizer_weak_hook_memcmp(CALLER_PC(), s1, s2, n, r);
    return r;
}

int strcmp(const char *s1, const char *s2)
{
    int r = compare_str((const unsigned char *)s1, (const unsigned char *)s2, SIZE_MAX, false);
    __sanitizer_weak_hook_strcmp(CALLER_PC(), s1, s2, r);
    return r;
}

int strncmp(const char *s1, const char *s2, size_t n)
{
    int r = compare_str((const unsigned char *)s1, (const unsigned char *)s2, n, false);
    __sanitizer_weak_hook_strncmp(CALLER_PC(), s1, s2, n, r);
    return r;
}

int strcasecmp(const char *s1, const char *s2)
{
    int r = compare_str((const unsigned char *)s1, (const unsigned char *)s2, SIZE_MAX, true);
    __sanitizer_weak_hook_strcasecmp(CALLER_PC(), s1, s2, r);
    return r;
}

int strncasecmp(const char *s1, const char *s2, size_t n)
{
    int r = compare_str((const unsigned char *)s1, (const unsigned char *)s2, n, true);
    __sanitizer_weak_hook_strncasecmp(CALLER_PC(), s1, s2, n, r);
    return r;
}

char *strstr(const char *hay, const char *needle)
{
    char *r = (char *)sift_memfind((const uint8_t *)hay, strlen(hay), (const uint8_t *)needle,
                                   strlen(needle));
    __sanitizer_weak_hook_strstr(CALLER_PC(), hay, needle, r);
    return r;
}

char *strcasestr(const char *hay, const char *needle)
{
    size_t hay_len = strlen(hay), needle_len = strlen(needle);
    char *r = NULL;
    for (size_t i = 0; !r && needle_len <= hay_len && i <= hay_len - needle_len; i++)
        if (compare_str((const unsigned char *)hay + i, (const unsigned char *)needle, needle_len,
                        true) == 0)
            r = (char *)hay + i;
    __sanitizer_weak_hook_strcasestr(CALLER_PC(), hay, needle, r);
    return r;
}

void *memmem(const void *hay, size_t hay_len, const void *needle, size_t needle_len)
{
    void *r = (void *)sift_memfind(hay, hay_len, needle, needle_len);
    __sanitizer_weak_hook_memmem(CALLER_PC(), hay, hay_len, needle, needle_len, r);
    return r;
}
