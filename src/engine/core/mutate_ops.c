/* Byte-level helpers the mutation operators share (mutate.c, mutate_cmp.c). */
#include "engine/core/mutate_ops.h"

#include <string.h>

size_t sift_mut_utoa(uint64_t v, char out[20])
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

size_t sift_mut_replace(uint8_t *d, size_t size, size_t max, size_t pos, size_t oldn,
                        const void *src, size_t newn)
{
    if (size - oldn + newn > max) return 0;
    memmove(d + pos + newn, d + pos + oldn, size - pos - oldn);
    memcpy(d + pos, src, newn);
    return size - oldn + newn;
}
