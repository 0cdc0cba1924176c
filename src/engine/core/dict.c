/* Dictionaries: AFL/libFuzzer text format, parsed strictly, one error stops the file.
 *
 * A line is blank, a comment (first non-blank byte '#'), "value" or name="value", where the name
 * may end in @level (AFL; the level is accepted and ignored: every entry loads). Inside the
 * quotes every byte must be printable ASCII, as AFL requires; \\, \" and \xNN write the others.
 * The text need not end in a NUL, nor in a newline. */
#include "engine/core/dict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Dictionaries are kilobytes; a cap keeps a wrong path (a device, a huge log) from filling
 * memory. */
#define DICT_MAX_FILE (16u << 20)

static int append(sift_dict *d, const uint8_t *data, size_t len)
{
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        sift_dict_entry *e = realloc(d->entries, cap * sizeof(*e));
        if (!e) return -1;
        d->entries = e;
        d->cap = cap;
    }
    sift_dict_entry *e = &d->entries[d->count++];
    memcpy(e->data, data, len);
    e->len = (uint8_t)len;
    return 0;
}

int sift_dict_add(sift_dict *d, const uint8_t *data, size_t len)
{
    if (!d || !data || len == 0 || len > SIFT_DICT_MAX_ENTRY) return -1;
    for (size_t i = 0; i < d->count; i++)
        if (d->entries[i].len == len && !memcmp(d->entries[i].data, data, len)) return 0;
    return append(d, data, len);
}

void sift_dict_free(sift_dict *d)
{
    if (!d) return;
    free(d->entries);
    d->entries = NULL;
    d->count = d->cap = 0;
}

static bool is_blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_print(uint8_t c)
{
    return c >= 0x20 && c < 0x7f;
}

static int hex_digit(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* sift_dict_add scans every entry; a parse keeps a hash index of D instead, so that a large file
 * loads in linear time. */
typedef struct {
    size_t *slot; /* entry number + 1; 0 = empty */
    size_t mask;
} dict_index;

static size_t hash_bytes(const uint8_t *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return (size_t)(h ^ h >> 32);
}

/* The slot that holds an entry equal to P, or the empty slot where it would go. */
static size_t *index_slot(const dict_index *ix, const sift_dict *d, const uint8_t *p, size_t len)
{
    for (size_t i = hash_bytes(p, len) & ix->mask;; i = (i + 1) & ix->mask) {
        size_t *s = &ix->slot[i];
        if (!*s) return s;
        const sift_dict_entry *e = &d->entries[*s - 1];
        if (e->len == len && !memcmp(e->data, p, len)) return s;
    }
}

/* Keeps the table at most half full, rebuilt from D when it grows. */
static int index_reserve(dict_index *ix, const sift_dict *d)
{
    if (ix->slot && (d->count + 1) * 2 <= ix->mask + 1) return 0;
    size_t n = 64;
    while (n < (d->count + 1) * 2)
        n *= 2;
    size_t *slot = calloc(n, sizeof(*slot));
    if (!slot) return -1;
    free(ix->slot);
    ix->slot = slot;
    ix->mask = n - 1;
    for (size_t i = 0; i < d->count; i++) {
        const sift_dict_entry *e = &d->entries[i];
        size_t *s = index_slot(ix, d, e->data, e->len);
        if (!*s) *s = i + 1;
    }
    return 0;
}

static int add_indexed(sift_dict *d, dict_index *ix, const uint8_t *p, size_t len)
{
    if (index_reserve(ix, d)) return -1;
    size_t *s = index_slot(ix, d, p, len);
    if (*s) return 0;
    if (append(d, p, len)) return -1;
    *s = d->count;
    return 0;
}

typedef struct {
    const char *name;
    size_t line;
    char *err;
    size_t errlen;
} where;

__attribute__((format(printf, 2, 3))) static int fail(const where *w, const char *fmt, ...)
{
    if (!w->err || !w->errlen) return -1;
    int n = snprintf(w->err, w->errlen, "%s:%zu: ", w->name, w->line);
    if (n >= 0 && (size_t)n < w->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err + n, w->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Decodes the value between P[0] == '"' and LIM, the line's closing quote, into OUT. A quote
 * inside is the value's own byte, escaped or not: libFuzzer and AFL++ read a value from the
 * first quote to the last, and their dictionaries (AFL++'s regexp.dict) rely on it. */
static int parse_value(const where *w, const uint8_t *p, const uint8_t *lim, uint8_t *out,
                       size_t *len)
{
    size_t n = 0;
    for (p++; p < lim; p++) {
        uint8_t c = *p;
        if (!is_print(c))
            return fail(w, "non-printable byte 0x%02x in the value (write it as \\x%02x)", c, c);
        if (c == '\\') {
            if (++p == lim) return fail(w, "unterminated string");
            c = *p;
            if (!is_print(c))
                return fail(w, "non-printable byte 0x%02x in the value (write it as \\x%02x)", c,
                            c);
            if (c == 'x') {
                /* Show what followed \x, stopping at the end of the value. */
                int shown = 0;
                while (shown < 2 && p + 1 + shown < lim && is_print(p[1 + shown]) &&
                       p[1 + shown] != '"')
                    shown++;
                int hi = p + 1 < lim ? hex_digit(p[1]) : -1;
                int lo = p + 2 < lim ? hex_digit(p[2]) : -1;
                if (hi < 0 || lo < 0)
                    return fail(w, "bad escape \\x%.*s (expected \\xNN, two hex digits)", shown,
                                (const char *)p + 1);
                c = (uint8_t)(hi << 4 | lo);
                p += 2;
            } else if (c != '\\' && c != '"') {
                return fail(w, "bad escape \\%c (expected \\\\, \\\" or \\xNN)", c);
            }
        }
        if (n == SIFT_DICT_MAX_ENTRY)
            return fail(w, "value longer than %d bytes", SIFT_DICT_MAX_ENTRY);
        out[n++] = c;
    }
    if (n == 0) return fail(w, "empty value");
    *len = n;
    return 0;
}

/* One line without its newline. Blank lines and comments add nothing. */
static int parse_line(sift_dict *d, dict_index *ix, const where *w, const uint8_t *p,
                      const uint8_t *lim)
{
    while (p < lim && is_blank(*p))
        p++;
    while (lim > p && is_blank(lim[-1]))
        lim--;
    if (p == lim || *p == '#') return 0;
    for (const uint8_t *q = p; q < lim && *q != '"'; q++)
        if (!is_print(*q) && !is_blank(*q))
            return fail(w, "non-printable byte 0x%02x outside the quotes", *q);
    if (*p != '"') {
        while (p < lim && is_print(*p) && *p != ' ' && *p != '=' && *p != '"' && *p != '@')
            p++;
        if (p < lim && *p == '@') {
            const uint8_t *digits = ++p;
            while (p < lim && *p >= '0' && *p <= '9')
                p++;
            if (p == digits) return fail(w, "expected a level (digits) after '@'");
        }
        while (p < lim && is_blank(*p))
            p++;
        if (p == lim) return fail(w, "missing opening quote");
        if (*p != '=') return fail(w, "missing '=' after the name");
        p++;
        while (p < lim && is_blank(*p))
            p++;
        if (p == lim || *p != '"') return fail(w, "missing opening quote");
    }
    uint8_t value[SIFT_DICT_MAX_ENTRY];
    size_t len = 0;
    if (lim - p < 2 || lim[-1] != '"')
        return fail(w, memchr(p + 1, '"', (size_t)(lim - p - 1))
                           ? "trailing garbage after the closing quote"
                           : "unterminated string");
    if (parse_value(w, p, lim - 1, value, &len)) return -1;
    if (add_indexed(d, ix, value, len)) return fail(w, "out of memory");
    return 0;
}

int sift_dict_parse(sift_dict *d, const char *name, const char *text, size_t len, char *err,
                    size_t errlen)
{
    where w = {name ? name : "<dictionary>", 0, err, errlen};
    dict_index ix = {NULL, 0};
    /* NULL + 0 is undefined in C, and an empty text may come as NULL. */
    const uint8_t *p = (const uint8_t *)text, *lim = len ? p + len : p;
    int rc = 0;
    while (p < lim && !rc) {
        w.line++;
        const uint8_t *nl = memchr(p, '\n', (size_t)(lim - p));
        rc = parse_line(d, &ix, &w, p, nl ? nl : lim);
        p = nl ? nl + 1 : lim;
    }
    d->error_line = rc ? w.line : 0;
    free(ix.slot);
    return rc;
}

/* Reads all of PATH into *BUF (malloc'd). Returns 0, an errno value, or -1 when the file is
 * larger than DICT_MAX_FILE. */
static int read_file(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    size_t cap = 0;
    int rc = 0;
    for (;;) {
        if (*len == cap) {
            if (cap > DICT_MAX_FILE) {
                rc = -1;
                break;
            }
            /* One byte past the cap tells a file of exactly DICT_MAX_FILE from a larger one. */
            size_t ncap = cap ? cap * 2 : 4096;
            ncap = ncap > DICT_MAX_FILE ? DICT_MAX_FILE + 1 : ncap;
            char *b = realloc(*buf, ncap);
            if (!b) {
                rc = ENOMEM;
                break;
            }
            *buf = b;
            cap = ncap;
        }
        ssize_t n = read(fd, *buf + *len, cap - *len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            rc = n < 0 ? errno : 0;
            break;
        }
        *len += (size_t)n;
    }
    close(fd);
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

int sift_dict_load(sift_dict *d, const char *path, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    int rc = read_file(path, &buf, &len);
    if (rc) {
        if (err && errlen) {
            if (rc < 0)
                snprintf(err, errlen, "%s: larger than %u MiB, not a dictionary", path,
                         DICT_MAX_FILE >> 20);
            else
                snprintf(err, errlen, "%s: cannot read: %s", path, strerror(rc));
        }
        return -1;
    }
    rc = sift_dict_parse(d, path, buf, len, err, errlen);
    free(buf);
    return rc;
}
