/* One fuzzing process: executes inputs, judges novelty, grows the corpus, prints progress. */
#include "engine/fuzzer.h"
#include "engine/artifact.h"
#include "engine/fsutil.h"
#include "engine/humanize.h"
#include "engine/stats.h"
#include "engine/view.h"
#include "rt/values.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Hooks a harness may define; weak so that harnesses without them link. */
extern int LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
    __attribute__((weak));
extern size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                        size_t size2, uint8_t *out, size_t max_out_size,
                                        unsigned int seed) __attribute__((weak));
/* Present only when the process runs under AddressSanitizer. */
extern void __asan_poison_memory_region(void const volatile *addr, size_t size)
    __attribute__((weak));

/* LLVMFuzzerMutate() is called by custom mutators with no context, so the fuzzer running in
 * this process is the engine's one global besides the signal handlers' (fault.c). */
static sift_fuzzer *sift_active_fuzzer;

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
    if (!sift_active_fuzzer || max_size == 0) return size < max_size ? size : max_size;
    return sift_mutate(&sift_active_fuzzer->mutator, data, size, max_size);
}

#define SEED_MAX_READ   (1u << 20)
#define DEFAULT_MAX_LEN 4096

uint64_t sift_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const uint8_t *pick_other(void *ctx, size_t *len)
{
    sift_fuzzer *f = ctx;
    size_t n = sift_corpus_count(f->corpus);
    if (n == 0) return NULL;
    sift_entry *e = sift_corpus_at(f->corpus, sift_rng_below(&f->rng, n));
    if (e->evicted || !e->data) return NULL;
    *len = e->size;
    return e->data;
}

void sift_fuzzer_capacity(const sift_rt_state *rt, size_t cap[SIFT_DOMAIN_COUNT])
{
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        cap[d] = sift_covmap_size(rt->map, (sift_domain)d);
    cap[SIFT_DOMAIN_EDGES] += 1u << 20; /* room for modules loaded later with dlopen */
}

int sift_fuzzer_init(sift_fuzzer *f, sift_options *opts, sift_target_fn target, const char *argv0)
{
    memset(f, 0, sizeof(*f));
    f->opts = opts;
    f->target = target;
    f->rt = sift_rt();
    if (!f->rt) {
        fprintf(stderr, "sift: out of memory setting up coverage maps\n");
        return -1;
    }
    if (opts->dict) {
        char err[512];
        if (sift_dict_load(&f->dict, opts->dict, err, sizeof err) != 0) {
            fprintf(stderr, "sift: %s\n", err);
            return -1;
        }
        fprintf(stderr, "Dictionary: %zu entries\n", f->dict.count);
    }
    f->mask = opts->features;
    if (opts->use_value_profile) f->mask |= SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP);
    f->rt->cmp_features_off = !(f->mask & SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP));
    size_t cap[SIFT_DOMAIN_COUNT];
    sift_fuzzer_capacity(f->rt, cap);
    if (sift_snapshot_create(&f->snap, cap, NULL, 0) != SIFT_OK ||
        !(f->corpus = sift_corpus_new())) {
        fprintf(stderr, "sift: out of memory setting up the corpus\n");
        return -1;
    }
    uint64_t seed = opts->seed ? (uint64_t)opts->seed
                               : (sift_now_ns() ^ (uint64_t)getpid() << 32) % 4294967291u + 1;
    opts->seed = (long long)seed;
    fprintf(stderr, "INFO: Seed: %llu\n", (unsigned long long)seed);
    sift_rng_seed(&f->rng, seed);
    f->mutator = (sift_mutator){
        .rng = &f->rng,
        .dict = f->dict.count ? &f->dict : NULL,
        .cmps = opts->use_cmp ? &f->rt->cmps : NULL,
        .pick_other = pick_other,
        .pick_ctx = f,
        .only_ascii = opts->only_ascii != 0,
    };
    f->exact_copy = __asan_poison_memory_region != NULL;
    f->export_cap = 1u << 16;
    f->export_buf = malloc(f->export_cap);
    f->fault.opts = opts;
    f->fault.argv0 = argv0;
    if (!f->export_buf || sift_fault_install(&f->fault) != 0) return -1;
    /* After the engine's handlers: the value hooks' fault handler must go in front of them. */
    unsigned values = f->mask & SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES) ? SIFT_VALUES_FEATURES : 0;
    if (sift_values_count(f->rt)) sift_values_set_mode(f->rt, values);
    f->stats.start_ns = f->stats.last_new_ns = sift_now_ns();
    sift_active_fuzzer = f;
    return 0;
}

void sift_fuzzer_free(sift_fuzzer *f)
{
    if (sift_active_fuzzer == f) sift_active_fuzzer = NULL;
    sift_snapshot_free(f->snap);
    sift_corpus_free(f->corpus);
    sift_dict_free(&f->dict);
    free(f->buf);
    free(f->export_buf);
    free(f->run_copy);
}

/* The copy of DATA the harness runs from, so that a harness writing into its input is caught
 * (as libFuzzer catches it) and never damages what is saved, nor a read-only buffer. Under
 * ASan an exact-size heap copy also catches a read one byte past the input. Returns NULL when
 * out of memory; *OWNED is set when the copy is to be freed. */
static uint8_t *copy_input(sift_fuzzer *f, const uint8_t *data, size_t size, bool *owned)
{
    uint8_t *copy;
    *owned = f->exact_copy;
    if (f->exact_copy) {
        copy = malloc(size ? size : 1);
    } else {
        if (size > f->run_cap || !f->run_copy) {
            uint8_t *grown = realloc(f->run_copy, size ? size : 1);
            if (!grown) return NULL;
            f->run_copy = grown;
            f->run_cap = size ? size : 1;
        }
        copy = f->run_copy;
    }
    if (copy && size) memcpy(copy, data, size);
    return copy;
}

/* Runs the harness once on DATA, contained, leaving its coverage in the counters. */
static uint64_t run_target(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    bool owned;
    uint8_t *copy = copy_input(f, data, size, &owned);
    const uint8_t *in = copy ? copy : data;
    f->rt->tracing = true;
    sift_fault_begin(&f->fault, data, size);
    /* The start that sift_fault_begin just read from the same clock for the watchdog: with an
     * empty harness a clock read costs about a tenth of an execution. */
    uint64_t t0 = f->fault.started_ns;
    f->target(in, size);
    uint64_t end = sift_now_ns();
    sift_fault_end(&f->fault);
    f->exec_end_ns = end;
    uint64_t dt = end - t0;
    f->rt->tracing = false;
    if (copy && size && memcmp(copy, data, size) != 0)
        sift_fault_overwritten(&f->fault, data, size);
    if (owned) free(copy);
    f->stats.execs++;
    if (dt > f->stats.slowest_ns) f->stats.slowest_ns = dt;
    return dt;
}

static void reset_unjudged(sift_fuzzer *f)
{
    unsigned others = SIFT_DOMAINS_ALL & ~f->mask;
    if (others) sift_covmap_reset(f->rt->map, others);
}

sift_novelty sift_fuzzer_execute(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    run_target(f, data, size);
    sift_novelty novelty = SIFT_NOTHING;
    if (sift_snapshot_check_and_advance(f->snap, f->rt->map, f->mask, &novelty, NULL) ==
        SIFT_ESHAPE) {
        fprintf(stderr, "sift: loaded modules outgrew the coverage snapshot\n");
        exit(1);
    }
    reset_unjudged(f);
    return novelty;
}

typedef struct {
    sift_feature_id *ids;
    size_t n, cap;
} feature_list;

static void add_feature(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    feature_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        sift_feature_id *grown = realloc(l->ids, cap * sizeof(*grown));
        if (!grown) return;
        l->ids = grown;
        l->cap = cap;
    }
    l->ids[l->n++] = sift_feature(domain, index, (unsigned)__builtin_ctz(buckets));
}

/* Runs DATA again to learn every feature it owns (the novelty pass only says whether any is
 * new); a second run also filters out coverage that only happened once. */
static uint64_t collect_features(sift_fuzzer *f, const uint8_t *data, size_t size,
                                 feature_list *out)
{
    uint64_t ns = run_target(f, data, size);
    size_t len = 0;
    int rc;
    while ((rc = sift_covmap_export(f->rt->map, f->mask, f->export_buf, f->export_cap, &len)) ==
           SIFT_ESPACE) {
        uint8_t *grown = realloc(f->export_buf, len);
        if (!grown) {
            sift_covmap_reset(f->rt->map, SIFT_DOMAINS_ALL);
            return ns;
        }
        f->export_buf = grown;
        f->export_cap = len;
    }
    reset_unjudged(f);
    if (rc == SIFT_OK) sift_export_foreach(f->export_buf, len, add_feature, out);
    return ns;
}

/* Writes DATA to PATH through a temporary TMP and a rename, so that a process killed at any
 * moment leaves the whole input or none. No fsync: a disk flush per new input was most of the
 * time of campaigns that find often, and an input lost to a machine crash is found again. */
static int write_unsynced(const char *path, const char *tmp, const uint8_t *data, size_t size)
{
    int base = sift_artifact_cwd();
    int fd = openat(base, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    while (size) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) break;
        data += w;
        size -= (size_t)w;
    }
    int err = size ? errno : 0;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && renameat(base, tmp, base, path) != 0) err = errno;
    if (err) {
        unlinkat(base, tmp, 0);
        errno = err;
        return -1;
    }
    return 0;
}

static void save_input(sift_fuzzer *f, const sift_entry *e)
{
    char path[4096], tmp[4096];
    /* Hidden, so that corpus listings skip a temporary left by a kill. */
    if ((size_t)snprintf(path, sizeof path, "%s/%s", f->out_dir, e->name) >= sizeof path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", f->out_dir, e->name, (long)getpid()) >=
            sizeof tmp ||
        write_unsynced(path, tmp, e->data, e->size) != 0) {
        fprintf(stderr, "sift: cannot save %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

/* Whole milliseconds only: the scheduler must not see timing noise, or the same -seed would pick
 * other entries from run to run. */
static uint64_t whole_ms(uint64_t ns)
{
    return ns / 1000000ull * 1000000ull;
}

/* Takes DATA into the corpus with its FEATURES (consumed), saves it and reports it under HOW.
 * NULL when an identical input is there already. */
static sift_entry *admit(sift_fuzzer *f, const uint8_t *data, size_t size, feature_list *features,
                         uint64_t ns, bool save, const char *how)
{
    char name[41];
    sift_sha1_hex(data, size, name);
    sift_entry *e = sift_corpus_add(f->corpus, data, size, features->ids, features->n, whole_ms(ns),
                                    name, f->stats.execs);
    free(features->ids);
    if (!e) return NULL;
    if (save && f->out_dir) save_input(f, e);
    f->stats.new_units++;
    f->stats.last_new_ns = sift_now_ns();
    f->quiet_since_execs = f->stats.execs;
    if (how && f->opts->verbosity) {
        char extra[512];
        int ops = 0;
        for (const char *c = f->mutator.trace; *c; c++)
            ops += *c == '-';
        snprintf(extra, sizeof extra, " L: %zu/%zu MS: %d %s", size,
                 sift_corpus_max_size(f->corpus), ops, f->mutator.trace);
        sift_fuzzer_status(f, how, extra);
    }
    return e;
}

bool sift_fuzzer_try(sift_fuzzer *f, const uint8_t *data, size_t size, bool save, const char *how)
{
    if (sift_fuzzer_execute(f, data, size) == SIFT_NOTHING) return false;
    feature_list features = {0};
    uint64_t ns = collect_features(f, data, size, &features);
    if (sift_fault_can_check_leaks(&f->fault)) sift_fault_check_leaks(&f->fault, data, size);
    return admit(f, data, size, &features, ns, save, how) != NULL;
}

bool sift_fuzzer_try_reduce(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    feature_list features = {0};
    uint64_t ns = collect_features(f, data, size, &features);
    sift_entry *tops[16];
    size_t ntops = sizeof tops / sizeof(sift_entry *);
    if (!sift_corpus_outranks(f->corpus, features.ids, features.n, size, whole_ms(ns), tops,
                              &ntops)) {
        free(features.ids);
        return false;
    }
    if (!admit(f, data, size, &features, ns, true, "REDUCE")) return false;
    sift_corpus_update(f->corpus); /* settles which outranked entries lost every feature */
    /* An entry left without any top rating is evicted: its file in the output corpus goes too,
     * as libFuzzer's does. */
    for (size_t i = 0; i < ntops && f->out_dir; i++) {
        char path[4096];
        if (tops[i]->evicted &&
            (size_t)snprintf(path, sizeof path, "%s/%s", f->out_dir, tops[i]->name) < sizeof path)
            unlink(path);
    }
    return true;
}

void sift_fuzzer_status(sift_fuzzer *f, const char *what, const char *extra)
{
    if (sift_view_active(f->view)) return; /* the live view shows all of it */
    size_t cov = 0, ft = 0;
    sift_snapshot_count(f->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &cov, NULL);
    sift_snapshot_count(f->snap, f->mask, NULL, &ft);
    size_t bytes = sift_corpus_bytes(f->corpus);
    char corp[32], lim[32] = "";
    if (bytes < (1u << 14))
        snprintf(corp, sizeof corp, "%zub", bytes);
    else if (bytes < (1u << 24))
        snprintf(corp, sizeof corp, "%zuKb", bytes >> 10);
    else
        snprintf(corp, sizeof corp, "%zuMb", bytes >> 20);
    if (f->opts->len_control && f->len_limit) snprintf(lim, sizeof lim, " lim: %zu", f->len_limit);
    fprintf(stderr, "#%llu\t%-6s cov: %zu ft: %zu corp: %zu/%s%s exec/s: %llu rss: %zuMb%s\n",
            (unsigned long long)f->stats.execs, what, cov, ft, sift_corpus_count(f->corpus), corp,
            lim, (unsigned long long)sift_stats_exec_per_sec(&f->stats, sift_now_ns()),
            sift_fault_rss_mb(), extra ? extra : "");
}

static int by_size(const void *a, const void *b)
{
    const sift_entry *x = *(const sift_entry *const *)a, *y = *(const sift_entry *const *)b;
    return (x->size > y->size) - (x->size < y->size);
}

/* Reads every seed of the corpus folders; the first folder also receives new inputs. */
static int load_seeds(sift_fuzzer *f)
{
    sift_options *o = f->opts;
    sift_pathlist paths = {0};
    char err[4352];
    for (size_t i = 0; i < o->ninputs; i++) {
        if (sift_fs_list(&paths, o->inputs[i], err, sizeof err) != 0) {
            fprintf(stderr, "sift: corpus folder %s\n", err);
            sift_pathlist_free(&paths);
            return -1;
        }
    }
    if (paths.skipped)
        fprintf(stderr, "sift: corpus: skipped %zu entries that are not readable files (%s%s)\n",
                paths.skipped, paths.skipped > 1 ? "first: " : "", paths.first_skip);
    f->out_dir = o->ninputs ? o->inputs[0] : NULL;
    size_t read_max = o->max_len ? (size_t)o->max_len : SEED_MAX_READ;
    sift_entry **seeds = calloc(paths.count + 1, sizeof(sift_entry *));
    size_t nseeds = 0, largest = 0, failed = 0, cut = 0;
    for (size_t i = 0; seeds && i < paths.count; i++) {
        sift_entry *s = calloc(1, sizeof(*s));
        bool truncated = false;
        char shown[sizeof err];
        /* Never more than the inputs may hold: a 100 MB file costs read_max bytes, as in
         * libFuzzer, which cuts seeds to -max_len (1 MiB when not given). */
        if (!s || sift_fs_read(paths.paths[i], read_max, &s->data, &s->size, &truncated, err,
                               sizeof err) != 0) {
            fprintf(stderr, "sift: skipping seed %s\n",
                    s ? sift_human_name(err, shown, sizeof shown) : "(out of memory)");
            free(s);
            failed++;
            continue;
        }
        largest = s->size > largest ? s->size : largest;
        cut += truncated;
        seeds[nseeds++] = s;
    }
    sift_pathlist_free(&paths);
    if (!seeds) {
        fprintf(stderr, "sift: out of memory loading the corpus\n");
        return -1;
    }
    f->max_len = o->max_len                  ? (size_t)o->max_len
                 : largest > DEFAULT_MAX_LEN ? largest
                                             : DEFAULT_MAX_LEN;
    if (!o->max_len)
        fprintf(stderr,
                "INFO: -max_len is not provided; sift will not generate inputs larger than %zu "
                "bytes\n",
                f->max_len);
    qsort(seeds, nseeds, sizeof(sift_entry *), by_size);
    if (o->ninputs == 0 || nseeds == 0)
        fprintf(stderr, "INFO: A corpus is not provided, starting from an empty corpus\n");
    else
        fprintf(stderr, "INFO: seed corpus: files: %zu min: %zub max: %zub%s", nseeds,
                seeds[0]->size, largest, failed ? " (some unreadable, skipped)" : "");
    if (cut) fprintf(stderr, " (%zu longer than %zu bytes, cut to that)", cut, read_max);
    if (o->ninputs && nseeds) fputc('\n', stderr);
    for (size_t i = 0; i < nseeds; i++) {
        sift_fuzzer_try(f, seeds[i]->data, seeds[i]->size, false, NULL);
        free(seeds[i]->data);
        free(seeds[i]);
    }
    free(seeds);
    if (sift_corpus_count(f->corpus) == 0) {
        /* Mutation needs something to start from: one newline, as libFuzzer does. */
        static const uint8_t newline = '\n';
        char name[41];
        sift_fuzzer_execute(f, &newline, 1);
        sift_sha1_hex(&newline, 1, name);
        if (!sift_corpus_add(f->corpus, &newline, 1, NULL, 0, 0, name, f->stats.execs)) return -1;
        sift_corpus_update(f->corpus);
    }
    return 0;
}

/* -len_control: start short and let the limit grow when short inputs stop finding things. */
static void update_len_limit(sift_fuzzer *f)
{
    if (!f->opts->len_control) {
        f->len_limit = f->max_len;
        return;
    }
    if (f->len_limit >= f->max_len) return;
    /* Counted in executions, not seconds, so that a seeded campaign replays exactly. */
    uint64_t quiet = f->stats.execs - f->quiet_since_execs;
    double patience = (double)f->opts->len_control * log((double)f->len_limit + 1.0);
    if (quiet > (uint64_t)patience) {
        size_t grown = f->len_limit + f->len_limit / 8 + 1;
        f->len_limit = grown < f->max_len ? grown : f->max_len;
        f->quiet_since_execs = f->stats.execs;
    }
}

static size_t mutate_one(sift_fuzzer *f, const sift_entry *e)
{
    size_t size = e->size < f->len_limit ? e->size : f->len_limit;
    memcpy(f->buf, e->data, size);
    if (LLVMFuzzerCustomCrossOver && sift_rng_below(&f->rng, 8) == 0) {
        size_t other_len = 0;
        const uint8_t *other = pick_other(f, &other_len);
        if (other) {
            size_t n = LLVMFuzzerCustomCrossOver(e->data, e->size, other, other_len, f->buf,
                                                 f->len_limit, (unsigned)sift_rng_next(&f->rng));
            if (n > 0 && n <= f->len_limit) {
                snprintf(f->mutator.trace, sizeof f->mutator.trace, "Custom-CrossOver-");
                return n;
            }
            memcpy(f->buf, e->data, size);
        }
    }
    if (LLVMFuzzerCustomMutator) {
        int n =
            LLVMFuzzerCustomMutator(f->buf, size, f->len_limit, (unsigned)sift_rng_next(&f->rng));
        snprintf(f->mutator.trace, sizeof f->mutator.trace, "Custom-");
        return n > 0 && (size_t)n <= f->len_limit ? (size_t)n : size;
    }
    return sift_mutate(&f->mutator, f->buf, size, f->len_limit);
}

static bool out_of_budget(sift_fuzzer *f)
{
    const sift_options *o = f->opts;
    if (f->fault.stop_requested) return true;
    if (o->runs >= 0 && f->stats.execs >= (uint64_t)o->runs) return true;
    if (!o->max_total_time) return false;
    /* The end of the last execution is recent enough for a limit in seconds. */
    uint64_t now = f->exec_end_ns ? f->exec_end_ns : sift_now_ns();
    return now - f->stats.start_ns >= (uint64_t)o->max_total_time * 1000000000ull;
}

int sift_fuzzer_run(sift_fuzzer *f)
{
    if ((f->hooks.seed ? f->hooks.seed(f->hooks.ctx, f) : load_seeds(f)) != 0) return 1;
    f->buf = malloc(f->max_len);
    if (!f->buf) {
        fprintf(stderr, "sift: out of memory for inputs of -max_len=%zu bytes\n", f->max_len);
        return 1;
    }
    size_t largest = sift_corpus_max_size(f->corpus);
    f->len_limit = f->opts->len_control ? (largest > 4 ? largest : 4) : f->max_len;
    if (f->len_limit > f->max_len) f->len_limit = f->max_len;
    if (sift_view_wanted(f->opts)) f->view = sift_view_start();
    bool view = f->view != NULL;
    sift_fuzzer_status(f, "INITED", NULL);
    if (view) sift_stats_view(f, false);
    /* Statistics that cannot be written stop the campaign, as finds that cannot be saved do:
     * written once here, so that a bad -stats_file shows at once, then every second. */
    int rc = 0;
    uint64_t next_pulse = 1, next_stats_ns = sift_now_ns() + 1000000000ull;
    if (f->opts->stats_file && sift_stats_write(f, f->opts->stats_file) != 0) rc = 1;
    while (rc == 0 && !out_of_budget(f)) {
        sift_entry *e = sift_corpus_pick(f->corpus, &f->rng);
        if (!e) break;
        e->times_chosen++;
        f->mutator.trace[0] = 0;
        size_t size = mutate_one(f, e);
        bool found = sift_fuzzer_try(f, f->buf, size, true, "NEW");
        /* One shrinking mutant in 16 is checked for a REDUCE: each check costs a run. */
        if (!found && size < e->size && e->nfeatures && sift_rng_below(&f->rng, 16) == 0)
            found = sift_fuzzer_try_reduce(f, f->buf, size);
        if (found) {
            sift_corpus_found(f->corpus, e);
            if (f->hooks.found) f->hooks.found(f->hooks.ctx, f, e);
        }
        if (f->hooks.tick) f->hooks.tick(f->hooks.ctx, f);
        update_len_limit(f);
        if (f->stats.execs >= next_pulse) {
            if (next_pulse >= 1024 && f->opts->verbosity) sift_fuzzer_status(f, "pulse", NULL);
            next_pulse *= 2;
        }
        if (view && sift_view_due(f->view, f->exec_end_ns)) sift_stats_view(f, false);
        if ((f->stats.execs & 1023) == 0 && f->opts->stats_file) {
            uint64_t now = sift_now_ns();
            if (now >= next_stats_ns) {
                if (sift_stats_write(f, f->opts->stats_file) != 0) rc = 1;
                next_stats_ns = now + 1000000000ull;
            }
        }
    }
    sift_fuzzer_status(f, "DONE", NULL);
    if (view) {
        /* SIGINT's handler wrote its line below the view. */
        if (f->fault.stop_requested) sift_view_detach(f->view);
        sift_stats_view(f, true);
    }
    if (rc == 0 && f->opts->stats_file && sift_stats_write(f, f->opts->stats_file) != 0) rc = 1;
    if (f->opts->print_final_stats) sift_stats_print_final(f);
    fprintf(stderr, "Done %llu runs in %llu second(s)\n", (unsigned long long)f->stats.execs,
            (unsigned long long)((sift_now_ns() - f->stats.start_ns) / 1000000000ull));
    return rc;
}
