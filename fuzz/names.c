/* Queue entry names from a peer's folder (-sync_dir) or a resumed -out folder: sift_outdir_id on
 * any name, checked against a reading of its own, and sift_outdir_safe on any text. */
#include "engine/campaign/outdir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* "id:" and digits, up to ',' or the end, as AFL++ names queue entries; ids up to
 * SIFT_OUTDIR_ID_MAX. */
static long expected_id(const char *name)
{
    if (strncmp(name, "id:", 3) != 0) return -1;
    const char *digits = name + 3, *end = digits + strspn(digits, "0123456789");
    if (end == digits || (*end != ',' && *end)) return -1;
    while (digits < end - 1 && *digits == '0')
        digits++;
    if (end - digits > 10) return -1;
    long id = strtol(digits, NULL, 10);
    return id > SIFT_OUTDIR_ID_MAX ? -1 : id;
}

static int allowed(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("._+-", c));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A name is a string: the bytes up to the first NUL, in a copy of that exact length.
     * (calloc: the analyzer cannot tell that strspn stops at the NUL, within what memcpy wrote.) */
    size_t len = strnlen((const char *)data, size);
    char *name = calloc(len + 1, 1);
    if (!name) return 0;
    memcpy(name, data, len);
    name[len] = '\0';

    long id = sift_outdir_id(name);
    if (id != expected_id(name)) __builtin_trap();

    sift_outdir_safe(name);
    if (strlen(name) != len) __builtin_trap();
    for (size_t i = 0; i < len; i++)
        if (!allowed(name[i]) || (allowed((char)data[i]) && name[i] != (char)data[i]) ||
            (!allowed((char)data[i]) && name[i] != '_'))
            __builtin_trap();
    free(name);
    return 0;
}
