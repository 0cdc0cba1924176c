/* Reloading the corpus folder: a sorted list of the paths seen, so that each file is run once,
 * and not at all when it is a corpus entry already. */
#include "engine/reload.h"
#include "engine/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Moves the paths of LIST not in R->seen into it (and out of LIST), calling FN on each (when
 * not NULL). Returns how many of those calls returned true. */
static size_t take_new(sift_reload *r, sift_pathlist *list, bool (*fn)(sift_fuzzer *, const char *),
                       sift_fuzzer *f)
{
    size_t taken = 0;
    char **grown = realloc(r->seen, (r->nseen + list->count + 1) * sizeof(*grown));
    if (!grown) return 0;
    r->seen = grown;
    size_t old = r->nseen;
    for (size_t i = 0; i < list->count; i++) {
        if (old && bsearch(&list->paths[i], r->seen, old, sizeof(*r->seen), by_path)) continue;
        if (fn) taken += fn(f, list->paths[i]);
        r->seen[r->nseen++] = list->paths[i];
        list->paths[i] = NULL;
    }
    qsort(r->seen, r->nseen, sizeof(*r->seen), by_path);
    return taken;
}

static bool listed(sift_reload *r, sift_pathlist *list)
{
    char err[4352];
    *list = (sift_pathlist){0};
    /* A folder that cannot be read now is tried again at the next reload. */
    return sift_fs_list(list, r->dir, err, sizeof err) == 0;
}

void sift_reload_start(sift_reload *r, sift_fuzzer *f)
{
    *r = (sift_reload){0};
    if (f->opts->reload <= 0 || !f->out_dir || f->hooks.seed) return;
    r->dir = f->out_dir;
    r->period_ns = (uint64_t)f->opts->reload * 1000000000ull;
    r->next_ns = sift_now_ns() + r->period_ns;
    sift_pathlist list;
    if (listed(r, &list)) take_new(r, &list, NULL, f);
    sift_pathlist_free(&list);
}

/* Runs the file PATH; whether it was taken into the corpus. A file named as a corpus entry is
 * that entry (this process's own find, saved by its SHA-1): it is not run again, so that a
 * seeded run spends the same executions on the same inputs however long it takes. */
static bool run_file(sift_fuzzer *f, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (sift_corpus_find(f->corpus, slash ? slash + 1 : path) >= 0) return false;
    uint8_t *data;
    size_t size;
    char err[4352];
    /* A file removed or half-written since the listing is left for another process. */
    if (sift_fs_read(path, f->max_len, &data, &size, NULL, err, sizeof err) != 0) return false;
    bool taken = sift_fuzzer_try(f, data, size, false, NULL);
    free(data);
    return taken;
}

void sift_reload_poll(sift_reload *r, sift_fuzzer *f)
{
    if (!r->dir || f->exec_end_ns < r->next_ns) return;
    sift_pathlist list;
    size_t taken = listed(r, &list) ? take_new(r, &list, run_file, f) : 0;
    sift_pathlist_free(&list);
    if (taken && f->opts->verbosity) sift_fuzzer_status(f, "RELOAD", NULL);
    r->next_ns = sift_now_ns() + r->period_ns;
}

void sift_reload_free(sift_reload *r)
{
    for (size_t i = 0; i < r->nseen; i++)
        free(r->seen[i]);
    free(r->seen);
    *r = (sift_reload){0};
}
