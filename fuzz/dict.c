/* sift_dict_parse on any text. What it accepts must hold entries of 1..SIFT_DICT_MAX_ENTRY
 * bytes, each once (a parse keeps its own index to drop duplicates), and read back the same when
 * written out as a dictionary again. */
#include "engine/core/dict.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* D written as a dictionary: printable bytes as they are, the rest as \xNN. */
static char *write_dict(const sift_dict *d, size_t *len)
{
    /* Per entry: "kw<number>=", the value escaped (4 bytes a byte at most), quotes, newline. */
    char *text = malloc(d->count * (SIFT_DICT_MAX_ENTRY * 4 + 32) + 1);
    if (!text) return NULL;
    char *p = text;
    for (size_t i = 0; i < d->count; i++) {
        const sift_dict_entry *e = &d->entries[i];
        p += sprintf(p, i & 1 ? "\"" : "kw%zu=\"", i);
        for (size_t j = 0; j < e->len; j++) {
            uint8_t c = e->data[j];
            if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"')
                p += sprintf(p, "\\x%02x", c);
            else
                *p++ = (char)c;
        }
        p += sprintf(p, "\"\n");
    }
    *len = (size_t)(p - text);
    return text;
}

static int same_entries(const sift_dict *a, const sift_dict *b)
{
    if (a->count != b->count) return 0;
    for (size_t i = 0; i < a->count; i++)
        if (a->entries[i].len != b->entries[i].len ||
            memcmp(a->entries[i].data, b->entries[i].data, a->entries[i].len) != 0)
            return 0;
    return 1;
}

static int compare_entries(const void *a, const void *b)
{
    const sift_dict_entry *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->data, y->data, x->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of the exact size: the text has no NUL after it, and a read past its end is an
     * overflow the sanitizer sees. */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data, size);
    sift_dict d = {0};
    char err[256];
    int rc = sift_dict_parse(&d, "f.dict", text, size, err, sizeof err);
    free(text);
    if (rc != 0 && rc != -1) __builtin_trap();
    if (rc == -1 && strncmp(err, "f.dict:", 7) != 0) __builtin_trap();
    for (size_t i = 0; i < d.count; i++)
        if (d.entries[i].len == 0 || d.entries[i].len > SIFT_DICT_MAX_ENTRY) __builtin_trap();
    sift_dict_entry *sorted = malloc(d.count * sizeof(*sorted) + 1);
    if (sorted && d.count) {
        memcpy(sorted, d.entries, d.count * sizeof(*sorted));
        qsort(sorted, d.count, sizeof(*sorted), compare_entries);
        for (size_t i = 1; i < d.count; i++)
            if (!compare_entries(&sorted[i - 1], &sorted[i])) __builtin_trap();
    }
    free(sorted);
    size_t len;
    char *again = write_dict(&d, &len);
    if (again) {
        sift_dict r = {0};
        if (sift_dict_parse(&r, "again", again, len, err, sizeof err) || !same_entries(&d, &r))
            __builtin_trap();
        sift_dict_free(&r);
        free(again);
    }
    sift_dict_free(&d);
    return 0;
}
