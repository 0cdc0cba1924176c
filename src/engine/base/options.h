/* Command-line options of a harness binary: one table defines every flag (flags.c). */
#ifndef SIFT_OPTIONS_H
#define SIFT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* -status=auto|tty|lines: the live view (view.c) or libFuzzer's status lines; auto picks the
 * view when stderr is a terminal and TERM is set and not "dumb". */
typedef enum { SIFT_STATUS_AUTO, SIFT_STATUS_TTY, SIFT_STATUS_LINES } sift_status_mode;

typedef struct {
    long long runs;            /* -runs: executions to do, -1 = no limit */
    long long max_len;         /* -max_len: 0 = choose from the corpus (at least 4096) */
    long long len_control;     /* -len_control: grow the length limit slowly (0 = off) */
    long long seed;            /* -seed: 0 = pick one from the clock */
    long long timeout;         /* -timeout: seconds per input, 0 = none */
    long long rss_limit_mb;    /* -rss_limit_mb: 0 = none */
    long long malloc_limit_mb; /* -malloc_limit_mb: 0 = same as rss_limit_mb */
    long long max_total_time;  /* -max_total_time: seconds, 0 = no limit */
    long long minimize_crash;  /* -minimize_crash */
    long long merge;           /* -merge */
    long long set_cover_merge; /* -set_cover_merge: -merge by greedy set cover */
    long long cleanse_crash;   /* -cleanse_crash */
    long long reduce_inputs, shrink;
    long long create_missing_dirs;
    long long ignore_remaining_args;
    long long reload; /* -reload: seconds between reads of the corpus folder, 0 = never */
    long long ignore_crashes, ignore_timeouts, ignore_ooms; /* of -workers campaigns */
    long long print_final_stats;
    long long only_ascii;
    long long cross_over;    /* 0: no crossover, the user's nor sift's */
    long long mutate_depth;  /* the most operators stacked on one mutant */
    long long close_fd_mask; /* 1: close stdout, 2: close stderr */
    long long use_value_profile;
    long long values_budget; /* percent of a run that value features may add, 100 = on every run */
    long long use_cmp;
    long long use_memmem; /* 0: failed searches give no mutation hints */
    /* Accepted for libFuzzer's scripts; sift's scheduling stands in (docs/scheduling.md). */
    long long entropic, entropic_feature_frequency_threshold, entropic_number_of_rarest_features,
        entropic_scale_per_exec_time;
    long long detect_leaks;
    long long trace_malloc; /* -trace_malloc: 1 the run's mallocs and frees, 2 with stacks */
    long long jobs, workers, fork;
    long long fork_corpus_groups; /* workers' jobs prefer one size group (campaign/groups.h) */
    long long verbosity;
    long long error_exitcode;   /* default 77 */
    long long timeout_exitcode; /* default 70 */
    long long help;
    long long status; /* -status: how progress shows (sift_status_mode) */
    const char *dict;
    const char *seed_inputs; /* "a,b" or "@file" holding that list: seeds besides the folders' */
    long long keep_seed;     /* -keep_seed: seeds stay in the corpus, new coverage or not */
    const char *artifact_prefix;
    const char *exact_artifact_path;
    const char *features_dir;        /* -features_dir: a file of features per input taken */
    long long print_pcs;             /* -print_pcs: NEW_PC lines */
    long long print_funcs;           /* -print_funcs: NEW_FUNC lines per input taken, at most */
    const char *exit_on_src_pos;     /* -exit_on_src_pos: FILE:LINE or function that ends it */
    long long print_coverage;        /* -print_coverage: covered functions at exit */
    long long print_full_coverage;   /* -print_full_coverage: U and C lines at exit */
    const char *mutation_graph_file; /* -mutation_graph_file: how each input taken was made */
    long long report_slow_units;     /* seconds; 0 reports every new slowest input */
    long long crash_history;         /* -crash_history: inputs written beside a crash's artifact */
    const char *stats_file;
    const char *focus_function;     /* -focus_function: inputs that run it are picked more */
    const char *exit_on_item;       /* SHA-1 of an input whose entry into the corpus ends the run */
    const char *merge_control_file; /* -merge_control_file: the merge's progress record */
    const char *out;                /* -out: AFL++-layout output folder of a -workers campaign */
    const char *sync_dir;           /* -sync_dir: folder shared with other instances */
    const char *name;               /* -name: this instance's folder in -sync_dir */
    const char *trace;              /* -trace: file for the records of one input ("-": stderr) */
    const char *trace_format;       /* -trace_format: text or json; NULL: from -trace's suffix */
    unsigned features;              /* -features=edges,cmp,values: domain mask (SIFT_DOMAIN_BIT) */
    char **inputs; /* positional arguments (corpus folders or files): the tail of argv */
    size_t ninputs;
    char **ignored; /* flags the run goes on without ("--name", unknown names), just before the
                       inputs in argv */
    size_t nignored;
} sift_options;

/* Fills O with every flag's default. */
void sift_options_defaults(sift_options *o);

/* Parses ARGV[1..ARGC-1] into O (after sift_options_defaults). Flags are "-name=value", as in
 * libFuzzer ("-name" alone is an error); anything not starting with '-' is an input, any number
 * of them: ARGV is reordered with the flags first and the inputs last, each group in its order,
 * and O->inputs points into it. Flags that start with "--" and flags of no known name are
 * ignored, as libFuzzer ignores them: they go just before the inputs, and O->ignored points at
 * them. A known flag with a malformed value is an error. Nothing after
 * "-ignore_remaining_args=1" is read, nor moved. On error
 * writes one line naming the flag and the problem into ERR (for the caller to print after
 * "sift: ") and returns -1. */
int sift_options_parse(sift_options *o, int argc, char **argv, char *err, size_t errlen);

/* Whether NAME (without its dash) is a flag of the table. */
bool sift_options_is_flag(const char *name);

/* The flag table as -help=1 prints it. */
void sift_options_help(FILE *out, const char *argv0);

/* One flag, for tools that document the table (the man page). */
typedef struct {
    const char *name;
    const char *value; /* what the value is: N, 0|1, STRING, LIST or the choices (a|b|c) */
    const char *def;   /* the default as -help=1 prints it */
    const char *help;
} sift_flag_doc;

/* Calls FN for every flag, in -help=1 order. */
void sift_options_foreach(void (*fn)(void *ctx, const sift_flag_doc *doc), void *ctx);

#endif
