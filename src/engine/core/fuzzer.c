/* One fuzzing process: executes inputs, judges novelty, grows the corpus, prints progress. */
#include "engine/core/fuzzer.h"
#include "engine/core/exec.h"
#include "engine/core/finds.h"
#include "engine/core/msan.h"
#include "engine/contain/artifact.h"
#include "engine/base/files.h"
#include "engine/base/clock.h"
#include "engine/base/fsutil.h"
#include "engine/progress/progress.h"
#include "engine/progress/view.h"
#include "engine/core/reload.h"
#include "engine/core/seeds.h"
#include "rt/values.h"

#include <errno.h>
#include <fcntl.h>
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

/* LLVMFuzzerMutate() is called by custom mutators with no context, so the fuzzer running in
 * this process is the engine's one global besides the signal handlers' (fault.c). */
static sift_fuzzer *sift_active_fuzzer;

/* libFuzzer's cap on the operators a status line names, but at -verbosity=2 and up. */
#define TRACE_SHOWN 10

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
    sift_fuzzer *f = sift_active_fuzzer;
    if (!f || max_size == 0) return size < max_size ? size : max_size;
    sift_mutator *m = &f->mutator;
    /* A custom mutator's calls make one mutant: its tokens are those of all of them. */
    sift_dict_entry earlier[SIFT_MUT_TOKENS];
    unsigned nearlier = f->custom_trace ? m->ntokens : 0;
    memcpy(earlier, m->tokens, nearlier * sizeof(*earlier));
    size = sift_mutate(m, data, size, max_size);
    for (unsigned i = 0; i < m->ntokens && nearlier < SIFT_MUT_TOKENS; i++)
        earlier[nearlier++] = m->tokens[i];
    memcpy(m->tokens, earlier, nearlier * sizeof(*earlier));
    m->ntokens = nearlier;
    char *t = f->custom_trace;
    if (!t) return size;
    size_t len = strlen(t), shown = 0, room = sizeof f->mutator.trace;
    for (const char *c = t; *c; c++)
        shown += *c == '-';
    for (const char *op = f->mutator.trace; *op; op = strchr(op, '-') + 1) {
        size_t n = (size_t)(strchr(op, '-') - op) + 1;
        if ((shown >= TRACE_SHOWN && f->opts->verbosity < 2) || len + n >= room) break;
        memcpy(t + len, op, n);
        t[len += n] = '\0';
        shown++;
    }
    return size;
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

void sift_fuzzer_dict_error(const sift_dict *d, const char *err)
{
    if (d->error_line)
        fprintf(stderr, "sift: %s (ParseDictionaryFile: error in line %zu)\n", err, d->error_line);
    else
        fprintf(stderr, "sift: %s\n", err);
}

static void final_stats(void *fuzzer);
static void status_line(sift_fuzzer *f, const char *what, const char *extra);

const void *sift_fuzzer_custom_mutator(void)
{
    return (const void *)(uintptr_t)LLVMFuzzerCustomMutator;
}

int sift_fuzzer_init(sift_fuzzer *f, sift_options *opts, sift_target_fn target, const char *argv0)
{
    memset(f, 0, sizeof(*f));
    f->opts = opts;
    f->target = target;
    if (opts->dict) {
        char err[512];
        if (sift_dict_load(&f->dict, opts->dict, err, sizeof err) != 0) {
            sift_fuzzer_dict_error(&f->dict, err);
            return -1;
        }
        fprintf(stderr, "Dictionary: %zu entries\n", f->dict.count);
    }
    f->mask = opts->features;
    if (opts->use_value_profile) f->mask |= SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP);
    size_t cap[SIFT_DOMAIN_COUNT];
    if (sift_exec_init(f, cap) != 0) return -1;
    if (sift_snapshot_create(&f->snap, cap, NULL, 0) != SIFT_OK ||
        !(f->corpus = sift_corpus_new())) {
        fprintf(stderr, "sift: out of memory setting up the corpus\n");
        return -1;
    }
    /* A seed below 0 converts as into libFuzzer's unsigned int seed: -1 is 4294967295. */
    uint64_t seed = opts->seed > 0   ? (uint64_t)opts->seed
                    : opts->seed < 0 ? (uint32_t)opts->seed
                                     : (sift_now_ns() ^ (uint64_t)getpid() << 32) % 4294967291u + 1;
    opts->seed = (long long)seed;
    fprintf(stderr, "INFO: Seed: %llu\n", (unsigned long long)seed);
    if (opts->verbosity) sift_exec_print_modules(f->exec.rt);
    if (opts->print_final_stats || opts->print_coverage || opts->print_full_coverage) {
        f->fault.final_stats = final_stats;
        f->fault.final_stats_ctx = f;
    }
    sift_rng_seed(&f->rng, seed);
    f->mutator = (sift_mutator){
        .rng = &f->rng,
        .dict = f->dict.count ? &f->dict : NULL,
        .cmps = opts->use_cmp ? sift_exec_cmps(f) : NULL,
        .pick_other = opts->cross_over ? pick_other : NULL,
        .pick_ctx = f,
        .only_ascii = opts->only_ascii != 0,
        .max_depth = (unsigned)opts->mutate_depth,
    };
    f->fault.opts = opts;
    f->fault.argv0 = argv0;
    sift_msan_engine_start();
    if (sift_fault_install(&f->fault) != 0) return -1;
    /* After the engine's handlers: the value hooks' fault handler must go in front of them. */
    sift_exec_arm_values(f);
    f->stats.start_ns = f->stats.last_new_ns = sift_now_ns();
    sift_active_fuzzer = f;
    return 0;
}

void sift_fuzzer_free(sift_fuzzer *f)
{
    if (sift_active_fuzzer == f) sift_active_fuzzer = NULL;
    sift_snapshot_free(f->snap);
    sift_corpus_free(f->corpus);
    sift_corpus_dir_free(&f->dir);
    sift_dict_free(&f->dict);
    sift_pcs_free(&f->pcs);
    sift_recdict_free(&f->recdict);
    sift_history_free(&f->fault.history);
    free(f->buf);
    sift_exec_free(f);
}

/* An entry's time as the scheduler sees it, in steps of 100 us: it must not see timing noise, or
 * the same -seed would pick other entries from run to run; entries that run faster count as
 * taking no time, and only their sizes rank them. */
#define TIME_STEP_NS (SIFT_MS_NS / 10)
static uint64_t coarse_time(uint64_t ns)
{
    return ns / TIME_STEP_NS * TIME_STEP_NS;
}

/* Takes DATA into the corpus with the features of its last execution, saves it and reports it
 * under HOW. NULL when an identical input is there already. */
static sift_entry *admit(sift_fuzzer *f, const uint8_t *data, size_t size, uint64_t ns, bool save,
                         const char *how)
{
    char name[41];
    sift_sha1_hex(data, size, name);
    const sift_features *features = &f->exec.features;
    sift_exec_fold_missed_values(f);
    sift_entry *e = sift_corpus_add(f->corpus, data, size, features->ids, features->n,
                                    coarse_time(ns), name, f->stats.execs);
    if (!e) return NULL;
    if (save) sift_corpus_dir_save(&f->dir, e);
    sift_finds_record(f->opts, name, features->ids, features->n, f->fault.base_unit,
                      f->fault.mutation);
    if (f->focus && sift_pcs_features_hold(features->ids, features->n, f->focus_edge))
        sift_corpus_mark_focus(f->corpus, e);
    if (f->fault.mutation) sift_recdict_note(&f->recdict, f->mutator.tokens, f->mutator.ntokens);
    /* libFuzzer reports what the seeds cover only once they all ran. */
    if (sift_pcs_wanted(f->opts))
        sift_pcs_observe(&f->pcs, f->opts, f->exec.rt, features->ids, features->n,
                         !f->fault.initial_corpus);
    /* -exit_on_item, as libFuzzer: the run has reached the input it was looking for. */
    if (f->opts->exit_on_item && strcmp(f->opts->exit_on_item, name) == 0) {
        fprintf(stderr, "INFO: found item with checksum '%s', exiting.\n", name);
        exit(0);
    }
    f->stats.new_units++;
    f->stats.last_new_ns = sift_now_ns();
    f->quiet_since_execs = f->stats.execs;
    if (how && f->opts->verbosity) {
        char extra[sizeof f->mutator.trace + 64 +
                   (size_t)SIFT_MUT_TOKENS * (SIFT_RECDICT_QUOTED + 1)];
        int ops = 0;
        for (const char *c = f->mutator.trace; *c; c++)
            ops += *c == '-';
        size_t len = (size_t)snprintf(extra, sizeof extra, " L: %zu/%zu MS: %d %s", size,
                                      sift_corpus_max_size(f->corpus), ops, f->mutator.trace);
        /* libFuzzer's DE: the dictionary words the mutation wrote, each followed by '-'. */
        for (unsigned i = 0; f->fault.mutation && i < f->mutator.ntokens; i++) {
            if (!i) len += (size_t)snprintf(extra + len, sizeof extra - len, " DE: ");
            len += sift_recdict_quote(&f->mutator.tokens[i], extra + len, sizeof extra - len);
            len += (size_t)snprintf(extra + len, sizeof extra - len, "-");
        }
        status_line(f, how, extra);
    }
    return e;
}

/* As libFuzzer: an input that ran at least -report_slow_units seconds, and 10% longer than the
 * last one reported, is kept as a slow-unit artifact, so that slowness gets seen. */
static void report_slow_unit(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    uint64_t s = f->exec.last_ns / SIFT_SECOND_NS;
    if (s * 10 <= f->stats.slow_unit_s * 11 || s < (uint64_t)f->opts->report_slow_units) return;
    f->stats.slow_unit_s = s;
    fprintf(stderr, "Slowest unit: %llu s:\n", (unsigned long long)s);
    sift_artifact_write(f->opts->artifact_prefix, f->opts->exact_artifact_path, "slow-unit", data,
                        size, NULL, 0);
}

void sift_fuzzer_check_leaks(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    if (!sift_fault_can_check_leaks(&f->fault) || !sift_fault_run_allocated_more()) return;
    /* An input that allocates only on its first run (a cache filled lazily) frees what it
     * allocates on its second; the leak to report is the first run's. */
    sift_fault_ignore_leaks(true);
    sift_exec_features(f, data, size, true);
    sift_fault_ignore_leaks(false);
    sift_fault_check_leaks(&f->fault, data, size);
}

/* A mutant that takes this many times the campaign's mean execution, and at least SLOW_MIN_NS,
 * on each of two runs, is not kept, whatever it reached: AFL++ keeps no input beyond the
 * timeout it calibrates from its seeds. Such inputs (an image scaled to gigapixels from options
 * in its bytes) are rare among mutants, but a corpus that keeps them runs them and their
 * mutants for most of its time. Two runs, so that a process preempted once drops nothing; but
 * one of SLOW_SURE_NS or more is slow without a second: a preemption takes milliseconds, and a
 * second run of a libwebp mutant that had taken 23 s took as long again. */
#define SLOW_FACTOR  100
#define SLOW_MIN_NS  (10 * SIFT_MS_NS)
#define SLOW_SURE_NS SIFT_SECOND_NS

/* The mean execution so far: taken before a mutant runs, so that its own run does not count. */
static uint64_t mean_run_ns(const sift_fuzzer *f)
{
    return f->stats.execs ? f->stats.run_ns / f->stats.execs : 0;
}

static bool too_slow(uint64_t ns, uint64_t mean)
{
    return ns >= SLOW_MIN_NS && ns / SLOW_FACTOR >= mean;
}

/* After a run of the mutant DATA (NS long, against a MEAN before it) that reached something
 * new; FEATURES_RUN when that run did not collect its features. Takes it into the corpus unless
 * it is too slow. */
static bool take_mutant(sift_fuzzer *f, const uint8_t *data, size_t size, uint64_t ns,
                        uint64_t mean, bool features_run)
{
    bool slow = too_slow(ns, mean);
    if ((features_run || slow) && !(slow && ns >= SLOW_SURE_NS)) {
        /* The faster run is the one a preemption did not slow down. */
        uint64_t again = sift_exec_features(f, data, size, true);
        ns = again < ns ? again : ns;
        slow = slow && too_slow(ns, mean);
    }
    if (slow) {
        f->stats.slow_finds++;
        return false;
    }
    return admit(f, data, size, ns, true, "NEW") != NULL;
}

bool sift_fuzzer_try(sift_fuzzer *f, const uint8_t *data, size_t size, bool save, const char *how)
{
    sift_novelty novelty = sift_fuzzer_execute(f, data, size);
    report_slow_unit(f, data, size);
    sift_fuzzer_check_leaks(f, data, size);
    if (novelty == SIFT_NOTHING) return false;
    uint64_t ns = sift_exec_features(f, data, size, true);
    return admit(f, data, size, ns, save, how) != NULL;
}

bool sift_fuzzer_try_mutant(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    uint64_t mean = mean_run_ns(f);
    sift_exec_mutant_next(f);
    sift_novelty novelty = sift_fuzzer_execute(f, data, size);
    report_slow_unit(f, data, size);
    sift_fuzzer_check_leaks(f, data, size);
    return novelty != SIFT_NOTHING && take_mutant(f, data, size, f->exec.last_ns, mean, true);
}

/* Whether the features in F's exec.features make an input of SIZE that ran NS cheaper than the
 * top entry of any of them; *NTOPS of those entries in TOPS. */
static bool outranks(sift_fuzzer *f, size_t size, uint64_t ns, sift_entry **tops, size_t *ntops)
{
    const sift_features *features = &f->exec.features;
    return sift_corpus_outranks(f->corpus, features->ids, features->n, size, coarse_time(ns), tops,
                                ntops);
}

bool sift_fuzzer_try_smaller(sift_fuzzer *f, const uint8_t *data, size_t size,
                             const sift_entry *parent)
{
    uint64_t ns, mean = mean_run_ns(f);
    /* Listing every value of every call, and looking each up, is most of what a smaller
     * mutant's run costs beyond a plain one: only a parent top-rated for a value feature, which
     * its smaller mutants may take over, pays it. The others list no value feature the snapshot
     * knows, and their edges and comparisons decide. */
    bool complete = !sift_values_counted(f->exec.rt) || parent->tops[SIFT_DOMAIN_VALUES] > 0;
    sift_exec_mutant_next(f);
    sift_novelty novelty = sift_exec_judge_features(f, data, size, complete, &ns);
    report_slow_unit(f, data, size);
    sift_fuzzer_check_leaks(f, data, size);
    if (novelty != SIFT_NOTHING) return take_mutant(f, data, size, ns, mean, !complete);
    sift_entry *tops[16], *e;
    size_t ntops = sizeof tops / sizeof(sift_entry *);
    if (!outranks(f, size, ns, tops, &ntops)) return false;
    if (!complete) {
        /* To be judged on all its features and admitted with them. */
        sift_exec_features(f, data, size, true);
        ntops = sizeof tops / sizeof(sift_entry *);
        if (!outranks(f, size, ns, tops, &ntops)) return false;
    }
    if (!(e = admit(f, data, size, ns, false, "REDUCE"))) return false;
    /* An entry left without any top rating is evicted: its file in the output corpus goes too,
     * as libFuzzer's does. */
    sift_corpus_dir_replace(&f->dir, e, tops, ntops, f->exec.end_ns);
    return true;
}

/* F's progress at NOW, as progress.c and the live view print it. */
static sift_progress progress(const sift_fuzzer *f, uint64_t now)
{
    sift_progress p = {
        .target = f->fault.argv0,
        .run_ns = now - f->stats.start_ns,
        .execs = f->stats.execs,
        /* Over whole seconds, as libFuzzer counts: 0 in the first second. */
        .exec_per_sec = sift_progress_rate(f->stats.execs, (now - f->stats.start_ns) /
                                                               SIFT_SECOND_NS * SIFT_SECOND_NS),
        .corpus = sift_corpus_active(f->corpus),
        .favored = sift_corpus_favored(f->corpus),
        .corpus_bytes = sift_corpus_bytes(f->corpus),
        .focus = sift_corpus_focus(f->corpus),
        /* Without -len_control, -max_len: libFuzzer prints its limit either way. */
        .len_limit = f->len_limit,
        .new_units = f->stats.new_units,
        .found_any = f->stats.new_units > 0,
        .since_new_ns = now - f->stats.last_new_ns,
        .slowest_ns = f->stats.slowest_ns,
        .slow_finds = f->stats.slow_finds,
        .rss_mb = sift_fault_rss_mb(),
        .seed = f->opts->seed,
        .values_shared = f->exec.values_shared,
        .values_share = f->exec.values_share.share * 100 / SIFT_VALUES_SHARE_ONE,
    };
    sift_snapshot_count(f->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &p.cov, NULL);
    sift_snapshot_count(f->snap, f->mask, NULL, &p.ft);
    return p;
}

/* The fault handlers' hook: the final stats after a fault's report, as libFuzzer prints them
 * when it dies. Reads only. */
/* What libFuzzer prints last, after a fault too: -print_final_stats's "stat::" lines and the
 * -print_coverage listings (which symbolize: a fault in a signal handler risks them, as in
 * libFuzzer, only when they are asked for). */
static void final_stats(void *fuzzer)
{
    sift_fuzzer *f = fuzzer;
    if (f->opts->print_final_stats) {
        sift_progress p = progress(f, sift_now_ns());
        sift_progress_print_final(&p);
    }
    sift_pcs_print_coverage(&f->pcs, f->opts, f->exec.rt);
}

/* Prints a libFuzzer status line ("#N\tNEW    cov: ..."). */
static void status_line(sift_fuzzer *f, const char *what, const char *extra)
{
    if (sift_view_active(f->view)) return; /* the live view shows all of it */
    sift_progress p = progress(f, sift_now_ns());
    sift_progress_line(&p, what, extra);
}

static int write_stats(const sift_fuzzer *f)
{
    sift_progress p = progress(f, sift_now_ns());
    return sift_progress_write_json(&p, f->opts->stats_file);
}

/* Redraws the live view; FINAL leaves it on the screen for good. */
static void show_view(sift_fuzzer *f, bool final)
{
    uint64_t now = sift_now_ns();
    sift_progress p = progress(f, now);
    if (final)
        sift_view_finish(&f->view, &p, now);
    else
        sift_view_update(f->view, &p, now);
}

/* Mutation needs something to start from: one newline, as libFuzzer does. An instrumented
 * harness covers its own entry on any input: no edge after the empty input, the seeds and a
 * newline means no instrumentation, said in libFuzzer's words and exit code, which OSS-Fuzz's
 * build check and ClusterFuzz's bad_instrumentation match, after the INITED line that
 * libFuzzer prints first and ClusterFuzz reads as the end of start-up. */
static int start_from_newline(sift_fuzzer *f)
{
    static const uint8_t newline = '\n';
    char name[41];
    sift_fuzzer_execute(f, &newline, 1);
    size_t edges = 0;
    sift_snapshot_count(f->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &edges, NULL);
    if (edges == 0 && f->opts->runs != 0) {
        status_line(f, "INITED", NULL);
        fprintf(stderr, "ERROR: no interesting inputs were found. Is the code instrumented "
                        "for coverage? Exiting.\n");
        return -1;
    }
    sift_sha1_hex(&newline, 1, name);
    if (!sift_corpus_add(f->corpus, &newline, 1, NULL, 0, 0, name, f->stats.execs)) return -1;
    sift_corpus_update(f->corpus);
    return 0;
}

/* Runs every seed of the corpus folders (seeds.c reads them); the first folder also receives
 * new inputs. */
/* -keep_seed=1: the seed DATA stays in the corpus, taken for the coverage it added or not, and
 * pinned there: picked by its features' rarity as any entry, never dropped. */
static void keep_seed(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    char name[41];
    sift_sha1_hex(data, size, name);
    long long at = sift_corpus_find(f->corpus, name);
    sift_entry *e = at >= 0 ? sift_corpus_at(f->corpus, (size_t)at) : NULL;
    if (!e) e = admit(f, data, size, sift_exec_features(f, data, size, true), false, NULL);
    if (e && !e->evicted) e->pinned = true;
}

static int load_seeds(sift_fuzzer *f) SIFT_FRAME(load_seeds);
static int load_seeds(sift_fuzzer *f)
{
    const sift_options *o = f->opts;
    sift_seeds seeds;
    if (sift_seeds_read(o, &seeds) != 0) return -1;
    f->dir.path = o->ninputs ? o->inputs[0] : NULL;
    f->max_len = seeds.max_len;
    for (size_t i = 0; i < seeds.count; i++) {
        sift_fuzzer_try(f, seeds.list[i].data, seeds.list[i].size, false, NULL);
        if (o->keep_seed) keep_seed(f, seeds.list[i].data, seeds.list[i].size);
    }
    sift_seeds_free(&seeds);
    return sift_corpus_count(f->corpus) ? 0 : start_from_newline(f);
}

/* -len_control: start short and let the limit grow when short inputs stop finding things. */
static void update_len_limit(sift_fuzzer *f)
{
    if (!f->opts->len_control) {
        f->len_limit = f->max_len;
        return;
    }
    if (f->len_limit >= f->max_len) return;
    /* Counted in executions, not seconds, so that a seeded campaign replays exactly. The limit
     * grows by its own log2 once the corpus has not grown for len_control * log2 executions,
     * as libFuzzer's does: a faster growth fills the corpus with long inputs that find little
     * more than short ones do and cost more to run, on every later pick. */
    uint64_t quiet = f->stats.execs - f->quiet_since_execs;
    size_t log2 = (size_t)(63 - __builtin_clzll((unsigned long long)f->len_limit | 1));
    if (quiet > (uint64_t)f->opts->len_control * log2) {
        size_t grown = f->len_limit + (log2 ? log2 : 1);
        f->len_limit = grown < f->max_len ? grown : f->max_len;
        f->quiet_since_execs = f->stats.execs;
    }
}

static size_t mutate_one(sift_fuzzer *f, const sift_entry *e) SIFT_FRAME(mutate_one);
static size_t mutate_one(sift_fuzzer *f, const sift_entry *e)
{
    size_t size = e->size < f->len_limit ? e->size : f->len_limit;
    memcpy(f->buf, e->data, size);
    if (LLVMFuzzerCustomCrossOver && f->mutator.pick_other && sift_rng_below(&f->rng, 8) == 0) {
        size_t other_len = 0;
        const uint8_t *other = pick_other(f, &other_len);
        if (other) {
            sift_msan_unpoison(e->data, e->size);
            sift_msan_unpoison(other, other_len);
            sift_msan_enter_target(f->buf, f->len_limit, 7);
            size_t n = LLVMFuzzerCustomCrossOver(e->data, e->size, other, other_len, f->buf,
                                                 f->len_limit, (unsigned)sift_rng_next(&f->rng));
            sift_msan_leave_target();
            if (n > 0 && n <= f->len_limit) {
                snprintf(f->mutator.trace, sizeof f->mutator.trace, "Custom-CrossOver-");
                return n;
            }
            memcpy(f->buf, e->data, size);
        }
    }
    if (LLVMFuzzerCustomMutator) {
        char trace[sizeof f->mutator.trace] = "";
        f->custom_trace = trace;
        f->mutator.ntokens = 0;
        sift_msan_enter_target(f->buf, f->len_limit, 4);
        int n =
            LLVMFuzzerCustomMutator(f->buf, size, f->len_limit, (unsigned)sift_rng_next(&f->rng));
        sift_msan_leave_target();
        f->custom_trace = NULL;
        snprintf(f->mutator.trace, sizeof f->mutator.trace, "%s", trace[0] ? trace : "Custom-");
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
    uint64_t now = f->exec.end_ns ? f->exec.end_ns : sift_now_ns();
    return now - f->stats.start_ns >= (uint64_t)o->max_total_time * SIFT_SECOND_NS;
}

/* -reload: runs the corpus folder's new file PATH; whether it was taken into the corpus. A
 * file named as a corpus entry is that entry (this process's own find, saved by its SHA-1): it
 * is not run again, so that a seeded run spends the same executions on the same inputs however
 * long it takes. */
static bool reload_file(void *fuzzer, const char *path)
{
    sift_fuzzer *f = fuzzer;
    const char *slash = strrchr(path, '/');
    if (sift_corpus_find(f->corpus, slash ? slash + 1 : path) >= 0) return false;
    uint8_t *data;
    size_t size;
    char err[4352];
    /* A file removed or half-written since the listing is left for another process. */
    if (sift_fs_read(path, f->max_len, &data, &size, NULL, err, sizeof err) != 0) return false;
    bool taken = sift_fuzzer_try(f, data, size, false, NULL);
    free(data);
    return taken;
}

/* -focus_function, as libFuzzer sets it: a name that no function has stops the run; "auto"
 * asks libFuzzer's data-flow trace to choose, and without one chooses nothing. */
static int set_focus(sift_fuzzer *f)
{
    const char *name = f->opts->focus_function;
    if (!name || !strcmp(name, "auto")) return 0;
    f->focus = sift_pcs_function_entry(f->exec.rt, name, &f->focus_edge);
    if (!f->focus) {
        fprintf(stderr,
                "ERROR: Failed to set focus function. Make sure the function name is valid "
                "(%s) and symbolization is enabled.\n",
                name);
        return -1;
    }
    fprintf(stderr, "INFO: Focus function is set to '%s'\n", name);
    return 0;
}

/* Everything before the first mutant: the empty input, the seeds, the input buffer, the
 * length limit and the first status line. */
static int start_run(sift_fuzzer *f)
{
    /* The empty input first, once, as libFuzzer tries it: mutants are never empty, so a bug
     * that only the empty input reaches would be found never. */
    static const uint8_t none;
    if (set_focus(f) != 0) return 1;
    f->fault.initial_corpus = true;
    if (sift_pcs_wanted(f->opts)) {
        /* Kept by no entry, yet covered: libFuzzer keeps it. */
        uint64_t ns;
        sift_exec_judge_features(f, &none, 0, false, &ns);
        sift_pcs_observe(&f->pcs, f->opts, f->exec.rt, f->exec.features.ids, f->exec.features.n,
                         false);
    } else {
        sift_fuzzer_execute(f, &none, 0);
    }
    if ((f->hooks.seed ? f->hooks.seed(f->hooks.ctx, f) : load_seeds(f)) != 0) return 1;
    f->fault.initial_corpus = false;
    f->buf = malloc(f->max_len);
    if (!f->buf) {
        fprintf(stderr, "sift: out of memory for inputs of -max_len=%zu bytes\n", f->max_len);
        return 1;
    }
    size_t largest = sift_corpus_max_size(f->corpus);
    f->len_limit = f->opts->len_control ? (largest > 4 ? largest : 4) : f->max_len;
    if (f->len_limit > f->max_len) f->len_limit = f->max_len;
    if (sift_view_wanted(f->opts)) f->view = sift_view_start();
    status_line(f, "INITED", NULL);
    if (f->focus)
        fprintf(stderr, "INFO: %zu/%zu inputs touch the focus function\n",
                sift_corpus_focus(f->corpus), sift_corpus_active(f->corpus));
    if (f->view) show_view(f, false);
    return 0;
}

/* Everything after the last execution: the finds left to flush, the last status line, view
 * and statistics. RC, or 1 when the statistics cannot be written. */
static int finish_run(sift_fuzzer *f, int rc)
{
    sift_corpus_dir_tick(&f->dir, UINT64_MAX);
    status_line(f, "DONE", NULL);
    if (f->opts->verbosity) sift_recdict_print(&f->recdict, &f->dict);
    if (f->view) {
        /* SIGINT's handler wrote its line below the view. */
        if (f->fault.stop_requested) sift_view_detach(f->view);
        show_view(f, true);
    }
    if (rc == 0 && f->opts->stats_file && write_stats(f) != 0) rc = 1;
    sift_fault_say_stop(f->fault.stop_requested);
    final_stats(f);
    fprintf(stderr, "Done %llu runs in %llu second(s)\n", (unsigned long long)f->stats.execs,
            (unsigned long long)((sift_now_ns() - f->stats.start_ns) / SIFT_SECOND_NS));
    return rc;
}

int sift_fuzzer_run(sift_fuzzer *f)
{
    if (start_run(f) != 0) return 1;
    bool view = f->view != NULL;
    /* Statistics that cannot be written stop the campaign, as finds that cannot be saved do:
     * written once here, so that a bad -stats_file shows at once, then every second. */
    int rc = 0;
    uint64_t next_pulse = 1, next_stats_ns = sift_now_ns() + SIFT_SECOND_NS;
    if (f->opts->stats_file && write_stats(f) != 0) rc = 1;
    sift_reload reload;
    sift_reload_start(&reload, f->opts->reload > 0 && !f->hooks.seed ? f->dir.path : NULL,
                      f->opts->reload);
    size_t last_size = 0;
    uint32_t since = 0;
    uint64_t mean_at = 0; /* when to tell the corpus the mean execution again */
    sift_entry *e = NULL; /* the parent of the mutant about to run */
    while (rc == 0 && !out_of_budget(f)) {
        if (sift_reload_poll(&reload, f->exec.end_ns, reload_file, f) && f->opts->verbosity)
            status_line(f, "RELOAD", NULL);
        f->mutator.trace[0] = 0;
        /* Now and then the mutant that just ran (when it filled the ring, see exec.c), rather
         * than a new one, gets the operands of its own comparisons: the ring's newest pairs
         * are its, at the places they lie. It keeps its parent. A custom mutator makes every
         * mutant itself, as in libFuzzer. */
        size_t size = 0;
        if (last_size && !LLVMFuzzerCustomMutator && !sift_rng_below(&f->rng, 8))
            size = sift_mutate_cmp_again(&f->mutator, f->buf, last_size, f->len_limit, since);
        bool again = size != 0;
        if (!again) {
            if (f->stats.execs >= mean_at) {
                sift_corpus_set_mean_run(f->corpus, mean_run_ns(f));
                mean_at = f->stats.execs + 1024;
            }
            if (!(e = sift_corpus_pick(f->corpus, &f->rng))) break;
            size = mutate_one(f, e);
        }
        if (f->mutator.cmps) since = f->mutator.cmps->int_next;
        last_size = f->mutator.cmps ? size : 0;
        /* A mutant smaller than its parent may do what a bigger entry does (REDUCE): one run
         * tells both that and whether it found something new. */
        bool reduce =
            !again && (f->opts->reduce_inputs || f->opts->shrink) && size < e->size && e->nfeatures;
        f->fault.mutation = f->mutator.trace;
        f->fault.base_unit = e->name;
        bool found = reduce ? sift_fuzzer_try_smaller(f, f->buf, size, e)
                            : sift_fuzzer_try_mutant(f, f->buf, size);
        f->fault.mutation = f->fault.base_unit = NULL;
        if (found) {
            sift_corpus_found(f->corpus, e);
            if (f->hooks.found) f->hooks.found(f->hooks.ctx, f, e);
        }
        if (f->hooks.tick) f->hooks.tick(f->hooks.ctx, f);
        sift_corpus_dir_tick(&f->dir, f->exec.end_ns);
        update_len_limit(f);
        if (f->stats.execs >= next_pulse) {
            if (next_pulse >= 1024 && f->opts->verbosity) status_line(f, "pulse", NULL);
            next_pulse *= 2;
        }
        if (view && sift_view_due(f->view, f->exec.end_ns)) show_view(f, false);
        if ((f->stats.execs & 1023) == 0 && f->opts->stats_file) {
            uint64_t now = sift_now_ns();
            if (now >= next_stats_ns) {
                if (write_stats(f) != 0) rc = 1;
                next_stats_ns = now + SIFT_SECOND_NS;
            }
        }
    }
    sift_reload_free(&reload);
    return finish_run(f, rc);
}
