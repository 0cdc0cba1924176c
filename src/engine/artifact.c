/* Artifacts and atomic files. Everything here may run inside a signal handler or a sanitizer's
 * death callback, on a broken heap: only async-signal-safe system calls, no allocation, no
 * stdio, and numbers, hex and base64 formatted by hand. */
#define _GNU_SOURCE /* O_PATH */
#include "engine/artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sha1.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h> /* renameat(2) only: no streams here */
#include <string.h>
#include <unistd.h>

/* libFuzzer prints the bytes of units up to this size (kMaxUnitSizeToPrint). */
#define UNIT_PRINT_MAX 256
/* The header's promise for the Base64 line. */
#define BASE64_MAX 1024

static atomic_int report_fd = 2;

/* The working folder at start, or AT_FDCWD before sift_artifact_pin_cwd: a global because the
 * writers here run in signal handlers. */
static atomic_int start_dir = AT_FDCWD;

int sift_artifact_pin_cwd(void)
{
    /* O_PATH: a folder that may be entered but not listed still pins. */
    int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int old = atomic_exchange(&start_dir, fd);
    if (old != AT_FDCWD) close(old);
    return 0;
}

int sift_artifact_cwd(void)
{
    return atomic_load(&start_dir);
}

void sift_report_set_fd(int fd)
{
    atomic_store(&report_fd, fd);
}

int sift_report_fd(void)
{
    return atomic_load(&report_fd);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

void sift_out_flush(sift_out *o)
{
    int saved = errno;
    write_all(sift_report_fd(), o->buf, o->len);
    o->len = 0;
    errno = saved;
}

static void out_char(sift_out *o, char c)
{
    if (o->len == sizeof(o->buf)) sift_out_flush(o);
    o->buf[o->len++] = c;
}

void sift_out_str(sift_out *o, const char *s)
{
    while (*s)
        out_char(o, *s++);
}

void sift_out_u64(sift_out *o, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        out_char(o, digits[--n]);
}

static const char hexdigit[] = "0123456789abcdef";

void sift_print_unit(const uint8_t *data, size_t size)
{
    if (size > UNIT_PRINT_MAX) return;
    sift_out o;
    o.len = 0;
    for (size_t i = 0; i < size; i++) {
        sift_out_str(&o, "0x");
        if (data[i] >= 16) out_char(&o, hexdigit[data[i] >> 4]);
        out_char(&o, hexdigit[data[i] & 15]);
        out_char(&o, ',');
    }
    out_char(&o, '\n');
    for (size_t i = 0; i < size; i++) {
        uint8_t c = data[i];
        if (c == '\\' || c == '"') {
            out_char(&o, '\\');
            out_char(&o, (char)c);
        } else if (c >= 32 && c < 127) {
            out_char(&o, (char)c);
        } else {
            out_char(&o, '\\');
            out_char(&o, (char)('0' + (c >> 6)));
            out_char(&o, (char)('0' + ((c >> 3) & 7)));
            out_char(&o, (char)('0' + (c & 7)));
        }
    }
    out_char(&o, '\n');
    sift_out_flush(&o);
}

static void out_base64(sift_out *o, const uint8_t *data, size_t size)
{
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < size; i += 3) {
        size_t left = size - i;
        uint32_t v = (uint32_t)data[i] << 16;
        if (left > 1) v |= (uint32_t)data[i + 1] << 8;
        if (left > 2) v |= data[i + 2];
        out_char(o, table[v >> 18]);
        out_char(o, table[(v >> 12) & 63]);
        out_char(o, left > 1 ? table[(v >> 6) & 63] : '=');
        out_char(o, left > 2 ? table[v & 63] : '=');
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

static void out_errno(sift_out *o, int err)
{
    for (size_t i = 0; i < sizeof(errno_texts) / sizeof(errno_texts[0]); i++)
        if (errno_texts[i].err == err) {
            sift_out_str(o, errno_texts[i].text);
            return;
        }
    sift_out_str(o, "errno ");
    sift_out_u64(o, (uint64_t)err);
}

void sift_sha1_hex(const uint8_t *data, size_t size, char out[41])
{
    SHA1_CTX ctx;
    uint8_t digest[SHA1_DIGEST_LENGTH];
    SHA1Init(&ctx);
    SHA1Update(&ctx, data, size);
    SHA1Final(digest, &ctx);
    for (size_t i = 0; i < SHA1_DIGEST_LENGTH; i++) {
        out[2 * i] = hexdigit[digest[i] >> 4];
        out[2 * i + 1] = hexdigit[digest[i] & 15];
    }
    out[40] = '\0';
}

/* Appends S to DST (holding *LEN bytes) within CAP, keeping room for the NUL. */
static bool append(char *dst, size_t *len, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n >= cap) return false;
    memcpy(dst + *len, s, n + 1);
    *len += n;
    return true;
}

static bool append_u64(char *dst, size_t *len, size_t cap, uint64_t v)
{
    char digits[21];
    int n = 20;
    digits[n] = '\0';
    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return append(dst, len, cap, digits + n);
}

/* Every temporary name in a process differs, even with two threads writing the same path. */
static atomic_uint temp_serial;

/* A hidden name next to PATH, so that a folder reader sees the file only once it is whole. */
static bool temp_name(const char *path, char *tmp, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    if (dirlen >= cap) return false;
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '\0';
    size_t len = dirlen;
    return append(tmp, &len, cap, ".") && append(tmp, &len, cap, path + dirlen) &&
           append(tmp, &len, cap, ".tmp.") && append_u64(tmp, &len, cap, (uint64_t)getpid()) &&
           append(tmp, &len, cap, ".") &&
           append_u64(tmp, &len, cap, atomic_fetch_add(&temp_serial, 1));
}

static int write_fd(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        data += w;
        size -= (size_t)w;
    }
    return 0;
}

int sift_write_atomic(const char *path, const uint8_t *data, size_t size)
{
    char tmp[PATH_MAX];
    int fd = -1;
    /* A stale temporary of an earlier process with the same pid only costs another name. */
    for (int tries = 0; fd < 0 && tries < 8; tries++) {
        if (!temp_name(path, tmp, sizeof(tmp))) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = openat(sift_artifact_cwd(), tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) return -1;
    }
    if (fd < 0) return -1;
    if (write_fd(fd, data, size) < 0 || fsync(fd) < 0) {
        int err = errno;
        close(fd);
        unlinkat(sift_artifact_cwd(), tmp, 0);
        errno = err;
        return -1;
    }
    if (close(fd) < 0 || renameat(sift_artifact_cwd(), tmp, sift_artifact_cwd(), path) < 0) {
        int err = errno;
        unlinkat(sift_artifact_cwd(), tmp, 0);
        errno = err;
        return -1;
    }
    return 0;
}

int sift_artifact_write(const char *prefix, const char *exact_path, const char *kind,
                        const uint8_t *data, size_t size, char *path_out, size_t path_cap)
{
    if (!prefix) prefix = "./";
    char path[PATH_MAX];
    size_t len = 0;
    bool fits;
    if (exact_path) {
        fits = append(path, &len, sizeof(path), exact_path);
    } else {
        char sha[41];
        sift_sha1_hex(data, size, sha);
        fits = append(path, &len, sizeof(path), prefix) && append(path, &len, sizeof(path), kind) &&
               append(path, &len, sizeof(path), "-") && append(path, &len, sizeof(path), sha);
    }
    if (path_out && path_cap) {
        size_t n = fits && len < path_cap ? len : 0;
        memcpy(path_out, path, n);
        path_out[n] = '\0';
    }

    sift_out o;
    o.len = 0;
    int rc = 0;
    if (!fits) {
        sift_out_str(&o, "ERROR: cannot write artifact ");
        sift_out_str(&o, exact_path ? exact_path : prefix);
        sift_out_str(&o, exact_path ? "" : kind);
        sift_out_str(&o, ": path too long\n");
        errno = ENAMETOOLONG;
        rc = -1;
    } else if (sift_write_atomic(path, data, size) < 0) {
        int err = errno;
        sift_out_str(&o, "ERROR: cannot write artifact ");
        sift_out_str(&o, path);
        sift_out_str(&o, ": ");
        out_errno(&o, err);
        sift_out_str(&o, "\n");
        errno = err;
        rc = -1;
    } else {
        sift_out_str(&o, "artifact_prefix='");
        sift_out_str(&o, prefix);
        sift_out_str(&o, "'; Test unit written to ");
        sift_out_str(&o, path);
        sift_out_str(&o, "\n");
    }
    /* Printed even when the file could not be written: the input is then still recoverable. */
    if (size <= BASE64_MAX) {
        sift_out_str(&o, "Base64: ");
        out_base64(&o, data, size);
        sift_out_str(&o, "\n");
    }
    sift_out_flush(&o);
    return rc;
}
