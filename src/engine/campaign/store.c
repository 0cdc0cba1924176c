/* The supervisor's corpus. An entry counts as saved once every file it goes to has been
 * renamed into place: each is written as a hidden temporary (the name sift_write_atomic uses,
 * which resume removes), synced, then renamed. */
#define _GNU_SOURCE
#include "engine/campaign/store.h"
#include "engine/base/files.h"
#include "engine/base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sift_staged {
    int fd; /* -1 once closed: a flush needs it only to sync */
    dev_t dev;
    char *tmp, *path;
};

int sift_store_init(sift_store *c, const char *corpus_dir, sift_outdir *out)
{
    memset(c, 0, sizeof(*c));
    c->corpus_dir = corpus_dir;
    c->out = out;
    c->corpus = sift_corpus_new();
    c->in_queue = sift_corpus_new();
    c->in_dir = sift_corpus_new();
    c->faults = sift_corpus_new();
    return c->corpus && c->in_queue && c->in_dir && c->faults ? 0 : -1;
}

void sift_store_free(sift_store *c)
{
    sift_store_flush(c);
    free(c->staged);
    for (size_t i = 0; c->data && i < sift_corpus_count(c->corpus); i++)
        free(c->data[i]);
    free(c->data);
    free(c->queue_id);
    free(c->origin);
    sift_corpus_free(c->corpus);
    sift_corpus_free(c->in_queue);
    sift_corpus_free(c->in_dir);
    sift_corpus_free(c->faults);
    memset(c, 0, sizeof(*c));
}

static int reserve(sift_store *c)
{
    size_t n = sift_corpus_count(c->corpus);
    if (n < c->cap) return 0;
    size_t cap = c->cap ? c->cap * 2 : 256;
    uint8_t **data = realloc(c->data, cap * sizeof(*data));
    if (data) c->data = data;
    long *ids = realloc(c->queue_id, cap * sizeof(*ids));
    if (ids) c->queue_id = ids;
    size_t *origin = realloc(c->origin, cap * sizeof(*origin));
    if (origin) c->origin = origin;
    if (!data || !ids || !origin) return -1;
    c->cap = cap;
    return 0;
}

/* Adds E without writing anything; returns its position, or -1 (duplicate or no memory). */
static long add(sift_store *c, const sift_dlog_entry *e, size_t origin)
{
    if (sift_corpus_find(c->corpus, e->name) >= 0 || reserve(c) != 0) return -1;
    uint8_t *copy = malloc(e->size ? e->size : 1);
    if (!copy) return -1;
    if (e->size) memcpy(copy, e->data, e->size);
    if (!sift_corpus_add(c->corpus, NULL, e->size, e->features, e->nfeatures, e->exec_ns, e->name,
                         e->execs)) {
        free(copy);
        return -1;
    }
    long i = (long)sift_corpus_count(c->corpus) - 1;
    c->data[i] = copy;
    c->queue_id[i] = -1;
    c->origin[i] = origin;
    c->pending = true;
    return i;
}

/* A burst of finds is made durable with one syncfs per file system: with many files it costs
 * a fraction of an fsync each. */
#define SYNCFS_FROM 4

/* Whether a staged file other than the last keeps a descriptor on file system DEV. */
static bool dev_held(const sift_store *c, dev_t dev)
{
    for (size_t i = 0; i + 1 < c->nstaged; i++)
        if (c->staged[i].fd >= 0 && c->staged[i].dev == dev) return true;
    return false;
}

/* Writes DATA into a hidden temporary next to PATH; sift_store_flush puts it in place. Only
 * the files a flush syncs one by one keep their descriptor, and one a file system for its
 * syncfs: a burst holds a handful, however many finds it stages. */
static int stage(sift_store *c, const char *path, const uint8_t *data, size_t size)
{
    if (c->nstaged == c->stagecap) {
        size_t cap = c->stagecap ? c->stagecap * 2 : 64;
        struct sift_staged *grown = realloc(c->staged, cap * sizeof(*grown));
        if (!grown) return -1;
        c->staged = grown;
        c->stagecap = cap;
    }
    struct sift_staged *st = &c->staged[c->nstaged];
    char tmp[4096];
    st->path = strdup(path);
    st->fd = st->path ? sift_file_temp(path, tmp, sizeof tmp) : -1;
    st->tmp = st->fd >= 0 ? strdup(tmp) : NULL;
    struct stat sb;
    bool whole = st->tmp && sift_file_write_all(st->fd, data, size) == 0 && fstat(st->fd, &sb) == 0;
    if (whole) {
        st->dev = sb.st_dev;
        c->nstaged++;
        if (c->nstaged <= SYNCFS_FROM || !dev_held(c, st->dev)) return 0;
        int fd = st->fd;
        st->fd = -1;
        if (close(fd) == 0) return 0;
        c->nstaged--;
    }
    /* A full disk cuts the file short: it must never be renamed into place, so it is not
     * staged, and its temporary goes at once. Entries staged before it keep their chance. */
    int err = errno;
    fprintf(stderr, "sift: cannot save %s: %s\n", path, strerror(err));
    if (st->fd >= 0) close(st->fd);
    if (st->tmp) unlinkat(sift_file_cwd(), st->tmp, 0);
    free(st->tmp);
    free(st->path);
    c->failed = true;
    errno = err;
    return -1;
}

/* Sets *BAD to the file that failed, when one did. */
static int sync_staged(sift_store *c, size_t *bad)
{
    if (c->nstaged < SYNCFS_FROM) {
        for (*bad = 0; *bad < c->nstaged; ++*bad)
            if (fsync(c->staged[*bad].fd) != 0) return -1;
        return 0;
    }
    /* Every file system has its first staged file's descriptor open. */
    for (size_t i = 0; i < c->nstaged; i++) {
        const struct sift_staged *st = &c->staged[i];
        bool first = st->fd >= 0;
        for (size_t j = 0; first && j < i; j++)
            first = !(c->staged[j].fd >= 0 && c->staged[j].dev == st->dev);
        *bad = i;
        if (first && syncfs(st->fd) != 0) return -1;
    }
    return 0;
}

int sift_store_flush(sift_store *c)
{
    int rc = 0;
    size_t bad = 0;
    if (sync_staged(c, &bad) != 0) {
        fprintf(stderr, "sift: cannot save %s: %s\n", c->staged[bad].path, strerror(errno));
        rc = -1;
    }
    for (size_t i = 0; i < c->nstaged; i++) {
        struct sift_staged *st = &c->staged[i];
        if (st->fd >= 0 && close(st->fd) != 0 && rc == 0) {
            fprintf(stderr, "sift: cannot save %s: %s\n", st->path, strerror(errno));
            rc = -1;
        }
        st->fd = -1;
    }
    for (size_t i = 0; i < c->nstaged; i++) {
        struct sift_staged *st = &c->staged[i];
        if (rc == 0 && renameat(sift_file_cwd(), st->tmp, sift_file_cwd(), st->path) != 0) {
            fprintf(stderr, "sift: cannot save %s: %s\n", st->path, strerror(errno));
            rc = -1;
        }
        if (rc != 0) unlinkat(sift_file_cwd(), st->tmp, 0);
        free(st->tmp);
        free(st->path);
    }
    c->nstaged = 0;
    if (rc != 0) c->failed = true;
    uint64_t now = sift_now_ns();
    if (rc == 0 && c->oldest_ns) {
        if (now > c->oldest_ns && now - c->oldest_ns > c->persist_lag_ns)
            c->persist_lag_ns = now - c->oldest_ns;
        c->last_find_ns = now;
    }
    c->oldest_ns = 0;
    return rc;
}

static int write_dir(sift_store *c, const char *name, const uint8_t *data, size_t size)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", c->corpus_dir, name) >= sizeof path) {
        fprintf(stderr, "sift: cannot save %s/%s: path too long\n", c->corpus_dir, name);
        return -1;
    }
    return stage(c, path, data, size);
}

static long write_queue(sift_store *c, const uint8_t *data, size_t size, const char *desc)
{
    char path[4096];
    long id = sift_outdir_queue_path(c->out, desc, path, sizeof path);
    return id < 0 || stage(c, path, data, size) != 0 ? -1 : id;
}

int sift_store_take(sift_store *c, const sift_dlog_entry *e, const char *desc)
{
    if (e->flags & SIFT_DLOG_KNOWN) return 0;
    if (c->failed) return -1; /* reported once, at the first file that could not be saved */
    long i = add(c, e, SIZE_MAX);
    if (i < 0) return sift_corpus_find(c->corpus, e->name) >= 0 ? 0 : -1;
    if (c->corpus_dir && write_dir(c, e->name, e->data, e->size) != 0) return -1;
    if (c->out && (c->queue_id[i] = write_queue(c, e->data, e->size, desc)) < 0) return -1;
    if (!c->oldest_ns || e->published_ns < c->oldest_ns) c->oldest_ns = e->published_ns;
    return 1;
}

void sift_store_replayed(sift_store *c, const sift_dlog_entry *e, size_t item, unsigned where,
                         long queue_id)
{
    if (where & SIFT_ON_QUEUE) sift_corpus_add(c->in_queue, NULL, 0, NULL, 0, 0, e->name, 0);
    if (where & SIFT_ON_DIR) sift_corpus_add(c->in_dir, NULL, 0, NULL, 0, 0, e->name, 0);
    if (e->flags & SIFT_DLOG_KNOWN) return;
    long i = add(c, e, item);
    if (i >= 0 && (where & SIFT_ON_QUEUE)) c->queue_id[i] = queue_id;
}

long sift_store_reconcile(sift_store *c, sift_store_describe_fn describe, void *ctx)
{
    long written = 0;
    for (size_t i = 0; i < sift_corpus_count(c->corpus); i++) {
        const sift_entry *e = sift_corpus_at(c->corpus, i);
        unsigned where = 0;
        char desc[256] = "";
        if (c->origin[i] != SIZE_MAX) describe(ctx, c->origin[i], &where, desc, sizeof desc);
        if (c->out && sift_corpus_find(c->in_queue, e->name) < 0) {
            if ((c->queue_id[i] = write_queue(c, c->data[i], e->size, desc)) < 0) return -1;
            written++;
        }
        /* A find that reached the queue but not the corpus folder before a kill. */
        if (c->corpus_dir && !(where & SIFT_ON_SEED) && sift_corpus_find(c->in_dir, e->name) < 0) {
            if (write_dir(c, e->name, c->data[i], e->size) != 0) return -1;
            written++;
        }
    }
    return sift_store_flush(c) == 0 ? written : -1;
}

void sift_store_settle(sift_store *c)
{
    if (!c->pending) return;
    sift_corpus_update(c->corpus);
    for (size_t i = 0; i < sift_corpus_count(c->corpus); i++)
        if (sift_corpus_at(c->corpus, i)->evicted && c->data[i]) {
            free(c->data[i]);
            c->data[i] = NULL;
        }
    c->pending = false;
}

int sift_store_fault(sift_store *c, bool hang, const uint8_t *data, size_t size, const char *desc)
{
    char name[41];
    sift_sha1_hex(data, size, name);
    if (sift_corpus_find(c->faults, name) >= 0) return 0;
    if (!c->out || sift_outdir_fault(c->out, hang, data, size, desc) < 0) return -1;
    sift_corpus_add(c->faults, NULL, 0, NULL, 0, 0, name, 0);
    return 1;
}
