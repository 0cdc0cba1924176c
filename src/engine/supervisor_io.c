/* The supervisor's setup, reports and names. */
#define _GNU_SOURCE
#include "engine/supervisor_io.h"
#include "engine/artifact.h"
#include "engine/fault.h"
#include "engine/humanize.h"
#include "engine/view.h"
#include "rt/rt.h"
#include "sift/version.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SECOND_NS              1000000000ull
#define COUNT_EVERY_NS         (SECOND_NS / 4) /* cov and ft cost a pass over the snapshot */
#define PLOT_EVERY_NS          (5 * SECOND_NS)
#define DEFAULT_MAX_LEN        4096
#define SEED_MAX_READ          (1u << 20)
#define ECHO_MAX               ((off_t)32 * 1024)
#define SIFT_SUPER_MAX_WORKERS 1024

/* Smallest first, as libFuzzer loads seeds; on a tie the queue's copy runs first, so that
 * another copy of the same input adds nothing and is not written to the queue again. */
static int by_size(const void *a, const void *b)
{
    const sift_replay_item *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return (x->data > y->data) - (x->data < y->data);
}

static int list_inputs(sift_super *s)
{
    const sift_options *o = s->o;
    size_t from_queue = 0;
    if (s->has_out && sift_outdir_list_queue(&s->out, &s->paths) != 0) return -1;
    from_queue = s->paths.count;
    size_t first_dir_end = from_queue;
    char err[4352];
    for (size_t i = 0; i < o->ninputs; i++) {
        if (sift_fs_list(&s->paths, o->inputs[i], err, sizeof err) != 0) {
            fprintf(stderr, "sift: corpus folder %s\n", err);
            return -1;
        }
        if (i == 0) first_dir_end = s->paths.count;
    }
    if (s->paths.skipped)
        fprintf(stderr, "sift: corpus: skipped %zu entries that are not readable files (%s%s)\n",
                s->paths.skipped, s->paths.skipped > 1 ? "first: " : "", s->paths.first_skip);
    size_t n = s->paths.count ? s->paths.count : 1;
    s->items = calloc(n, sizeof(*s->items));
    s->info = calloc(n, sizeof(*s->info));
    if (!s->items || !s->info) return -1;
    size_t largest = 0;
    for (size_t i = 0; i < s->paths.count; i++) {
        struct stat st;
        s->items[i].path = s->paths.paths[i];
        s->items[i].size = stat(s->paths.paths[i], &st) == 0 ? (size_t)st.st_size : 0;
        /* Sorting moves items: the data pointer carries the index to the info array. */
        s->items[i].data = (const uint8_t *)(uintptr_t)(i + 1);
        if (s->items[i].size > largest) largest = s->items[i].size;
    }
    qsort(s->items, s->paths.count, sizeof(*s->items), by_size);
    for (size_t i = 0; i < s->paths.count; i++) {
        size_t was = (size_t)(uintptr_t)s->items[i].data - 1;
        s->items[i].data = NULL;
        const char *base = strrchr(s->items[i].path, '/') + 1;
        sift_super_item *it = &s->info[i];
        it->base = base;
        it->queue_id = -1;
        if (was < from_queue) {
            it->where = SIFT_ON_QUEUE | (strstr(base, ",orig:") ? SIFT_ON_SEED : 0);
            it->queue_id = sift_outdir_id(base);
        } else {
            it->where = was < first_dir_end ? SIFT_ON_DIR : SIFT_ON_SEED;
        }
    }
    s->nitems = s->paths.count;
    if (!s->nitems) {
        /* Nothing saved: the campaign starts from one newline, as libFuzzer does. */
        static const uint8_t newline[] = "\n";
        s->items[0] = (sift_replay_item){.data = newline, .size = 1};
        s->info[0] = (sift_super_item){.where = SIFT_ON_SEED, .queue_id = -1, .base = "newline"};
        s->nitems = 1;
    }
    if (o->max_len)
        s->max_len = (size_t)o->max_len;
    else
        s->max_len = largest > SEED_MAX_READ     ? SEED_MAX_READ
                     : largest > DEFAULT_MAX_LEN ? largest
                                                 : DEFAULT_MAX_LEN;
    return 0;
}

static int open_log(sift_super *s, unsigned k, const char *dir)
{
    char path[4096];
    if (k == s->n)
        snprintf(path, sizeof path, "%s/sync.log", dir);
    else if (s->has_out)
        snprintf(path, sizeof path, "%s/worker-%u.log", dir, k);
    else
        snprintf(path, sizeof path, "fuzz-%u.log", k);
    s->logs[k] = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (s->logs[k] < 0) {
        fprintf(stderr, "sift: cannot create the log %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int check_args(sift_super *s)
{
    const sift_options *o = s->o;
    if (s->n > SIFT_SUPER_MAX_WORKERS) {
        fprintf(stderr, "sift: -jobs=%u: at most %d workers run at once (set -workers)\n", s->n,
                SIFT_SUPER_MAX_WORKERS);
        return -1;
    }
    for (size_t i = 0; i < o->ninputs; i++) {
        int dir = sift_fs_is_dir(o->inputs[i]);
        if (dir != 1) {
            fprintf(stderr, "sift: %s: %s\n", o->inputs[i],
                    dir < 0 ? strerror(errno) : "not a folder (-workers fuzzes corpus folders)");
            return -1;
        }
    }
    if (!o->sync_dir != !o->name) {
        fprintf(stderr, "sift: %s needs %s\n", o->sync_dir ? "-sync_dir" : "-name",
                o->sync_dir ? "-name=NAME" : "-sync_dir=DIR");
        return -1;
    }
    return 0;
}

int sift_super_setup(sift_super *s)
{
    sift_options *o = s->o;
    if (check_args(s) != 0) return 1;
    const char *out = o->out;
    if (o->sync_dir) {
        if (!(s->sync = sift_sync_open(o->sync_dir, o->name,
                                       o->max_len ? (size_t)o->max_len : SEED_MAX_READ)))
            return 1;
        if (out && strcmp(out, sift_sync_out(s->sync)) != 0) {
            fprintf(stderr, "sift: -out=%s: with -sync_dir the output folder is %s\n", out,
                    sift_sync_out(s->sync));
            return 1;
        }
        out = sift_sync_out(s->sync);
    }
    if (out) {
        if (sift_outdir_open(&s->out, out) != 0) return 1;
        s->has_out = true;
    }
    const char *corpus_dir = o->ninputs ? o->inputs[0] : NULL;
    size_t cleaned = s->has_out ? s->out.cleaned : 0;
    char err[4352];
    if (corpus_dir && (s->corpus_lock = sift_fs_lock(corpus_dir, err, sizeof err)) < 0) {
        fprintf(stderr, "sift: corpus folder %s\n", err);
        return 1;
    }
    if (corpus_dir) cleaned += sift_outdir_clean(corpus_dir);
    if (cleaned)
        fprintf(stderr, "INFO: removed %zu partial files left by a killed campaign\n", cleaned);
    if (list_inputs(s) != 0) return 1;
    sift_rt_state *rt = sift_rt();
    size_t cap[SIFT_DOMAIN_COUNT];
    if (!rt) {
        fprintf(stderr, "sift: out of memory setting up coverage maps\n");
        return 1;
    }
    sift_fuzzer_capacity(rt, cap);
    /* A ring holds several of the largest records, so that a burst of finds rarely waits. */
    size_t ring = 1u << 20;
    while (ring / 4 < s->max_len + (64u << 10))
        ring *= 2;
    if (sift_shared_map(&s->sh, s->n, s->n + 1, ring, cap) != 0 ||
        sift_shared_snapshot(&s->sh, &s->snap) != SIFT_OK) {
        fprintf(stderr, "sift: cannot map %u workers' shared memory: %s\n", s->n, strerror(errno));
        return 1;
    }
    s->slots = calloc(s->n, sizeof(*s->slots));
    s->logs = malloc((s->n + 1) * sizeof(*s->logs));
    s->cursors = calloc(s->n + 1, sizeof(*s->cursors));
    if (!s->slots || !s->logs || !s->cursors ||
        sift_campaign_init(&s->camp, corpus_dir, s->has_out ? &s->out : NULL) != 0)
        return 1;
    char logdir[4096] = ".";
    if (s->has_out) {
        snprintf(logdir, sizeof logdir, "%s/logs", s->out.dir);
        struct stat st;
        if (mkdir(logdir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "sift: cannot create %s: %s\n", logdir, strerror(errno));
            return 1;
        }
        /* A link planted there would have the logs written anywhere. */
        if (lstat(logdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "sift: -out: %s: not a folder (or a symbolic link)\n", logdir);
            return 1;
        }
    }
    for (unsigned k = 0; k <= s->n; k++)
        s->logs[k] = -1;
    for (unsigned k = 0; k < s->n + (s->sync != NULL); k++)
        if (open_log(s, k, logdir) != 0) return 1;
    if (!o->max_len)
        fprintf(stderr,
                "INFO: -max_len is not provided; sift will not generate inputs larger than %zu "
                "bytes\n",
                s->max_len);
    fprintf(stderr, "INFO: %u workers (logs: %s/%s), %zu saved inputs to replay\n", s->n,
            s->has_out ? logdir : ".", s->has_out ? "worker-N.log" : "fuzz-N.log", s->paths.count);
    s->next_pulse = 1024;
    return 0;
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
    uint64_t ms = (now - since) / 1000000ull;
    return ms ? sift_super_execs(s) * 1000ull / ms : 0;
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

void sift_super_status(sift_super *s, const char *what, size_t size)
{
    if (sift_view_active(s->view)) return; /* the live view shows all of it */
    uint64_t now = sift_now_ns();
    count(s, now);
    size_t bytes = sift_corpus_bytes(s->camp.corpus);
    char corp[32], extra[64] = "";
    if (bytes < (1u << 14))
        snprintf(corp, sizeof corp, "%zub", bytes);
    else if (bytes < (1u << 24))
        snprintf(corp, sizeof corp, "%zuKb", bytes >> 10);
    else
        snprintf(corp, sizeof corp, "%zuMb", bytes >> 20);
    if (size) snprintf(extra, sizeof extra, " L: %zu", size);
    fprintf(stderr, "#%llu\t%-6s cov: %zu ft: %zu corp: %zu/%s exec/s: %llu workers: %u%s\n",
            (unsigned long long)sift_super_execs(s), what, s->cov, s->ft,
            sift_corpus_count(s->camp.corpus), corp, (unsigned long long)exec_per_sec(s, now), s->n,
            extra);
}

static int write_json(sift_super *s, uint64_t now)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return 0;
    double elapsed = (double)(now - s->start_ns) / 1e9;
    fprintf(f,
            "{\"execs\": %llu, \"exec_per_sec\": %llu, \"elapsed_sec\": %.3f, \"cov\": %zu, "
            "\"ft\": %zu, \"corpus\": %zu, \"corpus_bytes\": %zu, \"favored\": %zu, "
            "\"new_units\": %llu, \"imported\": %llu, \"last_new_sec\": %.3f, \"crashes\": "
            "%llu, \"hangs\": %llu, \"replay_failed\": %llu, \"persist_lag_ms\": %.3f, "
            "\"workers\": [",
            (unsigned long long)sift_super_execs(s), (unsigned long long)exec_per_sec(s, now),
            elapsed, s->cov, s->ft, sift_corpus_count(s->camp.corpus),
            sift_corpus_bytes(s->camp.corpus), sift_corpus_favored(s->camp.corpus),
            (unsigned long long)s->found, (unsigned long long)s->imported,
            s->camp.last_find_ns ? (double)(now - s->camp.last_find_ns) / 1e9 : elapsed,
            (unsigned long long)s->crashes, (unsigned long long)s->hangs,
            (unsigned long long)s->replay_failed, (double)s->camp.persist_lag_ns / 1e6);
    for (unsigned k = 0; k < s->n; k++) {
        const sift_worker_stats *w = &s->sh.workers[k];
        const sift_super_slot *sl = &s->slots[k];
        uint64_t execs = sl->execs_before + (sl->pid > 0 ? atomic_load(&w->execs) : 0);
        uint64_t ms = (sl->alive_before + (sl->pid > 0 ? now - sl->started_ns : 0)) / 1000000ull;
        uint64_t last = atomic_load(&w->last_new_ns);
        fprintf(f,
                "%s{\"pid\": %d, \"execs\": %llu, \"exec_per_sec\": %llu, \"corpus\": %llu, "
                "\"new_units\": %llu, \"imported\": %llu, \"import_lag_ms\": %.3f, "
                "\"last_new_sec\": %.3f, \"starts\": %u}",
                k ? ", " : "", (int)sl->pid, (unsigned long long)execs,
                (unsigned long long)(ms ? execs * 1000ull / ms : 0),
                (unsigned long long)atomic_load(&w->corpus),
                (unsigned long long)atomic_load(&w->new_units),
                (unsigned long long)atomic_load(&w->imported),
                (double)atomic_load(&w->import_lag_ns) / 1e6,
                last ? (double)(now - last) / 1e9 : -1.0, sl->starts);
    }
    fprintf(f, "]}\n");
    /* A memory stream that ran out of memory holds part of the text, or none: this round
     * writes nothing, as when the stream could not be opened. */
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        free(buf);
        return 0;
    }
    int rc = sift_write_atomic(s->o->stats_file, (const uint8_t *)buf, len);
    if (rc != 0)
        fprintf(stderr, "sift: cannot write stats file %s: %s\n", s->o->stats_file,
                strerror(errno));
    free(buf);
    return rc;
}

static int write_afl_stats(sift_super *s, uint64_t now, bool plot)
{
    uint64_t execs = sift_super_execs(s), unix_now = (uint64_t)time(NULL);
    double minute = 0;
    if (s->minute_ns && now > s->minute_ns)
        minute = (double)(execs - s->minute_execs) * 1e9 / (double)(now - s->minute_ns);
    if (!s->minute_ns || now - s->minute_ns >= 60 * SECOND_NS) {
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
        .last_find = lf ? unix_now - (now - lf) / SECOND_NS : 0,
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
    s->next_stats_ns = now + SECOND_NS;
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
    sift_view_worker *workers = calloc(s->n, sizeof(*workers));
    if (!workers) return;
    for (unsigned k = 0; k < s->n; k++) {
        const sift_super_slot *sl = &s->slots[k];
        workers[k] = (sift_view_worker){
            .pid = sl->pid,
            .execs = sl->execs_before + (sl->pid > 0 ? atomic_load_explicit(&s->sh.workers[k].execs,
                                                                            memory_order_relaxed)
                                                     : 0),
            .starts = sl->starts,
            .finished = sl->finished,
        };
        uint64_t ms = (sl->alive_before + (sl->pid > 0 ? now - sl->started_ns : 0)) / 1000000ull;
        workers[k].exec_per_sec_avg = ms ? workers[k].execs * 1000ull / ms : 0;
    }
    count(s, now);
    /* A find drained after NOW was taken is new as of now. */
    uint64_t lf = s->camp.last_find_ns < now ? s->camp.last_find_ns : now;
    sift_view_stats st = {
        .target = s->argv[0],
        .run_ns = now - s->start_ns,
        .execs = sift_super_execs(s),
        .exec_per_sec = exec_per_sec(s, now),
        .cov = s->cov,
        .ft = s->ft,
        .corpus = sift_corpus_count(s->camp.corpus),
        .favored = sift_corpus_favored(s->camp.corpus),
        .corpus_bytes = sift_corpus_bytes(s->camp.corpus),
        .crashes = s->crashes - s->ooms,
        .timeouts = s->hangs,
        .ooms = s->ooms,
        .found_any = lf != 0,
        .since_new_ns = lf ? now - lf : 0,
        .nworkers = s->n,
        .workers = workers,
    };
    if (final)
        sift_view_finish(&s->view, &st, now);
    else
        sift_view_update(s->view, &st, now);
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
    if (sift_fs_read(artifact, SEED_MAX_READ, &data, &size, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "sift: cannot keep the fault in -out: %s\n", err);
        return;
    }
    uint64_t ms = (sift_now_ns() - s->start_ns) / 1000000ull;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGABRT;
    if (hang)
        snprintf(name, sizeof name, "time:%llu,execs:%llu%s%s", (unsigned long long)ms,
                 (unsigned long long)sift_super_execs(s), *desc ? "," : "", desc);
    else
        snprintf(name, sizeof name, "sig:%02d,time:%llu,execs:%llu%s%s", sig,
                 (unsigned long long)ms, (unsigned long long)sift_super_execs(s), *desc ? "," : "",
                 desc);
    if (sift_campaign_fault(&s->camp, hang, data, size, name) < 0) sift_super_unsaved(s);
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
             (unsigned long long)((sift_now_ns() - s->start_ns) / 1000000ull),
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
