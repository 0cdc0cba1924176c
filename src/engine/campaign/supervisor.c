/* The supervisor: one event loop that drains the discovery log into the campaign's corpus,
 * waits for workers and replaces the dead, runs replays (resume, sync imports) in children,
 * and reports. It sleeps between rounds of 20 ms, so that the workers keep the cores. */
#define _GNU_SOURCE
#include "engine/campaign/supervisor.h"
#include "engine/base/files.h"
#include "engine/base/clock.h"
#include "engine/campaign/store.h"
#include "engine/contain/fault.h"
#include "engine/campaign/outdir.h"
#include "engine/campaign/replay.h"
#include "engine/campaign/super_report.h"
#include "engine/campaign/super_setup.h"
#include "engine/campaign/sync.h"
#include "engine/progress/view.h"
#include "engine/campaign/worker.h"
#include "engine/base/humanize.h"

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

/* Signals reach the supervisor's handlers without context: what came is the one global the
 * supervisor needs. */
static struct {
    volatile sig_atomic_t interrupts; /* SIGINT and SIGTERM */
    volatile sig_atomic_t graceful;   /* SIGUSR1 or SIGUSR2: libFuzzer's graceful exit */
} g_signals;

#define ROUND_MS       20
#define SETTLE_NS      (SIFT_SECOND_NS / 2)
#define QUICK_DEATH_NS SIFT_SECOND_NS /* a worker dying this soon after its start */
#define QUICK_DEATHS   10             /* in a row: the target cannot be fuzzed as it is */
#define STOP_GRACE_NS  (10 * SIFT_SECOND_NS)
/* After SIGINT or SIGTERM: workers still running then are killed, and what the rings still
 * hold is not saved (it was never reported), so that the campaign ends within two seconds. */
#define INTERRUPT_GRACE_NS (SIFT_SECOND_NS / 2)
/* Finds staged between two flushes (one syncfs a file system for all of them). */
#define DRAIN_BATCH 256
/* How long one round may drain before the loop looks at signals, budgets and workers. */
#define DRAIN_SLICE_NS (100 * SIFT_MS_NS)

static void on_interrupt(int sig)
{
    (void)sig;
    if (++g_signals.interrupts > 1) _exit(1); /* the workers follow: they die with the supervisor */
}

static void on_graceful_exit(int sig)
{
    (void)sig;
    g_signals.graceful = 1;
}

/* What a signal asked for: SIFT_STOP_INTERRUPT, SIFT_STOP_GRACEFUL or SIFT_STOP_NONE. */
static int signalled_stop(void)
{
    if (g_signals.interrupts) return SIFT_STOP_INTERRUPT;
    return g_signals.graceful ? SIFT_STOP_GRACEFUL : SIFT_STOP_NONE;
}

/* The end of a merge, or of the replay before a campaign, that a signal stopped: libFuzzer's
 * line, and its exit code. */
static int stopped_early(void)
{
    if (signalled_stop() == SIFT_STOP_INTERRUPT) return sift_fault_interrupted();
    sift_fault_say_stop(SIFT_STOP_GRACEFUL);
    return 0;
}

unsigned sift_super_workers(const sift_options *o)
{
    long long n = o->workers ? o->workers : o->jobs ? o->jobs : o->fork;
    return (unsigned)n;
}

/* Whether a signal asked the campaign to stop; the first time it is seen, notes when. */
static bool interrupted(sift_super *s)
{
    bool stop = signalled_stop() != SIFT_STOP_NONE;
    if (stop && !s->interrupted_ns) s->interrupted_ns = sift_now_ns();
    return stop;
}

/* UNTIL_NS, or sooner when an interrupt's grace ends before it. */
static uint64_t until_or_grace(sift_super *s, uint64_t until_ns)
{
    if (!interrupted(s)) return until_ns;
    uint64_t grace = s->interrupted_ns + INTERRUPT_GRACE_NS;
    return grace < until_ns ? grace : until_ns;
}

/* Takes one record of ring R into the corpus; returns whether the ring had one. */
static bool take_one(sift_super *s, unsigned r, size_t *nnew)
{
    sift_dlog_entry e;
    if (sift_dlog_read(&s->sh.log, r, &s->cursors[r], &e, &s->rd) != 1) return false;
    if (s->replaying) {
        const sift_super_item *it = &s->info[e.origin < s->nitems ? e.origin : 0];
        sift_store_replayed(&s->camp, &e, e.origin, it->where, it->queue_id);
        return true;
    }
    char desc[256];
    bool synced = r == s->n && s->sync;
    if (synced)
        sift_sync_describe(s->sync, e.origin, desc, sizeof desc);
    else
        sift_super_describe_find(s, &e, desc, sizeof desc);
    int taken = sift_store_take(&s->camp, &e, desc);
    if (taken < 0) sift_super_unsaved(s);
    if (taken > 0 && sift_super_note_find(s, e.size, synced) == 0) ++*nnew;
    return true;
}

/* Takes records from the rings in turn until DRAIN_BATCH finds wait for their flush or the
 * rings are empty; returns how many records it read. Each ring's room goes back to its
 * producer as soon as its records are copied out: the supervisor's copy is what gets saved. */
static size_t take_batch(sift_super *s, size_t *nnew)
{
    size_t read = 0;
    for (bool more = true; more && *nnew < DRAIN_BATCH;) {
        more = false;
        for (unsigned r = 0; r < s->sh.log.nrings && *nnew < DRAIN_BATCH; r++)
            if (take_one(s, r, nnew)) {
                sift_dlog_release(&s->sh.log, r, s->cursors[r]);
                read++;
                more = true;
            }
    }
    return read;
}

/* Saves what the rings hold, a batch at a time: a find is reported only once its files are in
 * place. Returns at UNTIL_NS even when finds keep coming, so that the loop looks at signals,
 * budgets and workers: meanwhile the producers wait for room, which paces them to the disk. */
static void drain(sift_super *s, uint64_t until_ns)
{
    for (;;) {
        size_t nnew = 0, read = take_batch(s, &nnew);
        if (nnew && sift_store_flush(&s->camp) != 0) {
            sift_super_unsaved(s);
            s->nfinds = 0;
            return;
        }
        if (nnew) sift_super_report_finds(s);
        if (!read || s->unsaved || sift_now_ns() >= until_or_grace(s, until_ns)) return;
    }
}

/* One round's share of draining. */
static void drain_slice(sift_super *s)
{
    drain(s, sift_now_ns() + DRAIN_SLICE_NS);
}

/* Everything the rings hold, once their producers are gone (with producers running, it would
 * not return while finds keep coming). */
static void drain_all(sift_super *s)
{
    drain(s, UINT64_MAX);
}

static void run_replay(sift_super *s, sift_replay *rp) SIFT_FRAME(run_replay);
static void run_replay(sift_super *s, sift_replay *rp)
{
    if (sift_replay_start(rp) != 0) {
        s->stopping = true;
        s->exit_code = 1;
    }
    while (sift_replay_poll(rp, ROUND_MS) > 0) {
        drain_slice(s);
        if (interrupted(s)) break;
    }
    sift_replay_end(rp);
    drain_all(s);
}

static void replay_failed(void *ctx, size_t item, sift_replay_failure why, int status,
                          const char *artifact)
{
    sift_super *s = ctx;
    s->replay_failed++;
    char path[4096];
    sift_human_name(s->items[item].path ? s->items[item].path : "the empty start input", path,
                    sizeof path);
    if (why == SIFT_REPLAY_UNREADABLE) {
        fprintf(stderr, "sift: replay: %s cannot be read; skipped\n", path);
        return;
    }
    bool hang = why == SIFT_REPLAY_HANG;
    fprintf(stderr, "sift: replay: %s %s the target%s%s; skipped\n", path,
            hang ? "hangs" : "crashes", *artifact ? ", artifact " : "", artifact);
    /* A crash seen is kept where the campaign keeps its crashes, whichever process saw it. */
    if (*artifact && s->has_out) sift_super_save_fault(s, hang, status, artifact);
}

static void describe_item(void *ctx, size_t item, unsigned *where, char *desc, size_t cap)
{
    sift_super *s = ctx;
    *where = s->info[item].where;
    char base[128];
    snprintf(base, sizeof base, "%s", s->info[item].base);
    sift_outdir_safe(base);
    snprintf(desc, cap, "time:0,execs:0,orig:%s", base);
}

/* Resume: every saved input runs once in replay children, so that the shared snapshot and
 * the corpus know their coverage before any worker starts; those that now crash or hang are
 * reported and skipped, those that add nothing stay on disk but out of the corpus. */
static int replay_saved(sift_super *s) SIFT_FRAME(replay_saved);
static int replay_saved(sift_super *s)
{
    sift_replay rp = {.opts = s->o,
                      .sh = &s->sh,
                      .target = s->target,
                      .argv0 = s->argv[0],
                      .items = s->items,
                      .n = s->nitems,
                      .first_ring = 0,
                      .nchildren = s->n < s->nitems ? s->n : (unsigned)s->nitems,
                      .log_fds = s->logs,
                      .announce_known = true,
                      .on_fail = replay_failed,
                      .ctx = s};
    s->replaying = true;
    run_replay(s, &rp);
    s->replaying = false;
    if (interrupted(s) || s->stopping) return -1;
    long written = sift_store_reconcile(&s->camp, describe_item, s);
    if (written < 0) return -1;
    sift_store_settle(&s->camp);
    fprintf(stderr,
            "INFO: replayed %zu inputs: %zu kept, %zu favored, %llu failed and skipped; %ld files "
            "written where missing\n",
            s->nitems, sift_corpus_count(s->camp.corpus), sift_corpus_favored(s->camp.corpus),
            (unsigned long long)s->replay_failed, written);
    return 0;
}

static void start_worker(sift_super *s, unsigned k) SIFT_FRAME(start_worker);
static void start_worker(sift_super *s, unsigned k)
{
    sift_super_slot *w = &s->slots[k];
    sift_store_settle(&s->camp);
    sift_worker_stats *st = &s->sh.workers[k];
    atomic_store(&st->execs, 0);
    atomic_store(&st->resync, 0);
    w->log_from = lseek(s->logs[k], 0, SEEK_END);
    w->started_ns = sift_now_ns();
    w->starts++;
    /* -runs counts the campaign's executions: each worker gets its share of what is left. */
    long long runs = s->o->runs;
    if (runs >= 0) {
        uint64_t done = sift_super_execs(s);
        runs = done >= (uint64_t)runs ? 0 : (runs - (long long)done + s->n - 1) / s->n;
    }
    sift_worker_seed seed = {.corpus = s->camp.corpus,
                             .data = s->camp.data,
                             .cursors = s->cursors,
                             .max_len = s->max_len,
                             .runs = runs};
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        (void)signal(SIGINT, SIG_DFL);
        (void)signal(SIGTERM, SIG_DFL);
        sift_shared_child(parent, s->logs[k]);
        int rc = sift_worker_run(s->o, &s->sh, k, &seed, s->target, s->argc, s->argv);
        fflush(NULL);
        _exit(rc);
    }
    if (pid < 0) {
        fprintf(stderr, "sift: cannot fork worker %u: %s\n", k, strerror(errno));
        s->stopping = true;
        s->exit_code = 1;
        return;
    }
    w->pid = pid;
}

/* Whether the fault of worker K (its SUMMARY line) was reported before; remembers it when not.
 * A campaign that goes on after a fault finds the same one again and again: each is reported
 * once, as libFuzzer's -fork dedupes its crashes. */
static bool seen_before(sift_super *s, unsigned k)
{
    char line[512];
    if (sift_shared_summary(s->logs[k], s->slots[k].log_from, line, sizeof line) != 0) return false;
    for (size_t i = 0; i < s->nfaults_seen; i++)
        if (!strcmp(s->faults_seen[i], line)) return true;
    char **grown = realloc(s->faults_seen, (s->nfaults_seen + 1) * sizeof(*grown));
    if (!grown) return false;
    s->faults_seen = grown;
    if ((grown[s->nfaults_seen] = strdup(line))) s->nfaults_seen++;
    return false;
}

/* A worker died of its input: its containment wrote the artifact; -out keeps a copy too. The
 * campaign ends there, as libFuzzer's -fork ends, unless -ignore_crashes (-ignore_timeouts,
 * -ignore_ooms) says to go on. */
static void worker_fault(sift_super *s, unsigned k, int status, uint64_t lived_ns)
{
    sift_super_slot *w = &s->slots[k];
    const sift_options *o = s->o;
    bool hang = WIFEXITED(status) && WEXITSTATUS(status) == o->timeout_exitcode;
    bool oom = !hang && WIFEXITED(status) && WEXITSTATUS(status) == SIFT_EXIT_OOM;
    bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    bool go_on = hang ? o->ignore_timeouts : oom ? o->ignore_ooms : o->ignore_crashes;
    char artifact[4096] = "", how[64];
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
    else
        snprintf(how, sizeof how, "exit code %d", WEXITSTATUS(status));
    bool dup = !killed && go_on && seen_before(s, k);
    if (!dup) sift_super_echo_log(s, k);
    int found = sift_shared_artifact(s->logs[k], w->log_from, artifact, sizeof artifact);
    bool have = found == 0;
    /* The worker's report above says which artifact could not be written, and why: a
     * campaign that cannot keep what it finds stops. */
    if (found == -2) sift_super_unsaved(s);
    if (!killed) {
        if (hang) {
            s->hangs++;
            s->last_hang_unix = (uint64_t)time(NULL);
        } else {
            s->crashes++;
            if (oom) s->ooms++;
            s->last_crash_unix = (uint64_t)time(NULL);
            s->execs_at_crash = sift_super_execs(s);
        }
        if (!go_on) s->stopping = true;
    }
    fprintf(stderr, "#%llu\t%s worker %u %s%s%s%s; %s\n", (unsigned long long)sift_super_execs(s),
            killed ? "KILLED"
            : hang ? "HANG  "
                   : "CRASH ",
            k, how, have ? ", artifact " : "", artifact, dup ? " (seen before)" : "",
            s->stopping ? "campaign ending" : "starting another");
    if (have && s->camp.out) sift_super_save_fault(s, hang, status, artifact);
    /* An input the campaign goes on after is no sign of a target that cannot run. */
    if (go_on && have && !killed) return;
    s->quick_deaths = !killed && lived_ns < QUICK_DEATH_NS ? s->quick_deaths + 1 : 0;
    if (s->quick_deaths >= QUICK_DEATHS) {
        fprintf(stderr,
                "sift: workers died %d times in a row within a second of starting "
                "(last: %s); stopping\n",
                QUICK_DEATHS, how);
        s->stopping = true;
        if (!s->exit_code) s->exit_code = (int)o->error_exitcode;
    }
}

static void reap_workers(sift_super *s) SIFT_FRAME(reap_workers);
static void reap_workers(sift_super *s)
{
    /* Workers only, by pid: replay children are their replay's to reap. */
    for (unsigned k = 0; k < s->n; k++) {
        sift_super_slot *w = &s->slots[k];
        int status;
        if (w->pid <= 0 || waitpid(w->pid, &status, WNOHANG) != w->pid) continue;
        sift_worker_stats *st = &s->sh.workers[k];
        w->execs_before += atomic_load(&st->execs);
        w->pid = 0;
        uint64_t lived = sift_now_ns() - w->started_ns;
        w->alive_before += lived;
        bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (clean && atomic_load(&st->resync)) {
            fprintf(stderr, "INFO: worker %u fell behind the discovery log; restarted\n", k);
        } else if (clean) {
            w->finished = true; /* its own budget (-runs, -max_total_time) ran out */
            continue;
        } else {
            worker_fault(s, k, status, lived);
        }
        if (!s->stopping) start_worker(s, k);
    }
}

/* Whether the campaign has spent its -max_total_time or -runs (saying so in libFuzzer's fork
 * mode's words), or all its workers finished. */
static bool out_of_budget(sift_super *s, uint64_t now)
{
    const sift_options *o = s->o;
    uint64_t seconds = (now - s->start_ns) / SIFT_SECOND_NS;
    if (o->max_total_time && seconds >= (uint64_t)o->max_total_time) {
        fprintf(stderr, "INFO: fuzzed for %llu seconds, wrapping up soon\n",
                (unsigned long long)seconds);
        return true;
    }
    uint64_t execs = sift_super_execs(s);
    if (o->runs >= 0 && execs >= (uint64_t)o->runs) {
        fprintf(stderr, "INFO: fuzzed for %llu iterations, wrapping up soon\n",
                (unsigned long long)execs);
        return true;
    }
    unsigned finished = 0;
    for (unsigned k = 0; k < s->n; k++)
        finished += s->slots[k].finished;
    return finished == s->n;
}

static bool sync_ring_empty(const sift_super *s)
{
    return sift_dlog_head(&s->sh.log, s->n) == s->cursors[s->n];
}

/* A sync round: the peers' new entries run in one child on the sync ring. */
static void sync_round(sift_super *s, uint64_t now) SIFT_FRAME(sync_round);
static void sync_round(sift_super *s, uint64_t now)
{
    if (s->syncing) {
        if (sift_replay_poll(&s->sync_rp, 0) > 0) return;
        sift_replay_end(&s->sync_rp);
        s->syncing = false;
        /* The sync ring is finite now, the workers' rings may not be: drained slice by slice
         * until the sync ring is empty, the peers' entries count as imported only then. */
        while (!sync_ring_empty(s) && !s->unsaved && !interrupted(s))
            drain_slice(s);
        if (!sync_ring_empty(s)) return;
        if (sift_sync_commit(s->sync) != 0) {
            s->stopping = true;
            s->exit_code = 1;
        }
        return;
    }
    const sift_replay_item *items;
    size_t n = sift_sync_scan(s->sync, now, &items);
    if (!n) return;
    s->sync_rp = (sift_replay){.opts = s->o,
                               .sh = &s->sh,
                               .target = s->target,
                               .argv0 = s->argv[0],
                               .items = items,
                               .n = n,
                               .nchildren = 1,
                               .first_ring = s->n,
                               .log_fds = &s->logs[s->n],
                               .on_fail = sift_super_sync_failed,
                               .ctx = s};
    if (sift_replay_start(&s->sync_rp) == 0) s->syncing = true;
}

static void stop_workers(sift_super *s) SIFT_FRAME(stop_workers);
static void stop_workers(sift_super *s)
{
    sift_shared_stop(&s->sh);
    uint64_t deadline = sift_now_ns() + STOP_GRACE_NS +
                        (s->o->timeout > 0 ? (uint64_t)s->o->timeout * SIFT_SECOND_NS : 0);
    for (;;) {
        reap_workers(s);
        drain_slice(s);
        unsigned alive = 0;
        for (unsigned k = 0; k < s->n; k++)
            alive += s->slots[k].pid > 0;
        if (!alive) break;
        if (sift_now_ns() > until_or_grace(s, deadline))
            for (unsigned k = 0; k < s->n; k++)
                if (s->slots[k].pid > 0) kill(s->slots[k].pid, SIGKILL);
        struct timespec nap = {0, ROUND_MS * 1000000L};
        nanosleep(&nap, NULL);
    }
    if (s->syncing) {
        sift_replay_end(&s->sync_rp);
        s->syncing = false;
    }
    drain_all(s);
}

static int campaign(sift_super *s) SIFT_FRAME(campaign);
static int campaign(sift_super *s)
{
    if (replay_saved(s) != 0) {
        if (interrupted(s)) return stopped_early();
        return s->exit_code ? s->exit_code : 1;
    }
    s->fuzz_start_ns = sift_now_ns();
    for (unsigned k = 0; k < s->n && !s->stopping; k++)
        start_worker(s, k);
    if (sift_view_wanted(s->o)) s->view = sift_view_start();
    bool view = s->view != NULL;
    sift_super_status(s, "INITED", 0);
    uint64_t settled = 0;
    while (!s->stopping) {
        struct timespec nap = {0, ROUND_MS * 1000000L};
        nanosleep(&nap, NULL);
        drain_slice(s);
        reap_workers(s);
        /* After the drain, which may take a while: rates divide by real elapsed time. */
        uint64_t now = sift_now_ns();
        if (now - settled >= SETTLE_NS) {
            sift_store_settle(&s->camp);
            settled = now;
        }
        if (s->sync && !s->stopping) sync_round(s, now);
        sift_super_report(s, now, false);
        if (view && sift_view_due(s->view, now)) sift_super_view(s, now, false);
        if (interrupted(s) || out_of_budget(s, now)) s->stopping = true;
    }
    stop_workers(s);
    sift_store_settle(&s->camp);
    sift_super_report(s, sift_now_ns(), true);
    sift_super_status(s, "DONE", 0);
    if (view) sift_super_view(s, sift_now_ns(), true);
    sift_fault_say_stop(signalled_stop());
    uint64_t seconds = (sift_now_ns() - s->start_ns) / SIFT_SECOND_NS;
    fprintf(stderr, "Done %llu runs in %llu second(s)\n", (unsigned long long)sift_super_execs(s),
            (unsigned long long)seconds);
    int rc = s->exit_code ? s->exit_code
             : s->crashes ? (int)s->o->error_exitcode
             : s->hangs   ? (int)s->o->timeout_exitcode
                          : 0;
    fprintf(stderr, "INFO: exiting: %d time: %llus\n", rc, (unsigned long long)seconds);
    return rc;
}

/* Replays the items of S whose origin matches WHERE, in parallel, into the corpus. */
static void replay_part(sift_super *s, unsigned where) SIFT_FRAME(replay_part);
static void replay_part(sift_super *s, unsigned where)
{
    sift_replay_item *all = s->items;
    sift_super_item *info = s->info;
    size_t nall = s->nitems, n = 0;
    sift_replay_item *items = calloc(nall, sizeof(*items));
    sift_super_item *part = calloc(nall, sizeof(*part));
    for (size_t i = 0; items && part && i < nall; i++)
        if (info[i].where & where) {
            items[n] = all[i];
            part[n++] = info[i];
        }
    s->items = items;
    s->info = part;
    s->nitems = n;
    sift_replay rp = {.opts = s->o,
                      .sh = &s->sh,
                      .target = s->target,
                      .argv0 = s->argv[0],
                      .items = items,
                      .n = n,
                      .nchildren = s->n < n ? s->n : (unsigned)n,
                      .log_fds = s->logs,
                      .on_fail = replay_failed,
                      .ctx = s};
    s->replaying = true;
    if (n) run_replay(s, &rp);
    s->replaying = false;
    s->items = all;
    s->info = info;
    s->nitems = nall;
    free(items);
    free(part);
}

/* -merge=1 with workers: the covering set of the inputs, found in parallel. */
static int merge(sift_super *s) SIFT_FRAME(merge);
static int merge(sift_super *s)
{
    const sift_options *o = s->o;
    if (o->ninputs < 2) {
        fprintf(stderr, "sift: -merge=1 needs at least two corpus folders (into, from...)\n");
        return 1;
    }
    size_t cov0, ft0, cov1, ft1;
    replay_part(s, SIFT_ON_DIR);
    if (interrupted(s)) return stopped_early();
    unsigned mask = o->features | (o->use_value_profile ? SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP) : 0);
    sift_snapshot_count(s->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &cov0, NULL);
    sift_snapshot_count(s->snap, mask, NULL, &ft0);
    size_t before = sift_corpus_count(s->camp.corpus);
    replay_part(s, SIFT_ON_SEED);
    sift_snapshot_count(s->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &cov1, NULL);
    sift_snapshot_count(s->snap, mask, NULL, &ft1);
    if (interrupted(s)) return stopped_early();
    /* The covering set of everything replayed: among inputs with the same features, the
     * smallest and fastest; only those not in the first folder are written to it. */
    sift_store_settle(&s->camp);
    size_t added = 0;
    for (size_t i = before; i < sift_corpus_count(s->camp.corpus); i++) {
        const sift_entry *e = sift_corpus_at(s->camp.corpus, i);
        char path[4096];
        if (!e->favored) continue;
        snprintf(path, sizeof path, "%s/%s", o->inputs[0], e->name);
        if (sift_write_atomic(path, s->camp.data[i], e->size) != 0) {
            fprintf(stderr, "sift: merge: cannot write %s: %s\n", path, strerror(errno));
            return 1;
        }
        added++;
    }
    fprintf(stderr,
            "MERGE-OUTER: %zu new files with %zu new features added; %zu new coverage edges%s\n",
            added, ft1 - ft0, cov1 - cov0, s->replay_failed ? " (some inputs skipped)" : "");
    return 0;
}

static void free_super(sift_super *s)
{
    for (size_t i = 0; i < s->nfaults_seen; i++)
        free(s->faults_seen[i]);
    free(s->faults_seen);
    sift_super_remove_tmp_logs(s);
    for (unsigned k = 0; s->logs && k <= s->n; k++)
        if (s->logs[k] >= 0) close(s->logs[k]);
    free(s->logs);
    free(s->slots);
    free(s->finds);
    free(s->cursors);
    free(s->items);
    free(s->info);
    sift_pathlist_free(&s->paths);
    sift_dlog_scratch_free(&s->rd);
    sift_store_free(&s->camp);
    if (s->has_out) sift_outdir_close(&s->out);
    if (s->corpus_lock >= 0) close(s->corpus_lock);
    if (s->sync) sift_sync_close(s->sync);
    sift_snapshot_free(s->snap);
    sift_shared_unmap(&s->sh);
}

int sift_super_main(sift_options *o, int argc, char **argv, sift_target_fn target)
{
    sift_super s = {.o = o,
                    .target = target,
                    .argc = argc,
                    .argv = argv,
                    .n = sift_super_workers(o),
                    .corpus_lock = -1,
                    .start_ns = sift_now_ns(),
                    .start_unix = (uint64_t)time(NULL)};
    int rc = sift_super_setup(&s);
    if (rc == 0) {
        struct sigaction sa = {.sa_handler = on_interrupt};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sa.sa_handler = on_graceful_exit;
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGUSR2, &sa, NULL);
        rc = o->merge ? merge(&s) : campaign(&s);
    }
    free_super(&s);
    return rc;
}
