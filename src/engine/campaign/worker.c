/* A worker: the fuzzer's loop with three hooks. Its finds go into its own ring of the
 * discovery log; every other ring is read at short intervals and the entries taken into its
 * corpus with the features their producer recorded, without running them. */
#include "engine/campaign/worker.h"
#include "engine/campaign/groups.h"
#include "engine/base/files.h"
#include "engine/base/clock.h"
#include "engine/contain/handlers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* A worker reads the log when something was published and this much time or this many
 * executions went by since it last read it: often enough that a find reaches everyone within
 * a second, seldom enough to cost nothing. */
#define READ_EVERY_NS    100000000ull
#define READ_EVERY_EXECS 1024u

typedef struct {
    sift_shared *sh;
    unsigned index;
    sift_worker_stats *stats;
    const sift_worker_seed *seed;
    uint64_t *cursors;
    uint64_t seen_generation, read_at_execs, read_at_ns;
    sift_dlog_scratch pub, rd;
    bool grouped; /* -fork_corpus_groups */
    sift_groups groups;
} worker;

int sift_worker_share(sift_fuzzer *f, const sift_shared *sh)
{
    sift_snapshot *shared;
    int rc = sift_shared_snapshot(sh, &shared);
    if (rc != SIFT_OK) {
        fprintf(stderr, "sift: cannot join the shared coverage snapshot: %s\n", sift_strerror(rc));
        return -1;
    }
    sift_snapshot_free(f->snap);
    f->snap = shared;
    return 0;
}

static void publish_stats(worker *w, sift_fuzzer *f)
{
    atomic_store_explicit(&w->stats->corpus, sift_corpus_count(f->corpus), memory_order_relaxed);
}

static int seed_corpus(void *ctx, sift_fuzzer *f)
{
    worker *w = ctx;
    const sift_worker_seed *s = w->seed;
    for (size_t i = 0; i < sift_corpus_count(s->corpus); i++) {
        const sift_entry *e = sift_corpus_at(s->corpus, i);
        if (e->evicted || !s->data[i]) continue;
        sift_corpus_add(f->corpus, s->data[i], e->size, sift_corpus_entry_features(s->corpus, e),
                        e->nfeatures, e->exec_ns, e->name, 0);
    }
    memcpy(w->cursors, s->cursors, sizeof(*w->cursors) * w->sh->log.nrings);
    f->max_len = s->max_len;
    if (sift_corpus_count(f->corpus) == 0) {
        /* Mutation needs something to start from: one newline, as libFuzzer does. */
        static const uint8_t newline = '\n';
        char name[41];
        sift_sha1_hex(&newline, 1, name);
        if (!sift_corpus_add(f->corpus, &newline, 1, NULL, 0, 0, name, 0)) return -1;
    }
    sift_corpus_update(f->corpus);
    publish_stats(w, f);
    return 0;
}

static void read_log(worker *w, sift_fuzzer *f)
{
    uint64_t now = sift_now_ns(), taken = 0, lag = 0;
    w->seen_generation = sift_dlog_generation(&w->sh->log);
    for (unsigned r = 0; r < w->sh->log.nrings; r++) {
        sift_dlog_entry e;
        int rc;
        while ((rc = sift_dlog_read(&w->sh->log, r, &w->cursors[r], &e, &w->rd)) == 1) {
            if ((e.flags & SIFT_DLOG_KNOWN) ||
                !sift_corpus_add(f->corpus, e.data, e.size, e.features, e.nfeatures, e.exec_ns,
                                 e.name, f->stats.execs))
                continue; /* its own find, or one it has already */
            taken++;
            if (now > e.published_ns && now - e.published_ns > lag) lag = now - e.published_ns;
        }
        if (rc < 0) {
            /* What it missed is in the supervisor's corpus: a fresh worker starts from that. */
            fprintf(stderr, "INFO: worker %u fell behind the discovery log; restarting\n",
                    w->index);
            atomic_store_explicit(&w->stats->resync, 1, memory_order_relaxed);
            f->fault.stop_requested = SIFT_STOP_ASKED;
        }
    }
    w->read_at_execs = f->stats.execs;
    w->read_at_ns = now;
    if (!taken) return;
    atomic_fetch_add_explicit(&w->stats->imported, taken, memory_order_relaxed);
    if (lag > atomic_load_explicit(&w->stats->import_lag_ns, memory_order_relaxed))
        atomic_store_explicit(&w->stats->import_lag_ns, lag, memory_order_relaxed);
    publish_stats(w, f);
}

static void tick(void *ctx, sift_fuzzer *f)
{
    worker *w = ctx;
    atomic_store_explicit(&w->stats->execs, f->stats.execs, memory_order_relaxed);
    if (w->grouped) sift_groups_tick(&w->groups, f->corpus, f->exec.end_ns);
    if (sift_shared_stopping(w->sh)) f->fault.stop_requested = SIFT_STOP_ASKED;
    if (sift_dlog_generation(&w->sh->log) == w->seen_generation) return;
    if (f->stats.execs - w->read_at_execs < READ_EVERY_EXECS &&
        sift_now_ns() - w->read_at_ns < READ_EVERY_NS)
        return;
    read_log(w, f);
}

static void found(void *ctx, sift_fuzzer *f, const sift_entry *parent)
{
    worker *w = ctx;
    const sift_entry *e = sift_corpus_at(f->corpus, sift_corpus_count(f->corpus) - 1);
    const sift_feature_id *features = sift_corpus_entry_features(f->corpus, e);
    sift_dlog_entry d = {
        .exec_ns = e->exec_ns,
        .execs = f->stats.execs,
        .data = e->data,
        .size = e->size,
        .features = features,
        .nfeatures = features ? e->nfeatures : 0, /* none when out of memory */
    };
    memcpy(d.name, e->name, sizeof d.name);
    memcpy(d.parent, parent->name, sizeof d.parent);
    snprintf(d.op, sizeof d.op, "%s", f->mutator.trace);
    int rc = sift_dlog_publish(&w->sh->log, w->index, &d, &w->pub);
    if (rc != 0 && errno == E2BIG) {
        /* Without its features the others still get the input; only their scheduler knows
         * less about it. */
        d.nfeatures = 0;
        rc = sift_dlog_publish(&w->sh->log, w->index, &d, &w->pub);
    }
    if (rc != 0 && errno != ECANCELED) /* closed: the campaign is stopping */
        fprintf(stderr, "sift: worker %u: cannot publish %s (%zu bytes): %s\n", w->index, e->name,
                e->size, strerror(errno));
    atomic_fetch_add_explicit(&w->stats->new_units, 1, memory_order_relaxed);
    atomic_store_explicit(&w->stats->last_new_ns, sift_now_ns(), memory_order_relaxed);
    publish_stats(w, f);
}

int sift_worker_run(const sift_options *opts, sift_shared *sh, unsigned index,
                    const sift_worker_seed *seed, sift_target_fn target, int argc, char **argv)
{
    static sift_options o;
    o = *opts;
    /* Its own random stream; the supervisor alone writes the stats file and reports finds.
     * A worker's NEW lines would cost a pass over the shared snapshot each: only -verbosity=2
     * and up has them. */
    if (o.seed) o.seed += index;
    o.stats_file = NULL;
    o.status = SIFT_STATUS_LINES; /* its stderr is its log */
    o.verbosity = o.verbosity > 1 ? o.verbosity - 1 : 0;
    o.runs = seed->runs;
    const char *argv0 = argv[0];
    sift_handlers_note();
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    static sift_fuzzer f;
    worker w = {.sh = sh,
                .index = index,
                .stats = &sh->workers[index],
                .seed = seed,
                .grouped = opts->fork_corpus_groups};
    sift_groups_init(&w.groups, index, sh->nworkers);
    w.cursors = calloc(sh->log.nrings, sizeof(*w.cursors));
    if (!w.cursors || sift_fuzzer_init(&f, &o, target, argv0) != 0 || sift_worker_share(&f, sh)) {
        free(w.cursors);
        return 1;
    }
    f.hooks = (sift_fuzzer_hooks){.ctx = &w, .seed = seed_corpus, .found = found, .tick = tick};
    int rc = sift_fuzzer_run(&f);
    sift_fuzzer_free(&f);
    sift_dlog_scratch_free(&w.pub);
    sift_dlog_scratch_free(&w.rd);
    sift_groups_free(&w.groups);
    free(w.cursors);
    return rc;
}
