/* The flag table of a harness binary and the three walks over it: defaults, parsing, help. */
#include "engine/base/options.h"
#include "sift/covmap.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FLAG_INT, FLAG_STRING, FLAG_FEATURES, FLAG_CHOICE } flag_kind;

typedef struct {
    const char *name;
    flag_kind kind;
    size_t offset;
    long long def;
    /* Integers: the accepted range. Strings: min is the shortest accepted value (0 or 1). */
    long long min, max;
    const char *help;
    const char *choices; /* FLAG_CHOICE: the values, '|'-separated; the field holds the index */
} flag;

/* The walks write fields through pointers of the kind's type, so the table must agree with the
 * struct: _Generic without a matching type fails to compile. T is a type name, which
 * parentheses would break. */
#define FIELD(f, T)                                                                                \
    /* NOLINTNEXTLINE(bugprone-macro-parentheses) */                                               \
    (offsetof(sift_options, f) + 0 * sizeof(char[_Generic(((sift_options *)0)->f, T : 1)]))
/* clang-format would split these brace initializers and break the # operator. */
/* clang-format off */
#define INT(f, d, lo, hi, h) {#f, FLAG_INT, FIELD(f, long long), d, lo, hi, h, NULL}
#define BOOL(f, d, h)        INT(f, d, 0, 1, h)
#define STRING(f, minlen, h) {#f, FLAG_STRING, FIELD(f, const char *), 0, minlen, 0, h, NULL}
#define CHOICE(f, d, c, h)   {#f, FLAG_CHOICE, FIELD(f, long long), d, 0, 0, h, c}
/* clang-format on */

/* Seconds and megabytes stay below INT_MAX so that the engine can turn them into nanoseconds or
 * bytes in 64 bits without overflow. Exit codes must fit the 8 bits a parent process sees. */
static const flag flags[] = {
    INT(verbosity, 1, 0, INT_MAX, "Verbosity level: 0 errors only, 1 progress, 2 and up more."),
    INT(seed, 0, INT_MIN, LLONG_MAX,
        "Random seed. If 0, one is taken from the clock and printed; below 0, as libFuzzer's "
        "unsigned seed reads it (-1 is 4294967295)."),
    INT(runs, -1, -1, LLONG_MAX, "Number of individual test runs (-1 for no limit)."),
    INT(max_len, 0, 0, INT_MAX,
        "Maximum length of a test input. If 0, the longest corpus input, at least 4096."),
    INT(len_control, 100, 0, INT_MAX,
        "Try short inputs first, raising the length limit over time; larger values raise it more "
        "slowly. If 0, allow max_len from the start."),
    INT(timeout, 1200, 0, INT_MAX,
        "Seconds one input may run before it is reported as a timeout (0 for no limit)."),
    INT(error_exitcode, 77, 0, 255, "Exit code when sift reports a bug."),
    INT(timeout_exitcode, 70, 0, 255, "Exit code when sift reports a timeout."),
    INT(max_total_time, 0, 0, INT_MAX, "Stop fuzzing after this many seconds (0 for no limit)."),
    BOOL(help, 0, "Print this help and exit."),
    INT(fork, 0, 0, 1024, "Same as -workers=N, as libFuzzer users type it."),
    BOOL(fork_corpus_groups, 0,
         "With -fork (or -workers), each worker's jobs, numbered and timed as libFuzzer's fork "
         "jobs, mutate inputs of one size group of the corpus in turn."),
    BOOL(merge, 0,
         "If 1, merge the 2nd, 3rd, ... corpus folders into the 1st, keeping only inputs that add "
         "coverage."),
    BOOL(set_cover_merge, 0,
         "If 1, merge as -merge=1 does, but keep the fewest inputs that together add all the "
         "features the others add, the one that adds the most first (greedy set cover)."),
    STRING(merge_control_file, 1,
           "With -merge=1: record the merge's progress in this file, in libFuzzer's format, and "
           "keep it."),
    BOOL(minimize_crash, 0,
         "If 1, minimize the given crash input. Bound it with -runs or -max_total_time; name the "
         "result with -exact_artifact_path."),
    BOOL(cleanse_crash, 0,
         "If 1, replace the bytes of the given crash input that the crash does not need with ' ' "
         "or 0xff; name the result with -exact_artifact_path."),
    INT(use_value_profile, 0, 0, 2,
        "If 1 or 2, count comparison operand distances as coverage: adds cmp to -features."),
    INT(values_budget, 6, 0, 100,
        "Percent by which value features may slow the mean execution: they count on as many "
        "mutants' runs as that allows, measured as the campaign goes (at least 1 in 32), and on "
        "63 in 64 while they find and nothing else does; 100 counts them on every run."),
    BOOL(use_cmp, 1, "If 1, use the operands of the target's comparisons to guide mutations."),
    BOOL(use_memmem, 1,
         "If 1, use the needles of the target's failed strstr and memmem searches to guide "
         "mutations."),
    BOOL(entropic, 1,
         "Accepted as libFuzzer's; sift's own corpus scheduling stands in (docs/scheduling.md)."),
    INT(entropic_feature_frequency_threshold, 255, 1, 255, "Accepted with -entropic; unused."),
    INT(entropic_number_of_rarest_features, 100, 1, INT_MAX, "Accepted with -entropic; unused."),
    BOOL(entropic_scale_per_exec_time, 0, "Accepted with -entropic; unused."),
    INT(jobs, 0, 0, INT_MAX, "Same as -workers=N, unless -workers is given."),
    INT(workers, 0, 0, 1024,
        "If N >= 1, fuzz in N worker processes that share coverage and corpus, under a supervisor "
        "that saves what they find; the first crash ends it unless -ignore_crashes=1 "
        "(docs/workers.md)."),
    BOOL(reduce_inputs, 1,
         "If 1, take a mutant that is smaller than its parent and has one of its features into "
         "the corpus in place of the entries it makes redundant (REDUCE)."),
    BOOL(shrink, 0, "If 1, reduce as -reduce_inputs=1 does, even with -reduce_inputs=0."),
    INT(reload, 1, 0, INT_MAX,
        "Read the first corpus folder again every N seconds and take in what other processes "
        "saved there (0: never)."),
    BOOL(ignore_crashes, 0,
         "With -fork, -jobs or -workers: if 1, go on after a crash, reporting each distinct one "
         "once; if 0, the campaign ends at the first crash."),
    BOOL(ignore_timeouts, 1,
         "With -fork, -jobs or -workers: if 1, go on after a timeout; if 0, end at the first."),
    BOOL(ignore_ooms, 1,
         "With -fork, -jobs or -workers: if 1, go on after an out-of-memory; if 0, end at the "
         "first."),
    BOOL(only_ascii, 0, "If 1, generate only ASCII (isprint and isspace) inputs."),
    BOOL(keep_seed, 0,
         "If 1, keep the seeds in the corpus, and never drop them, whether or not they add "
         "coverage (in one process; -workers drop them as any input)."),
    BOOL(cross_over, 1,
         "If 1, cross inputs over (sift's CrossOver mutation, and LLVMFuzzerCustomCrossOver)."),
    INT(mutate_depth, 5, 1, INT_MAX,
        "Stack at most this many mutations on one input (sift stacks 1..5, most often 1 or 2)."),
    STRING(dict, 1, "Dictionary file (AFL/libFuzzer format) of tokens to insert into inputs."),
    STRING(seed_inputs, 0,
           "Seed input files besides the corpus folders' files: a comma-separated list, or @ "
           "and a file that holds that list."),
    STRING(artifact_prefix, 0,
           "Write failing inputs as $(artifact_prefix)crash-<sha1>, timeout-<sha1>, ... "
           "(default: the current folder)."),
    STRING(exact_artifact_path, 1,
           "Write the single artifact of a failure to this path, overriding -artifact_prefix."),
    STRING(features_dir, 1,
           "Write each input the corpus takes as a file of its features here, named as the "
           "input: 32-bit numbers in the host's byte order, sift's feature ids folded to 32 bits."),
    STRING(mutation_graph_file, 1,
           "Append each input the corpus takes to this file as a graph in DOT's syntax: its SHA-1 "
           "and an edge from the entry it was made from, labelled with the mutations."),
    INT(report_slow_units, 10, 0, INT_MAX,
        "Write an input that runs at least this many seconds, and 10% longer than any before, as "
        "slow-unit-<sha1>."),
    INT(crash_history, 0, 0, 10000,
        "Keep copies of the last N inputs run; a crash, timeout or out-of-memory also writes "
        "them, its own input last, to the folder history-<sha1> beside its artifact, so that a "
        "crash that depends on the inputs before it (a heap an earlier one corrupted) can be run "
        "again."),
    BOOL(create_missing_dirs, 0,
         "If 1, create the corpus folders, -features_dir and the folders of -artifact_prefix "
         "and -exact_artifact_path when they do not exist."),
    BOOL(ignore_remaining_args, 0,
         "If 1, read no argument after this one: they are the harness's own, for "
         "LLVMFuzzerInitialize."),
    BOOL(print_final_stats, 0, "If 1, print statistics at exit."),
    BOOL(print_pcs, 0, "If 1, print each program counter an input taken covers first (NEW_PC)."),
    INT(print_funcs, 2, 0, INT_MAX,
        "Print at most this many of the functions an input taken covers first (NEW_FUNC)."),
    STRING(exit_on_src_pos, 1,
           "Exit (code 0) once an input taken covers code whose function or FILE:LINE holds "
           "this text, e.g. foo.cc:123 (needs a sanitizer's symbolizer)."),
    BOOL(print_coverage, 0,
         "If 1, print the functions covered and not, with their edges, at exit (needs a "
         "sanitizer's symbolizer)."),
    BOOL(print_full_coverage, 0,
         "If 1, print every function's uncovered (U) and covered (C) lines at exit (needs a "
         "sanitizer's symbolizer)."),
    INT(close_fd_mask, 0, 0, 3, "If 1, close stdout at start; if 2, close stderr; if 3, both."),
    BOOL(detect_leaks, 1, "If 1 and LeakSanitizer is linked in, report leaks while fuzzing."),
    INT(trace_malloc, 0, 0, 2,
        "If 1, print each malloc and free of an input's run (with a sanitizer's allocator); if "
        "2, each with its stack."),
    INT(rss_limit_mb, 2048, 0, INT_MAX,
        "Report out-of-memory when the resident size exceeds this many MB (0 for no limit)."),
    INT(malloc_limit_mb, 0, 0, INT_MAX,
        "Report out-of-memory when one allocation exceeds this many MB. If 0, rss_limit_mb."),
    /* cmp is left out by default, as libFuzzer leaves out its value profile: counted, operand
     * distances tripled libpng's corpus in a 5 s run without adding an edge, and the operand
     * table solves magic values through mutation without them. */
    {"features", FLAG_FEATURES, FIELD(features, unsigned),
     SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES) | SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES), 0, 0,
     "Coverage domains, comma-separated: edges (control-flow edges), cmp (comparison operand "
     "distances), values (function-boundary values).",
     NULL},
    STRING(stats_file, 1, "Write statistics as JSON to this file."),
    STRING(focus_function, 1,
           "Pick the inputs that run this function (the symbolizer's name for it) 1000 times as "
           "often as the others; 'auto' needs -data_flow_trace, which sift lacks, and does "
           "nothing."),
    STRING(exit_on_item, 1,
           "Stop (exit code 0) once an input with this SHA-1 is taken into the corpus."),
    STRING(out, 1,
           "With -workers: also write the corpus, crashes and hangs in AFL++'s layout into this "
           "folder, and resume from it."),
    STRING(sync_dir, 1,
           "With -workers: share entries with the sift and AFL++ instances of this folder; the "
           "output goes to -sync_dir/-name."),
    STRING(name, 1, "This instance's name in -sync_dir."),
    STRING(trace, 1,
           "Run the one input file given with value recording on and write the function-boundary "
           "records it produces to this file (- for stderr)."),
    STRING(trace_format, 0,
           "Format of -trace: text, or json for JSON lines. If not given, json when the -trace "
           "file name ends in .jsonl, else text."),
    CHOICE(status, SIFT_STATUS_AUTO, "auto|tty|lines",
           "Progress while fuzzing: tty redraws a live view in place about once a second, lines "
           "prints libFuzzer's status lines, auto the view when stderr is a terminal and TERM is "
           "set and not dumb (docs/watching.md)."),
};

#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

/* Indexed by sift_domain. */
static const char *const domain_names[SIFT_DOMAIN_COUNT] = {"edges", "cmp", "values"};

static void *field(sift_options *o, const flag *f)
{
    return (char *)o + f->offset;
}

void sift_options_defaults(sift_options *o)
{
    memset(o, 0, sizeof(*o));
    for (size_t i = 0; i < NFLAGS; i++) {
        const flag *f = &flags[i];
        switch (f->kind) {
        case FLAG_INT:
        case FLAG_CHOICE:
            *(long long *)field(o, f) = f->def;
            break;
        case FLAG_STRING:
            *(const char **)field(o, f) = NULL;
            break;
        case FLAG_FEATURES:
            *(unsigned *)field(o, f) = (unsigned)f->def;
            break;
        }
    }
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* strtoll would skip leading spaces and accept "+"; a flag value is exactly [-]digits. */
static int parse_int(const char *s, long long *out)
{
    const char *d = s + (*s == '-');
    if (*d < '0' || *d > '9') return -1;
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno || *end ? -1 : 0;
}

static int parse_features(const char *s, unsigned *mask)
{
    *mask = 0;
    for (;;) {
        size_t n = strcspn(s, ",");
        unsigned d = 0;
        while (d < SIFT_DOMAIN_COUNT &&
               !(strlen(domain_names[d]) == n && !memcmp(s, domain_names[d], n)))
            d++;
        if (d == SIFT_DOMAIN_COUNT) return -1;
        *mask |= SIFT_DOMAIN_BIT(d);
        if (!s[n]) return 0;
        s += n + 1;
    }
}

/* The index of VALUE among the '|'-separated CHOICES; -1 when it is none of them. */
static long long parse_choice(const char *value, const char *choices)
{
    size_t len = strlen(value);
    for (long long i = 0;; i++) {
        size_t n = strcspn(choices, "|");
        if (n == len && !memcmp(choices, value, n)) return i;
        if (!choices[n]) return -1;
        choices += n + 1;
    }
}

/* Choice number I of the '|'-separated CHOICES, into BUF. */
static void choice_name(const char *choices, long long i, char *buf, size_t len)
{
    for (; i > 0 && strchr(choices, '|'); i--)
        choices = strchr(choices, '|') + 1;
    snprintf(buf, len, "%.*s", (int)strcspn(choices, "|"), choices);
}

static int set_flag(sift_options *o, const flag *f, const char *arg, const char *value, char *err,
                    size_t errlen)
{
    if (f->kind == FLAG_STRING) {
        if (!*value && f->min > 0) return fail(err, errlen, "%s: expected a file name", arg);
        *(const char **)field(o, f) = value;
        return 0;
    }
    if (f->kind == FLAG_CHOICE) {
        long long i = parse_choice(value, f->choices);
        if (i < 0) return fail(err, errlen, "%s: expected %s", arg, f->choices);
        *(long long *)field(o, f) = i;
        return 0;
    }
    if (f->kind == FLAG_FEATURES) {
        unsigned mask;
        if (parse_features(value, &mask))
            return fail(err, errlen, "%s: expected a comma-separated list of edges, cmp, values",
                        arg);
        *(unsigned *)field(o, f) = mask;
        return 0;
    }
    long long v;
    if (parse_int(value, &v) || v < f->min || v > f->max) {
        if (f->min == 0 && f->max == 1) return fail(err, errlen, "%s: expected 0 or 1", arg);
        return fail(err, errlen, "%s: expected an integer from %lld to %lld", arg, f->min, f->max);
    }
    *(long long *)field(o, f) = v;
    return 0;
}

static const flag *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flags[i].name) == len && !memcmp(flags[i].name, name, len)) return &flags[i];
    return NULL;
}

/* Moves the inputs behind the flags, each group in its order, as GNU getopt permutes argv:
 * the inputs can then be any number, in place. Returns the index of the first input. */
static int inputs_last(int argc, char **argv)
{
    int nflags = 1;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') continue;
        char *flag = argv[i];
        memmove(argv + nflags + 1, argv + nflags, (size_t)(i - nflags) * sizeof(*argv));
        argv[nflags++] = flag;
    }
    return nflags;
}

/* Whether ARG is a flag the run goes on without, as libFuzzer goes on: one that starts with
 * "--" (OSS-Fuzz's scripts end their own options with a lone "--"), or one of no known name
 * (.options files and scripts pass flags that only some libFuzzer versions have). */
static bool ignored_flag(const char *arg)
{
    return arg[1] == '-' || (arg[1] && !find_flag(arg + 1, strcspn(arg + 1, "=")));
}

/* Moves the ignored flags among ARGV[1..END-1] behind the others, each group in its order.
 * Returns the index of the first ignored one. */
static int ignored_last(char **argv, int end)
{
    int nkept = 1;
    for (int i = 1; i < end; i++) {
        if (ignored_flag(argv[i])) continue;
        char *flag = argv[i];
        memmove(argv + nkept + 1, argv + nkept, (size_t)(i - nkept) * sizeof(*argv));
        argv[nkept++] = flag;
    }
    return nkept;
}

int sift_options_parse(sift_options *o, int argc, char **argv, char *err, size_t errlen)
{
    if (argc < 1) return 0;
    /* What follows is the harness's own (LLVMFuzzerInitialize reads it), as in libFuzzer; the
     * flag itself stays in its place, ahead of all that, as the harness looks for it there. */
    static const char cut[] = "-ignore_remaining_args=";
    bool cut_here = false;
    for (int i = 1; i < argc && !cut_here; i++) {
        long long v;
        cut_here = !strncmp(argv[i], cut, sizeof cut - 1) &&
                   !parse_int(argv[i] + sizeof cut - 1, &v) && v == 1;
        if (cut_here) argc = i;
    }
    int first_input = inputs_last(argc, argv);
    o->inputs = argv + first_input;
    o->ninputs = (size_t)(argc - first_input);
    int first_ignored = ignored_last(argv, first_input);
    o->ignored = argv + first_ignored;
    o->nignored = (size_t)(first_input - first_ignored);
    for (int i = 1; i < first_ignored; i++) {
        const char *arg = argv[i];
        if (!arg[1]) return fail(err, errlen, "%s: expected -flag=value or an input", arg);
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 1) : strlen(arg + 1);
        const flag *f = find_flag(arg + 1, len);
        if (!eq) {
            char choice[32];
            choice_name(f->choices ? f->choices : "", 0, choice, sizeof choice);
            const char *example = f->kind == FLAG_STRING     ? "FILE"
                                  : f->kind == FLAG_FEATURES ? "edges,cmp"
                                  : f->kind == FLAG_CHOICE   ? choice
                                  : f->max == 1              ? "1"
                                                             : "N";
            return fail(err, errlen, "%s: flags need a value (%s=%s)", arg, arg, example);
        }
        if (set_flag(o, f, arg, eq + 1, err, errlen)) return -1;
    }
    /* A -ignore_remaining_args=0 ahead of the cut does not undo it. */
    if (cut_here) o->ignore_remaining_args = 1;
    return 0;
}

bool sift_options_is_flag(const char *name)
{
    return find_flag(name, strlen(name)) != NULL;
}

static void format_default(const flag *f, char *buf, size_t len)
{
    if (f->kind == FLAG_INT) {
        snprintf(buf, len, "%lld", f->def);
    } else if (f->kind == FLAG_STRING) {
        snprintf(buf, len, "none");
    } else if (f->kind == FLAG_CHOICE) {
        choice_name(f->choices, f->def, buf, len);
    } else {
        buf[0] = 0;
        for (unsigned d = 0; d < SIFT_DOMAIN_COUNT; d++)
            if (f->def & SIFT_DOMAIN_BIT(d))
                snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
                         domain_names[d]);
    }
}

void sift_options_help(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage:\n\n"
            "To run fuzzing pass 0 or more directories.\n"
            "%s [-flag1=val1 [-flag2=val2 ...] ] [dir1 [dir2 ...] ]\n\n"
            "To run individual tests without fuzzing pass 1 or more files:\n"
            "%s [-flag1=val1 [-flag2=val2 ...] ] file1 [file2 ...]\n\n"
            "Flags: (strictly in form -flag=value)\n",
            argv0, argv0);
    int name_w = 0, def_w = 0;
    char def[64];
    for (size_t i = 0; i < NFLAGS; i++) {
        int n = (int)strlen(flags[i].name);
        format_default(&flags[i], def, sizeof(def));
        int d = (int)strlen(def);
        name_w = n > name_w ? n : name_w;
        def_w = d > def_w ? d : def_w;
    }
    for (size_t i = 0; i < NFLAGS; i++) {
        format_default(&flags[i], def, sizeof(def));
        fprintf(out, " %-*s  %-*s  %s\n", name_w, flags[i].name, def_w, def, flags[i].help);
    }
}

void sift_options_foreach(void (*fn)(void *ctx, const sift_flag_doc *doc), void *ctx)
{
    char def[64];
    for (size_t i = 0; i < NFLAGS; i++) {
        const flag *f = &flags[i];
        format_default(f, def, sizeof(def));
        const char *value = f->kind == FLAG_STRING     ? "STRING"
                            : f->kind == FLAG_FEATURES ? "LIST"
                            : f->kind == FLAG_CHOICE   ? f->choices
                            : f->max == 1              ? "0|1"
                                                       : "N";
        fn(ctx, &(sift_flag_doc){f->name, value, def, f->help});
    }
}
