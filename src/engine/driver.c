/* The harness binary's entry: parses flags, then reproduces, merges, minimises or fuzzes. */
#include "engine/driver.h"
#include "engine/base/files.h"
#include "engine/contain/report.h"
#include "engine/contain/handlers.h"
#include "engine/base/clock.h"
#include "engine/base/fsutil.h"
#include "engine/core/fuzzer.h"
#include "engine/modes/merge.h"
#include "engine/modes/minimize.h"
#include "engine/base/options.h"
#include "engine/campaign/supervisor.h"
#include "engine/modes/trace.h"
#include "sift/version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
/* A sanitizer runtime's, when one is linked in. */
extern void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

/* -close_fd_mask: silence a noisy target; 1 closes stdout, 2 closes stderr while the target
 * runs (F's executor swaps it), so sift's own lines still show. Crash reports, sift's and the
 * sanitizer's, go to a copy of the old stderr, as libFuzzer sends them, so a crash found with
 * a silenced target is still explained. */
static void close_fds(sift_fuzzer *f, long long mask)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) return;
    if (mask & 1) dup2(null, STDOUT_FILENO);
    int copy = mask & 2 ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
    if (copy < 0) {
        close(null);
        return;
    }
    sift_report_set_fd(copy);
    if (__sanitizer_set_report_fd) __sanitizer_set_report_fd((void *)(intptr_t)copy);
    f->exec.quiet_stderr = null;
    f->exec.loud_stderr = copy;
}

/* Runs each file once (or -runs times): reproducing a crash from its artifact. */
static int reproduce(sift_fuzzer *f, char **argv) SIFT_FRAME(reproduce);
static int reproduce(sift_fuzzer *f, char **argv)
{
    sift_options *o = f->opts;
    long long times = o->runs > 0 ? o->runs : 1;
    f->fault.inputs_are_files = true;
    f->fault.initial_corpus = true;
    fprintf(stderr, "%s: Running %zu inputs %lld time(s) each.\n", argv[0], o->ninputs, times);
    for (size_t i = 0; i < o->ninputs; i++) {
        uint8_t *data;
        size_t size;
        char err[4352];
        size_t max = o->max_len ? (size_t)o->max_len : (size_t)-1;
        if (sift_fs_read(o->inputs[i], max, &data, &size, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "sift: %s\n", err);
            return 1;
        }
        fprintf(stderr, "Running: %s\n", o->inputs[i]);
        uint64_t t0 = sift_now_ns();
        /* A leak is checked after each run, as libFuzzer checks: a leaking input run -runs
         * times would otherwise run out of memory before it is reported. */
        for (long long r = 0; r < times; r++) {
            sift_fuzzer_execute(f, data, size);
            sift_fuzzer_check_leaks(f, data, size);
        }
        fprintf(stderr, "Executed %s in %llu ms\n", o->inputs[i],
                (unsigned long long)((sift_now_ns() - t0) / SIFT_MS_NS));
        /* Its coverage, for -print_coverage's listing: one more run that lists it. */
        if (o->print_coverage || o->print_full_coverage)
            sift_fuzzer_try(f, data, size, false, NULL);
        free(data);
    }
    fprintf(stderr, "***\n*** NOTE: fuzzing was not performed, you have only\n"
                    "***       executed the target code on a fixed set of inputs.\n***\n");
    /* -print_final_stats=1, as libFuzzer prints them after running files too. */
    if (f->fault.final_stats) f->fault.final_stats(f->fault.final_stats_ctx);
    return 0;
}

/* Prints "sift: WHAT: cannot write into FOLDER: PROBLEM" unless FOLDER (that of PATH when
 * OF_PATH) takes new files. */
/* Whether FOLDER, which the run needs, is missing: then says so in libFuzzer's words, which
 * name the folder and the problem. */
static bool required_folder_missing(const char *folder)
{
    if (!*folder) {
        fprintf(stderr, "ERROR: Provided directory path is an empty string\n");
        return true;
    }
    if (access(folder, F_OK) == 0 || errno != ENOENT) return false;
    fprintf(stderr, "ERROR: The required directory \"%s\" does not exist\n", folder);
    return true;
}

static int check_folder(const char *what, const char *path, bool of_path)
{
    char folder[4096], err[4352];
    if (of_path && !sift_fs_folder_of(path, folder, sizeof folder)) {
        fprintf(stderr, "sift: %s: path too long\n", what);
        return -1;
    }
    if (required_folder_missing(of_path ? folder : path)) return -1;
    if (sift_fs_check_writable(of_path ? folder : path, err, sizeof err) != 0) {
        fprintf(stderr, "sift: %s: cannot write into %s\n", what, err);
        return -1;
    }
    return 0;
}

/* A campaign whose finds cannot be saved would run for nothing: the folders it writes into
 * are checked before it starts, so that it stops at once with one line rather than at its
 * first find. Reproducing files writes nothing of its own and is not held back. */
static int check_outputs(const sift_options *o, bool files)
{
    bool rework = o->minimize_crash || o->cleanse_crash;
    bool fuzzing = !files && !o->trace && !o->merge && !rework;
    char what[4200];
    if (o->ninputs && ((fuzzing && o->runs != 0) || o->merge) &&
        check_folder("corpus folder", o->inputs[0], false) != 0)
        return -1;
    /* The working folder, where artifacts go by default, may well be read-only when -runs=0
     * only runs the seeds: that is not held back either. */
    bool named = o->exact_artifact_path || o->artifact_prefix;
    if ((fuzzing || rework) && (named || o->runs != 0)) {
        const char *flag = o->exact_artifact_path ? "-exact_artifact_path" : "-artifact_prefix";
        const char *path = o->exact_artifact_path ? o->exact_artifact_path
                           : o->artifact_prefix   ? o->artifact_prefix
                                                  : "./";
        snprintf(what, sizeof what, "%s=%s", flag, path);
        if (o->exact_artifact_path && sift_fs_is_dir(path) == 1) {
            fprintf(stderr, "sift: %s: is a folder\n", what);
            return -1;
        }
        if (check_folder(what, path, true) != 0) return -1;
    }
    if (fuzzing && o->features_dir) {
        snprintf(what, sizeof what, "-features_dir=%s", o->features_dir);
        if (check_folder(what, o->features_dir, false) != 0) return -1;
    }
    if (fuzzing && o->stats_file) {
        snprintf(what, sizeof what, "-stats_file=%s", o->stats_file);
        if (sift_fs_is_dir(o->stats_file) == 1) {
            fprintf(stderr, "sift: %s: is a folder\n", what);
            return -1;
        }
        if (check_folder(what, o->stats_file, true) != 0) return -1;
    }
    return 0;
}

/* FOLDER and those above it, made where missing; -1 after libFuzzer's line. */
static int make_folder(const char *folder)
{
    char err[4352];
    if (sift_fs_mkdirs(folder, err, sizeof err) == 0) return 0;
    fprintf(stderr, "ERROR: Failed to create directory \"%s\" (%s)\n", folder, err);
    return -1;
}

/* -create_missing_dirs=1: the folders a run writes into, made when missing, as libFuzzer makes
 * them: the corpus folders when fuzzing or merging, -features_dir, and those of the artifacts. */
static int create_missing_dirs(const sift_options *o)
{
    char folder[4096];
    const char *paths[] = {o->artifact_prefix, o->exact_artifact_path};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (!paths[i] || !*paths[i]) continue;
        if (!sift_fs_folder_of(paths[i], folder, sizeof folder)) {
            fprintf(stderr, "sift: %s: path too long\n", paths[i]);
            return -1;
        }
        if (make_folder(folder) != 0) return -1;
    }
    if (o->features_dir && make_folder(o->features_dir) != 0) return -1;
    if (o->minimize_crash || o->cleanse_crash || o->trace) return 0;
    for (size_t i = 0; i < o->ninputs; i++)
        if (access(o->inputs[i], F_OK) != 0 && make_folder(o->inputs[i]) != 0) return -1;
    return 0;
}

/* A merge keeps the inputs that add edges (and comparison features, when asked for), as
 * libFuzzer's counts its counters and value profile: value features, counted too, kept 2.3x
 * libFuzzer's units from a libpng corpus for 0.7% more of its edges, and the corpus a merge
 * leaves is the seed of every later campaign, which finds those values again soon enough. A
 * merge asked for with values alone keeps them. */
static void merge_features(sift_options *o)
{
    unsigned values = SIFT_DOMAIN_BIT(SIFT_DOMAIN_VALUES);
    if (o->features != values) o->features &= ~values;
}

/* Says, in libFuzzer's words, which flags the run goes on without: unknown ones, and those
 * that start with "--". */
static void report_ignored(const sift_options *o)
{
    bool said = false;
    for (size_t i = 0; i < o->nignored; i++) {
        const char *arg = o->ignored[i];
        if (arg[1] != '-') {
            fprintf(stderr, "WARNING: unrecognized flag '%s'; use -help=1 to list all flags\n",
                    arg);
            continue;
        }
        if (!said) fprintf(stderr, "INFO: libFuzzer ignores flags that start with '--'\n");
        said = true;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
        if (strchr(arg, '=') && sift_options_is_flag(name))
            fprintf(stderr, "WARNING: did you mean '%s' (single dash)?\n", arg + 1);
    }
}

/* -verbosity=2 and up: each flag as given (ARGV up to O's ignored ones), as libFuzzer lists
 * them. */
static void report_flags(char **argv, const sift_options *o)
{
    if (o->verbosity < 2) return;
    for (char **arg = argv + 1; arg < o->ignored; arg++) {
        const char *eq = strchr(*arg, '=');
        if (eq) fprintf(stderr, "Flag: %.*s %s\n", (int)(eq - *arg - 1), *arg + 1, eq + 1);
    }
}

/* Runs the harness's LLVMFuzzerInitialize, which may change the arguments but not argv[0]:
 * libFuzzer, which runs itself again by that name, stops there with this line, and so does
 * sift, so that a harness behaves the same under both. */
static int initialize(int *argc, char ***argv)
{
    char *argv0 = strdup((*argv)[0]);
    if (!argv0) {
        fprintf(stderr, "sift: out of memory\n");
        return -1;
    }
    LLVMFuzzerInitialize(argc, argv);
    bool same = *argc > 0 && *argv && (*argv)[0] && !strcmp((*argv)[0], argv0);
    free(argv0);
    if (same) return 0;
    fprintf(stderr, "ERROR: argv[0] has been modified in LLVMFuzzerInitialize\n");
    return -1;
}

int sift_driver_main(int argc, char **argv, sift_target_fn target)
{
    static sift_options opts;
    sift_options_defaults(&opts);
    /* As libFuzzer: a custom mutator makes its own lengths, so -len_control is off unless the
     * command line turns it on. */
    const void *custom = sift_fuzzer_custom_mutator();
    if (custom) opts.len_control = 0;
    char err[512];
    if (sift_options_parse(&opts, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "sift: %s\n", err);
        return 1;
    }
    if (opts.help) {
        sift_options_help(stdout, argv[0]);
        return 0;
    }
    if (opts.set_cover_merge) opts.merge = 1;
    fprintf(stderr, "INFO: sift %s\n", SIFT_VERSION);
    if (custom)
        fprintf(stderr,
                "INFO: found LLVMFuzzerCustomMutator (%p). Disabling -len_control by default.\n",
                custom);
    if (sift_file_pin_cwd() != 0) {
        fprintf(stderr, "sift: cannot open the working folder: %s\n", strerror(errno));
        return 1;
    }
    report_flags(argv, &opts);
    report_ignored(&opts);
    if (opts.create_missing_dirs && create_missing_dirs(&opts) != 0) return 1;
    bool files = false;
    for (size_t i = 0; i < opts.ninputs; i++) {
        if (required_folder_missing(opts.inputs[i])) return 1;
        int dir = sift_fs_is_dir(opts.inputs[i]);
        if (dir < 0) {
            fprintf(stderr, "sift: %s: %s\n", opts.inputs[i], strerror(errno));
            return 1;
        }
        files |= dir == 0;
    }
    if (check_outputs(&opts, files) != 0) return 1;
    if (opts.merge) merge_features(&opts);
    /* The workers' parallel merge keeps -merge=1's choice: a set cover is chosen here. */
    if (sift_super_workers(&opts) && !opts.set_cover_merge)
        return sift_super_main(&opts, argc, argv, target);
    if (opts.out || opts.sync_dir || opts.name) {
        fprintf(stderr, "sift: -out, -sync_dir and -name go with -workers=N\n");
        return 1;
    }
    sift_handlers_note();
    if (LLVMFuzzerInitialize && initialize(&argc, &argv) != 0) return 1;
    static sift_fuzzer fuzzer;
    if (sift_fuzzer_init(&fuzzer, &opts, target, argv[0]) != 0) return 1;
    if (opts.close_fd_mask) close_fds(&fuzzer, opts.close_fd_mask);
    int rc;
    if (opts.trace)
        rc = sift_trace_run(&fuzzer);
    else if (opts.merge)
        rc = sift_merge(&fuzzer);
    else if (opts.minimize_crash)
        rc = sift_minimize_crash(&fuzzer);
    else if (opts.cleanse_crash)
        rc = sift_cleanse_crash(&fuzzer);
    else if (files)
        rc = reproduce(&fuzzer, argv);
    else
        rc = sift_fuzzer_run(&fuzzer);
    sift_fuzzer_free(&fuzzer);
    return rc;
}
