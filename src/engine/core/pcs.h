/* The program counters of the instrumented code that a campaign has covered, as libFuzzer
 * reports them: NEW_PC (-print_pcs) and NEW_FUNC (-print_funcs) lines when an input the corpus
 * takes covers them, -exit_on_src_pos, and the -print_coverage and -print_full_coverage
 * listings at the end. Needs the modules' PC tables (sift-cc and clang's -fsanitize=fuzzer
 * emit them); names and lines need a sanitizer's symbolizer, addresses are printed without. */
#ifndef SIFT_PCS_H
#define SIFT_PCS_H

#include "engine/base/options.h"
#include "engine/core/corpus.h"
#include "rt/rt.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint64_t *covered; /* bit per edge counter (the edges domain's index): covered so far */
    size_t cap;        /* bits */
} sift_pcs;

/* Whether O asks for anything of this module. */
bool sift_pcs_wanted(const sift_options *o);

/* Takes in the N features IDS of an input the corpus took: its edges become covered, and with
 * REPORT, newly covered ones are reported as O asks (a match of -exit_on_src_pos ends the
 * process with exit code 0). */
void sift_pcs_observe(sift_pcs *p, const sift_options *o, const sift_rt_state *rt,
                      const sift_feature_id *ids, size_t n, bool report);

/* -focus_function: the edge (the edges domain's index) of the entry block of the function
 * named NAME in RT's modules, by the symbolizer's name for it; false when none has that name
 * (or nothing symbolizes). */
bool sift_pcs_function_entry(const sift_rt_state *rt, const char *name, size_t *edge);

/* Whether the N features IDS hold edge EDGE, at any count. */
bool sift_pcs_features_hold(const sift_feature_id *ids, size_t n, size_t edge);

/* -print_coverage's and -print_full_coverage's listings, per function of RT's modules. */
void sift_pcs_print_coverage(const sift_pcs *p, const sift_options *o, const sift_rt_state *rt);

void sift_pcs_free(sift_pcs *p);

#endif
