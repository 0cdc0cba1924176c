/* sift-cc with value instrumentation: each C or C++ source goes through clang to optimised
 * bitcode, through sift-instrument, and through clang again to its object file; a command that
 * also links then links those objects. */
#ifndef SIFT_CC_VALUES_H
#define SIFT_CC_VALUES_H

#include "cc/sift_cc_args.h"

typedef struct {
    const char *compiler;   /* clang or clang++ */
    const char *instrument; /* sift-instrument */
    char *const *compile;   /* sift's flags for compiling (NULL-terminated) */
    char *const *link;      /* sift's flags and libraries for linking (NULL-terminated) */
} sift_cc_values_tools;

/* Whether the command compiles C or C++ sources to object files, alone or on the way to
 * linking, in a form sift-cc knows how to split. Preprocessing, assembly output, bitcode
 * output, LTO, standard input, and commands clang refuses (several outputs for one -o) are
 * left to clang as they are. */
bool sift_cc_values_applies(const sift_cc_plan *plan);

/* Runs the command as above. Returns the exit code of the first step that failed, or 0. */
int sift_cc_values_run(const sift_cc_plan *plan, const sift_cc_values_tools *tools);

#endif
