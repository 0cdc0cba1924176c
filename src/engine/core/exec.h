/* The executor: runs the target on one input, contained, and reads what that execution covered
 * (the observer and feedback of LibAFL's vocabulary). It is the only code of the fuzzing core
 * that touches the runtime's state (rt.h): the counters, the comparison table, the value hooks'
 * mode. */
#ifndef SIFT_EXEC_H
#define SIFT_EXEC_H

#include "engine/contain/fault.h"
#include "engine/core/corpus.h"
#include "engine/core/values_share.h"
#include "rt/rt.h"
#include "sift/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sift_fuzzer sift_fuzzer;

/* The features one execution owns, grown as they are read. */
typedef struct {
    sift_feature_id *ids;
    size_t n, cap;
} sift_features;

/* What the executor owns inside a fuzzer. */
typedef struct {
    sift_rt_state *rt;
    bool exact_copy;   /* run each input from an exact-size heap copy (under ASan) */
    uint8_t *run_copy; /* otherwise each input runs from a copy here, of run_cap bytes */
    size_t run_cap;
    uint8_t *export_buf; /* scratch for feature exports */
    size_t export_cap;
    sift_features features; /* the last execution's, when they were asked for */
    uint64_t end_ns;        /* when the last execution returned (0 before the first) */
    uint64_t last_ns;       /* how long it ran */
    /* -close_fd_mask=2: stderr is QUIET_STDERR (/dev/null) while the target runs, and the
     * process's own again (LOUD_STDERR, a copy) between runs, so that sift's lines still show,
     * as libFuzzer's, which prints through a copy. Both -1 otherwise. */
    int quiet_stderr, loud_stderr;
    /* Whether value features count on a share of the mutants' runs only (values_share.h), and
     * whether the next run is a mutant's. */
    bool values_shared, mutant_next;
    sift_values_share values_share;
    /* The last counted run left values out, and whether EXPORT_BUF holds the export of the
     * run after it (of EXPORT_LEN bytes). */
    bool values_missed, exported;
    size_t export_len;
} sift_exec;

/* The counters per domain a snapshot of RT's maps needs: every module loaded now, and room for
 * modules loaded later. Processes that share a snapshot must agree on it. */
void sift_exec_capacity(const sift_rt_state *rt, size_t cap[SIFT_DOMAIN_COUNT]);

/* Sets up F's executor for F's feedback mask, and CAP for F's snapshot. Prints one line and
 * returns -1 when out of memory. */
int sift_exec_init(sift_fuzzer *f, size_t cap[SIFT_DOMAIN_COUNT]);
void sift_exec_free(sift_fuzzer *f);

/* Turns the inline value features on when they count (after the fault handlers are in), for
 * every run but those of the mutants that -values_budget leaves them out of. */
void sift_exec_arm_values(sift_fuzzer *f);

/* Before an input whose judged run left values out is taken into the corpus: folds the value
 * features that its listing run found into F's snapshot, as a run that counted them would
 * have, so that no later input passes for new by them. */
void sift_exec_fold_missed_values(sift_fuzzer *f);

/* The next run is a mutant's, judged on what it adds: value features count in it only when
 * the share draws it. Runs that list their features count them always. */
void sift_exec_mutant_next(sift_fuzzer *f);

/* libFuzzer's start-up lines on the instrumented modules of RT, "INFO: Loaded N modules   (M
 * inline 8-bit counters): ..." and "INFO: Loaded N PC tables (M PCs): ...", from which
 * ClusterFuzz takes the number of edges and OSS-Fuzz's build check the first module's. Nothing
 * when no module is instrumented, as libFuzzer. */
void sift_exec_print_modules(const sift_rt_state *rt);

/* The runtime's table of comparison operands, for the mutator. */
sift_cmp_table *sift_exec_cmps(sift_fuzzer *f);

/* Executes DATA once, contained; returns what it added to the global coverage. */
sift_novelty sift_fuzzer_execute(sift_fuzzer *f, const uint8_t *data, size_t size)
    SIFT_FRAME(sift_fuzzer_execute);

/* Runs DATA to learn every feature it owns into F's exec.features (the novelty pass only says
 * whether any is new); run again after sift_fuzzer_execute (RERUN), it also filters out coverage
 * that only happened once, and counts as no other input in -runs and exec/s, as libFuzzer counts
 * one execution per input. Returns the execution's nanoseconds. */
uint64_t sift_exec_features(sift_fuzzer *f, const uint8_t *data, size_t size, bool rerun)
    SIFT_FRAME(sift_exec_features);

/* Executes DATA once, contained, and both returns what it added to the global coverage and
 * lists its features into F's exec.features, with its nanoseconds in *NS: one execution where
 * sift_fuzzer_execute and sift_exec_features take two, for a bit more work after it. Unless
 * EVERY_VALUE, the list leaves out the value features F's snapshot knows: instrumented code
 * skips them, as in every run that only asks what is new (sift_values_skip_known). */
sift_novelty sift_exec_judge_features(sift_fuzzer *f, const uint8_t *data, size_t size,
                                      bool every_value, uint64_t *ns)
    SIFT_FRAME(sift_exec_judge_features);

#endif
