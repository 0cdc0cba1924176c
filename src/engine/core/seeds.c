/* Reading the seed corpus (seeds.h). */
#include "engine/core/seeds.h"
#include "engine/base/files.h"
#include "engine/base/fsutil.h"
#include "engine/base/humanize.h"
#include "engine/base/limits.h"
#include "engine/contain/fault.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_size(const void *a, const void *b)
{
    const sift_seed *x = a, *y = b;
    return (x->size > y->size) - (x->size < y->size);
}

/* The most a -seed_inputs=@LIST file may hold. */
#define SEED_LIST_MAX (16u << 20)

/* libFuzzer's words for a list that names nothing, which tools and its tests look for. */
#define SEED_LIST_EMPTY "seed_inputs is empty or @file does not exist."

int sift_seeds_add_inputs(const char *spec, sift_pathlist *paths)
{
    char *list;
    if (spec[0] == '@') {
        uint8_t *data;
        size_t size;
        char err[4352];
        if (sift_fs_read(spec + 1, SEED_LIST_MAX, &data, &size, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "sift: -seed_inputs=%s: " SEED_LIST_EMPTY " (%s)\n", spec, err);
            return -1;
        }
        list = malloc(size + 1);
        if (list) {
            memcpy(list, data, size);
            list[size] = '\0';
        }
        free(data);
    } else {
        list = strdup(spec);
    }
    if (!list) {
        fprintf(stderr, "sift: out of memory reading -seed_inputs\n");
        return -1;
    }
    size_t before = paths->count;
    int rc = 0;
    for (char *save = NULL, *name = strtok_r(list, ",\n", &save); name && rc == 0;
         name = strtok_r(NULL, ",\n", &save))
        rc = sift_pathlist_add(paths, name);
    free(list);
    if (rc != 0 || paths->count == before) {
        fprintf(stderr, "sift: -seed_inputs=%s: %s\n", spec,
                rc ? "out of memory" : SEED_LIST_EMPTY);
        return -1;
    }
    return 0;
}

/* Every readable file of O's folders, and the files -seed_inputs names, into PATHS; -1 after
 * a line naming a folder that cannot be listed or a list that cannot be read. */
static int list_seeds(const sift_options *o, sift_pathlist *paths)
{
    char err[4352];
    for (size_t i = 0; i < o->ninputs; i++) {
        if (sift_fs_list(paths, o->inputs[i], err, sizeof err) != 0) {
            fprintf(stderr, "sift: corpus folder %s\n", err);
            return -1;
        }
    }
    if (o->seed_inputs && sift_seeds_add_inputs(o->seed_inputs, paths) != 0) return -1;
    if (paths->skipped)
        fprintf(stderr, "sift: corpus: skipped %zu entries that are not readable files (%s%s)\n",
                paths->skipped, paths->skipped > 1 ? "first: " : "", paths->first_skip);
    return 0;
}

/* libFuzzer's lines on the seeds read, of which FAILED could not be and CUT were longer than
 * READ_MAX. */
static void print_seeds(const sift_options *o, const sift_seeds *s, size_t total, size_t failed,
                        size_t cut, size_t read_max)
{
    if (!o->max_len)
        fprintf(stderr,
                "INFO: -max_len is not provided; libFuzzer will not generate inputs larger than "
                "%zu bytes\n",
                s->max_len);
    if (s->count == 0) {
        fprintf(stderr, "INFO: A corpus is not provided, starting from an empty corpus\n");
        return;
    }
    fprintf(stderr, "INFO: seed corpus: files: %zu min: %zub max: %zub total: %zub rss: %zuMb%s",
            s->count, s->list[0].size, s->list[s->count - 1].size, total, sift_fault_rss_mb(),
            failed ? " (some unreadable, skipped)" : "");
    if (cut) fprintf(stderr, " (%zu longer than %zu bytes, cut to that)", cut, read_max);
    fputc('\n', stderr);
}

int sift_seeds_read(const sift_options *o, sift_seeds *out)
{
    *out = (sift_seeds){0};
    sift_pathlist paths = {0};
    if (list_seeds(o, &paths) != 0) {
        sift_pathlist_free(&paths);
        return -1;
    }
    size_t read_max = sift_seed_read_max(o->max_len);
    out->list = calloc(paths.count + 1, sizeof(*out->list));
    size_t largest = 0, total = 0, failed = 0, cut = 0;
    for (size_t i = 0; out->list && i < paths.count; i++) {
        sift_seed *s = &out->list[out->count];
        bool truncated = false;
        char err[4352], shown[sizeof err];
        /* Never more than the inputs may hold: a 100 MB file costs read_max bytes, as in
         * libFuzzer, which cuts seeds to -max_len (1 MiB when not given). */
        if (sift_fs_read(paths.paths[i], read_max, &s->data, &s->size, &truncated, err,
                         sizeof err) != 0) {
            fprintf(stderr, "sift: skipping seed %s\n", sift_human_name(err, shown, sizeof shown));
            failed++;
            continue;
        }
        largest = s->size > largest ? s->size : largest;
        total += s->size;
        cut += truncated;
        out->count++;
    }
    sift_pathlist_free(&paths);
    if (!out->list) {
        fprintf(stderr, "sift: out of memory loading the corpus\n");
        return -1;
    }
    out->max_len = sift_max_len(o->max_len, largest);
    qsort(out->list, out->count, sizeof(*out->list), by_size);
    print_seeds(o, out, total, failed, cut, read_max);
    return 0;
}

void sift_seeds_free(sift_seeds *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->list[i].data);
    free(s->list);
    *s = (sift_seeds){0};
}
