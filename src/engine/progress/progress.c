/* Campaign statistics: exec/s, the JSON stats file (-stats_file) and -print_final_stats. */
#include "engine/progress/progress.h"
#include "engine/contain/artifact.h"
#include "engine/progress/view.h"

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

void sift_stats_print_final(sift_fuzzer *f)
{
    uint64_t now = sift_now_ns();
    fprintf(stderr, "stat::number_of_executed_units: %llu\n", (unsigned long long)f->stats.execs);
    fprintf(stderr, "stat::average_exec_per_sec:     %llu\n",
            (unsigned long long)sift_stats_exec_per_sec(&f->stats, now));
    fprintf(stderr, "stat::new_units_added:          %llu\n",
            (unsigned long long)f->stats.new_units);
    fprintf(stderr, "stat::slowest_unit_time_sec:    %llu\n",
            (unsigned long long)(f->stats.slowest_ns / 1000000000ull));
    fprintf(stderr, "stat::peak_rss_mb:              %zu\n", sift_fault_rss_mb());
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
