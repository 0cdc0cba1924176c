/* Packed lists of dense feature indices (fidlist.h). */
#include "engine/base/fidlist.h"

#include <stdlib.h>

static int ascending(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

size_t sift_fidlist_pack(uint32_t *fids, size_t n, uint8_t *out)
{
    if (n > 1) qsort(fids, n, sizeof(*fids), ascending);
    size_t len = 0;
    uint32_t last = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t step = fids[j] - last;
        last = fids[j];
        while (step >= 0x80) {
            out[len++] = (uint8_t)(step | 0x80);
            step >>= 7;
        }
        out[len++] = (uint8_t)step;
    }
    return len;
}
