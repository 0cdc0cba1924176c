/* A nested type-length-value format with a checksum: containers hold records, the last byte
 * of a well-formed message is the sum of all bytes before it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

enum { TAG_CONTAINER = 0xC0, TAG_INT = 0x01, TAG_STRING = 0x02 };

struct reader {
    const uint8_t *p, *end;
    int depth;
    int strings;
};

static int parse(struct reader *r);

static int parse_container(struct reader *r, size_t len)
{
    struct reader inner = {r->p, r->p + len, r->depth + 1, r->strings};
    if (inner.depth > 3) return -1;
    while (inner.p < inner.end)
        if (parse(&inner) != 0) return -1;
    r->strings = inner.strings;
    r->p += len;
    return 0;
}

static int parse(struct reader *r)
{
    if (r->end - r->p < 2) return -1;
    uint8_t tag = r->p[0];
    size_t len = r->p[1];
    r->p += 2;
    if ((size_t)(r->end - r->p) < len) return -1;
    switch (tag) {
    case TAG_CONTAINER:
        return parse_container(r, len);
    case TAG_STRING:
        r->strings++;
        /* The planted bug: three strings inside a container nested three deep. */
        if (r->depth == 3 && r->strings == 3) abort();
        break;
    case TAG_INT:
        if (len != 4) return -1;
        break;
    default:
        return -1;
    }
    r->p += len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    uint8_t sum = 0;
    for (size_t i = 0; i + 1 < size; i++)
        sum = (uint8_t)(sum + data[i]);
    if (sum != data[size - 1]) return 0;
    struct reader r = {data, data + size - 1, 0, 0};
    while (r.p < r.end)
        if (parse(&r) != 0) return 0;
    return 0;
}
