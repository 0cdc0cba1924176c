/* The corpus folder of one fuzzing process: new inputs at once, replacements a second later. */
#include "engine/core/corpus_dir.h"
#include "engine/base/clock.h"
#include "engine/base/files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool entry_path(const sift_corpus_dir *d, const sift_entry *e, char *path, size_t cap)
{
    return (size_t)snprintf(path, cap, "%s/%s", d->path, e->name) < cap;
}

void sift_corpus_dir_save(const sift_corpus_dir *d, const sift_entry *e)
{
    if (!d->path) return;
    char path[4096];
    /* No fsync: a disk flush per new input was most of the time of campaigns that find often,
     * and an input lost to a machine crash is found again. */
    if (!entry_path(d, e, path, sizeof path) || sift_write_whole(path, e->data, e->size, false)) {
        fprintf(stderr, "sift: cannot save %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static bool push(sift_corpus_dir *d, sift_entry *e)
{
    if (d->npending == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        sift_entry **grown = realloc(d->pending, cap * sizeof(sift_entry *));
        if (!grown) return false;
        d->pending = grown;
        d->cap = cap;
    }
    d->pending[d->npending++] = e;
    return true;
}

void sift_corpus_dir_replace(sift_corpus_dir *d, sift_entry *e, sift_entry *const *gone,
                             size_t ngone, uint64_t now_ns)
{
    if (!d->path) return;
    if (!d->npending) d->due_ns = now_ns + SIFT_SECOND_NS;
    /* Without memory to defer it, the replacement is written at once and its files stay. */
    if (!push(d, e)) {
        sift_corpus_dir_save(d, e);
        return;
    }
    for (size_t i = 0; i < ngone; i++)
        if (gone[i]->evicted && !push(d, gone[i])) break;
}

void sift_corpus_dir_tick(sift_corpus_dir *d, uint64_t now_ns)
{
    if (!d->npending || now_ns < d->due_ns) return;
    /* The writes before any removal: a kill between the two leaves files to spare, never
     * features without a file. An entry replaced before the flush was never written, and
     * removing its file finds none. */
    for (size_t i = 0; i < d->npending; i++)
        if (!d->pending[i]->evicted) sift_corpus_dir_save(d, d->pending[i]);
    for (size_t i = 0; i < d->npending; i++) {
        char path[4096];
        if (d->pending[i]->evicted && entry_path(d, d->pending[i], path, sizeof path)) unlink(path);
    }
    d->npending = 0;
}

void sift_corpus_dir_free(sift_corpus_dir *d)
{
    free(d->pending);
    *d = (sift_corpus_dir){0};
}
