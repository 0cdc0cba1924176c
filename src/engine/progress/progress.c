/* A campaign's progress record turned into status lines, the -stats_file JSON and the final
 * "stat::" lines. */
#include "engine/progress/progress.h"
#include "engine/base/clock.h"
#include "engine/base/files.h"
#include "engine/base/humanize.h"
#include "engine/contain/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t sift_progress_rate(uint64_t execs, uint64_t ns)
{
    uint64_t ms = ns / SIFT_MS_NS;
    return ms ? execs * 1000ull / ms : 0;
}

/* The fields libFuzzer leaves out when they are zero (nothing covered, an empty corpus) are
 * left out here too: an uninstrumented target's INITED line is then libFuzzer's. */
void sift_progress_line(const sift_progress *p, const char *what, const char *extra)
{
    char cov[32] = "", ft[32] = "", corp[96] = "", lim[32] = "", workers[32] = "", size[32];
    if (p->cov) snprintf(cov, sizeof cov, " cov: %zu", p->cov);
    if (p->ft) snprintf(ft, sizeof ft, " ft: %zu", p->ft);
    if (p->corpus)
        snprintf(corp, sizeof corp, " corp: %zu/%s", p->corpus,
                 sift_human_size(p->corpus_bytes, size));
    if (p->focus)
        snprintf(corp + strlen(corp), sizeof corp - strlen(corp), " focus: %zu", p->focus);
    if (p->len_limit) snprintf(lim, sizeof lim, " lim: %zu", p->len_limit);
    if (p->nworkers) snprintf(workers, sizeof workers, " workers: %u", p->nworkers);
    fprintf(stderr, "#%llu\t%-6s%s%s%s%s exec/s: %llu rss: %zuMb%s%s\n",
            (unsigned long long)p->execs, what, cov, ft, corp, lim,
            (unsigned long long)p->exec_per_sec, p->rss_mb, workers, extra ? extra : "");
}

static void json_workers(FILE *f, const sift_progress *p)
{
    fprintf(f, ", \"workers\": [");
    for (unsigned k = 0; k < p->nworkers; k++) {
        const sift_progress_worker *w = &p->workers[k];
        fprintf(f,
                "%s{\"pid\": %d, \"execs\": %llu, \"exec_per_sec\": %llu, \"corpus\": %llu, "
                "\"new_units\": %llu, \"imported\": %llu, \"import_lag_ms\": %.3f, "
                "\"last_new_sec\": %.3f, \"starts\": %u}",
                k ? ", " : "", w->pid, (unsigned long long)w->execs,
                (unsigned long long)w->exec_per_sec_avg, (unsigned long long)w->corpus,
                (unsigned long long)w->new_units, (unsigned long long)w->imported,
                (double)w->import_lag_ns / 1e6, w->found_any ? (double)w->since_new_ns / 1e9 : -1.0,
                w->starts);
    }
    fprintf(f, "]");
}

int sift_progress_write_json(const sift_progress *p, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return 0; /* this round writes nothing; the next one may */
    double elapsed = (double)p->run_ns / 1e9;
    fprintf(f,
            "{\"execs\": %llu, \"exec_per_sec\": %llu, \"elapsed_sec\": %.3f, \"cov\": %zu, "
            "\"ft\": %zu, \"corpus\": %zu, \"corpus_bytes\": %zu, \"favored\": %zu, "
            "\"new_units\": %llu, \"imported\": %llu, \"last_new_sec\": %.3f, \"crashes\": %llu, "
            "\"hangs\": %llu, \"replay_failed\": %llu, \"persist_lag_ms\": %.3f, "
            "\"slowest_unit_ms\": %.3f, \"slow_finds_not_kept\": %llu, \"rss_mb\": %zu, "
            "\"seed\": %lld",
            (unsigned long long)p->execs, (unsigned long long)p->exec_per_sec, elapsed, p->cov,
            p->ft, p->corpus, p->corpus_bytes, p->favored, (unsigned long long)p->new_units,
            (unsigned long long)p->imported, p->found_any ? (double)p->since_new_ns / 1e9 : elapsed,
            (unsigned long long)p->crashes, (unsigned long long)p->timeouts,
            (unsigned long long)p->replay_failed, (double)p->persist_lag_ns / 1e6,
            (double)p->slowest_ns / 1e6, (unsigned long long)p->slow_finds, p->rss_mb, p->seed);
    if (p->nworkers) json_workers(f, p);
    fprintf(f, "}\n");
    /* A memory stream that ran out of memory holds part of the text, or none: this round
     * writes nothing, as when the stream could not be opened. */
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        free(buf);
        return 0;
    }
    int rc = sift_write_atomic(path, (const uint8_t *)buf, len);
    if (rc != 0) fprintf(stderr, "sift: cannot write stats file %s: %s\n", path, strerror(errno));
    free(buf);
    return rc;
}

void sift_progress_print_final(const sift_progress *p)
{
    static const char *const names[] = {
        "number_of_executed_units: ", "average_exec_per_sec:     ", "new_units_added:          ",
        "slowest_unit_time_sec:    ", "peak_rss_mb:              "};
    const uint64_t values[] = {p->execs, p->exec_per_sec, p->new_units,
                               p->slowest_ns / SIFT_SECOND_NS, p->rss_mb};
    sift_report o;
    o.len = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        sift_report_str(&o, "stat::");
        sift_report_str(&o, names[i]);
        sift_report_u64(&o, values[i]);
        sift_report_str(&o, "\n");
    }
    if (p->values_shared) {
        sift_report_str(&o, "stat::values_share_percent: ");
        sift_report_u64(&o, (uint64_t)p->values_share);
        sift_report_str(&o, "\n");
    }
    sift_report_flush(&o);
}
