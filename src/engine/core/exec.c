/* The executor: one contained execution, and what it covered. */
#include "engine/core/exec.h"
#include "engine/base/clock.h"
#include "engine/core/fuzzer.h"
#include "engine/core/msan.h"
#include "rt/values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* One execution in this many fills the runtime's ring of integer comparison operands (see
 * int_ring_paused in rt/rt.h). */
#define INT_RING_EVERY 8

/* Present only when the process runs under AddressSanitizer. */
extern void __asan_poison_memory_region(void const volatile *addr, size_t size)
    __attribute__((weak));

void sift_exec_capacity(const sift_rt_state *rt, size_t cap[SIFT_DOMAIN_COUNT])
{
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        cap[d] = sift_covmap_size(rt->map, (sift_domain)d);
    cap[SIFT_DOMAIN_EDGES] += 1u << 20; /* room for modules loaded later with dlopen */
}

/* glibc gives the top of its heap back to the system whenever more than 128 KiB of it is free,
 * and maps each block of 128 KiB or more on its own, until freeing such a block raises both
 * thresholds. A harness that sets up and frees a few hundred kilobytes for each input then pays
 * the page faults of all of it on every execution: zlib's deflate state is five blocks of up to
 * 64 KiB, and a round trip of an empty stream took 260 us that way against 1.9 us with the
 * thresholds below (a plain clang -O2 build, best of 200 runs each). These are the highest
 * glibc itself would raise them to: blocks up to 32 MiB come from the heap, and up to 64 MiB of
 * freed memory stays with the process; larger blocks are still mapped and unmapped. Under ASan
 * the allocator is ASan's, and mallopt does nothing. */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

int sift_exec_init(sift_fuzzer *f, size_t cap[SIFT_DOMAIN_COUNT])
{
    keep_freed_memory();
    sift_exec *x = &f->exec;
    x->quiet_stderr = x->loud_stderr = -1;
    x->rt = sift_rt();
    x->export_cap = 1u << 16;
    x->export_buf = x->rt ? malloc(x->export_cap) : NULL;
    if (!x->export_buf) {
        fprintf(stderr, "sift: out of memory setting up coverage maps\n");
        return -1;
    }
    x->exact_copy = __asan_poison_memory_region != NULL;
    x->rt->cmp_features_off = !(f->mask & SIFT_DOMAIN_BIT(SIFT_DOMAIN_CMP));
    x->rt->search_hints_off = !f->opts->use_memmem;
    sift_rt_cmp_gate_update(x->rt);
    sift_exec_capacity(x->rt, cap);
    /* What ran before the first input (static constructors, LLVMFuzzerInitialize) is no
     * input's coverage: libFuzzer counts none of it either, and a merge would otherwise
     * credit the first input with a constructor's edge. */
    sift_covmap_reset(x->rt->map, SIFT_DOMAINS_ALL);
    return 0;
}

void sift_exec_free(sift_fuzzer *f)
{
    free(f->exec.export_buf);
    free(f->exec.run_copy);
    free(f->exec.features.ids);
    f->exec.export_buf = f->exec.run_copy = NULL;
    f->exec.features = (sift_features){0};
}

void sift_exec_arm_values(sift_fuzzer *f)
{
    unsigned values = f->mask & SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES) ? SIFT_VALUES_FEATURES : 0;
    if (!sift_values_count(f->exec.rt)) return;
    sift_values_set_mode(f->exec.rt, values);
    unsigned budget = (unsigned)(f->opts->values_budget * SIFT_VALUES_SHARE_ONE / 100);
    f->exec.values_shared = values && budget < SIFT_VALUES_SHARE_ONE;
    sift_values_share_init(&f->exec.values_share, budget, (uint64_t)f->opts->seed);
}

void sift_exec_mutant_next(sift_fuzzer *f)
{
    f->exec.mutant_next = f->exec.values_shared;
}

void sift_exec_print_modules(const sift_rt_state *rt)
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
    size_t extra = sift_rt_extra_counters();
    if (extra) fprintf(stderr, "INFO: %zu Extra Counters\n", extra);
}

sift_cmp_table *sift_exec_cmps(sift_fuzzer *f)
{
    return &f->exec.rt->cmps;
}

/* The copy of DATA the harness runs from, so that a harness writing into its input is caught
 * (as libFuzzer catches it) and never damages what is saved, nor a read-only buffer. Under
 * ASan an exact-size heap copy also catches a read one byte past the input (even of the empty
 * input: malloc(0) under ASan is a block of no bytes). Returns NULL when out of memory; *OWNED
 * is set when the copy is to be freed. */
static uint8_t *copy_input(sift_exec *x, const uint8_t *data, size_t size, bool *owned)
{
    uint8_t *copy;
    *owned = x->exact_copy;
    if (x->exact_copy) {
        copy = malloc(size);
    } else {
        if (size > x->run_cap || !x->run_copy) {
            uint8_t *grown = realloc(x->run_copy, size ? size : 1);
            if (!grown) return NULL;
            x->run_copy = grown;
            x->run_cap = size ? size : 1;
        }
        copy = x->run_copy;
    }
    if (copy && size) memcpy(copy, data, size);
    return copy;
}

/* Runs the harness once on DATA, contained, leaving its coverage in the counters: every value
 * feature when LISTED (its features are to be listed), else only those F's snapshot has not
 * seen, which is all that its novelty needs. */
static uint64_t run_target(sift_fuzzer *f, const uint8_t *data, size_t size, bool counted,
                           bool listed) SIFT_FRAME(run_target);
static uint64_t run_target(sift_fuzzer *f, const uint8_t *data, size_t size, bool counted,
                           bool listed)
{
    sift_values_skip_known(f->exec.rt, listed ? NULL : f->snap);
    bool shared = f->exec.mutant_next && !listed;
    f->exec.mutant_next = false;
    bool values = !shared || sift_values_share_next(&f->exec.values_share);
    if (!values) sift_values_pause(f->exec.rt, true);
    if (counted) f->exec.values_missed = !values;
    f->exec.exported = false;
    bool owned;
    uint8_t *copy = copy_input(&f->exec, data, size, &owned);
    const uint8_t *in = copy ? copy : data;
    f->exec.rt->input = in;
    f->exec.rt->input_size = size;
    f->exec.rt->tracing = true;
    f->exec.rt->int_ring_paused = f->stats.execs % INT_RING_EVERY != 0;
    sift_rt_cmp_gate_update(f->exec.rt);
    sift_fault_begin(&f->fault, data, size);
    /* The start that sift_fault_begin just read from the same clock for the watchdog: with an
     * empty harness a clock read costs about a tenth of an execution. */
    uint64_t t0 = f->fault.started_ns;
    uintptr_t top = sift_rt_depth_begin();
    if (f->exec.quiet_stderr >= 0) dup2(f->exec.quiet_stderr, STDERR_FILENO);
    sift_msan_enter_target(in, size, 2);
    f->target(in, size);
    sift_msan_leave_target();
    if (f->exec.loud_stderr >= 0) dup2(f->exec.loud_stderr, STDERR_FILENO);
    sift_rt_depth_end(f->exec.rt, top);
    uint64_t end = sift_now_ns();
    f->exec.rt->tracing = false;
    sift_rt_cmp_gate_update(f->exec.rt);
    if (copy && size && memcmp(copy, data, size) != 0) sift_fault_input_overwritten(&f->fault);
    sift_fault_end(&f->fault);
    f->exec.end_ns = end;
    uint64_t dt = end - t0;
    if (shared) sift_values_share_took(&f->exec.values_share, values, dt);
    if (!values) sift_values_pause(f->exec.rt, false);
    if (owned) free(copy);
    f->stats.execs += counted;
    if (counted) f->stats.run_ns += dt;
    if (dt > f->stats.slowest_ns) f->stats.slowest_ns = dt;
    f->exec.last_ns = dt;
    return dt;
}

static void reset_unjudged(sift_fuzzer *f)
{
    unsigned others = SIFT_DOMAINS_ALL & ~f->mask;
    if (others) sift_covmap_reset(f->exec.rt->map, others);
}

/* A module loaded since the snapshot was made has more counters than it has room for. */
static void check_shape(int rc)
{
    if (rc != SIFT_ESHAPE) return;
    fprintf(stderr, "sift: loaded modules outgrew the coverage snapshot\n");
    exit(1);
}

/* Folds what the last run covered in the domains of MASK into F's snapshot: what it added. */
static sift_novelty judge(sift_fuzzer *f, unsigned mask)
{
    sift_novelty novelty = SIFT_NOTHING;
    check_shape(sift_snapshot_check_and_advance(f->snap, f->exec.rt->map, mask, &novelty, NULL));
    return novelty;
}

/* What a mutant's run under the share added, judged in two passes, its value features apart,
 * so that the share learns whether values alone found it. */
static sift_novelty judge_shared(sift_fuzzer *f)
{
    unsigned values = f->mask & SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES);
    sift_novelty other = judge(f, f->mask & ~values), by_values = judge(f, values);
    if (other != SIFT_NOTHING || by_values != SIFT_NOTHING)
        sift_values_share_found(&f->exec.values_share, other == SIFT_NOTHING);
    return other > by_values ? other : by_values;
}

sift_novelty sift_fuzzer_execute(sift_fuzzer *f, const uint8_t *data, size_t size)
{
    bool shared = f->exec.mutant_next; /* what run_target reads for an unlisted run */
    run_target(f, data, size, true, false);
    sift_novelty novelty = shared ? judge_shared(f) : judge(f, f->mask);
    reset_unjudged(f);
    return novelty;
}

static void add_feature(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    sift_features *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        sift_feature_id *grown = realloc(l->ids, cap * sizeof(*grown));
        if (!grown) return;
        l->ids = grown;
        l->cap = cap;
    }
    l->ids[l->n++] = sift_feature(domain, index, (unsigned)__builtin_ctz(buckets));
}

/* Takes the counters of the execution that just ended into F's exec.features (through an
 * export: the snapshot is left as it is). When out of memory the counters are reset and the
 * execution's features are lost. */
static void take_features(sift_fuzzer *f)
{
    f->exec.features.n = 0;
    size_t len = 0;
    int rc;
    while ((rc = sift_covmap_export(f->exec.rt->map, f->mask, f->exec.export_buf,
                                    f->exec.export_cap, &len)) == SIFT_ESPACE) {
        uint8_t *grown = realloc(f->exec.export_buf, len);
        if (!grown) {
            sift_covmap_reset(f->exec.rt->map, SIFT_DOMAINS_ALL);
            return;
        }
        f->exec.export_buf = grown;
        f->exec.export_cap = len;
    }
    reset_unjudged(f);
    if (rc != SIFT_OK) return;
    f->exec.exported = true;
    f->exec.export_len = len;
    sift_export_foreach(f->exec.export_buf, len, add_feature, &f->exec.features);
}

void sift_exec_fold_missed_values(sift_fuzzer *f)
{
    sift_exec *x = &f->exec;
    if (!x->values_missed || !x->exported) return;
    check_shape(sift_snapshot_import(f->snap, x->export_buf, x->export_len, NULL));
    x->values_missed = false;
}

uint64_t sift_exec_features(sift_fuzzer *f, const uint8_t *data, size_t size, bool rerun)
{
    uint64_t ns = run_target(f, data, size, !rerun, true);
    take_features(f);
    return ns;
}

sift_novelty sift_exec_judge_features(sift_fuzzer *f, const uint8_t *data, size_t size,
                                      bool every_value, uint64_t *ns)
{
    *ns = run_target(f, data, size, true, every_value);
    f->exec.features.n = 0;
    sift_novelty novelty = SIFT_NOTHING;
    check_shape(sift_snapshot_check_and_list(f->snap, f->exec.rt->map, f->mask, &novelty,
                                             add_feature, &f->exec.features));
    reset_unjudged(f);
    return novelty;
}
