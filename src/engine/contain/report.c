/* Reports from crash handlers, sanitizer callbacks and malloc hooks, on a possibly broken heap:
 * text gathered in a fixed buffer and written with write(2), so no allocation and no stdio,
 * and numbers, hex and base64 formatted by hand. */
#include "engine/contain/report.h"
#include "engine/base/files.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

/* libFuzzer prints the bytes of units up to this size (kMaxUnitSizeToPrint). */
#define UNIT_PRINT_MAX 256

static atomic_int report_fd = 2;

void sift_report_set_fd(int fd)
{
    atomic_store(&report_fd, fd);
}

int sift_report_fd(void)
{
    return atomic_load(&report_fd);
}

void sift_report_flush(sift_report *o)
{
    int saved = errno;
    (void)sift_file_write_all(sift_report_fd(), (const uint8_t *)o->buf, o->len);
    o->len = 0;
    errno = saved;
}

static void put_char(sift_report *o, char c)
{
    if (o->len == sizeof(o->buf)) sift_report_flush(o);
    o->buf[o->len++] = c;
}

void sift_report_str(sift_report *o, const char *s)
{
    while (*s)
        put_char(o, *s++);
}

void sift_report_u64(sift_report *o, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put_char(o, digits[--n]);
}

static const char hexdigit[] = "0123456789abcdef";

void sift_report_unit(const uint8_t *data, size_t size)
{
    if (size > UNIT_PRINT_MAX) return;
    sift_report o;
    o.len = 0;
    for (size_t i = 0; i < size; i++) {
        sift_report_str(&o, "0x");
        if (data[i] >= 16) put_char(&o, hexdigit[data[i] >> 4]);
        put_char(&o, hexdigit[data[i] & 15]);
        put_char(&o, ',');
    }
    put_char(&o, '\n');
    for (size_t i = 0; i < size; i++) {
        uint8_t c = data[i];
        if (c == '\\' || c == '"') {
            put_char(&o, '\\');
            put_char(&o, (char)c);
        } else if (c >= 32 && c < 127) {
            put_char(&o, (char)c);
        } else {
            put_char(&o, '\\');
            put_char(&o, (char)('0' + (c >> 6)));
            put_char(&o, (char)('0' + ((c >> 3) & 7)));
            put_char(&o, (char)('0' + (c & 7)));
        }
    }
    put_char(&o, '\n');
    sift_report_flush(&o);
}

void sift_report_base64(sift_report *o, const uint8_t *data, size_t size)
{
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < size; i += 3) {
        size_t left = size - i;
        uint32_t v = (uint32_t)data[i] << 16;
        if (left > 1) v |= (uint32_t)data[i + 1] << 8;
        if (left > 2) v |= data[i + 2];
        put_char(o, table[v >> 18]);
        put_char(o, table[(v >> 12) & 63]);
        put_char(o, left > 1 ? table[(v >> 6) & 63] : '=');
        put_char(o, left > 2 ? table[v & 63] : '=');
    }
}

/* strerror is not async-signal-safe; these are the failures a write to disk meets. */
static const struct {
    int err;
    const char *text;
} errno_texts[] = {
    {ENOENT, "No such file or directory"},
    {EACCES, "Permission denied"},
    {EPERM, "Operation not permitted"},
    {EROFS, "Read-only file system"},
    {ENOSPC, "No space left on device"},
    {EDQUOT, "Disk quota exceeded"},
    {ENOTDIR, "Not a directory"},
    {EISDIR, "Is a directory"},
    {ENAMETOOLONG, "File name too long"},
    {ELOOP, "Too many levels of symbolic links"},
    {EMFILE, "Too many open files"},
    {ENFILE, "Too many open files in system"},
    {EFBIG, "File too large"},
    {EIO, "Input/output error"},
    {EEXIST, "File exists"},
    {EINVAL, "Invalid argument"},
};

void sift_report_errno(sift_report *o, int err)
{
    for (size_t i = 0; i < sizeof(errno_texts) / sizeof(errno_texts[0]); i++)
        if (errno_texts[i].err == err) {
            sift_report_str(o, errno_texts[i].text);
            return;
        }
    sift_report_str(o, "errno ");
    sift_report_u64(o, (uint64_t)err);
}
