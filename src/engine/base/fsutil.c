/* Reading corpora from disk: folder listings and bounded file reads that report, never crash. */
#include "engine/base/fsutil.h"
#include "engine/base/clock.h"
#include "engine/base/humanize.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deep enough for any real corpus; also bounds the recursion. */
#define MAX_DEPTH 32

int sift_pathlist_add(sift_pathlist *list, const char *path)
{
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 64;
        char **grown = realloc(list->paths, cap * sizeof(*grown));
        if (!grown) return -1;
        list->paths = grown;
        list->cap = cap;
    }
    char *copy = strdup(path);
    if (!copy) return -1;
    list->paths[list->count++] = copy;
    return 0;
}

/* An entry left out of the listing: counted, and the first one described. */
static void skip(sift_pathlist *list, const char *path, const char *why)
{
    char shown[sizeof list->first_skip];
    if (list->skipped++ == 0)
        snprintf(list->first_skip, sizeof list->first_skip, "%s: %s",
                 sift_human_name(path, shown, sizeof shown), why);
}

/* Folders entered in this listing, by device and inode: a folder reached again through a link
 * (a loop, or two links to one folder) is listed once, so that no arrangement of links makes
 * the walk endless or exponential. Open addressing; a zero inode marks an empty slot. */
typedef struct {
    dev_t *dev;
    ino_t *ino;
    size_t n, cap;
} seen_set;

static size_t seen_slot(const seen_set *s, dev_t dev, ino_t ino)
{
    size_t h = ((size_t)dev * 0x9e3779b97f4a7c15ull ^ (size_t)ino) * 0xff51afd7ed558ccdull;
    size_t i = (h ^ h >> 29) & (s->cap - 1);
    while (s->ino[i] && (s->dev[i] != dev || s->ino[i] != ino))
        i = (i + 1) & (s->cap - 1);
    return i;
}

/* 1 when added, 0 when there already, -1 when out of memory. */
static int seen_add(seen_set *s, const struct stat *st)
{
    if (st->st_ino == 0) return 1; /* no inode number to tell folders apart: trust the depth */
    if (2 * (s->n + 1) > s->cap) {
        seen_set grown = {.cap = s->cap ? s->cap * 2 : 64};
        grown.dev = calloc(grown.cap, sizeof(*grown.dev));
        grown.ino = calloc(grown.cap, sizeof(*grown.ino));
        if (!grown.dev || !grown.ino) {
            free(grown.dev);
            free(grown.ino);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->ino[i]) {
                size_t j = seen_slot(&grown, s->dev[i], s->ino[i]);
                grown.dev[j] = s->dev[i];
                grown.ino[j] = s->ino[i];
            }
        grown.n = s->n;
        free(s->dev);
        free(s->ino);
        *s = grown;
    }
    size_t i = seen_slot(s, st->st_dev, st->st_ino);
    if (s->ino[i]) return 0;
    s->dev[i] = st->st_dev;
    s->ino[i] = st->st_ino;
    s->n++;
    return 1;
}

/* Lists the open folder D (named DIR, DEPTH folders below the top) and closes it; -1 only when
 * out of memory. */
static int walk(sift_pathlist *list, DIR *d, const char *dir, seen_set *seen, int depth)
{
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        /* Hidden entries are no inputs: the temporaries of atomic writes (".NAME.tmp.PID.N"),
         * sift's and AFL++'s state folders. */
        if (e->d_name[0] == '.') continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
            skip(list, e->d_name, "path too long");
            continue;
        }
        /* stat, not lstat: links are followed. A dangling link fails with ENOENT, a loop of
         * links with ELOOP. Nothing here opens the entry, so a FIFO cannot block the walk. */
        struct stat st;
        if (stat(path, &st) != 0) {
            skip(list, path, strerror(errno));
        } else if (S_ISREG(st.st_mode)) {
            rc = sift_pathlist_add(list, path);
        } else if (!S_ISDIR(st.st_mode)) {
            skip(list, path, "not a regular file");
        } else if (depth + 1 >= MAX_DEPTH) {
            skip(list, path, "nested too deep");
        } else if ((rc = seen_add(seen, &st)) == 1) {
            DIR *sub = opendir(path);
            if (sub)
                rc = walk(list, sub, path, seen, depth + 1);
            else
                skip(list, path, strerror(errno));
        } else if (rc == 0) {
            skip(list, path, "a folder listed already (a link back to it)");
        }
        if (rc > 0) rc = 0;
    }
    closedir(d);
    return rc;
}

int sift_fs_list(sift_pathlist *list, const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a folder", dir);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    seen_set seen = {0};
    int rc;
    if (seen_add(&seen, &st) < 0) {
        closedir(d);
        rc = -1;
    } else {
        rc = walk(list, d, dir, &seen, 0);
    }
    free(seen.dev);
    free(seen.ino);
    if (rc != 0) {
        snprintf(err, errlen, "%s: out of memory while listing", dir);
        return -1;
    }
    return 0;
}

int sift_fs_list_own(sift_pathlist *list, const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir,
                 errno == ELOOP || errno == ENOTDIR ? "not a folder (or a symbolic link)"
                                                    : strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            skip(list, e->d_name, "path too long");
        else if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            skip(list, path, strerror(errno));
        else if (S_ISLNK(st.st_mode))
            skip(list, path, "a symbolic link");
        else if (!S_ISREG(st.st_mode))
            skip(list, path, "not a regular file");
        else
            rc = sift_pathlist_add(list, path);
    }
    closedir(d);
    if (rc != 0) snprintf(err, errlen, "%s: out of memory while listing", dir);
    return rc;
}

void sift_pathlist_free(sift_pathlist *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->paths[i]);
    free(list->paths);
    *list = (sift_pathlist){0};
}

int sift_fs_read(const char *path, size_t max, uint8_t **data, size_t *size, bool *truncated,
                 char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *problem = fstat(fd, &st) != 0    ? strerror(errno)
                          : S_ISDIR(st.st_mode)  ? "is a folder, expected a file"
                          : !S_ISREG(st.st_mode) ? "not a regular file"
                                                 : NULL;
    if (problem) {
        snprintf(err, errlen, "%s: %s", path, problem);
        close(fd);
        return -1;
    }
    size_t want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
    uint8_t *buf = malloc(want ? want : 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory reading %zu bytes", path, want);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (n == 0) break; /* shrank while reading: take what is there */
        got += (size_t)n;
    }
    close(fd);
    *data = buf;
    *size = got;
    if (truncated) *truncated = (size_t)st.st_size > max;
    return 0;
}

int sift_fs_check_writable(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    int e = 0;
    if (stat(dir, &st) != 0)
        e = errno; /* NOLINT(bugprone-branch-clone): each test needs the one before it */
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        e = errno;
    if (!e) return 0;
    snprintf(err, errlen, "%s: %s", dir, e == ENOTDIR ? "not a folder" : strerror(e));
    errno = e;
    return -1;
}

char *sift_fs_folder_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    if ((n ? n : 1) >= cap) return NULL;
    if (n)
        memcpy(out, path, n);
    else
        out[n++] = '.';
    out[n] = '\0';
    return out;
}

/* The pid of the process holding the lock on FD, 0 when the kernel does not say (another
 * machine's, over NFS). The file's own text is not asked: anyone may write it. */
static long lock_holder(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    return fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK && fl.l_pid > 0 ? fl.l_pid : 0;
}

int sift_fs_lock(const char *dir, char *err, size_t errlen)
{
    char path[4096], pid[24];
    if ((size_t)snprintf(path, sizeof path, "%s/.lock", dir) >= sizeof path) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* A hard link would have the pid written into the file it shares with another folder. */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        snprintf(err, errlen, "%s: not a regular file of its own (remove it)", path);
        close(fd);
        return -1;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        int e = errno;
        long holder = e == EACCES || e == EAGAIN ? lock_holder(fd) : -1;
        if (holder > 0)
            snprintf(err, errlen, "%s: in use by another campaign (pid %ld)", dir, holder);
        else if (holder == 0)
            snprintf(err, errlen, "%s: in use by another campaign (pid unknown)", dir);
        else
            snprintf(err, errlen, "%s: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int sift_fs_is_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return S_ISDIR(st.st_mode) ? 1 : 0;
}

int sift_fs_read_one(const char *mode, char *const *inputs, size_t n, uint8_t **data, size_t *size)
{
    if (n != 1 || sift_fs_is_dir(inputs[0]) != 0) {
        fprintf(stderr, "sift: %s takes exactly one input file (got %zu inputs%s)\n", mode, n,
                n == 1 ? ", a folder" : "");
        return -1;
    }
    char err[4352];
    if (sift_fs_read(inputs[0], (size_t)-1, data, size, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "sift: %s\n", err);
        return -1;
    }
    return 0;
}

int sift_fs_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len >= sizeof buf) {
        snprintf(err, errlen, "cannot create the folder %s: path too long", path);
        return -1;
    }
    memcpy(buf, path, len + 1);
    /* Each prefix ending before a slash, then the whole path. */
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create the folder %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = c;
    }
    if (sift_fs_is_dir(path) != 1) {
        snprintf(err, errlen, "cannot create the folder %s: %s", path,
                 errno ? strerror(errno) : "not a folder");
        return -1;
    }
    return 0;
}

int sift_fs_wait_readable(int fd, long long timeout_ms)
{
    long long deadline = timeout_ms >= 0 ? (long long)(sift_now_ns() / SIFT_MS_NS) + timeout_ms : 0;
    for (;;) {
        long long left = timeout_ms >= 0 ? deadline - (long long)(sift_now_ns() / SIFT_MS_NS) : -1;
        if (timeout_ms >= 0 && left < 0) left = 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
        if (ready > 0 || (ready < 0 && errno != EINTR)) return 1;
        if (ready == 0 && left < INT32_MAX) return 0;
    }
}
