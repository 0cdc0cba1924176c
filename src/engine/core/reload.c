/* Reloading the corpus folder: a sorted list of the paths seen, so that each file is run once,
 * and not at all when it is a corpus entry already. */
#include "engine/core/reload.h"
#include "engine/base/clock.h"
#include "engine/base/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Moves the paths of LIST not in R->seen into it (and out of LIST), calling FN on each (when
 * not NULL). Returns how many of those calls returned true. */
static size_t take_new(sift_reload *r, sift_pathlist *list, bool (*fn)(void *, const char *),
                       void *ctx)
{
    size_t taken = 0;
    char **grown = realloc(r->seen, (r->nseen + list->count + 1) * sizeof(*grown));
    if (!grown) return 0;
    r->seen = grown;
    size_t old = r->nseen;
    for (size_t i = 0; i < list->count; i++) {
        if (old && bsearch(&list->paths[i], r->seen, old, sizeof(*r->seen), by_path)) continue;
        if (fn) taken += fn(ctx, list->paths[i]);
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

void sift_reload_start(sift_reload *r, const char *dir, long long period_s)
{
    *r = (sift_reload){0};
    if (!dir || period_s <= 0) return;
    r->dir = dir;
    r->period_ns = (uint64_t)period_s * SIFT_SECOND_NS;
    r->next_ns = sift_now_ns() + r->period_ns;
    sift_pathlist list;
    if (listed(r, &list)) take_new(r, &list, NULL, NULL);
    sift_pathlist_free(&list);
}

size_t sift_reload_poll(sift_reload *r, uint64_t now_ns, bool (*take)(void *ctx, const char *path),
                        void *ctx)
{
    if (!r->dir || now_ns < r->next_ns) return 0;
    sift_pathlist list;
    size_t taken = listed(r, &list) ? take_new(r, &list, take, ctx) : 0;
    sift_pathlist_free(&list);
    r->next_ns = sift_now_ns() + r->period_ns;
    return taken;
}

void sift_reload_free(sift_reload *r)
{
    for (size_t i = 0; i < r->nseen; i++)
        free(r->seen[i]);
    free(r->seen);
    *r = (sift_reload){0};
}
