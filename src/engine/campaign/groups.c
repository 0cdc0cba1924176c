/* Corpus groups for the workers (groups.h), with libFuzzer's numbers: its fork parent's table of
 * group counts, its group size of N / G + 1 entries, and its job lengths. */
#include "engine/campaign/groups.h"
#include "engine/base/clock.h"
#include "engine/base/radix.h"

#include <stdlib.h>

#define MAX_JOB_SECONDS 300

void sift_groups_init(sift_groups *g, unsigned index, unsigned nworkers)
{
    *g = (sift_groups){.index = index, .nworkers = nworkers ? nworkers : 1};
}

void sift_groups_free(sift_groups *g)
{
    free(g->sizes);
    free(g->tmp);
    g->sizes = g->tmp = NULL;
    g->cap = 0;
}

size_t sift_groups_count(size_t n)
{
    static const struct {
        size_t below, groups;
    } table[] = {{2000, 12}, {6000, 20}, {12000, 32}, {16000, 40}, {24000, 60}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (n < table[i].below) return table[i].groups;
    return 80;
}

void sift_groups_range(uint64_t job, size_t n, size_t *first, size_t *last)
{
    size_t groups = sift_groups_count(n), per = n / groups + 1;
    size_t start = (size_t)((job - 1) % groups) * per;
    /* libFuzzer's draws past the end go to the largest entries. */
    *first = start < n ? start : n - 1;
    *last = start + per - 1 < n ? start + per - 1 : n - 1;
}

uint64_t sift_groups_job_seconds(uint64_t job)
{
    return job < MAX_JOB_SECONDS ? job : MAX_JOB_SECONDS;
}

/* The sizes of C's active entries, sorted, in G's scratch; their number, or 0. */
static size_t sorted_sizes(sift_groups *g, sift_corpus *c)
{
    size_t total = sift_corpus_count(c), n = 0;
    if (total > g->cap) {
        uint64_t *sizes = realloc(g->sizes, total * sizeof(*sizes));
        if (sizes) g->sizes = sizes;
        uint64_t *tmp = sizes ? realloc(g->tmp, total * sizeof(*tmp)) : NULL;
        if (tmp) g->tmp = tmp;
        if (!sizes || !tmp) return 0;
        g->cap = total;
    }
    for (size_t i = 0; i < total; i++) {
        const sift_entry *e = sift_corpus_at(c, i);
        if (!e->evicted && e->data) g->sizes[n++] = e->size;
    }
    sift_radix_sort64(g->sizes, g->tmp, n);
    return n;
}

void sift_groups_tick(sift_groups *g, sift_corpus *c, uint64_t now_ns)
{
    if (g->job_end_ns && now_ns < g->job_end_ns) return;
    /* libFuzzer numbers its jobs from 1 as it starts them, one per worker at a time. */
    uint64_t job = g->jobs * g->nworkers + g->index + 1;
    g->jobs++;
    g->job_end_ns = now_ns + sift_groups_job_seconds(job) * SIFT_SECOND_NS;
    size_t n = sorted_sizes(g, c), first, last;
    if (!n) {
        sift_corpus_set_band(c, 0, SIZE_MAX);
        return;
    }
    sift_groups_range(job, n, &first, &last);
    sift_corpus_set_band(c, (size_t)g->sizes[first], (size_t)g->sizes[last]);
}
