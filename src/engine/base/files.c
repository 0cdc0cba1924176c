/* Files written whole or not at all. Crash handlers write artifacts with this, on a possibly
 * broken heap: only async-signal-safe system calls, no allocation, no stdio. */
#define _GNU_SOURCE /* O_PATH */
#include "engine/base/files.h"

#include <errno.h>
#include <fcntl.h>
#include <sha1.h>
#include <stdatomic.h>
#include <stdio.h> /* renameat(2) only: no streams here */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char hexdigit[] = "0123456789abcdef";

/* The working folder at start, or AT_FDCWD before sift_file_pin_cwd: a global because the
 * writers here run in signal handlers. */
static atomic_int start_dir = AT_FDCWD;

int sift_file_pin_cwd(void)
{
    /* O_PATH: a folder that may be entered but not listed still pins. */
    int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int old = atomic_exchange(&start_dir, fd);
    if (old != AT_FDCWD) close(old);
    return 0;
}

int sift_file_cwd(void)
{
    return atomic_load(&start_dir);
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

bool sift_file_append(char *dst, size_t *len, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n >= cap) return false;
    memcpy(dst + *len, s, n + 1);
    *len += n;
    return true;
}

bool sift_file_append_u64(char *dst, size_t *len, size_t cap, uint64_t v, unsigned width)
{
    char digits[21];
    int n = 20;
    digits[n] = '\0';
    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v || 20 - n < (int)width);
    return sift_file_append(dst, len, cap, digits + n);
}

/* Every temporary name in a process differs, even with two threads writing the same path. */
static atomic_uint temp_serial;

static bool temp_name(const char *path, char *tmp, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    if (dirlen >= cap) return false;
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '\0';
    size_t len = dirlen;
    return sift_file_append(tmp, &len, cap, ".") &&
           sift_file_append(tmp, &len, cap, path + dirlen) &&
           sift_file_append(tmp, &len, cap, ".tmp.") &&
           sift_file_append_u64(tmp, &len, cap, (uint64_t)getpid(), 0) &&
           sift_file_append(tmp, &len, cap, ".") &&
           sift_file_append_u64(tmp, &len, cap, atomic_fetch_add(&temp_serial, 1), 0);
}

int sift_file_temp(const char *path, char *tmp, size_t cap)
{
    /* A stale temporary of an earlier process with the same pid only costs another name. */
    for (int tries = 0; tries < 8; tries++) {
        if (!temp_name(path, tmp, cap)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = openat(sift_file_cwd(), tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

int sift_file_temp_dir(const char *path, char *tmp, size_t cap)
{
    for (int tries = 0; tries < 8; tries++) {
        if (!temp_name(path, tmp, cap)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdirat(sift_file_cwd(), tmp, 0777) == 0) return 0;
        if (errno != EEXIST) return -1;
    }
    return -1;
}

int sift_file_write_all(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = ENOSPC; /* no progress and no error: the disk took nothing */
            return -1;
        }
        data += w;
        size -= (size_t)w;
    }
    return 0;
}

int sift_write_whole(const char *path, const uint8_t *data, size_t size, bool sync)
{
    char tmp[4096];
    int fd = sift_file_temp(path, tmp, sizeof tmp);
    if (fd < 0) return -1;
    int err = 0;
    if (sift_file_write_all(fd, data, size) != 0 || (sync && fsync(fd) != 0)) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && renameat(sift_file_cwd(), tmp, sift_file_cwd(), path) != 0) err = errno;
    if (err) {
        unlinkat(sift_file_cwd(), tmp, 0);
        errno = err;
        return -1;
    }
    return 0;
}

int sift_write_atomic(const char *path, const uint8_t *data, size_t size)
{
    return sift_write_whole(path, data, size, true);
}
