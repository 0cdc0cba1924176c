/* The target of bench/clusterfuzz: a small record parser with a heap overflow one frame below
 * the harness (behind a token of its dictionary), and a hang behind a hash that fuzzing does
 * not solve, so that only the unit the script writes hangs. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;

/* Sums a length-prefixed record: the length byte is trusted, the planted bug. */
static __attribute__((noinline)) unsigned parse_record(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size);
    if (!copy) return 0;
    memcpy(copy, data, size);
    unsigned sum = 0;
    for (size_t i = 0; i < copy[5]; i++)
        sum += copy[6 + i];
    free(copy);
    return sum;
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char hang[] = "HANG-FOREVER";
    if (size >= 6 && !memcmp(data, "RECRD", 5)) sink = parse_record(data, size);
    if (size >= 12 && fnv1a(data, 12) == fnv1a((const uint8_t *)hang, 12))
        for (;;)
            sink++;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == 'k' && data[i + 1] == 'v') sink += i;
    return 0;
}
