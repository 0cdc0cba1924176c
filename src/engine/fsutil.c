/* Reading corpora from disk: folder listings and bounded file reads that report, never crash. */
#include "engine/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deep enough for any real corpus; stops a symlink loop that keeps producing new paths. */
#define MAX_DEPTH 32

static int push(sift_pathlist *list, const char *path)
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

/* Folders already entered on this path, by device and inode, to break symlink loops. */
typedef struct {
    dev_t dev[MAX_DEPTH];
    ino_t ino[MAX_DEPTH];
    int depth;
} walk_stack;

static bool on_stack(const walk_stack *s, const struct stat *st)
{
    for (int i = 0; i < s->depth; i++)
        if (s->dev[i] == st->st_dev && s->ino[i] == st->st_ino) return true;
    return false;
}

/* Lists the open folder D (named DIR) and closes it; -1 only when out of memory. */
static int walk(sift_pathlist *list, DIR *d, const char *dir, walk_stack *s)
{
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        /* Hidden entries are no inputs: the temporaries of atomic writes (".NAME.tmp.PID.N"),
         * sift's and AFL++'s state folders. */
        if (e->d_name[0] == '.') continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        struct stat st;
        if (stat(path, &st) != 0) continue; /* dangling link or vanished file */
        if (S_ISREG(st.st_mode)) {
            rc = push(list, path);
        } else if (S_ISDIR(st.st_mode) && s->depth < MAX_DEPTH && !on_stack(s, &st)) {
            s->dev[s->depth] = st.st_dev;
            s->ino[s->depth++] = st.st_ino;
            DIR *sub = opendir(path); /* an unreadable subfolder is skipped */
            if (sub) rc = walk(list, sub, path, s);
            s->depth--;
        }
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
    walk_stack s = {.dev = {st.st_dev}, .ino = {st.st_ino}, .depth = 1};
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (walk(list, d, dir, &s) != 0) {
        snprintf(err, errlen, "%s: out of memory while listing", dir);
        return -1;
    }
    return 0;
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

int sift_fs_is_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return S_ISDIR(st.st_mode) ? 1 : 0;
}
