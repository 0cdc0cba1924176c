/* The last inputs a process ran, as copies in a ring. The copy is made before each execution,
 * outside any handler; the write runs in a crash handler, on a possibly broken heap: only the
 * async-signal-safe calls of files.c and report.c there. */
#include "engine/contain/history.h"
#include "engine/base/files.h"
#include "engine/contain/report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h> /* renameat(2) only: no streams here */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Names wide enough for any -crash_history, so that a shell's glob lists them in order. */
#define NAME_DIGITS 6

int sift_history_init(sift_history *h, size_t n)
{
    memset(h, 0, sizeof(*h));
    if (!n) return 0;
    if (!(h->slots = calloc(n, sizeof(*h->slots)))) return -1;
    h->n = n;
    return 0;
}

void sift_history_free(sift_history *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->slots[i].data);
    free(h->slots);
    memset(h, 0, sizeof(*h));
}

void sift_history_add(sift_history *h, const uint8_t *data, size_t size)
{
    if (!h->n) return;
    sift_history_slot *s = &h->slots[h->added++ % h->n];
    if (size > s->cap) {
        uint8_t *grown = realloc(s->data, size);
        if (!grown) {
            s->size = 0;
            return;
        }
        s->data = grown;
        s->cap = size;
    }
    if (size) memcpy(s->data, data, size);
    s->size = size;
}

static size_t kept(const sift_history *h)
{
    return h->added < h->n ? (size_t)h->added : h->n;
}

/* DIR "/" NUMBER, zero-padded, into PATH (PATH_MAX bytes). */
static bool entry_name(char *path, const char *dir, size_t number)
{
    size_t len = 0;
    path[0] = '\0';
    return sift_file_append(path, &len, PATH_MAX, dir) &&
           sift_file_append(path, &len, PATH_MAX, "/") &&
           sift_file_append_u64(path, &len, PATH_MAX, number, NAME_DIGITS);
}

/* Removes the first COUNT entries of the temporary folder DIR, and DIR. */
static void remove_partial(const char *dir, size_t count)
{
    char path[PATH_MAX];
    for (size_t i = 1; i <= count; i++)
        if (entry_name(path, dir, i)) unlinkat(sift_file_cwd(), path, 0);
    unlinkat(sift_file_cwd(), dir, AT_REMOVEDIR);
}

/* The temporary folder TMP filled with H's inputs, oldest first. Returns 0 or -1 with errno. */
static int fill(const sift_history *h, const char *tmp)
{
    size_t n = kept(h);
    char path[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        const sift_history_slot *s = &h->slots[(h->added - n + i) % h->n];
        if (!entry_name(path, tmp, i + 1))
            errno = ENAMETOOLONG;
        else if (sift_write_whole(path, s->data, s->size, true) == 0)
            continue;
        int err = errno;
        remove_partial(tmp, i);
        errno = err;
        return -1;
    }
    return 0;
}

int sift_history_write(const sift_history *h, const char *path, const char *argv0)
{
    size_t n = kept(h);
    sift_report o;
    o.len = 0;
    char tmp[PATH_MAX];
    int rc = 0;
    if (sift_file_temp_dir(path, tmp, sizeof tmp) != 0 || fill(h, tmp) != 0) {
        rc = -1;
    } else if (renameat(sift_file_cwd(), tmp, sift_file_cwd(), path) != 0) {
        /* The same input crashed before, in this campaign or another: its history stays. */
        int err = errno;
        remove_partial(tmp, n);
        errno = err;
        rc = -1;
    }
    if (rc != 0) {
        int err = errno;
        sift_report_str(&o, "ERROR: cannot write the inputs run before it to ");
        sift_report_str(&o, path);
        sift_report_str(&o, ": ");
        sift_report_errno(&o, err);
        sift_report_str(&o, "\n");
        sift_report_flush(&o);
        errno = err;
        return -1;
    }
    sift_report_str(&o, "History: the last ");
    sift_report_u64(&o, n);
    sift_report_str(&o, " inputs run, this one last, written to ");
    sift_report_str(&o, path);
    sift_report_str(&o, "/; to run them in order in one process: ");
    sift_report_str(&o, argv0 ? argv0 : "./fuzzer");
    sift_report_str(&o, " ");
    sift_report_str(&o, path);
    sift_report_str(&o, "/*\n");
    sift_report_flush(&o);
    return 0;
}
