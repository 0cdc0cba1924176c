/* Packed lists of dense feature indices (fidlist.h). */
#include "engine/base/fidlist.h"

#include "engine/base/radix.h"

size_t sift_fidlist_pack(uint32_t *fids, size_t n, uint32_t *scratch, uint8_t *out)
{
    sift_radix_sort32(fids, scratch, n);
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
