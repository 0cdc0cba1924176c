/* A record reader whose bug hides behind a magic string and a version number: edge coverage
 * alone sees no progress towards either, comparison feedback does. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct record {
    char name[16];
    uint32_t flags;
};

static void read_name(struct record *r, const uint8_t *data, size_t len)
{
    /* The planted bug: LEN comes from the input and is never checked against name[]. */
    memcpy(r->name, data, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10 || memcmp(data, "SIFT", 4) != 0) return 0;
    uint32_t version;
    memcpy(&version, data + 4, sizeof version);
    if (version != 0x20261129) return 0;
    size_t len = data[8];
    if (size < 9 + len) return 0;
    struct record r = {.flags = data[9]};
    read_name(&r, data + 9, len);
    return r.flags == 0xff;
}
