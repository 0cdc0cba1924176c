/* sift-cc / sift-c++: clang with sift's coverage instrumentation, linking sift's runtime. See
 * docs/runtime.md. */
#include "cc/sift_cc_args.h"
#include "cc/sift_cc_values.h"
#include "sift/version.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Edge counters the compiler bumps inline (no call per edge), the pc table that maps them to
 * code, comparison operands (trace-cmp covers switches too), and the deepest stack frame of a
 * run (stack-depth, which src/rt/depth.c counts as libFuzzer does: clang's -fsanitize=fuzzer
 * adds it on Linux, and a recursion 1000 calls deep is found by it). libFuzzer adds
 * indirect-calls, for which sift has no feedback; trace-div and trace-gep are left out because
 * they call a hook on every division and address computation for little extra guidance. */
#define SIFT_COVERAGE_FLAGS                                                                        \
    "-fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp,stack-depth"

/* The allocation functions that src/rt/interpose/alloc.c and alloc_cxx.c wrap, exactly those:
 * a wrapper whose function the link does not wrap would leave its __real_ name undefined. The
 * -u makes sure that alloc.c is in the link before the engine's archive asks for it. */
#define SIFT_ALLOC_WRAPS                                                                           \
    "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray,--wrap=aligned_alloc,"     \
    "--wrap=memalign,--wrap=posix_memalign,--wrap=_Znwm,--wrap=_Znam,"                             \
    "--wrap=_ZnwmRKSt9nothrow_t,--wrap=_ZnamRKSt9nothrow_t,--undefined=__sift_malloc_limit"

/* The folder of this executable, symlinks resolved (so sift-c++ finds sift-cc's). */
static int self_dir(char *dir)
{
    ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
    if (n <= 0) return -1;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) return -1;
    *slash = '\0';
    return 0;
}

/* DIR/REL with symlinks and dot folders resolved into OUT; false when it does not exist. */
static bool resolve(char *out, const char *dir, const char *rel)
{
    char joined[PATH_MAX];
    if (snprintf(joined, sizeof(joined), "%s/%s", dir, rel) >= (int)sizeof(joined)) return false;
    return realpath(joined, out) != NULL;
}

/* The sift headers: next to an installed bin/, or in the source tree above build/bin/. */
static bool find_include(const char *dir, char *out)
{
    static const char *const places[] = {"../include", "../../include"};
    for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
        char header[PATH_MAX];
        if (resolve(out, dir, places[i]) &&
            snprintf(header, sizeof(header), "%s/sift/version.h", out) < (int)sizeof(header) &&
            access(header, R_OK) == 0)
            return true;
    }
    return false;
}

static int find_lib(const char *dir, const char *name, char *out)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "../lib/%s", name);
    if (resolve(out, dir, rel)) return 0;
    fprintf(stderr, "sift-cc: cannot find %s in %s/../lib\n", name, dir);
    return -1;
}

static const char *const no_builtin[] = {"-fno-builtin-bcmp",        "-fno-builtin-memcmp",
                                         "-fno-builtin-strncmp",     "-fno-builtin-strcmp",
                                         "-fno-builtin-strncasecmp", "-fno-builtin-strcasecmp",
                                         "-fno-builtin-strstr",      "-fno-builtin-strcasestr",
                                         "-fno-builtin-memmem",      NULL};

/* Value instrumentation (docs/values.md) unless -fno-sift-values or SIFT_VALUES=0 says
 * otherwise. */
#define SIFT_VALUES_DEFAULT 1

/* SIFT_VALUES=0 or 1 sets the default of -fsift-values; -1 after a one-line error. */
static int values_default(void)
{
    const char *env = getenv("SIFT_VALUES");
    if (!env || !*env) return SIFT_VALUES_DEFAULT;
    if (!strcmp(env, "0") || !strcmp(env, "1")) return env[0] == '1';
    fprintf(stderr, "sift-cc: SIFT_VALUES=%s: expected 0 or 1\n", env);
    return -1;
}

static int run(const char *compiler, char **argv)
{
    fflush(stdout);
    execvp(compiler, argv);
    fprintf(stderr, "sift-cc: cannot run %s: %s\n", compiler, strerror(errno));
    return 127;
}

/* Where sift-cc finds its own parts: its folder, sift's headers, and the archives it links. */
typedef struct {
    bool have_dir;
    char dir[PATH_MAX], include[PATH_MAX], rt[PATH_MAX], fuzzer[PATH_MAX], interpose[PATH_MAX];
} parts;

/* The parts PLAN needs; 0, or -1 after a line that says which is missing. */
static int find_parts(const sift_cc_plan *plan, parts *p)
{
    p->have_dir = self_dir(p->dir) == 0;
    if (plan->link == SIFT_CC_LINK_NONE) return 0;
    if (!p->have_dir) {
        fprintf(stderr, "sift-cc: cannot find its own executable: %s\n", strerror(errno));
        return -1;
    }
    if (find_lib(p->dir, "libsift-rt.a", p->rt) < 0 ||
        (!plan->interceptors && find_lib(p->dir, "libsift-interpose.a", p->interpose) < 0) ||
        (plan->link == SIFT_CC_LINK_FUZZER && find_lib(p->dir, "libsift-fuzzer.a", p->fuzzer) < 0))
        return -1;
    return 0;
}

/* sift's flags for compiling, before the user's arguments, into OUT; their number. */
static int compile_flags(const sift_cc_plan *plan, parts *p, char **out)
{
    int n = 0;
    if (!plan->user_coverage) out[n++] = SIFT_COVERAGE_FLAGS;
    /* What clang's -fsanitize=fuzzer-no-link does besides coverage: it marks every function
     * optforfuzzing, so that the optimiser keeps branches it would turn into selects, and each
     * keeps its edge. Without it a libpng build had 853 counters where libFuzzer's has 1086,
     * and a corpus merged by sift reached 1% fewer of the libFuzzer build's edges. Only the
     * front end takes the kind this way, with no coverage or runtime of its own. */
    out[n++] = "-Xclang";
    out[n++] = "-fsanitize=fuzzer-no-link";
    /* Calls to these must stay calls, or neither a sanitizer's interceptors nor sift's
     * interposers see the operands (the list clang itself uses for -fsanitize=fuzzer). */
    for (size_t i = 0; no_builtin[i]; i++)
        out[n++] = (char *)no_builtin[i];
    /* Searched after the system folders, so sift's headers never shadow the program's. */
    if (p->have_dir && find_include(p->dir, p->include)) {
        out[n++] = "-idirafter";
        out[n++] = p->include;
    }
    out[n] = NULL;
    return n;
}

/* sift's flags for linking, after the user's arguments, into OUT; their number. */
static int link_flags(const sift_cc_plan *plan, parts *p, char **out)
{
    int n = 0;
    if (plan->link != SIFT_CC_LINK_NONE) {
        /* Shared objects loaded later resolve the callbacks against the executable. */
        out[n++] = "-Wl,--export-dynamic-symbol=__sanitizer_cov_*";
        out[n++] = "-Wl,--export-dynamic-symbol=__sift_values_*";
        out[n++] = "-Wl,--export-dynamic-symbol=__sift_fn_dirty_*";
        /* Whole: the sanitizer runtime clang links for coverage defines every callback as a
         * weak no-op, which would keep the linker from taking sift's out of the archive. */
        /* A -x of the user's would make clang read the archives as source. */
        out[n++] = "-x";
        out[n++] = "none";
        out[n++] = "-Wl,--whole-archive";
        out[n++] = p->rt;
        out[n++] = "-Wl,--no-whole-archive";
        /* memcmp, strcmp, ... that report their operands: for comparison feedback where no
         * sanitizer intercepts them already; and the program's allocations checked against
         * -malloc_limit_mb where no sanitizer's allocator offers malloc hooks. */
        if (!plan->interceptors) {
            out[n++] = SIFT_ALLOC_WRAPS;
            out[n++] = p->interpose;
        }
        /* The engine, and main when the program has none, come out of the archive as needed. */
        if (plan->link == SIFT_CC_LINK_FUZZER) {
            /* The harness may sit in an archive the user names before the engine (OSS-Fuzz's
             * pcre2 links libpcre2-fuzzsupport.a): nothing would pull it out by the time the
             * engine asks for it. clang's libFuzzer link works there, and so must this. */
            out[n++] = "-Wl,--undefined=LLVMFuzzerTestOneInput";
            out[n++] = p->fuzzer;
            out[n++] = "-l:libmd.a"; /* the engine names artifacts by SHA-1 */
        }
        out[n++] = "-lpthread";
        out[n++] = "-ldl";
        out[n++] = "-lm";
    }
    out[n] = NULL;
    return n;
}

/* The compiler run once, sift's flags around the user's arguments. */
static int run_once(const char *compiler, const sift_cc_plan *plan, char **compile, char **link)
{
    int nc = 0, nl = 0;
    while (compile[nc])
        nc++;
    while (link[nl])
        nl++;
    char **args = calloc((size_t)plan->nargs + nc + nl + 2, sizeof(*args));
    if (!args) {
        fprintf(stderr, "sift-cc: out of memory\n");
        return 1;
    }
    int n = 0;
    args[n++] = (char *)compiler;
    for (int i = 0; i < nc; i++)
        args[n++] = compile[i];
    for (int i = 0; i < plan->nargs; i++)
        args[n++] = plan->args[i];
    for (int i = 0; i < nl; i++)
        args[n++] = link[i];
    args[n] = NULL;
    int rc = run(compiler, args);
    free(args);
    return rc;
}

/* With values on, the compile goes through sift-instrument (values.c). */
static int run_with_values(const char *compiler, const sift_cc_plan *plan, const parts *p,
                           char **compile, char **link)
{
    char instrument[PATH_MAX];
    if (!p->have_dir || !resolve(instrument, p->dir, "sift-instrument")) {
        fprintf(stderr, "sift-cc: cannot find sift-instrument next to sift-cc\n");
        return 1;
    }
    sift_cc_values_tools tools = {
        .compiler = compiler, .instrument = instrument, .compile = compile, .link = link};
    return sift_cc_values_run(plan, &tools);
}

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    size_t name_len = strlen(name);
    bool cxx = name_len >= 2 && !strcmp(name + name_len - 2, "++");
    const char *compiler = getenv(cxx ? "SIFT_CLANGXX" : "SIFT_CLANG");
    if (!compiler || !*compiler) compiler = cxx ? "clang++" : "clang";

    sift_cc_plan plan;
    if (sift_cc_plan_args(argc - 1, argv + 1, &plan) < 0) return 1;
    if (plan.version) {
        sift_cc_plan_free(&plan);
        printf("%s %s (clang: %s)\n", name, SIFT_VERSION, compiler);
        argv[0] = (char *)compiler;
        return run(compiler, argv);
    }
    parts p;
    char *compile[24], *link[24];
    int rc = 1;
    if (find_parts(&plan, &p) == 0) {
        compile_flags(&plan, &p, compile);
        link_flags(&plan, &p, link);
        int values = plan.values >= 0 ? plan.values : values_default();
        if (values >= 0)
            rc = values && sift_cc_values_applies(&plan)
                     ? run_with_values(compiler, &plan, &p, compile, link)
                     : run_once(compiler, &plan, compile, link);
    }
    sift_cc_plan_free(&plan);
    return rc;
}
