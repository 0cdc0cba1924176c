/* Numbers and times as people read them. */
#include "engine/base/humanize.h"

#include <stdio.h>
#include <string.h>

const char *sift_human_size(uint64_t v, char buf[32])
{
    if (v < (1u << 14))
        snprintf(buf, 32, "%llub", (unsigned long long)v);
    else if (v < (1u << 24))
        snprintf(buf, 32, "%lluKb", (unsigned long long)(v >> 10));
    else
        snprintf(buf, 32, "%lluMb", (unsigned long long)(v >> 20));
    return buf;
}

const char *sift_human_count(uint64_t v, char buf[32])
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    char *p = buf;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0) *p++ = ',';
        *p++ = digits[i];
    }
    *p = '\0';
    return buf;
}

const char *sift_human_clock(uint64_t s, char buf[32])
{
    snprintf(buf, 32, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
             (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
    return buf;
}

const char *sift_human_span(uint64_t s, char buf[32])
{
    unsigned long long v = s;
    if (v < 60)
        snprintf(buf, 32, "%llus", v);
    else if (v < 3600)
        snprintf(buf, 32, "%llum%02llus", v / 60, v % 60);
    else if (v < 86400)
        snprintf(buf, 32, "%lluh%02llum", v / 3600, v / 60 % 60);
    else
        snprintf(buf, 32, "%llud%02lluh", v / 86400, v / 3600 % 24);
    return buf;
}

const char *sift_human_name(const char *s, char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    /* Room is kept for an escape, a "..." and the NUL. */
    for (; *s && n + 8 <= cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            buf[n++] = (char)c;
            continue;
        }
        buf[n++] = '\\';
        buf[n++] = 'x';
        buf[n++] = hex[c >> 4];
        buf[n++] = hex[c & 15];
    }
    if (*s && n + 4 <= cap) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    if (cap) buf[n < cap ? n : cap - 1] = '\0';
    return buf;
}
