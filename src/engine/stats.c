/* Campaign statistics: exec/s, the JSON stats file (-stats_file) and -print_final_stats. */
#include "engine/stats.h"
#include "engine/artifact.h"
#include "engine/view.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

uint64_t sift_stats_exec_per_sec(const sift_stats *s, uint64_t now_ns)
{
    uint64_t secs = (now_ns - s->start_ns) / 1000000000ull;
    return secs ? s->execs / secs : 0;
}

int sift_stats_write(sift_fuzzer *f, const char *path)
{
    uint64_t now = sift_now_ns();
    size_t cov = 0, ft = 0;
    sift_snapshot_count(f->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &cov, NULL);
    sift_snapshot_count(f->snap, f->mask, NULL, &ft);
    char json[1024];
    int n =
        snprintf(json, sizeof json,
                 "{\"execs\": %llu, \"exec_per_sec\": %llu, \"elapsed_sec\": %.3f, "
                 "\"cov\": %zu, \"ft\": %zu, \"corpus\": %zu, \"corpus_bytes\": %zu, "
                 "\"favored\": %zu, \"new_units\": %llu, \"last_new_sec\": %.3f, "
                 "\"slowest_unit_ms\": %.3f, \"rss_mb\": %zu, \"seed\": %lld}\n",
                 (unsigned long long)f->stats.execs,
                 (unsigned long long)sift_stats_exec_per_sec(&f->stats, now),
                 (double)(now - f->stats.start_ns) / 1e9, cov, ft, sift_corpus_count(f->corpus),
                 sift_corpus_bytes(f->corpus), sift_corpus_favored(f->corpus),
                 (unsigned long long)f->stats.new_units, (double)(now - f->stats.last_new_ns) / 1e9,
                 (double)f->stats.slowest_ns / 1e6, sift_fault_rss_mb(), f->opts->seed);
    if (n < 0 || (size_t)n >= sizeof json ||
        sift_write_atomic(path, (const uint8_t *)json, (size_t)n) != 0) {
        fprintf(stderr, "sift: cannot write stats file %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

void sift_stats_print_final(const sift_fuzzer *f)
{
    static const char *const names[] = {
        "number_of_executed_units: ", "average_exec_per_sec:     ", "new_units_added:          ",
        "slowest_unit_time_sec:    ", "peak_rss_mb:              "};
    const uint64_t values[] = {f->stats.execs, sift_stats_exec_per_sec(&f->stats, sift_now_ns()),
                               f->stats.new_units, f->stats.slowest_ns / 1000000000ull,
                               sift_fault_rss_mb()};
    sift_out o;
    o.len = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        sift_out_str(&o, "stat::");
        sift_out_str(&o, names[i]);
        sift_out_u64(&o, values[i]);
        sift_out_str(&o, "\n");
    }
    sift_out_flush(&o);
}

void sift_stats_print_modules(const sift_rt_state *rt)
{
    size_t counters = 0, tables = 0, pcs = 0;
    for (size_t i = 0; i < rt->npcs; i++) {
        counters += rt->pcs[i].len;
        tables += rt->pcs[i].pcs != NULL;
        pcs += rt->pcs[i].pcs ? rt->pcs[i].len : 0;
    }
    if (rt->npcs) {
        fprintf(stderr, "INFO: Loaded %zu modules   (%zu inline 8-bit counters): ", rt->npcs,
                counters);
        for (size_t i = 0; i < rt->npcs; i++)
            fprintf(stderr, "%zu [%p, %p), ", rt->pcs[i].len, (const void *)rt->pcs[i].counters,
                    (const void *)(rt->pcs[i].counters + rt->pcs[i].len));
        fputc('\n', stderr);
    }
    if (tables) {
        fprintf(stderr, "INFO: Loaded %zu PC tables (%zu PCs): ", tables, pcs);
        for (size_t i = 0; i < rt->npcs; i++)
            if (rt->pcs[i].pcs)
                fprintf(stderr, "%zu [%p,%p), ", rt->pcs[i].len, (const void *)rt->pcs[i].pcs,
                        (const void *)(rt->pcs[i].pcs + 2 * rt->pcs[i].len));
        fputc('\n', stderr);
    }
}

void sift_stats_view(sift_fuzzer *f, bool final)
{
    uint64_t now = sift_now_ns();
    sift_view_stats st = {
        .target = f->fault.argv0,
        .run_ns = now - f->stats.start_ns,
        .execs = f->stats.execs,
        .exec_per_sec = sift_stats_exec_per_sec(&f->stats, now),
        .corpus = sift_corpus_count(f->corpus),
        .favored = sift_corpus_favored(f->corpus),
        .corpus_bytes = sift_corpus_bytes(f->corpus),
        .found_any = f->stats.new_units > 0,
        .since_new_ns = now - f->stats.last_new_ns,
    };
    sift_snapshot_count(f->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &st.cov, NULL);
    sift_snapshot_count(f->snap, f->mask, NULL, &st.ft);
    if (final)
        sift_view_finish(&f->view, &st, now);
    else
        sift_view_update(f->view, &st, now);
}
