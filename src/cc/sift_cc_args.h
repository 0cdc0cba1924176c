/* sift-cc's reading of a compiler command line: what it builds and which sift flags it needs. */
#ifndef SIFT_CC_ARGS_H
#define SIFT_CC_ARGS_H

#include <stdbool.h>

/* What the command links from sift, beyond instrumenting. */
typedef enum {
    SIFT_CC_LINK_NONE = 0, /* compiles only, or builds a shared object */
    SIFT_CC_LINK_RT,       /* an executable with the runtime (hooks) only: no -fsanitize=fuzzer */
    SIFT_CC_LINK_FUZZER    /* an executable with the runtime and the engine (-fsanitize=fuzzer) */
} sift_cc_link;

typedef struct {
    char **args; /* the user's arguments with fuzzer removed from -fsanitize lists */
    int nargs;
    sift_cc_link link;
    bool user_coverage; /* the user chose the counter kind with -fsanitize-coverage= */
    bool version;       /* --version */
    bool interceptors;  /* a sanitizer that intercepts memcmp, strcmp, ... is in effect */
    int values;         /* -fsift-values: 1, -fno-sift-values: 0 (the last wins), neither: -1 */
    char *values_max_struct; /* N of -fsift-values-max-struct=N (digits), or NULL */
} sift_cc_plan;

/* Reads the user's arguments ARGV[0..ARGC-1] into PLAN. Response files (@file) are read to
 * find out what the command builds, and passed on unchanged. Returns 0, or -1 after printing
 * one line naming a user error (or an out-of-memory) to stderr. */
int sift_cc_plan_args(int argc, char **argv, sift_cc_plan *plan);

void sift_cc_plan_free(sift_cc_plan *plan);

/* Whether the driver flag ARG takes the next argument as its value ("-o", "-x", "-MF", ...). */
bool sift_cc_takes_value(const char *arg);

#endif
