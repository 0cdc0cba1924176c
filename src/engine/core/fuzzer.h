/* One fuzzing process: executes inputs, judges novelty, grows the corpus, prints progress. */
#ifndef SIFT_FUZZER_H
#define SIFT_FUZZER_H

#include "engine/core/corpus.h"
#include "engine/core/corpus_dir.h"
#include "engine/core/dict.h"
#include "engine/contain/fault.h"
#include "engine/core/mutate.h"
#include "engine/base/options.h"
#include "engine/core/exec.h"
#include "engine/core/pcs.h"
#include "engine/core/recdict.h"
#include "sift/snapshot.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*sift_target_fn)(const uint8_t *data, size_t size);

typedef struct {
    uint64_t execs;
    uint64_t new_units;
    uint64_t start_ns, last_new_ns;
    uint64_t slowest_ns;
    uint64_t slow_unit_s; /* the time of the last slow-unit artifact, whole seconds */
    uint64_t run_ns;      /* all counted executions together: their mean is the norm of speed */
    uint64_t slow_finds;  /* mutants that reached something new but were too slow to keep */
} sift_stats;

typedef struct sift_fuzzer sift_fuzzer;

/* What a caller adds to a run (the workers of -workers, docs/workers.md); each may be NULL. */
typedef struct {
    void *ctx;
    /* Fills the corpus and sets max_len in place of loading the corpus folders. */
    int (*seed)(void *ctx, sift_fuzzer *f);
    /* A mutant of PARENT was just taken into the corpus: its last entry. */
    void (*found)(void *ctx, sift_fuzzer *f, const sift_entry *parent);
    /* Once per iteration of the fuzzing loop. */
    void (*tick)(void *ctx, sift_fuzzer *f);
} sift_fuzzer_hooks;

struct sift_fuzzer {
    sift_options *opts;
    sift_target_fn target;
    sift_snapshot *snap;
    sift_corpus *corpus;
    sift_rng rng;
    struct sift_view *view; /* the live view while it runs (view.h), else NULL */
    sift_dict dict;
    sift_mutator mutator;
    sift_fault fault;
    sift_stats stats;
    unsigned mask;              /* feedback domains that count */
    size_t max_len;             /* -max_len, or chosen from the corpus */
    size_t len_limit;           /* the current length limit under -len_control */
    bool focus;                 /* -focus_function names a function found: focus_edge */
    size_t focus_edge;          /* the edge of its entry block */
    uint64_t quiet_since_execs; /* last new input or length limit change */
    sift_corpus_dir dir;        /* the first corpus folder, where new inputs are saved */
    uint8_t *buf;               /* mutation buffer of max_len bytes */
    /* While LLVMFuzzerCustomMutator runs: the operators of its LLVMFuzzerMutate calls, "-"
     * separated, the first 10 (all at -verbosity=2), as libFuzzer prints a custom mutation. */
    char *custom_trace;
    sift_exec exec;
    sift_pcs pcs; /* program counters covered, for libFuzzer's NEW_PC/NEW_FUNC and coverage */
    sift_recdict recdict; /* comparison operands that made inputs the corpus took */
    sift_fuzzer_hooks hooks;
};

/* Prints the error ERR of loading dictionary D in one line; a parse error also in libFuzzer's
 * words, "ParseDictionaryFile: error in line N", which ClusterFuzz matches. */
void sift_fuzzer_dict_error(const sift_dict *d, const char *err);

/* Sets up F for OPTS and TARGET: snapshot, corpus, dictionary, handlers. Prints one line and
 * returns -1 on bad user input (a dictionary, say). */
int sift_fuzzer_init(sift_fuzzer *f, sift_options *opts, sift_target_fn target, const char *argv0);

/* The harness's LLVMFuzzerCustomMutator as an address to print; NULL when it has none. */
const void *sift_fuzzer_custom_mutator(void);
void sift_fuzzer_free(sift_fuzzer *f);

/* After a run of DATA that allocated more than it freed, runs it again with LeakSanitizer
 * ignoring the second run, and checks for a leak when that run did too, as libFuzzer does after
 * every execution: a leaking input is reported (and the process ends) before it is saved. */
void sift_fuzzer_check_leaks(sift_fuzzer *f, const uint8_t *data, size_t size);

/* Executes DATA and, when it adds coverage, takes it into the corpus (saving it into the
 * output folder when SAVE). Returns whether it was added. */
bool sift_fuzzer_try(sift_fuzzer *f, const uint8_t *data, size_t size, bool save, const char *how)
    SIFT_FRAME(sift_fuzzer_try);

/* Executes DATA, a mutant, as sift_fuzzer_try does (saved, reported as NEW), but keeps no input
 * that runs a hundred times the campaign's mean execution (and 10 ms) twice in a row; what it
 * reached still counts as seen. Returns whether it was added. */
bool sift_fuzzer_try_mutant(sift_fuzzer *f, const uint8_t *data, size_t size)
    SIFT_FRAME(sift_fuzzer_try_mutant);

/* Executes DATA, a mutant smaller than PARENT, once: takes it into the corpus when it adds
 * coverage (as sift_fuzzer_try_mutant), or else when it is the cheapest input (size, then
 * time) having one of its features, as libFuzzer keeps the smallest input per feature (REDUCE);
 * entries left without any such feature are evicted and their files removed (at the corpus
 * folder's next flush, corpus_dir.h). Value features count only where PARENT is top-rated for
 * one (docs/scheduling.md). Returns whether it took DATA. */
bool sift_fuzzer_try_smaller(sift_fuzzer *f, const uint8_t *data, size_t size,
                             const sift_entry *parent) SIFT_FRAME(sift_fuzzer_try_smaller);

/* Loads and executes the corpus folders (OPTS inputs), smallest first, then fuzzes until
 * -runs, -max_total_time or a stop request. Returns the process exit code. */
int sift_fuzzer_run(sift_fuzzer *f) SIFT_FRAME(sift_fuzzer_run);

#endif
