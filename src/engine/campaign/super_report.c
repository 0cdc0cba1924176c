/* What the supervisor reports: totals, status lines, statistics, the live view, fault copies
 * and the names of finds. */
#define _GNU_SOURCE
#include "engine/campaign/super_report.h"
#include "engine/base/clock.h"
#include "engine/base/humanize.h"
#include "engine/base/limits.h"
#include "engine/contain/fault.h"
#include "engine/progress/progress.h"
#include "engine/progress/view.h"
#include "rt/rt.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COUNT_EVERY_NS (SIFT_SECOND_NS / 4) /* cov and ft cost a pass over the snapshot */
#define PLOT_EVERY_NS  (5 * SIFT_SECOND_NS)
#define ECHO_MAX       ((off_t)32 * 1024)

uint64_t sift_super_execs(const sift_super *s)
{
    uint64_t total = 0;
    for (unsigned k = 0; k < s->n; k++) {
        total += s->slots[k].execs_before;
        if (s->slots[k].pid > 0)
            total += atomic_load_explicit(&s->sh.workers[k].execs, memory_order_relaxed);
    }
    return total;
}

static void count(sift_super *s, uint64_t now)
{
    if (s->counted_ns && now - s->counted_ns < COUNT_EVERY_NS) return;
    unsigned mask = s->o->features;
    if (s->o->use_value_profile) mask |= SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP);
    sift_snapshot_count(s->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &s->cov, NULL);
    sift_snapshot_count(s->snap, mask, NULL, &s->ft);
    s->counted_ns = now;
}

static uint64_t exec_per_sec(const sift_super *s, uint64_t now)
{
    uint64_t since = s->fuzz_start_ns ? s->fuzz_start_ns : s->start_ns;
    return sift_progress_rate(sift_super_execs(s), now - since);
}

struct sift_super_find {
    size_t size;
    bool synced;
};

int sift_super_note_find(sift_super *s, size_t size, bool synced)
{
    if (s->nfinds == s->findcap) {
        size_t cap = s->findcap ? s->findcap * 2 : 64;
        struct sift_super_find *grown = realloc(s->finds, cap * sizeof(*grown));
        if (!grown) return -1;
        s->finds = grown;
        s->findcap = cap;
    }
    s->finds[s->nfinds++] = (struct sift_super_find){.size = size, .synced = synced};
    return 0;
}

void sift_super_report_finds(sift_super *s)
{
    for (size_t i = 0; i < s->nfinds; i++) {
        if (s->finds[i].synced)
            s->imported++;
        else
            s->found++;
        if (s->o->verbosity)
            sift_super_status(s, s->finds[i].synced ? "SYNC" : "NEW", s->finds[i].size);
    }
    s->nfinds = 0;
}

/* Fills WORKERS (S->n of them, may be NULL) with each slot's figures at NOW. */
static void worker_progress(const sift_super *s, uint64_t now, sift_progress_worker *workers)
{
    for (unsigned k = 0; workers && k < s->n; k++) {
        const sift_worker_stats *w = &s->sh.workers[k];
        const sift_super_slot *sl = &s->slots[k];
        bool alive = sl->pid > 0;
        uint64_t last = atomic_load(&w->last_new_ns);
        uint64_t execs =
            sl->execs_before + (alive ? atomic_load_explicit(&w->execs, memory_order_relaxed) : 0);
        workers[k] = (sift_progress_worker){
            .pid = sl->pid,
            .execs = execs,
            .starts = sl->starts,
            .finished = sl->finished,
            .exec_per_sec_avg =
                sift_progress_rate(execs, sl->alive_before + (alive ? now - sl->started_ns : 0)),
            .corpus = atomic_load(&w->corpus),
            .new_units = atomic_load(&w->new_units),
            .imported = atomic_load(&w->imported),
            .import_lag_ns = atomic_load(&w->import_lag_ns),
            .found_any = last != 0,
            .since_new_ns = last ? now - last : 0,
        };
    }
}

/* The campaign's progress at NOW, its slots' figures in WORKERS (may be NULL). */
static sift_progress progress(sift_super *s, uint64_t now, sift_progress_worker *workers)
{
    count(s, now);
    /* A find drained after NOW was taken is new as of now. */
    uint64_t lf = s->camp.last_find_ns < now ? s->camp.last_find_ns : now;
    worker_progress(s, now, workers);
    return (sift_progress){
        .target = s->argv[0],
        .run_ns = now - s->start_ns,
        .execs = sift_super_execs(s),
        .exec_per_sec = exec_per_sec(s, now),
        .cov = s->cov,
        .ft = s->ft,
        .corpus = sift_corpus_count(s->camp.corpus),
        .favored = sift_corpus_favored(s->camp.corpus),
        .corpus_bytes = sift_corpus_bytes(s->camp.corpus),
        .new_units = s->found,
        .imported = s->imported,
        .crashes = s->crashes - s->ooms,
        .timeouts = s->hangs,
        .ooms = s->ooms,
        .replay_failed = s->replay_failed,
        .found_any = lf != 0,
        .since_new_ns = lf ? now - lf : 0,
        .persist_lag_ns = s->camp.persist_lag_ns,
        .rss_mb = sift_fault_rss_mb(),
        .seed = s->o->seed,
        .nworkers = s->n,
        .workers = workers,
    };
}

void sift_super_status(sift_super *s, const char *what, size_t size)
{
    if (sift_view_active(s->view)) return; /* the live view shows all of it */
    char extra[64] = "";
    if (size) snprintf(extra, sizeof extra, " L: %zu", size);
    sift_progress p = progress(s, sift_now_ns(), NULL);
    sift_progress_line(&p, what, extra);
}

static int write_json(sift_super *s, uint64_t now)
{
    sift_progress_worker *workers = calloc(s->n, sizeof(*workers));
    if (!workers) return 0; /* this round writes nothing; the next one may */
    sift_progress p = progress(s, now, workers);
    int rc = sift_progress_write_json(&p, s->o->stats_file);
    free(workers);
    return rc;
}

static int write_afl_stats(sift_super *s, uint64_t now, bool plot)
{
    uint64_t execs = sift_super_execs(s), unix_now = (uint64_t)time(NULL);
    double minute = 0;
    if (s->minute_ns && now > s->minute_ns)
        minute = (double)(execs - s->minute_execs) * 1e9 / (double)(now - s->minute_ns);
    if (!s->minute_ns || now - s->minute_ns >= 60 * SIFT_SECOND_NS) {
        s->minute_ns = now;
        s->minute_execs = execs;
    }
    char banner[256];
    snprintf(banner, sizeof banner, "%s", s->o->name ? s->o->name : "sift");
    sift_outdir_safe(banner);
    uint64_t lf = s->camp.last_find_ns;
    sift_outdir_stats st = {
        .start_time = s->start_unix,
        .now = unix_now,
        .pid = getpid(),
        .execs = execs,
        .execs_per_sec = (double)exec_per_sec(s, now),
        .execs_ps_last_min = minute,
        .corpus_count = sift_corpus_count(s->camp.corpus),
        .corpus_favored = sift_corpus_favored(s->camp.corpus),
        .corpus_found = s->found,
        .corpus_imported = s->imported,
        .saved_crashes = s->out.next_crash,
        .saved_hangs = s->out.next_hang,
        .last_find = lf ? unix_now - (now - lf) / SIFT_SECOND_NS : 0,
        .last_crash = s->last_crash_unix,
        .last_hang = s->last_hang_unix,
        .execs_since_crash = execs - s->execs_at_crash,
        .exec_timeout_ms = (uint64_t)s->o->timeout * 1000,
        .peak_rss_mb = sift_fault_rss_mb(),
        .edges_found = s->cov,
        .total_edges = sift_covmap_size(sift_rt()->map, SIFT_DOMAIN_EDGES),
        .banner = banner,
        .command_line = s->argv[0],
    };
    return sift_outdir_report(&s->out, &st, plot);
}

void sift_super_report(sift_super *s, uint64_t now, bool final)
{
    uint64_t execs = sift_super_execs(s);
    if (execs >= s->next_pulse && !final) {
        if (s->o->verbosity) sift_super_status(s, "pulse", 0);
        while (s->next_pulse <= execs)
            s->next_pulse *= 2;
    }
    if (!final && now < s->next_stats_ns) return;
    s->next_stats_ns = now + SIFT_SECOND_NS;
    count(s, now);
    if (s->unsaved) return; /* its line is out; the campaign is ending */
    if (s->o->stats_file && write_json(s, now) != 0) sift_super_unsaved(s);
    if (s->has_out && !s->unsaved) {
        bool plot = final || now >= s->next_plot_ns;
        if (plot) s->next_plot_ns = now + PLOT_EVERY_NS;
        if (write_afl_stats(s, now, plot) != 0) sift_super_unsaved(s);
    }
}

void sift_super_unsaved(sift_super *s)
{
    s->unsaved = true;
    s->stopping = true;
    if (!s->exit_code) s->exit_code = 1;
}

void sift_super_view(sift_super *s, uint64_t now, bool final)
{
    sift_progress_worker *workers = calloc(s->n, sizeof(*workers));
    if (!workers) return;
    sift_progress p = progress(s, now, workers);
    if (final)
        sift_view_finish(&s->view, &p, now);
    else
        sift_view_update(s->view, &p, now);
    free(workers);
}

void sift_super_echo_log(sift_super *s, unsigned k)
{
    off_t from = s->slots[k].log_from, end = lseek(s->logs[k], 0, SEEK_END);
    if (end - from > ECHO_MAX) from = end - ECHO_MAX;
    char *buf = malloc((size_t)ECHO_MAX + 1);
    ssize_t got = buf && end > from ? pread(s->logs[k], buf, (size_t)(end - from), from) : 0;
    if (got > 0) {
        buf[got] = '\0';
        /* The report follows the worker's last status line ("#N\t..."). */
        const char *report = buf;
        for (const char *p = buf; (p = strstr(p, "\n#")); p++)
            report = p + 1;
        if (*report == '#') report += strcspn(report, "\n") + (report[strcspn(report, "\n")] != 0);
        fputs(report, stderr);
    }
    free(buf);
}

static void save_fault(sift_super *s, bool hang, int status, const char *artifact, const char *desc)
{
    uint8_t *data;
    size_t size;
    char err[4352], name[512];
    if (sift_fs_read(artifact, SIFT_SEED_MAX_READ, &data, &size, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "sift: cannot keep the fault in -out: %s\n", err);
        return;
    }
    uint64_t ms = (sift_now_ns() - s->start_ns) / SIFT_MS_NS;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGABRT;
    if (hang)
        snprintf(name, sizeof name, "time:%llu,execs:%llu%s%s", (unsigned long long)ms,
                 (unsigned long long)sift_super_execs(s), *desc ? "," : "", desc);
    else
        snprintf(name, sizeof name, "sig:%02d,time:%llu,execs:%llu%s%s", sig,
                 (unsigned long long)ms, (unsigned long long)sift_super_execs(s), *desc ? "," : "",
                 desc);
    if (sift_store_fault(&s->camp, hang, data, size, name) < 0) sift_super_unsaved(s);
    free(data);
}

void sift_super_save_fault(sift_super *s, bool hang, int status, const char *artifact)
{
    save_fault(s, hang, status, artifact, "");
}

void sift_super_describe_find(sift_super *s, const sift_dlog_entry *e, char *desc, size_t cap)
{
    char src[32] = "", op[sizeof e->op];
    long long parent = e->parent[0] ? sift_corpus_find(s->camp.corpus, e->parent) : -1;
    if (parent >= 0 && s->camp.queue_id[parent] >= 0)
        snprintf(src, sizeof src, "src:%06ld,", s->camp.queue_id[parent]);
    snprintf(op, sizeof op, "%s", e->op[0] ? e->op : "havoc");
    size_t n = strlen(op);
    if (n && op[n - 1] == '-') op[n - 1] = '\0';
    sift_outdir_safe(op);
    snprintf(desc, cap, "%stime:%llu,execs:%llu,op:%s", src,
             (unsigned long long)((sift_now_ns() - s->start_ns) / SIFT_MS_NS),
             (unsigned long long)sift_super_execs(s), op);
}

void sift_super_sync_failed(void *ctx, size_t item, sift_replay_failure why, int status,
                            const char *artifact)
{
    sift_super *s = ctx;
    char path[4096];
    sift_human_name(sift_sync_path(s->sync, item), path, sizeof path);
    if (why == SIFT_REPLAY_UNREADABLE) {
        fprintf(stderr, "sift: sync: %s: cannot be read; skipped\n", path);
        return;
    }
    bool hang = why == SIFT_REPLAY_HANG;
    fprintf(stderr, "sift: sync: %s %s the target; skipped%s%s\n", path, hang ? "hangs" : "crashes",
            *artifact ? ", artifact " : "", artifact);
    if (hang)
        s->hangs++;
    else
        s->crashes++;
    char desc[256];
    sift_sync_describe(s->sync, item, desc, sizeof desc);
    if (*artifact) save_fault(s, hang, status, artifact, desc);
}
